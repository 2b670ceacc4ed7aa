/* SPDX-License-Identifier: MIT */
/*
 * hproto.h: the line protocol of `delayq work --persistent`: a task as one JSON line for
 * the handler's stdin, and the handler's result line read back from its stdout. Pure: no
 * I/O. Result lines are untrusted bytes (tests/fuzz/fuzz_hproto.c).
 */
#ifndef DQ_CLI_HPROTO_H
#define DQ_CLI_HPROTO_H

#include <stddef.h>

#include "delayq.h"
#include "lib/buf.h"

/* Longest result line accepted, newline excluded; a longer one is a protocol error. */
#define HPROTO_LINE_MAX 1048576

/*
 * Appends @t as one line, '\n' included:
 * {"id":"…","queue":"…","attempt":N,"due_ms":N,"enqueued_ms":N,"payload":…}
 * attempt is 1 on the first run; payload is the payload as JSON, as `delayq work`
 * without --persistent writes it to stdin (dq_fmt_payload_json). The strings are JSON
 * string literals of the raw bytes (invalid UTF-8 as \u00XX, see dq_fmt_json_str).
 */
void hproto_request(struct dq_buf *out, const dq_task *t, const char *queue);

/*
 * The id as a handler that parses the request line and echoes its id will send it back:
 * @id through the same JSON string literal and back. Differs from @id only when @id is
 * not valid UTF-8. Appended to @out (no NUL counted in the length).
 */
void hproto_wire_id(struct dq_buf *out, const char *id);

enum hproto_verdict { HPROTO_DONE, HPROTO_RETRY, HPROTO_FAIL };

/* One parsed result line. id is exactly the bytes sent (may hold NUL); error and trace
 * are NUL-terminated (cut at a NUL inside), NULL when absent or null. All owned; see
 * hproto_result_free(). */
struct hproto_result {
    enum hproto_verdict verdict;
    char *id;
    size_t id_len;
    char *error;
    char *trace;
};

/*
 * Parses one result line (@len bytes, no newline):
 * {"id":"…","result":"done"|"retry"|"fail","error":"…","trace":"…"}
 * id and result are required; error and trace are optional strings (or null); other
 * members are ignored, so a handler may add its own. Returns 0 and fills @out, or -1
 * with @why (a one-line reason, @why_size bytes) and @out empty. Never reads past
 * @len; a line over HPROTO_LINE_MAX is refused unread.
 */
int hproto_parse_result(const char *line, size_t len, struct hproto_result *out, char *why,
                        size_t why_size);

/* Releases what a parse filled; the struct is zeroed. Accepts an empty one. */
void hproto_result_free(struct hproto_result *r);

#endif /* DQ_CLI_HPROTO_H */
