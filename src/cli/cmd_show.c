/* SPDX-License-Identifier: MIT */
/* cmd_show.c: delayq show: every field of one task, wherever it is. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/taskfmt.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    const char *id = args->npos > 0 ? args->pos[0] : NULL;
    bool json = cli_has(args, "json");
    dq_task t;
    dq_stats s;
    dq_err err = {0};
    int rc;

    if (id == NULL)
        return cli_usage_error(g, "which task? give its id");
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_find(g->client, g->queue, id, &t, &err) != DQ_OK)
        return cli_error(g, &err);
    /* "now" for relative times is the server's clock, like everything else. */
    if (dq_stats_get(g->client, g->queue, &s, &err) != DQ_OK) {
        dq_task_clear(&t);
        return cli_error(g, &err);
    }
    struct dq_buf b = DQ_BUF_INIT;
    if (json) {
        dq_fmt_task_json(&b, &t, s.now_ms);
        dq_buf_putc(&b, '\n');
    } else {
        dq_fmt_task_details(&b, &t, s.now_ms);
    }
    if (b.failed)
        fprintf(stderr, "%s: out of memory\n", g->prog);
    else if (b.len > 0)
        fwrite(b.data, 1, b.len, stdout);
    int status = b.failed ? DQ_EXIT_FAILED : DQ_EXIT_OK;
    dq_buf_free(&b);
    dq_task_clear(&t);
    return status;
}

static const struct cli_opt opts[] = {
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object"},
    {NULL},
};

const struct cli_cmd cmd_show = {
    .name = "show",
    .summary = "every field of one task, with its error and stack trace",
    .usage = "delayq show [-q QUEUE] [--json] [--] ID",
    .about = "Every field of one task (in flight, failed or scheduled), the payload decoded from\n"
             "msgpack, and for a failed task its error and full stack trace. A generated id of a\n"
             "scheduled task has no index, so finding it walks the scheduled set in bounded steps.",
    .opts = opts,
    .max_pos = 1,
    .run = run,
};
