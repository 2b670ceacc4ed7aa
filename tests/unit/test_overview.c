/* SPDX-License-Identifier: MIT */
/*
 * test_overview.c: the all-queues overview's pure parts (fmt/overview.c): the verdict of
 * a row, the worst-first order, the sparklines in block characters and in ASCII, and the
 * fixed columns of a row at 80 columns.
 */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include "fmt/overview.h"

/* A healthy row: one live worker, nothing due for long, defaults for the thresholds. */
static void
row_init(struct dq_overview_row *r, const char *name)
{
    memset(r, 0, sizeof *r);
    snprintf(r->queue, sizeof r->queue, "%s", name);
    r->stats.now_ms = 1700000000000;
    r->stats.window_ms = 300000;
    r->stats.window_elapsed_ms = 240000;
    r->stats.paused_since_ms = r->stats.paused_until_ms = -1;
    r->alert_oldest_due_ms = 300000;
    r->alert_far_future = 100000;
    r->alert_fail_pct = 50;
    r->alert_fail_per_min = 60;
    r->alert_memory_pct = 90;
    r->workers_registered = r->workers_live = 1;
    r->last_beat_ms = r->stats.now_ms - 1000;
    r->throttled = -1;
}

static void
verdicts_of_rows(void **state)
{
    struct dq_overview_row r;
    struct dq_ov_line l;

    (void)state;
    row_init(&r, "ok");
    dq_ov_judge(&l, &r, 0, 0);
    assert_int_equal(l.level, DQ_HEALTH_OK);
    assert_string_equal(l.words, "all well");

    /* due tasks and every worker gone: bad, in the words of stats --check */
    row_init(&r, "dead");
    r.stats.due = 7;
    r.workers_live = 0;
    r.workers_lost = 1;
    r.last_beat_ms = r.stats.now_ms - 180000;
    dq_ov_judge(&l, &r, 0, 0);
    assert_int_equal(l.level, DQ_HEALTH_BAD);
    assert_string_equal(l.words, "no live worker for 3m00s while 7 are due");

    /* failing over the window; the minutes are summed for the order */
    row_init(&r, "failing");
    r.stats.window_done = 2;
    r.stats.window_failed = 18;
    r.failed_per_min[8] = 10;
    r.failed_per_min[9] = 8;
    r.done_per_min[9] = 2;
    dq_ov_judge(&l, &r, 0, 0);
    assert_int_equal(l.level, DQ_HEALTH_BAD);
    assert_non_null(strstr(l.words, "failing 90% over 5m00s"));
    assert_int_equal(l.failed10, 18);
    assert_int_equal(l.done10, 2);

    /* a row that could not be read is bad and says why */
    row_init(&r, "broken");
    r.rc = DQ_EREDIS;
    snprintf(r.error, sizeof r.error, "WRONGTYPE Operation against a key");
    dq_ov_judge(&l, &r, 0, 0);
    assert_int_equal(l.level, DQ_HEALTH_BAD);
    assert_string_equal(l.words, "not read: WRONGTYPE Operation against a key");

    /* Redis memory comes from the one INFO of the refresh */
    row_init(&r, "full");
    dq_ov_judge(&l, &r, 95, 100);
    assert_int_equal(l.level, DQ_HEALTH_WARN);
    assert_string_equal(l.words, "Redis memory 95% of maxmemory");
}

static void
worst_first(void **state)
{
    struct dq_overview_row r[6];
    struct dq_ov_line l[6];

    (void)state;
    row_init(&r[0], "a-idle");
    row_init(&r[1], "b-paused");
    r[1].stats.paused = true;
    r[1].stats.paused_since_ms = r[1].stats.now_ms - 60000;
    snprintf(r[1].stats.paused_by, sizeof r[1].stats.paused_by, "alice");
    row_init(&r[2], "c-late"); /* bad: the oldest due over its limit */
    r[2].stats.due = 3;
    r[2].stats.oldest_due_age_ms = 600000;
    row_init(&r[3], "d-failing"); /* bad, and failing: before c-late */
    r[3].stats.window_failed = 100;
    r[3].failed_per_min[9] = 100;
    row_init(&r[4], "e-later"); /* bad like c-late, waiting longer: before it */
    r[4].stats.due = 1;
    r[4].stats.oldest_due_age_ms = 900000;
    row_init(&r[5], "f-idle");
    for (int i = 0; i < 6; i++)
        dq_ov_judge(&l[i], &r[i], 0, 0);
    dq_ov_sort(l, 6);
    const char *want[] = {"d-failing", "e-later", "c-late", "b-paused", "a-idle", "f-idle"};
    for (int i = 0; i < 6; i++)
        assert_string_equal(l[i].row->queue, want[i]);
    assert_true(dq_ov_cmp(&l[0], &l[1]) < 0);
    assert_true(dq_ov_cmp(&l[4], &l[4]) == 0);
}

static void
sparklines(void **state)
{
    int64_t v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 100};
    int64_t zero[10] = {0};
    char buf[64];

    (void)state;
    /* any count shows at least the lowest bar; the peak the highest; 0 a blank */
    assert_int_equal(dq_ov_spark(buf, sizeof buf, v, 10, true), 1 + 9 * 3);
    assert_string_equal(buf, " \u2581\u2581\u2581\u2581\u2581\u2581\u2581\u2581\u2588");
    int64_t ramp[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    dq_ov_spark(buf, sizeof buf, ramp, 8, true);
    assert_string_equal(buf, "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588");
    dq_ov_spark(buf, sizeof buf, ramp, 8, false);
    assert_string_equal(buf, ".:-=+*#@");
    assert_int_equal(dq_ov_spark(buf, sizeof buf, zero, 10, false), 10);
    assert_string_equal(buf, "          ");
    /* snprintf semantics: the length needed, cut whole characters only */
    assert_int_equal(dq_ov_spark(buf, 5, ramp, 8, true), 24);
    assert_string_equal(buf, "\u2581");
}

static void
cells_at_80_columns(void **state)
{
    struct dq_overview_row r;
    struct dq_ov_line l;
    char buf[256], head[256];

    (void)state;
    row_init(&r, "billing-with-a-long-name");
    r.stats.due = 120;
    r.stats.oldest_due_age_ms = 372000;
    r.stats.inflight = 4;
    r.stats.failed = 41;
    r.stats.paused = true;
    r.stats.paused_since_ms = r.stats.now_ms;
    r.throttled = 1;
    r.done_per_min[9] = 8;
    r.failed_per_min[0] = 1;
    dq_ov_judge(&l, &r, 0, 0);
    dq_ov_header(head, sizeof head, 14);
    dq_ov_cells(buf, sizeof buf, &l, 14, false);
    assert_string_equal(head,
                        "LVL  QUEUE             DUE OLDEST  INFL FAILED DONE/min   FAILED/min "
                        "WRK PT");
    assert_string_equal(buf, "bad  billing-with-~    120  6m12s     4     41          @ @          "
                             "  1 PT");
    assert_int_equal(strlen(buf), (size_t)dq_ov_fixed_cols(14));
    /* UTF-8: as many columns, more bytes */
    dq_ov_cells(buf, sizeof buf, &l, 14, true);
    assert_non_null(strstr(buf, "         \u2588 \u2588         "));
    /* throttle not known: no T */
    r.throttled = -1;
    r.stats.paused = false;
    dq_ov_judge(&l, &r, 0, 0);
    dq_ov_cells(buf, sizeof buf, &l, 14, false);
    assert_int_equal(buf[strlen(buf) - 1], ' ');
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verdicts_of_rows),
        cmocka_unit_test(worst_first),
        cmocka_unit_test(sparklines),
        cmocka_unit_test(cells_at_80_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
