/* SPDX-License-Identifier: MIT */
/* cmd_ls.c: delayq ls: one page of due, future, in-flight, failed, done or parked tasks. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/taskfmt.h"
#include "lib/pages.h"
#include "lib/view.h"

/* Due keyed tasks held back by key_concurrency are not in the due view (PROTOCOL.md 4.10):
 * ls due says how many there are and where to look, so a queue that seems drained is not
 * taken for one. One more read-only call (the parked view's total: the stats gauge). */
static void
parked_footer(struct cli *g)
{
    dq_page pk;
    dq_err err = {0};

    if (dq_page_get(g->client, g->queue, DQ_VIEW_PARKED, 0, 1, &pk, &err) != DQ_OK)
        return; /* (a server with older scripts refuses the view: nothing to say) */
    if (pk.total > 0)
        printf("(and %lld parked: due, held back while their key is at key_concurrency; "
               "delayq ls parked, delayq keys)\n",
               (long long)pk.total);
    dq_page_free(&pk);
}

/* The rows before the cursor's position, over all partitions. */
static int64_t
cursor_sum(const dq_page_cursor *cur)
{
    int64_t sum = 0;

    for (size_t i = 0; i < cur->n; i++)
        sum += cur->at[i];
    return sum;
}

static int
run(struct cli *g, const struct cli_args *args)
{
    long long limit = cli_num(args, "limit", 20), offset = cli_num(args, "offset", 0);
    const char *after = cli_str(args, "after", NULL);
    bool json = cli_has(args, "json");
    dq_page_cursor cur = {0};
    size_t routed = 1, all = 1;
    dq_view view;
    dq_page p;
    dq_err err = {0};
    int rc;

    if (args->npos == 0)
        return cli_usage_error(g, "which view? due, future, inflight, failed, done or parked");
    if (!dq_view_parse(args->pos[0], &view))
        return cli_usage_error(
            g, "view \"%s\" is not due, future, inflight, failed, done or parked", args->pos[0]);
    if (after != NULL && cli_has(args, "offset"))
        return cli_usage_error(g, "--after and --offset: give one of them");
    if (after != NULL && dq_page_cursor_parse(after, "--after", &cur, &err) != DQ_OK)
        return cli_error(g, &err);
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK) {
        dq_page_cursor_free(&cur);
        return rc;
    }
    /* --after, or a partitioned queue: the cursor (one rank per partition, PROTOCOL.md
     * 14.7), printed after the page for the next one; else the --offset page of before */
    if (after == NULL && dq_partitions_get(g->client, g->queue, &routed, &all, &err) != DQ_OK)
        return cli_error(g, &err);
    if (after != NULL || (all > 1 && offset == 0))
        rc = dq_page_next(g->client, g->queue, view, (size_t)limit, &cur, &p, &err);
    else
        rc = dq_page_get(g->client, g->queue, view, (size_t)offset, (size_t)limit, &p, &err);
    if (rc != DQ_OK) {
        dq_page_cursor_free(&cur);
        return cli_error(g, &err);
    }
    if (json) {
        struct dq_buf b = DQ_BUF_INIT;
        for (size_t i = 0; i < p.n; i++) {
            dq_buf_reset(&b);
            dq_fmt_task_json(&b, &p.tasks[i], p.now_ms);
            dq_buf_putc(&b, '\n');
            fwrite(b.data, 1, b.len, stdout);
        }
        dq_buf_free(&b);
        if (cur.n > 0 && p.total > cursor_sum(&cur)) { /* stdout stays JSON lines */
            char next[DQ_PARTITIONS_MAX * 15];
            dq_page_cursor_format(&cur, next, sizeof next);
            fprintf(stderr, "%s: next page: --after %s\n", g->prog, next);
        }
    } else {
        cli_task_row_header(stdout, (dq_view)view);
        for (size_t i = 0; i < p.n; i++)
            cli_task_row(stdout, &p.tasks[i], (dq_view)view, p.now_ms);
        if (cur.n > 0) {
            char next[DQ_PARTITIONS_MAX * 15];
            dq_page_cursor_format(&cur, next, sizeof next);
            if (p.total > cursor_sum(&cur))
                printf("(%zu of %lld shown; next page: --after %s)\n", p.n, (long long)p.total,
                       next);
            else if (after != NULL || p.total > (long long)p.n)
                printf("(%zu of %lld shown; the last page)\n", p.n, (long long)p.total);
        } else if ((long long)p.total > offset + (long long)p.n || offset > 0) {
            printf("(%zu of %lld shown, from offset %lld)\n", p.n, (long long)p.total, offset);
        }
        if (view == DQ_VIEW_DUE)
            parked_footer(g);
    }
    dq_page_free(&p);
    dq_page_cursor_free(&cur);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"limit", 'n', "N", CLI_UINT, 1, DQ_CALL_MAX,
     .help = "rows (1.." CLI_CALL_MAX_TEXT ", default 20)"},
    {"offset", 0, "N", CLI_UINT, 0, 1LL << 40, .help = "rows to skip (default 0)"},
    {"after", 0, "CURSOR", CLI_STR,
     .help = "the page after the one that printed \"next page: --after CURSOR\" (one rank "
             "per partition, joined by '.')"},
    {"json", 0, NULL, CLI_FLAG,
     .help = "one JSON object per line; payloads decoded from msgpack to JSON where possible "
             "(binary as {\"$base64\": ...}; bytes that are not msgpack as "
             "{\"$raw_base64\": ...})"},
    {NULL},
};

const struct cli_cmd cmd_ls = {
    .name = "ls",
    .summary = "list due, future, in-flight, failed, done or parked tasks",
    .usage = "delayq ls {due|future|inflight|failed|done|parked} [-q QUEUE] [--limit N]\n"
             "                 [--offset N | --after CURSOR] [--json]",
    .about = "One page of a view: due and future in due order, in-flight by lease deadline,\n"
             "failed newest first; done: the finished tasks the queue keeps (config\n"
             "done_retention), newest first, with when and how each ran; parked: due keyed\n"
             "tasks held back while their key is at key_concurrency, key by key.\n"
             "A partitioned queue: every partition's page merged in that order; page on\n"
             "with the --after CURSOR printed below the rows.",
    .opts = opts,
    .max_pos = 1,
    .run = run,
};
