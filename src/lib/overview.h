/* SPDX-License-Identifier: MIT */
/*
 * overview.h: one row per queue of the all-queues overview (`delayq queues`, the
 * inspector's Overview), read with one FCALL_RO of lua/overview.lua per queue, pipelined
 * (PROTOCOL.md 5.15a). What a row says (its verdict, its order among the others) is
 * fmt/overview.h's: this file only reads. No printing.
 */
#ifndef DQ_LIB_OVERVIEW_H
#define DQ_LIB_OVERVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

/* Minutes of done / failed counts a row carries for its sparklines (the script's k). */
#define DQ_OVERVIEW_MINUTES 10

/* Calls sent to Redis before their replies are read: a refresh of N queues is
 * ceil(N / DQ_OVERVIEW_PIPELINE) round trips, and the replies held at once are bounded. */
#define DQ_OVERVIEW_PIPELINE 100

struct dq_overview_row {
    char queue[DQ_QUEUE_NAME_MAX + 1];
    int rc;          /* DQ_OK, or why this queue's call failed (the others still count) */
    char error[256]; /* with rc != DQ_OK: the message */
    /* the counts, the pause and the verdict's window, in dq_stats' fields; the
     * cumulative counters, next_due_ms and the largest error group are not read (0, -1
     * and "") */
    dq_stats stats;
    /* the queue's alert_* thresholds (config) */
    int64_t alert_oldest_due_ms, alert_far_future, alert_fail_pct, alert_fail_per_min,
        alert_memory_pct;
    /* the worker registry, counted as dq_workers_get counts it */
    int64_t workers_registered, workers_live, workers_lost;
    int64_t last_beat_ms; /* the latest beat, server ms; -1: none */
    int64_t workers_hung; /* handlers hung past their time limit on live workers */
    char hung_worker[DQ_ID_MAX + 1];
    /* done and failed per minute of server time, oldest first, the current minute last */
    int64_t done_per_min[DQ_OVERVIEW_MINUTES], failed_per_min[DQ_OVERVIEW_MINUTES];
    /* the throttle, when the reply carries one (an element past the sparklines, 1: the
     * queue is held back by its throttle now); -1 while the scripts do not say */
    int throttled;
};

/*
 * Reads the rows of @n queues (rows[i].queue set by the caller; the rest is filled).
 * A call that fails for one queue (an error reply, a key of the wrong type, a reply of
 * another shape) sets that row's rc and error and the others are still read; the return
 * is DQ_OK then. DQ_ECONN / DQ_ETIMEOUT (Redis is not there: no row can be trusted) and
 * DQ_ENOMEM are returned as such. Commands: one FCALL_RO (EVALSHA_RO) per queue, sent
 * DQ_OVERVIEW_PIPELINE at a time; a queue whose call needs the library loaded again is
 * retried alone through the script registry (dq_scripts_run). A cluster client sends them
 * one by one, each to its queue's node.
 */
int dq_overview_get(dq_client *c, struct dq_overview_row *rows, size_t n, dq_err *err);

#endif /* DQ_LIB_OVERVIEW_H */
