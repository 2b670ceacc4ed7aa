/* SPDX-License-Identifier: MIT */
/*
 * test_parts.c: partitioned queues against a real redis-server (single server): the map
 * dq:{Q}:parts that config writes (names, n, seq spans, config copied, the registry
 * holding only Q), partitions 1 writing nothing, shrink and grow again, a second
 * client's cached map catching up within about a second, and maps delayq never wrote.
 */
#include "harness/fixture.h"

#include "lib/import.h"
#include "lib/parts.h"

static long long
zcard(struct fixture *f, const char *key)
{
    const char *argv[] = {"ZCARD", key};
    return redis_int(f, 2, argv);
}

/* ZCARD of partition @name's scheduled set. */
static long long
sched_of(struct fixture *f, const char *name)
{
    char key[200];
    snprintf(key, sizeof key, "dq:{%s}:sched", name);
    return zcard(f, key);
}

/* Whether caller id @id is scheduled in partition @name (its id index). */
static bool
id_in(struct fixture *f, const char *name, const char *id)
{
    char key[200];
    snprintf(key, sizeof key, "dq:{%s}:ids", name);
    const char *argv[] = {"HEXISTS", key, id};
    return redis_int(f, 3, argv) == 1;
}

static char *
hget(struct fixture *f, const char *key, const char *field)
{
    const char *argv[] = {"HGET", key, field};
    redisReply *r = test_redis_cmd(f->redis, 3, argv);
    char *s = NULL;

    assert_non_null(r);
    if (r->type == REDIS_REPLY_STRING)
        s = strdup(r->str);
    freeReplyObject(r);
    return s;
}

static void
expect_hget(struct fixture *f, const char *key, const char *field, const char *want)
{
    char *got = hget(f, key, field);

    if (want == NULL) {
        if (got != NULL)
            fail_msg("HGET %s %s: \"%s\"; expected none", key, field, got);
        return;
    }
    if (got == NULL || strcmp(got, want) != 0)
        fail_msg("HGET %s %s: \"%s\"; expected \"%s\"", key, field, got ? got : "(nil)", want);
    free(got);
}

static long long
key_exists(struct fixture *f, const char *key)
{
    const char *argv[] = {"EXISTS", key};
    return redis_int(f, 2, argv);
}

static void
set_partitions(struct fixture *f, int64_t n)
{
    dq_config cfg = {.partitions = n};
    ASSERT_OK(f, dq_config_set(f->c, f->queue, &cfg, &f->err));
}

/* partitions 1 on a queue without a map writes no key of its own: today's layout */
static void
one_partition_writes_nothing(void **state)
{
    struct fixture f;
    char key[160];
    dq_config got;
    struct dq_parts p;

    fixture_open(&f, state, "one");
    enqueue_str(&f, "x", 0, NULL, NULL);
    set_partitions(&f, 1);
    snprintf(key, sizeof key, "dq:{%s}:parts", f.queue);
    assert_int_equal(key_exists(&f, key), 0);
    ASSERT_OK(&f, dq_config_get(f.c, f.queue, &got, &f.err));
    assert_int_equal(got.partitions, 1);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    assert_int_equal(p.n, 1);
    assert_int_equal(p.all, 1);
    assert_string_equal(p.names[0], f.queue);
    dq_parts_free(&p);
    fixture_close(&f);
}

static void
map_names_seq_config_registry(void **state)
{
    struct fixture f;
    char key[200], name[160], want[64];
    dq_config cfg = {.max_attempts = 7, .failed_retention = 1234}, got;
    struct dq_parts p;

    fixture_open(&f, state, "four");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    set_partitions(&f, 4);
    snprintf(key, sizeof key, "dq:{%s}:parts", f.queue);
    expect_hget(&f, key, "n", "4");
    for (int i = 1; i < 4; i++) {
        char field[8];
        snprintf(field, sizeof field, "%d", i);
        snprintf(name, sizeof name, "%s~%d.0", f.queue, i); /* one server: salt 0 */
        expect_hget(&f, key, field, name);
        /* the partition's generated ids start at i * DQ_PART_SEQ_SPAN */
        snprintf(key, sizeof key, "dq:{%s}:seq", name);
        {
            const char *argv[] = {"GET", key};
            redisReply *r = test_redis_cmd(f.redis, 2, argv);
            assert_non_null(r);
            snprintf(want, sizeof want, "%lld", (long long)i * DQ_PART_SEQ_SPAN);
            assert_int_equal(r->type, REDIS_REPLY_STRING);
            assert_string_equal(r->str, want);
            freeReplyObject(r);
        }
        /* the queue's config, copied */
        snprintf(key, sizeof key, "dq:{%s}:config", name);
        expect_hget(&f, key, "max_attempts", "7");
        expect_hget(&f, key, "failed_retention", "1234");
        snprintf(key, sizeof key, "dq:{%s}:parts", f.queue);
    }
    expect_hget(&f, key, "4", NULL);
    ASSERT_OK(&f, dq_config_get(f.c, f.queue, &got, &f.err));
    assert_int_equal(got.partitions, 4);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    assert_int_equal(p.n, 4);
    assert_int_equal(p.all, 4);
    assert_string_equal(p.names[0], f.queue);
    snprintf(name, sizeof name, "%s~3.0", f.queue);
    assert_string_equal(p.names[3], name);
    dq_parts_free(&p);
    /* only the queue is registered, never a partition */
    {
        const char *argv[] = {"SISMEMBER", "dq:queues", f.queue};
        assert_int_equal(redis_int(&f, 3, argv), 1);
        const char *argv2[] = {"SISMEMBER", "dq:queues", name};
        assert_int_equal(redis_int(&f, 3, argv2), 0);
    }
    /* a later change reaches every partition */
    cfg = (dq_config){.max_attempts = 9};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    for (int i = 1; i < 4; i++) {
        snprintf(key, sizeof key, "dq:{%s~%d.0}:config", f.queue, i);
        expect_hget(&f, key, "max_attempts", "9");
    }
    fixture_close(&f);
}

static void
shrink_keeps_names_and_grows_again(void **state)
{
    struct fixture f;
    char key[160], name[160];
    struct dq_parts p;

    fixture_open(&f, state, "shrink");
    set_partitions(&f, 4);
    set_partitions(&f, 2);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    assert_int_equal(p.n, 2);
    assert_int_equal(p.all, 4); /* 2 and 3 drain; still in the map */
    dq_parts_free(&p);
    /* back to 1: the map stays (its partitions may hold tasks), n is 1 */
    set_partitions(&f, 1);
    snprintf(key, sizeof key, "dq:{%s}:parts", f.queue);
    expect_hget(&f, key, "n", "1");
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    assert_int_equal(p.n, 1);
    assert_int_equal(p.all, 4);
    dq_parts_free(&p);
    /* growing past what exists names only the new ones and keeps the old names */
    set_partitions(&f, 6);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    assert_int_equal(p.n, 6);
    assert_int_equal(p.all, 6);
    snprintf(name, sizeof name, "%s~5.0", f.queue);
    assert_string_equal(p.names[5], name);
    dq_parts_free(&p);
    fixture_close(&f);
}

struct seen_n {
    struct fixture *f;
    size_t want;
};

static bool
map_has_n(void *arg)
{
    struct seen_n *s = arg;
    struct dq_parts p;
    bool ok;

    if (dq_parts_get(s->f->c, s->f->queue, &p, &s->f->err) != DQ_OK)
        return false;
    ok = p.n == s->want;
    dq_parts_free(&p);
    return ok;
}

/* a second client's cached map follows a resize within about a second */
static void
cache_catches_up(void **state)
{
    struct fixture f, g;
    struct dq_parts p;
    struct seen_n s = {&f, 3};
    int64_t t0;

    fixture_open(&f, state, "cache");
    fixture_open(&g, state, "cache");
    set_partitions(&f, 2);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    assert_int_equal(p.n, 2);
    dq_parts_free(&p);
    t0 = test_mono_ms();
    set_partitions(&g, 3);
    /* still the cached map right after (no read per call) ... */
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    if (test_mono_ms() - t0 < DQ_PARTS_REFRESH_MS / 2)
        assert_int_equal(p.n, 2);
    dq_parts_free(&p);
    /* ... and the new one within the refresh interval */
    assert_true(wait_until(map_has_n, &s, 3 * DQ_PARTS_REFRESH_MS, "the new map"));
    assert_true(test_mono_ms() - t0 <= 3 * DQ_PARTS_REFRESH_MS);
    fixture_close(&g);
    fixture_close(&f);
}

static void
bad_values_and_maps(void **state)
{
    struct fixture f;
    dq_config cfg = {.partitions = 257};
    struct dq_parts p;
    char key[160];

    fixture_open(&f, state, "bad");
    assert_int_equal(dq_config_set(f.c, f.queue, &cfg, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "partitions"));
    assert_non_null(strstr(f.err.msg, "1..256"));
    cfg.partitions = -3;
    assert_int_equal(dq_config_set(f.c, f.queue, &cfg, &f.err), DQ_EINVAL);
    snprintf(key, sizeof key, "dq:{%s}:parts", f.queue);
    assert_int_equal(key_exists(&f, key), 0);
    /* a map with a gap, or a name that is not this queue's partition: refused, not used */
    {
        char other[160];
        snprintf(other, sizeof other, "%s~1.0", f.queue);
        const char *argv[] = {"HSET", key, "n", "3", "1", other, "2", "elsewhere~2.0"};
        redisReply *r = test_redis_cmd(f.redis, 8, argv);
        freeReplyObject(r);
    }
    assert_int_equal(dq_parts_get(f.c, f.queue, &p, &f.err), DQ_EPROTO);
    assert_non_null(strstr(f.err.msg, "is not a partition of"));
    {
        const char *argv[] = {"HDEL", key, "2"};
        redisReply *r = test_redis_cmd(f.redis, 3, argv);
        freeReplyObject(r);
    }
    dq_parts_forget(f.c, f.queue);
    assert_int_equal(dq_parts_get(f.c, f.queue, &p, &f.err), DQ_EPROTO);
    assert_non_null(strstr(f.err.msg, "routes 3 partitions"));
    fixture_close(&f);
}

/* generated ids round robin over the partitions, each in its partition's seq span; caller
 * ids go to the partition of their hash, and dedup there */
static void
enqueue_routes(void **state)
{
    struct fixture f;
    struct dq_parts p;
    long long per[4] = {0}, total = 0;
    dq_enqueued e;
    char id[32];

    fixture_open(&f, state, "route");
    set_partitions(&f, 4);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    for (int i = 0; i < 400; i++) {
        enqueue_str(&f, "g", 60000, NULL, &e);
        per[dq_parts_of_seq(&p, strtoll(e.id, NULL, 10))]++;
    }
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(per[i], 100); /* one client's round robin: exactly even */
        assert_int_equal(sched_of(&f, p.names[i]), per[i]);
    }
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "order-%d", i);
        enqueue_str(&f, "c", 60000, id, &e);
        assert_string_equal(e.id, id);
        assert_false(e.duplicate);
        assert_true(id_in(&f, p.names[dq_parts_route_id(&p, id, strlen(id))], id));
    }
    /* --id dedup: the same id goes to the same partition, which has it */
    enqueue_str(&f, "again", 0, "order-7", &e);
    assert_true(e.duplicate);
    for (size_t i = 0; i < 4; i++)
        total += sched_of(&f, p.names[i]);
    assert_int_equal(total, 600);
    dq_parts_free(&p);
    fixture_close(&f);
}

static void
batch_splits_by_partition(void **state)
{
    enum { N = 2500 };
    struct fixture f;
    struct dq_parts p;
    dq_enqueue_item *items = calloc(N, sizeof *items);
    dq_enqueued *out = calloc(N, sizeof *out);
    char(*ids)[32] = calloc(N, sizeof *ids);
    long long total = 0;

    assert_non_null(items);
    assert_non_null(out);
    assert_non_null(ids);
    fixture_open(&f, state, "batch");
    set_partitions(&f, 3);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    for (int i = 0; i < N; i++) {
        items[i].payload = "b";
        items[i].payload_len = 1;
        items[i].opts.delay_ms = 60000;
        if (i % 2 == 1) {
            /* item 2499 repeats item 1's id: the later one is the duplicate */
            snprintf(ids[i], sizeof ids[i], "b-%d", i == N - 1 ? 1 : i);
            items[i].opts.id = ids[i];
        }
    }
    ASSERT_OK(&f, dq_enqueue_batch(f.c, f.queue, items, N, out, &f.err));
    for (int i = 0; i < N; i++) {
        if (i % 2 == 1) {
            assert_string_equal(out[i].id, ids[i]);
            assert_int_equal(out[i].duplicate, i == N - 1);
            assert_true(id_in(&f, p.names[dq_parts_route_id(&p, ids[i], strlen(ids[i]))], ids[i]));
        } else {
            assert_true(out[i].id[0] != '\0');
            assert_false(out[i].duplicate);
        }
    }
    for (size_t i = 0; i < 3; i++) {
        long long k = sched_of(&f, p.names[i]);
        assert_true(k > 300); /* every partition has its share */
        total += k;
    }
    assert_int_equal(total, N - 1);
    dq_parts_free(&p);
    free(items);
    free(out);
    free(ids);
    fixture_close(&f);
}

/* a call refused in one partition adds nothing there; the other partitions' calls add
 * theirs, and the error names the item */
static void
batch_error_names_the_item(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_enqueue_item items[30];
    dq_enqueued out[30];
    dq_config cfg = {.max_payload = 10};
    char big[20];
    int added = 0;

    fixture_open(&f, state, "batcherr");
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    set_partitions(&f, 3);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    memset(items, 0, sizeof items);
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 30; i++) {
        items[i].payload = i == 5 ? big : "ok";
        items[i].payload_len = i == 5 ? sizeof big : 2;
    }
    int rc = dq_enqueue_batch(f.c, f.queue, items, 30, out, &f.err);
    assert_int_not_equal(rc, DQ_OK);
    assert_non_null(strstr(f.err.msg, "items[5]"));
    for (int i = 0; i < 30; i++)
        added += out[i].id[0] != '\0';
    assert_true(added >= 20 && added < 30); /* the 10 of item 5's partition: none */
    assert_int_equal(out[5].id[0], '\0');
    long long total = 0;
    for (size_t i = 0; i < 3; i++)
        total += sched_of(&f, p.names[i]);
    assert_int_equal(total, added);
    dq_parts_free(&p);
    fixture_close(&f);
}

static void
import_routes(void **state)
{
    struct fixture f;
    struct dq_parts p;
    struct dq_import_task t[3];
    dq_enqueued out[3];

    fixture_open(&f, state, "import");
    set_partitions(&f, 4);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    memset(t, 0, sizeof t);
    for (int i = 0; i < 3; i++) {
        t[i].kind = DQ_IMPORT_SCHEDULED;
        t[i].max_attempts = 5;
        t[i].enqueued_ms = 1700000000000;
        t[i].deadline_ms = -1;
        t[i].payload = "i";
        t[i].payload_len = 1;
        t[i].due_ms = 4000000000000;
    }
    t[0].seq = 2 * DQ_PART_SEQ_SPAN + 17; /* a generated id of partition 2 */
    t[1].id = "imp-1";
    t[1].id_len = 5;
    t[1].seq = 3;
    t[2].seq = 5; /* partition 0 */
    ASSERT_OK(&f, dq_import(f.c, f.queue, t, 3, false, out, &f.err));
    assert_string_equal(out[0].id, "20000000000017");
    assert_string_equal(out[1].id, "imp-1");
    /* the generated ids by their span, the caller id by its hash */
    size_t r = dq_parts_route_id(&p, "imp-1", 5);
    assert_int_equal(sched_of(&f, p.names[2]), 1 + (r == 2));
    assert_int_equal(sched_of(&f, p.names[0]), 1 + (r == 0));
    assert_true(id_in(&f, p.names[r], "imp-1"));
    dq_parts_free(&p);
    fixture_close(&f);
}

/* a queue of one partition keeps today's keys exactly: nothing named for partitions */
static void
one_partition_keys_are_todays(void **state)
{
    struct fixture f;
    char pattern[160];
    dq_enqueued e;

    fixture_open(&f, state, "todays");
    set_partitions(&f, 1);
    enqueue_str(&f, "t", 0, NULL, &e);
    assert_string_equal(e.id, "1");
    enqueue_str(&f, "t", 60000, "cid", &e);
    snprintf(pattern, sizeof pattern, "dq:{%s*", f.queue);
    const char *argv[] = {"KEYS", pattern};
    redisReply *r = test_redis_cmd(f.redis, 2, argv);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    for (size_t i = 0; i < r->elements; i++) {
        const char *k = r->element[i]->str;
        char want[160];
        snprintf(want, sizeof want, "dq:{%s}:", f.queue);
        if (strncmp(k, want, strlen(want)) != 0 || strstr(k, "parts") != NULL)
            fail_msg("key %s is not one of today's keys of %s", k, f.queue);
    }
    assert_true(r->elements >= 4); /* sched, ids, seq, config at least */
    freeReplyObject(r);
    fixture_close(&f);
}

/* Claims task @id from partition @name (a test reaches into partitions by their names). */
static void
claim_one(struct fixture *f, const char *name, const char *id, dq_claimed *out)
{
    ASSERT_OK(f, dq_claim(f->c, name, 100, 60000, "w1", out, &f->err));
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->tasks[i].id, id) == 0)
            return;
    fail_msg("task %s was not claimed from %s (%zu claimed)", id, name, out->n);
}

static const dq_task *
claimed(const dq_claimed *cl, const char *id)
{
    for (size_t i = 0; i < cl->n; i++)
        if (strcmp(cl->tasks[i].id, id) == 0)
            return &cl->tasks[i];
    return NULL;
}

/* show, find, requeue, drop, reschedule and cancel find a task in any partition, by
 * generated and by caller id, also after a resize moved a caller id's home */
static void
lookups_cover_partitions(void **state)
{
    struct fixture f;
    struct dq_parts p;
    char gen[4][DQ_ID_MAX + 1], cid[8][16];
    dq_enqueued e;
    dq_task t;
    size_t n;

    fixture_open(&f, state, "lookup");
    set_partitions(&f, 2);
    for (int i = 0; i < 8; i++) {
        snprintf(cid[i], sizeof cid[i], "job-%d", i);
        enqueue_str(&f, "c", 0, cid[i], NULL);
    }
    set_partitions(&f, 4); /* grown: some caller ids' home moved (resized) */
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    assert_true(p.resized);
    for (int i = 0; i < 4; i++) {
        enqueue_str(&f, "g", 0, NULL, &e);
        snprintf(gen[i], sizeof gen[i], "%s", e.id);
    }
    /* one generated id in each partition (the client's round robin) */
    bool in[4] = {false};
    for (int i = 0; i < 4; i++)
        in[dq_parts_of_seq(&p, strtoll(gen[i], NULL, 10))] = true;
    for (int i = 0; i < 4; i++)
        assert_true(in[i]);
    for (int i = 0; i < 4; i++) {
        ASSERT_OK(&f, dq_find(f.c, f.queue, gen[i], &t, &f.err));
        assert_int_equal(t.state, DQ_STATE_SCHEDULED);
        dq_task_clear(&t);
    }
    size_t moved_home = 0;
    for (int i = 0; i < 8; i++) {
        ASSERT_OK(&f, dq_find(f.c, f.queue, cid[i], &t, &f.err));
        assert_string_equal(t.id, cid[i]);
        dq_task_clear(&t);
        moved_home += dq_parts_route_id(&p, cid[i], strlen(cid[i])) >= 2;
    }
    assert_true(moved_home > 0); /* the test means something: some are off their home */
    assert_int_equal(dq_find(f.c, f.queue, "job-none", &t, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, f.queue));

    /* reschedule by both kinds of id */
    int64_t due = 0;
    ASSERT_OK(&f, dq_reschedule(f.c, f.queue, gen[3], 0, 600000, &due, &f.err));
    assert_true(due > 0);
    ASSERT_OK(&f, dq_reschedule(f.c, f.queue, cid[5], 0, 600000, &due, &f.err));
    ASSERT_OK(&f, dq_find(f.c, f.queue, cid[5], &t, &f.err));
    assert_int_equal(t.due_ms, due);
    dq_task_clear(&t);

    /* drop across partitions: all or nothing */
    const char *two[] = {gen[0], cid[1]}, *bad[] = {gen[1], "job-none"};
    assert_int_equal(dq_drop(f.c, f.queue, bad, 2, &n, &f.err), DQ_ENOTFOUND);
    ASSERT_OK(&f, dq_find(f.c, f.queue, gen[1], &t, &f.err)); /* untouched */
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_drop(f.c, f.queue, two, 2, &n, &f.err));
    assert_int_equal(n, 2);
    assert_int_equal(dq_find(f.c, f.queue, gen[0], &t, &f.err), DQ_ENOTFOUND);
    assert_int_equal(dq_find(f.c, f.queue, cid[1], &t, &f.err), DQ_ENOTFOUND);

    /* fail two tasks in their partitions, requeue them by id through the queue: claim
     * every partition's due tasks (a test reaches partitions by their names) */
    dq_claimed cl[4], c2;
    char home1[160] = "", home2[160] = "";
    for (size_t i = 0; i < 4; i++) {
        ASSERT_OK(&f, dq_claim(f.c, p.names[i], 100, 60000, "w1", &cl[i], &f.err));
        if (claimed(&cl[i], gen[2]) != NULL) {
            snprintf(home1, sizeof home1, "%s", p.names[i]);
            ASSERT_OK(&f, dq_fail(f.c, home1, claimed(&cl[i], gen[2]), "boom", NULL, &f.err));
        }
        if (claimed(&cl[i], cid[6]) != NULL) {
            snprintf(home2, sizeof home2, "%s", p.names[i]);
            ASSERT_OK(&f, dq_fail(f.c, home2, claimed(&cl[i], cid[6]), "boom", NULL, &f.err));
        }
    }
    assert_string_equal(home1, p.names[dq_parts_of_seq(&p, strtoll(gen[2], NULL, 10))]);
    assert_true(home2[0] != '\0');
    const char *failed[] = {gen[2], cid[6]}, *mixed[] = {gen[2], cid[7]};
    assert_int_equal(dq_requeue(f.c, f.queue, mixed, 2, 0, &n, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, cid[7]));
    ASSERT_OK(&f, dq_requeue(f.c, f.queue, failed, 2, 0, &n, &f.err));
    assert_int_equal(n, 2);
    ASSERT_OK(&f, dq_find(f.c, f.queue, cid[6], &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    dq_task_clear(&t);
    for (size_t i = 0; i < 4; i++)
        dq_claimed_free(&cl[i]);

    /* cancel a running task of another partition than partition 0, by id */
    claim_one(&f, home2, cid[6], &c2);
    dq_cancelled cc;
    ASSERT_OK(&f, dq_cancel(f.c, f.queue, cid[6], true, &cc, &f.err));
    assert_string_equal(cc.worker, "w1");
    assert_int_equal(dq_find(f.c, f.queue, cid[6], &t, &f.err), DQ_ENOTFOUND);
    dq_claimed_free(&c2);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* stats of a partitioned queue: the sums of its partitions' (each read by its name) */
static void
stats_sum_partitions(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_stats sum, one[4];
    int64_t due = 0, future = 0, enq = 0, next = -1, oldest = 0;

    fixture_open(&f, state, "stats");
    set_partitions(&f, 4);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &p, &f.err));
    for (int i = 0; i < 203; i++)
        enqueue_str(&f, "s", i % 3 == 0 ? 0 : 60000 + i * 1000, NULL, NULL);
    for (int i = 0; i < 50; i++) {
        char id[16];
        snprintf(id, sizeof id, "s-%d", i);
        enqueue_str(&f, "s", 7200000, id, NULL); /* far future */
    }
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &sum, &f.err));
    /* partitions 1..3 read by their names; partition 0 is the queue's name, whose stats are
     * the sum: its own share is what the others leave, counted in its keys */
    for (size_t i = 1; i < 4; i++) {
        ASSERT_OK(&f, dq_stats_get(f.c, p.names[i], &one[i], &f.err));
        due += one[i].due;
        future += one[i].future;
        enq += one[i].enqueued;
        if (one[i].next_due_ms >= 0 && (next < 0 || one[i].next_due_ms < next))
            next = one[i].next_due_ms;
        if (one[i].oldest_due_age_ms > oldest)
            oldest = one[i].oldest_due_age_ms;
        assert_true(one[i].enqueued > 0); /* every partition got some */
    }
    char key[200];
    snprintf(key, sizeof key, "dq:{%s}:sched", f.queue);
    long long own = zcard(&f, key);
    assert_true(own > 0);
    assert_int_equal(sum.due, 68);
    assert_int_equal(sum.due + sum.future, due + future + own);
    assert_int_equal(sum.future, 203 - 68 + 50);
    assert_int_equal(sum.far_future, 50);
    assert_int_equal(sum.enqueued, 253);
    assert_int_equal(sum.enqueued, enq + own);
    assert_true(sum.next_due_ms <= next); /* the earliest of all */
    assert_true(sum.next_due_ms > 0);
    assert_true(sum.oldest_due_age_ms >= oldest - 1000); /* the largest; read a moment before */
    size_t routed, all;
    ASSERT_OK(&f, dq_partitions_get(f.c, f.queue, &routed, &all, &f.err));
    assert_int_equal(routed, 4);
    assert_int_equal(all, 4);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* a user whose ACL has HMGET and not HGETALL (a hand-written line) reads the map field by
 * field; one with neither is told why */
static void
map_without_hgetall(void **state)
{
    struct fixture f;
    dq_client_opts o = {.user = "p-nohgetall", .password = "pw-1"};
    dq_client *c = NULL;
    size_t routed = 0, all = 0;
    dq_enqueued e;
    dq_task t;

    fixture_open(&f, state, "nohgetall");
    set_partitions(&f, 3);
    set_partitions(&f, 2);
    enqueue_str(&f, "x", 0, "nh-1", &e);
    const char *acl[] = {"ACL",       "SETUSER",     "p-nohgetall", "reset",           "on",
                         ">pw-1",     "%R~dq:*",     "+ping",       "+client|setname", "+info",
                         "+fcall_ro", "+evalsha_ro", "+hmget",      "+hget",           "+hexists",
                         "+lrange",   "+zcard",      "+zcount",     "+zrange",         "+zrank",
                         "+zscore",   "+time"};
    redisReply *r = test_redis_cmd(f.redis, sizeof acl / sizeof acl[0], acl);
    assert_non_null(r);
    assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    if (dq_client_open(f.redis->url, &o, &c, &f.err) != DQ_OK)
        fail_msg("open: %s", f.err.msg);
    ASSERT_OK(&f, dq_partitions_get(c, f.queue, &routed, &all, &f.err));
    assert_int_equal(routed, 2);
    assert_int_equal(all, 3);
    ASSERT_OK(&f, dq_find(c, f.queue, "nh-1", &t, &f.err)); /* in any of the three */
    assert_string_equal(t.id, "nh-1");
    dq_task_clear(&t);
    dq_client_free(c);
    const char *acl2[] = {"ACL", "SETUSER", "p-nohgetall", "-hmget"};
    r = test_redis_cmd(f.redis, 4, acl2);
    freeReplyObject(r);
    if (dq_client_open(f.redis->url, &o, &c, &f.err) != DQ_OK)
        fail_msg("open: %s", f.err.msg);
    assert_int_equal(dq_partitions_get(c, f.queue, &routed, &all, &f.err), DQ_EREDIS);
    assert_non_null(strstr(f.err.msg, "NOPERM"));
    dq_client_free(c);
    fixture_close(&f);
}

/* an unpartitioned queue's enqueues cost no command more: the map is read once, and again
 * at most once a second, whatever the number of calls */
static void
one_partition_costs_no_command_per_call(void **state)
{
    struct fixture f;
    long long h0, f0, h1, f1;
    int64_t t0;
    int n = 0;

    fixture_open(&f, state, "cost");
    enqueue_str(&f, "warm", 0, NULL, NULL); /* the map's first read and the library load */
    h0 = test_redis_calls(f.redis, "hgetall");
    f0 = test_redis_calls(f.redis, "fcall");
    t0 = test_mono_ms();
    while (n < 2000 && test_mono_ms() - t0 < 2500) {
        enqueue_str(&f, "t", 60000, NULL, NULL);
        n++;
    }
    h1 = test_redis_calls(f.redis, "hgetall");
    f1 = test_redis_calls(f.redis, "fcall");
    int64_t secs = (test_mono_ms() - t0) / DQ_PARTS_REFRESH_MS + 1;
    if (getenv("DELAYQ_SCRIPTS") == NULL) /* EVALSHA counts elsewhere */
        assert_int_equal(f1 - f0, n);
    if (h1 - h0 > secs)
        fail_msg("%lld map reads for %d enqueues in %lld s; at most one a second", h1 - h0, n,
                 (long long)secs);
    assert_true(n > 100);
    fixture_close(&f);
}

static bool
past_refresh(void *arg)
{
    return test_mono_ms() - *(const int64_t *)arg > DQ_PARTS_REFRESH_MS + 100;
}

/* The stats of an unpartitioned queue say it has no map, so neither a fresh client's
 * `delayq stats` nor a refresh as the inspector makes it (stats, then the pages) reads
 * the map, however far apart; a partitioned queue's first stats read it and sum. */
static void
one_partition_stats_confirm_the_map(void **state)
{
    struct fixture f;
    dq_client *c;
    dq_stats st;
    dq_page pg;
    long long h0, h1;

    fixture_open(&f, state, "confirm");
    enqueue_str(&f, "warm", 0, NULL, NULL);
    assert_int_equal(dq_client_open(f.redis->url, NULL, &c, &f.err), DQ_OK);
    h0 = test_redis_calls(f.redis, "hgetall");
    for (int round = 0; round < 2; round++) {
        int64_t t0 = test_mono_ms();
        assert_int_equal(dq_stats_get(c, f.queue, &st, &f.err), DQ_OK);
        assert_int_equal(st.due, 1);
        assert_int_equal(st.parts_map, 0);
        assert_int_equal(dq_page_get(c, f.queue, DQ_VIEW_DUE, 0, 40, &pg, &f.err), DQ_OK);
        assert_int_equal(pg.n, 1);
        dq_page_free(&pg);
        assert_true(wait_until(past_refresh, &t0, 5000, "the map's refresh time to pass"));
    }
    h1 = test_redis_calls(f.redis, "hgetall");
    assert_int_equal(h1 - h0, 0);

    /* partitioned: the first stats of a fresh client find the map and sum */
    dq_config cfg = {.partitions = 3};
    assert_int_equal(dq_config_set(f.c, f.queue, &cfg, &f.err), DQ_OK);
    for (int i = 0; i < 30; i++)
        enqueue_str(&f, "t", 0, NULL, NULL);
    dq_client *c2;
    assert_int_equal(dq_client_open(f.redis->url, NULL, &c2, &f.err), DQ_OK);
    assert_int_equal(dq_stats_get(c2, f.queue, &st, &f.err), DQ_OK);
    assert_int_equal(st.due, 31);
    assert_true(st.parts_map > 0);
    /* and the client that knew it as one partition learns of the map from its stats */
    assert_int_equal(dq_stats_get(c, f.queue, &st, &f.err), DQ_OK);
    assert_int_equal(st.due, 31);
    dq_client_free(c2);
    dq_client_free(c);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_partition_writes_nothing),
        cmocka_unit_test(map_names_seq_config_registry),
        cmocka_unit_test(shrink_keeps_names_and_grows_again),
        cmocka_unit_test(cache_catches_up),
        cmocka_unit_test(bad_values_and_maps),
        cmocka_unit_test(enqueue_routes),
        cmocka_unit_test(batch_splits_by_partition),
        cmocka_unit_test(batch_error_names_the_item),
        cmocka_unit_test(import_routes),
        cmocka_unit_test(one_partition_keys_are_todays),
        cmocka_unit_test(lookups_cover_partitions),
        cmocka_unit_test(stats_sum_partitions),
        cmocka_unit_test(map_without_hgetall),
        cmocka_unit_test(one_partition_costs_no_command_per_call),
        cmocka_unit_test(one_partition_stats_confirm_the_map),
    };
    return cmocka_run_group_tests(tests, fixture_group_setup, fixture_group_teardown);
}
