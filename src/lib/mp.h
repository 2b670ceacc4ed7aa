/* SPDX-License-Identifier: MIT */
/*
 * mp.h: msgpack through msgpack-c, for the record codec (env.c) and the text converters
 * in fmt/. Packing appends to a dq_buf; unpacking builds a msgpack_object tree after a
 * bounds pre-check, so hostile input costs nothing. Pure: no I/O.
 */
#ifndef DQ_LIB_MP_H
#define DQ_LIB_MP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "delayq.h"
#include "lib/buf.h"

/* Starts @pk appending to @b through dq_buf_write (a failed growth sets b->failed). */
void dq_mp_packer_init(msgpack_packer *pk, struct dq_buf *b);

/*
 * Writers: append the smallest encoding of the value to @b (msgpack-c's choice, which is
 * the smallest; uint 64 always for u64fix). A str/bin/ext body longer than 32 bits has
 * no encoding: the call marks @b failed instead.
 */
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

/* Why dq_mp_scan() refused a value. */
enum dq_mp_fault {
    DQ_MP_FAULT_NONE,
    DQ_MP_FAULT_TRUNCATED, /* an item runs past the end */
    DQ_MP_FAULT_RESERVED,  /* the byte 0xc1, which msgpack never uses */
    DQ_MP_FAULT_DEEP,      /* a container deeper than max_depth */
    DQ_MP_FAULT_CLAIM,     /* a container header claims more elements than bytes follow */
};

struct dq_mp_scan {
    enum dq_mp_fault fault;
    size_t at;    /* fault: offset of the item that failed */
    size_t end;   /* no fault: offset one past the value */
    int depth;    /* no fault: deepest nesting (a scalar is 0, a top-level array 1) */
    bool map;     /* DQ_MP_FAULT_CLAIM: the header is a map's (count is pairs) */
    uint32_t n;   /* DQ_MP_FAULT_CLAIM: the count the header claims */
    size_t left;  /* DQ_MP_FAULT_CLAIM: bytes after the header */
    size_t items; /* no fault: values in the tree, keys included (pre-order) */
};

/*
 * Checks the one value at @off of @len bytes at @data without decoding it: every length
 * against the bytes that hold it, every container at most @max_depth deep (a scalar
 * needs no depth, an empty container one level). Returns true and fills end/depth, or
 * false and fills fault/at. Never allocates; iterative, so any @max_depth is safe.
 */
bool dq_mp_scan(const void *data, size_t len, size_t off, int max_depth, struct dq_mp_scan *s);

/* The offset of the @index-th item (pre-order, keys included; 0 is the value itself) of
 * the well-formed value at @off, for error messages. */
size_t dq_mp_item_offset(const void *data, size_t len, size_t off, size_t index);

/*
 * Decodes the one value at *@off with msgpack-c into @out, after dq_mp_scan(@max_depth)
 * (whose result lands in @s). The tree is allocated from @z and lives as long as it;
 * str, bin and ext bodies point into @data (borrowed). On success *@off is one past the
 * value. Returns DQ_OK, DQ_EPROTO when the scan refused (see @s->fault) or DQ_ENOMEM.
 */
int dq_mp_unpack(const void *data, size_t len, size_t *off, int max_depth, msgpack_zone *z,
                 msgpack_object *out, struct dq_mp_scan *s);

#endif /* DQ_LIB_MP_H */
