/* SPDX-License-Identifier: MIT */
/*
 * cmd_export.c: delayq export: the tasks of one view as JSON lines (one record per task,
 * written by dq_fmt_task_export), read from the server in bounded pages, for `delayq
 * import` on another queue or server, or for study.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/taskfmt.h"

#define NEEDLE_MAX_TEXT CLI_STR(DQ_NEEDLE_MAX)

/* Tasks per page: a page of 1000 failed tasks (about 450 KB) kept Redis busy for 9 to 13
 * ms here (load 7 on 2 cores); a quarter of that keeps a production server responsive
 * while an export runs. */
#define PAGE      250
#define PAGE_TEXT "250"

static const char help[] =
    "usage: delayq export {failed|due|future|inflight} [-q QUEUE] [--match TEXT]\n"
    "                     [--limit N] > tasks.jsonl\n\n"
    "Writes the tasks of a view to stdout, one JSON object per line with every field\n"
    "(docs/PROTOCOL.md 5.23): the payload as JSON when that reads back to\n"
    "the same bytes, else as base64 in \"payload_b64\"; undecodable failed entries with\n"
    "their raw bytes in base64. `delayq import` reads the file back.\n\n"
    "Read in pages of " PAGE_TEXT " tasks, each one read-only call. Each page is exact,\n"
    "but while workers run, tasks that enter or leave the view between two pages shift\n"
    "the pages: a task can then be written twice (import skips the repeat) or missed.\n"
    "Pause the queue (delayq pause) for a snapshot of due and failed.\n\n"
    "  --match TEXT  only tasks whose id, payload (failed: also error and stack trace;\n"
    "                in flight: also the worker) contain TEXT (1.." NEEDLE_MAX_TEXT
    " bytes, plain,\n"
    "                case-sensitive): the server's search, " CLI_STEP_MAX_TEXT " tasks a step\n"
    "  --limit N     at most N tasks (default: all)\n\n"
    "Prints \"exported N tasks\" to stderr. Exit 1 when stdout cannot be written.\n\n";

/* What narrows an export; each filter is one way of reading the view in steps. */
struct filter {
    const char *match; /* --match: the server's search (lua/search.lua) */
};

/* Where an export is between steps. */
struct cursor {
    size_t offset;    /* no filter: the next page's offset */
    dq_search search; /* --match */
    bool done;
};

/* One bounded step: the next tasks of the view that pass @f, into @out (emptied first). */
static int
step(struct cli *g, dq_view view, const struct filter *f, struct cursor *cur, dq_page *out,
     dq_err *err)
{
    int rc;

    memset(out, 0, sizeof *out);
    if (f->match != NULL) {
        rc = dq_search_step(g->client, g->queue, view, f->match, DQ_CALL_MAX, &cur->search, out,
                            err);
        cur->done = rc != DQ_OK || cur->search.done;
        return rc;
    }
    rc = dq_page_get(g->client, g->queue, view, cur->offset, PAGE, out, err);
    if (rc != DQ_OK)
        return rc;
    cur->offset += out->n;
    cur->done = out->n < PAGE || (int64_t)cur->offset >= out->total;
    return DQ_OK;
}

int
cmd_export(struct cli *g, int argc, char **argv)
{
    static const char *const views[] = {"due", "future", "inflight", "failed"};
    struct filter f = {0};
    struct cursor cur = {0};
    long long limit = -1, written = 0;
    int view = -1, rc = DQ_EXIT_OK, m;
    const char *val;
    dq_err err = {0};

    for (int i = 0; i < argc; i++) {
        if ((m = cli_common_opt(g, argc, argv, &i, help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        if ((m = cli_opt(argc, argv, &i, "--match", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--match needs a value");
            if (val[0] == '\0' || strlen(val) > DQ_NEEDLE_MAX)
                return cli_usage_error(g, "--match: %zu bytes; the text must be 1..%d bytes",
                                       strlen(val), DQ_NEEDLE_MAX);
            f.match = val;
        } else if ((m = cli_opt(argc, argv, &i, "--limit", "-n", &val)) != 0) {
            if (m < 0 || cli_parse_uint(g, "--limit", val, 1, 1LL << 40, &limit) != 0)
                return m < 0 ? cli_usage_error(g, "--limit needs a value") : DQ_EXIT_USAGE;
        } else if (view < 0 && argv[i][0] != '-') {
            for (int v = 0; v < 4; v++) {
                if (strcmp(argv[i], views[v]) == 0 ||
                    (v == DQ_VIEW_INFLIGHT && strcmp(argv[i], "in-flight") == 0))
                    view = v;
            }
            if (view < 0)
                return cli_usage_error(g, "view \"%s\" is not failed, due, future or inflight",
                                       argv[i]);
        } else {
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
        }
    }
    if (view < 0)
        return cli_usage_error(g, "which view? failed, due, future or inflight");
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;

    struct dq_buf b = DQ_BUF_INIT;
    while (!cur.done && (limit < 0 || written < limit)) {
        dq_page p;
        if (step(g, (dq_view)view, &f, &cur, &p, &err) != DQ_OK) {
            rc = cli_error(g, &err);
            break;
        }
        for (size_t i = 0; i < p.n && (limit < 0 || written < limit); i++) {
            dq_buf_reset(&b);
            dq_fmt_task_export(&b, &p.tasks[i], g->queue);
            dq_buf_putc(&b, '\n');
            if (b.failed) {
                fprintf(stderr, "%s: out of memory\n", g->prog);
                rc = DQ_EXIT_FAILED;
                break;
            }
            if (fwrite(b.data, 1, b.len, stdout) != b.len)
                rc = DQ_EXIT_FAILED;
            written++;
        }
        dq_page_free(&p);
        if (rc != DQ_EXIT_OK)
            break;
    }
    dq_buf_free(&b);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write to stdout\n", g->prog);
        rc = rc == DQ_EXIT_OK ? DQ_EXIT_FAILED : rc;
    }
    fprintf(stderr, "%s: exported %lld tasks (%s of queue ", g->prog, written, views[view]);
    cli_put_safe(stderr, g->queue, strlen(g->queue));
    fprintf(stderr, ")\n");
    return rc;
}
