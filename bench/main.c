/* SPDX-License-Identifier: MIT */
/*
 * main.c: delayq-bench [--quick] [--only LIST] [--runs N] [--w2-conc LIST]
 * [--w2-lanes LIST] [--w2-workers N] [--json FILE] [--delayq PATH] [--handler PATH]. Starts
 * a private redis-server (the test fixture's code: free loopback port, held by PID,
 * stopped on exit), runs W1..W9 (W2p with W2), each run of W1 and W2 right after a
 * redis-benchmark ceiling run on the same server, and prints a table and one JSON line
 * per figure.
 */
#include "bench.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static struct bench g_bench;

static void
stop_server(void)
{
    test_redis_stop(&g_bench.redis);
}

/* The 1-minute load average, -1 when unknown. */
static double
loadavg(void)
{
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");

    if (f != NULL) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

/* A list of up to 7 numbers in 1..@max into @out (0-terminated); -1 when malformed. */
static int
parse_list(unsigned *out, long max, const char *list)
{
    size_t k = 0;
    const char *p = list;

    memset(out, 0, 8 * sizeof *out);
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > max || k + 1 >= 8 || (*end != ',' && *end != '\0'))
            return -1;
        out[k++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
    }
    return k > 0 ? 0 : -1;
}

static const char usage[] =
    "usage: delayq-bench [--quick] [--only LIST] [--runs N] [--w2-conc LIST] [--w2-lanes LIST]\n"
    "                    [--w2-workers N] [--w2-keys N] [--w2-key-limit L] [--partitions N]\n"
    "                    [--w9-replicas] [--json FILE] [--delayq PATH] [--handler PATH]\n\n"
    "Runs the workloads W1..W9 against a private redis-server (hz 10, no persistence)\n"
    "and compares them with redis-benchmark on the same server, in the same run.\n\n"
    "  --quick        about 10x smaller counts and shorter windows: a smoke run\n"
    "  --only LIST    run only these workloads, comma-separated: W1 (with W5), W2 (the\n"
    "                 in-process C handler), W2w (delayq work -- true, then W2p), W3, W4,\n"
    "                 W6, W6b (the overview of 1 000 queues), W7 (failure triage at 1M\n"
    "                 failed), W8 (per-key fairness, the keyed path's cost), W9 (one\n"
    "                 queue of partitions 1, 3, 6 on a local cluster of three masters);\n"
    "                 for A/B runs of one change\n"
    "  --runs N       repeats of each short measurement (1..15; default 5, --quick 3)\n"
    "  --w2-conc LIST W2's concurrency settings, comma-separated (default 1,8,64,256)\n"
    "  --w2-lanes LIST W2's lanes settings (dq_worker_opts.lanes), comma-separated\n"
    "                 (default 1,2; lanes of fewer than 8 slots each are skipped)\n"
    "  --w2-workers N W2 with N workers (coordinators, connections) sharing each\n"
    "                 concurrency setting (1..8; default 1): a measurement, not the target's\n"
    "  --w2-keys N    W2's tasks carry one of N keys, round robin (per-key limits), with\n"
    "  --w2-key-limit L the queue's key_concurrency L (default 1000000: counted, never held)\n"
    "  --partitions N W3 on a queue of N partitions (1..256; default 1, today's layout):\n"
    "                 the worker claims across them (PROTOCOL.md 10.10)\n"
    "  --w9-replicas  W9's cluster has a replica per master (6 nodes; default 3 masters)\n"
    "  --json FILE    also write the JSON lines to FILE\n"
    "  --delayq PATH  the delayq binary for W2 and W4 (default: $DELAYQ_BIN, else\n"
    "                 ../src/delayq next to this program)\n"
    "  --handler PATH the persistent handler for W2p (default: examples/handler.py in\n"
    "                 $DQ_SOURCE_ROOT, else above this program, as in a build tree)\n";

/* The delayq binary: --delayq, $DELAYQ_BIN, or the build tree's src/delayq. */
static void
find_delayq(struct bench *b, const char *opt)
{
    const char *env = getenv("DELAYQ_BIN");
    char self[PATH_MAX - 32];
    ssize_t n;

    if (opt != NULL || (env != NULL && env[0] != '\0')) {
        snprintf(b->delayq_bin, sizeof b->delayq_bin, "%s", opt ? opt : env);
    } else if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(b->delayq_bin, sizeof b->delayq_bin, "%s/../src/delayq", self);
    }
    if (access(b->delayq_bin, X_OK) != 0)
        bench_die("no delayq binary at '%s' (use --delayq PATH or DELAYQ_BIN)", b->delayq_bin);
}

static void
fmt_num(char *buf, size_t size, double v)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (fabs(v) >= 1000)
        snprintf(buf, size, "%.0f", v);
    else if (fabs(v) >= 10)
        snprintf(buf, size, "%.1f", v);
    else
        snprintf(buf, size, "%.3f", v);
}

/* The index of the @k-th row to print: the ceiling rows (added last) come first. */
static size_t
row_at(const struct bench *b, size_t k)
{
    size_t nceil = 0;

    while (nceil < b->nrows && strcmp(b->rows[b->nrows - 1 - nceil].workload, "ceil") == 0)
        nceil++;
    return k < nceil ? b->nrows - nceil + k : k - nceil;
}

static double
row_ratio(const struct row *r)
{
    return r->ceiling > 0 ? r->value / r->ceiling : NAN;
}

/* 1 met, 0 missed, -1 no target (or no ceiling to judge it by). */
static int
row_met(const struct row *r)
{
    double ratio = row_ratio(r);

    switch (r->target) {
    case T_RATIO_GE:
        return isnan(ratio) ? -1 : ratio >= r->threshold;
    case T_RATIO_LE:
        return isnan(ratio) ? -1 : ratio <= r->threshold;
    case T_VALUE_LE:
        return r->value <= r->threshold;
    default:
        return -1;
    }
}

static void
fmt_target(const struct row *r, char *buf, size_t size)
{
    char t[24];

    fmt_num(t, sizeof t, r->threshold);
    switch (r->target) {
    case T_RATIO_GE:
        snprintf(buf, size, "ratio >= %s", t);
        break;
    case T_RATIO_LE:
        snprintf(buf, size, "ratio <= %s", t);
        break;
    case T_VALUE_LE:
        snprintf(buf, size, "<= %s", t);
        break;
    default:
        buf[0] = '\0';
    }
}

static void
print_table(const struct bench *b, FILE *f)
{
    fprintf(f, "%-4s  %-50s  %-26s  %12s  %12s  %7s  %-12s  %-4s  %s\n", "", "variant", "figure",
            "value", "ceiling", "ratio", "target", "met", "Redis CPU us/task");
    for (size_t k = 0; k < b->nrows; k++) {
        const struct row *r = &b->rows[row_at(b, k)];
        char v[24], c[24], ra[24], t[40], cpu[24];
        int met = row_met(r);

        fmt_num(cpu, sizeof cpu, r->redis_cpu_us);
        if (isnan(r->redis_cpu_us))
            cpu[0] = '\0';
        fmt_num(v, sizeof v, r->value);
        fmt_num(c, sizeof c, r->ceiling_name[0] ? r->ceiling : NAN);
        fmt_num(ra, sizeof ra, row_ratio(r));
        fmt_target(r, t, sizeof t);
        fprintf(f, "%-4s  %-50s  %-26s  %12s  %12s  %7s  %-12s  %-4s  %s\n", r->workload,
                r->variant, r->figure, v, c, ra, t,
                met < 0 ? (r->target != T_NONE ? "n/a" : "")
                : met   ? "yes"
                        : "NO",
                cpu);
    }
}

static void
json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void
json_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.6g", v);
}

static void
print_json(const struct bench *b, FILE *f)
{
    for (size_t k = 0; k < b->nrows; k++) {
        const struct row *r = &b->rows[row_at(b, k)];
        char t[40];
        int met = row_met(r);

        fputs("{\"workload\":", f);
        json_str(f, r->workload);
        fputs(",\"variant\":", f);
        json_str(f, r->variant);
        fputs(",\"figures\":{", f);
        json_str(f, r->figure);
        fputc(':', f);
        json_num(f, r->value);
        if (!isnan(r->redis_cpu_us)) {
            /* next to the figure: what each task cost the server (all its threads) */
            fputs(",\"redis_cpu_us_per_task\":", f);
            json_num(f, r->redis_cpu_us);
        }
        fputs("},\"unit\":", f);
        json_str(f, r->unit);
        fputs(",\"ceiling\":", f);
        if (r->ceiling_name[0]) {
            fputs("{\"name\":", f);
            json_str(f, r->ceiling_name);
            fputs(",\"value\":", f);
            json_num(f, r->ceiling);
            fputc('}', f);
        } else {
            fputs("null", f);
        }
        fputs(",\"ratio\":", f);
        json_num(f, row_ratio(r));
        fmt_target(r, t, sizeof t);
        fputs(",\"target\":", f);
        if (t[0])
            json_str(f, t);
        else
            fputs("null", f);
        fprintf(f, ",\"met\":%s,\"median_of\":%d",
                met < 0 ? "null"
                : met   ? "true"
                        : "false",
                b->runs);
        if (r->note[0]) {
            fputs(",\"note\":", f);
            json_str(f, r->note);
        }
        fputs("}\n", f);
    }
}

int
main(int argc, char **argv)
{
    struct bench *b = &g_bench;
    const char *json = NULL, *delayq = NULL;
    const char *const extra[] = {"--hz", "10", NULL};
    int runs = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            b->quick = true;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            snprintf(b->only, sizeof b->only, "%s", argv[++i]);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1 || runs > 15) {
                fprintf(stderr, "delayq-bench: --runs: %s is not in 1..15\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--w2-conc") == 0 && i + 1 < argc) {
            if (parse_list(b->w2_conc, 1000, argv[++i]) != 0) {
                fprintf(stderr,
                        "delayq-bench: --w2-conc: '%s' is not 1 to 7 comma-separated numbers "
                        "in 1..1000\n",
                        argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--w2-lanes") == 0 && i + 1 < argc) {
            if (parse_list(b->w2_lanes, 8, argv[++i]) != 0) {
                fprintf(stderr,
                        "delayq-bench: --w2-lanes: '%s' is not 1 to 7 comma-separated numbers "
                        "in 1..8\n",
                        argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--w2-workers") == 0 && i + 1 < argc) {
            int nw = atoi(argv[++i]);
            if (nw < 1 || nw > 8) {
                fprintf(stderr, "delayq-bench: --w2-workers: %s is not in 1..8\n", argv[i]);
                return 2;
            }
            b->w2_workers = (unsigned)nw;
        } else if (strcmp(argv[i], "--w2-keys") == 0 && i + 1 < argc) {
            int nk = atoi(argv[++i]);
            if (nk < 1 || nk > 10000) {
                fprintf(stderr, "delayq-bench: --w2-keys: %s is not in 1..10000\n", argv[i]);
                return 2;
            }
            b->w2_keys = (unsigned)nk;
        } else if (strcmp(argv[i], "--w2-key-limit") == 0 && i + 1 < argc) {
            int nl = atoi(argv[++i]);
            if (nl < 1 || nl > 1000000) {
                fprintf(stderr, "delayq-bench: --w2-key-limit: %s is not in 1..1000000\n", argv[i]);
                return 2;
            }
            b->w2_key_limit = (unsigned)nl;
        } else if (strcmp(argv[i], "--partitions") == 0 && i + 1 < argc) {
            int np = atoi(argv[++i]);
            if (np < 1 || np > DQ_PARTITIONS_MAX) {
                fprintf(stderr, "delayq-bench: --partitions: %s is not in 1..%d\n", argv[i],
                        DQ_PARTITIONS_MAX);
                return 2;
            }
            b->partitions = (unsigned)np;
        } else if (strcmp(argv[i], "--w9-replicas") == 0) {
            b->w9_replicas = true;
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json = argv[++i];
        } else if (strcmp(argv[i], "--delayq") == 0 && i + 1 < argc) {
            delayq = argv[++i];
        } else if (strcmp(argv[i], "--handler") == 0 && i + 1 < argc) {
            /* W2p reads it from there (workloads.c), as the tests pass paths */
            setenv("DQ_BENCH_HANDLER", argv[++i], 1);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else {
            fputs(usage, stderr);
            return 2;
        }
    }
    find_delayq(b, delayq);
    b->runs = runs > 0 ? runs : b->quick ? 3 : 5;
    if (b->w2_conc[0] == 0) {
        static const unsigned settings[] = {1, 8, 64, 256};
        memcpy(b->w2_conc, settings, sizeof settings);
    }
    if (b->w2_lanes[0] == 0) {
        b->w2_lanes[0] = 1;
        b->w2_lanes[1] = 2;
    }
    b->rng = 42;
    if (test_redis_start(&b->redis, extra) != 0)
        bench_die("cannot start redis-server (set DQ_REDIS_SERVER to its path)");
    atexit(stop_server);
    setvbuf(stdout, NULL, _IOLBF, 0);

    long long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double load = loadavg();
    /* the machine's load says how much of it the figures had (shared machines) */
    printf("delayq-bench%s: redis-server on 127.0.0.1:%d (hz 10, no persistence), %lld CPUs, "
           "load %.2f at start; 64-byte payloads; figures are medians of %d runs unless the "
           "note says one run\n",
           b->quick ? " --quick" : "", b->redis.port, cpus, load, b->runs);
    if (bench_wants(b, "W1")) {
        fprintf(stderr, "W1 enqueue, W5 memory...\n");
        bench_w1_w5(b);
    }
    if (bench_wants(b, "W2") || bench_wants(b, "W2w")) {
        fprintf(stderr, "W2 process...\n");
        bench_w2(b);
    }
    if (bench_wants(b, "W3")) {
        fprintf(stderr, "W3 lateness...\n");
        bench_w3(b);
    }
    if (bench_wants(b, "W4")) {
        fprintf(stderr, "W4 idle...\n");
        bench_w4(b);
    }
    if (bench_wants(b, "W6")) {
        fprintf(stderr, "W6 inspector refresh...\n");
        bench_w6(b);
    }
    if (bench_wants(b, "W6b")) {
        fprintf(stderr, "W6b all-queues overview...\n");
        bench_w6b(b);
    }
    if (bench_wants(b, "W7")) {
        fprintf(stderr, "W7 failure triage...\n");
        bench_w7(b);
    }
    if (bench_wants(b, "W8")) {
        fprintf(stderr, "W8 per-key fairness...\n");
        bench_w8(b);
    }
    if (bench_wants(b, "W9")) {
        fprintf(stderr, "W9 one queue over a cluster of three masters...\n");
        bench_w9(b);
    }
    bench_ceiling_rows(b);

    print_table(b, stdout);
    printf("load %.2f at the end (1-minute average; %lld CPUs)\n", loadavg(), cpus);
    print_json(b, stdout);
    if (json != NULL) {
        FILE *f = fopen(json, "w");
        if (f == NULL)
            bench_die("cannot write %s", json);
        print_json(b, f);
        if (fclose(f) != 0)
            bench_die("cannot write %s", json);
    }
    free(b->rows);
    return 0;
}
