/* SPDX-License-Identifier: MIT */
/*
 * test_ops.c: operator actions against a real redis-server: requeue and drop by id
 * and in bulk, their all-or-nothing preconditions, the audit log they write, finding
 * tasks by id, and undecodable members.
 */
#include "harness/fixture.h"

/* Enqueues @n tasks due now, claims them and fails each; ids are "1".."n". */
static void
make_failed(struct fixture *f, int n)
{
    dq_claimed cl;
    int done = 0;

    for (int i = 0; i < n; i++)
        enqueue_str(f, "{}", 0, NULL, NULL);
    while (done < n) {
        ASSERT_OK(f, dq_claim(f->c, f->queue, 1000, 30000, "w1", &cl, &f->err));
        assert_true(cl.n > 0);
        for (size_t i = 0; i < cl.n; i++)
            ASSERT_OK(f, dq_fail(f->c, f->queue, &cl.tasks[i], "boom", "at x()\nat y()", &f->err));
        done += (int)cl.n;
        dq_claimed_free(&cl);
    }
}

static void
requeue_by_id_all_or_nothing(void **state)
{
    struct fixture f;
    dq_stats s;
    size_t moved = 99;
    const char *good[] = {"1", "2"};
    const char *mixed[] = {"3", "nope"};

    fixture_open(&f, state, "requeue");
    make_failed(&f, 3);
    assert_int_equal(dq_requeue(f.c, f.queue, mixed, 2, 0, &moved, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, "nope"));
    assert_int_equal(moved, 0);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 3); /* nothing moved, not even "3" */

    ASSERT_OK(&f, dq_requeue(f.c, f.queue, good, 2, 0, &moved, &f.err));
    assert_int_equal(moved, 2);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.due, 2);
    assert_int_equal(s.requeued, 2);
    /* a second operator requeueing the same ids gets "not found", never a duplicate */
    assert_int_equal(dq_requeue(f.c, f.queue, good, 2, 0, &moved, &f.err), DQ_ENOTFOUND);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due, 2);

    /* requeued tasks start over: attempt 0, last error kept */
    dq_task t;
    ASSERT_OK(&f, dq_find(f.c, f.queue, "1", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_int_equal(t.attempt, 0);
    dq_task_clear(&t);

    /* with a delay: in the future */
    const char *three[] = {"3"};
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, three, 1, 60000, &moved, &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.future, 1);
    assert_true(s.next_due_ms >= s.now_ms + 59000);
    fixture_close(&f);
}

static void
requeue_all_in_steps_with_spread(void **state)
{
    struct fixture f;
    dq_bulk cur = {0};
    dq_stats s;
    dq_page p;
    int steps = 0;

    fixture_open(&f, state, "requeueall");
    make_failed(&f, 2500);
    while (!cur.done) {
        ASSERT_OK(&f, dq_requeue_all_step(f.c, f.queue, 0, 1000000, &cur, &f.err));
        steps++;
    }
    assert_int_equal(steps, 3); /* 1000 per step */
    assert_int_equal(cur.done_n, 2500);
    assert_int_equal(cur.total, 2500);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 0);
    assert_int_equal(s.due + s.future, 2500);
    /* spread evenly over 1000 s (one every 400 ms): the last is due ~1000 s out, the
     * first at once, and only the few whose slot has come are due already */
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FUTURE, s.future - 1, 1, &p, &f.err));
    assert_int_equal(p.n, 1);
    assert_true(p.tasks[0].due_ms > s.now_ms + 990000);
    assert_true(p.tasks[0].due_ms < s.now_ms + 1000000);
    dq_page_free(&p);
    assert_true(s.due <= 10);
    fixture_close(&f);
}

static void
drop_by_id_failed_and_scheduled(void **state)
{
    struct fixture f;
    dq_stats s;
    size_t dropped;
    dq_enqueued e;

    fixture_open(&f, state, "drop");
    make_failed(&f, 2);                                /* ids 1, 2: failed */
    enqueue_str(&f, "later", 60000, NULL, &e);         /* id 3: scheduled, generated id */
    enqueue_str(&f, "later", 60000, "custom-x", NULL); /* scheduled, chosen id */
    for (int i = 0; i < 1500; i++)                     /* make the id scan take steps */
        enqueue_str(&f, "filler", 30000, NULL, NULL);

    const char *mixed[] = {"1", "missing"};
    assert_int_equal(dq_drop(f.c, f.queue, mixed, 2, &dropped, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, "missing"));
    const char *ids[] = {"1", "3", "custom-x"};
    ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 3, &dropped, &f.err));
    assert_int_equal(dropped, 3);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.future, 1500);
    assert_int_equal(s.dropped, 3);
    dq_task t;
    assert_int_equal(dq_find(f.c, f.queue, "3", &t, &f.err), DQ_ENOTFOUND);
    assert_int_equal(dq_find(f.c, f.queue, "custom-x", &t, &f.err), DQ_ENOTFOUND);
    /* the chosen id is free again */
    enqueue_str(&f, "again", 0, "custom-x", &e);
    assert_false(e.duplicate);

    /* a running task cannot be dropped */
    dq_claimed cl;
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    const char *running[] = {"custom-x"};
    assert_int_equal(dq_drop(f.c, f.queue, running, 1, &dropped, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "in flight"));
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
drop_all_failed(void **state)
{
    struct fixture f;
    dq_bulk cur = {0};
    dq_stats s;

    fixture_open(&f, state, "dropall");
    make_failed(&f, 1200);
    while (!cur.done)
        ASSERT_OK(&f, dq_drop_all_step(f.c, f.queue, &cur, &f.err));
    assert_int_equal(cur.done_n, 1200);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 0);
    assert_int_equal(s.dropped, 1200);
    fixture_close(&f);
}

static void
audit_records_actions_newest_first(void **state)
{
    struct fixture f;
    dq_audit a;
    size_t n;
    const char *one[] = {"1"};
    const char *missing[] = {"404"};

    fixture_open(&f, state, "audit");
    make_failed(&f, 2);
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, one, 1, 0, &n, &f.err));
    assert_int_equal(dq_requeue(f.c, f.queue, missing, 1, 0, &n, &f.err), DQ_ENOTFOUND);
    const char *two[] = {"2"};
    ASSERT_OK(&f, dq_drop(f.c, f.queue, two, 1, &n, &f.err));
    ASSERT_OK(&f, dq_audit_get(f.c, f.queue, 10, &a, &f.err));
    assert_int_equal(a.n, 3);
    assert_string_equal(a.entries[0].action, "drop");
    assert_string_equal(a.entries[0].detail, "2");
    assert_string_equal(a.entries[0].result, "ok: 1 dropped");
    assert_string_equal(a.entries[1].action, "requeue");
    assert_non_null(strstr(a.entries[1].result, "refused: not found: 404"));
    assert_string_equal(a.entries[2].action, "requeue");
    assert_string_equal(a.entries[2].who, "tester");
    assert_true(a.entries[0].at_ms >= a.entries[2].at_ms);
    assert_true(a.entries[2].at_ms > 0);
    dq_audit_free(&a);
    fixture_close(&f);
}

/* An undecodable member still in the scheduled set (not due, so no claim has failed it)
 * is listed under the name claim would give it, "undecodable:<sha1>", and an operator
 * can show it and drop it by that name. */
static void
scheduled_garbage_is_named_and_dropped(void **state)
{
    struct fixture f;
    dq_page p;
    dq_task t;
    char key[160];
    size_t n;

    fixture_open(&f, state, "garbage-future");
    snprintf(key, sizeof key, "dq:{%s}:sched", f.queue);
    const char *zadd[] = {"ZADD", key, "99999999999999", "plain junk"};
    assert_int_equal(redis_int(&f, 4, zadd), 1);
    enqueue_str(&f, "good", 3600000, NULL, NULL);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FUTURE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 2);
    const dq_task *bad = p.tasks[0].undecodable ? &p.tasks[0] : &p.tasks[1];
    assert_true(bad->undecodable);
    /* sha1("plain junk") */
    assert_string_equal(bad->id, "undecodable:920dc938d919f72c28056c3c0e8ea25f76bdb7e9");
    ASSERT_OK(&f, dq_find(f.c, f.queue, bad->id, &t, &f.err));
    assert_true(t.undecodable && t.state == DQ_STATE_SCHEDULED);
    assert_int_equal(t.raw_len, 10);
    dq_task_clear(&t);
    const char *ids[] = {"undecodable:920dc938d919f72c28056c3c0e8ea25f76bdb7e9"};
    ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 1, &n, &f.err));
    assert_int_equal(n, 1);
    dq_page_free(&p);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FUTURE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 1);
    assert_false(p.tasks[0].undecodable);
    dq_page_free(&p);
    fixture_close(&f);
}

static void
garbage_member_goes_to_failed(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_page p;
    char key[160];
    size_t n;

    fixture_open(&f, state, "garbage");
    snprintf(key, sizeof key, "dq:{%s}:sched", f.queue);
    const char *zadd[] = {"ZADD", key, "0", "\x99\x01\xcf garbage that looks like a start"};
    assert_int_equal(redis_int(&f, 4, zadd), 1);
    const char *zadd2[] = {"ZADD", key, "0", "plain junk"};
    assert_int_equal(redis_int(&f, 4, zadd2), 1);
    enqueue_str(&f, "good", 0, NULL, NULL);

    /* the listing shows them, marked, without failing */
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 3);
    int undecodable = 0;
    for (size_t i = 0; i < p.n; i++)
        undecodable += p.tasks[i].undecodable;
    assert_int_equal(undecodable, 2);
    dq_page_free(&p);

    /* claim moves them to failed and hands out the good one: the queue is not wedged */
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    assert_int_equal(cl.to_failed, 2);
    assert_memory_equal(cl.tasks[0].payload, "good", 4);
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FAILED, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 2);
    const char *uid = NULL;
    for (size_t i = 0; i < p.n; i++) {
        assert_true(p.tasks[i].undecodable);
        assert_string_equal(p.tasks[i].reason, "undecodable");
        assert_non_null(strstr(p.tasks[i].id, "undecodable:"));
        if (p.tasks[i].raw_len == strlen("plain junk")) {
            assert_memory_equal(p.tasks[i].raw, "plain junk", 10);
            uid = p.tasks[i].id;
        }
    }
    assert_non_null(uid);
    /* it can be shown and dropped by its id, but not requeued */
    dq_task t;
    ASSERT_OK(&f, dq_find(f.c, f.queue, uid, &t, &f.err));
    assert_true(t.undecodable);
    dq_task_clear(&t);
    const char *ids[] = {uid};
    assert_int_equal(dq_requeue(f.c, f.queue, ids, 1, 0, &n, &f.err), DQ_EINVAL);
    ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 1, &n, &f.err));
    assert_int_equal(n, 1);
    dq_page_free(&p);
    fixture_close(&f);
}

static void
find_everywhere(void **state)
{
    struct fixture f;
    dq_task t;
    dq_claimed cl;

    fixture_open(&f, state, "find");
    enqueue_str(&f, "a", 0, NULL, NULL);       /* 1, will be in flight */
    enqueue_str(&f, "b", 0, "b-id", NULL);     /* custom, in flight */
    enqueue_str(&f, "c", 90000, NULL, NULL);   /* 3, future */
    enqueue_str(&f, "d", 90000, "d-id", NULL); /* custom, future */
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 2, 30000, "w9", &cl, &f.err));
    assert_int_equal(cl.n, 2);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "1", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_INFLIGHT);
    assert_string_equal(t.worker, "w9");
    assert_true(t.lease_ms > 0);
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "b-id", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_INFLIGHT);
    assert_true(t.custom_id);
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "3", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_memory_equal(t.payload, "c", 1);
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "d-id", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    dq_task_clear(&t);
    assert_int_equal(dq_find(f.c, f.queue, "77", &t, &f.err), DQ_ENOTFOUND);
    assert_int_equal(dq_find(f.c, f.queue, "zzz", &t, &f.err), DQ_ENOTFOUND);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
same_millisecond_crowd_is_searched_not_walked(void **state)
{
    struct fixture f;
    dq_enqueue_opts o = {0};
    dq_enqueued e;
    dq_stats s;
    dq_task t;
    size_t n;

    fixture_open(&f, state, "crowd");
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    o.at_ms = s.now_ms + 600000;
    for (int i = 0; i < 3000; i++) {
        o.id = i == 1700 ? "needle" : NULL;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    }
    /* found by binary search among 3000 members of one score */
    ASSERT_OK(&f, dq_find(f.c, f.queue, "needle", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_int_equal(t.seq, 1701);
    dq_task_clear(&t);
    /* and a generated id in the crowd, by the bounded scan */
    ASSERT_OK(&f, dq_find(f.c, f.queue, "2999", &t, &f.err));
    assert_int_equal(t.seq, 2999);
    dq_task_clear(&t);
    const char *ids[] = {"needle", "42"};
    ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 2, &n, &f.err));
    assert_int_equal(n, 2);
    assert_int_equal(dq_find(f.c, f.queue, "needle", &t, &f.err), DQ_ENOTFOUND);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.future, 2998);
    fixture_close(&f);
}

static void
requeue_all_cursor_survives_trimming(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_bulk cur = {0};
    dq_stats s;
    char key[160];

    fixture_open(&f, state, "cursor");
    snprintf(key, sizeof key, "dq:{%s}:sched", f.queue);
    for (int i = 0; i < 5; i++) {
        char junk[16];
        snprintf(junk, sizeof junk, "junk-%d", i);
        const char *zadd[] = {"ZADD", key, "0", junk};
        assert_int_equal(redis_int(&f, 4, zadd), 1);
    }
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.to_failed, 5); /* five undecodable failures, the oldest */
    dq_claimed_free(&cl);
    make_failed(&f, 1500);
    ASSERT_OK(&f, dq_requeue_all_step(f.c, f.queue, 0, 0, &cur, &f.err));
    assert_false(cur.done);
    assert_int_equal(cur.skipped, 5);
    /* between steps, retention trims the oldest (the undecodable ones among them) */
    dq_config cfg = {.failed_retention = 400};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    while (!cur.done)
        ASSERT_OK(&f, dq_requeue_all_step(f.c, f.queue, 0, 0, &cur, &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    /* every valid failure still there at the end was requeued: none left behind */
    assert_int_equal(s.failed, 0);
    assert_int_equal(cur.done_n + (size_t)s.trimmed, 1505);
    fixture_close(&f);
}

static void
run_now_makes_a_future_task_due(void **state)
{
    struct fixture f;
    dq_page p;
    dq_stats s;

    fixture_open(&f, state, "runnow");
    enqueue_str(&f, "later", 3600000, NULL, NULL);
    enqueue_str(&f, "later too", 3600000, "named", NULL);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FUTURE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 2);
    ASSERT_OK(&f, dq_run_now(f.c, f.queue, &p.tasks[0], &f.err));
    ASSERT_OK(&f, dq_run_now(f.c, f.queue, &p.tasks[1], &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due, 2);
    assert_int_equal(s.future, 0);
    /* claimed meanwhile: no longer scheduled, a clear not-found */
    dq_claimed cl;
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w", &cl, &f.err));
    assert_int_equal(dq_run_now(f.c, f.queue, &p.tasks[0], &f.err), DQ_ENOTFOUND);
    dq_claimed_free(&cl);
    dq_page_free(&p);
    dq_audit a;
    ASSERT_OK(&f, dq_audit_get(f.c, f.queue, 10, &a, &f.err));
    assert_string_equal(a.entries[0].action, "run-now");
    assert_non_null(strstr(a.entries[0].result, "not scheduled"));
    dq_audit_free(&a);
    fixture_close(&f);
}

static void
search_failed_in_bounded_steps(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_search cur = {0};
    dq_page found = {0};
    int steps = 0;

    fixture_open(&f, state, "search");
    make_failed(&f, 2300);
    enqueue_str(&f, "{\"card\":\"4242-needle\"}", 0, NULL, NULL); /* payload match */
    enqueue_str(&f, "{}", 0, NULL, NULL);                         /* error match */
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 2, 30000, "w", &cl, &f.err));
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "plain", "", &f.err));
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[1], "gateway said needle", "", &f.err));
    dq_claimed_free(&cl);
    while (!cur.done) {
        ASSERT_OK(
            &f, dq_search_step(f.c, f.queue, DQ_VIEW_FAILED, "needle", 100, &cur, &found, &f.err));
        steps++;
    }
    assert_int_equal(steps, 3); /* 2302 failures, 1000 per step */
    assert_int_equal(cur.total, 2302);
    assert_int_equal(cur.scanned, 2302);
    assert_int_equal(found.n, 2);
    assert_string_equal(found.tasks[0].error, "gateway said needle"); /* newest first */
    assert_string_equal(found.tasks[1].error, "plain");
    dq_page_free(&found);

    /* the other views: scheduled by payload, in flight by worker */
    for (int i = 0; i < 1500; i++)
        enqueue_str(&f, i == 1234 ? "{\"note\":\"needle in future\"}" : "{}", 60000, NULL, NULL);
    enqueue_str(&f, "{\"note\":\"needle due\"}", 0, NULL, NULL);
    cur = (dq_search){0};
    while (!cur.done)
        ASSERT_OK(
            &f, dq_search_step(f.c, f.queue, DQ_VIEW_FUTURE, "needle", 100, &cur, &found, &f.err));
    assert_int_equal(cur.total, 1500);
    assert_int_equal(found.n, 1);
    assert_int_equal(found.tasks[0].state, DQ_STATE_SCHEDULED);
    dq_page_free(&found);
    cur = (dq_search){0};
    ASSERT_OK(&f, dq_search_step(f.c, f.queue, DQ_VIEW_DUE, "needle", 100, &cur, &found, &f.err));
    assert_true(cur.done);
    assert_int_equal(found.n, 1);
    dq_page_free(&found);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "needle-worker", &cl, &f.err));
    cur = (dq_search){0};
    ASSERT_OK(&f, dq_search_step(f.c, f.queue, DQ_VIEW_INFLIGHT, "needle-worker", 100, &cur, &found,
                                 &f.err));
    assert_int_equal(found.n, 1);
    assert_string_equal(found.tasks[0].worker, "needle-worker");
    dq_page_free(&found);
    dq_claimed_free(&cl);
    assert_int_equal(
        dq_search_step(f.c, f.queue, DQ_VIEW_FAILED, "", 10, &(dq_search){0}, &found, &f.err),
        DQ_EINVAL);
    fixture_close(&f);
}

/* Searches found so far, then every one of them (steps until done). */
static size_t
search_all(struct fixture *f, const char *needle)
{
    dq_search cur = {0};
    dq_page found = {0};

    while (!cur.done)
        ASSERT_OK(
            f, dq_search_step(f->c, f->queue, DQ_VIEW_FAILED, needle, 100, &cur, &found, &f->err));
    size_t n = found.n;
    dq_page_free(&found);
    return n;
}

/* Smart case: a needle in lower case matches letters in either case, one with a capital
 * matches exactly; punctuation in a needle is plain text (not a pattern); and a bulk
 * action on the text moves what the search found. */
static void
search_is_smart_case_and_bulk_agrees(void **state)
{
    static const char *const errors[] = {"invoice 1: currency XAF not supported",
                                         "invoice 2: currency xaf not supported", "Xaf.% [x]",
                                         "nothing to see"};
    struct fixture f;
    dq_claimed cl;

    fixture_open(&f, state, "smartcase");
    for (int i = 0; i < 4; i++)
        enqueue_str(&f, "{}", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 4, 30000, "w", &cl, &f.err));
    assert_int_equal(cl.n, 4);
    for (size_t i = 0; i < 4; i++)
        ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[i], errors[i], "", &f.err));
    dq_claimed_free(&cl);
    assert_int_equal(search_all(&f, "xaf"), 3);
    assert_int_equal(search_all(&f, "XAF"), 1);
    assert_int_equal(search_all(&f, "Xaf"), 1);
    assert_int_equal(search_all(&f, "xaf.% [x]"), 1); /* magic characters are text */
    assert_int_equal(search_all(&f, "a.f"), 0);
    assert_int_equal(search_all(&f, "currency x"), 2);
    /* the bulk action on the same text moves the same tasks */
    dq_filter flt = {DQ_FILTER_MATCH, "currency xaf"};
    dq_bulk cur = {0};
    while (!cur.done)
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &flt, 0, 0, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, 2);
    assert_int_equal(search_all(&f, "xaf"), 1);
    fixture_close(&f);
}

static bool
listed(dq_client *c, const char *queue, int64_t *total)
{
    dq_queues q;
    dq_err err = {0};
    bool found = false;

    if (dq_queues_get(c, 100000, &q, &err) != DQ_OK)
        fail_msg("dq_queues_get: %s", err.msg);
    for (size_t i = 0; i < q.n; i++) {
        found = found || strcmp(q.names[i], queue) == 0;
        if (i > 0 && strcmp(q.names[i - 1], q.names[i]) >= 0)
            fail_msg("names not sorted: %s before %s", q.names[i - 1], q.names[i]);
    }
    if (total != NULL)
        *total = q.total;
    dq_queues_free(&q);
    return found;
}

static long long
sadd_calls(struct fixture *f)
{
    const char *argv[] = {"INFO", "commandstats"};
    redisReply *r = test_redis_cmd(f->redis, 2, argv);
    long long n = 0;
    const char *p;

    assert_non_null(r);
    p = strstr(r->str, "cmdstat_sadd:calls=");
    if (p != NULL)
        n = atoll(p + strlen("cmdstat_sadd:calls="));
    freeReplyObject(r);
    return n;
}

static void
queues_are_registered_by_use(void **state)
{
    struct fixture f;
    char worker_q[96], config_q[96], bad[300];
    int64_t total = 0, before = 0;
    dq_claimed cl;
    dq_config cfg;
    dq_queues q;

    fixture_open(&f, state, "registry");
    assert_false(listed(f.c, f.queue, &before));
    /* a producer lists its queue, once per client: the second enqueue adds no SADD */
    enqueue_str(&f, "{}", 0, NULL, NULL);
    long long sadds = sadd_calls(&f);
    enqueue_str(&f, "{}", 0, NULL, NULL);
    assert_int_equal(sadd_calls(&f), sadds);
    assert_true(listed(f.c, f.queue, &total));
    assert_int_equal(total, before + 1);

    /* a worker (claim) and an operator (config) list theirs */
    test_queue_name(worker_q, sizeof worker_q, "registry-w");
    ASSERT_OK(&f, dq_claim(f.c, worker_q, 1, 1000, "w", &cl, &f.err));
    dq_claimed_free(&cl);
    assert_true(listed(f.c, worker_q, NULL));
    test_queue_name(config_q, sizeof config_q, "registry-c");
    ASSERT_OK(&f, dq_config_get(f.c, config_q, &cfg, &f.err));
    assert_false(listed(f.c, config_q, NULL)); /* reading is not using */
    dq_config set = {.max_attempts = 3};
    ASSERT_OK(&f, dq_config_set(f.c, config_q, &set, &f.err));
    assert_true(listed(f.c, config_q, NULL));

    /* most bounds what is returned, total still counts everything */
    ASSERT_OK(&f, dq_queues_get(f.c, 1, &q, &f.err));
    assert_int_equal(q.n, 1);
    assert_true(q.total >= 3);
    dq_queues_free(&q);
    ASSERT_OK(&f, dq_queues_get(f.c, 0, &q, &f.err));
    assert_int_equal(q.n, 0);
    assert_null(q.names);
    dq_queues_free(&q);

    /* forget: gone from the list, tasks untouched; the next use lists it again */
    ASSERT_OK(&f, dq_queue_forget(f.c, f.queue, &f.err));
    assert_false(listed(f.c, f.queue, NULL));
    dq_stats s;
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due, 2);
    enqueue_str(&f, "{}", 0, NULL, NULL);
    assert_true(listed(f.c, f.queue, NULL));

    /* a member no client could have written (too long) is not listed, nothing breaks */
    memset(bad, 'x', sizeof bad - 1);
    bad[sizeof bad - 1] = '\0';
    const char *sadd[] = {"SADD", "dq:queues", bad};
    freeReplyObject(test_redis_cmd(f.redis, 3, sadd));
    assert_true(listed(f.c, f.queue, &total));
    fixture_close(&f);
}

static void
queues_registry_of_the_wrong_type(void **state)
{
    struct fixture f;
    dq_queues q;
    const char *del[] = {"RENAME", "dq:queues", "dq:queues:saved"};
    const char *set[] = {"SET", "dq:queues", "not a set"};
    const char *back[] = {"RENAME", "dq:queues:saved", "dq:queues"};

    fixture_open(&f, state, "registry-type");
    enqueue_str(&f, "{}", 0, NULL, NULL);
    freeReplyObject(test_redis_cmd(f.redis, 3, del));
    freeReplyObject(test_redis_cmd(f.redis, 3, set));
    assert_int_not_equal(dq_queues_get(f.c, 10, &q, &f.err), DQ_OK);
    assert_non_null(strstr(f.err.msg, "WRONGTYPE"));
    assert_null(q.names);
    /* enqueue still works: the registry is only for discovery */
    dq_client *c2;
    ASSERT_OK(&f, dq_client_open(f.redis->url, NULL, &c2, &f.err));
    dq_enqueued e;
    ASSERT_OK(&f, dq_enqueue(c2, f.queue, NULL, "x", 1, &e, &f.err));
    dq_client_free(c2);
    const char *undo[] = {"DEL", "dq:queues"};
    freeReplyObject(test_redis_cmd(f.redis, 2, undo));
    freeReplyObject(test_redis_cmd(f.redis, 3, back));
    fixture_close(&f);
}

/* Enqueues one task to @queue on @c and claims it back (then acks it). */
static void
enqueue_and_claim(struct fixture *f, dq_client *c, const char *queue)
{
    dq_enqueued e;
    dq_claimed cl;

    ASSERT_OK(f, dq_enqueue(c, queue, NULL, "x", 1, &e, &f->err));
    ASSERT_OK(f, dq_claim(c, queue, 1, 60000, "w", &cl, &f->err));
    assert_int_equal(cl.n, 1);
    ASSERT_OK(f, dq_ack(c, queue, &cl.tasks[0], &f->err));
    dq_claimed_free(&cl);
}

static void
registry_cache_holds_many_queues(void **state)
{
    enum { NQ = 10, ROUNDS = 4 };
    struct fixture f;
    char names[NQ][96];

    fixture_open(&f, state, "cycle");
    for (int i = 0; i < NQ; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "cycle-%d", i);
        test_queue_name(names[i], sizeof names[i], tag);
    }
    /* first round: one SADD per queue, at its first call (the enqueue); none for claim */
    for (int i = 0; i < NQ; i++) {
        long long before = sadd_calls(&f);
        enqueue_and_claim(&f, f.c, names[i]);
        assert_int_equal(sadd_calls(&f), before + 1);
    }
    /* later rounds, enqueue, batch enqueue and claim on every queue: no SADD at all */
    long long settled = sadd_calls(&f);
    for (int round = 1; round < ROUNDS; round++) {
        for (int i = 0; i < NQ; i++) {
            dq_enqueue_item items[2] = {{.payload = "a", .payload_len = 1},
                                        {.payload = "b", .payload_len = 1}};
            dq_enqueued out[2];
            dq_claimed cl;
            enqueue_and_claim(&f, f.c, names[i]);
            ASSERT_OK(&f, dq_enqueue_batch(f.c, names[i], items, 2, out, &f.err));
            ASSERT_OK(&f, dq_claim(f.c, names[i], 2, 60000, "w", &cl, &f.err));
            assert_int_equal(cl.n, 2);
            dq_claimed_free(&cl);
        }
    }
    assert_int_equal(sadd_calls(&f), settled);
    for (int i = 0; i < NQ; i++)
        assert_true(listed(f.c, names[i], NULL));

    /* forgetting one queue forgets it in the cache too: its next use registers again */
    ASSERT_OK(&f, dq_queue_forget(f.c, names[3], &f.err));
    enqueue_and_claim(&f, f.c, names[3]);
    assert_int_equal(sadd_calls(&f), settled + 1);
    assert_true(listed(f.c, names[3], NULL));
    fixture_close(&f);
}

/*
 * Past the cache's bound (1024 names, client.h) the queues already remembered stay
 * remembered and the further ones are not: each call for them sends its SADD again.
 */
static void
registry_cache_past_its_bound(void **state)
{
    enum { NQ = 1024 + 3 };
    struct fixture f;
    char name[96];

    fixture_open(&f, state, "bound");
    for (int i = 0; i < NQ; i++) {
        char tag[32];
        dq_enqueued e;
        snprintf(tag, sizeof tag, "bound-%04d", i);
        test_queue_name(name, sizeof name, tag);
        ASSERT_OK(&f, dq_enqueue(f.c, name, NULL, "x", 1, &e, &f.err));
    }
    long long before = sadd_calls(&f);
    for (int i = 0; i < NQ; i++) {
        char tag[32];
        dq_enqueued e;
        snprintf(tag, sizeof tag, "bound-%04d", i);
        test_queue_name(name, sizeof name, tag);
        ASSERT_OK(&f, dq_enqueue(f.c, name, NULL, "x", 1, &e, &f.err));
    }
    assert_int_equal(sadd_calls(&f), before + (NQ - 1024));
    assert_true(listed(f.c, name, NULL));
    fixture_close(&f);
}

/* A SADD that fails (dq:queues of the wrong type) is not remembered: a later call for
 * the queue registers it once the registry is usable again. */
static void
failed_registration_is_retried(void **state)
{
    struct fixture f;
    char queue[96];
    const char *save[] = {"RENAME", "dq:queues", "dq:queues:saved"};
    const char *set[] = {"SET", "dq:queues", "not a set"};
    const char *undo[] = {"DEL", "dq:queues"};
    const char *back[] = {"RENAME", "dq:queues:saved", "dq:queues"};
    dq_enqueued e;

    fixture_open(&f, state, "retry-reg");
    enqueue_str(&f, "{}", 0, NULL, NULL); /* so dq:queues exists to be renamed */
    test_queue_name(queue, sizeof queue, "retry-reg-2");
    freeReplyObject(test_redis_cmd(f.redis, 3, save));
    freeReplyObject(test_redis_cmd(f.redis, 3, set));
    ASSERT_OK(&f, dq_enqueue(f.c, queue, NULL, "x", 1, &e, &f.err));
    freeReplyObject(test_redis_cmd(f.redis, 2, undo));
    freeReplyObject(test_redis_cmd(f.redis, 3, back));
    assert_false(listed(f.c, queue, NULL));
    ASSERT_OK(&f, dq_enqueue(f.c, queue, NULL, "y", 1, &e, &f.err));
    assert_true(listed(f.c, queue, NULL));
    fixture_close(&f);
}

/* One id limit everywhere (DQ_ID_MAX, what enqueue.lua enforces): an id that long is
 * enqueued, found and dropped; one byte more is refused by every call that takes ids. */
static void
ids_are_limited_to_dq_id_max(void **state)
{
    struct fixture f;
    char id[DQ_ID_MAX + 2];
    const char *ids[1] = {id};
    size_t n = 0;
    dq_enqueued e;
    dq_task t;

    fixture_open(&f, state, "idmax");
    memset(id, 'k', DQ_ID_MAX + 1);
    id[DQ_ID_MAX + 1] = '\0';
    dq_enqueue_opts o = {.id = id};
    assert_int_equal(dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err), DQ_EINVAL);
    assert_string_equal(f.err.msg, "id: must be 1..200 bytes (got 201)");
    assert_int_equal(dq_find(f.c, f.queue, id, &t, &f.err), DQ_EINVAL);
    assert_int_equal(dq_requeue(f.c, f.queue, ids, 1, 0, &n, &f.err), DQ_EINVAL);
    assert_int_equal(dq_drop(f.c, f.queue, ids, 1, &n, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "longer than 200 bytes"));

    id[DQ_ID_MAX] = '\0';
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    assert_string_equal(e.id, id);
    ASSERT_OK(&f, dq_find(f.c, f.queue, id, &t, &f.err));
    assert_string_equal(t.id, id);
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 1, &n, &f.err));
    assert_int_equal(n, 1);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requeue_by_id_all_or_nothing),
        cmocka_unit_test(requeue_all_in_steps_with_spread),
        cmocka_unit_test(drop_by_id_failed_and_scheduled),
        cmocka_unit_test(drop_all_failed),
        cmocka_unit_test(audit_records_actions_newest_first),
        cmocka_unit_test(garbage_member_goes_to_failed),
        cmocka_unit_test(scheduled_garbage_is_named_and_dropped),
        cmocka_unit_test(find_everywhere),
        cmocka_unit_test(same_millisecond_crowd_is_searched_not_walked),
        cmocka_unit_test(requeue_all_cursor_survives_trimming),
        cmocka_unit_test(run_now_makes_a_future_task_due),
        cmocka_unit_test(search_failed_in_bounded_steps),
        cmocka_unit_test(search_is_smart_case_and_bulk_agrees),
        cmocka_unit_test(queues_are_registered_by_use),
        cmocka_unit_test(queues_registry_of_the_wrong_type),
        cmocka_unit_test(registry_cache_holds_many_queues),
        cmocka_unit_test(registry_cache_past_its_bound),
        cmocka_unit_test(failed_registration_is_retried),
        cmocka_unit_test(ids_are_limited_to_dq_id_max),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/ops", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
