/* SPDX-License-Identifier: MIT */
/* cmd_config.c: delayq config: read or change the limits stored with a queue. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "lib/dur.h"

static const struct {
    const char *name;
    bool dur;
    size_t off;
    bool rate;    /* a rate: 20/s, 1200/m (dq_rate_parse), kept per minute */
    bool zero_ok; /* 0 is a value of its own (none, off, default), spelled -1 */
} fields[] = {
    {"max_delay_ms", true, offsetof(dq_config, max_delay_ms), false, false},
    {"max_payload", false, offsetof(dq_config, max_payload), false, false},
    {"backoff_base_ms", true, offsetof(dq_config, backoff_base_ms), false, false},
    {"backoff_cap_ms", true, offsetof(dq_config, backoff_cap_ms), false, false},
    {"max_attempts", false, offsetof(dq_config, max_attempts), false, false},
    {"failed_retention", false, offsetof(dq_config, failed_retention), false, false},
    {"audit_retention", false, offsetof(dq_config, audit_retention), false, false},
    {"far_future_ms", true, offsetof(dq_config, far_future_ms), false, false},
    {"worker_lost_ms", true, offsetof(dq_config, worker_lost_ms), false, false},
    {"worker_prune_ms", true, offsetof(dq_config, worker_prune_ms), false, false},
    {"alert_oldest_due_ms", true, offsetof(dq_config, alert_oldest_due_ms), false, false},
    {"alert_far_future", false, offsetof(dq_config, alert_far_future), false, false},
    {"alert_running_ms", true, offsetof(dq_config, alert_running_ms), false, false},
    {"alert_memory_pct", false, offsetof(dq_config, alert_memory_pct), false, false},
    {"alert_window_ms", true, offsetof(dq_config, alert_window_ms), false, false},
    {"alert_fail_pct", false, offsetof(dq_config, alert_fail_pct), false, false},
    {"alert_fail_per_min", false, offsetof(dq_config, alert_fail_per_min), false, false},
    {"time_limit_ms", true, offsetof(dq_config, time_limit_ms), false, false},
    {"done_retention", false, offsetof(dq_config, done_retention), false, true},
    {"done_retention_ms", true, offsetof(dq_config, done_retention_ms), false, true},
    {"rate_limit", false, offsetof(dq_config, rate_limit), true, true},
    {"rate_burst", false, offsetof(dq_config, rate_burst), false, true},
    {"concurrency_limit", false, offsetof(dq_config, concurrency_limit), false, true},
    {"key_concurrency", false, offsetof(dq_config, key_concurrency), false, true},
    {"history_minutes", false, offsetof(dq_config, history_minutes), false, true},
    {"partitions", false, offsetof(dq_config, partitions), false, false},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static int
run(struct cli *g, const struct cli_args *args)
{
    dq_config set = {0}, cur;
    bool json = cli_has(args, "json"), any = false;
    dq_err err = {0};
    int rc;

    for (int i = 0; i < args->npos; i++) {
        const char *arg = args->pos[i], *eq = strchr(arg, '=');
        size_t k;
        if (eq == NULL)
            return cli_usage_error(g, "unexpected argument \"%s\" (use FIELD=VALUE)", arg);
        for (k = 0; k < NFIELDS; k++) {
            if (strlen(fields[k].name) == (size_t)(eq - arg) &&
                strncmp(arg, fields[k].name, (size_t)(eq - arg)) == 0)
                break;
        }
        if (k == NFIELDS)
            return cli_usage_error(g, "unknown field \"%.*s\"", (int)(eq - arg), arg);
        int64_t *slot = (int64_t *)((char *)&set + fields[k].off);
        if (fields[k].rate) {
            if (dq_rate_parse(eq + 1, fields[k].name, slot, &err) != DQ_OK)
                return cli_error(g, &err);
        } else if (fields[k].dur && eq[1] != '\0' &&
                   strspn(eq + 1, "0123456789") == strlen(eq + 1)) {
            /* a bare number in a field named *_ms is milliseconds: the name says so */
            long long v;
            if (cli_parse_uint(g, fields[k].name, eq + 1, 0, 1LL << 50, &v) != 0)
                return DQ_EXIT_USAGE;
            *slot = v;
        } else if (fields[k].dur) {
            if (dq_dur_parse(eq + 1, fields[k].name, slot, &err) != DQ_OK)
                return cli_error(g, &err);
        } else {
            long long v;
            if (cli_parse_uint(g, fields[k].name, eq + 1, 0, 1LL << 40, &v) != 0)
                return DQ_EXIT_USAGE;
            *slot = v;
        }
        /* 0 means "leave as is" in dq_config; max_attempts 0 (unlimited), worker_lost_ms 0
         * (three beat intervals), time_limit_ms 0 (none), done_retention 0 (none),
         * done_retention_ms 0 (no age limit) and the queue limits' 0 (off, default burst)
         * are spelled -1. */
        if (*slot == 0) {
            if (strcmp(fields[k].name, "max_attempts") != 0 &&
                strcmp(fields[k].name, "worker_lost_ms") != 0 &&
                strcmp(fields[k].name, "time_limit_ms") != 0 && !fields[k].zero_ok)
                return cli_usage_error(g, "%s: must be more than 0", fields[k].name);
            *slot = -1;
        }
        any = true;
    }
    /* setting limits before the first enqueue is how a queue is prepared, so --set makes
     * the queue (dq_config_set registers it); reading one nobody made is a typo */
    if ((rc = any ? cli_connect(g) : cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (any && dq_config_set(g->client, g->queue, &set, &err) != DQ_OK)
        return cli_action_error(g, &err, NULL);
    if (dq_config_get(g->client, g->queue, &cur, &err) != DQ_OK)
        return cli_error(g, &err);
    if (json)
        printf("{\"queue\":\"%s\"", g->queue);
    for (size_t k = 0; k < NFIELDS; k++) {
        int64_t v = *(int64_t *)((char *)&cur + fields[k].off);
        if (json) {
            printf(",\"%s\":%lld", fields[k].name, (long long)v);
        } else if (fields[k].rate) {
            char r[DQ_RATE_BUFSZ];
            dq_rate_format(r, sizeof r, v);
            printf("%-17s %lld (%s)\n", fields[k].name, (long long)v, r);
        } else if (fields[k].dur) {
            char d[32];
            dq_dur_format(d, sizeof d, v);
            printf("%-17s %lld (%s)\n", fields[k].name, (long long)v, d);
        } else {
            printf("%-17s %lld\n", fields[k].name, (long long)v);
        }
    }
    if (json)
        printf("}\n");
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object"},
    {NULL},
};

const struct cli_cmd cmd_config = {
    .name = "config",
    .summary = "read or change a queue's limits",
    .usage = "delayq config [-q QUEUE] [FIELD=VALUE ...] [--json]",
    .about = "Prints the queue's limits; FIELD=VALUE pairs change them first (all or nothing,\n"
             "audited). Durations take units (30s, 5m); a bare number in *_ms is ms. The\n"
             "fields and their defaults (delayq-config(1): what each does, its range):\n"
             "  max_delay_ms 7d            max_payload 1048576       backoff_base_ms 1s\n"
             "  backoff_cap_ms 5m          max_attempts 25           time_limit_ms 0 (none)\n"
             "  failed_retention 100000    audit_retention 10000     far_future_ms 1h\n"
             "  worker_lost_ms 0 (3 beats) worker_prune_ms 1h        done_retention 0 (none)\n"
             "  done_retention_ms 0 (no age limit; either turns done retention on)\n"
             "  key_concurrency 0 (none)   history_minutes 1440 (minutes kept; 0 = off)\n"
             "The health verdict's (top, stats --check; no script reads them):\n"
             "  alert_oldest_due_ms 5m     alert_far_future 100000   alert_running_ms 5m\n"
             "  alert_memory_pct 90        alert_window_ms 5m        alert_fail_pct 50\n"
             "  alert_fail_per_min 60\n"
             "The queue limits (claim enforces them for all workers; 0 = off):\n"
             "  rate_limit 0 (20/s, 1200/m; kept a minute)  rate_burst 0 (1 s worth)\n"
             "  concurrency_limit 0\n"
             "partitions 1 (1..256: one queue spread over this many slots; lowering it drains\n"
             "the others first)",
    .opts = opts,
    .max_pos = -1,
    .hint = " (use FIELD=VALUE)",
    .run = run,
};
