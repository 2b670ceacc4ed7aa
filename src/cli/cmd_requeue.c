/* SPDX-License-Identifier: MIT */
/*
 * cmd_requeue.c: delayq requeue: failed tasks back to scheduled, by id, all of them, an
 * error group, a text match or a task key, and fix and requeue: one task with a new payload.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fmt/json.h"
#include "fmt/taskfmt.h"
#include "ops.h"
#include "opts.h"

struct requeue {
    struct ops_sel sel;
    int64_t delay_ms, spread_ms;
    const char *json, *file; /* fix and requeue: the new payload */
};

/* fix and requeue */
/* The new payload's JSON text: --json, else the bytes of --file (read now, after the
 * task: PATH may be a pipe that is filled while the task is looked at). */
static char *
replace_text(struct cli *g, const struct requeue *o, size_t *len)
{
    if (o->json != NULL) {
        *len = strlen(o->json);
        return strdup(o->json);
    }
    bool in = strcmp(o->file, "-") == 0;
    FILE *f = in ? stdin : fopen(o->file, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: --file: cannot open \"", g->prog);
        cli_put_safe(stderr, o->file, strlen(o->file));
        fprintf(stderr, "\": %s (nothing changed)\n", strerror(errno));
        return NULL;
    }
    /* JSON text is longer than the msgpack it makes (an escaped byte, \u00XX, is 6 bytes
     * of text for 1; indentation): up to 8 times max_payload is read, the script checks
     * the msgpack against max_payload itself */
    char why[160];
    size_t limit;
    if (cli_payload_limit(g, &limit, why, sizeof why) != DQ_EXIT_OK) {
        if (!in)
            fclose(f);
        return NULL;
    }
    limit = limit < CLI_READ_MAX / 8 ? limit * 8 : CLI_READ_MAX;
    char *text = cli_read_all(f, limit, len);
    if (!in)
        fclose(f);
    if (text == NULL) {
        fprintf(stderr, "%s: --file: cannot read it (nothing changed)\n", g->prog);
    } else if (*len > limit) {
        fprintf(stderr,
                "%s: --file: over %zu bytes of JSON text, the most read for a payload "
                "within ",
                g->prog, limit);
        cli_put_safe(stderr, why, strlen(why));
        fprintf(stderr, " (nothing changed)\n");
        free(text);
        text = NULL;
    }
    return text;
}

/* requeue ID --json NEW | --file PATH: the task is read, its payload checked to be
 * editable as JSON, the new one parsed, and one script replaces it and requeues the task
 * if the failure is still the one read. */
static int
requeue_replace(struct cli *g, const struct requeue *o)
{
    struct dq_buf old = DQ_BUF_INIT, mp = DQ_BUF_INIT, change = DQ_BUF_INIT;
    dq_err err = {0};
    dq_task t;
    size_t len = 0;
    char *text = NULL;
    int status;

    if (dq_find(g->client, g->queue, o->sel.ids[0], &t, &err) != DQ_OK)
        return cli_error(g, &err);
    if (t.state != DQ_STATE_FAILED) {
        fprintf(stderr, "%s: task ", g->prog);
        cli_put_safe(stderr, t.id, strlen(t.id));
        fprintf(stderr, " is not failed (it is %s): nothing changed\n",
                t.state == DQ_STATE_INFLIGHT ? "in flight"
                : t.state == DQ_STATE_PARKED ? "parked: due, held back by its key's limit"
                                             : "scheduled");
        status = DQ_EXIT_FAILED;
        goto out;
    }
    /* a payload JSON cannot show faithfully is not replaced through JSON */
    if (dq_fmt_payload_edit(&old, &t, &err) != DQ_OK) {
        fprintf(stderr, "%s: ", g->prog);
        cli_put_safe(stderr, err.msg, strlen(err.msg));
        fprintf(stderr, "; nothing changed\n");
        status = DQ_EXIT_FAILED;
        goto out;
    }
    if ((text = replace_text(g, o, &len)) == NULL) {
        status = DQ_EXIT_USAGE;
        goto out;
    }
    if (dq_json_to_mp(&mp, text, len, &err) != DQ_OK) {
        fprintf(stderr, "%s: %s: ", g->prog, o->json ? "--json" : "--file");
        cli_put_safe(stderr, err.msg, strlen(err.msg));
        fprintf(stderr, " (nothing changed)\n");
        status = cli_exit_status(err.code);
        goto out;
    }
    if (mp.len == t.payload_len && memcmp(mp.data, t.payload, mp.len) == 0) {
        printf("payload unchanged: nothing done (delayq requeue ID requeues it as it is)\n");
        status = DQ_EXIT_OK;
        goto out;
    }
    if (dq_requeue_replace(g->client, g->queue, &t, mp.data, mp.len, o->delay_ms, &err) != DQ_OK) {
        status = cli_action_error(g, &err, NULL);
        goto out;
    }
    dq_fmt_payload_change(&change, t.payload, t.payload_len, mp.data, mp.len, 20);
    if (!change.failed)
        fwrite(change.data, 1, change.len, stdout);
    printf("requeued 1 with the new payload\n");
    status = DQ_EXIT_OK;
out:
    free(text);
    dq_buf_free(&old);
    dq_buf_free(&mp);
    dq_buf_free(&change);
    dq_task_clear(&t);
    return status;
}

static int
run(struct cli *g, const struct cli_args *args)
{
    struct requeue o = {.delay_ms = cli_num(args, "delay", 0),
                        .spread_ms = cli_num(args, "spread", 0),
                        .json = cli_str(args, "json", NULL),
                        .file = cli_str(args, "file", NULL)};
    dq_err err = {0};
    int rc;

    if ((rc = ops_select(g, args, "all", &o.sel)) != DQ_EXIT_OK)
        return rc;
    if (o.spread_ms > 0 && o.sel.n > 0)
        return cli_usage_error(g, "--spread only applies to --all, --group, --match and --key");
    if (o.json != NULL && o.file != NULL)
        return cli_usage_error(g, "give the new payload once: --json NEW or --file PATH");
    if ((o.json != NULL || o.file != NULL) && (o.sel.all || o.sel.n != 1))
        return cli_usage_error(g, "--json and --file fix one task: give exactly one id");
    if (o.json != NULL) {
        /* invalid JSON is refused before anything is read or changed */
        struct dq_buf mp = DQ_BUF_INIT;
        rc = dq_json_to_mp(&mp, o.json, strlen(o.json), &err);
        dq_buf_free(&mp);
        if (rc != DQ_OK) {
            fprintf(stderr, "%s: --json: ", g->prog);
            cli_put_safe(stderr, err.msg, strlen(err.msg));
            fprintf(stderr, " (nothing changed)\n");
            return cli_exit_status(rc);
        }
    }
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (o.json != NULL || o.file != NULL)
        return requeue_replace(g, &o);
    if (o.sel.n > 0) {
        size_t moved;
        if (dq_requeue(g->client, g->queue, o.sel.ids, o.sel.n, o.delay_ms, &moved, &err) !=
            DQ_OK) {
            if (err.code == DQ_ENOTFOUND && ops_say_parked(g, o.sel.ids, o.sel.n, "failed"))
                return DQ_EXIT_FAILED;
            return cli_action_error(g, &err, NULL);
        }
        printf("requeued %zu\n", moved);
        return DQ_EXIT_OK;
    }
    dq_bulk cur = {0};
    while (!cur.done) {
        if ((o.sel.filter.kind != DQ_FILTER_NONE
                 ? dq_requeue_filter_step(g->client, g->queue, &o.sel.filter, o.delay_ms,
                                          o.spread_ms, 0, &cur, &err)
                 : dq_requeue_all_step(g->client, g->queue, o.delay_ms, o.spread_ms, &cur, &err)) !=
            DQ_OK) {
            return ops_bulk_stopped(g, "requeue-all", "requeueing", &cur, false, &err);
        }
    }
    printf("requeued %zu\n", cur.done_n);
    if (cur.skipped > 0)
        printf("left %zu undecodable failed tasks in place (they can only be dropped)\n",
               cur.skipped);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"all", 0, NULL, CLI_FLAG,
     .help = "every task that failed before now, in steps of " CLI_STEP_MAX_TEXT},
    {"group", 0, "SIG", CLI_STR,
     .help = "every task of one error group that failed before now: the group id or the "
             "signature 'delayq errors' shows; one audit entry"},
    {"match", 0, "TEXT", CLI_STR,
     .help = "every task that failed before now whose id, error, stack trace or payload bytes "
             "contain TEXT (1..200 bytes; smart case)"},
    {"key", 0, "KEY", CLI_STR,
     .help = "every task that failed before now whose task key is exactly KEY"},
    {"delay", 0, "DUR", CLI_DUR, .help = "due DUR from now (default 0)"},
    {"spread", 0, "DUR", CLI_DUR,
     .help = "with --all or a filter: due times spread evenly over DUR"},
    {"json", 0, "NEW", CLI_STR,
     .help = "fix and requeue one task: its payload becomes the JSON text NEW, in one call "
             "with the requeue; refused (exit 1) when the task changed since it was read or its "
             "payload is bytes JSON cannot show faithfully"},
    {"file", 0, "PATH", CLI_STR,
     .help = "the same with the JSON text read from PATH (- for stdin)"},
    {NULL},
};

const struct cli_cmd cmd_requeue = {
    .name = "requeue",
    .summary = "move failed tasks back to scheduled",
    .usage = "delayq requeue [-q QUEUE] [--delay DUR] [--spread DUR]\n"
             "                      (--all | --group SIG | --match TEXT | --key KEY\n"
             "                       | [--] ID...)\n"
             "delayq requeue [-q QUEUE] [--delay DUR] (--json NEW | --file PATH) ID",
    .about = "Moves failed tasks back to scheduled with their attempts reset and deadline\n"
             "cleared, and prints how many moved. With ids it is all or nothing: an id that is\n"
             "not in the failed set is exit 1, names the id, and nothing moves.",
    .opts = opts,
    .max_pos = -1,
    .run = run,
};
