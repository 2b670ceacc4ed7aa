/* SPDX-License-Identifier: MIT */
/*
 * test_fair.c: the fairness case of per-key limits (PROTOCOL.md 4.10) against a real
 * redis-server with library workers: one key with 50 000 due tasks enqueued first, then
 * 100 keys with 10 each, key_concurrency 2, four workers of four threads each and an
 * instant handler. Every small-key task starts within 2 s of the last one's enqueue (by
 * the server's clock: the handlers read CLOCK_REALTIME, which is Redis' TIME on this
 * host), while the big key runs, never more than 2 of one key at once. And the acks of
 * one key settled in one call bring back as many of its parked tasks as they free.
 */
#include "harness/fixture.h"
#include "harness/worker.h"

#include <stdatomic.h>
#include <time.h>

#define BIG     50000
#define KEYS    100
#define PER_KEY 10
#define SMALL   (KEYS * PER_KEY)
#define WORKERS 4
#define THREADS 4
#define LIMIT   2
#define BAR_MS  2000 /* the bar */
#define ID_BIG  "big-"

struct fair {
    atomic_int small, big;        /* handler starts so far */
    atomic_int big_now, big_most; /* the big key's handlers running now, and at most */
    atomic_int key_now[KEYS];     /* each small key's handlers running now */
    atomic_int key_most;          /* the most of one small key at once */
    int64_t start_us[SMALL];      /* each small task's start, in the order they began */
};

static int64_t
real_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
raise_to(atomic_int *most, int v)
{
    int cur = atomic_load(most);
    while (v > cur && !atomic_compare_exchange_weak(most, &cur, v)) {
    }
}

/* Records the start, and how many of the task's key run at once; done at once. */
static void
handler(const dq_task *t, dq_result *res, void *arg)
{
    struct fair *s = arg;
    int64_t now = real_us();

    res->outcome = DQ_DONE;
    if (strncmp(t->id, ID_BIG, strlen(ID_BIG)) == 0) {
        raise_to(&s->big_most, atomic_fetch_add(&s->big_now, 1) + 1);
        atomic_fetch_add(&s->big, 1);
        atomic_fetch_sub(&s->big_now, 1);
        return;
    }
    int k = atoi(t->id + 1); /* "k<key>-<i>" */
    if (k < 0 || k >= KEYS)
        return;
    raise_to(&s->key_most, atomic_fetch_add(&s->key_now[k], 1) + 1);
    int i = atomic_fetch_add(&s->small, 1);
    if (i < SMALL)
        s->start_us[i] = now;
    atomic_fetch_sub(&s->key_now[k], 1);
}

static bool
small_started(void *arg)
{
    return atomic_load(&((struct fair *)arg)->small) >= SMALL;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The server's TIME in microseconds. */
static int64_t
server_us(struct fixture *f)
{
    const char *argv[] = {"TIME"};
    redisReply *r = test_redis_cmd(f->redis, 1, argv);
    int64_t v = 0;

    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        v = atoll(r->element[0]->str) * 1000000 + atoll(r->element[1]->str);
    freeReplyObject(r);
    assert_true(v > 0);
    return v;
}

/* @n tasks of key @key (NULL: none), ids "<prefix><i>", due now, in batches. */
static void
fill(struct fixture *f, const char *key, const char *prefix, int n)
{
    enum { CHUNK = 5000 };
    static char ids[CHUNK][32];
    static dq_enqueue_item it[CHUNK];
    static dq_enqueued out[CHUNK];

    for (int done = 0; done < n;) {
        int m = n - done < CHUNK ? n - done : CHUNK;
        for (int i = 0; i < m; i++) {
            snprintf(ids[i], sizeof ids[i], "%s%d", prefix, done + i);
            memset(&it[i], 0, sizeof it[i]);
            it[i].opts.id = ids[i];
            it[i].opts.key = key;
            it[i].payload = "\x90";
            it[i].payload_len = 1;
        }
        ASSERT_OK(f, dq_enqueue_batch(f->c, f->queue, it, (size_t)m, out, &f->err));
        done += m;
    }
}

/*
 * The bar widens only where the suite runs this executable under a tool that slows the
 * workers themselves: valgrind (.ci/run's valgrind setup, test_slowdown) and ASan
 * (.ci/run's sanitizer build), 3x: measured 1.4 s under valgrind and 0.4 s under ASan
 * on a shared 2-core machine (0.3 to 0.7 s in the normal build). The normal build is
 * held to the 2 s.
 */
static int64_t
bar_ms(void)
{
    int64_t bar = BAR_MS;
#if defined(__SANITIZE_ADDRESS__)
    bar = 3 * BAR_MS;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    bar = 3 * BAR_MS;
#endif
#endif
    return test_slowdown() > 1 ? 3 * BAR_MS : bar;
}

static void
small_keys_start_within_2s_beside_a_50000_backlog(void **state)
{
    struct fixture f;
    struct test_worker w[WORKERS];
    static struct fair s;
    dq_config cfg = {.key_concurrency = LIMIT};
    char key[16];

    memset(&s, 0, sizeof s);
    fixture_open(&f, state, "fair");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    fill(&f, "big", ID_BIG, BIG);
    for (int k = 0; k < KEYS; k++) {
        char prefix[16];
        snprintf(key, sizeof key, "k%d", k);
        snprintf(prefix, sizeof prefix, "k%d-", k);
        fill(&f, key, prefix, PER_KEY);
    }
    int64_t t0 = server_us(&f); /* just after the last small-key task went in */
    dq_worker_opts o = {.concurrency = THREADS};
    for (int i = 0; i < WORKERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "fair-%d", i);
        o.name = name;
        test_worker_start(&w[i], &f, NULL, &o, handler, &s);
    }
    assert_true(wait_until(small_started, &s, (int)(60000 * test_slowdown()),
                           "every small-key task to start"));
    int big_meanwhile = atomic_load(&s.big);
    for (int i = 0; i < WORKERS; i++)
        test_worker_stop(&w[i], false);

    qsort(s.start_us, SMALL, sizeof s.start_us[0], cmp_i64);
    int64_t first = (s.start_us[0] - t0) / 1000,
            p99 = (s.start_us[SMALL * 99 / 100 - 1] - t0) / 1000;
    int64_t last = (s.start_us[SMALL - 1] - t0) / 1000, bar = bar_ms();
    printf("# small keys' starts after the last enqueue: first %lld ms, p99 %lld ms, last %lld "
           "ms (bar %lld ms); the big key started %d meanwhile (%.0f/s)\n",
           (long long)first, (long long)p99, (long long)last, (long long)bar, big_meanwhile,
           last > 0 ? big_meanwhile * 1000.0 / (double)last : 0.0);
    assert_true(p99 <= bar);
    assert_true(last <= bar);
    /* the big key ran meanwhile, at its limit at most; no small key past it either */
    assert_true(big_meanwhile >= 1);
    assert_true(big_meanwhile < 1000); /* it did not go first */
    assert_true(atomic_load(&s.big_most) <= LIMIT);
    assert_true(atomic_load(&s.key_most) <= LIMIT);
    dq_stats st;
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    printf("# parked after the stop: %lld\n", (long long)st.parked);
    assert_true(st.parked > 0 && st.parked <= BIG);
    /* nothing in flight after the stop: every key's count is gone (many acks of one key in
     * one call take it down by all of them at once), and no task was lost or doubled */
    char kin[160];
    snprintf(kin, sizeof kin, "dq:{%s}:kin", f.queue);
    const char *hlen[] = {"HLEN", kin};
    assert_int_equal(st.inflight, 0);
    assert_int_equal(redis_int(&f, 2, hlen), 0);
    assert_int_equal(st.due + st.parked + st.done, BIG + SMALL);
    fixture_close(&f);
}

/*
 * Two acks of one key settled in one call free two slots, and bring back two of its
 * parked tasks: not one for the first ack (the room after it alone) and two more for the
 * second (the room after both), three due tasks for two slots that the next claim would
 * park again.
 */
static void
acks_of_one_key_in_one_call_promote_what_they_free(void **state)
{
    struct fixture f;
    dq_config cfg = {.key_concurrency = LIMIT};
    dq_claimed cl;
    dq_stats st;

    fixture_open(&f, state, "promote");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    fill(&f, "one", "one-", 5);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 5, 30000, "w", &cl, &f.err));
    assert_int_equal(cl.n, LIMIT); /* the other 3 parked */
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.parked, 3);
    assert_int_equal(st.due, 0);
    dq_settle res[LIMIT];
    memset(res, 0, sizeof res);
    for (int i = 0; i < LIMIT; i++) {
        res[i].task = &cl.tasks[i];
        res[i].outcome = DQ_DONE;
    }
    dq_claimed none;
    ASSERT_OK(&f,
              dq_claim_settle(f.c, f.queue, res, LIMIT, 0, 30000, 0, "w", "tester", &none, &f.err));
    for (int i = 0; i < LIMIT; i++)
        assert_int_equal(res[i].rc, DQ_OK);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    printf("# after two acks of key one in one call: %lld due, %lld parked\n", (long long)st.due,
           (long long)st.parked);
    assert_int_equal(st.due, LIMIT);
    assert_int_equal(st.parked, 1);
    dq_claimed_free(&none);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_keys_start_within_2s_beside_a_50000_backlog),
        cmocka_unit_test(acks_of_one_key_in_one_call_promote_what_they_free),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/fair", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
