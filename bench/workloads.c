/* SPDX-License-Identifier: MIT */
/*
 * workloads.c: the ceiling (redis-benchmark) and workloads W1..W8, exactly as
 * bench/README.md describes them. Each adds its figures with bench_add(); none
 * changes its workload to meet a target.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lib/parts.h"
#include "tui/model.h"
#include "tui/overview.h"

#define CEIL_P1  "redis-benchmark -c 1 -P 1 ZADD"
#define CEIL_P64 "redis-benchmark -c 1 -P 64 ZADD"

static void
flushall(struct bench *b)
{
    const char *argv[] = {"FLUSHALL"};
    bench_cmd(b, 1, argv);
}

/* The server's TIME in microseconds. */
static int64_t
server_us(struct bench *b)
{
    const char *argv[] = {"TIME"};
    redisReply *r = test_redis_cmd(&b->redis, 1, argv);
    int64_t v;

    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2)
        bench_die("TIME: unexpected reply");
    v = atoll(r->element[0]->str) * 1000000 + atoll(r->element[1]->str);
    freeReplyObject(r);
    return v;
}

/* Subscribers of @queue's wake-up channel: an idle worker has one. */
static long long
wake_subscribers(struct bench *b, const char *queue)
{
    char ch[160];
    const char *argv[] = {"PUBSUB", "SHARDNUMSUB", ch};
    redisReply *r;
    long long n = -1;

    snprintf(ch, sizeof ch, "dq:{%s}:wake", queue);
    r = test_redis_cmd(&b->redis, 3, argv);
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_INTEGER)
        n = r->element[1]->integer;
    freeReplyObject(r);
    return n;
}

static void
wait_subscribed(struct bench *b, const char *queue)
{
    int64_t deadline = bench_mono_us() + 10 * 1000000;

    while (wake_subscribers(b, queue) < 1) {
        if (bench_mono_us() > deadline)
            bench_die("the worker on %s did not subscribe within 10 s", queue);
        bench_nap_ms(5);
    }
}

/* Items with 64-byte payloads from @payloads (n * PAYLOAD bytes) and the given delay. */
static dq_enqueue_item *
make_items(const unsigned char *payloads, size_t n)
{
    dq_enqueue_item *it = calloc(n ? n : 1, sizeof *it);

    if (it == NULL)
        bench_die("out of memory");
    for (size_t i = 0; i < n; i++) {
        it[i].payload = payloads + i * PAYLOAD;
        it[i].payload_len = PAYLOAD;
    }
    return it;
}

static unsigned char *
make_payloads(struct bench *b, size_t n)
{
    unsigned char *p = malloc(n * PAYLOAD);

    if (p == NULL)
        bench_die("out of memory");
    bench_fill(b, p, n * PAYLOAD);
    return p;
}

static void
enqueue_all(dq_client *c, const char *queue, const dq_enqueue_item *it, size_t n)
{
    dq_enqueued *out = calloc(n, sizeof *out);
    dq_err err = {0};

    if (out == NULL)
        bench_die("out of memory");
    bench_ok(dq_enqueue_batch(c, queue, it, n, out, &err), &err, "enqueue batch");
    free(out);
}

/* ---- ceiling --------------------------------------------------------------------- */

static double
redis_benchmark(struct bench *b, int pipeline, long n)
{
    const char *bin = getenv("DQ_REDIS_BENCHMARK");
    char cmd[1024], line[512];
    double rps = 0;
    FILE *f;

    /* -r: random members, so each ZADD inserts like an enqueue does (without it every
     * request updates one member). */
    snprintf(cmd, sizeof cmd,
             "'%s' -h 127.0.0.1 -p %d -c 1 -P %d -n %ld -r 100000000 -t zadd --csv 2>/dev/null",
             bin && bin[0] ? bin : "redis-benchmark", b->redis.port, pipeline, n);
    f = popen(cmd, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "\"ZADD\",\"", 8) == 0)
            rps = atof(line + 8);
    }
    pclose(f);
    return rps;
}

double
bench_ceiling_now(struct bench *b, int pipeline)
{
    long n = pipeline == 1 ? (b->quick ? 5000 : 20000) : (b->quick ? 50000 : 200000);
    double v;

    flushall(b);
    v = redis_benchmark(b, pipeline, n);
    flushall(b);
    if (v <= 0 && b->n_p1 + b->n_p64 == 0)
        fprintf(stderr, "delayq-bench: redis-benchmark gave no figures (installed? set "
                        "DQ_REDIS_BENCHMARK); ratios are left out\n");
    if (pipeline == 1 && b->n_p1 < sizeof b->ceil_p1 / sizeof b->ceil_p1[0])
        b->ceil_p1[b->n_p1++] = v;
    else if (pipeline != 1 && b->n_p64 < sizeof b->ceil_p64 / sizeof b->ceil_p64[0])
        b->ceil_p64[b->n_p64++] = v;
    return v;
}

void
bench_ceiling_rows(struct bench *b)
{
    char variant[96];

    if (b->n_p1 == 0 && b->n_p64 == 0)
        return;
    snprintf(variant, sizeof variant, "-c 1 -P 1 ZADD, random members (%zu runs)", b->n_p1);
    bench_add(b, "ceil", variant, "requests/s", "1/s", bench_median(b->ceil_p1, b->n_p1), NULL, 0,
              T_NONE, 0, "redis-benchmark on the same server, just before each run it judges");
    snprintf(variant, sizeof variant, "-c 1 -P 64 ZADD, random members (%zu runs)", b->n_p64);
    bench_add(b, "ceil", variant, "requests/s", "1/s", bench_median(b->ceil_p64, b->n_p64), NULL, 0,
              T_NONE, 0, "redis-benchmark on the same server, just before each run it judges");
}

/* ---- W1 enqueue, W5 memory ------------------------------------------------------- */

/* The floor of W5: the same payloads as members of a bare sorted set, pipelined. */
static void
bare_zset(struct bench *b, const dq_enqueue_item *it, size_t n)
{
    redisContext *rc = redisConnect("127.0.0.1", b->redis.port);

    if (rc == NULL || rc->err)
        bench_die("connect for the floor set failed");
    for (size_t i = 0; i < n; i++) {
        char score[32];
        snprintf(score, sizeof score, "%lld", 1795942260360LL + it[i].opts.delay_ms);
        const char *argv[] = {"ZADD", "floor", score, it[i].payload};
        size_t lens[] = {4, 5, strlen(score), PAYLOAD};
        redisAppendCommandArgv(rc, 4, argv, lens);
    }
    for (size_t i = 0; i < n; i++) {
        redisReply *r = NULL;
        if (redisGetReply(rc, (void **)&r) != REDIS_OK || r->type != REDIS_REPLY_INTEGER)
            bench_die("ZADD floor failed");
        freeReplyObject(r);
    }
    redisFree(rc);
}

void
bench_w1_w5(struct bench *b)
{
    size_t n = b->quick ? 10000 : 100000;
    unsigned char *payloads = make_payloads(b, n);
    dq_enqueue_item *it = make_items(payloads, n);
    dq_client *c = bench_client(b);
    double a[16], bt[16], per_task[16], floor[16], us_a[16], us_b[16], c1[16], c64[16];
    double cpu_a[16], cpu_b[16];
    char q[64], variant[96];

    for (size_t i = 0; i < n; i++)
        it[i].opts.delay_ms = 1000 + bench_rand(b) % 59001;
    for (int r = 0; r < b->runs; r++) {
        dq_enqueued e;
        dq_err err = {0};

        c1[r] = bench_ceiling_now(b, 1);
        bench_queue(b, "w1a", q, sizeof q);
        long long m0 = bench_info_num(b, "used_memory");
        bench_resetstat(b);
        int64_t cpu0 = bench_redis_cpu_us(b), t0 = bench_mono_us();
        for (size_t i = 0; i < n; i++)
            bench_ok(dq_enqueue(c, q, &it[i].opts, it[i].payload, PAYLOAD, &e, &err), &err,
                     "enqueue");
        int64_t t1 = bench_mono_us(), cpu1 = bench_redis_cpu_us(b);
        cpu_a[r] = (double)(cpu1 - cpu0) / (double)n;
        us_a[r] = (double)bench_cmdstats(b).usec / (double)n;
        long long m1 = bench_info_num(b, "used_memory");
        bare_zset(b, it, n);
        long long m2 = bench_info_num(b, "used_memory");
        a[r] = (double)n * 1e6 / (double)(t1 - t0);
        per_task[r] = (double)(m1 - m0) / (double)n;
        floor[r] = (double)(m2 - m1) / (double)n;

        flushall(b);
        c64[r] = bench_ceiling_now(b, 64);
        bench_queue(b, "w1b", q, sizeof q);
        bench_resetstat(b);
        cpu0 = bench_redis_cpu_us(b);
        t0 = bench_mono_us();
        enqueue_all(c, q, it, n);
        t1 = bench_mono_us();
        cpu1 = bench_redis_cpu_us(b);
        cpu_b[r] = (double)(cpu1 - cpu0) / (double)n;
        us_b[r] = (double)bench_cmdstats(b).usec / (double)n;
        bt[r] = (double)n * 1e6 / (double)(t1 - t0);
    }
    flushall(b);
    dq_client_free(c);
    free(it);
    free(payloads);

    snprintf(variant, sizeof variant, "(a) %zu tasks, dq_enqueue, one per call", n);
    bench_add(b, "W1", variant, "tasks/s", "1/s", bench_median(a, (size_t)b->runs), CEIL_P1,
              bench_median(c1, (size_t)b->runs), T_RATIO_GE, 0.9, NULL);
    bench_set_redis_cpu(b, bench_median(cpu_a, (size_t)b->runs));
    snprintf(variant, sizeof variant, "(b) %zu tasks, dq_enqueue_batch (1000 per call)", n);
    bench_add(b, "W1", variant, "tasks/s", "1/s", bench_median(bt, (size_t)b->runs), CEIL_P64,
              bench_median(c64, (size_t)b->runs), T_RATIO_GE, 1.0, NULL);
    bench_set_redis_cpu(b, bench_median(cpu_b, (size_t)b->runs));
    /* where the time goes: Redis time per task, against a ZADD's */
    bench_add(b, "W1", "(a) Redis time per task", "us/task", "us",
              bench_median(us_a, (size_t)b->runs), NULL, 0, T_NONE, 0,
              "commandstats usec of FCALL enqueue (script and the commands it runs)");
    bench_add(b, "W1", "(b) Redis time per task", "us/task", "us",
              bench_median(us_b, (size_t)b->runs), NULL, 0, T_NONE, 0, NULL);
    double floor_m = bench_median(floor, (size_t)b->runs);
    bench_add(b, "W5", "used_memory per scheduled task after W1 (a)", "bytes/task", "B",
              bench_median(per_task, (size_t)b->runs), "bare ZSET of the payloads", floor_m,
              T_RATIO_LE, 1.15, NULL);
}

/* ---- W2 process ------------------------------------------------------------------ */

struct w2_state {
    atomic_long ran;
    atomic_llong first_claim_ms; /* server ms */
};

static void
w2_handler(const dq_task *t, dq_result *res, void *arg)
{
    struct w2_state *s = arg;
    long long cur = atomic_load(&s->first_claim_ms);

    while (t->claimed_ms < cur &&
           !atomic_compare_exchange_weak(&s->first_claim_ms, &cur, (long long)t->claimed_ms)) {
    }
    atomic_fetch_add(&s->ran, 1);
    res->outcome = DQ_DONE;
}

struct worker_thread {
    dq_worker *w;
    pthread_t th;
    int rc;
    dq_err err;
};

static void *
worker_main(void *arg)
{
    struct worker_thread *wt = arg;
    wt->rc = dq_worker_run(wt->w, &wt->err);
    return NULL;
}

static void
worker_start(struct bench *b, struct worker_thread *wt, const char *queue, const dq_worker_opts *o,
             dq_handler_fn fn, void *arg)
{
    dq_err err = {0};

    memset(wt, 0, sizeof *wt);
    bench_ok(dq_worker_new(b->redis.url, NULL, queue, o, fn, arg, &wt->w, &err), &err, "worker");
    if (pthread_create(&wt->th, NULL, worker_main, wt) != 0)
        bench_die("cannot start the worker thread");
}

static void
worker_stop(struct worker_thread *wt)
{
    dq_worker_stop(wt->w, false);
    pthread_join(wt->th, NULL);
    bench_ok(wt->rc, &wt->err, "worker run");
    dq_worker_free(wt->w);
}

/* Waits until the queue's done counter reaches @n; returns the server ms it saw it. */
static int64_t
wait_done(dq_client *c, const char *queue, size_t n, int poll_ms, int64_t timeout_s)
{
    int64_t deadline = bench_mono_us() + timeout_s * 1000000;
    dq_stats s;
    dq_err err = {0};

    for (;;) {
        bench_ok(dq_stats_get(c, queue, &s, &err), &err, "stats");
        if (s.done >= (int64_t)n)
            return s.now_ms;
        if (bench_mono_us() > deadline)
            bench_die("%s: %lld of %zu tasks done after %lld s", queue, (long long)s.done, n,
                      (long long)timeout_s);
        bench_nap_ms(poll_ms);
    }
}

/* One run: @n tasks due now, one in-process worker; tasks/s from first claim to last ack.
 * *@cpu_us gets the Redis CPU per task from the worker's start to the last ack. */
static double
w2_once(struct bench *b, dq_client *c, const dq_enqueue_item *it, size_t n, unsigned conc,
        unsigned lanes, double *cpu_us, double *calls)
{
    struct w2_state st;
    struct worker_thread wt[8];
    unsigned nw = b->w2_workers > 0 ? b->w2_workers : 1;
    /* --w2-workers N: N workers share the concurrency; @lanes coordinators in each */
    dq_worker_opts o = {.concurrency = conc / nw ? conc / nw : 1,
                        .batch = conc / nw ? conc / nw : 1,
                        .lanes = lanes};
    char q[64];

    flushall(b);
    bench_queue(b, "w2", q, sizeof q);
    if (b->w2_keys > 0) { /* --w2-keys: the per-key limit's bookkeeping on every task */
        dq_config kc = {.key_concurrency = b->w2_key_limit > 0 ? b->w2_key_limit : 1000000};
        dq_err kerr = {0};
        bench_ok(dq_config_set(c, q, &kc, &kerr), &kerr, "config key_concurrency");
    }
    enqueue_all(c, q, it, n);
    atomic_init(&st.ran, 0);
    atomic_init(&st.first_claim_ms, INT64_MAX);
    bench_resetstat(b);
    int64_t cpu0 = bench_redis_cpu_us(b);
    for (unsigned k = 0; k < nw; k++)
        worker_start(b, &wt[k], q, &o, w2_handler, &st);
    int64_t deadline = bench_mono_us() + 600 * 1000000LL;
    while (atomic_load(&st.ran) < (long)n) {
        if (bench_mono_us() > deadline)
            bench_die("W2: %ld of %zu handlers ran in 600 s", atomic_load(&st.ran), n);
        bench_nap_ms(1);
    }
    /* every handler returned; the last acks are on their way: poll for them now (no
     * polling during the run, so it does not compete with the worker) */
    int64_t end = wait_done(c, q, n, 1, 60);
    *cpu_us = (double)(bench_redis_cpu_us(b) - cpu0) / (double)n;
    *calls = (double)bench_cmdstats(b).client / (double)n;
    for (unsigned k = 0; k < nw; k++)
        worker_stop(&wt[k]);
    int64_t ms = end - atomic_load(&st.first_claim_ms);
    return (double)n * 1000.0 / (double)(ms > 0 ? ms : 1);
}

/* ---- W2p: persistent handlers --------------------------------------------------- */

/* The Python handler of docs/GUIDE.md: --handler (main.c puts it in $DQ_BENCH_HANDLER), else
 * examples/handler.py in $DQ_SOURCE_ROOT, else in the first directory above this
 * program that has one (a build tree inside the source tree). */
static bool
find_handler(char *out, size_t size)
{
    const char *opt = getenv("DQ_BENCH_HANDLER"), *root = getenv("DQ_SOURCE_ROOT");
    char dir[PATH_MAX];
    ssize_t n;

    if (opt != NULL && opt[0] != '\0') {
        snprintf(out, size, "%s", opt);
        return access(out, X_OK) == 0;
    }
    if (root != NULL && root[0] != '\0') {
        snprintf(out, size, "%s/examples/handler.py", root);
        return access(out, X_OK) == 0;
    }
    if ((n = readlink("/proc/self/exe", dir, sizeof dir - 1)) <= 0)
        return false;
    dir[n] = '\0';
    for (char *slash; (slash = strrchr(dir, '/')) != NULL;) {
        *slash = '\0';
        int len = snprintf(out, size, "%s/examples/handler.py", dir);
        if (len > 0 && (size_t)len < size && access(out, X_OK) == 0)
            return true;
    }
    return false;
}

/* Starts "delayq work --url U -q Q --quiet --persistent --concurrency 4 -- HANDLER"
 * with its output to /dev/null; it dies with the bench (PR_SET_PDEATHSIG). */
static pid_t
spawn_persistent(struct bench *b, const char *queue, const char *handler)
{
    const char *args[] = {b->delayq_bin, "work",    "--url",        b->redis.url,    "-q",
                          queue,         "--quiet", "--persistent", "--concurrency", "4",
                          "--",          handler};
    char *argv[sizeof args / sizeof args[0] + 1];
    pid_t parent = getpid(), pid;

    /* execv wants char *: copies, made before fork so the child never allocates */
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        if ((argv[i] = strdup(args[i])) == NULL)
            bench_die("out of memory");
    }
    argv[sizeof args / sizeof args[0]] = NULL;
    pid = fork();
    if (pid < 0)
        bench_die("fork: %s", strerror(errno));
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        free(argv[i]);
    return pid;
}

/* W2p: the same @n tasks through four persistent Python handlers, right after the
 * process-per-task run that gave @per_task tasks/s, as the ratio to it. */
static void
w2p(struct bench *b, dq_client *c, const dq_enqueue_item *it, size_t n, double per_task)
{
    char handler[PATH_MAX], q[64], variant[96];

    if (!find_handler(handler, sizeof handler)) {
        fprintf(stderr, "W2p skipped: no examples/handler.py (use --handler PATH)\n");
        return;
    }
    flushall(b);
    bench_queue(b, "w2p", q, sizeof q);
    enqueue_all(c, q, it, n);
    int64_t t0 = bench_mono_us();
    pid_t pid = spawn_persistent(b, q, handler);
    wait_done(c, q, n, 10, 1200);
    int64_t t1 = bench_mono_us();
    bench_stop_pid(pid);
    snprintf(variant, sizeof variant, "%zu due, --persistent --concurrency 4, handler.py", n);
    bench_add(b, "W2p", variant, "tasks/s", "1/s", (double)n * 1e6 / (double)(t1 - t0),
              "delayq work --concurrency 8 -- true", per_task, T_RATIO_GE, 10.0,
              "one run, right after the -- true run; from process start (4 python3 "
              "starts included) to last ack (10 ms polls)");
}

void
bench_w2(struct bench *b)
{
    size_t n = b->quick ? 5000 : 50000;
    unsigned char *payloads = make_payloads(b, n);
    dq_enqueue_item *it = make_items(payloads, n);
    dq_client *c = bench_client(b);
    double best = 0, best_ceil = 0, best_cpu = NAN, v[16], cv[16], cpu[16], calls[16];
    static char keys[10000][12]; /* "k" and up to 10 digits */

    for (size_t i = 0; b->w2_keys > 0 && i < n; i++) { /* --w2-keys: round robin */
        snprintf(keys[i % b->w2_keys], sizeof keys[0], "k%zu", i % b->w2_keys);
        it[i].opts.key = keys[i % b->w2_keys];
    }
    unsigned best_conc = 1, best_lanes = 1;
    char variant[96], q[64], note[160];

    for (size_t s = 0; bench_wants(b, "W2") && s < 8 && b->w2_conc[s] != 0; s++) {
        for (size_t l = 0; l < 8 && b->w2_lanes[l] != 0; l++) {
            unsigned conc = b->w2_conc[s], lanes = b->w2_lanes[l];
            if (lanes > 1 && conc < 8 * lanes)
                continue; /* lanes of a few slots each: not a setting anyone would pick */
            for (int r = 0; r < b->runs; r++) {
                cv[r] = bench_ceiling_now(b, 64);
                v[r] = w2_once(b, c, it, n, conc, lanes, &cpu[r], &calls[r]);
            }
            double med = bench_median(v, (size_t)b->runs);
            double ceil = bench_median(cv, (size_t)b->runs);
            double mcpu = bench_median(cpu, (size_t)b->runs);
            int len = snprintf(variant, sizeof variant,
                               "%zu due, C handler, concurrency %u, batch %u", n, conc, conc);
            if (lanes > 1 && len > 0 && (size_t)len < sizeof variant)
                len += snprintf(variant + len, sizeof variant - (size_t)len, ", %u lanes", lanes);
            if (b->w2_keys > 0 && len > 0 && (size_t)len < sizeof variant)
                snprintf(variant + len, sizeof variant - (size_t)len, ", %u keys", b->w2_keys);
            /* calls per task: how well the coordinator batches (the stats polls at the end
             * are included; they are a few) */
            snprintf(note, sizeof note, "%.3f client commands per task (median)",
                     bench_median(calls, (size_t)b->runs));
            bench_add(b, "W2", variant, "tasks/s", "1/s", med, CEIL_P64, ceil, T_NONE, 0, note);
            bench_set_redis_cpu(b, mcpu);
            if (med > best) {
                best = med;
                best_ceil = ceil;
                best_cpu = mcpu;
                best_conc = conc;
                best_lanes = lanes;
            }
        }
    }
    if (best > 0) {
        snprintf(variant, sizeof variant, "best: concurrency %u, %u lane%s", best_conc, best_lanes,
                 best_lanes > 1 ? "s" : "");
        bench_add(b, "W2", variant, "tasks/s", "1/s", best, CEIL_P64, best_ceil, T_RATIO_GE, 0.5,
                  NULL);
        bench_set_redis_cpu(b, best_cpu);
    }
    if (!bench_wants(b, "W2w"))
        goto out;

    /* through delayq work -- true: a process per task; one run, it is long */
    static const char *const extra[] = {"--concurrency", "8", NULL};
    flushall(b);
    bench_queue(b, "w2w", q, sizeof q);
    enqueue_all(c, q, it, n);
    int64_t t0 = bench_mono_us();
    pid_t pid = bench_spawn_work(b, q, extra);
    wait_done(c, q, n, 10, 1200);
    int64_t t1 = bench_mono_us();
    bench_stop_pid(pid);
    snprintf(variant, sizeof variant, "%zu due, delayq work --concurrency 8 -- true", n);
    double per_task = (double)n * 1e6 / (double)(t1 - t0);
    bench_add(b, "W2", variant, "tasks/s", "1/s", per_task, NULL, 0, T_NONE, 0,
              "one run; from process start to last ack (10 ms polls)");
    w2p(b, c, it, n, per_task);
out:
    flushall(b);
    dq_client_free(c);
    free(it);
    free(payloads);
}

/* ---- W3 lateness ----------------------------------------------------------------- */

struct w3_state {
    size_t n;
    int64_t *start_us; /* first handler start of task i, local CLOCK_REALTIME */
    atomic_int *runs;
    atomic_long ran, claimed_ahead; /* claimed before due: legal, counted for the record */
};

static void
w3_handler(const dq_task *t, dq_result *res, void *arg)
{
    int64_t now = bench_real_us();
    struct w3_state *s = arg;
    uint32_t idx;

    res->outcome = DQ_DONE;
    if (t->payload_len != PAYLOAD)
        return;
    memcpy(&idx, t->payload, sizeof idx);
    if (idx >= s->n)
        return;
    if (atomic_fetch_add(&s->runs[idx], 1) == 0)
        s->start_us[idx] = now;
    if (t->claimed_ms < t->due_ms)
        atomic_fetch_add(&s->claimed_ahead, 1);
    atomic_fetch_add(&s->ran, 1);
}

void
bench_w3(struct bench *b)
{
    size_t n = b->quick ? 500 : 5000;
    int64_t window_ms = b->quick ? 2000 : 10000;
    unsigned char *payloads = make_payloads(b, n);
    dq_enqueue_item *it = make_items(payloads, n);
    dq_client *c = bench_client(b);
    struct w3_state st = {.n = n};
    struct worker_thread wt;
    double *late = calloc(n, sizeof *late);
    char q[64], variant[96], note[160];
    int64_t off = 0, rtt = INT64_MAX;

    st.start_us = calloc(n, sizeof *st.start_us);
    st.runs = calloc(n, sizeof *st.runs);
    if (late == NULL || st.start_us == NULL || st.runs == NULL)
        bench_die("out of memory");
    for (size_t i = 0; i < n; i++)
        atomic_init(&st.runs[i], 0);
    atomic_init(&st.ran, 0);
    atomic_init(&st.claimed_ahead, 0);

    /* Redis runs on this host, so its TIME is this kernel's CLOCK_REALTIME and a handler
     * start read here is server time. Check it: the offset must be within the RTT. */
    for (int i = 0; i < 20; i++) {
        int64_t a = bench_real_us(), s = server_us(b), z = bench_real_us();
        if (z - a < rtt) {
            rtt = z - a;
            off = s - (a + z) / 2;
        }
    }

    flushall(b);
    bench_queue(b, "w3", q, sizeof q);
    if (b->partitions > 1) {
        dq_config cfg = {.partitions = b->partitions};
        dq_err err = {0};
        bench_ok(dq_config_set(c, q, &cfg, &err), &err, "config partitions");
    }
    worker_start(b, &wt, q, NULL, w3_handler, &st);
    /* idle and subscribed (to every partition), as a worker waiting for work is */
    struct dq_parts parts = {0};
    dq_err perr = {0};
    bench_ok(dq_parts_get(c, q, &parts, &perr), &perr, "partition map");
    for (size_t i = 0; i < parts.all; i++)
        wait_subscribed(b, parts.names[i]);
    dq_parts_free(&parts);
    int64_t base_ms = server_us(b) / 1000 + 500;
    for (size_t i = 0; i < n; i++) {
        uint32_t idx = (uint32_t)i;
        memcpy(payloads + i * PAYLOAD, &idx, sizeof idx);
        it[i].opts.at_ms = base_ms + (int64_t)(bench_rand(b) % (uint32_t)window_ms);
    }
    enqueue_all(c, q, it, n);
    int64_t deadline = bench_mono_us() + (window_ms + 30000) * 1000;
    while (atomic_load(&st.ran) < (long)n) {
        if (bench_mono_us() > deadline)
            bench_die("W3: %ld of %zu tasks ran", atomic_load(&st.ran), n);
        bench_nap_ms(10);
    }
    worker_stop(&wt);

    /* Early means started before the due time by the server's clock (a claim before it
     * is claim-ahead, PROTOCOL.md 10.2, and is reported apart). */
    size_t early = 0, dups = 0;
    for (size_t i = 0; i < n; i++) {
        late[i] = (double)(st.start_us[i] - it[i].opts.at_ms * 1000) / 1000.0;
        if (late[i] < 0)
            early++;
        if (atomic_load(&st.runs[i]) > 1)
            dups += (size_t)atomic_load(&st.runs[i]) - 1;
    }
    bench_median(late, n); /* sorts */
    char on[32] = "";
    if (b->partitions > 1)
        snprintf(on, sizeof on, ", %u partitions", b->partitions);
    snprintf(variant, sizeof variant, "%zu tasks due over %lld s, one worker (defaults)%s", n,
             (long long)window_ms / 1000, on);
    snprintf(note, sizeof note,
             "handler start on this host's clock = Redis TIME (measured offset %lld us, RTT "
             "%lld us)",
             (long long)off, (long long)rtt);
    bench_add(b, "W3", variant, "lateness p50", "ms", bench_percentile(late, n, 50), NULL, 0,
              T_NONE, 0, note);
    bench_add(b, "W3", variant, "lateness p90", "ms", bench_percentile(late, n, 90), NULL, 0,
              T_NONE, 0, NULL);
    bench_add(b, "W3", variant, "lateness p99", "ms", bench_percentile(late, n, 99), NULL, 0,
              T_VALUE_LE, 1, NULL);
    bench_add(b, "W3", variant, "lateness max", "ms", late[n - 1], NULL, 0, T_VALUE_LE, 5, NULL);
    bench_add(b, "W3", variant, "early runs", "", (double)early, NULL, 0, T_VALUE_LE, 0,
              "handler started before its due time");
    bench_add(b, "W3", variant, "claimed ahead", "", (double)atomic_load(&st.claimed_ahead), NULL,
              0, T_NONE, 0, "claimed before due, started at due (claim-ahead)");
    bench_add(b, "W3", variant, "duplicate runs", "", (double)dups, NULL, 0, T_VALUE_LE, 0, NULL);
    flushall(b);
    dq_client_free(c);
    free(late);
    free(st.start_us);
    free(st.runs);
    free(it);
    free(payloads);
}

/* ---- W4 idle --------------------------------------------------------------------- */

static void
w4_once(struct bench *b, dq_client *c, size_t ntasks)
{
    int window_ms = b->quick ? 2000 : 20000;
    char q[64], variant[96];

    flushall(b);
    bench_queue(b, "w4", q, sizeof q);
    if (ntasks > 0) {
        unsigned char *payloads = make_payloads(b, ntasks);
        dq_enqueue_item *it = make_items(payloads, ntasks);
        for (size_t i = 0; i < ntasks; i++)
            it[i].opts.delay_ms = 3600000;
        enqueue_all(c, q, it, ntasks);
        free(it);
        free(payloads);
    }
    pid_t pid = bench_spawn_work(b, q, NULL);
    wait_subscribed(b, q);
    bench_nap_ms(1000); /* let its first claim and reap finish: the window is idle time */
    bench_resetstat(b);
    int64_t cpu0 = bench_cpu_us(pid), t0 = bench_mono_us();
    bench_nap_ms(window_ms);
    int64_t cpu1 = bench_cpu_us(pid), t1 = bench_mono_us();
    struct cmdstats cs = bench_cmdstats(b);
    bench_stop_pid(pid);
    if (cpu0 < 0 || cpu1 < 0)
        bench_die("W4: cannot read the worker's CPU time");

    double secs = (double)(t1 - t0) / 1e6;
    snprintf(variant, sizeof variant, "delayq work, %s, %d s", ntasks ? "1000 due in 1 h" : "empty",
             window_ms / 1000);
    bench_add(b, "W4", variant, "commands/s", "1/s", (double)cs.calls / secs, NULL, 0, T_VALUE_LE,
              0.2, "INFO commandstats, in-script commands included");
    bench_add(b, "W4", variant, "worker CPU", "%", (double)(cpu1 - cpu0) / (double)(t1 - t0) * 100,
              NULL, 0, T_VALUE_LE, 0.1, "all threads of the delayq work process (schedstat)");
}

void
bench_w4(struct bench *b)
{
    dq_client *c = bench_client(b);

    w4_once(b, c, 0);
    w4_once(b, c, 1000);
    flushall(b);
    dq_client_free(c);
}

/* ---- W6 inspector refresh -------------------------------------------------------- */

static const char fail_trace[] =
    "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n"
    "main.renderInvoice(...)\n\t/src/invoice/render.go:57 +0x1d\n"
    "main.handle(0xc000012345)\n\t/src/invoice/main.go:31 +0x65\n";

/* Enqueues @n tasks with delays from @lo to @hi ms, 10 000 at a time. */
static void
fill(struct bench *b, dq_client *c, const char *q, size_t n, int64_t lo, int64_t hi)
{
    size_t step = 10000;
    unsigned char *payloads = make_payloads(b, step);
    dq_enqueue_item *it = make_items(payloads, step);

    for (size_t done = 0; done < n; done += step) {
        size_t k = n - done < step ? n - done : step;
        for (size_t i = 0; i < k; i++)
            it[i].opts.delay_ms =
                lo + (hi > lo ? (int64_t)(bench_rand(b) % (uint32_t)(hi - lo)) : 0);
        enqueue_all(c, q, it, k);
    }
    free(it);
    free(payloads);
}

/* Claims @n due tasks with a one-day lease; fails them through the API when @fail. */
static void
claim_n(dq_client *c, const char *q, size_t n, bool fail)
{
    dq_err err = {0};

    for (size_t got = 0; got < n;) {
        dq_claimed cl;
        unsigned want = n - got < 1000 ? (unsigned)(n - got) : 1000;
        bench_ok(dq_claim(c, q, want, 86400000, "delayq-bench", &cl, &err), &err, "claim");
        if (cl.n == 0)
            bench_die("W6: nothing due to claim on %s", q);
        for (size_t i = 0; fail && i < cl.n; i++)
            bench_ok(
                dq_fail(c, q, &cl.tasks[i], "card declined (05 do not honour)", fail_trace, &err),
                &err, "fail");
        got += cl.n;
        dq_claimed_free(&cl);
    }
}

/* A queue of @sched scheduled (half due, half from 1 h to 6 days ahead), @inflight
 * claimed and @failed failed tasks, all through the library's calls. */
static void
populate(struct bench *b, dq_client *c, const char *q, size_t sched, size_t inflight, size_t failed)
{
    dq_stats s;
    dq_err err = {0};

    fill(b, c, q, failed, 0, 0);
    claim_n(c, q, failed, true);
    fill(b, c, q, inflight, 0, 0);
    claim_n(c, q, inflight, false);
    fill(b, c, q, sched / 2, 0, 0);
    fill(b, c, q, sched - sched / 2, 3600000, 6 * 86400000LL);
    bench_ok(dq_stats_get(c, q, &s, &err), &err, "stats");
    if (s.due + s.future != (int64_t)sched || s.inflight != (int64_t)inflight ||
        s.failed != (int64_t)failed)
        bench_die("W6: populated %lld+%lld scheduled, %lld in flight, %lld failed; wanted "
                  "%zu, %zu, %zu",
                  (long long)s.due, (long long)s.future, (long long)s.inflight, (long long)s.failed,
                  sched, inflight, failed);
}

struct refresh {
    double client, all, usec, wall_ms; /* per refresh */
};

enum { REFRESHES = 20, ROWS = 40 };

/* One window of REFRESHES refreshes of @m through the inspector's own model_fetch: the
 * per-refresh commands, Redis time and wall time. */
static void
refresh_window(struct bench *b, dq_client *c, struct model *m, double *client, double *all,
               double *usec, double *wall)
{
    const size_t offsets[PANE_COUNT] = {0}, limits[PANE_COUNT] = {ROWS, ROWS, ROWS, ROWS};

    bench_resetstat(b);
    int64_t t0 = bench_mono_us();
    for (int k = 0; k < REFRESHES; k++) {
        if (model_fetch(m, c, offsets, limits) != DQ_OK)
            bench_die("W6: model_fetch: %s", m->error);
    }
    int64_t t1 = bench_mono_us();
    struct cmdstats cs = bench_cmdstats(b);
    *client = (double)cs.client / REFRESHES;
    *all = (double)cs.calls / REFRESHES;
    *usec = (double)cs.usec / REFRESHES;
    *wall = (double)(t1 - t0) / 1000.0 / REFRESHES;
}

static void
model_open(struct model *m, dq_client *c, const char *q)
{
    const size_t offsets[PANE_COUNT] = {0}, limits[PANE_COUNT] = {ROWS, ROWS, ROWS, ROWS};

    model_init(m, q, dq_client_endpoint(c));
    if (model_fetch(m, c, offsets, limits) != DQ_OK) /* loads the scripts */
        bench_die("W6: model_fetch: %s", m->error);
}

/* Medians over the runs of one window each. */
static struct refresh
measure_refresh(struct bench *b, dq_client *c, const char *q)
{
    double client[16], all[16], usec[16], wall[16];
    struct model m;
    struct refresh out;

    model_open(&m, c, q);
    for (int r = 0; r < b->runs; r++)
        refresh_window(b, c, &m, &client[r], &all[r], &usec[r], &wall[r]);
    model_free(&m);
    out.client = bench_median(client, (size_t)b->runs);
    out.all = bench_median(all, (size_t)b->runs);
    out.usec = bench_median(usec, (size_t)b->runs);
    out.wall_ms = bench_median(wall, (size_t)b->runs);
    return out;
}

/* The two queues' Redis time per refresh, measured in alternating windows on the same
 * server (@small still holds its 1 000 tasks next to the 1M queue @large). A cross-check
 * of the target's ratio, whose two figures are measured half a minute apart (the 1M
 * queue is filled in between): here a drift of the machine between windows is shared by
 * both, so what is left is what the queue's size costs. */
static void
measure_alternating(struct bench *b, dq_client *c, const char *small, const char *large,
                    double *us_small, double *us_large)
{
    double client, all, wall, a[16], z[16];
    struct model ms, ml;

    model_open(&ms, c, small);
    model_open(&ml, c, large);
    for (int r = 0; r < b->runs; r++) {
        refresh_window(b, c, &ms, &client, &all, &a[r], &wall);
        refresh_window(b, c, &ml, &client, &all, &z[r], &wall);
    }
    model_free(&ms);
    model_free(&ml);
    *us_small = bench_median(a, (size_t)b->runs);
    *us_large = bench_median(z, (size_t)b->runs);
}

static void
add_refresh(struct bench *b, const char *variant, const struct refresh *f)
{
    bench_add(b, "W6", variant, "client commands/refresh", "", f->client, NULL, 0, T_VALUE_LE, 10,
              "what the inspector sends: FCALL_RO x5 + INFO + SCARD");
    bench_add(b, "W6", variant, "commands incl. in scripts", "", f->all, NULL, 0, T_NONE, 0,
              "every command INFO commandstats counts");
    bench_add(b, "W6", variant, "Redis time/refresh", "us", f->usec, NULL, 0, T_NONE, 0,
              "commandstats usec of the commands sent");
    bench_add(b, "W6", variant, "wall time/refresh", "ms", f->wall_ms, NULL, 0, T_NONE, 0, NULL);
}

void
bench_w6(struct bench *b)
{
    size_t big = b->quick ? 100000 : 1000000;
    dq_client *c = bench_client(b);
    char qs[64], q[64], variant[96];

    flushall(b);
    bench_queue(b, "w6s", qs, sizeof qs);
    populate(b, c, qs, 1000, 10, 100);
    struct refresh small = measure_refresh(b, c, qs);
    add_refresh(b, "1 000 scheduled, 10 in flight, 100 failed", &small);

    bench_queue(b, "w6b", q, sizeof q);
    populate(b, c, q, big, big / 100, big / 10);
    struct refresh large = measure_refresh(b, c, q);
    snprintf(variant, sizeof variant, "%zu scheduled, %zu in flight, %zu failed", big, big / 100,
             big / 10);
    add_refresh(b, variant, &large);
    bench_add(b, "W6", variant, "Redis time vs 1 000", "us", large.usec, "W6 Redis time at 1 000",
              small.usec, T_RATIO_LE, 2.0, NULL);
    double alt_small, alt_large;
    measure_alternating(b, c, qs, q, &alt_small, &alt_large);
    bench_add(b, "W6", variant, "same windows: vs 1 000", "us", alt_large,
              "W6 1 000 queue, alternating", alt_small, T_NONE, 0,
              "both queues on one server, windows alternating: drift between windows cancels");
    flushall(b);
    dq_client_free(c);
}

/* ---- W6b the all-queues overview: one refresh of 1 000 queues ------------------- */

enum { W6B_QUEUES = 1000, W6B_REFRESHES = 5 };

/* W6B_QUEUES queues in the states an overview meets: each with 20 scheduled (half due),
 * every 10th with 5 failures (in its tally), every 3rd with a live worker's beat, every
 * 50th paused. All through the library's calls. */
static void
w6b_populate(struct bench *b, dq_client *c, char names[][64], size_t n)
{
    dq_err err = {0};
    dq_beat rec = {.host = "bench",
                   .version = "bench",
                   .command = "true",
                   .pid = 1,
                   .interval_ms = 30000,
                   .concurrency = 1};

    for (size_t i = 0; i < n; i++) {
        bench_queue(b, "w6o", names[i], sizeof names[i]);
        if (i % 10 == 0) {
            fill(b, c, names[i], 5, 0, 0);
            claim_n(c, names[i], 5, true);
        }
        fill(b, c, names[i], 10, 0, 0);
        fill(b, c, names[i], 10, 3600000, 86400000);
        if (i % 3 == 0) {
            dq_beat_reply br;
            bench_ok(dq_heartbeat(c, names[i], "w-bench", DQ_BEAT, &rec, &br, &err), &err,
                     "heartbeat");
        }
        if (i % 50 == 0)
            bench_ok(dq_pause(c, names[i], 3600000, "bench", &err), &err, "pause");
    }
}

/* One overview refresh as `delayq top` makes it: the registry's names, then
 * overview_fetch (one FCALL_RO per queue, pipelined, and one INFO), judged and sorted. */
static void
w6b_refresh(dq_client *c, size_t want)
{
    dq_queues q;
    struct overview *ov = NULL;
    dq_err err = {0};

    bench_ok(dq_queues_get(c, DQ_CALL_MAX, &q, &err), &err, "queues");
    if (q.n != want)
        bench_die("W6b: %zu queues listed, wanted %zu", q.n, want);
    bench_ok(overview_fetch(c, q.names, q.n, &ov, &err), &err, "overview");
    for (size_t i = 0; i < ov->n; i++)
        if (ov->rows[i].rc != DQ_OK)
            bench_die("W6b: queue %s: %s", ov->rows[i].queue, ov->rows[i].error);
    overview_free(ov);
    dq_queues_free(&q);
}

void
bench_w6b(struct bench *b)
{
    dq_client *c = bench_client(b);
    char(*names)[64] = calloc(W6B_QUEUES, sizeof *names);
    double client[16], all[16], usec[16], wall[16];

    if (names == NULL)
        bench_die("W6b: out of memory");
    flushall(b);
    w6b_populate(b, c, names, W6B_QUEUES);
    w6b_refresh(c, W6B_QUEUES); /* loads the library */
    for (int r = 0; r < b->runs; r++) {
        bench_resetstat(b);
        int64_t t0 = bench_mono_us();
        for (int k = 0; k < W6B_REFRESHES; k++)
            w6b_refresh(c, W6B_QUEUES);
        int64_t t1 = bench_mono_us();
        struct cmdstats cs = bench_cmdstats(b);
        client[r] = (double)cs.client / W6B_REFRESHES;
        all[r] = (double)cs.calls / W6B_REFRESHES;
        usec[r] = (double)cs.usec / W6B_REFRESHES;
        wall[r] = (double)(t1 - t0) / 1000.0 / W6B_REFRESHES;
    }
    const char *variant = "1 000 queues (20 scheduled each; failing, paused, with workers)";
    double cl = bench_median(client, (size_t)b->runs);
    bench_add(b, "W6b", variant, "client commands/refresh", "", cl, NULL, 0, T_VALUE_LE,
              W6B_QUEUES + 3, "one FCALL_RO per queue (100 per round trip) + SCARD + SSCAN + INFO");
    bench_add(b, "W6b", variant, "client commands/queue", "", cl / W6B_QUEUES, NULL, 0, T_NONE, 0,
              "bounded: 1 + 3 per refresh");
    bench_add(b, "W6b", variant, "commands incl. in scripts", "",
              bench_median(all, (size_t)b->runs), NULL, 0, T_NONE, 0,
              "every command INFO commandstats counts");
    bench_add(b, "W6b", variant, "Redis time/refresh", "us", bench_median(usec, (size_t)b->runs),
              NULL, 0, T_VALUE_LE, 250000, "commandstats usec of the commands sent");
    bench_add(b, "W6b", variant, "wall time/refresh", "ms", bench_median(wall, (size_t)b->runs),
              NULL, 0, T_NONE, 0, "the registry's names, the rows, INFO, the verdicts and sort");
    flushall(b);
    free(names);
    dq_client_free(c);
}

/* ---- W7 failure triage: error groups and filtered bulk actions ---------------------- */

/* 20 causes without digits between them (digits are masked: they would share a group). */
static const char *const w7_causes[20] = {"alpha",   "bravo",  "charlie", "delta",    "echo",
                                          "foxtrot", "golf",   "hotel",   "india",    "juliett",
                                          "kilo",    "lima",   "mike",    "november", "oscar",
                                          "papa",    "quebec", "romeo",   "sierra",   "tango"};

/* Claims and fails @n due tasks in batches of 1000 (one claim_settle per batch), task k
 * with cause k % 20 and a number that is masked away. */
static void
w7_fail_all(dq_client *c, const char *q, size_t n)
{
    static char msgs[DQ_CALL_MAX][96];
    dq_settle res[DQ_CALL_MAX];
    dq_claimed cl = {0}, next;
    dq_err err = {0};
    size_t done = 0, k = 0;

    bench_ok(dq_claim(c, q, DQ_CALL_MAX, 86400000, "delayq-bench", &cl, &err), &err, "claim");
    while (cl.n > 0) {
        for (size_t i = 0; i < cl.n; i++, k++) {
            snprintf(msgs[i], sizeof msgs[i], "invoice %zu: %s service refused the charge", k,
                     w7_causes[k % 20]);
            res[i] = (dq_settle){.task = &cl.tasks[i],
                                 .outcome = DQ_FAILED,
                                 .message = msgs[i],
                                 .trace = fail_trace};
        }
        unsigned want = n - done - cl.n < DQ_CALL_MAX ? (unsigned)(n - done - cl.n) : DQ_CALL_MAX;
        bench_ok(
            dq_claim_settle(c, q, res, cl.n, want, 86400000, 0, "delayq-bench", NULL, &next, &err),
            &err, "claim_settle");
        done += cl.n;
        dq_claimed_free(&cl);
        cl = next;
    }
    dq_claimed_free(&cl);
    if (done != n)
        bench_die("W7: failed %zu of %zu", done, n);
}

struct w7_run {
    double max_step_us; /* the largest Redis time of one step */
    double p50_step_us, p99_step_us;
    double tasks_per_s; /* tasks moved per second of wall time */
    size_t moved, steps;
};

/* Requeues filter @f in steps of @step, measuring each step's Redis time. */
static struct w7_run
w7_requeue(struct bench *b, dq_client *c, const char *q, const dq_filter *f, size_t step)
{
    struct w7_run out = {0};
    dq_bulk cur = {0};
    dq_err err = {0};
    size_t cap = 1024;
    double *steps = malloc(cap * sizeof *steps);
    int64_t t0 = bench_mono_us();

    if (steps == NULL)
        bench_die("W7: out of memory");
    while (!cur.done) {
        bench_resetstat(b);
        bench_ok(dq_requeue_filter_step(c, q, f, 86400000, 0, step, &cur, &err), &err,
                 "requeue step");
        struct cmdstats cs = bench_cmdstats(b);
        if ((double)cs.usec > out.max_step_us)
            out.max_step_us = (double)cs.usec;
        if (out.steps == cap && (steps = realloc(steps, (cap *= 2) * sizeof *steps)) == NULL)
            bench_die("W7: out of memory");
        steps[out.steps++] = (double)cs.usec;
    }
    int64_t wall = bench_mono_us() - t0;              /* includes the two INFO calls of each step */
    out.p50_step_us = bench_median(steps, out.steps); /* sorts them */
    out.p99_step_us = bench_percentile(steps, out.steps, 99);
    free(steps);
    out.moved = cur.done_n;
    out.tasks_per_s = wall > 0 ? (double)cur.done_n * 1e6 / (double)wall : 0;
    return out;
}

void
bench_w7(struct bench *b)
{
    size_t n = b->quick ? 100000 : 1000000;
    dq_config cfg = {.failed_retention = 100000000};
    dq_client *c = bench_client(b);
    dq_err err = {0};
    dq_errors e;
    char q[64], variant[96], note[160];
    double usec[16];

    flushall(b);
    bench_queue(b, "w7", q, sizeof q);
    bench_ok(dq_config_set(c, q, &cfg, &err), &err, "config");
    fill(b, c, q, n, 0, 0);
    w7_fail_all(c, q, n);
    snprintf(variant, sizeof variant, "%zu failed in 20 groups", n);

    for (int r = 0; r < b->runs; r++) {
        bench_resetstat(b);
        bench_ok(dq_errors_get(c, q, &e, &err), &err, "errors");
        usec[r] = (double)bench_cmdstats(b).usec;
        if (e.n != 20 || e.failed != (int64_t)n)
            bench_die("W7: %zu groups, %lld failed; wanted 20, %zu", e.n, (long long)e.failed, n);
        if (r + 1 < b->runs)
            dq_errors_free(&e);
    }
    bench_add(b, "W7", variant, "errors Redis time", "us", bench_median(usec, (size_t)b->runs),
              NULL, 0, T_VALUE_LE, 5000, "delayq errors: one FCALL_RO, O(groups)");

    /* a group requeue: its own index, up to DQ_BULK_STEP per step */
    dq_filter group = {DQ_FILTER_GROUP, e.groups[0].id};
    struct w7_run g = w7_requeue(b, c, q, &group, 0);
    snprintf(note, sizeof note, "%zu moved in %zu steps (2 ms budget each; one run)", g.moved,
             g.steps);
    bench_add(b, "W7", variant, "group requeue max step", "us", g.max_step_us, NULL, 0, T_VALUE_LE,
              5000, note);
    bench_add(b, "W7", variant, "group requeue p50 step", "us", g.p50_step_us, NULL, 0, T_NONE, 0,
              NULL);
    bench_add(b, "W7", variant, "group requeue p99 step", "us", g.p99_step_us, NULL, 0, T_NONE, 0,
              NULL);
    bench_add(b, "W7", variant, "group requeue throughput", "tasks/s", g.tasks_per_s, NULL, 0,
              T_NONE, 0, note);

    /* a --match requeue: a walk of the whole failed set, up to DQ_BULK_STEP looked at per step */
    dq_filter match = {DQ_FILTER_MATCH, w7_causes[1]};
    struct w7_run m = w7_requeue(b, c, q, &match, 0);
    snprintf(note, sizeof note, "%zu moved of %zu looked at in %zu steps (one run)", m.moved,
             n - g.moved, m.steps);
    bench_add(b, "W7", variant, "match requeue max step", "us", m.max_step_us, NULL, 0, T_VALUE_LE,
              5000, note);
    bench_add(b, "W7", variant, "match requeue p50 step", "us", m.p50_step_us, NULL, 0, T_NONE, 0,
              NULL);
    bench_add(b, "W7", variant, "match requeue p99 step", "us", m.p99_step_us, NULL, 0, T_NONE, 0,
              NULL);
    bench_add(b, "W7", variant, "match requeue throughput", "tasks/s", m.tasks_per_s, NULL, 0,
              T_NONE, 0, note);
    dq_errors_free(&e);
    flushall(b);
    dq_client_free(c);
}

/* ---- W8 fairness: per-key limits beside one key's backlog ---------------------------- */

#define W8_KEYS    100
#define W8_PER_KEY 10
#define W8_SMALL   (W8_KEYS * W8_PER_KEY)
#define W8_LIMIT   2
#define W8_WORKERS 4
#define W8_THREADS 4

struct w8_state {
    atomic_int small, big; /* handler starts so far */
    int64_t
        start_us[W8_SMALL]; /* each small-key task's start (CLOCK_REALTIME: Redis' clock here) */
    atomic_llong last_small_us;
};

/* Instant: records when a small-key task started (its id is "k<key>-<i>"), counts the big
 * key's. */
static void
w8_handler(const dq_task *t, dq_result *res, void *arg)
{
    struct w8_state *s = arg;
    int64_t now = bench_real_us();

    res->outcome = DQ_DONE;
    if (t->id[0] != 'k') {
        atomic_fetch_add(&s->big, 1);
        return;
    }
    int i = atomic_fetch_add(&s->small, 1);
    if (i < W8_SMALL)
        s->start_us[i] = now;
    if (i == W8_SMALL - 1)
        atomic_store(&s->last_small_us, now);
}

static int
w8_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* @n tasks with key @key and ids "<prefix><i>" (the id tells the handler which kind). */
static void
w8_fill(dq_client *c, const char *q, const char *key, const char *prefix, size_t n)
{
    dq_enqueue_item *it = calloc(n, sizeof *it);
    char(*ids)[24] = calloc(n, sizeof *ids);

    if (it == NULL || ids == NULL)
        bench_die("W8: out of memory");
    for (size_t i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "%s%zu", prefix, i);
        it[i].opts.id = ids[i];
        it[i].opts.key = key;
        it[i].payload = "\x90";
        it[i].payload_len = 1;
    }
    enqueue_all(c, q, it, n);
    free(ids);
    free(it);
}

struct w8_run {
    double p50_ms, p99_ms, max_ms, first_ms; /* small-key start delays */
    double big_per_s;                        /* the big key's starts/s meanwhile */
    double usec_per_task;                    /* Redis time per task started (commandstats) */
    int big;
};

/* One fairness run: @nbig due tasks of key "big", then 100 keys with 10 each, four library
 * workers of four threads; delays from the last small enqueue to each small start. */
static struct w8_run
w8_once(struct bench *b, dq_client *c, size_t nbig)
{
    static struct w8_state st;
    struct worker_thread wt[W8_WORKERS];
    dq_config kc = {.key_concurrency = W8_LIMIT};
    dq_err err = {0};
    char q[64], key[16], prefix[16];
    struct w8_run out;

    memset(&st, 0, sizeof st);
    flushall(b);
    bench_queue(b, "w8", q, sizeof q);
    bench_ok(dq_config_set(c, q, &kc, &err), &err, "config key_concurrency");
    w8_fill(c, q, "big", "big-", nbig);
    for (int k = 0; k < W8_KEYS; k++) {
        snprintf(key, sizeof key, "k%d", k);
        snprintf(prefix, sizeof prefix, "k%d-", k);
        w8_fill(c, q, key, prefix, W8_PER_KEY);
    }
    int64_t t0 = server_us(b); /* just after the last small-key task went in */
    bench_resetstat(b);
    dq_worker_opts o = {.concurrency = W8_THREADS, .batch = W8_THREADS};
    for (int i = 0; i < W8_WORKERS; i++)
        worker_start(b, &wt[i], q, &o, w8_handler, &st);
    int64_t deadline = bench_mono_us() + 120 * 1000000LL;
    while (atomic_load(&st.small) < W8_SMALL) {
        if (bench_mono_us() > deadline)
            bench_die("W8: %d of %d small-key tasks started in 120 s", atomic_load(&st.small),
                      W8_SMALL);
        bench_nap_ms(2);
    }
    int big = atomic_load(&st.big);
    struct cmdstats cs = bench_cmdstats(b);
    for (int i = 0; i < W8_WORKERS; i++)
        worker_stop(&wt[i]);
    double d[W8_SMALL];
    qsort(st.start_us, W8_SMALL, sizeof st.start_us[0], w8_cmp);
    for (int i = 0; i < W8_SMALL; i++)
        d[i] = (double)(st.start_us[i] - t0) / 1000.0;
    out.first_ms = d[0];
    out.p50_ms = bench_percentile(d, W8_SMALL, 50);
    out.p99_ms = bench_percentile(d, W8_SMALL, 99);
    out.max_ms = d[W8_SMALL - 1];
    out.big = big;
    out.big_per_s = out.max_ms > 0 ? big * 1000.0 / out.max_ms : 0;
    out.usec_per_task = (double)cs.usec / (double)(W8_SMALL + big);
    flushall(b);
    return out;
}

void
bench_w8(struct bench *b)
{
    size_t nbig = b->quick ? 5000 : 50000;
    size_t n = b->quick ? 5000 : 50000;
    dq_client *c = bench_client(b);
    double p50[16], p99[16], mx[16], first[16], rate[16], usec[16];
    double plain[16], keyed[16], plain_us[16], keyed_us[16], cpu, calls;
    char variant[96], note[160];
    int big = 0;

    for (int r = 0; r < b->runs; r++) {
        struct w8_run w = w8_once(b, c, nbig);
        p50[r] = w.p50_ms;
        p99[r] = w.p99_ms;
        mx[r] = w.max_ms;
        first[r] = w.first_ms;
        rate[r] = w.big_per_s;
        usec[r] = w.usec_per_task;
        big = w.big;
    }
    snprintf(variant, sizeof variant, "%zu due of 1 key + %d keys x %d, limit %d", nbig, W8_KEYS,
             W8_PER_KEY, W8_LIMIT);
    snprintf(note, sizeof note,
             "%d library workers x %d threads, instant handler; from the last small enqueue "
             "(server clock)",
             W8_WORKERS, W8_THREADS);
    size_t runs = (size_t)b->runs;
    bench_add(b, "W8", variant, "small-key start p50", "ms", bench_median(p50, runs), NULL, 0,
              T_NONE, 0, note);
    bench_add(b, "W8", variant, "small-key start p99", "ms", bench_median(p99, runs), NULL, 0,
              T_VALUE_LE, 2000, note);
    bench_add(b, "W8", variant, "small-key start max", "ms", bench_median(mx, runs), NULL, 0,
              T_VALUE_LE, 2000, note);
    bench_add(b, "W8", variant, "small-key first start", "ms", bench_median(first, runs), NULL, 0,
              T_NONE, 0, "after the claims parked the big key's backlog (1000 a call)");
    snprintf(note, sizeof note, "big-key starts until the last small start (%d in the last run)",
             big);
    bench_add(b, "W8", variant, "big key drain meanwhile", "tasks/s", bench_median(rate, runs),
              NULL, 0, T_NONE, 0, note);
    bench_add(b, "W8", variant, "Redis time per task started", "us", bench_median(usec, runs), NULL,
              0, T_NONE, 0, "commandstats usec of every call, parking included");

    /* the keyed path's cost: W2 (concurrency 8, one lane) with and without keys, alternating */
    unsigned char *payloads = make_payloads(b, n);
    dq_enqueue_item *it = make_items(payloads, n);
    static char keys[W8_KEYS][8];
    unsigned saved_keys = b->w2_keys, saved_limit = b->w2_key_limit;
    for (int r = 0; r < b->runs; r++) {
        for (size_t i = 0; i < n; i++)
            it[i].opts.key = NULL;
        b->w2_keys = 0;
        plain[r] = w2_once(b, c, it, n, 8, 1, &cpu, &calls);
        plain_us[r] = (double)bench_cmdstats(b).usec / (double)n;
        for (size_t i = 0; i < n; i++) { /* 100 keys round robin, counted, never held */
            snprintf(keys[i % W8_KEYS], sizeof keys[0], "k%zu", i % W8_KEYS);
            it[i].opts.key = keys[i % W8_KEYS];
        }
        b->w2_keys = W8_KEYS;
        b->w2_key_limit = 1000000;
        keyed[r] = w2_once(b, c, it, n, 8, 1, &cpu, &calls);
        keyed_us[r] = (double)bench_cmdstats(b).usec / (double)n;
    }
    b->w2_keys = saved_keys;
    b->w2_key_limit = saved_limit;
    snprintf(variant, sizeof variant, "W2 %zu due, concurrency 8: %d keys vs none", n, W8_KEYS);
    bench_add(b, "W8", variant, "keyed W2 tasks/s", "1/s", bench_median(keyed, runs),
              "plain W2 tasks/s, same run", bench_median(plain, runs), T_NONE, 0,
              "key_concurrency 1000000: every task counted, none held; alternating runs");
    bench_add(b, "W8", variant, "keyed Redis time per task", "us", bench_median(keyed_us, runs),
              "plain W2 us/task, same run", bench_median(plain_us, runs), T_NONE, 0,
              "commandstats usec of the claims (with their settles) per task");
    flushall(b);
    free(it);
    free(payloads);
    dq_client_free(c);
}
