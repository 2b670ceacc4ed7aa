/* SPDX-License-Identifier: MIT */
/*
 * taskfmt.h: how a task reads as text, the one home of it for the delayq command
 * (`show`, `ls --json`) and the inspector (details, clipboard). Everything is written
 * into a dq_buf; bytes from Redis are escaped (text) or JSON-escaped (JSON), so the
 * result is terminal-safe either way. Pure: no I/O.
 */
#ifndef DQ_FMT_TASKFMT_H
#define DQ_FMT_TASKFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"
#include "lib/buf.h"

/* "3/25" (attempts made / at most), "3" when unlimited, "-" for undecodable bytes;
 * snprintf semantics. */
size_t dq_fmt_attempts(char *buf, size_t size, const dq_task *t);

/* "2026-11-29T08:42:38.123Z (in 5m03s)" / "(2m ago)" relative to @now_ms; a negative
 * @ms gives "-". snprintf semantics. */
size_t dq_fmt_time_rel(char *buf, size_t size, int64_t ms, int64_t now_ms);

/* An audit entry's detail for people: "NNNms" becomes a duration ("30000ms": "30s") and
 * the epoch milliseconds after "until ", "since " or "due " an RFC 3339 time with its distance
 * from @now_ms (dq_fmt_time_rel; @now_ms < 0: the time alone); everything else is
 * copied as it is (the caller
 * escapes it: it holds bytes from Redis). */
void dq_fmt_audit_detail(struct dq_buf *b, const char *detail, int64_t now_ms);

/* A JSON string literal of untrusted bytes: invalid UTF-8 bytes become \u00XX (the
 * byte as a Latin-1 code point), and C0, DEL, C1, the bidi controls (dq_esc_is_unsafe),
 * U+2028 and U+2029 are escaped, so the literal is also terminal-safe. */
void dq_fmt_json_str(struct dq_buf *b, const void *s, size_t len);

/* A payload as a JSON value: msgpack decoded to JSON (dq_mp_to_json), or
 * {"$raw_base64":"..."} for bytes that are not one msgpack value. */
void dq_fmt_payload_json(struct dq_buf *b, const void *payload, size_t len);

/* A task as one JSON object on one line, no newline (`ls --json`, `show --json`). */
void dq_fmt_task_json(struct dq_buf *b, const dq_task *t, int64_t now_ms);

/* A task as one JSON record of `delayq export` (docs/PROTOCOL.md 5.23), no
 * newline: the fields of dq_fmt_task_json() and "queue" (@queue), without what depends
 * on the moment (lease_expired), written losslessly: a string that is not UTF-8 as
 * {"$str_base64":...}, and the payload as JSON only when dq_json_to_mp() reads that JSON
 * back to exactly its bytes, else as "payload_b64". src/fmt/taskrec.c reads it back. */
void dq_fmt_task_export(struct dq_buf *b, const dq_task *t, const char *queue);

/* How done task @t ran (done retention): "after 120ms on worker w1 (attempt 2)", the
 * worker escaped, without a newline (show and `ls done`). */
void dq_fmt_done_run(struct dq_buf *b, const dq_task *t);

/* Whether schedule @s's last firing was a late catch-up (PROTOCOL.md 5.30): firings
 * were missed, or it ran a second or more after its time (`schedule ls`, the inspector's
 * LATE). */
bool dq_fmt_schedule_late(const dq_schedule *s);

/* Every field of a task for people, one "label  value" line each, then the payload
 * as a tree (or a hex dump), and for a failed task its error and stack trace, every
 * line escaped and ending in '\n' (`show` and the inspector's details view). */
void dq_fmt_task_details(struct dq_buf *b, const dq_task *t, int64_t now_ms);

/* What `y` copies for a task: its stack trace when it has one (in the details of a
 * failed task), else the payload as JSON; nothing for undecodable bytes. */
void dq_fmt_task_copy(struct dq_buf *b, const dq_task *t, bool prefer_trace);

/* fix and requeue */
/*
 * The payload of @t as pretty JSON for an editor (dq_mp_to_json_pretty), ending in
 * '\n'. DQ_EINVAL with a message saying why when JSON cannot show it faithfully, that
 * is when the JSON would not read back (dq_json_to_mp) to exactly its bytes: raw bytes
 * that are not one msgpack value, or msgpack in a longer form than the shortest.
 */
int dq_fmt_payload_edit(struct dq_buf *b, const dq_task *t, dq_err *err);

/*
 * What a payload change does, for the confirmation: "N -> M bytes" then a short line
 * diff of the two payloads' pretty JSON (the lines between the common head and tail,
 * "- old" and "+ new", at most @max_lines of each, escaped), every line ending in '\n'.
 */
void dq_fmt_payload_change(struct dq_buf *b, const void *old, size_t old_len, const void *new_,
                           size_t new_len, size_t max_lines);

#endif /* DQ_FMT_TASKFMT_H */
