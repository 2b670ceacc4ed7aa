/* SPDX-License-Identifier: MIT */
/* app.c: UI state changes for keys. Pure: no curses, no Redis. */
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
ui_init(struct ui *ui, bool read_only, bool no_color)
{
    memset(ui, 0, sizeof *ui);
    ui->read_only = read_only;
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

/* Marks @id in @pane, or unmarks it when it was marked. At most 1000 (one call). */
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
    if (ui->nmarks[pane] == 1000)
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
        if (s->id[i][0] == '\0')
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

static int
move_sel(struct ui *ui, const struct model *m, long delta)
{
    int64_t total = model_pane_total(m, ui->focus);
    long s = (long)ui->sel[ui->focus] + delta;

    if (total <= 0)
        return 0;
    if (s < 0)
        s = 0;
    if (s >= total)
        s = (long)total - 1;
    ui->sel[ui->focus] = (size_t)s;
    size_t top = ui->top[ui->focus];
    app_clamp(ui, m);
    /* a scroll past the fetched page needs new data */
    return APP_REDRAW | (ui->top[ui->focus] != top ? APP_REFETCH : 0);
}

static int
pick_key(struct ui *ui, int key)
{
    long sel = (long)ui->pick_sel, page = ui->rows_visible > 1 ? ui->rows_visible - 1 : 1;

    switch (key) {
    case 'q':
    case KEY_APP_ESC:
        ui->mode = MODE_MAIN;
        return APP_REDRAW;
    case KEY_APP_ENTER:
        if (ui->npick == 0)
            return 0;
        ui->mode = MODE_MAIN;
        ui->action = ACT_SWITCH;
        return APP_ACTION | APP_REDRAW;
    case 'j':
    case KEY_APP_DOWN:
    case KEY_APP_WHEEL_DOWN:
        sel++;
        break;
    case 'k':
    case KEY_APP_UP:
    case KEY_APP_WHEEL_UP:
        sel--;
        break;
    case KEY_APP_PGDN:
        sel += page;
        break;
    case KEY_APP_PGUP:
        sel -= page;
        break;
    case 'g':
    case KEY_APP_HOME:
        sel = 0;
        break;
    case 'G':
    case KEY_APP_END:
        sel = (long)ui->npick - 1;
        break;
    default:
        return 0;
    }
    if (sel >= (long)ui->npick)
        sel = (long)ui->npick - 1;
    ui->pick_sel = sel < 0 ? 0 : (size_t)sel;
    return APP_REDRAW;
}

static int
main_key(struct ui *ui, const struct model *m, int key)
{
    int page = ui->rows_visible > 1 ? ui->rows_visible - 1 : 1;
    const char *id;

    switch (key) {
    case 'q':
        return APP_QUIT;
    case '?':
    case 'h':
        ui->mode = MODE_HELP;
        ui->scroll = 0;
        return APP_REDRAW;
    case KEY_APP_TAB:
        ui->focus = (ui->focus + 1) % PANE_COUNT;
        return APP_REDRAW;
    case KEY_APP_BTAB:
        ui->focus = (ui->focus + PANE_COUNT - 1) % PANE_COUNT;
        return APP_REDRAW;
    case '1':
    case '2':
    case '3':
    case '4':
        ui->focus = key - '1';
        return APP_REDRAW;
    case 'j':
    case KEY_APP_DOWN:
        return move_sel(ui, m, 1);
    case 'k':
    case KEY_APP_UP:
        return move_sel(ui, m, -1);
    case KEY_APP_WHEEL_DOWN:
        return move_sel(ui, m, 3);
    case KEY_APP_WHEEL_UP:
        return move_sel(ui, m, -3);
    case KEY_APP_PGDN:
        return move_sel(ui, m, page);
    case KEY_APP_PGUP:
        return move_sel(ui, m, -page);
    case 'g':
    case KEY_APP_HOME:
        return move_sel(ui, m, -(long)ui->sel[ui->focus]);
    case 'G':
    case KEY_APP_END:
        return move_sel(ui, m, (long)model_pane_total(m, ui->focus));
    case 'Z':
        ui->paused = !ui->paused;
        app_status(ui, false, ui->paused ? "paused (Z resumes)" : "resumed");
        return APP_REDRAW | (ui->paused ? 0 : APP_REFETCH);
    case KEY_APP_REDRAW:
        return APP_REDRAW | APP_REFETCH;
    case KEY_APP_ENTER:
        id = app_selected_id(ui, m);
        if (id == NULL)
            return 0;
        ui->action = ACT_DETAILS;
        snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
        return APP_ACTION;
    case 'L':
        ui->action = ACT_AUDIT;
        return APP_ACTION;
    case 'Q':
        ui->action = ACT_QUEUES;
        return APP_ACTION;
    case ' ':
        id = app_selected_id(ui, m);
        if (id == NULL)
            return 0;
        toggle_mark(ui, ui->focus, id);
        app_status(ui, false, "%zu marked in this pane (r/d act on them; Esc clears)",
                   ui->nmarks[ui->focus]);
        return move_sel(ui, m, 1) | APP_REDRAW;
    case '/':
        ui->mode = MODE_INPUT;
        ui->input[0] = '\0';
        ui->input_action = ACT_SEARCH;
        snprintf(ui->prompt, sizeof ui->prompt, "search %s (id, payload%s; Esc: cancel): ",
                 ui->focus == PANE_FAILED ? "failed tasks" : "this pane",
                 ui->focus == PANE_FAILED ? ", error, trace" : "");
        return APP_REDRAW;
    case KEY_APP_ESC:
        if (ui->nmarks[ui->focus] == 0 && ui->filter[0] != '\0' && ui->focus == ui->filter_pane) {
            ui->action = ACT_UNFILTER;
            return APP_ACTION;
        }
        if (ui->nmarks[ui->focus] == 0)
            return 0;
        app_clear_marks(ui, ui->focus);
        app_status(ui, false, "marks cleared");
        return APP_REDRAW;
    case 'y':
        id = app_selected_id(ui, m);
        if (id == NULL)
            return 0;
        ui->action = ACT_COPY;
        snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
        return APP_ACTION;
    case 'r':
    case 'R':
    case 'd':
    case 'x':
    case 'p':
    case 'A':
    case 'X':
        break;
    default:
        return 0;
    }
    /* actions */
    if (ui->read_only) {
        app_status(ui, true, "read-only: actions are disabled (started with --read-only)");
        return APP_REDRAW;
    }
    if (key == 'x') {
        if (ui->focus != PANE_INFLIGHT) {
            app_status(ui, true, "x recovers expired leases: go to In-flight (3)");
            return APP_REDRAW;
        }
        ui->action = ACT_REAP;
        ui->action_id[0] = '\0';
        return APP_ACTION;
    }
    if (key == 'A' || key == 'X') {
        int64_t n = model_pane_total(m, PANE_FAILED);
        if (n <= 0) {
            app_status(ui, true, "no failed tasks");
            return APP_REDRAW;
        }
        ui->mode = MODE_INPUT;
        ui->input[0] = '\0';
        ui->input_action = key == 'A' ? ACT_REQUEUE_ALL : ACT_DROP_ALL;
        if (key == 'A')
            snprintf(ui->prompt, sizeof ui->prompt,
                     "requeue all %lld failed tasks, spread over (e.g. 10m; Enter: at once; "
                     "Esc: cancel): ",
                     (long long)n);
        else
            snprintf(ui->prompt, sizeof ui->prompt,
                     "drop all %lld failed tasks for good: type the queue name (%s): ",
                     (long long)n, m->queue);
        return APP_REDRAW;
    }
    id = app_selected_id(ui, m);
    if ((key == 'r' || key == 'R') && ui->focus != PANE_FAILED) {
        app_status(ui, true, "r requeues a failed task: go to Failed (4)");
        return APP_REDRAW;
    }
    if (key == 'p' && ui->focus != PANE_FUTURE) {
        app_status(ui, true, "p runs a future task now: go to Future (2)");
        return APP_REDRAW;
    }
    if (key == 'd' && ui->focus != PANE_FAILED && ui->focus != PANE_FUTURE) {
        app_status(ui, true, "d drops a failed or future task: go to Future (2) or Failed (4)");
        return APP_REDRAW;
    }
    if (id == NULL && !((key == 'r' || key == 'd') && ui->nmarks[ui->focus] > 0)) {
        app_status(ui, true, "nothing selected");
        return APP_REDRAW;
    }
    if ((key == 'r' || key == 'd') && ui->nmarks[ui->focus] > 0) {
        /* the marked set, not the selection */
        snprintf(ui->action_id, sizeof ui->action_id, "%zu marked tasks", ui->nmarks[ui->focus]);
        ui->confirm_action = key == 'r' ? ACT_REQUEUE : ACT_DROP;
        ui->mode = MODE_CONFIRM;
        return APP_REDRAW;
    }
    snprintf(ui->action_id, sizeof ui->action_id, "%s", id);
    if (key == 'R') {
        ui->mode = MODE_INPUT;
        ui->input[0] = '\0';
        ui->input_action = ACT_REQUEUE_DELAY;
        snprintf(ui->prompt, sizeof ui->prompt, "requeue %.100s after (e.g. 30s, 10m): ", id);
        return APP_REDRAW;
    }
    ui->confirm_action = key == 'r' ? ACT_REQUEUE : key == 'p' ? ACT_RUN_NOW : ACT_DROP;
    ui->mode = MODE_CONFIRM;
    return APP_REDRAW;
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
            if (index >= m->offsets[p] && index < m->offsets[p] + m->pages[p].n)
                ui->sel[p] = index;
        }
        return APP_REDRAW;
    }
    return 0;
}

int
app_key(struct ui *ui, const struct model *m, int key)
{
    switch (ui->mode) {
    case MODE_MAIN:
        return main_key(ui, m, key);
    case MODE_INPUT: {
        size_t n = strlen(ui->input);
        if (key == KEY_APP_ESC) {
            ui->mode = MODE_MAIN;
            app_status(ui, false, "cancelled");
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
    case MODE_PICK:
        return pick_key(ui, key);
    case MODE_CONFIRM:
        ui->mode = MODE_MAIN;
        if (key == 'y' || key == 'Y') {
            ui->action = ui->confirm_action;
            return APP_ACTION | APP_REDRAW;
        }
        app_status(ui, false, "cancelled");
        return APP_REDRAW;
    case MODE_DETAILS:
    case MODE_HELP:
        switch (key) {
        case 'q':
        case KEY_APP_ESC:
        case KEY_APP_ENTER:
            ui->mode = MODE_MAIN;
            return APP_REDRAW;
        case 'j':
        case KEY_APP_DOWN:
            ui->scroll++;
            return APP_REDRAW;
        case 'y':
            if (ui->mode != MODE_DETAILS)
                return 0;
            ui->action = ACT_COPY;
            return APP_ACTION;
        case 'k':
        case KEY_APP_UP:
            ui->scroll = ui->scroll > 0 ? ui->scroll - 1 : 0;
            return APP_REDRAW;
        case KEY_APP_WHEEL_DOWN:
            ui->scroll += 3;
            return APP_REDRAW;
        case KEY_APP_WHEEL_UP:
            ui->scroll = ui->scroll > 3 ? ui->scroll - 3 : 0;
            return APP_REDRAW;
        case KEY_APP_PGDN:
        case ' ':
            ui->scroll += ui->rows_visible;
            return APP_REDRAW;
        case KEY_APP_PGUP:
            ui->scroll = ui->scroll > ui->rows_visible ? ui->scroll - ui->rows_visible : 0;
            return APP_REDRAW;
        case 'g':
            ui->scroll = 0;
            return APP_REDRAW;
        case KEY_APP_REDRAW:
            return APP_REDRAW;
        default:
            return 0;
        }
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
    if (ui->status[0] != '\0' && ui->mode == MODE_MAIN && !action_running)
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
    ui->search_scanned = ui->search_total = 0;
    ui->search_done = false;
    return true;
}

void
app_search_end(struct ui *ui)
{
    ui->filter[0] = '\0';
    ui->sel[ui->filter_pane] = ui->top[ui->filter_pane] = 0;
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
app_set_retry(struct ui *ui, int64_t ms)
{
    ui->retry_in_ms = ms;
}

void
app_queue_switched(struct ui *ui, const char *queue)
{
    for (int p = 0; p < PANE_COUNT; p++) {
        ui->sel[p] = ui->top[p] = 0;
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
    memset(r, 0, sizeof *r);
}

void
app_action_done(struct ui *ui, struct action_result *r, const char *current)
{
    if (r->status[0] != '\0')
        app_status(ui, r->error, "%s", r->status);
    else
        ui->status[0] = '\0';
    if (r->clear_marks)
        app_clear_marks(ui, r->pane);
    if (!r->error && r->detail != NULL) {
        app_set_detail(ui, r->detail);
        snprintf(ui->detail_title, sizeof ui->detail_title, "%s", r->title);
        free(ui->detail_copy);
        ui->detail_copy = r->copy;
        r->copy = NULL;
        ui->mode = MODE_DETAILS;
        ui->scroll = 0;
    }
    if (!r->error && r->nqueues > 0) {
        app_set_picker(ui, r->queues, r->counts, r->nqueues, r->total, current);
        r->queues = NULL; /* the UI owns them now */
        r->counts = NULL;
        r->nqueues = 0;
    }
    app_action_result_free(r);
}
