/* SPDX-License-Identifier: MIT */
/* cmd_resume.c: delayq resume: end a queue's pause; idle workers claim at once. */
#include <stdio.h>

#include "cli.h"
#include "opts.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    bool was = false;
    dq_err err = {0};
    int rc;

    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_resume(g->client, g->queue, &was, &err) != DQ_OK)
        return cli_action_error(g, &err, NULL);
    printf(was ? "resumed queue %s\n" : "queue %s was not paused\n", g->queue);
    return DQ_EXIT_OK;
}

const struct cli_cmd cmd_resume = {
    .name = "resume",
    .summary = "end a queue's pause; idle workers start at once",
    .usage = "delayq resume [-q QUEUE]",
    .about = "Ends the queue's pause: idle workers are woken and claim due tasks at once.\n"
             "Recorded in the audit log. Resuming a queue that is not paused does nothing\n"
             "(and says so).",
    .run = run,
};
