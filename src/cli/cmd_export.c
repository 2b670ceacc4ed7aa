/* SPDX-License-Identifier: MIT */
/*
 * cmd_export.c: delayq export: the tasks of one view as JSON lines (one record per task,
 * written by dq_fmt_task_export), read from the server in bounded pages, for `delayq
 * import` on another queue or server, or for study.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/taskfmt.h"
#include "lib/pages.h"
#include "lib/view.h"
#include "lib/task.h"

#define NEEDLE_MAX_TEXT CLI_STR(DQ_NEEDLE_MAX)

/* Tasks per page: a page of 1000 failed tasks (about 450 KB) kept Redis busy for 9 to 13
 * ms here (load 7 on 2 cores); a quarter of that keeps a production server responsive
 * while an export runs. */
#define PAGE      250
#define PAGE_TEXT "250"

/* What narrows an export; each filter is one way of reading the view in steps. */
struct filter {
    const char *match; /* --match: the server's search (lua/search.lua) */
    const char *group; /* --group: the error group's own index (PROTOCOL.md 4.6) */
};

/* Where an export is between steps. */
struct cursor {
    size_t part, nparts; /* the partition being read, of how many (PROTOCOL.md 14.7) */
    size_t offset;       /* no filter: the next page's offset in it */
    dq_search search;    /* --match */
    bool done;
    /* The task keys of the step before: tasks that enter the view ahead of the reading
     * position push the ones already read into the next step, which then starts with
     * them again; they are left out, so a task is written twice only when more than a
     * step's worth entered ahead between two steps. */
    char (*seen)[DQ_TASK_KEY_MAX + 1];
    size_t nseen, cap;
};

/* The task key of @t into @tk, or false when it has none of its own (a scheduled
 * member that is not an envelope is listed as "undecodable", whichever it is). */
static bool
key_of(const dq_task *t, char tk[DQ_TASK_KEY_MAX + 1])
{
    if (t->undecodable && t->state != DQ_STATE_FAILED)
        return false;
    dq_task_key(t, tk, DQ_TASK_KEY_MAX + 1);
    return true;
}

/* Whether task key @tk was in the step before. */
static bool
seen_before(const struct cursor *cur, const char *tk)
{
    for (size_t i = 0; i < cur->nseen; i++) {
        if (strcmp(cur->seen[i], tk) == 0)
            return true;
    }
    return false;
}

/* Remembers the task keys of @p as the step before the next one. */
static bool
remember(struct cursor *cur, const dq_page *p)
{
    if (p->n == 0)
        return true; /* a search step without a match: the step before still counts */
    if (p->n > cur->cap) {
        void *s = realloc(cur->seen, p->n * sizeof *cur->seen);
        if (s == NULL)
            return false;
        cur->seen = s;
        cur->cap = p->n;
    }
    cur->nseen = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (key_of(&p->tasks[i], cur->seen[cur->nseen]))
            cur->nseen++;
    }
    return true;
}

/* One bounded step: the next tasks of the view that pass @f, into @out (emptied first).
 * A partitioned queue is read partition after partition, each as one queue is: an export
 * needs no order across them, and a merged page would read every partition for each. */
static int
step(struct cli *g, dq_view view, const struct filter *f, struct cursor *cur, dq_page *out,
     dq_err *err)
{
    char name[DQ_QUEUE_NAME_MAX + 32];
    bool part_done;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = dq_partition_name(g->client, g->queue, cur->part, name, sizeof name, err)) != DQ_OK)
        return rc;
    if (f->match != NULL) {
        rc = dq_search_step(g->client, name, view, f->match, DQ_CALL_MAX, &cur->search, out, err);
        part_done = rc != DQ_OK || cur->search.done;
    } else {
        rc = dq_pages_part_get(g->client, g->queue, cur->part, view, f->group, cur->offset, PAGE,
                               out, err);
        if (rc != DQ_OK)
            return rc;
        cur->offset += out->n;
        part_done = out->n < PAGE || (int64_t)cur->offset >= out->total;
    }
    cur->done = part_done && (rc != DQ_OK || cur->part + 1 >= cur->nparts);
    if (part_done && !cur->done) {
        cur->part++;
        cur->offset = 0;
        memset(&cur->search, 0, sizeof cur->search);
    }
    return rc;
}

/*
 * The pages carry no attempt history (PROTOCOL.md 4.5); find does. It is looked up only
 * where find costs O(1): failed and in-flight tasks and scheduled ones with a chosen
 * id. A scheduled task with a generated id has no index, so its history (a task that
 * was retried) is not exported: find would walk the scheduled set for each one.
 */
static void
attach_history(struct cli *g, dq_task *t)
{
    dq_task found;
    dq_err err = {0};

    if (t->undecodable || t->nhistory > 0 || (t->attempt == 0 && t->last_error == NULL) ||
        (t->state == DQ_STATE_SCHEDULED && !t->custom_id))
        return;
    memset(&found, 0, sizeof found);
    if (dq_find(g->client, g->queue, t->id, &found, &err) != DQ_OK)
        return; /* gone meanwhile: the record is written as the page read it */
    /* the same task as the page read, not a later attempt or failure */
    if (found.state == t->state && found.attempt == t->attempt && found.failed_ms == t->failed_ms &&
        found.nhistory > 0) {
        t->history = found.history;
        t->nhistory = found.nhistory;
        found.history = NULL;
        found.nhistory = 0;
    }
    dq_task_clear(&found);
}

static int
run(struct cli *g, const struct cli_args *args)
{
    struct filter f = {.match = cli_str(args, "match", NULL),
                       .group = cli_str(args, "group", NULL)};
    struct cursor cur = {0};
    long long limit = cli_num(args, "limit", -1), written = 0, repeats = 0;
    dq_view view;
    int rc = DQ_EXIT_OK;
    dq_err err = {0};

    if (f.match != NULL && (f.match[0] == '\0' || strlen(f.match) > DQ_NEEDLE_MAX))
        return cli_usage_error(g, "--match: %zu bytes; the text must be 1..%d bytes",
                               strlen(f.match), DQ_NEEDLE_MAX);
    if (args->npos == 0)
        return cli_usage_error(g, "which view? failed, due, future, inflight or parked");
    if (!dq_view_parse(args->pos[0], &view))
        return cli_usage_error(g, "view \"%s\" is not failed, due, future, inflight or parked",
                               args->pos[0]);
    if (view == DQ_VIEW_DONE) /* done records keep no envelope: nothing to import back */
        return cli_usage_error(g, "view \"done\" is not exported (list it with ls done --json)");
    if (f.group != NULL && (view != DQ_VIEW_FAILED || f.match != NULL))
        return cli_usage_error(g, "--group applies to the failed view only, without --match");
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    size_t routed;
    if (dq_partitions_get(g->client, g->queue, &routed, &cur.nparts, &err) != DQ_OK)
        return cli_error(g, &err);

    /* due carries the parked tasks after it (PROTOCOL.md 4.10): they are due, held back by
     * their key's limit, and import puts them back in sched, where a claim parks them again
     * while the key is full; without them an export and import would lose them */
    dq_view phases[2] = {view, DQ_VIEW_PARKED};
    size_t nphases = view == DQ_VIEW_DUE && f.match == NULL ? 2 : 1, phase = 0;
    long long parked = 0;
    struct dq_buf b = DQ_BUF_INIT;
    while (rc == DQ_EXIT_OK && (limit < 0 || written < limit)) {
        dq_page p;
        if (cur.done) {
            if (++phase >= nphases)
                break;
            cur.offset = cur.part = 0;
            cur.done = false;
        }
        if (step(g, phases[phase], &f, &cur, &p, &err) != DQ_OK) {
            rc = cli_error(g, &err);
            break;
        }
        for (size_t i = 0; i < p.n && (limit < 0 || written < limit); i++) {
            char tk[DQ_TASK_KEY_MAX + 1];
            if (key_of(&p.tasks[i], tk) && seen_before(&cur, tk)) {
                repeats++;
                continue;
            }
            attach_history(g, &p.tasks[i]);
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
            parked += phases[phase] == DQ_VIEW_PARKED;
        }
        if (rc == DQ_EXIT_OK && !remember(&cur, &p)) {
            fprintf(stderr, "%s: out of memory\n", g->prog);
            rc = DQ_EXIT_FAILED;
        }
        dq_page_free(&p);
        if (rc != DQ_EXIT_OK)
            break;
    }
    dq_buf_free(&b);
    free(cur.seen);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write to stdout\n", g->prog);
        rc = rc == DQ_EXIT_OK ? DQ_EXIT_FAILED : rc;
    }
    fprintf(stderr, "%s: exported %lld tasks (%s of queue ", g->prog, written, dq_view_name(view));
    cli_put_safe(stderr, g->queue, strlen(g->queue));
    if (nphases == 2)
        fprintf(stderr, ", %lld of them parked", parked);
    if (repeats > 0)
        fprintf(stderr, "; %lld read twice as the view moved, written once", repeats);
    fprintf(stderr, ")\n");
    return rc;
}

static const struct cli_opt opts[] = {
    {"match", 0, "TEXT", CLI_STR,
     .help = "only tasks whose id, payload (failed: also error and stack trace; in flight: also "
             "the worker) contain TEXT (1.." NEEDLE_MAX_TEXT " bytes, plain, smart case: any case "
             "unless TEXT has a capital letter): the server's search, " CLI_STEP_MAX_TEXT
             " tasks a step"},
    {"group", 0, "SIG", CLI_STR, .needs = "a group id or signature", .flags = CLI_NONEMPTY,
     .help = "failed only: the tasks of one error group (its id or signature, as delayq errors "
             "shows), read in the group's own index"},
    {"limit", 'n', "N", CLI_UINT, 1, 1LL << 40, .help = "at most N tasks (default: all)"},
    {NULL},
};

const struct cli_cmd cmd_export = {
    .name = "export",
    .summary = "write a view's tasks as JSON lines, every field, payloads lossless",
    .usage = "delayq export {failed|due|future|inflight|parked} [-q QUEUE]\n"
             "                     [--match TEXT] [--limit N] > tasks.jsonl\n"
             "delayq export failed [-q QUEUE] --group SIG [--limit N] > tasks.jsonl",
    .about = "Writes the tasks of a view to stdout, one JSON object per line with every field\n"
             "(docs/PROTOCOL.md 5.23): the payload as JSON when that reads back to the same\n"
             "bytes, else as base64 in \"payload_b64\". `delayq import` reads the file back.\n"
             "due also writes the parked tasks (due, held back by key_concurrency; parked: only\n"
             "them), as scheduled records: imported, they park again while their key is full.\n"
             "Read in pages of " PAGE_TEXT " tasks (partition by partition), each one read-only\n"
             "call: tasks that move between pages while workers run can be missed or (rarely)\n"
             "written twice; pause the queue for a snapshot. Prints \"exported N tasks\" to\n"
             "stderr; exit 1 when stdout cannot be written.",
    .opts = opts,
    .max_pos = 1,
    .run = run,
};
