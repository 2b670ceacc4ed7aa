/* SPDX-License-Identifier: MIT */
/*
 * mp.h: a small bounds-checked msgpack reader and writer. Pure; no I/O.
 *
 * The reader never allocates and never trusts a length it has not checked against
 * the bytes it holds, so hostile input (a header claiming 4 billion elements) costs
 * nothing. Everything in delayq that reads msgpack (the envelope codec, msgpack to
 * text/JSON) goes through it.
 */
#ifndef DQ_FMT_MP_H
#define DQ_FMT_MP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

enum dq_mp_type {
    DQ_MP_NIL,
    DQ_MP_BOOL,
    DQ_MP_UINT,  /* positive fixint, uint 8..64 */
    DQ_MP_INT,   /* negative fixint, int 8..64 holding a negative value */
    DQ_MP_FLOAT, /* float 32 and 64, both as double */
    DQ_MP_STR,
    DQ_MP_BIN,
    DQ_MP_ARRAY,
    DQ_MP_MAP,
    DQ_MP_EXT,
};

struct dq_mp_reader {
    const unsigned char *p;   /* next byte */
    const unsigned char *end; /* one past the last byte */
};

struct dq_mp_item {
    enum dq_mp_type type;
    union {
        bool b;
        uint64_t u;
        int64_t i;
        double f;
    } v;
    const unsigned char *ptr; /* str/bin/ext: the bytes (borrowed from the input) */
    uint32_t len;             /* str/bin/ext: byte count; array: elements; map: pairs */
    int8_t ext_type;          /* ext only */
};

/* Starts reading @len bytes at @data. */
void dq_mp_reader_init(struct dq_mp_reader *r, const void *data, size_t len);

/*
 * Reads one item header. For str, bin and ext the bytes are consumed too and
 * described by ptr/len. For array and map only the header is consumed and len is
 * the count the header claims (not yet checked against the input). Returns false on
 * truncated input or the reserved byte 0xc1, leaving @r unchanged.
 */
bool dq_mp_read(struct dq_mp_reader *r, struct dq_mp_item *it);

/* Skips one complete value with nesting at most @max_depth. False if malformed. */
bool dq_mp_skip(struct dq_mp_reader *r, int max_depth);

/* True when every byte has been read. */
bool dq_mp_at_end(const struct dq_mp_reader *r);

/* Writers: append the smallest encoding of the value to @b (uint 64 for u64fix). */
void dq_mp_put_nil(struct dq_buf *b);
void dq_mp_put_bool(struct dq_buf *b, bool v);
void dq_mp_put_uint(struct dq_buf *b, uint64_t v);
void dq_mp_put_int(struct dq_buf *b, int64_t v);     /* uses the uint forms when v >= 0 */
void dq_mp_put_u64fix(struct dq_buf *b, uint64_t v); /* always 0xcf + 8 bytes */
void dq_mp_put_double(struct dq_buf *b, double v);
void dq_mp_put_str(struct dq_buf *b, const void *s, size_t len);
void dq_mp_put_bin(struct dq_buf *b, const void *s, size_t len);
void dq_mp_put_ext(struct dq_buf *b, int8_t type, const void *s, size_t len);
void dq_mp_put_array(struct dq_buf *b, uint32_t n);
void dq_mp_put_map(struct dq_buf *b, uint32_t n);

#endif /* DQ_FMT_MP_H */
