/* SPDX-License-Identifier: MIT */
/*
 * fuzz_env.c: the record decoders (src/lib/env.c) for the envelope, the running record,
 * the failure record and the history record: bytes any producer or operator can put in
 * Redis. Every input goes to all four. Invariants: a refusal is DQ_EPROTO naming the record;
 * decoded views lie inside the input; counters and times are in their documented ranges; a record
 * is exactly one value, so it is refused once a byte is cut off or added; the task key follows
 * snprintf semantics; and re-encoding a decoded envelope with the msgpack writer decodes to the
 * same fields. The input also goes to the worker's claim path as one claimed envelope (the claim
 * reply's reader, src/lib/reply.c): it is taken exactly when the envelope decoder takes it, with
 * its fields, and marked undecodable otherwise (the worker then never runs it).
 */
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "fuzz.h"
#include "lib/env.h"
#include "lib/mp.h"
#include "lib/reply.h"

static const uint8_t *in_lo, *in_hi;

/* A view is either absent or inside the input. */
static bool
inside(struct dq_bytes b)
{
    return b.ptr == NULL ? b.len == 0 : b.ptr >= in_lo && b.ptr + b.len <= in_hi;
}

static bool
same_bytes(struct dq_bytes a, struct dq_bytes b)
{
    return (a.ptr == NULL) == (b.ptr == NULL) && a.len == b.len &&
           (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static void
put_opt_bytes(struct dq_buf *b, struct dq_bytes v, bool bin)
{
    if (v.ptr == NULL)
        dq_mp_put_nil(b);
    else if (bin)
        dq_mp_put_bin(b, v.ptr, v.len);
    else
        dq_mp_put_str(b, v.ptr, v.len);
}

/* Writes @e the way docs/PROTOCOL.md lays an envelope out. */
static void
put_env(struct dq_buf *b, const struct dq_env *e)
{
    dq_mp_put_array(b, e->ext.ptr != NULL ? 10 : 9); /* v2: and its extensions */
    dq_mp_put_uint(b, e->ext.ptr != NULL ? 2 : DQ_ENV_VERSION);
    dq_mp_put_u64fix(b, e->seq);
    put_opt_bytes(b, e->id, false);
    dq_mp_put_uint(b, e->attempt);
    dq_mp_put_uint(b, (uint64_t)e->enqueued_ms);
    dq_mp_put_uint(b, e->max_attempts);
    if (e->deadline_ms < 0)
        dq_mp_put_nil(b);
    else
        dq_mp_put_uint(b, (uint64_t)e->deadline_ms);
    put_opt_bytes(b, e->payload, true);
    put_opt_bytes(b, e->last_error, false);
    if (e->ext.ptr != NULL)
        dq_buf_append(b, e->ext.ptr, e->ext.len);
}

static void
check_env(const uint8_t *data, size_t size)
{
    struct dq_env e, e2;
    dq_err err = {0};
    char tk[300];

    if (dq_env_decode(data, size, &e, &err) != DQ_OK) {
        FUZZ_CHECK(err.code == DQ_EPROTO && strncmp(err.msg, "envelope: ", 10) == 0);
        return;
    }
    FUZZ_CHECK(inside(e.id) && inside(e.payload) && inside(e.last_error) && inside(e.ext));
    FUZZ_CHECK(e.time_limit_ms == -1 ||
               (e.time_limit_ms >= 1 && e.time_limit_ms <= DQ_TIME_LIMIT_MAX));
    FUZZ_CHECK(e.ext.ptr != NULL || e.time_limit_ms == -1); /* only v2 has extensions */
    FUZZ_CHECK(e.unique_for_ms == -1 ||
               (e.unique_for_ms >= 1 && e.unique_for_ms <= DQ_UNIQUE_FOR_MAX));
    FUZZ_CHECK(e.ext.ptr != NULL || e.unique_for_ms == -1);
    /* the key ("k"): 1..DQ_KEY_MAX bytes borrowed from the input, only in v2 */
    FUZZ_CHECK(e.key.ptr == NULL ||
               (inside(e.key) && e.key.len >= 1 && e.key.len <= DQ_KEY_MAX && e.ext.ptr != NULL));
    FUZZ_CHECK(e.payload.ptr != NULL && (e.id.ptr == NULL || e.id.len > 0));
    FUZZ_CHECK(e.seq <= 1ULL << 53 && e.enqueued_ms >= 0 && e.enqueued_ms <= 1LL << 53);
    FUZZ_CHECK(e.deadline_ms >= -1 && e.deadline_ms <= 1LL << 53);
    FUZZ_CHECK(dq_env_decode(data, size - 1, &e2, NULL) == DQ_EPROTO);

    size_t n = dq_env_tkey(&e, NULL, 0);
    FUZZ_CHECK(n > 0 && (e.id.ptr == NULL || n == 2 + e.id.len));
    if (n < sizeof tk) {
        FUZZ_CHECK(dq_env_tkey(&e, tk, sizeof tk) == n);
        FUZZ_CHECK(e.id.ptr != NULL ? memcmp(tk, "c:", 2) == 0 : tk[0] >= '0' && tk[0] <= '9');
    }

    struct dq_buf b = DQ_BUF_INIT;
    put_env(&b, &e);
    FUZZ_CHECK(!b.failed && dq_env_decode(b.data, b.len, &e2, NULL) == DQ_OK);
    FUZZ_CHECK(e2.seq == e.seq && e2.attempt == e.attempt && e2.max_attempts == e.max_attempts);
    FUZZ_CHECK(e2.enqueued_ms == e.enqueued_ms && e2.deadline_ms == e.deadline_ms);
    FUZZ_CHECK(same_bytes(e2.id, e.id) && same_bytes(e2.payload, e.payload) &&
               same_bytes(e2.last_error, e.last_error) && same_bytes(e2.ext, e.ext));
    FUZZ_CHECK(e2.time_limit_ms == e.time_limit_ms && e2.unique_for_ms == e.unique_for_ms);
    FUZZ_CHECK(same_bytes(e2.key, e.key));
    dq_buf_putc(&b, 0);
    FUZZ_CHECK(dq_env_decode(b.data, b.len, &e2, NULL) == DQ_EPROTO);
    dq_buf_free(&b);
}

static void
check_run(const uint8_t *data, size_t size)
{
    struct dq_run_rec rr, rr2;
    dq_err err = {0};

    if (dq_run_rec_decode(data, size, &rr, &err) != DQ_OK) {
        FUZZ_CHECK(err.code == DQ_EPROTO && strncmp(err.msg, "running record: ", 16) == 0);
        return;
    }
    FUZZ_CHECK(inside(rr.envelope) && inside(rr.worker) && rr.envelope.ptr && rr.worker.ptr);
    FUZZ_CHECK(rr.claimed_ms >= 0 && rr.due_ms >= 0);
    FUZZ_CHECK(dq_run_rec_decode(data, size - 1, &rr2, NULL) == DQ_EPROTO);
}

static void
check_fail(const uint8_t *data, size_t size)
{
    struct dq_fail_rec fr, fr2;
    dq_err err = {0};

    if (dq_fail_rec_decode(data, size, &fr, &err) != DQ_OK) {
        FUZZ_CHECK(err.code == DQ_EPROTO && strncmp(err.msg, "failure record: ", 16) == 0);
        return;
    }
    FUZZ_CHECK(inside(fr.raw) && inside(fr.reason) && inside(fr.error) && inside(fr.trace) &&
               inside(fr.who));
    FUZZ_CHECK(fr.raw.ptr && fr.reason.ptr && fr.error.ptr && fr.trace.ptr && fr.who.ptr);
    FUZZ_CHECK(fr.failed_ms >= 0);
    FUZZ_CHECK(dq_fail_rec_decode(data, size - 1, &fr2, NULL) == DQ_EPROTO);
}

static void
check_hist(const uint8_t *data, size_t size)
{
    struct dq_hist_rec h, h2;
    dq_err err = {0};

    if (dq_hist_rec_decode(data, size, &h, &err) != DQ_OK) {
        FUZZ_CHECK(err.code == DQ_EPROTO && strncmp(err.msg, "history record: ", 16) == 0);
        return;
    }
    FUZZ_CHECK(inside(h.worker) && inside(h.outcome) && inside(h.error));
    FUZZ_CHECK(h.worker.ptr && h.outcome.ptr && h.error.ptr);
    FUZZ_CHECK(h.started_ms >= 0 && h.duration_ms >= 0);
    FUZZ_CHECK(dq_hist_rec_decode(data, size - 1, &h2, NULL) == DQ_EPROTO);
}

static void
check_done(const uint8_t *data, size_t size)
{
    struct dq_done_rec d, d2;
    dq_err err = {0};

    if (dq_done_rec_decode(data, size, &d, &err) != DQ_OK) {
        FUZZ_CHECK(err.code == DQ_EPROTO && strncmp(err.msg, "done record: ", 13) == 0);
        return;
    }
    FUZZ_CHECK(inside(d.worker) && d.worker.ptr);
    FUZZ_CHECK(d.done_ms >= 0 && d.claimed_ms >= 0 && d.due_ms >= 0);
    FUZZ_CHECK(dq_done_rec_decode(data, size - 1, &d2, NULL) == DQ_EPROTO);
}

/* The input as the one envelope of a claim reply {now, next due, moved, envelope, due,
 * now us, done flag}. */
static void
check_claim(uint8_t *data, size_t size)
{
    redisReply now = {.type = REDIS_REPLY_INTEGER, .integer = 1700000000000};
    redisReply next = {.type = REDIS_REPLY_INTEGER, .integer = -1};
    redisReply moved = {.type = REDIS_REPLY_INTEGER, .integer = 0};
    redisReply env = {.type = REDIS_REPLY_STRING, .str = (char *)data, .len = size};
    redisReply due = {.type = REDIS_REPLY_INTEGER, .integer = 1700000000000};
    redisReply us = {.type = REDIS_REPLY_INTEGER, .integer = 0};
    redisReply keep = {.type = REDIS_REPLY_INTEGER, .integer = 0};
    redisReply *els[] = {&now, &next, &moved, &env, &due, &us, &keep};
    redisReply arr = {.type = REDIS_REPLY_ARRAY, .elements = 7, .element = els};
    dq_claimed cl;
    dq_err err = {0};
    struct dq_env e;

    memset(&cl, 0, sizeof cl);
    int rc = dq_reply_claim(&arr, &cl, &err);
    FUZZ_CHECK(rc == DQ_OK || rc == DQ_ENOMEM);
    if (rc == DQ_OK) {
        bool ok = dq_env_decode(data, size, &e, NULL) == DQ_OK;
        FUZZ_CHECK(cl.n == 1 && cl.tasks[0].undecodable == !ok);
        if (ok)
            FUZZ_CHECK(cl.tasks[0].attempt == e.attempt && cl.tasks[0].attempt <= DQ_ATTEMPTS_MAX &&
                       cl.tasks[0].payload_len == e.payload.len);
    }
    dq_claimed_free(&cl);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy one byte longer, so "one byte added" needs no second buffer. */
    uint8_t *copy = malloc(size + 1);

    if (copy == NULL)
        return 0;
    if (size > 0)
        memcpy(copy, data, size);
    in_lo = copy;
    in_hi = copy + size;
    check_env(copy, size);
    check_run(copy, size);
    check_fail(copy, size);
    check_hist(copy, size);
    check_done(copy, size);
    check_claim(copy, size);
    /* With a nil appended, at most one of the two lengths can be a whole record. */
    copy[size] = 0xc0;
    struct dq_env e;
    struct dq_run_rec rr;
    struct dq_fail_rec fr;
    FUZZ_CHECK(dq_env_decode(copy, size + 1, &e, NULL) == DQ_EPROTO ||
               dq_env_decode(copy, size, &e, NULL) == DQ_EPROTO);
    FUZZ_CHECK(dq_run_rec_decode(copy, size + 1, &rr, NULL) == DQ_EPROTO ||
               dq_run_rec_decode(copy, size, &rr, NULL) == DQ_EPROTO);
    FUZZ_CHECK(dq_fail_rec_decode(copy, size + 1, &fr, NULL) == DQ_EPROTO ||
               dq_fail_rec_decode(copy, size, &fr, NULL) == DQ_EPROTO);
    struct dq_hist_rec h;
    FUZZ_CHECK(dq_hist_rec_decode(copy, size + 1, &h, NULL) == DQ_EPROTO ||
               dq_hist_rec_decode(copy, size, &h, NULL) == DQ_EPROTO);
    struct dq_done_rec d;
    FUZZ_CHECK(dq_done_rec_decode(copy, size + 1, &d, NULL) == DQ_EPROTO ||
               dq_done_rec_decode(copy, size, &d, NULL) == DQ_EPROTO);
    free(copy);
    return 0;
}
