/* SPDX-License-Identifier: MIT */
/* cmd_audit.c: delayq audit: the operator-action log of a queue, newest first. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "lib/task.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    long long limit = cli_num(args, "limit", 50);
    bool json = cli_has(args, "json");
    dq_audit a;
    dq_err err = {0};
    int rc;

    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_audit_get(g->client, g->queue, (size_t)limit, &a, &err) != DQ_OK)
        return cli_error(g, &err);
    struct dq_buf b = DQ_BUF_INIT;
    for (size_t i = 0; i < a.n; i++) {
        const dq_audit_entry *e = &a.entries[i];
        char at[40];

        dq_time_format(at, sizeof at, e->at_ms);
        dq_buf_reset(&b);
        if (json) {
            dq_buf_printf(&b, "{\"at_ms\":%lld,\"at\":\"%s\",\"who\":", (long long)e->at_ms, at);
            dq_fmt_json_str(&b, e->who, dq_slen(e->who, e->who_len));
            dq_buf_puts(&b, ",\"action\":");
            dq_fmt_json_str(&b, e->action, dq_slen(e->action, e->action_len));
            dq_buf_puts(&b, ",\"detail\":");
            dq_fmt_json_str(&b, e->detail, dq_slen(e->detail, e->detail_len));
            dq_buf_puts(&b, ",\"result\":");
            dq_fmt_json_str(&b, e->result, dq_slen(e->result, e->result_len));
            dq_buf_puts(&b, "}\n");
            fwrite(b.data, 1, b.len, stdout);
        } else {
            printf("%s  ", at);
            cli_put_safe(stdout, e->who, dq_slen(e->who, e->who_len));
            fputs("  ", stdout);
            cli_put_safe(stdout, e->action, dq_slen(e->action, e->action_len));
            fputs("  ", stdout);
            cli_put_safe(stdout, e->detail, dq_slen(e->detail, e->detail_len));
            fputs("  -> ", stdout);
            cli_put_safe(stdout, e->result, dq_slen(e->result, e->result_len));
            fputc('\n', stdout);
        }
    }
    if (a.n == 0 && !json)
        printf("(no operator actions recorded on queue %s)\n", g->queue);
    dq_buf_free(&b);
    dq_audit_free(&a);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"limit", 'n', "N", CLI_UINT, 1, DQ_CALL_MAX,
     .help = "entries (1.." CLI_CALL_MAX_TEXT ", default 50)"},
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object per line"},
    {NULL},
};

const struct cli_cmd cmd_audit = {
    .name = "audit",
    .summary = "the log of operator actions",
    .usage = "delayq audit [-q QUEUE] [--limit N] [--json]",
    .about = "The queue's log of operator actions (requeue, drop, config), newest first: when,\n"
             "who, what, which ids or how many, and the result. Written by the scripts\n"
             "themselves, in the same call as the action; capped at the queue's\n"
             "audit_retention entries.",
    .opts = opts,
    .run = run,
};
