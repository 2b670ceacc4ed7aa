/* SPDX-License-Identifier: MIT */
/*
 * test_parts_views.c: the operator views that once read partition 0 alone, on a
 * partitioned queue (PROTOCOL.md 14) against a real redis-server (single server,
 * partitions 4): one error group's task list merged newest first, as the failed view;
 * the tasks each worker holds counted and listed in every partition (and by `delayq
 * workers`); a key's parked tasks dropped from every partition with exact totals and
 * one audit entry (and by `delayq drop --key --parked`); the inspector header's backlog
 * from the rollups summed per minute (a partition with history off counts as absent,
 * all off is "off"). On a queue of one partition each sends the calls it sent before,
 * and `delayq stats` reads no holders (MONITOR).
 */
#include "harness/fixture.h"
#include "harness/monitor.h"

#include "harness/cli.h"
#include "lib/parts.h"
#include "tui/model.h"

#define PARTS 4

static const char *const alpha = "alpha broke at step 17";
static const char *const beta = "beta timed out after 9 s";

static void
open_parted(struct fixture *f, void **state, const char *name, const dq_config *extra,
            struct dq_parts *p)
{
    dq_config cfg = extra != NULL ? *extra : (dq_config){0};

    cfg.partitions = PARTS;
    fixture_open(f, state, name);
    ASSERT_OK(f, dq_config_set(f->c, f->queue, &cfg, &f->err));
    ASSERT_OK(f, dq_parts_get(f->c, f->queue, p, &f->err));
    assert_int_equal(p->all, PARTS);
}

/* The partition of caller id @id (the routing hash; PROTOCOL.md 14.3). */
static size_t
part_of(const struct dq_parts *p, const char *id)
{
    return dq_parts_route_id(p, id, strlen(id));
}

/* Enqueues @n tasks "<prefix><i>" (key @key, may be NULL) due now. */
static void
enqueue_ids(struct fixture *f, const char *prefix, int n, const char *key)
{
    for (int i = 0; i < n; i++) {
        char id[32];
        dq_enqueue_opts o = {.key = key};
        dq_enqueued e;
        snprintf(id, sizeof id, "%s%d", prefix, i);
        o.id = id;
        ASSERT_OK(f, dq_enqueue(f->c, f->queue, &o, "{}", 2, &e, &f->err));
    }
}

/* ---- one error group's tasks ------------------------------------------------------- */

/* Enqueues @n tasks "g<i>" and fails each on its partition: alpha for even i, else beta. */
static void
make_failures(struct fixture *f, const struct dq_parts *p, int n)
{
    int failed = 0;

    enqueue_ids(f, "g", n, NULL);
    for (size_t q = 0; q < p->all; q++) {
        dq_claimed cl;
        ASSERT_OK(f, dq_claim(f->c, p->names[q], DQ_CALL_MAX, 60000, "w", &cl, &f->err));
        for (size_t j = 0; j < cl.n; j++) {
            int i = atoi(cl.tasks[j].id + 1);
            ASSERT_OK(
                f, dq_fail(f->c, p->names[q], &cl.tasks[j], i % 2 ? beta : alpha, NULL, &f->err));
            failed++;
        }
        dq_claimed_free(&cl);
    }
    assert_int_equal(failed, n);
}

static void
group_page_merged(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_errors e;
    dq_page all, part, none;
    char gid[DQ_GROUP_ID_MAX + 1] = "", sig[DQ_SIGNATURE_MAX + 1] = "";
    bool from[PARTS] = {false};
    size_t parts_seen = 0;

    open_parted(&f, state, "pv_group", NULL, &p);
    make_failures(&f, &p, 40);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    for (size_t i = 0; i < e.n; i++)
        if (e.groups[i].sample_error != NULL && strstr(e.groups[i].sample_error, "alpha")) {
            snprintf(gid, sizeof gid, "%s", e.groups[i].id);
            snprintf(sig, sizeof sig, "%.*s", (int)e.groups[i].signature_len,
                     e.groups[i].signature);
            assert_int_equal(e.groups[i].count, 20);
        }
    dq_errors_free(&e);
    assert_true(gid[0] != '\0');

    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, gid, 0, 100, &all, &f.err));
    assert_int_equal(all.total, 20);
    assert_int_equal(all.n, 20); /* partition 0's alone before */
    for (size_t i = 0; i < all.n; i++) {
        const dq_task *t = &all.tasks[i];
        assert_int_equal(atoi(t->id + 1) % 2, 0);
        assert_non_null(strstr(t->error, "alpha"));
        if (i > 0) /* newest first, as one queue's list */
            assert_true(all.tasks[i - 1].failed_ms >= t->failed_ms);
        size_t q = part_of(&p, t->id);
        parts_seen += !from[q];
        from[q] = true;
    }
    assert_true(parts_seen >= 2);
    /* an offset walks the same merged order */
    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, gid, 7, 5, &part, &f.err));
    assert_int_equal(part.n, 5);
    assert_int_equal(part.total, 20);
    for (size_t i = 0; i < part.n; i++)
        assert_string_equal(part.tasks[i].id, all.tasks[7 + i].id);
    dq_page_free(&part);
    /* by signature too */
    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, sig, 0, 100, &part, &f.err));
    assert_int_equal(part.n, 20);
    dq_page_free(&part);
    /* a group no partition has: an empty page */
    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, "0123456789abcdef", 0, 10, &none, &f.err));
    assert_int_equal(none.n, 0);
    assert_int_equal(none.total, 0);
    dq_page_free(&none);
    dq_page_free(&all);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* ---- the tasks each worker holds --------------------------------------------------- */

static const dq_worker_info *
worker_named(const dq_workers *ws, const char *name)
{
    for (size_t i = 0; i < ws->n; i++)
        if (strcmp(ws->workers[i].name, name) == 0)
            return &ws->workers[i];
    fail_msg("no worker %s", name);
    return NULL;
}

static void
workers_hold_across_partitions(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_workers ws;
    dq_beat rec = {.host = "h", .version = "x", .pid = 1, .interval_ms = 30000, .concurrency = 64};
    dq_beat_reply br;
    size_t held[2] = {0, 0};
    static const char *const names[2] = {"pw-even", "pw-odd"};
    struct result r = {0};

    open_parted(&f, state, "pv_workers", NULL, &p);
    for (int w = 0; w < 2; w++)
        ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, names[w], DQ_BEAT, &rec, &br, &f.err));
    enqueue_ids(&f, "h", 40, NULL);
    /* the even partitions' tasks go to one worker, the odd ones' to the other */
    for (size_t q = 0; q < p.all; q++) {
        dq_claimed cl;
        ASSERT_OK(&f, dq_claim(f.c, p.names[q], DQ_CALL_MAX, 600000, names[q % 2], &cl, &f.err));
        held[q % 2] += cl.n;
        dq_claimed_free(&cl);
    }
    assert_int_equal(held[0] + held[1], 40);
    assert_true(held[1] > 0); /* (partition 0 alone holds none of pw-odd's) */

    ASSERT_OK(&f, dq_workers_get(f.c, f.queue, DQ_CALL_MAX, 100, &ws, &f.err));
    assert_int_equal(ws.registered, 2);
    assert_int_equal(ws.inflight, 40);
    assert_int_equal(ws.inflight_looked, 40);
    for (int w = 0; w < 2; w++) {
        const dq_worker_info *wi = worker_named(&ws, names[w]);
        assert_int_equal(wi->held, held[w]);
        assert_int_equal(wi->ntasks, held[w]);
        for (size_t j = 0; j < wi->ntasks; j++) {
            assert_int_equal(part_of(&p, wi->tasks[j].id) % 2, (size_t)w);
            assert_true(wi->tasks[j].claimed_ms > 0);
            if (j > 0) /* distinct: each task counted once */
                assert_true(strcmp(wi->tasks[j].id, wi->tasks[j - 1].id) != 0);
        }
    }
    dq_workers_free(&ws);
    /* bounded as on one queue: 3 listed, every one counted */
    ASSERT_OK(&f, dq_workers_get(f.c, f.queue, DQ_CALL_MAX, 3, &ws, &f.err));
    assert_int_equal(worker_named(&ws, names[1])->held, held[1]);
    assert_int_equal(worker_named(&ws, names[1])->ntasks, held[1] < 3 ? held[1] : 3);
    dq_workers_free(&ws);

    /* delayq workers says so */
    const char *argv[] = {"workers", "-q", f.queue, NULL};
    char want[64];
    run(NULL, 0, argv, &r);
    assert_int_equal(r.status, 0);
    snprintf(want, sizeof want, "    holds %zu:", held[1]);
    if (strstr(r.out, want) == NULL)
        fail_msg("delayq workers: no \"%s\" in\n%s", want, r.out);
    result_free(&r);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* ---- a key's parked tasks ---------------------------------------------------------- */

static long long
zcard_of(struct fixture *f, const char *name, const char *which)
{
    char key[200];
    snprintf(key, sizeof key, "dq:{%s}:%s", name, which);
    const char *argv[] = {"ZCARD", key};
    return redis_int(f, 2, argv);
}

/* How many entries of @action @queue's audit log holds; the newest one's detail and
 * result into @last ("detail | result"). */
static size_t
audits(struct fixture *f, const char *queue, const char *action, char *last, size_t size)
{
    dq_audit a;
    size_t n = 0;

    ASSERT_OK(f, dq_audit_get(f->c, queue, DQ_CALL_MAX, &a, &f->err));
    for (size_t i = 0; i < a.n; i++) {
        if (strcmp(a.entries[i].action, action) != 0)
            continue;
        if (n++ == 0 && last != NULL)
            snprintf(last, size, "%s | %s", a.entries[i].detail, a.entries[i].result);
    }
    dq_audit_free(&a);
    return n;
}

static void
drop_parked_across_partitions(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_config one = {.key_concurrency = 1};
    dq_stats st;
    dq_bulk cur = {0};
    char last[512];
    long long acct_parked = 0, other_parked = 0;
    size_t steps = 0;
    struct result r = {0};

    open_parted(&f, state, "pv_parked", &one, &p);
    enqueue_ids(&f, "a", 40, "acct");
    enqueue_ids(&f, "o", 12, "other");
    /* a claim on each partition runs one of each key there and parks the rest */
    for (size_t q = 0; q < p.all; q++) {
        dq_claimed cl;
        char kq[64];
        ASSERT_OK(&f, dq_claim(f.c, p.names[q], DQ_CALL_MAX, 600000, "w", &cl, &f.err));
        dq_claimed_free(&cl);
        snprintf(kq, sizeof kq, "kq:acct");
        acct_parked += zcard_of(&f, p.names[q], kq);
        other_parked += zcard_of(&f, p.names[q], "kq:other");
        if (q > 0 && zcard_of(&f, p.names[q], kq) == 0)
            fail_msg("partition %zu parks none of acct", q);
    }
    assert_true(acct_parked > 0 && other_parked > 0);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.parked, acct_parked + other_parked);

    /* in steps of 3: every partition's, partition 0 last with the one entry */
    while (!cur.done) {
        ASSERT_OK(&f, dq_drop_parked_step(f.c, f.queue, "acct", 3, &cur, &f.err));
        assert_true(++steps < 200);
    }
    assert_true(steps > PARTS);
    assert_int_equal(cur.done_n, acct_parked); /* partition 0's alone before */
    for (size_t q = 0; q < p.all; q++)
        assert_int_equal(zcard_of(&f, p.names[q], "kq:acct"), 0);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.parked, other_parked);
    assert_int_equal(audits(&f, f.queue, "drop-parked", last, sizeof last), 1);
    char want[80];
    snprintf(want, sizeof want, "ok: %lld dropped, finished", acct_parked);
    if (strstr(last, want) == NULL || strstr(last, "parked key=acct; every partition") == NULL)
        fail_msg("audit: %s", last);
    for (size_t q = 1; q < p.all; q++)
        assert_int_equal(audits(&f, p.names[q], "drop-parked", NULL, 0), 0);

    /* delayq drop --key --parked: the same walk, its exact total */
    const char *argv[] = {"drop", "-q", f.queue, "--key", "other", "--parked", NULL};
    run(NULL, 0, argv, &r);
    assert_int_equal(r.status, 0);
    snprintf(want, sizeof want, "dropped %lld parked\n", other_parked);
    assert_string_equal(r.out, want);
    result_free(&r);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &st, &f.err));
    assert_int_equal(st.parked, 0);
    assert_int_equal(audits(&f, f.queue, "drop-parked", NULL, 0), 2);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* ---- a queue of one partition: the calls of before ---------------------------------- */

static void
one_partition_same_calls(void **state)
{
    struct fixture f;
    struct test_redis *srv = *state;
    redisContext *mon;
    dq_config one = {.key_concurrency = 1};
    dq_beat rec = {.host = "h", .version = "x", .pid = 1, .interval_ms = 30000, .concurrency = 4};
    dq_beat_reply br;
    dq_bulk cur = {0};
    dq_claimed cl;
    dq_workers ws;
    dq_page pg;
    char log[65536];

    if (getenv("DELAYQ_SCRIPTS") != NULL) /* EVALSHA's lines name a hash, not a script */
        skip();
    fixture_open(&f, state, "pv_one");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &one, &f.err));
    ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "solo", DQ_BEAT, &rec, &br, &f.err));
    enqueue_ids(&f, "k", 3, "acct");
    enqueue_ids(&f, "u", 2, NULL);
    ASSERT_OK(&f, dq_claim(f.c, f.queue, DQ_CALL_MAX, 600000, "solo", &cl, &f.err));
    assert_int_equal(cl.n, 3); /* one of acct, both unkeyed; two of acct parked */
    for (size_t j = 0; j < cl.n; j++)
        if (cl.tasks[j].id[0] == 'u')
            ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[j], alpha, NULL, &f.err));
    dq_claimed_free(&cl);
    mon = test_monitor_open(srv);

    ASSERT_OK(&f,
              dq_page_group_get(f.c, f.queue, "error: alpha broke at step #", 0, 10, &pg, &f.err));
    assert_int_equal(pg.n, 2);
    dq_page_free(&pg);
    ASSERT_OK(&f, dq_workers_get(f.c, f.queue, DQ_CALL_MAX, 5, &ws, &f.err));
    assert_int_equal(worker_named(&ws, "solo")->held, 1);
    dq_workers_free(&ws);
    while (!cur.done)
        ASSERT_OK(&f, dq_drop_parked_step(f.c, f.queue, "acct", 0, &cur, &f.err));
    assert_int_equal(cur.done_n, 2);
    test_monitor_collect(srv, mon, log, sizeof log);
    /* one page call (the group's: no in-flight page), one workers call, the drop's one
     * step ending with its step (500): no audit argument */
    assert_int_equal(test_monitor_fcalls(log, "page", NULL), 1);
    assert_int_equal(test_monitor_fcalls(log, "workers", NULL), 1);
    assert_int_equal(test_monitor_fcalls(log, "drop", "\"500\""), 1);
    assert_null(strstr(log, "\"off\""));
    fixture_close(&f);
}

/* delayq stats of a partitioned queue: its verdict reads the registry's counts, never
 * the holders, so no in-flight page of any partition (one workers call, as on one queue) */
static void
stats_reads_no_holders(void **state)
{
    struct fixture f;
    struct dq_parts p;
    struct test_redis *srv = *state;
    struct result r = {0};
    redisContext *mon;
    char log[65536];

    if (getenv("DELAYQ_SCRIPTS") != NULL) /* EVALSHA's lines name a hash, not a script */
        skip();
    open_parted(&f, state, "pv_stats", NULL, &p);
    enqueue_ids(&f, "s", 8, NULL);
    mon = test_monitor_open(srv);
    const char *argv[] = {"stats", "-q", f.queue, NULL};
    run(NULL, 0, argv, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "4 on 1 node"));
    result_free(&r);
    test_monitor_collect(srv, mon, log, sizeof log);
    assert_int_equal(test_monitor_fcalls(log, "stats", NULL), PARTS);
    assert_int_equal(test_monitor_fcalls(log, "workers", NULL), 1);
    assert_int_equal(test_monitor_fcalls(log, "page", NULL), 0);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* ---- the header's backlog from the rollups ---------------------------------------- */

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

/* Waits (bounded) until the server's minute has at least @room_ms left. */
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

static void
snapshot_of(struct fixture *f, struct snapshot *s)
{
    size_t offsets[PANE_COUNT] = {0}, limits[PANE_COUNT];

    for (int i = 0; i < PANE_COUNT; i++)
        limits[i] = 1;
    ASSERT_OK(f, model_snapshot(f->c, f->queue, -1, NULL, offsets, limits, false, true, s));
    assert_true(s->asked_history);
}

static void
header_backlog_sums_partitions(void **state)
{
    struct fixture f;
    struct dq_parts p;
    struct snapshot s;
    struct model m;
    dq_enqueue_item it[40];
    dq_enqueued out[40];
    char ids[40][16];
    long long in2 = 0;

    open_parted(&f, state, "pv_spark", NULL, &p);
    memset(it, 0, sizeof it);
    for (int i = 0; i < 40; i++) {
        snprintf(ids[i], sizeof ids[i], "s%d", i);
        it[i].opts.id = ids[i];
        it[i].payload = "{}";
        it[i].payload_len = 2;
        in2 += part_of(&p, ids[i]) == 2;
    }
    assert_true(in2 > 0 && in2 < 40); /* the ids' hash is fixed: so is this */
    /* one call per partition, each opening its minute with its own backlog sample */
    minute_with_room(&f, 20000);
    ASSERT_OK(&f, dq_enqueue_batch(f.c, f.queue, it, 40, out, &f.err));
    for (size_t q = 0; q < p.all; q++)
        assert_true(zcard_of(&f, p.names[q], "sched") > 0);

    snapshot_of(&f, &s);
    assert_int_equal(s.stats.due, 40);
    assert_true(s.nhspark > 0);
    assert_int_equal(s.hspark[s.nhspark - 1], 40); /* partition 0's alone before */
    model_init(&m, f.queue, "test");
    model_apply(&m, &s);
    assert_int_equal(m.spark[m.nspark - 1], 40); /* the live one: the summed due */
    assert_int_equal(m.hspark[m.nhspark - 1], 40);
    model_free(&m);

    /* a partition whose history is off is absent from the sum */
    dq_config off = {.history_minutes = -1};
    ASSERT_OK(&f, dq_config_set(f.c, p.names[2], &off, &f.err));
    snapshot_of(&f, &s);
    assert_true(s.nhspark > 0);
    assert_int_equal(s.hspark[s.nhspark - 1], 40 - in2);
    snapshot_free(&s);
    /* every partition off: "off", as one queue's */
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &off, &f.err));
    snapshot_of(&f, &s);
    assert_int_equal(s.nhspark, 0);
    snapshot_free(&s);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* The cli harness's server (it also finds the delayq command and points DELAYQ_URL at
 * the server), as the fixture's. */
static int
group_setup(void **state)
{
    int rc = cli_group_setup(state);

    *state = &cli_redis;
    return rc;
}

/* dq_history_get (`delayq stats --since`, the History view) of a partitioned queue: each
 * partition's minutes added row by row, so every enqueue and ack of every partition
 * counts; before, partition 0's alone. */
static void
history_sums_partitions(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_history h;
    int64_t enq = 0, done = 0;
    int acked = 0;

    open_parted(&f, state, "pv_hist", NULL, &p);
    enqueue_ids(&f, "h", 40, NULL);
    for (size_t q = 0; q < p.all; q++) {
        dq_claimed cl;
        ASSERT_OK(&f, dq_claim(f.c, p.names[q], DQ_CALL_MAX, 60000, "w", &cl, &f.err));
        assert_true(cl.n > 0); /* the ids' hash is fixed: every partition has some */
        for (size_t j = 0; j < cl.n; j++, acked++)
            ASSERT_OK(&f, dq_ack(f.c, p.names[q], &cl.tasks[j], &f.err));
        dq_claimed_free(&cl);
    }
    assert_int_equal(acked, 40);
    ASSERT_OK(&f, dq_history_get(f.c, f.queue, 10 * 60000LL, 60000, &h, &f.err));
    assert_true(h.n >= 10);
    for (size_t i = 0; i < h.n; i++) {
        enq += h.rows[i].enqueued;
        done += h.rows[i].done;
    }
    assert_int_equal(enq, 40);
    assert_int_equal(done, 40);
    dq_history_free(&h);
    dq_parts_free(&p);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_page_merged),
        cmocka_unit_test(workers_hold_across_partitions),
        cmocka_unit_test(drop_parked_across_partitions),
        cmocka_unit_test(one_partition_same_calls),
        cmocka_unit_test(stats_reads_no_holders),
        cmocka_unit_test(header_backlog_sums_partitions),
        cmocka_unit_test(history_sums_partitions),
    };
    return cmocka_run_group_tests(tests, group_setup, cli_group_teardown);
}
