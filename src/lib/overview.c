/* SPDX-License-Identifier: MIT */
/*
 * overview.c: the overview's rows (overview.h): one read-only script call per queue
 * (lua/overview.lua, PROTOCOL.md 5.15a), pipelined through the script registry; the
 * reply's parser is reply.c's dq_reply_overview.
 */
#include "overview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "parts.h"
#include "scripts.h"

/* Adds partition @one's row to @sum, the logical queue's (PROTOCOL.md 14.5's rules): counts
 * and the window's outcomes are sums, the oldest due age the largest; the pause, the
 * thresholds and the worker registry stay partition 0's (the registry is one, 10.10). */
static void
row_add(struct dq_overview_row *sum, const struct dq_overview_row *one)
{
    dq_stats *s = &sum->stats;
    const dq_stats *o = &one->stats;

    s->due += o->due;
    s->future += o->future;
    s->far_future += o->far_future;
    s->inflight += o->inflight;
    s->failed += o->failed;
    s->expired_leases += o->expired_leases;
    if (o->oldest_due_age_ms > s->oldest_due_age_ms)
        s->oldest_due_age_ms = o->oldest_due_age_ms;
    s->window_done += o->window_done;
    s->window_failed += o->window_failed;
    s->window_retried += o->window_retried;
    for (size_t m = 0; m < DQ_OVERVIEW_MINUTES; m++) {
        sum->done_per_min[m] += one->done_per_min[m];
        sum->failed_per_min[m] += one->failed_per_min[m];
    }
    if (one->throttled > 0)
        sum->throttled = 1;
}

/* A partitioned queue's row (parts_map > 0): its partitions 1.. read as rows of their own
 * (one call each, pipelined) and added to it; a failure of one is the row's. */
static int
row_partitions(dq_client *c, struct dq_overview_row *row, dq_err *err)
{
    const struct dq_parts *p;
    struct dq_overview_row *each = NULL;
    dq_err *errs = NULL;
    int *rcs = NULL, rc;
    struct dq_args a;
    size_t k;

    dq_args_init(&a);
    if ((rc = dq_parts_peek(c, row->queue, &p, err)) != DQ_OK || p->all <= 1)
        goto out;
    k = p->all - 1;
    each = calloc(k, sizeof *each);
    errs = calloc(k, sizeof *errs);
    rcs = calloc(k, sizeof *rcs);
    if (each == NULL || errs == NULL || rcs == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory reading %zu partitions", k);
        goto out;
    }
    for (size_t i = 0; i < k; i++) {
        snprintf(each[i].queue, sizeof each[i].queue, "%s", p->names[i + 1]);
        each[i].throttled = -1;
    }
    rc = dq_scripts_run_each(c, DQ_SCRIPT_OVERVIEW, (const char *const *)p->names + 1, k, &a,
                             dq_reply_overview, each, sizeof *each, DQ_OVERVIEW_PIPELINE, rcs, errs,
                             err);
    for (size_t i = 0; rc == DQ_OK && i < k; i++) {
        if (rcs[i] != DQ_OK) {
            row->rc = rcs[i];
            snprintf(row->error, sizeof row->error, "partition %zu: %.200s", i + 1, errs[i].msg);
            break;
        }
        row_add(row, &each[i]);
    }
out:
    dq_args_free(&a);
    free(each);
    free(errs);
    free(rcs);
    return rc;
}

int
dq_overview_get(dq_client *c, struct dq_overview_row *rows, size_t n, dq_err *err)
{
    const char **queues = calloc(n ? n : 1, sizeof *queues);
    int *rcs = calloc(n ? n : 1, sizeof *rcs);
    dq_err *errs = calloc(n ? n : 1, sizeof *errs);
    struct dq_args a;
    int rc;

    dq_args_init(&a);
    if (queues == NULL || rcs == NULL || errs == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory reading %zu queues", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        queues[i] = rows[i].queue;
        rows[i].throttled = -1;
    }
    rc = dq_scripts_run_each(c, DQ_SCRIPT_OVERVIEW, queues, n, &a, dq_reply_overview, rows,
                             sizeof *rows, DQ_OVERVIEW_PIPELINE, rcs, errs, err);
    for (size_t i = 0; rc == DQ_OK && i < n; i++) {
        rows[i].rc = rcs[i];
        snprintf(rows[i].error, sizeof rows[i].error, "%s", rcs[i] == DQ_OK ? "" : errs[i].msg);
    }
    for (size_t i = 0; rc == DQ_OK && i < n; i++) {
        if (rows[i].rc != DQ_OK || rows[i].parts_map <= 0)
            continue;
        dq_err perr = {0};
        int prc = row_partitions(c, &rows[i], &perr);
        if (prc == DQ_ECONN || prc == DQ_ETIMEOUT || prc == DQ_ENOMEM) {
            rc = dq_err_set(err, prc, "%s", perr.msg);
        } else if (prc != DQ_OK) { /* a bad map of one queue is that row's, as a bad reply */
            rows[i].rc = prc;
            snprintf(rows[i].error, sizeof rows[i].error, "%s", perr.msg);
        }
    }
out:
    dq_args_free(&a);
    free(queues);
    free(rcs);
    free(errs);
    return rc;
}
