/* SPDX-License-Identifier: MIT */
/*
 * top.c: the inspector's loop. Each pass: apply what the Redis thread finished (a
 * refresh, a search step, an action), submit the work now due (the next refresh, the
 * next search step), draw (view.c lays the UI state out, term.c copies the grid to the
 * screen), wait for a key or the next deadline, and handle the key (keymap.c picks the
 * change of UI state, app.c makes it and says what to do; this file does it). The
 * keyboard never waits for Redis: every Redis call runs on the Redis thread (io.c),
 * one at a time (jobs.c).
 */
#include "top.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fmt/json.h"
#include "fmt/taskfmt.h"
#include "io.h"
#include "jobs.h"
#include "keymap.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "term.h"
#include "view.h"

/* Refresh backoff while disconnected, and the quickest poll for the Redis thread. */
enum { BACKOFF_MIN_MS = 500, BACKOFF_MAX_MS = 1000, POLL_MS = 15, KEY_WAIT_MAX_MS = 5000 };

/* Matches a search keeps in its pane (pages of search_run, which takes up to 100). */
#define SEARCH_MATCHES_MAX 1000

static volatile sig_atomic_t stop_requested;

static void
on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1; /* the loop quits and restores the terminal */
}

struct top {
    const struct tui_options *opt;
    struct model model;
    struct ui ui;
    struct grid grid;
    struct io *io;
    /* what the Redis thread works on (io.h): one refresh, one search step, one action */
    struct fetch fetch;
    struct search_step step;
    struct job job;
    dq_search search; /* the running search's cursor, between steps */
    unsigned search_gen;
    dq_stats before; /* counts when the refresh in flight was submitted */
    bool picked;     /* the picker was opened, by Q or for an unused queue */
    bool fetch_now;  /* a key or an action wants fresh data as soon as possible */
    bool quit;
    int64_t next_fetch, backoff_ms;
    int64_t next_view; /* the Workers view open: when it reads the registry again */
    int early_zero;    /* key waits that ended at once with nothing: the tty is gone */
    /* fix and requeue: the edit waiting for its y/N */
    dq_task edit_task;           /* the failed task as read before the editor ran */
    unsigned char *edit_payload; /* the payload saved in the editor, as msgpack */
    size_t edit_len;
};

static bool
counts_moved(const dq_stats *a, const dq_stats *b)
{
    /* a pause or resume from elsewhere is movement too: the badge must not lag by the
     * slowed-down refresh (up to 5 s) after an operator resumed the queue */
    return a->due != b->due || a->future != b->future || a->inflight != b->inflight ||
           a->failed != b->failed || a->enqueued != b->enqueued || a->done != b->done ||
           a->paused != b->paused || a->paused_until_ms != b->paused_until_ms;
}

/* The layout for the screen and mode now, handed to the UI state (rows per pane). */
static void
relayout(struct top *t)
{
    struct layout l;

    view_layout(&t->ui, t->grid.rows, t->grid.cols, &l);
    app_set_layout(&t->ui, &l);
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

/* A search begins, ends or changes queue: a step still running belongs to the old one. */
static void
search_reset(struct top *t)
{
    memset(&t->search, 0, sizeof t->search);
    t->search_gen++;
}

/* Shows queue @name from now on: a fresh model; selections, marks and search reset. */
static void
switch_queue(struct top *t, const char *name)
{
    struct model *m = &t->model;
    char endpoint[sizeof m->endpoint], queue[sizeof m->queue];

    snprintf(queue, sizeof queue, "%s", name);
    if (strcmp(queue, m->queue) == 0)
        return;
    bool connected = m->connected; /* the server's state, not the queue's */

    snprintf(endpoint, sizeof endpoint, "%s", m->endpoint);
    model_free(m);
    model_init(m, queue, endpoint);
    m->connected = connected;
    app_queue_switched(&t->ui, queue);
    search_reset(t);
}

/* y: the selected payload, or in a details view what it offers to copy. */
static void
copy_to_clipboard(struct top *t)
{
    struct ui *ui = &t->ui;
    struct dq_buf b = DQ_BUF_INIT;
    const dq_task *task = ui->mode == MODE_MAIN ? app_selected_task(ui, &t->model) : NULL;

    if (ui->mode == MODE_DETAILS && ui->detail_copy != NULL)
        dq_buf_puts(&b, ui->detail_copy);
    else if (task != NULL)
        dq_fmt_task_copy(&b, task, false);
    if (b.len > 0 && !b.failed) {
        term_copy(b.data, b.len);
        app_status(ui, false, "copied %zu bytes to the clipboard (OSC 52)", b.len);
    } else {
        app_status(ui, true, "nothing to copy");
    }
    dq_buf_free(&b);
}

/* Fills the job for @act from the UI state; false (with the status set) when refused. */
static bool
job_prepare(struct top *t, enum action act)
{
    struct ui *ui = &t->ui;
    struct job *j = &t->job;

    job_reset(j);
    j->act = act;
    j->result.act = act;
    snprintf(j->queue, sizeof j->queue, "%s", t->model.queue);
    j->result.pane = ui->focus;
    snprintf(j->id, sizeof j->id, "%s", ui->action_id);
    snprintf(j->input, sizeof j->input, "%s", ui->input);
    snprintf(j->pause_for, sizeof j->pause_for, "%s", ui->pause_for);
    snprintf(j->throttle_rate, sizeof j->throttle_rate, "%s", ui->throttle_rate);
    snprintf(j->throttle_conc, sizeof j->throttle_conc, "%s", ui->throttle_conc);
    snprintf(j->spread, sizeof j->spread, "%s", ui->spread);
    if ((act == ACT_REQUEUE || act == ACT_DROP) && ui->nmarks[ui->focus] > 0) {
        j->ids = copy_ids(ui->marks[ui->focus], ui->nmarks[ui->focus]);
        if (j->ids == NULL) {
            app_status(ui, true, "out of memory; nothing changed");
            return false;
        }
        j->nids = ui->nmarks[ui->focus];
    }
    if (act == ACT_REPLACE) {
        /* the edit confirmed: its task and payload go to the job */
        if (t->edit_task.id == NULL || strcmp(t->edit_task.id, ui->action_id) != 0) {
            app_status(ui, true, "fix: nothing to requeue; press e again");
            return false;
        }
        j->found = t->edit_task;
        memset(&t->edit_task, 0, sizeof t->edit_task);
        j->payload = t->edit_payload;
        j->payload_len = t->edit_len;
        t->edit_payload = NULL;
        t->edit_len = 0;
    }
    if (act == ACT_REQUEUE_ALL || act == ACT_DROP_ALL || act == ACT_REQUEUE_FILTER ||
        act == ACT_DROP_FILTER) {
        dq_filter f = app_failed_filter(ui);
        j->fkind = f.kind;
        snprintf(j->fvalue, sizeof j->fvalue, "%s", f.value != NULL ? f.value : "");
    }
    if (act == ACT_RUN_NOW) {
        const dq_task *sel = app_selected_task(ui, &t->model);
        if (sel == NULL || strcmp(sel->id, ui->action_id) != 0) {
            app_status(ui, true, "run now: the selection moved; try again");
            return false;
        }
        j->task.id = strdup(sel->id);
        j->task.custom_id = sel->custom_id;
        j->task.state = sel->state;
        j->task.undecodable = sel->undecodable;
        j->task.raw = malloc(sel->raw_len ? sel->raw_len : 1);
        if (j->task.id == NULL || j->task.raw == NULL) {
            app_status(ui, true, "out of memory; nothing changed");
            return false;
        }
        memcpy(j->task.raw, sel->raw, sel->raw_len);
        j->task.raw_len = sel->raw_len;
    }
    if (act == ACT_SCHEDULES || act == ACT_SCHED_PAUSE || act == ACT_SCHED_RESUME) {
        /* the last runs of the rows the Schedules view shows (from the top on opening) */
        j->sched_first = ui->mode == MODE_SCHEDULES || ui->mode == MODE_CONFIRM ? ui->sched_top : 0;
        j->sched_rows = (size_t)view_schedule_rows(t->grid.rows, t->grid.cols);
    }
    j->hist_span = ui->hist_span;
    return true;
}

/*
 * Performs the action the UI asked for. Actions that need Redis become the job for the
 * Redis thread (one at a time); the rest happen here. Returns true when the panes
 * should be fetched again at once.
 */
static bool
begin_action(struct top *t)
{
    struct ui *ui = &t->ui;
    enum action act = app_take_action(ui);

    switch (act) {
    case ACT_NONE:
        return false;
    case ACT_SEARCH:
        if (app_search_start(ui)) {
            model_keep(&t->model, ui->focus);
            search_reset(t);
        }
        return false;
    case ACT_UNFILTER:
        app_search_end(ui);
        model_keep(&t->model, -1);
        search_reset(t);
        return true;
    case ACT_COPY:
        copy_to_clipboard(t);
        return false;
    case ACT_SWITCH:
        switch_queue(t, ui->pick_names[ui->pick_sel]);
        return true;
    default:
        break;
    }
    if (io_busy(t->io, IO_JOB)) {
        app_status(ui, true, "busy: %s; try again when it has finished", job_name(t->job.act));
        return false;
    }
    if (!job_prepare(t, act))
        return false;
    io_submit(t->io, IO_JOB, job_run, &t->job);
    app_status(ui, false, "%s...", job_name(act));
    return false;
}

/* A refresh finished: the model takes it; the refresh rate and backoff adapt. */
static void
apply_fetch(struct top *t)
{
    struct model *m = &t->model;
    struct ui *ui = &t->ui;

    if (strcmp(t->fetch.queue, m->queue) != 0 || strcmp(t->fetch.group, ui->group) != 0) {
        snapshot_free(&t->fetch.snap); /* fetched before a switch of queue or error group */
        t->fetch_now = true;
        return;
    }
    bool had = m->have_data;
    struct selection selected;
    app_selection_save(ui, m, &selected);
    snprintf(m->endpoint, sizeof m->endpoint, "%s", t->fetch.endpoint); /* after a failover */
    enum link was = m->link;
    if (model_apply(m, &t->fetch.snap))
        t->fetch_now = true; /* a search ended meanwhile: its pane has no rows yet */
    /* Redis is there but refused or did not answer: say so where the view puts status */
    char why[sizeof ui->status];
    if (model_link_status(m, why, sizeof why) > 0 && !io_busy(t->io, IO_JOB))
        app_status(ui, true, "%s", why);
    else if (m->link == LINK_UP && was != LINK_UP && ui->status_error)
        app_status(ui, false, "%s", ""); /* that status is over */
    if (m->link == LINK_UP) {
        app_selection_follow(ui, m, &selected);
        if (app_clamp(ui, m))
            t->fetch_now = true; /* the window moved: fetch the rows now shown */
        if (had)
            app_refreshed(ui, counts_moved(&t->before, &m->stats));
    }
    /* disconnected: try again after a capped backoff */
    bool up = m->link == LINK_UP;
    t->next_fetch = dq_mono_ms() + (up ? ui->refresh_ms : t->backoff_ms);
    t->backoff_ms = up                                   ? BACKOFF_MIN_MS
                    : t->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
                                                         : t->backoff_ms * 2;
    if (!up)
        t->fetch_now = false; /* not even a key press hammers a server that is down */
    /* no queue asked for and more than one on the server: the Overview, once; likewise
     * the default queue, unused, on a server with queues */
    const dq_stats *s = &m->stats;
    bool unused = s->enqueued == 0 && s->due + s->future + s->inflight + s->failed == 0;
    if (m->connected && !t->picked && !t->opt->queue_chosen &&
        (m->nqueues > 1 || (m->nqueues > 0 && unused)) && !io_busy(t->io, IO_JOB)) {
        ui->pick_first = true;
        app_request(ui, ACT_QUEUES);
        begin_action(t);
    }
    t->picked = t->picked || m->connected;
}

/* A search step finished: its matches join the pane, unless the search has ended. */
static void
apply_search(struct top *t)
{
    struct search_step *st = &t->step;
    struct ui *ui = &t->ui;
    int fp = ui->filter_pane;

    if (st->gen != t->search_gen || ui->filter[0] == '\0') {
        dq_page_free(&st->found); /* a step of a search that has ended */
    } else if (st->rc != DQ_OK) {
        app_status(ui, true, "search: %s", st->error);
        dq_page_free(&st->found);
        t->search.done = true;
    } else {
        t->search = st->cur;
        if (!model_add_found(&t->model, fp, &st->found)) {
            app_status(ui, true, "search: out of memory");
            t->search.done = true;
        }
    }
    app_search_progress(ui, t->search.scanned, t->search.total,
                        t->search.done || t->model.pages[fp].n >= SEARCH_MATCHES_MAX);
}

/* fix and requeue */
static void
edit_forget(struct top *t)
{
    dq_task_clear(&t->edit_task);
    free(t->edit_payload);
    t->edit_payload = NULL;
    t->edit_len = 0;
}

/* Runs $VISUAL, else $EDITOR, else vi, on @path with the terminal handed over, as git
 * does: through sh, so the variable may hold arguments; SIGINT and SIGQUIT reach the
 * editor, not the inspector. Returns its wait status, or -1 when it could not run. */
static int
run_editor(const char *path)
{
    const char *ed = getenv("VISUAL");
    struct sigaction ign, old_int, old_quit;
    char cmd[1024];
    int st = -1;

    if (ed == NULL || ed[0] == '\0')
        ed = getenv("EDITOR");
    if (ed == NULL || ed[0] == '\0')
        ed = "vi";
    snprintf(cmd, sizeof cmd, "%s \"$@\"", ed);
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    term_suspend();
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, ed, path, (char *)NULL);
        _exit(127);
    }
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    term_resume();
    return pid > 0 ? st : -1;
}

/* Reads all of @fd into @b. */
static bool
read_fd(int fd, struct dq_buf *b)
{
    char chunk[65536];
    ssize_t n;

    while ((n = read(fd, chunk, sizeof chunk)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        dq_buf_append(b, chunk, (size_t)n);
    }
    return !b->failed;
}

/*
 * e, once the task is read: its payload as JSON goes to a private temporary file, the
 * editor runs on it, and what comes back is checked: an editor that failed, an unchanged
 * file or payload, or JSON that does not parse changes nothing (the status says which).
 * Otherwise the confirmation shows what changed; y sends ACT_REPLACE.
 */
static void
edit_run(struct top *t)
{
    struct job *j = &t->job;
    struct ui *ui = &t->ui;
    struct dq_buf text = DQ_BUF_INIT, mp = DQ_BUF_INIT;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    dq_err err = {0};
    size_t len = strlen(j->edit_text);

    edit_forget(t);
    snprintf(path, sizeof path, "%s/delayq-fix-XXXXXX.json", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemps(path, 5); /* mode 0600: the payload may be private */
    if (fd < 0 || write(fd, j->edit_text, len) != (ssize_t)len) {
        app_status(ui, true, "fix %s: cannot write %s: %s (nothing changed)", j->id, path,
                   strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        return;
    }
    close(fd);
    int st = run_editor(path);
    fd = open(path, O_RDONLY);
    bool read_ok = fd >= 0 && read_fd(fd, &text);
    if (fd >= 0)
        close(fd);
    unlink(path);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        app_status(ui, true, "fix %s: the editor %s: nothing changed", j->id,
                   st != -1 && WIFEXITED(st) ? "exited with an error"
                                             : "did not run or was killed");
    else if (!read_ok)
        app_status(ui, true, "fix %s: cannot read the file back: nothing changed", j->id);
    else if (text.len == len && memcmp(text.data, j->edit_text, len) == 0)
        app_status(ui, false, "fix %s: the file is unchanged: nothing to do", j->id);
    else if (dq_json_to_mp(&mp, text.data, text.len, &err) != DQ_OK)
        app_status(ui, true, "fix %s: not valid JSON, nothing changed: %s", j->id, err.msg);
    else if (mp.len == j->found.payload_len && memcmp(mp.data, j->found.payload, mp.len) == 0)
        app_status(ui, false, "fix %s: the payload is the same: nothing to do", j->id);
    else if (!app_confirm_fix(ui, j->id, j->found.payload, j->found.payload_len, mp.data, mp.len))
        app_status(ui, true, "fix %s: out of memory (nothing changed)", j->id);
    else {
        /* kept for y: the task as read and the new payload */
        t->edit_task = j->found;
        memset(&j->found, 0, sizeof j->found);
        t->edit_payload = (unsigned char *)dq_buf_steal(&mp, &t->edit_len);
    }
    dq_buf_free(&text);
    dq_buf_free(&mp);
}

static void
apply_results(struct top *t)
{
    if (io_done(t->io, IO_FETCH))
        apply_fetch(t);
    if (io_done(t->io, IO_SEARCH))
        apply_search(t);
    if (io_done(t->io, IO_JOB)) {
        bool edit = t->job.act == ACT_EDIT && !t->job.result.error && t->job.edit_text != NULL;
        bool refresh = t->job.result.refresh; /* app_action_done empties the result */
        app_action_done(&t->ui, &t->job.result, t->model.queue);
        if (edit)
            edit_run(t); /* the editor: the terminal is handed over and back */
        job_reset(&t->job);
        if (!refresh)
            t->fetch_now = true; /* show what the action changed at once */
        t->next_view = dq_mono_ms() + app_view_refresh_ms(&t->ui);
    }
}

static void
submit_work(struct top *t)
{
    struct ui *ui = &t->ui;
    int64_t now = dq_mono_ms();

    if (!io_busy(t->io, IO_FETCH) &&
        (t->fetch_now || t->next_fetch == 0 || (now >= t->next_fetch && !ui->paused))) {
        for (int i = 0; i < PANE_COUNT; i++) {
            t->fetch.offsets[i] = ui->top[i];
            t->fetch.limits[i] = ui->rows_visible > 0 ? (size_t)ui->rows_visible : 1;
        }
        if (!model_wants_done(&t->model, ui->focus))
            t->fetch.limits[PANE_DONE] = 0; /* done retention off, the pane not shown */
        t->fetch.keep = t->model.keep;
        snprintf(t->fetch.group, sizeof t->fetch.group, "%s", ui->group);
        t->fetch.config = model_wants_config(&t->model);
        t->fetch.history = model_wants_history(&t->model);
        snprintf(t->fetch.queue, sizeof t->fetch.queue, "%s", t->model.queue);
        t->before = t->model.stats;
        io_submit(t->io, IO_FETCH, fetch_run, &t->fetch);
        t->fetch_now = false;
    }
    /* the Workers view reads the registry again while it is open: its counters come
     * with each beat, the tasks held change all the time */
    if (app_view_refreshes(ui) && !ui->paused && !io_busy(t->io, IO_JOB) && now >= t->next_view &&
        job_prepare(t, app_view_refresh_action(ui))) {
        t->job.result.refresh = true;
        io_submit(t->io, IO_JOB, job_run, &t->job);
    }
    int fp = ui->filter_pane;
    bool searching =
        ui->filter[0] != '\0' && !t->search.done && t->model.pages[fp].n < SEARCH_MATCHES_MAX;
    if (searching && !io_busy(t->io, IO_SEARCH)) {
        /* one bounded step per submission; keys are answered in between */
        struct search_step *st = &t->step;
        snprintf(st->queue, sizeof st->queue, "%s", t->model.queue);
        st->view = fp;
        st->gen = t->search_gen;
        st->cur = t->search;
        snprintf(st->needle, sizeof st->needle, "%s", ui->filter);
        memset(&st->found, 0, sizeof st->found);
        io_submit(t->io, IO_SEARCH, search_run, st);
    }
}

static void
draw(struct top *t)
{
    app_set_retry(&t->ui, t->next_fetch - dq_mono_ms());
    relayout(t);
    view_render(&t->model, &t->ui, &t->grid);
    term_blit(&t->grid);
}

/* Waits for a key until the next refresh is due (sooner while the Redis thread works).
 * Returns the key, KEY_APP_NONE or KEY_APP_RESIZE. */
static int
wait_input(struct top *t)
{
    int64_t wait = t->ui.paused ? 1000 : t->next_fetch - dq_mono_ms();

    if (!t->model.connected && wait > 1000)
        wait = 1000; /* tick the "retrying in" countdown */
    if (app_view_refreshes(&t->ui) && wait > t->next_view - dq_mono_ms())
        wait = t->next_view - dq_mono_ms(); /* the Workers view's next read */
    if (io_any_busy(t->io) && wait > POLL_MS)
        wait = POLL_MS; /* look for the Redis thread's results soon */
    int64_t asked = wait < 0 ? 0 : wait > KEY_WAIT_MAX_MS ? KEY_WAIT_MAX_MS : wait;
    int64_t t0 = dq_mono_ms();
    int key = term_key((int)asked);

    if (key == KEY_APP_NONE && asked >= POLL_MS && dq_mono_ms() - t0 < asked / 2) {
        if (++t->early_zero > 50)
            t->quit = true; /* the terminal went away (hang-up): quit, do not spin */
    } else {
        t->early_zero = 0;
    }
    return key;
}

static void
handle_input(struct top *t, int key)
{
    struct ui *ui = &t->ui;
    int r;

    if (key == KEY_APP_RESIZE) {
        int rows, cols;
        term_size(&rows, &cols);
        grid_init(&t->grid, rows, cols);
        term_invalidate(); /* repaint all: a cell the terminal kept would show stale text */
        relayout(t);       /* the new layout's rows per pane */
        if (app_clamp(ui, &t->model))
            t->fetch_now = true;
        return;
    }
    if (key == KEY_APP_NONE)
        return;
    app_key_seen(ui, io_busy(t->io, IO_JOB)); /* a key press clears the last result */
    if (key == KEY_APP_CLICK) {
        int mr, mc;
        term_mouse(&mr, &mc);
        r = app_click(ui, &t->model, mr, mc);
    } else if (key == KEY_APP_PASTE) {
        size_t len;
        const char *text = term_paste(&len);
        r = app_paste(ui, text, len);
    } else {
        r = keymap_key(ui, &t->model, key);
    }
    if (r & APP_QUIT)
        t->quit = true;
    if ((r & APP_ACTION) && begin_action(t))
        r |= APP_REFETCH;
    if (key == KEY_APP_REDRAW)
        term_invalidate();
    if ((r & APP_REFETCH) && t->model.connected)
        t->fetch_now = true;
    if ((r & APP_REFETCH) && app_view_refreshes(ui))
        t->next_view = 0; /* the Schedules view scrolled: look up the rows now shown */
    relayout(t);          /* the mode may have changed: keys next see its rows */
}

int
tui_run(dq_client *c, const struct tui_options *o)
{
    struct top t = {.opt = o, .backoff_ms = BACKOFF_MIN_MS, .fetch_now = true};
    int rows, cols;

    model_init(&t.model, o->queue, dq_client_endpoint(c));
    /* from here on only the Redis thread uses the client */
    t.io = io_start(c);
    if (t.io == NULL) {
        dq_client_free(c);
        model_free(&t.model);
        return TUI_ETHREAD;
    }
    ui_init(&t.ui, o->read_only, !o->color);
    if (o->read_only && o->read_only_why != NULL) {
        snprintf(t.ui.read_only_why, sizeof t.ui.read_only_why, "%s", o->read_only_why);
        app_status(&t.ui, false, "read-only: %s", o->read_only_why);
    }
    /* what the command warned about on stderr is hidden once the screen is taken */
    t.ui.insecure = o->tls_insecure;
    if (o->warning != NULL)
        app_status(&t.ui, true, "warning: %s%s%s", o->warning, o->read_only ? "; read-only: " : "",
                   o->read_only ? t.ui.read_only_why : "");
    app_refresh_start(&t.ui, o->refresh_ms);
    if (term_start(o->color, o->mouse) != 0) {
        io_stop(t.io);
        model_free(&t.model);
        ui_free(&t.ui);
        return TUI_ENOTTY;
    }
    t.ui.ascii = o->ascii || !term_utf8();
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
    grid_init(&t.grid, rows, cols);
    relayout(&t); /* the rows a pane shows, for the first fetch */

    while (!t.quit && !stop_requested) {
        apply_results(&t);
        submit_work(&t);
        draw(&t);
        int key = wait_input(&t);
        if (!t.quit)
            handle_input(&t, key);
    }

    term_stop();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    io_stop(t.io); /* waits for the call in progress: at most the command timeout */
    snapshot_free(&t.fetch.snap);
    dq_page_free(&t.step.found);
    job_reset(&t.job);
    edit_forget(&t);
    grid_free(&t.grid);
    model_free(&t.model);
    ui_free(&t.ui);
    return TUI_OK;
}
