/* SPDX-License-Identifier: MIT */
/*
 * env_build.h: the producer's side of the envelope (docs/PROTOCOL.md 4.1 and 5.2): the
 * library writes a whole v1 envelope and the enqueue script only splices in what must
 * come from the server. Pure: no Redis. Decoding stays in env.c.
 */
#ifndef DQ_LIB_ENV_BUILD_H
#define DQ_LIB_ENV_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Bytes of a template besides the id and the payload, at most (for sizing). */
#define DQ_ENV_TEMPLATE_OVERHEAD 73

/*
 * Appends to @b the envelope template of one task: attempt 0, seq and enqueued time as
 * cf + 8 zero bytes, max attempts @max_attempts (-1: nil, the queue's default; else
 * 0..2^32-1 with 0 unlimited), deadline nil when @deadline_ms is 0, else cf + 8 bytes
 * of @deadline_ms (ms after the due time), the payload as a bin, and a nil last error;
 * with @time_limit_ms > 0 a v2 envelope whose extensions are {"tl": @time_limit_ms}.
 * @id is NULL for a generated id, else @id_len bytes. The caller checks the values;
 * the buffer's failed flag reports OOM.
 */
void dq_env_template(struct dq_buf *b, const char *id, size_t id_len, int64_t max_attempts,
                     int64_t deadline_ms, int64_t time_limit_ms, const void *payload, size_t len);

/* The same, with @unique_for_ms > 0 adding the "uf" extension (the task's unique-for
 * window, PROTOCOL.md 4.1) after "tl". */
void dq_env_template_ext(struct dq_buf *b, const char *id, size_t id_len, int64_t max_attempts,
                         int64_t deadline_ms, int64_t time_limit_ms, int64_t unique_for_ms,
                         const void *payload, size_t len);

/* Appends the v2 extension map that carries @time_limit_ms and @unique_for_ms (each only
 * when > 0; keys in increasing order, as dq_env_template_ext writes it); nothing when
 * neither is set. Import rebuilds an exported task's extensions with it. */
void dq_env_ext_build(struct dq_buf *b, int64_t time_limit_ms, int64_t unique_for_ms);

#endif /* DQ_LIB_ENV_BUILD_H */
