/* SPDX-License-Identifier: MIT */
/*
 * test_rollup.c: history's per-minute rollups (docs/PROTOCOL.md 13) against a real
 * redis-server: what enqueue, claim, ack, retry, fail, reap, requeue, drop, cancel and
 * the settles inside a claim add to the minute's hash, exactly; the run-time buckets of
 * runs of known length; one HINCRBY per field per call however many tasks it settles;
 * the expiry and the backlog sample of the call that opens a minute, and heartbeat's;
 * nothing at all with history_minutes 0; the history reader (5.33, called raw through
 * the script registry, so FCALL_RO here and EVALSHA_RO in integ.rollup_evalsha); the
 * all-time histogram at the end of the stats reply; and the memory a full day takes.
 */
#include "harness/fixture.h"

#include <hiredis/hiredis.h>

#include "lib/scripts.h"

/* The fields of a minute, in the reader's row order (after at_ms). */
static const char *const FIELDS[] = {"e",  "s",  "d",  "r",   "f",   "x",  "q",  "p",
                                     "l",  "h0", "h1", "h2",  "h3",  "h4", "h5", "h6",
                                     "h7", "h8", "h9", "h10", "h11", "t",  "b",  "a"};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

static int64_t
server_ms(struct fixture *f)
{
    const char *argv[] = {"TIME"};
    redisReply *r = test_redis_cmd(f->redis, 1, argv);
    int64_t v;

    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    v = atoll(r->element[0]->str) * 1000 + atoll(r->element[1]->str) / 1000;
    freeReplyObject(r);
    return v;
}

/* Waits (bounded) until the server's minute has at least @room_ms left, so a scenario
 * that takes less than that writes one minute's hash. */
static void
minute_with_room(struct fixture *f, int64_t room_ms)
{
    int64_t deadline = test_mono_ms() + 70000;

    while (60000 - server_ms(f) % 60000 < room_ms) {
        if (test_mono_ms() > deadline)
            fail_msg("the server's minute did not turn within 70 s");
        test_nap_ms(50);
    }
}

/* Waits (bounded) until server time reaches @at_ms: a handler that ran this long. */
static void
until_server_ms(struct fixture *f, int64_t at_ms)
{
    int64_t deadline = test_mono_ms() + 10000;

    while (server_ms(f) < at_ms) {
        if (test_mono_ms() > deadline)
            fail_msg("server time did not reach %lld within 10 s", (long long)at_ms);
        test_nap_ms(5);
    }
}

/* The queue's rollup keys (a test-only KEYS), into @keys (at most @max); their count. */
static size_t
roll_keys(struct fixture *f, char keys[][200], size_t max)
{
    char pattern[200];
    const char *argv[] = {"KEYS", pattern};
    redisReply *r;
    size_t n = 0;

    snprintf(pattern, sizeof pattern, "dq:{%s}:roll:*", f->queue);
    r = test_redis_cmd(f->redis, 2, argv);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    for (size_t i = 0; i < r->elements && n < max; i++)
        snprintf(keys[n++], 200, "%s", r->element[i]->str);
    n = r->elements;
    freeReplyObject(r);
    return n;
}

/* Field @name of hash @key as an integer; -1 when absent. */
static long long
hget(struct fixture *f, const char *key, const char *name)
{
    const char *argv[] = {"HGET", key, name};
    redisReply *r = test_redis_cmd(f->redis, 3, argv);
    long long v = -1;

    assert_non_null(r);
    if (r->type == REDIS_REPLY_STRING)
        v = atoll(r->str);
    freeReplyObject(r);
    return v;
}

/* The minute's one hash (the scenario fits in a minute), with its fields by name. */
struct minute {
    char key[200];
    long long minute;
    long long v[NFIELDS]; /* 0 for an absent counter; -1 for an absent b or a */
    long long nfields;    /* HLEN */
};

static void
one_minute(struct fixture *f, struct minute *m)
{
    char keys[4][200];
    size_t n = roll_keys(f, keys, 4);

    if (n != 1)
        fail_msg("%zu rollup keys, wanted the one of this minute", n);
    snprintf(m->key, sizeof m->key, "%s", keys[0]);
    m->minute = atoll(strrchr(m->key, ':') + 1);
    for (size_t i = 0; i < NFIELDS; i++) {
        long long v = hget(f, m->key, FIELDS[i]);
        m->v[i] = v < 0 && i < NFIELDS - 2 ? 0 : v;
    }
    const char *argv[] = {"HLEN", m->key};
    m->nfields = redis_int(f, 2, argv);
}

static long long
field(const struct minute *m, const char *name)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(FIELDS[i], name) == 0)
            return m->v[i];
    fail_msg("no field %s", name);
    return 0;
}

/* The key's expiry (PEXPIRETIME, Redis 7), -1 none, -2 no key. */
static long long
expiry(struct fixture *f, const char *key)
{
    const char *argv[] = {"PEXPIRETIME", key};
    return redis_int(f, 2, argv);
}

/* Calls of Redis command @name so far (INFO commandstats counts the scripts' too). */
static long long
calls_of(struct fixture *f, const char *name)
{
    long long n = test_redis_calls(f->redis, name);

    assert_true(n >= 0);
    return n;
}

static void
config_history(struct fixture *f, int64_t minutes, int64_t backoff_ms)
{
    dq_config c = {.history_minutes = minutes == 0 ? -1 : minutes,
                   .backoff_base_ms = backoff_ms,
                   .backoff_cap_ms = backoff_ms};
    ASSERT_OK(f, dq_config_set(f->c, f->queue, &c, &f->err));
}

static void
enqueue_n(struct fixture *f, size_t n, int64_t delay_ms)
{
    dq_enqueue_item it[64];

    memset(it, 0, sizeof it);
    dq_enqueued out[64];

    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++) {
        it[i].opts.delay_ms = delay_ms;
        it[i].payload = "{}";
        it[i].payload_len = 2;
    }
    ASSERT_OK(f, dq_enqueue_batch(f->c, f->queue, it, n, out, &f->err));
}

static void
claim(struct fixture *f, unsigned n, int64_t lease_ms, dq_claimed *cl)
{
    ASSERT_OK(f, dq_claim(f->c, f->queue, n, lease_ms, "w1", cl, &f->err));
    if (cl->n != n)
        fail_msg("claimed %zu, wanted %u", cl->n, n);
}

/* The failed tasks' ids (there are @want), into @ids. */
static void
failed_ids(struct fixture *f, char ids[][64], size_t want)
{
    char k[200];
    const char *argv[] = {"ZRANGE", k, "0", "-1"};
    redisReply *r;

    snprintf(k, sizeof k, "dq:{%s}:failidx", f->queue);
    r = test_redis_cmd(f->redis, 4, argv);
    assert_non_null(r);
    assert_int_equal(r->elements, want);
    for (size_t i = 0; i < want; i++)
        snprintf(ids[i], 64, "%s", r->element[i]->str);
    freeReplyObject(r);
}

/*
 * The whole life in one minute, every count exact: enqueue (batch of 5, one single, one
 * that expires), claim, ack, retry, fail, a lost lease reaped, requeue, drop, and the
 * settles of a claim; runs of ~300 ms (bucket h6, 250..500] and ~1100 ms (h8,
 * 1000..2500]; the backlog sample of the opening enqueue and the expiry it set.
 */
static void
every_count_exact(void **state)
{
    struct fixture f;
    dq_claimed a, b, c2;
    dq_reaped rp;
    dq_retried rt;
    struct minute m;
    size_t n;

    fixture_open(&f, state, "rall");
    config_history(&f, 30, 1);
    minute_with_room(&f, 20000);
    enqueue_n(&f, 5, 0); /* opens the minute: 5 due, the oldest due now */
    one_minute(&f, &m);
    assert_int_equal(field(&m, "b"), 5);
    assert_int_equal(field(&m, "a"), 0);
    assert_int_equal(field(&m, "e"), 5);
    /* the expiry: history_minutes after the minute ends */
    assert_int_equal(expiry(&f, m.key), (m.minute + 1 + 30) * 60000);

    claim(&f, 5, 30000, &a);
    enqueue_str(&f, "{}", 0, NULL, NULL);
    claim(&f, 1, 50, &b); /* its lease runs out: reaped below */
    /* one that expires before any claim reaches it: x and f */
    dq_enqueue_opts xo = {.deadline_ms = 1};
    dq_enqueued xe;
    dq_claimed none;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &xo, "{}", 2, &xe, &f.err));
    until_server_ms(&f, server_ms(&f) + 5);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w1", &none, &f.err));
    assert_int_equal(none.n, 0);
    assert_int_equal(none.to_failed, 1);
    dq_claimed_free(&none);

    /* runs of 300 ms: two acks in one call, a retry, a fail */
    until_server_ms(&f, a.now_ms + 300);
    const dq_task *two[] = {&a.tasks[0], &a.tasks[1]};
    int rcs[2];
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, two, 2, rcs, NULL, &f.err));
    assert_int_equal(rcs[0], DQ_OK);
    assert_int_equal(rcs[1], DQ_OK);
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &a.tasks[2], "again", &rt, &f.err));
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &a.tasks[3], "bad", NULL, &f.err));
    ASSERT_OK(&f, dq_reap(f.c, f.queue, 10, &rp, &f.err));
    assert_int_equal(rp.returned, 1);
    /* a run of 1100 ms */
    until_server_ms(&f, a.now_ms + 1100);
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &a.tasks[4], "bad", NULL, &f.err));

    /* the operator: the expired one dropped, one failure requeued */
    char ids[3][64];
    failed_ids(&f, ids, 3);
    const char *drop_one[] = {xe.id};
    ASSERT_OK(&f, dq_drop(f.c, f.queue, drop_one, 1, &n, &f.err));
    assert_int_equal(n, 1);
    const char *req[] = {a.tasks[3].id};
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, req, 1, 0, &n, &f.err));
    assert_int_equal(n, 1);

    /* a claim that settles: the retried, the reaped and the requeued task run 300 ms,
     * then one claim acks two and fails one */
    claim(&f, 3, 30000, &c2);
    until_server_ms(&f, c2.now_ms + 300);
    dq_settle st[3] = {{.task = &c2.tasks[0], .outcome = DQ_DONE},
                       {.task = &c2.tasks[1], .outcome = DQ_DONE},
                       {.task = &c2.tasks[2], .outcome = DQ_FAILED, .message = "bad"}};
    ASSERT_OK(&f, dq_claim_settle(f.c, f.queue, st, 3, 0, 30000, 0, "w1", NULL, &none, &f.err));
    for (int i = 0; i < 3; i++)
        assert_int_equal(st[i].rc, DQ_OK);
    dq_claimed_free(&none);

    one_minute(&f, &m);
    assert_int_equal(field(&m, "e"), 7); /* 5 + 1 + the expiring one */
    assert_int_equal(field(&m, "s"), 5 + 1 + 3);
    assert_int_equal(field(&m, "d"), 2 + 2);
    assert_int_equal(field(&m, "r"), 1 + 1);         /* the retry, the reaped lease */
    assert_int_equal(field(&m, "f"), 1 + 1 + 1 + 1); /* expired, two fails, the settle's */
    assert_int_equal(field(&m, "x"), 1);
    assert_int_equal(field(&m, "q"), 1);
    assert_int_equal(field(&m, "p"), 1);
    assert_int_equal(field(&m, "l"), 1);
    /* runs: 2 acks + retry + fail + the settle's 3 at ~300 ms, one fail at ~1100 ms */
    assert_int_equal(field(&m, "h6"), 7);
    assert_int_equal(field(&m, "h8"), 1);
    long long runs = 0;
    for (int i = 0; i < 12; i++) {
        char h[8];
        snprintf(h, sizeof h, "h%d", i);
        runs += field(&m, h);
    }
    assert_int_equal(runs, 8);
    long long t = field(&m, "t");
    if (t < 7 * 300 + 1100 || t > 7 * 500 + 2500)
        fail_msg("run-time sum %lld ms, wanted 3200..6000", t);
    /* the sample is the opening one's, kept */
    assert_int_equal(field(&m, "b"), 5);
    /* 9 counters + 2 buckets + t + b + a + the marker o: only nonzero fields are written */
    assert_int_equal(m.nfields, 9 + 2 + 1 + 2 + 1);
    if (hget(&f, m.key, "o") < 1)
        fail_msg("no marker o in %s", m.key);
    /* the all-time histogram in the stats hash */
    char sk[200];
    snprintf(sk, sizeof sk, "dq:{%s}:stats", f.queue);
    assert_int_equal(hget(&f, sk, "h6"), 7);
    assert_int_equal(hget(&f, sk, "h8"), 1);
    assert_int_equal(hget(&f, sk, "t"), t);
    dq_claimed_free(&a);
    dq_claimed_free(&b);
    dq_claimed_free(&c2);
    fixture_close(&f);
}

/* A batch adds once: acking 1 task and acking 40 in one call cost the same HINCRBYs
 * (stats done, the tally's, and the minute's d, bucket and t, with the stats hash's
 * bucket and t: 7), and a claim of 40 one HINCRBY (s). Each is measured after a call
 * that made those fields this minute (a field's first write also bumps the marker o). */
static void
batch_written_once(void **state)
{
    struct fixture f;
    dq_claimed warm, cl, two;
    const dq_task *ts[40];
    int rcs[40];

    fixture_open(&f, state, "rbatch");
    config_history(&f, 60, 1000);
    minute_with_room(&f, 15000);
    enqueue_n(&f, 43, 0);
    claim(&f, 1, 30000, &warm);
    long long h0 = calls_of(&f, "hincrby");
    claim(&f, 40, 30000, &cl);
    assert_int_equal(calls_of(&f, "hincrby") - h0, 1); /* s */
    claim(&f, 2, 30000, &two);
    /* every run ~300 ms: all in bucket h6 (250..500] */
    until_server_ms(&f, two.now_ms + 300);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &warm.tasks[0], &f.err)); /* makes d, h6, t */
    for (size_t i = 0; i < 40; i++)
        ts[i] = &cl.tasks[i];
    h0 = calls_of(&f, "hincrby");
    ASSERT_OK(&f, dq_ack_many(f.c, f.queue, ts, 40, rcs, NULL, &f.err));
    long long many = calls_of(&f, "hincrby") - h0;
    h0 = calls_of(&f, "hincrby");
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &two.tasks[0], &f.err));
    long long single = calls_of(&f, "hincrby") - h0;
    if (many != 7 || single != 7)
        fail_msg("HINCRBYs: %lld for an ack of 40, %lld for an ack of 1; wanted 7 each", many,
                 single);
    struct minute m;
    one_minute(&f, &m);
    assert_int_equal(field(&m, "d"), 42);
    assert_int_equal(field(&m, "s"), 43);
    assert_int_equal(field(&m, "h6"), 42);
    dq_claimed_free(&warm);
    dq_claimed_free(&cl);
    dq_claimed_free(&two);
    fixture_close(&f);
}

/* history_minutes 0: enqueue, claim, ack, retry, fail, reap, requeue, drop write no
 * rollup at all, and no run time into the stats hash. */
static void
off_writes_nothing(void **state)
{
    struct fixture f;
    dq_claimed cl, lost;
    dq_reaped rp;
    dq_retried rt;
    char keys[2][200], sk[200];
    size_t n;

    fixture_open(&f, state, "roff");
    config_history(&f, 0, 1);
    dq_config got;
    ASSERT_OK(&f, dq_config_get(f.c, f.queue, &got, &f.err));
    assert_int_equal(got.history_minutes, 0);
    enqueue_n(&f, 5, 0);
    claim(&f, 4, 30000, &cl);
    claim(&f, 1, 20, &lost);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    ASSERT_OK(&f, dq_retry(f.c, f.queue, &cl.tasks[1], "again", &rt, &f.err));
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[2], "bad", NULL, &f.err));
    ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[3], "bad", NULL, &f.err));
    until_server_ms(&f, lost.now_ms + 30);
    ASSERT_OK(&f, dq_reap(f.c, f.queue, 10, &rp, &f.err));
    assert_int_equal(rp.returned, 1);
    const char *req[] = {cl.tasks[2].id};
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, req, 1, 0, &n, &f.err));
    const char *drop[] = {cl.tasks[3].id};
    ASSERT_OK(&f, dq_drop(f.c, f.queue, drop, 1, &n, &f.err));
    assert_int_equal(n, 1);
    dq_beat_reply br;
    dq_beat rec = {.host = "h", .interval_ms = 1000};
    ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "w1", DQ_BEAT_CHECK, &rec, &br, &f.err));
    assert_int_equal(roll_keys(&f, keys, 2), 0);
    snprintf(sk, sizeof sk, "dq:{%s}:stats", f.queue);
    assert_int_equal(hget(&f, sk, "t"), -1);
    assert_int_equal(hget(&f, sk, "done"), 1); /* the counters as ever */
    dq_claimed_free(&cl);
    dq_claimed_free(&lost);
    fixture_close(&f);
}

/* A minute no call has opened (its hash gone, as at a new minute of a paused queue):
 * heartbeat's look opens it with the backlog sample and the expiry; with nothing due it
 * opens nothing. */
static void
heartbeat_samples_idle_backlog(void **state)
{
    struct fixture f;
    char keys[2][200];
    dq_beat_reply br;
    dq_beat rec = {.host = "h", .interval_ms = 1000};

    fixture_open(&f, state, "rbeat");
    config_history(&f, 1440, 1000);
    minute_with_room(&f, 10000);
    ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "w1", DQ_BEAT_CHECK, &rec, &br, &f.err));
    assert_int_equal(roll_keys(&f, keys, 2), 0); /* nothing due: no sample */
    enqueue_n(&f, 3, 0);
    int64_t due = server_ms(&f);
    assert_int_equal(roll_keys(&f, keys, 2), 1);
    const char *del[] = {"DEL", keys[0]};
    assert_int_equal(redis_int(&f, 2, del), 1);
    until_server_ms(&f, due + 20);
    ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "w1", DQ_BEAT_LOOK, NULL, &br, &f.err));
    struct minute m;
    one_minute(&f, &m);
    assert_int_equal(field(&m, "b"), 3);
    if (field(&m, "a") < 20)
        fail_msg("oldest due age %lld ms, wanted >= 20", field(&m, "a"));
    assert_int_equal(m.nfields, 3); /* b, a and the marker o */
    assert_int_equal(expiry(&f, m.key), (m.minute + 1 + 1440) * 60000);
    fixture_close(&f);
}

/* The reader's reply, copied. */
struct hist_reply {
    long long v[5 + 25 * 64];
    size_t n;
};

static int
copy_ints(const struct redisReply *r, void *out, dq_err *err)
{
    struct hist_reply *h = out;

    (void)err;
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_true(r->elements <= sizeof h->v / sizeof h->v[0]);
    for (size_t i = 0; i < r->elements; i++) {
        assert_int_equal(r->element[i]->type, REDIS_REPLY_INTEGER);
        h->v[i] = r->element[i]->integer;
    }
    h->n = r->elements;
    return DQ_OK;
}

static int
history(struct fixture *f, const char *span, const char *step, struct hist_reply *h)
{
    struct dq_args a;
    int rc;

    dq_args_init(&a);
    dq_args_str(&a, span);
    dq_args_str(&a, step);
    rc = dq_scripts_run(f->c, DQ_SCRIPT_HISTORY, f->queue, &a, copy_ints, h, &f->err);
    dq_args_free(&a);
    return rc;
}

/* history.lua over hashes written by hand: rows oldest first, aligned steps (the first
 * partial), sums over a step's minutes, the latest sample, -1 for none, zeros for steps
 * with no hash, whole numbers only; bad spans named. */
static void
reader_sums_steps(void **state)
{
    struct fixture f;
    struct hist_reply h;
    char k[200];

    fixture_open(&f, state, "rread");
    config_history(&f, 120, 1000);
    minute_with_room(&f, 5000);
    long long now_min = server_ms(&f) / 60000;
    /* minutes now-5 .. now: now-4 and now-3 have counts, now-4 a sample, now-1 junk */
    snprintf(k, sizeof k, "dq:{%s}:roll:%lld", f.queue, now_min - 4);
    const char *m4[] = {"HSET", k, "d", "3", "h2", "3", "t", "60", "b", "7", "a", "900"};
    redis_int(&f, 12, m4);
    snprintf(k, sizeof k, "dq:{%s}:roll:%lld", f.queue, now_min - 3);
    const char *m3[] = {"HSET", k, "d", "2", "f", "1", "h11", "3", "t", "40000"};
    redis_int(&f, 10, m3);
    snprintf(k, sizeof k, "dq:{%s}:roll:%lld", f.queue, now_min - 1);
    const char *m1[] = {"HSET", k, "d", "junk", "e", "1.5", "b", "x"};
    redis_int(&f, 8, m1);

    ASSERT_OK(&f, history(&f, "6", "1", &h));
    assert_int_equal(h.v[0], 1);
    assert_int_equal(h.v[1] / 60000, now_min);
    assert_int_equal(h.v[2], 120);
    assert_int_equal(h.v[3], 60000);
    assert_int_equal(h.v[4], 6);
    assert_int_equal(h.n, 5 + 6 * 25);
    const long long *r4 = &h.v[5 + 1 * 25]; /* now-4 */
    assert_int_equal(r4[0], (now_min - 4) * 60000);
    assert_int_equal(r4[3], 3);  /* d */
    assert_int_equal(r4[12], 3); /* h2 */
    assert_int_equal(r4[22], 60);
    assert_int_equal(r4[23], 7);
    assert_int_equal(r4[24], 900);
    const long long *r1 = &h.v[5 + 4 * 25]; /* now-1: junk counts as absent */
    assert_int_equal(r1[3], 0);
    assert_int_equal(r1[1], 0);
    assert_int_equal(r1[23], -1);
    assert_int_equal(r1[24], -1);

    /* steps of 4 aligned on minute % 4 == 0: the first partial, rows oldest first */
    ASSERT_OK(&f, history(&f, "6", "4", &h));
    long long first = now_min - 5, s0 = first / 4, nrows = now_min / 4 - s0 + 1;
    assert_int_equal(h.v[3], 240000);
    assert_int_equal(h.v[4], nrows);
    long long d = 0, f1 = 0, h11 = 0, b = -2;
    for (long long i = 0; i < nrows; i++) {
        const long long *row = &h.v[5 + i * 25];
        assert_int_equal(row[0], (s0 + i) * 4 * 60000);
        d += row[3];
        f1 += row[5];
        h11 += row[21];
        if (row[23] >= 0)
            b = row[23];
    }
    assert_int_equal(d, 5);
    assert_int_equal(f1, 1);
    assert_int_equal(h11, 3);
    assert_int_equal(b, 7);

    assert_int_equal(history(&f, "0", "1", &h), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "span_min"));
    assert_int_equal(history(&f, "10", "1441", &h), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "step_min"));
    fixture_close(&f);
}

/* The stats reply's all-time buckets and their sum (13 integers, elements 47..59; the
 * partition map's size follows, PROTOCOL.md 5.15). */
static int
stats_tail(const struct redisReply *r, void *out, dq_err *err)
{
    long long *v = out;

    (void)err;
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_true(r->elements >= 46 + 13);
    for (size_t i = 0; i < 13; i++)
        v[i] = r->element[46 + i]->integer;
    v[13] = (long long)r->elements;
    return DQ_OK;
}

static void
stats_reply_has_histogram(void **state)
{
    struct fixture f;
    dq_claimed cl;
    struct dq_args a;
    long long v[14];
    dq_stats s;

    fixture_open(&f, state, "rstats");
    config_history(&f, 60, 1000);
    enqueue_n(&f, 2, 0);
    claim(&f, 2, 30000, &cl);
    until_server_ms(&f, cl.now_ms + 300);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[1], &f.err));
    dq_args_init(&a);
    ASSERT_OK(&f, dq_scripts_run(f.c, DQ_SCRIPT_STATS, f.queue, &a, stats_tail, v, &f.err));
    dq_args_free(&a);
    assert_int_equal(v[13], 46 + 13 + 1);
    assert_int_equal(v[6], 2); /* h6 */
    long long runs = 0;
    for (int i = 0; i < 12; i++)
        runs += v[i];
    assert_int_equal(runs, 2);
    assert_true(v[12] >= 600 && v[12] <= 1000);
    /* the C reader still reads the reply */
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.done, 2);
    dq_claimed_free(&cl);
    fixture_close(&f);
}

/*
 * Memory per queue per day (PROTOCOL.md 13 quotes these figures): 1440 minute hashes
 * with every field set at realistic magnitudes and their expiries, as the scripts
 * leave them; MEMORY USAGE of each, summed, and the INFO used_memory delta. Printed, and
 * bounded so that a change of layout that doubles it fails here.
 */
static void
memory_per_day(void **state)
{
    struct fixture f;
    redisContext *rc;
    long long m0, m1, usage = 0;
    int64_t minute;

    fixture_open(&f, state, "rmem");
    rc = redisConnect("127.0.0.1", f.redis->port);
    assert_non_null(rc);
    assert_int_equal(rc->err, 0);
    minute = server_ms(&f) / 60000;
    redisReply *r = redisCommand(rc, "INFO memory");
    m0 = atoll(strstr(r->str, "used_memory:") + 12);
    freeReplyObject(r);
    for (int i = 0; i < 1440; i++) {
        long long mm = minute - 1439 + i;
        char key[200];
        snprintf(key, sizeof key, "dq:{%s}:roll:%lld", f.queue, mm);
        r = redisCommand(rc,
                         "HSET %s e %d s 6000 d 5800 r 150 f 50 x 3 q 20 p 5 l 2 h0 100 h1 137 "
                         "h2 174 h3 211 h4 248 h5 285 h6 322 h7 359 h8 396 h9 433 h10 470 "
                         "h11 507 t 123456789 b 1500 a 45000 o 3",
                         key, 6000 + i % 100);
        assert_int_equal(r->integer, 25);
        freeReplyObject(r);
        r = redisCommand(rc, "PEXPIREAT %s %lld", key, (mm + 1 + 1440) * 60000);
        freeReplyObject(r);
    }
    r = redisCommand(rc, "INFO memory");
    m1 = atoll(strstr(r->str, "used_memory:") + 12);
    freeReplyObject(r);
    for (int i = 0; i < 1440; i++) {
        r = redisCommand(rc, "MEMORY USAGE dq:{%s}:roll:%lld", f.queue,
                         (long long)(minute - 1439 + i));
        assert_int_equal(r->type, REDIS_REPLY_INTEGER);
        usage += r->integer;
        freeReplyObject(r);
    }
    redisFree(rc);
    print_message("# rollups, one queue, one day (1440 minutes, all 25 fields): MEMORY USAGE "
                  "%lld bytes (%lld a minute), used_memory delta %lld bytes (%lld a minute)\n",
                  usage, usage / 1440, m1 - m0, (m1 - m0) / 1440);
    if (usage > 1440 * 400 || m1 - m0 > 1440 * 600)
        fail_msg("rollups take %lld (MEMORY USAGE) / %lld (used_memory) bytes a day", usage,
                 m1 - m0);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_count_exact),  cmocka_unit_test(batch_written_once),
        cmocka_unit_test(off_writes_nothing), cmocka_unit_test(heartbeat_samples_idle_backlog),
        cmocka_unit_test(reader_sums_steps),  cmocka_unit_test(stats_reply_has_histogram),
        cmocka_unit_test(memory_per_day),
    };
    return cmocka_run_group_tests(tests, fixture_group_setup, fixture_group_teardown);
}
