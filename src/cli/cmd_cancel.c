/* SPDX-License-Identifier: MIT */
/* cmd_cancel.c: delayq cancel: stop a running task (to failed, or deleted). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    dq_cancelled out;
    dq_err err = {0};
    int rc;

    if (args->npos != 1)
        return cli_usage_error(g, "give the id of one running task");
    const char *id = args->pos[0];
    if (id[0] == '\0' || strlen(id) > DQ_ID_MAX)
        return cli_usage_error(g, "ID: must be 1..%d bytes (got %zu)", DQ_ID_MAX, strlen(id));
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    bool drop = cli_has(args, "drop");
    if (dq_cancel(g->client, g->queue, id, drop, &out, &err) != DQ_OK)
        return cli_action_error(g, &err, NULL);
    printf("%s ", drop ? "cancelled and dropped" : "cancelled");
    cli_put_safe(stdout, id, strlen(id));
    printf(" (attempt %u, was running on ", out.attempt);
    cli_put_safe(stdout, out.worker, strlen(out.worker));
    printf(")\n");
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"drop", 0, NULL, CLI_FLAG, .help = "delete it instead of moving it to the failed tasks"},
    {NULL},
};

const struct cli_cmd cmd_cancel = {
    .name = "cancel",
    .summary = "stop a running task (to failed, or deleted)",
    .usage = "delayq cancel [-q QUEUE] [--drop] [--] ID",
    .about = "Stops a running task: it leaves flight at once, to failed (reason cancelled,\n"
             "\"cancelled by WHO\") or deleted with --drop, and the worker holding it kills\n"
             "its handler. A scheduled task is cancelled with delayq drop. Audited.",
    .opts = opts,
    .max_pos = 1,
    .run = run,
};
