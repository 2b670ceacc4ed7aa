/* SPDX-License-Identifier: MIT */
/*
 * queue.c: the public queue operations, one per script in lua/. Each builds the
 * script's arguments, runs it through the registry and copies the reply into the
 * caller's result struct (docs/PROTOCOL.md gives every reply's shape).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "buf.h"
#include "client.h"
#include "delayq.h"
#include "env.h"
#include "err.h"
#include "scripts.h"

/* ---- reply helpers ---------------------------------------------------------------- */

static bool
reply_int(const redisReply *r, int64_t *v)
{
    if (r->type == REDIS_REPLY_INTEGER) {
        *v = r->integer;
        return true;
    }
    if (r->type == REDIS_REPLY_STRING && r->len > 0 && r->len < 24) {
        char tmp[24], *end;
        memcpy(tmp, r->str, r->len);
        tmp[r->len] = '\0';
        long long x = strtoll(tmp, &end, 10);
        if (*end == '\0' || *end == '.') {
            *v = x;
            return true;
        }
    }
    return false;
}

static bool
reply_array(const redisReply *r, size_t min)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements >= min;
}

static int
bad_reply(dq_err *err, const char *script)
{
    return dq_err_set(err, DQ_EPROTO, "unexpected reply from the %s script", script);
}

static char *
dup_bytes(const void *p, size_t len)
{
    char *s = malloc(len + 1);
    if (s != NULL) {
        if (len > 0)
            memcpy(s, p, len);
        s[len] = '\0';
    }
    return s;
}

/* ---- tasks -------------------------------------------------------------------------- */

void
dq_task_clear(dq_task *t)
{
    if (t == NULL)
        return;
    free(t->id);
    free(t->payload);
    free(t->last_error);
    free(t->worker);
    free(t->reason);
    free(t->error);
    free(t->trace);
    free(t->failed_by);
    free(t->raw);
    memset(t, 0, sizeof *t);
}

static void
task_init(dq_task *t)
{
    memset(t, 0, sizeof *t);
    t->deadline_ms = t->due_ms = t->enqueued_ms = -1;
    t->lease_ms = t->claimed_ms = t->failed_ms = -1;
}

/*
 * Fills @t from envelope bytes @m. An undecodable envelope is not an error here: the
 * task keeps its raw bytes, undecodable is set and @fallback_id names it.
 */
static int
task_from_env(dq_task *t, const void *m, size_t len, const char *fallback_id)
{
    struct dq_env e;

    t->raw = (unsigned char *)dup_bytes(m, len);
    t->raw_len = len;
    if (t->raw == NULL)
        return DQ_ENOMEM;
    if (dq_env_decode(m, len, &e, NULL) != DQ_OK) {
        t->undecodable = true;
        t->id = dup_bytes(fallback_id, strlen(fallback_id));
        return t->id ? DQ_OK : DQ_ENOMEM;
    }
    if (e.id.ptr != NULL) {
        t->id = dup_bytes(e.id.ptr, e.id.len);
        t->custom_id = true;
    } else {
        char buf[24];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)e.seq);
        t->id = dup_bytes(buf, strlen(buf));
    }
    t->seq = e.seq;
    t->attempt = e.attempt;
    t->max_attempts = e.max_attempts;
    t->enqueued_ms = e.enqueued_ms;
    t->deadline_ms = e.deadline_ms;
    t->payload = (unsigned char *)dup_bytes(e.payload.ptr, e.payload.len);
    t->payload_len = e.payload.len;
    if (e.last_error.ptr != NULL)
        t->last_error = dup_bytes(e.last_error.ptr, e.last_error.len);
    if (t->id == NULL || t->payload == NULL || (e.last_error.ptr && t->last_error == NULL))
        return DQ_ENOMEM;
    return DQ_OK;
}

/* The user-facing id of task key @tk ("c:x" -> "x"). */
static const char *
tkey_id(const char *tk)
{
    return strncmp(tk, "c:", 2) == 0 ? tk + 2 : tk;
}

static int
task_from_running(dq_task *t, const char *tk, int64_t lease_ms, const void *rec, size_t len)
{
    struct dq_run_rec rr;
    int rc;

    t->state = DQ_STATE_INFLIGHT;
    t->lease_ms = lease_ms;
    if (dq_run_rec_decode(rec, len, &rr, NULL) != DQ_OK) {
        rc = task_from_env(t, rec, len, tkey_id(tk));
        t->undecodable = true;
        return rc;
    }
    rc = task_from_env(t, rr.envelope.ptr, rr.envelope.len, tkey_id(tk));
    if (rc != DQ_OK)
        return rc;
    t->claimed_ms = rr.claimed_ms;
    t->due_ms = rr.due_ms;
    t->worker = dup_bytes(rr.worker.ptr, rr.worker.len);
    return t->worker ? DQ_OK : DQ_ENOMEM;
}

static int
task_from_failed(dq_task *t, const char *tk, const void *rec, size_t len)
{
    struct dq_fail_rec fr;
    int rc;

    t->state = DQ_STATE_FAILED;
    if (dq_fail_rec_decode(rec, len, &fr, NULL) != DQ_OK) {
        rc = task_from_env(t, rec, len, tkey_id(tk));
        t->undecodable = true;
        return rc;
    }
    rc = task_from_env(t, fr.raw.ptr, fr.raw.len, tkey_id(tk));
    if (rc != DQ_OK)
        return rc;
    /* Undecodable bytes are named by their task key, whatever they look like. */
    if (fr.undecodable) {
        free(t->id);
        t->id = dup_bytes(tk, strlen(tk));
        t->undecodable = true;
    }
    t->failed_ms = fr.failed_ms;
    t->reason = dup_bytes(fr.reason.ptr, fr.reason.len);
    t->error = dup_bytes(fr.error.ptr, fr.error.len);
    t->trace = dup_bytes(fr.trace.ptr, fr.trace.len);
    t->failed_by = dup_bytes(fr.who.ptr, fr.who.len);
    if (!t->id || !t->reason || !t->error || !t->trace || !t->failed_by)
        return DQ_ENOMEM;
    return DQ_OK;
}

/* ---- configuration ----------------------------------------------------------------- */

static const char *const cfg_fields[] = {
    "max_delay_ms", "max_payload",      "backoff_base_ms", "backoff_cap_ms",
    "max_attempts", "failed_retention", "audit_retention", "far_future_ms",
};

static int64_t *
cfg_slot(dq_config *c, size_t i)
{
    int64_t *slots[] = {&c->max_delay_ms,    &c->max_payload,  &c->backoff_base_ms,
                        &c->backoff_cap_ms,  &c->max_attempts, &c->failed_retention,
                        &c->audit_retention, &c->far_future_ms};
    return slots[i];
}

static int
parse_config(const redisReply *r, void *out, dq_err *err)
{
    dq_config *c = out;
    const size_t n = sizeof cfg_fields / sizeof cfg_fields[0];

    if (!reply_array(r, 2 * n))
        return bad_reply(err, "config");
    for (size_t i = 0; i < n; i++) {
        if (!reply_int(r->element[2 * i + 1], cfg_slot(c, i)))
            return bad_reply(err, "config");
    }
    return DQ_OK;
}

int
dq_config_get(dq_client *c, const char *queue, dq_config *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    dq_args_str(&a, c->who);
    rc = dq_scripts_run(c, DQ_SCRIPT_CONFIG, queue, &a, parse_config, out, err);
    dq_args_free(&a);
    return rc;
}

int
dq_config_set(dq_client *c, const char *queue, const dq_config *cfg, dq_err *err)
{
    struct dq_args a;
    dq_config got, in = *cfg;
    int rc;

    dq_args_init(&a);
    dq_args_str(&a, c->who);
    for (size_t i = 0; i < sizeof cfg_fields / sizeof cfg_fields[0]; i++) {
        int64_t v = *cfg_slot(&in, i);
        if (v != 0) {
            dq_args_str(&a, cfg_fields[i]);
            /* max_attempts 0 means unlimited in Redis; the struct spells it -1. */
            dq_args_i64(&a, v < 0 && i == 4 ? 0 : v);
        }
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_CONFIG, queue, &a, parse_config, &got, err);
    dq_args_free(&a);
    if (rc == DQ_OK)
        dq_registry_note(c, queue); /* configuring a queue makes it one (reading does not) */
    return rc;
}

/* ---- enqueue ------------------------------------------------------------------------ */

/* Fills one dq_enqueued from the reply's 3 fields at @f (id, status, due). */
static int
enqueued_from(redisReply *const *f, dq_enqueued *e, dq_err *err)
{
    int64_t status, due;

    if (f[0]->type != REDIS_REPLY_STRING || f[0]->len == 0 || f[0]->len >= sizeof e->id ||
        !reply_int(f[1], &status) || !reply_int(f[2], &due))
        return bad_reply(err, "enqueue");
    memcpy(e->id, f[0]->str, f[0]->len);
    e->id[f[0]->len] = '\0';
    e->duplicate = status != 0;
    e->where = status == 0 || status == 1 ? DQ_STATE_SCHEDULED
               : status == 2              ? DQ_STATE_INFLIGHT
                                          : DQ_STATE_FAILED;
    e->due_ms = due;
    return DQ_OK;
}

/* The results of one enqueue call: n entries to fill, in task order. */
struct enqueued_out {
    dq_enqueued *e;
    size_t n;
};

static int
parse_enqueue(const redisReply *r, void *out, dq_err *err)
{
    struct enqueued_out *o = out;

    if (!reply_array(r, 3 * o->n) || r->elements != 3 * o->n)
        return bad_reply(err, "enqueue");
    for (size_t i = 0; i < o->n; i++) {
        int rc = enqueued_from(r->element + 3 * i, &o->e[i], err);
        if (rc != DQ_OK)
            return rc;
    }
    return DQ_OK;
}

/* What the library checks of one task before sending it. */
static int
enqueue_check(const dq_enqueue_opts *o, dq_err *err)
{
    if (o->id != NULL && (o->id[0] == '\0' || strlen(o->id) > 200))
        return dq_err_set(err, DQ_EINVAL, "id: must be 1..200 bytes (got %zu)", strlen(o->id));
    if (o->delay_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "delay: %lld ms is negative", (long long)o->delay_ms);
    if (o->deadline_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "deadline: %lld ms is negative",
                          (long long)o->deadline_ms);
    return DQ_OK;
}

/* Appends one task's 6 arguments (lua/enqueue.lua) to @a. */
static void
enqueue_args(struct dq_args *a, const dq_enqueue_opts *o, const void *payload, size_t len)
{
    dq_args_bytes(a, len ? payload : "", len);
    dq_args_str(a, o->at_ms > 0 ? "a" : "d");
    dq_args_i64(a, o->at_ms > 0 ? o->at_ms : o->delay_ms);
    dq_args_str(a, o->id ? o->id : "");
    if (o->max_attempts == 0)
        dq_args_str(a, "");
    else
        dq_args_i64(a, o->max_attempts < 0 ? 0 : o->max_attempts);
    dq_args_i64(a, o->deadline_ms);
}

int
dq_enqueue(dq_client *c, const char *queue, const dq_enqueue_opts *opts, const void *payload,
           size_t payload_len, dq_enqueued *out, dq_err *err)
{
    static const dq_enqueue_opts none;
    struct enqueued_out o = {out, 1};
    struct dq_args a;
    int rc;

    if (opts == NULL)
        opts = &none;
    memset(out, 0, sizeof *out);
    rc = enqueue_check(opts, err);
    if (rc != DQ_OK)
        return rc;
    dq_args_init(&a);
    dq_args_str(&a, "1");
    enqueue_args(&a, opts, payload, payload_len);
    rc = dq_scripts_run(c, DQ_SCRIPT_ENQUEUE, queue, &a, parse_enqueue, &o, err);
    dq_args_free(&a);
    if (rc == DQ_OK)
        dq_registry_note(c, queue); /* producers make a queue discoverable */
    else
        memset(out, 0, sizeof *out);
    return rc;
}

/*
 * The script names a bad task by its place in the call ("task K: field: ..."); the caller
 * knows its items by index in the whole batch. Rewrites the message to "items[I]: ..."
 * and says which items were not added.
 */
static void
batch_error(dq_err *err, size_t base, size_t count)
{
    char rest[sizeof err->msg];
    unsigned long k = 0;
    int used = 0;

    if (err == NULL)
        return;
    snprintf(rest, sizeof rest, "%s", err->msg);
    if (sscanf(rest, "task %lu: %n", &k, &used) == 1 && used > 0 && k >= 1 && k <= count)
        snprintf(err->msg, sizeof err->msg, "items[%zu]: %.160s (items %zu..%zu not added)",
                 base + k - 1, rest + used, base, base + count - 1);
    else
        snprintf(err->msg, sizeof err->msg, "items %zu..%zu: %.160s (not added)", base,
                 base + count - 1, rest);
}

int
dq_enqueue_batch(dq_client *c, const char *queue, const dq_enqueue_item *items, size_t n,
                 dq_enqueued *out, dq_err *err)
{
    struct dq_args a;
    int rc = DQ_OK;

    if (n == 0)
        return dq_err_set(err, DQ_EINVAL, "n: 0 items; at least 1");
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        dq_err e1;
        rc = enqueue_check(&items[i].opts, &e1);
        if (rc != DQ_OK)
            return dq_err_set(err, rc, "items[%zu]: %.200s (nothing added)", i, e1.msg);
    }
    for (size_t base = 0; base < n && rc == DQ_OK; base += DQ_ENQUEUE_CHUNK) {
        size_t count = n - base < DQ_ENQUEUE_CHUNK ? n - base : DQ_ENQUEUE_CHUNK;
        struct enqueued_out o = {out + base, count};

        dq_args_init(&a);
        dq_args_i64(&a, (int64_t)count);
        for (size_t i = base; i < base + count; i++)
            enqueue_args(&a, &items[i].opts, items[i].payload, items[i].payload_len);
        rc = dq_scripts_run(c, DQ_SCRIPT_ENQUEUE, queue, &a, parse_enqueue, &o, err);
        dq_args_free(&a);
        if (rc == DQ_OK) {
            dq_registry_note(c, queue); /* once per client: later chunks find it noted */
        } else {
            memset(out + base, 0, count * sizeof *out);
            if (rc == DQ_EINVAL)
                batch_error(err, base, count);
        }
    }
    return rc;
}

/* ---- claim, ack, retry, fail, reap -------------------------------------------------- */

void
dq_claimed_free(dq_claimed *out)
{
    if (out == NULL)
        return;
    for (size_t i = 0; i < out->n; i++)
        dq_task_clear(&out->tasks[i]);
    free(out->tasks);
    memset(out, 0, sizeof *out);
}

static int
parse_claim(const redisReply *r, void *out, dq_err *err)
{
    dq_claimed *cl = out;
    int64_t moved;
    size_t n;

    if (!reply_array(r, 3) || (r->elements - 3) % 2 != 0 ||
        !reply_int(r->element[0], &cl->now_ms) || !reply_int(r->element[1], &cl->next_due_ms) ||
        !reply_int(r->element[2], &moved))
        return bad_reply(err, "claim");
    cl->to_failed = (size_t)moved;
    n = (r->elements - 3) / 2;
    if (n == 0)
        return DQ_OK;
    cl->tasks = calloc(n, sizeof *cl->tasks);
    if (cl->tasks == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const redisReply *m = r->element[3 + 2 * i];
        dq_task *t = &cl->tasks[i];

        task_init(t);
        cl->n = i + 1;
        if (m->type != REDIS_REPLY_STRING || !reply_int(r->element[4 + 2 * i], &t->due_ms))
            return bad_reply(err, "claim");
        if (task_from_env(t, m->str, m->len, "?") != DQ_OK)
            return dq_err_set(err, DQ_ENOMEM, "out of memory");
        t->state = DQ_STATE_INFLIGHT;
        t->claimed_ms = cl->now_ms;
    }
    return DQ_OK;
}

int
dq_claim(dq_client *c, const char *queue, unsigned batch, int64_t lease_ms, const char *worker,
         dq_claimed *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    out->next_due_ms = -1;
    dq_args_init(&a);
    dq_args_i64(&a, batch);
    dq_args_i64(&a, lease_ms);
    dq_args_str(&a, worker ? worker : c->who);
    rc = dq_scripts_run(c, DQ_SCRIPT_CLAIM, queue, &a, parse_claim, out, err);
    dq_args_free(&a);
    if (rc == DQ_OK)
        dq_registry_note(c, queue); /* workers make a queue discoverable */
    if (rc != DQ_OK) {
        dq_claimed_free(out);
        out->next_due_ms = -1;
    }
    /* Claimed tasks' lease is now + lease; fill it in for the caller. */
    for (size_t i = 0; i < out->n; i++)
        out->tasks[i].lease_ms = out->now_ms + lease_ms;
    return rc;
}

/* Run one of ack / retry / fail: they share (task key, attempt, ...) arguments. */
static int
finish(dq_client *c, enum dq_script_id id, const char *queue, const dq_task *t,
       const char *const *extra, size_t nextra, dq_parse_fn parse, void *out, dq_err *err)
{
    char tk[220];
    struct dq_args a;
    int rc;

    if (t == NULL || t->id == NULL || t->undecodable)
        return dq_err_set(err, DQ_EINVAL, "task: not a claimed task");
    snprintf(tk, sizeof tk, "%s%s", t->custom_id ? "c:" : "", t->id);
    dq_args_init(&a);
    dq_args_str(&a, tk);
    dq_args_i64(&a, t->attempt);
    dq_args_i64(&a, t->claimed_ms); /* with the attempt: the lease's fencing token */
    for (size_t i = 0; i < nextra; i++)
        dq_args_str(&a, extra[i] ? extra[i] : "");
    rc = dq_scripts_run(c, id, queue, &a, parse, out, err);
    dq_args_free(&a);
    return rc;
}

int
dq_ack(dq_client *c, const char *queue, const dq_task *t, dq_err *err)
{
    return finish(c, DQ_SCRIPT_ACK, queue, t, NULL, 0, NULL, NULL, err);
}

struct ack_many {
    size_t n;
    int *rcs;
    dq_err *errs;
};

static int
parse_ack_many(const redisReply *r, void *out, dq_err *err)
{
    struct ack_many *am = out;

    if (r->type != REDIS_REPLY_ARRAY || r->elements != am->n)
        return bad_reply(err, "ack");
    for (size_t i = 0; i < am->n; i++) {
        const redisReply *e = r->element[i];
        dq_err one = {0};
        if (e->type == REDIS_REPLY_INTEGER && e->integer == 1)
            am->rcs[i] = DQ_OK;
        else if (e->type == REDIS_REPLY_STRING)
            am->rcs[i] = dq_err_from_reply(&one, "ack", e->str, e->len);
        else
            return bad_reply(err, "ack");
        if (am->errs != NULL)
            am->errs[i] = one;
    }
    return DQ_OK;
}

int
dq_ack_many(dq_client *c, const char *queue, const dq_task *const *tasks, size_t n, int *rcs,
            dq_err *errs, dq_err *err)
{
    struct ack_many am = {n, rcs, errs};
    struct dq_args a;
    char(*tk)[220];
    int rc;

    if (n == 0 || n > 1000)
        return dq_err_set(err, DQ_EINVAL, "ack: %zu tasks is not 1..1000", n);
    for (size_t i = 0; i < n; i++) {
        const dq_task *t = tasks[i];
        if (t == NULL || t->id == NULL || t->undecodable)
            return dq_err_set(err, DQ_EINVAL, "tasks[%zu]: not a claimed task", i);
    }
    if (n == 1) { /* the script answers one task with 1 or an error reply */
        dq_err one = {0};
        rc = dq_ack(c, queue, tasks[0], &one);
        if (rc != DQ_OK && rc != DQ_ELEASE && rc != DQ_EPROTO) {
            if (err != NULL)
                *err = one;
            return rc;
        }
        rcs[0] = rc;
        if (errs != NULL)
            errs[0] = one;
        return DQ_OK;
    }
    /* the arguments point into these keys until the call returns */
    if ((tk = malloc(n * sizeof *tk)) == NULL)
        return dq_err_set(err, DQ_ENOMEM, "ack: out of memory");
    dq_args_init(&a);
    for (size_t i = 0; i < n; i++) {
        snprintf(tk[i], sizeof tk[i], "%s%s", tasks[i]->custom_id ? "c:" : "", tasks[i]->id);
        dq_args_str(&a, tk[i]);
        dq_args_i64(&a, tasks[i]->attempt);
        dq_args_i64(&a, tasks[i]->claimed_ms);
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_ACK, queue, &a, parse_ack_many, &am, err);
    dq_args_free(&a);
    free(tk);
    return rc;
}

static int
parse_retry(const redisReply *r, void *out, dq_err *err)
{
    dq_retried *rt = out;
    int64_t ex;

    if (!reply_array(r, 2) || !reply_int(r->element[0], &ex) ||
        !reply_int(r->element[1], &rt->due_ms))
        return bad_reply(err, "retry");
    rt->exhausted = ex != 0;
    return DQ_OK;
}

int
dq_retry(dq_client *c, const char *queue, const dq_task *t, const char *message, dq_retried *out,
         dq_err *err)
{
    const char *extra[2] = {message, c->who};
    dq_retried tmp;

    if (out == NULL)
        out = &tmp;
    memset(out, 0, sizeof *out);
    return finish(c, DQ_SCRIPT_RETRY, queue, t, extra, 2, parse_retry, out, err);
}

int
dq_fail(dq_client *c, const char *queue, const dq_task *t, const char *message, const char *trace,
        dq_err *err)
{
    const char *extra[3] = {message, trace, c->who};

    return finish(c, DQ_SCRIPT_FAIL, queue, t, extra, 3, NULL, NULL, err);
}

static int
parse_reap(const redisReply *r, void *out, dq_err *err)
{
    dq_reaped *rp = out;
    int64_t a, b;

    if (!reply_array(r, 3) || !reply_int(r->element[0], &a) || !reply_int(r->element[1], &b) ||
        !reply_int(r->element[2], &rp->next_lease_ms))
        return bad_reply(err, "reap");
    rp->returned = (size_t)a;
    rp->exhausted = (size_t)b;
    return DQ_OK;
}

int
dq_reap(dq_client *c, const char *queue, unsigned limit, dq_reaped *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    dq_args_i64(&a, limit);
    dq_args_str(&a, c->who);
    rc = dq_scripts_run(c, DQ_SCRIPT_REAP, queue, &a, parse_reap, out, err);
    dq_args_free(&a);
    return rc;
}

/* ---- requeue, drop ------------------------------------------------------------------ */

static int
parse_first_count(const redisReply *r, void *out, dq_err *err)
{
    int64_t v;

    if (!reply_array(r, 1) || !reply_int(r->element[0], &v))
        return bad_reply(err, "operator");
    *(size_t *)out = (size_t)v;
    return DQ_OK;
}

static int
check_ids(const char *const *ids, size_t n, dq_err *err)
{
    if (n == 0 || n > 1000)
        return dq_err_set(err, DQ_EINVAL, "ids: %zu given; 1..1000 per call", n);
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == NULL || ids[i][0] == '\0' || strlen(ids[i]) > 220)
            return dq_err_set(err, DQ_EINVAL, "ids: id %zu is empty or longer than 220 bytes",
                              i + 1);
    }
    return DQ_OK;
}

int
dq_requeue(dq_client *c, const char *queue, const char *const *ids, size_t n, int64_t delay_ms,
           size_t *moved, dq_err *err)
{
    struct dq_args a;
    size_t tmp;
    int rc;

    if (moved == NULL)
        moved = &tmp;
    *moved = 0;
    rc = check_ids(ids, n, err);
    if (rc != DQ_OK)
        return rc;
    dq_args_init(&a);
    dq_args_str(&a, "ids");
    dq_args_i64(&a, delay_ms);
    dq_args_str(&a, c->who);
    for (size_t i = 0; i < n; i++)
        dq_args_str(&a, ids[i]);
    rc = dq_scripts_run(c, DQ_SCRIPT_REQUEUE, queue, &a, parse_first_count, moved, err);
    dq_args_free(&a);
    return rc;
}

static int
parse_requeue_all(const redisReply *r, void *out, dq_err *err)
{
    dq_bulk *b = out;
    int64_t v[8];

    if (!reply_array(r, 8) || r->element[6]->type != REDIS_REPLY_STRING ||
        r->element[6]->len >= sizeof b->cursor_key)
        return bad_reply(err, "requeue");
    for (int i = 0; i < 8; i++) {
        if (i != 6 && !reply_int(r->element[i], &v[i]))
            return bad_reply(err, "requeue");
    }
    memcpy(b->cursor_key, r->element[6]->str, r->element[6]->len);
    b->cursor_key[r->element[6]->len] = '\0';
    b->cursor_ms = v[7];
    b->until_ms = v[1];
    b->total = (size_t)v[2];
    b->done_n = (size_t)v[3];
    b->skipped = (size_t)v[4];
    b->done = v[5] != 0;
    return DQ_OK;
}

int
dq_requeue_all_step(dq_client *c, const char *queue, int64_t delay_ms, int64_t spread_ms,
                    dq_bulk *cur, dq_err *err)
{
    struct dq_args a;
    bool first = cur->until_ms == 0;
    int rc;

    if (cur->done)
        return DQ_OK;
    dq_args_init(&a);
    dq_args_str(&a, "all");
    dq_args_i64(&a, delay_ms);
    dq_args_str(&a, c->who);
    if (first) {
        dq_args_str(&a, "");
        dq_args_i64(&a, spread_ms);
        dq_args_str(&a, "");
    } else {
        dq_args_i64(&a, cur->until_ms);
        dq_args_i64(&a, spread_ms);
        dq_args_i64(&a, (int64_t)cur->total);
    }
    dq_args_i64(&a, (int64_t)cur->done_n);
    dq_args_i64(&a, (int64_t)cur->skipped);
    dq_args_str(&a, first ? "" : cur->cursor_key);
    dq_args_i64(&a, first ? 0 : cur->cursor_ms);
    rc = dq_scripts_run(c, DQ_SCRIPT_REQUEUE, queue, &a, parse_requeue_all, cur, err);
    dq_args_free(&a);
    return rc;
}

static int
parse_drop_all(const redisReply *r, void *out, dq_err *err)
{
    dq_bulk *b = out;
    int64_t n, until, fin;

    if (!reply_array(r, 3) || !reply_int(r->element[0], &n) || !reply_int(r->element[1], &until) ||
        !reply_int(r->element[2], &fin))
        return bad_reply(err, "drop");
    b->done_n += (size_t)n;
    b->until_ms = until;
    b->done = fin != 0;
    return DQ_OK;
}

int
dq_drop_all_step(dq_client *c, const char *queue, dq_bulk *cur, dq_err *err)
{
    struct dq_args a;
    int rc;

    if (cur->done)
        return DQ_OK;
    dq_args_init(&a);
    dq_args_str(&a, "all");
    dq_args_str(&a, c->who);
    if (cur->until_ms == 0)
        dq_args_str(&a, "");
    else
        dq_args_i64(&a, cur->until_ms);
    rc = dq_scripts_run(c, DQ_SCRIPT_DROP, queue, &a, parse_drop_all, cur, err);
    dq_args_free(&a);
    return rc;
}

/* ---- find --------------------------------------------------------------------------- */

struct find_state {
    dq_task *out;
    bool found, more;
    struct dq_buf cursor; /* the scan cursor: the last member looked at */
    char cursor_score[32];
};

static int
parse_find(const redisReply *r, void *out, dq_err *err)
{
    struct find_state *fs = out;
    const redisReply *kind;

    if (!reply_array(r, 1) || r->element[0]->type != REDIS_REPLY_STRING)
        return bad_reply(err, "find");
    kind = r->element[0];
    if (kind->len == 4 && memcmp(kind->str, "none", 4) == 0)
        return DQ_OK;
    if (kind->len == 4 && memcmp(kind->str, "more", 4) == 0) {
        if (!reply_array(r, 3) || r->element[1]->type != REDIS_REPLY_STRING ||
            r->element[2]->type != REDIS_REPLY_STRING ||
            r->element[2]->len >= sizeof fs->cursor_score)
            return bad_reply(err, "find");
        dq_buf_reset(&fs->cursor);
        dq_buf_append(&fs->cursor, r->element[1]->str, r->element[1]->len);
        if (fs->cursor.failed)
            return dq_err_set(err, DQ_ENOMEM, "out of memory");
        memcpy(fs->cursor_score, r->element[2]->str, r->element[2]->len);
        fs->cursor_score[r->element[2]->len] = '\0';
        fs->more = true;
        return DQ_OK;
    }
    if (kind->len == 9 && memcmp(kind->str, "scheduled", 9) == 0) {
        if (!reply_array(r, 3) || r->element[1]->type != REDIS_REPLY_STRING)
            return bad_reply(err, "find");
        task_init(fs->out);
        fs->found = true;
        fs->out->state = DQ_STATE_SCHEDULED;
        if (!reply_int(r->element[2], &fs->out->due_ms) ||
            task_from_env(fs->out, r->element[1]->str, r->element[1]->len, "?") != DQ_OK)
            return dq_err_set(err, DQ_ENOMEM, "out of memory");
        return DQ_OK;
    }
    if (!reply_array(r, 4) || r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[3]->type != REDIS_REPLY_STRING)
        return bad_reply(err, "find");
    int64_t score;
    char tk[240];
    if (!reply_int(r->element[2], &score) || r->element[1]->len >= sizeof tk)
        return bad_reply(err, "find");
    memcpy(tk, r->element[1]->str, r->element[1]->len);
    tk[r->element[1]->len] = '\0';
    task_init(fs->out);
    fs->found = true;
    int rc;
    if (kind->len == 8 && memcmp(kind->str, "inflight", 8) == 0) {
        rc = task_from_running(fs->out, tk, score, r->element[3]->str, r->element[3]->len);
    } else {
        rc = task_from_failed(fs->out, tk, r->element[3]->str, r->element[3]->len);
    }
    return rc == DQ_OK ? DQ_OK : dq_err_set(err, DQ_ENOMEM, "out of memory");
}

int
dq_find(dq_client *c, const char *queue, const char *id, dq_task *out, dq_err *err)
{
    struct find_state fs = {.out = out, .cursor = DQ_BUF_INIT};
    int rc;

    memset(out, 0, sizeof *out);
    if (id == NULL || id[0] == '\0' || strlen(id) > 220)
        return dq_err_set(err, DQ_EINVAL, "id: must be 1..220 bytes");
    do {
        struct dq_args a;
        fs.more = false;
        dq_args_init(&a);
        dq_args_str(&a, id);
        dq_args_bytes(&a, fs.cursor.len ? fs.cursor.data : "", fs.cursor.len);
        dq_args_str(&a, fs.cursor_score);
        rc = dq_scripts_run(c, DQ_SCRIPT_FIND, queue, &a, parse_find, &fs, err);
        dq_args_free(&a);
    } while (rc == DQ_OK && fs.more);
    dq_buf_free(&fs.cursor);
    if (rc != DQ_OK) {
        dq_task_clear(out);
        return rc;
    }
    if (!fs.found)
        return dq_err_set(err, DQ_ENOTFOUND, "task %s: not found in queue %s", id, queue);
    return DQ_OK;
}

int
dq_drop(dq_client *c, const char *queue, const char *const *ids, size_t n, size_t *dropped,
        dq_err *err)
{
    struct dq_args a;
    dq_task *found = NULL;
    size_t tmp;
    int rc;

    if (dropped == NULL)
        dropped = &tmp;
    *dropped = 0;
    rc = check_ids(ids, n, err);
    if (rc != DQ_OK)
        return rc;
    /* A scheduled task with a generated id is named by its envelope bytes, which only a
     * scan can find; look those up first. The script re-checks everything atomically. */
    found = calloc(n, sizeof *found);
    if (found == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    dq_args_init(&a);
    dq_args_str(&a, "ids");
    dq_args_str(&a, c->who);
    for (size_t i = 0; i < n; i++) {
        dq_args_str(&a, ids[i]);
        if (strspn(ids[i], "0123456789") == strlen(ids[i])) {
            dq_err ferr;
            rc = dq_find(c, queue, ids[i], &found[i], &ferr);
            if (rc != DQ_OK && rc != DQ_ENOTFOUND) {
                if (err != NULL)
                    *err = ferr;
                goto out;
            }
            rc = DQ_OK;
        }
        if (found[i].state == DQ_STATE_SCHEDULED)
            dq_args_bytes(&a, found[i].raw, found[i].raw_len);
        else
            dq_args_str(&a, "");
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_DROP, queue, &a, parse_first_count, dropped, err);
out:
    dq_args_free(&a);
    for (size_t i = 0; i < n; i++)
        dq_task_clear(&found[i]);
    free(found);
    return rc;
}

/* ---- stats, page, audit ------------------------------------------------------------ */

static int
parse_stats(const redisReply *r, void *out, dq_err *err)
{
    dq_stats *s = out;
    int64_t *f[] = {&s->now_ms,         &s->due,          &s->future,
                    &s->far_future,     &s->inflight,     &s->failed,
                    &s->expired_leases, &s->next_due_ms,  &s->oldest_due_age_ms,
                    &s->far_future_ms,  &s->enqueued,     &s->done,
                    &s->retried,        &s->failed_total, &s->expired,
                    &s->trimmed,        &s->reaped,       &s->requeued,
                    &s->dropped};
    const size_t n = sizeof f / sizeof f[0];

    if (!reply_array(r, n))
        return bad_reply(err, "stats");
    for (size_t i = 0; i < n; i++) {
        if (!reply_int(r->element[i], f[i]))
            return bad_reply(err, "stats");
    }
    return DQ_OK;
}

int
dq_stats_get(dq_client *c, const char *queue, dq_stats *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    rc = dq_scripts_run(c, DQ_SCRIPT_STATS, queue, &a, parse_stats, out, err);
    dq_args_free(&a);
    return rc;
}

void
dq_page_free(dq_page *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        dq_task_clear(&p->tasks[i]);
    free(p->tasks);
    memset(p, 0, sizeof *p);
}

struct page_state {
    dq_page *page;
    dq_view view;
};

/* Appends the items of a page or search reply (3 elements each from r->element[first]:
 * key or envelope, score, record) to @p as tasks of @view. */
static int
append_items(const redisReply *r, size_t first, dq_view view, dq_page *p, dq_err *err)
{
    size_t n = (r->elements - first) / 3;

    if (n == 0)
        return DQ_OK;
    dq_task *grown = realloc(p->tasks, (p->n + n) * sizeof *grown);
    if (grown == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    p->tasks = grown;
    for (size_t i = 0; i < n; i++) {
        const redisReply *k = r->element[first + 3 * i], *d = r->element[first + 3 * i + 2];
        dq_task *t = &p->tasks[p->n];
        int64_t score;
        char tk[240];
        int rc;

        task_init(t);
        p->n++;
        if (k->type != REDIS_REPLY_STRING || d->type != REDIS_REPLY_STRING ||
            !reply_int(r->element[first + 3 * i + 1], &score))
            return bad_reply(err, "page");
        if (view == DQ_VIEW_DUE || view == DQ_VIEW_FUTURE) {
            rc = task_from_env(t, k->str, k->len, "?");
            t->state = DQ_STATE_SCHEDULED;
            t->due_ms = score;
            if (t->undecodable) {
                /* Name it the way claim will when it moves it to failed. */
                free(t->id);
                t->id = dup_bytes("undecodable", 11);
            }
        } else {
            snprintf(tk, sizeof tk, "%.*s", (int)k->len, k->str);
            if (view == DQ_VIEW_INFLIGHT)
                rc = task_from_running(t, tk, score, d->str, d->len);
            else
                rc = task_from_failed(t, tk, d->str, d->len);
            if (view == DQ_VIEW_FAILED && t->failed_ms < 0)
                t->failed_ms = score;
        }
        if (rc != DQ_OK || t->id == NULL)
            return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    return DQ_OK;
}

static int
parse_page(const redisReply *r, void *out, dq_err *err)
{
    struct page_state *ps = out;
    dq_page *p = ps->page;

    if (!reply_array(r, 2) || (r->elements - 2) % 3 != 0 || !reply_int(r->element[0], &p->now_ms) ||
        !reply_int(r->element[1], &p->total))
        return bad_reply(err, "page");
    return append_items(r, 2, ps->view, p, err);
}

int
dq_page_get(dq_client *c, const char *queue, dq_view view, size_t offset, size_t limit,
            dq_page *out, dq_err *err)
{
    static const char *const names[] = {"due", "future", "inflight", "failed"};
    struct page_state ps = {out, view};
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if ((unsigned)view > DQ_VIEW_FAILED)
        return dq_err_set(err, DQ_EINVAL, "view: %d is not a view", (int)view);
    dq_args_init(&a);
    dq_args_str(&a, names[view]);
    dq_args_i64(&a, (int64_t)offset);
    dq_args_i64(&a, (int64_t)limit);
    rc = dq_scripts_run(c, DQ_SCRIPT_PAGE, queue, &a, parse_page, &ps, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_page_free(out);
    return rc;
}

void
dq_audit_free(dq_audit *au)
{
    if (au == NULL)
        return;
    for (size_t i = 0; i < au->n; i++) {
        free(au->entries[i].who);
        free(au->entries[i].action);
        free(au->entries[i].detail);
        free(au->entries[i].result);
    }
    free(au->entries);
    memset(au, 0, sizeof *au);
}

static int
parse_audit(const redisReply *r, void *out, dq_err *err)
{
    dq_audit *au = out;

    if (r->type != REDIS_REPLY_ARRAY)
        return bad_reply(err, "audit");
    if (r->elements == 0)
        return DQ_OK;
    au->entries = calloc(r->elements, sizeof *au->entries);
    if (au->entries == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        dq_audit_entry *ae = &au->entries[au->n++];

        if (!reply_array(e, 2) || e->element[0]->type != REDIS_REPLY_STRING ||
            e->element[1]->type != REDIS_REPLY_ARRAY)
            return bad_reply(err, "audit");
        ae->at_ms = strtoll(e->element[0]->str, NULL, 10);
        const redisReply *f = e->element[1];
        for (size_t j = 0; j + 1 < f->elements; j += 2) {
            const redisReply *k = f->element[j], *v = f->element[j + 1];
            char **slot = NULL;
            if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
                continue;
            if (k->len == 3 && memcmp(k->str, "who", 3) == 0)
                slot = &ae->who;
            else if (k->len == 6 && memcmp(k->str, "action", 6) == 0)
                slot = &ae->action;
            else if (k->len == 6 && memcmp(k->str, "detail", 6) == 0)
                slot = &ae->detail;
            else if (k->len == 6 && memcmp(k->str, "result", 6) == 0)
                slot = &ae->result;
            if (slot != NULL && *slot == NULL)
                *slot = dup_bytes(v->str, v->len);
        }
        char **all[] = {&ae->who, &ae->action, &ae->detail, &ae->result};
        for (int j = 0; j < 4; j++) {
            if (*all[j] == NULL)
                *all[j] = dup_bytes("", 0);
            if (*all[j] == NULL)
                return dq_err_set(err, DQ_ENOMEM, "out of memory");
        }
    }
    return DQ_OK;
}

int
dq_audit_get(dq_client *c, const char *queue, size_t limit, dq_audit *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    dq_args_i64(&a, (int64_t)limit);
    rc = dq_scripts_run(c, DQ_SCRIPT_AUDIT, queue, &a, parse_audit, out, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_audit_free(out);
    return rc;
}

/* ---- extend, release ---------------------------------------------------------------- */

struct extend_state {
    bool *lost;
    size_t n;
};

static int
parse_extend(const redisReply *r, void *out, dq_err *err)
{
    struct extend_state *es = out;
    int64_t v;

    if (!reply_array(r, es->n))
        return bad_reply(err, "extend");
    for (size_t i = 0; i < es->n; i++) {
        if (!reply_int(r->element[i], &v))
            return bad_reply(err, "extend");
        if (es->lost != NULL)
            es->lost[i] = v < 0;
    }
    return DQ_OK;
}

int
dq_extend(dq_client *c, const char *queue, const dq_task *const *tasks, size_t n, int64_t lease_ms,
          bool *lost, dq_err *err)
{
    struct extend_state es = {lost, n};
    struct dq_args a;
    struct {
        char tk[220];
        char attempt[16];
        char claimed[24];
    } * tks;
    int rc;

    if (n == 0 || n > 1000)
        return dq_err_set(err, DQ_EINVAL, "extend: %zu tasks; 1..1000 per call", n);
    for (size_t i = 0; i < n; i++) {
        if (tasks[i] == NULL || tasks[i]->id == NULL || tasks[i]->undecodable)
            return dq_err_set(err, DQ_EINVAL, "extend: task %zu is not a claimed task", i + 1);
    }
    tks = malloc(n * sizeof *tks);
    if (tks == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    dq_args_init(&a);
    dq_args_i64(&a, lease_ms);
    for (size_t i = 0; i < n; i++) {
        /* formatted here: dq_args_i64 keeps at most 16 numbers */
        snprintf(tks[i].tk, sizeof tks[i].tk, "%s%s", tasks[i]->custom_id ? "c:" : "",
                 tasks[i]->id);
        snprintf(tks[i].attempt, sizeof tks[i].attempt, "%u", tasks[i]->attempt);
        snprintf(tks[i].claimed, sizeof tks[i].claimed, "%lld", (long long)tasks[i]->claimed_ms);
        dq_args_str(&a, tks[i].tk);
        dq_args_str(&a, tks[i].attempt);
        dq_args_str(&a, tks[i].claimed);
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_EXTEND, queue, &a, parse_extend, &es, err);
    dq_args_free(&a);
    free(tks);
    return rc;
}

int
dq_release(dq_client *c, const char *queue, const dq_task *t, dq_err *err)
{
    return finish(c, DQ_SCRIPT_RELEASE, queue, t, NULL, 0, NULL, NULL, err);
}

int
dq_run_now(dq_client *c, const char *queue, const dq_task *t, dq_err *err)
{
    struct dq_args a;
    int rc;

    if (t == NULL || t->id == NULL || t->undecodable || t->state != DQ_STATE_SCHEDULED)
        return dq_err_set(err, DQ_EINVAL, "run now: not a scheduled task");
    dq_args_init(&a);
    dq_args_str(&a, "now");
    dq_args_i64(&a, 0);
    dq_args_str(&a, c->who);
    dq_args_str(&a, t->id);
    if (t->custom_id)
        dq_args_str(&a, "");
    else
        dq_args_bytes(&a, t->raw, t->raw_len);
    rc = dq_scripts_run(c, DQ_SCRIPT_REQUEUE, queue, &a, NULL, NULL, err);
    dq_args_free(&a);
    return rc;
}

struct search_state {
    dq_search *cur;
    dq_page *found;
    dq_view view;
};

static int
parse_search(const redisReply *r, void *out, dq_err *err)
{
    struct search_state *ss = out;
    int64_t next, total;
    int rc;

    if (!reply_array(r, 2) || (r->elements - 2) % 3 != 0 || !reply_int(r->element[0], &next) ||
        !reply_int(r->element[1], &total))
        return bad_reply(err, "search");
    rc = append_items(r, 2, ss->view, ss->found, err);
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

int
dq_search_step(dq_client *c, const char *queue, dq_view view, const char *needle, size_t most,
               dq_search *cur, dq_page *found, dq_err *err)
{
    static const char *const names[] = {"due", "future", "inflight", "failed"};
    struct search_state ss = {cur, found, view};
    struct dq_args a;
    int rc;

    if (cur->done)
        return DQ_OK;
    if ((unsigned)view > DQ_VIEW_FAILED)
        return dq_err_set(err, DQ_EINVAL, "view: %d is not a view", (int)view);
    if (needle == NULL || needle[0] == '\0' || strlen(needle) > 200)
        return dq_err_set(err, DQ_EINVAL, "search: the text must be 1..200 bytes");
    dq_args_init(&a);
    dq_args_str(&a, names[view]);
    dq_args_str(&a, needle);
    dq_args_i64(&a, cur->cursor);
    dq_args_i64(&a, 1000);
    dq_args_i64(&a, (int64_t)(most < 1 ? 1 : most > 1000 ? 1000 : most));
    rc = dq_scripts_run(c, DQ_SCRIPT_SEARCH, queue, &a, parse_search, &ss, err);
    dq_args_free(&a);
    return rc;
}
