/* SPDX-License-Identifier: MIT */
/*
 * cmd_errors.c: delayq errors: the failed set's error groups (PROTOCOL.md 4.6), kept by
 * the scripts, read in one read-only call that costs O(groups), never a walk.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "lib/task.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

static void
put_json_str(struct dq_buf *b, const char *k, const char *v, size_t len)
{
    dq_buf_printf(b, ",\"%s\":", k);
    dq_fmt_json_str(b, v, dq_slen(v, len));
}

static double
share(int64_t n, int64_t total)
{
    return total > 0 ? 100.0 * (double)n / (double)total : 0.0;
}

static void
print_json(const struct cli *g, const dq_errors *e)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_buf_printf(&b, "{\"queue\":\"%s\",\"now_ms\":%lld,\"failed\":%lld,\"groups\":[", g->queue,
                  (long long)e->now_ms, (long long)e->failed);
    for (size_t i = 0; i < e->n; i++) {
        const dq_error_group *x = &e->groups[i];
        dq_buf_printf(&b, "%s{\"group\":\"%s\"", i ? "," : "", x->id);
        put_json_str(&b, "signature", x->signature, x->signature_len);
        dq_buf_printf(&b,
                      ",\"count\":%lld,\"share_pct\":%.1f,\"first_seen_ms\":%lld,"
                      "\"last_seen_ms\":%lld",
                      (long long)x->count, share(x->count, e->failed), (long long)x->first_ms,
                      (long long)x->last_ms);
        put_json_str(&b, "sample_id", x->sample_id, x->sample_id_len);
        put_json_str(&b, "sample_error", x->sample_error, x->sample_error_len);
        dq_buf_puts(&b, "}");
    }
    dq_buf_puts(&b, "]}\n");
    if (!b.failed)
        fwrite(b.data, 1, b.len, stdout);
    dq_buf_free(&b);
}

static void
print_human(const struct cli *g, const dq_errors *e)
{
    printf("queue %s: %lld failed in %zu groups\n", g->queue, (long long)e->failed, e->n);
    if (e->n == 0)
        return;
    printf("%-16s %8s %6s %-9s %-9s  %s\n", "GROUP", "COUNT", "SHARE", "LAST", "FIRST",
           "SIGNATURE / SAMPLE");
    for (size_t i = 0; i < e->n; i++) {
        const dq_error_group *x = &e->groups[i];
        char last[32], first[32];
        dq_dur_format(last, sizeof last, e->now_ms > x->last_ms ? e->now_ms - x->last_ms : 0);
        dq_dur_format(first, sizeof first, e->now_ms > x->first_ms ? e->now_ms - x->first_ms : 0);
        strncat(last, " ago", sizeof last - strlen(last) - 1);
        strncat(first, " ago", sizeof first - strlen(first) - 1);
        printf("%-16s %8lld %5.1f%% %-9s %-9s  ", x->id, (long long)x->count,
               share(x->count, e->failed), last, first);
        cli_put_safe(stdout, x->signature, dq_slen(x->signature, x->signature_len));
        fputs("\n", stdout);
        if (dq_slen(x->sample_id, x->sample_id_len) > 0) {
            printf("%*s  e.g. ", 16 + 1 + 8 + 1 + 6 + 1 + 9 + 1 + 9, "");
            cli_put_safe(stdout, x->sample_id, dq_slen(x->sample_id, x->sample_id_len));
            fputs(": ", stdout);
            cli_put_safe(stdout, x->sample_error, dq_slen(x->sample_error, x->sample_error_len));
            fputs("\n", stdout);
        }
    }
}

static int
run(struct cli *g, const struct cli_args *args)
{
    bool json = cli_has(args, "json");
    dq_errors e;
    dq_err err = {0};
    int rc;

    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_errors_get(g->client, g->queue, &e, &err) != DQ_OK)
        return cli_error(g, &err);
    if (json)
        print_json(g, &e);
    else
        print_human(g, &e);
    dq_errors_free(&e);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object: failed, then a \"groups\" array"},
    {NULL},
};

const struct cli_cmd cmd_errors = {
    .name = "errors",
    .summary = "the failed tasks grouped by error signature, with counts",
    .usage = "delayq errors [-q QUEUE] [--json]",
    .about =
        "The failed tasks grouped by signature: the reason and the first line of the error\n"
        "with numbers, hex, UUIDs, quoted strings, e-mail addresses and a path's last part\n"
        "masked. Per group: its id, count and share of the failed set, when it was last and\n"
        "first seen, and a sample task (its newest) with its error. Counts are exact and kept\n"
        "by the scripts, so this is one cheap read-only call. Act on a group with\n"
        "'delayq requeue --group ID' or 'delayq drop --group ID'.",
    .opts = opts,
    .run = run,
};
