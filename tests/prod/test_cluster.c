/* SPDX-License-Identifier: MIT */
/*
 * test_cluster.c: delayq on a real Redis Cluster: three masters with a replica each,
 * made by `redis-cli --cluster create` on free loopback ports (harness/cluster.h;
 * cluster-node-timeout 1000 ms). Ten queues spread over the masters; in-process workers
 * drain them all and `delayq queues` lists all ten. Then a busy queue's slot is moved to
 * another master by hand (CLUSTER SETSLOT IMPORTING / MIGRATING, MIGRATE one key at a
 * time, SETSLOT NODE) under a running worker and producer: MOVED and ASK are counted from
 * INFO errorstats; nothing is lost and nothing runs twice. Last, a master is killed with
 * SIGKILL under load and its replica promoted: work carries on.
 *
 * Short mode (CI) by default; DQ_CHAOS_LONG=1 for more tasks and longer load.
 */
#include "harness/check.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "chaos/chaos.h"
#include "delayq.h"
#include "dq_scripts.h"
#include "harness/cluster.h"
#include "harness/wait.h"
#include "harness/worker.h"
#include "lib/client.h"
#include "lib/cluster.h"
#include "lib/parts.h"

#define NODES  6 /* three masters, a replica each */
#define QUEUES 10
#define LEASE  2000
/* per queue and task: how many times it ran (ids are "<queue index>-<n>") */
#define TASKS_MAX 20000

static struct test_cluster cl;
static char qname[QUEUES][40];
static bool long_mode;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char (*runs)[TASKS_MAX]; /* [QUEUES][TASKS_MAX] run counts */
static int made[QUEUES];                 /* tasks enqueued (acknowledged) per queue */

/* ---- the cluster --------------------------------------------------------------- */

static redisReply *
cmd(int i, int argc, const char **argv)
{
    return test_redis_cmd(&cl.node[i], argc, argv);
}

/* Which node (index) serves @slot as a master, asked of node @ask. */
static int
owner_of(int ask, unsigned slot)
{
    return test_cluster_owner(&cl, ask, slot, NULL);
}

/* The sum of "errorstat_<name>:count=" over the nodes that are up. */
static long long
errorstat(const char *name)
{
    char key[64];
    long long sum = 0;

    snprintf(key, sizeof key, "errorstat_%s:count=", name);
    for (int i = 0; i < NODES; i++) {
        char *s = test_redis_info(&cl.node[i], "errorstats");
        assert_non_null(s);
        const char *p = strstr(s, key);
        if (p != NULL)
            sum += atoll(p + strlen(key));
        free(s);
    }
    return sum;
}

/* ---- queues, producer, workers ------------------------------------------------ */

struct sub_at {
    int node, q;
};

/* The worker of queue @q is subscribed (SSUBSCRIBE) to its wake channel on @node. */
static bool
subscribed_at(void *arg)
{
    const struct sub_at *a = arg;
    char channel[512];

    snprintf(channel, sizeof channel, "dq:{%s}:wake", qname[a->q]);
    const char *argv[] = {"PUBSUB", "SHARDNUMSUB", channel};
    redisReply *r = cmd(a->node, 3, argv);
    bool yes = r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
               r->element[1]->type == REDIS_REPLY_INTEGER && r->element[1]->integer == 1;
    freeReplyObject(r);
    return yes;
}

/* The slot of queue @q (every key of a queue is in it). */
static unsigned
slot_of(int q)
{
    char key[512];

    snprintf(key, sizeof key, "dq:{%s}:sched", qname[q]);
    return dq_cluster_slot(key, strlen(key));
}

/* Ten queue names, at least three on each master's slot range. */
static void
pick_queues(void)
{
    int per[3] = {0, 0, 0}, got = 0;

    for (int k = 0; got < QUEUES && k < 1000; k++) {
        char name[40], key[64];
        snprintf(name, sizeof name, "cq%d-%d", k, (int)getpid());
        snprintf(key, sizeof key, "dq:{%s}:sched", name);
        int third = (int)(dq_cluster_slot(key, strlen(key)) * 3 / DQ_CLUSTER_SLOTS);
        if (per[third] >= (third == 0 ? 4 : 3))
            continue;
        per[third]++;
        snprintf(qname[got++], sizeof qname[0], "%s", name);
    }
    assert_int_equal(got, QUEUES);
}

static void
handler(const dq_task *t, dq_result *res, void *arg)
{
    int q, n;
    char buf[32];

    (void)arg;
    snprintf(buf, sizeof buf, "%.*s", (int)(t->payload_len < 31 ? t->payload_len : 31),
             (const char *)t->payload);
    if (sscanf(buf, "%d-%d", &q, &n) == 2 && q >= 0 && q < QUEUES && n >= 0 && n < TASKS_MAX) {
        pthread_mutex_lock(&mu);
        if (runs[q][n] < 255)
            runs[q][n]++;
        pthread_mutex_unlock(&mu);
    }
    res->outcome = DQ_DONE;
}

struct wthread {
    dq_worker *w;
    pthread_t th;
    int rc;
};
static struct wthread workers[QUEUES];

static void *
worker_main(void *arg)
{
    struct wthread *wt = arg;
    dq_err err;
    wt->rc = dq_worker_run(wt->w, &err);
    return NULL;
}

static void
workers_start(void)
{
    dq_client_opts co = {.command_timeout_ms = 3000};
    dq_worker_opts o = {
        .concurrency = 4, .lease_ms = LEASE, .max_idle_ms = 500, .beat_ms = 1000, .grace_ms = 2000};
    dq_err err;

    for (int q = 0; q < QUEUES; q++) {
        char name[64];
        snprintf(name, sizeof name, "w%d", q);
        o.name = name;
        assert_int_equal(
            dq_worker_new(cl.url, &co, qname[q], &o, handler, NULL, &workers[q].w, &err), DQ_OK);
        assert_int_equal(pthread_create(&workers[q].th, NULL, worker_main, &workers[q]), 0);
    }
}

static void
workers_stop(void)
{
    for (int q = 0; q < QUEUES; q++) {
        if (workers[q].w == NULL)
            continue;
        dq_worker_stop(workers[q].w, false);
        pthread_join(workers[q].th, NULL);
        dq_worker_free(workers[q].w);
        workers[q].w = NULL;
    }
}

/* Enqueues task made[q] of queue @q (due at once, or within 50 ms). */
static int
enqueue_one(dq_client *c, int q, dq_err *err)
{
    char payload[32];
    dq_enqueue_opts o = {.delay_ms = made[q] % 5 * 10};
    dq_enqueued e;
    int rc;

    if (made[q] >= TASKS_MAX)
        return DQ_OK;
    snprintf(payload, sizeof payload, "%d-%d", q, made[q]);
    rc = dq_enqueue(c, qname[q], &o, payload, strlen(payload), &e, err);
    if (rc == DQ_OK)
        made[q]++;
    return rc;
}

struct producer {
    dq_client *c;
    int only; /* a queue index, or -1: all of them in turn */
    int every_ms;
    atomic_bool stop;
    pthread_t th;
    int errors;
    char last_error[256];
};

static void *
producer_main(void *arg)
{
    struct producer *p = arg;
    int q = 0;

    while (!atomic_load(&p->stop)) {
        dq_err err;
        int which = p->only >= 0 ? p->only : q++ % QUEUES;
        if (enqueue_one(p->c, which, &err) != DQ_OK) {
            p->errors++;
            snprintf(p->last_error, sizeof p->last_error, "%s", err.msg);
            test_nap_ms(50);
        }
        if (p->every_ms > 0)
            test_nap_ms(p->every_ms);
    }
    return NULL;
}

static void
producer_start(struct producer *p, int only, int every_ms)
{
    dq_err err;

    memset(p, 0, sizeof *p);
    p->only = only;
    p->every_ms = every_ms;
    assert_int_equal(dq_client_open(cl.url, NULL, &p->c, &err), DQ_OK);
    assert_int_equal(pthread_create(&p->th, NULL, producer_main, p), 0);
}

static void
producer_stop(struct producer *p)
{
    atomic_store(&p->stop, true);
    pthread_join(p->th, NULL);
}

struct drain {
    dq_client *c;
    int from_q, to_q;
};

/* Every queue in [from_q, to_q) is empty (nothing due, future or in flight). */
static bool
drained(void *arg)
{
    struct drain *d = arg;

    for (int q = d->from_q; q < d->to_q; q++) {
        dq_stats st;
        dq_err err;
        if (dq_stats_get(d->c, qname[q], &st, &err) != DQ_OK || st.due != 0 || st.future != 0 ||
            st.inflight != 0)
            return false;
    }
    return true;
}

/* Tasks of @q in [from, to) that never ran, and runs past the first. */
static void
tally(int q, int from, int to, int *lost, int *twice)
{
    pthread_mutex_lock(&mu);
    for (int n = from; n < to; n++) {
        if (runs[q][n] == 0)
            (*lost)++;
        else if (runs[q][n] > 1)
            *twice += runs[q][n] - 1;
    }
    pthread_mutex_unlock(&mu);
}

/* ---- the tests ------------------------------------------------------------------ */

static void
ten_queues_spread_and_drained(void **state)
{
    dq_client *c;
    dq_err err;
    int per_node[NODES] = {0}, tasks = long_mode ? 2000 : 200, lost = 0, twice = 0;

    (void)state;
    assert_int_equal(dq_client_open(cl.url, NULL, &c, &err), DQ_OK);
    for (int q = 0; q < QUEUES; q++) {
        for (int n = 0; n < tasks; n++)
            assert_int_equal(enqueue_one(c, q, &err), DQ_OK);
    }
    /* the queues really are on three different masters */
    for (int q = 0; q < QUEUES; q++) {
        int o = owner_of(0, slot_of(q));
        assert_true(o >= 0);
        per_node[o]++;
        assert_string_not_equal(dq_client_node(c, qname[q]), "");
    }
    int masters_used = 0;
    for (int i = 0; i < NODES; i++)
        masters_used += per_node[i] > 0;
    assert_int_equal(masters_used, 3);
    /* the scripts were loaded on each master the queues use (FUNCTION LOAD, or SCRIPT
     * LOAD on the EVALSHA path), by the client, on "Function not found" / NOSCRIPT */
    bool evalsha =
        getenv("DELAYQ_SCRIPTS") != NULL && strcmp(getenv("DELAYQ_SCRIPTS"), "evalsha") == 0;
    for (int i = 0; i < NODES; i++) {
        if (per_node[i] == 0)
            continue;
        const char *fl[] = {"FUNCTION", "LIST", "LIBRARYNAME", dq_library_name};
        const char *se[] = {"SCRIPT", "EXISTS", dq_script_table[DQ_SCRIPT_ENQUEUE].sha1};
        redisReply *r = evalsha ? cmd(i, 3, se) : cmd(i, 4, fl);
        assert_non_null(r);
        assert_int_equal(r->type, REDIS_REPLY_ARRAY);
        assert_int_equal(r->elements, 1);
        if (evalsha)
            assert_int_equal(r->element[0]->integer, 1);
        freeReplyObject(r);
    }

    int64_t t0 = test_mono_ms();
    workers_start();
    struct drain d = {c, 0, QUEUES};
    assert_true(wait_until(drained, &d, 60000, "all ten queues drained"));
    int64_t took = test_mono_ms() - t0;
    for (int q = 0; q < QUEUES; q++)
        tally(q, 0, made[q], &lost, &twice);
    assert_int_equal(lost, 0);
    assert_int_equal(twice, 0);
    printf("# cluster: %d queues on 3 masters, %d tasks drained by %d workers in %lld ms\n", QUEUES,
           QUEUES * tasks, QUEUES, (long long)took);

    /* delayq queues lists every queue of the cluster */
    char line[512], cmdline[1200];
    int listed = 0;
    snprintf(cmdline, sizeof cmdline, "'%s' queues --url '%s'", getenv("DELAYQ_BIN"), cl.url);
    FILE *f = popen(cmdline, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) != NULL) {
        for (int q = 0; q < QUEUES; q++)
            listed += strstr(line, qname[q]) != NULL;
    }
    assert_int_equal(pclose(f), 0);
    assert_int_equal(listed, QUEUES);
    printf("# cluster: delayq queues lists %d of %d queues\n", listed, QUEUES);

    /* delayq stats names the node that holds the queue */
    char want[64];
    int holder = owner_of(0, slot_of(3));
    bool named = false;
    snprintf(want, sizeof want, "(node 127.0.0.1:%d)", cl.node[holder].port);
    snprintf(cmdline, sizeof cmdline, "'%s' stats -q '%s' --url '%s'", getenv("DELAYQ_BIN"),
             qname[3], cl.url);
    f = popen(cmdline, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) != NULL)
        named = named || strstr(line, want) != NULL;
    assert_int_equal(pclose(f), 0);
    assert_true(named);

    /* a queue the cluster does not know is named, with the close one (the queue's slot
     * and the registry's may be on different nodes); a queue whose registry entry is
     * gone is still known by its keys, read on its own node */
    char out[1024] = "", typo[48];
    size_t got = 0;
    snprintf(typo, sizeof typo, "%sx", qname[3]);
    snprintf(cmdline, sizeof cmdline, "'%s' stats -q '%s' --url '%s' 2>&1", getenv("DELAYQ_BIN"),
             typo, cl.url);
    f = popen(cmdline, "r");
    assert_non_null(f);
    while (got + 1 < sizeof out && fgets(out + got, (int)(sizeof out - got), f) != NULL)
        got = strlen(out);
    int st = pclose(f);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    snprintf(want, sizeof want, "(did you mean %s?)", qname[3]);
    if (strstr(out, "is not known on cluster ") == NULL || strstr(out, want) == NULL)
        fail_msg("stats -q %s: %s", typo, out);
    snprintf(cmdline, sizeof cmdline,
             "'%s' queues --url '%s' --forget '%s' >/dev/null && '%s' stats -q '%s' --url '%s' "
             ">/dev/null",
             getenv("DELAYQ_BIN"), cl.url, qname[5], getenv("DELAYQ_BIN"), qname[5], cl.url);
    assert_int_equal(system(cmdline), 0);
    printf("# cluster: an unknown queue is named (%s), a forgotten one is known by its keys\n",
           want);
    /* each worker listens on its own queue's node */
    struct sub_at at = {holder, 3};
    assert_true(wait_until(subscribed_at, &at, 10000, "queue 3's worker subscribed on its node"));
    dq_client_free(c);
}

/* Moves @slot from node @from to node @to key by key, as redis-cli --cluster reshard
 * does, with pauses so that calls meet the half-moved slot (TRYAGAIN, ASK). */
static void
move_slot(unsigned slot, int from, int to)
{
    char sl[16], from_id[64], to_id[64], port[16];
    int master[NODES], masters;

    snprintf(sl, sizeof sl, "%u", slot);
    snprintf(port, sizeof port, "%d", cl.node[to].port);
    assert_int_equal(test_cluster_node_id(&cl, from, from_id, sizeof from_id), 0);
    assert_int_equal(test_cluster_node_id(&cl, to, to_id, sizeof to_id), 0);
    const char *imp[] = {"CLUSTER", "SETSLOT", sl, "IMPORTING", from_id};
    const char *mig[] = {"CLUSTER", "SETSLOT", sl, "MIGRATING", to_id};
    redisReply *r = cmd(to, 5, imp);
    assert_true(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    r = cmd(from, 5, mig);
    assert_true(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    for (int round = 0; round < 1000; round++) {
        const char *get[] = {"CLUSTER", "GETKEYSINSLOT", sl, "1"};
        redisReply *k = cmd(from, 4, get);
        assert_non_null(k);
        if (k->elements == 0) {
            freeReplyObject(k);
            break;
        }
        const char *m[] = {"MIGRATE", "127.0.0.1", port, k->element[0]->str, "0", "5000"};
        r = cmd(from, 6, m);
        assert_true(r != NULL && r->type == REDIS_REPLY_STATUS);
        freeReplyObject(r);
        freeReplyObject(k);
        test_nap_ms(40);
    }
    /* every key has moved, the slot is not yet the new node's: calls meet ASK (then
     * TRYAGAIN on the importing node, since a queue's scripts name keys that do not
     * exist, such as the wake channel) */
    test_nap_ms(400);
    const char *set[] = {"CLUSTER", "SETSLOT", sl, "NODE", to_id};
    masters = test_cluster_masters(&cl, master);
    for (int k = 0; k < masters; k++)
        freeReplyObject(cmd(master[k], 5, set));
}

static void
reshard_under_load(void **state)
{
    struct producer p;
    int q = 0, lost = 0, twice = 0, before, to = -1, m[NODES], masters;
    long long moved0 = errorstat("MOVED"), ask0 = errorstat("ASK"), again0 = errorstat("TRYAGAIN");

    (void)state;
    unsigned slot = slot_of(q);
    int from = owner_of(0, slot);
    masters = test_cluster_masters(&cl, m);
    for (int k = 0; k < masters && to < 0; k++) {
        if (m[k] != from)
            to = m[k];
    }
    assert_true(from >= 0 && to >= 0);
    before = made[q];
    /* an open inspector names the node that serves the queue, and follows the move */
    char top[1200], want[64];
    snprintf(top, sizeof top, "DELAYQ_URL='%s' exec '%s' top -q '%s' --refresh 250ms", cl.url,
             getenv("DELAYQ_BIN"), qname[q]);
    assert_true(chaos_tmux_start(200, 30, top) > 0);
    snprintf(want, sizeof want, "| cluster node 127.0.0.1:%d ", cl.node[from].port);
    for (int64_t end = test_mono_ms() + 15000; !chaos_tmux_has(want) && test_mono_ms() < end;)
        test_nap_ms(50);
    if (!chaos_tmux_has(want))
        chaos_tmux_dump();
    assert_true(chaos_tmux_has(want));
    producer_start(&p, q, 5);
    /* the queue is busy: tasks are being enqueued and run */
    for (int64_t end = test_mono_ms() + 10000; made[q] < before + 50 && test_mono_ms() < end;)
        test_nap_ms(10);
    int64_t t0 = test_mono_ms();
    move_slot(slot, from, to);
    int64_t took = test_mono_ms() - t0;
    for (int64_t end = test_mono_ms() + (long_mode ? 10000 : 2000); test_mono_ms() < end;)
        test_nap_ms(50);
    producer_stop(&p);
    assert_int_equal(owner_of(0, slot), to);
    /* the old node dropped the worker's wake-up subscription with the slot; it is back,
     * on the new node */
    struct sub_at at = {to, q};
    assert_true(wait_until(subscribed_at, &at, 15000, "the worker subscribed on the new node"));
    snprintf(want, sizeof want, "| cluster node 127.0.0.1:%d ", cl.node[to].port);
    for (int64_t end = test_mono_ms() + 15000; !chaos_tmux_has(want) && test_mono_ms() < end;)
        test_nap_ms(50);
    if (!chaos_tmux_has(want))
        chaos_tmux_dump();
    assert_true(chaos_tmux_has(want));
    chaos_cleanup(); /* the inspector and its tmux server */

    struct drain d = {p.c, q, q + 1};
    assert_true(wait_until(drained, &d, 30000, "the resharded queue drained"));
    tally(q, 0, made[q], &lost, &twice);
    long long moved = errorstat("MOVED") - moved0, ask = errorstat("ASK") - ask0,
              again = errorstat("TRYAGAIN") - again0;
    struct dq_cluster_counts cc;
    dq_cluster_counts_get(p.c, &cc);
    printf("# cluster reshard: slot %u moved in %lld ms under load; %d tasks enqueued meanwhile, "
           "%d enqueue errors; servers answered MOVED %lld, ASK %lld, TRYAGAIN %lld times; "
           "producer followed %lld MOVED, %lld ASK; lost %d, ran twice %d\n",
           slot, (long long)took, made[q] - before, p.errors, moved, ask, again,
           (long long)cc.moved, (long long)cc.ask, lost, twice);
    if (p.errors > 0)
        printf("# last enqueue error: %s\n", p.last_error);
    assert_true(moved > 0);
    assert_true(ask > 0);
    /* no call of any queue ever crossed slots, on any node */
    assert_int_equal(errorstat("CROSSSLOT"), 0);
    assert_int_equal(lost, 0);
    assert_int_equal(twice, 0);
    dq_client_free(p.c);
}

static void
master_killed_replica_promoted(void **state)
{
    struct producer p;
    int victim, lost = 0, twice = 0, at_promo[QUEUES];

    (void)state;
    victim = owner_of(0, slot_of(1));
    assert_true(victim >= 0);
    int ask = victim == 0 ? 1 : 0;
    producer_start(&p, -1, 2);
    for (int64_t end = test_mono_ms() + 1500; test_mono_ms() < end;)
        test_nap_ms(50);
    int64_t t0 = test_mono_ms();
    test_redis_kill(&cl.node[victim]);
    cl.node[victim].pid = 0;
    /* the replica takes over once the others agree the master failed (node timeout) */
    int promoted = -1;
    for (int64_t end = test_mono_ms() + 30000; promoted < 0 && test_mono_ms() < end;) {
        int o = owner_of(ask, slot_of(1));
        if (o >= 0 && o != victim)
            promoted = o;
        else
            test_nap_ms(50);
    }
    assert_true(promoted >= 0);
    int64_t promo_ms = test_mono_ms() - t0;
    memcpy(at_promo, made, sizeof at_promo);
    /* work carries on: the producer keeps enqueuing, the workers keep draining */
    for (int64_t end = test_mono_ms() + (long_mode ? 20000 : 3000); test_mono_ms() < end;)
        test_nap_ms(50);
    producer_stop(&p);
    int after = 0;
    for (int q = 0; q < QUEUES; q++)
        after += made[q] - at_promo[q];
    assert_true(after > 0);
    struct sub_at at = {promoted, 1};
    assert_true(
        wait_until(subscribed_at, &at, 20000, "the worker subscribed on the promoted node"));
    struct drain d = {p.c, 0, QUEUES};
    assert_true(wait_until(drained, &d, 60000, "every queue drained after the failover"));
    int64_t recovered_ms = test_mono_ms() - t0;
    int lost_after = 0, twice_after = 0;
    for (int q = 0; q < QUEUES; q++) {
        tally(q, 0, made[q], &lost, &twice);
        tally(q, at_promo[q], made[q], &lost_after, &twice_after);
    }
    struct dq_cluster_counts cc;
    dq_cluster_counts_get(p.c, &cc);
    printf("# cluster failover: master %d killed, replica %d promoted after %lld ms, all "
           "queues drained %lld ms after the kill; %d tasks enqueued after the promotion; of "
           "all acknowledged enqueues %d lost, %d extra runs (asynchronous replication: "
           "writes the old master had not passed on); producer: %d errors, %lld map reads, %lld "
           "node errors, %lld "
           "CLUSTERDOWN\n",
           victim, promoted, (long long)promo_ms, (long long)recovered_ms, after, lost, twice,
           p.errors, (long long)cc.refreshes, (long long)cc.node_errors, (long long)cc.down);
    /* what was enqueued against the promoted master all ran */
    assert_int_equal(lost_after, 0);
    dq_client_free(p.c);
}

/* rediss-cluster://: three TLS-only masters (tls-cluster yes) sharing node 0's
 * certificates; the client checks each node's certificate and name against one CA. */
static void
tls_cluster(void **state)
{
    struct test_redis tn[3];
    char bus[3][16], addr[3][32], turl[200], cert[300], key[300], ca[300], out[300];
    dq_client_opts co = {0};
    dq_client *c = NULL;
    dq_err err;

    (void)state;
    memset(tn, 0, sizeof tn);
    for (int i = 0; i < 3; i++) {
        int bus_port = test_cluster_free_port();
        assert_true(bus_port > 0);
        snprintf(bus[i], sizeof bus[i], "%d", bus_port);
        /* node 0 keeps the certificates it makes (the list ends at its NULL); the others
         * take node 0's, so one CA signs every node */
        const char *extra[] = {"--cluster-enabled",
                               "yes",
                               "--cluster-node-timeout",
                               "1000",
                               "--cluster-port",
                               bus[i],
                               "--tls-cluster",
                               "yes",
                               i > 0 ? "--tls-cert-file" : NULL,
                               cert,
                               "--tls-key-file",
                               key,
                               "--tls-ca-cert-file",
                               ca,
                               NULL};
        assert_int_equal(test_redis_start_tls(&tn[i], extra), 0);
        if (i == 0) {
            snprintf(cert, sizeof cert, "%s/server.crt", tn[0].dir);
            snprintf(key, sizeof key, "%s/server.key", tn[0].dir);
            snprintf(ca, sizeof ca, "%s", tn[0].ca);
        }
        snprintf(addr[i], sizeof addr[i], "127.0.0.1:%d", tn[i].port);
    }
    const char *argv[] = {test_redis_cli(), "--tls",         "--cacert", ca,
                          "--cluster",      "create",        addr[0],    addr[1],
                          addr[2],          "--cluster-yes", NULL};
    snprintf(out, sizeof out, "%s/cluster-create.out", tn[0].dir);
    int st = test_run(argv, out, 60000);
    bool ok = false;
    for (int64_t end = test_mono_ms() + 30000; st == 0 && !ok && test_mono_ms() < end;) {
        ok = true;
        for (int i = 0; i < 3; i++) {
            const char *ci[] = {"CLUSTER", "INFO"};
            redisReply *r = test_redis_cmd(&tn[i], 2, ci);
            ok = ok && r != NULL && r->type == REDIS_REPLY_STRING &&
                 strstr(r->str, "cluster_state:ok") != NULL;
            freeReplyObject(r);
        }
        if (!ok)
            test_nap_ms(50);
    }
    snprintf(turl, sizeof turl, "rediss-cluster://%s", addr[1]);
    co.tls_ca = ca;
    int rc = st == 0 && ok ? dq_client_open(turl, &co, &c, &err) : -1;
    int used[3] = {0, 0, 0}, masters = 0;
    for (int q = 0; rc == DQ_OK && q < QUEUES; q++) {
        dq_enqueued e;
        rc = dq_enqueue(c, qname[q], NULL, "t", 1, &e, &err);
        for (int i = 0; rc == DQ_OK && i < 3; i++) {
            if (strcmp(dq_client_node(c, qname[q]), addr[i]) == 0)
                used[i] = 1;
        }
    }
    for (int i = 0; i < 3; i++)
        masters += used[i];
    dq_queues qs = {0};
    if (rc == DQ_OK)
        rc = dq_queues_get(c, 100, &qs, &err);
    size_t listed = qs.n;
    dq_queues_free(&qs);
    /* the wrong CA is refused on every node */
    dq_client *bad = NULL;
    dq_client_opts wrong = {.tls_ca = tn[0].other_ca};
    int bad_rc = dq_client_open(turl, &wrong, &bad, &err);
    dq_client_free(bad);
    dq_client_free(c);
    for (int i = 0; i < 3; i++)
        test_redis_stop(&tn[i]);
    assert_int_equal(st, 0);
    assert_true(ok);
    assert_int_equal(rc, DQ_OK);
    assert_int_equal(masters, 3);
    assert_int_equal(listed, QUEUES);
    assert_int_equal(bad_rc, DQ_ECONN);
    assert_non_null(strstr(err.msg, "certificate verify failed"));
    printf("# cluster over TLS: %d queues on %d masters, %zu listed\n", QUEUES, masters, listed);
}

/* Runs `delayq ARGS` and returns its exit status, with its stderr in @out. */
static int
delayq_err(const char *args, char *out, size_t size)
{
    char cmdline[1200];
    size_t n = 0;

    snprintf(cmdline, sizeof cmdline, "'%s' %s 2>&1 >/dev/null", getenv("DELAYQ_BIN"), args);
    FILE *f = popen(cmdline, "r");
    assert_non_null(f);
    n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A cluster node named with redis://, and a plain Redis with redis-cluster://, are
 * each told what to use. */
static void
wrong_url_kind_is_named(void **state)
{
    struct test_redis plain;
    char args[600], out[1024];
    int other = -1, m[NODES], masters = test_cluster_masters(&cl, m);

    (void)state;
    for (int k = 0; k < masters && other < 0; k++) {
        if (owner_of(m[k], slot_of(2)) != m[k])
            other = m[k];
    }
    assert_true(other >= 0);
    snprintf(args, sizeof args, "stats -q '%s' --url redis://127.0.0.1:%d", qname[2],
             cl.node[other].port);
    assert_int_equal(delayq_err(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "MOVED "));
    assert_non_null(strstr(out, "(that is a Redis Cluster node: use redis-cluster://)"));

    assert_int_equal(test_redis_start(&plain, NULL), 0);
    snprintf(args, sizeof args, "stats -q x --url redis-cluster://127.0.0.1:%d", plain.port);
    int st = delayq_err(args, out, sizeof out);
    test_redis_stop(&plain);
    assert_int_equal(st, 1);
    assert_non_null(strstr(out, "refused CLUSTER SLOTS (is it in cluster mode?)"));
}

/* ---- a partitioned queue -------------------------------------------------------- */

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ZCARD of key @what of partition @name, asked of the master that holds it. */
static long long
part_zcard(const char *name, const char *what)
{
    char key[200];

    snprintf(key, sizeof key, "dq:{%s}:%s", name, what);
    int o = owner_of(0, dq_cluster_slot(key, strlen(key)));
    assert_true(o >= 0);
    const char *argv[] = {"ZCARD", key};
    return test_redis_int(&cl.node[o], 2, argv);
}

/* The handlers of three workers noted at least @want ids, in files "<prefix>.<k>". */
struct ran_wait {
    long long want;
    char prefix[256];
};

static bool
lines_reached(void *arg)
{
    const struct ran_wait *rw = arg;
    long long n = 0;
    char line[128];
    char path[300];

    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s.%d", rw->prefix, k);
        FILE *f = fopen(path, "r");
        while (f != NULL && fgets(line, sizeof line, f) != NULL)
            n++;
        if (f != NULL)
            fclose(f);
    }
    return n >= rw->want;
}

/*
 * PROTOCOL.md 10.10 on three masters: a queue of 6 partitions has keys on every
 * master; 6 000 tasks enqueued by the library (half with caller ids, half generated)
 * are run exactly once by three `delayq work` processes, each claiming from every
 * partition on whichever master holds it.
 */
static void
partitioned_queue_three_work_processes(void **state)
{
    enum { N = 6000 };
    dq_client *c;
    dq_err err;
    struct dq_parts m;
    char q[48], dir[] = "/tmp/dq-parts-XXXXXX", handler[300];
    struct ran_wait wait_arg;
    char **ids = calloc(N, sizeof *ids);

    (void)state;
    assert_non_null(ids);
    assert_non_null(mkdtemp(dir));
    snprintf(q, sizeof q, "cparts-%d", (int)getpid());
    assert_int_equal(dq_client_open(cl.url, NULL, &c, &err), DQ_OK);
    dq_config cfg = {.partitions = 6};
    if (dq_config_set(c, q, &cfg, &err) != DQ_OK)
        fail_msg("config partitions 6: %s", err.msg);
    dq_parts_forget(c, q);
    assert_int_equal(dq_parts_get(c, q, &m, &err), DQ_OK);
    assert_int_equal(m.all, 6);
    int per_node[NODES] = {0}, masters = 0;
    for (size_t i = 0; i < m.all; i++) {
        char key[200];
        snprintf(key, sizeof key, "dq:{%s}:sched", m.names[i]);
        int o = owner_of(0, dq_cluster_slot(key, strlen(key)));
        assert_true(o >= 0);
        masters += per_node[o]++ == 0;
    }
    assert_int_equal(masters, 3);

    /* enqueued by the library, due now and up to 1 s ahead */
    dq_enqueue_item *it = calloc(1000, sizeof *it);
    dq_enqueued *out = calloc(1000, sizeof *out);
    char(*cid)[16] = calloc(1000, sizeof *cid);
    assert_true(it != NULL && out != NULL && cid != NULL);
    for (int done = 0; done < N; done += 1000) {
        memset(it, 0, 1000 * sizeof *it);
        for (int i = 0; i < 1000; i++) {
            int k = done + i;
            snprintf(cid[i], sizeof cid[i], "c-%d", k);
            it[i].payload = "{}";
            it[i].payload_len = 2;
            it[i].opts.id = k % 2 == 0 ? cid[i] : NULL;
            it[i].opts.delay_ms = k % 3 == 0 ? 0 : (int64_t)k * 7919 % 1000;
        }
        if (dq_enqueue_batch(c, q, it, 1000, out, &err) != DQ_OK)
            fail_msg("enqueue: %s", err.msg);
        for (int i = 0; i < 1000; i++) {
            assert_false(out[i].duplicate);
            ids[done + i] = strdup(out[i].id);
        }
    }
    free(it);
    free(out);
    free(cid);
    long long spread = 0;
    for (size_t i = 0; i < m.all; i++) {
        long long in = part_zcard(m.names[i], "sched");
        assert_true(in > N / 12); /* every partition holds a share */
        spread += in;
    }
    assert_int_equal(spread, N);

    /* three delayq work processes, each with persistent handlers that note the ids */
    snprintf(handler, sizeof handler, "%s/handler.py", dir);
    FILE *hf = fopen(handler, "w");
    assert_non_null(hf);
    fprintf(hf, "import json, sys\n"
                "out = open(sys.argv[1], 'a', buffering=1)\n"
                "for line in sys.stdin:\n"
                "    t = json.loads(line)\n"
                "    out.write(t['id'] + '\\n')\n"
                "    print(json.dumps({'id': t['id'], 'result': 'done'}), flush=True)\n");
    fclose(hf);
    pid_t pids[3];
    int64_t t0 = test_mono_ms();
    for (int k = 0; k < 3; k++) {
        char name[16], file[300], log[300];
        snprintf(name, sizeof name, "pw%d", k);
        snprintf(file, sizeof file, "%s/ran.%d", dir, k);
        snprintf(log, sizeof log, "%s/work.%d.log", dir, k);
        const char *argv[] = {
            "--url",         cl.url, "-q",         q,    "--name",  name, "--persistent",
            "--concurrency", "4",    "--max-idle", "1s", "--quiet", "--", "python3",
            handler,         file,   NULL};
        pids[k] = test_work_start(argv, log);
    }
    wait_arg.want = N;
    snprintf(wait_arg.prefix, sizeof wait_arg.prefix, "%s/ran", dir);
    assert_true(wait_until(lines_reached, &wait_arg, 120000, "6 000 tasks run"));
    int64_t took = test_mono_ms() - t0;
    for (int k = 0; k < 3; k++)
        assert_int_equal(test_work_stop(pids[k], SIGTERM), 0);
    for (size_t i = 0; i < m.all; i++) {
        assert_int_equal(part_zcard(m.names[i], "sched"), 0);
        assert_int_equal(part_zcard(m.names[i], "inflight"), 0);
    }

    /* every id ran, and only once */
    char **ran = calloc(2 * N, sizeof *ran);
    size_t nran = 0;
    assert_non_null(ran);
    for (int k = 0; k < 3; k++) {
        char path[300], line[128];
        snprintf(path, sizeof path, "%s/ran.%d", dir, k);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        while (fgets(line, sizeof line, f) != NULL && nran < 2 * N) {
            line[strcspn(line, "\n")] = '\0';
            ran[nran++] = strdup(line);
        }
        fclose(f);
        unlink(path);
    }
    qsort(ids, N, sizeof *ids, cmp_str);
    qsort(ran, nran, sizeof *ran, cmp_str);
    size_t twice = 0;
    for (size_t i = 1; i < nran; i++)
        twice += strcmp(ran[i - 1], ran[i]) == 0;
    assert_int_equal(twice, 0);
    assert_int_equal(nran, N);
    for (size_t i = 0; i < nran; i++)
        assert_string_equal(ran[i], ids[i]);
    printf("# cluster: partitions 6 on 3 masters, %d tasks run once each by 3 delayq work "
           "processes in %lld ms\n",
           N, (long long)took);
    for (size_t i = 0; i < nran; i++)
        free(ran[i]);
    for (int i = 0; i < N; i++)
        free(ids[i]);
    free(ran);
    free(ids);
    for (int k = 0; k < 3; k++) {
        char path[300];
        snprintf(path, sizeof path, "%s/work.%d.log", dir, k);
        unlink(path);
    }
    unlink(handler);
    rmdir(dir);
    dq_parts_free(&m);
    dq_client_free(c);
}

static int
setup(void **state)
{
    (void)state;
    long_mode = getenv("DQ_CHAOS_LONG") != NULL && strcmp(getenv("DQ_CHAOS_LONG"), "1") == 0;
    runs = calloc(QUEUES, sizeof *runs);
    assert_non_null(runs);
    int rc = test_cluster_start(&cl, 3, 1, 1000, NULL);
    if (rc == TEST_REDIS_SKIP)
        exit(77);
    assert_int_equal(rc, 0);
    pick_queues();
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    chaos_cleanup();
    test_work_reap_all();
    workers_stop();
    test_cluster_stop(&cl);
    free(runs);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ten_queues_spread_and_drained),
        cmocka_unit_test(wrong_url_kind_is_named),
        cmocka_unit_test(partitioned_queue_three_work_processes),
        cmocka_unit_test(tls_cluster),
        cmocka_unit_test(reshard_under_load),
        cmocka_unit_test(master_killed_replica_promoted),
    };
    signal(SIGPIPE, SIG_IGN);
    test_filter_from_env();
    return cmocka_run_group_tests_name("prod/cluster", tests, setup, teardown);
}
