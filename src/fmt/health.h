/* SPDX-License-Identifier: MIT */
/*
 * health.h: the one-line verdict on a queue ("oldest due has waited 5m (limit 1m)"),
 * computed from what one refresh already knows, in the same words wherever it shows:
 * the inspector's verdict line and `delayq stats`. Pure: no I/O.
 */
#ifndef DQ_FMT_HEALTH_H
#define DQ_FMT_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

enum dq_health_level { DQ_HEALTH_OK = 0, DQ_HEALTH_WARN, DQ_HEALTH_BAD };

/* What the verdict is made of. A negative threshold turns its check off. */
struct dq_health_facts {
    const dq_stats *stats;          /* counts, and the pause */
    int64_t max_oldest_due_ms;      /* a due task waiting longer is a problem */
    int64_t max_far_future;         /* more tasks past the far-future horizon is a problem */
    int64_t used_memory, maxmemory; /* Redis memory; maxmemory 0: no limit */
    int memory_warn_pct;            /* used over this share of maxmemory is a problem */
    /* the failure thresholds over the stats' outcome window (alert_fail_pct, a share of
     * done + failed, judged from 10 outcomes on; alert_fail_per_min); <= 0: off */
    int64_t fail_pct, fail_per_min;
    /* the worker registry (dq_workers_get); registered < 0: not known */
    int64_t workers_registered, workers_live, workers_lost;
    int64_t last_beat_ms;       /* the latest beat of any worker, server time; < 0: none */
    int64_t workers_hung;       /* handlers hung past their time limit (dq_health_hung) */
    const char *hung_worker;    /* the worker with the most of them (borrowed), or NULL */
    double retry_rate;          /* retries per second lately; < 0: not known */
    const char *retry_error;    /* the last error of a task waiting to retry (borrowed), or NULL */
    int64_t max_running_ms;     /* a task running longer is a problem */
    int64_t long_running;       /* tasks seen running longer than that */
    int64_t longest_running_ms; /* the longest of them; < 0: not known */
    /* the queue is not known on the server (dq_queue_known): the sentence
     * dq_health_unknown_queue wrote (borrowed), else NULL */
    const char *unknown_queue;
};

/*
 * Writes the verdict into @buf (snprintf semantics): every problem found, joined by
 * "; " (a pause first, as it explains the rest), or one short phrase when all is well.
 * Returns the worst level. BAD: no live worker among registered ones while tasks are
 * due, the oldest due over its limit, expired leases, failing over a threshold in the
 * outcome window ("failing 62% over 5m (41/min), 88% 'error: card declined'"), the
 * far-future backlog over its limit. WARN: paused, no worker registered, some workers
 * lost, Redis memory over its share. `stats --check` fails on BAD (and on a pause). A
 * queue that is not known is BAD and that sentence alone: nothing else can be said of it.
 */
enum dq_health_level dq_health_verdict(const struct dq_health_facts *f, char *buf, size_t size);

/*
 * The sentence for a queue that is not known (dq_queue_known) on @where (the server,
 * dq_client_endpoint), into @buf (snprintf semantics), with a way out:
 *   queue "billng" is not known on 127.0.0.1:6379 (did you mean billing?)
 * A suggestion when registered names in @known are close to @queue (edit distance,
 * letter case and swapped neighbours counting one: up to 1 for names of 1-3 bytes, 2 for
 * 4-7, 3 beyond, and less than the name's length), the closest ones, at most three;
 * otherwise up to four registered names ("known: a, b, c, d and 2 more"), or "(no queue
 * is known there yet)". @known as dq_queues_get() filled it (sorted; total may be more
 * than its names); NULL: no names could be read, and nothing is added.
 */
void dq_health_unknown_queue(char *buf, size_t size, const char *queue, const char *where,
                             const dq_queues *known);

/* The latest beat among the workers @w lists (server ms), or -1 when it lists none: the
 * verdict's last_beat_ms, for "no live worker for 3m12s". */
int64_t dq_health_last_beat(const dq_workers *w);

/* The handlers hung past their time limit over the live workers @w lists, and in
 * *worst (may be NULL) the name of the worker with the most (borrowed from @w), NULL
 * when none: the verdict's workers_hung and hung_worker. */
int64_t dq_health_hung(const dq_workers *w, const char **worst);

/*
 * The throttle in @s (dq_throttle), for the inspector's header after "THROTTLED" and
 * stats' line: "10/s by alice@ops: payments-api recovering, until 09:40" (rate and/or
 * "3 in flight"; the reason when given; the end as server time, UTC, hh:mm within a
 * day, else the date too, or "until lifted"). Not escaped: by and reason come from
 * Redis, so the caller escapes the line (src/fmt/esc.c). "" when none is in force.
 * snprintf semantics.
 */
size_t dq_health_throttle(char *buf, size_t size, const dq_stats *s);

/* A limit holds due tasks back this recently (server ms) for the verdict to say so. */
#define DQ_HEALTH_LIMITED_RECENT_MS 10000

/* "ok", "warn" or "bad" (stats --json). */
const char *dq_health_level_name(enum dq_health_level level);

#endif /* DQ_FMT_HEALTH_H */
