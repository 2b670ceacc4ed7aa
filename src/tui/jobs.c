/* SPDX-License-Identifier: MIT */
/*
 * jobs.c: what the inspector's Redis thread does (see jobs.h): every operator action
 * through the library's calls (one function per action, found through a table indexed
 * by the action), the details and audit texts, the picker's counts, a search step and
 * a refresh. Runs on the Redis thread only; touches nothing but its job.
 */
#include "jobs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt/esc.h"
#include "fmt/taskfmt.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/dur.h"
#include "lib/task.h"
#include "overview.h"

/* Task ids the Workers view lists per worker. */
#define WORKER_TASKS_SHOWN 5

/* The audit view's details wrap at this many bytes, indented, so a whole entry reads at
 * 80 columns (a text view cuts a longer line). */
#define AUDIT_WRAP 74

/* Appends @s (@len bytes) as lines of at most AUDIT_WRAP bytes, broken at blanks, each
 * indented by four spaces. */
static void
wrap_lines(struct dq_buf *b, const char *s, size_t len)
{
    while (len > 0) {
        size_t cut = len;
        if (cut > AUDIT_WRAP) {
            cut = AUDIT_WRAP;
            while (cut > 0 && s[cut] != ' ')
                cut--;
            if (cut == 0) /* one long word: cut it, between UTF-8 sequences */
                for (cut = AUDIT_WRAP; cut > 1 && ((unsigned char)s[cut] & 0xc0) == 0x80; cut--)
                    ;
        }
        dq_buf_puts(b, "    ");
        dq_buf_append(b, s, cut);
        dq_buf_putc(b, '\n');
        s += cut;
        len -= cut;
        while (len > 0 && *s == ' ')
            s++, len--;
    }
}

void
job_reset(struct job *j)
{
    for (size_t i = 0; i < j->nids; i++)
        free(j->ids[i]);
    free(j->ids);
    free(j->task.id);
    free(j->task.raw);
    dq_task_clear(&j->found);
    free(j->edit_text);
    free(j->payload);
    app_action_result_free(&j->result);
    memset(j, 0, sizeof *j);
}

static void job_status(struct job *j, bool error, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void
job_status(struct job *j, bool error, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(j->result.status, sizeof j->result.status, fmt, ap);
    va_end(ap);
    j->result.error = error;
}

/* ---- unknown outcomes ---------------------------------------------------------------
 * An action that timed out or lost its connection after Redis had the whole command
 * (dq_client_unanswered) may have run: a requeue behind a long script runs once the
 * script ends. Every action script writes its audit entry in the same call, so the
 * audit log tells: the newest entry with this client's who and the action's name,
 * written (server time) since the action started. Read once Redis answers again, within
 * RECHECK_MS; nothing is read before an action, so a busy server delays no action. */
#define RECHECK_MS       10000
#define RECHECK_PAUSE_MS 200

/* The audit entry name of @a's script; NULL for actions that write none. */
static const char *audit_action(enum action a);

static void
pause_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/*
 * The status of an action that failed with @err: "@what: MSG (nothing changed)" when
 * nothing reached Redis (@changed_before: a bulk action had done steps: no "nothing
 * changed"), else what the audit log says about it. @started_ms: dq_mono_ms() when the
 * action began.
 */
static void
job_failed(dq_client *c, struct job *j, int64_t started_ms, const dq_err *err, const char *what,
           bool changed_before)
{
    const char *name = audit_action(j->act);
    bool unknown = (err->code == DQ_ETIMEOUT || err->code == DQ_ECONN) && dq_client_unanswered(c);
    int64_t deadline = dq_mono_ms() + RECHECK_MS;

    if (!unknown) {
        job_status(j, true, "%s: %s%s", what, err->msg, changed_before ? "" : " (nothing changed)");
        return;
    }
    while (name != NULL && dq_mono_ms() < deadline) {
        dq_audit after;
        dq_stats st;
        const dq_audit_entry *mine = NULL;
        if (dq_stats_get(c, j->queue, &st, NULL) != DQ_OK ||
            dq_audit_get(c, j->queue, 50, &after, NULL) != DQ_OK) {
            pause_ms(RECHECK_PAUSE_MS);
            continue;
        }
        /* server time when the action began, less a second for the clocks' steps */
        int64_t since = st.now_ms - (dq_mono_ms() - started_ms) - 1000;
        for (size_t i = 0; i < after.n && mine == NULL && after.entries[i].at_ms >= since; i++) {
            const dq_audit_entry *e = &after.entries[i];
            if (strcmp(e->action, name) == 0 && strcmp(e->who, dq_client_who(c)) == 0)
                mine = e;
        }
        if (mine != NULL)
            job_status(j, strncmp(mine->result, "ok", 2) != 0,
                       "%s: no answer in time, but it ran (audit log: %s -> %s)", what,
                       mine->detail, mine->result);
        else
            job_status(j, true, "%s: %s; the audit log has no entry for it: it did not run", what,
                       err->msg);
        dq_audit_free(&after);
        return;
    }
    job_status(j, true, "%s: %s: outcome unknown: check the audit log (L)", what, err->msg);
}

static void
job_details(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_task t;
    dq_err err = {0};
    struct dq_buf text = DQ_BUF_INIT, copy = DQ_BUF_INIT;
    dq_stats s;

    if (dq_find(c, j->queue, j->id, &t, &err) != DQ_OK) {
        job_status(j, true, "%s", err.msg);
        return;
    }
    dq_fmt_task_details(&text, &t, dq_stats_get(c, j->queue, &s, NULL) == DQ_OK ? s.now_ms : 0);
    /* y in details copies the stack trace of a failed task, else the payload */
    dq_fmt_task_copy(&copy, &t, true);
    if (text.failed) {
        job_status(j, true, "details: out of memory");
    } else {
        j->result.detail = dq_buf_steal(&text, NULL);
        snprintf(j->result.title, sizeof j->result.title, "task details");
    }
    j->result.copy = copy.failed || copy.len == 0 ? NULL : dq_buf_steal(&copy, NULL);
    dq_buf_free(&text);
    dq_buf_free(&copy);
    dq_task_clear(&t);
}

static void
job_audit(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_audit a;
    dq_err err = {0};
    struct dq_buf b = DQ_BUF_INIT;

    if (dq_audit_get(c, j->queue, DQ_CALL_MAX, &a, &err) != DQ_OK) {
        job_status(j, true, "audit: %s", err.msg);
        return;
    }
    /* an entry is a line with when, who and what, then the result and the detail with
     * its times and durations for people (relative to the server's clock: one more
     * read), wrapped so all of it reads at 80 columns */
    dq_stats s;
    int64_t now = dq_stats_get(c, j->queue, &s, NULL) == DQ_OK ? s.now_ms : -1;
    for (size_t i = 0; i < a.n; i++) {
        const dq_audit_entry *e = &a.entries[i];
        char at[80];
        if (now < 0)
            dq_time_format(at, sizeof at, e->at_ms);
        else
            dq_fmt_time_rel(at, sizeof at, e->at_ms, now);
        /* escaped here, with their lengths: a NUL or a newline in a field (a foreign
         * write) must neither cut the entry nor start a line that looks like another */
        struct dq_buf d = DQ_BUF_INIT, raw = DQ_BUF_INIT;
        size_t dlen = dq_slen(e->detail, e->detail_len);
        dq_buf_printf(&b, "%s  ", at);
        dq_esc_text(&b, e->who, dq_slen(e->who, e->who_len), 0);
        dq_buf_puts(&b, "  ");
        dq_esc_text(&b, e->action, dq_slen(e->action, e->action_len), 0);
        dq_buf_putc(&b, '\n');
        dq_buf_puts(&d, "-> ");
        dq_esc_text(&d, e->result, dq_slen(e->result, e->result_len), 0);
        wrap_lines(&b, d.data ? d.data : "", d.len);
        dq_buf_reset(&d);
        /* times and durations for people, unless a NUL would cut the detail short */
        if (dlen == strlen(e->detail))
            dq_fmt_audit_detail(&raw, e->detail, now);
        else
            dq_buf_append(&raw, e->detail, dlen);
        dq_esc_text(&d, raw.data ? raw.data : "", raw.len, 0);
        wrap_lines(&b, d.data ? d.data : "", d.len);
        b.failed |= d.failed | raw.failed;
        dq_buf_free(&d);
        dq_buf_free(&raw);
    }
    if (a.n == 0)
        dq_buf_puts(&b, "(no operator actions recorded)\n");
    j->result.detail = b.failed ? NULL : dq_buf_steal(&b, NULL);
    if (j->result.detail == NULL)
        job_status(j, true, "audit: out of memory");
    snprintf(j->result.title, sizeof j->result.title, "audit log of %.30s, newest first", j->queue);
    dq_buf_free(&b);
    dq_audit_free(&a);
}

/* The Overview: up to DQ_CALL_MAX (1 000) queues, as `delayq queues` lists them, each with its
 * overview row (overview_fetch: one call per queue, pipelined, and one INFO), worst first; the
 * picker's counts from the rows. */
static void
job_queues(dq_client *c, struct job *j, int64_t started_ms)
{
    struct action_result *r = &j->result;
    dq_queues q = {0};
    dq_err err = {0};

    if (dq_queues_get(c, DQ_CALL_MAX, &q, &err) != DQ_OK) {
        job_status(j, true, "queues: %s", err.msg);
        return;
    }
    /* the result takes the names; the picker takes them from the result */
    r->queues = q.names;
    r->nqueues = q.n;
    r->total = q.total;
    r->counts = calloc(q.n ? q.n : 1, sizeof *r->counts);
    if (r->counts == NULL) {
        job_status(j, true, "queues: out of memory");
        return;
    }
    if (overview_fetch(c, r->queues, r->nqueues, &r->overview, &err) != DQ_OK) {
        job_status(j, true, "queues: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < r->nqueues; i++) {
        const dq_stats *s = &r->overview->lines[i].row->stats;
        r->counts[i][0] = s->due;
        r->counts[i][1] = s->future;
        r->counts[i][2] = s->inflight;
        r->counts[i][3] = s->failed;
    }
    if (r->nqueues == 0)
        job_status(j, false, "no queues on this server yet");
}

/* The Workers view: one row per worker, then the tasks it holds. The counters come with
 * each worker's beat, the tasks held from the leases now: the text says which is which
 * and how often workers beat. Numbers first, so they fit at 80 columns; names after. */
static void
job_workers(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_workers w;
    dq_err err = {0};
    struct dq_buf b = DQ_BUF_INIT;

    if (dq_workers_get(c, j->queue, DQ_CALL_MAX, WORKER_TASKS_SHOWN, &w, &err) != DQ_OK) {
        job_status(j, true, "workers: %s", err.msg);
        return;
    }
    int64_t beat_min = -1, beat_max = -1;
    for (size_t i = 0; i < w.n; i++) {
        int64_t e = w.workers[i].beat_interval_ms;
        beat_min = beat_min < 0 || e < beat_min ? e : beat_min;
        beat_max = e > beat_max ? e : beat_max;
    }
    if (w.n > 0) {
        char lo[32], hi[32];
        dq_dur_format(lo, sizeof lo, beat_min);
        dq_dur_format(hi, sizeof hi, beat_max);
        dq_buf_printf(&b,
                      "BUSY, DONE, RETRIED, FAILED: as of each worker's last beat (every %s%s%s);\n"
                      "holds: the tasks it has in flight now. Refreshed every %ds.\n\n",
                      lo, beat_min == beat_max ? "" : "-", beat_min == beat_max ? "" : hi,
                      APP_WORKERS_REFRESH_MS / 1000);
    }
    dq_buf_printf(&b, "%-5s %9s %7s %7s %7s %7s  %s\n", "STATE", "LAST BEAT", "BUSY", "DONE",
                  "RETRIED", "FAILED", "WORKER, COMMAND");
    for (size_t i = 0; i < w.n; i++) {
        const dq_worker_info *x = &w.workers[i];
        char beat[32], busy[32];
        dq_dur_format(beat, sizeof beat, x->beat_age_ms);
        snprintf(busy, sizeof busy, "%lld/%lld", (long long)x->busy, (long long)x->concurrency);
        dq_buf_printf(&b, "%-5s %9s %7s %7lld %7lld %7lld  %s  %s\n",
                      x->lost       ? "LOST"
                      : x->hung > 0 ? "HUNG"
                      : x->draining ? "drain"
                                    : "live",
                      beat, busy, (long long)x->done, (long long)x->retried, (long long)x->failed,
                      x->name, x->command[0] ? x->command : "-");
        if (x->lost && x->started_ms > 0 && x->last_beat_ms >= x->started_ms) {
            /* how long it ran before it went silent: a crash loop reads as short lives */
            char up[32];
            dq_dur_format(up, sizeof up, x->last_beat_ms - x->started_ms);
            dq_buf_printf(&b, "      was up %s, silent for %s\n", up, beat);
        }
        if (x->hung > 0)
            dq_buf_printf(&b, "      %lld handler%s past its time limit, asked to stop, runs on\n",
                          (long long)x->hung, x->hung == 1 ? "" : "s");
        if (x->held > 0) {
            dq_buf_printf(&b, "      holds %zu:", x->held);
            for (size_t k = 0; k < x->ntasks; k++) {
                char ran[32];
                dq_dur_format(ran, sizeof ran, w.now_ms - x->tasks[k].claimed_ms);
                dq_buf_printf(&b, " %s (%s)", x->tasks[k].id, ran);
            }
            dq_buf_puts(&b, x->held > x->ntasks ? " ...\n" : "\n");
        }
    }
    if (w.n == 0)
        dq_buf_puts(&b, "(no worker has registered on this queue)\n");
    j->result.detail = b.failed ? NULL : dq_buf_steal(&b, NULL);
    if (j->result.detail == NULL)
        job_status(j, true, "workers: out of memory");
    snprintf(j->result.title, sizeof j->result.title, "workers of %.30s: %lld live, %lld lost",
             j->queue, (long long)w.live, (long long)w.lost);
    dq_buf_free(&b);
    dq_workers_free(&w);
}

/* ---- the Keys view (K; per-key limits, PROTOCOL.md 4.10 and 5.31) ---------------- */

/* Keys the Keys view asks for: a screenful at 200x50, one bounded keys call. */
#define KEYS_SHOWN 50

void
job_keys_text(struct dq_buf *b, const dq_keys *k)
{
    if (k->n == 0) {
        dq_buf_puts(b,
                    "No keyed tasks on this queue. A task gets a key (a tenant, a customer) at\n"
                    "enqueue: delayq enqueue --key KEY; key_concurrency then limits each key.\n");
        return;
    }
    /* which numbers are exact and which sampled, as delayq keys says */
    dq_buf_printf(b,
                  "Exact: PARKED, IN FLIGHT (%lld parked in all). Read every %ds.\n"
                  "Sampled: DUE among the oldest %lld of %lld due tasks,\n"
                  "FAILED among the newest %lld of %lld failures.\n\n",
                  (long long)k->parked_total, APP_WORKERS_REFRESH_MS / 1000, (long long)k->due_seen,
                  (long long)k->due_total, (long long)k->failed_seen, (long long)k->failed_total);
    /* numbers first, so they fit at 80 columns; the key last, of any width */
    dq_buf_printf(b, "%8s %8s %9s %8s  %-14s %s\n", "DUE", "PARKED", "IN FLIGHT", "FAILED",
                  "OLDEST DUE", "KEY");
    for (size_t i = 0; i < k->n; i++) {
        const dq_key_row *r = &k->rows[i];
        char age[DQ_DUR_BUFSZ + 8] = "-";
        if (r->oldest_due_ms >= 0) {
            dq_dur_format(age, DQ_DUR_BUFSZ,
                          k->now_ms > r->oldest_due_ms ? k->now_ms - r->oldest_due_ms : 0);
            strcat(age, " ago");
        }
        dq_buf_printf(b, "%8lld %8lld %9lld %8lld  %-14s ", (long long)r->due, (long long)r->parked,
                      (long long)r->inflight, (long long)r->failed, age);
        /* caller-chosen bytes: escaped here, with their length (a NUL or a newline in a
         * key must not end or break its line) */
        dq_esc_text(b, r->key, r->key_len, 0);
        dq_buf_puts(b, "\n");
    }
}

/* The Keys view: which key (customer) a backlog is, from one keys call. */
static void
job_keys(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_keys k;
    dq_err err = {0};
    struct dq_buf b = DQ_BUF_INIT;

    if (dq_keys_get(c, j->queue, KEYS_SHOWN, &k, &err) != DQ_OK) {
        job_status(j, true, "keys: %s", err.msg);
        return;
    }
    job_keys_text(&b, &k);
    j->result.detail = b.failed ? NULL : dq_buf_steal(&b, NULL);
    if (j->result.detail == NULL)
        job_status(j, true, "keys: out of memory");
    snprintf(j->result.title, sizeof j->result.title, "keys of %.30s: %zu with tasks", j->queue,
             k.n);
    dq_buf_free(&b);
    dq_keys_free(&k);
}

/* ---- the Partitions view (N; partitioned queues, PROTOCOL.md 14) ----------------- */

void
job_parts_text(struct dq_buf *b, const struct part_row *rows, size_t n, size_t routed)
{
    if (n <= 1) {
        dq_buf_puts(b, "This queue is not partitioned: it is one queue in one hash slot.\n"
                       "delayq config -q QUEUE partitions=N spreads it over N slots.\n");
        return;
    }
    dq_buf_printf(
        b,
        "Counts of each partition, one stats call each (the calls of a refresh). Read every "
        "%ds.\nDONE/MIN over the verdict's window. The screen's counts are their sums.\n\n",
        APP_WORKERS_REFRESH_MS / 1000);
    /* numbers first, so they fit at 80 columns; node and name last, of any width */
    dq_buf_printf(b, "%4s %8s %8s %9s %8s %8s  %-21s %s\n", "#", "DUE", "FUTURE", "IN FLIGHT",
                  "FAILED", "DONE/MIN", "NODE", "NAME");
    for (size_t i = 0; i < n; i++) {
        const struct part_row *r = &rows[i];
        const dq_stats *s = &r->st;
        char rate[32] = "-";
        struct dq_buf node = DQ_BUF_INIT;
        int64_t span = s->window_elapsed_ms > 0 ? s->window_elapsed_ms : s->window_ms;
        if (s->window_ms >= 0 && span > 0)
            snprintf(rate, sizeof rate, "%.1f", (double)s->window_done * 60000.0 / (double)span);
        dq_buf_printf(b, "%4zu %8lld %8lld %9lld %8lld %8s  ", i, (long long)s->due,
                      (long long)s->future, (long long)s->inflight, (long long)s->failed, rate);
        /* node and partition names come from Redis (the slot map, the map): escaped */
        dq_esc_text(&node, r->node, strlen(r->node), 0);
        dq_buf_printf(b, "%-21s ", node.failed || node.data == NULL ? "?" : (char *)node.data);
        dq_buf_free(&node);
        dq_esc_text(b, r->name, strlen(r->name), 0);
        dq_buf_puts(b, i >= routed ? " (draining)\n" : "\n");
    }
}

/* The Partitions view: each partition's counts and node, from the stats calls a refresh
 * makes (N, pipelined), so it costs what the main screen's counts cost. */
static void
job_parts(dq_client *c, struct job *j, int64_t started_ms)
{
    size_t routed = 1, all = 1, n = 0, nodes = 1;
    struct part_row *rows = NULL;
    dq_stats sum, *each = NULL;
    dq_err err = {0};
    struct dq_buf b = DQ_BUF_INIT;
    bool cluster = false;

    (void)started_ms;
    if (dq_partitions_get(c, j->queue, &routed, &all, &err) != DQ_OK) {
        job_status(j, true, "partitions: %s", err.msg);
        return;
    }
    each = calloc(all, sizeof *each);
    rows = calloc(all, sizeof *rows);
    if (each == NULL || rows == NULL) {
        job_status(j, true, "partitions: out of memory");
        goto out;
    }
    if (dq_stats_get_each(c, j->queue, &sum, each, all, &n, &err) != DQ_OK) {
        job_status(j, true, "partitions: %s", err.msg);
        goto out;
    }
    if (n > all) /* the map grew between the two reads: show the partitions read */
        n = all;
    for (size_t i = 0; i < n; i++) {
        rows[i].st = each[i];
        if (dq_partition_name(c, j->queue, i, rows[i].name, sizeof rows[i].name, &err) != DQ_OK)
            snprintf(rows[i].name, sizeof rows[i].name, "?");
        snprintf(rows[i].node, sizeof rows[i].node, "%s", dq_client_node(c, rows[i].name));
    }
    if (n > 1)
        nodes = model_parts_nodes(c, j->queue, n, &cluster);
    job_parts_text(&b, rows, n, routed);
    j->result.detail = b.failed ? NULL : dq_buf_steal(&b, NULL);
    if (j->result.detail == NULL)
        job_status(j, true, "partitions: out of memory");
    if (n > 1)
        snprintf(j->result.title, sizeof j->result.title, "partitions of %.24s: %zu on %zu %s",
                 j->queue, routed, nodes, cluster ? (nodes == 1 ? "master" : "masters") : "server");
    else
        snprintf(j->result.title, sizeof j->result.title, "partitions of %.24s: 1", j->queue);
out:
    dq_buf_free(&b);
    free(each);
    free(rows);
}

/* fix and requeue */
/* e: the task as it is now, and its payload as JSON for the editor (refused, with the
 * reason, when it is not failed or JSON cannot show its payload faithfully). */
static void
job_edit(dq_client *c, struct job *j, int64_t started_ms)
{
    struct dq_buf text = DQ_BUF_INIT;
    dq_err err = {0};

    if (dq_find(c, j->queue, j->id, &j->found, &err) != DQ_OK) {
        job_status(j, true, "fix %s: %s", j->id, err.msg);
        return;
    }
    if (j->found.state != DQ_STATE_FAILED)
        job_status(j, true, "fix %s: it is no longer failed (nothing changed)", j->id);
    else if (dq_fmt_payload_edit(&text, &j->found, &err) != DQ_OK)
        job_status(j, true, "fix %s: %s", j->id, err.msg);
    else if ((j->edit_text = dq_buf_steal(&text, NULL)) == NULL)
        job_status(j, true, "fix %s: out of memory", j->id);
    dq_buf_free(&text);
}

static void
job_replace(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    char what[DQ_ID_MAX + 8];

    snprintf(what, sizeof what, "fix %s", j->id);
    if (dq_requeue_replace(c, j->queue, &j->found, j->payload, j->payload_len, 0, &err) == DQ_OK)
        job_status(j, false, "requeued %s with the new payload: due now", j->id);
    else
        job_failed(c, j, started_ms, &err, what, false);
}

/* How a status line names a filter before its value. */
static const char *
filter_words(dq_filter_kind k)
{
    return k == DQ_FILTER_GROUP ? " of group " : k == DQ_FILTER_KEY ? " of key " : " matching ";
}

static void
job_pause(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    int64_t for_ms = 0;

    if (j->pause_for[0] != '\0' && dq_dur_parse(j->pause_for, "pause for", &for_ms, &err))
        job_status(j, true, "%s", err.msg);
    else if (dq_pause(c, j->queue, for_ms, j->input[0] ? j->input : NULL, &err) == DQ_OK)
        job_status(j, false, "paused %s %s%s: workers claim nothing (P resumes)", j->queue,
                   for_ms > 0 ? "for " : "until resumed", j->pause_for);
    else
        job_failed(c, j, started_ms, &err, "pause", false);
}

static void
job_resume(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    bool was = false;

    if (dq_resume(c, j->queue, &was, &err) == DQ_OK)
        job_status(j, false,
                   was ? "resumed %s: idle workers claim at once" : "%s was not paused (any more)",
                   j->queue);
    else
        job_failed(c, j, started_ms, &err, "resume", false);
}

static void
job_throttle(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    int64_t rate = 0, for_ms = 0;
    long long conc = j->throttle_conc[0] ? atoll(j->throttle_conc) : 0;

    if ((j->throttle_rate[0] && dq_rate_parse(j->throttle_rate, "rate", &rate, &err)) ||
        (j->pause_for[0] && dq_dur_parse(j->pause_for, "throttle for", &for_ms, &err)))
        job_status(j, true, "%s", err.msg);
    else if (dq_throttle(c, j->queue, rate, conc, for_ms, j->input[0] ? j->input : NULL, &err) ==
             DQ_OK)
        job_status(j, false, "throttled %s %s%s: workers claim within it (T lifts it)", j->queue,
                   for_ms > 0 ? "for " : "until lifted", j->pause_for);
    else
        job_failed(c, j, started_ms, &err, "throttle", false);
}

static void
job_throttle_off(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    bool was = false;

    if (dq_throttle_off(c, j->queue, &was, &err) == DQ_OK)
        job_status(j, false,
                   was ? "lifted the throttle of %s: workers claim at once"
                       : "%s was not throttled (any more)",
                   j->queue);
    else
        job_failed(c, j, started_ms, &err, "lift the throttle", false);
}

/* r and d: the marked set when there is one (all or nothing), else the selection. */
static void
job_requeue_or_drop(dq_client *c, struct job *j, int64_t started_ms)
{
    const char *one[1] = {j->id};
    const char *const *set = j->ids != NULL ? (const char *const *)j->ids : one;
    size_t count = j->ids != NULL ? j->nids : 1, n = 0;
    bool requeue = j->act == ACT_REQUEUE;
    dq_err err = {0};
    char what[DQ_ID_MAX + 40];
    int rc = requeue ? dq_requeue(c, j->queue, set, count, 0, &n, &err)
                     : dq_drop(c, j->queue, set, count, &n, &err);

    snprintf(what, sizeof what, "%s %s", requeue ? "requeue" : "drop",
             j->ids != NULL ? "marked tasks" : j->id);
    if (rc != DQ_OK)
        job_failed(c, j, started_ms, &err, what, false);
    else if (j->ids == NULL)
        job_status(j, false, requeue ? "requeued %s: due now" : "dropped %s", j->id);
    else
        job_status(j, false,
                   requeue ? "requeued %zu marked tasks: due now" : "dropped %zu marked tasks", n);
    j->result.clear_marks = rc == DQ_OK;
}

/* Cancels a running task (cancel.lua): it goes to failed, and its worker stops it. */
static void
job_cancel(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    dq_cancelled out;
    char what[DQ_ID_MAX + 16];

    snprintf(what, sizeof what, "cancel %s", j->id);
    if (dq_cancel(c, j->queue, j->id, false, &out, &err) != DQ_OK)
        job_failed(c, j, started_ms, &err, what, false);
    else
        job_status(j, false, "cancelled %s (attempt %u): its worker stops it; it is in Failed",
                   j->id, out.attempt);
}

static void
job_reap(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    dq_reaped rp;

    if (dq_reap(c, j->queue, DQ_CALL_MAX, &rp, &err) == DQ_OK)
        job_status(j, false, "recovered %zu expired leases (%zu ran out of attempts)",
                   rp.returned + rp.exhausted, rp.exhausted);
    else
        job_status(j, true, "reap: %s", err.msg);
}

static void
job_run_now(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};

    if (dq_run_now(c, j->queue, &j->task, &err) == DQ_OK)
        job_status(j, false, "task %s is due now", j->id);
    else
        job_status(j, true, "run now %s: %s", j->id, err.msg);
}

static void
job_requeue_delay(dq_client *c, struct job *j, int64_t started_ms)
{
    const char *one[1] = {j->id};
    dq_err err = {0};
    size_t n = 0;
    int64_t delay;
    char what[DQ_ID_MAX + 40];

    if (dq_dur_parse(j->input, "delay", &delay, &err) != DQ_OK) {
        job_status(j, true, "%s", err.msg);
    } else if (dq_requeue(c, j->queue, one, 1, delay, &n, &err) == DQ_OK) {
        job_status(j, false, "requeued %s: due in %s", j->id, j->input);
    } else {
        snprintf(what, sizeof what, "requeue %s", j->id);
        job_failed(c, j, started_ms, &err, what, false);
    }
}

/* t: the time typed is a duration from now or an RFC 3339 time (app.c checked it). */
static void
job_reschedule(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    int64_t delay = 0, at = 0, due = -1;
    char when[DQ_TIME_BUFSZ], what[DQ_ID_MAX + 40];

    if (dq_dur_parse(j->input, "time", &delay, NULL) != DQ_OK &&
        dq_time_parse(j->input, "time", &at, &err) != DQ_OK) {
        job_status(j, true, "%s", err.msg);
        return;
    }
    if (dq_reschedule(c, j->queue, j->id, at > 0 ? at : 0, delay, &due, &err) == DQ_OK) {
        dq_time_format(when, sizeof when, due);
        job_status(j, false, "rescheduled %s: due %s", j->id, when);
    } else {
        snprintf(what, sizeof what, "reschedule %s", j->id);
        job_failed(c, j, started_ms, &err, what, false);
    }
}

/* A (all, spread over the window typed) and r on a group or search: in bounded steps. */
static void
job_requeue_many(dq_client *c, struct job *j, int64_t started_ms)
{
    int64_t spread = 0;
    dq_bulk cur = {0};
    dq_filter f = {j->fkind, j->fvalue};
    dq_err err = {0};
    char what[DQ_ID_MAX + 40];

    if (j->act == ACT_REQUEUE_ALL && j->spread[0] != '\0' &&
        dq_dur_parse(j->spread, "spread", &spread, &err) != DQ_OK) {
        job_status(j, true, "%s", err.msg);
        return;
    }
    int rc = DQ_OK;
    while (!cur.done && rc == DQ_OK)
        rc = dq_requeue_filter_step(c, j->queue, &f, 0, spread, 0, &cur, &err);
    if (rc == DQ_OK) {
        job_status(j, false, "requeued %zu failed tasks%s%s%s%s", cur.done_n,
                   f.kind == DQ_FILTER_NONE ? "" : filter_words(f.kind), f.kind ? j->fvalue : "",
                   spread > 0 ? ", spread over " : "", spread > 0 ? j->spread : "");
    } else {
        snprintf(what, sizeof what, "requeue stopped after %zu", cur.done_n);
        job_failed(c, j, started_ms, &err, what, true);
    }
}

/* X and d on a group or search: in bounded steps. */
static void
job_drop_many(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_bulk cur = {0};
    dq_filter f = {j->fkind, j->fvalue};
    dq_err err = {0};
    char what[DQ_ID_MAX + 40];
    int rc = DQ_OK;

    while (!cur.done && rc == DQ_OK)
        rc = dq_drop_filter_step(c, j->queue, &f, 0, &cur, &err);
    if (rc == DQ_OK) {
        job_status(j, false, "dropped %zu failed tasks%s%s", cur.done_n,
                   f.kind == DQ_FILTER_NONE ? "" : filter_words(f.kind), f.kind ? j->fvalue : "");
    } else {
        snprintf(what, sizeof what, "drop stopped after %zu", cur.done_n);
        job_failed(c, j, started_ms, &err, what, true);
    }
}

/* ---- periodic schedules (PROTOCOL.md 5.30) ----------------------------------------- */

/* The first line of @s (at most @len bytes, up to a NUL) into @buf, cut to fit. */
static void
copy_first_line(char *buf, size_t size, const char *s, size_t len)
{
    size_t n = s != NULL ? dq_slen(s, len) : 0;

    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n' || s[i] == '\r') {
            n = i;
            break;
        }
    snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), s != NULL ? s : "");
}

/* What schedule @s's last task is now. Its id is caller-chosen (NAME@<ms>), so dq_find
 * finds it through the hashes in one call, without walking the scheduled set. */
static int
sched_lookup(dq_client *c, const char *queue, const dq_schedule *s, struct sched_last *out,
             dq_err *err)
{
    dq_task t;
    int rc;

    out->since_ms = out->took_ms = -1;
    if (s->last_ms < 0 || s->last_id == NULL || s->last_id[0] == '\0') {
        out->run = SCHED_RUN_NEVER;
        return DQ_OK;
    }
    if ((rc = dq_find(c, queue, s->last_id, &t, err)) == DQ_ENOTFOUND) {
        out->run = SCHED_RUN_GONE;
        return DQ_OK;
    }
    if (rc != DQ_OK)
        return rc;
    out->attempt = t.attempt;
    switch (t.state) {
    case DQ_STATE_INFLIGHT:
        out->run = SCHED_RUN_INFLIGHT;
        out->since_ms = t.claimed_ms;
        break;
    case DQ_STATE_DONE:
        out->run = SCHED_RUN_DONE;
        out->since_ms = t.done_ms;
        out->took_ms =
            t.claimed_ms >= 0 && t.done_ms >= t.claimed_ms ? t.done_ms - t.claimed_ms : -1;
        break;
    case DQ_STATE_FAILED: {
        char err1[160];
        out->run = SCHED_RUN_FAILED;
        out->since_ms = t.failed_ms;
        copy_first_line(err1, sizeof err1, t.error, t.error_len);
        snprintf(out->text, sizeof out->text, "%.40s: %.150s", t.reason ? t.reason : "?", err1);
        break;
    }
    default:
        out->run = SCHED_RUN_SCHEDULED;
        copy_first_line(out->text, sizeof out->text, t.last_error, t.last_error_len);
        break;
    }
    copy_first_line(out->worker, sizeof out->worker, t.worker, t.worker_len);
    dq_task_clear(&t);
    return DQ_OK;
}

/* The schedules, and the last runs of the rows the view shows (j->sched_first, at most
 * j->sched_rows lookups). @quiet: after a pause or resume, whose status stays. */
static void
sched_load(dq_client *c, struct job *j, bool quiet)
{
    struct action_result *r = &j->result;
    dq_err err = {0};

    if (dq_schedule_ls(c, j->queue, &r->scheds, &err) != DQ_OK) {
        if (!quiet)
            job_status(j, true, "schedules: %s", err.msg);
        return;
    }
    r->sched_last = calloc(r->scheds.n > 0 ? r->scheds.n : 1, sizeof *r->sched_last);
    if (r->sched_last == NULL) {
        dq_schedules_free(&r->scheds);
        if (!quiet)
            job_status(j, true, "schedules: out of memory");
        return;
    }
    for (size_t i = j->sched_first; i < r->scheds.n && i - j->sched_first < j->sched_rows; i++) {
        struct sched_last *l = &r->sched_last[i];
        if (sched_lookup(c, j->queue, &r->scheds.items[i], l, &err) != DQ_OK) {
            /* Redis is slow or gone: the rest stay unknown until the next refresh */
            l->run = SCHED_RUN_UNKNOWN;
            snprintf(l->text, sizeof l->text, "lookup failed: %.180s", err.msg);
            break;
        }
    }
    r->have_scheds = true;
}

static void
job_schedules(dq_client *c, struct job *j, int64_t started_ms)
{
    sched_load(c, j, false);
}

/* P in the Schedules view (after y): the schedule script, as delayq schedule pause and
 * resume (audited), then the list as it is now. */
static void
job_sched_pause(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};
    bool pause = j->act == ACT_SCHED_PAUSE, changed = false;
    int64_t next = -1;
    char what[DQ_ID_MAX + 24], when[DQ_TIME_BUFSZ];
    int rc = pause ? dq_schedule_pause(c, j->queue, j->id, &changed, &err)
                   : dq_schedule_resume(c, j->queue, j->id, &next, &changed, &err);

    snprintf(what, sizeof what, "%s schedule %s", pause ? "pause" : "resume", j->id);
    if (rc != DQ_OK) {
        job_failed(c, j, started_ms, &err, what, false);
        return;
    }
    dq_time_format(when, sizeof when, next);
    if (!changed)
        job_status(j, false, "schedule %s was already %s", j->id, pause ? "paused" : "active");
    else if (pause)
        job_status(j, false, "paused schedule %s: it fires no more until resumed (P)", j->id);
    else
        job_status(j, false, "resumed schedule %s: next run %s", j->id, next >= 0 ? when : "none");
    sched_load(c, j, true);
}

/* ---- history (PROTOCOL.md, "History: per-minute rollups") ----------------------- */

/* The History view: the span's rollups (one history call, at most 1 440 minutes read on the
 * server) and the newest audit entries for its marks (one call). Only while the view is
 * open, once a minute or so (app_view_refresh_ms): never on the 2 s refresh. */
static void
job_history(dq_client *c, struct job *j, int64_t started_ms)
{
    struct action_result *r = &j->result;
    const struct hist_span *sp = &app_hist_spans[j->hist_span];
    dq_err err = {0};

    if (dq_history_get(c, j->queue, sp->span_ms, sp->step_ms, &r->hist, &err) != DQ_OK) {
        job_status(j, true, "history: %s", err.msg);
        return;
    }
    /* with history off there is nothing to mark */
    if (r->hist.history_minutes > 0 &&
        dq_audit_get(c, j->queue, DQ_CALL_MAX, &r->audit, &err) != DQ_OK) {
        dq_history_free(&r->hist);
        job_status(j, true, "history: the audit log: %s", err.msg);
        return;
    }
    r->hist_span = j->hist_span;
    r->have_hist = true;
}

static void
job_errors(dq_client *c, struct job *j, int64_t started_ms)
{
    dq_err err = {0};

    if (dq_errors_get(c, j->queue, &j->result.errors, &err) == DQ_OK)
        j->result.have_errors = true;
    else
        job_status(j, true, "errors: %s", err.msg);
}

/*
 * Every action's Redis side, one row per action, in the order of enum action: what runs
 * on the Redis thread (NULL: the loop does it, or it is a prompt's step and never runs),
 * what the status line says meanwhile, and the audit entry its script writes (NULL:
 * none; job_failed looks for it after an unknown outcome). The rows are designated, so
 * their order cannot slip, and the assert below fails the build when an action has no
 * row.
 */
static const struct {
    void (*run)(dq_client *c, struct job *j, int64_t started_ms);
    const char *name;
    const char *audit;
} kinds[] = {
    [ACT_NONE] = {NULL, "working", NULL},
    [ACT_REQUEUE] = {job_requeue_or_drop, "requeueing", "requeue"},
    [ACT_DROP] = {job_requeue_or_drop, "dropping", "drop"},
    [ACT_REAP] = {job_reap, "recovering expired leases", NULL},
    [ACT_DETAILS] = {job_details, "loading details", NULL},
    [ACT_RUN_NOW] = {job_run_now, "making the task due", NULL},
    [ACT_REQUEUE_DELAY] = {job_requeue_delay, "requeueing", "requeue"},
    [ACT_REQUEUE_ALL] = {job_requeue_many, "requeueing failed tasks", "requeue-all"},
    [ACT_DROP_ALL] = {job_drop_many, "dropping failed tasks", "drop-all"},
    [ACT_AUDIT] = {job_audit, "loading the audit log", NULL},
    [ACT_COPY] = {NULL, "working", NULL},
    [ACT_SEARCH] = {NULL, "working", NULL},
    [ACT_UNFILTER] = {NULL, "working", NULL},
    [ACT_QUEUES] = {job_queues, "loading the queues", NULL},
    [ACT_SWITCH] = {NULL, "working", NULL},
    [ACT_WORKERS] = {job_workers, "loading the workers", NULL},
    [ACT_PAUSE_FOR] = {NULL, "working", NULL},
    [ACT_PAUSE_REASON] = {NULL, "working", NULL},
    [ACT_PAUSE] = {job_pause, "pausing the queue", "pause"},
    [ACT_RESUME] = {job_resume, "resuming the queue", "resume"},
    [ACT_THROTTLE_RATE] = {NULL, "working", NULL},
    [ACT_THROTTLE_CONC] = {NULL, "working", NULL},
    [ACT_THROTTLE_FOR] = {NULL, "working", NULL},
    [ACT_THROTTLE_REASON] = {NULL, "working", NULL},
    [ACT_THROTTLE] = {job_throttle, "throttling the queue", "throttle"},
    [ACT_THROTTLE_OFF] = {job_throttle_off, "lifting the throttle", "throttle off"},
    [ACT_EDIT] = {job_edit, "reading the task to fix", NULL},
    [ACT_REPLACE] = {job_replace, "requeueing with the new payload", "replace"},
    [ACT_ERRORS] = {job_errors, "loading the error groups", NULL},
    [ACT_REQUEUE_FILTER] = {job_requeue_many, "requeueing failed tasks", "requeue-all"},
    [ACT_DROP_FILTER] = {job_drop_many, "dropping failed tasks", "drop-all"},
    [ACT_CANCEL] = {job_cancel, "cancelling", "cancel"},
    [ACT_SPREAD] = {NULL, "working", NULL},
    [ACT_RESCHEDULE_AT] = {NULL, "working", NULL},
    [ACT_RESCHEDULE] = {job_reschedule, "rescheduling", "reschedule"},
    [ACT_SCHEDULES] = {job_schedules, "loading the schedules", NULL},
    [ACT_SCHED_PAUSE] = {job_sched_pause, "pausing the schedule", "schedule pause"},
    [ACT_SCHED_RESUME] = {job_sched_pause, "resuming the schedule", "schedule resume"},
    [ACT_KEYS] = {job_keys, "loading the keys", NULL},
    [ACT_HISTORY] = {job_history, "loading the history", NULL},
    [ACT_PARTS] = {job_parts, "loading the partitions", NULL},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == ACT_COUNT, "jobs.c: an action without a row");

static const char *
audit_action(enum action a)
{
    return (unsigned)a < ACT_COUNT ? kinds[a].audit : NULL;
}

/* Runs on the Redis thread: the library calls an action needs, results into @arg. */
void
job_run(dq_client *c, void *arg)
{
    struct job *j = arg;
    int64_t started_ms = dq_mono_ms();

    if ((unsigned)j->act < ACT_COUNT && kinds[j->act].run != NULL)
        kinds[j->act].run(c, j, started_ms);
}

const char *
job_name(enum action a)
{
    return (unsigned)a < ACT_COUNT ? kinds[a].name : "working";
}

void
search_run(dq_client *c, void *arg)
{
    struct search_step *s = arg;
    dq_err err = {0};

    s->rc = dq_search_step(c, s->queue, (dq_view)s->view, s->needle, 100, &s->cur, &s->found, &err);
    snprintf(s->error, sizeof s->error, "%s", s->rc == DQ_OK ? "" : err.msg);
}

void
fetch_run(dq_client *c, void *arg)
{
    struct fetch *f = arg;

    model_snapshot(c, f->queue, f->keep, f->group, f->offsets, f->limits, f->config, f->history,
                   &f->snap);
    snprintf(f->endpoint, sizeof f->endpoint, "%s", dq_client_endpoint(c));
}
