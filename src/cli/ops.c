/* SPDX-License-Identifier: MIT */
/*
 * ops.c: what delayq requeue and delayq drop share (ops.h): which failed tasks (ids,
 * every one, an error group, a text match, a task key), the report of a bulk action that
 * stopped, and where a parked task is when an action by id finds nothing. Both go through the same
 * scripts as the inspector; each call is all or nothing and is written to the queue's audit log by
 * the script itself.
 */
#include "ops.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "opts.h"

int
ops_select(const struct cli *g, const struct cli_args *a, const char *all, struct ops_sel *o)
{
    dq_err err = {0};

    memset(o, 0, sizeof *o);
    if (a->npos > MAX_IDS)
        return cli_usage_error(g, "at most %d ids per call", MAX_IDS);
    for (int i = 0; i < a->npos; i++)
        o->ids[o->n++] = a->pos[i];
    o->all = cli_has(a, all);
    static const struct {
        const char *opt;
        dq_filter_kind kind;
    } filters[] = {{"group", DQ_FILTER_GROUP}, {"match", DQ_FILTER_MATCH}, {"key", DQ_FILTER_KEY}};
    int nf = 0;
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        nf += cli_count(a, filters[i].opt);
        if (cli_has(a, filters[i].opt)) {
            o->filter.kind = filters[i].kind;
            o->filter.value = cli_str(a, filters[i].opt, NULL);
        }
    }
    if (nf > 1)
        return cli_usage_error(g, "give one of --group, --match and --key");
    if (dq_filter_check(&o->filter, &err) != DQ_OK)
        return cli_usage_error(g, "%s", err.msg);
    int ways = (o->all ? 1 : 0) + (o->n > 0 ? 1 : 0) + (o->filter.kind != DQ_FILTER_NONE ? 1 : 0);
    if (ways != 1)
        return cli_usage_error(g, "give ids, --%s, --group, --match or --key (one of them)", all);
    return DQ_EXIT_OK;
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
int
ops_bulk_stopped(struct cli *g, const char *action, const char *verb, const dq_bulk *cur, bool sum,
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

bool
ops_say_parked(struct cli *g, const char *const *ids, size_t n, const char *what)
{
    for (size_t i = 0; i < n && i < 10; i++) {
        dq_task t;
        dq_err e = {0};
        bool parked;
        if (dq_find(g->client, g->queue, ids[i], &t, &e) != DQ_OK)
            continue;
        parked = t.state == DQ_STATE_PARKED;
        if (parked) {
            fprintf(stderr, "%s: task ", g->prog);
            cli_put_safe(stderr, t.id, t.id_len);
            fprintf(stderr, " is not %s: it is parked, due and held back while its key ", what);
            cli_put_safe(stderr, t.key ? t.key : "?", t.key ? t.key_len : 1);
            fprintf(stderr,
                    " is at its limit of %lld in flight (key_concurrency); it runs when the key "
                    "has room (nothing changed)\n",
                    (long long)t.key_limit);
        }
        dq_task_clear(&t);
        if (parked)
            return true;
    }
    return false;
}
