/* SPDX-License-Identifier: MIT */
/* cmd_workers.c: delayq workers: the queue's worker registry, live and lost. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

static void
put_json_str(struct dq_buf *b, const char *k, const char *v)
{
    dq_buf_printf(b, ",\"%s\":", k);
    dq_fmt_json_str(b, v, strlen(v));
}

static void
print_json(const struct cli *g, const dq_workers *ws)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_buf_printf(&b,
                  "{\"queue\":\"%s\",\"now_ms\":%lld,\"registered\":%lld,\"live\":%lld,"
                  "\"lost\":%lld,\"inflight\":%lld,\"inflight_looked\":%lld,"
                  "\"lost_after_ms\":%lld,\"workers\":[",
                  g->queue, (long long)ws->now_ms, (long long)ws->registered, (long long)ws->live,
                  (long long)ws->lost, (long long)ws->inflight, (long long)ws->inflight_looked,
                  (long long)ws->lost_after_ms);
    for (size_t i = 0; i < ws->n; i++) {
        const dq_worker_info *w = &ws->workers[i];
        dq_buf_printf(&b, "%s{\"name\":", i ? "," : "");
        dq_fmt_json_str(&b, w->name, strlen(w->name));
        put_json_str(&b, "host", w->host);
        dq_buf_printf(&b, ",\"pid\":%lld", (long long)w->pid);
        put_json_str(&b, "version", w->version);
        dq_buf_printf(&b,
                      ",\"started_ms\":%lld,\"beat_interval_ms\":%lld,\"last_beat_ms\":%lld,"
                      "\"beat_age_ms\":%lld,\"lost\":%s,\"draining\":%s,\"concurrency\":%lld,"
                      "\"busy\":%lld,\"done\":%lld,\"retried\":%lld,\"failed\":%lld",
                      (long long)w->started_ms, (long long)w->beat_interval_ms,
                      (long long)w->last_beat_ms, (long long)w->beat_age_ms,
                      w->lost ? "true" : "false", w->draining ? "true" : "false",
                      (long long)w->concurrency, (long long)w->busy, (long long)w->done,
                      (long long)w->retried, (long long)w->failed);
        put_json_str(&b, "command", w->command);
        dq_buf_printf(&b, ",\"hung\":%lld,\"held\":%zu,\"tasks\":[", (long long)w->hung, w->held);
        for (size_t j = 0; j < w->ntasks; j++) {
            dq_buf_printf(&b, "%s{\"id\":", j ? "," : "");
            dq_fmt_json_str(&b, w->tasks[j].id, strlen(w->tasks[j].id));
            dq_buf_printf(&b, ",\"claimed_ms\":%lld}", (long long)w->tasks[j].claimed_ms);
        }
        dq_buf_puts(&b, "]}");
    }
    dq_buf_puts(&b, "]}\n");
    if (!b.failed)
        fwrite(b.data, 1, b.len, stdout);
    dq_buf_free(&b);
}

static void
print_human(const struct cli *g, const dq_workers *ws)
{
    char lost_after[32] = "3 beat intervals";

    if (ws->lost_after_ms > 0)
        dq_dur_format(lost_after, sizeof lost_after, ws->lost_after_ms);
    printf("queue %s: %lld workers, %lld live, %lld lost (lost after %s without a beat)\n",
           g->queue, (long long)ws->registered, (long long)ws->live, (long long)ws->lost,
           lost_after);
    if (ws->n == 0)
        return;
    printf("%-28s %-6s %-10s %-9s %8s %8s %8s  %s\n", "WORKER", "STATE", "LAST BEAT", "BUSY",
           "DONE", "RETRIED", "FAILED", "UP / COMMAND");
    for (size_t i = 0; i < ws->n; i++) {
        const dq_worker_info *w = &ws->workers[i];
        char age[32], up[32], busy[32];

        dq_dur_format(age, sizeof age, w->beat_age_ms < 0 ? 0 : w->beat_age_ms);
        dq_dur_format(up, sizeof up,
                      ws->now_ms - w->started_ms < 0 ? 0 : ws->now_ms - w->started_ms);
        snprintf(busy, sizeof busy, "%lld/%lld", (long long)w->busy, (long long)w->concurrency);
        cli_put_safe(stdout, w->name, strlen(w->name));
        printf("%*s %-6s %-10s %-9s %8lld %8lld %8lld  up %s",
               (int)(strlen(w->name) < 28 ? 28 - strlen(w->name) : 0), "",
               w->lost       ? "LOST"
               : w->hung > 0 ? "HUNG"
               : w->draining ? "drain"
                             : "live",
               age, busy, (long long)w->done, (long long)w->retried, (long long)w->failed, up);
        if (w->command[0] != '\0') {
            fputs(": ", stdout);
            cli_put_safe(stdout, w->command, strlen(w->command));
        }
        fputc('\n', stdout);
        if (w->hung > 0)
            printf("    %lld handler%s still running past its time limit (asked to stop; "
                   "restart the worker to free the slot)\n",
                   (long long)w->hung, w->hung == 1 ? "" : "s");
        if (w->held > 0) {
            printf("    holds %zu:", w->held);
            for (size_t j = 0; j < w->ntasks; j++) {
                char run[32];
                dq_dur_format(run, sizeof run, ws->now_ms - w->tasks[j].claimed_ms);
                fputc(' ', stdout);
                cli_put_safe(stdout, w->tasks[j].id, strlen(w->tasks[j].id));
                printf(" (%s)", run);
            }
            if (w->ntasks < w->held)
                fputs(" ...", stdout);
            fputc('\n', stdout);
        }
    }
    if (ws->inflight > ws->inflight_looked)
        printf("(holders shown for the %lld of %lld in-flight tasks with the earliest leases)\n",
               (long long)ws->inflight_looked, (long long)ws->inflight);
}

static int
run(struct cli *g, const struct cli_args *args)
{
    long long tasks = cli_num(args, "tasks", 5);
    bool json = cli_has(args, "json");
    dq_workers ws;
    dq_err err = {0};
    int rc;

    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_workers_get(g->client, g->queue, DQ_CALL_MAX, (size_t)tasks, &ws, &err) != DQ_OK)
        return cli_error(g, &err);
    if (json)
        print_json(g, &ws);
    else
        print_human(g, &ws);
    dq_workers_free(&ws);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"tasks", 0, "N", CLI_UINT, 0, 100, .help = "task ids shown per worker (0..100, default 5)"},
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object: counts, then a \"workers\" array"},
    {NULL},
};

const struct cli_cmd cmd_workers = {
    .name = "workers",
    .summary = "the workers of a queue: live, lost, busy, the tasks they hold",
    .usage = "delayq workers [-q QUEUE] [--tasks N] [--json]",
    .about = "The workers registered on the queue (every dq_worker and delayq work registers and\n"
             "sends a heartbeat; a clean exit removes it): name, last beat, busy slots of its\n"
             "concurrency, tasks done / retried / failed since it started, the tasks it holds,\n"
             "and the command it runs. A worker whose beats stopped for the queue's\n"
             "worker_lost_ms (default three beat intervals) is LOST: it died or lost Redis; its\n"
             "tasks come back when their leases run out. Lost entries are removed after\n"
             "worker_prune_ms (default 1h). One bounded call.",
    .opts = opts,
    .run = run,
};
