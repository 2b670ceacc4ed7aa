/* SPDX-License-Identifier: MIT */
/* cmd_stats.c: delayq stats: counts, counters and the --check health gate. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/health.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

/* Worker records read for the latest beat (the counts cover all of them). */
#define VERDICT_WORKERS 100

/* What the verdict reads besides the stats: the worker registry and Redis memory. */
struct verdict {
    dq_workers workers;
    dq_server_info info;
    enum dq_health_level level;
    char text[1024];
};

/* The queue's verdict in the same words as the inspector's (fmt/health.c). Three more
 * bounded calls: the queue's thresholds (config), the registry's counts and the
 * server's memory. @max_age and @max_far, when not negative, override the config. */
static int
make_verdict(struct cli *g, const dq_stats *s, int64_t max_age, long long max_far,
             struct verdict *v, dq_err *err)
{
    dq_config cfg;
    int rc = dq_config_get(g->client, g->queue, &cfg, err);

    if (rc == DQ_OK)
        /* counts and records only: the verdict needs no holders, which a partitioned
         * queue would read from every partition */
        rc = dq_workers_summary(g->client, g->queue, VERDICT_WORKERS, &v->workers, err);
    if (rc == DQ_OK)
        rc = dq_server_info_get(g->client, &v->info, err);
    if (rc != DQ_OK)
        return rc;
    const char *hung_worker = NULL;
    struct dq_health_facts f = {.stats = s,
                                .max_oldest_due_ms =
                                    max_age >= 0 ? max_age : cfg.alert_oldest_due_ms,
                                .max_far_future = max_far >= 0 ? max_far : cfg.alert_far_future,
                                .used_memory = v->info.used_memory,
                                .maxmemory = v->info.maxmemory,
                                .memory_warn_pct = (int)cfg.alert_memory_pct,
                                .fail_pct = cfg.alert_fail_pct,
                                .fail_per_min = cfg.alert_fail_per_min,
                                .workers_registered = v->workers.registered,
                                .workers_live = v->workers.live,
                                .workers_lost = v->workers.lost,
                                .last_beat_ms = dq_health_last_beat(&v->workers),
                                .workers_hung = dq_health_hung(&v->workers, &hung_worker),
                                .hung_worker = hung_worker,
                                .retry_rate = -1, /* nor the tasks running or retrying */
                                .max_running_ms = -1,
                                .longest_running_ms = -1};
    v->level = dq_health_verdict(&f, v->text, sizeof v->text);
    return DQ_OK;
}

/* The pause, the workers and the verdict, closing the object print_json opened. */
static void
print_json_pause(const dq_stats *s, const struct verdict *v)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_buf_printf(&b, ",\"paused\":%s", s->paused ? "true" : "false");
    if (s->paused) {
        dq_buf_printf(&b, ",\"pause\":{\"since_ms\":%lld,\"until_ms\":%lld,\"by\":",
                      (long long)s->paused_since_ms, (long long)s->paused_until_ms);
        dq_fmt_json_str(&b, s->paused_by, strlen(s->paused_by));
        dq_buf_puts(&b, ",\"reason\":");
        dq_fmt_json_str(&b, s->pause_reason, strlen(s->pause_reason));
        dq_buf_puts(&b, "}");
    }
    /* the queue limits in force, how often they held tasks back, and the throttle */
    dq_buf_printf(&b,
                  ",\"limits\":{\"rate_per_min\":%lld,\"rate_burst\":%lld,\"concurrency\":%lld,"
                  "\"rate_held_ms\":%lld,\"concurrency_held\":%s,"
                  "\"limited\":{\"rate\":%lld,\"concurrency\":%lld}}",
                  (long long)s->rate_per_min, (long long)s->rate_burst, (long long)s->concurrency,
                  (long long)s->rate_held_ms, s->concurrency_held ? "true" : "false",
                  (long long)s->limited_rate, (long long)s->limited_concurrency);
    dq_buf_printf(&b, ",\"throttled\":%s", s->throttled ? "true" : "false");
    if (s->throttled) {
        dq_buf_printf(&b,
                      ",\"throttle\":{\"rate_per_min\":%lld,\"concurrency\":%lld,"
                      "\"since_ms\":%lld,\"until_ms\":%lld,\"by\":",
                      (long long)s->throttle_rate_per_min, (long long)s->throttle_concurrency,
                      (long long)s->throttle_since_ms, (long long)s->throttle_until_ms);
        dq_fmt_json_str(&b, s->throttle_by, strlen(s->throttle_by));
        dq_buf_puts(&b, ",\"reason\":");
        dq_fmt_json_str(&b, s->throttle_reason, strlen(s->throttle_reason));
        dq_buf_puts(&b, "}");
    }
    dq_buf_printf(&b, ",\"workers\":{\"registered\":%lld,\"live\":%lld,\"lost\":%lld}",
                  (long long)v->workers.registered, (long long)v->workers.live,
                  (long long)v->workers.lost);
    if (s->window_ms > 0)
        dq_buf_printf(&b,
                      ",\"window\":{\"ms\":%lld,\"elapsed_ms\":%lld,\"done\":%lld,"
                      "\"failed\":%lld,\"retried\":%lld}",
                      (long long)s->window_ms, (long long)s->window_elapsed_ms,
                      (long long)s->window_done, (long long)s->window_failed,
                      (long long)s->window_retried);
    dq_buf_printf(&b, ",\"verdict\":{\"level\":\"%s\",\"text\":", dq_health_level_name(v->level));
    dq_fmt_json_str(&b, v->text, strlen(v->text));
    dq_buf_puts(&b, "}}\n");
    if (!b.failed)
        fwrite(b.data, 1, b.len, stdout);
    dq_buf_free(&b);
}

/* One line on the pause: "paused by W 5m ago until T: reason" (reason escaped). */
static void
put_pause(FILE *f, const dq_stats *s)
{
    char ago[32], until[80] = "resumed";

    dq_dur_format(ago, sizeof ago, s->now_ms - s->paused_since_ms);
    if (s->paused_until_ms > 0)
        dq_fmt_time_rel(until, sizeof until, s->paused_until_ms, s->now_ms);
    fputs("paused by ", f);
    cli_put_safe(f, s->paused_by, strlen(s->paused_by));
    fprintf(f, " %s ago, until %s", ago, until);
    if (s->pause_reason[0] != '\0') {
        fputs(": ", f);
        cli_put_safe(f, s->pause_reason, strlen(s->pause_reason));
    }
}

static void
print_json(const struct cli *g, const dq_stats *s, const struct verdict *v)
{
    printf("{\"queue\":\"%s\",\"now_ms\":%lld,\"due\":%lld,\"future\":%lld,\"far_future\":%lld,"
           "\"far_future_after_ms\":%lld,\"inflight\":%lld,\"expired_leases\":%lld,"
           "\"failed\":%lld,\"parked\":%lld,\"next_due_ms\":%lld,\"oldest_due_age_ms\":%lld,"
           "\"counters\":{\"enqueued\":%lld,\"done\":%lld,\"retried\":%lld,\"failed\":%lld,"
           "\"expired\":%lld,\"trimmed\":%lld,\"reaped\":%lld,\"requeued\":%lld,"
           "\"dropped\":%lld}",
           g->queue, (long long)s->now_ms, (long long)s->due, (long long)s->future,
           (long long)s->far_future, (long long)s->far_future_ms, (long long)s->inflight,
           (long long)s->expired_leases, (long long)s->failed, (long long)s->parked,
           (long long)s->next_due_ms, (long long)s->oldest_due_age_ms, (long long)s->enqueued,
           (long long)s->done, (long long)s->retried, (long long)s->failed_total,
           (long long)s->expired, (long long)s->trimmed, (long long)s->reaped,
           (long long)s->requeued, (long long)s->dropped);
    {
        size_t routed = 1, all = 1;
        dq_err err;
        if (dq_partitions_get(g->client, g->queue, &routed, &all, &err) == DQ_OK && all > 1)
            printf(",\"partitions\":%zu,\"partitions_draining\":%zu", routed, all - routed);
    }
    print_json_pause(s, v);
}

/* A partitioned queue's line: how many, how many drain, on how many nodes. */
static void
put_partitions(const struct cli *g)
{
    char name[DQ_QUEUE_NAME_MAX + 16], nodes[8][300];
    size_t routed, all, nnodes = 0;
    dq_err err;

    if (dq_partitions_get(g->client, g->queue, &routed, &all, &err) != DQ_OK || all <= 1)
        return;
    for (size_t i = 0; i < all; i++) {
        const char *node;
        size_t j;
        if (dq_partition_name(g->client, g->queue, i, name, sizeof name, &err) != DQ_OK)
            return;
        node = dq_client_node(g->client, name);
        for (j = 0; j < nnodes && strcmp(nodes[j], node) != 0; j++)
            ;
        if (j == nnodes && nnodes < 8)
            snprintf(nodes[nnodes++], sizeof nodes[0], "%s", node);
    }
    printf("partitions   %zu", routed);
    if (all > routed)
        printf(" (and %zu draining)", all - routed);
    printf(" on %zu node%s%s\n", nnodes, nnodes == 1 ? "" : "s", nnodes == 8 ? " or more" : "");
}

static void
print_human(const struct cli *g, const dq_stats *s, const struct verdict *v)
{
    char now[40], t[80], d[32];

    dq_time_format(now, sizeof now, s->now_ms);
    /* a cluster client's endpoint is its seeds; say which node holds the queue */
    if (strcmp(dq_client_node(g->client, g->queue), dq_client_endpoint(g->client)) != 0)
        printf("queue        %s at %s (node %s), server time %s\n", g->queue,
               dq_client_endpoint(g->client), dq_client_node(g->client, g->queue), now);
    else
        printf("queue        %s at %s, server time %s\n", g->queue, dq_client_endpoint(g->client),
               now);
    put_partitions(g);
    if (s->paused) {
        fputs("PAUSED       ", stdout);
        put_pause(stdout, s);
        fputc('\n', stdout);
    }
    if (s->throttled) {
        char th[512];
        dq_health_throttle(th, sizeof th, s);
        fputs("THROTTLED    ", stdout);
        cli_put_safe(stdout, th, strlen(th)); /* who and why come from Redis */
        fputc('\n', stdout);
    }
    if (s->rate_per_min > 0 || s->concurrency > 0) {
        char r[DQ_RATE_BUFSZ];
        dq_rate_format(r, sizeof r, s->rate_per_min);
        printf("limits       rate %s", r);
        if (s->rate_per_min > 0)
            printf(" (burst %lld)", (long long)s->rate_burst);
        if (s->concurrency > 0)
            printf(", %lld in flight", (long long)s->concurrency);
        else
            printf(", concurrency off");
        printf("; held back: rate %lld, concurrency %lld\n", (long long)s->limited_rate,
               (long long)s->limited_concurrency);
    }
    if (s->oldest_due_age_ms > 0) {
        dq_dur_format(d, sizeof d, s->oldest_due_age_ms);
        printf("due          %-10lld oldest waiting %s\n", (long long)s->due, d);
    } else {
        printf("due          %lld\n", (long long)s->due);
    }
    dq_fmt_time_rel(t, sizeof t, s->next_due_ms, s->now_ms);
    printf("future       %-10lld next due %s\n", (long long)s->future, t);
    dq_dur_format(d, sizeof d, s->far_future_ms);
    printf("far future   %-10lld due more than %s ahead\n", (long long)s->far_future, d);
    printf("in flight    %-10lld %lld with expired leases\n", (long long)s->inflight,
           (long long)s->expired_leases);
    printf("failed       %lld\n", (long long)s->failed);
    if (s->parked > 0) /* per-key limits: only a queue that has them says so */
        printf("parked       %-10lld keyed tasks waiting for their key's key_concurrency\n",
               (long long)s->parked);
    if (s->window_ms > 0) {
        dq_dur_format(d, sizeof d, s->window_ms);
        printf("last %-7s done %lld, failed %lld, retried %lld\n", d, (long long)s->window_done,
               (long long)s->window_failed, (long long)s->window_retried);
    }
    printf("workers      %lld live, %lld lost\n", (long long)v->workers.live,
           (long long)v->workers.lost);
    fputs("verdict      ", stdout);
    cli_put_safe(stdout, v->text, strlen(v->text)); /* it quotes names from Redis */
    fputc('\n', stdout);
    printf("counters     enqueued %lld, done %lld, retried %lld, failed %lld, expired %lld,\n"
           "             trimmed %lld, reaped %lld, requeued %lld, dropped %lld\n",
           (long long)s->enqueued, (long long)s->done, (long long)s->retried,
           (long long)s->failed_total, (long long)s->expired, (long long)s->trimmed,
           (long long)s->reaped, (long long)s->requeued, (long long)s->dropped);
}

/* ---- --since: the per-minute rollups (PROTOCOL.md 13, 5.33) ----------------------- */

/* Percentiles of the run time the table and the JSON lines give. */
static const double since_q[] = {0.5, 0.95, 0.99};

/* The --step default: a row a minute up to 2 h, 15 minutes up to a day, else an hour
 * (at most 168 rows for 7 days). */
static int64_t
since_default_step(int64_t span_ms)
{
    if (span_ms <= 2 * 3600000LL)
        return 60000;
    if (span_ms <= 24 * 3600000LL)
        return 15 * 60000;
    return 3600000;
}

/* A count in at most 5 columns: 99999, then 123k, 1.2M, 12M, 1.2G, ... */
static void
put_count(char *buf, size_t size, int64_t v)
{
    static const char units[] = "kMGTPE";
    double x = (double)v;
    int u = -1;

    if (v < 100000) {
        snprintf(buf, size, "%lld", (long long)v);
        return;
    }
    while (x >= 999.5 && u < 5)
        x /= 1000, u++;
    if (x < 9.95)
        snprintf(buf, size, "%.1f%c", x, units[u]);
    else
        snprintf(buf, size, "%.0f%c", x, units[u]);
}

/* A percentile in at most 6 columns: "-" without runs, ">10s" in the open bucket. */
static void
put_quantile(char *buf, size_t size, const int64_t run[DQ_RUN_BUCKETS], double q)
{
    int64_t v = dq_run_quantile(run, q);

    if (v < 0)
        snprintf(buf, size, "-");
    else if (dq_run_quantile_open(run, q))
        snprintf(buf, size, ">10s");
    else
        dq_dur_format(buf, size, v);
}

/* One table line: @label (5 columns), the six counts, the percentiles and, when @sample,
 * the backlog and the oldest due age. 77 columns. */
static void
put_since_line(const char *label, const dq_history_row *r, bool sample)
{
    const int64_t c[] = {r->enqueued, r->started, r->done, r->retried, r->failed, r->expired};
    char buf[32];

    printf("%-5s", label);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        put_count(buf, sizeof buf, c[i]);
        printf(" %5s", buf);
    }
    for (size_t i = 0; i < sizeof since_q / sizeof since_q[0]; i++) {
        put_quantile(buf, sizeof buf, r->run, since_q[i]);
        printf(" %6s", buf);
    }
    if (sample) {
        if (r->backlog < 0) {
            printf(" %7s %6s", "-", "-");
        } else {
            char age[DQ_DUR_BUFSZ];
            put_count(buf, sizeof buf, r->backlog);
            dq_dur_format(age, sizeof age, r->oldest_due_ms);
            printf(" %7s %6s", buf, age);
        }
    }
    fputc('\n', stdout);
}

/* A whole number of minutes as --since and --step take it: "5m", "1h30m", "7d". */
static void
put_minutes(char *buf, size_t size, int64_t ms)
{
    int64_t m = ms / 60000, d = m / 1440, h = m / 60 % 24;
    int n = 0;

    buf[0] = '\0';
    if (d > 0)
        n += snprintf(buf + n, size - (size_t)n, "%lldd", (long long)d);
    if (h > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "%lldh", (long long)h);
    if ((m % 60 > 0 || n == 0) && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "%lldm", (long long)(m % 60));
}

/* A rate a minute for the rates line: "12/min", "0.4/min". */
static void
put_rate(struct dq_buf *b, const char *what, int64_t n, double minutes)
{
    double r = minutes > 0 ? (double)n / minutes : 0;
    dq_buf_printf(b,
                  r >= 10 || r == 0 ? "%s %.0f/min"
                  : r >= 0.1        ? "%s %.1f/min"
                                    : "%s %.2f/min",
                  what, r);
}

static void
print_since_table(const struct cli *g, const dq_history *h, int64_t span_ms)
{
    char now[DQ_TIME_BUFSZ], span[DQ_DUR_BUFSZ], step[DQ_DUR_BUFSZ], day[16] = "";
    dq_history_row sum = {0};
    struct dq_buf b = DQ_BUF_INIT;
    int64_t span_min = (span_ms + 59999) / 60000;
    /* the minutes read: whole ones, and the part of the current one that has passed */
    double minutes = (double)(span_min - 1) + (double)(h->now_ms % 60000) / 60000.0;

    dq_time_format(now, sizeof now, h->now_ms);
    put_minutes(span, sizeof span, span_min * 60000);
    put_minutes(step, sizeof step, h->step_ms);
    printf("queue %s: last %s, counts per %s step, to %s\n", g->queue, span, step, now);
    if (h->history_minutes < span_min) {
        char keep[DQ_DUR_BUFSZ];
        put_minutes(keep, sizeof keep, h->history_minutes * 60000);
        printf("(history_minutes keeps %s: older steps are empty or partial)\n", keep);
    }
    printf("%-5s %5s %5s %5s %5s %5s %5s %6s %6s %6s %7s %6s\n", "time", "enq", "start", "done",
           "retry", "fail", "expir", "p50", "p95", "p99", "backlog", "oldest");
    for (size_t i = 0; i < h->n; i++) {
        const dq_history_row *r = &h->rows[i];
        char t[DQ_TIME_BUFSZ];
        dq_time_format(t, sizeof t, r->at_ms); /* 2026-12-02T07:04:00.000Z */
        if (strncmp(t, day, 10) != 0) {
            snprintf(day, sizeof day, "%.10s", t);
            printf("%s\n", day);
        }
        char hm[8];
        snprintf(hm, sizeof hm, "%.5s", t + 11);
        put_since_line(hm, r, true);
        dq_history_row_add(&sum, r);
    }
    put_since_line("all", &sum, false);
    put_rate(&b, "rates: enqueued", sum.enqueued, minutes);
    put_rate(&b, ", done", sum.done, minutes);
    put_rate(&b, ", failed", sum.failed, minutes);
    put_rate(&b, ", retried", sum.retried, minutes);
    dq_buf_printf(&b, "\nalso: requeued %lld, dropped %lld, leases lost %lld\n",
                  (long long)sum.requeued, (long long)sum.dropped, (long long)sum.lost);
    if (!b.failed)
        fwrite(b.data, 1, b.len, stdout);
    dq_buf_free(&b);
}

/* One JSON object per row: every field, the percentiles (null without runs), the
 * sample (null without one). */
static void
print_since_json(const struct cli *g, const dq_history *h)
{
    struct dq_buf b = DQ_BUF_INIT;

    for (size_t i = 0; i < h->n; i++) {
        const dq_history_row *r = &h->rows[i];
        char t[DQ_TIME_BUFSZ];
        dq_time_format(t, sizeof t, r->at_ms);
        dq_buf_puts(&b, "{\"queue\":");
        dq_fmt_json_str(&b, g->queue, strlen(g->queue));
        dq_buf_printf(&b,
                      ",\"at_ms\":%lld,\"at\":\"%s\",\"step_ms\":%lld,\"enqueued\":%lld,"
                      "\"started\":%lld,\"done\":%lld,\"retried\":%lld,\"failed\":%lld,"
                      "\"expired\":%lld,\"requeued\":%lld,\"dropped\":%lld,\"lost\":%lld,"
                      "\"run\":[",
                      (long long)r->at_ms, t, (long long)h->step_ms, (long long)r->enqueued,
                      (long long)r->started, (long long)r->done, (long long)r->retried,
                      (long long)r->failed, (long long)r->expired, (long long)r->requeued,
                      (long long)r->dropped, (long long)r->lost);
        for (size_t k = 0; k < DQ_RUN_BUCKETS; k++)
            dq_buf_printf(&b, k ? ",%lld" : "%lld", (long long)r->run[k]);
        dq_buf_printf(&b, "],\"run_sum_ms\":%lld", (long long)r->run_sum_ms);
        static const char *const names[] = {"p50_ms", "p95_ms", "p99_ms"};
        for (size_t k = 0; k < sizeof since_q / sizeof since_q[0]; k++) {
            int64_t v = dq_run_quantile(r->run, since_q[k]);
            if (v < 0)
                dq_buf_printf(&b, ",\"%s\":null", names[k]);
            else
                dq_buf_printf(&b, ",\"%s\":%lld", names[k], (long long)v);
        }
        if (r->backlog < 0)
            dq_buf_puts(&b, ",\"backlog\":null,\"oldest_due_ms\":null}\n");
        else
            dq_buf_printf(&b, ",\"backlog\":%lld,\"oldest_due_ms\":%lld}\n", (long long)r->backlog,
                          (long long)r->oldest_due_ms);
    }
    if (!b.failed)
        fwrite(b.data, 1, b.len, stdout);
    dq_buf_free(&b);
}

static int
run_since(struct cli *g, const struct cli_args *args)
{
    int64_t span_ms = cli_num(args, "since", 0);
    int64_t step_ms = cli_num(args, "step", since_default_step(span_ms));
    dq_history h;
    dq_err err = {0};
    int rc;

    if (step_ms % 60000 != 0)
        return cli_usage_error(g, "--step: %s is not a whole number of minutes (1m..7d)",
                               cli_str(args, "step", ""));
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_history_get(g->client, g->queue, span_ms, step_ms, &h, &err) != DQ_OK)
        return cli_error(g, &err);
    if (h.history_minutes <= 0) {
        fprintf(stderr,
                "%s: queue %s keeps no history (history_minutes is 0); turn it on with: "
                "delayq config -q %s history_minutes=1440\n",
                g->prog, g->queue, g->queue);
        dq_history_free(&h);
        return DQ_EXIT_FAILED;
    }
    if (cli_has(args, "json"))
        print_since_json(g, &h);
    else
        print_since_table(g, &h, span_ms);
    dq_history_free(&h);
    return DQ_EXIT_OK;
}

static int
run(struct cli *g, const struct cli_args *args)
{
    bool json = cli_has(args, "json"), check = cli_has(args, "check");
    bool allow_paused = cli_has(args, "allow-paused");
    long long max_far = cli_num(args, "max-far-future", -1); /* < 0: the queue's alert_far_future */
    int64_t max_age =
        cli_num(args, "max-oldest-due", -1); /* < 0: the queue's alert_oldest_due_ms */
    dq_stats s;
    dq_err err = {0};
    int rc;

    if (cli_has(args, "since")) {
        static const char *const check_only[] = {"check", "max-far-future", "max-oldest-due",
                                                 "allow-paused"};
        for (size_t i = 0; i < sizeof check_only / sizeof check_only[0]; i++)
            if (cli_has(args, check_only[i]))
                return cli_usage_error(g, "--%s and --since exclude each other", check_only[i]);
        return run_since(g, args);
    }
    if (cli_has(args, "step"))
        return cli_usage_error(g, "--step needs --since");
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_stats_get(g->client, g->queue, &s, &err) != DQ_OK)
        return cli_error(g, &err);
    struct verdict v = {0};
    if ((rc = make_verdict(g, &s, max_age, max_far, &v, &err)) != DQ_OK)
        return cli_error(g, &err);
    if (json)
        print_json(g, &s, &v);
    else if (!check)
        print_human(g, &s, &v);
    bool pause_fails = s.paused && !allow_paused;
    int status = DQ_EXIT_OK;
    if (check && (v.level == DQ_HEALTH_BAD || pause_fails)) {
        fprintf(stderr, "%s: check failed: queue %s: ", g->prog, g->queue);
        cli_put_safe(stderr, v.text, strlen(v.text));
        fputc('\n', stderr);
        status = DQ_EXIT_FAILED;
    } else if (check && !json) {
        printf("ok: queue %s: ", g->queue);
        cli_put_safe(stdout, v.text, strlen(v.text));
        fputc('\n', stdout);
    }
    dq_workers_free(&v.workers);
    return status;
}

static const struct cli_opt opts[] = {
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object; with --since one a row (JSON lines)"},
    {"check", 0, NULL, CLI_FLAG,
     .help = "exit 1 when the verdict is bad (no live worker while tasks are due, the oldest "
             "due too old, expired leases, too many far ahead) or the queue is paused"},
    {"max-far-future", 0, "N", CLI_UINT, 0, 1LL << 53,
     .help = "with --check: more than N far ahead is bad (default: alert_far_future, 100000)"},
    {"max-oldest-due", 0, "DUR", CLI_DUR,
     .help = "with --check: the oldest due task older is bad (default: alert_oldest_due_ms, 5m)"},
    {"allow-paused", 0, NULL, CLI_FLAG, .help = "with --check: a paused queue passes"},
    {"since", 0, "DUR", CLI_DUR, 60000, DQ_HISTORY_SPAN_MAX, .limit = "1m..7d",
     .help = "the history of the last DUR: counts, p50/p95/p99 run time and backlog a step"},
    {"step", 0, "DUR", CLI_DUR, 60000, DQ_HISTORY_SPAN_MAX, .limit = "1m..7d",
     .help = "with --since: rows of DUR, whole minutes (default 1m up to 2h, 15m up to 1d, "
             "else 1h)"},
    {NULL},
};

const struct cli_cmd cmd_stats = {
    .name = "stats",
    .summary = "counts, counters, health checks and history of a queue",
    .usage = "delayq stats [-q QUEUE] [--json] [--check [--max-far-future N]\n"
             "                    [--max-oldest-due DUR] [--allow-paused]]\n"
             "delayq stats [-q QUEUE] --since DUR [--step DUR] [--json]",
    .about = "Counts, next due, oldest due age, cumulative counters, workers and the verdict\n"
             "the inspector shows, in four bounded calls (thresholds: the alert_* config\n"
             "fields). --since: the per-minute history kept in Redis (history_minutes).",
    .opts = opts,
    .run = run,
};
