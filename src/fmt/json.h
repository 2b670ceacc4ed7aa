/* SPDX-License-Identifier: MIT */
/*
 * json.h: JSON text to msgpack, so people can write payloads by hand (`delayq enqueue
 * --json`) and so dq_mp_to_json() output reads back to the same bytes. Pure: no I/O,
 * independent of the process locale.
 */
#ifndef DQ_FMT_JSON_H
#define DQ_FMT_JSON_H

#include <stddef.h>

#include "delayq.h"
#include "lib/buf.h"

/* Deepest container nesting accepted (a top-level array is 1). */
#define DQ_JSON_MAX_DEPTH 64

/*
 * Parses one JSON value (RFC 8259; UTF-8; surrounding whitespace allowed, where yajl
 * also takes \v and \f; anything else trailing is an error) into msgpack appended to @out, in the
 * smallest encoding. Numbers are exact or refused: an integer (no fraction, no exponent) →
 * int/uint, and one outside -2^63..2^64-1 is an error (quote it); any other number → float64,
 * rounded to nearest, and one that would read as inf or, with a digit that is not 0, as 0 is an
 * error. These errors name the value's path ("$.a[2].n", see json.c); strings (with \uXXXX incl.
 * surrogate pairs; lone surrogates are an error) → str; objects → map (key order and
 * duplicate keys kept); arrays → array.
 *
 * Objects whose keys are exactly these are reserved, so dq_mp_to_json() output
 * round-trips byte for byte:
 *   {"$base64":"..."}            → bin
 *   {"$ext":T,"$base64":"..."}   → ext of type T (an integer -128..127; either key order)
 *   {"$str_base64":"..."}        → str holding the decoded bytes (not necessarily UTF-8)
 *   {"$float":"nan"|"inf"|"-inf"} → float64
 * A reserved object with a bad value (not base64, T out of range) is an error.
 *
 * Nesting deeper than DQ_JSON_MAX_DEPTH is an error. Errors are DQ_EINVAL with
 * "json: <what> at line L column C" (both 1-based; columns count characters), or
 * DQ_ENOMEM. A syntax error is yajl's own words at the token yajl refused; the checks
 * above (surrogates, UTF-8, numbers, depth, reserved objects) point at the offending
 * escape, byte or token. On error @out is left as it was. The text is read with yajl
 * (see json.c), which does not survive an allocation failure inside it.
 */
int dq_json_to_mp(struct dq_buf *out, const char *text, size_t len, dq_err *err);

#endif /* DQ_FMT_JSON_H */
