/* SPDX-License-Identifier: MIT */
/*
 * test_history.c: attempt history (docs/PROTOCOL.md 4.5) and fix and requeue (5.24)
 * against a real redis-server: what each script writes into a task's history key, that a
 * fresh task never has one (and its ack deletes nothing), that the key goes with the
 * task, the cap of 5, and replace's refusal of a failure that changed since it was read.
 */
#include "harness/fixture.h"

/* The history key of task key @tk in @f's queue, into @buf. */
static const char *
hist_key(const struct fixture *f, const char *tk, char *buf, size_t size)
{
    snprintf(buf, size, "dq:{%s}:hist:%s", f->queue, tk);
    return buf;
}

static long long
hist_len(struct fixture *f, const char *tk)
{
    char k[300];
    const char *argv[] = {"LLEN", hist_key(f, tk, k, sizeof k)};
    return redis_int(f, 2, argv);
}

static long long
hist_exists(struct fixture *f, const char *tk)
{
    char k[300];
    const char *argv[] = {"EXISTS", hist_key(f, tk, k, sizeof k)};
    return redis_int(f, 2, argv);
}

/* Backoff of 1 ms, so a retried task is due again at once. */
static void
fast_backoff(struct fixture *f, int64_t retention)
{
    dq_config c = {.backoff_base_ms = 1, .backoff_cap_ms = 1, .failed_retention = retention};
    ASSERT_OK(f, dq_config_set(f->c, f->queue, &c, &f->err));
}

/* Claims the one task of the queue as @worker, waiting (bounded) until it is due. */
static void
claim_one(struct fixture *f, const char *worker, int64_t lease_ms, dq_claimed *cl)
{
    int64_t deadline = test_mono_ms() + 5000;

    for (;;) {
        ASSERT_OK(f, dq_claim(f->c, f->queue, 1, lease_ms, worker, cl, &f->err));
        if (cl->n == 1)
            return;
        dq_claimed_free(cl);
        if (test_mono_ms() > deadline)
            fail_msg("nothing to claim after 5 s");
        test_nap_ms(2);
    }
}

static void
find(struct fixture *f, const char *id, dq_task *t)
{
    ASSERT_OK(f, dq_find(f->c, f->queue, id, t, &f->err));
}

/* The calls of Redis command @name made so far (INFO commandstats counts those that
 * scripts make too). */
static long long
calls_of(struct fixture *f, const char *name)
{
    redisContext *rc = redisConnect("127.0.0.1", f->redis->port);
    long long n = 0;
    char want[64];

    assert_non_null(rc);
    assert_int_equal(rc->err, 0);
    redisReply *r = redisCommand(rc, "INFO commandstats");
    assert_non_null(r);
    snprintf(want, sizeof want, "cmdstat_%s:calls=", name);
    const char *p = r->type == REDIS_REPLY_STRING ? strstr(r->str, want) : NULL;
    if (p != NULL)
        n = atoll(p + strlen(want));
    freeReplyObject(r);
    redisFree(rc);
    return n;
}

static void
fresh_task_has_no_history(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_task t;
    char pattern[200];

    fixture_open(&f, state, "hfresh");
    enqueue_str(&f, "{}", 0, "fresh", NULL);
    claim_one(&f, "w1", 30000, &cl);
    find(&f, "fresh", &t);
    assert_int_equal(t.nhistory, 0);
    dq_task_clear(&t);
    long long dels = calls_of(&f, "del"), trims = calls_of(&f, "ltrim");
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    dq_claimed_free(&cl);
    /* the ack of a fresh task deleted nothing (a history goes by LTRIM to an empty
     * range, lib.lua): no history key to pay for */
    assert_int_equal(calls_of(&f, "del"), dels);
    assert_int_equal(calls_of(&f, "ltrim"), trims);
    snprintf(pattern, sizeof pattern, "dq:{%s}:hist:*", f.queue);
    const char *keys[] = {"EVAL", "return #redis.call('KEYS', ARGV[1])", "0", pattern};
    assert_int_equal(redis_int(&f, 4, keys), 0);
    fixture_close(&f);
}

static void
retry_fail_requeue_fail_keeps_the_timeline(void **state)
{
    struct fixture f;
    dq_claimed c1, c2, c3;
    dq_retried rt;
    dq_task t;
    size_t moved;
    const char *ids[] = {"h1"};

    fixture_open(&f, state, "hflow");
    fast_backoff(&f, 0);
    enqueue_str(&f, "{\"n\":1}", 0, "h1", NULL);
    claim_one(&f, "w1", 30000, &c1);
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &c1.tasks[0], "first: connection refused", &rt, &f.err));
    assert_false(rt.exhausted);
    assert_int_equal(hist_len(&f, "c:h1"), 1);
    claim_one(&f, "w2", 30000, &c2);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &c2.tasks[0], "second: bad total", "at total()\n", &f.err));

    find(&f, "h1", &t);
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_int_equal(t.nhistory, 2);
    assert_int_equal(t.history[0].attempt, 1);
    assert_string_equal(t.history[0].outcome, "retry");
    assert_string_equal(t.history[0].worker, "w1");
    assert_string_equal(t.history[0].error, "first: connection refused");
    assert_int_equal(t.history[0].started_ms, c1.tasks[0].claimed_ms);
    assert_true(t.history[0].duration_ms >= 0);
    assert_int_equal(t.history[1].attempt, 2);
    assert_string_equal(t.history[1].outcome, "fail");
    assert_string_equal(t.history[1].worker, "w2");
    assert_int_equal(t.history[1].started_ms, c2.tasks[0].claimed_ms);
    assert_string_equal(t.trace, "at total()\n"); /* the full trace stays with the failure */
    dq_task_clear(&t);

    /* requeue keeps the history, and the next failure adds to it */
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, ids, 1, 0, &moved, &f.err));
    find(&f, "h1", &t);
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_int_equal(t.attempt, 0);
    assert_int_equal(t.nhistory, 2);
    /* the requeue marked it (a last error), so its ack knows to delete the history */
    assert_non_null(t.last_error);
    assert_string_equal(t.last_error, "first: connection refused");
    dq_task_clear(&t);
    claim_one(&f, "w3", 30000, &c3);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &c3.tasks[0], "third: still bad", "", &f.err));
    find(&f, "h1", &t);
    assert_int_equal(t.nhistory, 3);
    assert_int_equal(t.history[2].attempt, 1); /* counted from the requeue */
    assert_string_equal(t.history[2].worker, "w3");
    assert_string_equal(t.history[2].error, "third: still bad");
    dq_task_clear(&t);
    dq_claimed_free(&c1);
    dq_claimed_free(&c2);
    dq_claimed_free(&c3);

    /* a requeued task at attempt 0 that is then acked takes its history with it */
    dq_claimed c4;
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, ids, 1, 0, &moved, &f.err));
    claim_one(&f, "w4", 30000, &c4);
    assert_int_equal(c4.tasks[0].attempt, 0);
    assert_int_equal(hist_exists(&f, "c:h1"), 1);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &c4.tasks[0], &f.err));
    assert_int_equal(hist_exists(&f, "c:h1"), 0);
    dq_claimed_free(&c4);
    fixture_close(&f);
}

static void
a_task_whose_message_never_set_a_last_error_is_still_forgotten(void **state)
{
    struct fixture f;
    dq_claimed c1, c2;
    size_t moved;
    const char *ids[] = {"h2"};

    /* fail (which leaves the last error alone) on the first attempt, requeue, ack */
    fixture_open(&f, state, "hmark");
    enqueue_str(&f, "{}", 0, "h2", NULL);
    claim_one(&f, "w1", 30000, &c1);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &c1.tasks[0], "", "", &f.err));
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, ids, 1, 0, &moved, &f.err));
    claim_one(&f, "w2", 30000, &c2);
    assert_int_equal(c2.tasks[0].attempt, 0);
    assert_int_equal(hist_exists(&f, "c:h2"), 1);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &c2.tasks[0], &f.err));
    assert_int_equal(hist_exists(&f, "c:h2"), 0);
    dq_claimed_free(&c1);
    dq_claimed_free(&c2);
    fixture_close(&f);
}

static void
reap_records_a_lost_lease(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_reaped rp = {0};
    dq_task t;
    int64_t deadline;

    fixture_open(&f, state, "hreap");
    enqueue_str(&f, "{}", 0, "lost", NULL);
    claim_one(&f, "dead-worker", 1, &cl);
    deadline = test_mono_ms() + 5000;
    while (rp.returned == 0 && test_mono_ms() < deadline) {
        test_nap_ms(2);
        ASSERT_OK(&f, dq_reap(f.c, f.queue, 100, &rp, &f.err));
    }
    assert_int_equal(rp.returned, 1);
    find(&f, "lost", &t);
    assert_int_equal(t.nhistory, 1);
    assert_string_equal(t.history[0].outcome, "lease expired");
    assert_string_equal(t.history[0].worker, "dead-worker");
    assert_string_equal(t.history[0].error, "lease expired (held by dead-worker)");
    assert_int_equal(t.history[0].started_ms, cl.tasks[0].claimed_ms);
    assert_true(t.history[0].duration_ms >= 1);
    dq_task_clear(&t);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
history_keeps_the_last_five(void **state)
{
    struct fixture f;
    dq_retried rt;
    dq_task t;
    char msg[64];

    fixture_open(&f, state, "hcap");
    fast_backoff(&f, 0);
    enqueue_str(&f, "{}", 0, "cap", NULL);
    for (int i = 1; i <= 7; i++) {
        dq_claimed cl;
        claim_one(&f, "w", 30000, &cl);
        /* the 4th says it timed out, as delayq work's timeout does */
        snprintf(msg, sizeof msg, i == 4 ? "timed out after %d ms; killed" : "try %d", i);
        ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[0], msg, &rt, &f.err));
        dq_claimed_free(&cl);
    }
    assert_int_equal(hist_len(&f, "c:cap"), DQ_HISTORY_MAX);
    find(&f, "cap", &t);
    assert_int_equal(t.nhistory, DQ_HISTORY_MAX);
    for (size_t i = 0; i < t.nhistory; i++)
        assert_int_equal(t.history[i].attempt, i + 3); /* attempts 3..7: the oldest went */
    assert_string_equal(t.history[1].outcome, "timed out");
    assert_string_equal(t.history[4].error, "try 7");
    dq_task_clear(&t);
    fixture_close(&f);
}

static void
long_errors_are_cut_at_1_kib(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_task t;
    static char msg[3000];

    fixture_open(&f, state, "hlong");
    enqueue_str(&f, "{}", 0, "long", NULL);
    claim_one(&f, "w", 30000, &cl);
    memset(msg, 'x', sizeof msg - 1);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], msg, "", &f.err));
    find(&f, "long", &t);
    assert_int_equal(strlen(t.history[0].error), DQ_HISTORY_ERROR_MAX);
    assert_int_equal(strlen(t.error), 2999); /* the failure record keeps its 4 KiB */
    dq_task_clear(&t);
    dq_claimed_free(&cl);

    /* a retry: 1 KiB in the history, the envelope's last error its 512 bytes */
    dq_retried rt;
    enqueue_str(&f, "{}", 0, "long2", NULL);
    claim_one(&f, "w", 30000, &cl);
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[0], msg, &rt, &f.err));
    find(&f, "long2", &t);
    assert_int_equal(strlen(t.history[0].error), DQ_HISTORY_ERROR_MAX);
    assert_int_equal(strlen(t.last_error), 512);
    dq_task_clear(&t);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

static void
drop_trim_and_expiry(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_task t;
    size_t dropped;
    const char *ids[] = {"d1"};

    fixture_open(&f, state, "hgone");
    /* drop takes the history with the failure */
    enqueue_str(&f, "{}", 0, "d1", NULL);
    claim_one(&f, "w", 30000, &cl);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "x", "", &f.err));
    dq_claimed_free(&cl);
    assert_int_equal(hist_exists(&f, "c:d1"), 1);
    ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 1, &dropped, &f.err));
    assert_int_equal(hist_exists(&f, "c:d1"), 0);

    /* so does the retention trim */
    fast_backoff(&f, 1);
    enqueue_str(&f, "{}", 0, "t1", NULL);
    claim_one(&f, "w", 30000, &cl);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "x", "", &f.err));
    dq_claimed_free(&cl);
    assert_int_equal(hist_exists(&f, "c:t1"), 1);
    enqueue_str(&f, "{}", 0, "t2", NULL);
    claim_one(&f, "w", 30000, &cl);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "x", "", &f.err));
    dq_claimed_free(&cl);
    assert_int_equal(hist_exists(&f, "c:t1"), 0); /* trimmed */
    assert_int_equal(hist_exists(&f, "c:t2"), 1);

    /* a task claimed after its deadline: one "expired" entry */
    dq_enqueue_opts o = {.id = "late", .deadline_ms = 1};
    dq_enqueued e;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "{}", 2, &e, &f.err));
    test_nap_ms(20);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 30000, "late-claimer", &cl, &f.err));
    assert_int_equal(cl.to_failed, 1);
    dq_claimed_free(&cl);
    find(&f, "late", &t);
    assert_int_equal(t.nhistory, 1);
    assert_string_equal(t.history[0].outcome, "expired");
    assert_string_equal(t.history[0].worker, "late-claimer");
    assert_non_null(strstr(t.history[0].error, "after its deadline"));
    dq_task_clear(&t);
    fixture_close(&f);
}

static void
replace_requeues_with_the_new_payload(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_task t, now;
    dq_audit au;

    fixture_open(&f, state, "hfix");
    enqueue_str(&f, "old", 0, "fx", NULL);
    claim_one(&f, "w", 30000, &cl);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "bad total", "", &f.err));
    dq_claimed_free(&cl);
    find(&f, "fx", &t);
    ASSERT_OK(&f, dq_requeue_replace(f.c, f.queue, &t, "new!", 4, 0, &f.err));
    find(&f, "fx", &now);
    assert_int_equal(now.state, DQ_STATE_SCHEDULED);
    assert_int_equal(now.payload_len, 4);
    assert_memory_equal(now.payload, "new!", 4);
    assert_int_equal(now.attempt, 0);
    assert_int_equal(now.nhistory, 1); /* kept */
    dq_task_clear(&now);
    ASSERT_OK(&f, dq_audit_get(f.c, f.queue, 1, &au, &f.err));
    assert_string_equal(au.entries[0].action, "replace");
    /* sha1("old") and sha1("new!") */
    assert_non_null(
        strstr(au.entries[0].detail, "old=sha1:c00dbbc9dadfbe1e232e93a729dd4752fade0abf"));
    assert_non_null(strstr(au.entries[0].detail, "new=sha1:"));
    assert_string_equal(au.entries[0].result, "ok: requeued with the new payload");
    dq_audit_free(&au);

    /* the same failure cannot be replaced twice: it left the failed set */
    assert_int_equal(dq_requeue_replace(f.c, f.queue, &t, "again", 5, 0, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, "changed since you opened it"));
    dq_task_clear(&t);
    fixture_close(&f);
}

static void
replace_refuses_a_task_that_failed_again(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_task t, now;
    size_t moved;
    const char *ids[] = {"fy"};

    fixture_open(&f, state, "hfix2");
    enqueue_str(&f, "{}", 0, "fy", NULL);
    claim_one(&f, "w", 30000, &cl);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "first", "", &f.err));
    dq_claimed_free(&cl);
    find(&f, "fy", &t); /* the operator opens it ... */
    /* ... meanwhile someone requeues it and it fails again, at the same attempt */
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, ids, 1, 0, &moved, &f.err));
    claim_one(&f, "w", 30000, &cl);
    test_nap_ms(2); /* a failure in another millisecond */
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[0], "second", "", &f.err));
    dq_claimed_free(&cl);
    assert_int_equal(dq_requeue_replace(f.c, f.queue, &t, "x", 1, 0, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, "changed since you opened it"));
    find(&f, "fy", &now); /* nothing changed */
    assert_int_equal(now.state, DQ_STATE_FAILED);
    assert_string_equal(now.error, "second");
    assert_int_equal(now.payload_len, 2);
    dq_task_clear(&now);
    dq_task_clear(&t);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fresh_task_has_no_history),
        cmocka_unit_test(retry_fail_requeue_fail_keeps_the_timeline),
        cmocka_unit_test(a_task_whose_message_never_set_a_last_error_is_still_forgotten),
        cmocka_unit_test(reap_records_a_lost_lease),
        cmocka_unit_test(history_keeps_the_last_five),
        cmocka_unit_test(long_errors_are_cut_at_1_kib),
        cmocka_unit_test(drop_trim_and_expiry),
        cmocka_unit_test(replace_requeues_with_the_new_payload),
        cmocka_unit_test(replace_refuses_a_task_that_failed_again),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, fixture_group_setup, fixture_group_teardown);
}
