/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c: delayq top, the queue inspector: its help and options, the connection,
 * and the call. The inspector itself lives in src/tui/ (tui_run in tui/top.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lib/dur.h"
#include "lib/scripts.h"
#include "profile.h"
#include "tui/top.h"

static const char help[] =
    "usage: delayq top [-q QUEUE] [--read-only] [--no-color] [--no-mouse] [--refresh DUR]\n\n"
    "The queue inspector: counts and rates, the due backlog over time, and the due,\n"
    "future, in-flight and failed tasks, with details (payload, error, stack trace) and\n"
    "actions (requeue, drop, recover expired leases) through the same scripts the\n"
    "workers use. Press ? inside for every key.\n\n"
    "  --read-only    disable every action (a badge says so); also when the\n"
    "                 profile says read-only, or when Redis (its ACL) would refuse\n"
    "                 this user the queue's operator actions (the status line says)\n"
    "  --no-color     no colours (also when $NO_COLOR is set)\n"
    "  --no-mouse     leave the mouse to the terminal (else click selects, wheel scrolls)\n"
    "  --refresh DUR  first refresh interval (default 1s; it then adapts between 250ms\n"
    "                 while counts change and 5s while nothing moves)\n\n";

int
cmd_top(struct cli *g, int argc, char **argv)
{
    bool read_only = false, no_color = getenv("NO_COLOR") != NULL && getenv("NO_COLOR")[0];
    int64_t refresh = 1000;
    bool no_mouse = false;
    const char *val;
    dq_err err = {0};
    int rc, m;

    for (int i = 0; i < argc; i++) {
        if ((m = cli_common_opt(g, argc, argv, &i, help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        if (strcmp(argv[i], "--read-only") == 0) {
            read_only = true;
        } else if (strcmp(argv[i], "--no-color") == 0) {
            no_color = true;
        } else if (strcmp(argv[i], "--no-mouse") == 0) {
            no_mouse = true;
        } else if ((m = cli_opt(argc, argv, &i, "--refresh", NULL, &val)) != 0) {
            if (m < 0 || dq_dur_parse(val, "--refresh", &refresh, &err) != DQ_OK)
                return m < 0 ? cli_usage_error(g, "--refresh needs a value") : cli_error(g, &err);
            if (refresh < 100 || refresh > 60000)
                return cli_usage_error(g, "--refresh: %s is not in 100ms..60s", val);
        } else {
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
        }
    }
    /* A refresh must never freeze the keyboard for long: 1 s unless --timeout says. */
    if (g->timeout_ms == 0)
        g->timeout_ms = 1000;
    dq_client_opts co;
    if ((rc = cli_client_opts(g, &co)) != DQ_EXIT_OK)
        return rc;
    bool tls_insecure = co.tls_insecure;
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;

    /* A user who may not write gets a read-only inspector, told why, rather than a
     * refusal on the first key: asked of Redis without side effects (scripts.c). A
     * probe that fails (Redis went away) decides nothing: the server still refuses. */
    char why[400] = "";
    if (g->profile != NULL && g->profile->read_only == 1 && !read_only) {
        read_only = true;
        snprintf(why, sizeof why, "profile %s says read-only", g->profile->name);
    }
    if (!read_only && dq_scripts_may_operate(g->client, g->queue, why, sizeof why, &err) == DQ_OK &&
        why[0] != '\0')
        read_only = true;
    struct tui_options o = {.queue = g->queue,
                            .queue_chosen = g->queue_chosen,
                            .read_only = read_only,
                            .read_only_why = why[0] != '\0' ? why : NULL,
                            .color = !no_color,
                            .mouse = !no_mouse,
                            .refresh_ms = refresh,
                            .tls_insecure = tls_insecure,
                            .warning = g->key_warning[0] != '\0' ? g->key_warning : NULL};
    dq_client *c = g->client;
    g->client = NULL; /* tui_run takes it */
    switch (tui_run(c, &o)) {
    case TUI_OK:
        return DQ_EXIT_OK;
    case TUI_ENOTTY:
        fprintf(stderr, "%s: cannot start the terminal (is this a tty?)\n", g->prog);
        return DQ_EXIT_USAGE;
    default:
        fprintf(stderr, "%s: cannot start a thread\n", g->prog);
        return DQ_EXIT_FAILED;
    }
}
