/* SPDX-License-Identifier: MIT */
/* health.c: the queue's verdict line (see health.h). */
#include "health.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/dur.h"

struct verdict {
    char *buf;
    size_t size, len;
    enum dq_health_level level;
    int n;
};

static void problem(struct verdict *v, enum dq_health_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Adds one problem, after the ones before it ("; " between them). */
static void
problem(struct verdict *v, enum dq_health_level level, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (v->len >= v->size)
        v->len = v->size > 0 ? v->size - 1 : 0;
    if (v->n > 0 && v->len + 2 < v->size) {
        v->buf[v->len++] = ';';
        v->buf[v->len++] = ' ';
        v->buf[v->len] = '\0';
    }
    va_start(ap, fmt);
    n = vsnprintf(v->buf + v->len, v->size - v->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        v->len += (size_t)n < v->size - v->len ? (size_t)n : v->size - v->len - 1;
    v->level = level > v->level ? level : v->level;
    v->n++;
}

/* "paused by alice@ops 10m ago: deploy rollback, resumes 09:40:00Z" (or "until resumed"). */
static void
pause_problem(struct verdict *v, const dq_stats *s)
{
    char ago[32], until[64] = "until resumed", at[40];

    dq_dur_format(ago, sizeof ago, s->now_ms - s->paused_since_ms);
    if (s->paused_until_ms > 0) {
        dq_time_format(at, sizeof at, s->paused_until_ms);
        /* the time of day is what a person reads; the date only when it is not today */
        snprintf(until, sizeof until, "resumes %s",
                 s->paused_until_ms - s->now_ms < 86400000 ? at + 11 : at);
    }
    problem(v, DQ_HEALTH_WARN, "paused by %s %s ago%s%s, %s", s->paused_by, ago,
            s->pause_reason[0] != '\0' ? ": " : "", s->pause_reason, until);
}

/* @n with a space between groups of three digits ("1 200"), as the verdict says counts. */
static void
grouped(char *buf, size_t size, int64_t n)
{
    char d[32];
    int len = snprintf(d, sizeof d, "%lld", (long long)n), o = 0, neg = n < 0;

    for (int i = 0; i < len && (size_t)o + 2 < size; i++) {
        buf[o++] = d[i];
        int left = len - i - 1;
        if (left > 0 && left % 3 == 0 && !(neg && i == 0))
            buf[o++] = ' ';
    }
    if (size > 0)
        buf[(size_t)o < size ? o : (int)size - 1] = '\0';
}

size_t
dq_health_throttle(char *buf, size_t size, const dq_stats *s)
{
    char rate[DQ_RATE_BUFSZ] = "", until[64] = "until lifted", at[40];
    int n;

    if (!s->throttled)
        return (size_t)snprintf(buf, size, "%s", "");
    if (s->throttle_rate_per_min > 0)
        dq_rate_format(rate, sizeof rate, s->throttle_rate_per_min);
    if (s->throttle_until_ms > 0) {
        dq_time_format(at, sizeof at, s->throttle_until_ms);
        /* hh:mm is what a person reads; the date only when it is not within a day */
        if (s->throttle_until_ms - s->now_ms < 86400000)
            snprintf(until, sizeof until, "until %.5s", at + 11);
        else
            snprintf(until, sizeof until, "until %.10s %.5s", at, at + 11);
    }
    n = snprintf(buf, size, "%s%s%.0lld%s by %s%s%s, %s", rate,
                 rate[0] != '\0' && s->throttle_concurrency > 0 ? ", " : "",
                 (long long)s->throttle_concurrency,
                 s->throttle_concurrency > 0 ? " in flight" : "", s->throttle_by,
                 s->throttle_reason[0] != '\0' ? ": " : "", s->throttle_reason, until);
    return n < 0 ? 0 : (size_t)n;
}

/* "rate-limited: 1 200 due, draining at 10/s, ~2m left" while the rate limit holds due
 * tasks back; "concurrency-limited: 40 due, 3 in flight (limit 3)" while a claim waits
 * for a slot. */
static void
limited_problem(struct verdict *v, const dq_stats *s)
{
    char due[40], rate[DQ_RATE_BUFSZ], left[32];

    if (s->due <= 0 || s->paused)
        return;
    grouped(due, sizeof due, s->due);
    if (s->rate_per_min > 0 && s->rate_held_ms >= 0 &&
        s->now_ms - s->rate_held_ms < DQ_HEALTH_LIMITED_RECENT_MS) {
        dq_rate_format(rate, sizeof rate, s->rate_per_min);
        int64_t ms = s->due * 60000 / s->rate_per_min;
        /* an estimate: whole seconds, then whole minutes, then hours and minutes */
        if (ms < 60000)
            snprintf(left, sizeof left, "%llds", (long long)((ms + 999) / 1000));
        else if (ms < 3600000)
            snprintf(left, sizeof left, "%lldm", (long long)((ms + 30000) / 60000));
        else
            dq_dur_format(left, sizeof left, ms);
        problem(v, DQ_HEALTH_WARN, "rate-limited: %s due, draining at %s, ~%s left", due, rate,
                left);
    } else if (s->concurrency > 0 && s->concurrency_held && s->inflight >= s->concurrency) {
        problem(v, DQ_HEALTH_WARN, "concurrency-limited: %s due, %lld in flight (limit %lld)", due,
                (long long)s->inflight, (long long)s->concurrency);
    }
}

/* Outcomes in a ratio are judged from this many on: 1 failure of 1 is not 100% failing. */
#define FAIL_RATIO_MIN_OUTCOMES 10

/* "failing 62% over 5m (41.0/min), 88% of failed: 'error: card declined (#)'", from the
 * window the scripts count (stats.lua), when its failures cross either threshold. */
static void
failing_problem(struct verdict *v, const struct dq_health_facts *f)
{
    const dq_stats *s = f->stats;
    int64_t outcomes = s->window_done + s->window_failed;
    char win[32];

    if (s->window_ms <= 0 || s->window_elapsed_ms <= 0 || s->window_failed <= 0)
        return;
    double per_min = (double)s->window_failed * 60000.0 / (double)s->window_elapsed_ms;
    bool by_ratio = f->fail_pct > 0 && outcomes >= FAIL_RATIO_MIN_OUTCOMES &&
                    s->window_failed * 100 >= f->fail_pct * outcomes;
    bool by_rate = f->fail_per_min > 0 && per_min >= (double)f->fail_per_min;
    if (!by_ratio && !by_rate)
        return;
    dq_dur_format(win, sizeof win, s->window_ms);
    if (s->top_group[0] != '\0' && s->failed > 0)
        problem(v, DQ_HEALTH_BAD, "failing %lld%% over %s (%.1f/min), %lld%% of failed: '%s'",
                (long long)(s->window_failed * 100 / outcomes), win, per_min,
                (long long)(s->top_group_count * 100 / s->failed), s->top_group);
    else
        problem(v, DQ_HEALTH_BAD, "failing %lld%% over %s (%.1f/min)",
                (long long)(s->window_failed * 100 / outcomes), win, per_min);
}

enum dq_health_level
dq_health_verdict(const struct dq_health_facts *f, char *buf, size_t size)
{
    struct verdict v = {buf, size, 0, DQ_HEALTH_OK, 0};
    const dq_stats *s = f->stats;
    char d1[32], d2[32];

    if (size > 0)
        buf[0] = '\0';
    if (f->unknown_queue != NULL) {
        problem(&v, DQ_HEALTH_BAD, "%s", f->unknown_queue);
        return v.level;
    }
    /* a pause explains everything else on the screen: it goes first */
    if (s->paused)
        pause_problem(&v, s);
    limited_problem(&v, s); /* it explains a growing backlog and the oldest due age */
    if (!s->paused && s->due > 0 && f->workers_registered >= 0 && f->workers_live == 0) {
        if (f->last_beat_ms >= 0) {
            dq_dur_format(d1, sizeof d1, s->now_ms - f->last_beat_ms);
            problem(&v, DQ_HEALTH_BAD, "no live worker for %s while %lld are due", d1,
                    (long long)s->due);
        } else {
            /* maybe workers of an older version, or none started yet: say it, softly */
            problem(&v, DQ_HEALTH_WARN, "no worker registered while %lld are due",
                    (long long)s->due);
        }
    }
    if (f->max_oldest_due_ms >= 0 && s->oldest_due_age_ms > f->max_oldest_due_ms) {
        dq_dur_format(d1, sizeof d1, s->oldest_due_age_ms);
        dq_dur_format(d2, sizeof d2, f->max_oldest_due_ms);
        problem(&v, DQ_HEALTH_BAD, "oldest due has waited %s (limit %s)", d1, d2);
    }
    if (s->expired_leases > 0)
        problem(&v, DQ_HEALTH_BAD, "%lld lease%s expired: workers died holding tasks (x recovers)",
                (long long)s->expired_leases, s->expired_leases == 1 ? "" : "s");
    if (f->workers_hung > 0)
        problem(&v, DQ_HEALTH_WARN,
                "%lld handler%s hung past %s time limit%s%s (asked to stop, still running)",
                (long long)f->workers_hung, f->workers_hung == 1 ? "" : "s",
                f->workers_hung == 1 ? "its" : "their", f->hung_worker ? " on " : "",
                f->hung_worker ? f->hung_worker : "");
    if (f->workers_lost > 0 && f->workers_live > 0)
        problem(&v, DQ_HEALTH_WARN, "%lld worker%s lost", (long long)f->workers_lost,
                f->workers_lost == 1 ? "" : "s");
    if (f->max_running_ms >= 0 && f->long_running > 0) {
        dq_dur_format(d1, sizeof d1, f->longest_running_ms);
        dq_dur_format(d2, sizeof d2, f->max_running_ms);
        if (f->long_running == 1)
            problem(&v, DQ_HEALTH_WARN, "a task has run %s (over %s): a hung handler?", d1, d2);
        else
            problem(&v, DQ_HEALTH_WARN, "%lld tasks running over %s, the longest %s",
                    (long long)f->long_running, d2, d1);
    }
    failing_problem(&v, f);
    if (f->retry_error != NULL && f->retry_rate >= 0.1) {
        /* the first line only: a trace must not take over the verdict */
        problem(&v, DQ_HEALTH_WARN, "retrying %.1f/s, last error: %.*s", f->retry_rate,
                (int)strcspn(f->retry_error, "\n"), f->retry_error);
    } else if (f->retry_error != NULL) {
        problem(&v, DQ_HEALTH_WARN, "tasks waiting to retry, last error: %.*s",
                (int)strcspn(f->retry_error, "\n"), f->retry_error);
    }
    if (f->max_far_future >= 0 && s->far_future > f->max_far_future)
        problem(&v, DQ_HEALTH_BAD, "far-future backlog %lld (limit %lld)", (long long)s->far_future,
                (long long)f->max_far_future);
    if (f->maxmemory > 0 && f->memory_warn_pct > 0 &&
        f->used_memory * 100 > f->maxmemory * f->memory_warn_pct)
        problem(&v, DQ_HEALTH_WARN, "Redis memory %lld%% of maxmemory",
                (long long)(f->used_memory * 100 / f->maxmemory));
    if (v.n == 0)
        snprintf(buf, size, "all well");
    return v.level;
}

static unsigned char
lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Optimal string alignment distance (Levenshtein plus swapped neighbours), letter case
 * ignored; both at most DQ_QUEUE_NAME_MAX bytes (longer ones compare as far apart). */
static int
distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int rows[3][DQ_QUEUE_NAME_MAX + 1];

    if (la > DQ_QUEUE_NAME_MAX || lb > DQ_QUEUE_NAME_MAX)
        return DQ_QUEUE_NAME_MAX;
    int *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = lower((unsigned char)a[i - 1]) != lower((unsigned char)b[j - 1]);
            int d = prev[j] + 1;
            d = cur[j - 1] + 1 < d ? cur[j - 1] + 1 : d;
            d = prev[j - 1] + cost < d ? prev[j - 1] + cost : d;
            if (i > 1 && j > 1 &&
                lower((unsigned char)a[i - 1]) == lower((unsigned char)b[j - 2]) &&
                lower((unsigned char)a[i - 2]) == lower((unsigned char)b[j - 1]) &&
                pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            cur[j] = d;
        }
        int *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

void
dq_health_unknown_queue(char *buf, size_t size, const char *queue, const char *where,
                        const dq_queues *known)
{
    size_t qlen = strlen(queue), n = known != NULL ? known->n : 0;
    int most = qlen <= 3 ? 1 : qlen <= 7 ? 2 : 3, best = most + 1;
    size_t pick[3], npick = 0;
    int len;

    if (size == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        int d = distance(queue, known->names[i]);
        if (d > most || d >= (int)qlen || strcmp(queue, known->names[i]) == 0)
            continue;
        if (d < best) {
            best = d;
            npick = 0;
        }
        if (d == best && npick < 3)
            pick[npick++] = i;
    }
    len = snprintf(buf, size, "queue \"%s\" is not known on %s", queue, where);
    for (size_t i = 0; i < npick; i++) {
        if (len < 0 || (size_t)len >= size)
            return;
        len += snprintf(buf + len, size - (size_t)len, "%s%s",
                        i == 0           ? " (did you mean "
                        : i + 1 == npick ? " or "
                                         : ", ",
                        known->names[pick[i]]);
    }
    if (npick > 0) {
        if (len >= 0 && (size_t)len < size)
            snprintf(buf + len, size - (size_t)len, "?)");
        return;
    }
    if (known == NULL)
        return;
    int64_t total = known->total;
    if (total <= 0 || n == 0) {
        if (len >= 0 && (size_t)len < size)
            snprintf(buf + len, size - (size_t)len, " (no queue is known there yet)");
        return;
    }
    size_t shown = n < 4 ? n : 4;
    for (size_t i = 0; i < shown; i++) {
        if (len < 0 || (size_t)len >= size)
            return;
        len += snprintf(buf + len, size - (size_t)len, "%s%s", i == 0 ? " (known: " : ", ",
                        known->names[i]);
    }
    if (len >= 0 && (size_t)len < size) {
        if (total > (int64_t)shown)
            snprintf(buf + len, size - (size_t)len, " and %lld more)",
                     (long long)(total - (int64_t)shown));
        else
            snprintf(buf + len, size - (size_t)len, ")");
    }
}

int64_t
dq_health_last_beat(const dq_workers *w)
{
    int64_t last = -1;

    for (size_t i = 0; i < w->n; i++)
        if (w->workers[i].last_beat_ms > last)
            last = w->workers[i].last_beat_ms;
    return last;
}

int64_t
dq_health_hung(const dq_workers *w, const char **worst)
{
    int64_t n = 0, most = 0;

    if (worst != NULL)
        *worst = NULL;
    for (size_t i = 0; i < w->n; i++) {
        const dq_worker_info *x = &w->workers[i];
        if (x->lost || x->hung <= 0)
            continue; /* a lost worker's last word is old news */
        n += x->hung;
        if (x->hung > most && worst != NULL) {
            most = x->hung;
            *worst = x->name;
        }
    }
    return n;
}

const char *
dq_health_level_name(enum dq_health_level level)
{
    return level == DQ_HEALTH_OK ? "ok" : level == DQ_HEALTH_WARN ? "warn" : "bad";
}
