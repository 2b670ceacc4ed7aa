/* SPDX-License-Identifier: MIT */
/*
 * test_jobs.c: the inspector's table of actions (tui/jobs.c): every action has its row,
 * and an action the loop performs itself (copy, search, a queue switch, a prompt's step)
 * runs nothing on the Redis thread. Pure; no terminal, no Redis (the client passed is
 * NULL: a row that called the library would crash here).
 */
#include "harness/check.h"

#include <string.h>

#include "lib/buf.h"
#include "tui/jobs.h"

/* A row left out in the middle of the table (the build's assert sees only its size) has
 * no name: the status line would print NULL. */
static void
every_action_has_a_row(void **state)
{
    for (int a = 0; a < ACT_COUNT; a++) {
        const char *name = job_name((enum action)a);
        if (name == NULL || name[0] == '\0')
            fail_msg("action %d has no row in jobs.c's table", a);
    }
    assert_string_equal(job_name(ACT_REQUEUE), "requeueing");
    assert_string_equal(job_name(ACT_REQUEUE_DELAY), "requeueing");
    assert_string_equal(job_name(ACT_DROP_FILTER), "dropping failed tasks");
    assert_string_equal(job_name(ACT_REPLACE), "requeueing with the new payload");
    assert_string_equal(job_name(ACT_COPY), "working");
    /* the Schedules view: its load and P's two actions */
    assert_string_equal(job_name(ACT_SCHEDULES), "loading the schedules");
    assert_string_equal(job_name(ACT_SCHED_PAUSE), "pausing the schedule");
    assert_string_equal(job_name(ACT_SCHED_RESUME), "resuming the schedule");
    assert_string_equal(job_name(ACT_KEYS), "loading the keys");
    assert_string_equal(job_name(ACT_COUNT), "working");
}

static void
loop_actions_run_nothing_on_the_redis_thread(void **state)
{
    const enum action loop[] = {ACT_NONE,         ACT_COPY,   ACT_SEARCH,
                                ACT_UNFILTER,     ACT_SWITCH, ACT_PAUSE_FOR,
                                ACT_PAUSE_REASON, ACT_SPREAD, ACT_COUNT};

    for (size_t i = 0; i < sizeof loop / sizeof loop[0]; i++) {
        struct job j;
        memset(&j, 0, sizeof j);
        j.act = loop[i];
        job_run(NULL, &j);
        assert_int_equal(j.result.status[0], '\0');
        assert_false(j.result.error);
        job_reset(&j);
    }
}

/* The Keys view's text: the header says which counts are exact and which sampled, one
 * row per key with due, parked, in flight, failed and its oldest due age, the key last
 * and escaped (a NUL and a newline inside it stay on its row); with no keys, how keys
 * are given. */
static void
keys_text_rows(void **state)
{
    dq_key_row rows[2] = {
        {.key = "acme",
         .key_len = 4,
         .due = 900,
         .parked = 40000,
         .inflight = 2,
         .failed = 7,
         .oldest_due_ms = 1000},
        {.key = "a\nb\0c\x1b", .key_len = 6, .due = 0, .inflight = 1, .oldest_due_ms = -1},
    };
    dq_keys k = {.rows = rows,
                 .n = 2,
                 .now_ms = 1000 + 90000,
                 .due_seen = 1000,
                 .due_total = 50900,
                 .failed_seen = 7,
                 .failed_total = 7,
                 .parked_total = 40000};
    struct dq_buf b = DQ_BUF_INIT;

    job_keys_text(&b, &k);
    dq_buf_putc(&b, '\0');
    assert_false(b.failed);
    assert_non_null(strstr(b.data, "Exact: PARKED, IN FLIGHT (40000 parked in all)"));
    assert_non_null(strstr(b.data, "DUE among the oldest 1000 of 50900 due tasks"));
    assert_non_null(strstr(b.data, "FAILED among the newest 7 of 7 failures"));
    assert_non_null(strstr(b.data, "     DUE   PARKED IN FLIGHT   FAILED  OLDEST DUE     KEY\n"));
    assert_non_null(
        strstr(b.data, "\n     900    40000         2        7  1m30s ago      acme\n"));
    assert_non_null(strstr(b.data, "\n       0        0         1        0  -              "
                                   "a\\nb\\x00c\\e\n"));
    /* every line fits a text view at 80 columns (the key is the one thing that may not) */
    for (const char *p = b.data; *p != '\0';) {
        size_t len = strcspn(p, "\n");
        assert_true(len <= 79);
        p += len + (p[len] == '\n');
    }
    dq_buf_free(&b);

    dq_keys none = {0};
    job_keys_text(&b, &none);
    dq_buf_putc(&b, '\0');
    assert_non_null(strstr(b.data, "No keyed tasks on this queue"));
    assert_non_null(strstr(b.data, "delayq enqueue --key KEY"));
    dq_buf_free(&b);
}

/* The Partitions view: one row per partition with its counts, done per minute over the
 * window, node and name; names and nodes from Redis escaped; draining ones said so. */
static void
parts_text_rows(void **state)
{
    (void)state;
    struct part_row rows[3] = {
        {.name = "pq",
         .node = "127.0.0.1:7001",
         .st = {.due = 5,
                .future = 2,
                .inflight = 1,
                .failed = 3,
                .window_ms = 300000,
                .window_elapsed_ms = 120000,
                .window_done = 10}},
        {.name = "pq~1.3", .node = "10.0.0.2:7002\x1b[2J", .st = {.due = 7, .window_ms = -1}},
        {.name = "pq~2.0\n", .node = "10.0.0.3:7003", .st = {.window_ms = 300000}},
    };
    struct dq_buf b = DQ_BUF_INIT;

    job_parts_text(&b, rows, 3, 2);
    dq_buf_putc(&b, '\0');
    assert_false(b.failed);
    assert_non_null(strstr(b.data, "   #      DUE   FUTURE IN FLIGHT   FAILED DONE/MIN  NODE"));
    assert_non_null(strstr(b.data, "\n   0        5        2         1        3      5.0  "
                                   "127.0.0.1:7001        pq\n"));
    /* no window known (an older server's scripts): "-", not a made-up rate */
    assert_non_null(strstr(b.data, "\n   1        7        0         0        0        -  "));
    assert_non_null(strstr(b.data, "10.0.0.2:7002\\e[2J    pq~1.3\n"));
    assert_null(strchr(b.data, '\x1b'));
    assert_non_null(strstr(b.data, "pq~2.0\\n (draining)\n"));
    dq_buf_free(&b);

    job_parts_text(&b, rows, 1, 1);
    dq_buf_putc(&b, '\0');
    assert_non_null(strstr(b.data, "This queue is not partitioned"));
    dq_buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_action_has_a_row),
        cmocka_unit_test(loop_actions_run_nothing_on_the_redis_thread),
        cmocka_unit_test(keys_text_rows),
        cmocka_unit_test(parts_text_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
