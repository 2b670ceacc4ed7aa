/* SPDX-License-Identifier: MIT */
/* cmd_pause.c: delayq pause and delayq resume: stop and restart claiming on a queue. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

static const char pause_help[] =
    "usage: delayq pause [-q QUEUE] [--for DUR] [--reason TEXT]\n\n"
    "Pauses the queue: workers claim nothing until 'delayq resume' or, with --for, until\n"
    "that much server time has passed. Running tasks finish; enqueue, retries, lease\n"
    "recovery and operator actions go on. Idle workers sleep without polling and start\n"
    "at once on resume. Pausing a paused queue replaces its pause. Recorded in the\n"
    "audit log with --who, the reason and the end.\n\n"
    "  --for DUR       end the pause by itself after DUR (default: until resumed)\n"
    "  --reason TEXT   why (up to " CLI_STR(DQ_PAUSE_REASON_MAX) " bytes), shown by stats, "
                                                                 "top and audit\n\n";

static const char resume_help[] =
    "usage: delayq resume [-q QUEUE]\n\n"
    "Ends the queue's pause: idle workers are woken and claim due tasks at once.\n"
    "Recorded in the audit log. Resuming a queue that is not paused does nothing\n"
    "(and says so).\n\n";

int
cmd_pause(struct cli *g, int argc, char **argv)
{
    int64_t for_ms = 0;
    const char *reason = NULL, *val;
    dq_stats s;
    dq_err err = {0};
    int rc, m;

    for (int i = 0; i < argc; i++) {
        if ((m = cli_common_opt(g, argc, argv, &i, pause_help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        if ((m = cli_opt(argc, argv, &i, "--for", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--for needs a value");
            if (dq_dur_parse(val, "--for", &for_ms, &err) != DQ_OK)
                return cli_error(g, &err);
            if (for_ms <= 0)
                return cli_usage_error(g, "--for: must be more than 0 (leave it out to pause "
                                          "until resumed)");
        } else if ((m = cli_opt(argc, argv, &i, "--reason", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--reason needs a value");
            reason = val;
        } else {
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
        }
    }
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

int
cmd_resume(struct cli *g, int argc, char **argv)
{
    bool was = false;
    dq_err err = {0};
    int rc, m;

    for (int i = 0; i < argc; i++) {
        if ((m = cli_common_opt(g, argc, argv, &i, resume_help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
    }
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_resume(g->client, g->queue, &was, &err) != DQ_OK)
        return cli_action_error(g, &err, NULL);
    printf(was ? "resumed queue %s\n" : "queue %s was not paused\n", g->queue);
    return DQ_EXIT_OK;
}
