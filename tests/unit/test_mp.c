/* SPDX-License-Identifier: MIT */
/*
 * test_mp.c: msgpack through msgpack-c (lib/mp.h): the writers' exact bytes at every
 * size boundary, read back by dq_mp_unpack(); every prefix of a valid value rejected by
 * the pre-check without reading past it (each prefix sits in its own exactly-sized
 * allocation so ASan sees any overread); hostile headers, which must fail at once
 * without the allocation msgpack-c would make for them; and depth bombs.
 */
#include "harness/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "lib/mp.h"

static void
assert_bytes(const struct dq_buf *b, const void *want, size_t n)
{
    assert_false(b->failed);
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

/* Decoded trees live here until the group teardown. */
static msgpack_zone zone;

static int
zone_setup(void **state)
{
    (void)state;
    return msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE) ? 0 : -1;
}

static int
zone_teardown(void **state)
{
    (void)state;
    msgpack_zone_destroy(&zone);
    return 0;
}

/* Decodes exactly one value at @off of @len bytes, checking it ends at @end. */
static msgpack_object
read_at(const void *data, size_t len, size_t *off)
{
    struct dq_mp_scan s;
    msgpack_object o;

    assert_int_equal(dq_mp_unpack(data, len, off, 64, &zone, &o, &s), DQ_OK);
    return o;
}

/* Decodes exactly one value from @b and checks that it used every byte. */
static msgpack_object
read_one(const struct dq_buf *b)
{
    size_t off = 0;
    msgpack_object o = read_at(b->data, b->len, &off);

    assert_int_equal(off, b->len);
    return o;
}

/* dq_mp_scan() refuses the value at 0 of @len bytes for @fault at @at. */
static void
scan_fails(const void *data, size_t len, int max_depth, enum dq_mp_fault fault, size_t at)
{
    struct dq_mp_scan s;
    msgpack_object o;
    size_t off = 0;

    assert_false(dq_mp_scan(data, len, 0, max_depth, &s));
    assert_int_equal(s.fault, fault);
    assert_int_equal(s.at, at);
    assert_int_equal(dq_mp_unpack(data, len, &off, max_depth, &zone, &o, &s), DQ_EPROTO);
    assert_int_equal(off, 0);
}

static void
test_uint_boundaries(void **state)
{
    static const struct {
        uint64_t v;
        size_t n;
        unsigned char bytes[9];
    } cases[] = {
        {0, 1, {0x00}},
        {127, 1, {0x7f}},
        {128, 2, {0xcc, 0x80}},
        {255, 2, {0xcc, 0xff}},
        {256, 3, {0xcd, 0x01, 0x00}},
        {65535, 3, {0xcd, 0xff, 0xff}},
        {65536, 5, {0xce, 0x00, 0x01, 0x00, 0x00}},
        {4294967295u, 5, {0xce, 0xff, 0xff, 0xff, 0xff}},
        {4294967296u, 9, {0xcf, 0, 0, 0, 1, 0, 0, 0, 0}},
        {UINT64_MAX, 9, {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dq_buf b = DQ_BUF_INIT;
        dq_mp_put_uint(&b, cases[i].v);
        assert_bytes(&b, cases[i].bytes, cases[i].n);
        msgpack_object it = read_one(&b);
        assert_int_equal(it.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
        assert_true(it.via.u64 == cases[i].v);
        /* put_int of a non-negative value uses the same forms */
        dq_buf_reset(&b);
        if (cases[i].v <= INT64_MAX) {
            dq_mp_put_int(&b, (int64_t)cases[i].v);
            assert_bytes(&b, cases[i].bytes, cases[i].n);
        }
        dq_buf_free(&b);
    }
}

static void
test_int_boundaries(void **state)
{
    static const struct {
        int64_t v;
        size_t n;
        unsigned char bytes[9];
    } cases[] = {
        {-1, 1, {0xff}},
        {-32, 1, {0xe0}},
        {-33, 2, {0xd0, 0xdf}},
        {-128, 2, {0xd0, 0x80}},
        {-129, 3, {0xd1, 0xff, 0x7f}},
        {-32768, 3, {0xd1, 0x80, 0x00}},
        {-32769, 5, {0xd2, 0xff, 0xff, 0x7f, 0xff}},
        {INT32_MIN, 5, {0xd2, 0x80, 0x00, 0x00, 0x00}},
        {(int64_t)INT32_MIN - 1, 9, {0xd3, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}},
        {INT64_MIN, 9, {0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dq_buf b = DQ_BUF_INIT;
        dq_mp_put_int(&b, cases[i].v);
        assert_bytes(&b, cases[i].bytes, cases[i].n);
        msgpack_object it = read_one(&b);
        assert_int_equal(it.type, MSGPACK_OBJECT_NEGATIVE_INTEGER);
        assert_true(it.via.i64 == cases[i].v);
        dq_buf_free(&b);
    }
}

/* Signed forms holding a non-negative value read as UINT; negative ones as INT. */
static void
test_signed_forms_read(void **state)
{
    static const unsigned char i8[] = {0xd0, 0x05};
    static const unsigned char i16[] = {0xd1, 0xff, 0xff};
    static const unsigned char i32[] = {0xd2, 0x7f, 0xff, 0xff, 0xff};
    static const unsigned char i64[] = {0xd3, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    msgpack_object it;
    size_t off;
    (void)state;

    off = 0;
    it = read_at(i8, sizeof i8, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    assert_true(it.via.u64 == 5);
    off = 0;
    it = read_at(i16, sizeof i16, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_NEGATIVE_INTEGER);
    assert_true(it.via.i64 == -1);
    off = 0;
    it = read_at(i32, sizeof i32, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    assert_true(it.via.u64 == INT32_MAX);
    off = 0;
    it = read_at(i64, sizeof i64, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    assert_true(it.via.u64 == INT64_MAX);
}

static void
test_u64fix(void **state)
{
    static const unsigned char want[] = {0xcf, 0, 0, 0, 0, 0, 0, 0, 5};
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    dq_mp_put_u64fix(&b, 5);
    assert_bytes(&b, want, sizeof want);
    msgpack_object it = read_one(&b);
    assert_int_equal(it.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    assert_true(it.via.u64 == 5);
    dq_buf_free(&b);
}

static void
test_nil_bool_float(void **state)
{
    static const unsigned char want[] = {0xc0, 0xc2, 0xc3, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0};
    static const unsigned char f32[] = {0xca, 0x3f, 0xc0, 0x00, 0x00};
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_mp_scan s;
    msgpack_object it;
    size_t off = 0;
    (void)state;

    dq_mp_put_nil(&b);
    dq_mp_put_bool(&b, false);
    dq_mp_put_bool(&b, true);
    dq_mp_put_double(&b, 1.5);
    assert_bytes(&b, want, sizeof want);

    it = read_at(b.data, b.len, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_NIL);
    it = read_at(b.data, b.len, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_BOOLEAN);
    assert_false(it.via.boolean);
    it = read_at(b.data, b.len, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_BOOLEAN);
    assert_true(it.via.boolean);
    it = read_at(b.data, b.len, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_FLOAT64);
    assert_true(it.via.f64 == 1.5);
    assert_int_equal(off, b.len);
    assert_int_equal(dq_mp_unpack(b.data, b.len, &off, 64, &zone, &it, &s), DQ_EPROTO);
    assert_int_equal(s.fault, DQ_MP_FAULT_TRUNCATED);
    assert_int_equal(s.at, b.len);

    off = 0;
    it = read_at(f32, sizeof f32, &off);
    assert_int_equal(it.type, MSGPACK_OBJECT_FLOAT32);
    assert_true(it.via.f64 == 1.5);

    dq_buf_reset(&b);
    dq_mp_put_double(&b, NAN);
    it = read_one(&b);
    assert_true(isnan(it.via.f64));
    dq_buf_reset(&b);
    dq_mp_put_double(&b, -INFINITY);
    it = read_one(&b);
    assert_true(isinf(it.via.f64) && it.via.f64 < 0);
    dq_buf_free(&b);
}

/* Checks the header of a str/bin of @n bytes and that the body reads back. */
static void
check_body(msgpack_object_type type, size_t n, const unsigned char *hdr, size_t hdr_len)
{
    unsigned char *body = malloc(n + 1);
    struct dq_buf b = DQ_BUF_INIT;

    assert_non_null(body);
    for (size_t i = 0; i < n; i++)
        body[i] = (unsigned char)('a' + i % 26);
    if (type == MSGPACK_OBJECT_STR)
        dq_mp_put_str(&b, body, n);
    else
        dq_mp_put_bin(&b, body, n);
    assert_false(b.failed);
    assert_int_equal(b.len, hdr_len + n);
    assert_memory_equal(b.data, hdr, hdr_len);
    msgpack_object it = read_one(&b);
    assert_int_equal(it.type, type);
    /* str and bin share a layout in msgpack_object; a body points into the input (an
     * empty one points nowhere in particular: msgpack-c leaves it NULL or at the tag) */
    assert_int_equal(it.via.str.size, n);
    if (n > 0) {
        assert_ptr_equal(it.via.str.ptr, b.data + hdr_len);
        assert_memory_equal(it.via.str.ptr, body, n);
    }
    dq_buf_free(&b);
    free(body);
}

static void
test_str_boundaries(void **state)
{
    (void)state;
    check_body(MSGPACK_OBJECT_STR, 0, (const unsigned char *)"\xa0", 1);
    check_body(MSGPACK_OBJECT_STR, 31, (const unsigned char *)"\xbf", 1);
    check_body(MSGPACK_OBJECT_STR, 32, (const unsigned char *)"\xd9\x20", 2);
    check_body(MSGPACK_OBJECT_STR, 255, (const unsigned char *)"\xd9\xff", 2);
    check_body(MSGPACK_OBJECT_STR, 256, (const unsigned char *)"\xda\x01\x00", 3);
    check_body(MSGPACK_OBJECT_STR, 65535, (const unsigned char *)"\xda\xff\xff", 3);
    check_body(MSGPACK_OBJECT_STR, 65536, (const unsigned char *)"\xdb\x00\x01\x00\x00", 5);
}

static void
test_bin_boundaries(void **state)
{
    (void)state;
    check_body(MSGPACK_OBJECT_BIN, 0, (const unsigned char *)"\xc4\x00", 2);
    check_body(MSGPACK_OBJECT_BIN, 255, (const unsigned char *)"\xc4\xff", 2);
    check_body(MSGPACK_OBJECT_BIN, 256, (const unsigned char *)"\xc5\x01\x00", 3);
    check_body(MSGPACK_OBJECT_BIN, 65535, (const unsigned char *)"\xc5\xff\xff", 3);
    check_body(MSGPACK_OBJECT_BIN, 65536, (const unsigned char *)"\xc6\x00\x01\x00\x00", 5);
}

static void
test_ext_forms(void **state)
{
    static const struct {
        size_t n;
        size_t hdr_len;
        unsigned char hdr[6];
    } cases[] = {
        {1, 2, {0xd4, 0xfe}},
        {2, 2, {0xd5, 0xfe}},
        {4, 2, {0xd6, 0xfe}},
        {8, 2, {0xd7, 0xfe}},
        {16, 2, {0xd8, 0xfe}},
        {0, 3, {0xc7, 0x00, 0xfe}},
        {3, 3, {0xc7, 0x03, 0xfe}},
        {17, 3, {0xc7, 0x11, 0xfe}},
        {255, 3, {0xc7, 0xff, 0xfe}},
        {256, 4, {0xc8, 0x01, 0x00, 0xfe}},
        {65535, 4, {0xc8, 0xff, 0xff, 0xfe}},
        {65536, 6, {0xc9, 0x00, 0x01, 0x00, 0x00, 0xfe}},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *body = calloc(1, cases[i].n + 1);
        struct dq_buf b = DQ_BUF_INIT;
        assert_non_null(body);
        memset(body, 0x5a, cases[i].n);
        dq_mp_put_ext(&b, -2, body, cases[i].n);
        assert_int_equal(b.len, cases[i].hdr_len + cases[i].n);
        assert_memory_equal(b.data, cases[i].hdr, cases[i].hdr_len);
        msgpack_object it = read_one(&b);
        assert_int_equal(it.type, MSGPACK_OBJECT_EXT);
        assert_int_equal(it.via.ext.type, -2);
        assert_int_equal(it.via.ext.size, cases[i].n);
        assert_ptr_equal(it.via.ext.ptr, b.data + cases[i].hdr_len);
        assert_memory_equal(it.via.ext.ptr, body, cases[i].n);
        dq_buf_free(&b);
        free(body);
    }
}

static void
test_container_headers(void **state)
{
    static const struct {
        uint32_t n;
        size_t len;
        unsigned char arr[5], map[5];
    } cases[] = {
        {0, 1, {0x90}, {0x80}},
        {15, 1, {0x9f}, {0x8f}},
        {16, 3, {0xdc, 0x00, 0x10}, {0xde, 0x00, 0x10}},
        {65535, 3, {0xdc, 0xff, 0xff}, {0xde, 0xff, 0xff}},
        {65536, 5, {0xdd, 0x00, 0x01, 0x00, 0x00}, {0xdf, 0x00, 0x01, 0x00, 0x00}},
        {UINT32_MAX, 5, {0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdf, 0xff, 0xff, 0xff, 0xff}},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dq_buf b = DQ_BUF_INIT;
        struct dq_mp_scan s;
        dq_mp_put_array(&b, cases[i].n);
        assert_bytes(&b, cases[i].arr, cases[i].len);
        /* A bare header is a claim the pre-check reads without trusting it. */
        if (cases[i].n > 0) {
            scan_fails(b.data, b.len, 64, DQ_MP_FAULT_CLAIM, 0);
            assert_true(dq_mp_scan(b.data, b.len, 0, 64, &s) == false && !s.map);
            assert_true(s.n == cases[i].n && s.left == 0);
        }
        /* With its elements (nil) it decodes, when that fits in memory here. */
        if (cases[i].n <= 65536) {
            for (uint32_t k = 0; k < cases[i].n; k++)
                dq_mp_put_nil(&b);
            msgpack_object it = read_one(&b);
            assert_int_equal(it.type, MSGPACK_OBJECT_ARRAY);
            assert_int_equal(it.via.array.size, cases[i].n);
        }
        dq_buf_reset(&b);
        dq_mp_put_map(&b, cases[i].n);
        assert_bytes(&b, cases[i].map, cases[i].len);
        if (cases[i].n > 0) {
            scan_fails(b.data, b.len, 64, DQ_MP_FAULT_CLAIM, 0);
            assert_true(dq_mp_scan(b.data, b.len, 0, 64, &s) == false && s.map);
            assert_true(s.n == cases[i].n);
        }
        if (cases[i].n <= 65536) {
            for (uint32_t k = 0; k < cases[i].n; k++) {
                dq_mp_put_uint(&b, k);
                dq_mp_put_nil(&b);
            }
            msgpack_object it = read_one(&b);
            assert_int_equal(it.type, MSGPACK_OBJECT_MAP);
            assert_int_equal(it.via.map.size, cases[i].n);
            if (cases[i].n > 0)
                assert_true(it.via.map.ptr[cases[i].n - 1].key.via.u64 == cases[i].n - 1);
        }
        dq_buf_free(&b);
    }
}

/* A value holding every type, including 16- and 32-bit length forms. */
static void
build_everything(struct dq_buf *b)
{
    static unsigned char big[300];

    memset(big, 0x41, sizeof big);
    dq_mp_put_map(b, 3);
    dq_mp_put_str(b, "scalars", 7);
    dq_mp_put_array(b, 17);
    dq_mp_put_nil(b);
    dq_mp_put_bool(b, true);
    dq_mp_put_uint(b, 7);
    dq_mp_put_uint(b, 200);
    dq_mp_put_uint(b, 60000);
    dq_mp_put_uint(b, 70000);
    dq_mp_put_uint(b, UINT64_MAX);
    dq_mp_put_int(b, -5);
    dq_mp_put_int(b, -100);
    dq_mp_put_int(b, -1000);
    dq_mp_put_int(b, -100000);
    dq_mp_put_int(b, INT64_MIN);
    dq_mp_put_double(b, 2.25);
    dq_mp_put_u64fix(b, 1);
    dq_mp_put_str(b, big, 40);
    dq_mp_put_str(b, big, 300);
    dq_mp_put_bin(b, big, 300);
    dq_mp_put_str(b, "ext", 3);
    dq_mp_put_array(b, 3);
    dq_mp_put_ext(b, 1, big, 4);
    dq_mp_put_ext(b, 2, big, 5);
    dq_mp_put_ext(b, 3, big, 300);
    dq_mp_put_uint(b, 42); /* a non-string key */
    dq_mp_put_map(b, 1);
    dq_mp_put_array(b, 0);
    dq_mp_put_array(b, 20);
    for (int i = 0; i < 20; i++)
        dq_mp_put_int(b, -i);
}

static void
test_skip_everything(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_mp_scan s;
    (void)state;

    build_everything(&b);
    dq_mp_put_uint(&b, 9); /* a second value after the first */
    assert_true(dq_mp_scan(b.data, b.len, 0, 8, &s));
    assert_int_equal(b.len - s.end, 1);
    assert_int_equal(s.depth, 3);
    size_t second = s.end;
    assert_true(dq_mp_scan(b.data, b.len, second, 8, &s));
    assert_int_equal(s.end, b.len);
    assert_false(dq_mp_scan(b.data, b.len, b.len, 8, &s));

    /* msgpack-c decodes the same value, leaving the second one where the scan said */
    size_t off = 0;
    msgpack_object o = read_at(b.data, b.len, &off);
    assert_int_equal(off, second);
    assert_int_equal(o.type, MSGPACK_OBJECT_MAP);
    assert_int_equal(o.via.map.size, 3);
    const msgpack_object *sc = &o.via.map.ptr[0].val;
    assert_int_equal(sc->via.array.size, 17);
    assert_true(sc->via.array.ptr[6].via.u64 == UINT64_MAX);
    assert_true(sc->via.array.ptr[11].via.i64 == INT64_MIN);
    assert_true(sc->via.array.ptr[12].via.f64 == 2.25);
    assert_int_equal(sc->via.array.ptr[15].via.str.size, 300);
    assert_int_equal(o.via.map.ptr[1].val.via.array.ptr[2].via.ext.type, 3);
    assert_true(o.via.map.ptr[2].key.via.u64 == 42);
    assert_true(o.via.map.ptr[2].val.via.map.ptr[0].val.via.array.ptr[19].via.i64 == -19);
    dq_buf_free(&b);
}

/* Every proper prefix, alone in an exact-size allocation, fails and moves nothing. */
static void
test_truncated_every_prefix(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    build_everything(&b);
    assert_false(b.failed);
    for (size_t k = 0; k < b.len; k++) {
        unsigned char *copy = malloc(k ? k : 1);
        struct dq_mp_scan s;
        msgpack_object o;
        size_t off = 0;
        assert_non_null(copy);
        memcpy(copy, b.data, k);
        assert_false(dq_mp_scan(copy, k, 0, 8, &s));
        assert_true(s.fault == DQ_MP_FAULT_TRUNCATED || s.fault == DQ_MP_FAULT_CLAIM);
        assert_true(s.at <= k);
        assert_int_equal(dq_mp_unpack(copy, k, &off, 8, &zone, &o, &s), DQ_EPROTO);
        assert_int_equal(off, 0);
        free(copy);
    }
    dq_buf_free(&b);
}

/* Each prefix of each single item (a container: of its header) fails the pre-check. */
static void
test_read_truncated_items(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_mp_scan whole;
    (void)state;

    build_everything(&b);
    assert_true(dq_mp_scan(b.data, b.len, 0, 8, &whole));
    for (size_t i = 0; i < whole.items; i++) {
        size_t at = dq_mp_item_offset(b.data, b.len, 0, i);
        size_t next = i + 1 < whole.items ? dq_mp_item_offset(b.data, b.len, 0, i + 1) : b.len;
        assert_true(at < next);
        for (size_t k = 0; k < next - at; k++) {
            unsigned char *copy = malloc(k ? k : 1);
            struct dq_mp_scan s;
            assert_non_null(copy);
            memcpy(copy, b.data + at, k);
            assert_false(dq_mp_scan(copy, k, 0, 8, &s));
            assert_int_equal(s.at, 0);
            free(copy);
        }
    }
    dq_buf_free(&b);
}

static void
test_reserved_c1(void **state)
{
    static const unsigned char c1[] = {0xc1};
    static const unsigned char in_array[] = {0x92, 0x01, 0xc1};
    (void)state;

    scan_fails(c1, sizeof c1, 64, DQ_MP_FAULT_RESERVED, 0);
    scan_fails(in_array, sizeof in_array, 4, DQ_MP_FAULT_RESERVED, 2);
}

static double
now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
test_hostile_headers(void **state)
{
    static const unsigned char arr32[] = {0xdd, 0xee, 0x6b, 0x28, 0x00}; /* 4e9 elements */
    static const unsigned char map32[] = {0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0};
    static const unsigned char str32[] = {0xdb, 0xee, 0x6b, 0x28, 0x00};
    static const unsigned char bin32[] = {0xc6, 0xff, 0xff, 0xff, 0xff, 0x00};
    static const unsigned char ext32[] = {0xc9, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00};
    /* Each count fits the bytes after it, but not together: [[x, x, x], x] with 3 bytes. */
    static const unsigned char sum[] = {0x92, 0x93, 0x01, 0x02, 0x03};
    /* A map of 2 pairs needs 4 values; 3 bytes follow. */
    static const unsigned char pairs[] = {0x82, 0x01, 0x02, 0x03};
    struct dq_mp_scan s;
    (void)state;

    scan_fails(arr32, sizeof arr32, 64, DQ_MP_FAULT_CLAIM, 0);
    /* the pre-check reports the claim without trusting it */
    assert_false(dq_mp_scan(arr32, sizeof arr32, 0, 64, &s));
    assert_false(s.map);
    assert_true(s.n == 4000000000u);
    assert_int_equal(s.left, 0);

    scan_fails(map32, sizeof map32, 64, DQ_MP_FAULT_CLAIM, 0);
    scan_fails(str32, sizeof str32, 64, DQ_MP_FAULT_TRUNCATED, 0);
    scan_fails(bin32, sizeof bin32, 64, DQ_MP_FAULT_TRUNCATED, 0);
    scan_fails(ext32, sizeof ext32, 64, DQ_MP_FAULT_TRUNCATED, 0);
    scan_fails(sum, sizeof sum, 64, DQ_MP_FAULT_TRUNCATED, 5);
    scan_fails(pairs, sizeof pairs, 64, DQ_MP_FAULT_CLAIM, 0);
}

/*
 * msgpack-c alone would ask malloc for 2^30 msgpack_objects (32 GiB, once its zone
 * rounds up) for the first header before noticing that no element follows; ASan aborts
 * on that allocation.
 * The pre-check refuses each of these at once.
 */
static void
test_gib_headers_fail_fast(void **state)
{
    static const unsigned char arr[] = {0xdd, 0x40, 0x00, 0x00, 0x00}; /* 2^30 elements */
    static const unsigned char map[] = {0xdf, 0x40, 0x00, 0x00, 0x00}; /* 2^30 pairs */
    static const unsigned char str[] = {0xdb, 0x40, 0x00, 0x00, 0x00}; /* 1 GiB of text */
    static const unsigned char bin[] = {0xc6, 0x40, 0x00, 0x00, 0x00}; /* 1 GiB of bytes */
    static const struct {
        const unsigned char *p;
        enum dq_mp_fault fault;
    } cases[] = {
        {arr, DQ_MP_FAULT_CLAIM},
        {map, DQ_MP_FAULT_CLAIM},
        {str, DQ_MP_FAULT_TRUNCATED},
        {bin, DQ_MP_FAULT_TRUNCATED},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dq_mp_scan s;
        msgpack_object o;
        size_t off = 0;
        double t0 = now_s();
        assert_int_equal(dq_mp_unpack(cases[i].p, 5, &off, 64, &zone, &o, &s), DQ_EPROTO);
        assert_true(now_s() - t0 < 1.0); /* generous: valgrind runs this too */
        assert_int_equal(s.fault, cases[i].fault);
        assert_int_equal(s.at, 0);
        assert_int_equal(off, 0);
    }
}

static unsigned char *
nested_arrays(size_t depth, size_t *len)
{
    unsigned char *p = malloc(depth + 1);

    assert_non_null(p);
    memset(p, 0x91, depth);
    p[depth] = 0xc0;
    *len = depth + 1;
    return p;
}

static void
test_skip_depth(void **state)
{
    struct dq_mp_scan s;
    size_t len;
    (void)state;

    unsigned char *d64 = nested_arrays(64, &len);
    assert_true(dq_mp_scan(d64, len, 0, 64, &s));
    assert_int_equal(s.end, len);
    assert_int_equal(s.depth, 64);
    scan_fails(d64, len, 63, DQ_MP_FAULT_DEEP, 63);
    free(d64);

    /* A scalar needs no depth; an empty container needs one level. */
    static const unsigned char empty[] = {0x90};
    scan_fails(empty, 1, 0, DQ_MP_FAULT_DEEP, 0);
    assert_true(dq_mp_scan(empty, 1, 0, 1, &s));
    assert_int_equal(s.depth, 1);

    unsigned char *bomb = nested_arrays(10000, &len);
    scan_fails(bomb, len, 64, DQ_MP_FAULT_DEEP, 64);
    /* the walk is iterative and capped */
    assert_false(dq_mp_scan(bomb, len, 0, 1000000, &s));
    free(bomb);
}

/*
 * msgpack-c's unpacker stops at 32 levels (MSGPACK_EMBED_STACK_SIZE); dq_mp_unpack()
 * takes the documented 64 by building the outer levels itself.
 */
static void
test_unpack_past_msgpack_c_stack(void **state)
{
    size_t len;
    (void)state;

    for (size_t depth = 31; depth <= 64; depth++) {
        unsigned char *p = nested_arrays(depth, &len);
        size_t off = 0;
        msgpack_object o = read_at(p, len, &off);
        assert_int_equal(off, len);
        for (size_t i = 0; i < depth; i++) {
            assert_int_equal(o.type, MSGPACK_OBJECT_ARRAY);
            assert_int_equal(o.via.array.size, 1);
            o = o.via.array.ptr[0];
        }
        assert_int_equal(o.type, MSGPACK_OBJECT_NIL);
        free(p);
    }

    /* maps and siblings above the split: {"k": [[...40 deep...], 7, "s"]} */
    struct dq_buf b = DQ_BUF_INIT;
    dq_mp_put_map(&b, 2);
    dq_mp_put_str(&b, "k", 1);
    dq_mp_put_array(&b, 3);
    for (int i = 0; i < 40; i++)
        dq_mp_put_array(&b, 1);
    dq_mp_put_int(&b, -5);
    dq_mp_put_uint(&b, 7);
    dq_mp_put_str(&b, "s", 1);
    dq_mp_put_bin(&b, "b", 1);
    dq_mp_put_bool(&b, true);
    msgpack_object o = read_one(&b);
    assert_int_equal(o.via.map.size, 2);
    assert_memory_equal(o.via.map.ptr[0].key.via.str.ptr, "k", 1);
    const msgpack_object *a = &o.via.map.ptr[0].val;
    assert_int_equal(a->via.array.size, 3);
    assert_true(a->via.array.ptr[1].via.u64 == 7);
    assert_memory_equal(a->via.array.ptr[2].via.str.ptr, "s", 1);
    const msgpack_object *d = &a->via.array.ptr[0];
    for (int i = 0; i < 40; i++)
        d = &d->via.array.ptr[0];
    assert_true(d->via.i64 == -5);
    assert_int_equal(o.via.map.ptr[1].key.type, MSGPACK_OBJECT_BIN);
    assert_true(o.via.map.ptr[1].val.via.boolean);
    dq_buf_free(&b);
}

static void
test_reader_edges(void **state)
{
    (void)state;
    scan_fails(NULL, 0, 64, DQ_MP_FAULT_TRUNCATED, 0);
    scan_fails("", 0, 64, DQ_MP_FAULT_TRUNCATED, 0);
}

static void
test_writer_too_long(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    if (SIZE_MAX <= UINT32_MAX) {
        skip();
    }
    /* The length is refused before any byte of the (short) source is read. */
    dq_mp_put_bin(&b, "x", (size_t)UINT32_MAX + 1);
    assert_true(b.failed);
    dq_buf_free(&b);
    dq_mp_put_str(&b, "x", (size_t)UINT32_MAX + 1);
    assert_true(b.failed);
    dq_buf_free(&b);
    dq_mp_put_ext(&b, 1, "x", (size_t)UINT32_MAX + 1);
    assert_true(b.failed);
    dq_buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uint_boundaries),
        cmocka_unit_test(test_int_boundaries),
        cmocka_unit_test(test_signed_forms_read),
        cmocka_unit_test(test_u64fix),
        cmocka_unit_test(test_nil_bool_float),
        cmocka_unit_test(test_str_boundaries),
        cmocka_unit_test(test_bin_boundaries),
        cmocka_unit_test(test_ext_forms),
        cmocka_unit_test(test_container_headers),
        cmocka_unit_test(test_skip_everything),
        cmocka_unit_test(test_truncated_every_prefix),
        cmocka_unit_test(test_read_truncated_items),
        cmocka_unit_test(test_reserved_c1),
        cmocka_unit_test(test_hostile_headers),
        cmocka_unit_test(test_gib_headers_fail_fast),
        cmocka_unit_test(test_skip_depth),
        cmocka_unit_test(test_unpack_past_msgpack_c_stack),
        cmocka_unit_test(test_reader_edges),
        cmocka_unit_test(test_writer_too_long),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/mp", tests, zone_setup, zone_teardown);
}
