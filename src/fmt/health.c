/* SPDX-License-Identifier: MIT */
/* health.c: the queue's verdict line (see health.h). */
#include "health.h"

#include <stdarg.h>
#include <stdio.h>

#include "lib/dur.h"

struct verdict {
    char *buf;
    size_t size, len;
    enum dq_health_level level;
    int n;
};

/* Adds one problem; problems are added worst first, so the first one leads. */
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

enum dq_health_level
dq_health_verdict(const struct dq_health_facts *f, char *buf, size_t size)
{
    struct verdict v = {buf, size, 0, DQ_HEALTH_OK, 0};
    const dq_stats *s = f->stats;
    char d1[32], d2[32];

    if (size > 0)
        buf[0] = '\0';
    if (f->max_oldest_due_ms > 0 && s->oldest_due_age_ms > f->max_oldest_due_ms) {
        dq_dur_format(d1, sizeof d1, s->oldest_due_age_ms);
        dq_dur_format(d2, sizeof d2, f->max_oldest_due_ms);
        problem(&v, DQ_HEALTH_BAD, "oldest due has waited %s (limit %s)", d1, d2);
    }
    if (s->expired_leases > 0)
        problem(&v, DQ_HEALTH_BAD, "%lld lease%s expired: workers died holding tasks (x recovers)",
                (long long)s->expired_leases, s->expired_leases == 1 ? "" : "s");
    if (f->fail_rate >= 1.0)
        problem(&v, DQ_HEALTH_WARN, "failing %.1f/s", f->fail_rate);
    if (f->max_far_future > 0 && s->far_future > f->max_far_future)
        problem(&v, DQ_HEALTH_WARN, "far-future backlog %lld over %lld", (long long)s->far_future,
                (long long)f->max_far_future);
    if (f->maxmemory > 0 && f->memory_warn_pct > 0 &&
        f->used_memory * 100 > f->maxmemory * f->memory_warn_pct)
        problem(&v, DQ_HEALTH_WARN, "Redis memory %lld%% of maxmemory",
                (long long)(f->used_memory * 100 / f->maxmemory));
    if (v.n == 0)
        snprintf(buf, size, "all well");
    return v.level;
}
