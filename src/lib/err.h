/* SPDX-License-Identifier: MIT */
/*
 * err.h: helpers that fill a dq_err. The library reports through these and
 * never prints.
 */
#ifndef DQ_LIB_ERR_H
#define DQ_LIB_ERR_H

#include <stddef.h>

#include "delayq.h"

#if defined(__GNUC__)
#define DQ_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DQ_PRINTF(a, b)
#endif

/* Fills @err (may be NULL) with @code and a formatted one-line message; returns @code. */
int dq_err_set(dq_err *err, int code, const char *fmt, ...) DQ_PRINTF(3, 4);

/*
 * Maps a script error reply ("DQ_EINVAL field: ...") to a code and fills @err with
 * the text after the code word. Unknown words (a Redis error such as WRONGTYPE) map
 * to DQ_EREDIS and keep the whole text. Returns the code.
 */
int dq_err_from_reply(dq_err *err, const char *script, const char *text, size_t len);

#endif /* DQ_LIB_ERR_H */
