/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c: delayq top, the queue inspector. The loop: fetch a snapshot (model.c,
 * through libdelayq), lay it out (view.c, pure), copy it to the terminal (term.c, the
 * only curses code), wait for a key or the next refresh, and perform what the key asked
 * (app.c decides, this file calls the library: the same scripts as the CLI and workers).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "lib/dur.h"
#include "tui/app.h"
#include "tui/model.h"
#include "tui/term.h"
#include "tui/view.h"

static const char help[] =
    "usage: delayq top [-q QUEUE] [--read-only] [--no-color] [--refresh DUR]\n\n"
    "The queue inspector: counts and rates, the due backlog over time, and the due,\n"
    "future, in-flight and failed tasks, with details (payload, error, stack trace) and\n"
    "actions (requeue, drop, recover expired leases) through the same scripts the\n"
    "workers use. Press ? inside for every key.\n\n"
    "  --read-only    disable every action (a badge says so)\n"
    "  --no-color     no colours (also when $NO_COLOR is set)\n"
    "  --refresh DUR  first refresh interval (default 1s; it then adapts between 250ms\n"
    "                 while counts change and 5s while nothing moves)\n\n";

static int64_t
mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool
counts_moved(const dq_stats *a, const dq_stats *b)
{
    return a->due != b->due || a->future != b->future || a->inflight != b->inflight ||
           a->failed != b->failed || a->enqueued != b->enqueued || a->done != b->done;
}

static void
load_details(struct cli *g, struct ui *ui)
{
    dq_task t;
    dq_err err = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    if (dq_find(g->client, g->queue, ui->action_id, &t, &err) != DQ_OK) {
        app_status(ui, true, "%s", err.msg);
        return;
    }
    f = open_memstream(&text, &len);
    if (f != NULL) {
        dq_stats s;
        int64_t now = dq_stats_get(g->client, g->queue, &s, NULL) == DQ_OK ? s.now_ms : 0;
        cli_task_show(f, &t, now);
        fclose(f);
        app_set_detail(ui, text);
        ui->mode = MODE_DETAILS;
        ui->scroll = 0;
    }
    free(text);
    dq_task_clear(&t);
}

static void
perform(struct cli *g, struct ui *ui)
{
    const char *ids[1] = {ui->action_id};
    dq_err err = {0};
    size_t n = 0;

    switch (ui->action) {
    case ACT_DETAILS:
        load_details(g, ui);
        break;
    case ACT_REQUEUE:
        if (dq_requeue(g->client, g->queue, ids, 1, 0, &n, &err) == DQ_OK)
            app_status(ui, false, "requeued %s: due now", ui->action_id);
        else
            app_status(ui, true, "requeue %s: %s", ui->action_id, err.msg);
        break;
    case ACT_DROP:
        if (dq_drop(g->client, g->queue, ids, 1, &n, &err) == DQ_OK)
            app_status(ui, false, "dropped %s", ui->action_id);
        else
            app_status(ui, true, "drop %s: %s", ui->action_id, err.msg);
        break;
    case ACT_REAP: {
        dq_reaped rp;
        if (dq_reap(g->client, g->queue, 1000, &rp, &err) == DQ_OK)
            app_status(ui, false, "recovered %zu expired leases (%zu ran out of attempts)",
                       rp.returned + rp.exhausted, rp.exhausted);
        else
            app_status(ui, true, "reap: %s", err.msg);
        break;
    }
    case ACT_NONE:
        break;
    }
    ui->action = ACT_NONE;
}

int
cmd_top(struct cli *g, int argc, char **argv)
{
    bool read_only = false, no_color = getenv("NO_COLOR") != NULL && getenv("NO_COLOR")[0];
    int64_t refresh = 1000;
    const char *val;
    dq_err err = {0};
    int rc, m;

    for (int i = 0; i < argc; i++) {
        if ((m = cli_global_opt(g, argc, argv, &i)) != 0) {
            if (m < 0)
                return DQ_EXIT_USAGE;
            i--;
            continue;
        }
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("%s%s", help, cli_global_help);
            return DQ_EXIT_OK;
        }
        if (strcmp(argv[i], "--read-only") == 0) {
            read_only = true;
        } else if (strcmp(argv[i], "--no-color") == 0) {
            no_color = true;
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
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;

    struct model model;
    struct ui ui;
    struct grid grid = {0};
    int rows, cols;

    model_init(&model, g->queue, dq_client_endpoint(g->client));
    ui_init(&ui, read_only, no_color);
    ui.refresh_ms = refresh;
    if (term_start(!no_color) != 0) {
        fprintf(stderr, "%s: cannot start the terminal (is this a tty?)\n", g->prog);
        return DQ_EXIT_USAGE;
    }
    term_size(&rows, &cols);
    grid_init(&grid, rows, cols);
    view_render(&model, &ui, &grid); /* sets the rows a pane shows */

    int64_t next_fetch = 0;
    bool quit = false;
    while (!quit) {
        int64_t now = mono_ms();
        if (now >= next_fetch && !ui.paused) {
            size_t offsets[PANE_COUNT], limits[PANE_COUNT];
            dq_stats before = model.stats;
            for (int i = 0; i < PANE_COUNT; i++) {
                offsets[i] = ui.top[i];
                limits[i] = ui.rows_visible > 0 ? (size_t)ui.rows_visible : 1;
            }
            bool had = model.have_data;
            if (model_fetch(&model, g->client, offsets, limits) == DQ_OK) {
                app_clamp(&ui, &model);
                /* adaptive: faster while counts change, slower while nothing moves */
                if (had && counts_moved(&before, &model.stats))
                    ui.refresh_ms = ui.refresh_ms / 2 < 250 ? 250 : ui.refresh_ms / 2;
                else if (had)
                    ui.refresh_ms = ui.refresh_ms * 2 > 5000 ? 5000 : ui.refresh_ms * 2;
            }
            next_fetch = mono_ms() + (model.connected ? ui.refresh_ms : 1000);
        }
        view_render(&model, &ui, &grid);
        term_blit(&grid);

        int64_t wait = ui.paused ? 1000 : next_fetch - mono_ms();
        int key = term_key((int)(wait < 0 ? 0 : wait > 5000 ? 5000 : wait));
        if (key == -2) {
            term_size(&rows, &cols);
            grid_init(&grid, rows, cols);
            continue;
        }
        if (key == 0)
            continue;
        if (ui.status[0] != '\0' && ui.mode == MODE_MAIN)
            ui.status[0] = '\0'; /* a key press clears the last result */
        int r = app_key(&ui, &model, key);
        if (r & APP_QUIT)
            quit = true;
        if (r & APP_ACTION) {
            perform(g, &ui);
            r |= APP_REFETCH;
        }
        if (key == KEY_APP_REDRAW)
            term_invalidate();
        if (r & APP_REFETCH)
            next_fetch = 0;
    }
    term_stop();
    grid_free(&grid);
    model_free(&model);
    ui_free(&ui);
    return DQ_EXIT_OK;
}
