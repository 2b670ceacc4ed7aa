/* SPDX-License-Identifier: MIT */
/* test_health.c: the queue's verdict line (fmt/health.c). Pure. */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include "fmt/health.h"

static void
all_well_in_one_phrase(void **state)
{
    dq_stats s = {.due = 3, .oldest_due_age_ms = 2000};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = 60000,
                                .max_far_future = -1,
                                .fail_pct = 50,
                                .fail_per_min = 60,
                                .workers_registered = 1,
                                .workers_live = 1};
    char buf[256];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
    assert_string_equal(buf, "all well");
}

static void
problems_worst_first(void **state)
{
    dq_stats s = {.due = 40,
                  .oldest_due_age_ms = 300000,
                  .expired_leases = 3,
                  .far_future = 120000,
                  .failed = 100,
                  .window_ms = 300000,
                  .window_elapsed_ms = 240000,
                  .window_done = 10,
                  .window_failed = 30};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = 60000,
                                .max_far_future = 100000,
                                .used_memory = 91,
                                .maxmemory = 100,
                                .memory_warn_pct = 90,
                                .fail_pct = 50,
                                .workers_registered = -1};
    char buf[512];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    assert_string_equal(buf, "oldest due has waited 5m00s (limit 1m00s); 3 leases expired: "
                             "workers died holding tasks (x recovers); failing 75% over 5m00s "
                             "(7.5/min); "
                             "far-future backlog 120000 (limit 100000); Redis memory 91% of "
                             "maxmemory");
}

static void
warnings_alone_and_checks_off(void **state)
{
    dq_stats s = {.far_future = 5};
    struct dq_health_facts f = {
        .stats = &s, .max_oldest_due_ms = -1, .max_far_future = 4, .workers_registered = -1};
    char buf[64], tiny[12];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    assert_string_equal(buf, "far-future backlog 5 (limit 4)");
    f.max_far_future = -1; /* a negative threshold is no check */
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
    /* a small buffer still ends in a NUL and keeps the worst level */
    s.expired_leases = 1;
    assert_int_equal(dq_health_verdict(&f, tiny, sizeof tiny), DQ_HEALTH_BAD);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

static void
nobody_consuming_and_paused(void **state)
{
    dq_stats s = {.now_ms = 1000000, .due = 40, .oldest_due_age_ms = 33000};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = 300000,
                                .max_far_future = -1,
                                .workers_registered = 2,
                                .workers_live = 0,
                                .workers_lost = 2,
                                .last_beat_ms = 1000000 - 192000};
    char buf[256];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    assert_string_equal(buf, "no live worker for 3m12s while 40 are due");
    f.workers_registered = 0;
    f.last_beat_ms = -1;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf, "no worker registered while 40 are due");

    /* paused on purpose: said first, and nobody consuming is not a problem then */
    s.paused = true;
    s.paused_since_ms = s.now_ms - 600000;
    s.paused_until_ms = s.now_ms + 1200000;
    snprintf(s.paused_by, sizeof s.paused_by, "alice@ops");
    snprintf(s.pause_reason, sizeof s.pause_reason, "deploy rollback");
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf, "paused by alice@ops 10m00s ago: deploy rollback, resumes "
                             "00:36:40.000Z");
    assert_string_equal(dq_health_level_name(DQ_HEALTH_WARN), "warn");
}

/* A handler that ignores its time limit's cancel is said by name, and is not bad by
 * itself: the task runs again elsewhere, only a slot is held. */
static void
handler_hung_past_its_time_limit(void **state)
{
    dq_stats s = {.now_ms = 1000000};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = -1,
                                .max_far_future = -1,
                                .workers_registered = 1,
                                .workers_live = 1,
                                .workers_hung = 1,
                                .hung_worker = "w1"};
    char buf[256];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf, "1 handler hung past its time limit on w1 (asked to stop, still "
                             "running)");
    f.workers_hung = 3;
    f.hung_worker = NULL;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf,
                        "3 handlers hung past their time limit (asked to stop, still running)");
    /* a lost worker's count is old news: dq_health_hung leaves it out */
    char na[] = "a", nb[] = "b";
    dq_worker_info ws[2] = {{.name = na, .hung = 2, .lost = true}, {.name = nb, .hung = 1}};
    dq_workers w = {.workers = ws, .n = 2};
    const char *worst = NULL;
    assert_int_equal(dq_health_hung(&w, &worst), 1);
    assert_string_equal(worst, "b");
}

static void
hung_handler_and_retries(void **state)
{
    dq_stats s = {.now_ms = 1000000};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = -1,
                                .max_far_future = -1,
                                .workers_registered = -1,
                                .max_running_ms = 300000,
                                .long_running = 1,
                                .longest_running_ms = 720000,
                                .retry_rate = 4,
                                .retry_error = "upstream 503 from payments-api\nat line 2"};
    char buf[256];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf, "a task has run 12m00s (over 5m00s): a hung handler?; retrying "
                             "4.0/s, last error: upstream 503 from payments-api");
    f.long_running = 3;
    f.retry_rate = 0;
    dq_health_verdict(&f, buf, sizeof buf);
    assert_string_equal(buf, "3 tasks running over 5m00s, the longest 12m00s; tasks waiting to "
                             "retry, last error: upstream 503 from payments-api");
}

/* A queue failing most of its tasks at well under 1/s is bad on every refresh: the
 * window's counts come from the scripts, not from two refreshes. */
static void
failing_over_the_window(void **state)
{
    dq_stats s = {.failed = 57,
                  .window_ms = 300000,
                  .window_elapsed_ms = 300000,
                  .window_done = 70,
                  .window_failed = 110, /* 0.37/s, 61% */
                  .top_group_count = 50};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = -1,
                                .max_far_future = -1,
                                .fail_pct = 50,
                                .fail_per_min = 60,
                                .workers_registered = -1};
    char buf[256];

    snprintf(s.top_group, sizeof s.top_group, "error: exit #: ValueError: currency XAF");
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    assert_string_equal(buf, "failing 61% over 5m00s (22.0/min), 87% of failed: "
                             "'error: exit #: ValueError: currency XAF'");
    /* under the share, but over the rate */
    s.window_done = 1000;
    s.top_group[0] = '\0';
    f.fail_per_min = 20;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    assert_string_equal(buf, "failing 9% over 5m00s (22.0/min)");
    f.fail_per_min = 60;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
    /* a share needs 10 outcomes: 1 failure of 1 is not "100% failing" */
    s.window_done = 0;
    s.window_failed = 1;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
    s.window_done = 1;
    s.window_failed = 9;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    /* an older server's scripts have no window: no claim either way */
    s.window_ms = -1;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
}

/* The unknown-queue sentence of @queue over the registered names @list ("a,b,c"; NULL:
 * none could be read), @total of them in the registry. */
static void
unknown_is(const char *queue, const char *list, int64_t total, const char *want)
{
    char text[256], *names[16];
    dq_queues q = {names, 0, total};
    char buf[512];

    snprintf(text, sizeof text, "%s", list != NULL ? list : "");
    for (char *p = strtok(text, ","); p != NULL && q.n < 16; p = strtok(NULL, ","))
        names[q.n++] = p;
    dq_health_unknown_queue(buf, sizeof buf, queue, "127.0.0.1:6379", list != NULL ? &q : NULL);
    assert_string_equal(buf, want);
}

/* The queue limits (PROTOCOL.md 8.4): a rate limit that held a due task back lately says
 * how fast and how long the backlog drains; a claim waiting for a slot says so; a limit
 * that held nothing back lately, or a queue with nothing due, says nothing. The throttle
 * line of the inspector's header and stats. */
static void
limited_and_throttled(void **state)
{
    dq_stats s = {.now_ms = 1796000000000,
                  .due = 1200,
                  .rate_per_min = 600,
                  .rate_burst = 10,
                  .rate_held_ms = 1796000000000 - 200};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = -1,
                                .max_far_future = -1,
                                .workers_registered = 1,
                                .workers_live = 1};
    char buf[256];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf, "rate-limited: 1 200 due, draining at 10/s, ~2m left");
    s.due = 45;
    dq_health_verdict(&f, buf, sizeof buf);
    assert_string_equal(buf, "rate-limited: 45 due, draining at 10/s, ~5s left");
    s.rate_held_ms = s.now_ms - DQ_HEALTH_LIMITED_RECENT_MS; /* not lately */
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
    assert_string_equal(buf, "all well");
    s.rate_per_min = 0;
    s.concurrency = 3;
    s.inflight = 3;
    s.concurrency_held = true;
    s.due = 1234567;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf, "concurrency-limited: 1 234 567 due, 3 in flight (limit 3)");
    s.due = 0;
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);

    /* the throttle: 2025-12-01T09:40:00Z ends it, within a day of now */
    assert_int_equal(dq_health_throttle(buf, sizeof buf, &s), 0);
    s.throttled = true;
    s.throttle_rate_per_min = 600;
    s.now_ms = 1764580800000;            /* 2025-12-01T09:20:00Z */
    s.throttle_until_ms = 1764582000000; /* 09:40 */
    snprintf(s.throttle_by, sizeof s.throttle_by, "alice@ops");
    snprintf(s.throttle_reason, sizeof s.throttle_reason, "payments-api recovering");
    dq_health_throttle(buf, sizeof buf, &s);
    assert_string_equal(buf, "10/s by alice@ops: payments-api recovering, until 09:40");
    s.throttle_rate_per_min = 90;
    s.throttle_concurrency = 2;
    s.throttle_until_ms = 0;
    s.throttle_reason[0] = '\0';
    dq_health_throttle(buf, sizeof buf, &s);
    assert_string_equal(buf, "90/m, 2 in flight by alice@ops, until lifted");
    s.throttle_rate_per_min = 0;
    s.throttle_until_ms = s.now_ms + 2 * 86400000;
    dq_health_throttle(buf, sizeof buf, &s);
    assert_string_equal(buf, "2 in flight by alice@ops, until 2025-12-03 09:20");
}

static void
unknown_queue_sentence(void **state)
{
    const char *reg = "billing,emails,reports,webhooks,zeta";
    (void)state;

    /* a missing, swapped or case-changed letter suggests the close name */
    unknown_is("billng", reg, 5,
               "queue \"billng\" is not known on 127.0.0.1:6379 (did you mean billing?)");
    unknown_is("bililng", reg, 5,
               "queue \"bililng\" is not known on 127.0.0.1:6379 (did you mean billing?)");
    unknown_is("EMAILS", reg, 5,
               "queue \"EMAILS\" is not known on 127.0.0.1:6379 (did you mean emails?)");
    unknown_is("webhoks", reg, 5,
               "queue \"webhoks\" is not known on 127.0.0.1:6379 (did you mean webhooks?)");
    /* the closest only, at most three of them */
    unknown_is("mail", "mail1,mail2,mail3,mail4", 4,
               "queue \"mail\" is not known on 127.0.0.1:6379 (did you mean mail1, mail2 or "
               "mail3?)");
    /* nothing close (a short name allows 1 edit, never all of it): some names */
    unknown_is("payments", reg, 5,
               "queue \"payments\" is not known on 127.0.0.1:6379 (known: billing, emails, "
               "reports, webhooks and 1 more)");
    unknown_is("x", "ab", 1, "queue \"x\" is not known on 127.0.0.1:6379 (known: ab)");
    unknown_is("abc", "ab", 7, "queue \"abc\" is not known on 127.0.0.1:6379 (did you mean ab?)");
    unknown_is("zz", "ab", 7, "queue \"zz\" is not known on 127.0.0.1:6379 (known: ab and 6 more)");
    unknown_is("q", "", 0,
               "queue \"q\" is not known on 127.0.0.1:6379 (no queue is known there yet)");
    unknown_is("q", NULL, 0, "queue \"q\" is not known on 127.0.0.1:6379");

    /* the verdict is that sentence alone, and bad */
    dq_stats s = {0};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = -1,
                                .max_far_future = -1,
                                .workers_registered = 0,
                                .unknown_queue = "queue \"q\" is not known"};
    char buf[64];
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    assert_string_equal(buf, "queue \"q\" is not known");
    /* a small buffer cuts, and stays a string */
    char billing[] = "billing", *one[] = {billing};
    dq_queues q = {one, 1, 1};
    dq_health_unknown_queue(buf, 20, "billng", "127.0.0.1:6379", &q);
    assert_string_equal(buf, "queue \"billng\" is n");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_well_in_one_phrase),
        cmocka_unit_test(problems_worst_first),
        cmocka_unit_test(warnings_alone_and_checks_off),
        cmocka_unit_test(nobody_consuming_and_paused),
        cmocka_unit_test(hung_handler_and_retries),
        cmocka_unit_test(handler_hung_past_its_time_limit),
        cmocka_unit_test(failing_over_the_window),
        cmocka_unit_test(limited_and_throttled),
        cmocka_unit_test(unknown_queue_sentence),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
