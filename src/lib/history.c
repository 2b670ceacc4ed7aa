/* SPDX-License-Identifier: MIT */
/*
 * history.c: the per-minute rollups read back (docs/PROTOCOL.md 13, the reader 5.33),
 * and the run-time histogram's quantiles. history.lua takes up to DQ_HISTORY_CALL_MIN
 * minutes a call, one HMGET each; this reads HISTORY_CHUNK_MIN a call, newest chunk
 * first (that call tells the server's minute, so the older chunks name their last
 * minute and a minute that turns meanwhile cannot shift them), and merges the rows into
 * the caller's steps, which may straddle two chunks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "err.h"
#include "parts.h"
#include "reply.h"
#include "scripts.h"

/* Minutes one call reads. A day of full minute hashes in one script call held Redis for
 * 32 ms (redis 7.0.15 on 2 shared cores), which every other client of the server waits
 * out; 240 minutes a call measured 7 to 20 ms under a load of 6, for six round trips a
 * day. */
#define HISTORY_CHUNK_MIN 240

const int64_t dq_run_bounds_ms[DQ_RUN_BUCKETS - 1] = {5,   10,   25,   50,   100,  250,
                                                      500, 1000, 2500, 5000, 10000};

int64_t
dq_run_quantile(const int64_t run[DQ_RUN_BUCKETS], double q)
{
    double total = 0, cum = 0, rank;
    size_t last = 0;

    if (!(q >= 0.0 && q <= 1.0)) /* NaN too */
        return -1;
    for (size_t i = 0; i < DQ_RUN_BUCKETS; i++) {
        total += run[i] > 0 ? (double)run[i] : 0.0;
        if (run[i] > 0)
            last = i;
    }
    if (total <= 0)
        return -1;
    rank = q * total;
    for (size_t i = 0; i < DQ_RUN_BUCKETS; i++) {
        double n = run[i] > 0 ? (double)run[i] : 0.0;
        if (n == 0)
            continue;
        /* the rank-th run is in this bucket: somewhere between its bounds, so the
         * interpolated value is off by at most the bucket's width */
        if (cum + n >= rank || i == last) { /* (the last: sums past 2^53 round) */
            if (i == DQ_RUN_BUCKETS - 1)
                return dq_run_bounds_ms[DQ_RUN_BUCKETS - 2]; /* open: its lower bound */
            double lo = i == 0 ? 0.0 : (double)dq_run_bounds_ms[i - 1];
            double hi = (double)dq_run_bounds_ms[i];
            double frac = (rank - cum) / n;
            if (frac < 0)
                frac = 0;
            return (int64_t)llround(lo + (hi - lo) * frac);
        }
        cum += n;
    }
    return -1; /* (not reached: the last bucket that counts answers) */
}

bool
dq_run_quantile_open(const int64_t run[DQ_RUN_BUCKETS], double q)
{
    double total = 0, below = 0;

    for (size_t i = 0; i < DQ_RUN_BUCKETS; i++) {
        total += run[i] > 0 ? (double)run[i] : 0;
        if (i < DQ_RUN_BUCKETS - 1)
            below += run[i] > 0 ? (double)run[i] : 0;
    }
    return total > 0 && below < q * total;
}

/* @a + @b of counts, a negative @b counting 0, stopping at INT64_MAX (hostile values from
 * Redis cannot overflow a sum). */
static int64_t
sat_add(int64_t a, int64_t b)
{
    if (b <= 0)
        return a;
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

void
dq_history_row_add(dq_history_row *sum, const dq_history_row *r)
{
    sum->enqueued = sat_add(sum->enqueued, r->enqueued);
    sum->started = sat_add(sum->started, r->started);
    sum->done = sat_add(sum->done, r->done);
    sum->retried = sat_add(sum->retried, r->retried);
    sum->failed = sat_add(sum->failed, r->failed);
    sum->expired = sat_add(sum->expired, r->expired);
    sum->requeued = sat_add(sum->requeued, r->requeued);
    sum->dropped = sat_add(sum->dropped, r->dropped);
    sum->lost = sat_add(sum->lost, r->lost);
    for (size_t b = 0; b < DQ_RUN_BUCKETS; b++)
        sum->run[b] = sat_add(sum->run[b], r->run[b]);
    sum->run_sum_ms = sat_add(sum->run_sum_ms, r->run_sum_ms);
}

void
dq_history_free(dq_history *h)
{
    if (h == NULL)
        return;
    free(h->rows);
    memset(h, 0, sizeof *h);
}

/* The step each call asks for: the largest divisor of @step_min that one call takes, so
 * each of its rows lies inside one of the caller's steps. */
static int64_t
call_step(int64_t step_min)
{
    for (int64_t d = step_min < DQ_HISTORY_CALL_MIN ? step_min : DQ_HISTORY_CALL_MIN; d > 1; d--)
        if (step_min % d == 0)
            return d;
    return 1;
}

/* One call: the @span_min minutes ending with minute @end_min (-1: the current one). */
static int
history_call(dq_client *c, const char *queue, int64_t span_min, int64_t step_min, int64_t end_min,
             dq_history *part, dq_err *err)
{
    struct dq_args a;
    int rc;

    dq_history_free(part);
    dq_args_init(&a);
    dq_args_i64(&a, span_min);
    dq_args_i64(&a, step_min);
    if (end_min >= 0)
        dq_args_i64(&a, end_min);
    rc = dq_scripts_run(c, DQ_SCRIPT_HISTORY, queue, &a, dq_reply_history, part, err);
    dq_args_free(&a);
    if (rc == DQ_OK && part->step_ms != step_min * 60000)
        rc = dq_err_set(err, DQ_EPROTO, "history reply: step of %lld ms, asked for %lld",
                        (long long)part->step_ms, (long long)(step_min * 60000));
    return rc;
}

/* The merge target: rows of the caller's step, the first at step index s0. */
struct merge {
    dq_history_row *rows;
    int64_t *sample_at; /* at_ms of the call row whose sample a row holds; -1: none */
    size_t n;
    int64_t s0, step_ms;
};

/* Adds the rows of @part, which read minutes @lo_min..@hi_min; called newest call first,
 * so of two call rows with the same start (a step split between two calls, each starting
 * it) the newer's sample stays. */
static int
merge_part(struct merge *m, const dq_history *part, int64_t lo_min, int64_t hi_min, dq_err *err)
{
    int64_t call_ms = part->step_ms;
    int64_t lo_ms = lo_min * 60000 / call_ms * call_ms, hi_ms = hi_min * 60000;

    for (size_t i = 0; i < part->n; i++) {
        const dq_history_row *p = &part->rows[i];
        if (p->at_ms < lo_ms || p->at_ms > hi_ms)
            return dq_err_set(err, DQ_EPROTO,
                              "history reply: row %zu starts at %lld ms, outside the minutes "
                              "asked for (%lld..%lld ms)",
                              i + 1, (long long)p->at_ms, (long long)lo_ms, (long long)hi_ms);
        int64_t k = p->at_ms / m->step_ms - m->s0;
        if (k < 0 || (size_t)k >= m->n) /* (the check above keeps it in) */
            return dq_err_set(err, DQ_EPROTO, "history reply: row %zu is outside the span", i + 1);
        dq_history_row *r = &m->rows[k];
        dq_history_row_add(r, p);
        if (p->backlog >= 0 && p->at_ms > m->sample_at[k]) {
            r->backlog = p->backlog;
            r->oldest_due_ms = p->oldest_due_ms;
            m->sample_at[k] = p->at_ms;
        }
    }
    return DQ_OK;
}

/* dq_history_get of one partition (or of a queue that has one). */
static int
history_one(dq_client *c, const char *queue, int64_t span_ms, int64_t step_ms, dq_history *out,
            dq_err *err)
{
    dq_history part = {0};
    struct merge m = {0};
    int64_t span_min, step_min, d, chunk, now_min, first_min, done;
    int rc;

    if (out == NULL)
        return dq_err_set(err, DQ_EINVAL, "history: no result to fill");
    memset(out, 0, sizeof *out);
    if (span_ms <= 0 || span_ms > DQ_HISTORY_SPAN_MAX)
        return dq_err_set(err, DQ_EINVAL, "history: span of %lld ms: expected 1 ms..7d",
                          (long long)span_ms);
    if (step_ms < 60000 || step_ms > DQ_HISTORY_SPAN_MAX || step_ms % 60000 != 0)
        return dq_err_set(err, DQ_EINVAL,
                          "history: step of %lld ms: expected a whole number of minutes, 1m..7d",
                          (long long)step_ms);
    span_min = (span_ms + 59999) / 60000;
    step_min = step_ms / 60000;
    d = call_step(step_min);

    /* the newest chunk first: it says which minute is the current one */
    chunk = span_min < HISTORY_CHUNK_MIN ? span_min : HISTORY_CHUNK_MIN;
    if ((rc = history_call(c, queue, chunk, d, -1, &part, err)) != DQ_OK)
        goto out;
    now_min = part.now_ms / 60000;
    first_min = now_min - span_min + 1;
    if (first_min < 0) {
        rc = dq_err_set(err, DQ_EPROTO, "history reply: now (%lld ms) is before the span",
                        (long long)part.now_ms);
        goto out;
    }
    m.step_ms = step_ms;
    m.s0 = first_min / step_min;
    m.n = (size_t)(now_min / step_min - m.s0 + 1);
    m.rows = calloc(m.n, sizeof *m.rows);
    m.sample_at = malloc(m.n * sizeof *m.sample_at);
    if (m.rows == NULL || m.sample_at == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < m.n; i++) {
        m.rows[i].at_ms = (m.s0 + (int64_t)i) * step_ms;
        m.rows[i].backlog = m.rows[i].oldest_due_ms = -1;
        m.sample_at[i] = -1;
    }
    out->now_ms = part.now_ms;
    out->step_ms = step_ms;
    out->history_minutes = part.history_minutes;
    if ((rc = merge_part(&m, &part, now_min - chunk + 1, now_min, err)) != DQ_OK)
        goto out;
    /* Minutes older than the retention have expired (or were never written: history
     * off), so the older chunks stop there and their rows stay empty. A minute's hash
     * lives until (minute + 1 + history_minutes) * 60000: minute m can be there while
     * m >= now_min - history_minutes, and one more for the clock between two calls. */
    int64_t oldest = now_min - out->history_minutes - 1;
    for (done = chunk; done < span_min; done += chunk) {
        int64_t end = now_min - done;
        chunk = span_min - done < HISTORY_CHUNK_MIN ? span_min - done : HISTORY_CHUNK_MIN;
        if (end - chunk + 1 < oldest)
            chunk = end - oldest + 1;
        if (chunk <= 0)
            break;
        if ((rc = history_call(c, queue, chunk, d, end, &part, err)) != DQ_OK ||
            (rc = merge_part(&m, &part, end - chunk + 1, end, err)) != DQ_OK)
            goto out;
    }
    out->rows = m.rows;
    out->n = m.n;
    m.rows = NULL;
out:
    dq_history_free(&part);
    free(m.rows);
    free(m.sample_at);
    if (rc != DQ_OK)
        memset(out, 0, sizeof *out);
    return rc;
}

/* Adds partition @h's rows to @sum's, row by row of the same start (every partition keeps
 * its minutes by server minute, and the steps are aligned to the epoch, so a row of one
 * is a row of the other; a minute that turned between the two reads leaves @h's newest
 * row out): counters as dq_history_row_add, the backlog samples summed, the oldest due
 * age the largest; a row without a sample adds none. */
static void
history_add(dq_history *sum, const dq_history *h)
{
    for (size_t i = 0; i < h->n && sum->n > 0; i++) {
        const dq_history_row *r = &h->rows[i];
        int64_t k = (r->at_ms - sum->rows[0].at_ms) / sum->step_ms;
        if (k < 0 || (size_t)k >= sum->n || sum->rows[k].at_ms != r->at_ms)
            continue;
        dq_history_row *t = &sum->rows[k];
        dq_history_row_add(t, r);
        if (r->backlog >= 0)
            t->backlog = t->backlog < 0 ? r->backlog : sat_add(t->backlog, r->backlog);
        if (r->oldest_due_ms > t->oldest_due_ms)
            t->oldest_due_ms = r->oldest_due_ms;
    }
    if (h->now_ms > sum->now_ms)
        sum->now_ms = h->now_ms;
}

int
dq_history_get(dq_client *c, const char *queue, int64_t span_ms, int64_t step_ms, dq_history *out,
               dq_err *err)
{
    const struct dq_parts *p;
    dq_history h = {0};
    int rc;

    if (out == NULL)
        return dq_err_set(err, DQ_EINVAL, "history: no result to fill");
    memset(out, 0, sizeof *out);
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all <= 1)
        return history_one(c, queue, span_ms, step_ms, out, err);
    /* a partitioned queue: each partition read as one queue, partition 0 first (its
     * retention and minutes stand for the queue's), the others added row by row. The
     * reads are of partitions by name, which touch no map: p stays valid. */
    if ((rc = history_one(c, p->names[0], span_ms, step_ms, out, err)) != DQ_OK)
        return rc;
    for (size_t i = 1; i < p->all; i++) {
        dq_err e1 = {0};
        if ((rc = history_one(c, p->names[i], span_ms, step_ms, &h, &e1)) != DQ_OK) {
            dq_err_set(err, rc, "partition %zu: %.200s", i, e1.msg);
            dq_history_free(out);
            return rc;
        }
        if (h.history_minutes > 0) /* off there: absent, whatever its hashes still hold */
            history_add(out, &h);
        dq_history_free(&h);
    }
    return DQ_OK;
}
