/* SPDX-License-Identifier: MIT */
/*
 * test_view.c: the inspector's pure layout: a snapshot laid into grids of several sizes,
 * read back as text. No terminal, no Redis.
 */
#include "harness/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/health.h"
#include "fmt/taskfmt.h"
#include "tui/app.h"
#include "tui/grid.h"
#include "tui/jobs.h"
#include "tui/keymap.h"
#include "tui/model.h"
#include "tui/overview.h"
#include "tui/view.h"

static char *
dup_str(const char *s)
{
    return strdup(s);
}

/* A snapshot: 2 due (one with a hostile payload), 1 future, 1 expired lease, 1 failed. */
static void
make_model(struct model *m)
{
    /* a msgpack string holding ESC [2J and BEL */
    static const unsigned char hostile[] = {0xa7, 0x1b, '[', '2', 'J', 0x07, 'x', '!'};
    const int64_t now = 1795942260000;

    model_init(m, "orders", "127.0.0.1:6379");
    m->have_data = m->connected = true;
    snprintf(m->info.version, sizeof m->info.version, "7.0.15");
    snprintf(m->info.role, sizeof m->info.role, "master");
    m->info.used_memory = 3 * 1024 * 1024;
    m->stats = (dq_stats){.now_ms = now,
                          .due = 2,
                          .future = 1,
                          .inflight = 1,
                          .failed = 1,
                          .expired_leases = 1,
                          .next_due_ms = now + 60000,
                          .oldest_due_age_ms = 4000,
                          .trimmed = 7,
                          .window_ms = 300000,
                          .window_elapsed_ms = 300000,
                          .window_done = 112,
                          .window_failed = 1};
    for (int p = 0; p < PANE_DONE; p++) { /* Done stays empty */
        int n = p == PANE_DUE ? 2 : 1;
        m->pages[p].tasks = calloc((size_t)n, sizeof(dq_task));
        m->pages[p].n = (size_t)n;
        m->pages[p].total = n;
        m->pages[p].now_ms = now;
        for (int i = 0; i < n; i++) {
            dq_task *t = &m->pages[p].tasks[i];
            char id[16];
            snprintf(id, sizeof id, "t%d%d", p, i);
            t->id = dup_str(id);
            t->max_attempts = 25;
            t->due_ms = p == PANE_FUTURE ? now + 60000 : now - 4000;
            t->payload = malloc(sizeof hostile);
            memcpy(t->payload, hostile, sizeof hostile);
            t->payload_len = i == 1 ? sizeof hostile : 1;
            if (i == 0)
                t->payload[0] = 0x2a; /* the number 42 */
        }
    }
    /* a payload that is not msgpack, with an invalid UTF-8 byte */
    m->pages[PANE_FUTURE].tasks[0].payload[0] = 0xc1;
    m->pages[PANE_FUTURE].tasks[0].payload[1] = 0xff;
    m->pages[PANE_FUTURE].tasks[0].payload_len = 2;
    m->pages[PANE_INFLIGHT].tasks[0].lease_ms = now - 1;
    m->pages[PANE_INFLIGHT].tasks[0].worker = dup_str("w@host:1");
    dq_task *f = &m->pages[PANE_FAILED].tasks[0];
    f->failed_ms = now - 2000;
    f->reason = dup_str("error");
    f->error = dup_str("card declined\nsecond line");
}

static char *
render(struct model *m, struct ui *ui, int rows, int cols)
{
    struct grid g = {0};
    char *text;

    assert_int_equal(grid_init(&g, rows, cols), 0);
    /* as the loop does: the layout step, then the pure render */
    struct layout l;
    view_layout(ui, rows, cols, &l);
    app_set_layout(ui, &l);
    view_render(m, ui, &g);
    text = grid_to_text(&g);
    grid_free(&g);
    return text;
}

static void
assert_has(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("missing \"%s\" in:\n%s", needle, text);
}

/* A fetch that failed with @rc and @msg; @held_back: the client was still waiting to
 * reconnect and sent nothing. */
static void
apply_failure(struct model *m, int rc, const char *msg, bool held_back)
{
    struct snapshot s;

    memset(&s, 0, sizeof s);
    s.rc = rc;
    s.held_back = held_back;
    snprintf(s.error, sizeof s.error, "%s", msg);
    assert_false(model_apply(m, &s));
}

/* Only a server that cannot be reached is DISCONNECTED: one that answers with an error
 * (a wrong-type key) or not in time (CLIENT PAUSE) says so, and keeps the last data. */
static void
banner_tells_refused_and_slow_from_down(void **state)
{
    struct model m;
    struct ui ui;
    char why[256];
    (void)state;

    make_model(&m);
    ui_init(&ui, false, false);
    apply_failure(&m, DQ_EREDIS,
                  "redis refused stats: WRONGTYPE Operation against a key holding the wrong "
                  "kind of value",
                  false);
    assert_int_equal(m.link, LINK_REFUSED);
    assert_true(m.connected);
    model_link_status(&m, why, sizeof why);
    assert_has(why, "WRONGTYPE");
    assert_has(why, "a key of queue orders (dq:{orders}:*) is not of the type");
    assert_has(why, "not disconnected");
    char *text = render(&m, &ui, 40, 140);
    assert_null(strstr(text, "DISCONNECTED"));
    assert_has(text, "[4] Failed (1)"); /* the last data stays */
    free(text);

    apply_failure(&m, DQ_ETIMEOUT, "redis at 127.0.0.1:6379 did not answer FCALL within 1000 ms",
                  false);
    assert_int_equal(m.link, LINK_SLOW);
    /* the client's own reconnect backoff after that timeout is not news */
    apply_failure(&m, DQ_ECONN, "redis at 127.0.0.1:6379 is unreachable; next try in 200 ms", true);
    assert_int_equal(m.link, LINK_SLOW);
    model_link_status(&m, why, sizeof why);
    assert_has(why, "did not answer FCALL within 1000 ms: redis is busy or paused");
    text = render(&m, &ui, 40, 140);
    assert_null(strstr(text, "DISCONNECTED"));
    free(text);

    /* a connect that was tried and failed is */
    apply_failure(&m, DQ_ECONN, "redis at 127.0.0.1:6379: connect: Connection refused", false);
    assert_int_equal(m.link, LINK_DOWN);
    assert_false(m.connected);
    assert_int_equal(model_link_status(&m, why, sizeof why), 0);
    text = render(&m, &ui, 40, 140);
    assert_has(text, "DISCONNECTED");
    free(text);
    model_free(&m);

    /* before any data the view shows the same words */
    model_init(&m, "orders", "127.0.0.1:6379");
    apply_failure(&m, DQ_EREDIS, "redis refused stats: WRONGTYPE Operation", false);
    text = render(&m, &ui, 40, 140);
    assert_null(strstr(text, "DISCONNECTED"));
    assert_has(text, "WRONGTYPE Operation: a key of queue orders (dq:{orders}:*)");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

static void
large_layout_shows_all_panes(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    char *text = render(&m, &ui, 40, 140);
    assert_has(text, "queue orders");
    assert_has(text, "redis 7.0.15 master");
    assert_has(text, "due 2");
    assert_has(text, "failed 1");
    assert_has(text, "(1 expired)");
    assert_has(text, "[1] Due (2)");
    assert_has(text, "[2] Future (1)");
    assert_has(text, "[3] In-flight (1)");
    assert_has(text, "[4] Failed (1)");
    assert_has(text, "EXPIRED");
    assert_has(text, "error: card declined");
    assert_has(text, "retention has removed 7 tasks");
    assert_null(strstr(text, "second line")); /* only the first line of an error */
    assert_true(ui.rows_visible > 5);
    free(text);
    model_free(&m);
    ui_free(&ui);
}

static void
hostile_bytes_are_escaped(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    char *text = render(&m, &ui, 40, 140);
    /* the escape sequence, BEL and the invalid byte are visible text, not controls */
    assert_has(text, "\\u001b[2J\\u0007x!");
    assert_has(text, "raw: \\xc1\\xff");
    for (const char *p = text; *p; p++)
        assert_true((unsigned char)*p >= 0x20 || *p == '\n');
    free(text);
    model_free(&m);
    ui_free(&ui);
}

static void
small_layout_has_tabs_and_fits(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, true, true);
    ui.focus = PANE_FAILED;
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, " 1 Due 2 ");
    assert_has(text, " 4 Failed 1");
    assert_has(text, "[4] Failed (1)");
    assert_has(text, "READ-ONLY");
    assert_null(strstr(text, "[1] Due")); /* only the focused pane */
    /* 24 lines, none wider than 80 columns (one cell may hold a multi-byte glyph) */
    int lines = 0;
    for (char *line = text; *line; lines++) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        line = nl + 1;
    }
    assert_int_equal(lines, 24);
    free(text);
    model_free(&m);
    ui_free(&ui);
}

static void
keys_move_and_refuse_when_read_only(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, true, false);
    assert_int_equal(keymap_key(&ui, &m, '4') & APP_REDRAW, APP_REDRAW);
    assert_int_equal(ui.focus, PANE_FAILED);
    assert_string_equal(app_selected_id(&ui, &m), "t30");
    assert_int_equal(keymap_key(&ui, &m, 'r') & APP_ACTION, 0);
    assert_non_null(strstr(ui.status, "read-only"));
    ui.read_only = false;
    /* r asks first, then y performs it */
    assert_int_equal(keymap_key(&ui, &m, 'r') & APP_ACTION, 0);
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_int_equal(keymap_key(&ui, &m, 'y') & APP_ACTION, APP_ACTION);
    assert_int_equal(ui.action, ACT_REQUEUE);
    assert_string_equal(ui.action_id, "t30");
    /* A asks for a spread window; Esc cancels, Enter performs */
    keymap_key(&ui, &m, 'A');
    assert_int_equal(ui.mode, MODE_INPUT);
    keymap_key(&ui, &m, '1');
    keymap_key(&ui, &m, '0');
    keymap_key(&ui, &m, 'm');
    assert_string_equal(ui.input, "10m");
    /* one failed task: then y/N (more would ask for the queue's name) */
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_ACTION, 0);
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_string_equal(ui.spread, "10m");
    assert_int_equal(keymap_key(&ui, &m, 'y') & APP_ACTION, APP_ACTION);
    assert_int_equal(ui.action, ACT_REQUEUE_ALL);
    /* p only on Future */
    keymap_key(&ui, &m, 'p');
    assert_non_null(strstr(ui.status, "Future"));
    /* d asks first */
    assert_int_equal(keymap_key(&ui, &m, 'd') & APP_ACTION, 0);
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_int_equal(keymap_key(&ui, &m, 'y') & APP_ACTION, APP_ACTION);
    assert_int_equal(ui.action, ACT_DROP);
    /* moving within the Due pane */
    keymap_key(&ui, &m, '1');
    keymap_key(&ui, &m, 'j');
    assert_string_equal(app_selected_id(&ui, &m), "t01");
    keymap_key(&ui, &m, 'j'); /* stays on the last */
    assert_string_equal(app_selected_id(&ui, &m), "t01");
    keymap_key(&ui, &m, 'g');
    assert_string_equal(app_selected_id(&ui, &m), "t00");
    assert_int_equal(keymap_key(&ui, &m, 'q'), APP_QUIT);
    model_free(&m);
    ui_free(&ui);
}

static void
details_view_scrolls(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    app_set_detail(&ui, "id  t30\nstate  failed\nstack trace\n  at f()\n  at g()");
    ui.mode = MODE_DETAILS;
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "task details");
    assert_has(text, "  at g()");
    free(text);
    keymap_key(&ui, &m, 'j');
    text = render(&m, &ui, 24, 80);
    assert_null(strstr(text, "id  t30"));
    free(text);
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ESC), APP_REDRAW);
    assert_int_equal(ui.mode, MODE_MAIN);
    model_free(&m);
    ui_free(&ui);
}

static void
marks_apply_actions_to_the_set(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    keymap_key(&ui, &m, '1');
    keymap_key(&ui, &m, ' '); /* marks t00, moves to t01 */
    keymap_key(&ui, &m, ' '); /* marks t01 */
    assert_true(app_is_marked(&ui, PANE_DUE, "t00"));
    assert_true(app_is_marked(&ui, PANE_DUE, "t01"));
    char *text = render(&m, &ui, 40, 140);
    assert_has(text, "*t00");
    assert_has(text, "*t01");
    free(text);
    keymap_key(&ui, &m, ' '); /* unmarks t01 (the selection stays on the last row) */
    assert_false(app_is_marked(&ui, PANE_DUE, "t01"));
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ESC), APP_REDRAW);
    assert_int_equal(ui.nmarks[PANE_DUE], 0);
    /* on Failed, r asks about the marked set */
    keymap_key(&ui, &m, '4');
    keymap_key(&ui, &m, ' ');
    keymap_key(&ui, &m, 'r');
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_string_equal(ui.action_id, "1 marked tasks");
    assert_int_equal(keymap_key(&ui, &m, 'y') & APP_ACTION, APP_ACTION);
    model_free(&m);
    ui_free(&ui);
}

static void
click_focuses_and_selects(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    free(render(&m, &ui, 40, 140)); /* lays the panes out */
    const struct pane_box *b = &ui.boxes[PANE_DUE];
    assert_true(b->height > 0);
    /* the second task row of Due */
    assert_int_equal(app_click(&ui, &m, b->row + 3, b->col + 2), APP_REDRAW);
    assert_int_equal(ui.focus, PANE_DUE);
    assert_string_equal(app_selected_id(&ui, &m), "t01");
    b = &ui.boxes[PANE_FAILED];
    app_click(&ui, &m, b->row, b->col + 1); /* the title: focus only */
    assert_int_equal(ui.focus, PANE_FAILED);
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_WHEEL_DOWN) & APP_REDRAW, APP_REDRAW);
    model_free(&m);
    ui_free(&ui);
}

static void
queue_picker_lists_moves_and_switches(void **state)
{
    struct model m;
    struct ui ui;
    const char *names[] = {"billing", "orders", "ev\x1b[2Jil"};
    char **owned = calloc(3, sizeof *owned);
    int64_t(*counts)[4] = calloc(3, sizeof *counts);

    make_model(&m);
    m.nqueues = 5;
    ui_init(&ui, false, false);
    char *text = render(&m, &ui, 30, 120);
    assert_has(text, "queue orders (Q: 5 queues)");
    free(text);

    assert_int_equal(keymap_key(&ui, &m, 'Q'), APP_ACTION);
    assert_int_equal(ui.action, ACT_QUEUES);
    ui.action = ACT_NONE;
    for (int i = 0; i < 3; i++) {
        owned[i] = dup_str(names[i]);
        counts[i][0] = 10 * i + 1;
        counts[i][3] = i;
    }
    app_set_picker(&ui, owned, counts, 3, 5, "orders");
    assert_int_equal(ui.mode, MODE_PICK);
    assert_int_equal(ui.pick_sel, 1); /* opens on the queue shown */
    text = render(&m, &ui, 30, 120);
    assert_has(text, "queues on 127.0.0.1:6379 (5)");
    assert_has(text, " * orders");
    assert_has(text, "   billing");
    assert_has(text, "ev\\e[2Jil"); /* a name from Redis is escaped */
    assert_has(text, "2 more not listed");
    free(text);

    assert_int_equal(keymap_key(&ui, &m, 'j'), APP_REDRAW);
    assert_int_equal(keymap_key(&ui, &m, 'j'), APP_REDRAW); /* stays on the last */
    assert_int_equal(ui.pick_sel, 2);
    assert_int_equal(keymap_key(&ui, &m, 'g'), APP_REDRAW);
    assert_int_equal(ui.pick_sel, 0);
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER), APP_ACTION | APP_REDRAW);
    assert_int_equal(ui.action, ACT_SWITCH);
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_string_equal(ui.pick_names[ui.pick_sel], "billing");

    ui.mode = MODE_PICK;
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ESC), APP_REDRAW);
    assert_int_equal(ui.mode, MODE_MAIN);
    model_free(&m);
    ui_free(&ui);
}

static void
selection_follows_its_task_across_a_refresh(void **state)
{
    struct model m;
    struct ui ui;
    struct selection saved;

    make_model(&m); /* Due holds t00, t01 */
    ui_init(&ui, false, false);
    /* first visit, nobody moved: new tasks ahead do not push the selection down */
    app_selection_save(&ui, &m, &saved);
    assert_string_equal(saved.id[PANE_DUE], "t00");
    free(m.pages[PANE_DUE].tasks[0].id);
    m.pages[PANE_DUE].tasks[0].id = dup_str("t09");
    free(m.pages[PANE_DUE].tasks[1].id);
    m.pages[PANE_DUE].tasks[1].id = dup_str("t00");
    app_selection_follow(&ui, &m, &saved);
    assert_int_equal(ui.sel[PANE_DUE], 0);
    free(m.pages[PANE_DUE].tasks[0].id);
    m.pages[PANE_DUE].tasks[0].id = dup_str("t00");
    free(m.pages[PANE_DUE].tasks[1].id);
    m.pages[PANE_DUE].tasks[1].id = dup_str("t01");
    /* once the operator moved, the selection follows its task */
    keymap_key(&ui, &m, 'j');
    assert_int_equal(ui.sel[PANE_DUE], 1);
    app_selection_save(&ui, &m, &saved);
    assert_string_equal(saved.id[PANE_DUE], "t01");

    /* the refresh: t00 was claimed, so t01 is now first, with a new task after it */
    dq_page_free(&m.pages[PANE_DUE]);
    m.pages[PANE_DUE].tasks = calloc(2, sizeof(dq_task));
    m.pages[PANE_DUE].tasks[0].id = dup_str("t01");
    m.pages[PANE_DUE].tasks[1].id = dup_str("t02");
    m.pages[PANE_DUE].n = 2;
    m.pages[PANE_DUE].total = 2;
    app_selection_follow(&ui, &m, &saved);
    assert_int_equal(ui.sel[PANE_DUE], 0);
    assert_string_equal(app_selected_id(&ui, &m), "t01");

    /* the task is gone (claimed): the row number stays */
    ui.sel[PANE_DUE] = 1;
    app_selection_save(&ui, &m, &saved);
    free(m.pages[PANE_DUE].tasks[1].id);
    m.pages[PANE_DUE].tasks[1].id = dup_str("t03");
    app_selection_follow(&ui, &m, &saved);
    assert_int_equal(ui.sel[PANE_DUE], 1);
    model_free(&m);
    ui_free(&ui);
}

/* At 80 columns the header keeps what on-call needs; the rest comes with the width. */
/* In a cluster the header names the master that serves the queue, not the seeds. */
static void
header_names_the_cluster_node(void **state)
{
    struct model m;
    struct ui ui;

    (void)state;
    make_model(&m);
    snprintf(m.endpoint, sizeof m.endpoint, "cluster 127.0.0.1:7000,127.0.0.1:7001");
    snprintf(m.node, sizeof m.node, "127.0.0.1:7002");
    ui_init(&ui, false, false);
    char *text = render(&m, &ui, 40, 200);
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    *nl = '\0';
    assert_has(text, "| cluster node 127.0.0.1:7002 redis ");
    assert_null(strstr(text, "7000"));
    free(text);
    model_free(&m);
    ui_free(&ui);
}

static void
header_keeps_what_matters_at_80_columns(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    m.nqueues = 12;
    snprintf(m.queue, sizeof m.queue, "payments-settlement-eu");
    ui_init(&ui, true, false);
    char *text = render(&m, &ui, 24, 80);
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    *nl = '\0'; /* the title line alone */
    assert_has(text, "queue payments-settlement-eu");
    assert_has(text, "READ-ONLY");
    assert_null(strstr(text, "clients")); /* dropped at this width */
    *nl = '\n';
    assert_has(text, " due 2 (oldest 4s)  failed 1");
    assert_has(text, "1 lease expired: workers died holding tasks (x recovers)");
    free(text);
    m.spark[0] = 5;
    m.nspark = 1;
    text = render(&m, &ui, 40, 200);
    assert_has(text, "0 clients");
    assert_has(text, "READ-ONLY");
    assert_has(text, "due backlog");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* The verdict's thresholds are the queue's alert_* config fields (model.config): a
 * 2-minute task passes the default alert_running_ms (5m) and is flagged under 1m; a
 * lowered alert_oldest_due_ms flags the 4 s old due task. */
static void
verdict_takes_the_queues_thresholds(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    m.stats.expired_leases = 0;
    dq_task *inf = &m.pages[PANE_INFLIGHT].tasks[0];
    inf->claimed_ms = m.stats.now_ms - 120000;
    inf->lease_ms = m.stats.now_ms + 27000;
    ui_init(&ui, false, false);
    char *text = render(&m, &ui, 40, 140);
    assert_null(strstr(text, "a task has run")); /* 2m is under the default 5m */
    assert_null(strstr(text, "oldest due"));
    free(text);

    m.config.alert_running_ms = 60000;
    text = render(&m, &ui, 40, 140);
    assert_has(text, "a task has run 2m00s (over 1m00s): a hung handler?");
    free(text);

    m.config.alert_oldest_due_ms = 1000;
    text = render(&m, &ui, 40, 140);
    assert_has(text, "oldest due");
    assert_has(text, "a task has run 2m00s");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* A queue that is not known is marked in the header and named by the verdict, at the
 * smallest size too: an empty screen that says "all well" would hide a typo. */
static void
unknown_queue_is_marked(void **state)
{
    char billing[] = "billing", emails[] = "emails", *names[] = {billing, emails};
    dq_queues reg = {names, 2, 2};
    struct model m;
    struct ui ui;
    (void)state;

    model_init(&m, "billng", "127.0.0.1:6379");
    m.have_data = m.connected = true;
    m.stats.now_ms = 1795942260000;
    m.workers = (struct worker_summary){0, 0, 0, -1, 0, ""};
    ui_init(&ui, false, false);
    char *text = render(&m, &ui, 24, 80);
    assert_null(strstr(text, "UNKNOWN QUEUE"));
    assert_has(text, "all well");
    free(text);

    dq_health_unknown_queue(m.unknown, sizeof m.unknown, m.queue, m.endpoint, &reg);
    text = render(&m, &ui, 24, 80);
    char first[160];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(text, "\n"), text);
    assert_has(first, " UNKNOWN QUEUE");
    assert_has(first, "queue billng");
    assert_has(text, "!! queue \"billng\" is not known on 127.0.0.1:6379 (did you mean billing?)");
    assert_null(strstr(text, "all well"));
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* In-flight rows say how long they run; tasks that failed before say why (Future and Due). */
static void
rows_say_since_when_and_why(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    dq_task *inf = &m.pages[PANE_INFLIGHT].tasks[0];
    inf->claimed_ms = m.stats.now_ms - 400000;
    inf->lease_ms = m.stats.now_ms + 27000;
    dq_task *fut = &m.pages[PANE_FUTURE].tasks[0];
    fut->attempt = 6;
    fut->last_error = dup_str("upstream 503 from payments-api");
    ui_init(&ui, false, false);
    char *text = render(&m, &ui, 40, 140);
    assert_has(text, "6m40s"); /* running since the claim */
    assert_has(text, "lease 27s w@host:1");
    assert_has(text, "retry: upstream 503 from pa"); /* cut to the pane, not dropped */
    assert_null(strstr(text, "raw: \\xc1"));         /* its payload is in details, not the row */
    free(text);
    /* a due task that failed before says why, as on Future */
    dq_task *due = &m.pages[PANE_DUE].tasks[1];
    due->attempt = 2;
    due->last_error = dup_str("exit 75: connection to ledger-db:5432 refused");
    text = render(&m, &ui, 40, 140);
    assert_has(text, "retry: exit 75: connect");
    assert_null(strstr(text, "\"\\u001b[2J\\u0007x!\"")); /* not its payload */
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* The key hints follow the focused pane and leave out actions when read-only. */
static void
hints_follow_the_pane(void **state)
{
    struct ui ui;
    char h[512];

    ui_init(&ui, false, false);
    ui.focus = PANE_INFLIGHT;
    keymap_hints(&ui, 80, h, sizeof h);
    assert_non_null(strstr(h, "? help  c cancel  x reap"));
    assert_null(strstr(h, "r requeue"));
    ui.focus = PANE_FUTURE;
    keymap_hints(&ui, 80, h, sizeof h);
    assert_non_null(strstr(h, "p run now"));
    assert_true(strlen(h) < 80);
    ui.read_only = true;
    keymap_hints(&ui, 80, h, sizeof h);
    assert_null(strstr(h, "run now"));
    assert_non_null(strstr(h, "Enter details"));
    keymap_hints(&ui, 20, h, sizeof h);
    assert_true(strlen(h) < 20);
    ui_free(&ui);
}

static void
type(struct ui *ui, const struct model *m, const char *text)
{
    for (const char *p = text; *p; p++)
        keymap_key(ui, m, *p);
}

/* P asks how long, then why, then y/N; on a paused queue it offers to resume. */
static void
pause_asks_how_long_why_and_confirms(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    assert_int_equal(keymap_key(&ui, &m, 'P'), APP_REDRAW);
    assert_int_equal(ui.mode, MODE_INPUT);
    assert_non_null(strstr(ui.prompt, "pause queue orders for"));
    type(&ui, &m, "soon");
    keymap_key(&ui, &m, KEY_APP_ENTER);
    assert_int_equal(ui.mode, MODE_MAIN); /* not a duration: nothing happens */
    assert_true(ui.status_error);
    assert_non_null(strstr(ui.status, "not a duration"));

    keymap_key(&ui, &m, 'P');
    type(&ui, &m, "30m");
    keymap_key(&ui, &m, KEY_APP_ENTER);
    assert_int_equal(ui.mode, MODE_INPUT);
    assert_non_null(strstr(ui.prompt, "why"));
    type(&ui, &m, "deploy rollback");
    keymap_key(&ui, &m, KEY_APP_ENTER);
    assert_int_equal(ui.mode, MODE_CONFIRM);
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "pause queue orders for 30m: deploy rollback? y/N");
    free(text);
    assert_int_equal(keymap_key(&ui, &m, 'y'), APP_ACTION | APP_REDRAW);
    assert_int_equal(app_take_action(&ui), ACT_PAUSE);
    assert_string_equal(ui.pause_for, "30m");
    assert_string_equal(ui.input, "deploy rollback");

    /* paused by someone: the header says so, and P resumes after y */
    m.stats.paused = true;
    m.stats.paused_since_ms = m.stats.now_ms - 600000;
    snprintf(m.stats.paused_by, sizeof m.stats.paused_by, "alice@ops");
    snprintf(m.stats.pause_reason, sizeof m.stats.pause_reason, "deploy rollback");
    text = render(&m, &ui, 24, 80);
    assert_has(text, " PAUSED\n"); /* the badge, at the end of the title line */
    assert_has(text, "paused by alice@ops 10m00s ago: deploy rollback, until resumed");
    free(text);
    keymap_key(&ui, &m, 'P');
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_int_equal(ui.confirm_action, ACT_RESUME);
    keymap_key(&ui, &m, 'y');
    assert_int_equal(app_take_action(&ui), ACT_RESUME);

    ui.read_only = true; /* refused before anything is asked */
    keymap_key(&ui, &m, 'P');
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_non_null(strstr(ui.status, "read-only"));
    model_free(&m);
    ui_free(&ui);
}

/* The header counts live workers and the verdict says when nobody consumes. */
static void
workers_in_the_header_and_the_verdict(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    m.workers = (struct worker_summary){3, 2, 1, m.stats.now_ms - 2000, 0, ""};
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "workers 2 (1 lost)");
    free(text);
    m.workers = (struct worker_summary){2, 0, 2, m.stats.now_ms - 192000, 0, ""};
    text = render(&m, &ui, 24, 80);
    assert_has(text, "workers 0 (2 lost)");
    assert_has(text, "no live worker for 3m12s while 2 are due");
    free(text);
    assert_int_equal(keymap_key(&ui, &m, 'W'), APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_WORKERS);
    model_free(&m);
    ui_free(&ui);
}

/*
 * Golden screens: whole rendered screens compared with the files in tests/unit/golden/, so any
 * change of layout shows up as a diff to review. After a change made on purpose,
 * `meson compile -C build update-golden` rewrites them (DQ_GOLDEN_UPDATE=1).
 */
static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        text = malloc((size_t)n + 1);
        if (text != NULL && fread(text, 1, (size_t)n, f) == (size_t)n) {
            text[n] = '\0';
        } else {
            free(text);
            text = NULL;
        }
    }
    fclose(f);
    return text;
}

static void
golden_check(const char *name, const char *got)
{
    const char *root = getenv("DQ_SOURCE_ROOT");
    char path[1024];

    assert_non_null(root);
    snprintf(path, sizeof path, "%s/tests/unit/golden/%s.txt", root, name);
    if (getenv("DQ_GOLDEN_UPDATE") != NULL) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(got, 1, strlen(got), f), strlen(got));
        assert_int_equal(fclose(f), 0);
        return;
    }
    char *want = read_file(path);
    if (want == NULL)
        fail_msg("no golden screen %s (meson compile -C build update-golden makes it)", path);
    /* the first line that differs, both sides, as a reviewer wants to see it */
    const char *a = want, *b = got;
    for (int line = 1; *a != '\0' || *b != '\0'; line++) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || memcmp(a, b, la) != 0) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s line %d differs:\n  want |%.*s|\n  got  |%.*s|", name,
                     line, (int)(la > 400 ? 400 : la), a, (int)(lb > 400 ? 400 : lb), b);
            free(want);
            fail_msg("%s", msg);
        }
        a += la + (a[la] == '\n');
        b += lb + (b[lb] == '\n');
    }
    free(want);
}

static const int golden_sizes[][2] = {{24, 80}, {40, 120}, {50, 200}};

/* Renders @ui over @m at every golden size and checks each against screen_RxC. */
static void
golden_screens(struct model *m, struct ui *ui, const char *screen)
{
    for (size_t i = 0; i < sizeof golden_sizes / sizeof golden_sizes[0]; i++) {
        char name[64];
        int rows = golden_sizes[i][0], cols = golden_sizes[i][1];
        snprintf(name, sizeof name, "%s_%dx%d", screen, cols, rows);
        char *text = render(m, ui, rows, cols);
        golden_check(name, text);
        free(text);
    }
}

/* One overview row for the golden Overview: healthy defaults, @name, server time @now. */
static void
ov_row(struct dq_overview_row *r, const char *name, int64_t now)
{
    memset(r, 0, sizeof *r);
    snprintf(r->queue, sizeof r->queue, "%s", name);
    r->stats.now_ms = now;
    r->stats.window_ms = r->stats.window_elapsed_ms = 300000;
    r->stats.paused_since_ms = r->stats.paused_until_ms = -1;
    r->alert_oldest_due_ms = 300000;
    r->alert_far_future = 100000;
    r->alert_fail_pct = 50;
    r->alert_fail_per_min = 60;
    r->alert_memory_pct = 90;
    r->workers_registered = r->workers_live = 1;
    r->last_beat_ms = now - 2000;
    r->throttled = -1;
}

/* The Overview (the picker with overview rows) from a fixed data set: five queues worst
 * first, the failing one's bump in its FAILED/min sparkline, a pause reason from Redis
 * escaped, the selected queue's verdict in full; ASCII sparklines outside UTF-8; Enter
 * opens the row selected and Esc on its screen comes back. */
static void
golden_overview(void **state)
{
    const int64_t now = 1795942260000;
    struct model m;
    struct ui ui;
    struct overview *ov = calloc(1, sizeof *ov);
    const char *names[] = {"billing", "emails", "orders", "reports", "search"};
    char **owned = calloc(5, sizeof *owned);
    int64_t(*counts)[4] = calloc(5, sizeof *counts);

    (void)state;
    assert_non_null(ov);
    ov->n = 5;
    ov->rows = calloc(5, sizeof *ov->rows);
    ov->lines = calloc(5, sizeof *ov->lines);
    for (int i = 0; i < 5; i++)
        ov_row(&ov->rows[i], names[i], now);
    struct dq_overview_row *b = &ov->rows[0], *e = &ov->rows[1], *o = &ov->rows[2],
                           *s = &ov->rows[4];
    b->stats.failed = 36;
    b->stats.window_done = 4;
    b->stats.window_failed = 36;
    b->workers_registered = b->workers_live = 2;
    for (int i = 0; i < DQ_OVERVIEW_MINUTES; i++) {
        b->done_per_min[i] = i < 6 ? 40 : 1;
        b->failed_per_min[i] = i < 6 ? 0 : 4 + 2 * (i - 6);
        s->done_per_min[i] = 20 + 10 * (i % 3);
    }
    e->stats.due = 12;
    e->stats.oldest_due_age_ms = 40000;
    e->stats.paused = true;
    e->stats.paused_since_ms = now - 600000;
    snprintf(e->stats.paused_by, sizeof e->stats.paused_by, "alice@ops");
    snprintf(e->stats.pause_reason, sizeof e->stats.pause_reason, "deploy \x1b[2J rollback");
    o->stats.due = 162;
    o->stats.oldest_due_age_ms = 192000;
    o->workers_live = 0;
    o->workers_lost = 1;
    o->last_beat_ms = now - 192000;
    s->workers_registered = s->workers_live = 3;
    s->stats.inflight = 3;
    for (int i = 0; i < 5; i++)
        dq_ov_judge(&ov->lines[i], &ov->rows[i], 0, 0);
    dq_ov_sort(ov->lines, 5);
    for (int i = 0; i < 5; i++)
        owned[i] = dup_str(ov->lines[i].row->queue);

    make_model(&m);
    m.nqueues = 5;
    ui_init(&ui, false, false);
    app_set_picker(&ui, owned, counts, 5, 5, "orders");
    app_set_overview(&ui, ov);
    assert_int_equal(ui.mode, MODE_PICK);
    assert_string_equal(ui.pick_names[0], "billing");
    assert_string_equal(ui.pick_names[1], "orders");
    assert_int_equal(ui.pick_sel, 1); /* opens on the queue shown */
    golden_screens(&m, &ui, "overview");

    ui.ascii = true;
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "#@");
    assert_null(strstr(text, "\u2588"));
    free(text);

    /* Enter opens the row, and Esc on its main screen asks for the Overview again */
    assert_int_equal(keymap_key(&ui, &m, 'k'), APP_REDRAW);
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER), APP_ACTION | APP_REDRAW);
    assert_int_equal(ui.action, ACT_SWITCH);
    assert_string_equal(ui.pick_names[ui.pick_sel], "billing");
    assert_true(ui.from_overview);
    ui.action = ACT_NONE;
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ESC), APP_ACTION);
    assert_int_equal(ui.action, ACT_QUEUES);
    model_free(&m);
    ui_free(&ui);
}

static void
golden_main(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    m.nqueues = 3;
    for (int i = 0; i < SPARK_LEN; i++) /* a backlog that grew, then drained */
        m.spark[i] = i < 30 ? i * 3 : (SPARK_LEN - i) * 2;
    m.nspark = SPARK_LEN;
    m.enq_rate = 12.5;
    m.done_rate = 11;
    ui_init(&ui, false, false);
    ui.focus = PANE_FAILED;
    golden_screens(&m, &ui, "main");
    model_free(&m);
    ui_free(&ui);
}

static void
golden_details(void **state)
{
    struct model m;
    struct ui ui;
    struct dq_buf b = DQ_BUF_INIT;
    static char trace[] = "panic: runtime error: index out of range [3] with length 3\n\n"
                          "goroutine 1 [running]:\nmain.renderInvoice(...)\n"
                          "\t/src/invoice/render.go:57 +0x1d\n";

    make_model(&m);
    ui_init(&ui, false, false);
    dq_task *f = &m.pages[PANE_FAILED].tasks[0];
    f->trace = strdup(trace);
    f->failed_by = strdup("worker@host:4242");
    f->state = DQ_STATE_FAILED;
    f->seq = 30;
    f->attempt = 3;
    f->enqueued_ms = m.stats.now_ms - 90000;
    f->deadline_ms = -1;
    f->lease_ms = f->claimed_ms = -1;
    /* its attempt history: the timeline between the fields and the payload */
    static const struct {
        int64_t ago, took;
        const char *worker, *outcome, *error;
    } tries[] = {
        {88000, 1200, "worker@host:4242", "retry", "exit 75 (temporary failure): upstream 503"},
        {60000, 30000, "worker@host:4343", "lease expired",
         "lease expired (held by worker@host:4343)"},
        {800, 640, "worker@host:4242", "fail", "panic: runtime error: index out of range [3]"},
    };
    f->history = calloc(3, sizeof *f->history);
    assert_non_null(f->history);
    for (size_t i = 0; i < 3; i++) {
        dq_attempt *a = &f->history[f->nhistory++];
        a->attempt = (uint32_t)i + 1;
        a->started_ms = m.stats.now_ms - tries[i].ago;
        a->duration_ms = tries[i].took;
        a->worker = strdup(tries[i].worker);
        a->outcome = strdup(tries[i].outcome);
        a->error = strdup(tries[i].error);
    }
    dq_fmt_task_details(&b, f, m.stats.now_ms);
    dq_buf_putc(&b, '\0');
    app_set_detail(&ui, b.data);
    snprintf(ui.detail_title, sizeof ui.detail_title, "task details");
    ui.mode = MODE_DETAILS;
    golden_screens(&m, &ui, "details");
    dq_buf_free(&b);
    model_free(&m);
    ui_free(&ui);
}

/* fix and requeue */
/* e asks for the edit of the selected failed task (only there, never read-only); the
 * confirmation that follows performs ACT_REPLACE on y and nothing on any other key. */
static void
e_fixes_a_failed_task_after_y(void **state)
{
    struct model m;
    struct ui ui;
    static const unsigned char a[] = {0x81, 0xa1, 'n', 0x01}, b[] = {0x81, 0xa1, 'n', 0x02};

    make_model(&m);
    ui_init(&ui, true, false);
    keymap_key(&ui, &m, '4');
    assert_int_equal(keymap_key(&ui, &m, 'e') & APP_ACTION, 0);
    assert_non_null(strstr(ui.status, "read-only"));
    ui.read_only = false;
    keymap_key(&ui, &m, '1');
    assert_int_equal(keymap_key(&ui, &m, 'e') & APP_ACTION, 0);
    assert_non_null(strstr(ui.status, "go to Failed (4)"));
    keymap_key(&ui, &m, '4');
    assert_int_equal(keymap_key(&ui, &m, 'e') & APP_ACTION, APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_EDIT);
    assert_string_equal(ui.action_id, "t30");

    assert_true(app_confirm_fix(&ui, "t30", a, sizeof a, b, sizeof b));
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_true(ui.ndetail > 3);
    assert_string_equal(ui.detail[3], "-   \"n\": 1");
    assert_string_equal(ui.detail[4], "+   \"n\": 2");
    assert_int_equal(keymap_key(&ui, &m, 'n') & APP_ACTION, 0);
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_int_equal(app_take_action(&ui), ACT_NONE);
    assert_true(app_confirm_fix(&ui, "t30", a, sizeof a, b, sizeof b));
    assert_int_equal(keymap_key(&ui, &m, 'y') & APP_ACTION, APP_ACTION);
    assert_int_equal(app_take_action(&ui), ACT_REPLACE);
    model_free(&m);
    ui_free(&ui);
}

/* The confirmation after an edit: what changed, over the whole screen, and y/N. */
static void
golden_fix(void **state)
{
    struct model m;
    struct ui ui;
    /* msgpack of {"invoice":7,"total":"12.50","lines":[1,2]} and of the fix */
    static const unsigned char old[] = {0x83, 0xa7, 'i', 'n', 'v', 'o',  'i',  'c', 'e', 0x07, 0xa5,
                                        't',  'o',  't', 'a', 'l', 0xa5, '1',  '2', '.', '5',  '0',
                                        0xa5, 'l',  'i', 'n', 'e', 's',  0x92, 1,   2};
    static const unsigned char new_[] = {0x83, 0xa7, 'i', 'n', 'v', 'o', 'i',  'c',  'e', 0x07,
                                         0xa5, 't',  'o', 't', 'a', 'l', 0xa4, '1',  '2', '.',
                                         '5',  0xa5, 'l', 'i', 'n', 'e', 's',  0x92, 1,   2};

    make_model(&m);
    ui_init(&ui, false, false);
    assert_true(app_confirm_fix(&ui, "inv-7", old, sizeof old, new_, sizeof new_));
    golden_screens(&m, &ui, "fix");
    model_free(&m);
    ui_free(&ui);
}

static void
golden_help(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    ui.mode = MODE_HELP;
    golden_screens(&m, &ui, "help");
    model_free(&m);
    ui_free(&ui);
}

static void
golden_picker(void **state)
{
    struct model m;
    struct ui ui;
    const char *names[] = {"billing", "emails", "orders", "webhooks"};
    char **owned = calloc(4, sizeof *owned);
    int64_t(*counts)[4] = calloc(4, sizeof *counts);

    make_model(&m);
    ui_init(&ui, false, false);
    for (int i = 0; i < 4; i++) {
        owned[i] = dup_str(names[i]);
        counts[i][0] = 3 * i;
        counts[i][1] = 100 * i;
        counts[i][2] = i;
        counts[i][3] = i == 3 ? 42 : 0;
    }
    app_set_picker(&ui, owned, counts, 4, 4, "orders");
    golden_screens(&m, &ui, "picker");
    model_free(&m);
    ui_free(&ui);
}

/* The Errors view (E), then the Failed pane showing one group; a signature holding an
 * escape sequence (bytes from Redis) is shown escaped. */
static void
golden_errors(void **state)
{
    static const struct {
        const char *sig, *sample;
        int64_t count, ago;
    } groups[] = {
        {"error: exit #: ValueError: invoice #: currency XAF not supported by the ledger "
         "service (rates table <uuid> has no entry for the pair XAF/EUR at the invoice date)",
         "exit 1: ValueError: invoice 4411: currency XAF not supported by the ledger service", 1200,
         2000},
        {"attempts exhausted: smtp <email> refused", "smtp ana@example.com refused", 300, 65000},
        {"expired: claimed # ms after its deadline", "claimed 912 ms after its deadline", 41,
         3600000},
        {"error: \x1b[31mred\x1b[0m \"*\" in /srv/*", "\x1b[31mred\x1b[0m \"x\" in /srv/a.csv", 7,
         120000},
    };
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    ui.errors.n = 4;
    ui.errors.groups = calloc(4, sizeof *ui.errors.groups);
    ui.errors.now_ms = m.stats.now_ms;
    for (size_t i = 0; i < 4; i++) {
        dq_error_group *g = &ui.errors.groups[i];
        snprintf(g->id, sizeof g->id, "5d3d4f25ba1573%02zx", 0x5a + i);
        g->signature = dup_str(groups[i].sig);
        g->sample_id = dup_str("42");
        g->sample_error = dup_str(groups[i].sample);
        g->count = groups[i].count;
        g->last_ms = m.stats.now_ms - groups[i].ago;
        g->first_ms = g->last_ms - 600000 * (int64_t)(i + 1); /* first seen 10m, 20m... before */
        ui.errors.failed += g->count;
    }
    ui.mode = MODE_ERRORS;
    ui.err_sel = 1;
    golden_screens(&m, &ui, "errors");
    /* Enter: the Failed pane shows the group */
    assert_int_equal(keymap_key(&ui, &m, KEY_APP_ENTER) & APP_REFETCH, APP_REFETCH);
    assert_int_equal(ui.mode, MODE_MAIN);
    assert_int_equal(ui.focus, PANE_FAILED);
    assert_string_equal(ui.group, ui.errors.groups[1].id);
    golden_screens(&m, &ui, "errors_group");
    /* r with nothing marked asks about the whole group, naming it and its size */
    keymap_key(&ui, &m, 'r');
    assert_int_equal(ui.mode, MODE_CONFIRM);
    assert_int_equal(ui.confirm_action, ACT_REQUEUE_FILTER);
    assert_non_null(strstr(ui.prompt, "1 failed task of group 5d3d4f25 \"attempts exhausted: smtp "
                                      "<email> refused\""));
    keymap_key(&ui, &m, 'n');
    /* Esc: every failed task again */
    keymap_key(&ui, &m, KEY_APP_ESC);
    assert_string_equal(ui.group, "");
    model_free(&m);
    ui_free(&ui);
}

/* The Schedules view (S): every kind of last run, a paused schedule, a late catch-up and
 * a spec holding escape sequences (bytes from Redis: shown escaped); the selected one
 * (the late one) in full below the rows. */
static void
golden_schedules(void **state)
{
    static const struct {
        const char *name, *spec, *tz;
        int64_t every_ms, next_in, last_ago, late_ms, missed, runs;
        bool paused;
        enum sched_run run;
        int64_t since_ago, took;
        const char *worker, *text;
        uint32_t attempt;
    } rows[] = {
        {"billing.nightly", "0 3 * * *", "Europe/Berlin", 0, 75600000, 10800000, 0, 0, 12, false,
         SCHED_RUN_DONE, 10798800, 1200, "w@host:1", "", 1},
        {"cleanup", "", "", 900000, -1, 300000, 0, 0, 40, true, SCHED_RUN_FAILED, 299000, -1, "",
         "error: exit 1: disk full", 1},
        {"digest", "*/5 * * * *\x1b]0;pwned\x07", "", 0, 120000, 180000, 0, 0, 3, false,
         SCHED_RUN_GONE, -1, -1, "", "", 0},
        {"never-yet", "", "", 86400000, 86000000, -1, 0, 0, 0, false, SCHED_RUN_NEVER, -1, -1, "",
         "", 0},
        {"report.hourly", "", "", 3600000, 3540000, 60000, 3600000, 3, 210, false,
         SCHED_RUN_INFLIGHT, 12000, -1, "w@host:2", "", 1},
        {"retrying", "", "", 60000, 30000, 30000, 0, 0, 99, false, SCHED_RUN_SCHEDULED, -1, -1, "",
         "timed out after 30s", 2},
    };
    const size_t n = sizeof rows / sizeof rows[0];
    struct model m;
    struct ui ui;

    make_model(&m);
    m.config_ms = m.stats.now_ms;
    ui_init(&ui, false, false);
    int64_t now = m.stats.now_ms;
    ui.scheds.now_ms = now;
    ui.scheds.n = n;
    ui.scheds.items = calloc(n, sizeof *ui.scheds.items);
    ui.sched_last = calloc(n, sizeof *ui.sched_last);
    for (size_t i = 0; i < n; i++) {
        dq_schedule *x = &ui.scheds.items[i];
        struct sched_last *l = &ui.sched_last[i];
        char id[64];
        x->name = dup_str(rows[i].name);
        x->spec = dup_str(rows[i].spec);
        x->tz = dup_str(rows[i].tz);
        x->by = dup_str("alice@ops");
        x->every_ms = rows[i].every_ms;
        x->paused = rows[i].paused;
        x->next_ms = rows[i].next_in < 0 ? -1 : now + rows[i].next_in;
        x->last_ms = rows[i].last_ago < 0 ? -1 : now - rows[i].last_ago;
        snprintf(id, sizeof id, "%s@%lld", rows[i].name, (long long)x->last_ms);
        x->last_id = dup_str(x->last_ms < 0 ? "" : id);
        x->late_ms = rows[i].late_ms;
        x->missed = rows[i].missed;
        x->runs = rows[i].runs;
        l->run = rows[i].run;
        l->since_ms = rows[i].since_ago < 0 ? -1 : now - rows[i].since_ago;
        l->took_ms = rows[i].took;
        l->attempt = rows[i].attempt;
        snprintf(l->worker, sizeof l->worker, "%s", rows[i].worker);
        snprintf(l->text, sizeof l->text, "%s", rows[i].text);
    }
    ui.mode = MODE_SCHEDULES;
    ui.sched_sel = 4;
    golden_screens(&m, &ui, "schedules");
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "\\e]0;pwned"); /* escaped, never a terminal command */
    for (const char *p = text; *p; p++)
        assert_true((unsigned char)*p >= 0x20 || *p == '\n');
    free(text);
    /* a tiny terminal: cut, never out of the grid (ASan watches) */
    text = render(&m, &ui, 6, 30);
    assert_has(text, " schedules of orders");
    free(text);
    free(render(&m, &ui, 2, 10));
    /* P: the question over the view */
    assert_int_equal(keymap_key(&ui, &m, 'P'), APP_REDRAW);
    text = render(&m, &ui, 24, 80);
    assert_has(text, "pause schedule report.hourly (it fires no more until resumed)? y/N");
    assert_has(text, "schedules of orders: 6 (1 paused)");
    free(text);
    keymap_key(&ui, &m, 'n');
    /* --read-only: the footer does not offer P */
    ui.read_only = true;
    text = render(&m, &ui, 24, 80);
    assert_null(strstr(text, "P pause"));
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* The Done pane (5): finished tasks newest first with when, how long, where and which
 * attempt; with done_retention 0 it says how to turn it on instead of an empty list. */
static void
golden_done(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    int64_t now = m.stats.now_ms;
    m.config_ms = now;
    m.config.done_retention = 1000;
    dq_page *p = &m.pages[PANE_DONE];
    p->n = 3;
    p->total = 812;
    p->tasks = calloc(3, sizeof *p->tasks);
    for (size_t i = 0; i < 3; i++) {
        dq_task *t = &p->tasks[i];
        char id[32];
        snprintf(id, sizeof id, "charge-%zu", 123 - i);
        t->id = dup_str(id);
        t->state = DQ_STATE_DONE;
        t->attempt = (uint32_t)(i == 1 ? 2 : 1);
        t->done_ms = now - 1234 - 60000 * (int64_t)i;
        t->claimed_ms = t->done_ms - (i == 2 ? 86400000 : 120);
        t->due_ms = t->claimed_ms - 5;
        t->worker = dup_str(i == 2 ? "w\x1b[2J@host:9" : "w1@host:4242");
    }
    ui_init(&ui, false, false);
    keymap_key(&ui, &m, '5');
    golden_screens(&m, &ui, "done");
    char *text = render(&m, &ui, 40, 140);
    assert_has(text, "[5] Done (812)");
    assert_has(text, "w\\e[2J@host:9");   /* escaped */
    assert_null(strstr(text, "[1] Due")); /* a tab, over the panes' space */
    free(text);

    /* retention off: how to turn it on */
    dq_page_free(p);
    m.config.done_retention = 0;
    text = render(&m, &ui, 24, 80);
    assert_has(text, "(done retention is off: finished tasks are not kept)");
    assert_has(text, "delayq config done_retention=1000 keeps the last 1000 finished tasks");
    free(text);
    /* before the config is read, no claim about it */
    m.config_ms = -1;
    text = render(&m, &ui, 24, 80);
    assert_has(text, "(empty)");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* The Schedules view shows as many schedules as it says it does (the jobs look up that
 * many last runs): at 80x24 the rows and the lines about the selected one fit. */
static void
schedule_rows_fit_the_screen(void **state)
{
    assert_int_equal(view_schedule_rows(24, 80), 15);
    assert_true(view_schedule_rows(50, 200) > view_schedule_rows(24, 80));
    assert_int_equal(view_schedule_rows(5, 80), 1);
}

/* The Failed pane of a group of 24 failed tasks, 17 of them on the page shown. */
static void
group_page_model(struct model *m, struct ui *ui)
{
    make_model(m);
    ui_init(ui, false, false);
    m->pages[PANE_FAILED].total = 24;
    m->stats.failed = 28;
    ui->focus = PANE_FAILED;
    snprintf(ui->group, sizeof ui->group, "5d3d4f25ba15735a");
    snprintf(ui->group_sig, sizeof ui->group_sig,
             "error: exit #: ValueError: invoice #: currency XAF not supported");
}

/* The focused title of a group (a filter) is in one colour that has a pair (not the OR
 * of cyan and yellow, drawn black on black), and the range at its end is not drawn over
 * it: the title is cut before it. */
static void
filter_title_is_readable_beside_its_range(void **state)
{
    struct model m;
    struct ui ui;
    struct grid g = {0};
    struct layout l;

    group_page_model(&m, &ui);
    assert_int_equal(grid_init(&g, 24, 80), 0);
    view_layout(&ui, 24, 80, &l);
    app_set_layout(&ui, &l);
    view_render(&m, &ui, &g);
    int row = l.boxes[PANE_FAILED].row;
    for (int c = 0; c < 50; c++) {
        uint16_t a = g.cells[row * g.cols + c].attr;
        assert_int_equal(GRID_COLOR_OF(a), GRID_YELLOW);
        assert_true(a & GRID_BOLD);
    }
    char *text = grid_to_text(&g);
    char *line = text;
    for (int r = 0; r < row; r++)
        line = strchr(line, '\n') + 1;
    *strchr(line, '\n') = '\0';
    assert_non_null(strstr(line, "[4] Failed FILTER group 5d3d4f25: 24 of 28 (Esc: all) \"err"));
    assert_non_null(strstr(line, "… 1-1 of 24"));
    free(text);
    grid_free(&g);
    model_free(&m);
    ui_free(&ui);
}

static void
type_text(struct ui *ui, const struct model *m, const char *s)
{
    for (; *s; s++)
        keymap_key(ui, m, *s);
}

/* The last line of @text (the status line), and the one above it. */
static void
last_lines(const char *text, char *above, char *last, size_t size)
{
    const char *end = text + strlen(text) - 1, *p = end;
    while (p > text && p[-1] != '\n')
        p--;
    snprintf(last, size, "%.*s", (int)(end - p), p);
    const char *q = p - 1;
    while (q > text && q[-1] != '\n')
        q--;
    snprintf(above, size, "%.*s", (int)(p - 1 - q), q);
}

/* Every question of a bulk action shows its count and what to answer at 80 columns,
 * the signature shortened to make room. */
static void
questions_fit_at_80_columns(void **state)
{
    struct model m;
    struct ui ui;
    char above[512], last[512];

    group_page_model(&m, &ui);
    /* one task: y/N */
    m.pages[PANE_FAILED].total = 1;
    keymap_key(&ui, &m, 'd');
    assert_int_equal(ui.mode, MODE_CONFIRM);
    char *text = render(&m, &ui, 24, 80);
    last_lines(text, above, last, sizeof last);
    assert_non_null(strstr(last, " drop 1 failed task of group 5d3d4f25 \"error: exit #"));
    assert_non_null(strstr(last, "…\" for good? y/N"));
    free(text);
    keymap_key(&ui, &m, 'n');
    /* more: the queue's name is typed, and what was typed shows */
    m.pages[PANE_FAILED].total = 151;
    keymap_key(&ui, &m, 'r');
    keymap_key(&ui, &m, 'b');
    keymap_key(&ui, &m, 'i');
    text = render(&m, &ui, 24, 80);
    last_lines(text, above, last, sizeof last);
    assert_string_equal(above, " requeue 151 failed tasks of group 5d3d4f25 \"error: exit #: "
                               "ValueError: invoi…\"?");
    assert_string_equal(last, " type the queue name orders to confirm (Esc cancels): bi_");
    free(text);
    /* a long queue name: still two lines, the signature shortened */
    keymap_key(&ui, &m, KEY_APP_ESC);
    snprintf(m.queue, sizeof m.queue, "billing-invoices-europe-west-primary-2026");
    keymap_key(&ui, &m, 'X');
    text = render(&m, &ui, 24, 80);
    last_lines(text, above, last, sizeof last);
    assert_non_null(strstr(above, " drop 151 failed tasks of group 5d3d4f25 \"error: exit #:"));
    assert_non_null(strstr(above, "…\" for good?"));
    assert_non_null(
        strstr(last, "type the queue name billing-invoices-europe-west-primary-2026 to"));
    /* a y/N question that is too long even with its quote cut wraps at a blank */
    keymap_key(&ui, &m, KEY_APP_ESC);
    ui.group[0] = '\0';
    ui.focus = PANE_DUE;
    keymap_key(&ui, &m, 'P');
    type_text(&ui, &m, "10m");
    keymap_key(&ui, &m, KEY_APP_ENTER);
    type_text(&ui, &m, "the ledger database is being restored from last night's backup");
    keymap_key(&ui, &m, KEY_APP_ENTER);
    free(text);
    text = render(&m, &ui, 24, 80);
    last_lines(text, above, last, sizeof last);
    assert_non_null(strstr(above, " pause queue billing-invoices-europe-west-primary-2026 for"));
    assert_non_null(strstr(last, "backup? y/N"));
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* E at 80x24: every group's whole signature (over more lines where needed), its first
 * seen age, and the selected group's id and newest error; the selection stays on screen
 * when it is far down a list of long rows. */
static void
errors_view_says_why_and_since_when_at_80_columns(void **state)
{
    static const char sig[] = "error: exit #: ValueError: invoice #: currency XAF not "
                              "supported by the ledger service in region eu-west";
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    ui.errors.n = 12;
    ui.errors.groups = calloc(12, sizeof *ui.errors.groups);
    ui.errors.now_ms = m.stats.now_ms;
    for (size_t i = 0; i < 12; i++) {
        dq_error_group *g = &ui.errors.groups[i];
        char buf[200];
        snprintf(g->id, sizeof g->id, "%016zx", 0x5d3d4f25ba157300 + i);
        snprintf(buf, sizeof buf, "%s %zu", sig, i);
        g->signature = dup_str(buf);
        g->sample_id = dup_str("1135");
        g->sample_error = dup_str("exit 1: ValueError: invoice 1135: currency XAF not supported");
        g->count = 100 - (int64_t)i;
        g->last_ms = m.stats.now_ms - 1000;
        g->first_ms = m.stats.now_ms - 167000; /* 2m47s */
        ui.errors.failed += g->count;
    }
    ui.mode = MODE_ERRORS;
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "FIRST SEEN");
    assert_has(text, "2m47s");
    assert_has(text, " group 5d3d4f25ba157300, its newest failure, task 1135:\n"
                     "   exit 1: ValueError: invoice 1135: currency XAF not supported\n");
    /* the first signature, whole, over two lines */
    assert_has(text, "error: exit #: ValueError: invoice #:\n");
    assert_has(text, "currency XAF not supported by the ledger service in region eu-west 0\n");
    assert_has(text, " j/k move  Enter: its tasks in Failed  Esc back  (exact counts)");
    free(text);
    /* G: the last group is on screen, whole */
    keymap_key(&ui, &m, 'G');
    assert_int_equal(ui.err_sel, 11);
    text = render(&m, &ui, 24, 80);
    assert_has(text, "in region eu-west 11\n");
    assert_has(text, " group 5d3d4f25ba15730b, its newest failure");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* The rows of a search say why they matched when their usual text would not: the trace
 * line that holds the needle (smart case, as on the server), or the payload. */
static void
search_rows_show_what_matched(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    dq_task *f = &m.pages[PANE_FAILED].tasks[0];
    f->trace = dup_str("Traceback (most recent call last):\n"
                       "    File \"/srv/billing/db.py\", line 9, in connect\n"
                       "psycopg2.OperationalError: connection to LEDGER-db:5432 refused\n");
    ui.focus = PANE_FAILED;
    snprintf(ui.filter, sizeof ui.filter, "ledger-db");
    ui.filter_pane = PANE_FAILED;
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "trace: …: connection to LEDGER-db:5432");
    free(text);
    /* a needle the error holds: the row as usual */
    snprintf(ui.filter, sizeof ui.filter, "declined");
    text = render(&m, &ui, 24, 80);
    assert_has(text, "error: card declined");
    assert_null(strstr(text, "trace:"));
    free(text);
    /* a capital: exact, so the trace line with "ledger" in lower case does not match */
    snprintf(ui.filter, sizeof ui.filter, "Ledger");
    text = render(&m, &ui, 24, 80);
    assert_null(strstr(text, "trace:"));
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* The Keys view (K) over @k, as the loop opens it: job_keys_text, then a text view. */
static void
keys_view(struct ui *ui, const dq_keys *k, const char *title)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct action_result r = {0};

    job_keys_text(&b, k);
    dq_buf_putc(&b, '\0');
    assert_false(b.failed);
    r.act = ACT_KEYS;
    r.detail = dq_buf_steal(&b, NULL);
    snprintf(r.title, sizeof r.title, "%s", title);
    app_action_done(ui, &r, "billing");
    assert_int_equal(ui->mode, MODE_DETAILS);
    dq_buf_free(&b);
}

/* The Keys view: which customer a backlog is. One big key parked at its limit, small
 * ones due, one with failures, and one key of hostile bytes (an OSC title sequence
 * ending in BEL) shown escaped; then a queue with no keyed tasks says how keys are given. */
static void
golden_keys(void **state)
{
    struct model m;
    struct ui ui;
    dq_key_row rows[] = {
        {.key = "acme-imports", .due = 0, .parked = 49000, .inflight = 1, .failed = 0},
        {.key = "globex", .due = 12, .parked = 0, .inflight = 1, .failed = 3},
        {.key = "\x1b]0;pwned\x07", .due = 5, .parked = 0, .inflight = 0, .failed = 1},
        {.key = "initech", .due = 0, .parked = 0, .inflight = 0, .failed = 2},
    };

    make_model(&m);
    ui_init(&ui, false, false);
    int64_t now = m.stats.now_ms;
    int64_t ago[] = {20 * 60000, 42000, 3000, -1};
    for (size_t i = 0; i < 4; i++) {
        rows[i].key_len = strlen(rows[i].key);
        rows[i].oldest_due_ms = ago[i] < 0 ? -1 : now - ago[i];
    }
    dq_keys k = {.rows = rows,
                 .n = 4,
                 .now_ms = now,
                 .due_seen = 17,
                 .due_total = 17,
                 .failed_seen = 6,
                 .failed_total = 6,
                 .parked_total = 49000};
    keys_view(&ui, &k, "keys of billing: 4 with tasks");
    golden_screens(&m, &ui, "keys");
    /* the key's bytes never reach the screen raw: ESC and BEL are shown escaped */
    char *text = render(&m, &ui, 24, 80);
    assert_null(strchr(text, '\x1b'));
    assert_null(strchr(text, '\x07'));
    assert_non_null(strstr(text, "\\e]0;pwned\\x07"));
    assert_non_null(strstr(text, "20m00s ago"));
    free(text);

    dq_keys none = {.now_ms = now};
    keys_view(&ui, &none, "keys of billing: 0 with tasks");
    text = render(&m, &ui, 24, 80);
    golden_check("keys_empty_80x24", text);
    assert_non_null(strstr(text, "delayq enqueue --key KEY"));
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/*
 * The on-call scenarios, each at 80x24, 100x30 and 160x50: what the first screen says
 * when nobody consumes, a handler hangs, a downstream is out, someone paused the
 * queue, or a killed worker left expired leases.
 */
static const int scenario_sizes[][2] = {{24, 80}, {30, 100}, {50, 160}};

static void
scenario_screens(struct model *m, struct ui *ui, const char *scenario)
{
    for (size_t i = 0; i < sizeof scenario_sizes / sizeof scenario_sizes[0]; i++) {
        char name[64];
        int rows = scenario_sizes[i][0], cols = scenario_sizes[i][1];
        snprintf(name, sizeof name, "oncall_%s_%dx%d", scenario, cols, rows);
        char *text = render(m, ui, rows, cols);
        golden_check(name, text);
        free(text);
    }
}

static void
scenario_model(struct model *m)
{
    make_model(m);
    m->stats.expired_leases = 0;
    m->pages[PANE_INFLIGHT].tasks[0].lease_ms = m->stats.now_ms + 27000;
    m->pages[PANE_INFLIGHT].tasks[0].claimed_ms = m->stats.now_ms - 3000;
    m->stats.trimmed = 0;
    m->workers = (struct worker_summary){2, 2, 0, m->stats.now_ms - 4000, 0, ""};
}

static void
golden_oncall(void **state)
{
    struct model m;
    struct ui ui;
    const int64_t now = 1795942260000;

    /* nobody consuming: 40 due, both workers silent for 3m12s */
    scenario_model(&m);
    m.stats.due = 40;
    m.pages[PANE_DUE].total = 40;
    m.stats.oldest_due_age_ms = 33000;
    m.workers = (struct worker_summary){2, 0, 2, now - 192000, 0, ""};
    ui_init(&ui, false, false);
    scenario_screens(&m, &ui, "noworker");
    model_free(&m);

    /* a hung handler: claimed 12 minutes ago, its lease kept renewed */
    scenario_model(&m);
    m.pages[PANE_INFLIGHT].tasks[0].claimed_ms = now - 720000;
    m.pages[PANE_INFLIGHT].tasks[0].attempt = 0;
    ui.focus = PANE_INFLIGHT;
    scenario_screens(&m, &ui, "hung");
    model_free(&m);

    /* a downstream outage: the retrying task says why it waits */
    scenario_model(&m);
    dq_task *f = &m.pages[PANE_FUTURE].tasks[0];
    f->attempt = 6;
    f->last_error = dup_str("exit 75 (temporary failure): upstream 503 from payments-api");
    m.fail_rate = 0;
    ui.focus = PANE_FUTURE;
    scenario_screens(&m, &ui, "outage");
    model_free(&m);

    /* paused by someone else, for 20 more minutes */
    scenario_model(&m);
    m.stats.paused = true;
    m.stats.paused_since_ms = now - 600000;
    m.stats.paused_until_ms = now + 1200000;
    snprintf(m.stats.paused_by, sizeof m.stats.paused_by, "alice@ops");
    snprintf(m.stats.pause_reason, sizeof m.stats.pause_reason, "deploy rollback");
    ui.focus = PANE_DUE;
    scenario_screens(&m, &ui, "paused");
    model_free(&m);

    /* a worker killed holding tasks: its lease ran out, one worker lost */
    scenario_model(&m);
    m.stats.expired_leases = 1;
    m.pages[PANE_INFLIGHT].tasks[0].lease_ms = now - 5000;
    m.pages[PANE_INFLIGHT].tasks[0].claimed_ms = now - 35000;
    m.workers = (struct worker_summary){2, 1, 1, now - 2000, 0, ""};
    ui.focus = PANE_INFLIGHT;
    scenario_screens(&m, &ui, "expired");
    model_free(&m);
    ui_free(&ui);
}

/* ---- the History view (H): a fixed data set ------------------------------------------ */

/* 2026-12-02T03:30:20Z: the inspector is opened at 03:30, an hour after the story began */
#define HIST_NOW 1796182220000LL

/* A healthy minute's row at @at: ~100 done, a failure now and then, runs of 25..500 ms. */
static void
hist_healthy(dq_history_row *r, int64_t at, int i)
{
    memset(r, 0, sizeof *r);
    r->at_ms = at;
    r->done = 95 + (i * 7) % 11;
    r->failed = i % 9 == 0;
    r->retried = 2 + i % 3;
    r->enqueued = r->started = r->done + r->failed + r->retried;
    r->run[3] = 20;
    r->run[4] = r->done - 40;
    r->run[5] = 15;
    r->run[6] = 5 + r->failed + r->retried;
    r->run_sum_ms = r->done * 60;
    r->backlog = 8 + i % 5;
    r->oldest_due_ms = 400 + 50 * (i % 4);
}

/*
 * The hour before 03:30: healthy until a handler fails for two minutes (03:05, 03:06: slow
 * runs, failures and retries, the backlog jumps); bob pauses at 03:07 (nothing done, the
 * backlog grows) and resumes at 03:12 (it drains); alice requeues the failures at 03:20 (a
 * bump of done), then all is healthy again. Carol's refused drop at 03:15 and a config
 * change before the span are not marked.
 */
static void
hist_fixture(dq_history *h, dq_audit *a)
{
    int64_t first = (HIST_NOW / 60000 - 59) * 60000;

    memset(h, 0, sizeof *h);
    h->n = 60;
    h->rows = calloc(h->n, sizeof *h->rows);
    h->now_ms = HIST_NOW;
    h->step_ms = 60000;
    h->history_minutes = 1440;
    for (int i = 0; i < 60; i++) {
        dq_history_row *r = &h->rows[i];
        int64_t at = first + (int64_t)i * 60000;
        int minute = (int)(at / 60000 % 60); /* 31..59, 0..30 */
        hist_healthy(r, at, i);
        if (at < first + 34 * 60000)
            continue;                     /* 02:31..03:04 */
        if (minute == 5 || minute == 6) { /* the failing handler */
            r->done = minute == 5 ? 30 : 25;
            r->failed = minute == 5 ? 85 : 92;
            r->retried = minute == 5 ? 40 : 44;
            memset(r->run, 0, sizeof r->run);
            r->run[10] = r->done + r->retried;
            r->run[11] = r->failed;
            r->backlog = minute == 5 ? 150 : 320;
            r->oldest_due_ms = minute == 5 ? 30000 : 90000;
        } else if (minute >= 7 && minute <= 11) { /* paused: nothing runs, the backlog grows */
            r->done = r->failed = r->retried = r->started = 0;
            memset(r->run, 0, sizeof r->run);
            r->backlog = 320 + (minute - 6) * 100;
            r->oldest_due_ms = (minute - 4) * 60000;
        } else if (minute >= 12 && minute <= 19) { /* resumed: it drains */
            r->done = 160;
            r->run[4] = 100;
            r->backlog = 900 - (minute - 11) * 100;
        } else if (minute == 20 || minute == 21) { /* the requeued failures run */
            r->done = minute == 20 ? 240 : 190;
            r->requeued = minute == 20 ? 177 : 0;
            r->run[4] = r->done - 40;
            r->backlog = minute == 20 ? 90 : 30;
        }
    }
    static const struct {
        int64_t at;
        const char *who, *action, *result;
    } e[] = {
        {HIST_NOW - 608000, "alice@ops", "requeue-all", "ok: 100 moved (of 177 in scope)"},
        {HIST_NOW - 609000, "alice@ops", "requeue-all", "ok: 77 moved, finished"},
        {HIST_NOW - 880000, "carol", "drop", "refused: not found: t1"},
        {HIST_NOW - 1095000, "bob@ops", "resume", "ok"},
        {HIST_NOW - 1370000, "bob@ops", "pause", "ok"},
        {HIST_NOW - 5420000, "ops", "config", "ok"},
    };
    memset(a, 0, sizeof *a);
    a->n = sizeof e / sizeof e[0];
    a->entries = calloc(a->n, sizeof *a->entries);
    for (size_t i = 0; i < a->n; i++) {
        dq_audit_entry *x = &a->entries[i];
        x->at_ms = e[i].at;
        x->who = dup_str(e[i].who);
        x->who_len = strlen(e[i].who);
        x->action = dup_str(e[i].action);
        x->action_len = strlen(e[i].action);
        x->result = dup_str(e[i].result);
        x->result_len = strlen(e[i].result);
        x->detail = dup_str("");
    }
}

static void
golden_history(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    hist_fixture(&ui.hist, &ui.hist_audit);
    ui.have_hist = true;
    ui.mode = MODE_HISTORY;
    golden_screens(&m, &ui, "history");
    char *text = render(&m, &ui, 24, 80);
    /* the bump, the marks, and the refused drop and the older config change unmarked */
    assert_has(text, "failed 1");
    assert_has(text, "03:20 requeue-all alice@ops (2x)");
    assert_has(text, "03:07 pause bob@ops");
    assert_has(text, "03:12 resume bob@ops");
    assert_null(strstr(text, "carol"));
    assert_null(strstr(text, "config ops"));
    free(text);
    /* ASCII: no block characters at all */
    ui.ascii = true;
    text = render(&m, &ui, 24, 80);
    golden_check("history_ascii_80x24", text);
    /* no block, box or dot characters (U+2500..U+25FF, the middle dot, >=) */
    assert_null(strstr(text, "\xe2\x94"));
    assert_null(strstr(text, "\xe2\x95"));
    assert_null(strstr(text, "\xe2\x96"));
    assert_null(strstr(text, "·"));
    assert_null(strstr(text, "≥"));
    free(text);
    ui.ascii = false;
    /* hostile bytes in the audit log are escaped in the legend */
    free(ui.hist_audit.entries[3].who);
    ui.hist_audit.entries[3].who = dup_str("bob\x1b]0;pwned\x07");
    ui.hist_audit.entries[3].who_len = strlen(ui.hist_audit.entries[3].who);
    text = render(&m, &ui, 24, 80);
    assert_has(text, "\\e]0;pwned");
    for (const char *p = text; *p; p++)
        assert_true((unsigned char)*p >= 0x20 || *p == '\n');
    free(text);
    /* tiny terminals: cut, never out of the grid (ASan watches) */
    free(render(&m, &ui, 6, 30));
    free(render(&m, &ui, 2, 10));
    free(render(&m, &ui, 1, 1));
    model_free(&m);
    ui_free(&ui);
}

/* 24 h at 15-minute steps is 96 columns: at 80 two steps share a column (30 min). */
static void
golden_history_day(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    dq_history *h = &ui.hist;
    h->n = 96;
    h->rows = calloc(h->n, sizeof *h->rows);
    h->now_ms = HIST_NOW;
    h->step_ms = 900000;
    h->history_minutes = 1440;
    int64_t first = (HIST_NOW / 900000 - 95) * 900000;
    for (int i = 0; i < 96; i++) {
        dq_history_row *r = &h->rows[i];
        hist_healthy(r, first + (int64_t)i * 900000, i);
        r->done *= 15;
        r->failed = i == 92 ? 177 : r->failed * 3; /* 03:00: the failing handler */
        r->backlog = i == 92 ? 320 : i == 93 ? 700 : r->backlog;
    }
    ui.have_hist = true;
    ui.hist_span = ui.hist_span_read = 2;
    ui.mode = MODE_HISTORY;
    char *text = render(&m, &ui, 24, 80);
    golden_check("history_24h_80x24", text);
    assert_has(text, "the last 24h, a column = 30m");
    assert_has(text, "╵06:00");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* history_minutes 0: the view says so and how to turn it on */
static void
golden_history_off(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    ui.hist.now_ms = HIST_NOW;
    ui.hist.step_ms = 60000;
    ui.have_hist = true;
    ui.mode = MODE_HISTORY;
    char *text = render(&m, &ui, 24, 80);
    golden_check("history_off_80x24", text);
    assert_has(text, "history_minutes=1440");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* The header's due backlog: the last 30 minutes from the rollups when the queue keeps
 * them (labelled 30m, a minute without a sample blank; from the first sample when history
 * is younger), else the live samples; ASCII when asked. */
static void
header_backlog_comes_from_the_rollups(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    for (int i = 0; i < SPARK_LEN; i++)
        m.spark[i] = i;
    m.nspark = SPARK_LEN;
    char *text = render(&m, &ui, 40, 200);
    assert_has(text, "due backlog  ");
    assert_null(strstr(text, "due backlog 30m"));
    free(text);
    for (int i = 0; i < SPARK_MINUTES; i++)
        m.hspark[i] = i == 10 ? -1 : i < 20 ? 0 : 700; /* a jump 10 minutes ago */
    m.nhspark = SPARK_MINUTES;
    text = render(&m, &ui, 40, 200);
    assert_has(text, "due backlog 30m"
                     "                      "
                     "██████████\n");
    free(text);
    ui.ascii = true;
    text = render(&m, &ui, 40, 200);
    assert_has(text, "due backlog 30m"
                     "                      "
                     "@@@@@@@@@@\n");
    free(text);
    ui.ascii = false;
    /* history turned on 12 minutes ago: the minutes before its first sample are left out */
    for (int i = 0; i < SPARK_MINUTES - 12; i++)
        m.hspark[i] = -1;
    text = render(&m, &ui, 40, 200);
    assert_has(text, "due backlog 12m    ██████████\n");
    free(text);
    /* no sample at all in the 30 minutes: the inspector's own samples */
    for (int i = 0; i < SPARK_MINUTES; i++)
        m.hspark[i] = -1;
    text = render(&m, &ui, 40, 200);
    assert_has(text, "due backlog  ");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

/* Counts no script writes (a foreign HSET): the largest int64 values, negatives, an audit
 * entry without fields. Drawn without overflow (UBSan watches) and scaled as they are. */
static void
history_survives_hostile_counts(void **state)
{
    struct model m;
    struct ui ui;

    make_model(&m);
    ui_init(&ui, false, false);
    dq_history *h = &ui.hist;
    h->n = 60;
    h->rows = calloc(h->n, sizeof *h->rows);
    h->now_ms = HIST_NOW;
    h->step_ms = 60000;
    h->history_minutes = 1440;
    int64_t first = (HIST_NOW / 60000 - 59) * 60000;
    for (int i = 0; i < 60; i++) {
        dq_history_row *r = &h->rows[i];
        r->at_ms = first + (int64_t)i * 60000;
        r->done = INT64_MAX;
        r->failed = i % 2 ? INT64_MIN : -5;
        r->retried = i;
        r->backlog = i == 59 ? INT64_MAX : -1;
        for (int k = 0; k < DQ_RUN_BUCKETS; k++)
            r->run[k] = INT64_MAX;
    }
    ui.hist_audit.n = 2;
    ui.hist_audit.entries = calloc(2, sizeof *ui.hist_audit.entries);
    ui.hist_audit.entries[0].at_ms = HIST_NOW - 1000; /* no fields at all */
    ui.hist_audit.entries[1].at_ms = HIST_NOW - 2000;
    ui.hist_audit.entries[1].result = dup_str("ok");
    ui.hist_audit.entries[1].result_len = 2;
    ui.have_hist = true;
    ui.mode = MODE_HISTORY;
    char *text = render(&m, &ui, 24, 80);
    assert_has(text, "   9.2E│"); /* the done panel's scale: INT64_MAX, truncated */
    assert_has(text, "totals: done 9223372036854775807 failed 0 retried 1770");
    assert_has(text, "marks");
    free(text);
    model_free(&m);
    ui_free(&ui);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(large_layout_shows_all_panes),
        cmocka_unit_test(banner_tells_refused_and_slow_from_down),
        cmocka_unit_test(verdict_takes_the_queues_thresholds),
        cmocka_unit_test(unknown_queue_is_marked),
        cmocka_unit_test(hostile_bytes_are_escaped),
        cmocka_unit_test(small_layout_has_tabs_and_fits),
        cmocka_unit_test(keys_move_and_refuse_when_read_only),
        cmocka_unit_test(details_view_scrolls),
        cmocka_unit_test(marks_apply_actions_to_the_set),
        cmocka_unit_test(click_focuses_and_selects),
        cmocka_unit_test(queue_picker_lists_moves_and_switches),
        cmocka_unit_test(selection_follows_its_task_across_a_refresh),
        cmocka_unit_test(header_keeps_what_matters_at_80_columns),
        cmocka_unit_test(header_names_the_cluster_node),
        cmocka_unit_test(rows_say_since_when_and_why),
        cmocka_unit_test(hints_follow_the_pane),
        cmocka_unit_test(pause_asks_how_long_why_and_confirms),
        cmocka_unit_test(workers_in_the_header_and_the_verdict),
        cmocka_unit_test(golden_main),
        cmocka_unit_test(golden_details),
        cmocka_unit_test(golden_fix),
        cmocka_unit_test(e_fixes_a_failed_task_after_y),
        cmocka_unit_test(golden_help),
        cmocka_unit_test(golden_picker),
        cmocka_unit_test(golden_errors),
        cmocka_unit_test(golden_schedules),
        cmocka_unit_test(golden_keys),
        cmocka_unit_test(golden_done),
        cmocka_unit_test(schedule_rows_fit_the_screen),
        cmocka_unit_test(golden_oncall),
        cmocka_unit_test(golden_overview),
        cmocka_unit_test(golden_history),
        cmocka_unit_test(header_backlog_comes_from_the_rollups),
        cmocka_unit_test(golden_history_day),
        cmocka_unit_test(golden_history_off),
        cmocka_unit_test(history_survives_hostile_counts),
        cmocka_unit_test(filter_title_is_readable_beside_its_range),
        cmocka_unit_test(questions_fit_at_80_columns),
        cmocka_unit_test(errors_view_says_why_and_since_when_at_80_columns),
        cmocka_unit_test(search_rows_show_what_matched),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/view", tests, NULL, NULL);
}
