/* SPDX-License-Identifier: MIT */
/*
 * w9.c: W9, one logical queue over a local Redis Cluster of three masters
 * (bench/README.md): partitions 1, 3 and 6 of the same queue, each measured for
 * enqueue throughput (threads of dq_enqueue, threads of dq_enqueue_batch) and processing
 * throughput (library workers with W2's instant C handler), with each master's Redis CPU
 * from INFO cpu before and after (--w9-replicas: with a replica per master, whose
 * replication the masters' CPU then includes). The cluster is made as
 * tests/prod/test_parts_cluster.c makes its own (`redis-cli --cluster create`, free loopback ports,
 * servers held by PID). Clients, workers and servers share this machine's cores, so the ratio of
 * partitions N to partitions 1 is the figure, not the absolute rate.
 */
#include "bench.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "harness/wait.h"

#define W9_NODES   3
#define W9_THREADS 4 /* enqueuing threads, each with its own cluster client */
#define W9_WORKERS 3 /* library workers (one coordinator and connection set each) */

static const unsigned w9_parts[] = {1, 3, 6};
#define W9_SETTINGS (sizeof w9_parts / sizeof w9_parts[0])

/* the nodes started (w9_n: the masters, or with --w9-replicas a replica for each too) and
 * which of them are the masters */
static struct test_redis w9_node[2 * W9_NODES];
static int w9_n = W9_NODES, w9_m[W9_NODES] = {0, 1, 2};
static char w9_url[2 * W9_NODES * 24 + 32];

static void
w9_stop_nodes(void)
{
    for (int i = 0; i < 2 * W9_NODES; i++)
        test_redis_stop(&w9_node[i]);
}

/* Cluster ports stay below this (the machine's rule for cluster tests). */
#define W9_PORT_MAX   55000
#define W9_PORT_TRIES 50

/* A free loopback port below W9_PORT_MAX for a node's cluster bus (the kernel's pick). */
static int
bus_port(void)
{
    for (int k = 0; k < W9_PORT_TRIES; k++) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

        if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
            getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
            port = ntohs(sa.sin_port);
        if (fd >= 0)
            close(fd);
        if (port > 0 && port < W9_PORT_MAX)
            return port;
    }
    bench_die("W9: no free port below %d for a cluster bus", W9_PORT_MAX);
}

/* Runs `redis-cli --cluster create` on the three nodes, no replicas, within 60 s. */
static void
cluster_create(void)
{
    const char *cli = getenv("DQ_REDIS_CLI");
    char addr[2 * W9_NODES][32];
    const char *argv[2 * W9_NODES + 8];
    int n = 0, status = -1;

    for (int i = 0; i < w9_n; i++)
        snprintf(addr[i], sizeof addr[i], "127.0.0.1:%d", w9_node[i].port);
    argv[n++] = (cli != NULL && cli[0] != '\0' ? cli : "redis-cli");
    argv[n++] = "--cluster";
    argv[n++] = "create";
    for (int i = 0; i < w9_n; i++)
        argv[n++] = addr[i];
    argv[n++] = "--cluster-replicas";
    argv[n++] = w9_n > W9_NODES ? "1" : "0";
    argv[n++] = "--cluster-yes";
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        bench_die("W9: fork: cannot run redis-cli");
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        char *av[2 * W9_NODES + 8];
        for (int k = 0; k <= n; k++)
            av[k] = argv[k] != NULL ? strdup(argv[k]) : NULL;
        execvp(av[0], av);
        _exit(127);
    }
    for (int64_t end = bench_mono_us() + 60 * 1000000LL; bench_mono_us() < end;) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        bench_nap_ms(20);
    }
    if (status == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die("W9: redis-cli --cluster create failed (status %d)", status);
    snprintf(w9_url, sizeof w9_url, "redis-cluster://%s,%s", addr[0], addr[1]);
}

static bool
cluster_ok(void *arg)
{
    char known[40];

    (void)arg;
    snprintf(known, sizeof known, "cluster_known_nodes:%d\r", w9_n);
    for (int i = 0; i < w9_n; i++) {
        const char *argv[] = {"CLUSTER", "INFO"};
        redisReply *r = test_redis_cmd(&w9_node[i], 2, argv);
        bool ok = r != NULL && r->type == REDIS_REPLY_STRING &&
                  strstr(r->str, "cluster_state:ok") != NULL && strstr(r->str, known) != NULL;
        freeReplyObject(r);
        if (!ok)
            return false;
    }
    return true;
}

/* Which nodes are masters (INFO replication): w9_m. */
static void
find_masters(void)
{
    int k = 0;

    for (int i = 0; i < w9_n; i++) {
        const char *argv[] = {"INFO", "replication"};
        redisReply *r = test_redis_cmd(&w9_node[i], 2, argv);
        bool master =
            r != NULL && r->type == REDIS_REPLY_STRING && strstr(r->str, "role:master") != NULL;
        freeReplyObject(r);
        if (master && k < W9_NODES)
            w9_m[k++] = i;
    }
    if (k != W9_NODES)
        bench_die("W9: %d masters in the cluster, not %d", k, W9_NODES);
}

static void
w9_start_cluster(bool replicas)
{
    /* the bench's own settings (hz 10, no persistence), as the single server has them */
    w9_n = replicas ? 2 * W9_NODES : W9_NODES;
    for (int i = 0; i < w9_n; i++) {
        char bus[16];
        snprintf(bus, sizeof bus, "%d", bus_port());
        const char *extra[] = {"--cluster-enabled",
                               "yes",
                               "--cluster-node-timeout",
                               "5000",
                               "--cluster-port",
                               bus,
                               "--hz",
                               "10",
                               NULL};
        /* the harness takes the kernel's port; one at or above the limit is tried again */
        for (int k = 0;; k++) {
            if (test_redis_start(&w9_node[i], extra) != 0)
                bench_die("W9: cannot start cluster node %d", i);
            if (w9_node[i].port < W9_PORT_MAX)
                break;
            test_redis_stop(&w9_node[i]);
            if (k + 1 == W9_PORT_TRIES)
                bench_die("W9: no port below %d for cluster node %d", W9_PORT_MAX, i);
        }
    }
    atexit(w9_stop_nodes);
    cluster_create();
    if (!wait_until(cluster_ok, NULL, 30000, "cluster_state:ok on every node"))
        bench_die("W9: the cluster did not become ok within 30 s");
    find_masters();
}

/* used_cpu_sys + used_cpu_user of node @i (INFO cpu: every thread), in microseconds. */
static int64_t
node_cpu_us(int i)
{
    const char *argv[] = {"INFO", "cpu"};
    redisReply *r = test_redis_cmd(&w9_node[w9_m[i]], 2, argv);
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
        freeReplyObject(test_redis_cmd(&w9_node[w9_m[i]], 2, argv));
    }
}

/* Client commands (bench_cmdstats: scripts count once) on all nodes since reset_stats. */
static long long
client_calls(void)
{
    long long n = 0;

    for (int i = 0; i < W9_NODES; i++) {
        /* bench_cmdstats reads b->redis only */
        struct bench view = {.redis = w9_node[w9_m[i]]};
        n += bench_cmdstats(&view).client;
    }
    return n;
}

static void
flush_nodes(void)
{
    for (int i = 0; i < W9_NODES; i++) {
        const char *argv[] = {"FLUSHALL"}; /* on the masters: a replica refuses writes */
        redisReply *r = test_redis_cmd(&w9_node[w9_m[i]], 1, argv);
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

    bench_ok(dq_client_open(w9_url, &o, &c, &err), &err, "W9 connect");
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
        bench_ok(dq_worker_new(w9_url, NULL, q, &o, w9_handler, NULL, &wt[k].w, &err), &err,
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
