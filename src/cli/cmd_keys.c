/* SPDX-License-Identifier: MIT */
/*
 * cmd_keys.c: delayq keys: which key (tenant, customer) a backlog belongs to: the task
 * keys with the most due, parked, in-flight and failed tasks (PROTOCOL.md 4.10, 5.31),
 * from one bounded read-only call.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

static void
print_json(const struct cli *g, const dq_keys *k)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_buf_printf(&b,
                  "{\"queue\":\"%s\",\"now_ms\":%lld,\"due_seen\":%lld,\"due\":%lld,"
                  "\"failed_seen\":%lld,\"failed\":%lld,\"parked\":%lld,\"keys\":[",
                  g->queue, (long long)k->now_ms, (long long)k->due_seen, (long long)k->due_total,
                  (long long)k->failed_seen, (long long)k->failed_total,
                  (long long)k->parked_total);
    for (size_t i = 0; i < k->n; i++) {
        const dq_key_row *r = &k->rows[i];
        dq_buf_puts(&b, i ? ",{\"key\":" : "{\"key\":");
        dq_fmt_json_str(&b, r->key, r->key_len);
        dq_buf_printf(&b,
                      ",\"due\":%lld,\"parked\":%lld,\"inflight\":%lld,\"failed\":%lld,"
                      "\"oldest_due_ms\":%lld}",
                      (long long)r->due, (long long)r->parked, (long long)r->inflight,
                      (long long)r->failed, (long long)r->oldest_due_ms);
    }
    dq_buf_puts(&b, "]}\n");
    if (!b.failed)
        fwrite(b.data, 1, b.len, stdout);
    dq_buf_free(&b);
}

static void
print_human(const struct cli *g, const dq_keys *k)
{
    printf("queue %s: %lld parked; due counted in the oldest %lld of %lld due, failed in the "
           "newest %lld of %lld\n",
           g->queue, (long long)k->parked_total, (long long)k->due_seen, (long long)k->due_total,
           (long long)k->failed_seen, (long long)k->failed_total);
    if (k->n == 0)
        return;
    /* the key last: bytes from Redis, escaped, of any width */
    printf("%8s %8s %9s %8s  %-14s %s\n", "DUE", "PARKED", "IN-FLIGHT", "FAILED", "OLDEST DUE",
           "KEY");
    for (size_t i = 0; i < k->n; i++) {
        const dq_key_row *r = &k->rows[i];
        char age[32] = "-";
        if (r->oldest_due_ms >= 0) {
            dq_dur_format(age, sizeof age,
                          k->now_ms > r->oldest_due_ms ? k->now_ms - r->oldest_due_ms : 0);
            strncat(age, " ago", sizeof age - strlen(age) - 1);
        }
        printf("%8lld %8lld %9lld %8lld  %-14s ", (long long)r->due, (long long)r->parked,
               (long long)r->inflight, (long long)r->failed, age);
        cli_put_safe(stdout, r->key, r->key_len);
        fputc('\n', stdout);
    }
}

static int
run(struct cli *g, const struct cli_args *args)
{
    dq_keys k;
    dq_err err = {0};
    int rc;

    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_keys_get(g->client, g->queue, (unsigned)cli_num(args, "limit", 20), &k, &err) != DQ_OK)
        return cli_error(g, &err);
    if (cli_has(args, "json"))
        print_json(g, &k);
    else
        print_human(g, &k);
    dq_keys_free(&k);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"limit", 'n', "N", CLI_UINT, 1, 100, .help = "list N keys (1..100, default 20)"},
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object: the totals, then a \"keys\" array"},
    {NULL},
};

const struct cli_cmd cmd_keys = {
    .name = "keys",
    .summary = "the task keys with the most due, parked, in-flight and failed tasks",
    .usage = "delayq keys [-q QUEUE] [-n N] [--json]",
    .about = "Which key (delayq enqueue --key: a tenant, a customer) is this backlog? The\n"
             "keys with the most tasks, each with its due, parked (held back by the\n"
             "queue's key_concurrency), in-flight and failed tasks and how long its oldest\n"
             "due task has waited. Parked and in-flight counts are exact; due and failed\n"
             "are counted among the oldest 1000 due tasks and the newest 1000 failures\n"
             "(the header says how many of all), so this is one bounded read-only call.",
    .opts = opts,
    .run = run,
};
