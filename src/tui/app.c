/* SPDX-License-Identifier: MIT */
/* app.c: UI state changes for keys (which key makes which: keymap.c). Pure: no curses,
 * no Redis. */
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/taskfmt.h"
#include "lib/buf.h"
#include "lib/dur.h"
#include "overview.h"

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
    overview_free(ui->pick_ov);
    ui->pick_names = NULL;
    ui->pick_counts = NULL;
    ui->pick_ov = NULL;
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

/* periodic schedules (PROTOCOL.md 5.30) */
static void
sched_free(struct ui *ui)
{
    dq_schedules_free(&ui->scheds);
    free(ui->sched_last);
    ui->sched_last = NULL;
}

static void
hist_free(struct ui *ui)
{
    dq_history_free(&ui->hist);
    dq_audit_free(&ui->hist_audit);
    ui->have_hist = false;
}

void
app_set_overview(struct ui *ui, struct overview *ov)
{
    overview_free(ui->pick_ov);
    ui->pick_ov = ov;
}

void
ui_free(struct ui *ui)
{
    picker_free(ui);
    dq_errors_free(&ui->errors);
    sched_free(ui);
    hist_free(ui);
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
 * The transitions a key makes. The key table (keymap.c) says which key asks for which;
 * each function here is one change of state and returns the reaction flags (APP_*).
 */

static int
clamp_move(long s, int64_t total)
{
    if (s >= total)
        s = (long)total - 1;
    return s < 0 ? 0 : (int)s;
}

/* The new position of a selection or scroll at @at among @total for @move. */
static long
moved(const struct ui *ui, long at, int64_t total, int move)
{
    long page = ui->rows_visible > 1 ? ui->rows_visible - 1 : 1;

    switch (move) {
    case APP_MOVE_PAGE_DOWN:
        return at + page;
    case APP_MOVE_PAGE_UP:
        return at - page;
    case APP_MOVE_FIRST:
        return 0;
    case APP_MOVE_LAST:
        return (long)total;
    default:
        return at + move;
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

int
app_move(struct ui *ui, const struct model *m, int move)
{
    long at = (long)ui->sel[ui->focus];

    return move_sel(ui, m, moved(ui, at, model_pane_total(m, ui->focus), move) - at);
}

int
app_focus(struct ui *ui, int pane)
{
    ui->focus = pane;
    return APP_REDRAW;
}

int
app_open_help(struct ui *ui)
{
    ui->mode = MODE_HELP;
    ui->scroll = 0;
    return APP_REDRAW;
}

int
app_back(struct ui *ui)
{
    ui->mode = ui->mode == MODE_DETAILS ? ui->detail_back : MODE_MAIN;
    ui->detail_back = MODE_MAIN;
    return APP_REDRAW;
}

int
app_toggle_refresh(struct ui *ui)
{
    ui->paused = !ui->paused;
    app_status(ui, false, ui->paused ? "paused (Z resumes)" : "resumed");
    return APP_REDRAW | (ui->paused ? 0 : APP_REFETCH);
}

int
app_ask(struct ui *ui, enum action act, const char *id)
{
    ui->action = act;
    snprintf(ui->action_id, sizeof ui->action_id, "%s", id != NULL ? id : "");
    return APP_ACTION;
}

int
app_mark(struct ui *ui, const struct model *m)
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

int
app_search_prompt(struct ui *ui)
{
    if (ui->focus == PANE_FAILED)
        ui->group[0] = ui->group_sig[0] = '\0'; /* a search covers every failed task */
    snprintf(ui->prompt, sizeof ui->prompt, "search %s (id, payload%s; Esc: cancel): ",
             ui->focus == PANE_FAILED ? "failed tasks" : "this pane",
             ui->focus == PANE_FAILED ? ", error, trace" : "");
    return prompt(ui, ACT_SEARCH);
}

int
app_escape(struct ui *ui)
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
    if (ui->nmarks[ui->focus] == 0 && ui->from_overview) {
        ui->action = ACT_QUEUES; /* back to the Overview it was opened from, read afresh */
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

int
app_confirm(struct ui *ui, const struct model *m, enum action act, bool marks)
{
    if ((act == ACT_REQUEUE || act == ACT_DROP) && ui->focus == PANE_FAILED &&
        ui->nmarks[ui->focus] == 0 && app_failed_filter(ui).kind != DQ_FILTER_NONE)
        return ask_bulk(ui, m, act == ACT_REQUEUE ? ACT_REQUEUE_FILTER : ACT_DROP_FILTER);
    if (marks && ui->nmarks[ui->focus] > 0)
        snprintf(ui->action_id, sizeof ui->action_id, "%zu marked tasks", ui->nmarks[ui->focus]);
    else
        snprintf(ui->action_id, sizeof ui->action_id, "%s", app_selected_id(ui, m));
    ui->confirm_action = act;
    ui->mode = MODE_CONFIRM;
    return APP_REDRAW;
}

int
app_pause_prompt(struct ui *ui, const struct model *m)
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

int
app_throttle_prompt(struct ui *ui, const struct model *m)
{
    snprintf(ui->action_id, sizeof ui->action_id, "%s", m->queue);
    if (m->stats.throttled) {
        ui->confirm_action = ACT_THROTTLE_OFF;
        ui->mode = MODE_CONFIRM;
        return APP_REDRAW;
    }
    snprintf(ui->prompt, sizeof ui->prompt,
             "throttle queue %.100s to a rate (e.g. 10/s, 600/m; Enter: no rate limit; Esc: "
             "cancel): ",
             m->queue);
    return prompt(ui, ACT_THROTTLE_RATE);
}

int
app_delay_prompt(struct ui *ui, const struct model *m)
{
    const char *id = app_selected_id(ui, m);

    snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
    snprintf(ui->prompt, sizeof ui->prompt, "requeue %.100s after (e.g. 30s, 10m): ", id);
    return prompt(ui, ACT_REQUEUE_DELAY);
}

int
app_reschedule_prompt(struct ui *ui, const struct model *m)
{
    const char *id = app_selected_id(ui, m);

    snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
    snprintf(
        ui->prompt, sizeof ui->prompt,
        "reschedule %.100s to (e.g. 10m from now, or 2026-12-01T09:00:00Z; Esc: cancel): ", id);
    return prompt(ui, ACT_RESCHEDULE_AT);
}

int
app_bulk(struct ui *ui, const struct model *m, enum action act)
{
    if (model_pane_total(m, PANE_FAILED) <= 0) {
        app_status(ui, true, "no failed tasks");
        return APP_REDRAW;
    }
    ui->spread[0] = '\0';
    if (act == ACT_DROP_ALL)
        return ask_bulk(ui, m, ACT_DROP_ALL);
    char what[512];
    filter_text(ui, m, what, sizeof what);
    snprintf(ui->prompt, sizeof ui->prompt,
             "requeue %s, spread over (e.g. 10m; Enter: at once; Esc: cancel): ", what);
    return prompt(ui, ACT_SPREAD);
}

int
app_scroll(struct ui *ui, int move)
{
    long s = move == APP_MOVE_PAGE_DOWN ? ui->scroll + ui->rows_visible /* a whole screen */
             : move == APP_MOVE_PAGE_UP ? ui->scroll - ui->rows_visible
                                        : moved(ui, ui->scroll, 0, move);

    ui->scroll = s < 0 ? 0 : (int)s;
    return APP_REDRAW;
}

int
app_pick_move(struct ui *ui, int move)
{
    long s = moved(ui, (long)ui->pick_sel, (int64_t)ui->npick, move);

    ui->pick_sel = (size_t)clamp_move(s, (int64_t)ui->npick);
    return APP_REDRAW;
}

int
app_pick_open(struct ui *ui)
{
    if (ui->npick == 0)
        return 0;
    ui->pick_first = false;
    ui->from_overview = ui->pick_ov != NULL;
    ui->mode = MODE_MAIN;
    ui->action = ACT_SWITCH;
    return APP_ACTION | APP_REDRAW;
}

int
app_err_move(struct ui *ui, int move)
{
    long s = moved(ui, (long)ui->err_sel, (int64_t)ui->errors.n, move);

    ui->err_sel = (size_t)clamp_move(s, (int64_t)ui->errors.n);
    return APP_REDRAW;
}

int
app_err_open(struct ui *ui)
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

/* The Schedules view: the selection within the schedules, the rows shown around it. */
static void
sched_clamp(struct ui *ui)
{
    size_t n = ui->scheds.n, rows = ui->rows_visible > 0 ? (size_t)ui->rows_visible : 1;

    if (ui->sched_sel >= n)
        ui->sched_sel = n > 0 ? n - 1 : 0;
    if (ui->sched_top + rows > n)
        ui->sched_top = n > rows ? n - rows : 0;
    if (ui->sched_sel < ui->sched_top)
        ui->sched_top = ui->sched_sel;
    if (ui->sched_sel >= ui->sched_top + rows)
        ui->sched_top = ui->sched_sel - rows + 1;
}

const dq_schedule *
app_selected_schedule(const struct ui *ui)
{
    return ui->sched_sel < ui->scheds.n ? &ui->scheds.items[ui->sched_sel] : NULL;
}

int
app_sched_move(struct ui *ui, int move)
{
    size_t top = ui->sched_top;
    long s = moved(ui, (long)ui->sched_sel, (int64_t)ui->scheds.n, move);

    ui->sched_sel = (size_t)clamp_move(s, (int64_t)ui->scheds.n);
    sched_clamp(ui);
    return APP_REDRAW | (ui->sched_top != top ? APP_REFETCH : 0);
}

/* history (PROTOCOL.md, "History: per-minute rollups"): the spans and steps the
 * rollups are read at, one column per step; 24 h is the reader's most per call */
const struct hist_span app_hist_spans[APP_HIST_SPANS] = {
    {3600000, 60000, "1h"},
    {6 * 3600000, 5 * 60000, "6h"},
    {24 * 3600000, 15 * 60000, "24h"},
};

int
app_history_span(struct ui *ui, int dir)
{
    int to = ui->hist_span + dir;

    if (to < 0 || to >= APP_HIST_SPANS) {
        app_status(ui, false, "%s is the %s span (%s shows %s)", app_hist_spans[ui->hist_span].name,
                   dir < 0 ? "shortest" : "longest", dir < 0 ? "]" : "[",
                   app_hist_spans[dir < 0 ? ui->hist_span + 1 : ui->hist_span - 1].name);
        return APP_REDRAW;
    }
    ui->hist_span = to;
    app_status(ui, false, "reading the last %s...", app_hist_spans[to].name);
    return APP_REDRAW | APP_REFETCH;
}

int
app_sched_pause_prompt(struct ui *ui)
{
    const dq_schedule *s = app_selected_schedule(ui);

    if (s == NULL) {
        app_status(ui, true, "no schedule selected");
        return APP_REDRAW;
    }
    snprintf(ui->action_id, sizeof ui->action_id, "%s", s->name);
    ui->confirm_action = s->paused ? ACT_SCHED_RESUME : ACT_SCHED_PAUSE;
    ui->mode = MODE_CONFIRM;
    return APP_REDRAW;
}

int
app_sched_details(struct ui *ui)
{
    const dq_schedule *s = app_selected_schedule(ui);

    if (s == NULL)
        return 0;
    if (s->last_id == NULL || s->last_id[0] == '\0') {
        app_status(ui, false, "%s has not fired yet: no task to show", s->name ? s->name : "?");
        return APP_REDRAW;
    }
    return app_ask(ui, ACT_DETAILS, s->last_id);
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
int
app_input_key(struct ui *ui, const struct model *m, int key)
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
    if (key == KEY_APP_ENTER && ui->input_action == ACT_THROTTLE_RATE) {
        int64_t v = 0;
        /* checked here so a typo is told before y/N; jobs.c parses it the same way */
        if (ui->input[0] != '\0' &&
            (dq_rate_parse(ui->input, "rate", &v, NULL) != DQ_OK || v == 0)) {
            ui->mode = MODE_MAIN;
            app_status(ui, true, "not throttled: \"%.60s\" is not a rate (10/s, 600/m, 120/h)",
                       ui->input);
            return APP_REDRAW;
        }
        snprintf(ui->throttle_rate, sizeof ui->throttle_rate, "%.31s", ui->input);
        snprintf(ui->prompt, sizeof ui->prompt,
                 "at most this many in flight (e.g. 3; Enter: no concurrency limit): ");
        return prompt(ui, ACT_THROTTLE_CONC);
    }
    if (key == KEY_APP_ENTER && ui->input_action == ACT_THROTTLE_CONC) {
        size_t d = strspn(ui->input, "0123456789");
        if (ui->input[0] != '\0' &&
            (d != strlen(ui->input) || d > 7 || atol(ui->input) < 1 || atol(ui->input) > 1000000)) {
            ui->mode = MODE_MAIN;
            app_status(ui, true, "not throttled: \"%.60s\" is not a count in 1..1000000",
                       ui->input);
            return APP_REDRAW;
        }
        if (ui->input[0] == '\0' && ui->throttle_rate[0] == '\0') {
            ui->mode = MODE_MAIN;
            app_status(ui, true, "not throttled: give a rate or a concurrency");
            return APP_REDRAW;
        }
        snprintf(ui->throttle_conc, sizeof ui->throttle_conc, "%.15s", ui->input);
        snprintf(ui->prompt, sizeof ui->prompt, "for how long (e.g. 30m; Enter: until lifted): ");
        return prompt(ui, ACT_THROTTLE_FOR);
    }
    if (key == KEY_APP_ENTER && ui->input_action == ACT_THROTTLE_FOR) {
        int64_t ms;
        if (ui->input[0] != '\0' &&
            (dq_dur_parse(ui->input, "for", &ms, NULL) != DQ_OK || ms == 0)) {
            ui->mode = MODE_MAIN;
            app_status(ui, true, "not throttled: \"%.60s\" is not a duration (30s, 10m, 2h)",
                       ui->input);
            return APP_REDRAW;
        }
        snprintf(ui->pause_for, sizeof ui->pause_for, "%.31s", ui->input);
        snprintf(ui->prompt, sizeof ui->prompt,
                 "why (shown in the header and the audit log; Enter: no reason): ");
        return prompt(ui, ACT_THROTTLE_REASON);
    }
    if (key == KEY_APP_ENTER && ui->input_action == ACT_THROTTLE_REASON) {
        ui->confirm_action = ACT_THROTTLE;
        ui->mode = MODE_CONFIRM;
        return APP_REDRAW;
    }
    if (key == KEY_APP_ENTER && ui->input_action == ACT_RESCHEDULE_AT) {
        int64_t ms;
        /* checked here so a typo is told before y/N; jobs.c parses it the same way */
        if (dq_dur_parse(ui->input, "time", &ms, NULL) != DQ_OK &&
            dq_time_parse(ui->input, "time", &ms, NULL) != DQ_OK) {
            ui->mode = MODE_MAIN;
            app_status(ui, true,
                       "not rescheduled: \"%.60s\" is neither a duration (10m) nor an RFC 3339 "
                       "time",
                       ui->input);
            return APP_REDRAW;
        }
        ui->confirm_action = ACT_RESCHEDULE;
        ui->mode = MODE_CONFIRM;
        return APP_REDRAW;
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
app_confirm_key(struct ui *ui, int key)
{
    /* a schedule's question was asked over the Schedules view: back there */
    bool sched = ui->confirm_action == ACT_SCHED_PAUSE || ui->confirm_action == ACT_SCHED_RESUME;

    ui->mode = sched ? MODE_SCHEDULES : MODE_MAIN;
    if (key == 'y' || key == 'Y') {
        ui->action = ui->confirm_action;
        return APP_ACTION | APP_REDRAW;
    }
    app_status(ui, false, "cancelled");
    return APP_REDRAW;
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
    if (ui->status[0] != '\0' &&
        (ui->mode == MODE_MAIN || ui->mode == MODE_PICK || ui->mode == MODE_SCHEDULES ||
         ui->mode == MODE_HISTORY) &&
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
    overview_free(r->overview);
    dq_errors_free(&r->errors);
    dq_schedules_free(&r->scheds);
    free(r->sched_last);
    dq_history_free(&r->hist);
    dq_audit_free(&r->audit);
    memset(r, 0, sizeof *r);
}

bool
app_view_refreshes(const struct ui *ui)
{
    return app_view_refresh_action(ui) != ACT_NONE;
}

enum action
app_view_refresh_action(const struct ui *ui)
{
    if (ui->mode == MODE_DETAILS && (ui->detail_act == ACT_WORKERS || ui->detail_act == ACT_KEYS ||
                                     ui->detail_act == ACT_PARTS))
        return ui->detail_act;
    if (ui->mode == MODE_SCHEDULES)
        return ACT_SCHEDULES;
    if (ui->mode == MODE_HISTORY)
        return ACT_HISTORY;
    if (ui->mode == MODE_PICK && ui->pick_ov != NULL)
        return ACT_QUEUES; /* the Overview */
    return ACT_NONE;
}

int64_t
app_view_refresh_ms(const struct ui *ui)
{
    if (ui->mode != MODE_HISTORY)
        return APP_WORKERS_REFRESH_MS;
    if (!ui->have_hist || ui->hist.now_ms <= 0)
        return APP_HISTORY_REFRESH_MS;
    /* a second into the next minute: the reader then has the minute that just ended whole */
    int64_t next = 60000 - ui->hist.now_ms % 60000 + 1000;
    return ui->hist_span_read > 0 || next < APP_HISTORY_REFRESH_MS ? next : APP_HISTORY_REFRESH_MS;
}

/* The History view takes @r's rollups and audit entries. */
static void
hist_take(struct ui *ui, struct action_result *r)
{
    hist_free(ui);
    ui->hist = r->hist; /* the UI owns them now */
    ui->hist_audit = r->audit;
    ui->hist_span_read = r->hist_span;
    ui->have_hist = true;
    memset(&r->hist, 0, sizeof r->hist);
    memset(&r->audit, 0, sizeof r->audit);
    r->have_hist = false;
}

/* The Schedules view takes @r's schedules; @follow: a refresh, so the selection stays on
 * the schedule it was on (by name), else it starts at the first. */
static void
sched_take(struct ui *ui, struct action_result *r, bool follow)
{
    char name[DQ_SCHEDULE_NAME_MAX + 1] = "";
    const dq_schedule *was = app_selected_schedule(ui);

    if (follow && was != NULL && was->name != NULL)
        snprintf(name, sizeof name, "%s", was->name);
    sched_free(ui);
    ui->scheds = r->scheds; /* the UI owns them now */
    ui->sched_last = r->sched_last;
    memset(&r->scheds, 0, sizeof r->scheds);
    r->sched_last = NULL;
    if (!follow)
        ui->sched_sel = ui->sched_top = 0;
    for (size_t i = 0; name[0] != '\0' && i < ui->scheds.n; i++)
        if (ui->scheds.items[i].name != NULL && strcmp(ui->scheds.items[i].name, name) == 0)
            ui->sched_sel = i;
    sched_clamp(ui);
}

void
app_action_done(struct ui *ui, struct action_result *r, const char *current)
{
    if (r->refresh && r->act == ACT_QUEUES) {
        /* the Overview's rows again: the selection stays on its queue as rows move */
        if (!r->error && r->nqueues > 0 && ui->mode == MODE_PICK && ui->pick_ov != NULL) {
            char sel[DQ_QUEUE_NAME_MAX + 1];
            snprintf(sel, sizeof sel, "%s",
                     ui->pick_sel < ui->npick ? ui->pick_names[ui->pick_sel] : "");
            app_set_picker(ui, r->queues, r->counts, r->nqueues, r->total, sel);
            app_set_overview(ui, r->overview);
            r->queues = NULL;
            r->counts = NULL;
            r->overview = NULL;
            r->nqueues = 0;
        } else if (r->error && ui->mode == MODE_PICK) {
            app_status(ui, true, "%s", r->status);
        }
        app_action_result_free(r);
        return;
    }
    if (r->refresh) {
        /* a refresh of the view open: its text and title change, the scroll stays; once
         * the view is closed it is dropped (it must not open the view again) */
        if (!r->error && r->have_scheds && ui->mode == MODE_SCHEDULES) {
            sched_take(ui, r, true);
        } else if (!r->error && r->have_hist && ui->mode == MODE_HISTORY) {
            hist_take(ui, r);
            if (ui->hist_span_read == ui->hist_span && strncmp(ui->status, "reading", 7) == 0)
                ui->status[0] = '\0'; /* the span asked for is shown */
        } else if (!r->error && r->detail != NULL && app_view_refreshes(ui)) {
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
        /* details asked for from the Schedules view go back there */
        ui->detail_back =
            r->act == ACT_DETAILS && ui->mode == MODE_SCHEDULES ? MODE_SCHEDULES : MODE_MAIN;
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
    if (!r->error && r->have_scheds) {
        /* S opens the view; a pause or resume from it shows the list as it is now */
        bool from_view = r->act == ACT_SCHED_PAUSE || r->act == ACT_SCHED_RESUME;
        sched_take(ui, r, from_view);
        ui->mode = MODE_SCHEDULES;
    }
    if (!r->error && r->have_hist) {
        hist_take(ui, r); /* H opens the view */
        ui->mode = MODE_HISTORY;
    }
    if (!r->error && r->nqueues > 0) {
        app_set_picker(ui, r->queues, r->counts, r->nqueues, r->total, current);
        app_set_overview(ui, r->overview);
        r->queues = NULL; /* the UI owns them now */
        r->counts = NULL;
        r->overview = NULL;
        r->nqueues = 0;
    }
    app_action_result_free(r);
}
