/* SPDX-License-Identifier: MIT */
/*
 * app.h: the inspector's UI state and what a key does to it. Pure: the transitions change
 * state and return reaction flags (redraw, refetch, quit, run an action); they never
 * draw and never call Redis. Every change of UI state is a function here, so the unit
 * tests reach all of them; which key makes which change is the key table's
 * (keymap.h); top.c (the loop) performs the reactions.
 */
#ifndef DQ_TUI_APP_H
#define DQ_TUI_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "model.h"

struct overview; /* overview.h */

enum mode {
    MODE_MAIN,
    MODE_DETAILS,
    MODE_HELP,
    MODE_CONFIRM,
    MODE_INPUT,
    MODE_PICK,
    MODE_ERRORS,
    MODE_SCHEDULES, /* the Schedules view (S) */
    MODE_HISTORY,   /* the History view (H): the per-minute rollups */
};

enum action {
    ACT_NONE,
    ACT_REQUEUE,       /* failed: requeue the selected task now */
    ACT_DROP,          /* failed or future: drop the selected task (after y) */
    ACT_REAP,          /* in flight: return expired leases now */
    ACT_DETAILS,       /* load the selected task's details */
    ACT_RUN_NOW,       /* future: make the selected task due now */
    ACT_REQUEUE_DELAY, /* failed: requeue after the typed delay (input) */
    ACT_REQUEUE_ALL,   /* failed: requeue all (or the filter's), spread over ui->spread */
    ACT_DROP_ALL,      /* failed: drop all (or the filter's) */
    ACT_AUDIT,         /* show the audit log */
    ACT_COPY,          /* copy the payload (or the trace, in details) with OSC 52 */
    ACT_SEARCH,        /* failed: search errors and payloads on the server (input) */
    ACT_UNFILTER,      /* end the search */
    ACT_QUEUES,        /* load the server's queues for the picker */
    ACT_SWITCH,        /* picker: show the queue picked (pick_names[pick_sel]) */
    ACT_WORKERS,       /* show the worker registry */
    ACT_PAUSE_FOR,     /* pause: the duration was typed (input); ask the reason next */
    ACT_PAUSE_REASON,  /* pause: the reason was typed (input); confirm next */
    ACT_PAUSE,         /* pause the queue for pause_for, with the reason (input) */
    ACT_RESUME,        /* end the queue's pause */
    /* fix and requeue */
    ACT_EDIT,    /* failed: read the task, open its payload in the editor (top.c) */
    ACT_REPLACE, /* failed: requeue it with the edited payload (after y) */
    /* error groups (PROTOCOL.md 4.6) */
    ACT_ERRORS,         /* load the error groups for the Errors view (E) */
    ACT_REQUEUE_FILTER, /* failed: requeue every task of the group or search shown (after y) */
    ACT_DROP_FILTER,    /* failed: drop every task of the group or search shown (after y) */
    ACT_SPREAD,         /* A: the spread window was typed (input); confirm next */
    ACT_CANCEL,         /* in flight: cancel the selected running task (after y) */
    /* keyed tasks */
    ACT_RESCHEDULE_AT, /* due or future: the new time was typed (input); confirm next */
    ACT_RESCHEDULE,    /* due or future: move the task to the time typed (after y) */
    /* periodic schedules (PROTOCOL.md 5.30) */
    ACT_SCHEDULES,    /* load the schedules and their last runs for the Schedules view (S) */
    ACT_SCHED_PAUSE,  /* Schedules view: pause the selected schedule (after y) */
    ACT_SCHED_RESUME, /* Schedules view: resume the selected schedule (after y) */
    /* the live throttle (PROTOCOL.md 8.4) */
    ACT_THROTTLE_RATE,   /* throttle: the rate was typed (input); ask the concurrency next */
    ACT_THROTTLE_CONC,   /* throttle: the concurrency was typed; ask how long next */
    ACT_THROTTLE_FOR,    /* throttle: the duration was typed; ask the reason next */
    ACT_THROTTLE_REASON, /* throttle: the reason was typed (input); confirm next */
    ACT_THROTTLE,        /* throttle the queue to throttle_rate / throttle_conc for pause_for */
    ACT_THROTTLE_OFF,    /* lift the queue's throttle */
    /* per-key limits (PROTOCOL.md 4.10, 5.31) */
    ACT_KEYS, /* the Keys view (K): the task keys with the most tasks, as delayq keys */
    /* history (PROTOCOL.md, "History: per-minute rollups") */
    ACT_HISTORY, /* the History view (H): the span's rollups and the audit log's marks */
    /* partitioned queues (PROTOCOL.md 14) */
    ACT_PARTS, /* the Partitions view (N): each partition's node and counts */
    ACT_COUNT, /* how many there are (jobs.c has a row for each); not an action */
};

/* Bulk actions (r and d on a group or search, A, X) on more than this many tasks, or on
 * a search (whose count is not known before it ends), ask for the queue's name to be
 * typed; on this many or fewer, y/N. Fixed, so every operator meets the same rule. */
#define APP_BULK_TYPED_OVER 1

enum {
    APP_REDRAW = 1,
    APP_REFETCH = 2,
    APP_QUIT = 4,
    APP_ACTION = 8, /* perform ui->action on ui->action_id */
};

/* Where a pane is laid out (for mouse clicks). */
struct pane_box {
    int row, col, height, width; /* height 0: not shown */
};

/* What the view's layout step computed for one screen size and mode (view_layout). */
struct layout {
    int rows_visible;                  /* task rows a pane shows (or lines, in a text view) */
    struct pane_box boxes[PANE_COUNT]; /* panes on screen */
    bool tabs;                         /* small screen: a tab bar and the focused pane */
    int scroll_max;                    /* details and help: the last first line */
};

/* What a schedule's last run became, for the Schedules view: its task looked up (jobs.c)
 * for the rows shown only, so a refresh costs one lookup per visible row at most. */
enum sched_run {
    SCHED_RUN_UNKNOWN = 0, /* not looked up (the row was not shown) or the lookup failed */
    SCHED_RUN_NEVER,       /* it has not fired yet */
    SCHED_RUN_SCHEDULED,   /* its task waits (due, or to retry after a failure) */
    SCHED_RUN_INFLIGHT,    /* a worker runs it */
    SCHED_RUN_DONE,        /* it finished (kept by done retention) */
    SCHED_RUN_FAILED,      /* it is in the failed set */
    SCHED_RUN_GONE,        /* nowhere: finished and not kept, or dropped */
};

struct sched_last {
    enum sched_run run;
    uint32_t attempt; /* of the task (done: the run that finished) */
    int64_t since_ms; /* in flight: claimed; done: finished; failed: failed; -1: none */
    int64_t took_ms;  /* done: from its claim to its ack; -1: none */
    char worker[128]; /* in flight, done: who ran it (bytes from Redis, escaped when drawn) */
    char text[200];   /* failed: "reason: error", scheduled: its last error (first lines) */
};

struct ui {
    int focus;              /* PANE_* */
    size_t sel[PANE_COUNT]; /* selected row, as an index into the whole pane */
    size_t top[PANE_COUNT]; /* first row shown (the fetch offset) */
    bool moved[PANE_COUNT]; /* the operator moved the selection there (else: the top row) */
    int rows_visible;       /* rows a pane shows (app_set_layout) */
    struct pane_box boxes[PANE_COUNT]; /* where the panes are (app_set_layout) */
    enum mode mode;
    int scroll; /* details and help */
    char status[256];
    bool status_error;
    bool paused, read_only, no_color;
    char read_only_why[200]; /* "started with --read-only", or what Redis refused */
    bool insecure;           /* TLS without checks (--tls-insecure): the INSECURE badge */
    int64_t refresh_ms;
    int64_t retry_in_ms; /* while disconnected: until the next attempt */
    enum action action, confirm_action;
    char action_id[DQ_ID_MAX + 1];
    char **detail; /* details view lines (owned) */
    size_t ndetail;
    char detail_title[64];
    enum action detail_act;   /* what opened the details view (ACT_WORKERS refreshes) */
    char *detail_copy;        /* what y copies in the details view (owned; may be NULL) */
    char **marks[PANE_COUNT]; /* ids marked with space, per pane (owned) */
    size_t nmarks[PANE_COUNT];
    char filter[DQ_NEEDLE_MAX + 1]; /* pane filter_pane shows search matches for this ("": off) */
    int filter_pane;
    int64_t search_scanned, search_total;
    bool search_done;
    char prompt[800];              /* MODE_INPUT: the question */
    char input[DQ_NEEDLE_MAX + 1]; /* MODE_INPUT: what was typed */
    char pause_for[32];            /* pause and throttle: the duration typed ("": until ended) */
    char throttle_rate[32];        /* throttle: the rate typed ("": none) */
    char throttle_conc[16];        /* throttle: the concurrency typed ("": none) */
    char spread[32];               /* A: the window typed first ("": at once) */
    enum action input_action;      /* MODE_INPUT: what Enter does */
    bool confirm_typed;            /* MODE_INPUT: Enter performs it if the queue was named */
    /* MODE_PICK: the server's queues with their due, future, in-flight, failed counts */
    bool pick_first;   /* the picker opened at start: nothing is behind it (Esc stays) */
    char **pick_names; /* owned */
    int64_t (*pick_counts)[4];
    size_t npick, pick_sel;
    int64_t pick_total; /* queues registered (more than listed when there are many) */
    /* the Overview: the picker's queues with their overview rows, worst first (owned;
     * NULL: the plain picker of names and counts) */
    struct overview *pick_ov;
    bool from_overview; /* the queue shown was opened from the Overview: Esc goes back */
    bool ascii;         /* the locale is not UTF-8: sparklines in ASCII (term_utf8) */
    /* MODE_ERRORS: the error groups (owned), the selected one; the group Failed shows */
    dq_errors errors;
    size_t err_sel;
    char group[DQ_GROUP_ID_MAX + 1];      /* "": Failed shows every failed task */
    char group_sig[DQ_SIGNATURE_MAX + 1]; /* its signature, for titles and prompts */
    /* MODE_SCHEDULES: the schedules (owned), their last runs (owned, scheds.n of them),
     * the selected one and the first shown */
    dq_schedules scheds;
    struct sched_last *sched_last;
    size_t sched_sel, sched_top;
    enum mode detail_back; /* where the details view goes back to (the Schedules view) */
    /* MODE_HISTORY: the span shown (an index into app_hist_spans), its rollups and the
     * audit log's entries for the marks (owned; have_hist: read at least once) */
    int hist_span;      /* asked for ([ ]) */
    int hist_span_read; /* what hist covers */
    dq_history hist;
    dq_audit hist_audit;
    bool have_hist;
};

void ui_init(struct ui *ui, bool read_only, bool no_color);
void ui_free(struct ui *ui);

/* Moves beyond a plain row count (+n, -n) for app_move, app_scroll, app_pick_move and
 * app_err_move. */
enum { APP_MOVE_PAGE_DOWN = 1000, APP_MOVE_PAGE_UP, APP_MOVE_FIRST, APP_MOVE_LAST };

/*
 * What a key does to the state: the key table (keymap.c) maps each key to one of these.
 * Each returns the reaction flags (APP_*); @m is the last snapshot (totals, the selected
 * task, the queue's name and whether it is paused).
 */
/* The focused pane's selection by @move; APP_REFETCH when its window moved. */
int app_move(struct ui *ui, const struct model *m, int move);
int app_focus(struct ui *ui, int pane);
int app_open_help(struct ui *ui);
/* Back to the main screen from a view, the picker or the Errors view. */
int app_back(struct ui *ui);
/* Z: stops or restarts the refreshes. */
int app_toggle_refresh(struct ui *ui);
/* Asks the loop for @act on task @id (NULL: none): APP_ACTION. */
int app_ask(struct ui *ui, enum action act, const char *id);
/* space: marks or unmarks the selected task and moves down. */
int app_mark(struct ui *ui, const struct model *m);
/* /: the search prompt for the focused pane (on Failed it ends the group shown). */
int app_search_prompt(struct ui *ui);
/* Esc on the main screen: ends the group shown, else clears the marks, else ends the
 * pane's search. */
int app_escape(struct ui *ui);
/* r, d, p: asks y/N before @act on the marked set (@marks: the key acts on marks) or the
 * selected task; on Failed with a group or a search shown and nothing marked, r and d
 * act on all of it (the bulk rule, APP_BULK_TYPED_OVER). */
int app_confirm(struct ui *ui, const struct model *m, enum action act, bool marks);
/* P: resume a paused queue (asks y/N), else ask how long, then why, then y/N. */
int app_pause_prompt(struct ui *ui, const struct model *m);
/* T: lift a throttled queue's throttle (asks y/N), else ask the rate, the concurrency,
 * how long, then why, then y/N. */
int app_throttle_prompt(struct ui *ui, const struct model *m);
/* R: asks for the delay to requeue the selected task after. */
int app_delay_prompt(struct ui *ui, const struct model *m);

/* t on a Due or Future row: asks for the new time (a duration from now or an RFC 3339
 * time), then y/N, then ACT_RESCHEDULE. */
int app_reschedule_prompt(struct ui *ui, const struct model *m);
/* A (ACT_REQUEUE_ALL) and X (ACT_DROP_ALL): every failed task, or the filter's: A asks
 * for a spread window first; then both ask as the bulk rule says. */
int app_bulk(struct ui *ui, const struct model *m, enum action act);
/* A text view (details, help): scrolls; the layout keeps it within the text. */
int app_scroll(struct ui *ui, int move);
/* The queue picker: moves; Enter shows the queue picked (ACT_SWITCH). */
int app_pick_move(struct ui *ui, int move);
int app_pick_open(struct ui *ui);
/* The Errors view: moves; Enter shows the group's tasks in Failed, paged on the server. */
int app_err_move(struct ui *ui, int move);
int app_err_open(struct ui *ui);
/* The Schedules view (S): moves; P asks y/N to pause the selected schedule, or to resume
 * it when it is paused. APP_REFETCH when the rows shown changed (their last runs are
 * looked up again). */
int app_sched_move(struct ui *ui, int move);
int app_sched_pause_prompt(struct ui *ui);
/* Enter: the details of the selected schedule's last task (back: to the view). */
int app_sched_details(struct ui *ui);
/* The selected schedule, or NULL. Borrowed from @ui. */
const dq_schedule *app_selected_schedule(const struct ui *ui);

/* The History view's spans: how far back, and the step of one column. */
struct hist_span {
    int64_t span_ms, step_ms;
    const char *name; /* "1h", "6h", "24h" */
};
#define APP_HIST_SPANS 3
extern const struct hist_span app_hist_spans[APP_HIST_SPANS];

/* [ and ] in the History view: a shorter or longer span (@dir -1 or +1); APP_REFETCH
 * when it changed (the view reads the new span at once). */
int app_history_span(struct ui *ui, int dir);

/* MODE_INPUT, the prompt line: printable characters, backspace; Enter performs, Esc
 * cancels (a typed confirmation performs only if the queue's name was typed). */
int app_input_key(struct ui *ui, const struct model *m, int key);
/* MODE_CONFIRM: y or Y performs the action asked about; any other key cancels. */
int app_confirm_key(struct ui *ui, int key);

/* A paste (@len bytes) arrived: in a prompt it is text, up to its first line break (a
 * pasted newline never submits); anywhere else it is ignored, so pasted text never
 * acts as command keys or answers a y/N. */
int app_paste(struct ui *ui, const char *text, size_t len);

/* A click at (@row, @col): focuses the pane there and selects the row clicked. */
int app_click(struct ui *ui, const struct model *m, int row, int col);

/* The selected task of the focused pane as last fetched, or NULL. Borrowed from @m. */
const dq_task *app_selected_task(const struct ui *ui, const struct model *m);

/* The id of the selected task in the focused pane, or NULL. */
const char *app_selected_id(const struct ui *ui, const struct model *m);

/* The selected task's id in each pane ("" when none), to follow it across a refresh. */
struct selection {
    char id[PANE_COUNT][DQ_ID_MAX + 1];
};
void app_selection_save(const struct ui *ui, const struct model *m, struct selection *s);

/* After a refresh: a selected task still on its pane's page stays selected where it
 * moved (tasks ahead of it were claimed or added); otherwise the row number stays. In a
 * pane where the operator has not moved yet, the selection stays on the top row (new
 * failures do not push it down before anyone looked). */
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

/* The picker shows @ov's rows (taken; in the order of its names): the Overview. */
void app_set_overview(struct ui *ui, struct overview *ov);

/* Replaces the details lines with @text split at newlines. */
void app_set_detail(struct ui *ui, const char *text);

/* fix and requeue */
/* Asks y/N before @act over a text that says what it will do (@text split at newlines,
 * under @title). */
void app_confirm_text(struct ui *ui, enum action act, const char *title, const char *text);

/* The fix-and-requeue confirmation of task @id: what changes from payload @old to @new_
 * (a short diff of their JSON) and what y does; y asks for ACT_REPLACE. False when out
 * of memory (nothing asked). */
bool app_confirm_fix(struct ui *ui, const char *id, const void *old, size_t old_len,
                     const void *new_, size_t new_len);

/* Takes the layout the view computed for the screen: rows per pane, pane boxes, and
 * the scroll position kept within the text shown. */
void app_set_layout(struct ui *ui, const struct layout *l);

/* The action a key asked for (APP_ACTION), cleared so it is performed once. */
enum action app_take_action(struct ui *ui);

/* Asks for @act as if its key had been pressed (the loop opens the picker by itself). */
void app_request(struct ui *ui, enum action act);

/* A key arrived while no action runs: the last result on the status line has been read. */
void app_key_seen(struct ui *ui, bool action_running);

/* A search of the focused pane for what was typed begins (ACT_SEARCH); false when
 * nothing was typed. The pane's selection starts at its first match. */
bool app_search_start(struct ui *ui);

/* The search ended (ACT_UNFILTER): the pane shows its tasks again. */
void app_search_end(struct ui *ui);

/* A search step reported how far it got; @done: scanned everything, or enough found. */
void app_search_progress(struct ui *ui, int64_t scanned, int64_t total, bool done);

/* A refresh arrived: faster (down to 250 ms) while counts move, slower (up to 5 s)
 * while nothing does. */
void app_refreshed(struct ui *ui, bool counts_moved);

/* The first refresh interval (--refresh), before it adapts. */
void app_refresh_start(struct ui *ui, int64_t ms);

/* While disconnected: @ms until the next attempt, for the banner's countdown. */
void app_set_retry(struct ui *ui, int64_t ms);

/* Another queue is shown: selections, marks and the search start afresh. */
void app_queue_switched(struct ui *ui, const char *queue);

/* What an action found on the Redis thread, applied to the UI by app_action_done. */
struct action_result {
    enum action act; /* what ran */
    bool refresh;    /* a refresh of the view open (W): applied only while it is open */
    bool error;
    char status[300];
    bool clear_marks; /* the marked set of @pane was acted on */
    int pane;
    char *detail; /* text for the details view (owned; NULL: none) */
    char *copy;   /* what y copies there (owned; may be NULL) */
    char title[64];
    char **queues; /* the picker's queues (owned; NULL: none) */
    int64_t (*counts)[4];
    size_t nqueues;
    int64_t total;
    struct overview *overview; /* the picker's rows, in the order of queues (owned) */
    dq_errors errors;          /* the Errors view's groups (owned); have_errors: open it */
    bool have_errors;
    dq_schedules scheds; /* the Schedules view's (owned) and their last runs (owned) */
    struct sched_last *sched_last;
    bool have_scheds; /* open the Schedules view with them (refresh: update it) */
    dq_history hist;  /* the History view's rollups and audit entries (owned) */
    dq_audit audit;
    int hist_span;  /* the span they cover (app_hist_spans) */
    bool have_hist; /* open the History view with them (refresh: update it) */
};

/* How often the views that refresh themselves read again while open: the Workers view
 * (W) the registry, the Keys view (K) the keys (one keys call), the Schedules view (S)
 * the schedules and their last runs, the Overview its rows. */
#define APP_WORKERS_REFRESH_MS 2000

/* The History view reads again when the server's minute changes; the last hour also at
 * least this often (its current minute grows all minute long, and a read of 60 minutes is
 * cheap: about 1 ms of Redis time). The 6 h and 24 h spans read 360 and 1440 minutes
 * (10 to 20 and 35 to 55 ms, one HMGET each): once a minute. */
#define APP_HISTORY_REFRESH_MS 15000

/* Whether the view open is one that refreshes by itself (W, K, S, H, the Overview). */
bool app_view_refreshes(const struct ui *ui);

/* How long until the view open reads again, in ms from its last read: the History view
 * at the next minute of the server's clock (a little after it, so the minute that ended
 * is whole), for the last hour capped at APP_HISTORY_REFRESH_MS; the others
 * APP_WORKERS_REFRESH_MS. */
int64_t app_view_refresh_ms(const struct ui *ui);

/* What reads the view open again (ACT_WORKERS, ACT_KEYS, ACT_PARTS, ACT_SCHEDULES); ACT_NONE:
 * nothing. */
enum action app_view_refresh_action(const struct ui *ui);

/* Applies @r: the status line, marks, and the details view or the picker it opens.
 * Takes what @r owns (its pointers are NULL afterwards); @current is the queue shown. */
void app_action_done(struct ui *ui, struct action_result *r, const char *current);

/* The filter r, d, A and X act on when there are no marks: the group the Failed pane
 * shows, else its search; kind DQ_FILTER_NONE when neither (borrows @ui's strings). */
dq_filter app_failed_filter(const struct ui *ui);

/* Frees what @r still owns and zeroes it. */
void app_action_result_free(struct action_result *r);

#endif /* DQ_TUI_APP_H */
