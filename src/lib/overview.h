/* SPDX-License-Identifier: MIT */
/*
 * overview.h: one row per queue of the all-queues overview (`delayq queues`, the
 * inspector's Overview), read with one FCALL_RO of lua/overview.lua per queue, pipelined
 * (PROTOCOL.md 5.15a). What a row says (its verdict, its order among the others) is
 * fmt/overview.h's: this file only reads. No printing.
 */
#ifndef DQ_LIB_OVERVIEW_H
#define DQ_LIB_OVERVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"
#include "reply.h"

/* Calls sent to Redis before their replies are read: a refresh of N queues is
 * ceil(N / DQ_OVERVIEW_PIPELINE) round trips, and the replies held at once are bounded. */
#define DQ_OVERVIEW_PIPELINE 100

/*
 * Reads the rows of @n queues (rows[i].queue set by the caller; the rest is filled).
 * A call that fails for one queue (an error reply, a key of the wrong type, a reply of
 * another shape) sets that row's rc and error and the others are still read; the return
 * is DQ_OK then. DQ_ECONN / DQ_ETIMEOUT (Redis is not there: no row can be trusted),
 * DQ_ENOMEM, and DQ_EREDIS when the scripts are not loaded and this user may not load
 * them (a viewer after a restart: say it once, not per queue) are returned as such. Commands: one
 * FCALL_RO (EVALSHA_RO) per queue, sent DQ_OVERVIEW_PIPELINE at a time; a queue whose call needs
 * the library loaded again is retried alone through the script registry (dq_scripts_run). A cluster
 * client sends them one by one, each to its queue's node.
 */
int dq_overview_get(dq_client *c, struct dq_overview_row *rows, size_t n, dq_err *err);

#endif /* DQ_LIB_OVERVIEW_H */
