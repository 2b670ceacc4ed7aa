/* SPDX-License-Identifier: MIT */
/* cmd_ls.c: delayq ls: one page of due, future, in-flight or failed tasks. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/taskfmt.h"

static const char help[] =
    "usage: delayq ls {due|future|inflight|failed} [-q QUEUE] [--limit N] [--offset N]\n"
    "                 [--json]\n\n"
    "One page of a view: due and future in due order, in-flight by lease deadline,\n"
    "failed newest first.\n\n"
    "  --limit N    rows (1.." CLI_CALL_MAX_TEXT ", default 20)\n"
    "  --offset N   rows to skip (default 0)\n"
    "  --json       one JSON object per line; payloads decoded from msgpack to JSON where\n"
    "               possible (binary as {\"$base64\": ...}; bytes that are not msgpack as\n"
    "               {\"$raw_base64\": ...})\n\n";

int
cmd_ls(struct cli *g, int argc, char **argv)
{
    static const char *const views[] = {"due", "future", "inflight", "failed"};
    int view = -1, rc, m;
    long long limit = 20, offset = 0;
    bool json = false;
    const char *val;
    dq_page p;
    dq_err err = {0};

    for (int i = 0; i < argc; i++) {
        if ((m = cli_common_opt(g, argc, argv, &i, help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if ((m = cli_opt(argc, argv, &i, "--limit", "-n", &val)) != 0) {
            if (m < 0 || cli_parse_uint(g, "--limit", val, 1, DQ_CALL_MAX, &limit) != 0)
                return m < 0 ? cli_usage_error(g, "--limit needs a value") : DQ_EXIT_USAGE;
        } else if ((m = cli_opt(argc, argv, &i, "--offset", NULL, &val)) != 0) {
            if (m < 0 || cli_parse_uint(g, "--offset", val, 0, 1LL << 40, &offset) != 0)
                return m < 0 ? cli_usage_error(g, "--offset needs a value") : DQ_EXIT_USAGE;
        } else if (view < 0 && argv[i][0] != '-') {
            for (int v = 0; v < 4; v++) {
                if (strcmp(argv[i], views[v]) == 0 ||
                    (v == DQ_VIEW_INFLIGHT && strcmp(argv[i], "in-flight") == 0))
                    view = v;
            }
            if (view < 0)
                return cli_usage_error(g, "view \"%s\" is not due, future, inflight or failed",
                                       argv[i]);
        } else {
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
        }
    }
    if (view < 0)
        return cli_usage_error(g, "which view? due, future, inflight or failed");
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_page_get(g->client, g->queue, (dq_view)view, (size_t)offset, (size_t)limit, &p, &err) !=
        DQ_OK)
        return cli_error(g, &err);
    if (json) {
        struct dq_buf b = DQ_BUF_INIT;
        for (size_t i = 0; i < p.n; i++) {
            dq_buf_reset(&b);
            dq_fmt_task_json(&b, &p.tasks[i], p.now_ms);
            dq_buf_putc(&b, '\n');
            fwrite(b.data, 1, b.len, stdout);
        }
        dq_buf_free(&b);
    } else {
        cli_task_row_header(stdout, (dq_view)view);
        for (size_t i = 0; i < p.n; i++)
            cli_task_row(stdout, &p.tasks[i], (dq_view)view, p.now_ms);
        if ((long long)p.total > offset + (long long)p.n || offset > 0)
            printf("(%zu of %lld shown, from offset %lld)\n", p.n, (long long)p.total, offset);
    }
    dq_page_free(&p);
    return DQ_EXIT_OK;
}
