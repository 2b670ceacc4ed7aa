/* SPDX-License-Identifier: MIT */
/*
 * mp.c: msgpack-c glue behind mp.h: a packer writing into a dq_buf, and unpacking
 * guarded by a pre-check. Pure: no I/O.
 *
 * Why a hand-written pre-check at all: msgpack-c's unpacker allocates a container's
 * element storage from the count in its header before it looks for the elements, so
 * five bytes claiming 2^30 elements ask malloc for 32 GiB (msgpack-c 4.0 under ASan:
 * "allocator is out of memory trying to allocate 0x800000008 bytes"). dq_mp_scan() walks
 * the item headers first (no allocation, every length checked against the bytes left,
 * depth bounded) and only a value it accepts reaches msgpack_unpack(), which then
 * allocates for elements that really are there. The walk only measures items; it never
 * turns bytes into values.
 */
#include "lib/mp.h"

#include <string.h>

/* Open containers the scan can track; a larger max_depth is treated as this. */
#define SCAN_LEVELS 256

/*
 * Deepest value msgpack_unpack() takes: its container stack is a fixed array of
 * MSGPACK_EMBED_STACK_SIZE levels compiled into libmsgpackc (32 in Debian's 4.0), and a
 * deeper value fails with MSGPACK_UNPACK_NOMEM_ERROR. Our documented limit is 64, so
 * dq_mp_unpack() builds the levels above such a subtree itself from their headers.
 */
#define UNPACK_DEPTH 32

void
dq_mp_packer_init(msgpack_packer *pk, struct dq_buf *b)
{
    msgpack_packer_init(pk, b, dq_buf_write);
}

/* ---- writers ---------------------------------------------------------------------- */

void
dq_mp_put_nil(struct dq_buf *b)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    msgpack_pack_nil(&pk);
}

void
dq_mp_put_bool(struct dq_buf *b, bool v)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    if (v)
        msgpack_pack_true(&pk);
    else
        msgpack_pack_false(&pk);
}

void
dq_mp_put_uint(struct dq_buf *b, uint64_t v)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    msgpack_pack_uint64(&pk, v);
}

void
dq_mp_put_int(struct dq_buf *b, int64_t v)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    msgpack_pack_int64(&pk, v);
}

void
dq_mp_put_u64fix(struct dq_buf *b, uint64_t v)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    msgpack_pack_fix_uint64(&pk, v);
}

void
dq_mp_put_double(struct dq_buf *b, double v)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    msgpack_pack_double(&pk, v);
}

/* msgpack-c casts a body length to 32 bits; a longer one would get a wrong header. */
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
    msgpack_packer pk;

    if (!fits32(b, len))
        return;
    dq_mp_packer_init(&pk, b);
    msgpack_pack_str_with_body(&pk, s, len);
}

void
dq_mp_put_bin(struct dq_buf *b, const void *s, size_t len)
{
    msgpack_packer pk;

    if (!fits32(b, len))
        return;
    dq_mp_packer_init(&pk, b);
    msgpack_pack_bin_with_body(&pk, s, len);
}

void
dq_mp_put_ext(struct dq_buf *b, int8_t type, const void *s, size_t len)
{
    msgpack_packer pk;

    if (!fits32(b, len))
        return;
    dq_mp_packer_init(&pk, b);
    msgpack_pack_ext_with_body(&pk, s, len, type);
}

void
dq_mp_put_array(struct dq_buf *b, uint32_t n)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    msgpack_pack_array(&pk, n);
}

void
dq_mp_put_map(struct dq_buf *b, uint32_t n)
{
    msgpack_packer pk;

    dq_mp_packer_init(&pk, b);
    msgpack_pack_map(&pk, n);
}

/* ---- pre-check ---------------------------------------------------------------------- */

/* What one item's leading bytes say about its size. */
struct head {
    size_t size; /* bytes of the whole item; for a container only its header */
    bool box;    /* array or map */
    bool map;
    uint32_t n; /* container: elements, or pairs for a map */
};

static uint64_t
be_load(const unsigned char *p, size_t n)
{
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/*
 * Sizes the item at @p (@left bytes available). Fixed-size forms take their size from
 * the tag; str/bin/ext from a 1-, 2- or 4-byte length; containers from a count.
 */
static enum dq_mp_fault
head_of(const unsigned char *p, size_t left, struct head *h)
{
    unsigned char tag = p[0];
    size_t lenlen = 0, extra = 0; /* length field bytes; bytes between it and the body */

    memset(h, 0, sizeof *h);
    if (tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2 || tag == 0xc3) {
        h->size = 1;
        return DQ_MP_FAULT_NONE;
    }
    if (tag <= 0x9f) { /* fixmap, fixarray */
        h->box = true;
        h->map = tag <= 0x8f;
        h->n = tag & 0x0fu;
        h->size = 1;
        return DQ_MP_FAULT_NONE;
    }
    if (tag <= 0xbf) { /* fixstr */
        h->size = 1 + (size_t)(tag & 0x1fu);
        return h->size <= left ? DQ_MP_FAULT_NONE : DQ_MP_FAULT_TRUNCATED;
    }
    switch (tag) {
    case 0xc1:
        return DQ_MP_FAULT_RESERVED;
    case 0xc4:
    case 0xc5:
    case 0xc6: /* bin 8/16/32 */
        lenlen = (size_t)1 << (tag - 0xc4);
        break;
    case 0xc7:
    case 0xc8:
    case 0xc9: /* ext 8/16/32: the type byte follows the length */
        lenlen = (size_t)1 << (tag - 0xc7);
        extra = 1;
        break;
    case 0xca:
    case 0xcb: /* float 32/64 */
        h->size = tag == 0xca ? 5 : 9;
        break;
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf: /* uint 8..64 */
        h->size = 1 + ((size_t)1 << (tag - 0xcc));
        break;
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: /* int 8..64 */
        h->size = 1 + ((size_t)1 << (tag - 0xd0));
        break;
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8: /* fixext: type + 1..16 */
        h->size = 2 + ((size_t)1 << (tag - 0xd4));
        break;
    case 0xd9:
    case 0xda:
    case 0xdb: /* str 8/16/32 */
        lenlen = (size_t)1 << (tag - 0xd9);
        break;
    case 0xdc:
    case 0xdd:
    case 0xde:
    case 0xdf: /* array/map 16/32 */
        h->box = true;
        h->map = tag >= 0xde;
        lenlen = tag == 0xdc || tag == 0xde ? 2 : 4;
        if (left < 1 + lenlen)
            return DQ_MP_FAULT_TRUNCATED;
        h->n = (uint32_t)be_load(p + 1, lenlen);
        h->size = 1 + lenlen;
        return DQ_MP_FAULT_NONE;
    default: /* every tag is covered above; never size an item as 0 bytes */
        return DQ_MP_FAULT_RESERVED;
    }
    if (lenlen > 0) {
        if (left < 1 + lenlen + extra)
            return DQ_MP_FAULT_TRUNCATED;
        uint64_t body = be_load(p + 1, lenlen);
        if (body > left - 1 - lenlen - extra)
            return DQ_MP_FAULT_TRUNCATED;
        h->size = 1 + lenlen + extra + (size_t)body;
    }
    return h->size <= left ? DQ_MP_FAULT_NONE : DQ_MP_FAULT_TRUNCATED;
}

/* The walk behind dq_mp_scan() and dq_mp_item_offset(): stops early at item @stop. */
static bool
walk(const unsigned char *p, size_t len, size_t off, int max_depth, size_t stop,
     struct dq_mp_scan *s)
{
    uint64_t owed[SCAN_LEVELS]; /* elements still owed by each open container */
    int depth = 0;
    struct head h;

    memset(s, 0, sizeof *s);
    if (max_depth > SCAN_LEVELS)
        max_depth = SCAN_LEVELS;
    for (;;) {
        if (s->items == stop) {
            s->at = off;
            return true;
        }
        s->at = off;
        if (p == NULL || off >= len) {
            s->fault = DQ_MP_FAULT_TRUNCATED;
            return false;
        }
        s->fault = head_of(p + off, len - off, &h);
        if (s->fault != DQ_MP_FAULT_NONE)
            return false;
        s->items++;
        off += h.size;
        if (h.box) {
            uint64_t need = h.map ? (uint64_t)h.n * 2 : h.n;
            if (depth >= max_depth) {
                s->fault = DQ_MP_FAULT_DEEP;
                return false;
            }
            /* Each element takes at least one byte: a larger claim fails here. */
            if (need > len - off) {
                s->fault = DQ_MP_FAULT_CLAIM;
                s->map = h.map;
                s->n = h.n;
                s->left = len - off;
                return false;
            }
            if (depth + 1 > s->depth)
                s->depth = depth + 1;
            if (need > 0) {
                owed[depth++] = need;
                continue;
            }
        }
        /* One value is complete; close every container it completes. */
        for (;;) {
            if (depth == 0) {
                s->end = off;
                s->at = 0;
                return true;
            }
            if (--owed[depth - 1] > 0)
                break;
            depth--;
        }
    }
}

bool
dq_mp_scan(const void *data, size_t len, size_t off, int max_depth, struct dq_mp_scan *s)
{
    return walk(data, len, off, max_depth, SIZE_MAX, s);
}

size_t
dq_mp_item_offset(const void *data, size_t len, size_t off, size_t index)
{
    struct dq_mp_scan s;

    walk(data, len, off, SCAN_LEVELS, index, &s);
    return s.at;
}

/* ---- unpacking ---------------------------------------------------------------------- */

/*
 * Decodes the scanned value at *@off, whose nesting is at most @depth (see
 * UNPACK_DEPTH). A child nests at most one level less than its parent, so the bound
 * passes down without another scan, and the levels built here are only the top
 * depth - 32 ones.
 */
static int
unpack_tree(const unsigned char *p, size_t len, size_t *off, int depth, msgpack_zone *z,
            msgpack_object *out)
{
    struct head h;

    if (head_of(p + *off, len - *off, &h) != DQ_MP_FAULT_NONE)
        return DQ_EPROTO; /* the scan accepted it: not expected */
    if (depth <= UNPACK_DEPTH || !h.box) {
        size_t o = *off;
        msgpack_unpack_return r = msgpack_unpack((const char *)p, len, &o, z, out);
        if (r == MSGPACK_UNPACK_NOMEM_ERROR)
            return DQ_ENOMEM;
        if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES)
            return DQ_EPROTO;
        *off = o;
        return DQ_OK;
    }
    /* Possibly too deep for msgpack-c: a container, whose header we read. */
    *off += h.size;
    if (h.map) {
        msgpack_object_kv *kv = NULL;
        if (h.n > 0 && (kv = msgpack_zone_malloc(z, (size_t)h.n * sizeof *kv)) == NULL)
            return DQ_ENOMEM;
        out->type = MSGPACK_OBJECT_MAP;
        out->via.map.size = h.n;
        out->via.map.ptr = kv;
    } else {
        msgpack_object *el = NULL;
        if (h.n > 0 && (el = msgpack_zone_malloc(z, (size_t)h.n * sizeof *el)) == NULL)
            return DQ_ENOMEM;
        out->type = MSGPACK_OBJECT_ARRAY;
        out->via.array.size = h.n;
        out->via.array.ptr = el;
    }
    uint64_t count = h.map ? (uint64_t)h.n * 2 : h.n;
    for (uint64_t i = 0; i < count; i++) {
        msgpack_object *o =
            h.map ? (i % 2 == 0 ? &out->via.map.ptr[i / 2].key : &out->via.map.ptr[i / 2].val)
                  : &out->via.array.ptr[i];
        int rc = unpack_tree(p, len, off, depth - 1, z, o);
        if (rc != DQ_OK)
            return rc;
    }
    return DQ_OK;
}

int
dq_mp_unpack(const void *data, size_t len, size_t *off, int max_depth, msgpack_zone *z,
             msgpack_object *out, struct dq_mp_scan *s)
{
    memset(out, 0, sizeof *out);
    if (!dq_mp_scan(data, len, *off, max_depth, s))
        return DQ_EPROTO;
    return unpack_tree(data, len, off, s->depth, z, out);
}
