/* SPDX-License-Identifier: MIT */
/* app.c: UI state changes for keys. Pure: no curses, no Redis. */
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/taskfmt.h"
#include "lib/buf.h"
#include "lib/dur.h"

void
ui_init(struct ui *ui, bool read_only, bool no_color)
{
    memset(ui, 0, sizeof *ui);
    ui->read_only = read_only;
    snprintf(ui->read_only_why, sizeof ui->read_only_why, "started with --read-only");
    ui->no_color = no_color;
    ui->refresh_ms = 1000;
    ui->rows_visible = 10;
}

bool
app_is_marked(const struct ui *ui, int pane, const char *id)
{
    for (size_t i = 0; i < ui->nmarks[pane]; i++) {
        if (strcmp(ui->marks[pane][i], id) == 0)
            return true;
    }
    return false;
}

void
app_clear_marks(struct ui *ui, int pane)
{
    for (size_t i = 0; i < ui->nmarks[pane]; i++)
        free(ui->marks[pane][i]);
    free(ui->marks[pane]);
    ui->marks[pane] = NULL;
    ui->nmarks[pane] = 0;
}

/* Marks @id in @pane, or unmarks it when it was marked. At most DQ_CALL_MAX (one call). */
static void
toggle_mark(struct ui *ui, int pane, const char *id)
{
    for (size_t i = 0; i < ui->nmarks[pane]; i++) {
        if (strcmp(ui->marks[pane][i], id) == 0) {
            free(ui->marks[pane][i]);
            ui->marks[pane][i] = ui->marks[pane][--ui->nmarks[pane]];
            return;
        }
    }
    if (ui->nmarks[pane] == DQ_CALL_MAX)
        return;
    char **m = realloc(ui->marks[pane], (ui->nmarks[pane] + 1) * sizeof *m);
    if (m == NULL)
        return;
    ui->marks[pane] = m;
    m[ui->nmarks[pane]] = strdup(id);
    if (m[ui->nmarks[pane]] != NULL)
        ui->nmarks[pane]++;
}

static void
detail_free(struct ui *ui)
{
    for (size_t i = 0; i < ui->ndetail; i++)
        free(ui->detail[i]);
    free(ui->detail);
    ui->detail = NULL;
    ui->ndetail = 0;
}

static void
picker_free(struct ui *ui)
{
    for (size_t i = 0; i < ui->npick; i++)
        free(ui->pick_names[i]);
    free(ui->pick_names);
    free(ui->pick_counts);
    ui->pick_names = NULL;
    ui->pick_counts = NULL;
    ui->npick = ui->pick_sel = 0;
}

void
app_set_picker(struct ui *ui, char **names, int64_t (*counts)[4], size_t n, int64_t total,
               const char *current)
{
    picker_free(ui);
    ui->pick_names = names;
    ui->pick_counts = counts;
    ui->npick = n;
    ui->pick_total = total;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], current) == 0)
            ui->pick_sel = i;
    ui->mode = MODE_PICK;
    ui->scroll = 0;
}

void
ui_free(struct ui *ui)
{
    picker_free(ui);
    dq_errors_free(&ui->errors);
    for (int p = 0; p < PANE_COUNT; p++)
        app_clear_marks(ui, p);
    free(ui->detail_copy);
    ui->detail_copy = NULL;
    detail_free(ui);
}

void
app_status(struct ui *ui, bool error, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ui->status, sizeof ui->status, fmt, ap);
    va_end(ap);
    ui->status_error = error;
}

void
app_set_detail(struct ui *ui, const char *text)
{
    detail_free(ui);
    for (const char *p = text; *p != '\0';) {
        size_t n = strcspn(p, "\n");
        char **d = realloc(ui->detail, (ui->ndetail + 1) * sizeof *d);
        if (d == NULL)
            return;
        ui->detail = d;
        ui->detail[ui->ndetail] = strndup(p, n);
        if (ui->detail[ui->ndetail] == NULL)
            return;
        ui->ndetail++;
        p += n;
        if (*p == '\n')
            p++;
    }
}

/* fix and requeue */
void
app_confirm_text(struct ui *ui, enum action act, const char *title, const char *text)
{
    app_set_detail(ui, text);
    snprintf(ui->detail_title, sizeof ui->detail_title, "%s", title);
    ui->detail_act = act;
    ui->confirm_action = act;
    ui->mode = MODE_CONFIRM;
    ui->scroll = 0;
}

bool
app_confirm_fix(struct ui *ui, const char *id, const void *old, size_t old_len, const void *new_,
                size_t new_len)
{
    struct dq_buf b = DQ_BUF_INIT;
    char title[64];

    dq_buf_puts(&b, "What changed (pretty JSON lines; - old, + new):\n\n");
    dq_fmt_payload_change(&b, old, old_len, new_, new_len, 12);
    dq_buf_puts(&b, "\ny: one call replaces the payload and requeues the task (attempts\n"
                    "reset, history kept); refused if it failed again or left the failed\n"
                    "set since it was read. Any other key: cancel.\n");
    dq_buf_putc(&b, '\0');
    if (b.failed) {
        dq_buf_free(&b);
        return false;
    }
    snprintf(title, sizeof title, "fix and requeue task %.40s", id);
    snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
    app_confirm_text(ui, ACT_REPLACE, title, b.data);
    dq_buf_free(&b);
    return true;
}

const dq_task *
app_selected_task(const struct ui *ui, const struct model *m)
{
    const dq_page *p = &m->pages[ui->focus];
    size_t sel = ui->sel[ui->focus];

    if (sel < m->offsets[ui->focus] || sel - m->offsets[ui->focus] >= p->n)
        return NULL;
    return &p->tasks[sel - m->offsets[ui->focus]];
}

const char *
app_selected_id(const struct ui *ui, const struct model *m)
{
    const dq_task *t = app_selected_task(ui, m);

    return t != NULL ? t->id : NULL;
}

void
app_selection_save(const struct ui *ui, const struct model *m, struct selection *s)
{
    for (int i = 0; i < PANE_COUNT; i++) {
        const dq_page *p = &m->pages[i];
        size_t sel = ui->sel[i];
        s->id[i][0] = '\0';
        if (sel >= m->offsets[i] && sel - m->offsets[i] < p->n && p->tasks[sel - m->offsets[i]].id)
            snprintf(s->id[i], sizeof s->id[i], "%s", p->tasks[sel - m->offsets[i]].id);
    }
}

void
app_selection_follow(struct ui *ui, const struct model *m, const struct selection *s)
{
    for (int i = 0; i < PANE_COUNT; i++) {
        const dq_page *p = &m->pages[i];
        if (s->id[i][0] == '\0' || !ui->moved[i])
            continue;
        for (size_t j = 0; j < p->n; j++) {
            if (p->tasks[j].id != NULL && strcmp(p->tasks[j].id, s->id[i]) == 0) {
                ui->sel[i] = m->offsets[i] + j;
                break;
            }
        }
    }
}

bool
app_clamp(struct ui *ui, const struct model *m)
{
    size_t rows = ui->rows_visible > 0 ? (size_t)ui->rows_visible : 1;
    bool moved = false;

    for (int i = 0; i < PANE_COUNT; i++) {
        int64_t total = model_pane_total(m, i);
        size_t was = ui->top[i];
        if (total <= 0) {
            ui->sel[i] = ui->top[i] = 0;
            moved |= was != 0;
            continue;
        }
        /* no blank rows below the last task when there are tasks above the window */
        if (ui->top[i] + rows > (size_t)total)
            ui->top[i] = (size_t)total > rows ? (size_t)total - rows : 0;
        if (ui->sel[i] >= (size_t)total)
            ui->sel[i] = (size_t)total - 1;
        if (ui->sel[i] < ui->top[i])
            ui->top[i] = ui->sel[i];
        if (ui->sel[i] >= ui->top[i] + rows)
            ui->top[i] = ui->sel[i] - rows + 1;
        moved |= ui->top[i] != was;
    }
    return moved;
}

/*
 * Keys. Every key of the main screen, the text views (details, help, audit) and the
 * queue picker is one row of the table below: the key codes, the panes where it
 * applies, whether it changes the queue (refused with --read-only), whether it needs
 * a selected task, and what it does. The help overlay is generated from the same rows,
 * so a key cannot be bound without being explained. Typing into a prompt (MODE_INPUT)
 * and answering y/N (MODE_CONFIRM) are text entry, not bindings.
 */

enum {
    KB_WRITE = 1,    /* changes the queue: refused with --read-only */
    KB_SELECTED = 2, /* needs a selected task (or, with KB_MARKS, a marked set) */
    KB_MARKS = 4,    /* acts on the pane's marked tasks when there are any */
};

/* Moves of a selection or a scroll position, beyond a plain row count. */
enum { MOVE_PAGE_DOWN = 1000, MOVE_PAGE_UP, MOVE_FIRST, MOVE_LAST };

enum { BIND_MAIN = 1, BIND_VIEW = 2, BIND_PICK = 4, BIND_ERRS = 8 }; /* where a binding applies */

#define PANES_ALL   0
#define PANE_BIT(p) (1u << (p))

struct binding;
typedef int (*bind_fn)(struct ui *ui, const struct model *m, const struct binding *b, int key);

struct binding {
    unsigned where;     /* BIND_* */
    int keys[4];        /* key codes (0 ends the list early) */
    const char *label;  /* how help names them; names every code in keys */
    unsigned panes;     /* PANE_BIT()s where it applies; PANES_ALL: every pane */
    unsigned flags;     /* KB_* */
    bind_fn fn;         /* what it does */
    int arg;            /* for fn: a move, a pane, an action */
    const char *help;   /* what help says it does */
    const char *refuse; /* on another pane: what it is for and where to go */
    const char *hint;   /* the status line's word for it ("requeue"), or NULL */
};

static int
clamp_move(long s, int64_t total)
{
    if (s >= total)
        s = (long)total - 1;
    return s < 0 ? 0 : (int)s;
}

/* The new position of a selection or scroll at @at among @total for move @arg. */
static long
moved(const struct ui *ui, long at, int64_t total, int arg)
{
    long page = ui->rows_visible > 1 ? ui->rows_visible - 1 : 1;

    switch (arg) {
    case MOVE_PAGE_DOWN:
        return at + page;
    case MOVE_PAGE_UP:
        return at - page;
    case MOVE_FIRST:
        return 0;
    case MOVE_LAST:
        return (long)total;
    default:
        return at + arg;
    }
}

static int
move_sel(struct ui *ui, const struct model *m, long delta)
{
    int64_t total = model_pane_total(m, ui->focus);
    long s = (long)ui->sel[ui->focus] + delta;

    if (total <= 0)
        return 0;
    ui->moved[ui->focus] = true;
    ui->sel[ui->focus] = (size_t)clamp_move(s, total);
    size_t top = ui->top[ui->focus];
    app_clamp(ui, m);
    /* a scroll past the fetched page needs new data */
    return APP_REDRAW | (ui->top[ui->focus] != top ? APP_REFETCH : 0);
}

static int
do_move(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    long at = (long)ui->sel[ui->focus];

    return move_sel(ui, m, moved(ui, at, model_pane_total(m, ui->focus), b->arg) - at);
}

static int
do_quit(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return APP_QUIT;
}

static int
do_help(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    ui->mode = MODE_HELP;
    ui->scroll = 0;
    return APP_REDRAW;
}

static int
do_focus(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (b->arg == 1 || b->arg == -1) /* Tab, Shift-Tab */
        ui->focus = (ui->focus + PANE_COUNT + b->arg) % PANE_COUNT;
    else
        ui->focus = key - '1';
    return APP_REDRAW;
}

static int
do_pause(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    ui->paused = !ui->paused;
    app_status(ui, false, ui->paused ? "paused (Z resumes)" : "resumed");
    return APP_REDRAW | (ui->paused ? 0 : APP_REFETCH);
}

static int
do_redraw(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return APP_REDRAW | (ui->mode == MODE_MAIN ? APP_REFETCH : 0);
}

/* Asks the loop for action b->arg, on the selected task when the binding needs one. */
static int
do_request(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    const char *id = app_selected_id(ui, m);

    ui->action = (enum action)b->arg;
    if (b->flags & KB_SELECTED)
        snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
    else
        ui->action_id[0] = '\0';
    return APP_ACTION;
}

static int
do_mark(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    toggle_mark(ui, ui->focus, app_selected_id(ui, m));
    app_status(ui, false, "%zu marked in this pane (r/d act on them; Esc clears)",
               ui->nmarks[ui->focus]);
    return move_sel(ui, m, 1) | APP_REDRAW;
}

/* Opens the prompt line: Enter performs @act on what was typed. */
static int
prompt(struct ui *ui, enum action act)
{
    ui->mode = MODE_INPUT;
    ui->input[0] = '\0';
    ui->input_action = act;
    ui->confirm_typed = false;
    return APP_REDRAW;
}

static int
do_search(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (ui->focus == PANE_FAILED)
        ui->group[0] = ui->group_sig[0] = '\0'; /* a search covers every failed task */
    snprintf(ui->prompt, sizeof ui->prompt, "search %s (id, payload%s; Esc: cancel): ",
             ui->focus == PANE_FAILED ? "failed tasks" : "this pane",
             ui->focus == PANE_FAILED ? ", error, trace" : "");
    return prompt(ui, ACT_SEARCH);
}

/* Esc on the main screen: clears the marks, else ends the pane's search. */
static int
do_escape(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (ui->nmarks[ui->focus] == 0 && ui->group[0] != '\0' && ui->focus == PANE_FAILED) {
        ui->group[0] = ui->group_sig[0] = '\0';
        ui->sel[PANE_FAILED] = ui->top[PANE_FAILED] = 0;
        ui->moved[PANE_FAILED] = false;
        app_status(ui, false, "every failed task again (E: the error groups)");
        return APP_REDRAW | APP_REFETCH;
    }
    if (ui->nmarks[ui->focus] == 0 && ui->filter[0] != '\0' && ui->focus == ui->filter_pane) {
        ui->action = ACT_UNFILTER;
        return APP_ACTION;
    }
    if (ui->nmarks[ui->focus] == 0)
        return 0;
    app_clear_marks(ui, ui->focus);
    app_status(ui, false, "marks cleared");
    return APP_REDRAW;
}

dq_filter
app_failed_filter(const struct ui *ui)
{
    dq_filter f = {DQ_FILTER_NONE, NULL};

    if (ui->group[0] != '\0') {
        f.kind = DQ_FILTER_GROUP;
        f.value = ui->group;
    } else if (ui->filter[0] != '\0' && ui->filter_pane == PANE_FAILED) {
        f.kind = DQ_FILTER_MATCH;
        f.value = ui->filter;
    }
    return f;
}

/* How a prompt names the failed tasks of the filter shown: "12 failed tasks of group
 * 5d3d4f25 "<sig>"", "every failed task matching "text" (3 found so far...)", or "all 7
 * failed tasks" with no filter. The view shortens the quoted text to fit. */
static void
filter_text(const struct ui *ui, const struct model *m, char *buf, size_t size)
{
    dq_filter f = app_failed_filter(ui);
    long long n = (long long)model_pane_total(m, PANE_FAILED);

    if (f.kind == DQ_FILTER_GROUP)
        snprintf(buf, size, "%lld failed task%s of group %.8s \"%s\"", n, n == 1 ? "" : "s",
                 ui->group, ui->group_sig);
    else if (f.kind == DQ_FILTER_MATCH)
        snprintf(buf, size, "every failed task matching \"%.100s\" (%lld found so far%s)",
                 ui->filter, n, ui->search_done ? "" : "; the search goes on");
    else
        snprintf(buf, size, "all %lld failed task%s", n, n == 1 ? "" : "s");
}

/*
 * The one rule for bulk actions (APP_BULK_TYPED_OVER): @act on what filter_text names,
 * asked y/N for one task, else by typing the queue's name. A search is always typed: it
 * acts on every match on the server, more than were found so far.
 */
static int
ask_bulk(struct ui *ui, const struct model *m, enum action act)
{
    bool requeue = act == ACT_REQUEUE_ALL || act == ACT_REQUEUE_FILTER;
    int64_t n = model_pane_total(m, PANE_FAILED);
    char what[512], spread[64] = "";

    filter_text(ui, m, what, sizeof what);
    if (act == ACT_REQUEUE_ALL && ui->spread[0] != '\0')
        snprintf(spread, sizeof spread, ", spread over %s", ui->spread);
    if (n <= APP_BULK_TYPED_OVER && app_failed_filter(ui).kind != DQ_FILTER_MATCH) {
        snprintf(ui->prompt, sizeof ui->prompt, "%s", what); /* the view asks about it */
        ui->confirm_action = act;
        ui->mode = MODE_CONFIRM;
        return APP_REDRAW;
    }
    snprintf(ui->prompt, sizeof ui->prompt,
             "%s %s%s%s?\ntype the queue name %s to confirm (Esc cancels): ",
             requeue ? "requeue" : "drop", what, spread, requeue ? "" : " for good", m->queue);
    prompt(ui, act);
    ui->confirm_typed = true;
    return APP_REDRAW;
}

/* r, d, p: asks y/N before action b->arg on the marked set or the selected task; on
 * Failed with a group or a search shown and nothing marked, r and d act on all of it
 * (ask_bulk's rule). */
static int
do_confirm(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if ((b->arg == ACT_REQUEUE || b->arg == ACT_DROP) && ui->focus == PANE_FAILED &&
        ui->nmarks[ui->focus] == 0 && app_failed_filter(ui).kind != DQ_FILTER_NONE)
        return ask_bulk(ui, m, b->arg == ACT_REQUEUE ? ACT_REQUEUE_FILTER : ACT_DROP_FILTER);
    if ((b->flags & KB_MARKS) && ui->nmarks[ui->focus] > 0)
        snprintf(ui->action_id, sizeof ui->action_id, "%zu marked tasks", ui->nmarks[ui->focus]);
    else
        snprintf(ui->action_id, sizeof ui->action_id, "%s", app_selected_id(ui, m));
    ui->confirm_action = (enum action)b->arg;
    ui->mode = MODE_CONFIRM;
    return APP_REDRAW;
}

/* P: resume a paused queue (asks y/N), else ask how long, then why, then y/N. */
static int
do_pause_queue(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (m->stats.paused) {
        snprintf(ui->action_id, sizeof ui->action_id, "%s", m->queue);
        ui->confirm_action = ACT_RESUME;
        ui->mode = MODE_CONFIRM;
        return APP_REDRAW;
    }
    snprintf(ui->prompt, sizeof ui->prompt,
             "pause queue %.100s for (e.g. 30m; Enter: until resumed; Esc: cancel): ", m->queue);
    snprintf(ui->action_id, sizeof ui->action_id, "%s", m->queue);
    return prompt(ui, ACT_PAUSE_FOR);
}

static int
do_requeue_after(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    const char *id = app_selected_id(ui, m);

    snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
    snprintf(ui->prompt, sizeof ui->prompt, "requeue %.100s after (e.g. 30s, 10m): ", id);
    return prompt(ui, ACT_REQUEUE_DELAY);
}

/* A and X: every failed task (or the filter's): A asks for a spread window first; then
 * both ask as ask_bulk says. */
static int
do_bulk(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (model_pane_total(m, PANE_FAILED) <= 0) {
        app_status(ui, true, "no failed tasks");
        return APP_REDRAW;
    }
    ui->spread[0] = '\0';
    if (b->arg == ACT_DROP_ALL)
        return ask_bulk(ui, m, ACT_DROP_ALL);
    char what[512];
    filter_text(ui, m, what, sizeof what);
    snprintf(ui->prompt, sizeof ui->prompt,
             "requeue %s, spread over (e.g. 10m; Enter: at once; Esc: cancel): ", what);
    return prompt(ui, ACT_SPREAD);
}

/* In a text view (details, help): scrolls; the layout keeps it within the text. */
static int
do_scroll(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    long s = b->arg == MOVE_PAGE_DOWN ? ui->scroll + ui->rows_visible /* a whole screen */
             : b->arg == MOVE_PAGE_UP ? ui->scroll - ui->rows_visible
                                      : moved(ui, ui->scroll, 0, b->arg);

    ui->scroll = s < 0 ? 0 : (int)s;
    return APP_REDRAW;
}

static int
do_back(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    ui->mode = MODE_MAIN;
    return APP_REDRAW;
}

static int
do_view_copy(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (ui->mode != MODE_DETAILS)
        return 0;
    ui->action = ACT_COPY;
    return APP_ACTION;
}

static int
do_pick_move(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    long s = moved(ui, (long)ui->pick_sel, (int64_t)ui->npick, b->arg);

    ui->pick_sel = (size_t)clamp_move(s, (int64_t)ui->npick);
    return APP_REDRAW;
}

/* q and Esc in the picker: back to the queue shown; in the picker opened at start there
 * is none (the unused default queue would look healthy): Esc stays, q quits. */
static int
do_pick_back(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (!ui->pick_first)
        return do_back(ui, m, b, key);
    if (key == 'q')
        return APP_QUIT;
    app_status(ui, false, "no queue is shown yet: Enter opens the one selected, q quits");
    return APP_REDRAW;
}

static int
do_pick_open(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (ui->npick == 0)
        return 0;
    ui->pick_first = false;
    ui->mode = MODE_MAIN;
    ui->action = ACT_SWITCH;
    return APP_ACTION | APP_REDRAW;
}

static int
do_err_move(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    long s = moved(ui, (long)ui->err_sel, (int64_t)ui->errors.n, b->arg);

    ui->err_sel = (size_t)clamp_move(s, (int64_t)ui->errors.n);
    return APP_REDRAW;
}

/* Enter on a group: the Failed pane shows its tasks, paged on the server. */
static int
do_err_open(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    const dq_error_group *g;

    if (ui->err_sel >= ui->errors.n)
        return 0;
    g = &ui->errors.groups[ui->err_sel];
    snprintf(ui->group, sizeof ui->group, "%s", g->id);
    snprintf(ui->group_sig, sizeof ui->group_sig, "%s", g->signature);
    ui->mode = MODE_MAIN;
    ui->focus = PANE_FAILED;
    ui->sel[PANE_FAILED] = ui->top[PANE_FAILED] = 0;
    ui->moved[PANE_FAILED] = false;
    app_clear_marks(ui, PANE_FAILED);
    if (ui->filter[0] != '\0' && ui->filter_pane == PANE_FAILED) {
        ui->action = ACT_UNFILTER; /* a group replaces the search */
        return APP_ACTION | APP_REDRAW | APP_REFETCH;
    }
    return APP_REDRAW | APP_REFETCH;
}

#define F PANE_BIT(PANE_FAILED)
#define U PANE_BIT(PANE_FUTURE)
#define I PANE_BIT(PANE_INFLIGHT)

/* One binding per row reads as the reference card it is: */
/* clang-format off */
static const struct binding bindings[] = {
    /* the main screen: looking */
    {BIND_MAIN, {'?', 'h'}, "? h", PANES_ALL, 0, do_help, 0, "this help", NULL, "help"},
    {BIND_MAIN, {'q'}, "q", PANES_ALL, 0, do_quit, 0, "quit", NULL, "quit"},
    {BIND_MAIN, {KEY_APP_TAB}, "Tab", PANES_ALL, 0, do_focus, 1, "next pane", NULL, "panes"},
    {BIND_MAIN, {KEY_APP_BTAB}, "S-Tab", PANES_ALL, 0, do_focus, -1, "previous pane", NULL,
        NULL},
    {BIND_MAIN, {'1', '2', '3', '4'}, "1 2 3 4", PANES_ALL, 0, do_focus, 0,
        "Due, Future, In-flight, Failed", NULL, NULL},
    {BIND_MAIN, {'j', KEY_APP_DOWN}, "j Down", PANES_ALL, 0, do_move, 1, "move down", NULL, NULL},
    {BIND_MAIN, {'k', KEY_APP_UP}, "k Up", PANES_ALL, 0, do_move, -1, "move up", NULL, NULL},
    {BIND_MAIN, {KEY_APP_PGDN, KEY_APP_PGUP}, "PgDn PgUp", PANES_ALL, 0, do_move, 0, "a page",
        NULL, NULL},
    {BIND_MAIN, {'g', KEY_APP_HOME}, "g Home", PANES_ALL, 0, do_move, MOVE_FIRST, "first task",
        NULL, NULL},
    {BIND_MAIN, {'G', KEY_APP_END}, "G End", PANES_ALL, 0, do_move, MOVE_LAST, "last task",
        NULL, NULL},
    /* short, so help pairs it with G (the Errors view and Failed's title say the rest) */
    {BIND_MAIN, {'E'}, "E", PANES_ALL, 0, do_request, ACT_ERRORS, "the error groups", NULL,
        "errors"},
    {BIND_MAIN, {KEY_APP_WHEEL_DOWN, KEY_APP_WHEEL_UP}, "mouse", PANES_ALL, 0, do_move, 0,
        "click: a pane and a row; wheel: scroll (--no-mouse: off)", NULL, NULL},
    {BIND_MAIN, {KEY_APP_ENTER}, "Enter", PANES_ALL, KB_SELECTED, do_request, ACT_DETAILS,
        "details: every field, the payload, the error, the stack trace", NULL, "details"},
    {BIND_MAIN, {'Z'}, "Z", PANES_ALL, 0, do_pause, 0, "pause / resume refresh", NULL, NULL},
    {BIND_MAIN, {KEY_APP_REDRAW}, "Ctrl-L", PANES_ALL, 0, do_redraw, 0, "redraw and refresh now",
        NULL, NULL},
    {BIND_MAIN, {'W'}, "W", PANES_ALL, 0, do_request, ACT_WORKERS,
        "the workers: last beat, busy, done, failed, tasks held (refreshed while open)", NULL,
        "workers"},
    {BIND_MAIN, {'Q'}, "Q", PANES_ALL, 0, do_request, ACT_QUEUES,
        "the server's queues with their counts; Enter switches to one", NULL, "queues"},
    {BIND_MAIN, {'L'}, "L", PANES_ALL, 0, do_request, ACT_AUDIT,
        "the audit log of operator actions", NULL, "audit"},
    {BIND_MAIN, {'/'}, "/", PANES_ALL, 0, do_search, 0,
        "search the pane on the server (ids, payloads; on Failed also errors and traces), "
        "in bounded steps, so millions of tasks are fine; smart case (xaf finds XAF, XAF "
        "only XAF); Esc clears it", NULL, "search"},
    {BIND_MAIN, {' '}, "space", PANES_ALL, KB_SELECTED, do_mark, 0,
        "mark / unmark and move down; r and d then act on all marked tasks of the pane at "
        "once (all or nothing)", NULL, "mark"},
    {BIND_MAIN, {KEY_APP_ESC}, "Esc", PANES_ALL, 0, do_escape, 0,
        "clear the marks, then the search", NULL, NULL},
    {BIND_MAIN, {'y'}, "y", PANES_ALL, KB_SELECTED, do_request, ACT_COPY,
        "copy the payload (in details of a failed task: its stack trace) with OSC 52, also "
        "over ssh and in tmux", NULL, "copy"},

    /* the main screen: actions, through the same scripts as the workers */
    {BIND_MAIN, {'r'}, "r", F, KB_WRITE | KB_SELECTED | KB_MARKS, do_confirm, ACT_REQUEUE,
        "Failed: requeue the selected task now (asks y/N); with a group or search shown and "
        "nothing marked: all of it (past one task: type the queue name)",
        "r requeues a failed task: go to Failed (4)", "requeue"},
    {BIND_MAIN, {'R'}, "R", F, KB_WRITE | KB_SELECTED, do_requeue_after, 0,
        "Failed: requeue the selected task after a delay you type",
        "r requeues a failed task: go to Failed (4)", "later"},
    {BIND_MAIN, {'A'}, "A", F, KB_WRITE, do_bulk, ACT_REQUEUE_ALL,
        "Failed: requeue all (or all of the group or search shown), spread evenly over a "
        "window you type; then y/N, past one task: type the queue name",
        "A requeues all failed tasks: go to Failed (4)", "requeue all"},
    {BIND_MAIN, {'X'}, "X", F, KB_WRITE, do_bulk, ACT_DROP_ALL,
        "Failed: drop all (or all of the group or search shown); past one task: type the "
        "queue name",
        "X drops all failed tasks: go to Failed (4)", "drop all"},
    {BIND_MAIN, {'d'}, "d", F | U, KB_WRITE | KB_SELECTED | KB_MARKS, do_confirm, ACT_DROP,
        "Failed or Future: drop the selected task (asks y/N); on Failed with a group or "
        "search shown and nothing marked: all of it (past one task: type the queue name)",
        "d drops a failed or future task: go to Future (2) or Failed (4)", "drop"},
    {BIND_MAIN, {'p'}, "p", U, KB_WRITE | KB_SELECTED, do_confirm, ACT_RUN_NOW,
        "Future: run the selected task now (asks y/N)",
        "p runs a future task now: go to Future (2)", "run now"},
    {BIND_MAIN, {'e'}, "e", F, KB_WRITE | KB_SELECTED, do_request, ACT_EDIT,
        "Failed: fix and requeue: the payload opens as JSON in $VISUAL or $EDITOR; after "
        "you save and quit, shows what changed and asks y/N",
        "e fixes a failed task's payload: go to Failed (4)", "fix"},
    {BIND_MAIN, {'x'}, "x", I, KB_WRITE, do_request, ACT_REAP,
        "In-flight: return expired leases now (reap)",
        "x recovers expired leases: go to In-flight (3)", "reap"},
    {BIND_MAIN, {'P'}, "P", PANES_ALL, KB_WRITE, do_pause_queue, 0,
        "pause the queue: workers claim nothing (asks how long, why, then y/N); on a paused "
        "queue: resume it", NULL, "pause"},

    /* text views: details, help, the audit log, the workers */
    {BIND_VIEW, {'j', KEY_APP_DOWN}, "j Down", PANES_ALL, 0, do_scroll, 1, "scroll down", NULL,
        NULL},
    {BIND_VIEW, {'k', KEY_APP_UP}, "k Up", PANES_ALL, 0, do_scroll, -1, "scroll up", NULL, NULL},
    {BIND_VIEW, {KEY_APP_PGDN, ' '}, "PgDn space", PANES_ALL, 0, do_scroll, MOVE_PAGE_DOWN,
        "a page down", NULL, NULL},
    {BIND_VIEW, {KEY_APP_PGUP}, "PgUp", PANES_ALL, 0, do_scroll, MOVE_PAGE_UP, "a page up",
        NULL, NULL},
    {BIND_VIEW, {KEY_APP_WHEEL_DOWN, KEY_APP_WHEEL_UP}, "mouse", PANES_ALL, 0, do_scroll, 3,
        "the wheel scrolls", NULL, NULL},
    {BIND_VIEW, {'g'}, "g", PANES_ALL, 0, do_scroll, MOVE_FIRST, "the top", NULL, NULL},
    {BIND_VIEW, {'y'}, "y", PANES_ALL, 0, do_view_copy, 0,
        "copy (details: the stack trace, or the payload)", NULL, NULL},
    {BIND_VIEW, {KEY_APP_REDRAW}, "Ctrl-L", PANES_ALL, 0, do_redraw, 0, "redraw", NULL, NULL},
    {BIND_VIEW, {'q', KEY_APP_ESC, KEY_APP_ENTER}, "q Esc Enter", PANES_ALL, 0, do_back, 0,
        "back", NULL, NULL},

    /* the queue picker */
    {BIND_PICK, {'j', KEY_APP_DOWN}, "j Down", PANES_ALL, 0, do_pick_move, 1, "next queue",
        NULL, NULL},
    {BIND_PICK, {'k', KEY_APP_UP}, "k Up", PANES_ALL, 0, do_pick_move, -1, "previous queue",
        NULL, NULL},
    {BIND_PICK, {KEY_APP_WHEEL_DOWN, KEY_APP_WHEEL_UP}, "mouse", PANES_ALL, 0, do_pick_move, 0,
        "the wheel moves", NULL, NULL},
    {BIND_PICK, {KEY_APP_PGDN, KEY_APP_PGUP}, "PgDn PgUp", PANES_ALL, 0, do_pick_move, 0,
        "a page", NULL, NULL},
    {BIND_PICK, {'g', KEY_APP_HOME}, "g Home", PANES_ALL, 0, do_pick_move, MOVE_FIRST,
        "first queue", NULL, NULL},
    {BIND_PICK, {'G', KEY_APP_END}, "G End", PANES_ALL, 0, do_pick_move, MOVE_LAST,
        "last queue", NULL, NULL},
    {BIND_PICK, {KEY_APP_ENTER}, "Enter", PANES_ALL, 0, do_pick_open, 0, "show that queue",
        NULL, NULL},
    {BIND_PICK, {'q', KEY_APP_ESC}, "q Esc", PANES_ALL, 0, do_pick_back, 0,
        "back (in the picker shown at start: q quits)", NULL, NULL},

    /* the Errors view */
    {BIND_ERRS, {'j', KEY_APP_DOWN}, "j Down", PANES_ALL, 0, do_err_move, 1, "next group",
        NULL, NULL},
    {BIND_ERRS, {'k', KEY_APP_UP}, "k Up", PANES_ALL, 0, do_err_move, -1, "previous group",
        NULL, NULL},
    {BIND_ERRS, {'g', KEY_APP_HOME}, "g Home", PANES_ALL, 0, do_err_move, MOVE_FIRST,
        "largest group", NULL, NULL},
    {BIND_ERRS, {'G', KEY_APP_END}, "G End", PANES_ALL, 0, do_err_move, MOVE_LAST,
        "smallest group", NULL, NULL},
    {BIND_ERRS, {KEY_APP_ENTER}, "Enter", PANES_ALL, 0, do_err_open, 0,
        "show the group's tasks in Failed", NULL, NULL},
    {BIND_ERRS, {'q', KEY_APP_ESC}, "q Esc", PANES_ALL, 0, do_back, 0, "back", NULL, NULL},
};
/* clang-format on */

#undef F
#undef U
#undef I

#define NBINDINGS (sizeof bindings / sizeof bindings[0])

/* The move a key makes where one row binds a pair (PgDn PgUp, the wheel). */
static int
signed_arg(const struct binding *b, int key)
{
    if (key == KEY_APP_PGUP)
        return MOVE_PAGE_UP;
    if (key == KEY_APP_PGDN)
        return MOVE_PAGE_DOWN;
    if (b->fn == do_move || b->fn == do_scroll) { /* the picker's wheel moves one row */
        if (key == KEY_APP_WHEEL_UP)
            return -3;
        if (key == KEY_APP_WHEEL_DOWN)
            return 3;
    }
    return b->arg;
}

static const struct binding *
binding_for(unsigned where, int key)
{
    for (size_t i = 0; i < NBINDINGS; i++) {
        if (!(bindings[i].where & where))
            continue;
        for (size_t k = 0; k < 4 && bindings[i].keys[k] != 0; k++)
            if (bindings[i].keys[k] == key)
                return &bindings[i];
    }
    return NULL;
}

/* Runs @b for @key after the checks every binding shares. */
static int
apply_binding(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    struct binding local = *b;

    local.arg = signed_arg(b, key);
    if ((b->flags & KB_WRITE) && ui->read_only) {
        app_status(ui, true, "read-only: actions are disabled (%s)", ui->read_only_why);
        return APP_REDRAW;
    }
    if (b->panes != PANES_ALL && !(b->panes & PANE_BIT(ui->focus))) {
        app_status(ui, true, "%s", b->refuse);
        return APP_REDRAW;
    }
    if ((b->flags & KB_SELECTED) && app_selected_id(ui, m) == NULL &&
        !((b->flags & KB_MARKS) && ui->nmarks[ui->focus] > 0)) {
        if (!(b->flags & KB_WRITE))
            return 0; /* looking at nothing: nothing happens */
        app_status(ui, true, "nothing selected");
        return APP_REDRAW;
    }
    return b->fn(ui, m, &local, key);
}

static int
mode_key(struct ui *ui, const struct model *m, unsigned where, int key)
{
    const struct binding *b = binding_for(where, key);

    return b != NULL ? apply_binding(ui, m, b, key) : 0;
}

/* Help: a heading per place, then one line per binding: its label, what it does. */
static const struct {
    unsigned where;
    bool writes;
    const char *heading;
} help_sections[] = {
    {BIND_MAIN, false, "Keys"},
    {BIND_MAIN, true,
     "Actions (through the same scripts as the workers; disabled with --read-only)"},
    {BIND_VIEW, false, "In details, this help and the audit log"},
    {BIND_PICK, false, "In the queue picker (Q)"},
    {BIND_ERRS, false, "In the Errors view (E)"},
};

static const char *const help_footer[] = {
    "Everything shown that came from Redis is escaped: control characters and escape",
    "sequences appear as \\e, \\x07 ..., never as terminal commands.",
};

/* Help: the label column, the width a text wraps at, and the widest text that shares
 * its line with the next short binding (two columns, as on a reference card). */
enum { HELP_LABEL_COLS = 13, HELP_TEXT_COLS = 62, HELP_SHORT_COLS = 25 };

static bool
help_short(const struct binding *b)
{
    return strlen(b->help) <= HELP_SHORT_COLS && strlen(b->label) < HELP_LABEL_COLS - 2;
}

static bool
in_section(const struct binding *b, size_t s)
{
    return (b->where & help_sections[s].where) &&
           ((b->flags & KB_WRITE) != 0) == help_sections[s].writes;
}

/* Calls @line with each line of the help text, in order; returns how many. */
static size_t
help_walk(void (*line)(void *arg, const char *text), void *arg)
{
    char buf[256];
    size_t n = 0;

    for (size_t s = 0; s < sizeof help_sections / sizeof help_sections[0]; s++) {
        line(arg, help_sections[s].heading);
        line(arg, "");
        n += 2;
        for (size_t i = 0; i < NBINDINGS; i++) {
            const struct binding *b = &bindings[i];
            if (!in_section(b, s))
                continue;
            /* two short ones side by side */
            size_t j = i + 1;
            while (j < NBINDINGS && !in_section(&bindings[j], s))
                j++;
            if (help_short(b) && j < NBINDINGS && help_short(&bindings[j])) {
                snprintf(buf, sizeof buf, "  %-*s%-*s  %-*s%s", HELP_LABEL_COLS, b->label,
                         HELP_SHORT_COLS, b->help, HELP_LABEL_COLS - 2, bindings[j].label,
                         bindings[j].help);
                line(arg, buf);
                n++;
                i = j;
                continue;
            }
            /* one per line, wrapped at word boundaries; continuation lines have no label */
            const char *text = b->help, *label = b->label;
            size_t left = strlen(text);
            while (left > 0) {
                size_t cut = left;
                if (cut > HELP_TEXT_COLS) {
                    cut = HELP_TEXT_COLS;
                    while (cut > 0 && text[cut] != ' ')
                        cut--;
                    if (cut == 0)
                        cut = HELP_TEXT_COLS;
                }
                snprintf(buf, sizeof buf, "  %-*s%.*s", HELP_LABEL_COLS, label, (int)cut, text);
                line(arg, buf);
                n++;
                label = "";
                text += cut;
                left -= cut;
                while (left > 0 && *text == ' ')
                    text++, left--;
            }
        }
        line(arg, "");
        n++;
    }
    for (size_t i = 0; i < sizeof help_footer / sizeof help_footer[0]; i++) {
        line(arg, help_footer[i]);
        n++;
    }
    return n;
}

static void
count_line(void *arg, const char *text)
{
}

size_t
app_help_lines(void)
{
    return help_walk(count_line, NULL);
}

struct help_pick {
    size_t want, at;
    char *buf;
    size_t size;
};

static void
pick_line(void *arg, const char *text)
{
    struct help_pick *p = arg;

    if (p->at++ == p->want)
        snprintf(p->buf, p->size, "%s", text);
}

void
app_help_line(size_t i, char *buf, size_t size)
{
    struct help_pick p = {i, 0, buf, size};

    buf[0] = '\0';
    help_walk(pick_line, &p);
}

size_t
app_hints(const struct ui *ui, int cols, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    /* help first, then the focused pane's own actions, then the rest in table order */
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < NBINDINGS; i++) {
            const struct binding *b = &bindings[i];
            bool own = b->panes != PANES_ALL && (b->panes & PANE_BIT(ui->focus));
            bool help = b->fn == do_help;
            if (!(b->where & BIND_MAIN) || b->hint == NULL || help != (pass == 0) ||
                (!help && own != (pass == 1)) || (b->panes != PANES_ALL && !own) ||
                ((b->flags & KB_WRITE) && ui->read_only))
                continue;
            char item[48];
            const char *key = b->label;
            int n = snprintf(item, sizeof item, "%s%.*s %s", len > 0 ? "  " : " ",
                             (int)strcspn(key, " "), key, b->hint);
            if (n < 0 || len + (size_t)n + 1 > (size_t)cols || len + (size_t)n >= size)
                return len; /* the rest does not fit: the most useful are shown */
            memcpy(buf + len, item, (size_t)n + 1);
            len += (size_t)n;
        }
    }
    return len;
}

bool
app_key_bound(int key)
{
    return binding_for(BIND_MAIN | BIND_VIEW | BIND_PICK | BIND_ERRS, key) != NULL;
}

size_t
app_bound_keys(int *keys, size_t max, const char **labels)
{
    size_t n = 0;

    for (size_t i = 0; i < NBINDINGS; i++)
        for (size_t k = 0; k < 4 && bindings[i].keys[k] != 0; k++) {
            if (n < max) {
                keys[n] = bindings[i].keys[k];
                labels[n] = bindings[i].label;
            }
            n++;
        }
    return n;
}

int
app_click(struct ui *ui, const struct model *m, int row, int col)
{
    if (ui->mode != MODE_MAIN)
        return 0;
    for (int p = 0; p < PANE_COUNT; p++) {
        const struct pane_box *b = &ui->boxes[p];
        if (b->height == 0 || row < b->row || row >= b->row + b->height || col < b->col ||
            col >= b->col + b->width)
            continue;
        ui->focus = p;
        /* the title and column header take two rows */
        if (row >= b->row + 2) {
            size_t index = ui->top[p] + (size_t)(row - b->row - 2);
            /* only rows that were drawn: the fetched page */
            if (index >= m->offsets[p] && index < m->offsets[p] + m->pages[p].n) {
                ui->sel[p] = index;
                ui->moved[p] = true;
            }
        }
        return APP_REDRAW;
    }
    return 0;
}

/* The prompt line: printable characters, backspace, Enter performs, Esc cancels. */
static int
input_key(struct ui *ui, const struct model *m, int key)
{
    size_t n = strlen(ui->input);

    if (key == KEY_APP_ESC) {
        ui->mode = MODE_MAIN;
        ui->confirm_typed = false;
        app_status(ui, false, "cancelled");
        return APP_REDRAW;
    }
    if (key == KEY_APP_ENTER && ui->confirm_typed) {
        ui->mode = MODE_MAIN;
        ui->confirm_typed = false;
        if (strcmp(ui->input, m->queue) != 0) {
            app_status(ui, true, "nothing changed: \"%.60s\" is not the queue's name (%s)",
                       ui->input, m->queue);
            return APP_REDRAW;
        }
        ui->action = ui->input_action;
        return APP_ACTION | APP_REDRAW;
    }
    if (key == KEY_APP_ENTER && ui->input_action == ACT_SPREAD) {
        int64_t ms;
        if (ui->input[0] != '\0' && dq_dur_parse(ui->input, "spread", &ms, NULL) != DQ_OK) {
            ui->mode = MODE_MAIN;
            app_status(ui, true, "nothing requeued: \"%s\" is not a duration (30s, 10m, 2h)",
                       ui->input);
            return APP_REDRAW;
        }
        snprintf(ui->spread, sizeof ui->spread, "%.31s", ui->input);
        return ask_bulk(ui, m, ACT_REQUEUE_ALL);
    }
    if (key == KEY_APP_ENTER && ui->input_action == ACT_PAUSE_FOR) {
        int64_t ms;
        if (ui->input[0] != '\0' && dq_dur_parse(ui->input, "pause for", &ms, NULL) != DQ_OK) {
            ui->mode = MODE_MAIN;
            app_status(ui, true, "not paused: \"%s\" is not a duration (30s, 10m, 2h)", ui->input);
            return APP_REDRAW;
        }
        /* a duration that parsed is short; a long one is cut, never overrun */
        snprintf(ui->pause_for, sizeof ui->pause_for, "%.31s", ui->input);
        snprintf(ui->prompt, sizeof ui->prompt,
                 "why (shown in the header and the audit log; Enter: no reason): ");
        return prompt(ui, ACT_PAUSE_REASON);
    }
    if (key == KEY_APP_ENTER && ui->input_action == ACT_PAUSE_REASON) {
        ui->confirm_action = ACT_PAUSE;
        ui->mode = MODE_CONFIRM;
        return APP_REDRAW;
    }
    if (key == KEY_APP_ENTER) {
        ui->mode = MODE_MAIN;
        ui->action = ui->input_action;
        return APP_ACTION | APP_REDRAW;
    }
    if ((key == 127 || key == 8 || key == KEY_APP_BACKSPACE) && n > 0) {
        ui->input[n - 1] = '\0';
        return APP_REDRAW;
    }
    if (key >= 0x20 && key < 0x7f && n + 1 < sizeof ui->input) {
        ui->input[n] = (char)key;
        ui->input[n + 1] = '\0';
        return APP_REDRAW;
    }
    return 0;
}

int
app_paste(struct ui *ui, const char *text, size_t len)
{
    if (ui->mode != MODE_INPUT) {
        if (ui->mode == MODE_MAIN)
            app_status(ui, false, "paste ignored: only a prompt (/, R, A, P ...) takes text");
        return APP_REDRAW;
    }
    size_t n = strlen(ui->input);
    for (size_t i = 0; i < len && text[i] != '\n' && text[i] != '\r'; i++) {
        unsigned char c = (unsigned char)text[i];
        if (n + 1 >= sizeof ui->input)
            break;
        if (c == '\t')
            c = ' ';
        if (c < 0x20 || c == 0x7f)
            continue; /* control bytes are not text */
        ui->input[n++] = (char)c;
    }
    ui->input[n] = '\0';
    return APP_REDRAW;
}

int
app_key(struct ui *ui, const struct model *m, int key)
{
    switch (ui->mode) {
    case MODE_MAIN:
        return mode_key(ui, m, BIND_MAIN, key);
    case MODE_DETAILS:
    case MODE_HELP:
        return mode_key(ui, m, BIND_VIEW, key);
    case MODE_PICK:
        return mode_key(ui, m, BIND_PICK, key);
    case MODE_ERRORS:
        return mode_key(ui, m, BIND_ERRS, key);
    case MODE_INPUT:
        return input_key(ui, m, key);
    case MODE_CONFIRM:
        ui->mode = MODE_MAIN;
        if (key == 'y' || key == 'Y') {
            ui->action = ui->confirm_action;
            return APP_ACTION | APP_REDRAW;
        }
        app_status(ui, false, "cancelled");
        return APP_REDRAW;
    }
    return 0;
}

void
app_set_layout(struct ui *ui, const struct layout *l)
{
    ui->rows_visible = l->rows_visible;
    memcpy(ui->boxes, l->boxes, sizeof ui->boxes);
    /* the scroll position is kept within the text, so k always moves back at once */
    if (ui->scroll > l->scroll_max)
        ui->scroll = l->scroll_max;
    if (ui->scroll < 0)
        ui->scroll = 0;
}

enum action
app_take_action(struct ui *ui)
{
    enum action act = ui->action;

    ui->action = ACT_NONE;
    return act;
}

void
app_request(struct ui *ui, enum action act)
{
    ui->action = act;
}

void
app_key_seen(struct ui *ui, bool action_running)
{
    /* in a view the status line holds its hints; a running action's line stays */
    if (ui->status[0] != '\0' && (ui->mode == MODE_MAIN || ui->mode == MODE_PICK) &&
        !action_running)
        ui->status[0] = '\0';
}

bool
app_search_start(struct ui *ui)
{
    if (ui->input[0] == '\0')
        return false;
    snprintf(ui->filter, sizeof ui->filter, "%s", ui->input);
    ui->filter_pane = ui->focus;
    ui->sel[ui->focus] = ui->top[ui->focus] = 0;
    ui->moved[ui->focus] = false;
    ui->search_scanned = ui->search_total = 0;
    ui->search_done = false;
    return true;
}

void
app_search_end(struct ui *ui)
{
    ui->filter[0] = '\0';
    ui->sel[ui->filter_pane] = ui->top[ui->filter_pane] = 0;
    ui->moved[ui->filter_pane] = false;
    app_status(ui, false, "search cleared");
}

void
app_search_progress(struct ui *ui, int64_t scanned, int64_t total, bool done)
{
    ui->search_scanned = scanned;
    ui->search_total = total;
    ui->search_done = done;
}

void
app_refreshed(struct ui *ui, bool counts_moved)
{
    if (counts_moved)
        ui->refresh_ms = ui->refresh_ms / 2 < 250 ? 250 : ui->refresh_ms / 2;
    else
        ui->refresh_ms = ui->refresh_ms * 2 > 5000 ? 5000 : ui->refresh_ms * 2;
}

void
app_refresh_start(struct ui *ui, int64_t ms)
{
    ui->refresh_ms = ms;
}

void
app_set_retry(struct ui *ui, int64_t ms)
{
    ui->retry_in_ms = ms;
}

void
app_queue_switched(struct ui *ui, const char *queue)
{
    for (int p = 0; p < PANE_COUNT; p++) {
        ui->sel[p] = ui->top[p] = 0;
        ui->moved[p] = false;
        app_clear_marks(ui, p);
    }
    ui->filter[0] = '\0';
    app_status(ui, false, "showing queue %s", queue);
}

void
app_action_result_free(struct action_result *r)
{
    free(r->detail);
    free(r->copy);
    for (size_t i = 0; i < r->nqueues; i++)
        free(r->queues[i]);
    free(r->queues);
    free(r->counts);
    dq_errors_free(&r->errors);
    memset(r, 0, sizeof *r);
}

bool
app_view_refreshes(const struct ui *ui)
{
    return ui->mode == MODE_DETAILS && ui->detail_act == ACT_WORKERS;
}

void
app_action_done(struct ui *ui, struct action_result *r, const char *current)
{
    if (r->refresh) {
        /* a refresh of the view open: its text and title change, the scroll stays; once
         * the view is closed it is dropped (it must not open the view again) */
        if (!r->error && r->detail != NULL && app_view_refreshes(ui)) {
            app_set_detail(ui, r->detail);
            snprintf(ui->detail_title, sizeof ui->detail_title, "%s", r->title);
        } else if (r->error && app_view_refreshes(ui)) {
            app_status(ui, true, "%s", r->status);
        }
        app_action_result_free(r);
        return;
    }
    if (r->act == ACT_QUEUES && (r->error || r->nqueues == 0))
        ui->pick_first = false; /* no picker opens: the queue shown is what there is */
    if (r->status[0] != '\0')
        app_status(ui, r->error, "%s", r->status);
    else
        ui->status[0] = '\0';
    if (r->clear_marks)
        app_clear_marks(ui, r->pane);
    if (!r->error && r->detail != NULL) {
        app_set_detail(ui, r->detail);
        snprintf(ui->detail_title, sizeof ui->detail_title, "%s", r->title);
        ui->detail_act = r->act;
        free(ui->detail_copy);
        ui->detail_copy = r->copy;
        r->copy = NULL;
        ui->mode = MODE_DETAILS;
        ui->scroll = 0;
    }
    if (!r->error && r->have_errors) {
        dq_errors_free(&ui->errors);
        ui->errors = r->errors; /* the UI owns them now */
        memset(&r->errors, 0, sizeof r->errors);
        ui->err_sel = 0;
        ui->mode = MODE_ERRORS;
    }
    if (!r->error && r->nqueues > 0) {
        app_set_picker(ui, r->queues, r->counts, r->nqueues, r->total, current);
        r->queues = NULL; /* the UI owns them now */
        r->counts = NULL;
        r->nqueues = 0;
    }
    app_action_result_free(r);
}
