/* SPDX-License-Identifier: MIT */
/*
 * mp.c: the bounds-checked msgpack reader and the smallest-encoding writer behind
 * mp.h. Pure: no I/O, and the reader never allocates.
 *
 * Reader invariant: every length is compared with end - p before a byte is touched,
 * and a failed read leaves the reader where it was. dq_mp_skip() walks nested values
 * with an explicit stack instead of recursion, and keeps a running total of the
 * elements still owed by every open container; since each element takes at least one
 * byte, a header claiming more than the input can hold fails at once.
 */
#include "fmt/mp.h"

#include <string.h>

/* Open containers dq_mp_skip() can track; a larger max_depth is treated as this. */
#define MP_SKIP_LEVELS 256

static uint64_t
be_load(const unsigned char *p, size_t n)
{
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

void
dq_mp_reader_init(struct dq_mp_reader *r, const void *data, size_t len)
{
    r->p = data;
    r->end = data != NULL ? r->p + len : NULL;
}

bool
dq_mp_at_end(const struct dq_mp_reader *r)
{
    return r->p == r->end;
}

/* Reads an @n-byte big-endian length, then (for ext) the type byte, then the body;
 * fills ptr/len. *@pp points just past the tag byte. */
static bool
read_body(const unsigned char **pp, const unsigned char *end, size_t n, struct dq_mp_item *it,
          bool ext)
{
    const unsigned char *p = *pp;

    if ((size_t)(end - p) < n)
        return false;
    uint64_t len = be_load(p, n);
    p += n;
    if (ext) {
        if (p == end)
            return false;
        it->ext_type = (int8_t)*p++;
    }
    if ((uint64_t)(end - p) < len)
        return false;
    it->ptr = p;
    it->len = (uint32_t)len;
    *pp = p + len;
    return true;
}

/* Fixed-size body (fixext): @len data bytes after the type byte. */
static bool
read_fixext(const unsigned char **pp, const unsigned char *end, uint32_t len, struct dq_mp_item *it)
{
    const unsigned char *p = *pp;

    if ((size_t)(end - p) < (size_t)len + 1)
        return false;
    it->ext_type = (int8_t)p[0];
    it->ptr = p + 1;
    it->len = len;
    *pp = p + 1 + len;
    return true;
}

/* Reads an @n-byte big-endian number after the tag. */
static bool
read_num(const unsigned char **pp, const unsigned char *end, size_t n, uint64_t *v)
{
    if ((size_t)(end - *pp) < n)
        return false;
    *v = be_load(*pp, n);
    *pp += n;
    return true;
}

static void
set_signed(struct dq_mp_item *it, int64_t v)
{
    if (v < 0) {
        it->type = DQ_MP_INT;
        it->v.i = v;
    } else {
        it->type = DQ_MP_UINT;
        it->v.u = (uint64_t)v;
    }
}

/* Two's-complement reinterpretation of the low @bits bits of @u. */
static int64_t
sign_extend(uint64_t u, unsigned bits)
{
    if (bits < 64 && (u & (UINT64_C(1) << (bits - 1))) != 0)
        u |= ~UINT64_C(0) << bits;
    if (u <= (uint64_t)INT64_MAX)
        return (int64_t)u;
    return -(int64_t)(~u) - 1;
}

bool
dq_mp_read(struct dq_mp_reader *r, struct dq_mp_item *it)
{
    const unsigned char *p = r->p;
    const unsigned char *end = r->end;
    uint64_t u;

    if (p == NULL || p >= end)
        return false;
    memset(it, 0, sizeof *it);
    unsigned char tag = *p++;

    if (tag <= 0x7f) {
        it->type = DQ_MP_UINT;
        it->v.u = tag;
    } else if (tag >= 0xe0) {
        it->type = DQ_MP_INT;
        it->v.i = (int64_t)tag - 256;
    } else if (tag <= 0x8f) {
        it->type = DQ_MP_MAP;
        it->len = tag & 0x0fu;
    } else if (tag <= 0x9f) {
        it->type = DQ_MP_ARRAY;
        it->len = tag & 0x0fu;
    } else if (tag <= 0xbf) {
        it->type = DQ_MP_STR;
        uint32_t n = tag & 0x1fu;
        if ((size_t)(end - p) < n)
            return false;
        it->ptr = p;
        it->len = n;
        p += n;
    } else {
        switch (tag) {
        case 0xc0:
            it->type = DQ_MP_NIL;
            break;
        case 0xc2:
        case 0xc3:
            it->type = DQ_MP_BOOL;
            it->v.b = tag == 0xc3;
            break;
        case 0xc4:
        case 0xc5:
        case 0xc6:
            it->type = DQ_MP_BIN;
            if (!read_body(&p, end, (size_t)1 << (tag - 0xc4), it, false))
                return false;
            break;
        case 0xc7:
        case 0xc8:
        case 0xc9:
            it->type = DQ_MP_EXT;
            if (!read_body(&p, end, (size_t)1 << (tag - 0xc7), it, true))
                return false;
            break;
        case 0xca: {
            if (!read_num(&p, end, 4, &u))
                return false;
            uint32_t bits = (uint32_t)u;
            float f;
            memcpy(&f, &bits, sizeof f);
            it->type = DQ_MP_FLOAT;
            it->v.f = f;
            break;
        }
        case 0xcb: {
            if (!read_num(&p, end, 8, &u))
                return false;
            double d;
            memcpy(&d, &u, sizeof d);
            it->type = DQ_MP_FLOAT;
            it->v.f = d;
            break;
        }
        case 0xcc:
        case 0xcd:
        case 0xce:
        case 0xcf:
            if (!read_num(&p, end, (size_t)1 << (tag - 0xcc), &u))
                return false;
            it->type = DQ_MP_UINT;
            it->v.u = u;
            break;
        case 0xd0:
        case 0xd1:
        case 0xd2:
        case 0xd3: {
            size_t n = (size_t)1 << (tag - 0xd0);
            if (!read_num(&p, end, n, &u))
                return false;
            set_signed(it, sign_extend(u, (unsigned)n * 8));
            break;
        }
        case 0xd4:
        case 0xd5:
        case 0xd6:
        case 0xd7:
        case 0xd8:
            it->type = DQ_MP_EXT;
            if (!read_fixext(&p, end, (uint32_t)1 << (tag - 0xd4), it))
                return false;
            break;
        case 0xd9:
        case 0xda:
        case 0xdb:
            it->type = DQ_MP_STR;
            if (!read_body(&p, end, (size_t)1 << (tag - 0xd9), it, false))
                return false;
            break;
        case 0xdc:
        case 0xdd:
            if (!read_num(&p, end, tag == 0xdc ? 2 : 4, &u))
                return false;
            it->type = DQ_MP_ARRAY;
            it->len = (uint32_t)u;
            break;
        case 0xde:
        case 0xdf:
            if (!read_num(&p, end, tag == 0xde ? 2 : 4, &u))
                return false;
            it->type = DQ_MP_MAP;
            it->len = (uint32_t)u;
            break;
        default: /* 0xc1: never used */
            return false;
        }
    }
    r->p = p;
    return true;
}

bool
dq_mp_skip(struct dq_mp_reader *r, int max_depth)
{
    uint64_t left[MP_SKIP_LEVELS]; /* elements still owed by each open container */
    int depth = 0;
    uint64_t pending = 1; /* values still to read, over every level */
    const unsigned char *start = r->p;
    struct dq_mp_item it;

    if (max_depth > MP_SKIP_LEVELS)
        max_depth = MP_SKIP_LEVELS;
    for (;;) {
        if (!dq_mp_read(r, &it))
            goto fail;
        pending--;
        if (it.type == DQ_MP_ARRAY || it.type == DQ_MP_MAP) {
            uint64_t n = it.type == DQ_MP_MAP ? (uint64_t)it.len * 2 : it.len;
            if (depth >= max_depth)
                goto fail;
            if (n > (uint64_t)(r->end - r->p) - pending)
                goto fail;
            if (n > 0) {
                left[depth++] = n;
                pending += n;
                continue;
            }
        }
        /* One value is complete; close every container it completes. */
        for (;;) {
            if (depth == 0)
                return true;
            if (--left[depth - 1] > 0)
                break;
            depth--;
        }
    }
fail:
    r->p = start;
    return false;
}

/* ---- writers ---------------------------------------------------------------------- */

static void
put_tag_be(struct dq_buf *b, unsigned char tag, uint64_t v, size_t n)
{
    unsigned char tmp[9];

    tmp[0] = tag;
    for (size_t i = 0; i < n; i++)
        tmp[1 + i] = (unsigned char)(v >> (8 * (n - 1 - i)));
    dq_buf_append(b, tmp, 1 + n);
}

void
dq_mp_put_nil(struct dq_buf *b)
{
    dq_buf_putc(b, (char)0xc0);
}

void
dq_mp_put_bool(struct dq_buf *b, bool v)
{
    dq_buf_putc(b, (char)(v ? 0xc3 : 0xc2));
}

void
dq_mp_put_uint(struct dq_buf *b, uint64_t v)
{
    if (v <= 0x7f)
        put_tag_be(b, (unsigned char)v, 0, 0);
    else if (v <= UINT8_MAX)
        put_tag_be(b, 0xcc, v, 1);
    else if (v <= UINT16_MAX)
        put_tag_be(b, 0xcd, v, 2);
    else if (v <= UINT32_MAX)
        put_tag_be(b, 0xce, v, 4);
    else
        put_tag_be(b, 0xcf, v, 8);
}

void
dq_mp_put_int(struct dq_buf *b, int64_t v)
{
    if (v >= 0) {
        dq_mp_put_uint(b, (uint64_t)v);
        return;
    }
    uint64_t u = (uint64_t)v; /* two's complement bits; writers take the low bytes */
    if (v >= -32)
        put_tag_be(b, (unsigned char)(u & 0xffu), 0, 0);
    else if (v >= INT8_MIN)
        put_tag_be(b, 0xd0, u, 1);
    else if (v >= INT16_MIN)
        put_tag_be(b, 0xd1, u, 2);
    else if (v >= INT32_MIN)
        put_tag_be(b, 0xd2, u, 4);
    else
        put_tag_be(b, 0xd3, u, 8);
}

void
dq_mp_put_u64fix(struct dq_buf *b, uint64_t v)
{
    put_tag_be(b, 0xcf, v, 8);
}

void
dq_mp_put_double(struct dq_buf *b, double v)
{
    uint64_t bits;

    memcpy(&bits, &v, sizeof bits);
    put_tag_be(b, 0xcb, bits, 8);
}

/* A str/bin/ext body longer than 32 bits cannot be encoded: mark the buffer failed. */
static bool
fits32(struct dq_buf *b, size_t len)
{
    if ((uint64_t)len > UINT32_MAX) {
        b->failed = true;
        return false;
    }
    return true;
}

void
dq_mp_put_str(struct dq_buf *b, const void *s, size_t len)
{
    if (!fits32(b, len))
        return;
    if (len <= 31)
        put_tag_be(b, (unsigned char)(0xa0 | len), 0, 0);
    else if (len <= UINT8_MAX)
        put_tag_be(b, 0xd9, len, 1);
    else if (len <= UINT16_MAX)
        put_tag_be(b, 0xda, len, 2);
    else
        put_tag_be(b, 0xdb, len, 4);
    dq_buf_append(b, s, len);
}

void
dq_mp_put_bin(struct dq_buf *b, const void *s, size_t len)
{
    if (!fits32(b, len))
        return;
    if (len <= UINT8_MAX)
        put_tag_be(b, 0xc4, len, 1);
    else if (len <= UINT16_MAX)
        put_tag_be(b, 0xc5, len, 2);
    else
        put_tag_be(b, 0xc6, len, 4);
    dq_buf_append(b, s, len);
}

void
dq_mp_put_ext(struct dq_buf *b, int8_t type, const void *s, size_t len)
{
    unsigned char t = (unsigned char)type;

    if (!fits32(b, len))
        return;
    switch (len) {
    case 1:
        put_tag_be(b, 0xd4, t, 1);
        break;
    case 2:
        put_tag_be(b, 0xd5, t, 1);
        break;
    case 4:
        put_tag_be(b, 0xd6, t, 1);
        break;
    case 8:
        put_tag_be(b, 0xd7, t, 1);
        break;
    case 16:
        put_tag_be(b, 0xd8, t, 1);
        break;
    default:
        if (len <= UINT8_MAX)
            put_tag_be(b, 0xc7, len, 1);
        else if (len <= UINT16_MAX)
            put_tag_be(b, 0xc8, len, 2);
        else
            put_tag_be(b, 0xc9, len, 4);
        dq_buf_putc(b, (char)t);
        break;
    }
    dq_buf_append(b, s, len);
}

void
dq_mp_put_array(struct dq_buf *b, uint32_t n)
{
    if (n <= 15)
        put_tag_be(b, (unsigned char)(0x90 | n), 0, 0);
    else if (n <= UINT16_MAX)
        put_tag_be(b, 0xdc, n, 2);
    else
        put_tag_be(b, 0xdd, n, 4);
}

void
dq_mp_put_map(struct dq_buf *b, uint32_t n)
{
    if (n <= 15)
        put_tag_be(b, (unsigned char)(0x80 | n), 0, 0);
    else if (n <= UINT16_MAX)
        put_tag_be(b, 0xde, n, 2);
    else
        put_tag_be(b, 0xdf, n, 4);
}
