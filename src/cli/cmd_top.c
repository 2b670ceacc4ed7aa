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
#include "lib/buf.h"
#include "lib/dur.h"
#include "tui/app.h"
#include "tui/model.h"
#include "tui/term.h"
#include "tui/view.h"

static const char help[] =
    "usage: delayq top [-q QUEUE] [--read-only] [--no-color] [--no-mouse] [--refresh DUR]\n\n"
    "The queue inspector: counts and rates, the due backlog over time, and the due,\n"
    "future, in-flight and failed tasks, with details (payload, error, stack trace) and\n"
    "actions (requeue, drop, recover expired leases) through the same scripts the\n"
    "workers use. Press ? inside for every key.\n\n"
    "  --read-only    disable every action (a badge says so)\n"
    "  --no-color     no colours (also when $NO_COLOR is set)\n"
    "  --no-mouse     leave the mouse to the terminal (else click selects, wheel scrolls)\n"
    "  --refresh DUR  first refresh interval (default 1s; it then adapts between 250ms\n"
    "                 while counts change and 5s while nothing moves)\n\n";

static volatile sig_atomic_t stop_requested;

static void
on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1; /* the loop quits and restores the terminal */
}

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
        snprintf(ui->detail_title, sizeof ui->detail_title, "task details");
        /* y in details copies the stack trace of a failed task, else the payload */
        struct dq_buf b = DQ_BUF_INIT;
        if (t.trace != NULL && t.trace[0] != '\0')
            dq_buf_puts(&b, t.trace);
        else if (!t.undecodable)
            cli_json_payload(&b, t.payload, t.payload_len);
        free(ui->detail_copy);
        ui->detail_copy = b.failed ? NULL : dq_buf_steal(&b, NULL);
        dq_buf_free(&b);
        ui->mode = MODE_DETAILS;
        ui->scroll = 0;
    }
    free(text);
    dq_task_clear(&t);
}

static void
load_audit(struct cli *g, struct ui *ui)
{
    dq_audit a;
    dq_err err = {0};
    struct dq_buf b = DQ_BUF_INIT;

    if (dq_audit_get(g->client, g->queue, 1000, &a, &err) != DQ_OK) {
        app_status(ui, true, "audit: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < a.n; i++) {
        char at[40];
        dq_time_format(at, sizeof at, a.entries[i].at_ms);
        dq_buf_printf(&b, "%s  %s  %s  %s  -> %s\n", at, a.entries[i].who, a.entries[i].action,
                      a.entries[i].detail, a.entries[i].result);
    }
    if (a.n == 0)
        dq_buf_puts(&b, "(no operator actions recorded)\n");
    app_set_detail(ui, b.data ? b.data : "");
    snprintf(ui->detail_title, sizeof ui->detail_title, "audit log of %s, newest first", g->queue);
    free(ui->detail_copy);
    ui->detail_copy = NULL;
    ui->mode = MODE_DETAILS;
    ui->scroll = 0;
    dq_buf_free(&b);
    dq_audit_free(&a);
}

static void
perform(struct cli *g, struct ui *ui, struct model *mutable, dq_search *search)
{
    const struct model *m = mutable;
    const char *ids[1] = {ui->action_id};
    dq_err err = {0};
    size_t n = 0;

    switch (ui->action) {
    case ACT_DETAILS:
        load_details(g, ui);
        break;
    case ACT_REQUEUE:
    case ACT_DROP: {
        /* the marked set when there is one (all or nothing), else the selection */
        int pane = ui->focus;
        const char *const *set = ui->nmarks[pane] > 0 ? (const char *const *)ui->marks[pane] : ids;
        size_t count = ui->nmarks[pane] > 0 ? ui->nmarks[pane] : 1;
        bool requeue = ui->action == ACT_REQUEUE;
        int rc = requeue ? dq_requeue(g->client, g->queue, set, count, 0, &n, &err)
                         : dq_drop(g->client, g->queue, set, count, &n, &err);
        if (rc == DQ_OK) {
            if (count == 1 && ui->nmarks[pane] == 0)
                app_status(ui, false, requeue ? "requeued %s: due now" : "dropped %s",
                           ui->action_id);
            else
                app_status(
                    ui, false,
                    requeue ? "requeued %zu marked tasks: due now" : "dropped %zu marked tasks", n);
            app_clear_marks(ui, pane);
        } else {
            app_status(ui, true, "%s %s: %s (nothing changed)", requeue ? "requeue" : "drop",
                       ui->action_id, err.msg);
        }
        break;
    }
    case ACT_REAP: {
        dq_reaped rp;
        if (dq_reap(g->client, g->queue, 1000, &rp, &err) == DQ_OK)
            app_status(ui, false, "recovered %zu expired leases (%zu ran out of attempts)",
                       rp.returned + rp.exhausted, rp.exhausted);
        else
            app_status(ui, true, "reap: %s", err.msg);
        break;
    }
    case ACT_RUN_NOW: {
        const dq_task *t = app_selected_task(ui, m);
        if (t == NULL || strcmp(t->id, ui->action_id) != 0)
            app_status(ui, true, "run now: the selection moved; try again");
        else if (dq_run_now(g->client, g->queue, t, &err) == DQ_OK)
            app_status(ui, false, "task %s is due now", ui->action_id);
        else
            app_status(ui, true, "run now %s: %s", ui->action_id, err.msg);
        break;
    }
    case ACT_REQUEUE_DELAY: {
        int64_t delay;
        if (dq_dur_parse(ui->input, "delay", &delay, &err) != DQ_OK)
            app_status(ui, true, "%s", err.msg);
        else if (dq_requeue(g->client, g->queue, ids, 1, delay, &n, &err) == DQ_OK)
            app_status(ui, false, "requeued %s: due in %s", ui->action_id, ui->input);
        else
            app_status(ui, true, "requeue %s: %s", ui->action_id, err.msg);
        break;
    }
    case ACT_REQUEUE_ALL: {
        int64_t spread = 0;
        dq_bulk cur = {0};
        if (ui->input[0] != '\0' && dq_dur_parse(ui->input, "spread", &spread, &err) != DQ_OK) {
            app_status(ui, true, "%s", err.msg);
            break;
        }
        int rc = DQ_OK;
        while (!cur.done && rc == DQ_OK)
            rc = dq_requeue_all_step(g->client, g->queue, 0, spread, &cur, &err);
        if (rc == DQ_OK)
            app_status(ui, false, "requeued %zu failed tasks%s%s", cur.done_n,
                       spread > 0 ? ", spread over " : "", spread > 0 ? ui->input : "");
        else
            app_status(ui, true, "requeue all stopped after %zu: %s", cur.done_n, err.msg);
        break;
    }
    case ACT_DROP_ALL: {
        dq_bulk cur = {0};
        if (strcmp(ui->input, g->queue) != 0) {
            app_status(ui, true, "not dropped: the name typed is not the queue's");
            break;
        }
        int rc = DQ_OK;
        while (!cur.done && rc == DQ_OK)
            rc = dq_drop_all_step(g->client, g->queue, &cur, &err);
        if (rc == DQ_OK)
            app_status(ui, false, "dropped %zu failed tasks", cur.done_n);
        else
            app_status(ui, true, "drop all stopped after %zu: %s", cur.done_n, err.msg);
        break;
    }
    case ACT_SEARCH:
        if (ui->input[0] == '\0')
            break;
        snprintf(ui->filter, sizeof ui->filter, "%s", ui->input);
        ui->filter_pane = ui->focus;
        model_keep(mutable, ui->focus);
        memset(search, 0, sizeof *search);
        ui->sel[ui->focus] = ui->top[ui->focus] = 0;
        ui->search_scanned = ui->search_total = 0;
        ui->search_done = false;
        break;
    case ACT_UNFILTER:
        ui->filter[0] = '\0';
        model_keep(mutable, -1);
        ui->sel[ui->filter_pane] = ui->top[ui->filter_pane] = 0;
        app_status(ui, false, "search cleared");
        break;
    case ACT_AUDIT:
        load_audit(g, ui);
        break;
    case ACT_COPY: {
        struct dq_buf b = DQ_BUF_INIT;
        const dq_task *t = ui->mode == MODE_MAIN ? app_selected_task(ui, m) : NULL;
        if (ui->mode == MODE_DETAILS && ui->detail_copy != NULL)
            dq_buf_puts(&b, ui->detail_copy);
        else if (t != NULL && !t->undecodable)
            cli_json_payload(&b, t->payload, t->payload_len);
        if (b.len > 0 && !b.failed) {
            term_copy(b.data, b.len);
            app_status(ui, false, "copied %zu bytes to the clipboard (OSC 52)", b.len);
        } else {
            app_status(ui, true, "nothing to copy");
        }
        dq_buf_free(&b);
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
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;

    struct model model;
    struct ui ui;
    struct grid grid = {0};
    int rows, cols;

    model_init(&model, g->queue, dq_client_endpoint(g->client));
    ui_init(&ui, read_only, no_color);
    ui.refresh_ms = refresh;
    if (term_start(!no_color, !no_mouse) != 0) {
        fprintf(stderr, "%s: cannot start the terminal (is this a tty?)\n", g->prog);
        return DQ_EXIT_USAGE;
    }
    /* SIGINT/SIGTERM/SIGHUP quit cleanly (terminal restored, demo stopped); no
     * SA_RESTART, so a signal also ends the wait for a key at once */
    struct sigaction sa, old_int, old_term, old_hup;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    stop_requested = 0;
    term_size(&rows, &cols);
    grid_init(&grid, rows, cols);
    view_render(&model, &ui, &grid); /* sets the rows a pane shows */
    int early_zero = 0; /* key waits that ended at once with nothing: the tty is gone */

    int64_t next_fetch = 0, backoff = 500;
    dq_search search = {0};
    bool quit = false;
    while (!quit && !stop_requested) {
        int64_t now = mono_ms();
        if (next_fetch == 0 || (now >= next_fetch && !ui.paused)) {
            size_t offsets[PANE_COUNT], limits[PANE_COUNT];
            dq_stats before = model.stats;
            for (int i = 0; i < PANE_COUNT; i++) {
                offsets[i] = ui.top[i];
                limits[i] = ui.rows_visible > 0 ? (size_t)ui.rows_visible : 1;
            }
            bool had = model.have_data;
            if (model_fetch(&model, g->client, offsets, limits) == DQ_OK) {
                if (app_clamp(&ui, &model))
                    next_fetch = 0; /* the window moved: fetch the rows now shown */
                /* adaptive: faster while counts change, slower while nothing moves */
                if (had && counts_moved(&before, &model.stats))
                    ui.refresh_ms = ui.refresh_ms / 2 < 250 ? 250 : ui.refresh_ms / 2;
                else if (had)
                    ui.refresh_ms = ui.refresh_ms * 2 > 5000 ? 5000 : ui.refresh_ms * 2;
            }
            /* disconnected: try again after the client's own (capped) backoff, at most 5 s */
            next_fetch = mono_ms() + (model.connected ? ui.refresh_ms : backoff);
            backoff = model.connected ? 500 : backoff * 2 > 5000 ? 5000 : backoff * 2;
        }
        /* a search runs one bounded step per pass, keys still answered in between */
        int fp = ui.filter_pane;
        bool searching = ui.filter[0] != '\0' && !search.done && model.pages[fp].n < 1000;
        if (searching) {
            dq_err serr = {0};
            if (dq_search_step(g->client, g->queue, (dq_view)fp, ui.filter, 100, &search,
                               &model.pages[fp], &serr) != DQ_OK) {
                app_status(&ui, true, "search: %s", serr.msg);
                search.done = true;
            }
            ui.search_scanned = search.scanned;
            ui.search_total = search.total;
            ui.search_done = search.done || model.pages[fp].n >= 1000;
        }
        ui.retry_in_ms = next_fetch - mono_ms();
        view_render(&model, &ui, &grid);
        term_blit(&grid);

        int64_t wait = ui.paused ? 1000 : next_fetch - mono_ms();
        if (!model.connected && wait > 1000)
            wait = 1000; /* tick the "retrying in" countdown */
        if (searching)
            wait = 0; /* next step at once, after looking at the keyboard */
        int64_t asked = wait < 0 ? 0 : wait > 5000 ? 5000 : wait, t0 = mono_ms();
        int key = term_key((int)asked);
        if (key == 0 && asked >= 50 && mono_ms() - t0 < asked / 2) {
            if (++early_zero > 50)
                break; /* the terminal went away (hang-up): quit, do not spin */
        } else {
            early_zero = 0;
        }
        if (key == -2) {
            term_size(&rows, &cols);
            grid_init(&grid, rows, cols);
            view_render(&model, &ui, &grid); /* the new layout's rows per pane */
            if (app_clamp(&ui, &model))
                next_fetch = 0;
            continue;
        }
        if (key == 0)
            continue;
        if (ui.status[0] != '\0' && ui.mode == MODE_MAIN)
            ui.status[0] = '\0'; /* a key press clears the last result */
        int r;
        if (key == KEY_APP_CLICK) {
            int mr, mc;
            term_mouse(&mr, &mc);
            r = app_click(&ui, &model, mr, mc);
        } else {
            r = app_key(&ui, &model, key);
        }
        if (r & APP_QUIT)
            quit = true;
        if (r & APP_ACTION) {
            perform(g, &ui, &model, &search);
            r |= APP_REFETCH;
        }
        if (key == KEY_APP_REDRAW)
            term_invalidate();
        if (r & APP_REFETCH)
            next_fetch = 0;
    }
    term_stop();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    grid_free(&grid);
    model_free(&model);
    ui_free(&ui);
    return DQ_EXIT_OK;
}
