/* SPDX-License-Identifier: MIT */
/*
 * reply.h: the parsers of the scripts' replies (docs/PROTOCOL.md section 5), one per
 * reply shape, each a dq_parse_fn for dq_scripts_run. A parser copies what it needs
 * into its result (the reply is freed after it returns), fails with DQ_EPROTO naming
 * the element and what was expected ("claim reply: element 2 (next due) is a string,
 * expected an integer"; elements count from 1, as redis-cli and Lua count them), or
 * with DQ_ENOMEM. What a failed parser leaves in its result is freed by the result's
 * own free function. The only file besides client.c, scripts.c and registry.c that
 * reads a redisReply.
 */
#ifndef DQ_LIB_REPLY_H
#define DQ_LIB_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "delayq.h"

struct redisReply;

/* The fields of dq_config in the order of the config reply and PROTOCOL.md 8.1. */
#define DQ_CONFIG_FIELDS 26
/* How many of them every config reply has (the last two came with the worker registry). */
#define DQ_CONFIG_FIELDS_OLD 8
extern const char *const dq_config_fields[DQ_CONFIG_FIELDS];
/* Field @i of @c (i < DQ_CONFIG_FIELDS). */
int64_t *dq_config_slot(dq_config *c, size_t i);
/* The index of max_attempts, which the struct spells -1 for "unlimited" and Redis 0. */
#define DQ_CONFIG_MAX_ATTEMPTS 4
/* The index of worker_lost_ms, likewise -1 for Redis 0 ("three beat intervals"). */
#define DQ_CONFIG_WORKER_LOST 8
/* The index of time_limit_ms, likewise -1 for Redis 0 ("none"). */
#define DQ_CONFIG_TIME_LIMIT 17
/* The index of done_retention, likewise -1 for Redis 0 ("keep none"). */
#define DQ_CONFIG_DONE_RETENTION 18
/* The index of done_retention_ms, likewise -1 for Redis 0 ("no age limit"). */
#define DQ_CONFIG_DONE_RETENTION_MS 19
/* The queue limits, 21..23 (1-based; indexes 20..22), likewise -1 for Redis 0 ("off"). */
#define DQ_CONFIG_RATE_LIMIT        20
#define DQ_CONFIG_CONCURRENCY_LIMIT 22
/* The index of key_concurrency, likewise -1 for Redis 0 ("no limit"). */
#define DQ_CONFIG_KEY_CONCURRENCY 23
/* The index of history_minutes, likewise -1 for Redis 0 ("off"). */
#define DQ_CONFIG_HISTORY_MINUTES 24
/* The index of partitions (from the map dq:{Q}:parts, not the config hash; lib/parts.h). */
#define DQ_CONFIG_PARTITIONS 25

/* config: @out is a dq_config. */
int dq_reply_config(const struct redisReply *r, void *out, dq_err *err);

/* enqueue: @out is a struct dq_enqueue_reply, n entries to fill in task order. */
struct dq_enqueue_reply {
    dq_enqueued *e;
    size_t n;
};
int dq_reply_enqueue(const struct redisReply *r, void *out, dq_err *err);

/* claim: @out is a dq_claimed (the lease deadlines are left to the caller). */
int dq_reply_claim(const struct redisReply *r, void *out, dq_err *err);

/* claim with results to settle (and the claim-ahead argument, so the reply ends with the
 * microseconds of its TIME): @out is a struct dq_claim_settle_reply; the claim goes to
 * cl, each result's rc, err and retry_due_ms to res (whose outcomes say what each
 * result's reply must be). */
struct dq_claim_settle_reply {
    dq_claimed *cl;
    dq_settle *res;
    size_t n;
};
int dq_reply_claim_settle(const struct redisReply *r, void *out, dq_err *err);

/* ack of several tasks: @out is a struct dq_ack_reply; rcs (and errs, if not NULL) have
 * n entries. */
struct dq_ack_reply {
    size_t n;
    int *rcs;
    dq_err *errs;
};
int dq_reply_ack_many(const struct redisReply *r, void *out, dq_err *err);

/* retry: @out is a dq_retried. */
int dq_reply_retry(const struct redisReply *r, void *out, dq_err *err);

/* reap: @out is a dq_reaped. */
int dq_reply_reap(const struct redisReply *r, void *out, dq_err *err);

/* requeue and drop by ids: @out is a size_t, the count moved or dropped. */
int dq_reply_requeue_ids(const struct redisReply *r, void *out, dq_err *err);
int dq_reply_drop_ids(const struct redisReply *r, void *out, dq_err *err);

/* One step of requeue all / drop all: @out is the caller's dq_bulk cursor. */
int dq_reply_requeue_all(const struct redisReply *r, void *out, dq_err *err);
int dq_reply_drop_all(const struct redisReply *r, void *out, dq_err *err);

/* find: @out is a struct dq_find_reply. On a "more" reply the cursor is kept for the
 * next step; on a hit *out is filled and found set. */
struct dq_find_reply {
    dq_task *out;
    bool found, more;
    struct dq_buf cursor; /* the scan cursor: the last member looked at */
    char cursor_score[32];
    /* not found, but its id's unique-for window is open until this server ms (-1: no) */
    int64_t unique_until_ms, now_ms;
};
int dq_reply_find(const struct redisReply *r, void *out, dq_err *err);

/* stats: @out is a dq_stats. */
int dq_reply_stats(const struct redisReply *r, void *out, dq_err *err);

/* page: @out is a struct dq_page_reply; tasks are of @view. */
struct dq_page_reply {
    dq_page *page;
    dq_view view;
};
int dq_reply_page(const struct redisReply *r, void *out, dq_err *err);

/* search: @out is a struct dq_search_reply; matches are appended to found. */
struct dq_search_reply {
    dq_search *cur;
    dq_page *found;
    dq_view view;
};
int dq_reply_search(const struct redisReply *r, void *out, dq_err *err);

/* errors (error groups): @out is a dq_errors; the caller frees it on error too. */
int dq_reply_errors(const struct redisReply *r, void *out, dq_err *err);
/* keys: @out is a dq_keys (rows allocated here; dq_keys_free). */
int dq_reply_keys(const struct redisReply *r, void *out, dq_err *err);

/* audit: @out is a dq_audit. */
int dq_reply_audit(const struct redisReply *r, void *out, dq_err *err);

/* extend: @out is a struct dq_extend_reply; lost (if not NULL) has n entries. */
struct dq_extend_reply {
    bool *lost;
    size_t n;
};
int dq_reply_extend(const struct redisReply *r, void *out, dq_err *err);

/* ---- workers and pause (PROTOCOL.md 5.20-5.22) ---------------------------------------- */

/* Whether a claim reply says the queue is paused ({now, next due, 0, "paused", until,
 * results...}): sets cl->paused and paused_until_ms and returns true; false for any
 * other reply. dq_reply_claim reads the rest either way. */
bool dq_reply_claim_paused(const struct redisReply *r, dq_claimed *cl);

/* The pause fields after the @n counts of a stats reply (absent from older scripts:
 * not paused). */
int dq_reply_stats_pause(const struct redisReply *r, size_t n, dq_stats *s, dq_err *err);

/* heartbeat: @out is a dq_beat_reply. */
int dq_reply_heartbeat(const struct redisReply *r, void *out, dq_err *err);

/* workers: @out is a dq_workers. */
int dq_reply_workers(const struct redisReply *r, void *out, dq_err *err);

/* pause: @out is a struct dq_pause_reply. */
struct dq_pause_reply {
    int64_t now_ms, paused_until_ms;
    bool was_paused;
};
int dq_reply_pause(const struct redisReply *r, void *out, dq_err *err);
/* Two integers (reschedule.lua's {old due, new due}) into int64_t[2]. */
int dq_reply_ints2(const struct redisReply *r, void *out, dq_err *err);

/* cancel.lua: {worker, attempt} into a dq_cancelled. */
int dq_reply_cancel(const struct redisReply *r, void *out, dq_err *err);

/* schedule (5.30): @out is int64_t[2], the next firing and the changed flag; also
 * schedule_fill's {firings listed, next firing}. */
int dq_reply_schedule(const struct redisReply *r, void *out, dq_err *err);
/* schedule_get (5.30): @out is a dq_schedules (free with dq_schedules_free). */
int dq_reply_schedule_get(const struct redisReply *r, void *out, dq_err *err);

/* overview (PROTOCOL.md 5.15a): one row of the all-queues overview (lib/overview.h
 * reads them). */
/* Minutes of done / failed counts a row carries for its sparklines (the script's k). */
#define DQ_OVERVIEW_MINUTES 10

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
    /* fields of the queue's partition map, the element after the throttle's (0: not
     * partitioned, or scripts that do not say); dq_overview_get then sums the partitions */
    int64_t parts_map;
};

/* @out is a struct dq_overview_row whose queue is set; the rest is filled. */
int dq_reply_overview(const struct redisReply *r, void *out, dq_err *err);

/* history (PROTOCOL.md 5.33): one call's reply into a dq_history (rows
 * allocated here; dq_history_free, also after a failure part way). Its step is a whole
 * number of minutes up to DQ_HISTORY_CALL_MIN, its rows are in time order, at most
 * DQ_HISTORY_CALL_MIN + 1 (a partial first step). */
/* Minutes one history call reads, at most (a longer span takes several calls). */
#define DQ_HISTORY_CALL_MIN 1440
int dq_reply_history(const struct redisReply *r, void *out, dq_err *err);

#endif /* DQ_LIB_REPLY_H */
