/* SPDX-License-Identifier: MIT */
/*
 * w9.c: W9, one logical queue over a local Redis Cluster of three masters
 * (bench/README.md): partitions 1, 3 and 6 of the same queue, each measured for
 * enqueue throughput (threads of dq_enqueue, threads of dq_enqueue_batch) and processing
 * throughput (library workers with W2's instant C handler), with each master's Redis CPU
 * from INFO cpu before and after (--w9-replicas: with a replica per master, whose
 * replication the masters' CPU then includes). The cluster is the tests' own
 * (tests/harness/cluster.h: `redis-cli --cluster create`, free loopback ports, servers held
 * by PID). Clients, workers and servers share this machine's cores, so the ratio of
 * partitions N to partitions 1 is the figure, not the absolute rate.
 */
#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "harness/cluster.h"

#define W9_NODES   3
#define W9_THREADS 4 /* enqueuing threads, each with its own cluster client */
#define W9_WORKERS 3 /* library workers (one coordinator and connection set each) */

static const unsigned w9_parts[] = {1, 3, 6};
#define W9_SETTINGS (sizeof w9_parts / sizeof w9_parts[0])

/* the cluster (its masters, or with --w9-replicas a replica for each too) and which of its
 * nodes are the masters */
static struct test_cluster w9_cl;
static int w9_m[W9_NODES] = {0, 1, 2};

static void
w9_stop_nodes(void)
{
    test_cluster_stop(&w9_cl);
}

static void
w9_start_cluster(bool replicas)
{
    /* the bench's own settings (hz 10, no persistence), as the single server has them */
    const char *extra[] = {"--hz", "10", NULL};
    int m[2 * W9_NODES], k;

    atexit(w9_stop_nodes);
    if (test_cluster_start(&w9_cl, W9_NODES, replicas ? 1 : 0, 5000, extra) != 0)
        bench_die("W9: cannot start the cluster of %d nodes", W9_NODES * (replicas ? 2 : 1));
    k = test_cluster_masters(&w9_cl, m);
    if (k != W9_NODES)
        bench_die("W9: %d masters in the cluster, not %d", k, W9_NODES);
    memcpy(w9_m, m, sizeof w9_m);
}

/* used_cpu_sys + used_cpu_user of node @i (INFO cpu: every thread), in microseconds. */
static int64_t
node_cpu_us(int i)
{
    const char *argv[] = {"INFO", "cpu"};
    redisReply *r = test_redis_cmd(&w9_cl.node[w9_m[i]], 2, argv);
    double sys = -1, user = -1;

    if (r == NULL || r->type != REDIS_REPLY_STRING)
        bench_die("W9: INFO cpu on node %d failed", i);
    const char *p = strstr(r->str, "used_cpu_sys:"), *u = strstr(r->str, "used_cpu_user:");
    if (p != NULL)
        sys = atof(p + strlen("used_cpu_sys:"));
    if (u != NULL)
        user = atof(u + strlen("used_cpu_user:"));
    freeReplyObject(r);
    if (sys < 0 || user < 0)
        bench_die("W9: INFO cpu on node %d has no used_cpu_sys/user", i);
    return (int64_t)((sys + user) * 1e6);
}

static void
cpu_now(int64_t *out)
{
    for (int i = 0; i < W9_NODES; i++)
        out[i] = node_cpu_us(i);
}

/* CONFIG RESETSTAT on every node: the commands of one measurement start at 0. */
static void
reset_stats(void)
{
    for (int i = 0; i < W9_NODES; i++) {
        const char *argv[] = {"CONFIG", "RESETSTAT"};
        freeReplyObject(test_redis_cmd(&w9_cl.node[w9_m[i]], 2, argv));
    }
}

/* Client commands (bench_cmdstats: scripts count once) on all nodes since reset_stats. */
static long long
client_calls(void)
{
    long long n = 0;

    for (int i = 0; i < W9_NODES; i++) {
        /* bench_cmdstats reads b->redis only */
        struct bench view = {.redis = w9_cl.node[w9_m[i]]};
        n += bench_cmdstats(&view).client;
    }
    return n;
}

static void
flush_nodes(void)
{
    for (int i = 0; i < W9_NODES; i++) {
        const char *argv[] = {"FLUSHALL"}; /* on the masters: a replica refuses writes */
        redisReply *r = test_redis_cmd(&w9_cl.node[w9_m[i]], 1, argv);
        if (r == NULL || r->type == REDIS_REPLY_ERROR)
            bench_die("W9: FLUSHALL on node %d failed", i);
        freeReplyObject(r);
    }
}

static dq_client *
w9_client(void)
{
    dq_client_opts o = {.command_timeout_ms = 60000, .who = "delayq-bench"};
    dq_client *c = NULL;
    dq_err err = {0};

    bench_ok(dq_client_open(w9_cl.url, &o, &c, &err), &err, "W9 connect");
    return c;
}

/* A fresh queue of @parts partitions (partitions 1: today's layout, no config call). */
static void
w9_queue(struct bench *b, dq_client *c, unsigned parts, char *q, size_t size)
{
    dq_err err = {0};

    bench_queue(b, "w9", q, size);
    if (parts > 1) {
        dq_config cfg = {.partitions = parts};
        bench_ok(dq_config_set(c, q, &cfg, &err), &err, "W9 config partitions");
    }
}

/* One measurement: each master's CPU (us) and the client commands of all nodes. */
struct w9_m {
    int64_t cpu[W9_NODES];
    long long calls;
};

static void
measure_start(int64_t *c0)
{
    reset_stats();
    cpu_now(c0);
}

static void
measure_end(const int64_t *c0, struct w9_m *m)
{
    int64_t c1[W9_NODES];

    cpu_now(c1);
    for (int i = 0; i < W9_NODES; i++)
        m->cpu[i] = c1[i] - c0[i];
    m->calls = client_calls();
}

/* ---- enqueue --------------------------------------------------------------------- */

struct enq_thread {
    pthread_t th;
    const char *queue;
    const dq_enqueue_item *it;
    size_t n;
    bool batch;
};

static void *
enq_main(void *arg)
{
    struct enq_thread *t = arg;
    dq_client *c = w9_client();
    dq_enqueued e, *out = NULL;
    dq_err err = {0};

    if (t->batch) {
        out = calloc(1000, sizeof *out);
        if (out == NULL)
            bench_die("out of memory");
        for (size_t i = 0; i < t->n; i += 1000) {
            size_t k = t->n - i < 1000 ? t->n - i : 1000;
            bench_ok(dq_enqueue_batch(c, t->queue, t->it + i, k, out, &err), &err,
                     "W9 enqueue batch");
        }
    } else {
        for (size_t i = 0; i < t->n; i++)
            bench_ok(dq_enqueue(c, t->queue, &t->it[i].opts, t->it[i].payload, PAYLOAD, &e, &err),
                     &err, "W9 enqueue");
    }
    free(out);
    dq_client_free(c);
    return NULL;
}

/* @n items over W9_THREADS threads; tasks/s, and each master's CPU (us) into @cpu. */
static double
enqueue_once(struct bench *b, unsigned parts, const dq_enqueue_item *it, size_t n, bool batch,
             struct w9_m *m)
{
    struct enq_thread t[W9_THREADS];
    dq_client *c = w9_client();
    int64_t c0[W9_NODES];
    char q[64];

    flush_nodes();
    w9_queue(b, c, parts, q, sizeof q);
    measure_start(c0);
    int64_t t0 = bench_mono_us();
    for (size_t k = 0; k < W9_THREADS; k++) {
        t[k] = (struct enq_thread){
            .queue = q, .it = it + k * (n / W9_THREADS), .n = n / W9_THREADS, .batch = batch};
        if (pthread_create(&t[k].th, NULL, enq_main, &t[k]) != 0)
            bench_die("cannot start a thread");
    }
    for (size_t k = 0; k < W9_THREADS; k++)
        pthread_join(t[k].th, NULL);
    int64_t t1 = bench_mono_us();
    measure_end(c0, m);

    size_t done = (n / W9_THREADS) * W9_THREADS;
    dq_stats s;
    dq_err err = {0};
    bench_ok(dq_stats_get(c, q, &s, &err), &err, "W9 stats");
    if (s.enqueued != (int64_t)done)
        bench_die("W9: %lld enqueued after %zu enqueues", (long long)s.enqueued, done);
    dq_client_free(c);
    return (double)done * 1e6 / (double)(t1 - t0);
}

/* ---- process --------------------------------------------------------------------- */

static atomic_long w9_ran;

static void
w9_handler(const dq_task *t, dq_result *res, void *arg)
{
    (void)t;
    (void)arg;
    atomic_fetch_add(&w9_ran, 1);
    res->outcome = DQ_DONE;
}

struct w9_worker {
    dq_worker *w;
    pthread_t th;
    int rc;
    dq_err err;
};

static void *
w9_worker_main(void *arg)
{
    struct w9_worker *wt = arg;
    wt->rc = dq_worker_run(wt->w, &wt->err);
    return NULL;
}

/* @n tasks due now, W9_WORKERS library workers; tasks/s from the workers' start to the
 * last ack (stats polled only after every handler ran, so polls do not compete). */
static double
process_once(struct bench *b, unsigned parts, const dq_enqueue_item *it, size_t n, struct w9_m *m)
{
    struct w9_worker wt[W9_WORKERS];
    dq_worker_opts o = {.concurrency = 64, .batch = 64};
    dq_client *c = w9_client();
    dq_enqueued *out = calloc(1000, sizeof *out);
    int64_t c0[W9_NODES];
    dq_err err = {0};
    dq_stats s;
    char q[64];

    if (out == NULL)
        bench_die("out of memory");
    flush_nodes();
    w9_queue(b, c, parts, q, sizeof q);
    for (size_t i = 0; i < n; i += 1000)
        bench_ok(dq_enqueue_batch(c, q, it + i, n - i < 1000 ? n - i : 1000, out, &err), &err,
                 "W9 enqueue batch");
    free(out);
    atomic_store(&w9_ran, 0);
    measure_start(c0);
    int64_t t0 = bench_mono_us();
    for (size_t k = 0; k < W9_WORKERS; k++) {
        memset(&wt[k], 0, sizeof wt[k]);
        bench_ok(dq_worker_new(w9_cl.url, NULL, q, &o, w9_handler, NULL, &wt[k].w, &err), &err,
                 "W9 worker");
        if (pthread_create(&wt[k].th, NULL, w9_worker_main, &wt[k]) != 0)
            bench_die("cannot start the worker thread");
    }
    int64_t deadline = t0 + 600 * 1000000LL;
    while (atomic_load(&w9_ran) < (long)n) {
        if (bench_mono_us() > deadline)
            bench_die("W9: %ld of %zu handlers ran in 600 s", atomic_load(&w9_ran), n);
        bench_nap_ms(1);
    }
    for (;;) {
        bench_ok(dq_stats_get(c, q, &s, &err), &err, "W9 stats");
        if (s.done >= (int64_t)n)
            break;
        if (bench_mono_us() > deadline)
            bench_die("W9: %lld of %zu done", (long long)s.done, n);
        bench_nap_ms(1);
    }
    int64_t t1 = bench_mono_us();
    measure_end(c0, m);
    for (size_t k = 0; k < W9_WORKERS; k++) {
        dq_worker_stop(wt[k].w, false);
        pthread_join(wt[k].th, NULL);
        bench_ok(wt[k].rc, &wt[k].err, "W9 worker run");
        dq_worker_free(wt[k].w);
    }
    if (s.done != (int64_t)n)
        bench_die("W9: %lld done of %zu (a task ran twice?)", (long long)s.done, n);
    dq_client_free(c);
    return (double)n * 1e6 / (double)(t1 - t0);
}

/* ---- rows ------------------------------------------------------------------------ */

enum { M_SINGLE, M_BATCH, M_PROCESS, M_KINDS };

static const char *const kind_name[M_KINDS] = {
    "dq_enqueue, 4 threads",
    "dq_enqueue_batch (1000), 4 threads",
    "process, 3 library workers x concurrency 64, C handler",
};

void
bench_w9(struct bench *b)
{
    size_t nenq = b->quick ? 4000 : 20000, nbatch = b->quick ? 20000 : 100000,
           nproc = b->quick ? 5000 : 30000;
    size_t nmax = nbatch > nproc ? nbatch : nproc;
    int rounds = b->quick ? 1 : 3;
    unsigned char *payloads = malloc(nmax * PAYLOAD);
    dq_enqueue_item *later = calloc(nmax, sizeof *later), *now = calloc(nmax, sizeof *now);
    /* [kind][setting][round]: rate, and each master's CPU us */
    static double rate[M_KINDS][W9_SETTINGS][16];
    static struct w9_m cpu[M_KINDS][W9_SETTINGS][16];
    static size_t count[M_KINDS] = {0};

    if (payloads == NULL || later == NULL || now == NULL)
        bench_die("out of memory");
    bench_fill(b, payloads, nmax * PAYLOAD);
    for (size_t i = 0; i < nmax; i++) {
        later[i].payload = now[i].payload = payloads + i * PAYLOAD;
        later[i].payload_len = now[i].payload_len = PAYLOAD;
        later[i].opts.delay_ms = 1000 + bench_rand(b) % 59001; /* W1's: not due in the run */
    }
    count[M_SINGLE] = nenq;
    count[M_BATCH] = nbatch;
    count[M_PROCESS] = nproc;
    w9_start_cluster(b->w9_replicas);
    /* rounds interleave the settings, so a shared machine's load falls on all of them */
    for (int r = 0; r < rounds; r++) {
        for (size_t s = 0; s < W9_SETTINGS; s++) {
            rate[M_SINGLE][s][r] =
                enqueue_once(b, w9_parts[s], later, nenq, false, &cpu[M_SINGLE][s][r]);
            rate[M_BATCH][s][r] =
                enqueue_once(b, w9_parts[s], later, nbatch, true, &cpu[M_BATCH][s][r]);
            rate[M_PROCESS][s][r] = process_once(b, w9_parts[s], now, nproc, &cpu[M_PROCESS][s][r]);
        }
    }
    w9_stop_nodes();

    for (int k = 0; k < M_KINDS; k++) {
        double base = NAN;
        for (size_t s = 0; s < W9_SETTINGS; s++) {
            double med = bench_median(rate[k][s], (size_t)rounds), per[W9_NODES], total = 0;
            char variant[96], note[160], ceil_name[64];
            int rmed = 0;
            /* the round whose rate is the median: its CPU figures go with it */
            for (int r = 0; r < rounds; r++)
                if (rate[k][s][r] == med)
                    rmed = r;
            for (int i = 0; i < W9_NODES; i++) {
                per[i] = (double)cpu[k][s][rmed].cpu[i] / (double)count[k];
                total += per[i];
            }
            snprintf(variant, sizeof variant, "partitions %u, %zu tasks, %s", w9_parts[s], count[k],
                     kind_name[k]);
            snprintf(note, sizeof note,
                     "Redis CPU us/task per master %.2f/%.2f/%.2f (INFO cpu); %.3f client "
                     "commands/task; %d rounds%s",
                     per[0], per[1], per[2], (double)cpu[k][s][rmed].calls / (double)count[k],
                     rounds, b->w9_replicas ? "; a replica per master" : "");
            if (s == 0) {
                base = med;
                bench_add(b, "W9", variant, "tasks/s", "1/s", med, NULL, 0, T_NONE, 0, note);
            } else {
                /* the ratio to partitions 1 on the same cluster is the figure */
                snprintf(ceil_name, sizeof ceil_name, "partitions 1, same kind");
                bench_add(b, "W9", variant, "tasks/s", "1/s", med, ceil_name, base,
                          k == M_PROCESS ? T_RATIO_GE : T_NONE, 1.0, note);
            }
            bench_set_redis_cpu(b, total);
        }
    }
    free(later);
    free(now);
    free(payloads);
}
