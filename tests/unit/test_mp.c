/* SPDX-License-Identifier: MIT */
/*
 * test_mp.c: the msgpack reader and writer. Exact bytes at every size boundary, every
 * prefix of a valid value rejected without reading past it (each prefix sits in its
 * own exactly-sized allocation so ASan sees any overread), hostile headers and depth
 * bombs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/mp.h"
#include "lib/buf.h"

static void
assert_bytes(const struct dq_buf *b, const void *want, size_t n)
{
    assert_false(b->failed);
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

/* Reads exactly one item from @b and checks that it used every byte. */
static struct dq_mp_item
read_one(const struct dq_buf *b)
{
    struct dq_mp_reader r;
    struct dq_mp_item it;

    dq_mp_reader_init(&r, b->data, b->len);
    assert_true(dq_mp_read(&r, &it));
    assert_true(dq_mp_at_end(&r));
    return it;
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
        struct dq_mp_item it = read_one(&b);
        assert_int_equal(it.type, DQ_MP_UINT);
        assert_true(it.v.u == cases[i].v);
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
        struct dq_mp_item it = read_one(&b);
        assert_int_equal(it.type, DQ_MP_INT);
        assert_true(it.v.i == cases[i].v);
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
    struct dq_mp_reader r;
    struct dq_mp_item it;
    (void)state;

    dq_mp_reader_init(&r, i8, sizeof i8);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_UINT);
    assert_true(it.v.u == 5);
    dq_mp_reader_init(&r, i16, sizeof i16);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_INT);
    assert_true(it.v.i == -1);
    dq_mp_reader_init(&r, i32, sizeof i32);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_UINT);
    assert_true(it.v.u == INT32_MAX);
    dq_mp_reader_init(&r, i64, sizeof i64);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_UINT);
    assert_true(it.v.u == INT64_MAX);
}

static void
test_u64fix(void **state)
{
    static const unsigned char want[] = {0xcf, 0, 0, 0, 0, 0, 0, 0, 5};
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    dq_mp_put_u64fix(&b, 5);
    assert_bytes(&b, want, sizeof want);
    struct dq_mp_item it = read_one(&b);
    assert_int_equal(it.type, DQ_MP_UINT);
    assert_true(it.v.u == 5);
    dq_buf_free(&b);
}

static void
test_nil_bool_float(void **state)
{
    static const unsigned char want[] = {0xc0, 0xc2, 0xc3, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0};
    static const unsigned char f32[] = {0xca, 0x3f, 0xc0, 0x00, 0x00};
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_mp_reader r;
    struct dq_mp_item it;
    (void)state;

    dq_mp_put_nil(&b);
    dq_mp_put_bool(&b, false);
    dq_mp_put_bool(&b, true);
    dq_mp_put_double(&b, 1.5);
    assert_bytes(&b, want, sizeof want);

    dq_mp_reader_init(&r, b.data, b.len);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_NIL);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_BOOL);
    assert_false(it.v.b);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_BOOL);
    assert_true(it.v.b);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_FLOAT);
    assert_true(it.v.f == 1.5);
    assert_true(dq_mp_at_end(&r));
    assert_false(dq_mp_read(&r, &it));

    dq_mp_reader_init(&r, f32, sizeof f32);
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_FLOAT);
    assert_true(it.v.f == 1.5);

    dq_buf_reset(&b);
    dq_mp_put_double(&b, NAN);
    it = read_one(&b);
    assert_true(isnan(it.v.f));
    dq_buf_reset(&b);
    dq_mp_put_double(&b, -INFINITY);
    it = read_one(&b);
    assert_true(isinf(it.v.f) && it.v.f < 0);
    dq_buf_free(&b);
}

/* Checks the header of a str/bin of @n bytes and that the body reads back. */
static void
check_body(enum dq_mp_type type, size_t n, const unsigned char *hdr, size_t hdr_len)
{
    unsigned char *body = malloc(n + 1);
    struct dq_buf b = DQ_BUF_INIT;

    assert_non_null(body);
    for (size_t i = 0; i < n; i++)
        body[i] = (unsigned char)('a' + i % 26);
    if (type == DQ_MP_STR)
        dq_mp_put_str(&b, body, n);
    else
        dq_mp_put_bin(&b, body, n);
    assert_false(b.failed);
    assert_int_equal(b.len, hdr_len + n);
    assert_memory_equal(b.data, hdr, hdr_len);
    struct dq_mp_item it = read_one(&b);
    assert_int_equal(it.type, type);
    assert_int_equal(it.len, n);
    assert_ptr_equal(it.ptr, (const unsigned char *)b.data + hdr_len);
    if (n > 0)
        assert_memory_equal(it.ptr, body, n);
    dq_buf_free(&b);
    free(body);
}

static void
test_str_boundaries(void **state)
{
    (void)state;
    check_body(DQ_MP_STR, 0, (const unsigned char *)"\xa0", 1);
    check_body(DQ_MP_STR, 31, (const unsigned char *)"\xbf", 1);
    check_body(DQ_MP_STR, 32, (const unsigned char *)"\xd9\x20", 2);
    check_body(DQ_MP_STR, 255, (const unsigned char *)"\xd9\xff", 2);
    check_body(DQ_MP_STR, 256, (const unsigned char *)"\xda\x01\x00", 3);
    check_body(DQ_MP_STR, 65535, (const unsigned char *)"\xda\xff\xff", 3);
    check_body(DQ_MP_STR, 65536, (const unsigned char *)"\xdb\x00\x01\x00\x00", 5);
}

static void
test_bin_boundaries(void **state)
{
    (void)state;
    check_body(DQ_MP_BIN, 0, (const unsigned char *)"\xc4\x00", 2);
    check_body(DQ_MP_BIN, 255, (const unsigned char *)"\xc4\xff", 2);
    check_body(DQ_MP_BIN, 256, (const unsigned char *)"\xc5\x01\x00", 3);
    check_body(DQ_MP_BIN, 65535, (const unsigned char *)"\xc5\xff\xff", 3);
    check_body(DQ_MP_BIN, 65536, (const unsigned char *)"\xc6\x00\x01\x00\x00", 5);
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
        struct dq_mp_item it = read_one(&b);
        assert_int_equal(it.type, DQ_MP_EXT);
        assert_int_equal(it.ext_type, -2);
        assert_int_equal(it.len, cases[i].n);
        assert_memory_equal(it.ptr, body, cases[i].n);
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
        dq_mp_put_array(&b, cases[i].n);
        assert_bytes(&b, cases[i].arr, cases[i].len);
        struct dq_mp_item it = read_one(&b);
        assert_int_equal(it.type, DQ_MP_ARRAY);
        assert_int_equal(it.len, cases[i].n);
        dq_buf_reset(&b);
        dq_mp_put_map(&b, cases[i].n);
        assert_bytes(&b, cases[i].map, cases[i].len);
        it = read_one(&b);
        assert_int_equal(it.type, DQ_MP_MAP);
        assert_int_equal(it.len, cases[i].n);
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
    struct dq_mp_reader r;
    (void)state;

    build_everything(&b);
    dq_mp_put_uint(&b, 9); /* a second value after the first */
    dq_mp_reader_init(&r, b.data, b.len);
    assert_true(dq_mp_skip(&r, 8));
    assert_false(dq_mp_at_end(&r));
    assert_int_equal(b.len - (size_t)(r.p - (const unsigned char *)b.data), 1);
    assert_true(dq_mp_skip(&r, 8));
    assert_true(dq_mp_at_end(&r));
    assert_false(dq_mp_skip(&r, 8));
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
        struct dq_mp_reader r;
        assert_non_null(copy);
        memcpy(copy, b.data, k);
        dq_mp_reader_init(&r, copy, k);
        assert_false(dq_mp_skip(&r, 8));
        assert_ptr_equal(r.p, copy);
        free(copy);
    }
    dq_buf_free(&b);
}

/* dq_mp_read() on each prefix of each single item fails and leaves the reader alone. */
static void
test_read_truncated_items(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_mp_reader whole;
    struct dq_mp_item it;
    (void)state;

    build_everything(&b);
    dq_mp_reader_init(&whole, b.data, b.len);
    while (!dq_mp_at_end(&whole)) {
        const unsigned char *at = whole.p;
        assert_true(dq_mp_read(&whole, &it));
        size_t n = (size_t)(whole.p - at);
        for (size_t k = 0; k < n; k++) {
            unsigned char *copy = malloc(k ? k : 1);
            struct dq_mp_reader r;
            assert_non_null(copy);
            memcpy(copy, at, k);
            dq_mp_reader_init(&r, copy, k);
            assert_false(dq_mp_read(&r, &it));
            assert_ptr_equal(r.p, copy);
            assert_ptr_equal(r.end, copy + k);
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
    struct dq_mp_reader r;
    struct dq_mp_item it;
    (void)state;

    dq_mp_reader_init(&r, c1, sizeof c1);
    assert_false(dq_mp_read(&r, &it));
    assert_ptr_equal(r.p, c1);
    dq_mp_reader_init(&r, in_array, sizeof in_array);
    assert_false(dq_mp_skip(&r, 4));
    assert_ptr_equal(r.p, in_array);
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
    struct dq_mp_reader r;
    struct dq_mp_item it;
    (void)state;

    dq_mp_reader_init(&r, arr32, sizeof arr32);
    assert_false(dq_mp_skip(&r, 64));
    assert_ptr_equal(r.p, arr32);
    /* dq_mp_read() reports the claim without trusting it */
    assert_true(dq_mp_read(&r, &it));
    assert_int_equal(it.type, DQ_MP_ARRAY);
    assert_true(it.len == 4000000000u);

    dq_mp_reader_init(&r, map32, sizeof map32);
    assert_false(dq_mp_skip(&r, 64));
    dq_mp_reader_init(&r, str32, sizeof str32);
    assert_false(dq_mp_read(&r, &it));
    assert_false(dq_mp_skip(&r, 64));
    dq_mp_reader_init(&r, bin32, sizeof bin32);
    assert_false(dq_mp_read(&r, &it));
    dq_mp_reader_init(&r, ext32, sizeof ext32);
    assert_false(dq_mp_read(&r, &it));
    dq_mp_reader_init(&r, sum, sizeof sum);
    assert_false(dq_mp_skip(&r, 64));
    assert_ptr_equal(r.p, sum);
    dq_mp_reader_init(&r, pairs, sizeof pairs);
    assert_false(dq_mp_skip(&r, 64));
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
    struct dq_mp_reader r;
    size_t len;
    (void)state;

    unsigned char *d64 = nested_arrays(64, &len);
    dq_mp_reader_init(&r, d64, len);
    assert_true(dq_mp_skip(&r, 64));
    assert_true(dq_mp_at_end(&r));
    dq_mp_reader_init(&r, d64, len);
    assert_false(dq_mp_skip(&r, 63));
    assert_ptr_equal(r.p, d64);
    free(d64);

    /* A scalar needs no depth; an empty container needs one level. */
    static const unsigned char empty[] = {0x90};
    dq_mp_reader_init(&r, empty, 1);
    assert_false(dq_mp_skip(&r, 0));
    assert_true(dq_mp_skip(&r, 1));

    unsigned char *bomb = nested_arrays(10000, &len);
    dq_mp_reader_init(&r, bomb, len);
    assert_false(dq_mp_skip(&r, 64));
    assert_false(dq_mp_skip(&r, 1000000)); /* the walk is iterative and capped */
    assert_ptr_equal(r.p, bomb);
    free(bomb);
}

static void
test_reader_edges(void **state)
{
    struct dq_mp_reader r;
    struct dq_mp_item it;
    (void)state;

    dq_mp_reader_init(&r, NULL, 0);
    assert_true(dq_mp_at_end(&r));
    assert_false(dq_mp_read(&r, &it));
    assert_false(dq_mp_skip(&r, 64));
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
        cmocka_unit_test(test_skip_depth),
        cmocka_unit_test(test_reader_edges),
        cmocka_unit_test(test_writer_too_long),
    };

    return cmocka_run_group_tests_name("unit/mp", tests, NULL, NULL);
}
