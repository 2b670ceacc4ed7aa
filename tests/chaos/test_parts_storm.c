/* SPDX-License-Identifier: MIT */
/*
 * test_parts_storm.c: the kill storm on a partitioned queue. A real Redis Cluster of
 * three masters with a replica each (`redis-cli --cluster create`, free loopback ports
 * below 55000, servers held by PID: harness/cluster.h), one queue of `partitions 6` (two
 * on each master), three chaos_worker processes and two producer threads with tasks
 * flowing. During the flow: a worker killed with SIGKILL every 2 s and started again;
 * the master of one partition killed with SIGKILL and its replica promoted; and one slot
 * of another partition moved to another master by the real `redis-cli --cluster reshard`.
 *
 * Asserted: every acknowledged enqueue ran (0 lost); no run started before its due time
 * (the workers' clock is the servers': one host); a task ran again only after a kill (its
 * worker's, or, for a task of a partition on the killed master, that master's while the
 * run's claim or ack was not yet replicated), never twice under one lease otherwise; the
 * moved slot held the partition's keys; the queue drained with the done counter summed.
 *
 * Replication is asynchronous, so a master killed at any moment loses its last writes.
 * What the test closes is the enqueue side, as a careful producer would with WAIT: the
 * producers pause, the replica is seen to have every write up to then (its offset), and
 * the master is killed; writes the workers make meanwhile may be lost, and those runs
 * happen again (counted). tests/prod/test_cluster.c measures the unclosed case.
 *
 * Placement of the moved slot: `reshard` takes the source's lowest slots first, so the
 * slots of the source below the partition's are moved away before the flow starts; the
 * move during the flow is then exactly the partition's one slot.
 *
 * Short mode (CI): 3 000 tasks over 10 s, about 25 s in all (the move before the flow,
 * up to a few thousand empty slots, takes 1 to 7 s of it). DQ_CHAOS_LONG=1: 12 000 tasks
 * over 20 s (2026-12-02: 12 035 runs, 0 lost, 4 ran again across the failover).
 */
#include "harness/check.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <hiredis/hiredis.h>

#include "chaos.h"
#include "delayq.h"
#include "harness/cluster.h"
#include "harness/wait.h"
#include "lib/parts.h"

#define NODES       6 /* three masters, then their replicas */
#define PARTS       6
#define WORKERS     3
#define CONCURRENCY 8
#define LEASE_MS    3000
#define PRODUCERS   2
#define LEAD_MS     1500
#define MAX_KILLS   32

static struct test_cluster cl;

/* ---- the cluster ------------------------------------------------------------------ */

/* The text of INFO @section on node @i ("" when it is down); caller frees. */
static char *
info(int i, const char *section)
{
    char *s = test_redis_info(&cl.node[i], section);

    assert_non_null(s);
    return s;
}

static long long
info_num(const char *text, const char *field)
{
    const char *p = strstr(text, field);
    return p != NULL ? atoll(p + strlen(field)) : -1;
}

static unsigned
slot_of_queue(const char *name)
{
    char key[640];
    const char *argv[] = {"CLUSTER", "KEYSLOT", key};

    snprintf(key, sizeof key, "dq:{%s}:sched", name);
    long long s = test_redis_int(&cl.node[0], 3, argv);
    assert_true(s >= 0 && s < 16384);
    return (unsigned)s;
}

/* The replica (node index) of master @m. */
static int
replica_of(int m)
{
    for (int i = 0; i < NODES; i++) {
        if (i == m || cl.node[i].pid == 0)
            continue;
        char *s = info(i, "replication");
        char port[32];
        snprintf(port, sizeof port, "master_port:%d\r", cl.node[m].port);
        bool yes = strstr(s, "role:slave") != NULL && strstr(s, port) != NULL;
        free(s);
        if (yes)
            return i;
    }
    return -1;
}

/* `redis-cli --cluster reshard`: @count slots (the source's lowest) from @from to @to. */
static void
reshard(const char *dir, int from, int to, int count)
{
    char src[64], dst[64], slots[16], out[300];

    assert_int_equal(test_cluster_node_id(&cl, from, src, sizeof src), 0);
    assert_int_equal(test_cluster_node_id(&cl, to, dst, sizeof dst), 0);
    snprintf(slots, sizeof slots, "%d", count);
    snprintf(out, sizeof out, "%s/reshard.out", dir);
    const char *argv[] = {test_redis_cli(),  "--cluster", "reshard",       cl.addr[from],
                          "--cluster-from",  src,         "--cluster-to",  dst,
                          "--cluster-slots", slots,       "--cluster-yes", NULL};
    int64_t t0 = test_mono_ms();
    int rc = test_run(argv, out, 60000);
    int64_t ms = test_mono_ms() - t0;
    if (rc != 0)
        fail_msg("redis-cli --cluster reshard exited %d; see %s", rc, out);
    printf("# reshard: %d slot%s from node %d to node %d in %lld ms\n", count,
           count == 1 ? "" : "s", from, to, (long long)ms);
}

/* ---- producers -------------------------------------------------------------------- */

struct storm {
    char queue[64];
    int n;
    int64_t *due;
    int64_t *acked; /* wall ms its enqueue was acknowledged; 0: not (yet) */
};

static struct producers {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool paused, stop;
    int busy;
    pthread_t th[PRODUCERS];
    int started;
    struct storm *s;
    dq_client *c[PRODUCERS];
    int retried;
    char err[300];
} prod = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* An enqueue that fails in a failover or a move is made again (same id: dedup makes it
 * safe while the task exists); only one that returned DQ_OK counts as acknowledged. */
static void *
produce(void *arg)
{
    int p = (int)(intptr_t)arg;
    struct storm *s = prod.s;

    for (int i = p; i < s->n; i += PRODUCERS) {
        char id[32], payload[32];
        dq_enqueue_opts o = {.at_ms = s->due[i], .id = id};
        dq_enqueued e;
        dq_err err;
        int rc, tries = 0;

        int64_t ahead = s->due[i] - LEAD_MS - chaos_wall_ms();
        if (ahead > 0)
            test_nap_ms((int)ahead); /* the producer's pace */
        snprintf(id, sizeof id, "t%d", i);
        snprintf(payload, sizeof payload, "ok %d", 2 + (i * 7) % 19);
        for (;;) {
            pthread_mutex_lock(&prod.mu);
            while (prod.paused && !prod.stop)
                pthread_cond_wait(&prod.cv, &prod.mu);
            if (prod.stop) {
                pthread_mutex_unlock(&prod.mu);
                return NULL;
            }
            prod.busy++;
            pthread_mutex_unlock(&prod.mu);
            rc = dq_enqueue(prod.c[p], s->queue, &o, payload, strlen(payload), &e, &err);
            pthread_mutex_lock(&prod.mu);
            prod.busy--;
            pthread_cond_broadcast(&prod.cv);
            if (rc != DQ_OK && rc != DQ_EINVAL)
                prod.retried++;
            else if (rc != DQ_OK && prod.err[0] == '\0')
                snprintf(prod.err, sizeof prod.err, "enqueue %s: %s", id, err.msg);
            pthread_mutex_unlock(&prod.mu);
            if (rc == DQ_OK || rc == DQ_EINVAL || ++tries > 400)
                break;
            test_nap_ms(25); /* the failover takes about a second; try again */
        }
        if (rc != DQ_OK) {
            pthread_mutex_lock(&prod.mu);
            if (prod.err[0] == '\0')
                snprintf(prod.err, sizeof prod.err, "enqueue t%d: gave up: %s", i, dq_strerror(rc));
            pthread_mutex_unlock(&prod.mu);
            return NULL;
        }
        s->acked[i] = chaos_wall_ms();
    }
    return NULL;
}

static void
producers_pause(bool pause)
{
    pthread_mutex_lock(&prod.mu);
    prod.paused = pause;
    pthread_cond_broadcast(&prod.cv);
    while (pause && prod.busy > 0)
        pthread_cond_wait(&prod.cv, &prod.mu);
    pthread_mutex_unlock(&prod.mu);
}

static void
producers_join(bool stop)
{
    pthread_mutex_lock(&prod.mu);
    prod.stop = stop;
    prod.paused = false;
    pthread_cond_broadcast(&prod.cv);
    pthread_mutex_unlock(&prod.mu);
    for (int p = 0; p < prod.started; p++)
        pthread_join(prod.th[p], NULL);
    prod.started = 0;
    for (int p = 0; p < PRODUCERS; p++) {
        dq_client_free(prod.c[p]);
        prod.c[p] = NULL;
    }
}

/* ---- workers ---------------------------------------------------------------------- */

struct kill {
    pid_t pid;
    int64_t wall;
};

static pid_t
start_worker(const char *dir, const char *queue)
{
    char lease[16], conc[16], out[300];

    snprintf(lease, sizeof lease, "%d", LEASE_MS);
    snprintf(conc, sizeof conc, "%d", CONCURRENCY);
    snprintf(out, sizeof out, "%s/worker.out", dir);
    const char *argv[] = {chaos_worker_bin(), cl.url, queue, dir, lease, conc, "3000", NULL};
    pid_t pid = chaos_spawn(argv, out);
    assert_true(pid > 0);
    return pid;
}

static bool
killed_between(const struct kill *kills, int nk, pid_t pid, int64_t from, int64_t to)
{
    for (int i = 0; i < nk; i++) {
        if (kills[i].pid == pid && kills[i].wall >= from && kills[i].wall <= to)
            return true;
    }
    return false;
}

struct drain {
    dq_client *c;
    const struct storm *s;
};

static bool
drained(void *arg)
{
    struct drain *d = arg;
    dq_stats st;
    dq_err err;

    return dq_stats_get(d->c, d->s->queue, &st, &err) == DQ_OK && st.due == 0 && st.future == 0 &&
           st.inflight == 0 && st.done >= d->s->n;
}

struct caught_up {
    int replica;
    long long offset;
};

/* The replica has every write its master made up to @offset. */
static bool
replica_caught_up(void *arg)
{
    const struct caught_up *cu = arg;
    char *s = info(cu->replica, "replication");
    long long have = info_num(s, "slave_repl_offset:");
    free(s);
    return have >= cu->offset;
}

/* ---- the test --------------------------------------------------------------------- */

static void
partitioned_storm_failover_and_reshard(void **state)
{
    const bool lng = chaos_long();
    const int n = lng ? 12000 : 3000;
    const int spread_ms = lng ? 20000 : 10000;
    const char *dir = chaos_dir("parts_storm");
    struct storm s = {.n = n};
    struct kill kills[MAX_KILLS];
    pid_t workers[WORKERS];
    int nk = 0;
    dq_client *c = NULL;
    dq_err err = {0};
    dq_stats st;
    char names[PARTS][96];
    unsigned pslot[PARTS];
    int powner[PARTS];

    (void)state;
    assert_non_null(dir);
    const int64_t t_start = test_mono_ms();
    int rc = test_cluster_start(&cl, 3, 1, 1000, NULL);
    if (rc == TEST_REDIS_SKIP)
        exit(77);
    assert_int_equal(rc, 0);
    test_queue_name(s.queue, sizeof s.queue, "pstorm");
    if (dq_client_open(cl.url, NULL, &c, &err) != DQ_OK)
        fail_msg("dq_client_open: %s", err.msg);
    dq_config cfg = {.partitions = PARTS};
    assert_int_equal(dq_config_set(c, s.queue, &cfg, &err), DQ_OK);

    /* where the partitions are: the victim master holds partition 1; the slot moved is
     * the partition (on another master) closest to the bottom of its master's range */
    int moved = -1, victim = -1;
    unsigned best = 16384;
    for (int i = 0; i < PARTS; i++) {
        unsigned lo = 0;
        assert_int_equal(dq_partition_name(c, s.queue, (size_t)i, names[i], sizeof names[i], &err),
                         DQ_OK);
        pslot[i] = slot_of_queue(names[i]);
        powner[i] = test_cluster_owner(&cl, 0, pslot[i], &lo);
        assert_true(powner[i] >= 0 && powner[i] < 3);
    }
    victim = powner[1];
    for (int i = 0; i < PARTS; i++) {
        unsigned lo = 0;
        test_cluster_owner(&cl, 0, pslot[i], &lo);
        if (powner[i] != victim && pslot[i] - lo < best) {
            best = pslot[i] - lo;
            moved = i;
        }
    }
    assert_true(moved >= 0);
    int from = powner[moved], to = 3 - victim - from; /* the third master */
    int masters_with[3] = {0};
    for (int i = 0; i < PARTS; i++)
        masters_with[powner[i]]++;
    for (int m = 0; m < 3; m++)
        assert_int_equal(masters_with[m], PARTS / 3); /* keys on every master */
    if (best > 0)
        reshard(dir, from, to, (int)best); /* before the flow: the slots below it */
    unsigned lo_now = 0;
    assert_int_equal(test_cluster_owner(&cl, from, pslot[moved], &lo_now), from);
    assert_int_equal(lo_now, pslot[moved]); /* now the lowest slot of its master */
    int replica = replica_of(victim);
    assert_true(replica >= 3);
    printf("# partitions: %d on 3 masters; master %d (partition 1) is killed, replica %d "
           "promoted; partition %d's slot %u moves from master %d to %d\n",
           PARTS, victim, replica, moved, pslot[moved], from, to);

    s.due = calloc((size_t)n, sizeof *s.due);
    s.acked = calloc((size_t)n, sizeof *s.acked);
    assert_non_null(s.due);
    assert_non_null(s.acked);
    for (int i = 0; i < WORKERS; i++)
        workers[i] = start_worker(dir, s.queue);
    assert_int_equal(dq_stats_get(c, s.queue, &st, &err), DQ_OK);
    const int64_t base = st.now_ms + LEAD_MS + 500;
    for (int i = 0; i < n; i++)
        s.due[i] = base + (int64_t)i * spread_ms / n;
    prod.s = &s;
    for (int p = 0; p < PRODUCERS; p++) {
        if (dq_client_open(cl.url, NULL, &prod.c[p], &err) != DQ_OK)
            fail_msg("dq_client_open: %s", err.msg);
    }
    for (; prod.started < PRODUCERS; prod.started++)
        assert_int_equal(
            pthread_create(&prod.th[prod.started], NULL, produce, (void *)(intptr_t)prod.started),
            0);

    /* the storm: a worker kill every 2 s; the move at a third, the master kill at two
     * thirds of the window (redis-cli's reshard refuses a cluster with a failed node) */
    const int64_t m0 = test_mono_ms() + (base - chaos_wall_ms());
    const int ticks = spread_ms / 1000;
    int64_t kill_wall = 0, promoted_wall = 0, move_wall = 0, moved_wall = 0;
    for (int k = 1; k <= ticks; k++) {
        int64_t wait = m0 + (int64_t)k * 1000 - test_mono_ms();
        if (wait > 0)
            test_nap_ms((int)wait); /* the storm's schedule, not a wait for a condition */
        for (int i = 0; i < WORKERS; i++) {
            int status;
            if (!chaos_running(workers[i], &status))
                fail_msg("worker %ld exited by itself (status 0x%x); see %s/worker.out",
                         (long)workers[i], status, dir);
        }
        if (k == 2 * ticks / 3) {
            /* every acknowledged enqueue reaches the replica before the kill (WAIT's
             * guarantee, checked by offset since WAIT counts only its own connection) */
            producers_pause(true);
            char *rep = info(victim, "replication");
            struct caught_up cu = {replica, info_num(rep, "master_repl_offset:")};
            free(rep);
            assert_true(cu.offset > 0);
            assert_true(wait_until(replica_caught_up, &cu, 10000, "the replica to catch up"));
            kill_wall = chaos_wall_ms();
            test_redis_kill(&cl.node[victim]);
            cl.node[victim].pid = 0;
            producers_pause(false);
            int who = -1;
            for (int64_t end = test_mono_ms() + 30000; test_mono_ms() < end;) {
                who = test_cluster_owner(&cl, replica, pslot[1], NULL);
                if (who == replica)
                    break;
                test_nap_ms(50);
            }
            assert_int_equal(who, replica);
            promoted_wall = chaos_wall_ms();
            printf("# master %d killed; replica %d promoted after %lld ms\n", victim, replica,
                   (long long)(promoted_wall - kill_wall));
        }
        if (k == ticks / 3) {
            move_wall = chaos_wall_ms();
            reshard(dir, from, to, 1);
            moved_wall = chaos_wall_ms();
            assert_int_equal(test_cluster_owner(&cl, to, pslot[moved], NULL), to);
            /* the partition's keys went with its slot: tasks were there to move */
            char slot[16];
            snprintf(slot, sizeof slot, "%u", pslot[moved]);
            const char *argv[] = {"CLUSTER", "COUNTKEYSINSLOT", slot};
            assert_true(test_redis_int(&cl.node[to], 3, argv) > 0);
        }
        if (k % 2 == 0 && nk < MAX_KILLS) {
            int v = rand() % WORKERS;
            kills[nk].pid = workers[v];
            kills[nk++].wall = chaos_wall_ms();
            chaos_kill9(workers[v]);
            workers[v] = start_worker(dir, s.queue);
        }
    }
    producers_join(false);
    if (prod.err[0] != '\0')
        fail_msg("%s", prod.err);
    int acked = 0;
    for (int i = 0; i < n; i++)
        acked += s.acked[i] != 0;
    assert_int_equal(acked, n);

    struct drain d = {c, &s};
    assert_true(wait_until(drained, &d, LEASE_MS * 4 + 60000, "the queue to drain"));
    const int64_t drained_ms = test_mono_ms();
    for (int i = 0; i < WORKERS; i++) {
        int status = chaos_stop(workers[i], 10000);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("worker %ld did not stop cleanly (status 0x%x); see %s/worker.out",
                     (long)workers[i], status, dir);
    }
    assert_int_equal(dq_stats_get(c, s.queue, &st, &err), DQ_OK);
    assert_int_equal(st.inflight, 0);
    assert_int_equal(st.due + st.future, 0);
    assert_int_equal(st.failed, 0);

    /* the run records; a task's partition is its id's (caller ids route by hash) */
    struct dq_parts map;
    bool on_victim[PARTS];
    assert_int_equal(dq_parts_get(c, s.queue, &map, &err), DQ_OK);
    assert_int_equal(map.n, PARTS);
    for (int i = 0; i < PARTS; i++)
        on_victim[i] = powner[i] == victim;
    struct chaos_runs runs;
    chaos_runs_read(dir, &runs);
    char *ran = calloc((size_t)n, 1);
    size_t again_kill = 0, again_failover = 0, again_stall = 0;
    assert_non_null(ran);
    for (size_t r = 0; r < runs.n; r++) {
        const struct chaos_run *a = &runs.v[r];
        int i = atoi(a->id + 1);

        if (a->id[0] != 't' || i < 0 || i >= n)
            fail_msg("a run of unknown task %s", a->id);
        if (a->wall < s.due[i])
            fail_msg("%s attempt %u started %lld ms before it was due", a->id, a->attempt,
                     (long long)(s.due[i] - a->wall));
        ran[i] = 1;
        if (r + 1 == runs.n || strcmp(runs.v[r + 1].id, a->id) != 0)
            continue;
        const struct chaos_run *b = &runs.v[r + 1];
        /* the master's kill may lose the claim of @a (not yet replicated): the promoted
         * replica still has the task due, so it runs again at once, even under the same
         * attempt number; that is allowed only across the failover */
        bool across_failover = on_victim[dq_parts_route_id(&map, a->id, strlen(a->id))] &&
                               a->claimed <= promoted_wall && b->claimed >= kill_wall;
        if (across_failover) {
            again_failover++;
            continue;
        }
        if (b->attempt == a->attempt)
            fail_msg("%s attempt %u ran twice (pids %ld, %ld) outside the failover", a->id,
                     a->attempt, (long)a->pid, (long)b->pid);
        if (a->done >= 0)
            fail_msg("%s ran again after the ack of attempt %u was written", a->id, a->attempt);
        if (b->claimed < a->claimed + LEASE_MS)
            fail_msg("%s attempt %u claimed %lld ms after attempt %u, inside its lease", a->id,
                     b->attempt, (long long)(b->claimed - a->claimed), a->attempt);
        /* a run that overlapped the failover on another master's partition: with the
         * cluster's default cluster-require-full-coverage yes, every master refuses
         * every command (CLUSTERDOWN) from the dead master's FAIL flag to its replica's
         * promotion, so no lease could be renewed, and the task ran again after its
         * lease ran out (checked above), as after any kill: the "re-runs only
         * after kills". Counted apart. (prod.parts_outage shows a worker going on with
         * the live partitions when the cluster keeps serving them.) */
        if (!killed_between(kills, nk, a->pid, a->claimed, b->claimed) &&
            a->claimed <= promoted_wall && b->claimed >= kill_wall) {
            again_stall++;
            continue;
        }
        if (!killed_between(kills, nk, a->pid, a->claimed, b->claimed))
            fail_msg("%s attempt %u (pid %ld, claimed %lld) ran again as attempt %u (claimed "
                     "%lld) without a kill of its worker or the master",
                     a->id, a->attempt, (long)a->pid, (long long)a->claimed, b->attempt,
                     (long long)b->claimed);
        again_kill++;
    }
    int lost = 0;
    for (int i = 0; i < n; i++)
        lost += !ran[i];
    printf("# %d tasks over %d partitions, %zu runs, %d lost, 0 early; ran again: %zu after a "
           "worker kill, %zu across the failover, %zu after a lease lapsed during it; %d worker "
           "kills; enqueues made again: %d; move of one slot %lld ms; drained %lld ms after the "
           "start of the test\n",
           n, PARTS, runs.n, lost, again_kill, again_failover, again_stall, nk, prod.retried,
           (long long)(moved_wall - move_wall), (long long)(drained_ms - t_start));
    for (int i = 0; i < n; i++) {
        if (!ran[i])
            fail_msg("t%d was acknowledged (enqueued) but never ran", i);
    }
    assert_int_equal(st.done, n); /* an ack is fenced: one per task, also across the failover */
    free(ran);
    chaos_runs_free(&runs);
    dq_parts_free(&map);
    dq_client_free(c);
    free(s.due);
    free(s.acked);
}

static int
teardown(void **state)
{
    (void)state;
    producers_join(true);
    chaos_cleanup();
    test_cluster_stop(&cl);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(partitioned_storm_failover_and_reshard, teardown),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
