/* SPDX-License-Identifier: MIT */
/*
 * test_pause.c: pausing a queue against a real redis-server with a real worker: a due
 * task is not run while paused and starts within 50 ms of the resume; a pause for a
 * time ends by itself (by server time); enqueue, running tasks, retries and operator
 * actions go on while paused; stats carry the pause; the audit log records both.
 */
#include "harness/fixture.h"
#include "harness/worker.h"

#include <pthread.h>
#include <stdatomic.h>

struct seen {
    pthread_mutex_t mu;
    atomic_int started;
    atomic_int release; /* "block" handlers wait for this */
    int64_t first_start_mono;
    int64_t first_claimed_ms;
    const char *mode; /* "ok", "block", "retry" */
};

static void
handler(const dq_task *t, dq_result *res, void *arg)
{
    struct seen *s = arg;
    int64_t now = test_mono_ms();

    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->started) == 0) {
        s->first_start_mono = now;
        s->first_claimed_ms = t->claimed_ms;
    }
    atomic_fetch_add(&s->started, 1);
    pthread_mutex_unlock(&s->mu);
    if (strcmp(s->mode, "block") == 0) {
        while (!atomic_load(&s->release))
            test_nap_ms(2);
    } else if (strcmp(s->mode, "retry") == 0) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "upstream 503");
    }
}

static void
seen_init(struct seen *s, const char *mode)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->mode = mode;
}

static bool
subscribed(void *arg)
{
    struct fixture *f = arg;
    char channel[160];
    redisReply *rep;
    bool yes;

    snprintf(channel, sizeof channel, "dq:{%s}:wake", f->queue);
    const char *argv[] = {"PUBSUB", "SHARDNUMSUB", channel};
    rep = test_redis_cmd(f->redis, 3, argv);
    yes = rep != NULL && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
          rep->element[1]->type == REDIS_REPLY_INTEGER && rep->element[1]->integer == 1;
    freeReplyObject(rep);
    return yes;
}

static bool
started_one(void *arg)
{
    return atomic_load(&((struct seen *)arg)->started) >= 1;
}

/* The worker has taken in the pause: it asked (a claim of the due task) and was told. */
static long long
claim_calls(struct fixture *f)
{
    const char *argv[] = {"INFO", "commandstats"};
    redisReply *rep = test_redis_cmd(f->redis, 2, argv);
    const char *p = rep ? strstr(rep->str, "cmdstat_evalsha:calls=") : NULL;
    long long n = p ? atoll(p + strlen("cmdstat_evalsha:calls=")) : 0;

    freeReplyObject(rep);
    return n;
}

static void
paused_task_waits_and_runs_within_50ms_of_resume(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.name = "pw"};
    dq_stats st;

    fixture_open(&f, state, "resume");
    seen_init(&s, "ok");
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    assert_true(wait_until(subscribed, &f, 5000, "the worker to subscribe"));
    ASSERT_OK(&f, dq_pause(f.c, f.queue, 0, "deploy rollback", &f.err));
    /* load the enqueue and stats scripts first, so no NOSCRIPT round adds a call below */
    ASSERT_OK(&f, dq_stats_get(f.c, "warm-up", &st, &f.err));
    dq_enqueued warm;
    ASSERT_OK(&f, dq_enqueue(f.c, "warm-up", NULL, "w", 1, &warm, &f.err));
    long long calls0 = claim_calls(&f);
    enqueue_str(&f, "now", 0, "due-now", NULL); /* the earliest task: it wakes the worker */
    /* The wake-up makes the worker claim once and learn of the pause. Over the next
     * 300 ms (a window to watch, not a wait for something to happen) it must neither run
     * the task nor keep asking. */
    int64_t t0 = test_mono_ms();
    while (test_mono_ms() < t0 + 300)
        test_nap_ms(10);
    assert_int_equal(atomic_load(&s.started), 0);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.due, 1);
    assert_true(st.paused);
    long long calls = claim_calls(&f) - calls0;
    printf("# while paused the idle worker made %lld script calls in 300 ms (the enqueue, "
           "its claim, these stats)\n",
           calls);
    assert_true(calls <= 3);

    bool was = false;
    ASSERT_OK(&f, dq_resume(f.c, f.queue, &was, &f.err));
    int64_t resumed = test_mono_ms();
    assert_true(was);
    assert_true(wait_until(started_one, &s, 5000, "the task to run after the resume"));
    int64_t late = s.first_start_mono - resumed;
    printf("# the paused task started %lld ms after dq_resume returned\n", (long long)late);
    assert_true(late <= 50 * test_slowdown());
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
pause_for_ends_by_itself(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.name = "pf"};
    dq_stats st;

    fixture_open(&f, state, "pausefor");
    seen_init(&s, "ok");
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    assert_true(wait_until(subscribed, &f, 5000, "the worker to subscribe"));
    ASSERT_OK(&f, dq_pause(f.c, f.queue, 400, NULL, &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_true(st.paused);
    int64_t until = st.paused_until_ms;
    assert_true(until > st.now_ms && until <= st.now_ms + 400);
    enqueue_str(&f, "x", 0, NULL, NULL);
    assert_true(wait_until(started_one, &s, 5000, "the task to run when the pause ends"));
    /* claimed by server time at or after the pause's end, and soon after it */
    printf("# claimed %lld ms after the pause's end\n", (long long)(s.first_claimed_ms - until));
    assert_true(s.first_claimed_ms >= until);
    assert_true(s.first_claimed_ms <= until + 1000);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_false(st.paused); /* ended by time: no write needed */
    test_worker_stop(&r, false);
    fixture_close(&f);
}

struct until_stats {
    struct fixture *f;
    dq_stats s;
    int64_t done, retried;
};

static bool
counters_reached(void *arg)
{
    struct until_stats *u = arg;
    if (dq_stats_get(u->f->c, u->f->queue, &u->s, &u->f->err) != DQ_OK)
        return false;
    return u->s.done >= u->done && u->s.retried >= u->retried;
}

static void
work_goes_on_while_paused(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.name = "pg", .concurrency = 1};
    dq_claimed cl;
    dq_enqueued e;

    fixture_open(&f, state, "goeson");
    seen_init(&s, "block");
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    enqueue_str(&f, "running", 0, "running-1", NULL);
    assert_true(wait_until(started_one, &s, 5000, "the first task to start"));
    /* its one slot is busy, so it claims nothing more: these two are claimed by hand, as
     * by a worker that claimed them before the pause */
    enqueue_str(&f, "r", 0, "to-retry", NULL);
    enqueue_str(&f, "f", 0, "to-fail", NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 2, 30000, "hand", &cl, &f.err));
    assert_int_equal(cl.n, 2);

    ASSERT_OK(&f, dq_pause(f.c, f.queue, 0, "incident", &f.err));
    /* enqueue works; claim hands out nothing, and says until when */
    enqueue_str(&f, "later", 0, "waits", &e);
    assert_false(e.duplicate);
    dq_claimed none;
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 10, 1000, "probe", &none, &f.err));
    assert_true(none.paused);
    assert_int_equal(none.paused_until_ms, 0);
    assert_int_equal(none.n, 0);
    dq_claimed_free(&none);

    /* results of tasks claimed before the pause are written: retry, fail, and the
     * worker's running task finishes and is acked */
    dq_retried rt;
    size_t k = strcmp(cl.tasks[0].id, "to-retry") == 0 ? 0 : 1;
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[k], "upstream 503", &rt, &f.err));
    assert_false(rt.exhausted);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[1 - k], "card declined", NULL, &f.err));
    dq_claimed_free(&cl);
    atomic_store(&s.release, 1);
    struct until_stats u = {.f = &f, .done = 1, .retried = 1};
    assert_true(wait_until(counters_reached, &u, 5000, "the running task's ack"));

    /* operator actions: requeue the failed task, drop the waiting one */
    const char *fid[] = {"to-fail"}, *wid[] = {"waits"};
    size_t n = 0;
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, fid, 1, 0, &n, &f.err));
    assert_int_equal(n, 1);
    ASSERT_OK(&f, dq_drop(f.c, f.queue, wid, 1, &n, &f.err));
    assert_int_equal(n, 1);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &u.s, &f.err));
    assert_true(u.s.paused);
    assert_int_equal(u.s.due, 1); /* the requeued task, not run: still paused */
    assert_int_equal(u.s.inflight, 0);
    assert_int_equal(atomic_load(&s.started), 1);
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
stats_and_audit_record_the_pause(void **state)
{
    struct fixture f;
    dq_stats st;
    dq_audit a;
    bool was = true;

    fixture_open(&f, state, "audit");
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_false(st.paused);
    assert_int_equal(st.paused_until_ms, -1);
    ASSERT_OK(&f, dq_pause(f.c, f.queue, 600000, "deploy rollback", &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_true(st.paused);
    assert_string_equal(st.paused_by, "tester");
    assert_string_equal(st.pause_reason, "deploy rollback");
    assert_true(st.paused_since_ms > 0 && st.paused_since_ms <= st.now_ms);
    assert_int_equal(st.paused_until_ms, st.paused_since_ms + 600000);
    ASSERT_OK(&f, dq_resume(f.c, f.queue, &was, &f.err));
    assert_true(was);
    ASSERT_OK(&f, dq_resume(f.c, f.queue, &was, &f.err));
    assert_false(was);

    ASSERT_OK(&f, dq_audit_get(f.c, f.queue, 10, &a, &f.err));
    assert_int_equal(a.n, 3);
    assert_string_equal(a.entries[0].action, "resume");
    assert_string_equal(a.entries[0].result, "ok: was not paused");
    assert_string_equal(a.entries[1].action, "resume");
    assert_non_null(strstr(a.entries[1].detail, "paused by tester"));
    assert_string_equal(a.entries[2].action, "pause");
    assert_string_equal(a.entries[2].who, "tester");
    assert_non_null(strstr(a.entries[2].detail, "for 600000ms until "));
    assert_non_null(strstr(a.entries[2].detail, ": deploy rollback"));
    dq_audit_free(&a);

    /* bad input names the field */
    char long_reason[DQ_PAUSE_REASON_MAX + 2];
    memset(long_reason, 'r', sizeof long_reason - 1);
    long_reason[sizeof long_reason - 1] = '\0';
    assert_int_equal(dq_pause(f.c, f.queue, 0, long_reason, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "reason"));
    assert_int_equal(dq_pause(f.c, f.queue, -1, NULL, &f.err), DQ_EINVAL);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paused_task_waits_and_runs_within_50ms_of_resume),
        cmocka_unit_test(pause_for_ends_by_itself),
        cmocka_unit_test(work_goes_on_while_paused),
        cmocka_unit_test(stats_and_audit_record_the_pause),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/pause", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
