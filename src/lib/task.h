/* SPDX-License-Identifier: MIT */
/*
 * task.h: building dq_task values from the bytes Redis stores (envelopes, running and
 * failure records; docs/PROTOCOL.md section 4) and the task-key rule. Pure: no Redis,
 * no replies; the reply parsers (reply.c) and the public calls (queue.c) use it.
 */
#ifndef DQ_LIB_TASK_H
#define DQ_LIB_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "delayq.h"

/* A NUL-terminated malloc()ed copy of @len bytes at @p, or NULL on OOM. */
char *dq_dup_bytes(const void *p, size_t len);

/* The bytes of a string of a dq_task: @len, or strlen(@s) when @len is 0 (a task built
 * by hand); 0 for NULL. */
static inline size_t
dq_slen(const char *s, size_t len)
{
    return len > 0 ? len : s != NULL ? strlen(s) : 0;
}

/* Empties @t with every time field -1 ("does not apply"), ready to be filled. */
void dq_task_init(dq_task *t);

/*
 * Fills @t from envelope bytes @m. An undecodable envelope is not an error here: the
 * task keeps its raw bytes, undecodable is set and @fallback_id names it. DQ_OK or
 * DQ_ENOMEM; on DQ_ENOMEM @t holds what was copied (dq_task_clear frees it).
 */
int dq_task_from_env(dq_task *t, const void *m, size_t len, const char *fallback_id);

/* A scheduled task: envelope @m due at @due_ms (dq_task_from_env otherwise). */
int dq_task_from_scheduled(dq_task *t, const void *m, size_t len, int64_t due_ms,
                           const char *fallback_id);

/* An in-flight task: task key @tk, lease deadline @lease_ms, running record @rec. */
int dq_task_from_running(dq_task *t, const char *tk, int64_t lease_ms, const void *rec, size_t len);

/* A done task (done retention): task key @tk, done at @done_ms, done record @rec (a record
 * that does not decode leaves the run's fields at -1 / NULL). No envelope: raw stays NULL
 * and the payload is empty. */
int dq_task_from_done(dq_task *t, const char *tk, int64_t done_ms, const void *rec, size_t len);

/* A failed task: task key @tk, failure record @rec. */
int dq_task_from_failed(dq_task *t, const char *tk, const void *rec, size_t len);

/* Appends history record @rec (PROTOCOL.md 4.5) to t->history; an entry that does not
 * decode is kept with outcome "?" (malformed data is shown, not fatal). DQ_OK or
 * DQ_ENOMEM (what was copied stays for dq_task_clear). */
int dq_task_add_history(dq_task *t, const void *rec, size_t len);

/*
 * The task key of @t ("c:" + id for a caller-chosen id, else the id) into @buf of
 * @size bytes (DQ_TASK_KEY_MAX + 1 holds any); snprintf semantics. The one place the
 * C side spells the rule of PROTOCOL.md "Task ids and task keys".
 */
size_t dq_task_key(const dq_task *t, char *buf, size_t size);

#endif /* DQ_LIB_TASK_H */
