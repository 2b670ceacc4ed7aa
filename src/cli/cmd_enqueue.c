/* SPDX-License-Identifier: MIT */
/* cmd_enqueue.c: delayq enqueue: schedule one task and print its id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "lib/dur.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    dq_enqueue_opts o = {0};
    const char *json = cli_str(args, "json", NULL), *file = cli_str(args, "file", NULL);
    const char *at = cli_str(args, "at", NULL);
    bool use_stdin = false, have_delay = cli_has(args, "delay");
    struct dq_buf payload = DQ_BUF_INIT;
    char *raw = NULL;
    const void *data = NULL;
    size_t len = 0;
    dq_enqueued res;
    dq_err err = {0};
    int rc = DQ_EXIT_OK;

    for (int i = 0; i < args->npos; i++) {
        if (strcmp(args->pos[i], "-") != 0)
            return cli_usage_error(g, "unexpected argument \"%s\"", args->pos[i]);
        use_stdin = true;
    }
    o.delay_ms = cli_num(args, "delay", 0);
    if (at != NULL) {
        if (dq_time_parse(at, "--at", &o.at_ms, &err) != DQ_OK)
            return cli_error(g, &err);
        if (o.at_ms == 0)
            o.at_ms = 1; /* the epoch itself: "long ago", due now */
    }
    o.id = cli_str(args, "id", NULL);
    if (cli_has(args, "max-attempts"))
        o.max_attempts =
            cli_num(args, "max-attempts", 0) == 0 ? -1 : cli_num(args, "max-attempts", 0);
    o.deadline_ms = cli_num(args, "deadline", 0);
    o.time_limit_ms = cli_num(args, "time-limit", 0);
    o.unique_for_ms = cli_num(args, "unique-for", 0);
    o.replace = cli_has(args, "replace");
    o.key = cli_str(args, "key", NULL);
    if ((o.replace || o.unique_for_ms > 0) && o.id == NULL)
        return cli_usage_error(g, "--%s: needs --id", o.replace ? "replace" : "unique-for");
    if (cli_has(args, "deadline") && o.deadline_ms == 0)
        return cli_usage_error(g, "--deadline: must be more than 0");
    if ((json != NULL) + (file != NULL) + use_stdin != 1)
        return cli_usage_error(g, "give the payload exactly once: --json TEXT, --file PATH or -");
    if (have_delay && o.at_ms > 0)
        return cli_usage_error(g, "--delay and --at cannot be used together");
    if (o.id != NULL && (o.id[0] == '\0' || strlen(o.id) > DQ_ID_MAX))
        return cli_usage_error(g, "--id: must be 1..%d bytes (got %zu)", DQ_ID_MAX, strlen(o.id));

    if ((rc = cli_payload_read(g, json, file, use_stdin, &payload, &raw, &data, &len)) !=
        DQ_EXIT_OK)
        goto out;
    if (dq_enqueue(g->client, g->queue, &o, data, len, &res, &err) != DQ_OK) {
        /* enqueues are not in the audit log: an id tells, and makes a retry safe */
        rc = cli_action_error(g, &err,
                              o.id != NULL ? "delayq show tells whether it was added, and "
                                             "enqueueing it again with the same --id is safe"
                                           : "the task may have been added; give --id to make "
                                             "a retry safe");
        goto out;
    }
    if (o.replace && res.duplicate &&
        (res.where == DQ_STATE_INFLIGHT || res.where == DQ_STATE_FAILED)) {
        /* only a task still waiting can be replaced: say where it is instead */
        fprintf(stderr, "%s: task ", g->prog);
        cli_put_safe(stderr, res.id, strlen(res.id));
        fprintf(stderr, " is %s; not replaced (%s)\n",
                res.where == DQ_STATE_INFLIGHT ? "in flight" : "failed",
                res.where == DQ_STATE_INFLIGHT ? "wait until it is done, or delayq cancel it"
                                               : "delayq requeue or drop it first");
        rc = DQ_EXIT_FAILED;
        goto out;
    }
    cli_put_safe(stdout, res.id, strlen(res.id));
    putchar('\n');
    if (res.unique_left_ms > 0) {
        char left[32];
        dq_dur_format(left, sizeof left, res.unique_left_ms);
        fprintf(stderr, "%s: task ", g->prog);
        cli_put_safe(stderr, res.id, strlen(res.id));
        fprintf(stderr,
                " is a duplicate of a task done within its unique-for window (%s left); "
                "not added again\n",
                left);
    } else if (res.duplicate) {
        static const char *const where[] = {"?", "scheduled", "in flight", "failed"};
        fprintf(stderr, "%s: task ", g->prog);
        cli_put_safe(stderr, res.id, strlen(res.id));
        fprintf(stderr, " already exists (%s); not added again\n", where[res.where]);
    } else if (res.replaced) {
        fprintf(stderr, "%s: task ", g->prog);
        cli_put_safe(stderr, res.id, strlen(res.id));
        fprintf(stderr, " was scheduled: replaced its payload and due time\n");
    }
out:
    dq_buf_free(&payload);
    free(raw);
    return rc;
}

static const struct cli_opt opts[] = {
    {"delay", 0, "DUR", CLI_DUR,
     .help = "run after DUR: 250ms, 30s, 5m, 2h, 7d, 1h30m (default 0)"},
    {"at", 0, "TIME", CLI_STR, .help = "run at TIME: epoch ms or RFC 3339; a past time means now"},
    {"id", 0, "ID", CLI_STR,
     .help = "caller-chosen id (1.." CLI_ID_MAX_TEXT " bytes); a duplicate is not added"},
    {"max-attempts", 0, "N", CLI_UINT, 0, 1000000,
     .help = "attempts before the task fails for good (0 = unlimited; default: the queue's, 25)"},
    {"deadline", 0, "DUR", CLI_DUR,
     .help = "if not started within DUR after its due time, the task fails as \"expired\" "
             "instead of running"},
    {"time-limit", 0, "DUR", CLI_DUR, 1, DQ_TIME_LIMIT_MAX,
     .help = "a run still going after DUR (up to 7d) is stopped, retried"},
    {"unique-for", 0, "DUR", CLI_DUR, 1, DQ_UNIQUE_FOR_MAX,
     .help = "with --id: once done, the id is refused for DUR (up to 7d)"},
    {"replace", 0, NULL, CLI_FLAG,
     .help = "with --id: a scheduled task gets this payload and time"},
    {"key", 0, "KEY", CLI_STR,
     .help = "the task's key (a tenant): key_concurrency limits each key"},
    {"json", 0, "TEXT", CLI_STR, .help = "the payload as JSON, converted to msgpack"},
    {"file", 0, "PATH", CLI_STR,
     .help = "the payload: the bytes of PATH, up to the queue's max_payload (- instead: "
             "stdin)"},
    {NULL},
};

const struct cli_cmd cmd_enqueue = {
    .name = "enqueue",
    .summary = "schedule a task",
    .usage = "delayq enqueue [-q QUEUE] [--delay DUR | --at TIME] [--id ID]\n"
             "                      [--max-attempts N] [--deadline DUR] [--time-limit DUR]\n"
             "                      [--unique-for DUR] [--replace] [--key KEY]\n"
             "                      (--json TEXT | --file PATH | -)",
    .about = "Schedules one task and prints its id. --json payloads are stored as msgpack;\n"
             "--file and - (stdin) bytes are stored exactly as they are.",
    .opts = opts,
    .max_pos = -1,
    .run = run,
};
