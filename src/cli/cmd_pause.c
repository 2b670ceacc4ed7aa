/* SPDX-License-Identifier: MIT */
/* cmd_pause.c: delayq pause: stop workers claiming on a queue, for a time or until resumed. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/taskfmt.h"
#include "opts.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    int64_t for_ms = cli_num(args, "for", 0);
    const char *reason = cli_str(args, "reason", NULL);
    dq_stats s;
    dq_err err = {0};
    int rc;

    if (cli_has(args, "for") && for_ms <= 0)
        return cli_usage_error(g, "--for: must be more than 0 (leave it out to pause "
                                  "until resumed)");
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_pause(g->client, g->queue, for_ms, reason, &err) != DQ_OK)
        return cli_action_error(g, &err, NULL);
    if (dq_stats_get(g->client, g->queue, &s, &err) != DQ_OK)
        return cli_error(g, &err);
    printf("paused queue %s", g->queue);
    if (s.paused && s.paused_until_ms > 0) {
        char t[80];
        dq_fmt_time_rel(t, sizeof t, s.paused_until_ms, s.now_ms);
        printf(" until %s", t);
    } else {
        printf(" until resumed");
    }
    printf(" (%lld due, %lld in flight finish)\n", (long long)s.due, (long long)s.inflight);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"for", 0, "DUR", CLI_DUR,
     .help = "end the pause by itself after DUR (default: until resumed)"},
    {"reason", 0, "TEXT", CLI_STR,
     .help = "why (up to " CLI_STR(DQ_PAUSE_REASON_MAX) " bytes), shown by stats, top and audit"},
    {NULL},
};

const struct cli_cmd cmd_pause = {
    .name = "pause",
    .summary = "stop workers claiming from a queue (for a time, or until resumed)",
    .usage = "delayq pause [-q QUEUE] [--for DUR] [--reason TEXT]",
    .about = "Pauses the queue: workers claim nothing until 'delayq resume' or, with --for, until\n"
             "that much server time has passed. Running tasks finish; enqueue, retries, lease\n"
             "recovery and operator actions go on. Idle workers sleep without polling and start\n"
             "at once on resume. Pausing a paused queue replaces its pause. Recorded in the\n"
             "audit log with --who, the reason and the end.",
    .opts = opts,
    .run = run,
};
