/* SPDX-License-Identifier: MIT */
/*
 * env.h: decoding the records delayq keeps in Redis (the task envelope, the running
 * record and the failure record; docs/PROTOCOL.md gives their layout). Pure and
 * bounds-checked: any byte string is safe to pass. Decoded views borrow from the
 * input buffer.
 */
#ifndef DQ_LIB_ENV_H
#define DQ_LIB_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

#define DQ_ENV_VERSION 1 /* without extensions; 2 with (PROTOCOL.md 4.1) */

struct dq_bytes {
    const unsigned char *ptr; /* borrowed; not NUL-terminated */
    size_t len;
};

struct dq_env {
    uint64_t seq;
    struct dq_bytes id; /* ptr NULL: generated id (the seq) */
    uint32_t attempt;
    uint32_t max_attempts;
    int64_t enqueued_ms;
    int64_t deadline_ms; /* -1: none */
    struct dq_bytes payload;
    struct dq_bytes last_error; /* ptr NULL: none */
    /* v2 only (PROTOCOL.md 4.1): the extension map's bytes as stored (ptr NULL in v1),
     * kept whole so a rewrite keeps extensions this reader does not know */
    struct dq_bytes ext;
    int64_t time_limit_ms; /* the "tl" extension; -1: none */
    int64_t unique_for_ms; /* the "uf" extension; -1: none */
};

struct dq_run_rec {
    struct dq_bytes envelope, worker;
    int64_t claimed_ms, due_ms;
};

struct dq_fail_rec {
    struct dq_bytes raw, reason, error, trace, who;
    int64_t failed_ms;
    bool undecodable;
};

/* A finished task kept by done retention (PROTOCOL.md 4.7). */
struct dq_done_rec {
    int64_t done_ms, claimed_ms, due_ms;
    uint32_t attempt; /* counted from 1 */
    struct dq_bytes worker;
};

/* One entry of a task's attempt history (PROTOCOL.md 4.5). */
struct dq_hist_rec {
    uint32_t attempt;
    int64_t started_ms, duration_ms;
    struct dq_bytes worker, outcome, error;
};

/* Each returns DQ_OK, or DQ_EPROTO (with a message naming the field) when @data is
 * not exactly one well-formed record of that kind, or DQ_ENOMEM. */
int dq_env_decode(const void *data, size_t len, struct dq_env *out, dq_err *err);
int dq_run_rec_decode(const void *data, size_t len, struct dq_run_rec *out, dq_err *err);
int dq_fail_rec_decode(const void *data, size_t len, struct dq_fail_rec *out, dq_err *err);
int dq_hist_rec_decode(const void *data, size_t len, struct dq_hist_rec *out, dq_err *err);
int dq_done_rec_decode(const void *data, size_t len, struct dq_done_rec *out, dq_err *err);

/* Reads a v2 extension map on its own (@data, exactly @len bytes), as dq_env_decode reads
 * the end of a v2 envelope: sets @out's ext, time_limit_ms and unique_for_ms (-1 when
 * absent) and nothing else. DQ_EPROTO when it is not a well-formed map. */
int dq_env_ext_decode(const void *data, size_t len, struct dq_env *out, dq_err *err);

/* The task key of an envelope ("c:" + id, or the seq in decimal); snprintf semantics.
 * The id's bytes are copied as they are, so the key holds a NUL where the id does. */
size_t dq_env_tkey(const struct dq_env *e, char *buf, size_t size);

#endif /* DQ_LIB_ENV_H */
