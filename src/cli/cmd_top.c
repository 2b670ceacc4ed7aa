/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c: delayq top, the queue inspector. The loop: fetch a snapshot (model.c,
 * through libdelayq), lay it out (view.c, pure), copy it to the terminal (term.c, the
 * only curses code), wait for a key or the next refresh, and perform what the key asked
 * (app.c decides, this file calls the library: the same scripts as the CLI and workers).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"
#include "tui/app.h"
#include "tui/io.h"
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

static bool
counts_moved(const dq_stats *a, const dq_stats *b)
{
    return a->due != b->due || a->future != b->future || a->inflight != b->inflight ||
           a->failed != b->failed || a->enqueued != b->enqueued || a->done != b->done;
}

/*
 * An operator's action on its way to Redis: what the keyboard thread copied for it, and
 * what the Redis thread (io.c) found. The keyboard thread applies the result to the UI.
 */
struct job {
    enum action act;
    char queue[101];
    char id[240];
    char input[120];
    char **ids; /* the marked set (copied), or NULL for the selection */
    size_t nids;
    int pane;
    dq_task task; /* run now: the selected task's id and bytes (copied) */
    /* results */
    bool error;
    char status[300];
    bool clear_marks;
    char *detail, *copy; /* details view text and what y copies there (owned) */
    char title[64];
    dq_queues queues; /* the picker's queues and their counts (owned) */
    int64_t (*counts)[4];
};

static void
job_reset(struct job *j)
{
    for (size_t i = 0; i < j->nids; i++)
        free(j->ids[i]);
    free(j->ids);
    free(j->task.id);
    free(j->task.raw);
    free(j->detail);
    free(j->copy);
    dq_queues_free(&j->queues);
    free(j->counts);
    memset(j, 0, sizeof *j);
}

static void
job_status(struct job *j, bool error, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(j->status, sizeof j->status, fmt, ap);
    va_end(ap);
    j->error = error;
}

static void
job_details(dq_client *c, struct job *j)
{
    dq_task t;
    dq_err err = {0};
    struct dq_buf text = DQ_BUF_INIT, copy = DQ_BUF_INIT;
    dq_stats s;

    if (dq_find(c, j->queue, j->id, &t, &err) != DQ_OK) {
        job_status(j, true, "%s", err.msg);
        return;
    }
    dq_fmt_task_details(&text, &t, dq_stats_get(c, j->queue, &s, NULL) == DQ_OK ? s.now_ms : 0);
    /* y in details copies the stack trace of a failed task, else the payload */
    dq_fmt_task_copy(&copy, &t, true);
    if (text.failed) {
        job_status(j, true, "details: out of memory");
    } else {
        j->detail = dq_buf_steal(&text, NULL);
        snprintf(j->title, sizeof j->title, "task details");
    }
    j->copy = copy.failed || copy.len == 0 ? NULL : dq_buf_steal(&copy, NULL);
    dq_buf_free(&text);
    dq_buf_free(&copy);
    dq_task_clear(&t);
}

static void
job_audit(dq_client *c, struct job *j)
{
    dq_audit a;
    dq_err err = {0};
    struct dq_buf b = DQ_BUF_INIT;

    if (dq_audit_get(c, j->queue, 1000, &a, &err) != DQ_OK) {
        job_status(j, true, "audit: %s", err.msg);
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
    j->detail = b.failed ? NULL : dq_buf_steal(&b, NULL);
    if (j->detail == NULL)
        job_status(j, true, "audit: out of memory");
    snprintf(j->title, sizeof j->title, "audit log of %.30s, newest first", j->queue);
    dq_buf_free(&b);
    dq_audit_free(&a);
}

/* The picker's list: up to 500 queues, each with its counts (one call per queue). */
static void
job_queues(dq_client *c, struct job *j)
{
    dq_err err = {0};

    if (dq_queues_get(c, 500, &j->queues, &err) != DQ_OK) {
        job_status(j, true, "queues: %s", err.msg);
        return;
    }
    j->counts = calloc(j->queues.n ? j->queues.n : 1, sizeof *j->counts);
    if (j->counts == NULL) {
        job_status(j, true, "queues: out of memory");
        return;
    }
    for (size_t i = 0; i < j->queues.n; i++) {
        dq_stats s;
        if (dq_stats_get(c, j->queues.names[i], &s, &err) != DQ_OK) {
            job_status(j, true, "queues: %s: %s", j->queues.names[i], err.msg);
            return;
        }
        j->counts[i][0] = s.due;
        j->counts[i][1] = s.future;
        j->counts[i][2] = s.inflight;
        j->counts[i][3] = s.failed;
    }
    if (j->queues.n == 0)
        job_status(j, false, "no queues on this server yet");
}

/* Runs on the Redis thread: the library calls an action needs, results into @arg. */
static void
job_run(dq_client *c, void *arg)
{
    struct job *j = arg;
    const char *one[1] = {j->id};
    dq_err err = {0};
    size_t n = 0;

    switch (j->act) {
    case ACT_DETAILS:
        job_details(c, j);
        break;
    case ACT_AUDIT:
        job_audit(c, j);
        break;
    case ACT_QUEUES:
        job_queues(c, j);
        break;
    case ACT_REQUEUE:
    case ACT_DROP: {
        /* the marked set when there is one (all or nothing), else the selection */
        const char *const *set = j->ids != NULL ? (const char *const *)j->ids : one;
        size_t count = j->ids != NULL ? j->nids : 1;
        bool requeue = j->act == ACT_REQUEUE;
        int rc = requeue ? dq_requeue(c, j->queue, set, count, 0, &n, &err)
                         : dq_drop(c, j->queue, set, count, &n, &err);
        if (rc != DQ_OK)
            job_status(j, true, "%s %s: %s (nothing changed)", requeue ? "requeue" : "drop",
                       j->ids != NULL ? "marked tasks" : j->id, err.msg);
        else if (j->ids == NULL)
            job_status(j, false, requeue ? "requeued %s: due now" : "dropped %s", j->id);
        else
            job_status(j, false,
                       requeue ? "requeued %zu marked tasks: due now" : "dropped %zu marked tasks",
                       n);
        j->clear_marks = rc == DQ_OK;
        break;
    }
    case ACT_REAP: {
        dq_reaped rp;
        if (dq_reap(c, j->queue, 1000, &rp, &err) == DQ_OK)
            job_status(j, false, "recovered %zu expired leases (%zu ran out of attempts)",
                       rp.returned + rp.exhausted, rp.exhausted);
        else
            job_status(j, true, "reap: %s", err.msg);
        break;
    }
    case ACT_RUN_NOW:
        if (dq_run_now(c, j->queue, &j->task, &err) == DQ_OK)
            job_status(j, false, "task %s is due now", j->id);
        else
            job_status(j, true, "run now %s: %s", j->id, err.msg);
        break;
    case ACT_REQUEUE_DELAY: {
        int64_t delay;
        if (dq_dur_parse(j->input, "delay", &delay, &err) != DQ_OK)
            job_status(j, true, "%s", err.msg);
        else if (dq_requeue(c, j->queue, one, 1, delay, &n, &err) == DQ_OK)
            job_status(j, false, "requeued %s: due in %s", j->id, j->input);
        else
            job_status(j, true, "requeue %s: %s", j->id, err.msg);
        break;
    }
    case ACT_REQUEUE_ALL: {
        int64_t spread = 0;
        dq_bulk cur = {0};
        if (j->input[0] != '\0' && dq_dur_parse(j->input, "spread", &spread, &err) != DQ_OK) {
            job_status(j, true, "%s", err.msg);
            break;
        }
        int rc = DQ_OK;
        while (!cur.done && rc == DQ_OK)
            rc = dq_requeue_all_step(c, j->queue, 0, spread, &cur, &err);
        if (rc == DQ_OK)
            job_status(j, false, "requeued %zu failed tasks%s%s", cur.done_n,
                       spread > 0 ? ", spread over " : "", spread > 0 ? j->input : "");
        else
            job_status(j, true, "requeue all stopped after %zu: %s", cur.done_n, err.msg);
        break;
    }
    case ACT_DROP_ALL: {
        dq_bulk cur = {0};
        int rc = DQ_OK;
        while (!cur.done && rc == DQ_OK)
            rc = dq_drop_all_step(c, j->queue, &cur, &err);
        if (rc == DQ_OK)
            job_status(j, false, "dropped %zu failed tasks", cur.done_n);
        else
            job_status(j, true, "drop all stopped after %zu: %s", cur.done_n, err.msg);
        break;
    }
    default:
        break;
    }
}

static const char *
job_name(enum action a)
{
    switch (a) {
    case ACT_DETAILS:
        return "loading details";
    case ACT_AUDIT:
        return "loading the audit log";
    case ACT_QUEUES:
        return "loading the queues";
    case ACT_REQUEUE:
    case ACT_REQUEUE_DELAY:
        return "requeueing";
    case ACT_DROP:
        return "dropping";
    case ACT_REAP:
        return "recovering expired leases";
    case ACT_RUN_NOW:
        return "making the task due";
    case ACT_REQUEUE_ALL:
        return "requeueing all failed tasks";
    case ACT_DROP_ALL:
        return "dropping all failed tasks";
    default:
        return "working";
    }
}

/* On the keyboard thread: applies a finished job to the UI. */
static void
job_finish(struct ui *ui, struct job *j, const char *current)
{
    if (j->status[0] != '\0')
        app_status(ui, j->error, "%s", j->status);
    else
        ui->status[0] = '\0';
    if (j->clear_marks)
        app_clear_marks(ui, j->pane);
    if (!j->error && j->detail != NULL) {
        app_set_detail(ui, j->detail);
        snprintf(ui->detail_title, sizeof ui->detail_title, "%s", j->title);
        free(ui->detail_copy);
        ui->detail_copy = j->copy;
        j->copy = NULL;
        ui->mode = MODE_DETAILS;
        ui->scroll = 0;
    }
    if (!j->error && j->queues.n > 0) {
        app_set_picker(ui, j->queues.names, j->counts, j->queues.n, j->queues.total, current);
        j->queues.names = NULL; /* the UI owns them now */
        j->queues.n = 0;
        j->counts = NULL;
    }
    job_reset(j);
}

/*
 * One search step on the Redis thread. The keyboard thread owns the cursor between
 * steps; gen tells a step of an older search (ended or replaced meanwhile) apart.
 */
struct search_step {
    char queue[101];
    int view;
    char needle[120];
    unsigned gen;
    dq_search cur;
    dq_page found;
    int rc;
    char error[256];
};

static void
search_run(dq_client *c, void *arg)
{
    struct search_step *s = arg;
    dq_err err = {0};

    s->rc = dq_search_step(c, s->queue, (dq_view)s->view, s->needle, 100, &s->cur, &s->found, &err);
    snprintf(s->error, sizeof s->error, "%s", s->rc == DQ_OK ? "" : err.msg);
}

struct fetch {
    char queue[101];
    int keep;
    size_t offsets[PANE_COUNT], limits[PANE_COUNT];
    struct snapshot snap;
};

static void
fetch_run(dq_client *c, void *arg)
{
    struct fetch *f = arg;

    model_snapshot(c, f->queue, f->keep, f->offsets, f->limits, &f->snap);
}

static char **
copy_ids(char *const *ids, size_t n)
{
    char **out = calloc(n, sizeof *out);

    for (size_t i = 0; out != NULL && i < n; i++) {
        if ((out[i] = strdup(ids[i])) == NULL) {
            while (i > 0)
                free(out[--i]);
            free(out);
            out = NULL;
        }
    }
    return out;
}

/* Shows queue @name from now on: a fresh model, selections, marks and search reset. */
static void
switch_queue(struct ui *ui, struct model *m, const char *name)
{
    char endpoint[sizeof m->endpoint], queue[sizeof m->queue];

    snprintf(queue, sizeof queue, "%s", name);
    if (strcmp(queue, m->queue) == 0)
        return;
    bool connected = m->connected; /* the server's state, not the queue's */

    snprintf(endpoint, sizeof endpoint, "%s", m->endpoint);
    model_free(m);
    model_init(m, queue, endpoint);
    m->connected = connected;
    for (int p = 0; p < PANE_COUNT; p++) {
        ui->sel[p] = ui->top[p] = 0;
        app_clear_marks(ui, p);
    }
    ui->filter[0] = '\0';
    app_status(ui, false, "showing queue %s", queue);
}

/*
 * What an action key asked for. Actions that need Redis become a job for the Redis
 * thread (one at a time); the rest happen here. Returns true when the panes should be
 * fetched again at once.
 */
static bool
begin_action(struct ui *ui, struct model *m, struct io *io, struct job *job, const char *queue,
             dq_search *search, unsigned *search_gen)
{
    enum action act = ui->action;

    ui->action = ACT_NONE;
    switch (act) {
    case ACT_SEARCH:
        if (ui->input[0] == '\0')
            return false;
        snprintf(ui->filter, sizeof ui->filter, "%s", ui->input);
        ui->filter_pane = ui->focus;
        model_keep(m, ui->focus);
        memset(search, 0, sizeof *search);
        (*search_gen)++;
        ui->sel[ui->focus] = ui->top[ui->focus] = 0;
        ui->search_scanned = ui->search_total = 0;
        ui->search_done = false;
        return false;
    case ACT_UNFILTER:
        ui->filter[0] = '\0';
        model_keep(m, -1);
        (*search_gen)++;
        ui->sel[ui->filter_pane] = ui->top[ui->filter_pane] = 0;
        app_status(ui, false, "search cleared");
        return true;
    case ACT_COPY: {
        struct dq_buf b = DQ_BUF_INIT;
        const dq_task *t = ui->mode == MODE_MAIN ? app_selected_task(ui, m) : NULL;
        if (ui->mode == MODE_DETAILS && ui->detail_copy != NULL)
            dq_buf_puts(&b, ui->detail_copy);
        else if (t != NULL)
            dq_fmt_task_copy(&b, t, false);
        if (b.len > 0 && !b.failed) {
            term_copy(b.data, b.len);
            app_status(ui, false, "copied %zu bytes to the clipboard (OSC 52)", b.len);
        } else {
            app_status(ui, true, "nothing to copy");
        }
        dq_buf_free(&b);
        return false;
    }
    case ACT_SWITCH:
        switch_queue(ui, m, ui->pick_names[ui->pick_sel]);
        memset(search, 0, sizeof *search);
        (*search_gen)++; /* a step still running belongs to the old queue */
        return true;
    case ACT_NONE:
        return false;
    default:
        break;
    }
    if (io_busy(io, IO_JOB)) {
        app_status(ui, true, "busy: %s; try again when it has finished", job_name(job->act));
        return false;
    }
    job_reset(job);
    job->act = act;
    snprintf(job->queue, sizeof job->queue, "%s", queue);
    job->pane = ui->focus;
    snprintf(job->id, sizeof job->id, "%s", ui->action_id);
    snprintf(job->input, sizeof job->input, "%s", ui->input);
    if ((act == ACT_REQUEUE || act == ACT_DROP) && ui->nmarks[ui->focus] > 0) {
        job->ids = copy_ids(ui->marks[ui->focus], ui->nmarks[ui->focus]);
        if (job->ids == NULL) {
            app_status(ui, true, "out of memory; nothing changed");
            return false;
        }
        job->nids = ui->nmarks[ui->focus];
    }
    if (act == ACT_DROP_ALL && strcmp(ui->input, queue) != 0) {
        app_status(ui, true, "not dropped: the name typed is not the queue's");
        return false;
    }
    if (act == ACT_RUN_NOW) {
        const dq_task *t = app_selected_task(ui, m);
        if (t == NULL || strcmp(t->id, ui->action_id) != 0) {
            app_status(ui, true, "run now: the selection moved; try again");
            return false;
        }
        job->task.id = strdup(t->id);
        job->task.custom_id = t->custom_id;
        job->task.state = t->state;
        job->task.undecodable = t->undecodable;
        job->task.raw = malloc(t->raw_len ? t->raw_len : 1);
        if (job->task.id == NULL || job->task.raw == NULL) {
            app_status(ui, true, "out of memory; nothing changed");
            return false;
        }
        memcpy(job->task.raw, t->raw, t->raw_len);
        job->task.raw_len = t->raw_len;
    }
    io_submit(io, IO_JOB, job_run, job);
    app_status(ui, false, "%s...", job_name(act));
    return false;
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
    /* from here on only the Redis thread uses the client */
    struct io *io = io_start(g->client);
    if (io == NULL) {
        fprintf(stderr, "%s: cannot start a thread\n", g->prog);
        return DQ_EXIT_FAILED;
    }
    g->client = NULL;
    ui_init(&ui, read_only, no_color);
    ui.refresh_ms = refresh;
    if (term_start(!no_color, !no_mouse) != 0) {
        fprintf(stderr, "%s: cannot start the terminal (is this a tty?)\n", g->prog);
        io_stop(io);
        model_free(&model);
        ui_free(&ui);
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

    /* what the Redis thread works on (io.h): one refresh, one search step, one action */
    struct fetch fetch = {0};
    struct search_step step = {0};
    struct job job = {0};
    bool picked = false; /* the picker was opened, by Q or for an unused queue */
    int64_t next_fetch = 0, backoff = 500;
    bool fetch_now = true; /* a key or an action wants fresh data as soon as possible */
    dq_search search = {0};
    unsigned search_gen = 0;
    dq_stats before = {0};
    bool quit = false;
    while (!quit && !stop_requested) {
        /* results the Redis thread finished since the last pass */
        bool fetched = io_done(io, IO_FETCH);
        if (fetched && strcmp(fetch.queue, model.queue) != 0) {
            snapshot_free(&fetch.snap); /* fetched before a switch to another queue */
            fetch_now = true;
        } else if (fetched) {
            bool had = model.have_data;
            struct selection selected;
            app_selection_save(&ui, &model, &selected);
            if (model_apply(&model, &fetch.snap))
                fetch_now = true; /* a search ended meanwhile: its pane has no rows yet */
            if (model.connected) {
                app_selection_follow(&ui, &model, &selected);
                if (app_clamp(&ui, &model))
                    fetch_now = true; /* the window moved: fetch the rows now shown */
                /* adaptive: faster while counts change, slower while nothing moves */
                if (had && counts_moved(&before, &model.stats))
                    ui.refresh_ms = ui.refresh_ms / 2 < 250 ? 250 : ui.refresh_ms / 2;
                else if (had)
                    ui.refresh_ms = ui.refresh_ms * 2 > 5000 ? 5000 : ui.refresh_ms * 2;
            }
            /* disconnected: try again after a capped backoff, at most 5 s */
            next_fetch = dq_mono_ms() + (model.connected ? ui.refresh_ms : backoff);
            backoff = model.connected ? 500 : backoff * 2 > 5000 ? 5000 : backoff * 2;
            if (!model.connected)
                fetch_now = false; /* not even a key press hammers a server that is down */
            /* the default queue, unused, on a server with queues: offer them, once */
            const dq_stats *s = &model.stats;
            if (model.connected && !picked && !g->queue_chosen && model.nqueues > 0 &&
                s->enqueued == 0 && s->due + s->future + s->inflight + s->failed == 0 &&
                !io_busy(io, IO_JOB)) {
                ui.action = ACT_QUEUES;
                begin_action(&ui, &model, io, &job, model.queue, &search, &search_gen);
            }
            picked = picked || model.connected;
        }
        if (io_done(io, IO_SEARCH)) {
            int fp = ui.filter_pane;
            if (step.gen != search_gen || ui.filter[0] == '\0') {
                dq_page_free(&step.found); /* a step of a search that has ended */
            } else if (step.rc != DQ_OK) {
                app_status(&ui, true, "search: %s", step.error);
                dq_page_free(&step.found);
                search.done = true;
            } else {
                search = step.cur;
                if (!model_add_found(&model, fp, &step.found)) {
                    app_status(&ui, true, "search: out of memory");
                    search.done = true;
                }
            }
            ui.search_scanned = search.scanned;
            ui.search_total = search.total;
            ui.search_done = search.done || model.pages[fp].n >= 1000;
        }
        if (io_done(io, IO_JOB)) {
            job_finish(&ui, &job, model.queue);
            fetch_now = true; /* show what the action changed at once */
        }

        /* work for the Redis thread */
        int64_t now = dq_mono_ms();
        if (!io_busy(io, IO_FETCH) &&
            (fetch_now || next_fetch == 0 || (now >= next_fetch && !ui.paused))) {
            for (int i = 0; i < PANE_COUNT; i++) {
                fetch.offsets[i] = ui.top[i];
                fetch.limits[i] = ui.rows_visible > 0 ? (size_t)ui.rows_visible : 1;
            }
            fetch.keep = model.keep;
            snprintf(fetch.queue, sizeof fetch.queue, "%s", model.queue);
            before = model.stats;
            io_submit(io, IO_FETCH, fetch_run, &fetch);
            fetch_now = false;
        }
        int fp = ui.filter_pane;
        bool searching = ui.filter[0] != '\0' && !search.done && model.pages[fp].n < 1000;
        if (searching && !io_busy(io, IO_SEARCH)) {
            /* one bounded step per submission; keys are answered in between */
            snprintf(step.queue, sizeof step.queue, "%s", model.queue);
            step.view = fp;
            step.gen = search_gen;
            step.cur = search;
            snprintf(step.needle, sizeof step.needle, "%s", ui.filter);
            memset(&step.found, 0, sizeof step.found);
            io_submit(io, IO_SEARCH, search_run, &step);
        }

        ui.retry_in_ms = next_fetch - dq_mono_ms();
        view_render(&model, &ui, &grid);
        term_blit(&grid);

        int64_t wait = ui.paused ? 1000 : next_fetch - dq_mono_ms();
        if (!model.connected && wait > 1000)
            wait = 1000; /* tick the "retrying in" countdown */
        if (io_any_busy(io) && wait > 15)
            wait = 15; /* look for the Redis thread's results soon */
        int64_t asked = wait < 0 ? 0 : wait > 5000 ? 5000 : wait, t0 = dq_mono_ms();
        int key = term_key((int)asked);
        if (key == 0 && asked >= 15 && dq_mono_ms() - t0 < asked / 2) {
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
                fetch_now = true;
            continue;
        }
        if (key == 0)
            continue;
        if (ui.status[0] != '\0' && ui.mode == MODE_MAIN && !io_busy(io, IO_JOB))
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
        if ((r & APP_ACTION) &&
            begin_action(&ui, &model, io, &job, model.queue, &search, &search_gen))
            r |= APP_REFETCH;
        if (key == KEY_APP_REDRAW)
            term_invalidate();
        if ((r & APP_REFETCH) && model.connected)
            fetch_now = true;
    }
    term_stop();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    io_stop(io); /* waits for the call in progress: at most the command timeout */
    snapshot_free(&fetch.snap);
    dq_page_free(&step.found);
    job_reset(&job);
    grid_free(&grid);
    model_free(&model);
    ui_free(&ui);
    return DQ_EXIT_OK;
}
