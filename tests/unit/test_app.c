/* SPDX-License-Identifier: MIT */
/*
 * test_app.c: the inspector's UI state changes that the loop (tui/top.c) asks for:
 * search start and end, refresh adaptation, a queue switch, an action's result, the
 * layout handed over. Pure; no terminal, no Redis.
 */
#include "harness/check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/keymap.h"
#include "tui/view.h"

static void
search_starts_on_the_focused_pane_and_ends(void **state)
{
    struct ui ui;

    ui_init(&ui, false, false);
    ui.focus = PANE_FAILED;
    ui.sel[PANE_FAILED] = ui.top[PANE_FAILED] = 7;
    assert_false(app_search_start(&ui)); /* nothing typed: no search */
    assert_string_equal(ui.filter, "");
    strcpy(ui.input, "declined");
    assert_true(app_search_start(&ui));
    assert_string_equal(ui.filter, "declined");
    assert_int_equal(ui.filter_pane, PANE_FAILED);
    assert_int_equal(ui.sel[PANE_FAILED], 0);
    assert_false(ui.search_done);
    app_search_progress(&ui, 1000, 5000, false);
    assert_int_equal(ui.search_scanned, 1000);
    app_search_progress(&ui, 5000, 5000, true);
    assert_true(ui.search_done);
    ui.sel[PANE_FAILED] = 3;
    app_search_end(&ui);
    assert_string_equal(ui.filter, "");
    assert_int_equal(ui.sel[PANE_FAILED], 0);
    assert_string_equal(ui.status, "search cleared");
    ui_free(&ui);
}

static void
refresh_adapts_between_bounds(void **state)
{
    struct ui ui;

    ui_init(&ui, false, false);
    ui.refresh_ms = 1000;
    app_refreshed(&ui, true);
    assert_int_equal(ui.refresh_ms, 500);
    for (int i = 0; i < 5; i++)
        app_refreshed(&ui, true);
    assert_int_equal(ui.refresh_ms, 250); /* never faster */
    for (int i = 0; i < 10; i++)
        app_refreshed(&ui, false);
    assert_int_equal(ui.refresh_ms, 5000); /* never slower */
    ui_free(&ui);
}

static void
queue_switch_forgets_selections_marks_and_search(void **state)
{
    struct ui ui;

    ui_init(&ui, false, false);
    ui.sel[PANE_DUE] = 4;
    ui.top[PANE_FUTURE] = 9;
    strcpy(ui.filter, "x");
    ui.marks[PANE_DUE] = calloc(1, sizeof(char *));
    ui.marks[PANE_DUE][0] = strdup("t1");
    ui.nmarks[PANE_DUE] = 1;
    app_queue_switched(&ui, "billing");
    assert_int_equal(ui.sel[PANE_DUE], 0);
    assert_int_equal(ui.top[PANE_FUTURE], 0);
    assert_int_equal(ui.nmarks[PANE_DUE], 0);
    assert_string_equal(ui.filter, "");
    assert_string_equal(ui.status, "showing queue billing");
    ui_free(&ui);
}

static void
action_result_opens_details_and_takes_its_text(void **state)
{
    struct ui ui;
    struct action_result r = {0};

    ui_init(&ui, false, false);
    r.detail = strdup("id  t1\nstate  failed\n");
    r.copy = strdup("{\"a\":1}");
    strcpy(r.title, "task details");
    app_action_done(&ui, &r, "orders");
    assert_int_equal(ui.mode, MODE_DETAILS);
    assert_int_equal(ui.ndetail, 2);
    assert_string_equal(ui.detail[1], "state  failed");
    assert_string_equal(ui.detail_copy, "{\"a\":1}");
    assert_null(r.detail); /* taken or freed: nothing left to free twice */
    assert_null(r.copy);

    /* an error keeps the mode and says why; marks of the pane stay */
    ui.mode = MODE_MAIN;
    r.error = true;
    strcpy(r.status, "requeue t1: not found");
    r.detail = strdup("ignored");
    app_action_done(&ui, &r, "orders");
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_true(ui.status_error);
    assert_string_equal(ui.status, "requeue t1: not found");
    ui_free(&ui);
}

static void
action_result_opens_the_picker_on_the_current_queue(void **state)
{
    struct ui ui;
    struct action_result r = {0};

    ui_init(&ui, false, false);
    r.queues = calloc(2, sizeof(char *));
    r.queues[0] = strdup("billing");
    r.queues[1] = strdup("orders");
    r.counts = calloc(2, sizeof *r.counts);
    r.counts[1][3] = 5;
    r.nqueues = 2;
    r.total = 2;
    app_action_done(&ui, &r, "orders");
    assert_int_equal(ui.mode, MODE_PICK);
    assert_int_equal(ui.npick, 2);
    assert_int_equal(ui.pick_sel, 1);
    assert_int_equal(ui.pick_counts[1][3], 5);
    assert_null(r.queues);
    ui_free(&ui);
}

static void
layout_keeps_the_scroll_inside_the_text(void **state)
{
    struct ui ui;
    struct layout l;

    ui_init(&ui, false, false);
    app_set_detail(&ui, "a\nb\nc\n");
    ui.mode = MODE_DETAILS;
    ui.scroll = 40;
    view_layout(&ui, 24, 80, &l);
    assert_int_equal(l.scroll_max, 2);
    app_set_layout(&ui, &l);
    assert_int_equal(ui.scroll, 2);
    assert_int_equal(ui.rows_visible, 22);

    /* main screen: four panes from 120 columns, a tab bar below */
    ui.mode = MODE_MAIN;
    view_layout(&ui, 40, 140, &l);
    assert_false(l.tabs);
    for (int p = 0; p < PANE_DONE; p++)
        assert_true(l.boxes[p].height > 0);
    assert_int_equal(l.boxes[PANE_DONE].height, 0);
    /* Done, a record of what finished, is a tab there too (the live panes stay 2x2) */
    ui.focus = PANE_DONE;
    view_layout(&ui, 40, 140, &l);
    assert_true(l.tabs);
    assert_int_equal(l.boxes[PANE_DONE].width, 140);
    assert_int_equal(l.boxes[PANE_FAILED].height, 0);
    ui.focus = PANE_DUE;
    view_layout(&ui, 24, 80, &l);
    assert_true(l.tabs);
    assert_true(l.boxes[ui.focus].height > 0);
    assert_int_equal(l.boxes[(ui.focus + 1) % PANE_COUNT].height, 0);
    ui_free(&ui);
}

static void
take_action_hands_it_over_once(void **state)
{
    struct ui ui;

    ui_init(&ui, false, false);
    app_request(&ui, ACT_QUEUES);
    assert_int_equal(app_take_action(&ui), ACT_QUEUES);
    assert_int_equal(app_take_action(&ui), ACT_NONE);
    app_status(&ui, false, "requeued t1");
    app_key_seen(&ui, true); /* an action still runs: its line stays */
    assert_string_equal(ui.status, "requeued t1");
    app_key_seen(&ui, false);
    assert_string_equal(ui.status, "");
    ui_free(&ui);
}

/* How help must name a key code. */
static const char *
key_name(int key, char *buf)
{
    static const struct {
        int key;
        const char *name;
    } names[] = {
        {KEY_APP_UP, "Up"},
        {KEY_APP_DOWN, "Down"},
        {KEY_APP_PGUP, "PgUp"},
        {KEY_APP_PGDN, "PgDn"},
        {KEY_APP_HOME, "Home"},
        {KEY_APP_END, "End"},
        {KEY_APP_ENTER, "Enter"},
        {KEY_APP_ESC, "Esc"},
        {KEY_APP_TAB, "Tab"},
        {KEY_APP_BTAB, "S-Tab"},
        {KEY_APP_REDRAW, "Ctrl-L"},
        {KEY_APP_WHEEL_UP, "mouse"},
        {KEY_APP_WHEEL_DOWN, "mouse"},
        {' ', "space"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].key == key)
            return names[i].name;
    buf[0] = (char)key;
    buf[1] = '\0';
    return buf;
}

/* Every bound key is named by its binding's label, and every label is in the help. */
static void
every_bound_key_is_in_the_help(void **state)
{
    int keys[128];
    const char *labels[128];
    size_t n = keymap_bound_keys(keys, 128, labels);
    size_t lines = keymap_help_lines();
    char line[256], one[2];

    assert_true(n > 40 && n <= 128);
    for (size_t i = 0; i < n; i++) {
        const char *name = key_name(keys[i], one);
        /* the label names the code as a whole word */
        bool named = false;
        for (const char *p = labels[i]; (p = strstr(p, name)) != NULL; p++) {
            size_t len = strlen(name);
            if ((p == labels[i] || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
                named = true;
        }
        if (!named)
            fail_msg("key %d (%s) is bound under the label \"%s\", which does not name it", keys[i],
                     name, labels[i]);
        bool shown = false;
        for (size_t l = 0; l < lines && !shown; l++) {
            keymap_help_line(l, line, sizeof line);
            char want[64];
            snprintf(want, sizeof want, "  %s  ", labels[i]);
            shown = strstr(line, want) != NULL;
        }
        if (!shown)
            fail_msg("label \"%s\" is not in the help", labels[i]);
    }
    /* and nothing outside the table does anything */
    assert_false(keymap_bound('m'));
    assert_true(keymap_bound('r'));
}

/* A, X, r and d on Failed while a search is shown: they name the search and its count,
 * and the loop gets the search as the filter; with marks, r acts on the marks. */
static void
bulk_keys_act_on_the_search_shown(void **state)
{
    struct model m;
    struct ui ui;
    dq_task tasks[3];

    memset(&m, 0, sizeof m);
    memset(tasks, 0, sizeof tasks);
    char ids[3][8] = {"7", "8", "9"};
    for (int i = 0; i < 3; i++)
        tasks[i].id = ids[i];
    m.pages[PANE_FAILED].tasks = tasks;
    m.pages[PANE_FAILED].n = 3;
    m.pages[PANE_FAILED].total = 3;
    snprintf(m.queue, sizeof m.queue, "orders");
    ui_init(&ui, false, false);
    ui.focus = PANE_FAILED;
    assert_int_equal(app_failed_filter(&ui).kind, DQ_FILTER_NONE);
    strcpy(ui.input, "smtp");
    assert_true(app_search_start(&ui));
    dq_filter f = app_failed_filter(&ui);
    assert_int_equal(f.kind, DQ_FILTER_MATCH);
    assert_string_equal(f.value, "smtp");

    keymap_key(&ui, &m, 'A');
    assert_int_equal(ui.mode, MODE_INPUT);
    assert_non_null(strstr(ui.prompt, "requeue every failed task matching \"smtp\" (3 found"));
    keymap_key(&ui, &m, KEY_APP_ESC);
    keymap_key(&ui, &m, 'X');
    assert_non_null(strstr(ui.prompt, "drop every failed task matching \"smtp\""));
    assert_non_null(strstr(ui.prompt, "type the queue name orders"));
    keymap_key(&ui, &m, KEY_APP_ESC);
    /* d on a search: the queue's name is typed (a search's count is not known yet) */
    keymap_key(&ui, &m, 'd');
    assert_int_equal(ui.mode, MODE_INPUT);
    assert_true(ui.confirm_typed);
    for (const char *c = "orders"; *c; c++)
        keymap_key(&ui, &m, *c);
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_ACTION, APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_DROP_FILTER);
    /* marked tasks come first: r then acts on them, not on the search */
    keymap_key(&ui, &m, ' ');
    keymap_key(&ui, &m, 'r');
    assert_int_equal(ui.confirm_action, ACT_REQUEUE);
    assert_string_equal(ui.action_id, "1 marked tasks");
    keymap_key(&ui, &m, 'n');
    /* read-only refuses them all */
    ui.read_only = true;
    keymap_key(&ui, &m, 'A');
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_non_null(strstr(ui.status, "read-only"));
    m.pages[PANE_FAILED].tasks = NULL; /* the model does not own these */
    ui_free(&ui);
}

/* A model whose Failed pane shows @n tasks of a group (ids not owned: "7" ...). */
static void
group_model(struct model *m, struct ui *ui, dq_task *tasks, int64_t n)
{
    static char ids[3][2] = {"7", "8", "9"};

    memset(m, 0, sizeof *m);
    memset(tasks, 0, 3 * sizeof *tasks);
    for (int i = 0; i < 3; i++)
        tasks[i].id = ids[i];
    m->pages[PANE_FAILED].tasks = tasks;
    m->pages[PANE_FAILED].n = n < 3 ? (size_t)n : 3;
    m->pages[PANE_FAILED].total = n;
    snprintf(m->queue, sizeof m->queue, "billing");
    ui_init(ui, false, false);
    ui->focus = PANE_FAILED;
    snprintf(ui->group, sizeof ui->group, "5d3d4f25ba15735a");
    snprintf(ui->group_sig, sizeof ui->group_sig, "error: exit #: ValueError: invoice #");
}

static void
type(struct ui *ui, const struct model *m, const char *s)
{
    for (; *s; s++)
        keymap_key(ui, m, *s);
}

/* r, d, A and X on a group of more than one task: each asks for the queue's name; a
 * wrong name (or y) changes nothing; on a group of one task, y/N. */
static void
bulk_actions_share_one_rule(void **state)
{
    static const struct {
        int key;
        enum action act;
    } keys[] = {{'r', ACT_REQUEUE_FILTER},
                {'d', ACT_DROP_FILTER},
                {'A', ACT_REQUEUE_ALL},
                {'X', ACT_DROP_ALL}};
    struct model m;
    struct ui ui;
    dq_task tasks[3];

    group_model(&m, &ui, tasks, 151);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        keymap_key(&ui, &m, keys[i].key);
        if (keys[i].key == 'A') { /* the spread first, then the same question */
            assert_int_equal(ui.mode, MODE_INPUT);
            assert_int_equal(ui.input_action, ACT_SPREAD);
            type(&ui, &m, "30s");
            assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_ACTION, 0);
            assert_non_null(strstr(ui.prompt, "spread over 30s"));
        }
        assert_int_equal(ui.mode, MODE_INPUT);
        assert_true(ui.confirm_typed);
        assert_non_null(strstr(ui.prompt, " 151 failed tasks of group 5d3d4f25 \"error:"));
        assert_non_null(
            strstr(ui.prompt, "?\ntype the queue name billing to confirm (Esc cancels): "));
        /* y is not the name: nothing happens */
        keymap_key(&ui, &m, 'y');
        assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_ACTION, 0);
        assert_int_equal(ui.mode, MODE_MAIN);
        assert_non_null(strstr(ui.status, "nothing changed"));
        assert_int_equal(app_take_action(&ui), ACT_NONE);
        /* the name: it is done */
        keymap_key(&ui, &m, keys[i].key);
        if (keys[i].key == 'A') {
            type(&ui, &m, "30s");
            keymap_key(&ui, &m, KEY_APP_ENTER);
        }
        type(&ui, &m, "billing");
        assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_ACTION, APP_ACTION);
        assert_int_equal(app_take_action(&ui), keys[i].act);
    }
    ui_free(&ui);

    /* one task: y/N, for every key alike */
    group_model(&m, &ui, tasks, 1);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        keymap_key(&ui, &m, keys[i].key);
        if (keys[i].key == 'A')
            keymap_key(&ui, &m, KEY_APP_ENTER); /* at once */
        assert_int_equal(ui.mode, MODE_CONFIRM);
        assert_int_equal(ui.confirm_action, keys[i].act);
        assert_int_equal(keymap_key(&ui, &m, 'y') & APP_ACTION, APP_ACTION);
        assert_int_equal(app_take_action(&ui), keys[i].act);
    }
    ui_free(&ui);
}

/* A paste is text in a prompt up to its first line break, and nothing anywhere else:
 * a pasted "XAF\nW" searches for XAF without submitting (or opening W), a pasted "y"
 * answers no question. */
static void
paste_is_text_never_keys(void **state)
{
    struct model m;
    struct ui ui;
    dq_task tasks[3];

    group_model(&m, &ui, tasks, 151);
    ui.group[0] = '\0';
    keymap_key(&ui, &m, '/');
    assert_int_equal(ui.mode, MODE_INPUT);
    keymap_key(&ui, &m, 'x');
    static const char pasted[] = "AF\tinvoice\x1b[2J\nW\n";
    assert_int_equal(app_paste(&ui, pasted, strlen(pasted)) & APP_ACTION, 0);
    assert_int_equal(ui.mode, MODE_INPUT);
    assert_string_equal(ui.input, "xAF invoice[2J");
    assert_int_equal(app_take_action(&ui), ACT_NONE);
    /* a long paste is cut at the input's size */
    char big[600];
    memset(big, 'a', sizeof big);
    app_paste(&ui, big, sizeof big);
    assert_int_equal(strlen(ui.input), DQ_NEEDLE_MAX);
    keymap_key(&ui, &m, KEY_APP_ESC);
    /* on the main screen and in a question: ignored */
    app_paste(&ui, "W", 1);
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_non_null(strstr(ui.status, "paste ignored"));
    ui.sel[PANE_FAILED] = 0;
    keymap_key(&ui, &m, 'r');
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_int_equal(app_paste(&ui, "y", 1) & APP_ACTION, 0);
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_int_equal(app_take_action(&ui), ACT_NONE);
    ui_free(&ui);
}

/* The Workers view's refresh replaces its text and keeps the scroll while it is open;
 * once closed, a refresh that arrives late is dropped and does not open it again. */
static void
workers_view_refreshes_only_while_open(void **state)
{
    struct ui ui;
    struct action_result r = {0};

    ui_init(&ui, false, false);
    r.act = ACT_WORKERS;
    r.detail = strdup("a\nb\nc\n");
    snprintf(r.title, sizeof r.title, "workers of q: 1 live, 0 lost");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_DETAILS);
    assert_true(app_view_refreshes(&ui));
    ui.scroll = 2;
    r.act = ACT_WORKERS;
    r.refresh = true;
    r.detail = strdup("a\nb\nc\nd\n");
    snprintf(r.title, sizeof r.title, "workers of q: 2 live, 0 lost");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.ndetail, 4);
    assert_int_equal(ui.scroll, 2);
    assert_string_equal(ui.detail_title, "workers of q: 2 live, 0 lost");
    /* Esc, then a late refresh: still on the main screen */
    keymap_key(&ui, &(struct model){0}, KEY_APP_ESC);
    assert_int_equal(ui.mode, MODE_MAIN);
    r.act = ACT_WORKERS;
    r.refresh = true;
    r.detail = strdup("x\n");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_null(r.detail);
    /* details of a task do not refresh */
    r.act = ACT_DETAILS;
    r.detail = strdup("id 1\n");
    app_action_done(&ui, &r, "q");
    assert_false(app_view_refreshes(&ui));
    ui_free(&ui);
}

/* K asks for the Keys view; it refreshes (one keys call) while open, keeps its scroll,
 * and a refresh after Esc is dropped. */
static void
keys_view_opens_refreshes_and_goes_back(void **state)
{
    struct ui ui;
    struct model m = {0};
    struct action_result r = {0};

    ui_init(&ui, true, false); /* read-only: a view that only reads is allowed */
    assert_true(keymap_key(&ui, &m, 'K') & APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_KEYS);
    r.act = ACT_KEYS;
    r.detail = strdup("header\n\nDUE KEY\n1 acme\n2 globex\n");
    snprintf(r.title, sizeof r.title, "keys of q: 2 with tasks");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_DETAILS);
    assert_int_equal(app_view_refresh_action(&ui), ACT_KEYS);
    ui.scroll = 1;
    r.act = ACT_KEYS;
    r.refresh = true;
    r.detail = strdup("header\n\nDUE KEY\n1 acme\n2 globex\n3 initech\n");
    snprintf(r.title, sizeof r.title, "keys of q: 3 with tasks");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.ndetail, 6);
    assert_int_equal(ui.scroll, 1);
    assert_string_equal(ui.detail_title, "keys of q: 3 with tasks");
    keymap_key(&ui, &m, KEY_APP_ESC);
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_int_equal(app_view_refresh_action(&ui), ACT_NONE);
    r.act = ACT_KEYS;
    r.refresh = true;
    r.detail = strdup("x\n");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_MAIN);
    ui_free(&ui);
}

/* The picker opened at start has nothing behind it: Esc stays (and says why), q quits;
 * once a queue was opened, Esc goes back as always. */
static void
first_picker_esc_stays_q_quits(void **state)
{
    struct ui ui;
    struct model m;
    char **names = calloc(1, sizeof *names);
    int64_t(*counts)[4] = calloc(1, sizeof *counts);

    memset(&m, 0, sizeof m);
    names[0] = strdup("billing");
    ui_init(&ui, false, false);
    ui.pick_first = true;
    app_set_picker(&ui, names, counts, 1, 1, "default");
    keymap_key(&ui, &m, KEY_APP_ESC);
    assert_int_equal(ui.mode, MODE_PICK);
    assert_non_null(strstr(ui.status, "no queue is shown yet"));
    assert_int_equal(keymap_key(&ui, &m, 'q'), APP_QUIT);
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_ACTION, APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_SWITCH);
    assert_false(ui.pick_first);
    ui.mode = MODE_PICK;
    keymap_key(&ui, &m, KEY_APP_ESC);
    assert_int_equal(ui.mode, MODE_MAIN);
    ui_free(&ui);
}

/* A result holding schedules named @names (in that order), none of them looked up. */
static void
sched_result(struct action_result *r, enum action act, const char *const *names, size_t n)
{
    memset(r, 0, sizeof *r);
    r->act = act;
    r->have_scheds = true;
    r->scheds.now_ms = 1000;
    r->scheds.n = n;
    r->scheds.items = calloc(n, sizeof *r->scheds.items);
    r->sched_last = calloc(n, sizeof *r->sched_last);
    assert_non_null(r->scheds.items);
    for (size_t i = 0; i < n; i++) {
        dq_schedule *s = &r->scheds.items[i];
        s->name = strdup(names[i]);
        s->spec = strdup("");
        s->tz = strdup("");
        s->last_id = strdup("");
        s->by = strdup("alice");
        s->every_ms = 60000;
        s->paused = strcmp(names[i], "b.hourly") == 0;
        s->next_ms = s->paused ? -1 : 61000;
        s->last_ms = -1;
    }
}

/* S opens the Schedules view at its first schedule; a refresh keeps the selection on the
 * schedule it was on (one added before it moves it down); P asks y/N (resume on a paused
 * one) over the view and any answer comes back to it; a refresh after Esc is dropped. */
static void
schedules_view_selects_refreshes_and_asks(void **state)
{
    static const char *const two[] = {"a.daily", "b.hourly"};
    static const char *const three[] = {"0.first", "a.daily", "b.hourly"};
    struct ui ui;
    struct model m = {0};
    struct action_result r;

    ui_init(&ui, false, false);
    assert_int_equal(app_view_refresh_action(&ui), ACT_NONE);
    assert_int_equal(keymap_key(&ui, &m, 'S') & APP_ACTION, APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_SCHEDULES);
    sched_result(&r, ACT_SCHEDULES, two, 2);
    app_action_done(&ui, &r, "q");
    assert_null(r.scheds.items); /* the UI took them */
    assert_int_equal(ui.mode, MODE_SCHEDULES);
    assert_int_equal(app_view_refresh_action(&ui), ACT_SCHEDULES);
    assert_string_equal(app_selected_schedule(&ui)->name, "a.daily");
    keymap_key(&ui, &m, 'j');
    assert_string_equal(app_selected_schedule(&ui)->name, "b.hourly");
    keymap_key(&ui, &m, 'j'); /* the last stays selected */
    assert_int_equal(ui.sched_sel, 1);

    sched_result(&r, ACT_SCHEDULES, three, 3);
    r.refresh = true;
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.scheds.n, 3);
    assert_string_equal(app_selected_schedule(&ui)->name, "b.hourly");

    /* P on a paused schedule asks to resume it, over the view; n comes back to it */
    assert_int_equal(keymap_key(&ui, &m, 'P'), APP_REDRAW);
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_int_equal(ui.confirm_action, ACT_SCHED_RESUME);
    assert_string_equal(ui.action_id, "b.hourly");
    assert_int_equal(app_view_refresh_action(&ui), ACT_NONE); /* no refresh under a question */
    keymap_key(&ui, &m, 'n');
    assert_int_equal(ui.mode, MODE_SCHEDULES);
    assert_int_equal(app_take_action(&ui), ACT_NONE);
    keymap_key(&ui, &m, 'k');
    keymap_key(&ui, &m, 'P');
    assert_int_equal(ui.confirm_action, ACT_SCHED_PAUSE);
    assert_int_equal(keymap_key(&ui, &m, 'y') & APP_ACTION, APP_ACTION);
    assert_int_equal(ui.mode, MODE_SCHEDULES);
    assert_int_equal(app_take_action(&ui), ACT_SCHED_PAUSE);
    assert_string_equal(ui.action_id, "a.daily");
    /* its result (the list as it is now) keeps the view and the selection */
    sched_result(&r, ACT_SCHED_PAUSE, three, 3);
    snprintf(r.status, sizeof r.status, "paused schedule a.daily");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_SCHEDULES);
    assert_string_equal(app_selected_schedule(&ui)->name, "a.daily");
    assert_string_equal(ui.status, "paused schedule a.daily");

    /* read-only: P is refused and nothing is asked */
    ui.read_only = true;
    assert_int_equal(keymap_key(&ui, &m, 'P') & APP_ACTION, 0);
    assert_int_equal(ui.mode, MODE_SCHEDULES);
    assert_non_null(strstr(ui.status, "read-only"));
    ui.read_only = false;

    /* Enter: the last run's task in details, and back to the view; never fired: said */
    keymap_key(&ui, &m, KEY_APP_ENTER);
    assert_int_equal(app_take_action(&ui), ACT_NONE);
    assert_non_null(strstr(ui.status, "a.daily has not fired yet"));
    free(ui.scheds.items[1].last_id);
    ui.scheds.items[1].last_id = strdup("a.daily@60000");
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_ACTION, APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_DETAILS);
    assert_string_equal(ui.action_id, "a.daily@60000");
    memset(&r, 0, sizeof r);
    r.act = ACT_DETAILS;
    r.detail = strdup("id a.daily@60000\nstate done\n");
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_DETAILS);
    keymap_key(&ui, &m, KEY_APP_ESC);
    assert_int_equal(ui.mode, MODE_SCHEDULES);

    /* Esc, then a late refresh: dropped, nothing reopens */
    keymap_key(&ui, &m, KEY_APP_ESC);
    assert_int_equal(ui.mode, MODE_MAIN);
    sched_result(&r, ACT_SCHEDULES, two, 2);
    r.refresh = true;
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_null(r.scheds.items);
    assert_int_equal(ui.scheds.n, 3);
    ui_free(&ui);
}

/* 5 focuses Done; / there says what it searches instead of opening a prompt. */
static void
done_pane_is_the_fifth(void **state)
{
    struct ui ui;
    struct model m = {0};

    ui_init(&ui, false, false);
    keymap_key(&ui, &m, '5');
    assert_int_equal(ui.focus, PANE_DONE);
    keymap_key(&ui, &m, '/');
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_non_null(strstr(ui.status, "/ searches Due, Future, In-flight and Failed"));
    keymap_key(&ui, &m, KEY_APP_TAB);
    assert_int_equal(ui.focus, PANE_DUE);
    keymap_key(&ui, &m, KEY_APP_BTAB);
    assert_int_equal(ui.focus, PANE_DONE);
    ui_free(&ui);
}

/* A history result: @n rows of one minute ending at @now, retention @minutes. */
static void
hist_result(struct action_result *r, int span, int64_t now, int64_t minutes)
{
    r->act = ACT_HISTORY;
    r->have_hist = true;
    r->hist_span = span;
    r->hist.now_ms = now;
    r->hist.step_ms = app_hist_spans[span].step_ms;
    r->hist.history_minutes = minutes;
    r->hist.n = 2;
    r->hist.rows = calloc(2, sizeof *r->hist.rows);
    r->audit.n = 1;
    r->audit.entries = calloc(1, sizeof *r->audit.entries);
    r->audit.entries[0].action = strdup("pause");
}

/* H reads the history and opens the view; [ and ] change the span (read at once); it reads
 * again at the next minute of the server's clock (the last hour at most 15 s apart), never
 * every 2 s;
 * Esc goes back and a late result does not open it again. */
static void
history_view_opens_spans_refreshes_and_goes_back(void **state)
{
    struct ui ui;
    struct model m = {0};
    struct action_result r = {0};

    ui_init(&ui, true, false); /* read-only: it only reads */
    assert_true(keymap_key(&ui, &m, 'H') & APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_HISTORY);
    assert_int_equal(ui.mode, MODE_MAIN);      /* opened by its result */
    hist_result(&r, 0, 1796182220000LL, 1440); /* 03:30:20 */
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_HISTORY);
    assert_true(ui.have_hist);
    assert_int_equal(ui.hist.n, 2);
    assert_int_equal(ui.hist_audit.n, 1);
    assert_int_equal(app_view_refresh_action(&ui), ACT_HISTORY);
    /* 20 s into the minute: 15 s (the cap); 52 s in: a second after the minute turns */
    assert_int_equal(app_view_refresh_ms(&ui), APP_HISTORY_REFRESH_MS);
    ui.hist.now_ms = 1796182252000LL;
    assert_int_equal(app_view_refresh_ms(&ui), 9000);
    /* the spans: ] longer, [ shorter, refused past either end */
    assert_int_equal(keymap_key(&ui, &m, '[') & APP_REFETCH, 0);
    assert_non_null(strstr(ui.status, "1h is the shortest"));
    assert_true(keymap_key(&ui, &m, ']') & APP_REFETCH);
    assert_int_equal(ui.hist_span, 1);
    assert_true(keymap_key(&ui, &m, ']') & APP_REFETCH);
    assert_int_equal(ui.hist_span, 2);
    assert_int_equal(keymap_key(&ui, &m, ']') & APP_REFETCH, 0);
    assert_int_equal(ui.hist_span, 2);
    assert_non_null(strstr(ui.status, "24h is the longest"));
    /* the refresh with the span asked for replaces the data and ends "reading..." */
    app_status(&ui, false, "reading the last 24h...");
    r = (struct action_result){0};
    hist_result(&r, 2, 1796182260000LL, 1440);
    r.refresh = true;
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.hist_span_read, 2);
    assert_int_equal(ui.hist.step_ms, 900000);
    assert_string_equal(ui.status, "");
    /* 24 h reads 1440 minutes: only when the minute turns (here at :00, so in 61 s) */
    assert_int_equal(app_view_refresh_ms(&ui), 61000);
    /* Ctrl-L reads now */
    assert_true(keymap_key(&ui, &m, KEY_APP_REDRAW) & APP_REFETCH);
    /* other views keep their 2 s */
    keymap_key(&ui, &m, KEY_APP_ESC);
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_int_equal(app_view_refresh_action(&ui), ACT_NONE);
    assert_int_equal(app_view_refresh_ms(&ui), APP_WORKERS_REFRESH_MS);
    r = (struct action_result){0};
    hist_result(&r, 2, 1796182320000LL, 1440);
    r.refresh = true;
    app_action_done(&ui, &r, "q");
    assert_int_equal(ui.mode, MODE_MAIN);
    ui_free(&ui);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(search_starts_on_the_focused_pane_and_ends),
        cmocka_unit_test(refresh_adapts_between_bounds),
        cmocka_unit_test(queue_switch_forgets_selections_marks_and_search),
        cmocka_unit_test(action_result_opens_details_and_takes_its_text),
        cmocka_unit_test(action_result_opens_the_picker_on_the_current_queue),
        cmocka_unit_test(layout_keeps_the_scroll_inside_the_text),
        cmocka_unit_test(take_action_hands_it_over_once),
        cmocka_unit_test(every_bound_key_is_in_the_help),
        cmocka_unit_test(bulk_keys_act_on_the_search_shown),
        cmocka_unit_test(bulk_actions_share_one_rule),
        cmocka_unit_test(paste_is_text_never_keys),
        cmocka_unit_test(workers_view_refreshes_only_while_open),
        cmocka_unit_test(keys_view_opens_refreshes_and_goes_back),
        cmocka_unit_test(first_picker_esc_stays_q_quits),
        cmocka_unit_test(schedules_view_selects_refreshes_and_asks),
        cmocka_unit_test(done_pane_is_the_fifth),
        cmocka_unit_test(history_view_opens_spans_refreshes_and_goes_back),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
