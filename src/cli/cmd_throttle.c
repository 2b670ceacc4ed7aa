/* SPDX-License-Identifier: MIT */
/* cmd_throttle.c: delayq throttle: a live rate and/or concurrency limit over a queue's
 * configured ones, for a time or until lifted (PROTOCOL.md 8.4). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"
#include "opts.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    bool off = cli_has(args, "off");
    const char *rate_s = cli_str(args, "rate", NULL);
    int64_t conc = cli_num(args, "concurrency", 0), for_ms = cli_num(args, "for", 0), rate = 0;
    const char *reason = cli_str(args, "reason", NULL);
    dq_stats s;
    dq_err err = {0};
    int rc;

    if (off &&
        (rate_s != NULL || cli_has(args, "concurrency") || cli_has(args, "for") || reason != NULL))
        return cli_usage_error(g, "--off takes no other option (it lifts the throttle)");
    if (!off && rate_s == NULL && !cli_has(args, "concurrency"))
        return cli_usage_error(g, "give --rate and/or --concurrency (or --off to lift it)");
    if (rate_s != NULL && dq_rate_parse(rate_s, "--rate", &rate, &err) != DQ_OK)
        return cli_error(g, &err);
    if (!off && rate_s != NULL && rate == 0)
        return cli_usage_error(g, "--rate: must be more than 0 (use --off to lift the throttle)");
    if (cli_has(args, "for") && for_ms <= 0)
        return cli_usage_error(g, "--for: must be more than 0 (leave it out to throttle until "
                                  "lifted)");
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (off) {
        bool was = false;
        if (dq_throttle_off(g->client, g->queue, &was, &err) != DQ_OK)
            return cli_action_error(g, &err, NULL);
        printf(was ? "lifted the throttle of queue %s\n" : "queue %s was not throttled\n",
               g->queue);
        return DQ_EXIT_OK;
    }
    if (dq_throttle(g->client, g->queue, rate, conc, for_ms, reason, &err) != DQ_OK)
        return cli_action_error(g, &err, NULL);
    if (dq_stats_get(g->client, g->queue, &s, &err) != DQ_OK)
        return cli_error(g, &err);
    printf("throttled queue %s to", g->queue);
    if (rate > 0) {
        char r[DQ_RATE_BUFSZ];
        dq_rate_format(r, sizeof r, rate);
        printf(" %s", r);
    }
    if (conc > 0)
        printf("%s %lld in flight", rate > 0 ? "," : "", (long long)conc);
    if (s.throttled && s.throttle_until_ms > 0) {
        char t[80];
        dq_fmt_time_rel(t, sizeof t, s.throttle_until_ms, s.now_ms);
        printf(" until %s", t);
    } else {
        printf(" until lifted");
    }
    printf(" (%lld due, %lld in flight)\n", (long long)s.due, (long long)s.inflight);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"rate", 0, "RATE", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "at most RATE tasks started: 10/s, 600/m, 120/h; a bare number is per second"},
    {"concurrency", 0, "N", CLI_UINT, 1, 1000000, .help = "at most N tasks in flight at once"},
    {"for", 0, "DUR", CLI_DUR,
     .help = "end the throttle by itself after DUR (default: until "
             "lifted)"},
    {"reason", 0, "TEXT", CLI_STR,
     .help = "why (up to " CLI_STR(DQ_PAUSE_REASON_MAX) " bytes), shown by stats, top and audit"},
    {"off", 0, NULL, CLI_FLAG, .help = "lift the throttle"},
    {NULL},
};

const struct cli_cmd cmd_throttle = {
    .name = "throttle",
    .summary = "limit a queue's rate or concurrency live (for a time, or until lifted)",
    .usage = "delayq throttle [-q QUEUE] [--rate RATE] [--concurrency N] [--for DUR]\n"
             "                       [--reason TEXT]\n"
             "delayq throttle [-q QUEUE] --off",
    .about = "Throttles the queue for all its workers: at most --rate tasks start, at most\n"
             "--concurrency run at once, over the queue's rate_limit and concurrency_limit\n"
             "(the tighter wins). With --for it ends by itself by server time. Workers read\n"
             "it at their next claim, without a restart. A throttle replaces one in force.\n"
             "Recorded in the audit log with --who, the reason and the end; stats and top\n"
             "show who throttled it and why.",
    .opts = opts,
    .run = run,
};
