/* SPDX-License-Identifier: MIT */
/* cmd_queues.c: delayq queues: the queues of a server with their counts. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/taskfmt.h"

/* Queues listed (a screenful for a person; the registry itself is unbounded). */
#define QUEUES_LISTED      1000
#define QUEUES_LISTED_TEXT CLI_STR(QUEUES_LISTED)

static const char help[] =
    "usage: delayq queues [--json] [--forget QUEUE]\n\n"
    "The queues of the server, by name, with their due, future, in-flight and failed\n"
    "counts (up to " QUEUES_LISTED_TEXT
    " queues). A queue is listed once a producer, worker or operator\n"
    "has used it; it stays listed when it empties.\n\n"
    "  --json           one JSON object per line\n"
    "  --forget QUEUE   remove QUEUE from the list (its tasks are not touched; the next\n"
    "                   producer or worker of QUEUE lists it again)\n\n";

int
cmd_queues(struct cli *g, int argc, char **argv)
{
    const char *forget = NULL;
    bool json = false;
    dq_queues q;
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
        } else if ((m = cli_opt(argc, argv, &i, "--forget", NULL, &forget)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--forget needs a queue name");
            if (dq_queue_name_check(forget, &err) != DQ_OK)
                return cli_error(g, &err);
        } else {
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
        }
    }
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;
    if (forget != NULL) {
        if (dq_queue_forget(g->client, forget, &err) != DQ_OK)
            return cli_error(g, &err);
        if (!json)
            printf("forgot queue %s (its tasks, if any, are untouched)\n", forget);
        return DQ_EXIT_OK;
    }
    if (dq_queues_get(g->client, QUEUES_LISTED, &q, &err) != DQ_OK)
        return cli_error(g, &err);
    if (!json && q.n > 0)
        printf("%-32s %10s %10s %10s %10s\n", "QUEUE", "DUE", "FUTURE", "IN-FLIGHT", "FAILED");
    struct dq_buf b = DQ_BUF_INIT;
    for (size_t i = 0; i < q.n && rc == DQ_EXIT_OK; i++) {
        dq_stats s;
        if (dq_stats_get(g->client, q.names[i], &s, &err) != DQ_OK) {
            rc = cli_error(g, &err);
            break;
        }
        if (json) {
            dq_buf_reset(&b);
            dq_buf_puts(&b, "{\"queue\":");
            dq_fmt_json_str(&b, q.names[i], strlen(q.names[i]));
            dq_buf_printf(&b, ",\"due\":%lld,\"future\":%lld,\"inflight\":%lld,\"failed\":%lld}\n",
                          (long long)s.due, (long long)s.future, (long long)s.inflight,
                          (long long)s.failed);
            fwrite(b.data, 1, b.len, stdout);
        } else {
            cli_put_safe(stdout, q.names[i], strlen(q.names[i]));
            printf("%*s %10lld %10lld %10lld %10lld\n",
                   (int)(strlen(q.names[i]) < 32 ? 32 - strlen(q.names[i]) : 0), "",
                   (long long)s.due, (long long)s.future, (long long)s.inflight,
                   (long long)s.failed);
        }
    }
    if (rc == DQ_EXIT_OK && q.total > (int64_t)q.n && !json)
        printf("(%lld more not listed)\n", (long long)(q.total - (int64_t)q.n));
    if (q.total == 0 && !json)
        printf("(no queues yet: one is listed once something is enqueued to it)\n");
    dq_buf_free(&b);
    dq_queues_free(&q);
    return rc;
}
