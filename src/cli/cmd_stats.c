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
        rc = dq_workers_get(g->client, g->queue, VERDICT_WORKERS, 0, &v->workers, err);
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
    print_json_pause(s, v);
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
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object (with \"verdict\": level and text)"},
    {"check", 0, NULL, CLI_FLAG,
     .help = "exit 1 with the verdict as the reason when it is bad: no live worker while tasks "
             "are due, the oldest due task too old, expired leases, too many far ahead; or when "
             "the queue is paused (delayq pause)"},
    {"max-far-future", 0, "N", CLI_UINT, 0, 1LL << 53,
     .help = "with --check: more than N far ahead is bad (default: alert_far_future, 100000)"},
    {"max-oldest-due", 0, "DUR", CLI_DUR,
     .help = "with --check: the oldest due task older is bad (default: alert_oldest_due_ms, 5m)"},
    {"allow-paused", 0, NULL, CLI_FLAG,
     .help = "with --check: a paused queue passes (the other checks still apply; the oldest due "
             "age grows while paused)"},
    {NULL},
};

const struct cli_cmd cmd_stats = {
    .name = "stats",
    .summary = "counts, counters and health checks of a queue",
    .usage = "delayq stats [-q QUEUE] [--json] [--check [--max-far-future N]\n"
             "                    [--max-oldest-due DUR] [--allow-paused]]",
    .about = "Counts (due, future, far future, in flight, failed), the next due time, the age of\n"
             "the oldest due task, the queue's cumulative counters, the live and lost workers,\n"
             "and the verdict the inspector shows (\"no live worker for 3m12s while 40 are due\",\n"
             "\"all well\"), in four bounded calls. The verdict's thresholds are the queue's\n"
             "alert_* config fields (delayq config); the flags below override two of them.",
    .opts = opts,
    .run = run,
};
