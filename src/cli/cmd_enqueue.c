/* SPDX-License-Identifier: MIT */
/* cmd_enqueue.c: delayq enqueue: schedule one task and print its id. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt/json.h"
#include "lib/dur.h"

static const char help[] =
    "usage: delayq enqueue [-q QUEUE] [--delay DUR | --at TIME] [--id ID]\n"
    "                      [--max-attempts N] [--deadline DUR] (--json TEXT | --file PATH | -)\n\n"
    "Schedules one task and prints its id. --json payloads are stored as msgpack;\n"
    "--file and - (stdin) bytes are stored exactly as they are.\n\n"
    "  --delay DUR        run after DUR: 250ms, 30s, 5m, 2h, 7d, 1h30m (default 0)\n"
    "  --at TIME          run at TIME: epoch milliseconds or RFC 3339\n"
    "                     (2026-12-01T09:00:00Z); a past time means now\n"
    "  --id ID            caller-chosen id (1.." CLI_ID_MAX_TEXT
    " bytes); a task with this id that\n"
    "                     already exists is not added again (reported on stderr, exit 0)\n"
    "  --max-attempts N   attempts before the task fails for good (0 = unlimited;\n"
    "                     default: the queue's, 25)\n"
    "  --deadline DUR     if not started within DUR after its due time, the task\n"
    "                     fails as \"expired\" instead of running\n"
    "  --json TEXT        the payload as JSON, converted to msgpack\n"
    "  --file PATH        the payload: the bytes of PATH, read up to the queue's\n"
    "                     max_payload (+1 byte: over it is exit 2)\n"
    "  -                  the payload: the bytes on stdin, the same way\n\n";

int
cmd_enqueue(struct cli *g, int argc, char **argv)
{
    dq_enqueue_opts o = {0};
    const char *json = NULL, *file = NULL, *val;
    bool use_stdin = false, have_delay = false;
    struct dq_buf payload = DQ_BUF_INIT;
    char *raw = NULL;
    size_t raw_len = 0;
    dq_enqueued res;
    dq_err err = {0};
    int rc = DQ_EXIT_OK, m;

    for (int i = 0; i < argc; i++) {
        if ((m = cli_common_opt(g, argc, argv, &i, help)) != CLI_NEXT) {
            if (m == CLI_CONSUMED)
                continue;
            return m == CLI_HELP ? DQ_EXIT_OK : DQ_EXIT_USAGE;
        }
        if (strcmp(argv[i], "-") == 0) {
            use_stdin = true;
        } else if ((m = cli_opt(argc, argv, &i, "--delay", NULL, &val)) != 0) {
            if (m < 0 || dq_dur_parse(val, "--delay", &o.delay_ms, &err) != DQ_OK)
                return m < 0 ? cli_usage_error(g, "--delay needs a value") : cli_error(g, &err);
            have_delay = true;
        } else if ((m = cli_opt(argc, argv, &i, "--at", NULL, &val)) != 0) {
            if (m < 0 || dq_time_parse(val, "--at", &o.at_ms, &err) != DQ_OK)
                return m < 0 ? cli_usage_error(g, "--at needs a value") : cli_error(g, &err);
            if (o.at_ms == 0)
                o.at_ms = 1; /* the epoch itself: "long ago", due now */
        } else if ((m = cli_opt(argc, argv, &i, "--id", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--id needs a value");
            o.id = val;
        } else if ((m = cli_opt(argc, argv, &i, "--max-attempts", NULL, &val)) != 0) {
            long long n;
            if (m < 0)
                return cli_usage_error(g, "--max-attempts needs a value");
            if (cli_parse_uint(g, "--max-attempts", val, 0, 1000000, &n) != 0)
                return DQ_EXIT_USAGE;
            o.max_attempts = n == 0 ? -1 : n;
        } else if ((m = cli_opt(argc, argv, &i, "--deadline", NULL, &val)) != 0) {
            if (m < 0 || dq_dur_parse(val, "--deadline", &o.deadline_ms, &err) != DQ_OK)
                return m < 0 ? cli_usage_error(g, "--deadline needs a value") : cli_error(g, &err);
            if (o.deadline_ms == 0)
                return cli_usage_error(g, "--deadline: must be more than 0");
        } else if ((m = cli_opt(argc, argv, &i, "--json", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--json needs a value");
            json = val;
        } else if ((m = cli_opt(argc, argv, &i, "--file", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--file needs a value");
            file = val;
        } else {
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
        }
    }
    if ((json != NULL) + (file != NULL) + use_stdin != 1)
        return cli_usage_error(g, "give the payload exactly once: --json TEXT, --file PATH or -");
    if (have_delay && o.at_ms > 0)
        return cli_usage_error(g, "--delay and --at cannot be used together");
    if (o.id != NULL && (o.id[0] == '\0' || strlen(o.id) > DQ_ID_MAX))
        return cli_usage_error(g, "--id: must be 1..%d bytes (got %zu)", DQ_ID_MAX, strlen(o.id));

    /* A file or stdin is read only up to the queue's max_payload (+1 byte, to tell it is
     * over): connect and read the limit first, so a huge input costs no memory. */
    if (json != NULL) {
        if (dq_json_to_mp(&payload, json, strlen(json), &err) != DQ_OK) {
            rc = cli_error(g, &err);
            goto out;
        }
        if ((rc = cli_connect(g)) != DQ_EXIT_OK)
            goto out;
    } else {
        char limit_why[160];
        size_t limit;
        FILE *f = use_stdin ? stdin : fopen(file, "rb");
        if (f == NULL) {
            fprintf(stderr, "%s: --file: cannot open \"", g->prog);
            cli_put_safe(stderr, file, strlen(file));
            fprintf(stderr, "\": %s\n", strerror(errno));
            rc = DQ_EXIT_USAGE;
            goto out;
        }
        if ((rc = cli_payload_limit(g, &limit, limit_why, sizeof limit_why)) != DQ_EXIT_OK) {
            if (f != stdin)
                fclose(f);
            goto out;
        }
        raw = cli_read_all(f, limit, &raw_len);
        if (f != stdin)
            fclose(f);
        if (raw == NULL) {
            const char *from = use_stdin ? "stdin" : file;
            fprintf(stderr, "%s: cannot read the payload from ", g->prog);
            cli_put_safe(stderr, from, strlen(from));
            fputc('\n', stderr);
            rc = DQ_EXIT_USAGE;
            goto out;
        }
        if (raw_len > limit) {
            fprintf(stderr, "%s: payload: over ", g->prog);
            cli_put_safe(stderr, limit_why, strlen(limit_why));
            fputc('\n', stderr);
            rc = DQ_EXIT_USAGE;
            goto out;
        }
    }
    if (dq_enqueue(g->client, g->queue, &o, json ? payload.data : raw, json ? payload.len : raw_len,
                   &res, &err) != DQ_OK) {
        /* enqueues are not in the audit log: an id tells, and makes a retry safe */
        rc = cli_action_error(g, &err,
                              o.id != NULL ? "delayq show tells whether it was added, and "
                                             "enqueueing it again with the same --id is safe"
                                           : "the task may have been added; give --id to make "
                                             "a retry safe");
        goto out;
    }
    cli_put_safe(stdout, res.id, strlen(res.id));
    putchar('\n');
    if (res.duplicate) {
        static const char *const where[] = {"?", "scheduled", "in flight", "failed"};
        fprintf(stderr, "%s: task ", g->prog);
        cli_put_safe(stderr, res.id, strlen(res.id));
        fprintf(stderr, " already exists (%s); not added again\n", where[res.where]);
    }
out:
    dq_buf_free(&payload);
    free(raw);
    return rc;
}
