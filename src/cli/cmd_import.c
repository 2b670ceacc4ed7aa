/* SPDX-License-Identifier: MIT */
/*
 * cmd_import.c: delayq import: `delayq export` records from stdin into a queue, in
 * chunks of up to CHUNK_TASKS (100) tasks, each one call of lua/import.lua (all or
 * nothing). Lines are parsed by fmt/taskrec.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/taskrec.h"
#include "lib/import.h"

/* Longest line read: a record with a payload of 16 MiB in base64 and its error and
 * trace escaped fits. */
#define LINE_MAX_BYTES (24u << 20)
/* Tasks per import call: a call of 1000 failed tasks kept Redis busy for about 70 ms
 * here (load 8 on 2 cores), a call of 100 for a tenth of that, so Redis stays responsive
 * while a big file goes in. */
#define CHUNK_TASKS 100
/* A chunk is sent once its lines reach this many bytes, even with fewer tasks, so one
 * call never carries more than about this much (plus one line). */
#define CHUNK_BYTES (16u << 20)

#define LINE_MAX_TEXT  "25165824"
#define CHUNK_MAX_TEXT "100"

struct chunk {
    struct dq_task_rec recs[CHUNK_TASKS];
    long long line[CHUNK_TASKS];
    size_t n, bytes;
};

struct totals {
    long long imported, scheduled, failed, skipped, inflight, lines_done;
};

static const char *const where_names[] = {"nowhere", "scheduled", "in flight", "failed"};

/* Reads one line of at most LINE_MAX_BYTES into @b (without the newline). Returns 1 for a
 * line, 0 at the end, -1 for a line too long (the rest of it is not read). Byte by byte
 * rather than fgets, which would hide a NUL byte in the line. */
static int
read_line(FILE *f, struct dq_buf *b)
{
    char part[4096];
    size_t n = 0;
    int ch = EOF;
    bool any = false;

    dq_buf_reset(b);
    while ((ch = getc_unlocked(f)) != EOF && ch != '\n') {
        any = true;
        part[n++] = (char)ch;
        if (n == sizeof part) {
            dq_buf_append(b, part, n);
            n = 0;
            if (b->len > LINE_MAX_BYTES)
                return -1;
        }
    }
    dq_buf_append(b, part, n);
    if (b->len > LINE_MAX_BYTES)
        return -1;
    return any || ch == '\n' ? 1 : 0;
}

/* A script error "task K: ..." names the line of task K instead. */
static void
name_line(dq_err *err, const struct chunk *ch)
{
    unsigned long k;
    char *end;
    char msg[sizeof err->msg];

    if (strncmp(err->msg, "task ", 5) != 0)
        return;
    k = strtoul(err->msg + 5, &end, 10);
    if (k < 1 || k > ch->n || strncmp(end, ": ", 2) != 0)
        return;
    snprintf(msg, sizeof msg, "line %lld: %s", ch->line[k - 1], end + 2);
    memcpy(err->msg, msg, sizeof msg);
}

static int
send_chunk(struct cli *g, struct chunk *ch, bool requeue, struct totals *tot)
{
    static struct dq_import_task tasks[CHUNK_TASKS];
    static dq_enqueued out[CHUNK_TASKS];
    dq_err err = {0};

    if (ch->n == 0)
        return DQ_EXIT_OK;
    for (size_t i = 0; i < ch->n; i++)
        tasks[i] = ch->recs[i].task;
    if (dq_import(g->client, g->queue, tasks, ch->n, requeue, out, &err) != DQ_OK) {
        name_line(&err, ch);
        int rc = cli_error(g, &err);
        fprintf(stderr, "%s: lines %lld..%lld not imported (one chunk, all or nothing)\n", g->prog,
                ch->line[0], ch->line[ch->n - 1]);
        return rc;
    }
    for (size_t i = 0; i < ch->n; i++) {
        const struct dq_task_rec *r = &ch->recs[i];
        if (out[i].duplicate) {
            tot->skipped++;
            printf("line %lld: skipped ", ch->line[i]);
            cli_put_safe(stdout, out[i].id, strlen(out[i].id));
            printf(": already %s in queue ", where_names[out[i].where]);
            cli_put_safe(stdout, g->queue, strlen(g->queue));
            printf("\n");
            continue;
        }
        tot->imported++;
        if (out[i].due_ms >= 0)
            tot->scheduled++;
        else
            tot->failed++;
        if (r->state == DQ_STATE_INFLIGHT)
            tot->inflight++;
    }
    tot->lines_done = ch->line[ch->n - 1];
    for (size_t i = 0; i < ch->n; i++)
        dq_task_rec_free(&ch->recs[i]);
    ch->n = 0;
    ch->bytes = 0;
    return DQ_EXIT_OK;
}

static void
report(const struct cli *g, const struct totals *t)
{
    printf("imported %lld tasks into queue ", t->imported);
    cli_put_safe(stdout, g->queue, strlen(g->queue));
    printf(" (%lld scheduled, %lld failed", t->scheduled, t->failed);
    if (t->inflight > 0)
        printf("; %lld in flight in the file, scheduled at their due time", t->inflight);
    printf("), skipped %lld already there\n", t->skipped);
}

static int
run(struct cli *g, const struct cli_args *args)
{
    bool requeue = cli_has(args, "requeue");
    struct totals tot = {0};
    struct dq_buf line = DQ_BUF_INIT;
    struct chunk *ch;
    long long lineno = 0;
    int rc;

    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;
    if ((ch = calloc(1, sizeof *ch)) == NULL) {
        fprintf(stderr, "%s: out of memory\n", g->prog);
        return DQ_EXIT_FAILED;
    }
    for (;;) {
        int got = read_line(stdin, &line);
        dq_err err = {0};

        if (got == 0)
            break;
        lineno++;
        if (got < 0) {
            rc = cli_usage_error(g, "line %lld: over the limit of %u bytes per line", lineno,
                                 LINE_MAX_BYTES);
            break;
        }
        if (line.failed) {
            fprintf(stderr, "%s: line %lld: out of memory\n", g->prog, lineno);
            rc = DQ_EXIT_FAILED;
            break;
        }
        if (line.len == 0)
            continue;
        struct dq_task_rec *r = &ch->recs[ch->n];
        if (dq_task_rec_parse(r, line.data, line.len, &err) != DQ_OK) {
            dq_task_rec_free(r);
            fprintf(stderr, "%s: line %lld: ", g->prog, lineno);
            cli_put_safe(stderr, err.msg, strlen(err.msg));
            fprintf(stderr, "\n");
            rc = err.code == DQ_ENOMEM ? DQ_EXIT_FAILED : DQ_EXIT_USAGE;
            if (ch->n > 0)
                fprintf(stderr, "%s: lines %lld..%lld not imported (the chunk holding line %lld)\n",
                        g->prog, ch->line[0], lineno, lineno);
            break;
        }
        ch->line[ch->n++] = lineno;
        ch->bytes += line.len;
        if (ch->n == CHUNK_TASKS || ch->bytes >= CHUNK_BYTES) {
            if ((rc = send_chunk(g, ch, requeue, &tot)) != DQ_EXIT_OK)
                break;
        }
    }
    if (rc == DQ_EXIT_OK && ferror(stdin)) {
        fprintf(stderr, "%s: cannot read stdin\n", g->prog);
        rc = DQ_EXIT_USAGE;
    }
    if (rc == DQ_EXIT_OK)
        rc = send_chunk(g, ch, requeue, &tot);
    for (size_t i = 0; i < ch->n; i++)
        dq_task_rec_free(&ch->recs[i]);
    free(ch);
    dq_buf_free(&line);
    report(g, &tot);
    if (rc != DQ_EXIT_OK && tot.lines_done > 0)
        fprintf(stderr, "%s: lines 1..%lld were imported\n", g->prog, tot.lines_done);
    return rc;
}

static const struct cli_opt opts[] = {
    {"requeue", 0, NULL, CLI_FLAG,
     .help = "failed tasks go to scheduled, due now, with attempts reset and no deadline (as "
             "delayq requeue does); undecodable entries stay failed"},
    {NULL},
};

const struct cli_cmd cmd_import = {
    .name = "import",
    .summary = "put exported tasks into a queue (idempotent on ids)",
    .usage = "delayq import [-q QUEUE] [--requeue] < tasks.jsonl",
    .about = "Puts the tasks of `delayq export` files into QUEUE (on this or another server),\n"
             "keeping their ids, attempts, times, payloads and failure fields: failed tasks stay\n"
             "failed unless --requeue; due, future and in-flight tasks are scheduled at their\n"
             "due time. Idempotent on task ids: a task already in the queue is skipped and\n"
             "reported with its line, so importing a file twice adds nothing the second time.\n"
             "Lines go in chunks of up to " CHUNK_MAX_TEXT
             " tasks (or 16 MiB), each one all-or-nothing\n"
             "script call. A bad line (not a record, a field of the wrong type, a payload over\n"
             "max_payload, a line over " LINE_MAX_TEXT
             " bytes) stops the import with exit 2, naming the\n"
             "line and the field; the chunks before it stay imported. See delayq-import(1).",
    .opts = opts,
    .run = run,
};
