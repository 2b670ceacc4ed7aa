/* SPDX-License-Identifier: MIT */
/*
 * ops.h: what delayq requeue and delayq drop share: the selection of failed tasks and
 * the report of a bulk action whose step failed (ops.c).
 */
#ifndef DQ_CLI_OPS_H
#define DQ_CLI_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

struct cli_args;

#define MAX_IDS DQ_CALL_MAX /* one requeue or drop call: all or nothing */

/* Which tasks: ids, every failed one (--all / --all-failed), or a filter. */
struct ops_sel {
    const char *ids[MAX_IDS];
    size_t n;
    bool all;
    dq_filter filter; /* --group / --match / --key */
};

/* Reads the ids, --@all, --group, --match and --key of @a into @o: exactly one of the three ways.
 * Returns DQ_EXIT_OK or DQ_EXIT_USAGE after the error. */
int ops_select(const struct cli *g, const struct cli_args *a, const char *all, struct ops_sel *o);

/*
 * A bulk step failed with @err after @cur->done_n moved: says how far it got. A refusal
 * applied nothing of that step; a lost reply is read back from the audit log (entries of
 * @action; @sum: each holds its own step's count); what it cannot tell is said to be
 * unknown. @verb is "requeueing" or "dropping". Returns the exit status.
 */
int ops_bulk_stopped(struct cli *g, const char *action, const char *verb, const dq_bulk *cur,
                     bool sum, const dq_err *err);

/*
 * After an action by id found nothing to act on (DQ_ENOTFOUND): a parked task (PROTOCOL.md
 * 4.10) is due, held back while its key is at key_concurrency, and "not found" would send
 * the operator looking. Prints, for the first parked one of the first 10 of @ids, that it
 * is not @what ("failed", "scheduled") but parked, by which key at what limit, and that
 * nothing changed. False when none is parked (nothing printed).
 */
bool ops_say_parked(struct cli *g, const char *const *ids, size_t n, const char *what);

#endif /* DQ_CLI_OPS_H */
