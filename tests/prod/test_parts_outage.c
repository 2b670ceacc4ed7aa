/* SPDX-License-Identifier: MIT */
/*
 * test_parts_outage.c: one master of a partitioned queue dies and the worker carries on
 * with the others. A real Redis Cluster of three masters without replicas, with
 * cluster-require-full-coverage no (the setting docs/SCALING.md recommends for partitioned
 * queues: the live masters keep serving their slots), a queue of partitions 3 (one per
 * master), ten tasks in each partition, all running in one library worker whose handlers
 * outlast the lease three times over. The master of partition 1 is killed with SIGKILL:
 * the other two partitions' leases are still renewed and their results written (each of
 * their tasks ran once, and within a few seconds of the handlers' end, while the master
 * is still dead); partition 1 backs off on its own. The master is started again from its
 * append-only file: its tasks, whose leases ran out meanwhile, are reaped and done.
 *
 * Before the worker kept its outage per partition, one dead master held back every call:
 * each pass tried it before partition 2 (no wake-up connection: it claims early), backed
 * off, and partition 2's results were never written until the master came back.
 */
#include "harness/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "harness/cluster.h"
#include "harness/wait.h"
#include "harness/worker.h"
#include "lib/parts.h"

#define PARTS    3
#define PER_PART 10
#define TASKS    (PARTS * PER_PART)
#define LEASE_MS 1500
#define HOLD_MS  4500 /* three leases: renewed twice at least */

static struct test_cluster cl;

struct run {
    char id[16];
    size_t part;
    atomic_int runs, started;
};

static struct run runs[TASKS];
static atomic_int started_all;
static atomic_int release; /* 1: handlers return at once (the restarted master's tasks) */

static struct run *
run_of(const char *id, size_t len)
{
    for (size_t i = 0; i < TASKS; i++)
        if (strlen(runs[i].id) == len && memcmp(runs[i].id, id, len) == 0)
            return &runs[i];
    return NULL;
}

/* Holds the run HOLD_MS (so its lease is renewed), then done. */
static void
handler(const dq_task *t, dq_result *res, void *arg)
{
    struct run *r = run_of(t->id, t->id_len);

    (void)arg;
    if (r != NULL) {
        atomic_fetch_add(&r->runs, 1);
        if (atomic_fetch_add(&r->started, 1) == 0)
            atomic_fetch_add(&started_all, 1);
    }
    for (int64_t end = test_mono_ms() + HOLD_MS;
         test_mono_ms() < end && !atomic_load(&release) && !dq_task_cancelled(t);)
        test_nap_ms(10);
    res->outcome = DQ_DONE;
}

static int
group_setup(void **state)
{
    /* the restarted master keeps its tasks: every write on disk before it is answered */
    const char *extra[] = {"--cluster-require-full-coverage",
                           "no",
                           "--appendonly",
                           "yes",
                           "--appendfsync",
                           "always",
                           NULL};
    int rc;

    (void)state;
    rc = test_cluster_start(&cl, 3, 0, 1000, extra);
    if (rc == TEST_REDIS_SKIP)
        exit(77);
    return rc == 0 ? 0 : -1;
}

static int
group_teardown(void **state)
{
    (void)state;
    test_cluster_stop(&cl);
    return 0;
}

/* Partition @name's results are all in, read on its own master @node (the logical
 * queue's stats would ask every partition, the dead one too): done @want, none in flight. */
struct part_done {
    int node;
    const char *name;
    long long want;
};

static bool
done_in(void *arg)
{
    struct part_done *d = arg;
    char stats[300], inflight[300];

    snprintf(stats, sizeof stats, "dq:{%s}:stats", d->name);
    snprintf(inflight, sizeof inflight, "dq:{%s}:inflight", d->name);
    const char *hget[] = {"HGET", stats, "done"}, *zcard[] = {"ZCARD", inflight};
    redisReply *r = test_redis_cmd(&cl.node[d->node], 3, hget);
    bool done = r != NULL && r->type == REDIS_REPLY_STRING && atoll(r->str) == d->want;
    freeReplyObject(r);
    return done && test_redis_int(&cl.node[d->node], 2, zcard) == 0;
}

static bool
all_started(void *arg)
{
    (void)arg;
    return atomic_load(&started_all) == TASKS;
}

static void
log_line(int level, const char *line, void *arg)
{
    (void)level;
    (void)arg;
    fprintf(stderr, "# worker: %s\n", line);
}

static void
dead_master_holds_back_only_its_partition(void **state)
{
    const char *q = "outq";
    char names[PARTS][DQ_QUEUE_NAME_MAX + 16];
    int holder[PARTS];
    dq_client *c;
    dq_err err = {0};
    dq_config cfg = {.partitions = PARTS};
    const struct dq_parts *map;
    size_t per[PARTS] = {0}, k = 0;

    (void)state;
    if (dq_client_open(cl.url, NULL, &c, &err) != DQ_OK)
        fail_msg("open %s: %s", cl.url, err.msg);
    if (dq_config_set(c, q, &cfg, &err) != DQ_OK)
        fail_msg("config partitions %d: %s", PARTS, err.msg);
    for (size_t i = 0; i < PARTS; i++) {
        assert_int_equal(dq_partition_name(c, q, i, names[i], sizeof names[i], &err), DQ_OK);
        holder[i] = test_cluster_node_at(&cl, dq_client_node(c, names[i]));
        assert_true(holder[i] >= 0);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(holder[i], holder[j]); /* one partition per master */
    }
    /* ten caller ids routed to each partition */
    assert_int_equal(dq_parts_peek(c, q, &map, &err), DQ_OK);
    assert_int_equal(map->n, PARTS);
    for (int n = 0; k < TASKS && n < 10000; n++) {
        char id[16];
        snprintf(id, sizeof id, "o-%d", n);
        size_t p = dq_parts_route_id(map, id, strlen(id));
        if (per[p] == PER_PART)
            continue;
        per[p]++;
        snprintf(runs[k].id, sizeof runs[k].id, "%s", id);
        runs[k++].part = p;
    }
    assert_int_equal(k, TASKS);
    for (size_t i = 0; i < TASKS; i++) {
        dq_enqueue_opts eo = {.id = runs[i].id};
        dq_enqueued e;
        if (dq_enqueue(c, q, &eo, "{}", 2, &e, &err) != DQ_OK)
            fail_msg("enqueue %s: %s", runs[i].id, err.msg);
    }

    /* one worker with room to spare: it goes on wanting to claim from every partition */
    struct test_worker tw = {0};
    dq_worker_opts wo = {
        .concurrency = 2 * TASKS, .lease_ms = LEASE_MS, .log = log_line, .log_level = DQ_LOG_WARN};
    assert_int_equal(dq_worker_new(cl.url, NULL, q, &wo, handler, NULL, &tw.w, &err), DQ_OK);
    test_worker_run(&tw);
    assert_true(wait_until(all_started, NULL, 10000 * test_slowdown(), "all 30 tasks running"));
    int64_t killed = test_mono_ms();
    test_redis_kill(&cl.node[holder[1]]);
    printf("# master of partition 1 (%s) killed\n", cl.addr[holder[1]]);

    /* partitions 0 and 2: renewed and written while partition 1's master is dead */
    for (size_t i = 0; i < PARTS; i += 2) {
        struct part_done d = {.node = holder[i], .name = names[i], .want = PER_PART};
        char what[160];
        snprintf(what, sizeof what, "partition %zu's ten results, its master alive", i);
        assert_true(wait_until(done_in, &d, (HOLD_MS + 5000) * test_slowdown(), what));
    }
    assert_int_equal(cl.node[holder[1]].pid, 0); /* still dead */
    printf("# partitions 0 and 2 done %lld ms after the kill\n",
           (long long)(test_mono_ms() - killed));
    for (size_t i = 0; i < TASKS; i++) {
        if (runs[i].part != 1 && atomic_load(&runs[i].runs) != 1)
            fail_msg("%s (partition %zu) ran %d times; its master never died", runs[i].id,
                     runs[i].part, atomic_load(&runs[i].runs));
    }

    /* the master back from its append-only file: partition 1's tasks are reaped, done */
    atomic_store(&release, 1);
    assert_int_equal(test_redis_start_again(&cl.node[holder[1]]), 0);
    struct part_done d1 = {.node = holder[1], .name = names[1], .want = PER_PART};
    assert_true(wait_until(done_in, &d1, 30000 * test_slowdown(),
                           "partition 1's ten results after its master came back"));
    for (size_t i = 0; i < TASKS; i++)
        assert_true(atomic_load(&runs[i].runs) >= 1);
    test_worker_stop(&tw, false);
    dq_client_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dead_master_holds_back_only_its_partition),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
