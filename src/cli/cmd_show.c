/* SPDX-License-Identifier: MIT */
/* cmd_show.c: delayq show: every field of one task, wherever it is. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/taskfmt.h"

static const char help[] =
    "usage: delayq show [-q QUEUE] [--json] [--] ID\n\n"
    "Every field of one task (in flight, failed or scheduled), the payload decoded from\n"
    "msgpack, and for a failed task its error and full stack trace. A generated id of a\n"
    "scheduled task has no index, so finding it walks the scheduled set in bounded steps.\n\n"
    "  --json   one JSON object\n\n";

int
cmd_show(struct cli *g, int argc, char **argv)
{
    const char *id = NULL;
    bool json = false;
    dq_task t;
    dq_stats s;
    dq_err err = {0};
    int rc, m;

    bool ids_only = false;

    for (int i = 0; i < argc; i++) {
        if (!ids_only && strcmp(argv[i], "--") == 0) {
            ids_only = true; /* what follows is an id, even if it starts with '-' */
            continue;
        }
        if (ids_only) {
            if (id != NULL)
                return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
            id = argv[i];
            continue;
        }
        if ((m = cli_common_opt(g, argc, argv, &i, help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (id == NULL && (argv[i][0] != '-' || argv[i][1] == '\0'))
            id = argv[i];
        else
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
    }
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
