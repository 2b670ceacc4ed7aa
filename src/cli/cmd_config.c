/* SPDX-License-Identifier: MIT */
/* cmd_config.c: delayq config: read or change the limits stored with a queue. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lib/dur.h"

static const char help[] =
    "usage: delayq config [-q QUEUE] [FIELD=VALUE ...] [--json]\n\n"
    "Prints the queue's limits; with FIELD=VALUE pairs, changes them first (all or\n"
    "nothing; recorded in the audit log). Limits live in Redis, so every producer,\n"
    "worker and operator of the queue enforces the same ones. Durations take units\n"
    "(30s, 5m); a bare number in a *_ms field is milliseconds.\n\n"
    "  max_delay_ms      longest delay at enqueue (default 7d)\n"
    "  max_payload       largest payload in bytes (default 1048576)\n"
    "  backoff_base_ms   first retry delay, doubling per attempt (default 1s)\n"
    "  backoff_cap_ms    longest retry delay (default 5m)\n"
    "  max_attempts      default attempts per task, 0 = unlimited (default 25)\n"
    "  failed_retention  failed tasks kept, exactly; older ones are trimmed and\n"
    "                    counted (default 100000)\n"
    "  audit_retention   audit entries kept, approximately (default 10000)\n"
    "  far_future_ms     where \"far future\" begins (default 1h)\n"
    "  worker_lost_ms    a worker silent this long is shown as lost; 0 = three of its\n"
    "                    beat intervals (default 0)\n"
    "  worker_prune_ms   a worker silent this long leaves the registry (default 1h)\n\n"
    "The health verdict's thresholds (delayq top, delayq stats --check):\n\n"
    "  alert_oldest_due_ms  the oldest due task waiting longer is bad (default 5m)\n"
    "  alert_far_future     more tasks than this in the far future is bad\n"
    "                       (default 100000)\n"
    "  alert_running_ms     a task in flight longer is long-running (default 5m)\n"
    "  alert_memory_pct     Redis memory over this % of maxmemory warns, 1..100\n"
    "  alert_window_ms      the window failures are judged over, 1m..1h (whole minutes)\n"
    "  alert_fail_pct       failed share of the window's done + failed is bad, 1..100\n"
    "                       (judged from 10 outcomes on)\n"
    "  alert_fail_per_min   failures a minute over the window is bad, 1..1000000000\n"
    "                       (default 90)\n\n";

static const struct {
    const char *name;
    bool dur;
    size_t off;
} fields[] = {
    {"max_delay_ms", true, offsetof(dq_config, max_delay_ms)},
    {"max_payload", false, offsetof(dq_config, max_payload)},
    {"backoff_base_ms", true, offsetof(dq_config, backoff_base_ms)},
    {"backoff_cap_ms", true, offsetof(dq_config, backoff_cap_ms)},
    {"max_attempts", false, offsetof(dq_config, max_attempts)},
    {"failed_retention", false, offsetof(dq_config, failed_retention)},
    {"audit_retention", false, offsetof(dq_config, audit_retention)},
    {"far_future_ms", true, offsetof(dq_config, far_future_ms)},
    {"worker_lost_ms", true, offsetof(dq_config, worker_lost_ms)},
    {"worker_prune_ms", true, offsetof(dq_config, worker_prune_ms)},
    {"alert_oldest_due_ms", true, offsetof(dq_config, alert_oldest_due_ms)},
    {"alert_far_future", false, offsetof(dq_config, alert_far_future)},
    {"alert_running_ms", true, offsetof(dq_config, alert_running_ms)},
    {"alert_memory_pct", false, offsetof(dq_config, alert_memory_pct)},
    {"alert_window_ms", true, offsetof(dq_config, alert_window_ms)},
    {"alert_fail_pct", false, offsetof(dq_config, alert_fail_pct)},
    {"alert_fail_per_min", false, offsetof(dq_config, alert_fail_per_min)},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

int
cmd_config(struct cli *g, int argc, char **argv)
{
    dq_config set = {0}, cur;
    bool json = false, any = false;
    dq_err err = {0};
    int rc, m;

    for (int i = 0; i < argc; i++) {
        if ((m = cli_common_opt(g, argc, argv, &i, help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
            continue;
        }
        const char *eq = strchr(argv[i], '=');
        size_t k;
        if (eq == NULL)
            return cli_usage_error(g, "unexpected argument \"%s\" (use FIELD=VALUE)", argv[i]);
        for (k = 0; k < NFIELDS; k++) {
            if (strlen(fields[k].name) == (size_t)(eq - argv[i]) &&
                strncmp(argv[i], fields[k].name, (size_t)(eq - argv[i])) == 0)
                break;
        }
        if (k == NFIELDS)
            return cli_usage_error(g, "unknown field \"%.*s\"", (int)(eq - argv[i]), argv[i]);
        int64_t *slot = (int64_t *)((char *)&set + fields[k].off);
        if (fields[k].dur && eq[1] != '\0' && strspn(eq + 1, "0123456789") == strlen(eq + 1)) {
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
        /* 0 means "leave as is" in dq_config; max_attempts 0 (unlimited) and
         * worker_lost_ms 0 (three beat intervals) are spelled -1. */
        if (*slot == 0) {
            if (strcmp(fields[k].name, "max_attempts") != 0 &&
                strcmp(fields[k].name, "worker_lost_ms") != 0)
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
