/* SPDX-License-Identifier: MIT */
/*
 * bench.h: delayq-bench, the workloads W1..W8 against a private redis-server, next
 * to the ceiling redis-benchmark measures on the same server in the same run. A
 * benchmark reports; it never fails because a target is missed.
 */
#ifndef DQ_BENCH_BENCH_H
#define DQ_BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "delayq.h"
#include "harness/redis.h"

#define PAYLOAD 64

/* How a figure is judged against its target. */
enum target {
    T_NONE,     /* reported, no target */
    T_RATIO_GE, /* value / ceiling >= threshold */
    T_RATIO_LE, /* value / ceiling <= threshold */
    T_VALUE_LE, /* value <= threshold */
};

struct row {
    char workload[8];
    char variant[96];
    char figure[40];
    char unit[16];
    double value;
    char ceiling_name[64]; /* "" when there is none */
    double ceiling;
    enum target target;
    double threshold;
    char note[160];
    double redis_cpu_us; /* Redis CPU per task during the measurement (schedstat); NAN: none */
};

struct bench {
    struct test_redis redis;
    char delayq_bin[4096];
    bool quick;
    int runs;              /* repeats of a short measurement; the median is reported */
    char only[64];         /* --only: comma-separated workloads to run; "" runs them all */
    unsigned w2_conc[8];   /* --w2-conc: W2's concurrency settings (0 ends the list) */
    unsigned w2_workers;   /* --w2-workers: in-process workers sharing W2's concurrency */
    unsigned w2_keys;      /* --w2-keys: W2's tasks carry one of this many keys (0: none) */
    unsigned w2_key_limit; /* --w2-key-limit: the queue's key_concurrency with --w2-keys */
    unsigned w2_lanes[8];  /* --w2-lanes: W2's dq_worker_opts.lanes settings (0 ends) */
    unsigned partitions;   /* --partitions: W3's queue is partitioned so (1: today's layout) */
    bool w9_replicas;      /* --w9-replicas: W9's cluster has a replica per master */
    /* every ceiling measurement of the run, requests/s (0: redis-benchmark missing) */
    double ceil_p1[64], ceil_p64[256];
    size_t n_p1, n_p64;
    struct row *rows; /* owned */
    size_t nrows, cap;
    uint64_t rng; /* never 0 */
    int seq;      /* makes queue names unique within the run */
};

/* ---- util.c ---------------------------------------------------------------------- */

/* Exits with a message: the bench cannot go on (no server, OOM, a call that must work). */
void bench_die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

void bench_add(struct bench *b, const char *workload, const char *variant, const char *figure,
               const char *unit, double value, const char *ceiling_name, double ceiling,
               enum target t, double threshold, const char *note);

/* Sets the Redis CPU per task (us) of the row added last. */
void bench_set_redis_cpu(struct bench *b, double us_per_task);

/* A fresh queue name "<prefix>-<n>". */
void bench_queue(struct bench *b, const char *prefix, char *buf, size_t size);

dq_client *bench_client(struct bench *b);

/* Dies with the call's message when it did not return DQ_OK. */
void bench_ok(int rc, const dq_err *err, const char *what);

/* Pseudo-random bytes and numbers (a fixed seed: every run uses the same data). */
void bench_fill(struct bench *b, unsigned char *p, size_t n);
uint32_t bench_rand(struct bench *b);

double bench_median(double *v, size_t n);
double bench_percentile(double *sorted, size_t n, double p);

int64_t bench_mono_us(void);
int64_t bench_real_us(void);
void bench_nap_ms(int ms);

/* Runs one command on the server; dies when it cannot. The reply is freed. */
void bench_cmd(struct bench *b, int argc, const char **argv);

/* A field of INFO (all sections) as a number; -1 when absent. */
long long bench_info_num(struct bench *b, const char *field);

/* Redis commands counted since the last CONFIG RESETSTAT (excluding that one). */
struct cmdstats {
    long long calls;  /* every command, including those run inside scripts */
    long long client; /* commands clients sent (EVALSHA, INFO, ...) */
    long long usec;   /* Redis time of the commands clients sent (a script's includes
                         the commands it ran) */
};
void bench_resetstat(struct bench *b);
struct cmdstats bench_cmdstats(struct bench *b);

/* Starts "delayq work --url U -q Q --quiet [extra...] -- true" with its output to
 * /dev/null; it dies with the bench (PR_SET_PDEATHSIG). */
pid_t bench_spawn_work(struct bench *b, const char *queue, const char *const *extra);
void bench_stop_pid(pid_t pid);

/* CPU time used so far by every thread of process @pid, in microseconds. */
int64_t bench_cpu_us(pid_t pid);

/* Whether --only names @workload (or was not given). */
bool bench_wants(const struct bench *b, const char *workload);

/* Redis CPU time so far (every thread of the server), in microseconds. */
int64_t bench_redis_cpu_us(struct bench *b);

/* ---- workloads.c ----------------------------------------------------------------- */

/* Measures redis-benchmark -c 1 -P @pipeline ZADD now, on an empty server (FLUSHALL
 * before and after); a workload run right after it is compared with this figure, so
 * both see the same load on a shared machine. */
double bench_ceiling_now(struct bench *b, int pipeline);
/* Rows with the medians of all the ceiling measurements of the run. */
void bench_ceiling_rows(struct bench *b);
void bench_w1_w5(struct bench *b);
void bench_w2(struct bench *b);
void bench_w3(struct bench *b);
void bench_w4(struct bench *b);
void bench_w6(struct bench *b);
/* the all-queues overview at 1 000 queues (docs/PROTOCOL.md 5.15a) */
void bench_w6b(struct bench *b);
void bench_w7(struct bench *b);
/* per-key limits' fairness case and the keyed path's cost (docs/PROTOCOL.md 4.10) */
void bench_w8(struct bench *b);

/* ---- w9.c ------------------------------------------------------------------------ */

/* one logical queue over partitions 1, 3, 6 on a local cluster of three masters */
void bench_w9(struct bench *b);

#endif /* DQ_BENCH_BENCH_H */
