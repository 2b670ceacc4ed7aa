/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c: delayq top, the queue inspector: its help and options, the connection,
 * and the call. The inspector itself lives in src/tui/ (tui_run in tui/top.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "lib/dur.h"
#include "lib/scripts.h"
#include "profile.h"
#include "tui/top.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    bool read_only = cli_has(args, "read-only");
    bool no_color =
        cli_has(args, "no-color") || (getenv("NO_COLOR") != NULL && getenv("NO_COLOR")[0]);
    int64_t refresh = cli_num(args, "refresh", 1000);
    bool no_mouse = cli_has(args, "no-mouse");
    dq_err err = {0};
    int rc;

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
                            .ascii = cli_has(args, "ascii"),
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

static const struct cli_opt opts[] = {
    {"read-only", 0, NULL, CLI_FLAG,
     .help = "disable every action (a badge says so); also when the profile says read-only, or "
             "when Redis (its ACL) would refuse this user the queue's operator actions (the status "
             "line says)"},
    {"no-color", 0, NULL, CLI_FLAG, .help = "no colours (also when $NO_COLOR is set)"},
    {"ascii", 0, NULL, CLI_FLAG,
     .help = "charts and sparklines in ASCII, not block characters (also when the locale is not "
             "UTF-8)"},
    {"no-mouse", 0, NULL, CLI_FLAG,
     .help = "leave the mouse to the terminal (else click selects, wheel scrolls)"},
    {"refresh", 0, "DUR", CLI_DUR, 100, 60000, .limit = "100ms..60s",
     .help = "first refresh interval (default 1s; it then adapts between 250ms while counts "
             "change and 5s while nothing moves)"},
    {NULL},
};

const struct cli_cmd cmd_top = {
    .name = "top",
    .summary = "the queue inspector (ncurses)",
    .usage = "delayq top [-q QUEUE] [--read-only] [--no-color] [--no-mouse]\n"
             "                  [--ascii] [--refresh DUR]",
    .about = "The queue inspector: counts and rates, the due backlog over time (H: the\n"
             "history per minute, with the operator's actions marked), and the due,\n"
             "future, in-flight and failed tasks, with details (payload, error, stack trace) and\n"
             "actions (requeue, drop, recover expired leases) through the same scripts the\n"
             "workers use. Press ? inside for every key.",
    .opts = opts,
    .run = run,
};
