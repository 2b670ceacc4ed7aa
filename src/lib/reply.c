/* SPDX-License-Identifier: MIT */
/*
 * reply.c: the scripts' replies read into result structs. Each reply shape has its
 * positions named below, in the order docs/PROTOCOL.md section 5 lists them, and every
 * refusal names the element, what it is and what was expected, so a protocol mismatch
 * (another client's scripts, a proxy, a bug) is found from the message alone.
 */
#include "reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "err.h"
#include "task.h"

/* ---- reading elements ---------------------------------------------------------------- */

/* An integer reply, or a string holding a decimal integer (Lua numbers may arrive as
 * either; a fraction after the point is dropped). */
static bool
as_int(const redisReply *e, int64_t *v)
{
    if (e->type == REDIS_REPLY_INTEGER) {
        *v = e->integer;
        return true;
    }
    if (e->type == REDIS_REPLY_STRING && e->len > 0 && e->len < 24) {
        char tmp[24], *end;
        memcpy(tmp, e->str, e->len);
        tmp[e->len] = '\0';
        long long x = strtoll(tmp, &end, 10);
        if (*end == '\0' || *end == '.') {
            *v = x;
            return true;
        }
    }
    return false;
}

static bool
is_array(const redisReply *r, size_t min)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements >= min;
}

static bool
is_str(const redisReply *e)
{
    return e->type == REDIS_REPLY_STRING;
}

static bool
is_word(const redisReply *e, const char *word)
{
    size_t n = strlen(word);
    return e->len == n && memcmp(e->str, word, n) == 0;
}

/* What @e is, for messages: "an integer", "an array of 3", ... */
static const char *
kind(const redisReply *e, char *buf, size_t size)
{
    switch (e->type) {
    case REDIS_REPLY_STRING:
        return "a string";
    case REDIS_REPLY_INTEGER:
        return "an integer";
    case REDIS_REPLY_ARRAY:
        snprintf(buf, size, "an array of %zu", e->elements);
        return buf;
    case REDIS_REPLY_NIL:
        return "nil";
    case REDIS_REPLY_STATUS:
        return "a status";
    case REDIS_REPLY_ERROR:
        return "an error";
    default:
        return "of an unknown type";
    }
}

/* "<what> reply: <kind of r>, expected <want>". */
static int DQ_PRINTF(4, 5)
    bad_shape(dq_err *err, const char *what, const redisReply *r, const char *want_fmt, ...)
{
    char want[96], k[32];
    va_list ap;

    va_start(ap, want_fmt);
    vsnprintf(want, sizeof want, want_fmt, ap);
    va_end(ap);
    return dq_err_set(err, DQ_EPROTO, "%s reply: %s, expected %s", what, kind(r, k, sizeof k),
                      want);
}

/* "<what> reply: element <pos + 1> (<name>) is <kind of e>, expected <want>". */
static int DQ_PRINTF(6, 7)
    bad_element(dq_err *err, const char *what, size_t pos, const redisReply *e, const char *want,
                const char *name_fmt, ...)
{
    char name[64], k[32];
    va_list ap;

    va_start(ap, name_fmt);
    vsnprintf(name, sizeof name, name_fmt, ap);
    va_end(ap);
    return dq_err_set(err, DQ_EPROTO, "%s reply: element %zu (%s) is %s, expected %s", what,
                      pos + 1, name, kind(e, k, sizeof k), want);
}

/* Element @pos of array @r as an integer into *v. */
static int
get_int(const redisReply *r, size_t pos, const char *what, const char *name, int64_t *v,
        dq_err *err)
{
    if (!as_int(r->element[pos], v))
        return bad_element(err, what, pos, r->element[pos], "an integer", "%s", name);
    return DQ_OK;
}

static int
oom(dq_err *err)
{
    return dq_err_set(err, DQ_ENOMEM, "out of memory");
}

/* ---- config (5.16): field, value pairs --------------------------------------------- */

enum { CONFIG_FIELD, CONFIG_VALUE, CONFIG_PAIR };

/* In index order (append only). */
const char *const dq_config_fields[DQ_CONFIG_FIELDS] = {
    "max_delay_ms",       "max_payload",      "backoff_base_ms",     "backoff_cap_ms",
    "max_attempts",       "failed_retention", "audit_retention",     "far_future_ms",
    "worker_lost_ms",     "worker_prune_ms",  "alert_oldest_due_ms", "alert_far_future",
    "alert_running_ms",   "alert_memory_pct", "alert_window_ms",     "alert_fail_pct",
    "alert_fail_per_min", "time_limit_ms",    "done_retention",      "done_retention_ms",
    "rate_limit",         "rate_burst",       "concurrency_limit",   "key_concurrency",
    "history_minutes",    "partitions",
};

int64_t *
dq_config_slot(dq_config *c, size_t i)
{
    int64_t *slots[DQ_CONFIG_FIELDS] = {
        &c->max_delay_ms,     &c->max_payload,         &c->backoff_base_ms,
        &c->backoff_cap_ms,   &c->max_attempts,        &c->failed_retention,
        &c->audit_retention,  &c->far_future_ms,       &c->worker_lost_ms,
        &c->worker_prune_ms,  &c->alert_oldest_due_ms, &c->alert_far_future,
        &c->alert_running_ms, &c->alert_memory_pct,    &c->alert_window_ms,
        &c->alert_fail_pct,   &c->alert_fail_per_min,  &c->time_limit_ms,
        &c->done_retention,   &c->done_retention_ms,   &c->rate_limit,
        &c->rate_burst,       &c->concurrency_limit,   &c->key_concurrency,
        &c->history_minutes,  &c->partitions};
    return slots[i];
}

int
dq_reply_config(const redisReply *r, void *out, dq_err *err)
{
    dq_config *c = out;

    if (!is_array(r, CONFIG_PAIR * DQ_CONFIG_FIELDS_OLD))
        return bad_shape(err, "config", r, "an array of %d (field, value pairs)",
                         CONFIG_PAIR * DQ_CONFIG_FIELDS);
    /* scripts older than the worker fields answer 8 pairs: those keep their defaults */
    c->worker_prune_ms = 3600000;
    /* and those older than the health thresholds answer 10: likewise */
    c->alert_oldest_due_ms = 300000;
    c->alert_far_future = 100000;
    c->alert_running_ms = 300000;
    c->alert_memory_pct = 90;
    /* and those older than the failure window answer 14 */
    c->alert_window_ms = 300000;
    c->alert_fail_pct = 50;
    c->alert_fail_per_min = 60;
    /* and those older than task time limits answer 17 */
    c->time_limit_ms = 0;
    /* and those older than done retention answer 18 */
    c->done_retention = 0;
    /* and those older than its age limit answer 19 */
    c->done_retention_ms = 0;
    /* and those older than the queue limits answer 20 */
    c->rate_limit = c->rate_burst = c->concurrency_limit = 0;
    /* and those older than per-key limits answer 23 */
    c->key_concurrency = 0;
    /* and those older than history answer 24 (they write none: reported as off) */
    c->history_minutes = 0;
    /* and those older than partitioned queues answer 25: one partition, as they knew */
    c->partitions = 1;
    for (size_t i = 0; i < DQ_CONFIG_FIELDS && CONFIG_PAIR * i + CONFIG_VALUE < r->elements; i++) {
        int rc = get_int(r, CONFIG_PAIR * i + CONFIG_VALUE, "config", dq_config_fields[i],
                         dq_config_slot(c, i), err);
        if (rc != DQ_OK)
            return rc;
    }
    return DQ_OK;
}

/* ---- enqueue (5.2): per task id, status, due ----------------------------------------- */

enum { ENQUEUE_ID, ENQUEUE_STATUS, ENQUEUE_DUE, ENQUEUE_FIELDS };

/* Status codes of the enqueue reply. */
enum {
    ENQUEUE_ADDED,
    ENQUEUE_DUP_SCHEDULED,
    ENQUEUE_DUP_INFLIGHT,
    ENQUEUE_DUP_FAILED,
    ENQUEUE_DUP_UNIQUE, /* done within its unique-for window; due is the ms left of it */
    ENQUEUE_REPLACED,
};

int
dq_reply_enqueue(const redisReply *r, void *out, dq_err *err)
{
    struct dq_enqueue_reply *o = out;

    if (!is_array(r, ENQUEUE_FIELDS * o->n) || r->elements != ENQUEUE_FIELDS * o->n)
        return bad_shape(err, "enqueue", r, "an array of %zu (id, status, due per task)",
                         ENQUEUE_FIELDS * o->n);
    for (size_t i = 0; i < o->n; i++) {
        size_t at = ENQUEUE_FIELDS * i;
        const redisReply *id = r->element[at + ENQUEUE_ID];
        dq_enqueued *e = &o->e[i];
        int64_t status, due;

        if (!is_str(id))
            return bad_element(err, "enqueue", at + ENQUEUE_ID, id, "a string", "id of task %zu",
                               i + 1);
        if (id->len == 0 || id->len >= sizeof e->id)
            return dq_err_set(err, DQ_EPROTO,
                              "enqueue reply: element %zu (id of task %zu) is %zu bytes, "
                              "expected 1..%zu",
                              at + ENQUEUE_ID + 1, i + 1, id->len, sizeof e->id - 1);
        if (!as_int(r->element[at + ENQUEUE_STATUS], &status))
            return bad_element(err, "enqueue", at + ENQUEUE_STATUS, r->element[at + ENQUEUE_STATUS],
                               "an integer", "status of task %zu", i + 1);
        if (!as_int(r->element[at + ENQUEUE_DUE], &due))
            return bad_element(err, "enqueue", at + ENQUEUE_DUE, r->element[at + ENQUEUE_DUE],
                               "an integer", "due of task %zu", i + 1);
        memcpy(e->id, id->str, id->len);
        e->id[id->len] = '\0';
        if (status < ENQUEUE_ADDED || status > ENQUEUE_REPLACED)
            return dq_err_set(err, DQ_EPROTO,
                              "enqueue reply: status of task %zu is %lld, expected 0..%d", i + 1,
                              (long long)status, ENQUEUE_REPLACED);
        e->duplicate = status != ENQUEUE_ADDED && status != ENQUEUE_REPLACED;
        e->replaced = status == ENQUEUE_REPLACED;
        e->where = status == ENQUEUE_DUP_INFLIGHT ? DQ_STATE_INFLIGHT
                   : status == ENQUEUE_DUP_FAILED ? DQ_STATE_FAILED
                   : status == ENQUEUE_DUP_UNIQUE ? DQ_STATE_NONE
                                                  : DQ_STATE_SCHEDULED;
        e->due_ms = status == ENQUEUE_DUP_UNIQUE ? -1 : due;
        e->unique_left_ms = status == ENQUEUE_DUP_UNIQUE ? (due > 0 ? due : 1) : 0;
    }
    return DQ_OK;
}

/* ---- claim (5.3): now, next due, moved to failed, then per task envelope, due ---------- */

enum { CLAIM_NOW, CLAIM_NEXT_DUE, CLAIM_MOVED, CLAIM_HEAD };
enum { CLAIM_ENVELOPE, CLAIM_DUE, CLAIM_TASK_FIELDS };
/* while paused, right after the head: the string "paused" and the pause's end */
enum { CLAIM_PAUSE_MARK, CLAIM_PAUSE_UNTIL, CLAIM_PAUSE_FIELDS };

/* The claim part of a reply whose last @trailing elements are something else. */
static int
claim_tasks(const redisReply *r, size_t trailing, dq_claimed *cl, dq_err *err)
{
    int64_t moved;
    size_t n;
    int rc;

    size_t head = CLAIM_HEAD;
    if (dq_reply_claim_paused(r, cl))
        head += CLAIM_PAUSE_FIELDS; /* the pause, then only the settled results */
    if (!is_array(r, head + trailing) || (r->elements - head - trailing) % CLAIM_TASK_FIELDS != 0)
        return bad_shape(err, "claim", r,
                         "an array of 3, then 2 per task (envelope, due), then one per result, "
                         "now us and the done flag");
    if ((rc = get_int(r, CLAIM_NOW, "claim", "now", &cl->now_ms, err)) != DQ_OK ||
        (rc = get_int(r, CLAIM_NEXT_DUE, "claim", "next due", &cl->next_due_ms, err)) != DQ_OK ||
        (rc = get_int(r, CLAIM_MOVED, "claim", "moved to failed", &moved, err)) != DQ_OK)
        return rc;
    cl->to_failed = (size_t)moved;
    n = (r->elements - head - trailing) / CLAIM_TASK_FIELDS;
    if (n == 0)
        return DQ_OK;
    if (cl->paused)
        return bad_shape(err, "claim", r, "no task while paused");
    cl->tasks = calloc(n, sizeof *cl->tasks);
    if (cl->tasks == NULL)
        return oom(err);
    for (size_t i = 0; i < n; i++) {
        size_t at = CLAIM_HEAD + CLAIM_TASK_FIELDS * i;
        const redisReply *m = r->element[at + CLAIM_ENVELOPE];
        dq_task *t = &cl->tasks[i];

        dq_task_init(t);
        cl->n = i + 1;
        if (!is_str(m))
            return bad_element(err, "claim", at + CLAIM_ENVELOPE, m, "a string",
                               "envelope of task %zu", i + 1);
        if (!as_int(r->element[at + CLAIM_DUE], &t->due_ms))
            return bad_element(err, "claim", at + CLAIM_DUE, r->element[at + CLAIM_DUE],
                               "an integer", "due of task %zu", i + 1);
        if (dq_task_from_env(t, m->str, m->len, "?") != DQ_OK)
            return oom(err);
        t->state = DQ_STATE_INFLIGHT;
        t->claimed_ms = cl->now_ms;
    }
    return DQ_OK;
}

/* The last two elements when the claim was asked with 'd': now_us, then the done flag
 * (1: the queue keeps done tasks, PROTOCOL.md 4.7), which each task keeps for its ack. */
static int
claim_tail(const redisReply *r, dq_claimed *cl, dq_err *err)
{
    const redisReply *u = r->element[r->elements - 2], *d = r->element[r->elements - 1];
    int64_t us, keep;

    if (!as_int(u, &us) || us < 0 || us > 999)
        return bad_element(err, "claim", r->elements - 2, u, "an integer 0..999", "now us");
    if (!as_int(d, &keep) || (keep != 0 && keep != 1))
        return bad_element(err, "claim", r->elements - 1, d, "0 or 1", "done flag");
    cl->now_us = (int)us;
    cl->keep_done = keep == 1;
    for (size_t i = 0; i < cl->n; i++)
        cl->tasks[i].keep_done = cl->keep_done;
    return DQ_OK;
}

int
dq_reply_claim(const redisReply *r, void *out, dq_err *err)
{
    int rc = claim_tasks(r, 2, out, err);

    return rc != DQ_OK ? rc : claim_tail(r, out, err);
}

int
dq_reply_claim_settle(const redisReply *r, void *out, dq_err *err)
{
    struct dq_claim_settle_reply *cs = out;
    int rc = claim_tasks(r, cs->n + 2, cs->cl, err);

    if (rc != DQ_OK || (rc = claim_tail(r, cs->cl, err)) != DQ_OK)
        return rc;
    for (size_t i = 0; i < cs->n; i++) {
        size_t at = r->elements - 2 - cs->n + i;
        const redisReply *e = r->element[at];
        dq_settle *s = &cs->res[i];
        int64_t v;

        memset(&s->err, 0, sizeof s->err);
        s->retry_due_ms = -1;
        if (is_str(e)) {
            s->rc = dq_err_from_reply(&s->err, "claim", e->str, e->len);
        } else if (as_int(e, &v) && (s->outcome == DQ_RETRY ? v >= -1 : v == 1)) {
            s->rc = DQ_OK;
            if (s->outcome == DQ_RETRY)
                s->retry_due_ms = v;
        } else {
            return bad_element(err, "claim", at, e,
                               s->outcome == DQ_RETRY ? "a due time, -1 or an error text"
                                                      : "1 or an error text",
                               "result %zu", i + 1);
        }
    }
    return DQ_OK;
}

/* ---- ack (5.5), several tasks: per task 1 or its error text ------------------------- */

int
dq_reply_ack_many(const redisReply *r, void *out, dq_err *err)
{
    struct dq_ack_reply *am = out;

    if (r->type != REDIS_REPLY_ARRAY || r->elements != am->n)
        return bad_shape(err, "ack", r, "an array of %zu (one result per task)", am->n);
    for (size_t i = 0; i < am->n; i++) {
        const redisReply *e = r->element[i];
        dq_err one = {0};
        if (e->type == REDIS_REPLY_INTEGER && e->integer == 1)
            am->rcs[i] = DQ_OK;
        else if (is_str(e))
            am->rcs[i] = dq_err_from_reply(&one, "ack", e->str, e->len);
        else
            return bad_element(err, "ack", i, e, "1 or an error text", "result of task %zu", i + 1);
        if (am->errs != NULL)
            am->errs[i] = one;
    }
    return DQ_OK;
}

/* ---- retry (5.6): exhausted, due ---------------------------------------------------- */

enum { RETRY_EXHAUSTED, RETRY_DUE, RETRY_FIELDS };

int
dq_reply_retry(const redisReply *r, void *out, dq_err *err)
{
    dq_retried *rt = out;
    int64_t ex;
    int rc;

    if (!is_array(r, RETRY_FIELDS))
        return bad_shape(err, "retry", r, "an array of 2 (exhausted, due)");
    if ((rc = get_int(r, RETRY_EXHAUSTED, "retry", "exhausted", &ex, err)) != DQ_OK ||
        (rc = get_int(r, RETRY_DUE, "retry", "due", &rt->due_ms, err)) != DQ_OK)
        return rc;
    rt->exhausted = ex != 0;
    return DQ_OK;
}

/* ---- reap (5.8): returned, exhausted, next lease ----------------------------------- */

enum { REAP_RETURNED, REAP_EXHAUSTED, REAP_NEXT_LEASE, REAP_FIELDS };

int
dq_reply_reap(const redisReply *r, void *out, dq_err *err)
{
    dq_reaped *rp = out;
    int64_t returned, exhausted;
    int rc;

    if (!is_array(r, REAP_FIELDS))
        return bad_shape(err, "reap", r, "an array of 3 (returned, exhausted, next lease)");
    if ((rc = get_int(r, REAP_RETURNED, "reap", "returned", &returned, err)) != DQ_OK ||
        (rc = get_int(r, REAP_EXHAUSTED, "reap", "exhausted", &exhausted, err)) != DQ_OK ||
        (rc = get_int(r, REAP_NEXT_LEASE, "reap", "next lease", &rp->next_lease_ms, err)) != DQ_OK)
        return rc;
    rp->returned = (size_t)returned;
    rp->exhausted = (size_t)exhausted;
    return DQ_OK;
}

/* ---- requeue and drop by ids (5.11, 5.12): {count} ---------------------------------- */

enum { IDS_COUNT, IDS_FIELDS };

static int
ids_count(const redisReply *r, const char *what, const char *name, size_t *out, dq_err *err)
{
    int64_t v;
    int rc;

    if (!is_array(r, IDS_FIELDS))
        return bad_shape(err, what, r, "an array of 1 (%s)", name);
    if ((rc = get_int(r, IDS_COUNT, what, name, &v, err)) != DQ_OK)
        return rc;
    *out = (size_t)v;
    return DQ_OK;
}

int
dq_reply_requeue_ids(const redisReply *r, void *out, dq_err *err)
{
    return ids_count(r, "requeue", "moved", out, err);
}

int
dq_reply_drop_ids(const redisReply *r, void *out, dq_err *err)
{
    return ids_count(r, "drop", "dropped", out, err);
}

/* ---- requeue all (5.11): one step ------------------------------------------------- */

enum {
    REQUEUE_MOVED,
    REQUEUE_UNTIL,
    REQUEUE_TOTAL,
    REQUEUE_DONE,
    REQUEUE_SKIPPED,
    REQUEUE_FINISHED,
    REQUEUE_CURSOR_KEY,
    REQUEUE_CURSOR_MS,
    REQUEUE_FIELDS
};

int
dq_reply_requeue_all(const redisReply *r, void *out, dq_err *err)
{
    static const char *const names[REQUEUE_FIELDS] = {
        "moved", "until", "total", "done", "skipped", "finished", "cursor key", "cursor ms"};
    dq_bulk *b = out;
    const redisReply *key;
    int64_t v[REQUEUE_FIELDS];

    if (!is_array(r, REQUEUE_FIELDS))
        return bad_shape(err, "requeue", r,
                         "an array of 8 (moved, until, total, done, skipped, finished, "
                         "cursor key, cursor ms)");
    key = r->element[REQUEUE_CURSOR_KEY];
    if (!is_str(key))
        return bad_element(err, "requeue", REQUEUE_CURSOR_KEY, key, "a string", "cursor key");
    if (key->len >= sizeof b->cursor_key)
        return dq_err_set(err, DQ_EPROTO,
                          "requeue reply: element %d (cursor key) is %zu bytes, expected at "
                          "most %zu",
                          REQUEUE_CURSOR_KEY + 1, key->len, sizeof b->cursor_key - 1);
    for (size_t i = 0; i < REQUEUE_FIELDS; i++) {
        int rc;
        if (i != REQUEUE_CURSOR_KEY &&
            (rc = get_int(r, i, "requeue", names[i], &v[i], err)) != DQ_OK)
            return rc;
    }
    memcpy(b->cursor_key, key->str, key->len);
    b->cursor_key[key->len] = '\0';
    b->cursor_ms = v[REQUEUE_CURSOR_MS];
    b->until_ms = v[REQUEUE_UNTIL];
    b->total = (size_t)v[REQUEUE_TOTAL];
    b->done_n = (size_t)v[REQUEUE_DONE];
    b->skipped = (size_t)v[REQUEUE_SKIPPED];
    b->done = v[REQUEUE_FINISHED] != 0;
    return DQ_OK;
}

/* ---- drop all (5.12): one step ---------------------------------------------------- */

enum { DROP_DROPPED, DROP_UNTIL, DROP_FINISHED, DROP_FIELDS };

int
dq_reply_drop_all(const redisReply *r, void *out, dq_err *err)
{
    dq_bulk *b = out;
    int64_t n, until, fin;
    int rc;

    if (!is_array(r, DROP_FIELDS))
        return bad_shape(err, "drop", r, "an array of 3 (dropped, until, finished)");
    if ((rc = get_int(r, DROP_DROPPED, "drop", "dropped", &n, err)) != DQ_OK ||
        (rc = get_int(r, DROP_UNTIL, "drop", "until", &until, err)) != DQ_OK ||
        (rc = get_int(r, DROP_FINISHED, "drop", "finished", &fin, err)) != DQ_OK)
        return rc;
    if (r->elements >= DROP_FIELDS + 2) { /* a filtered drop: its cursor follows */
        const redisReply *key = r->element[DROP_FIELDS];
        int64_t ms;
        if (!is_str(key) || key->len >= sizeof b->cursor_key)
            return bad_element(err, "drop", DROP_FIELDS, key, "a task key", "cursor key");
        if ((rc = get_int(r, DROP_FIELDS + 1, "drop", "cursor ms", &ms, err)) != DQ_OK)
            return rc;
        memcpy(b->cursor_key, key->str, key->len);
        b->cursor_key[key->len] = '\0';
        b->cursor_ms = ms;
    }
    b->done_n += (size_t)n;
    b->until_ms = until;
    b->done = fin != 0;
    return DQ_OK;
}

/* ---- find (5.14): a kind word, then what that kind carries -------------------------- */

enum {
    FIND_KIND = 0,
    /* {"more", cursor member, cursor score} */
    FIND_CURSOR_MEMBER = 1,
    FIND_CURSOR_SCORE = 2,
    FIND_MORE_FIELDS = 3,
    /* {"scheduled", envelope, due[, history]} */
    FIND_ENVELOPE = 1,
    FIND_DUE = 2,
    FIND_SCHEDULED_FIELDS = 3,
    FIND_SCHEDULED_HISTORY = 3,
    /* {"inflight" | "failed", task key, lease deadline | failed time, record[, history]} */
    FIND_TASK_KEY = 1,
    FIND_SCORE = 2,
    FIND_RECORD = 3,
    FIND_TASK_FIELDS = 4,
    FIND_TASK_HISTORY = 4,
    /* {"parked", envelope, due, key, the key's in flight, key_concurrency, history} */
    FIND_PARKED_KEY = 3,
    FIND_PARKED_INFLIGHT = 4,
    FIND_PARKED_LIMIT = 5,
    FIND_PARKED_FIELDS = 6,
    FIND_PARKED_HISTORY = 6,
};

/* The history array at @pos of a find reply, when there is one (older scripts send
 * none): an array of history records (PROTOCOL.md 4.5), appended to fs->out. */
static int
find_history(const redisReply *r, size_t pos, struct dq_find_reply *fs, dq_err *err)
{
    const redisReply *h;

    if (r->elements <= pos)
        return DQ_OK;
    h = r->element[pos];
    if (h->type != REDIS_REPLY_ARRAY)
        return bad_element(err, "find", pos, h, "an array of history records", "history");
    for (size_t i = 0; i < h->elements; i++) {
        const redisReply *e = h->element[i];
        if (!is_str(e)) {
            char k[32];
            return dq_err_set(err, DQ_EPROTO,
                              "find reply: element %zu (history) entry %zu is %s, expected a "
                              "string",
                              pos + 1, i + 1, kind(e, k, sizeof k));
        }
        if (dq_task_add_history(fs->out, e->str, e->len) != DQ_OK)
            return oom(err);
    }
    return DQ_OK;
}

static int
find_more(const redisReply *r, struct dq_find_reply *fs, dq_err *err)
{
    const redisReply *member, *score;

    if (!is_array(r, FIND_MORE_FIELDS))
        return bad_shape(err, "find", r, "an array of 3 (\"more\", cursor member, cursor score)");
    member = r->element[FIND_CURSOR_MEMBER];
    score = r->element[FIND_CURSOR_SCORE];
    if (!is_str(member))
        return bad_element(err, "find", FIND_CURSOR_MEMBER, member, "a string", "cursor member");
    if (!is_str(score) || score->len >= sizeof fs->cursor_score)
        return bad_element(err, "find", FIND_CURSOR_SCORE, score, "a string of at most 31 bytes",
                           "cursor score");
    dq_buf_reset(&fs->cursor);
    dq_buf_append(&fs->cursor, member->str, member->len);
    if (fs->cursor.failed)
        return oom(err);
    memcpy(fs->cursor_score, score->str, score->len);
    fs->cursor_score[score->len] = '\0';
    fs->more = true;
    return DQ_OK;
}

static int
find_scheduled(const redisReply *r, struct dq_find_reply *fs, dq_err *err)
{
    const redisReply *m;
    int64_t due;

    if (!is_array(r, FIND_SCHEDULED_FIELDS))
        return bad_shape(err, "find", r, "an array of 3 (\"scheduled\", envelope, due)");
    m = r->element[FIND_ENVELOPE];
    if (!is_str(m))
        return bad_element(err, "find", FIND_ENVELOPE, m, "a string", "envelope");
    if (!as_int(r->element[FIND_DUE], &due))
        return bad_element(err, "find", FIND_DUE, r->element[FIND_DUE], "an integer", "due");
    dq_task_init(fs->out);
    fs->found = true;
    if (dq_task_from_scheduled(fs->out, m->str, m->len, due, "?") != DQ_OK)
        return oom(err);
    return find_history(r, FIND_SCHEDULED_HISTORY, fs, err);
}

/* {"parked", ...}: a due task held back in its key's kq (PROTOCOL.md 4.10, 5.14). */
static int
find_parked(const redisReply *r, struct dq_find_reply *fs, dq_err *err)
{
    const redisReply *m, *key;
    int64_t due, inflight, limit;
    int rc;

    if (!is_array(r, FIND_PARKED_FIELDS))
        return bad_shape(err, "find", r,
                         "an array of 6 (\"parked\", envelope, due, key, in flight, limit)");
    m = r->element[FIND_ENVELOPE];
    key = r->element[FIND_PARKED_KEY];
    if (!is_str(m))
        return bad_element(err, "find", FIND_ENVELOPE, m, "a string", "envelope");
    if (!as_int(r->element[FIND_DUE], &due))
        return bad_element(err, "find", FIND_DUE, r->element[FIND_DUE], "an integer", "due");
    if (!is_str(key) || key->len < 1 || key->len > DQ_KEY_MAX)
        return bad_element(err, "find", FIND_PARKED_KEY, key, "a key of 1..64 bytes", "key");
    if ((rc = get_int(r, FIND_PARKED_INFLIGHT, "find", "key in flight", &inflight, err)) != DQ_OK ||
        (rc = get_int(r, FIND_PARKED_LIMIT, "find", "key_concurrency", &limit, err)) != DQ_OK)
        return rc;
    dq_task_init(fs->out);
    fs->found = true;
    if (dq_task_from_scheduled(fs->out, m->str, m->len, due, "?") != DQ_OK)
        return oom(err);
    fs->out->state = DQ_STATE_PARKED;
    fs->out->key_inflight = inflight;
    fs->out->key_limit = limit;
    if (fs->out->key == NULL) { /* (its kq names it, whatever the envelope says) */
        fs->out->key = dq_dup_bytes(key->str, key->len);
        fs->out->key_len = key->len;
        if (fs->out->key == NULL)
            return oom(err);
    }
    return find_history(r, FIND_PARKED_HISTORY, fs, err);
}

static int
find_task(const redisReply *r, bool inflight, struct dq_find_reply *fs, dq_err *err)
{
    const char *score_name = inflight ? "lease deadline" : "failed time";
    const redisReply *key, *rec;
    char tk[DQ_TASK_KEY_MAX + 1];
    int64_t score;
    int rc;

    if (!is_array(r, FIND_TASK_FIELDS))
        return bad_shape(err, "find", r, "an array of 4 (\"%s\", task key, %s, record)",
                         inflight ? "inflight" : "failed", score_name);
    key = r->element[FIND_TASK_KEY];
    rec = r->element[FIND_RECORD];
    if (!is_str(key) || key->len >= sizeof tk)
        return bad_element(err, "find", FIND_TASK_KEY, key, "a task key string", "task key");
    if (!as_int(r->element[FIND_SCORE], &score))
        return bad_element(err, "find", FIND_SCORE, r->element[FIND_SCORE], "an integer", "%s",
                           score_name);
    if (!is_str(rec))
        return bad_element(err, "find", FIND_RECORD, rec, "a string", "%s record",
                           inflight ? "running" : "failure");
    memcpy(tk, key->str, key->len);
    tk[key->len] = '\0';
    dq_task_init(fs->out);
    fs->found = true;
    if (inflight)
        rc = dq_task_from_running(fs->out, tk, score, rec->str, rec->len);
    else
        rc = dq_task_from_failed(fs->out, tk, rec->str, rec->len);
    return rc == DQ_OK ? find_history(r, FIND_TASK_HISTORY, fs, err) : oom(err);
}

/* {"done", task key, done ms, done record} (done retention, PROTOCOL.md 4.7) */
static int
find_done(const redisReply *r, struct dq_find_reply *fs, dq_err *err)
{
    const redisReply *key, *rec;
    char tk[DQ_TASK_KEY_MAX + 1];
    int64_t score;

    if (!is_array(r, FIND_TASK_FIELDS))
        return bad_shape(err, "find", r, "an array of 4 (\"done\", task key, done time, record)");
    key = r->element[FIND_TASK_KEY];
    rec = r->element[FIND_RECORD];
    if (!is_str(key) || key->len >= sizeof tk || memchr(key->str, '\0', key->len) != NULL)
        return bad_element(err, "find", FIND_TASK_KEY, key, "a task key string", "task key");
    if (!as_int(r->element[FIND_SCORE], &score))
        return bad_element(err, "find", FIND_SCORE, r->element[FIND_SCORE], "an integer",
                           "done time");
    if (!is_str(rec))
        return bad_element(err, "find", FIND_RECORD, rec, "a string", "done record");
    memcpy(tk, key->str, key->len);
    tk[key->len] = '\0';
    dq_task_init(fs->out);
    fs->found = true;
    if (dq_task_from_done(fs->out, tk, score, rec->str, rec->len) != DQ_OK)
        return oom(err);
    /* its open unique-for window, from scripts that say (the fifth element) */
    if (r->elements > FIND_TASK_FIELDS &&
        !as_int(r->element[FIND_TASK_FIELDS], &fs->out->unique_until_ms))
        return bad_element(err, "find", FIND_TASK_FIELDS, r->element[FIND_TASK_FIELDS],
                           "an integer", "unique until");
    return DQ_OK;
}

int
dq_reply_find(const redisReply *r, void *out, dq_err *err)
{
    struct dq_find_reply *fs = out;
    const redisReply *k;

    if (!is_array(r, FIND_KIND + 1))
        return bad_shape(err, "find", r, "an array starting with a kind word");
    k = r->element[FIND_KIND];
    if (!is_str(k))
        return bad_element(err, "find", FIND_KIND, k, "a string", "kind");
    if (is_word(k, "none")) {
        /* an open unique-for window: until, now (older scripts: none of it) */
        fs->unique_until_ms = -1;
        if (r->elements >= 3) {
            int rc = get_int(r, 1, "find", "unique until", &fs->unique_until_ms, err);
            if (rc == DQ_OK)
                rc = get_int(r, 2, "find", "now", &fs->now_ms, err);
            if (rc != DQ_OK)
                return rc;
        }
        return DQ_OK;
    }
    if (is_word(k, "more"))
        return find_more(r, fs, err);
    if (is_word(k, "scheduled"))
        return find_scheduled(r, fs, err);
    if (is_word(k, "parked"))
        return find_parked(r, fs, err);
    if (is_word(k, "inflight") || is_word(k, "failed"))
        return find_task(r, is_word(k, "inflight"), fs, err);
    if (is_word(k, "done"))
        return find_done(r, fs, err);
    return dq_err_set(err, DQ_EPROTO,
                      "find reply: element 1 (kind) is \"%.*s\", expected inflight, failed, "
                      "done, scheduled, parked, more or none",
                      (int)(k->len < 32 ? k->len : 32), k->str);
}

/* ---- stats (5.15): 19 integers ----------------------------------------------------- */

enum {
    STATS_PAUSED,
    STATS_PAUSED_SINCE,
    STATS_PAUSED_UNTIL,
    STATS_PAUSED_BY,
    STATS_REASON,
    STATS_PAUSE_FIELDS
};

static int stats_window(const redisReply *r, size_t at, dq_stats *s, dq_err *err);
static int stats_limits(const redisReply *r, size_t at, dq_stats *s, dq_err *err);
static int stats_run(const redisReply *r, size_t at, dq_stats *s, dq_err *err);

int
dq_reply_stats(const redisReply *r, void *out, dq_err *err)
{
    dq_stats *s = out;
    const struct {
        const char *name;
        int64_t *v;
    } f[] = {
        {"now", &s->now_ms},
        {"due", &s->due},
        {"future", &s->future},
        {"far future", &s->far_future},
        {"in flight", &s->inflight},
        {"failed", &s->failed},
        {"expired leases", &s->expired_leases},
        {"next due", &s->next_due_ms},
        {"oldest due age", &s->oldest_due_age_ms},
        {"far_future_ms", &s->far_future_ms},
        {"enqueued", &s->enqueued},
        {"done", &s->done},
        {"retried", &s->retried},
        {"failed total", &s->failed_total},
        {"expired", &s->expired},
        {"trimmed", &s->trimmed},
        {"reaped", &s->reaped},
        {"requeued", &s->requeued},
        {"dropped", &s->dropped},
    };
    const size_t n = sizeof f / sizeof f[0];
    int rc0;

    if (!is_array(r, n))
        return bad_shape(err, "stats", r, "an array of %zu integers", n);
    for (size_t i = 0; i < n; i++) {
        int rc = get_int(r, i, "stats", f[i].name, f[i].v, err);
        if (rc != DQ_OK)
            return rc;
    }
    rc0 = dq_reply_stats_pause(r, n, s, err);
    if (rc0 != DQ_OK)
        return rc0;
    return stats_window(r, n + STATS_PAUSE_FIELDS, s, err);
}

/* ---- page (5.13) and search (5.19): a head, then items of 3 ------------------------- */

enum { PAGE_NOW, PAGE_TOTAL, PAGE_HEAD };
enum { SEARCH_NEXT, SEARCH_TOTAL, SEARCH_HEAD };
enum { ITEM_KEY, ITEM_SCORE, ITEM_RECORD, ITEM_FIELDS };

/* What the three fields of an item are in each view (PROTOCOL.md 5.13). */
static const char *const item_names[][ITEM_FIELDS] = {
    [DQ_VIEW_DUE] = {"envelope", "due", "third field"},
    [DQ_VIEW_FUTURE] = {"envelope", "due", "third field"},
    [DQ_VIEW_INFLIGHT] = {"task key", "lease deadline", "running record"},
    [DQ_VIEW_FAILED] = {"task key", "failed time", "failure record"},
    [DQ_VIEW_DONE] = {"task key", "done time", "done record"},
    [DQ_VIEW_PARKED] = {"envelope", "due", "key"},
};

/* Appends the items of a page or search reply, from r->element[first] on, to @p as
 * tasks of @view. */
static int
append_items(const redisReply *r, size_t first, const char *what, dq_view view, dq_page *p,
             dq_err *err)
{
    size_t n = (r->elements - first) / ITEM_FIELDS;

    if (n == 0)
        return DQ_OK;
    dq_task *grown = realloc(p->tasks, (p->n + n) * sizeof *grown);
    if (grown == NULL)
        return oom(err);
    p->tasks = grown;
    for (size_t i = 0; i < n; i++) {
        size_t at = first + ITEM_FIELDS * i;
        const redisReply *k = r->element[at + ITEM_KEY], *d = r->element[at + ITEM_RECORD];
        dq_task *t = &p->tasks[p->n];
        int64_t score;
        char tk[DQ_TASK_KEY_MAX + 1];
        int rc;

        dq_task_init(t);
        p->n++;
        if (!is_str(k))
            return bad_element(err, what, at + ITEM_KEY, k, "a string", "%s of item %zu",
                               item_names[view][ITEM_KEY], i + 1);
        if (!as_int(r->element[at + ITEM_SCORE], &score))
            return bad_element(err, what, at + ITEM_SCORE, r->element[at + ITEM_SCORE],
                               "an integer", "%s of item %zu", item_names[view][ITEM_SCORE], i + 1);
        if (!is_str(d))
            return bad_element(err, what, at + ITEM_RECORD, d, "a string", "%s of item %zu",
                               item_names[view][ITEM_RECORD], i + 1);
        if (view == DQ_VIEW_DUE || view == DQ_VIEW_FUTURE) {
            /* An undecodable member is named the way claim will when it moves it to
             * failed. */
            rc = dq_task_from_scheduled(t, k->str, k->len, score, "undecodable");
        } else if (view == DQ_VIEW_PARKED) {
            rc = dq_task_from_scheduled(t, k->str, k->len, score, "undecodable");
            t->state = DQ_STATE_PARKED;
            if (rc == DQ_OK && t->key == NULL && d->len > 0) { /* its kq names it */
                t->key = dq_dup_bytes(d->str, d->len);
                t->key_len = d->len;
                if (t->key == NULL)
                    rc = DQ_ENOMEM;
            }
        } else {
            snprintf(tk, sizeof tk, "%.*s", (int)k->len, k->str);
            if (view == DQ_VIEW_INFLIGHT)
                rc = dq_task_from_running(t, tk, score, d->str, d->len);
            else if (view == DQ_VIEW_DONE)
                rc = dq_task_from_done(t, tk, score, d->str, d->len);
            else
                rc = dq_task_from_failed(t, tk, d->str, d->len);
            if (view == DQ_VIEW_FAILED && t->failed_ms < 0)
                t->failed_ms = score;
        }
        if (rc != DQ_OK || t->id == NULL)
            return oom(err);
    }
    return DQ_OK;
}

int
dq_reply_page(const redisReply *r, void *out, dq_err *err)
{
    struct dq_page_reply *ps = out;
    dq_page *p = ps->page;
    int rc;

    if (!is_array(r, PAGE_HEAD) || (r->elements - PAGE_HEAD) % ITEM_FIELDS != 0)
        return bad_shape(err, "page", r, "an array of 2 (now, total), then 3 per item");
    if ((rc = get_int(r, PAGE_NOW, "page", "now", &p->now_ms, err)) != DQ_OK ||
        (rc = get_int(r, PAGE_TOTAL, "page", "total", &p->total, err)) != DQ_OK)
        return rc;
    return append_items(r, PAGE_HEAD, "page", ps->view, p, err);
}

int
dq_reply_search(const redisReply *r, void *out, dq_err *err)
{
    struct dq_search_reply *ss = out;
    int64_t next, total;
    int rc;

    if (!is_array(r, SEARCH_HEAD) || (r->elements - SEARCH_HEAD) % ITEM_FIELDS != 0)
        return bad_shape(err, "search", r, "an array of 2 (next cursor, total), then 3 per match");
    if ((rc = get_int(r, SEARCH_NEXT, "search", "next cursor", &next, err)) != DQ_OK ||
        (rc = get_int(r, SEARCH_TOTAL, "search", "total", &total, err)) != DQ_OK)
        return rc;
    rc = append_items(r, SEARCH_HEAD, "search", ss->view, ss->found, err);
    ss->found->total = (int64_t)ss->found->n;
    if (rc != DQ_OK)
        return rc;
    ss->cur->scanned += next < 0 ? total - ss->cur->cursor : next - ss->cur->cursor;
    if (ss->cur->scanned < 0)
        ss->cur->scanned = 0;
    ss->cur->total = total;
    ss->cur->done = next < 0;
    if (next >= 0)
        ss->cur->cursor = next;
    return DQ_OK;
}

/* ---- audit (5.18): entries of {stream id, {field, value, ...}} ----------------------- */

enum { AUDIT_STREAM_ID, AUDIT_FIELDS, AUDIT_ENTRY_FIELDS };

/* Copies the who / action / detail / result values of one entry's field list. */
static int
audit_fields(const redisReply *f, dq_audit_entry *ae, dq_err *err)
{
    for (size_t j = 0; j + 1 < f->elements; j += 2) {
        const redisReply *k = f->element[j], *v = f->element[j + 1];
        char **slot = NULL;
        size_t *len = NULL;
        if (!is_str(k) || !is_str(v))
            continue; /* a field this client does not know of is not an error */
        if (is_word(k, "who"))
            slot = &ae->who, len = &ae->who_len;
        else if (is_word(k, "action"))
            slot = &ae->action, len = &ae->action_len;
        else if (is_word(k, "detail"))
            slot = &ae->detail, len = &ae->detail_len;
        else if (is_word(k, "result"))
            slot = &ae->result, len = &ae->result_len;
        if (slot != NULL && *slot == NULL) {
            *slot = dq_dup_bytes(v->str, v->len);
            *len = v->len;
        }
    }
    char **all[] = {&ae->who, &ae->action, &ae->detail, &ae->result};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++) {
        if (*all[j] == NULL)
            *all[j] = dq_dup_bytes("", 0);
        if (*all[j] == NULL)
            return oom(err);
    }
    return DQ_OK;
}

int
dq_reply_audit(const redisReply *r, void *out, dq_err *err)
{
    dq_audit *au = out;

    if (r->type != REDIS_REPLY_ARRAY)
        return bad_shape(err, "audit", r, "an array of entries");
    if (r->elements == 0)
        return DQ_OK;
    au->entries = calloc(r->elements, sizeof *au->entries);
    if (au->entries == NULL)
        return oom(err);
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        dq_audit_entry *ae = &au->entries[au->n++];
        int rc;

        if (!is_array(e, AUDIT_ENTRY_FIELDS))
            return bad_element(err, "audit", i, e, "an array of 2 (stream id, fields)", "entry %zu",
                               i + 1);
        if (!is_str(e->element[AUDIT_STREAM_ID]))
            return bad_element(err, "audit", i, e->element[AUDIT_STREAM_ID], "a string",
                               "entry %zu's stream id", i + 1);
        if (e->element[AUDIT_FIELDS]->type != REDIS_REPLY_ARRAY)
            return bad_element(err, "audit", i, e->element[AUDIT_FIELDS], "an array",
                               "entry %zu's fields", i + 1);
        ae->at_ms = strtoll(e->element[AUDIT_STREAM_ID]->str, NULL, 10); /* "<ms>-<n>" */
        if ((rc = audit_fields(e->element[AUDIT_FIELDS], ae, err)) != DQ_OK)
            return rc;
    }
    return DQ_OK;
}

/* ---- errors (4.6): {now, failed, groups, then 7 per group} --------------------------- */

enum {
    ERRORS_NOW,
    ERRORS_FAILED,
    ERRORS_GROUPS,
    ERRORS_HEAD,
    /* per group */
    GROUP_ID = 0,
    GROUP_SIGNATURE,
    GROUP_COUNT,
    GROUP_FIRST,
    GROUP_LAST,
    GROUP_SAMPLE,
    GROUP_SAMPLE_ERROR,
    GROUP_FIELDS,
};

static int
errors_group(const redisReply *r, size_t base, dq_error_group *g, dq_err *err)
{
    const redisReply *id = r->element[base + GROUP_ID];
    const redisReply *sig = r->element[base + GROUP_SIGNATURE];
    const redisReply *sample = r->element[base + GROUP_SAMPLE];
    const redisReply *serr = r->element[base + GROUP_SAMPLE_ERROR];
    int rc;

    if (!is_str(id) || id->len < 1 || id->len > DQ_GROUP_ID_MAX)
        return bad_element(err, "errors", base + GROUP_ID, id, "a group id", "group id");
    if (!is_str(sig) || !is_str(sample) || !is_str(serr))
        return bad_element(err, "errors", base, r->element[base], "strings",
                           "signature, sample or sample error");
    if ((rc = get_int(r, base + GROUP_COUNT, "errors", "count", &g->count, err)) != DQ_OK ||
        (rc = get_int(r, base + GROUP_FIRST, "errors", "first seen", &g->first_ms, err)) != DQ_OK ||
        (rc = get_int(r, base + GROUP_LAST, "errors", "last seen", &g->last_ms, err)) != DQ_OK)
        return rc;
    memcpy(g->id, id->str, id->len);
    g->id[id->len] = '\0';
    /* the sample is a task key: a caller-chosen id carries "c:" (PROTOCOL.md 2) */
    size_t skip = sample->len > 2 && memcmp(sample->str, "c:", 2) == 0 ? 2 : 0;
    g->signature = dq_dup_bytes(sig->str, sig->len);
    g->sample_id = dq_dup_bytes(sample->str + skip, sample->len - skip);
    g->sample_error = dq_dup_bytes(serr->str, serr->len);
    g->signature_len = sig->len;
    g->sample_id_len = sample->len - skip;
    g->sample_error_len = serr->len;
    if (g->signature == NULL || g->sample_id == NULL || g->sample_error == NULL)
        return oom(err);
    return DQ_OK;
}

int
dq_reply_errors(const redisReply *r, void *out, dq_err *err)
{
    dq_errors *e = out;
    int64_t n;
    int rc;

    if (!is_array(r, ERRORS_HEAD))
        return bad_shape(err, "errors", r, "an array of 3 (now, failed, groups), then 7 per group");
    if ((rc = get_int(r, ERRORS_NOW, "errors", "now", &e->now_ms, err)) != DQ_OK ||
        (rc = get_int(r, ERRORS_FAILED, "errors", "failed", &e->failed, err)) != DQ_OK ||
        (rc = get_int(r, ERRORS_GROUPS, "errors", "groups", &n, err)) != DQ_OK)
        return rc;
    if (n < 0 || n > DQ_GROUPS_MAX + 1 || r->elements != ERRORS_HEAD + (size_t)n * GROUP_FIELDS)
        return bad_shape(err, "errors", r, "3 + 7 x %lld elements (at most %d groups)",
                         (long long)n, DQ_GROUPS_MAX + 1);
    if (n == 0)
        return DQ_OK;
    e->groups = calloc((size_t)n, sizeof *e->groups);
    if (e->groups == NULL)
        return oom(err);
    for (size_t i = 0; i < (size_t)n; i++) {
        e->n = i + 1;
        if ((rc = errors_group(r, ERRORS_HEAD + i * GROUP_FIELDS, &e->groups[i], err)) != DQ_OK)
            return rc;
    }
    return DQ_OK;
}

/* ---- extend (5.9): per task the new lease deadline, or -1 ---------------------------- */

int
dq_reply_extend(const redisReply *r, void *out, dq_err *err)
{
    struct dq_extend_reply *es = out;
    int64_t v;

    if (!is_array(r, es->n))
        return bad_shape(err, "extend", r, "an array of %zu (one lease deadline per task)", es->n);
    for (size_t i = 0; i < es->n; i++) {
        if (!as_int(r->element[i], &v))
            return bad_element(err, "extend", i, r->element[i], "an integer",
                               "lease deadline of task %zu", i + 1);
        if (es->lost != NULL)
            es->lost[i] = v < 0;
    }
    return DQ_OK;
}

/* ---- workers and pause (5.20-5.22) ---------------------------------------------------- */

/* A string element @pos of @r copied into @buf (cut to fit: these are display fields). */
static int
get_str_buf(const redisReply *r, size_t pos, const char *what, const char *name, char *buf,
            size_t size, dq_err *err)
{
    const redisReply *e = r->element[pos];

    if (!is_str(e))
        return bad_element(err, what, pos, e, "a string", "%s", name);
    size_t n = e->len < size - 1 ? e->len : size - 1;
    memcpy(buf, e->str, n);
    buf[n] = '\0';
    return DQ_OK;
}

/* A string element @pos of @r as a new NUL-terminated copy in *out. */
static int
get_str_dup(const redisReply *r, size_t pos, const char *what, const char *name, char **out,
            dq_err *err)
{
    const redisReply *e = r->element[pos];

    if (!is_str(e))
        return bad_element(err, what, pos, e, "a string", "%s", name);
    *out = dq_dup_bytes(e->str, e->len);
    return *out == NULL ? oom(err) : DQ_OK;
}

bool
dq_reply_claim_paused(const redisReply *r, dq_claimed *cl)
{
    const redisReply *mark;
    int64_t until;

    if (r->type != REDIS_REPLY_ARRAY || r->elements < CLAIM_HEAD + CLAIM_PAUSE_FIELDS)
        return false;
    mark = r->element[CLAIM_HEAD + CLAIM_PAUSE_MARK];
    if (!is_str(mark) || mark->len != 6 || memcmp(mark->str, "paused", 6) != 0 ||
        !as_int(r->element[CLAIM_HEAD + CLAIM_PAUSE_UNTIL], &until))
        return false; /* then it is a plain reply, or the malformed one claim_tasks names */
    cl->paused = true;
    cl->paused_until_ms = until < 0 ? 0 : until;
    return true;
}

int
dq_reply_stats_pause(const redisReply *r, size_t n, dq_stats *s, dq_err *err)
{
    int64_t paused;
    int rc;

    s->paused = false;
    s->paused_since_ms = s->paused_until_ms = -1;
    s->paused_by[0] = s->pause_reason[0] = '\0';
    if (r->elements < n + STATS_PAUSE_FIELDS)
        return DQ_OK;
    if ((rc = get_int(r, n + STATS_PAUSED, "stats", "paused", &paused, err)) != DQ_OK ||
        (rc = get_int(r, n + STATS_PAUSED_SINCE, "stats", "paused since", &s->paused_since_ms,
                      err)) != DQ_OK ||
        (rc = get_int(r, n + STATS_PAUSED_UNTIL, "stats", "paused until", &s->paused_until_ms,
                      err)) != DQ_OK ||
        (rc = get_str_buf(r, n + STATS_PAUSED_BY, "stats", "paused by", s->paused_by,
                          sizeof s->paused_by, err)) != DQ_OK ||
        (rc = get_str_buf(r, n + STATS_REASON, "stats", "pause reason", s->pause_reason,
                          sizeof s->pause_reason, err)) != DQ_OK)
        return rc;
    s->paused = paused != 0;
    return DQ_OK;
}

enum {
    STATS_WINDOW,
    STATS_WINDOW_ELAPSED,
    STATS_WINDOW_DONE,
    STATS_WINDOW_FAILED,
    STATS_WINDOW_RETRIED,
    STATS_TOP_GROUP,
    STATS_TOP_COUNT,
    STATS_PARKED, /* per-key limits: after the window, absent from older scripts */
    STATS_WINDOW_FIELDS = STATS_PARKED
};

/* The outcome window after the pause (stats.lua); window_ms -1 when the scripts are
 * older than it. */
static int
stats_window(const redisReply *r, size_t at, dq_stats *s, dq_err *err)
{
    int rc;

    s->window_ms = s->window_elapsed_ms = -1;
    s->window_done = s->window_failed = s->window_retried = s->top_group_count = 0;
    s->top_group[0] = '\0';
    s->parked = 0;
    if (r->elements < at + STATS_WINDOW_FIELDS)
        return stats_limits(r, at + STATS_PARKED + 1, s, err); /* (their defaults) */
    if (r->elements > at + STATS_PARKED &&
        (rc = get_int(r, at + STATS_PARKED, "stats", "parked", &s->parked, err)) != DQ_OK)
        return rc;
    if ((rc = get_int(r, at + STATS_WINDOW, "stats", "window", &s->window_ms, err)) != DQ_OK ||
        (rc = get_int(r, at + STATS_WINDOW_ELAPSED, "stats", "window elapsed",
                      &s->window_elapsed_ms, err)) != DQ_OK ||
        (rc = get_int(r, at + STATS_WINDOW_DONE, "stats", "window done", &s->window_done, err)) !=
            DQ_OK ||
        (rc = get_int(r, at + STATS_WINDOW_FAILED, "stats", "window failed", &s->window_failed,
                      err)) != DQ_OK ||
        (rc = get_int(r, at + STATS_WINDOW_RETRIED, "stats", "window retried", &s->window_retried,
                      err)) != DQ_OK ||
        (rc = get_str_buf(r, at + STATS_TOP_GROUP, "stats", "top group", s->top_group,
                          sizeof s->top_group, err)) != DQ_OK ||
        (rc = get_int(r, at + STATS_TOP_COUNT, "stats", "top group count", &s->top_group_count,
                      err)) != DQ_OK)
        return rc;
    if (s->window_ms <= 0 || s->window_elapsed_ms <= 0 || s->window_done < 0 ||
        s->window_failed < 0 || s->window_retried < 0)
        s->window_ms = -1; /* nonsense from a foreign write: not known */
    return stats_limits(r, at + STATS_PARKED + 1, s, err);
}

enum {
    STATS_LIMITED_RATE,
    STATS_LIMITED_CONC,
    STATS_RATE,
    STATS_BURST,
    STATS_CONC,
    STATS_RATE_HELD,
    STATS_CONC_HELD,
    STATS_THROTTLED,
    STATS_THROTTLE_RATE,
    STATS_THROTTLE_CONC,
    STATS_THROTTLE_SINCE,
    STATS_THROTTLE_UNTIL,
    STATS_THROTTLE_BY,
    STATS_THROTTLE_REASON,
    STATS_LIMIT_FIELDS
};

/* The queue limits after the window (stats.lua); off when the scripts are older. */
static int
stats_limits(const redisReply *r, size_t at, dq_stats *s, dq_err *err)
{
    static const char *const names[] = {"limited rate",
                                        "limited concurrency",
                                        "rate",
                                        "burst",
                                        "concurrency",
                                        "rate held",
                                        "concurrency held",
                                        "throttled",
                                        "throttle rate",
                                        "throttle concurrency",
                                        "throttle since",
                                        "throttle until"};
    int64_t v[STATS_THROTTLE_BY];
    int rc;

    s->limited_rate = s->limited_concurrency = s->rate_per_min = s->rate_burst = 0;
    s->concurrency = s->throttle_rate_per_min = s->throttle_concurrency = 0;
    s->rate_held_ms = s->throttle_since_ms = s->throttle_until_ms = -1;
    s->concurrency_held = s->throttled = false;
    s->throttle_by[0] = s->throttle_reason[0] = '\0';
    if (r->elements < at + STATS_LIMIT_FIELDS)
        return stats_run(r, at + STATS_LIMIT_FIELDS, s, err); /* (zeros) */
    for (size_t i = 0; i < STATS_THROTTLE_BY; i++)
        if ((rc = get_int(r, at + i, "stats", names[i], &v[i], err)) != DQ_OK)
            return rc;
    if ((rc = get_str_buf(r, at + STATS_THROTTLE_BY, "stats", "throttle by", s->throttle_by,
                          sizeof s->throttle_by, err)) != DQ_OK ||
        (rc = get_str_buf(r, at + STATS_THROTTLE_REASON, "stats", "throttle reason",
                          s->throttle_reason, sizeof s->throttle_reason, err)) != DQ_OK)
        return rc;
    /* counts and limits from a foreign write can be anything: negatives read as 0 */
    s->limited_rate = v[STATS_LIMITED_RATE] > 0 ? v[STATS_LIMITED_RATE] : 0;
    s->limited_concurrency = v[STATS_LIMITED_CONC] > 0 ? v[STATS_LIMITED_CONC] : 0;
    s->rate_per_min = v[STATS_RATE] > 0 ? v[STATS_RATE] : 0;
    s->rate_burst = v[STATS_BURST] > 0 ? v[STATS_BURST] : 0;
    s->concurrency = v[STATS_CONC] > 0 ? v[STATS_CONC] : 0;
    s->rate_held_ms = v[STATS_RATE_HELD];
    s->concurrency_held = v[STATS_CONC_HELD] != 0;
    s->throttled = v[STATS_THROTTLED] != 0;
    s->throttle_rate_per_min = v[STATS_THROTTLE_RATE] > 0 ? v[STATS_THROTTLE_RATE] : 0;
    s->throttle_concurrency = v[STATS_THROTTLE_CONC] > 0 ? v[STATS_THROTTLE_CONC] : 0;
    s->throttle_since_ms = v[STATS_THROTTLE_SINCE];
    s->throttle_until_ms = v[STATS_THROTTLE_UNTIL];
    return stats_run(r, at + STATS_LIMIT_FIELDS, s, err);
}

/* The all-time run-time histogram after the limits (PROTOCOL.md 5.15, 13): the
 * DQ_RUN_BUCKETS counts, then their sum in ms; all 0 when the scripts are older. */
static int
stats_run(const redisReply *r, size_t at, dq_stats *s, dq_err *err)
{
    int64_t v[DQ_RUN_BUCKETS + 1];
    int rc;

    memset(s->run, 0, sizeof s->run);
    s->run_sum_ms = 0;
    s->parts_map = -1;
    if (r->elements < at + DQ_RUN_BUCKETS + 1)
        return DQ_OK;
    for (size_t i = 0; i <= DQ_RUN_BUCKETS; i++) {
        char name[32];
        if (i < DQ_RUN_BUCKETS)
            snprintf(name, sizeof name, "run bucket %zu", i);
        else
            snprintf(name, sizeof name, "run sum");
        if ((rc = get_int(r, at + i, "stats", name, &v[i], err)) != DQ_OK)
            return rc;
    }
    /* a foreign write can make a counter anything: negatives read as 0 */
    for (size_t i = 0; i < DQ_RUN_BUCKETS; i++)
        s->run[i] = v[i] > 0 ? v[i] : 0;
    s->run_sum_ms = v[DQ_RUN_BUCKETS] > 0 ? v[DQ_RUN_BUCKETS] : 0;
    /* then the partition map's size (newer scripts) */
    if (r->elements > at + DQ_RUN_BUCKETS + 1 &&
        (rc = get_int(r, at + DQ_RUN_BUCKETS + 1, "stats", "partition map", &s->parts_map, err)) !=
            DQ_OK)
        return rc;
    if (s->parts_map < 0)
        s->parts_map = 0; /* a foreign write cannot make HLEN negative; a reply could */
    return DQ_OK;
}

enum {
    BEAT_NOW,
    BEAT_REGISTERED,
    BEAT_STARTED,
    BEAT_NEXT_DUE,
    BEAT_NEXT_LEASE,
    BEAT_PAUSED,
    BEAT_PRUNED,
    BEAT_FIELDS
};

int
dq_reply_heartbeat(const redisReply *r, void *out, dq_err *err)
{
    dq_beat_reply *b = out;
    static const char *const names[BEAT_FIELDS] = {
        "now", "registered", "started", "next due", "next lease", "paused until", "pruned"};
    int64_t v[BEAT_FIELDS];

    if (!is_array(r, BEAT_FIELDS))
        return bad_shape(err, "heartbeat", r, "an array of %d integers", BEAT_FIELDS);
    for (size_t i = 0; i < BEAT_FIELDS; i++) {
        int rc = get_int(r, i, "heartbeat", names[i], &v[i], err);
        if (rc != DQ_OK)
            return rc;
    }
    b->now_ms = v[BEAT_NOW];
    b->registered = v[BEAT_REGISTERED] != 0;
    b->started_ms = v[BEAT_STARTED];
    b->next_due_ms = v[BEAT_NEXT_DUE];
    b->next_lease_ms = v[BEAT_NEXT_LEASE];
    b->paused_until_ms = v[BEAT_PAUSED];
    b->pruned = v[BEAT_PRUNED] > 0 ? (size_t)v[BEAT_PRUNED] : 0;
    b->schedules_low = 0;
    int64_t low;
    /* the 8th came with periodic schedules (1: a cron list wants a top-up); an older
     * library's reply has 7 */
    if (r->elements > BEAT_FIELDS && as_int(r->element[BEAT_FIELDS], &low) && low > 0)
        b->schedules_low = (size_t)low;
    return DQ_OK;
}

enum {
    WORKERS_NOW,
    WORKERS_REGISTERED,
    WORKERS_LIVE,
    WORKERS_LOST,
    WORKERS_INFLIGHT,
    WORKERS_LOOKED,
    WORKERS_LOST_AFTER,
    WORKERS_N,
    WORKERS_HEAD
};
enum {
    W_NAME,
    W_HOST,
    W_PID,
    W_VERSION,
    W_STARTED,
    W_BEAT,
    W_LAST,
    W_LOST,
    W_CONC,
    W_BUSY,
    W_DONE,
    W_RETRIED,
    W_FAILED,
    W_COMMAND,
    W_DRAINING,
    W_HUNG,
    W_HELD,
    W_NTASKS,
    W_FIELDS
};
enum { WT_ID, WT_CLAIMED, WT_FIELDS };

/* One worker's row at @at of @r into @w; *next receives where the next row starts. */
static int
worker_row(const redisReply *r, size_t at, size_t k, dq_worker_info *w, int64_t now, size_t *next,
           dq_err *err)
{
    char name[64];
    int64_t v[W_FIELDS] = {0};
    int rc;

    if (r->elements < at + W_FIELDS)
        return bad_shape(err, "workers", r, "%zu more elements for worker %zu", (size_t)W_FIELDS,
                         k + 1);
    for (size_t i = 0; i < W_FIELDS; i++) {
        char **slot = i == W_NAME      ? &w->name
                      : i == W_HOST    ? &w->host
                      : i == W_VERSION ? &w->version
                      : i == W_COMMAND ? &w->command
                                       : NULL;
        snprintf(name, sizeof name, "field %zu of worker %zu", i + 1, k + 1);
        if (slot != NULL)
            rc = get_str_dup(r, at + i, "workers", name, slot, err);
        else
            rc = get_int(r, at + i, "workers", name, &v[i], err);
        if (rc != DQ_OK)
            return rc;
    }
    w->pid = v[W_PID];
    w->started_ms = v[W_STARTED];
    w->beat_interval_ms = v[W_BEAT];
    w->last_beat_ms = v[W_LAST];
    w->beat_age_ms = now - v[W_LAST];
    w->lost = v[W_LOST] != 0;
    w->concurrency = v[W_CONC];
    w->busy = v[W_BUSY];
    w->done = v[W_DONE];
    w->retried = v[W_RETRIED];
    w->failed = v[W_FAILED];
    w->draining = v[W_DRAINING] != 0;
    w->hung = v[W_HUNG] > 0 ? v[W_HUNG] : 0;
    w->held = v[W_HELD] > 0 ? (size_t)v[W_HELD] : 0;
    if (v[W_NTASKS] < 0 || v[W_NTASKS] > 100 ||
        r->elements < at + W_FIELDS + WT_FIELDS * (size_t)v[W_NTASKS])
        return bad_element(err, "workers", at + W_NTASKS, r->element[at + W_NTASKS],
                           "a task count in 0..100 that the reply holds", "tasks of worker %zu",
                           k + 1);
    size_t nt = (size_t)v[W_NTASKS];
    if (nt > 0 && (w->tasks = calloc(nt, sizeof *w->tasks)) == NULL)
        return oom(err);
    for (size_t j = 0; j < nt; j++) {
        size_t p = at + W_FIELDS + WT_FIELDS * j;
        snprintf(name, sizeof name, "task %zu of worker %zu", j + 1, k + 1);
        if ((rc = get_str_buf(r, p + WT_ID, "workers", name, w->tasks[j].id, sizeof w->tasks[j].id,
                              err)) != DQ_OK ||
            (rc = get_int(r, p + WT_CLAIMED, "workers", name, &w->tasks[j].claimed_ms, err)) !=
                DQ_OK)
            return rc;
        w->ntasks = j + 1;
    }
    *next = at + W_FIELDS + WT_FIELDS * nt;
    return DQ_OK;
}

int
dq_reply_workers(const redisReply *r, void *out, dq_err *err)
{
    dq_workers *ws = out;
    static const char *const names[WORKERS_HEAD] = {
        "now",       "registered",          "live",       "lost",
        "in flight", "in flight looked at", "lost after", "workers"};
    int64_t v[WORKERS_HEAD];
    size_t at = WORKERS_HEAD;

    if (!is_array(r, WORKERS_HEAD))
        return bad_shape(err, "workers", r, "an array of %d, then the workers", WORKERS_HEAD);
    for (size_t i = 0; i < WORKERS_HEAD; i++) {
        int rc = get_int(r, i, "workers", names[i], &v[i], err);
        if (rc != DQ_OK)
            return rc;
    }
    ws->now_ms = v[WORKERS_NOW];
    ws->registered = v[WORKERS_REGISTERED];
    ws->live = v[WORKERS_LIVE];
    ws->lost = v[WORKERS_LOST];
    ws->inflight = v[WORKERS_INFLIGHT];
    ws->inflight_looked = v[WORKERS_LOOKED];
    ws->lost_after_ms = v[WORKERS_LOST_AFTER];
    if (v[WORKERS_N] < 0 || v[WORKERS_N] > DQ_CALL_MAX ||
        (size_t)v[WORKERS_N] * W_FIELDS > r->elements - WORKERS_HEAD)
        return bad_element(err, "workers", WORKERS_N, r->element[WORKERS_N],
                           "a count the reply holds", "workers");
    size_t n = (size_t)v[WORKERS_N];
    if (n == 0)
        return DQ_OK;
    if ((ws->workers = calloc(n, sizeof *ws->workers)) == NULL)
        return oom(err);
    for (size_t k = 0; k < n; k++) {
        ws->n = k + 1;
        int rc = worker_row(r, at, k, &ws->workers[k], ws->now_ms, &at, err);
        if (rc != DQ_OK)
            return rc;
    }
    if (at != r->elements)
        return bad_shape(err, "workers", r, "an array of %zu (its rows end there)", at);
    return DQ_OK;
}

enum { PAUSE_NOW, PAUSE_UNTIL, PAUSE_WAS, PAUSE_FIELDS };

int
dq_reply_ints2(const redisReply *r, void *out, dq_err *err)
{
    int64_t *v = out;
    int rc;

    if (!is_array(r, 2))
        return bad_shape(err, "reschedule", r, "an array of two integers");
    if ((rc = get_int(r, 0, "reschedule", "old due", &v[0], err)) != DQ_OK ||
        (rc = get_int(r, 1, "reschedule", "new due", &v[1], err)) != DQ_OK)
        return rc;
    return DQ_OK;
}

int
dq_reply_cancel(const redisReply *r, void *out, dq_err *err)
{
    dq_cancelled *c = out;
    int64_t att;
    int rc;

    if (!is_array(r, 2))
        return bad_shape(err, "cancel", r, "an array of a worker and an attempt");
    if ((rc = get_str_buf(r, 0, "cancel", "worker", c->worker, sizeof c->worker, err)) != DQ_OK ||
        (rc = get_int(r, 1, "cancel", "attempt", &att, err)) != DQ_OK)
        return rc;
    c->attempt = att > 0 && att <= DQ_ATTEMPTS_MAX ? (uint32_t)att : 0;
    return DQ_OK;
}

int
dq_reply_pause(const redisReply *r, void *out, dq_err *err)
{
    struct dq_pause_reply *p = out;
    int64_t was;
    int rc;

    if (!is_array(r, PAUSE_FIELDS))
        return bad_shape(err, "pause", r, "an array of %d integers", PAUSE_FIELDS);
    if ((rc = get_int(r, PAUSE_NOW, "pause", "now", &p->now_ms, err)) != DQ_OK ||
        (rc = get_int(r, PAUSE_UNTIL, "pause", "paused until", &p->paused_until_ms, err)) !=
            DQ_OK ||
        (rc = get_int(r, PAUSE_WAS, "pause", "was paused", &was, err)) != DQ_OK)
        return rc;
    p->was_paused = was != 0;
    return DQ_OK;
}

/* ---- periodic schedules (5.30) -------------------------------------------------------- */

int
dq_reply_schedule(const redisReply *r, void *out, dq_err *err)
{
    int64_t *v = out;
    int rc;

    if (!is_array(r, 2))
        return bad_shape(err, "schedule", r, "an array of 2 integers");
    if ((rc = get_int(r, 0, "schedule", "next firing", &v[0], err)) != DQ_OK ||
        (rc = get_int(r, 1, "schedule", "changed", &v[1], err)) != DQ_OK)
        return rc;
    return DQ_OK;
}

enum {
    SG_NAME,
    SG_SPEC,
    SG_TZ,
    SG_EVERY,
    SG_PAUSED,
    SG_NEXT,
    SG_LAST,
    SG_LAST_ID,
    SG_LATE,
    SG_MISSED,
    SG_RUNS,
    SG_CREATED,
    SG_UPDATED,
    SG_BY,
    SG_FIRES,
    SG_FIRES_LAST,
    SG_FIELDS
};

int
dq_reply_schedule_get(const redisReply *r, void *out, dq_err *err)
{
    dq_schedules *s = out;
    int rc;

    if (!is_array(r, 1) || (r->elements - 1) % SG_FIELDS != 0 ||
        (r->elements - 1) / SG_FIELDS > DQ_SCHEDULES_MAX)
        return bad_shape(err, "schedule_get", r, "now, then %d fields per schedule", SG_FIELDS);
    if ((rc = get_int(r, 0, "schedule_get", "now", &s->now_ms, err)) != DQ_OK)
        return rc;
    size_t n = (r->elements - 1) / SG_FIELDS;
    if (n == 0)
        return DQ_OK;
    if ((s->items = calloc(n, sizeof *s->items)) == NULL)
        return oom(err);
    for (size_t k = 0; k < n; k++) {
        dq_schedule *d = &s->items[k];
        size_t at = 1 + k * SG_FIELDS;
        int64_t paused;
        s->n = k + 1;
        if ((rc = get_str_dup(r, at + SG_NAME, "schedule_get", "name", &d->name, err)) != DQ_OK ||
            (rc = get_str_dup(r, at + SG_SPEC, "schedule_get", "spec", &d->spec, err)) != DQ_OK ||
            (rc = get_str_dup(r, at + SG_TZ, "schedule_get", "zone", &d->tz, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_EVERY, "schedule_get", "every", &d->every_ms, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_PAUSED, "schedule_get", "paused", &paused, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_NEXT, "schedule_get", "next", &d->next_ms, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_LAST, "schedule_get", "last", &d->last_ms, err)) != DQ_OK ||
            (rc = get_str_dup(r, at + SG_LAST_ID, "schedule_get", "last id", &d->last_id, err)) !=
                DQ_OK ||
            (rc = get_int(r, at + SG_LATE, "schedule_get", "late", &d->late_ms, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_MISSED, "schedule_get", "missed", &d->missed, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_RUNS, "schedule_get", "runs", &d->runs, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_CREATED, "schedule_get", "created", &d->created_ms, err)) !=
                DQ_OK ||
            (rc = get_int(r, at + SG_UPDATED, "schedule_get", "updated", &d->updated_ms, err)) !=
                DQ_OK ||
            (rc = get_str_dup(r, at + SG_BY, "schedule_get", "by", &d->by, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_FIRES, "schedule_get", "fires", &d->fires, err)) != DQ_OK ||
            (rc = get_int(r, at + SG_FIRES_LAST, "schedule_get", "last listed firing",
                          &d->fires_last, err)) != DQ_OK)
            return rc;
        d->paused = paused != 0;
    }
    return DQ_OK;
}

/* ---- overview (5.15a): counts, pause, window, thresholds, workers, sparklines ------- */

/* Element names, in reply order, up to the sparklines (their count is the last). */
enum {
    OV_NOW,
    OV_DUE,
    OV_FUTURE,
    OV_FAR,
    OV_INFLIGHT,
    OV_FAILED,
    OV_EXPIRED,
    OV_OLDEST,
    OV_FAR_MS,
    OV_PAUSED,
    OV_SINCE,
    OV_UNTIL,
    OV_BY,
    OV_REASON,
    OV_WIN_MS,
    OV_WIN_ELAPSED,
    OV_WIN_DONE,
    OV_WIN_FAILED,
    OV_WIN_RETRIED,
    OV_A_OLDEST,
    OV_A_FAR,
    OV_A_FAIL_PCT,
    OV_A_FAIL_MIN,
    OV_A_MEMORY,
    OV_W_REG,
    OV_W_LIVE,
    OV_W_LOST,
    OV_W_BEAT,
    OV_W_HUNG,
    OV_W_WORST,
    OV_MINUTES,
    OV_HEAD
};

static const char *const ov_names[OV_HEAD] = {
    "now",
    "due",
    "future",
    "far future",
    "in flight",
    "failed",
    "expired",
    "oldest due age",
    "far_future_ms",
    "paused",
    "paused since",
    "paused until",
    "paused by",
    "pause reason",
    "window ms",
    "elapsed ms",
    "window done",
    "window failed",
    "window retried",
    "alert_oldest_due_ms",
    "alert_far_future",
    "alert_fail_pct",
    "alert_fail_per_min",
    "alert_memory_pct",
    "registered",
    "live",
    "lost",
    "latest beat",
    "hung",
    "hung worker",
    "minutes",
};

static int
ov_bad(dq_err *err, size_t pos, const char *want)
{
    return dq_err_set(err, DQ_EPROTO, "overview reply: element %zu (%s) is not %s", pos + 1,
                      pos < OV_HEAD ? ov_names[pos] : "a minute's count", want);
}

static void
ov_copy_str(const redisReply *e, char *buf, size_t size)
{
    size_t n = e->len < size - 1 ? e->len : size - 1;
    memcpy(buf, e->str, n);
    buf[n] = '\0';
}

int
dq_reply_overview(const redisReply *r, void *out, dq_err *err)
{
    struct dq_overview_row *row = out;
    dq_stats *s = &row->stats;
    int64_t v[OV_HEAD] = {0}, k;

    if (r->type != REDIS_REPLY_ARRAY || r->elements < OV_HEAD)
        return dq_err_set(err, DQ_EPROTO, "overview reply: not an array of at least %d elements",
                          OV_HEAD);
    for (size_t i = 0; i < OV_HEAD; i++) {
        const redisReply *e = r->element[i];
        if (i == OV_BY || i == OV_REASON || i == OV_W_WORST) {
            if (e->type != REDIS_REPLY_STRING)
                return ov_bad(err, i, "a string");
        } else if (!as_int(e, &v[i])) {
            return ov_bad(err, i, "an integer");
        }
    }
    k = v[OV_MINUTES];
    if (k != DQ_OVERVIEW_MINUTES || r->elements < OV_HEAD + 2 * (size_t)k)
        return dq_err_set(
            err, DQ_EPROTO, "overview reply: %lld minutes in %zu elements, expected %d in %d",
            (long long)k, r->elements, DQ_OVERVIEW_MINUTES, OV_HEAD + 2 * DQ_OVERVIEW_MINUTES);
    for (size_t i = 0; i < 2 * (size_t)k; i++) {
        int64_t *to = i < (size_t)k ? &row->done_per_min[i] : &row->failed_per_min[i - (size_t)k];
        if (!as_int(r->element[OV_HEAD + i], to))
            return ov_bad(err, OV_HEAD + i, "an integer");
    }
    memset(s, 0, sizeof *s);
    s->now_ms = v[OV_NOW];
    s->due = v[OV_DUE];
    s->future = v[OV_FUTURE];
    s->far_future = v[OV_FAR];
    s->inflight = v[OV_INFLIGHT];
    s->failed = v[OV_FAILED];
    s->expired_leases = v[OV_EXPIRED];
    s->next_due_ms = -1;
    s->oldest_due_age_ms = v[OV_OLDEST];
    s->far_future_ms = v[OV_FAR_MS];
    s->paused = v[OV_PAUSED] != 0;
    s->paused_since_ms = v[OV_SINCE];
    s->paused_until_ms = v[OV_UNTIL];
    ov_copy_str(r->element[OV_BY], s->paused_by, sizeof s->paused_by);
    ov_copy_str(r->element[OV_REASON], s->pause_reason, sizeof s->pause_reason);
    s->window_ms = v[OV_WIN_MS];
    s->window_elapsed_ms = v[OV_WIN_ELAPSED];
    s->window_done = v[OV_WIN_DONE];
    s->window_failed = v[OV_WIN_FAILED];
    s->window_retried = v[OV_WIN_RETRIED];
    row->alert_oldest_due_ms = v[OV_A_OLDEST];
    row->alert_far_future = v[OV_A_FAR];
    row->alert_fail_pct = v[OV_A_FAIL_PCT];
    row->alert_fail_per_min = v[OV_A_FAIL_MIN];
    row->alert_memory_pct = v[OV_A_MEMORY];
    row->workers_registered = v[OV_W_REG];
    row->workers_live = v[OV_W_LIVE];
    row->workers_lost = v[OV_W_LOST];
    row->last_beat_ms = v[OV_W_BEAT];
    row->workers_hung = v[OV_W_HUNG];
    ov_copy_str(r->element[OV_W_WORST], row->hung_worker, sizeof row->hung_worker);
    /* the hook for a throttle: one element past the sparklines, 1 while it holds the
     * queue back (the script that adds it documents it in PROTOCOL.md 5.15a) */
    size_t at = OV_HEAD + 2 * (size_t)k;
    int64_t t;
    row->throttled = r->elements > at && as_int(r->element[at], &t) ? t != 0 : -1;
    row->parts_map = r->elements > at + 1 && as_int(r->element[at + 1], &t) && t > 0 ? t : 0;
    return DQ_OK;
}

/* ---- keys (5.31): totals, then 6 per key (per-key limits) ------------------------------ */

enum { K_NOW, K_DUE_SEEN, K_DUE, K_FAILED_SEEN, K_FAILED, K_PARKED, K_N, K_HEAD };
enum { R_KEY, R_DUE, R_PARKED, R_INFLIGHT, R_FAILED, R_OLDEST, R_FIELDS };

static int
keys_bad(dq_err *err, const char *what)
{
    return dq_err_set(err, DQ_EPROTO, "keys reply: %s", what);
}

static int
keys_num(const redisReply *r, int64_t *v)
{
    if (r->type != REDIS_REPLY_INTEGER)
        return -1;
    *v = (int64_t)r->integer;
    return 0;
}

int
dq_reply_keys(const redisReply *r, void *out, dq_err *err)
{
    dq_keys *k = out;
    int64_t head[K_HEAD];

    if (r->type != REDIS_REPLY_ARRAY || r->elements < K_HEAD)
        return keys_bad(err, "not an array of 7 and then 6 per key");
    for (size_t i = 0; i < K_HEAD; i++)
        if (keys_num(r->element[i], &head[i]) != 0)
            return keys_bad(err, "a count is not an integer");
    if (head[K_N] < 0 || head[K_N] > 100 || r->elements != K_HEAD + (size_t)head[K_N] * R_FIELDS)
        return keys_bad(err, "not 7 + 6 elements per key (at most 100 keys)");
    k->now_ms = head[K_NOW];
    k->due_seen = head[K_DUE_SEEN];
    k->due_total = head[K_DUE];
    k->failed_seen = head[K_FAILED_SEEN];
    k->failed_total = head[K_FAILED];
    k->parked_total = head[K_PARKED];
    if (head[K_N] == 0)
        return DQ_OK;
    k->rows = calloc((size_t)head[K_N], sizeof *k->rows);
    if (k->rows == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    for (size_t i = 0; i < (size_t)head[K_N]; i++) {
        redisReply *const *e = &r->element[K_HEAD + i * R_FIELDS];
        dq_key_row *row = &k->rows[i];
        if (e[R_KEY]->type != REDIS_REPLY_STRING || e[R_KEY]->len > DQ_KEY_MAX ||
            keys_num(e[R_DUE], &row->due) != 0 || keys_num(e[R_PARKED], &row->parked) != 0 ||
            keys_num(e[R_INFLIGHT], &row->inflight) != 0 ||
            keys_num(e[R_FAILED], &row->failed) != 0 ||
            keys_num(e[R_OLDEST], &row->oldest_due_ms) != 0)
            return keys_bad(err, "a key's row is not a key of 1..64 bytes and five integers");
        memcpy(row->key, e[R_KEY]->str, e[R_KEY]->len);
        row->key[e[R_KEY]->len] = '\0';
        row->key_len = e[R_KEY]->len;
        k->n = i + 1;
    }
    return DQ_OK;
}

/* ---- history (5.33): a head of 5, then 25 per row ------------------------------------ */

enum { HIST_VERSION, HIST_NOW, HIST_MINUTES, HIST_STEP, HIST_NROWS, HIST_HEAD };
enum {
    HROW_AT,
    HROW_COUNTS, /* enqueued .. lost: nine */
    HROW_RUN = HROW_COUNTS + 9,
    HROW_SUM = HROW_RUN + DQ_RUN_BUCKETS,
    HROW_BACKLOG,
    HROW_OLDEST,
    HROW_FIELDS
};

static int
history_bad(dq_err *err, size_t pos, int64_t v, const char *name, const char *want)
{
    return dq_err_set(err, DQ_EPROTO, "history reply: element %zu (%s) is %lld, expected %s",
                      pos + 1, name, (long long)v, want);
}

int
dq_reply_history(const redisReply *r, void *out, dq_err *err)
{
    static const char *const head_names[] = {"version", "now", "history minutes", "step ms",
                                             "rows"};
    static const char *const row_names[HROW_FIELDS] = {
        "at",       "enqueued", "started", "done",          "retried", "failed", "expired",
        "requeued", "dropped",  "lost",    "run 0",         "run 1",   "run 2",  "run 3",
        "run 4",    "run 5",    "run 6",   "run 7",         "run 8",   "run 9",  "run 10",
        "run 11",   "run sum",  "backlog", "oldest due age"};
    dq_history *h = out;
    int64_t head[HIST_HEAD];
    int rc;

    if (!is_array(r, HIST_HEAD))
        return bad_shape(err, "history", r, "an array of %d, then %d per row", HIST_HEAD,
                         HROW_FIELDS);
    for (size_t i = 0; i < HIST_HEAD; i++)
        if ((rc = get_int(r, i, "history", head_names[i], &head[i], err)) != DQ_OK)
            return rc;
    if (head[HIST_VERSION] != 1)
        return history_bad(err, HIST_VERSION, head[HIST_VERSION], "version", "1");
    if (head[HIST_NOW] <= 0)
        return history_bad(err, HIST_NOW, head[HIST_NOW], "now", "a time after the epoch");
    if (head[HIST_MINUTES] < 0 || head[HIST_MINUTES] > DQ_HISTORY_SPAN_MAX / 60000)
        return history_bad(err, HIST_MINUTES, head[HIST_MINUTES], "history minutes", "0..10080");
    if (head[HIST_STEP] < 60000 || head[HIST_STEP] > (int64_t)DQ_HISTORY_CALL_MIN * 60000 ||
        head[HIST_STEP] % 60000 != 0)
        return history_bad(err, HIST_STEP, head[HIST_STEP], "step ms",
                           "a whole number of minutes, 1..1440");
    if (head[HIST_NROWS] < 0 || head[HIST_NROWS] > DQ_HISTORY_CALL_MIN + 1)
        return history_bad(err, HIST_NROWS, head[HIST_NROWS], "rows", "0..1441");
    if (r->elements != HIST_HEAD + (size_t)head[HIST_NROWS] * HROW_FIELDS)
        return bad_shape(err, "history", r, "an array of %d + %d per row (%lld rows)", HIST_HEAD,
                         HROW_FIELDS, (long long)head[HIST_NROWS]);
    h->now_ms = head[HIST_NOW];
    h->history_minutes = head[HIST_MINUTES];
    h->step_ms = head[HIST_STEP];
    h->n = 0;
    if (head[HIST_NROWS] == 0)
        return DQ_OK;
    h->rows = calloc((size_t)head[HIST_NROWS], sizeof *h->rows);
    if (h->rows == NULL)
        return oom(err);
    for (size_t i = 0; i < (size_t)head[HIST_NROWS]; i++) {
        size_t at = HIST_HEAD + i * HROW_FIELDS;
        int64_t v[HROW_FIELDS];
        dq_history_row *row = &h->rows[i];
        for (size_t k = 0; k < HROW_FIELDS; k++) {
            if (!as_int(r->element[at + k], &v[k]))
                return bad_element(err, "history", at + k, r->element[at + k], "an integer",
                                   "%s of row %zu", row_names[k], i + 1);
        }
        if (v[HROW_AT] < 0 || (i > 0 && v[HROW_AT] <= h->rows[i - 1].at_ms)) {
            char name[32];
            snprintf(name, sizeof name, "at of row %zu", i + 1);
            return history_bad(err, at + HROW_AT, v[HROW_AT], name,
                               i > 0 ? "a time after the row before's" : "a time after the epoch");
        }
        /* a foreign write can make a count anything: negatives read as 0 */
        for (size_t k = HROW_COUNTS; k < HROW_BACKLOG; k++)
            if (v[k] < 0)
                v[k] = 0;
        row->at_ms = v[HROW_AT];
        row->enqueued = v[HROW_COUNTS + 0];
        row->started = v[HROW_COUNTS + 1];
        row->done = v[HROW_COUNTS + 2];
        row->retried = v[HROW_COUNTS + 3];
        row->failed = v[HROW_COUNTS + 4];
        row->expired = v[HROW_COUNTS + 5];
        row->requeued = v[HROW_COUNTS + 6];
        row->dropped = v[HROW_COUNTS + 7];
        row->lost = v[HROW_COUNTS + 8];
        memcpy(row->run, &v[HROW_RUN], sizeof row->run);
        row->run_sum_ms = v[HROW_SUM];
        /* no sample is -1 / -1; half a sample is none */
        if (v[HROW_BACKLOG] < 0 || v[HROW_OLDEST] < 0)
            v[HROW_BACKLOG] = v[HROW_OLDEST] = -1;
        row->backlog = v[HROW_BACKLOG];
        row->oldest_due_ms = v[HROW_OLDEST];
        h->n = i + 1;
    }
    return DQ_OK;
}
