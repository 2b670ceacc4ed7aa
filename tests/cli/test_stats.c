/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c: stats: the human and JSON forms, and --check (far future, oldest due, the
 * queue's own thresholds).
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

static void
stats_human_and_json(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "stats");
    lib_make_failed(q, "f1", mp_map_kind, sizeof mp_map_kind - 1, "boom", "at x()");
    lib_make_inflight(q, "i1");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--json", "2");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--delay", "10m", "--json", "3");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--json", "4");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    char *jq = json_str(r.out, "queue");
    assert_string_equal(jq, q);
    free(jq);
    assert_int_equal(json_int(r.out, "due"), 2);
    assert_int_equal(json_int(r.out, "future"), 2);
    assert_int_equal(json_int(r.out, "far_future"), 1);
    assert_int_equal(json_int(r.out, "far_future_after_ms"), 3600000);
    assert_int_equal(json_int(r.out, "inflight"), 1);
    assert_int_equal(json_int(r.out, "failed"), 1);
    assert_true(json_int(r.out, "next_due_ms") > json_int(r.out, "now_ms"));
    const char *counters = json_find(r.out, "counters");
    assert_non_null(counters);
    assert_int_equal(json_int(counters, "enqueued"), 6);
    assert_int_equal(json_int(counters, "failed"), 1);

    RUN(&r, "stats", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, q);
    ASSERT_HAS(r.out, "\ndue          2");
    ASSERT_HAS(r.out, "\nfuture       2 ");
    ASSERT_HAS(r.out, "\nfar future   1 ");
    ASSERT_HAS(r.out, "\nin flight    1 ");
    ASSERT_HAS(r.out, "\nfailed       1\n");
    ASSERT_HAS(r.out, "enqueued 6,");
    assert_terminal_safe("stats", r.out, r.out_len);

    RUN(&r, "stats", "-q", q, "--bogus");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

/* Makes @q known but empty the way an operator prepares a queue before its producers
 * run: a config change (max_attempts to its default, 25). */
static void
make_known(const char *q)
{
    struct result r = {0};

    RUN(&r, "config", "-q", q, "max_attempts=25");
    ASSERT_EXIT(&r, 0);
    result_free(&r);
}

static void
stats_check_far_future(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "check-far");
    /* a queue nothing has made fails the check (a typo in a health check must not pass) */
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "is not known on ");
    make_known(q);
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "ok");
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "0");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "0");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, q);
    ASSERT_HAS(r.err, "limit 0");
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "-1");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

struct age_wait {
    const char *q;
    long long min_age;
};

static bool
oldest_due_older(void *arg)
{
    struct age_wait *w = arg;
    struct result r = {0};
    bool ok;

    RUN(&r, "stats", "-q", w->q, "--json");
    ok = r.status == 0 && json_int(r.out, "oldest_due_age_ms") > w->min_age;
    result_free(&r);
    return ok;
}

static void
stats_check_oldest_due(void **state)
{
    struct result r = {0};
    char q[96];
    struct age_wait w;

    (void)state;
    test_queue_name(q, sizeof q, "check-age");
    make_known(q);
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1ms");
    ASSERT_EXIT(&r, 0); /* nothing due, nothing old */

    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    w = (struct age_wait){.q = q, .min_age = 5};
    assert_true(wait_until(oldest_due_older, &w, 5000, "the due task to be older than 5 ms"));

    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1ms");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, q);
    ASSERT_HAS(r.err, "limit 1ms");
    ASSERT_HAS(r.err, "oldest due has waited");
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1h");
    ASSERT_EXIT(&r, 0);
    /* the verdict, in the inspector's words: a warning passes the check */
    ASSERT_HAS(r.out, "no worker registered while 1 are due");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"verdict\":{\"level\":\"warn\",\"text\":\"no worker registered while 1 "
                      "are due\"}");
    ASSERT_HAS(r.out, "\"workers\":{\"registered\":0,\"live\":0,\"lost\":0}");
    RUN(&r, "stats", "-q", q, "--check"); /* default 5m */
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "soon");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--max-oldest-due");
    result_free(&r);
}

/* The check's thresholds are the queue's alert_* config fields; the flags override them. */
static void
stats_check_takes_the_queues_thresholds(void **state)
{
    struct result r = {0};
    char q[96];
    struct age_wait w;

    (void)state;
    test_queue_name(q, sizeof q, "check-cfg");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "config", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "alert_oldest_due_ms 300000 (5m00s)\n");
    ASSERT_HAS(r.out, "alert_far_future  100000\n");
    ASSERT_HAS(r.out, "alert_running_ms  300000 (5m00s)\n");
    ASSERT_HAS(r.out, "alert_memory_pct  90\n");
    w = (struct age_wait){.q = q, .min_age = 5};
    assert_true(wait_until(oldest_due_older, &w, 5000, "the due task to be older than 5 ms"));
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 0); /* the default 5m */

    RUN(&r, "config", "-q", q, "alert_oldest_due_ms=1ms", "--who", "cfg-alert");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "alert_oldest_due_ms 1 (1ms)\n");
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "oldest due has waited");
    ASSERT_HAS(r.err, "limit 1ms");
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1h"); /* the flag overrides */
    ASSERT_EXIT(&r, 0);
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "alert_oldest_due_ms=1");
    ASSERT_HAS(r.out, "cfg-alert");

    /* validation names the field */
    RUN(&r, "config", "-q", q, "alert_memory_pct=101");
    assert_int_not_equal(r.status, 0);
    ASSERT_HAS(r.err, "alert_memory_pct");
    RUN(&r, "config", "-q", q, "alert_far_future=0");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "alert_far_future");
    RUN(&r, "config", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"alert_oldest_due_ms\":1,\"alert_far_future\":100000,"
                      "\"alert_running_ms\":300000,\"alert_memory_pct\":90,"
                      "\"alert_window_ms\":300000,\"alert_fail_pct\":50,"
                      "\"alert_fail_per_min\":60,\"time_limit_ms\":0,\"done_retention\":0,"
                      "\"done_retention_ms\":0,\"rate_limit\":0,\"rate_burst\":0,"
                      "\"concurrency_limit\":0,\"key_concurrency\":0,"
                      "\"history_minutes\":1440");
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stats_human_and_json),
        cmocka_unit_test(stats_check_far_future),
        cmocka_unit_test(stats_check_oldest_due),
        cmocka_unit_test(stats_check_takes_the_queues_thresholds),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/stats", tests, cli_group_setup, cli_group_teardown);
}
