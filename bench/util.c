/* SPDX-License-Identifier: MIT */
/* util.c: what the workloads share: results, clocks, statistics, INFO, processes. */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "harness/wait.h"

void
bench_die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("delayq-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1); /* the atexit handler stops the server */
}

void
bench_add(struct bench *b, const char *workload, const char *variant, const char *figure,
          const char *unit, double value, const char *ceiling_name, double ceiling, enum target t,
          double threshold, const char *note)
{
    struct row *r;

    if (b->nrows == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        struct row *rows = realloc(b->rows, cap * sizeof *rows);
        if (rows == NULL)
            bench_die("out of memory");
        b->rows = rows;
        b->cap = cap;
    }
    r = &b->rows[b->nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->workload, sizeof r->workload, "%s", workload);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->figure, sizeof r->figure, "%s", figure);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    snprintf(r->ceiling_name, sizeof r->ceiling_name, "%s", ceiling_name ? ceiling_name : "");
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    r->value = value;
    r->ceiling = ceiling;
    r->target = t;
    r->threshold = threshold;
    r->redis_cpu_us = NAN;
}

void
bench_set_redis_cpu(struct bench *b, double us_per_task)
{
    if (b->nrows > 0)
        b->rows[b->nrows - 1].redis_cpu_us = us_per_task;
}

void
bench_queue(struct bench *b, const char *prefix, char *buf, size_t size)
{
    snprintf(buf, size, "%s-%d", prefix, ++b->seq);
}

dq_client *
bench_client(struct bench *b)
{
    dq_client_opts o = {.command_timeout_ms = 60000, .who = "delayq-bench"};
    dq_client *c = NULL;
    dq_err err = {0};

    bench_ok(dq_client_open(b->redis.url, &o, &c, &err), &err, "connect");
    return c;
}

void
bench_ok(int rc, const dq_err *err, const char *what)
{
    if (rc != DQ_OK)
        bench_die("%s: %s: %s", what, dq_strerror(rc), err->msg);
}

/* xorshift64*: every byte of the output varies (an LCG's low bytes repeat every 2^16,
 * which would make the 64-byte payloads repeat). */
uint32_t
bench_rand(struct bench *b)
{
    b->rng ^= b->rng >> 12;
    b->rng ^= b->rng << 25;
    b->rng ^= b->rng >> 27;
    return (uint32_t)((b->rng * 2685821657736338717ULL) >> 32);
}

void
bench_fill(struct bench *b, unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)bench_rand(b);
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double
bench_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Nearest rank on @sorted (ascending). */
double
bench_percentile(double *sorted, size_t n, double p)
{
    size_t rank;

    if (n == 0)
        return 0;
    rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static int64_t
clock_us(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
bench_mono_us(void)
{
    return clock_us(CLOCK_MONOTONIC);
}

int64_t
bench_real_us(void)
{
    return clock_us(CLOCK_REALTIME);
}

void
bench_nap_ms(int ms)
{
    test_nap_ms(ms);
}

void
bench_cmd(struct bench *b, int argc, const char **argv)
{
    redisReply *r = test_redis_cmd(&b->redis, argc, argv);

    if (r == NULL || r->type == REDIS_REPLY_ERROR)
        bench_die("%s: %s", argv[0], r ? r->str : "no reply");
    freeReplyObject(r);
}

long long
bench_info_num(struct bench *b, const char *field)
{
    const char *argv[] = {"INFO", "everything"};
    redisReply *r = test_redis_cmd(&b->redis, 2, argv);
    long long v = -1;
    char key[96];

    snprintf(key, sizeof key, "\n%s:", field);
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, key);
        if (p != NULL)
            v = atoll(p + strlen(key));
    }
    freeReplyObject(r);
    return v;
}

void
bench_resetstat(struct bench *b)
{
    const char *argv[] = {"CONFIG", "RESETSTAT"};
    bench_cmd(b, 2, argv);
}

/* Commands a client sends itself; every other command in the stats ran inside a script
 * (the delayq library sends nothing else). */
static bool
client_command(const char *name, size_t len)
{
    static const char *const names[] = {"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall",
                                        "fcall_ro", "info", "ping", "auth", "select", "script|load",
                                        "function|load", "subscribe", "unsubscribe",
                                        /* the queue registry (no script touches it) */
                                        "scard", "sscan", "sadd", "srem"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
            return true;
    }
    return false;
}

struct cmdstats
bench_cmdstats(struct bench *b)
{
    const char *argv[] = {"INFO", "commandstats"};
    redisReply *r = test_redis_cmd(&b->redis, 2, argv);
    struct cmdstats s = {0};

    if (r == NULL || r->type != REDIS_REPLY_STRING)
        bench_die("INFO commandstats: no reply");
    /* cmdstat_<name>:calls=N,usec=U,... The reply does not count the INFO that makes
     * it; the CONFIG RESETSTAT that started the window is left out by name. */
    for (const char *p = strstr(r->str, "cmdstat_"); p != NULL; p = strstr(p, "cmdstat_")) {
        const char *name = p + 8, *colon = strchr(name, ':');
        long long calls = 0, usec = 0;

        if (colon == NULL)
            break;
        sscanf(colon, ":calls=%lld,usec=%lld", &calls, &usec);
        size_t len = (size_t)(colon - name);
        p = colon;
        if (len == strlen("config|resetstat") && memcmp(name, "config|resetstat", len) == 0)
            continue;
        s.calls += calls;
        if (client_command(name, len)) {
            s.client += calls;
            s.usec += usec;
        }
    }
    freeReplyObject(r);
    return s;
}

pid_t
bench_spawn_work(struct bench *b, const char *queue, const char *const *extra)
{
    const char *args[32];
    char *argv[32];
    int n = 0;
    pid_t parent = getpid(), pid;

    args[n++] = b->delayq_bin;
    args[n++] = "work";
    args[n++] = "--url";
    args[n++] = b->redis.url;
    args[n++] = "-q";
    args[n++] = queue;
    args[n++] = "--quiet";
    for (int i = 0; extra != NULL && extra[i] != NULL && n < 26; i++)
        args[n++] = extra[i];
    args[n++] = "--";
    args[n++] = "true";
    /* execv wants char *: copies, made before fork so the child never allocates */
    for (int i = 0; i < n; i++) {
        argv[i] = strdup(args[i]);
        if (argv[i] == NULL)
            bench_die("out of memory");
    }
    argv[n] = NULL;
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
    for (int i = 0; i < n; i++)
        free(argv[i]);
    return pid;
}

void
bench_stop_pid(pid_t pid)
{
    int64_t deadline = test_mono_ms() + 10000;
    int status;

    kill(pid, SIGTERM);
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (test_mono_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return;
        }
        test_nap_ms(5);
    }
}

int64_t
bench_cpu_us(pid_t pid)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    int64_t ns = 0;

    /* schedstat's first field is the thread's time on a CPU in ns: finer than the
     * 10 ms ticks of /proc/PID/stat, which an idle process never reaches. */
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    d = opendir(path);
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char p2[384];
        unsigned long long v = 0;
        FILE *f;

        if (e->d_name[0] == '.')
            continue;
        snprintf(p2, sizeof p2, "%s/%s/schedstat", path, e->d_name);
        f = fopen(p2, "r");
        if (f == NULL)
            continue;
        if (fscanf(f, "%llu", &v) == 1)
            ns += (int64_t)v;
        fclose(f);
    }
    closedir(d);
    return ns / 1000;
}

bool
bench_wants(const struct bench *b, const char *workload)
{
    size_t n = strlen(workload);

    if (b->only[0] == '\0')
        return true;
    for (const char *p = b->only; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncasecmp(p, workload, n) == 0)
            return true;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return false;
}

int64_t
bench_redis_cpu_us(struct bench *b)
{
    int64_t v = bench_cpu_us(b->redis.pid);

    if (v < 0)
        bench_die("cannot read the CPU time of redis-server (pid %ld)", (long)b->redis.pid);
    return v;
}
