/* SPDX-License-Identifier: MIT */
/*
 * esc.h: terminal-safe text. Untrusted bytes (payloads, error messages, ids) pass
 * through dq_esc_text() before they reach a terminal, so they can never move the
 * cursor, set the clipboard, or reorder what is shown. Pure: no I/O, no locale.
 */
#ifndef DQ_FMT_ESC_H
#define DQ_FMT_ESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"
#include "lib/buf.h"

/*
 * DQ_ESC_KEEP_BACKSLASH copies '\' unchanged: only for text whose backslashes are already
 * unambiguous by its own notation (JSON, or text this escaper produced). Escaping twice
 * must not double what the first pass wrote, and one function cannot be both injective
 * and idempotent.
 */
enum { DQ_ESC_KEEP_NL = 1, DQ_ESC_KEEP_TAB = 2, DQ_ESC_KEEP_BACKSLASH = 4 };

/*
 * Appends @len untrusted bytes to @b as terminal-safe UTF-8: valid printable UTF-8 is
 * copied; C0 controls, DEL, C1 controls (U+0080..U+009F), Unicode bidi controls
 * (U+202A..U+202E, U+2066..U+2069), and every byte of invalid UTF-8 (overlongs,
 * surrogates, > U+10FFFF, truncated sequences) are escaped. \n and \t are kept only
 * when the flag says so, otherwise shown as \n, \t; \r as \r; ESC as \e; other
 * control/invalid bytes as \xHH (NUL as \x00); escaped code points as \u{202e}; and the
 * backslash itself as \\, so the escaping is injective: a literal "\e[2J" (shown
 * \\e[2J) never looks like an escaped ESC (shown \e[2J), and what is shown names one
 * byte string. Allocation failure is recorded in @b's sticky flag.
 */
void dq_esc_text(struct dq_buf *b, const void *s, size_t len, unsigned flags);

/*
 * The inverse of dq_esc_text() (any flags): appends to @b the bytes that @len bytes of
 * escaped text @s stand for, so a user can name bytes they cannot type (a NUL, an ESC)
 * the way delayq showed them. \\ \e \n \t \r \xHH and \u{H...} are read; DQ_EINVAL
 * naming the byte for any other backslash sequence. Unescaped bytes are copied.
 */
int dq_esc_unescape(struct dq_buf *b, const char *s, size_t len, dq_err *err);

/*
 * Display width in terminal columns of already-escaped UTF-8 @s (wide East Asian
 * chars count 2, combining marks and zero-width characters 0, control characters 0,
 * anything else 1; a byte that is not valid UTF-8 counts 1). Uses a small built-in
 * table, never the locale.
 */
size_t dq_esc_width(const char *s, size_t len);

/*
 * Decodes one UTF-8 sequence at @s (@len bytes available). Returns its length (1..4)
 * and stores the code point in *@cp, or returns 0 when the bytes there are not a
 * complete, shortest-form encoding of a Unicode scalar value (or @len is 0).
 */
size_t dq_utf8_decode(const void *s, size_t len, uint32_t *cp);

/* True when all @len bytes at @s are valid UTF-8. */
bool dq_utf8_valid(const void *s, size_t len);

/* True for the code points dq_esc_text() escapes: C0, DEL, C1 and bidi controls. */
bool dq_esc_is_unsafe(uint32_t cp);

#endif /* DQ_FMT_ESC_H */
