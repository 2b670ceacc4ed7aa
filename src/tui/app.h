/* SPDX-License-Identifier: MIT */
/*
 * app.h: the inspector's UI state and what a key does to it. Pure: key handlers change
 * state and return reaction flags (redraw, refetch, quit, run an action); they never
 * draw and never call Redis. cmd_top.c performs the reactions.
 */
#ifndef DQ_TUI_APP_H
#define DQ_TUI_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

enum mode { MODE_MAIN, MODE_DETAILS, MODE_HELP, MODE_CONFIRM, MODE_INPUT, MODE_PICK };

enum action {
    ACT_NONE,
    ACT_REQUEUE,       /* failed: requeue the selected task now */
    ACT_DROP,          /* failed or future: drop the selected task (after y) */
    ACT_REAP,          /* in flight: return expired leases now */
    ACT_DETAILS,       /* load the selected task's details */
    ACT_RUN_NOW,       /* future: make the selected task due now */
    ACT_REQUEUE_DELAY, /* failed: requeue after the typed delay (input) */
    ACT_REQUEUE_ALL,   /* failed: requeue all, spread over the typed window (input) */
    ACT_DROP_ALL,      /* failed: drop all, after the queue name is typed (input) */
    ACT_AUDIT,         /* show the audit log */
    ACT_COPY,          /* copy the payload (or the trace, in details) with OSC 52 */
    ACT_SEARCH,        /* failed: search errors and payloads on the server (input) */
    ACT_UNFILTER,      /* end the search */
    ACT_QUEUES,        /* load the server's queues for the picker */
    ACT_SWITCH,        /* picker: show the queue picked (pick_names[pick_sel]) */
};

enum {
    APP_REDRAW = 1,
    APP_REFETCH = 2,
    APP_QUIT = 4,
    APP_ACTION = 8, /* perform ui->action on ui->action_id */
};

/* Keys the app understands beyond plain characters (term.c maps curses keys to these). */
enum {
    KEY_APP_UP = 0x1000,
    KEY_APP_DOWN,
    KEY_APP_PGUP,
    KEY_APP_PGDN,
    KEY_APP_HOME,
    KEY_APP_END,
    KEY_APP_ENTER,
    KEY_APP_ESC,
    KEY_APP_TAB,
    KEY_APP_BTAB,
    KEY_APP_REDRAW, /* Ctrl-L */
    KEY_APP_CLICK,  /* mouse: term_mouse() tells where */
    KEY_APP_WHEEL_UP,
    KEY_APP_WHEEL_DOWN,
};

/* Where a pane was laid out by the last render (for mouse clicks). */
struct pane_box {
    int row, col, height, width; /* height 0: not shown */
};

struct ui {
    int focus;                         /* PANE_* */
    size_t sel[PANE_COUNT];            /* selected row, as an index into the whole pane */
    size_t top[PANE_COUNT];            /* first row shown (the fetch offset) */
    int rows_visible;                  /* rows a pane shows, set by the view's layout */
    struct pane_box boxes[PANE_COUNT]; /* set by the view's layout */
    enum mode mode;
    int scroll; /* details and help */
    char status[256];
    bool status_error;
    bool paused, read_only, no_color;
    int64_t refresh_ms;
    int64_t retry_in_ms; /* while disconnected: until the next attempt */
    enum action action, confirm_action;
    char action_id[240];
    char **detail; /* details view lines (owned) */
    size_t ndetail;
    char detail_title[64];
    char *detail_copy;        /* what y copies in the details view (owned; may be NULL) */
    char **marks[PANE_COUNT]; /* ids marked with space, per pane (owned) */
    size_t nmarks[PANE_COUNT];
    char filter[120]; /* pane filter_pane shows search matches for this ("": off) */
    int filter_pane;
    int64_t search_scanned, search_total;
    bool search_done;
    char prompt[200];         /* MODE_INPUT: the question */
    char input[120];          /* MODE_INPUT: what was typed */
    enum action input_action; /* MODE_INPUT: what Enter does */
    /* MODE_PICK: the server's queues with their due, future, in-flight, failed counts */
    char **pick_names; /* owned */
    int64_t (*pick_counts)[4];
    size_t npick, pick_sel;
    int64_t pick_total; /* queues registered (more than listed when there are many) */
};

void ui_init(struct ui *ui, bool read_only, bool no_color);
void ui_free(struct ui *ui);

/* Applies a key. @m is the last snapshot (for totals and the selected task). */
int app_key(struct ui *ui, const struct model *m, int key);

/* A click at (@row, @col): focuses the pane there and selects the row clicked. */
int app_click(struct ui *ui, const struct model *m, int row, int col);

/* The selected task of the focused pane as last fetched, or NULL. Borrowed from @m. */
const dq_task *app_selected_task(const struct ui *ui, const struct model *m);

/* The id of the selected task in the focused pane, or NULL. */
const char *app_selected_id(const struct ui *ui, const struct model *m);

/* The selected task's id in each pane ("" when none), to follow it across a refresh. */
struct selection {
    char id[PANE_COUNT][240];
};
void app_selection_save(const struct ui *ui, const struct model *m, struct selection *s);

/* After a refresh: a selected task still on its pane's page stays selected where it
 * moved (tasks ahead of it were claimed or added); otherwise the row number stays. */
void app_selection_follow(struct ui *ui, const struct model *m, const struct selection *s);

/* Keeps selections inside the panes' totals and visible, and the window full (after a
 * fetch or a resize). Returns true when a pane's first row changed: fetch again. */
bool app_clamp(struct ui *ui, const struct model *m);

/* Sets the status line (printf-style). */
void app_status(struct ui *ui, bool error, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Whether @id is marked in @pane. */
bool app_is_marked(const struct ui *ui, int pane, const char *id);
/* Forgets the marks of @pane. */
void app_clear_marks(struct ui *ui, int pane);

/* Opens the queue picker on @names and @counts (taken; n of them, @total registered),
 * with the selection on @current when it is listed. */
void app_set_picker(struct ui *ui, char **names, int64_t (*counts)[4], size_t n, int64_t total,
                    const char *current);

/* Replaces the details lines with @text split at newlines. */
void app_set_detail(struct ui *ui, const char *text);

#endif /* DQ_TUI_APP_H */
