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
#include "scripts.h"

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
out:
    dq_args_free(&a);
    free(queues);
    free(rcs);
    free(errs);
    return rc;
}
