/* SPDX-License-Identifier: MIT */
/*
 * test_queue.c: the producing and consuming scripts against a real redis-server:
 * enqueue, claim, ack, retry, fail, reap, stats and page, with their limits and
 * edge cases. Time is the server's: tasks are made due by their delay, and waits
 * are deadline polls, never sleeps.
 */
#include "harness/fixture.h"

#include "buf.h"
#include "dq_scripts.h"
#include "env.h"
#include "env_build.h"

#include <msgpack.h>

static void
enqueue_claim_ack(void **state)
{
    struct fixture f;
    dq_enqueued e;
    dq_claimed cl;
    dq_stats s;

    fixture_open(&f, state, "basic");
    enqueue_str(&f, "hello", 0, NULL, &e);
    assert_string_equal(e.id, "1");
    assert_false(e.duplicate);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    assert_string_equal(cl.tasks[0].id, "1");
    assert_false(cl.tasks[0].custom_id);
    assert_int_equal(cl.tasks[0].attempt, 0);
    assert_int_equal(cl.tasks[0].payload_len, 5);
    assert_memory_equal(cl.tasks[0].payload, "hello", 5);
    assert_int_equal(cl.tasks[0].lease_ms, cl.now_ms + 30000);
    assert_int_equal(cl.next_due_ms, -1);

    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.inflight, 1);
    assert_int_equal(s.due, 0);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.inflight, 0);
    assert_int_equal(s.done, 1);
    assert_int_equal(s.enqueued, 1);
    /* a second ack of the same lease is refused, not double-counted */
    assert_int_equal(dq_ack(f.c, f.queue, &cl.tasks[0], &f.err), DQ_ELEASE);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
not_claimable_before_due(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_enqueued e;

    fixture_open(&f, state, "notdue");
    enqueue_str(&f, "later", 60000, NULL, &e);
    /* due far enough ahead that this process reaches the claim first, even slowed */
    int soon = 300 * test_slowdown();
    enqueue_str(&f, "soon", soon, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 0);
    /* the claim tells when to come back: the earliest due time, in the future */
    assert_true(cl.next_due_ms > cl.now_ms);
    assert_true(cl.next_due_ms <= cl.now_ms + soon);
    int64_t due = cl.next_due_ms;
    dq_claimed_free(&cl);
    /* poll until the short one is claimable; it must never come before its due time */
    int64_t deadline = test_mono_ms() + 5000 + soon;
    for (;;) {
        ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
        if (cl.n > 0)
            break;
        dq_claimed_free(&cl);
        assert_true(test_mono_ms() < deadline);
        test_nap_ms(10);
    }
    assert_int_equal(cl.n, 1);
    assert_memory_equal(cl.tasks[0].payload, "soon", 4);
    assert_true(cl.now_ms >= due);
    assert_true(cl.tasks[0].due_ms == due);
    assert_true(cl.next_due_ms > cl.now_ms + 50000);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
same_ms_in_enqueue_order(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_enqueue_opts o = {0};
    char buf[16];
    dq_stats s;

    fixture_open(&f, state, "order");
    /* one absolute due time shortly ahead, so all 300 share one score: far enough ahead
     * that all are enqueued before it (a past time would become "now") */
    int ahead = 1500 * test_slowdown(); /* also slow sanitized builds (TSan) */
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    o.at_ms = s.now_ms + ahead;
    for (int i = 0; i < 300; i++) {
        dq_enqueued e;
        /* mixed ids, and payload sizes that change the envelope length */
        snprintf(buf, sizeof buf, "id-%d", i);
        char payload[400];
        memset(payload, 'p', sizeof payload);
        o.id = (i % 3 == 0) ? buf : NULL;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, payload, (size_t)(i * 7 % 400), &e, &f.err));
    }
    int64_t deadline = test_mono_ms() + 5000 + ahead;
    size_t got = 0;
    uint64_t last_seq = 0;
    while (got < 300) {
        ASSERT_OK(&f, dq_claim(f.c, f.queue, 7, 30000, "w1", &cl, &f.err));
        for (size_t i = 0; i < cl.n; i++) {
            assert_int_equal(cl.tasks[i].due_ms, o.at_ms);
            assert_true(cl.tasks[i].seq > last_seq);
            last_seq = cl.tasks[i].seq;
            got++;
        }
        dq_claimed_free(&cl);
        if (got < 300) {
            assert_true(test_mono_ms() < deadline);
            test_nap_ms(5);
        }
    }
    assert_int_equal(last_seq, 300);
    fixture_close(&f);
}

static void
duplicate_ids_are_not_added(void **state)
{
    struct fixture f;
    dq_enqueued e;
    dq_claimed cl;

    fixture_open(&f, state, "dup");
    enqueue_str(&f, "a", 60000, "order-1", &e);
    assert_false(e.duplicate);
    assert_string_equal(e.id, "order-1");
    int64_t due = e.due_ms;
    enqueue_str(&f, "b", 0, "order-1", &e);
    assert_true(e.duplicate);
    assert_int_equal(e.where, DQ_STATE_SCHEDULED);
    assert_int_equal(e.due_ms, due);
    /* all-digit ids are the generated ones: a producer cannot choose one */
    dq_enqueue_opts digits = {.id = "1"};
    assert_int_equal(dq_enqueue(f.c, f.queue, &digits, "c", 1, &e, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "all digits"));
    enqueue_str(&f, "c", 0, "one", &e);
    assert_false(e.duplicate);
    enqueue_str(&f, "d", 0, NULL, &e);
    assert_false(e.duplicate);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 2);
    assert_true(cl.tasks[0].custom_id);
    assert_string_equal(cl.tasks[0].id, "one");
    assert_false(cl.tasks[1].custom_id);
    /* in flight: still a duplicate */
    enqueue_str(&f, "e", 0, "one", &e);
    assert_true(e.duplicate);
    assert_int_equal(e.where, DQ_STATE_INFLIGHT);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "bad", "trace", &f.err));
    /* failed: still a duplicate, so the failure record is never overwritten */
    enqueue_str(&f, "e", 0, "one", &e);
    assert_true(e.duplicate);
    assert_int_equal(e.where, DQ_STATE_FAILED);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[1], &f.err));
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
limits_are_enforced(void **state)
{
    struct fixture f;
    dq_enqueue_opts o = {0};
    dq_enqueued e;
    dq_stats s;
    dq_config cfg = {0};
    char *big = calloc(1, 1048577);

    fixture_open(&f, state, "limits");
    assert_int_equal(dq_enqueue(f.c, f.queue, &o, big, 1048577, &e, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "payload"));
    assert_non_null(strstr(f.err.msg, "1048576"));
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, big, 1048576, &e, &f.err));
    o.delay_ms = 7LL * 86400000 + 1;
    assert_int_equal(dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "max_delay_ms"));
    o.delay_ms = 7LL * 86400000;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));

    /* limits are per queue, in Redis */
    cfg.max_payload = 10;
    cfg.max_delay_ms = 1000;
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    o.delay_ms = 0;
    assert_int_equal(dq_enqueue(f.c, f.queue, &o, "01234567890", 11, &e, &f.err), DQ_EINVAL);
    o.delay_ms = 1001;
    assert_int_equal(dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err), DQ_EINVAL);
    cfg = (dq_config){.failed_retention = -5};
    assert_int_equal(dq_config_set(f.c, f.queue, &cfg, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "failed_retention"));
    /* nothing half-applied */
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due + s.future, 2);
    /* bad ids */
    o = (dq_enqueue_opts){.id = "a\nb"};
    assert_int_equal(dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err), DQ_EINVAL);
    assert_int_equal(dq_queue_name_check("a{b}", &f.err), DQ_EINVAL);
    assert_int_equal(dq_stats_get(f.c, "bad{name}", &s, &f.err), DQ_EINVAL);
    free(big);
    fixture_close(&f);
}

/* The health verdict's thresholds are config fields: defaults, set and read back,
 * bad values refused naming the field, nothing half-applied; and audited. */
static void
alert_thresholds_are_config_fields(void **state)
{
    struct fixture f;
    dq_config cfg;

    fixture_open(&f, state, "alerts");
    ASSERT_OK(&f, dq_config_get(f.c, f.queue, &cfg, &f.err));
    assert_int_equal(cfg.alert_oldest_due_ms, 300000);
    assert_int_equal(cfg.alert_far_future, 100000);
    assert_int_equal(cfg.alert_running_ms, 300000);
    assert_int_equal(cfg.alert_memory_pct, 90);
    assert_int_equal(cfg.worker_prune_ms, 3600000); /* the fields before them still read */

    cfg = (dq_config){.alert_oldest_due_ms = 60000,
                      .alert_far_future = 50,
                      .alert_running_ms = 120000,
                      .alert_memory_pct = 75};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    ASSERT_OK(&f, dq_config_get(f.c, f.queue, &cfg, &f.err));
    assert_int_equal(cfg.alert_oldest_due_ms, 60000);
    assert_int_equal(cfg.alert_far_future, 50);
    assert_int_equal(cfg.alert_running_ms, 120000);
    assert_int_equal(cfg.alert_memory_pct, 75);
    assert_int_equal(cfg.max_attempts, 25); /* the others untouched */

    /* out of range: refused naming the field and its range */
    static const struct {
        dq_config cfg;
        const char *field, *range;
    } bad[] = {
        {{.alert_memory_pct = 101}, "alert_memory_pct", "1..100"},
        {{.alert_memory_pct = -3}, "alert_memory_pct", "1..100"},
        {{.alert_far_future = 1000000001}, "alert_far_future", "1..1000000000"},
        {{.alert_oldest_due_ms = 315360000001}, "alert_oldest_due_ms", "1..315360000000"},
        {{.alert_running_ms = -1}, "alert_running_ms", "1..315360000000"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(dq_config_set(f.c, f.queue, &bad[i].cfg, &f.err), DQ_EINVAL);
        assert_non_null(strstr(f.err.msg, bad[i].field));
        assert_non_null(strstr(f.err.msg, bad[i].range));
    }
    /* all or nothing: a good field beside a bad one is not set */
    cfg = (dq_config){.alert_running_ms = 5000, .alert_memory_pct = 0x7fff};
    assert_int_equal(dq_config_set(f.c, f.queue, &cfg, &f.err), DQ_EINVAL);
    ASSERT_OK(&f, dq_config_get(f.c, f.queue, &cfg, &f.err));
    assert_int_equal(cfg.alert_running_ms, 120000);
    assert_int_equal(cfg.alert_memory_pct, 75);

    /* audited like the others */
    dq_audit a;
    ASSERT_OK(&f, dq_audit_get(f.c, f.queue, 10, &a, &f.err));
    bool seen = false;
    for (size_t i = 0; i < a.n; i++)
        if (a.entries[i].detail != NULL && strstr(a.entries[i].detail, "alert_memory_pct=75"))
            seen = true;
    assert_true(seen);
    dq_audit_free(&a);
    fixture_close(&f);
}

/* Claims one task, polling until it is due (up to 5 s). */
static void
claim_one(struct fixture *f, dq_claimed *cl)
{
    int64_t deadline = test_mono_ms() + 5000;

    for (;;) {
        ASSERT_OK(f, dq_claim(f->c, f->queue, 1, 30000, "w1", cl, &f->err));
        if (cl->n == 1)
            return;
        dq_claimed_free(cl);
        if (test_mono_ms() > deadline)
            fail_msg("nothing became claimable within 5 s");
        test_nap_ms(5);
    }
}

static void
retry_schedule_and_exhaustion(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_retried rt;
    dq_config cfg = {.backoff_base_ms = 20, .backoff_cap_ms = 70};
    dq_enqueue_opts o = {.max_attempts = 5};
    dq_enqueued e;
    /* expected backoff per attempt: 20, 40, 70 (capped), 70 */
    const int64_t expect[] = {20, 40, 70, 70};

    fixture_open(&f, state, "retry");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "r", 1, &e, &f.err));
    for (int i = 0; i < 4; i++) {
        claim_one(&f, &cl);
        assert_int_equal(cl.tasks[0].attempt, i);
        if (i > 0)
            assert_string_equal(cl.tasks[0].last_error, "flaky");
        ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[0], "flaky", &rt, &f.err));
        assert_false(rt.exhausted);
        /* due = server now + backoff; now is between claim time and a bit later */
        assert_true(rt.due_ms >= cl.now_ms + expect[i]);
        assert_true(rt.due_ms <= cl.now_ms + expect[i] + 1000);
        dq_claimed_free(&cl);
    }
    claim_one(&f, &cl);
    assert_int_equal(cl.tasks[0].attempt, 4);
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[0], "still flaky", &rt, &f.err));
    assert_true(rt.exhausted);
    assert_int_equal(rt.due_ms, -1);
    dq_claimed_free(&cl);

    dq_task t;
    ASSERT_OK(&f, dq_find(f.c, f.queue, e.id, &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_string_equal(t.reason, "attempts exhausted");
    assert_string_equal(t.error, "still flaky");
    assert_int_equal(t.attempt, 5);
    dq_task_clear(&t);
    dq_stats s;
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.retried, 4);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.failed_total, 1);
    fixture_close(&f);
}

static void
long_retry_message_is_bounded(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_retried rt;
    char msg[2000];

    fixture_open(&f, state, "retrymsg");
    memset(msg, 'm', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    enqueue_str(&f, "x", 0, NULL, NULL);
    claim_one(&f, &cl);
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[0], msg, &rt, &f.err));
    dq_claimed_free(&cl);
    dq_task t;
    ASSERT_OK(&f, dq_find(f.c, f.queue, "1", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_int_equal(strlen(t.last_error), 512);
    dq_task_clear(&t);
    fixture_close(&f);
}

static void
fail_keeps_error_and_trace(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_page p;
    const char *trace = "Traceback:\n  at charge (bank.c:42)\n  at run (worker.c:7)";

    fixture_open(&f, state, "fail");
    enqueue_str(&f, "{}", 0, "pay-7", NULL);
    claim_one(&f, &cl);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "card declined", trace, &f.err));
    /* the lease is gone: a late retry from the same worker is refused */
    assert_int_equal(dq_retry(f.c, f.queue, &cl.tasks[0], "x", NULL, &f.err), DQ_ELEASE);
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FAILED, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 1);
    assert_int_equal(p.n, 1);
    assert_string_equal(p.tasks[0].id, "pay-7");
    assert_string_equal(p.tasks[0].reason, "error");
    assert_string_equal(p.tasks[0].error, "card declined");
    assert_string_equal(p.tasks[0].trace, trace);
    assert_string_equal(p.tasks[0].failed_by, "tester");
    assert_true(p.tasks[0].failed_ms > 0);
    assert_int_equal(p.tasks[0].attempt, 1);
    dq_page_free(&p);
    fixture_close(&f);
}

static void
reap_returns_expired_leases(void **state)
{
    struct fixture f;
    dq_claimed cl, cl2;
    dq_reaped rp;

    fixture_open(&f, state, "reap");
    enqueue_str(&f, "slow", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 50, "dead-worker", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    ASSERT_OK(&f, dq_reap(f.c, f.queue, 100, &rp, &f.err));
    assert_int_equal(rp.returned, 0);
    assert_int_equal(rp.next_lease_ms, cl.tasks[0].lease_ms);
    int64_t deadline = test_mono_ms() + 5000;
    do {
        ASSERT_OK(&f, dq_reap(f.c, f.queue, 100, &rp, &f.err));
        if (rp.returned == 0) {
            assert_true(test_mono_ms() < deadline);
            test_nap_ms(10);
        }
    } while (rp.returned == 0);
    assert_int_equal(rp.returned, 1);
    assert_int_equal(rp.next_lease_ms, -1);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w2", &cl2, &f.err));
    assert_int_equal(cl2.n, 1);
    assert_int_equal(cl2.tasks[0].attempt, 1);
    assert_non_null(strstr(cl2.tasks[0].last_error, "dead-worker"));
    /* the dead worker's late ack is fenced off; the new holder's works */
    assert_int_equal(dq_ack(f.c, f.queue, &cl.tasks[0], &f.err), DQ_ELEASE);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl2.tasks[0], &f.err));
    dq_stats s;
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.reaped, 1);
    assert_int_equal(s.done, 1);
    assert_int_equal(s.inflight, 0);
    dq_claimed_free(&cl);
    dq_claimed_free(&cl2);
    fixture_close(&f);
}

static void
stale_lease_is_fenced_after_requeue(void **state)
{
    struct fixture f;
    dq_claimed a, b;
    dq_enqueue_opts o = {.max_attempts = 1};
    dq_enqueued e;
    dq_reaped rp;
    size_t moved;

    fixture_open(&f, state, "fence");
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    /* A claims with a short lease and stalls; reap parks the task (1 attempt only); an
     * operator requeues it (attempt back to 0); B claims it. A's late ack must fail. */
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 20, "A", &a, &f.err));
    assert_int_equal(a.n, 1);
    int64_t deadline = test_mono_ms() + 5000;
    do {
        ASSERT_OK(&f, dq_reap(f.c, f.queue, 10, &rp, &f.err));
        assert_true(test_mono_ms() < deadline);
    } while (rp.exhausted == 0);
    const char *ids[] = {e.id};
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, ids, 1, 0, &moved, &f.err));
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "B", &b, &f.err));
    assert_int_equal(b.n, 1);
    assert_int_equal(b.tasks[0].attempt, a.tasks[0].attempt); /* same attempt number... */
    assert_int_equal(dq_ack(f.c, f.queue, &a.tasks[0], &f.err), DQ_ELEASE); /* ...but fenced */
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &b.tasks[0], &f.err));
    dq_claimed_free(&a);
    dq_claimed_free(&b);
    fixture_close(&f);
}

/* dq_ack_many: one call for many tasks, each task's lease checked on its own. */
static void
ack_many_checks_each_lease(void **state)
{
    struct fixture f;
    dq_claimed cl, again;
    dq_reaped rp;
    dq_stats s;
    const dq_task *tasks[5];
    int rcs[5];
    dq_err errs[5];

    fixture_open(&f, state, "ackmany");
    for (int i = 0; i < 5; i++)
        enqueue_str(&f, "{}", 0, i == 2 ? "custom-2" : NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 5, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 5);
    /* the fourth one's lease is lost: given back to scheduled and claimed by another, in
     * a later millisecond (the fencing token is attempt and claim time: a release keeps
     * the attempt, so a claim in the same millisecond would carry the same token) */
    int64_t deadline = test_mono_ms() + 5000;
    do {
        ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
        assert_true(test_mono_ms() < deadline);
    } while (s.now_ms <= cl.now_ms);
    ASSERT_OK(&f, dq_release(f.c, f.queue, &cl.tasks[3], &f.err));
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w2", &again, &f.err));
    assert_int_equal(again.n, 1);
    for (int i = 0; i < 5; i++)
        tasks[i] = &cl.tasks[i];
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, tasks, 5, rcs, errs, &f.err));
    for (int i = 0; i < 5; i++)
        if (rcs[i] != (i == 3 ? DQ_ELEASE : DQ_OK))
            fail_msg("task %d (%s): %d %s", i, cl.tasks[i].id, rcs[i], errs[i].msg);
    assert_non_null(strstr(errs[3].msg, cl.tasks[3].id));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.done, 4);
    assert_int_equal(s.inflight, 1); /* w2's claim, untouched */

    /* one task: the same answers through the one-task form of the script */
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, tasks, 1, rcs, errs, &f.err));
    assert_int_equal(rcs[0], DQ_ELEASE); /* acked already */
    const dq_task *mine[] = {&again.tasks[0]};
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, mine, 1, rcs, NULL, &f.err));
    assert_int_equal(rcs[0], DQ_OK);
    assert_int_equal(dq_ack_many(f.c, f.queue, tasks, 0, rcs, NULL, &f.err), DQ_EINVAL);
    ASSERT_OK(&f, dq_reap(f.c, f.queue, 10, &rp, &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.done, 5);
    assert_int_equal(s.inflight, 0);
    dq_claimed_free(&cl);
    dq_claimed_free(&again);
    fixture_close(&f);
}

static void
deadline_expires_to_failed(void **state)
{
    struct fixture f;
    dq_enqueue_opts o = {.deadline_ms = 1};
    dq_enqueued e;
    dq_claimed cl;
    dq_stats s;

    fixture_open(&f, state, "deadline");
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "stale", 5, &e, &f.err));
    /* wait until the deadline (due + 1 ms) has passed on the server clock */
    int64_t deadline = test_mono_ms() + 5000;
    do {
        ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
        assert_true(test_mono_ms() < deadline);
    } while (s.oldest_due_age_ms < 5);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 0);
    assert_int_equal(cl.to_failed, 1);
    dq_claimed_free(&cl);
    dq_task t;
    ASSERT_OK(&f, dq_find(f.c, f.queue, e.id, &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_string_equal(t.reason, "expired");
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.expired, 1);
    fixture_close(&f);
}

static void
stats_and_pages(void **state)
{
    struct fixture f;
    dq_stats s;
    dq_page p;

    fixture_open(&f, state, "stats");
    for (int i = 0; i < 5; i++)
        enqueue_str(&f, "now", 0, NULL, NULL);
    for (int i = 0; i < 3; i++)
        enqueue_str(&f, "soon", 60000, NULL, NULL);
    for (int i = 0; i < 2; i++)
        enqueue_str(&f, "far", 2 * 3600000, NULL, NULL);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due, 5);
    assert_int_equal(s.future, 5);
    assert_int_equal(s.far_future, 2);
    assert_true(s.next_due_ms > s.now_ms + 59000);
    assert_true(s.oldest_due_age_ms >= 0);
    assert_int_equal(s.enqueued, 10);

    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 1, 3, &p, &f.err));
    assert_int_equal(p.total, 5);
    assert_int_equal(p.n, 3);
    assert_string_equal(p.tasks[0].id, "2");
    assert_int_equal(p.tasks[0].state, DQ_STATE_SCHEDULED);
    dq_page_free(&p);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FUTURE, 0, 100, &p, &f.err));
    assert_int_equal(p.total, 5);
    assert_int_equal(p.n, 5);
    assert_string_equal(p.tasks[4].id, "10");
    assert_true(p.tasks[0].due_ms <= p.tasks[4].due_ms);
    dq_page_free(&p);
    assert_int_equal(dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 0, &p, &f.err), DQ_EINVAL);
    assert_int_equal(dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 1001, &p, &f.err), DQ_EINVAL);

    dq_claimed cl;
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 2, 30000, "worker-a", &cl, &f.err));
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_INFLIGHT, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 2);
    assert_string_equal(p.tasks[0].worker, "worker-a");
    assert_int_equal(p.tasks[0].state, DQ_STATE_INFLIGHT);
    assert_true(p.tasks[0].lease_ms > p.now_ms);
    dq_page_free(&p);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
failed_retention_is_exact_and_counted(void **state)
{
    struct fixture f;
    dq_config cfg = {.failed_retention = 5};
    dq_claimed cl;
    dq_stats s;
    dq_page p;

    fixture_open(&f, state, "retention");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    for (int i = 0; i < 8; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 8, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 8);
    for (size_t i = 0; i < cl.n; i++)
        ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[i], "no", "", &f.err));
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 5);
    assert_int_equal(s.trimmed, 3);
    assert_int_equal(s.failed_total, 8);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FAILED, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 5);
    /* the oldest went first: what is left is tasks 4..8, newest first */
    assert_string_equal(p.tasks[0].id, "8");
    assert_string_equal(p.tasks[4].id, "4");
    dq_page_free(&p);
    fixture_close(&f);
}

/* Done retention (PROTOCOL.md 4.7) through all three ack paths: ack.lua alone, ack.lua
 * batched, and claim's settling; exactly done_retention kept, newest first, each with how
 * it ran; find reaches a done task; 0 keeps none. */
static void
done_retention_is_exact_through_every_ack_path(void **state)
{
    struct fixture f;
    dq_config cfg = {.done_retention = 4};
    dq_claimed cl, cl2;
    dq_page p;
    dq_task t;
    int rcs[3];

    fixture_open(&f, state, "doneret");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    for (int i = 0; i < 7; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 7, 30000, "w-a", &cl, &f.err));
    assert_int_equal(cl.n, 7);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err)); /* 1: alone */
    const dq_task *three[] = {&cl.tasks[1], &cl.tasks[2], &cl.tasks[3]};
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, three, 3, rcs, NULL, &f.err)); /* 2..4: batched */
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 4);
    dq_page_free(&p);
    dq_settle res[3] = {{.task = &cl.tasks[4], .outcome = DQ_DONE},
                        {.task = &cl.tasks[5], .outcome = DQ_DONE},
                        {.task = &cl.tasks[6], .outcome = DQ_DONE}};
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, res, 3, 0, 30000, 0, "w-a", NULL, &cl2, &f.err));
    dq_claimed_free(&cl2);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 4); /* exactly: 1..3 trimmed */
    assert_int_equal(p.n, 4);
    for (size_t i = 0; i < p.n; i++) {
        assert_int_equal(p.tasks[i].state, DQ_STATE_DONE);
        assert_string_equal(p.tasks[i].worker, "w-a");
        assert_int_equal(p.tasks[i].attempt, 1);
        assert_true(p.tasks[i].claimed_ms >= 0 && p.tasks[i].done_ms >= p.tasks[i].claimed_ms);
        assert_int_equal(p.tasks[i].claimed_ms, cl.tasks[i].claimed_ms);
    }
    /* newest first; the kept ones are tasks 4..7 (the oldest three were trimmed) */
    for (size_t i = 0; i < p.n; i++) {
        assert_true(atoi(p.tasks[i].id) >= 4);
        if (i > 0)
            assert_true(p.tasks[i - 1].done_ms >= p.tasks[i].done_ms);
    }
    dq_page_free(&p);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "7", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_DONE);
    assert_string_equal(t.worker, "w-a");
    dq_task_clear(&t);
    assert_int_equal(dq_find(f.c, f.queue, "1", &t, &f.err), DQ_ENOTFOUND);
    /* back to 0: the next ack keeps nothing more, and config trims what was kept */
    cfg = (dq_config){.done_retention = -1};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 0);
    dq_page_free(&p);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

/* The server's clock has passed @at_ms: wait_until's condition for an age limit. */
struct server_past {
    struct fixture *f;
    int64_t at_ms;
};

static bool
server_is_past(void *arg)
{
    struct server_past *w = arg;
    dq_stats s;

    return dq_stats_get(w->f->c, w->f->queue, &s, &w->f->err) == DQ_OK && s.now_ms > w->at_ms;
}

/* Entries of the done index, read raw: what the scripts left, not what readers show. */
static long long
done_kept_raw(struct fixture *f)
{
    char key[160];

    snprintf(key, sizeof key, "dq:{%s}:doneidx", f->queue);
    long long n = redis_int(f, 2, (const char *[]){"ZCARD", key});
    snprintf(key, sizeof key, "dq:{%s}:done", f->queue);
    assert_int_equal(redis_int(f, 2, (const char *[]){"HLEN", key}), n);
    return n;
}

/* done_retention_ms (PROTOCOL.md 4.7), by server time: alone it turns retention on;
 * a record past its age is hidden from page and find before any write, and the next
 * ack (ack.lua, and claim's settling) removes it exactly; with both limits the tighter
 * wins; config applies a lowered age at once; both 0: the claim says keep none. */
static void
done_retention_ms_trims_exactly_by_age(void **state)
{
    struct fixture f;
    dq_config cfg = {.done_retention_ms = 400};
    dq_claimed cl, cl2;
    dq_page p;
    dq_task t;

    fixture_open(&f, state, "doneage");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    enqueue_str(&f, "x", 0, "age-1", NULL);
    enqueue_str(&f, "x", 0, "age-2", NULL);
    enqueue_str(&f, "x", 0, "age-3", NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 3, 30000, "w-a", &cl, &f.err));
    assert_int_equal(cl.n, 3);
    assert_true(cl.keep_done); /* the age limit alone keeps done tasks */
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 1);
    assert_int_equal(p.n, 1);
    struct server_past w = {&f, p.tasks[0].done_ms + 400};
    dq_page_free(&p);

    /* past its age by server time: hidden from the readers, though still stored */
    assert_true(wait_until(server_is_past, &w, 5000, "the server clock past the age"));
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 0);
    assert_int_equal(p.n, 0);
    dq_page_free(&p);
    assert_int_equal(dq_find(f.c, f.queue, "age-1", &t, &f.err), DQ_ENOTFOUND);
    assert_int_equal(done_kept_raw(&f), 1);

    /* the next ack removes it: exactly the new one is left */
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[1], &f.err));
    assert_int_equal(done_kept_raw(&f), 1);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "age-2", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_DONE);
    w.at_ms = t.done_ms + 400;
    dq_task_clear(&t);

    /* claim's settling trims by age too */
    assert_true(wait_until(server_is_past, &w, 5000, "the server clock past the age"));
    dq_settle res[1] = {{.task = &cl.tasks[2], .outcome = DQ_DONE}};
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, res, 1, 0, 30000, 0, "w-a", NULL, &cl2, &f.err));
    dq_claimed_free(&cl2);
    dq_claimed_free(&cl);
    assert_int_equal(done_kept_raw(&f), 1);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 1);
    assert_string_equal(p.tasks[0].id, "age-3");
    dq_page_free(&p);

    /* both set, the count tighter: 2 of 4 kept (an hour's age keeps them all) */
    cfg = (dq_config){.done_retention = 2, .done_retention_ms = 3600000};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    for (int i = 0; i < 3; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 3, 30000, "w-a", &cl, &f.err));
    assert_int_equal(cl.n, 3);
    const dq_task *all[] = {&cl.tasks[0], &cl.tasks[1], &cl.tasks[2]};
    int rcs[3];
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, all, 3, rcs, NULL, &f.err));
    dq_claimed_free(&cl);
    assert_int_equal(done_kept_raw(&f), 2);

    /* the age tighter, set by config: its own trim removes them at once */
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 2);
    w.at_ms = p.tasks[0].done_ms + 1;
    dq_page_free(&p);
    assert_true(wait_until(server_is_past, &w, 5000, "the server clock past the newest"));
    cfg = (dq_config){.done_retention_ms = 1};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    assert_int_equal(done_kept_raw(&f), 0);

    /* both 0: off, and the claim says so (its acks read no config) */
    cfg = (dq_config){.done_retention = -1, .done_retention_ms = -1};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    dq_config got;
    ASSERT_OK(&f, dq_config_get(f.c, f.queue, &got, &f.err));
    assert_int_equal(got.done_retention, 0);
    assert_int_equal(got.done_retention_ms, 0);
    enqueue_str(&f, "x", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w-a", &cl, &f.err));
    assert_false(cl.keep_done);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

/* HMGET calls Redis counted since the last CONFIG RESETSTAT (scripts' commands count). */
static long long
hmget_calls(redisContext *rc)
{
    redisReply *r = redisCommand(rc, "INFO commandstats");
    long long n = 0;

    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    const char *at = strstr(r->str, "cmdstat_hmget:calls=");
    if (at != NULL)
        n = atoll(at + strlen("cmdstat_hmget:calls="));
    freeReplyObject(r);
    return n;
}

/* Done retention off costs an ack nothing (PROTOCOL.md 4.7): the claim tells its tasks
 * the queue keeps none, and their ack reads no config (two HMGETs: the running records,
 * and the tally ring's slot, which also tells whether history is on: the first ack of a
 * minute reads history_minutes into it, PROTOCOL.md 13); on, the claim says so and the
 * ack keeps the task. A task claimed before retention was turned on is not kept (its
 * claim said off). */
static void
done_retention_off_reads_no_config_on_ack(void **state)
{
    struct fixture f;
    dq_config cfg = {.done_retention = 3};
    dq_claimed cl;
    dq_page p;

    fixture_open(&f, state, "donefree");
    redisContext *rc = redisConnect("127.0.0.1", f.redis->port);
    assert_non_null(rc);
    assert_int_equal(rc->err, 0);
    /* a minute with room for the two acks, the first of which takes the tally's slot */
    int64_t deadline = test_mono_ms() + 10000;
    for (;;) {
        redisReply *t = redisCommand(rc, "TIME");
        long long s = atoll(t->element[0]->str);
        freeReplyObject(t);
        if (s % 60 < 55)
            break;
        if (test_mono_ms() > deadline)
            fail_msg("the server's minute did not turn");
        test_nap_ms(50);
    }
    enqueue_str(&f, "x", 0, NULL, NULL);
    enqueue_str(&f, "x", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w-a", &cl, &f.err));
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w-a", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    assert_false(cl.keep_done);
    assert_false(cl.tasks[0].keep_done);
    freeReplyObject(redisCommand(rc, "CONFIG RESETSTAT"));
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    assert_int_equal(hmget_calls(rc), 2); /* the running record's and the slot's, no config */
    dq_claimed_free(&cl);

    /* claimed off, acked after retention was turned on: not kept */
    enqueue_str(&f, "x", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w-a", &cl, &f.err));
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 0);
    dq_page_free(&p);

    /* claimed on: the claim says so, and the ack keeps it */
    enqueue_str(&f, "x", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w-a", &cl, &f.err));
    assert_true(cl.keep_done);
    assert_true(cl.tasks[0].keep_done);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DONE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 1);
    assert_string_equal(p.tasks[0].worker, "w-a");
    dq_page_free(&p);
    redisFree(rc);
    fixture_close(&f);
}

/* Reads one pub/sub message from @sub within its timeout; returns its payload as a
 * number, or -1 when none arrived. */
static long long
next_wake(redisContext *sub)
{
    redisReply *r = NULL;
    long long v = -1;

    if (redisGetReply(sub, (void **)&r) == REDIS_OK && r->type == REDIS_REPLY_ARRAY &&
        r->elements == 3 && r->element[2]->type == REDIS_REPLY_STRING)
        v = atoll(r->element[2]->str);
    freeReplyObject(r);
    return v;
}

static void
earlier_tasks_publish_a_wake_up(void **state)
{
    struct fixture f;
    char channel[160];
    dq_enqueued e;
    struct timeval tv = {0, 300 * 1000};

    fixture_open(&f, state, "wake");
    snprintf(channel, sizeof channel, "dq:{%s}:wake", f.queue);
    redisContext *sub = redisConnect("127.0.0.1", f.redis->port);
    assert_non_null(sub);
    redisReply *r = redisCommand(sub, "SSUBSCRIBE %s", channel);
    assert_non_null(r);
    freeReplyObject(r);
    redisSetTimeout(sub, tv);

    enqueue_str(&f, "first", 60000, NULL, &e); /* empty set: wakes */
    assert_int_equal(next_wake(sub), e.due_ms);
    enqueue_str(&f, "later", 120000, NULL, &e); /* after the earliest: silent */
    enqueue_str(&f, "sooner", 1000, NULL, &e);  /* before it: wakes with its due time */
    long long got = next_wake(sub);
    assert_int_equal(got, e.due_ms);
    redisFree(sub);
    fixture_close(&f);
}

/* Items 0..n-1 with payload "p<i>" (kept in @bufs), due in 1 h so nothing runs. */
static dq_enqueue_item *
batch_items(size_t n, char (*bufs)[24])
{
    dq_enqueue_item *it = calloc(n, sizeof *it);

    assert_non_null(it);
    for (size_t i = 0; i < n; i++) {
        snprintf(bufs[i], sizeof bufs[i], "p%zu", i);
        it[i].opts.delay_ms = 3600000;
        it[i].payload = bufs[i];
        it[i].payload_len = strlen(bufs[i]);
    }
    return it;
}

static void
batch_enqueue_crosses_chunks(void **state)
{
    enum { N = 2500 };
    struct fixture f;
    char(*bufs)[24] = calloc(N, sizeof *bufs);
    dq_enqueued *out = calloc(N, sizeof *out);
    dq_enqueue_item *it = batch_items(N, bufs);
    dq_stats s;
    dq_page pg;

    fixture_open(&f, state, "batch");
    it[7].opts.id = "job-7";
    it[1500].opts.delay_ms = 0; /* due now: in the second chunk */
    ASSERT_OK(&f, dq_enqueue_batch(f.c, f.queue, it, N, out, &f.err));
    /* generated ids are the sequence: one per item, in item order across the chunks */
    for (size_t i = 0; i < N; i++) {
        char want[24];
        snprintf(want, sizeof want, "%zu", i + 1);
        assert_false(out[i].duplicate);
        assert_int_equal(out[i].where, DQ_STATE_SCHEDULED);
        if (i != 7)
            assert_string_equal(out[i].id, want);
    }
    assert_string_equal(out[7].id, "job-7");
    assert_true(out[1500].due_ms < out[1499].due_ms);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due + s.future, N);
    assert_int_equal(s.due, 1);
    assert_int_equal(s.enqueued, N);
    /* the payloads are the items' own */
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 10, &pg, &f.err));
    assert_int_equal(pg.n, 1);
    assert_int_equal(pg.tasks[0].payload_len, strlen("p1500"));
    assert_memory_equal(pg.tasks[0].payload, "p1500", 5);
    dq_page_free(&pg);
    free(it);
    free(out);
    free(bufs);
    fixture_close(&f);
}

static void
batch_enqueue_duplicates(void **state)
{
    enum { N = 5 };
    struct fixture f;
    char bufs[N][24];
    dq_enqueued out[N];
    dq_enqueue_item *it = batch_items(N, bufs);
    dq_stats s;

    fixture_open(&f, state, "batch-dup");
    enqueue_str(&f, "old", 60000, "already", NULL);
    it[0].opts.id = "twice";
    it[2].opts.id = "twice";   /* the same id later in the same batch */
    it[3].opts.id = "already"; /* an id that exists before the batch */
    ASSERT_OK(&f, dq_enqueue_batch(f.c, f.queue, it, N, out, &f.err));
    assert_false(out[0].duplicate);
    assert_false(out[1].duplicate);
    assert_true(out[2].duplicate);
    assert_string_equal(out[2].id, "twice");
    assert_int_equal(out[2].where, DQ_STATE_SCHEDULED);
    assert_int_equal(out[2].due_ms, out[0].due_ms);
    assert_true(out[3].duplicate);
    assert_false(out[4].duplicate);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.future, 1 + 3); /* "already", then items 0, 1 and 4 */
    assert_int_equal(s.enqueued, 1 + 3);
    free(it);
    fixture_close(&f);
}

static void
batch_enqueue_invalid_item_rejects_its_chunk(void **state)
{
    enum { N = 2500 };
    struct fixture f;
    char(*bufs)[24] = calloc(N, sizeof *bufs);
    dq_enqueued *out = calloc(N, sizeof *out);
    dq_enqueue_item *it = batch_items(N, bufs);
    dq_config cfg = {.max_delay_ms = 7200000};
    dq_stats s;

    fixture_open(&f, state, "batch-bad");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    it[1234].opts.delay_ms = 7200001; /* over the queue's limit: only the script knows */
    assert_int_equal(dq_enqueue_batch(f.c, f.queue, it, N, out, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "items[1234]: delay:"));
    assert_non_null(strstr(f.err.msg, "max_delay_ms"));
    assert_non_null(strstr(f.err.msg, "items 1000..1999 not added"));
    /* the first chunk went in; the bad one and the one after it did not */
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.future, 1000);
    assert_string_equal(out[999].id, "1000");
    assert_string_equal(out[1000].id, "");
    assert_string_equal(out[2499].id, "");

    /* what the library checks itself is checked for every item before anything is sent */
    it[1234].opts.delay_ms = 0;
    it[2222].opts.deadline_ms = -1;
    assert_int_equal(dq_enqueue_batch(f.c, f.queue, it, N, out, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "items[2222]: deadline:"));
    assert_string_equal(out[0].id, "");
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.future + s.due, 1000);
    assert_int_equal(dq_enqueue_batch(f.c, f.queue, it, 0, out, &f.err), DQ_EINVAL);
    free(it);
    free(out);
    free(bufs);
    fixture_close(&f);
}

/* Runs enqueue.lua directly, as a producer in another language would (EVAL of the
 * embedded text), with one task: @env, @time, @id. */
static redisReply *
raw_enqueue(struct fixture *f, const void *env, size_t env_len, const char *time, const char *id)
{
    static const char *const names[] = {"sched", "ids", "inflight", "running", "failed", "failidx",
                                        "stats", "seq", "config",   "audit",   "wake"};
    const struct dq_script_src *src = &dq_script_table[DQ_SCRIPT_ENQUEUE];
    char keys[11][160];
    const char *argv[3 + 11 + 4];
    size_t lens[3 + 11 + 4];
    int n = 0;

    argv[n] = "EVAL", lens[n++] = 4;
    argv[n] = src->text, lens[n++] = src->len;
    argv[n] = "11", lens[n++] = 2;
    for (int i = 0; i < 11; i++) {
        snprintf(keys[i], sizeof keys[i], "dq:{%s}:%s", f->queue, names[i]);
        argv[n] = keys[i], lens[n++] = strlen(keys[i]);
    }
    argv[n] = "1", lens[n++] = 1;
    argv[n] = env, lens[n++] = env_len;
    argv[n] = time, lens[n++] = strlen(time);
    argv[n] = id, lens[n++] = strlen(id);
    redisContext *ctx = redisConnect("127.0.0.1", f->redis->port);
    assert_non_null(ctx);
    redisReply *r = redisCommandArgv(ctx, n, argv, lens);
    redisFree(ctx);
    assert_non_null(r);
    return r;
}

static void
expect_refused(struct fixture *f, const void *env, size_t len, const char *time, const char *id,
               const char *words)
{
    redisReply *r = raw_enqueue(f, env, len, time, id);
    if (r->type != REDIS_REPLY_ERROR || strstr(r->str, words) == NULL)
        fail_msg("expected an error with \"%s\", got type %d: %s", words, r->type,
                 r->str ? r->str : "");
    freeReplyObject(r);
}

/* A v1 envelope written by hand, as a foreign producer could: seq in the fixed 9-byte
 * form, then the other fields in their smallest forms (msgpack-c picks them). */
static void
raw_env(msgpack_sbuffer *sb, uint64_t seq, const char *id, size_t id_len, uint64_t attempt,
        uint64_t max)
{
    msgpack_packer pk;

    msgpack_sbuffer_init(sb);
    msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 9);
    msgpack_pack_uint64(&pk, 1);
    msgpack_pack_fix_uint64(&pk, seq);
    if (id != NULL) {
        msgpack_pack_str(&pk, id_len);
        msgpack_pack_str_body(&pk, id, id_len);
    } else {
        msgpack_pack_nil(&pk);
    }
    msgpack_pack_uint64(&pk, attempt);
    msgpack_pack_uint64(&pk, 1700000000000ULL);
    msgpack_pack_uint64(&pk, max);
    msgpack_pack_nil(&pk);
    msgpack_pack_bin(&pk, 2);
    msgpack_pack_bin_body(&pk, "hi", 2);
    msgpack_pack_nil(&pk);
}

/* Producers, the scripts and both readers agree on every limit: a template with max
 * attempts 2^32 is refused by enqueue, and members past the limits written into the
 * set by hand (max attempts or attempt 2^32 and more, an id of 201 bytes) are failed by
 * claim as undecodable instead of handed out, so the good task behind them runs and
 * nothing is retried forever. */
static void
no_member_past_the_limits_wedges_the_queue(void **state)
{
    struct fixture f;
    struct dq_buf b = DQ_BUF_INIT;
    dq_claimed cl;
    char key[160], long_id[DQ_ID_MAX + 2];
    msgpack_sbuffer sb[5];

    fixture_open(&f, state, "wedge");
    dq_env_template(&b, "big-max", 7, 4294967296LL, 0, 0, "x", 1);
    expect_refused(&f, b.data, b.len, "d0", "big-max", "over the limit of 1000000");
    dq_buf_free(&b);

    memset(long_id, 'a', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    raw_env(&sb[0], 101, NULL, 0, 0, 4294967296ULL);
    raw_env(&sb[1], 102, NULL, 0, 4294967296ULL, 25);
    raw_env(&sb[2], 103, NULL, 0, 1ULL << 40, 0);
    raw_env(&sb[3], 104, long_id, DQ_ID_MAX + 1, 0, 25);
    raw_env(&sb[4], 105, NULL, 0, DQ_ATTEMPTS_MAX + 1, 0);
    snprintf(key, sizeof key, "dq:{%s}:sched", f.queue);
    for (int i = 0; i < 5; i++) {
        const char *argv[] = {"ZADD", key, "0", sb[i].data};
        size_t lens[] = {4, strlen(key), 1, sb[i].size};
        redisContext *ctx = redisConnect("127.0.0.1", f.redis->port);
        assert_non_null(ctx);
        redisReply *r = redisCommandArgv(ctx, 4, argv, lens);
        assert_non_null(r);
        assert_int_equal(r->integer, 1);
        freeReplyObject(r);
        redisFree(ctx);
        msgpack_sbuffer_destroy(&sb[i]);
    }
    enqueue_str(&f, "good", 0, NULL, NULL);

    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    if (cl.to_failed != 5 || cl.n != 1)
        fail_msg("claim: %zu handed out (the first %s), %lld failed (expected the good one, "
                 "and 5 failed)",
                 cl.n, cl.n > 0 ? cl.tasks[0].id : "-", (long long)cl.to_failed);
    assert_memory_equal(cl.tasks[0].payload, "good", 4);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

/* The script fills in seq, enqueued, the default max attempts and the deadline, and
 * refuses what a producer that skipped the library's checks could break the queue with:
 * a template of the wrong layout, an id that is all digits, or one the envelope does
 * not carry; the server's own limits too. */
static void
script_fills_and_checks_templates(void **state)
{
    struct fixture f;
    struct dq_buf b = DQ_BUF_INIT;
    dq_page p;
    struct dq_env e;
    dq_config cfg = {.max_payload = 100};

    fixture_open(&f, state, "template");
    dq_env_template(&b, "job-1", 5, -1, 5000, 0, "hello", 5);
    redisReply *r = raw_enqueue(&f, b.data, b.len, "d1000", "job-1");
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->element[1]->integer, 0);
    int64_t due = r->element[2]->integer;
    freeReplyObject(r);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FUTURE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 1);
    /* the stored member is exactly as large as the template: the fields were filled in place */
    assert_int_equal(p.tasks[0].raw_len, b.len);
    ASSERT_OK(&f, dq_env_decode(p.tasks[0].raw, p.tasks[0].raw_len, &e, &f.err));
    assert_int_equal(e.seq, 1);
    assert_int_equal(e.max_attempts, 25); /* the queue's default */
    assert_int_equal(e.deadline_ms, due + 5000);
    assert_true(e.enqueued_ms > 1600000000000 && e.enqueued_ms <= due - 1000);
    assert_int_equal(e.payload.len, 5);
    dq_page_free(&p);

    expect_refused(&f, b.data, b.len, "d0", "job-2", "envelope: id field");
    expect_refused(&f, b.data, b.len - 1, "d0", "job-1", "envelope: payload length");
    expect_refused(&f, b.data, b.len, "x5", "job-1", "time:");
    b.data[11 + 6] = 1; /* attempt, after the 11-byte head and the 6-byte id */
    expect_refused(&f, b.data, b.len, "d0", "job-1", "envelope: attempt");
    dq_buf_reset(&b);
    dq_env_template(&b, "123", 3, -1, 0, 0, "x", 1);
    expect_refused(&f, b.data, b.len, "d0", "123", "all digits");
    dq_buf_reset(&b);
    dq_env_template(&b, NULL, 0, 3, 0, 0, "x", 1);
    expect_refused(&f, b.data, b.len, "d700000000000", "", "max_delay_ms");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    dq_buf_reset(&b);
    char big[101] = {0};
    dq_env_template(&b, NULL, 0, 3, 0, 0, big, sizeof big);
    expect_refused(&f, b.data, b.len, "d0", "", "max_payload");
    dq_buf_free(&b);
    fixture_close(&f);
}

/* One claim call settles a worker's results (each on its own fence, as its own script
 * would) and then claims: a released task can be claimed again at once. */
static void
claim_settles_results_then_claims(void **state)
{
    struct fixture f;
    dq_claimed cl, cl2;
    dq_stats st;

    fixture_open(&f, state, "settle");
    for (int i = 0; i < 4; i++)
        enqueue_str(&f, "s", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 4, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 4);
    dq_task stale = cl.tasks[0];
    stale.attempt = 7; /* a fence that does not hold */
    dq_settle res[5] = {
        {.task = &cl.tasks[0], .outcome = DQ_DONE},
        {.task = &cl.tasks[1], .outcome = DQ_RETRY, .message = "again"},
        {.task = &cl.tasks[2], .outcome = DQ_FAILED, .message = "broken", .trace = "at x"},
        {.task = &cl.tasks[3], .outcome = DQ_RELEASE},
        {.task = &stale, .outcome = DQ_DONE},
    };
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, res, 5, 10, 30000, 0, "w1", NULL, &cl2, &f.err));
    assert_int_equal(res[0].rc, DQ_OK);
    assert_int_equal(res[1].rc, DQ_OK);
    assert_true(res[1].retry_due_ms > cl2.now_ms);
    assert_int_equal(res[2].rc, DQ_OK);
    assert_int_equal(res[3].rc, DQ_OK);
    assert_int_equal(res[4].rc, DQ_ELEASE);
    /* the released task is due now: claimed again in the same call, same attempt */
    assert_int_equal(cl2.n, 1);
    assert_string_equal(cl2.tasks[0].id, cl.tasks[3].id);
    assert_int_equal(cl2.tasks[0].attempt, 0);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.done, 1);
    assert_int_equal(st.retried, 1);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.inflight, 1);
    /* settle only (batch 0) */
    dq_settle last = {.task = &cl2.tasks[0], .outcome = DQ_DONE};
    dq_claimed cl3;
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, &last, 1, 0, 30000, 0, "w1", NULL, &cl3, &f.err));
    assert_int_equal(last.rc, DQ_OK);
    assert_int_equal(cl3.n, 0);
    dq_claimed_free(&cl3);
    dq_claimed_free(&cl2);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

/* Acks are settled all at once (one HMGET, ZREM, HDEL): a task named twice is acked once
 * and refused the second time, as two calls would; a task named by an ack and by another
 * result is settled in order, the first result winning. */
static void
batched_acks_settle_like_separate_calls(void **state)
{
    struct fixture f;
    dq_claimed cl, cl2, cl3;
    dq_stats st;
    int rcs[3];
    dq_err errs[3];

    fixture_open(&f, state, "acks");
    for (int i = 0; i < 6; i++)
        enqueue_str(&f, "a", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 6, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 6);
    const dq_task *twice[3] = {&cl.tasks[0], &cl.tasks[1], &cl.tasks[0]};
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, twice, 3, rcs, errs, &f.err));
    assert_int_equal(rcs[0], DQ_OK);
    assert_int_equal(rcs[1], DQ_OK);
    assert_int_equal(rcs[2], DQ_ELEASE);
    dq_settle res[5] = {
        {.task = &cl.tasks[2], .outcome = DQ_DONE},
        {.task = &cl.tasks[2], .outcome = DQ_DONE},
        {.task = &cl.tasks[3], .outcome = DQ_DONE},
        {.task = &cl.tasks[0], .outcome = DQ_DONE}, /* acked above */
        {.task = &cl.tasks[4], .outcome = DQ_DONE},
    };
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, res, 5, 0, 30000, 0, "w1", NULL, &cl2, &f.err));
    assert_int_equal(res[0].rc, DQ_OK);
    assert_int_equal(res[1].rc, DQ_ELEASE);
    assert_int_equal(res[2].rc, DQ_OK);
    assert_int_equal(res[3].rc, DQ_ELEASE);
    assert_int_equal(res[4].rc, DQ_OK);
    dq_settle mixed[2] = {
        {.task = &cl.tasks[5], .outcome = DQ_RETRY, .message = "first"},
        {.task = &cl.tasks[5], .outcome = DQ_DONE},
    };
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, mixed, 2, 0, 30000, 0, "w1", NULL, &cl3, &f.err));
    assert_int_equal(mixed[0].rc, DQ_OK);
    assert_true(mixed[0].retry_due_ms > 0);
    assert_int_equal(mixed[1].rc, DQ_ELEASE);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.done, 5);
    assert_int_equal(st.retried, 1);
    assert_int_equal(st.inflight, 0);
    dq_claimed_free(&cl3);
    dq_claimed_free(&cl2);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

/* extend renews a lease whose fence holds (read in place, as ack does) and reports the
 * others lost: a stale attempt, a stale claim time, a finished task. */
static void
extend_renews_only_held_leases(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_stats st;
    bool lost[4];

    fixture_open(&f, state, "extend");
    for (int i = 0; i < 3; i++)
        enqueue_str(&f, "e", 0, i == 2 ? "named-e" : NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 3, 1000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 3);
    dq_task stale_attempt = cl.tasks[0], stale_claim = cl.tasks[1];
    stale_attempt.attempt = 3;
    stale_claim.claimed_ms -= 1;
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[1], &f.err));
    const dq_task *ts[4] = {&cl.tasks[0], &cl.tasks[2], &stale_attempt, &cl.tasks[1]};
    ASSERT_OK(&f, dq_extend(f.c, f.queue, ts, 4, 600000, lost, &f.err));
    assert_false(lost[0]);
    assert_false(lost[1]); /* a caller-chosen id: the record's id field is longer */
    assert_true(lost[2]);
    assert_true(lost[3]); /* acked */
    const dq_task *ts2[1] = {&stale_claim};
    ASSERT_OK(&f, dq_extend(f.c, f.queue, ts2, 1, 600000, lost, &f.err));
    assert_true(lost[0]);
    /* the renewed leases now run 10 minutes: nothing to reap after the first second */
    dq_reaped rp;
    ASSERT_OK(&f, dq_reap(f.c, f.queue, 10, &rp, &f.err));
    assert_int_equal(rp.returned, 0);
    assert_true(rp.next_lease_ms >= cl.now_ms + 600000);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.inflight, 2);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

struct reaped {
    struct fixture *f;
    size_t returned;
};

static bool
reaped_one(void *arg)
{
    struct reaped *r = arg;
    dq_reaped rp;
    if (dq_reap(r->f->c, r->f->queue, 10, &rp, &r->f->err) != DQ_OK)
        return false;
    r->returned += rp.returned;
    return r->returned > 0;
}

/* A task claimed ahead of its due time by a worker that then dies comes back after its
 * lease, like any other. */
static void
claimed_ahead_task_of_a_dead_worker_comes_back(void **state)
{
    struct fixture f;
    dq_claimed cl;

    fixture_open(&f, state, "ahead-dead");
    enqueue_str(&f, "soon", 400, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 200, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 0); /* not due, and no window: not claimable */
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, NULL, 0, 1, 200, 1000, "w1", NULL, &cl, &f.err));
    assert_int_equal(cl.n, 1);
    assert_true(cl.tasks[0].due_ms > cl.now_ms); /* claimed ahead */
    int64_t t0 = test_mono_ms();
    dq_claimed_free(&cl);
    /* w1 dies here: no result, no renewal */
    struct reaped r = {.f = &f};
    assert_true(wait_until(reaped_one, &r, 5000, "the lease of the claimed-ahead task reaped"));
    assert_true(test_mono_ms() - t0 >= 150);
    claim_one(&f, &cl);
    assert_int_equal(cl.tasks[0].attempt, 1); /* the lost lease counted as an attempt */
    assert_memory_equal(cl.tasks[0].payload, "soon", 4);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

/* The Lua run by EVAL below: for envelopes (with and without an id, a deadline and a last
 * error) and every mutation of them (each byte set to each of a set of values, every
 * truncation, one byte appended), claim's env_peek must accept exactly what env_decode
 * accepts, with the same task key, id, deadline and key ("k"), and so must its key-only
 * reading (per-key limits' parking), with the same deadline and key. Replies {cases,
 * mismatches, the first mismatch in hex}. */
static const char peek_body[] =
    "local base = {\n"
    "  {seq = 7, attempt = 0, enq = 1700000000000, max = 25, payload = 'abc'},\n"
    "  {seq = 4294967301, id = 'job-1', attempt = 3, enq = 1700000000001, max = 0,\n"
    "   deadline = 1700000005000, payload = string.rep('x', 300), last_error = 'boom'},\n"
    "  {seq = 1, id = string.rep('i', 40), attempt = 200, enq = 5, max = 70000,\n"
    "   payload = '', last_error = string.rep('e', 40)},\n"
    /* v2: a time limit; and a time limit with an unknown extension after it */
    "  {seq = 9, attempt = 1, enq = 2, max = 3, payload = 'p', ext = '\\129\\162tl\\10'},\n"
    "  {seq = 10, id = 'k', attempt = 0, enq = 2, max = 3, payload = 'q', last_error = 'e',\n"
    "   ext = '\\130\\162tl\\205\\1\\0\\162zz\\163abc'},\n"
    /* v2 with a task key (per-key limits): fixstr, str8 and bin8 keys alone (env_peek's
     * in-place path), and a key beside a time limit (rd_ext's) */
    "  {seq = 11, id = 'big-7', attempt = 0, enq = 2, max = 0, payload = '\\144',\n"
    "   ext = '\\129\\161k\\163big'},\n"
    "  {seq = 12, attempt = 0, enq = 2, max = 0, deadline = 9, payload = 'r',\n"
    "   ext = '\\129\\161k\\217\\40' .. string.rep('t', 40)},\n"
    "  {seq = 13, attempt = 2, enq = 2, max = 5, payload = 's', last_error = 'x',\n"
    "   ext = '\\129\\161k\\196\\3abc'},\n"
    "  {seq = 14, attempt = 0, enq = 2, max = 0, payload = 't', ext = "
    "'\\130\\161k\\161a\\162tl\\10'},\n"
    "}\n"
    "local vals = {0, 1, 127, 128, 129, 130, 143, 144, 153, 154, 159, 160, 161, 162, 191,\n"
    "  192, 194, 195, 196, 197, 198, 204, 205, 206, 207, 208, 217, 218, 219, 255}\n"
    "local cases, bad, first = 0, 0, ''\n"
    "local function same(a, b) return a == b end\n"
    "local function check(m)\n"
    "  cases = cases + 1\n"
    "  local e = env_decode(m)\n"
    "  local tk, id, dl, k = env_peek(m)\n"
    "  local q, qid, qdl, qk = env_peek(m, true)\n"
    "  local ok\n"
    "  if e then ok = tk == tkey(e) and same(id, e.id) and same(dl, e.deadline) and\n"
    "    same(k, e.k) and q == true and qid == nil and same(qdl, e.deadline) and same(qk, e.k)\n"
    "  else ok = tk == nil and q == nil end\n"
    "  if not ok then\n"
    "    bad = bad + 1\n"
    "    if first == '' then first = (string.gsub(m, '.', function(c)\n"
    "      return string.format('%02x', string.byte(c)) end)) end\n"
    "  end\n"
    "end\n"
    "for _, e in ipairs(base) do\n"
    "  local m = env_encode(e)\n"
    "  if not env_decode(m) or not env_peek(m) then return {0, 1, 'a base does not decode'} end\n"
    "  check(m)\n"
    "  check(m .. '\\0')\n"
    "  for len = 0, #m - 1 do check(string.sub(m, 1, len)) end\n"
    "  for i = 1, #m do\n"
    "    for _, v in ipairs(vals) do\n"
    "      check(string.sub(m, 1, i - 1) .. string.char(v) .. string.sub(m, i + 1))\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return {cases, bad, first}\n";

/* The Lua run by EVAL in lua_and_c_agree_on_v2_envelopes: v2 envelopes and every
 * one-byte mutation and truncation of them, each with env_decode's verdict and time
 * limit (-1 none, -2 refused), unique-for window (-1 none) and key ('' none). Replies
 * {member, verdict, window, key, member, verdict, window, key, ...}. */
static const char agree_body[] =
    "local base = {\n"
    "  {seq = 9, attempt = 1, enq = 2, max = 3, payload = 'p', ext = '\\129\\162tl\\10'},\n"
    "  {seq = 10, id = 'k', attempt = 0, enq = 2, max = 3, payload = 'q', last_error = 'e',\n"
    "   ext = '\\130\\162tl\\205\\1\\0\\162zz\\163abc'},\n"
    "  {seq = 11, attempt = 0, enq = 2, max = 3, payload = 'r', ext = '\\129\\161a\\0'},\n"
    "  {seq = 12, id = 'u', attempt = 0, enq = 2, max = 3, payload = 's',\n"
    "   ext = '\\130\\162tl\\10\\162uf\\205\\3\\232'},\n"
    "  {seq = 13, id = 'v', attempt = 0, enq = 2, max = 3, payload = 't', ext = "
    "'\\129\\162uf\\1'},\n"
    /* the key ("k", per-key limits): str and bin forms, before tl and uf */
    "  {seq = 14, attempt = 0, enq = 2, max = 3, payload = 'u', ext = '\\129\\161k\\163abc'},\n"
    "  {seq = 15, id = 'w', attempt = 0, enq = 2, max = 3, payload = 'v',\n"
    "   ext = '\\131\\161k\\196\\2xy\\162tl\\10\\162uf\\1'},\n"
    "  {seq = 16, attempt = 0, enq = 2, max = 3, payload = 'w', ext = '\\129\\161k\\217\\64' ..\n"
    "   string.rep('k', 64)},\n"
    "}\n"
    "local vals = {0, 1, 10, 48, 95, 97, 122, 123, 127, 128, 129, 130, 143, 144, 153, 154,\n"
    "  160, 161, 162, 163, 191, 192, 195, 196, 204, 205, 206, 207, 208, 217, 224, 255}\n"
    "local out = {}\n"
    "local function add(m)\n"
    "  local e = env_decode(m)\n"
    "  out[#out + 1] = m\n"
    "  out[#out + 1] = e and (e.tl or -1) or -2\n"
    "  out[#out + 1] = e and (e.uf or -1) or -1\n"
    "  out[#out + 1] = e and e.k or ''\n"
    "end\n"
    "for _, e in ipairs(base) do\n"
    "  local m = env_encode(e)\n"
    "  add(m)\n"
    "  add(m .. '\\0')\n"
    "  for len = 1, #m - 1 do add(string.sub(m, 1, len)) end\n"
    "  for i = 1, #m do\n"
    "    for _, v in ipairs(vals) do\n"
    "      add(string.sub(m, 1, i - 1) .. string.char(v) .. string.sub(m, i + 1))\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return out\n";

/* Runs lua/lib.lua followed by @body with EVAL and the eleven keys of queue "peek". */
static redisReply *
eval_with_lib(struct test_redis *redis, const char *body)
{
    const char *root = getenv("DQ_SOURCE_ROOT");
    char path[4096], chunk[4096];
    struct dq_buf script = DQ_BUF_INIT;
    size_t got;
    FILE *fp;

    if (root == NULL)
        fail_msg("DQ_SOURCE_ROOT is not set (tests/meson.build sets it)");
    snprintf(path, sizeof path, "%s/lua/lib.lua", root);
    fp = fopen(path, "r");
    assert_non_null(fp);
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0)
        dq_buf_append(&script, chunk, got);
    fclose(fp);
    dq_buf_puts(&script, body);
    dq_buf_putc(&script, '\0');
    assert_false(script.failed);
    const char *argv[] = {"EVAL",
                          script.data,
                          "11",
                          "dq:{peek}:sched",
                          "dq:{peek}:ids",
                          "dq:{peek}:inflight",
                          "dq:{peek}:running",
                          "dq:{peek}:failed",
                          "dq:{peek}:failidx",
                          "dq:{peek}:stats",
                          "dq:{peek}:seq",
                          "dq:{peek}:config",
                          "dq:{peek}:audit",
                          "dq:{peek}:wake"};
    redisReply *r = test_redis_cmd(redis, 14, argv);
    dq_buf_free(&script);
    assert_non_null(r);
    if (r->type == REDIS_REPLY_ERROR)
        fail_msg("EVAL: %s", r->str);
    return r;
}

/* The scripts' reader (lib.lua env_decode) and the C one (env.c) accept exactly the same
 * v2 envelopes, with the same time limit: PROTOCOL.md 4.1's extension map has one
 * definition of "well formed" on both sides. */
static void
lua_and_c_agree_on_v2_envelopes(void **state)
{
    redisReply *r = eval_with_lib(*state, agree_body);
    size_t accepted = 0, limited = 0, windowed = 0, keyed = 0;

    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_true(r->elements > 1000);
    for (size_t i = 0; i + 3 < r->elements; i += 4) {
        const redisReply *m = r->element[i], *lua_k = r->element[i + 3];
        long long lua = r->element[i + 1]->integer, lua_uf = r->element[i + 2]->integer;
        struct dq_env e;
        dq_err err = {0};
        int rc = dq_env_decode(m->str, m->len, &e, &err);
        long long c = rc != DQ_OK ? -2 : e.time_limit_ms;
        long long c_uf = rc != DQ_OK ? -1 : e.unique_for_ms;
        size_t c_klen = rc != DQ_OK || e.key.ptr == NULL ? 0 : e.key.len;
        bool same_key =
            c_klen == lua_k->len && (c_klen == 0 || memcmp(e.key.ptr, lua_k->str, c_klen) == 0);
        if (c != lua || c_uf != lua_uf || !same_key) {
            char hex[512] = "";
            for (size_t k = 0; k < m->len && k < 200; k++)
                snprintf(hex + 2 * k, sizeof hex - 2 * k, "%02x", (unsigned char)m->str[k]);
            fail_msg("member %zu (%s): Lua says %lld/%lld/key %zu bytes, C says %lld/%lld/key %zu "
                     "bytes (%s)",
                     i / 4, hex, lua, lua_uf, lua_k->len, c, c_uf, c_klen,
                     rc != DQ_OK ? err.msg : "ok");
        }
        accepted += c != -2;
        limited += c > 0;
        windowed += c_uf > 0;
        keyed += c_klen > 0;
    }
    /* the corpus holds both verdicts and every kind of accepted envelope */
    assert_true(accepted > 5 && accepted < r->elements / 4);
    assert_true(limited > 1);
    assert_true(windowed > 1);
    assert_true(keyed > 2);
    freeReplyObject(r);
}

static void
claim_envelope_check_matches_decode(void **state)
{
    redisReply *r = eval_with_lib(*state, peek_body);

    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->elements, 3);
    assert_true(r->element[0]->integer > 5000);
    if (r->element[1]->integer != 0)
        fail_msg("env_peek and env_decode disagree on %lld of %lld members; first: %s",
                 r->element[1]->integer, r->element[0]->integer, r->element[2]->str);
    freeReplyObject(r);
}

/* Claims @batch with lease @lease, frees the tasks of @cl first; returns the count. */
static size_t
key_claim(struct fixture *f, dq_claimed *cl, unsigned batch, int64_t lease)
{
    dq_claimed_free(cl);
    ASSERT_OK(f, dq_claim(f->c, f->queue, batch, lease, "w1", cl, &f->err));
    return cl->n;
}

/* The claimed task with id @id, or fail. */
static const dq_task *
key_task(const dq_claimed *cl, const char *id)
{
    for (size_t i = 0; i < cl->n; i++)
        if (strcmp(cl->tasks[i].id, id) == 0)
            return &cl->tasks[i];
    fail_msg("task %s was not claimed", id);
    return NULL;
}

static int64_t
key_parked(struct fixture *f)
{
    dq_stats s;
    ASSERT_OK(f, dq_stats_get(f->c, f->queue, &s, &f->err));
    return s.parked;
}

/* Per-key limits (PROTOCOL.md 4.10) through every way a task leaves in flight: a claim
 * takes at most key_concurrency of one key and parks the rest (not blocking other keys
 * or unkeyed tasks); ack, the batched ack, retry, fail, release and reap each free the
 * key's slot and bring its earliest parked task back. */
static void
key_concurrency_parks_and_promotes(void **state)
{
    struct fixture f;
    dq_claimed cl = {0}, keep = {0}, held = {0};
    dq_config cfg = {.key_concurrency = 2, .backoff_base_ms = 3600000};
    dq_enqueued e;
    dq_reaped rp;
    static const char *const ids[] = {"a1", "a2", "a3", "a4", "a5", "a6", "b1", "b2", "u"};

    fixture_open(&f, state, "keys");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        dq_enqueue_opts o = {.id = ids[i],
                             .key = ids[i][0] == 'u'   ? NULL
                                    : ids[i][0] == 'a' ? "a"
                                                       : "b"};
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    }
    /* a1 a2 of key a, both of b and the unkeyed one; a3..a6 parked, not due any more */
    assert_int_equal(key_claim(&f, &keep, 10, 30000), 5);
    key_task(&keep, "a1");
    key_task(&keep, "a2");
    key_task(&keep, "b1");
    key_task(&keep, "u");
    assert_int_equal(key_parked(&f), 4);
    assert_int_equal(key_claim(&f, &cl, 10, 30000), 0);
    /* ack: a3 comes back, and only a3 */
    ASSERT_OK(&f, dq_ack(f.c, f.queue, key_task(&keep, "a1"), &f.err));
    assert_int_equal(key_parked(&f), 3);
    assert_int_equal(key_claim(&f, &held, 10, 30000), 1);
    assert_string_equal(held.tasks[0].id, "a3");
    /* retry (backoff 1 h): a4 */
    dq_retried rt;
    ASSERT_OK(&f, dq_retry(f.c, f.queue, key_task(&keep, "a2"), "again", &rt, &f.err));
    assert_int_equal(key_claim(&f, &cl, 10, 30000), 1);
    assert_string_equal(cl.tasks[0].id, "a4");
    /* fail: a5 */
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "no", "", &f.err));
    assert_int_equal(key_claim(&f, &cl, 10, 30000), 1);
    assert_string_equal(cl.tasks[0].id, "a5");
    /* release: a5 is due again at once; a6 comes back too, and one of them is parked again */
    ASSERT_OK(&f, dq_release(f.c, f.queue, &cl.tasks[0], &f.err));
    assert_int_equal(key_claim(&f, &cl, 10, 30000), 1);
    assert_int_equal(key_parked(&f), 1);
    /* the batched ack of claim's settling: the other one */
    dq_settle done = {.task = &cl.tasks[0], .outcome = DQ_DONE};
    dq_claimed next = {0};
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, &done, 1, 10, 30000, 0, "w1", NULL, &next, &f.err));
    assert_int_equal(done.rc, DQ_OK);
    assert_int_equal(next.n, 1);
    assert_int_equal(key_parked(&f), 0);
    dq_claimed_free(&next);
    /* reap: c1 c2 held under a short lease by a worker that dies; c3 waits parked */
    for (int i = 1; i <= 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "c%d", i);
        dq_enqueue_opts o = {.id = id, .key = "c"};
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    }
    assert_int_equal(key_claim(&f, &cl, 10, 50), 2);
    assert_int_equal(key_parked(&f), 1);
    int64_t deadline = test_mono_ms() + 5000 * test_slowdown();
    size_t back = 0;
    while (back < 2) {
        ASSERT_OK(&f, dq_reap(f.c, f.queue, 100, &rp, &f.err));
        back += rp.returned;
        if (back < 2) {
            assert_true(test_mono_ms() < deadline);
            test_nap_ms(10);
        }
    }
    /* all three are due now, and still only two run */
    assert_int_equal(key_claim(&f, &cl, 10, 30000), 2);
    assert_int_equal(key_parked(&f), 1);
    dq_claimed_free(&cl);
    dq_claimed_free(&keep);
    dq_claimed_free(&held);
    fixture_close(&f);
}

/* A parked task (PROTOCOL.md 4.10) through the library: dq_find finds it by a chosen and
 * a generated id and says which key holds it back, the parked view lists it with its key,
 * and dq_drop deletes it from its key's parked tasks, so it never runs. */
static void
parked_tasks_are_found_listed_and_dropped(void **state)
{
    struct fixture f;
    dq_claimed cl = {0}, keep = {0};
    dq_config cfg = {.key_concurrency = 1};
    dq_enqueued e;
    dq_task t;
    dq_page p;
    char gen[DQ_ID_MAX + 1];
    size_t dropped;

    fixture_open(&f, state, "parked");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    dq_enqueue_opts o1 = {.id = "k1", .key = "k"}, o2 = {.id = "k2", .key = "k"}, o3 = {.key = "k"};
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o1, "1", 1, &e, &f.err));
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o2, "2", 1, &e, &f.err));
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o3, "3", 1, &e, &f.err));
    snprintf(gen, sizeof gen, "%s", e.id);
    /* k1 runs; k2 and the generated one are parked */
    assert_int_equal(key_claim(&f, &keep, 10, 30000), 1);
    key_task(&keep, "k1");
    assert_int_equal(key_parked(&f), 2);
    const char *both[] = {"k2", gen};
    for (size_t i = 0; i < 2; i++) {
        ASSERT_OK(&f, dq_find(f.c, f.queue, both[i], &t, &f.err));
        assert_int_equal(t.state, DQ_STATE_PARKED);
        assert_string_equal(t.id, both[i]);
        assert_non_null(t.key);
        assert_string_equal(t.key, "k");
        assert_int_equal(t.key_inflight, 1);
        assert_int_equal(t.key_limit, 1);
        dq_task_clear(&t);
    }
    /* a keyed task anywhere carries its key */
    ASSERT_OK(&f, dq_find(f.c, f.queue, "k1", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_INFLIGHT);
    assert_string_equal(t.key, "k");
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_PARKED, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 2);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.tasks[0].id, "k2");
    assert_int_equal(p.tasks[0].state, DQ_STATE_PARKED);
    assert_string_equal(p.tasks[0].key, "k");
    assert_string_equal(p.tasks[1].id, gen);
    dq_page_free(&p);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 10, &p, &f.err));
    assert_int_equal(p.total, 0); /* not in due */
    dq_page_free(&p);
    /* dropped by id, both kinds: gone from kq, the gauge exact, and never run */
    const char *one[] = {gen};
    ASSERT_OK(&f, dq_drop(f.c, f.queue, one, 1, &dropped, &f.err));
    assert_int_equal(dropped, 1);
    assert_int_equal(key_parked(&f), 1);
    ASSERT_OK(&f, dq_drop(f.c, f.queue, both, 1, &dropped, &f.err));
    assert_int_equal(dropped, 1);
    assert_int_equal(key_parked(&f), 0);
    assert_int_equal(dq_find(f.c, f.queue, "k2", &t, &f.err), DQ_ENOTFOUND);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, key_task(&keep, "k1"), &f.err));
    assert_int_equal(key_claim(&f, &cl, 10, 30000), 0);
    dq_claimed_free(&cl);
    dq_claimed_free(&keep);
    fixture_close(&f);
}

/* A unique-for window starts when the task is done, on every ack path, also after a
 * reap (a worker that died mid-run): the envelope carries it, not the worker. */
static void
unique_for_window_survives_a_reap(void **state)
{
    struct fixture f;
    dq_enqueue_opts o = {.id = "u-1", .unique_for_ms = 60000};
    dq_enqueued e;
    dq_claimed cl, cl2, cl3;
    dq_reaped rp;

    fixture_open(&f, state, "uniq");
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    assert_false(e.duplicate);
    /* the first worker dies holding it: its lease runs out and reap returns it */
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 50, "dead-worker", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    int64_t deadline = test_mono_ms() + 5000;
    do {
        ASSERT_OK(&f, dq_reap(f.c, f.queue, 100, &rp, &f.err));
        if (rp.returned == 0) {
            assert_true(test_mono_ms() < deadline);
            test_nap_ms(10);
        }
    } while (rp.returned == 0);
    /* while scheduled again it is an ordinary duplicate */
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    assert_true(e.duplicate);
    assert_int_equal(e.unique_left_ms, 0);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w2", &cl2, &f.err));
    assert_int_equal(cl2.n, 1);
    assert_int_equal(cl2.tasks[0].attempt, 1);
    /* done through claim's settling (the batched ack path) */
    dq_settle done = {.task = &cl2.tasks[0], .outcome = DQ_DONE};
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, &done, 1, 0, 30000, 0, "w2", NULL, &cl3, &f.err));
    assert_int_equal(done.rc, DQ_OK);
    /* refused now, by any enqueue of the id, with the window's rest */
    dq_enqueue_opts plain = {.id = "u-1"};
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &plain, "y", 1, &e, &f.err));
    assert_true(e.duplicate);
    assert_int_equal(e.where, DQ_STATE_NONE);
    assert_true(e.unique_left_ms > 50000 && e.unique_left_ms <= 60000);
    /* another id is not */
    dq_enqueue_opts other = {.id = "u-2", .unique_for_ms = 1};
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &other, "z", 1, &e, &f.err));
    assert_false(e.duplicate);
    /* no id, or a window past 7 days: refused by the library, naming the field */
    dq_enqueue_opts bad = {.unique_for_ms = 1000};
    assert_int_equal(dq_enqueue(f.c, f.queue, &bad, "z", 1, &e, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "unique_for"));
    bad.id = "u-3";
    bad.unique_for_ms = DQ_UNIQUE_FOR_MAX + 1;
    assert_int_equal(dq_enqueue(f.c, f.queue, &bad, "z", 1, &e, &f.err), DQ_EINVAL);
    dq_claimed_free(&cl);
    dq_claimed_free(&cl2);
    dq_claimed_free(&cl3);
    fixture_close(&f);
}

/* replace keeps the task's seq and history; reschedule moves a generated id's task
 * without touching its envelope. */
static void
replace_and_reschedule(void **state)
{
    struct fixture f;
    dq_enqueue_opts o = {.id = "r-1", .delay_ms = 3600000};
    dq_enqueued e, e2;
    dq_claimed cl;
    dq_task t;
    int64_t due = 0;

    fixture_open(&f, state, "resched");
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "old", 3, &e, &f.err));
    /* one failed attempt: the task has a history */
    o.delay_ms = 0;
    o.replace = true;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "old", 3, &e, &f.err));
    assert_true(e.replaced);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[0], "boom", NULL, &f.err));
    dq_claimed_free(&cl);
    o.delay_ms = 7200000;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "new", 3, &e2, &f.err));
    assert_true(e2.replaced);
    assert_false(e2.duplicate);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "r-1", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_memory_equal(t.payload, "new", 3);
    assert_int_equal(t.seq, 1);
    assert_int_equal(t.attempt, 0);
    assert_int_equal(t.nhistory, 1);
    assert_true(t.due_ms >= e.due_ms + 7100000);
    dq_task_clear(&t);

    /* a generated id: found by its scan, moved, envelope unchanged */
    dq_enqueue_opts g = {.delay_ms = 3600000};
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &g, "gen", 3, &e, &f.err));
    ASSERT_OK(&f, dq_reschedule(f.c, f.queue, e.id, 0, 0, &due, &f.err));
    ASSERT_OK(&f, dq_find(f.c, f.queue, e.id, &t, &f.err));
    assert_int_equal(t.due_ms, due);
    assert_true(due < e.due_ms - 3500000);
    assert_memory_equal(t.payload, "gen", 3);
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    assert_string_equal(cl.tasks[0].id, e.id);
    /* in flight now: not scheduled, and the error says where it is */
    assert_int_equal(dq_reschedule(f.c, f.queue, e.id, 0, 1000, &due, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, "in flight"));
    dq_claimed_free(&cl);
    assert_int_equal(dq_reschedule(f.c, f.queue, "r-1", 0, 8LL * 86400000, &due, &f.err),
                     DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "max_delay_ms"));
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enqueue_claim_ack),
        cmocka_unit_test(lua_and_c_agree_on_v2_envelopes),
        cmocka_unit_test(not_claimable_before_due),
        cmocka_unit_test(same_ms_in_enqueue_order),
        cmocka_unit_test(duplicate_ids_are_not_added),
        cmocka_unit_test(limits_are_enforced),
        cmocka_unit_test(alert_thresholds_are_config_fields),
        cmocka_unit_test(retry_schedule_and_exhaustion),
        cmocka_unit_test(long_retry_message_is_bounded),
        cmocka_unit_test(fail_keeps_error_and_trace),
        cmocka_unit_test(reap_returns_expired_leases),
        cmocka_unit_test(stale_lease_is_fenced_after_requeue),
        cmocka_unit_test(ack_many_checks_each_lease),
        cmocka_unit_test(deadline_expires_to_failed),
        cmocka_unit_test(stats_and_pages),
        cmocka_unit_test(failed_retention_is_exact_and_counted),
        cmocka_unit_test(done_retention_is_exact_through_every_ack_path),
        cmocka_unit_test(done_retention_off_reads_no_config_on_ack),
        cmocka_unit_test(done_retention_ms_trims_exactly_by_age),
        cmocka_unit_test(earlier_tasks_publish_a_wake_up),
        cmocka_unit_test(batch_enqueue_crosses_chunks),
        cmocka_unit_test(batch_enqueue_duplicates),
        cmocka_unit_test(batch_enqueue_invalid_item_rejects_its_chunk),
        cmocka_unit_test(script_fills_and_checks_templates),
        cmocka_unit_test(no_member_past_the_limits_wedges_the_queue),
        cmocka_unit_test(claim_settles_results_then_claims),
        cmocka_unit_test(claimed_ahead_task_of_a_dead_worker_comes_back),
        cmocka_unit_test(claim_envelope_check_matches_decode),
        cmocka_unit_test(batched_acks_settle_like_separate_calls),
        cmocka_unit_test(extend_renews_only_held_leases),
        cmocka_unit_test(unique_for_window_survives_a_reap),
        cmocka_unit_test(key_concurrency_parks_and_promotes),
        cmocka_unit_test(parked_tasks_are_found_listed_and_dropped),
        cmocka_unit_test(replace_and_reschedule),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/queue", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
