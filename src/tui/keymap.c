/* SPDX-License-Identifier: MIT */
/*
 * keymap.c: the inspector's keys. Pure: no curses, no Redis.
 *
 * Every key of the main screen, the text views (details, help, audit) and the queue
 * picker is one row of the table below: the key codes, the panes where it applies,
 * whether it changes the queue (refused with --read-only), whether it needs a selected
 * task, and what it does. The help overlay and the status line's hints are generated
 * from the same rows, so a key cannot be bound without being explained. The handlers
 * after the table turn a row into one of app.c's state transitions; typing into a
 * prompt (MODE_INPUT) and answering y/N (MODE_CONFIRM) are text entry, not bindings,
 * and app.c has them too. Calls go one way: keymap.c -> app.c.
 */
#include "keymap.h"

#include <stdio.h>
#include <string.h>

enum {
    KB_WRITE = 1,    /* changes the queue: refused with --read-only */
    KB_SELECTED = 2, /* needs a selected task (or, with KB_MARKS, a marked set) */
    KB_MARKS = 4,    /* acts on the pane's marked tasks when there are any */
};

/* where a binding applies */
enum {
    BIND_MAIN = 1,
    BIND_VIEW = 2,
    BIND_PICK = 4,
    BIND_ERRS = 8,
    BIND_SCHED = 16,
    BIND_HIST = 32
};

#define PANES_ALL   0
#define PANE_BIT(p) (1u << (p))

/* Key codes one binding holds at most (1 2 3 4 5: the panes). */
#define BIND_KEYS 5

struct binding;
typedef int (*bind_fn)(struct ui *ui, const struct model *m, const struct binding *b, int key);

struct binding {
    unsigned where;      /* BIND_* */
    int keys[BIND_KEYS]; /* key codes (0 ends the list early) */
    const char *label;   /* how help names them; names every code in keys */
    unsigned panes;      /* PANE_BIT()s where it applies; PANES_ALL: every pane */
    unsigned flags;      /* KB_* */
    bind_fn fn;          /* what it does */
    int arg;             /* for fn: a move (APP_MOVE_* or a row count), an action */
    const char *help;    /* what help says it does */
    const char *refuse;  /* on another pane: what it is for and where to go */
    const char *hint;    /* the status line's word for it ("requeue"), or NULL */
};

/* The handlers, defined after the table. */
static int do_help(struct ui *, const struct model *, const struct binding *, int);
static int do_quit(struct ui *, const struct model *, const struct binding *, int);
static int do_focus(struct ui *, const struct model *, const struct binding *, int);
static int do_move(struct ui *, const struct model *, const struct binding *, int);
static int do_request(struct ui *, const struct model *, const struct binding *, int);
static int do_pause(struct ui *, const struct model *, const struct binding *, int);
static int do_redraw(struct ui *, const struct model *, const struct binding *, int);
static int do_search(struct ui *, const struct model *, const struct binding *, int);
static int do_mark(struct ui *, const struct model *, const struct binding *, int);
static int do_escape(struct ui *, const struct model *, const struct binding *, int);
static int do_confirm(struct ui *, const struct model *, const struct binding *, int);
static int do_requeue_after(struct ui *, const struct model *, const struct binding *, int);
static int do_bulk(struct ui *, const struct model *, const struct binding *, int);
static int do_pause_queue(struct ui *, const struct model *, const struct binding *, int);
static int do_throttle(struct ui *, const struct model *, const struct binding *, int);
static int do_scroll(struct ui *, const struct model *, const struct binding *, int);
static int do_view_copy(struct ui *, const struct model *, const struct binding *, int);
static int do_back(struct ui *, const struct model *, const struct binding *, int);
static int do_pick_move(struct ui *, const struct model *, const struct binding *, int);
static int do_pick_open(struct ui *, const struct model *, const struct binding *, int);
static int do_pick_back(struct ui *, const struct model *, const struct binding *, int);
static int do_err_move(struct ui *, const struct model *, const struct binding *, int);
static int do_err_open(struct ui *, const struct model *, const struct binding *, int);
static int do_reschedule(struct ui *, const struct model *, const struct binding *, int);
static int do_sched_move(struct ui *, const struct model *, const struct binding *, int);
static int do_sched_pause(struct ui *, const struct model *, const struct binding *, int);
static int do_sched_details(struct ui *, const struct model *, const struct binding *, int);
static int do_hist_span(struct ui *, const struct model *, const struct binding *, int);

#define F PANE_BIT(PANE_FAILED)
#define U PANE_BIT(PANE_FUTURE)
#define I PANE_BIT(PANE_INFLIGHT)
#define N PANE_BIT(PANE_DUE)
#define D PANE_BIT(PANE_DONE)

/* One binding per row reads as the reference card it is: */
/* clang-format off */
static const struct binding bindings[] = {
    /* the main screen: looking */
    {BIND_MAIN, {'?', 'h'}, "? h", PANES_ALL, 0, do_help, 0, "this help", NULL, "help"},
    {BIND_MAIN, {'q'}, "q", PANES_ALL, 0, do_quit, 0, "quit", NULL, "quit"},
    {BIND_MAIN, {KEY_APP_TAB}, "Tab", PANES_ALL, 0, do_focus, 1, "next pane", NULL, "panes"},
    {BIND_MAIN, {KEY_APP_BTAB}, "S-Tab", PANES_ALL, 0, do_focus, -1, "previous pane", NULL,
        NULL},
    {BIND_MAIN, {'1', '2', '3', '4', '5'}, "1 2 3 4 5", PANES_ALL, 0, do_focus, 0,
        "Due, Future, In-flight, Failed, Done", NULL, NULL},
    {BIND_MAIN, {'j', KEY_APP_DOWN}, "j Down", PANES_ALL, 0, do_move, 1, "move down", NULL, NULL},
    {BIND_MAIN, {'k', KEY_APP_UP}, "k Up", PANES_ALL, 0, do_move, -1, "move up", NULL, NULL},
    {BIND_MAIN, {KEY_APP_PGDN, KEY_APP_PGUP}, "PgDn PgUp", PANES_ALL, 0, do_move, 0, "a page",
        NULL, NULL},
    {BIND_MAIN, {'g', KEY_APP_HOME}, "g Home", PANES_ALL, 0, do_move, APP_MOVE_FIRST, "first task",
        NULL, NULL},
    {BIND_MAIN, {'G', KEY_APP_END}, "G End", PANES_ALL, 0, do_move, APP_MOVE_LAST, "last task",
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
    /* W and K one line each in help (live: refreshed while open), so its page keeps its
     * length */
    {BIND_MAIN, {'W'}, "W", PANES_ALL, 0, do_request, ACT_WORKERS,
        "the workers: last beat, busy, done, failed, tasks held (live)", NULL, "workers"},
    {BIND_MAIN, {'K'}, "K", PANES_ALL, 0, do_request, ACT_KEYS,
        "the task keys with the most due, in flight, failed (live)", NULL, "keys"},
    {BIND_MAIN, {'N'}, "N", PANES_ALL, 0, do_request, ACT_PARTS,
        "the partitions: each one's node and counts (live)", NULL, NULL},
    /* Q, L, S and H short, so help pairs them (the views say the rest) */
    {BIND_MAIN, {'Q'}, "Q", PANES_ALL, 0, do_request, ACT_QUEUES, "the Overview, worst first",
        NULL, "queues"},
    {BIND_MAIN, {'L'}, "L", PANES_ALL, 0, do_request, ACT_AUDIT, "the audit log of actions", NULL,
        "audit"},
    {BIND_MAIN, {'S'}, "S", PANES_ALL, 0, do_request, ACT_SCHEDULES, "the periodic schedules",
        NULL, "schedules"},
    {BIND_MAIN, {'H'}, "H", PANES_ALL, 0, do_request, ACT_HISTORY, "the history per minute",
        NULL, "history"},
    {BIND_MAIN, {'/'}, "/", PANES_ALL, 0, do_search, 0,
        "search the pane on the server (ids, payloads; on Failed also errors and traces), "
        "in bounded steps, so millions of tasks are fine; smart case (xaf finds XAF, XAF "
        "only XAF); Esc clears it", NULL, "search"},
    {BIND_MAIN, {' '}, "space", PANES_ALL, KB_SELECTED, do_mark, 0,
        "mark / unmark and move down; r and d then act on all marked tasks of the pane at "
        "once (all or nothing)", NULL, "mark"},
    {BIND_MAIN, {KEY_APP_ESC}, "Esc", PANES_ALL, 0, do_escape, 0,
        "clear the marks, then the search, then back to the Overview", NULL, NULL},
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
    {BIND_MAIN, {'t'}, "t", N | U, KB_WRITE | KB_SELECTED, do_reschedule, 0,
        "Due or Future: move the selected task to a new time you type (10m from now, or "
        "an RFC 3339 time); asks y/N",
        "t gives a scheduled task a new time: go to Due (1) or Future (2)", "time"},
    {BIND_MAIN, {'e'}, "e", F, KB_WRITE | KB_SELECTED, do_request, ACT_EDIT,
        "Failed: fix and requeue: the payload opens as JSON in $VISUAL or $EDITOR; after "
        "you save and quit, shows what changed and asks y/N",
        "e fixes a failed task's payload: go to Failed (4)", "fix"},
    {BIND_MAIN, {'c'}, "c", I, KB_WRITE | KB_SELECTED, do_confirm, ACT_CANCEL,
        "In-flight: cancel the selected running task (asks y/N): it goes to Failed and its "
        "worker stops the handler",
        "c cancels a running task: go to In-flight (3)", "cancel"},
    {BIND_MAIN, {'x'}, "x", I, KB_WRITE, do_request, ACT_REAP,
        "In-flight: return expired leases now (reap)",
        "x recovers expired leases: go to In-flight (3)", "reap"},
    {BIND_MAIN, {'P'}, "P", PANES_ALL, KB_WRITE, do_pause_queue, 0,
        "pause the queue: workers claim nothing (asks how long, why, then y/N); on a paused "
        "queue: resume it", NULL, "pause"},
    {BIND_MAIN, {'T'}, "T", PANES_ALL, KB_WRITE, do_throttle, 0,
        "throttle the queue live: a rate and/or a concurrency limit for all workers (asks "
        "each, how long, why, then y/N); on a throttled queue: lift it", NULL, "throttle"},

    /* text views: details, help, the audit log, the workers */
    {BIND_VIEW, {'j', KEY_APP_DOWN}, "j Down", PANES_ALL, 0, do_scroll, 1, "scroll down", NULL,
        NULL},
    {BIND_VIEW, {'k', KEY_APP_UP}, "k Up", PANES_ALL, 0, do_scroll, -1, "scroll up", NULL, NULL},
    {BIND_VIEW, {KEY_APP_PGDN, ' '}, "PgDn space", PANES_ALL, 0, do_scroll, APP_MOVE_PAGE_DOWN,
        "a page down", NULL, NULL},
    {BIND_VIEW, {KEY_APP_PGUP}, "PgUp", PANES_ALL, 0, do_scroll, APP_MOVE_PAGE_UP, "a page up",
        NULL, NULL},
    {BIND_VIEW, {KEY_APP_WHEEL_DOWN, KEY_APP_WHEEL_UP}, "mouse", PANES_ALL, 0, do_scroll, 3,
        "the wheel scrolls", NULL, NULL},
    {BIND_VIEW, {'g'}, "g", PANES_ALL, 0, do_scroll, APP_MOVE_FIRST, "the top", NULL, NULL},
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
    {BIND_PICK, {'g', KEY_APP_HOME}, "g Home", PANES_ALL, 0, do_pick_move, APP_MOVE_FIRST,
        "first queue", NULL, NULL},
    {BIND_PICK, {'G', KEY_APP_END}, "G End", PANES_ALL, 0, do_pick_move, APP_MOVE_LAST,
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
    {BIND_ERRS, {'g', KEY_APP_HOME}, "g Home", PANES_ALL, 0, do_err_move, APP_MOVE_FIRST,
        "largest group", NULL, NULL},
    {BIND_ERRS, {'G', KEY_APP_END}, "G End", PANES_ALL, 0, do_err_move, APP_MOVE_LAST,
        "smallest group", NULL, NULL},
    {BIND_ERRS, {KEY_APP_ENTER}, "Enter", PANES_ALL, 0, do_err_open, 0,
        "show the group's tasks in Failed", NULL, NULL},
    {BIND_ERRS, {'q', KEY_APP_ESC}, "q Esc", PANES_ALL, 0, do_back, 0, "back", NULL, NULL},

    /* the Schedules view */
    {BIND_SCHED, {'j', KEY_APP_DOWN}, "j Down", PANES_ALL, 0, do_sched_move, 1, "next schedule",
        NULL, NULL},
    {BIND_SCHED, {'k', KEY_APP_UP}, "k Up", PANES_ALL, 0, do_sched_move, -1,
        "previous schedule", NULL, NULL},
    {BIND_SCHED, {KEY_APP_PGDN, KEY_APP_PGUP}, "PgDn PgUp", PANES_ALL, 0, do_sched_move, 0,
        "a page", NULL, NULL},
    {BIND_SCHED, {'g', KEY_APP_HOME}, "g Home", PANES_ALL, 0, do_sched_move, APP_MOVE_FIRST,
        "first schedule", NULL, NULL},
    {BIND_SCHED, {'G', KEY_APP_END}, "G End", PANES_ALL, 0, do_sched_move, APP_MOVE_LAST,
        "last schedule", NULL, NULL},
    {BIND_SCHED, {KEY_APP_ENTER}, "Enter", PANES_ALL, 0, do_sched_details, 0,
        "the last run's task in details (what delayq show says)", NULL, NULL},
    {BIND_SCHED, {'q', KEY_APP_ESC}, "q Esc", PANES_ALL, 0, do_back, 0, "back", NULL, NULL},
    {BIND_SCHED, {'P'}, "P", PANES_ALL, KB_WRITE, do_sched_pause, 0,
        "pause the selected schedule: it fires no more until resumed (asks y/N); on a paused "
        "one: resume it from its next time (what it missed is not run)", NULL, NULL},

    /* the History view */
    {BIND_HIST, {'['}, "[", PANES_ALL, 0, do_hist_span, -1, "a shorter span", NULL, NULL},
    {BIND_HIST, {']'}, "]", PANES_ALL, 0, do_hist_span, 1, "a longer span", NULL, NULL},
    {BIND_HIST, {KEY_APP_REDRAW}, "Ctrl-L", PANES_ALL, 0, do_redraw, 0, "redraw and read now",
        NULL, NULL},
    {BIND_HIST, {'q', KEY_APP_ESC}, "q Esc", PANES_ALL, 0, do_back, 0, "back", NULL, NULL},
};
/* clang-format on */

#undef F
#undef U
#undef I
#undef N
#undef D

#define NBINDINGS (sizeof bindings / sizeof bindings[0])

/* ---- the handlers: a row's arguments to one of app.c's transitions ---------------- */

static int
do_move(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_move(ui, m, b->arg);
}

static int
do_quit(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return APP_QUIT;
}

static int
do_help(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_open_help(ui);
}

static int
do_focus(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (b->arg == 1 || b->arg == -1) /* Tab, Shift-Tab */
        return app_focus(ui, (ui->focus + PANE_COUNT + b->arg) % PANE_COUNT);
    return app_focus(ui, key - '1');
}

static int
do_pause(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_toggle_refresh(ui);
}

static int
do_redraw(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return APP_REDRAW | (ui->mode == MODE_MAIN || ui->mode == MODE_HISTORY ? APP_REFETCH : 0);
}

/* Asks the loop for action b->arg, on the selected task when the binding needs one. */
static int
do_request(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_ask(ui, (enum action)b->arg,
                   (b->flags & KB_SELECTED) ? app_selected_id(ui, m) : NULL);
}

static int
do_mark(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_mark(ui, m);
}

static int
do_search(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (ui->focus == PANE_DONE) { /* done records keep no payload: nothing to search */
        app_status(ui, true, "/ searches Due, Future, In-flight and Failed (1-4)");
        return APP_REDRAW;
    }
    return app_search_prompt(ui);
}

static int
do_escape(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_escape(ui);
}

/* r, d, p: y/N before action b->arg (app_confirm: on a group or search, all of it). */
static int
do_confirm(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_confirm(ui, m, (enum action)b->arg, (b->flags & KB_MARKS) != 0);
}

static int
do_pause_queue(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_pause_prompt(ui, m);
}

static int
do_throttle(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_throttle_prompt(ui, m);
}

static int
do_requeue_after(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_delay_prompt(ui, m);
}

static int
do_reschedule(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_reschedule_prompt(ui, m);
}

static int
do_bulk(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_bulk(ui, m, (enum action)b->arg);
}

static int
do_scroll(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_scroll(ui, b->arg);
}

static int
do_back(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_back(ui);
}

/* y in a text view: only the details have something to copy. */
static int
do_view_copy(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (ui->mode != MODE_DETAILS)
        return 0;
    app_request(ui, ACT_COPY);
    return APP_ACTION;
}

static int
do_pick_move(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_pick_move(ui, b->arg);
}

/* q and Esc in the picker: back to the queue shown; in the picker opened at start there
 * is none (the unused default queue would look healthy): Esc stays, q quits. */
static int
do_pick_back(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    if (!ui->pick_first)
        return app_back(ui);
    if (key == 'q')
        return APP_QUIT;
    app_status(ui, false, "no queue is shown yet: Enter opens the one selected, q quits");
    return APP_REDRAW;
}

static int
do_pick_open(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_pick_open(ui);
}

static int
do_err_move(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_err_move(ui, b->arg);
}

static int
do_err_open(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_err_open(ui);
}

static int
do_sched_move(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_sched_move(ui, b->arg);
}

static int
do_sched_pause(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_sched_pause_prompt(ui);
}

static int
do_sched_details(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_sched_details(ui);
}

static int
do_hist_span(struct ui *ui, const struct model *m, const struct binding *b, int key)
{
    return app_history_span(ui, b->arg);
}

/* ---- looking a key up, and what help and the hints say ---------------------------- */

/* The move a key makes where one row binds a pair (PgDn PgUp, the wheel). */
static int
signed_arg(const struct binding *b, int key)
{
    if (key == KEY_APP_PGUP)
        return APP_MOVE_PAGE_UP;
    if (key == KEY_APP_PGDN)
        return APP_MOVE_PAGE_DOWN;
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
        for (size_t k = 0; k < BIND_KEYS && bindings[i].keys[k] != 0; k++)
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

int
keymap_key(struct ui *ui, const struct model *m, int key)
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
    case MODE_SCHEDULES:
        return mode_key(ui, m, BIND_SCHED, key);
    case MODE_HISTORY:
        return mode_key(ui, m, BIND_HIST, key);
    case MODE_INPUT:
        return app_input_key(ui, m, key);
    case MODE_CONFIRM:
        return app_confirm_key(ui, key);
    }
    return 0;
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
    {BIND_PICK, false, "In the Overview (Q)"},
    {BIND_ERRS, false, "In the Errors view (E)"},
    {BIND_SCHED, false, "In the Schedules view (S)"},
    {BIND_SCHED, true, "Schedules view actions (the schedule script, as delayq schedule pause)"},
    {BIND_HIST, false, "In the History view (H): 1h, 6h, 24h"},
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
keymap_help_lines(void)
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
keymap_help_line(size_t i, char *buf, size_t size)
{
    struct help_pick p = {i, 0, buf, size};

    buf[0] = '\0';
    help_walk(pick_line, &p);
}

size_t
keymap_hints(const struct ui *ui, int cols, char *buf, size_t size)
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
keymap_bound(int key)
{
    return binding_for(BIND_MAIN | BIND_VIEW | BIND_PICK | BIND_ERRS | BIND_SCHED | BIND_HIST,
                       key) != NULL;
}

size_t
keymap_bound_keys(int *keys, size_t max, const char **labels)
{
    size_t n = 0;

    for (size_t i = 0; i < NBINDINGS; i++)
        for (size_t k = 0; k < BIND_KEYS && bindings[i].keys[k] != 0; k++) {
            if (n < max) {
                keys[n] = bindings[i].keys[k];
                labels[n] = bindings[i].label;
            }
            n++;
        }
    return n;
}
