/* SPDX-License-Identifier: MIT */
/*
 * test_worker.c: the worker runtime (dq_worker_*) against a real redis-server: every
 * task run once and never early, retries and failures with traces, lease renewal for
 * slow handlers, wake-up on an earlier task, shutdown with hand-back, results written
 * after a Redis restart, and what an idle worker costs.
 */
#include "harness/fixture.h"
#include "harness/worker.h"

#include <pthread.h>
#include <stdatomic.h>

#define MAXSEQ 32768

/* What handlers saw; shared with the test thread. */
struct seen {
    pthread_mutex_t mu;
    int runs[MAXSEQ];        /* by seq */
    int early;               /* started before due: server TIME at the start < due */
    int unknown;             /* starts whose server TIME could not be read */
    int64_t late_us[MAXSEQ]; /* server TIME at the start - due, by seq */
    int64_t start_mono[MAXSEQ];
    int ahead; /* tasks claimed before their due time (claimed_ms < due) */
    atomic_int running;
    atomic_int started;
    atomic_int release; /* handlers that block wait for this */
    int sleep_ms;       /* handlers that sleep */
    const char *mode;   /* "ok", "retry-once", "fail", "block", "sleep", "poll" */
    /* "poll": runs until dq_task_cancelled (10 s at most), and notes what it saw;
     * "ignore": as "block", deaf to dq_task_cancelled */
    int64_t left_at_start, cancelled_after_ms, time_limit_ms;
};

static void
handler(const dq_task *t, dq_result *res, void *arg)
{
    struct seen *s = arg;

    int64_t now_us = test_server_time_us();

    atomic_fetch_add(&s->running, 1);
    atomic_fetch_add(&s->started, 1);
    pthread_mutex_lock(&s->mu);
    if (t->seq < MAXSEQ) {
        s->runs[t->seq]++;
        s->start_mono[t->seq] = test_mono_ms();
        s->late_us[t->seq] = now_us - t->due_ms * 1000;
    }
    s->ahead += t->claimed_ms < t->due_ms;
    if (now_us < 0)
        s->unknown++;
    else if (now_us < t->due_ms * 1000)
        s->early++;
    pthread_mutex_unlock(&s->mu);

    if (strcmp(s->mode, "retry-once") == 0 && t->attempt == 0) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "first try fails");
    } else if (strcmp(s->mode, "fail") == 0) {
        res->outcome = DQ_FAILED;
        snprintf(res->message, sizeof res->message, "handler gave up");
        res->trace = dq_trace_capture();
    } else if (strcmp(s->mode, "block") == 0) {
        while (!atomic_load(&s->release))
            test_nap_ms(2);
    } else if (strcmp(s->mode, "sleep") == 0) {
        test_nap_ms(s->sleep_ms);
    } else if (strcmp(s->mode, "poll") == 0) {
        int64_t t0 = test_mono_ms();
        s->left_at_start = dq_task_time_left_ms(t);
        s->time_limit_ms = t->time_limit_ms;
        while (!dq_task_cancelled(t) && test_mono_ms() - t0 < 10000)
            test_nap_ms(5);
        s->cancelled_after_ms = dq_task_cancelled(t) ? test_mono_ms() - t0 : -1;
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "stopped when asked");
    }
    atomic_fetch_sub(&s->running, 1);
}

static void
seen_init(struct seen *s, const char *mode)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->mode = mode;
}

struct until_stats {
    struct fixture *f;
    int64_t done, failed, scheduled;
    dq_stats s;
};

static bool
done_reached(void *arg)
{
    struct until_stats *u = arg;
    if (dq_stats_get(u->f->c, u->f->queue, &u->s, &u->f->err) != DQ_OK)
        return false;
    return u->s.done >= u->done && u->s.failed >= u->failed;
}

static bool
retried_once(void *arg)
{
    struct until_stats *u = arg;
    return dq_stats_get(u->f->c, u->f->queue, &u->s, &u->f->err) == DQ_OK && u->s.retried >= 1 &&
           u->s.inflight == 0;
}

static bool
started_reached(void *arg)
{
    struct seen *s = arg;
    return atomic_load(&s->started) > 0;
}

static void
every_task_once_never_early(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.concurrency = 4, .batch = 16, .max_idle_ms = 60000};
    const int n = 600;

    fixture_open(&f, state, "once");
    seen_init(&s, "ok");
    for (int i = 0; i < n; i++) {
        dq_enqueue_opts eo = {.delay_ms = i % 3 == 0 ? 0 : (i * 7) % 1500};
        dq_enqueued e;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &eo, "t", 1, &e, &f.err));
    }
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    struct until_stats u = {.f = &f, .done = n};
    assert_true(wait_until(done_reached, &u, 20000, "all tasks done"));
    test_worker_stop(&r, false);
    int twice = 0, never = 0;
    for (int i = 1; i <= n; i++) {
        twice += s.runs[i] > 1;
        never += s.runs[i] == 0;
    }
    assert_int_equal(twice, 0);
    assert_int_equal(never, 0);
    assert_int_equal(s.early, 0);
    assert_int_equal(u.s.inflight, 0);
    assert_int_equal(u.s.done, n);
    fixture_close(&f);
}

static bool
two_registered(void *arg)
{
    struct fixture *f = arg;
    dq_workers ws;
    bool ok = false;

    if (dq_workers_get(f->c, f->queue, 10, 0, &ws, &f->err) != DQ_OK)
        return false;
    ok = ws.n == 2 && ws.live == 2 && strcmp(ws.workers[0].name, "lanes-w") == 0 &&
         strcmp(ws.workers[1].name, "lanes-w/2") == 0 && ws.workers[0].concurrency == 3 &&
         ws.workers[1].concurrency == 2;
    dq_workers_free(&ws);
    return ok;
}

/* opts.lanes: two coordinators, each with its own connection, share the concurrency;
 * every task runs once, none early, and each lane is a registered worker. */
static void
lanes_share_the_work(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.concurrency = 5, .lanes = 2, .name = "lanes-w"};
    const int n = 400;

    fixture_open(&f, state, "lanes");
    seen_init(&s, "ok");
    for (int i = 0; i < n; i++) {
        dq_enqueue_opts eo = {.delay_ms = (i * 7) % 1000};
        dq_enqueued e;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &eo, "t", 1, &e, &f.err));
    }
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    assert_true(wait_until(two_registered, &f, 10000, "both lanes registered"));
    struct until_stats u = {.f = &f, .done = n};
    assert_true(wait_until(done_reached, &u, 30000, "all tasks done"));
    test_worker_stop(&r, false);
    int twice = 0, never = 0;
    for (int i = 1; i <= n; i++) {
        twice += s.runs[i] > 1;
        never += s.runs[i] == 0;
    }
    assert_int_equal(twice, 0);
    assert_int_equal(never, 0);
    assert_int_equal(s.early, 0);
    assert_int_equal(u.s.inflight, 0);
    /* a clean stop takes both lanes out of the registry */
    dq_workers ws;
    ASSERT_OK(&f, dq_workers_get(f.c, f.queue, 10, 0, &ws, &f.err));
    assert_int_equal(ws.n, 0);
    dq_workers_free(&ws);
    /* lanes past the concurrency are refused */
    dq_worker *w = NULL;
    dq_worker_opts bad = {.concurrency = 2, .lanes = 3};
    assert_int_equal(dq_worker_new(f.redis->url, NULL, f.queue, &bad, handler, &s, &w, &f.err),
                     DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "lanes"));
    assert_null(w);
    fixture_close(&f);
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Claim-ahead (PROTOCOL.md 10.2): 20 000 tasks due over 10 s under four workers, each
 * claiming up to 20 ms ahead; every handler start is checked against the server's TIME,
 * read inside the handler on its own connection. */
static void
claim_ahead_never_starts_early(void **state)
{
    enum { N = 20000, WORKERS = 4 };
    struct fixture f;
    struct seen *s = calloc(1, sizeof *s);
    struct test_worker r[WORKERS];
    dq_worker_opts o = {.concurrency = 8, .claim_ahead_ms = 20, .max_idle_ms = 60000};
    dq_enqueue_item *it = calloc(N, sizeof *it);
    dq_enqueued *out = calloc(N, sizeof *out);

    fixture_open(&f, state, "ahead");
    seen_init(s, "ok");
    /* due 1 s from now over 10 s, spread evenly, so many fall inside a claim's window */
    for (int i = 0; i < N; i++) {
        it[i].opts.delay_ms = 1000 + (int64_t)i * 10000 / N;
        it[i].payload = "a";
        it[i].payload_len = 1;
    }
    ASSERT_OK(&f, dq_enqueue_batch(f.c, f.queue, it, N, out, &f.err));
    for (int i = 0; i < WORKERS; i++)
        test_worker_start(&r[i], &f, NULL, &o, handler, s);
    struct until_stats u = {.f = &f, .done = N};
    assert_true(wait_until(done_reached, &u, 60000 * test_slowdown(), "all 20 000 tasks done"));
    for (int i = 0; i < WORKERS; i++)
        test_worker_stop(&r[i], false);
    int twice = 0, never = 0;
    int64_t *late = calloc(N, sizeof *late);
    for (int i = 1; i <= N; i++) {
        twice += s->runs[i] > 1;
        never += s->runs[i] == 0;
        late[i - 1] = s->late_us[i];
    }
    qsort(late, N, sizeof *late, cmp_i64);
    printf("# claim-ahead 20 ms, 4 workers: %d early, %d unknown; lateness by server TIME "
           "min %lld us, p50 %lld, p90 %lld, p99 %lld, max %lld\n",
           s->early, s->unknown, (long long)late[0], (long long)late[N / 2],
           (long long)late[N * 9 / 10], (long long)late[N * 99 / 100], (long long)late[N - 1]);
    for (int i = 1; i <= N && getenv("DQ_TEST_VERBOSE"); i += 500)
        printf("#   seq %d late %lld us\n", i, (long long)s->late_us[i]);
    assert_int_equal(s->unknown, 0);
    assert_int_equal(s->early, 0);
    assert_int_equal(twice, 0);
    assert_int_equal(never, 0);
    free(late);
    free(it);
    free(out);
    free(s);
    fixture_close(&f);
}

/* A one-slot worker whose slot holds a task claimed ahead still claims the next tasks
 * due within its window (up to four beyond the slot, PROTOCOL.md 10.2): six tasks due
 * 1 ms apart, each handler taking 300 ms. The first five are claimed ahead; the sixth
 * only once a slot is free (long after its due time); none starts early. */
static void
one_slot_claims_ahead_beyond_its_slot(void **state)
{
    enum { N = 6 };
    struct fixture f;
    struct seen *s = calloc(1, sizeof *s);
    struct test_worker r;
    dq_worker_opts o = {.concurrency = 1, .claim_ahead_ms = 200, .max_idle_ms = 60000};
    int64_t base;

    fixture_open(&f, state, "ahead1");
    seen_init(s, "sleep");
    s->sleep_ms = 300;
    test_worker_start(&r, &f, NULL, &o, handler, s);
    base = test_server_time_us() / 1000 + 1000 * test_slowdown();
    for (int i = 0; i < N; i++) {
        char id[16];
        snprintf(id, sizeof id, "t%d", i);
        dq_enqueue_opts eo = {.at_ms = base + i, .id = id};
        dq_enqueued out;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &eo, "x", 1, &out, &f.err));
    }
    struct until_stats u = {.f = &f, .done = N};
    assert_true(wait_until(done_reached, &u, 20000 * test_slowdown(), "all 6 tasks done"));
    test_worker_stop(&r, false);
    printf("# one slot, window 200 ms, 6 tasks 1 ms apart: %d claimed ahead, %d early\n", s->ahead,
           s->early);
    assert_int_equal(s->unknown, 0);
    assert_int_equal(s->early, 0);
    assert_int_equal(s->ahead, 5);
    free(s);
    fixture_close(&f);
}

struct named {
    struct fixture *f;
    const char *name;
};

static bool
client_named(void *arg)
{
    struct named *n = arg;
    const char *argv[] = {"CLIENT", "LIST"};
    struct redisReply *r = test_redis_cmd(n->f->redis, 2, argv);
    char want[160];
    bool found;

    snprintf(want, sizeof want, " name=%s ", n->name);
    found = r != NULL && r->type == REDIS_REPLY_STRING && strstr(r->str, want) != NULL;
    freeReplyObject(r);
    return found;
}

/* dq_worker_new copies the connection's option strings: the caller's buffer is
 * overwritten and freed before the worker connects, and the worker's connection still
 * carries the name it was given (the old code read the caller's bytes at connect). */
static void
worker_copies_its_connection_strings(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.concurrency = 1};
    dq_client_opts co = {0};
    char *name = strdup("delayq-test-copied-name");
    struct named n = {.f = &f, .name = "delayq-test-copied-name"};

    fixture_open(&f, state, "copts");
    seen_init(&s, "ok");
    assert_non_null(name);
    co.client_name = name;
    memset(&r, 0, sizeof r);
    ASSERT_OK(&f, dq_worker_new(f.redis->url, &co, f.queue, &o, handler, &s, &r.w, &f.err));
    memset(name, 'Z', strlen(name));
    free(name);
    test_worker_run(&r);
    assert_true(wait_until(client_named, &n, 10000 * test_slowdown(), "the worker's name"));
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
retry_then_done_and_failures_keep_traces(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.concurrency = 2};
    dq_config cfg = {.backoff_base_ms = 50};

    fixture_open(&f, state, "outcomes");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    seen_init(&s, "retry-once");
    for (int i = 0; i < 5; i++)
        enqueue_str(&f, "r", 0, NULL, NULL);
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    struct until_stats u = {.f = &f, .done = 5};
    assert_true(wait_until(done_reached, &u, 10000, "retried tasks done"));
    test_worker_stop(&r, false);
    assert_int_equal(u.s.retried, 5);
    for (int i = 1; i <= 5; i++)
        assert_int_equal(s.runs[i], 2);

    seen_init(&s, "fail");
    enqueue_str(&f, "f", 0, "will-fail", NULL);
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    u = (struct until_stats){.f = &f, .done = 5, .failed = 1};
    assert_true(wait_until(done_reached, &u, 10000, "failure recorded"));
    test_worker_stop(&r, false);
    dq_task t;
    ASSERT_OK(&f, dq_find(f.c, f.queue, "will-fail", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_string_equal(t.error, "handler gave up");
    assert_non_null(strstr(t.trace, "at ")); /* a captured stack, one frame per line */
    assert_non_null(strchr(t.trace, '\n'));
    assert_non_null(strstr(t.failed_by, ":")); /* the worker's name, user@host:pid */
    dq_task_clear(&t);
    fixture_close(&f);
}

struct reap_watch {
    struct fixture *f;
    int reaped;
};

static bool
slow_done_while_reaping(void *arg)
{
    struct reap_watch *rw = arg;
    dq_reaped rp;
    dq_stats s;

    if (dq_reap(rw->f->c, rw->f->queue, 10, &rp, &rw->f->err) == DQ_OK)
        rw->reaped += (int)rp.returned;
    return dq_stats_get(rw->f->c, rw->f->queue, &s, &rw->f->err) == DQ_OK && s.done == 1;
}

static void
slow_handler_keeps_its_lease(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.lease_ms = 300};

    fixture_open(&f, state, "lease");
    seen_init(&s, "sleep");
    s.sleep_ms = 1500; /* five leases long */
    enqueue_str(&f, "slow", 0, NULL, NULL);
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    /* meanwhile, someone reaps all the time: the renewed lease must never expire */
    struct reap_watch rw = {&f, 0};
    assert_true(wait_until(slow_done_while_reaping, &rw, 10000, "slow task done"));
    test_worker_stop(&r, false);
    assert_int_equal(rw.reaped, 0);
    assert_int_equal(s.runs[1], 1);
    fixture_close(&f);
}

/* A task's time limit reaches a C handler: dq_task_time_left_ms counts it down, and
 * dq_task_cancelled turns true when it has passed (the worker's own timeout is longer,
 * so the task's limit is the one that applies); what the handler then returns is kept. */
static void
handler_learns_its_time_limit_and_is_asked_to_stop(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.timeout_ms = 5000};
    dq_enqueue_opts eo = {.id = "limited", .time_limit_ms = 400};
    dq_enqueued e;
    dq_task t = {0};

    fixture_open(&f, state, "tlimit");
    seen_init(&s, "poll");
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &eo, "x", 1, &e, &f.err));
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    struct until_stats u = {.f = &f};
    assert_true(wait_until(retried_once, &u, 8000, "the handler stopped and retried"));
    test_worker_stop(&r, false);
    printf("# time limit 400 ms: left at start %lld ms, cancelled after %lld ms\n",
           (long long)s.left_at_start, (long long)s.cancelled_after_ms);
    assert_int_equal(s.time_limit_ms, 400);
    assert_true(s.left_at_start > 0 && s.left_at_start <= 400);
    assert_true(s.cancelled_after_ms >= 390 && s.cancelled_after_ms < 2000);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "limited", &t, &f.err));
    assert_string_equal(t.last_error, "stopped when asked");
    assert_int_equal(t.time_limit_ms, 400);
    dq_task_clear(&t);
    fixture_close(&f);
}

struct hung_probe {
    struct fixture *f;
    dq_workers w;
};

static bool
worker_says_hung(void *arg)
{
    struct hung_probe *p = arg;
    dq_workers_free(&p->w);
    return dq_workers_get(p->f->c, p->f->queue, 10, 0, &p->w, &p->f->err) == DQ_OK && p->w.n == 1 &&
           p->w.workers[0].hung == 1;
}

/* A C handler deaf to dq_task_cancelled past its task's time limit is reported as hung
 * in the worker's registry record, DQ_HUNG_AFTER_MS after the limit, at once (not at the
 * next 30 s beat), and no longer once it returns. */
static void
handler_ignoring_its_time_limit_is_reported_hung(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.name = "deaf"};
    dq_enqueue_opts eo = {.id = "stuck", .time_limit_ms = 200};
    dq_enqueued e;

    fixture_open(&f, state, "hung");
    seen_init(&s, "block");
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &eo, "x", 1, &e, &f.err));
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    assert_true(wait_until(started_reached, &s, 5000, "handler started"));
    int64_t t0 = test_mono_ms();
    struct hung_probe p = {.f = &f};
    assert_true(wait_until(worker_says_hung, &p, DQ_HUNG_AFTER_MS + 5000, "hung in the registry"));
    int64_t took = test_mono_ms() - t0;
    printf("# a deaf handler past a 200 ms limit: hung in the registry after %lld ms\n",
           (long long)took);
    assert_true(took >= DQ_HUNG_AFTER_MS); /* not before its time */
    atomic_store(&s.release, 1);
    bool cleared = false;
    int64_t until = test_mono_ms() + 10000;
    while (!cleared && test_mono_ms() < until) {
        dq_workers_free(&p.w);
        ASSERT_OK(&f, dq_workers_get(f.c, f.queue, 10, 0, &p.w, &f.err));
        cleared = p.w.n == 1 && p.w.workers[0].hung == 0;
        if (!cleared)
            test_nap_ms(50);
    }
    assert_true(cleared);
    dq_workers_free(&p.w);
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
idle_worker_wakes_for_an_earlier_task(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.max_idle_ms = 60000};
    dq_enqueued e;

    fixture_open(&f, state, "wake");
    seen_init(&s, "ok");
    enqueue_str(&f, "far", 3600000, NULL, NULL); /* the worker will sleep towards this */
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    /* let it settle into its sleep: its first claim finds nothing due */
    struct until_stats u = {.f = &f};
    int64_t settle = test_mono_ms() + 300 * test_slowdown();
    while (test_mono_ms() < settle)
        test_nap_ms(10);
    int64_t t0 = test_mono_ms();
    enqueue_str(&f, "now", 0, NULL, &e);
    u.done = 1;
    assert_true(wait_until(done_reached, &u, 5000, "task due now done"));
    int64_t woke = s.start_mono[2] - t0;
    /* and one due 300 ms out: started on time by the worker's own timer */
    enqueue_str(&f, "soon", 300, NULL, &e);
    u.done = 2;
    assert_true(wait_until(done_reached, &u, 5000, "task due soon done"));
    test_worker_stop(&r, false);
    dq_page p;
    printf("# idle worker: task due now started %lld ms after enqueue\n", (long long)woke);
    assert_true(woke < 1000);
    assert_int_equal(s.early, 0);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FUTURE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 1); /* the far one is untouched */
    dq_page_free(&p);
    fixture_close(&f);
}

static void
stop_hands_back_unstarted_and_finishes_running(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.concurrency = 1, .batch = 3, .grace_ms = 10000};
    dq_stats st;

    fixture_open(&f, state, "stop");
    seen_init(&s, "block");
    for (int i = 0; i < 3; i++)
        enqueue_str(&f, "b", 0, NULL, NULL);
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    assert_true(wait_until(started_reached, &s, 5000, "first handler started"));
    dq_worker_stop(r.w, false);
    /* the two claimed but unstarted tasks go back at once, not counted as attempts */
    struct until_stats u = {.f = &f};
    int64_t deadline = test_mono_ms() + 5000;
    do {
        ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
        assert_true(test_mono_ms() < deadline);
    } while (st.due != 2);
    (void)u;
    atomic_store(&s.release, 1); /* the running one finishes within the grace period */
    test_worker_join(&r);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.done, 1);
    assert_int_equal(st.inflight, 0);
    assert_int_equal(st.due, 2);
    dq_page p;
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 10, &p, &f.err));
    for (size_t i = 0; i < p.n; i++)
        assert_int_equal(p.tasks[i].attempt, 0);
    dq_page_free(&p);
    assert_int_equal(atomic_load(&s.started), 1);
    fixture_close(&f);
}

static bool
stats_after_restart(void *arg)
{
    struct until_stats *u = arg;
    return dq_stats_get(u->f->c, u->f->queue, &u->s, &u->f->err) == DQ_OK && u->s.done >= 1;
}

static void
result_written_after_redis_restart(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    struct test_redis own;
    const char *aof[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    dq_worker_opts o = {.lease_ms = 30000};

    assert_int_equal(test_redis_start(&own, aof), 0);
    memset(&f, 0, sizeof f);
    f.redis = &own;
    snprintf(f.queue, sizeof f.queue, "outage");
    ASSERT_OK(&f, dq_client_open(own.url, NULL, &f.c, &f.err));
    seen_init(&s, "block");
    enqueue_str(&f, "x", 0, NULL, NULL);
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    assert_true(wait_until(started_reached, &s, 5000, "handler started"));
    test_redis_kill(&own);
    atomic_store(&s.release, 1); /* finishes while Redis is down */
    while (atomic_load(&s.running) > 0)
        test_nap_ms(5);
    assert_int_equal(test_redis_start_again(&own), 0);
    struct until_stats u = {.f = &f};
    assert_true(wait_until(stats_after_restart, &u, 15000, "result written after restart"));
    assert_int_equal(u.s.inflight, 0);
    assert_int_equal(u.s.done, 1);
    test_worker_stop(&r, false);
    assert_int_equal(s.runs[1], 1);
    fixture_close(&f);
    test_redis_stop(&own);
}

struct sleep_arg {
    struct test_redis *r;
    bool ok;
};

static void *
debug_sleep_thread(void *arg)
{
    struct sleep_arg *a = arg;
    const char *argv[] = {"DEBUG", "SLEEP", "1"};
    redisReply *rep = test_redis_cmd(a->r, 3, argv);

    a->ok = rep != NULL && rep->type == REDIS_REPLY_STATUS;
    freeReplyObject(rep);
    return NULL;
}

static bool
one_run(void *arg)
{
    struct seen *s = arg;
    return atomic_load(&s->started) >= 1;
}

/* The worker listens for wake-ups: it is connected and has made its first reap. */
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

/* A server that stalls past the command timeout runs the claim it was sent once it wakes
 * up, though the worker gave up on it: the tasks it leased come back after the lease
 * (1 s here), not after the worker's idle timer (60 s). */
static void
claim_that_timed_out_comes_back_after_its_lease(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    struct test_redis own;
    struct sleep_arg sl;
    pthread_t th;
    const char *debug[] = {"--enable-debug-command", "yes", NULL};
    dq_client_opts co = {.command_timeout_ms = 200};
    dq_worker_opts o = {.lease_ms = 1000, .max_idle_ms = 60000};

    assert_int_equal(test_redis_start(&own, debug), 0);
    memset(&f, 0, sizeof f);
    f.redis = &own;
    snprintf(f.queue, sizeof f.queue, "stall");
    ASSERT_OK(&f, dq_client_open(own.url, NULL, &f.c, &f.err));
    seen_init(&s, "ok");
    memset(&r, 0, sizeof r);
    ASSERT_OK(&f, dq_worker_new(own.url, &co, f.queue, &o, handler, &s, &r.w, &f.err));
    test_worker_run(&r);
    /* idle, with nothing in flight: its next reap is an idle period away */
    assert_true(wait_until(subscribed, &f, 5000, "the worker to subscribe"));
    enqueue_str(&f, "stalled", 300, NULL, NULL); /* due while the server sleeps */
    sl.r = &own;
    assert_int_equal(pthread_create(&th, NULL, debug_sleep_thread, &sl), 0);
    pthread_join(th, NULL);
    assert_true(sl.ok);
    int64_t woke = test_mono_ms();
    assert_true(wait_until(one_run, &s, 10000, "the stalled task to run"));
    printf("# task of a claim that timed out ran %lld ms after the server woke\n",
           (long long)(test_mono_ms() - woke));
    test_worker_stop(&r, false);
    assert_int_equal(s.runs[1], 1);
    fixture_close(&f);
    test_redis_stop(&own);
}

static bool
reaped_one(void *arg)
{
    struct fixture *f = arg;
    dq_stats st;

    return dq_stats_get(f->c, f->queue, &st, &f->err) == DQ_OK && st.reaped >= 1;
}

/* A worker learns of other workers' leases when it reaps; one that appears later and
 * comes first (here 500 ms against the 60 s of its own) is announced on the wake
 * channel, so the task of a worker that dies holding it comes back at its deadline,
 * not at the next idle timer or the next lease this worker knows of. */
static void
dead_workers_new_lease_is_reaped_at_its_deadline(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.concurrency = 1, .lease_ms = 60000, .max_idle_ms = 60000};
    dq_claimed cl;

    fixture_open(&f, state, "deadlease");
    seen_init(&s, "block");
    enqueue_str(&f, "a", 0, NULL, NULL);
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    assert_true(wait_until(started_reached, &s, 5000, "the worker to run task a"));
    assert_true(wait_until(subscribed, &f, 5000, "the worker to subscribe"));
    /* another worker claims b with a 500 ms lease and dies without a word */
    enqueue_str(&f, "b", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 500, "dead-worker", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    dq_claimed_free(&cl);
    int64_t t0 = test_mono_ms();
    assert_true(wait_until(reaped_one, &f, 5000, "the dead worker's lease to be reaped"));
    printf("# a dead worker's 500 ms lease was reaped %lld ms after the claim\n",
           (long long)(test_mono_ms() - t0));
    atomic_store(&s.release, 1);
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
idle_worker_is_quiet(void **state)
{
    struct fixture f;
    struct seen s;
    struct test_worker r;
    dq_worker_opts o = {.max_idle_ms = 60000};

    fixture_open(&f, state, "idle");
    seen_init(&s, "ok");
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    int64_t settle = test_mono_ms() + 300 * test_slowdown();
    while (test_mono_ms() < settle)
        test_nap_ms(10);
    long long before = redis_calls_total(&f) + 1; /* +1: this INFO itself */
    int64_t t0 = test_mono_ms();
    while (test_mono_ms() < t0 + 3000)
        test_nap_ms(50);
    long long after = redis_calls_total(&f);
    double rate = (double)(after - before) * 1000.0 / (double)(test_mono_ms() - t0);
    test_worker_stop(&r, false);
    printf("# idle worker: %.2f Redis commands/s over 3 s (commands inside scripts included)\n",
           rate);
    assert_true(rate < 1.0);
    fixture_close(&f);
}

static void
stop_now_with_a_stuck_handler_then_free(void **state)
{
    struct fixture f;
    struct seen *s = calloc(1, sizeof *s); /* outlives the worker's last thread */
    struct test_worker r;
    dq_worker_opts o = {.grace_ms = 1};

    fixture_open(&f, state, "stuck");
    seen_init(s, "block");
    enqueue_str(&f, "x", 0, NULL, NULL);
    test_worker_start(&r, &f, NULL, &o, handler, s);
    assert_true(wait_until(started_reached, s, 5000, "handler started"));
    dq_worker_stop(r.w, true);
    test_worker_join(&r); /* the handler still runs: the free is left to its thread */
    dq_stats st;
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.due, 1); /* handed back */
    atomic_store(&s->release, 1);
    while (atomic_load(&s->running) > 0)
        test_nap_ms(5);
    free(s); /* its handler has returned: nothing uses it any more */
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_task_once_never_early),
        cmocka_unit_test(lanes_share_the_work),
        cmocka_unit_test(claim_ahead_never_starts_early),
        cmocka_unit_test(one_slot_claims_ahead_beyond_its_slot),
        cmocka_unit_test(worker_copies_its_connection_strings),
        cmocka_unit_test(retry_then_done_and_failures_keep_traces),
        cmocka_unit_test(slow_handler_keeps_its_lease),
        cmocka_unit_test(idle_worker_wakes_for_an_earlier_task),
        cmocka_unit_test(handler_learns_its_time_limit_and_is_asked_to_stop),
        cmocka_unit_test(handler_ignoring_its_time_limit_is_reported_hung),
        cmocka_unit_test(stop_hands_back_unstarted_and_finishes_running),
        cmocka_unit_test(result_written_after_redis_restart),
        cmocka_unit_test(claim_that_timed_out_comes_back_after_its_lease),
        cmocka_unit_test(dead_workers_new_lease_is_reaped_at_its_deadline),
        cmocka_unit_test(idle_worker_is_quiet),
        cmocka_unit_test(stop_now_with_a_stuck_handler_then_free),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/worker", tests, test_worker_group_setup,
                                       test_worker_group_teardown);
}
