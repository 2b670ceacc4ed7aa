/* SPDX-License-Identifier: MIT */
/*
 * cmd_ops.c: delayq requeue and delayq drop, the operator actions. Both go through
 * the same scripts as the TUI; each call is all or nothing and is written to the
 * queue's audit log by the script itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "fmt/json.h"
#include "fmt/taskfmt.h"
#include "lib/clock.h"
#include "lib/dur.h"

static const char requeue_help[] =
    "usage: delayq requeue [-q QUEUE] [--delay DUR] [--spread DUR]\n"
    "                      (--all | --group SIG | --match TEXT | [--] ID...)\n\n"
    "       delayq requeue [-q QUEUE] [--delay DUR] (--json NEW | --file PATH) [--] ID\n\n"
    "Moves failed tasks back to scheduled with their attempts reset and deadline\n"
    "cleared, and prints how many moved. With ids it is all or nothing: an id that is\n"
    "not in the failed set (someone requeued or dropped it first) is exit 1, names the\n"
    "id, and nothing moves. The attempt history of each task is kept.\n\n"
    "  --all          every task that failed before now, in steps of " CLI_STEP_MAX_TEXT "\n"
    "  --group SIG    every task of one error group that failed before now: the group id\n"
    "                 or the signature 'delayq errors' shows; one audit entry\n"
    "  --match TEXT   every task that failed before now whose id, error, stack trace or\n"
    "                 payload bytes contain TEXT (1..200 bytes; smart case: any case\n"
    "                 unless TEXT has a capital letter)\n"
    "  --delay DUR    due DUR from now (default 0)\n"
    "  --spread DUR   with --all, --group, --match: spread due times evenly over DUR\n"
    "                 after the delay\n"
    "  --json NEW     fix and requeue one task: its payload becomes the JSON text NEW\n"
    "                 (stored as msgpack), in one call with the requeue; prints what\n"
    "                 changed. Refused (exit 1) when the task failed again or left the\n"
    "                 failed set after it was read, or when its payload is bytes JSON\n"
    "                 cannot show faithfully; invalid JSON is exit 2. Nothing changes then\n"
    "  --file PATH    the same with the JSON text read from PATH (- for stdin), after\n"
    "                 the task was read\n\n";

static const char drop_help[] =
    "usage: delayq drop [-q QUEUE] (--all-failed | --group SIG | --match TEXT | [--] ID...)\n\n"
    "Deletes failed or scheduled tasks for good, and prints how many. All or nothing:\n"
    "an unknown id is exit 1, names the id, and nothing is dropped. A task in flight\n"
    "cannot be dropped while it runs.\n\n"
    "  --all-failed   every task that failed before now, in steps of " CLI_STEP_MAX_TEXT "\n"
    "  --group SIG    every task of one error group that failed before now (the group\n"
    "                 id or the signature 'delayq errors' shows); one audit entry\n"
    "  --match TEXT   every task that failed before now whose id, error, stack trace or\n"
    "                 payload bytes contain TEXT (1..200 bytes; smart case: any case\n"
    "                 unless TEXT has a capital letter)\n\n";

#define MAX_IDS DQ_CALL_MAX /* one requeue or drop call: all or nothing */

struct ops_args {
    const char *ids[MAX_IDS];
    size_t n;
    bool all;
    dq_filter filter; /* --group / --match */
    int64_t delay_ms, spread_ms;
    const char *json, *file; /* fix and requeue: the new payload */
};

/* --group / --match: @m is cli_opt()'s result. Returns 0, or DQ_EXIT_USAGE after the error. */
static int
set_filter(const struct cli *g, struct ops_args *o, dq_filter_kind kind, int m, const char *val)
{
    const char *name = kind == DQ_FILTER_GROUP ? "--group" : "--match";
    dq_err err = {0};

    if (m < 0)
        return cli_usage_error(g, "%s needs a value", name);
    if (o->filter.kind != DQ_FILTER_NONE)
        return cli_usage_error(g, "give one of --group and --match");
    o->filter.kind = kind;
    o->filter.value = val;
    if (dq_filter_check(&o->filter, &err) != DQ_OK)
        return cli_usage_error(g, "%s", err.msg);
    return 0;
}

static int
parse(struct cli *g, int argc, char **argv, bool requeue, struct ops_args *o)
{
    const char *val;
    dq_err err = {0};
    int m;

    memset(o, 0, sizeof *o);
    bool ids_only = false;
    for (int i = 0; i < argc; i++) {
        if (!ids_only && strcmp(argv[i], "--") == 0) {
            ids_only = true; /* what follows are ids, even those starting with '-' */
            continue;
        }
        if (ids_only) {
            if (o->n == MAX_IDS)
                return cli_usage_error(g, "at most %d ids per call", MAX_IDS);
            o->ids[o->n++] = argv[i];
            continue;
        }
        if ((m = cli_global_opt(g, argc, argv, &i)) != 0) {
            if (m < 0)
                return DQ_EXIT_USAGE;
            i--;
            continue;
        }
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("%s%s", requeue ? requeue_help : drop_help, cli_global_help);
            return -1;
        }
        if (strcmp(argv[i], requeue ? "--all" : "--all-failed") == 0) {
            o->all = true;
        } else if ((m = cli_opt(argc, argv, &i, "--group", NULL, &val)) != 0) {
            if (set_filter(g, o, DQ_FILTER_GROUP, m, val) != 0)
                return DQ_EXIT_USAGE;
        } else if ((m = cli_opt(argc, argv, &i, "--match", NULL, &val)) != 0) {
            if (set_filter(g, o, DQ_FILTER_MATCH, m, val) != 0)
                return DQ_EXIT_USAGE;
        } else if (requeue && (m = cli_opt(argc, argv, &i, "--delay", NULL, &val)) != 0) {
            if (m < 0 || dq_dur_parse(val, "--delay", &o->delay_ms, &err) != DQ_OK)
                return m < 0 ? cli_usage_error(g, "--delay needs a value") : cli_error(g, &err);
        } else if (requeue && (m = cli_opt(argc, argv, &i, "--spread", NULL, &val)) != 0) {
            if (m < 0 || dq_dur_parse(val, "--spread", &o->spread_ms, &err) != DQ_OK)
                return m < 0 ? cli_usage_error(g, "--spread needs a value") : cli_error(g, &err);
        } else if (requeue && (m = cli_opt(argc, argv, &i, "--json", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--json needs a value");
            o->json = val;
        } else if (requeue && (m = cli_opt(argc, argv, &i, "--file", NULL, &val)) != 0) {
            if (m < 0)
                return cli_usage_error(g, "--file needs a value");
            o->file = val;
        } else if (argv[i][0] != '-' || argv[i][1] == '\0') {
            if (o->n == MAX_IDS)
                return cli_usage_error(g, "at most %d ids per call", MAX_IDS);
            o->ids[o->n++] = argv[i];
        } else {
            return cli_usage_error(g, "unexpected argument \"%s\"", argv[i]);
        }
    }
    int ways = (o->all ? 1 : 0) + (o->n > 0 ? 1 : 0) + (o->filter.kind != DQ_FILTER_NONE ? 1 : 0);
    if (ways != 1)
        return cli_usage_error(g, "give ids, %s, --group or --match (one of them)",
                               requeue ? "--all" : "--all-failed");
    if (o->spread_ms > 0 && o->n > 0)
        return cli_usage_error(g, "--spread only applies to --all, --group and --match");
    if (o->json != NULL && o->file != NULL)
        return cli_usage_error(g, "give the new payload once: --json NEW or --file PATH");
    if ((o->json != NULL || o->file != NULL) && (o->all || o->n != 1))
        return cli_usage_error(g, "--json and --file fix one task: give exactly one id");
    if (o->json != NULL) {
        /* invalid JSON is refused before anything is read or changed */
        struct dq_buf mp = DQ_BUF_INIT;
        int rc = dq_json_to_mp(&mp, o->json, strlen(o->json), &err);
        dq_buf_free(&mp);
        if (rc != DQ_OK) {
            fprintf(stderr, "%s: --json: ", g->prog);
            cli_put_safe(stderr, err.msg, strlen(err.msg));
            fprintf(stderr, " (nothing changed)\n");
            return cli_exit_status(rc);
        }
    }
    return cli_connect_queue(g);
}

/* fix and requeue */
/* The new payload's JSON text: --json, else the bytes of --file (read now, after the
 * task: PATH may be a pipe that is filled while the task is looked at). */
static char *
replace_text(struct cli *g, const struct ops_args *o, size_t *len)
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
requeue_replace(struct cli *g, const struct ops_args *o)
{
    struct dq_buf old = DQ_BUF_INIT, mp = DQ_BUF_INIT, change = DQ_BUF_INIT;
    dq_err err = {0};
    dq_task t;
    size_t len = 0;
    char *text = NULL;
    int status;

    if (dq_find(g->client, g->queue, o->ids[0], &t, &err) != DQ_OK)
        return cli_error(g, &err);
    if (t.state != DQ_STATE_FAILED) {
        fprintf(stderr, "%s: task ", g->prog);
        cli_put_safe(stderr, t.id, strlen(t.id));
        fprintf(stderr, " is not failed (it is %s): nothing changed\n",
                t.state == DQ_STATE_INFLIGHT ? "in flight" : "scheduled");
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

/* How long a bulk action waits to read the audit log back after a lost reply: the
 * client reconnects by itself; a server that is down does not come back this soon. */
#define READ_BACK_MS 3000

/* Whether audit entry @e is one of this bulk's steps: written with this client's who,
 * for @action, with the detail the scripts give this bulk ("failed until <until_ms>",
 * the server time of its first step, then '', ';' or a filter). */
static bool
bulk_entry(const struct cli *g, const dq_audit_entry *e, const char *action, const dq_bulk *cur)
{
    char head[64];
    int n = snprintf(head, sizeof head, "failed until %lld", (long long)cur->until_ms);

    return strcmp(e->who, dq_client_who(g->client)) == 0 && strcmp(e->action, action) == 0 &&
           strncmp(e->detail, head, (size_t)n) == 0 &&
           (e->detail[n] == '\0' || e->detail[n] == ';' || e->detail[n] == ' ');
}

/*
 * A bulk step whose reply was lost (a timeout, a dropped connection) may have run, and
 * the replies so far count only the steps that answered. The scripts write the audit
 * log in the same call as the change, so the log says: reads it back and sets *@moved
 * to what this bulk moved in all (@sum: each entry holds its own step's count, as an
 * unfiltered drop writes; else the newest holds the running total) and *@finished.
 * False when the log cannot be read within READ_BACK_MS or cannot tell: the outcome of
 * the last step is then unknown.
 */
static bool
bulk_read_back(struct cli *g, const char *action, const dq_bulk *cur, bool sum, size_t *moved,
               bool *finished)
{
    int64_t deadline = dq_mono_ms() + READ_BACK_MS;
    dq_audit a = {0};
    dq_err err = {0};
    bool ok = false;

    if (cur->until_ms <= 0)
        return false; /* the first step: nothing names this bulk yet */
    while (dq_audit_get(g->client, g->queue, DQ_CALL_MAX, &a, &err) != DQ_OK) {
        if ((err.code != DQ_ECONN && err.code != DQ_ETIMEOUT) || dq_mono_ms() >= deadline)
            return false;
        struct timespec pause = {0, 100 * 1000 * 1000}; /* the client's backoff runs */
        nanosleep(&pause, NULL);
    }
    *moved = 0;
    *finished = false;
    for (size_t i = 0; i < a.n; i++) {
        const dq_audit_entry *e = &a.entries[i];
        unsigned long long n, total;
        if (!bulk_entry(g, e, action, cur))
            continue;
        /* "ok: N dropped", "ok: M moved (N of T so far ...)", "ok: N moved (of T in scope)" */
        if (sscanf(e->result, "ok: %llu moved (%llu of", &n, &total) == 2)
            n = total;
        else if (sscanf(e->result, "ok: %llu", &n) != 1)
            continue;
        *finished = *finished || strstr(e->result, "finished") != NULL;
        if (!sum) {
            *moved = (size_t)n;
            ok = true;
            break; /* newest first: the running total */
        }
        *moved += (size_t)n;
        ok = true;
    }
    /* a sum needs every entry of the bulk: the oldest read must come before its start */
    if (sum && a.n == DQ_CALL_MAX && a.entries[a.n - 1].at_ms >= cur->until_ms)
        ok = false;
    dq_audit_free(&a);
    return ok && *moved >= cur->done_n;
}

/*
 * A bulk step failed with @err after @cur->done_n moved. A refusal (an error reply) is
 * all or nothing, and a command that never reached Redis whole did not run: nothing of
 * that step applied. A lost reply (cli_outcome_unknown) is read back from the audit
 * log; what it cannot tell is said to be unknown, never guessed low.
 */
static int
bulk_stopped(struct cli *g, const char *action, const char *verb, const dq_bulk *cur, bool sum,
             const dq_err *err)
{
    size_t moved;
    bool finished;

    if (!cli_outcome_unknown(g, err)) {
        /* refused, or never sent whole: nothing of that step applied */
        fprintf(stderr, "%s: stopped after %s %zu\n", g->prog, verb, cur->done_n);
        return cli_error(g, err);
    }
    fprintf(stderr, "%s: ", g->prog);
    cli_put_safe(stderr, err->msg, strlen(err->msg));
    fputc('\n', stderr);
    if (!bulk_read_back(g, action, cur, sum, &moved, &finished)) {
        fprintf(stderr,
                "%s: stopped after %s at least %zu; the last step's outcome is unknown: see "
                "delayq audit -q ",
                g->prog, verb, cur->done_n);
        cli_put_safe(stderr, g->queue, strlen(g->queue));
        fputc('\n', stderr);
        return cli_exit_status(err->code);
    }
    if (finished) {
        fprintf(stderr, "%s: the reply to the last step was lost; the audit log shows it ran\n",
                g->prog);
        printf("%s %zu\n", strcmp(verb, "dropping") == 0 ? "dropped" : "requeued", moved);
        return DQ_EXIT_OK;
    }
    if (moved > cur->done_n)
        fprintf(stderr,
                "%s: stopped after %s %zu (the audit log has the last step, whose reply was "
                "lost: %zu of them)\n",
                g->prog, verb, moved, moved - cur->done_n);
    else
        fprintf(stderr, "%s: stopped after %s %zu (the audit log shows nothing more moved)\n",
                g->prog, verb, moved);
    return cli_exit_status(err->code);
}

int
cmd_requeue(struct cli *g, int argc, char **argv)
{
    struct ops_args o;
    dq_err err = {0};
    int rc = parse(g, argc, argv, true, &o);

    if (rc != 0)
        return rc < 0 ? DQ_EXIT_OK : rc;
    if (o.json != NULL || o.file != NULL)
        return requeue_replace(g, &o);
    if (o.n > 0) {
        size_t moved;
        if (dq_requeue(g->client, g->queue, o.ids, o.n, o.delay_ms, &moved, &err) != DQ_OK)
            return cli_action_error(g, &err, NULL);
        printf("requeued %zu\n", moved);
        return DQ_EXIT_OK;
    }
    dq_bulk cur = {0};
    while (!cur.done) {
        if ((o.filter.kind != DQ_FILTER_NONE
                 ? dq_requeue_filter_step(g->client, g->queue, &o.filter, o.delay_ms, o.spread_ms,
                                          0, &cur, &err)
                 : dq_requeue_all_step(g->client, g->queue, o.delay_ms, o.spread_ms, &cur, &err)) !=
            DQ_OK) {
            return bulk_stopped(g, "requeue-all", "requeueing", &cur, false, &err);
        }
    }
    printf("requeued %zu\n", cur.done_n);
    if (cur.skipped > 0)
        printf("left %zu undecodable failed tasks in place (they can only be dropped)\n",
               cur.skipped);
    return DQ_EXIT_OK;
}

int
cmd_drop(struct cli *g, int argc, char **argv)
{
    struct ops_args o;
    dq_err err = {0};
    int rc = parse(g, argc, argv, false, &o);

    if (rc != 0)
        return rc < 0 ? DQ_EXIT_OK : rc;
    if (o.n > 0) {
        size_t dropped;
        if (dq_drop(g->client, g->queue, o.ids, o.n, &dropped, &err) != DQ_OK)
            return cli_action_error(g, &err, NULL);
        printf("dropped %zu\n", dropped);
        return DQ_EXIT_OK;
    }
    dq_bulk cur = {0};
    while (!cur.done) {
        if (dq_drop_filter_step(g->client, g->queue, &o.filter, 0, &cur, &err) != DQ_OK) {
            return bulk_stopped(g, "drop-all", "dropping", &cur, o.filter.kind == DQ_FILTER_NONE,
                                &err);
        }
    }
    printf("dropped %zu\n", cur.done_n);
    return DQ_EXIT_OK;
}
