/* SPDX-License-Identifier: MIT */
/*
 * test_parts_worker.c: workers on a partitioned queue (PROTOCOL.md 10.10) against a real
 * redis-server: two library workers run every task of a queue of 4 partitions exactly
 * once and never early by the server's clock, with the lateness printed; an idle worker
 * listens on every partition and sends nothing; a queue grown under a running worker
 * has its new partitions claimed from, and a shrunk one's draining partitions still
 * run; a pause holds every partition; and an unpartitioned queue's worker sends the
 * commands of before (one map read at its start, no partition key touched).
 */
#include "harness/fixture.h"
#include "harness/worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "lib/parts.h"

#define MAXTASKS 4096

/* What handlers saw, by task number (the payload). */
struct seen {
    pthread_mutex_t mu;
    int runs[MAXTASKS];
    int64_t late_us[MAXTASKS]; /* server TIME at the start - due */
    int early, unknown, bad;
    atomic_int started;
};

static void
handler(const dq_task *t, dq_result *res, void *arg)
{
    struct seen *s = arg;
    int64_t now_us = test_server_time_us();
    char buf[16];
    int k = -1;

    snprintf(buf, sizeof buf, "%.*s", (int)(t->payload_len < 15 ? t->payload_len : 15),
             (const char *)t->payload);
    if (sscanf(buf, "%d", &k) != 1 || k < 0 || k >= MAXTASKS)
        k = -1;
    pthread_mutex_lock(&s->mu);
    if (k < 0) {
        s->bad++;
    } else {
        s->runs[k]++;
        s->late_us[k] = now_us - t->due_ms * 1000;
    }
    if (now_us < 0)
        s->unknown++;
    else if (now_us < t->due_ms * 1000)
        s->early++;
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&s->started, 1);
    res->outcome = DQ_DONE;
}

static struct seen *
seen_new(void)
{
    struct seen *s = calloc(1, sizeof *s);
    assert_non_null(s);
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

struct started_at_least {
    struct seen *s;
    int n;
};

static bool
started_enough(void *arg)
{
    struct started_at_least *a = arg;
    return atomic_load(&a->s->started) >= a->n;
}

/* ZCARD of key @what ("sched", "inflight") of queue or partition @name. */
static long long
zcard(struct fixture *f, const char *name, const char *what)
{
    char key[200];

    snprintf(key, sizeof key, "dq:{%s}:%s", name, what);
    const char *argv[] = {"ZCARD", key};
    return redis_int(f, 2, argv);
}

static void
set_partitions(struct fixture *f, int64_t n)
{
    dq_config c = {.partitions = n};
    ASSERT_OK(f, dq_config_set(f->c, f->queue, &c, &f->err));
}

/* The map of @f's queue, read afresh. */
static void
map_of(struct fixture *f, struct dq_parts *m)
{
    dq_parts_forget(f->c, f->queue);
    ASSERT_OK(f, dq_parts_get(f->c, f->queue, m, &f->err));
}

/* Enqueues tasks @from..@to-1 (payload: the number), one in ten due now, the others
 * spread over 0..@spread_ms ahead, in one batch: on a partitioned queue the library
 * splits it over the routed partitions (generated ids: round robin). */
static void
enqueue_range(struct fixture *f, int from, int to, int64_t spread_ms)
{
    size_t n = (size_t)(to - from);
    dq_enqueue_item *it = calloc(n, sizeof *it);
    dq_enqueued *out = calloc(n, sizeof *out);
    char(*pay)[16] = calloc(n, sizeof *pay);

    assert_true(it != NULL && out != NULL && pay != NULL);
    for (size_t i = 0; i < n; i++) {
        int t = from + (int)i;
        snprintf(pay[i], sizeof pay[i], "%d", t);
        it[i].payload = pay[i];
        it[i].payload_len = strlen(pay[i]);
        it[i].opts.delay_ms = spread_ms > 0 && t % 10 != 0 ? (int64_t)t * 7919 % spread_ms : 0;
    }
    ASSERT_OK(f, dq_enqueue_batch(f->c, f->queue, it, n, out, &f->err));
    free(it);
    free(out);
    free(pay);
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Asserts tasks @from..@to-1 ran exactly once each, none early. */
static void
assert_once(const struct seen *s, int from, int to)
{
    int twice = 0, never = 0;

    for (int k = from; k < to; k++) {
        twice += s->runs[k] > 1;
        never += s->runs[k] == 0;
    }
    assert_int_equal(s->bad, 0);
    assert_int_equal(s->unknown, 0);
    assert_int_equal(twice, 0);
    assert_int_equal(never, 0);
    assert_int_equal(s->early, 0);
}

/* Every partition of @m holds nothing scheduled or in flight. */
static void
assert_empty(struct fixture *f, const struct dq_parts *m)
{
    for (size_t i = 0; i < m->all; i++) {
        assert_int_equal(zcard(f, m->names[i], "sched"), 0);
        assert_int_equal(zcard(f, m->names[i], "inflight"), 0);
    }
}

/* PUBSUB SHARDNUMSUB of partition @name's wake channel. */
static long long
subscribers(struct fixture *f, const char *name)
{
    char channel[200];
    redisReply *rep;
    long long n = -1;

    snprintf(channel, sizeof channel, "dq:{%s}:wake", name);
    const char *argv[] = {"PUBSUB", "SHARDNUMSUB", channel};
    rep = test_redis_cmd(f->redis, 3, argv);
    if (rep != NULL && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
        rep->element[1]->type == REDIS_REPLY_INTEGER)
        n = rep->element[1]->integer;
    freeReplyObject(rep);
    return n;
}

struct all_subscribed {
    struct fixture *f;
    const struct dq_parts *m;
    int workers; /* subscribed to each channel; 0: 1 */
};

static bool
every_partition_subscribed(void *arg)
{
    struct all_subscribed *a = arg;
    for (size_t i = 0; i < a->m->all; i++)
        if (subscribers(a->f, a->m->names[i]) != (a->workers > 0 ? a->workers : 1))
            return false;
    return true;
}

/* 2 000 tasks due now and up to 2 s ahead, spread over 4 partitions, enqueued while two
 * library workers wait for them: each runs exactly once, none before its due time by
 * the server's TIME. The lateness is printed for all of them and for those due 300 ms
 * or more later (the burst of 200 due at once measures the handlers' pace, not the
 * timing, and so do the tasks due while it drains). */
static void
two_workers_run_every_partition_once(void **state)
{
    enum { N = 2000 };
    struct fixture f;
    struct seen *s = seen_new();
    struct test_worker r[2];
    struct dq_parts m;
    dq_worker_opts o = {.concurrency = 8, .max_idle_ms = 60000};

    fixture_open(&f, state, "p4once");
    set_partitions(&f, 4);
    map_of(&f, &m);
    assert_int_equal(m.n, 4);
    assert_int_equal(m.all, 4);
    for (int i = 0; i < 2; i++)
        test_worker_start(&r[i], &f, NULL, &o, handler, s);
    struct all_subscribed a = {&f, &m, 2};
    assert_true(wait_until(every_partition_subscribed, &a, 5000, "both workers subscribed"));
    enqueue_range(&f, 0, N, 2000);
    long long total = 0;
    for (size_t i = 0; i < m.all; i++) {
        char key[200];
        snprintf(key, sizeof key, "dq:{%s}:seq", m.names[i]);
        const char *get[] = {"GET", key};
        redisReply *rep = test_redis_cmd(f.redis, 2, get);
        long long made = rep != NULL && rep->type == REDIS_REPLY_STRING ? atoll(rep->str) : 0;
        freeReplyObject(rep);
        made -= (long long)i * DQ_PART_SEQ_SPAN; /* its ids start there */
        printf("# partition %zu (%s): %lld tasks\n", i, m.names[i], made);
        assert_int_equal(made, N / 4);
        total += made;
    }
    assert_int_equal(total, N);
    struct started_at_least all = {s, N};
    assert_true(wait_until(started_enough, &all, 30000 * test_slowdown(), "2 000 tasks run"));
    for (int i = 0; i < 2; i++)
        test_worker_stop(&r[i], false);
    assert_once(s, 0, N);
    assert_empty(&f, &m);
    int64_t *late = calloc(N, sizeof *late), *timed = calloc(N, sizeof *timed);
    size_t nt = 0;
    assert_true(late != NULL && timed != NULL);
    for (int k = 0; k < N; k++) {
        late[k] = s->late_us[k];
        if (k % 10 != 0 && (int64_t)k * 7919 % 2000 >= 300)
            timed[nt++] = s->late_us[k];
    }
    qsort(late, N, sizeof *late, cmp_i64);
    qsort(timed, nt, sizeof *timed, cmp_i64);
    printf("# partitions 4, two workers of 8: %d tasks, %d early; lateness by server TIME "
           "min %lld us, p50 %lld, p90 %lld, p99 %lld, max %lld\n",
           N, s->early, (long long)late[0], (long long)late[N / 2], (long long)late[N * 9 / 10],
           (long long)late[N * 99 / 100], (long long)late[N - 1]);
    printf("#   the %zu due 300 ms or more after the enqueue: p50 %lld us, p90 %lld, p99 %lld, max "
           "%lld\n",
           nt, (long long)timed[nt / 2], (long long)timed[nt * 9 / 10],
           (long long)timed[nt * 99 / 100], (long long)timed[nt - 1]);
    free(late);
    free(timed);
    dq_parts_free(&m);
    free(s);
    fixture_close(&f);
}

/* An idle worker of a queue of 4 partitions listens on all four channels and sends
 * nothing; a task enqueued into any partition wakes it at once. */
static void
idle_worker_listens_on_every_partition(void **state)
{
    struct fixture f;
    struct seen *s = seen_new();
    struct test_worker r;
    struct dq_parts m;
    dq_worker_opts o = {.max_idle_ms = 60000};

    fixture_open(&f, state, "p4idle");
    set_partitions(&f, 4);
    map_of(&f, &m);
    test_worker_start(&r, &f, NULL, &o, handler, s);
    struct all_subscribed a = {&f, &m, 1};
    assert_true(wait_until(every_partition_subscribed, &a, 5000, "a subscription per partition"));
    int64_t settle = test_mono_ms() + 300 * test_slowdown();
    while (test_mono_ms() < settle)
        test_nap_ms(10);
    long long before = redis_calls_total(&f) + 1; /* +1: this INFO itself */
    int64_t t0 = test_mono_ms();
    while (test_mono_ms() < t0 + 3000)
        test_nap_ms(50);
    long long after = redis_calls_total(&f);
    double rate = (double)(after - before) * 1000.0 / (double)(test_mono_ms() - t0);
    printf("# idle worker, partitions 4: %.2f Redis commands/s over 3 s\n", rate);
    assert_true(rate < 1.0);
    /* 8 tasks due now, 2 in each partition; each partition's wakes the worker */
    int64_t t1 = test_mono_ms();
    enqueue_range(&f, 0, 8, 0);
    struct started_at_least eight = {s, 8};
    assert_true(wait_until(started_enough, &eight, 5000, "8 tasks run"));
    printf("# idle worker, partitions 4: 8 tasks due now ran within %lld ms of the enqueue\n",
           (long long)(test_mono_ms() - t1));
    test_worker_stop(&r, false);
    assert_once(s, 0, 8);
    dq_parts_free(&m);
    free(s);
    fixture_close(&f);
}

/* A queue grown from 1 to 4 partitions under a running worker: the worker reads the new
 * map and claims from the new partitions. Shrunk to 2, the tasks already in partitions
 * 2 and 3 (draining) still run. */
static void
grown_and_shrunk_under_a_running_worker(void **state)
{
    struct fixture f;
    struct seen *s = seen_new();
    struct test_worker r;
    struct dq_parts m;
    dq_worker_opts o = {.concurrency = 4, .max_idle_ms = 60000};

    fixture_open(&f, state, "grow");
    test_worker_start(&r, &f, NULL, &o, handler, s);
    enqueue_range(&f, 0, 10, 0);
    struct started_at_least ten = {s, 10};
    assert_true(wait_until(started_enough, &ten, 5000, "10 tasks of the unpartitioned queue"));

    set_partitions(&f, 4);
    map_of(&f, &m);
    assert_int_equal(m.all, 4);
    struct all_subscribed a = {&f, &m, 1};
    int64_t t0 = test_mono_ms();
    assert_true(wait_until(every_partition_subscribed, &a, 5000, "the new partitions subscribed"));
    printf("# grown to 4 partitions: the worker listened on all of them %lld ms later\n",
           (long long)(test_mono_ms() - t0));
    /* round robin: three in four of these can only run from the new partitions */
    enqueue_range(&f, 10, 210, 500);
    struct started_at_least more = {s, 210};
    assert_true(wait_until(started_enough, &more, 10000, "200 tasks over 4 partitions"));
    assert_once(s, 0, 210);

    /* shrink: partitions 2 and 3 drain; tasks put there before still run */
    test_worker_stop(&r, false);
    enqueue_range(&f, 210, 410, 300);
    long long in_high = zcard(&f, m.names[2], "sched") + zcard(&f, m.names[3], "sched");
    assert_true(in_high > 0);
    set_partitions(&f, 2);
    struct dq_parts m2;
    map_of(&f, &m2);
    assert_int_equal(m2.n, 2);
    assert_int_equal(m2.all, 4);
    test_worker_start(&r, &f, NULL, &o, handler, s);
    struct started_at_least drained = {s, 410};
    assert_true(wait_until(started_enough, &drained, 10000, "the draining partitions' tasks"));
    test_worker_stop(&r, false);
    printf("# shrunk to 2: %lld tasks in draining partitions 2 and 3 ran\n", in_high);
    assert_once(s, 0, 410);
    assert_empty(&f, &m2);
    dq_parts_free(&m);
    dq_parts_free(&m2);
    free(s);
    fixture_close(&f);
}

/* A pause (partition 0's) holds every partition: tasks due in any of them wait, and run
 * after the resume. First tasks of partitions 1..3 only, due well within a second of the
 * worker's last claim of partition 0: the pause's wake-up, not the once-a-second look,
 * must hold them; then tasks in every partition. */
static void
pause_holds_every_partition(void **state)
{
    struct fixture f;
    struct seen *s = seen_new();
    struct test_worker r;
    struct dq_parts m;
    dq_worker_opts o = {.concurrency = 4, .max_idle_ms = 60000};

    fixture_open(&f, state, "p4pause");
    set_partitions(&f, 4);
    map_of(&f, &m);
    test_worker_start(&r, &f, NULL, &o, handler, s);
    struct all_subscribed a = {&f, &m, 1};
    assert_true(wait_until(every_partition_subscribed, &a, 5000, "a subscription per partition"));
    ASSERT_OK(&f, dq_pause(f.c, f.queue, 0, "test", &f.err));
    size_t n = 60, away = 0;
    for (int k = 0; away < 20 && k < 1000; k++) {
        char id[24], pay[8];
        snprintf(id, sizeof id, "away-%d", k);
        if (dq_parts_route_id(&m, id, strlen(id)) == 0)
            continue;
        snprintf(pay, sizeof pay, "%zu", 40 + away++);
        dq_enqueue_opts eo = {.id = id, .delay_ms = 100};
        dq_enqueued e;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &eo, pay, strlen(pay), &e, &f.err));
    }
    assert_int_equal(away, 20);
    int64_t until = test_mono_ms() + 600;
    while (test_mono_ms() < until && atomic_load(&s->started) == 0)
        test_nap_ms(20);
    assert_int_equal(atomic_load(&s->started), 0);
    /* and due now and up to 300 ms later, in every partition */
    enqueue_range(&f, 0, 40, 300);
    until = test_mono_ms() + 1000;
    while (test_mono_ms() < until && atomic_load(&s->started) == 0)
        test_nap_ms(20);
    assert_int_equal(atomic_load(&s->started), 0);
    ASSERT_OK(&f, dq_resume(f.c, f.queue, NULL, &f.err));
    struct started_at_least all = {s, (int)n};
    assert_true(wait_until(started_enough, &all, 5000, "the held tasks after the resume"));
    test_worker_stop(&r, false);
    assert_once(s, 0, (int)n);
    dq_parts_free(&m);
    free(s);
    fixture_close(&f);
}

/* ---- an unpartitioned queue: today's commands --------------------------------------- */

/* MONITOR on a connection of its own, collected on a thread until stopped. */
struct monitor {
    redisContext *c;
    pthread_t th;
    atomic_bool stop;
    char **lines;
    size_t n, cap;
};

static void *
monitor_main(void *arg)
{
    struct monitor *mo = arg;

    while (!atomic_load(&mo->stop)) {
        void *v = NULL;
        if (redisGetReply(mo->c, &v) != REDIS_OK) {
            if (mo->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                mo->c->err = 0; /* the read timeout: look at the stop flag */
                continue;
            }
            break;
        }
        redisReply *r = v;
        if (r->type == REDIS_REPLY_STATUS && mo->n < 200000) {
            if (mo->n == mo->cap) {
                mo->cap = mo->cap ? mo->cap * 2 : 1024;
                mo->lines = realloc(mo->lines, mo->cap * sizeof *mo->lines);
            }
            mo->lines[mo->n++] = strdup(r->str);
        }
        freeReplyObject(r);
    }
    return NULL;
}

static void
monitor_start(struct monitor *mo, struct fixture *f)
{
    memset(mo, 0, sizeof *mo);
    mo->c = redisConnect("127.0.0.1", f->redis->port);
    assert_true(mo->c != NULL && mo->c->err == 0);
    redisReply *r = redisCommand(mo->c, "MONITOR");
    assert_non_null(r);
    freeReplyObject(r);
    redisSetTimeout(mo->c, (struct timeval){0, 100000});
    assert_int_equal(pthread_create(&mo->th, NULL, monitor_main, mo), 0);
}

static void
monitor_stop(struct monitor *mo)
{
    atomic_store(&mo->stop, true);
    pthread_join(mo->th, NULL);
    redisFree(mo->c);
}

static void
monitor_free(struct monitor *mo)
{
    for (size_t i = 0; i < mo->n; i++)
        free(mo->lines[i]);
    free(mo->lines);
}

/* A worker of a queue with partitions 1 reads the map once, at its start, and otherwise
 * sends the commands of an unpartitioned queue: no key of a partition ("~") is touched,
 * by it or by the scripts, and no map read follows while it runs tasks or idles. */
static void
unpartitioned_worker_sends_todays_commands(void **state)
{
    struct fixture f;
    struct seen *s = seen_new();
    struct test_worker r;
    struct monitor mo;
    dq_worker_opts o = {.concurrency = 2, .max_idle_ms = 200, .beat_ms = 100};
    char parts_key[160], part_tag[160];

    fixture_open(&f, state, "p1");
    snprintf(parts_key, sizeof parts_key, "\"dq:{%s}:parts\"", f.queue);
    snprintf(part_tag, sizeof part_tag, "{%s~", f.queue); /* a partition's hash tag */
    /* enqueued first (due up to 1 s later), so that every command watched is the
     * worker's or its scripts' */
    enqueue_range(&f, 0, 100, 1000);
    long long hgetall0 = test_redis_calls(f.redis, "hgetall");
    monitor_start(&mo, &f);
    test_worker_start(&r, &f, NULL, &o, handler, s);
    struct started_at_least all = {s, 100};
    assert_true(wait_until(started_enough, &all, 10000, "100 tasks"));
    /* idle a while: beats, check beats and looks every 100-200 ms */
    int64_t until = test_mono_ms() + 1500;
    while (test_mono_ms() < until)
        test_nap_ms(50);
    test_worker_stop(&r, false);
    monitor_stop(&mo);
    long long hgetall = test_redis_calls(f.redis, "hgetall") - hgetall0;
    size_t map_reads = 0, tilde = 0, worker_cmds = 0;
    for (size_t i = 0; i < mo.n; i++) {
        const char *l = mo.lines[i];
        if (strstr(l, f.queue) == NULL)
            continue;
        if (strstr(l, part_tag) != NULL)
            tilde++;
        if (strstr(l, "\"HGETALL\"") != NULL && strstr(l, parts_key) != NULL)
            map_reads++;
        worker_cmds += strstr(l, " lua] ") == NULL;
    }
    printf("# partitions 1: %zu commands naming the queue from clients (%zu lines in all), "
           "%zu map reads, %zu naming a partition\n",
           worker_cmds, mo.n, map_reads, tilde);
    assert_true(worker_cmds > 0);
    assert_int_equal(tilde, 0);
    assert_int_equal(map_reads, 1); /* at the worker's start */
    assert_int_equal(hgetall, (long long)map_reads);
    assert_once(s, 0, 100);
    monitor_free(&mo);
    free(s);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_workers_run_every_partition_once),
        cmocka_unit_test(idle_worker_listens_on_every_partition),
        cmocka_unit_test(grown_and_shrunk_under_a_running_worker),
        cmocka_unit_test(pause_holds_every_partition),
        cmocka_unit_test(unpartitioned_worker_sends_todays_commands),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/parts_worker", tests, test_worker_group_setup,
                                       test_worker_group_teardown);
}
