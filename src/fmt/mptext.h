/* SPDX-License-Identifier: MIT */
/*
 * mptext.h: msgpack to text, for people (an indented tree, a one-line summary, a hex
 * dump) and for programs (compact JSON that dq_json_to_mp() reads back). Pure: no
 * I/O. Input is untrusted: every read is bounds-checked and nesting is limited.
 */
#ifndef DQ_FMT_MPTEXT_H
#define DQ_FMT_MPTEXT_H

#include <stddef.h>

#include "delayq.h"
#include "lib/buf.h"

/* Deepest container nesting the text converters accept (a top-level array is 1). */
#define DQ_MPTEXT_MAX_DEPTH 64

/*
 * One msgpack value (exactly one: trailing bytes are an error) → compact one-line JSON.
 * str → JSON string (valid UTF-8 required for a plain string; a str holding invalid
 * UTF-8 becomes {"$str_base64":"..."}); bin → {"$base64":"..."}; ext →
 * {"$ext":T,"$base64":"..."}; NaN/Inf → {"$float":"nan"|"inf"|"-inf"}; map keys that are
 * not strings are rendered to their JSON text and used as the key string. Floats use
 * the shortest of %.15g/%.16g/%.17g that reads back exactly, in the C locale whatever
 * the process locale, and always show a '.' or exponent ("1.0"), so they stay floats
 * through dq_json_to_mp(). Control characters are escaped per JSON (\n, \u001b ...), and
 * so are DEL, C1 controls, U+2028/U+2029 and bidi controls, so the text is also
 * terminal-safe. Nesting deeper than DQ_MPTEXT_MAX_DEPTH → DQ_EPROTO, and so are
 * non-string keys nested inside non-string keys more than 4 deep (each level escapes
 * the text again and doubles it, so the output would grow exponentially). Malformed →
 * DQ_EPROTO with a message like "msgpack: truncated at byte 12". DQ_ENOMEM if @out
 * could not grow. On error @out may hold partial text.
 */
int dq_mp_to_json(struct dq_buf *out, const void *data, size_t len, dq_err *err);

/* The same JSON as dq_mp_to_json(), indented two spaces per level, one member or
 * element per line, ending in '\n' (for an editor: fix and requeue). Same errors. */
int dq_mp_to_json_pretty(struct dq_buf *out, const void *data, size_t len, dq_err *err);

/*
 * One msgpack value → indented multi-line tree for humans (the TUI details view and
 * `delayq show`), every line ending in '\n'. Every string goes through dq_esc_text
 * (terminal-safe), quoted: "text". Maps are `key: value` lines (keys unquoted; non-string
 * keys as their JSON text), arrays `- value` lines; a non-empty container value starts
 * on the next line, indented 2 more spaces; the top level starts at @indent spaces.
 * Empty containers are {} and []. nil, true/false, numbers (nan, inf, -inf) as is. bin
 * and ext are headed by "bin (N bytes)" / "ext type T (N bytes)" followed by a
 * dq_hexdump() indented 2 more spaces. Same depth limit and errors as dq_mp_to_json().
 */
int dq_mp_to_tree(struct dq_buf *out, const void *data, size_t len, int indent, dq_err *err);

/*
 * A one-line summary of at most @max_bytes bytes (cut on a UTF-8 boundary, ending with
 * "…" when cut and @max_bytes >= 3) for list panes: the JSON form, escaped with
 * dq_esc_text; if not valid msgpack: the raw bytes escaped, prefixed "raw: ". Only
 * about @max_bytes of output is produced, however large the value. Never fails (may be
 * empty, e.g. when out of memory).
 */
void dq_mp_summary(struct dq_buf *out, const void *data, size_t len, size_t max_bytes);

/*
 * Appends a hex dump of @len bytes, one line per 16 bytes:
 * "<indent>00000010  48 65 6c 6c 6f 0a 00 01  02 03 04 05 06 07 08 09  |Hello...........|\n"
 * (offset, bytes in hex, printable ASCII with '.' for everything else). Nothing for 0
 * bytes. Used by the tree and by callers for payloads that cannot be decoded.
 */
void dq_hexdump(struct dq_buf *out, const void *data, size_t len, int indent);

#endif /* DQ_FMT_MPTEXT_H */
