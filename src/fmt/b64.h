/* SPDX-License-Identifier: MIT */
/*
 * b64.h: standard base64 (RFC 4648 §4, "+/" alphabet, "=" padding), used to carry
 * binary msgpack values through JSON. Pure: no I/O.
 */
#ifndef DQ_FMT_B64_H
#define DQ_FMT_B64_H

#include <stddef.h>

#include "lib/buf.h"

/* Appends the padded base64 text of @len bytes at @data to @b. */
void dq_b64_encode(struct dq_buf *b, const void *data, size_t len);

/*
 * Appends the bytes that base64 text @s (@len bytes) stands for to @b. Padding may be
 * present or left out; whitespace, other alphabets, padding in the middle and
 * non-zero leftover bits are rejected. Returns 0, or -1 if @s is not base64 (in which
 * case @b may hold part of the bytes).
 */
int dq_b64_decode(struct dq_buf *b, const char *s, size_t len);

#endif /* DQ_FMT_B64_H */
