/* SPDX-License-Identifier: MIT */
/*
 * test_mptext.c: msgpack to JSON, tree, summary and hex dump. Exact text for each type,
 * the reserved {"$base64": ...} shapes, terminal safety of everything people read,
 * and errors (truncation at every prefix, hostile headers, depth bombs) with the
 * byte offset in the message.
 */
#include "harness/check.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "fmt/esc.h"
#include "fmt/mptext.h"
#include "lib/buf.h"
#include "lib/mp.h"

/* Renders @mp as JSON, expecting success and exactly @want. */
static void
json_is(const struct dq_buf *mp, const char *want)
{
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};

    int rc = dq_mp_to_json(&out, mp->data, mp->len, &err);
    if (rc != DQ_OK)
        fail_msg("dq_mp_to_json: %d %s", rc, err.msg);
    assert_string_equal(out.data, want);
    assert_int_equal(out.len, strlen(want));
    dq_buf_free(&out);
}

/* Renders raw bytes as JSON, expecting DQ_EPROTO with exactly @want_msg. */
static void
json_fails(const void *data, size_t len, const char *want_msg)
{
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};

    assert_int_equal(dq_mp_to_json(&out, data, len, &err), DQ_EPROTO);
    assert_int_equal(err.code, DQ_EPROTO);
    if (want_msg != NULL)
        assert_string_equal(err.msg, want_msg);
    dq_buf_reset(&out);
    assert_int_equal(dq_mp_to_tree(&out, data, len, 0, &err), DQ_EPROTO);
    if (want_msg != NULL)
        assert_string_equal(err.msg, want_msg);
    dq_buf_free(&out);
}

/* No raw control byte (other than line ends when @nl), no C1/bidi, valid UTF-8. */
static void
assert_terminal_safe(const char *s, size_t len, bool nl)
{
    assert_true(dq_utf8_valid(s, len));
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = dq_utf8_decode(s + i, len - i, &cp);
        assert_true(n > 0);
        if (!(nl && cp == '\n'))
            assert_false(dq_esc_is_unsafe(cp));
        i += n;
    }
}

static void
test_json_scalars(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    dq_mp_put_array(&b, 9);
    dq_mp_put_nil(&b);
    dq_mp_put_bool(&b, true);
    dq_mp_put_bool(&b, false);
    dq_mp_put_uint(&b, 0);
    dq_mp_put_uint(&b, UINT64_MAX);
    dq_mp_put_int(&b, -1);
    dq_mp_put_int(&b, INT64_MIN);
    dq_mp_put_u64fix(&b, 7);
    dq_mp_put_int(&b, 128);
    json_is(&b, "[null,true,false,0,18446744073709551615,-1,-9223372036854775808,7,128]");
    dq_buf_free(&b);
}

static void
test_json_floats(void **state)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {1.5, "1.5"},
        {1.0, "1.0"},
        {-0.0, "-0.0"},
        {0.1, "0.1"},
        {1.0 / 3, "0.3333333333333333"},
        {1e300, "1e+300"},
        {5e-324, "4.94065645841247e-324"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {NAN, "{\"$float\":\"nan\"}"},
        {INFINITY, "{\"$float\":\"inf\"}"},
        {-INFINITY, "{\"$float\":\"-inf\"}"},
    };
    static const unsigned char f32[] = {0xca, 0x3f, 0xc0, 0x00, 0x00};
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dq_buf_reset(&b);
        dq_mp_put_double(&b, cases[i].v);
        json_is(&b, cases[i].want);
    }
    dq_buf_reset(&b);
    dq_buf_append(&b, f32, sizeof f32);
    json_is(&b, "1.5");
    dq_buf_free(&b);
}

/* The process locale must not change the decimal point. */
static void
test_json_floats_locale(void **state)
{
    static const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    struct dq_buf b = DQ_BUF_INIT;
    const char *set = NULL;
    (void)state;

    for (size_t i = 0; i < sizeof names / sizeof names[0] && set == NULL; i++)
        set = setlocale(LC_NUMERIC, names[i]);
    if (set == NULL)
        skip(); /* no locale with a decimal comma installed */
    dq_mp_put_double(&b, 2.5);
    json_is(&b, "2.5");
    setlocale(LC_NUMERIC, "C");
    dq_buf_free(&b);
}

static void
test_json_strings(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    dq_mp_put_str(&b, "a\"b\\c/\n\t\r\b\f\x01\x1b[2J\x7f", 17);
    json_is(&b, "\"a\\\"b\\\\c/\\n\\t\\r\\b\\f\\u0001\\u001b[2J\\u007f\"");
    dq_buf_reset(&b);
    /* é and 日 stay; C1 CSI, RLO, U+2028 are escaped */
    dq_mp_put_str(&b, "\xc3\xa9\xe6\x97\xa5\xc2\x9b\xe2\x80\xae\xe2\x80\xa8", 13);
    json_is(&b, "\"\xc3\xa9\xe6\x97\xa5\\u009b\\u202e\\u2028\"");
    dq_buf_reset(&b);
    dq_mp_put_str(&b, "\0", 1);
    json_is(&b, "\"\\u0000\"");
    dq_buf_reset(&b);
    /* invalid UTF-8 */
    dq_mp_put_str(&b, "\xff\xc0\x80", 3);
    json_is(&b, "{\"$str_base64\":\"/8CA\"}");
    dq_buf_reset(&b);
    dq_mp_put_str(&b, "\xed\xa0\x80", 3); /* a surrogate */
    json_is(&b, "{\"$str_base64\":\"7aCA\"}");
    dq_buf_reset(&b);
    dq_mp_put_str(&b, "", 0);
    json_is(&b, "\"\"");
    dq_buf_free(&b);
}

static void
test_json_bin_ext(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    dq_mp_put_array(&b, 5);
    dq_mp_put_bin(&b, "\x01\x02\x03", 3);
    dq_mp_put_bin(&b, "", 0);
    dq_mp_put_bin(&b, "\xff", 1);
    dq_mp_put_ext(&b, -1, "\x00\x00\x00\x01", 4);
    dq_mp_put_ext(&b, 127, "abcde", 5);
    json_is(&b, "[{\"$base64\":\"AQID\"},{\"$base64\":\"\"},{\"$base64\":\"/w==\"},"
                "{\"$ext\":-1,\"$base64\":\"AAAAAQ==\"},{\"$ext\":127,\"$base64\":\"YWJjZGU=\"}]");
    dq_buf_free(&b);
}

static void
test_json_containers(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    dq_mp_put_map(&b, 6);
    dq_mp_put_str(&b, "a", 1);
    dq_mp_put_array(&b, 0);
    dq_mp_put_str(&b, "b", 1);
    dq_mp_put_map(&b, 0);
    dq_mp_put_uint(&b, 1); /* non-string keys become their JSON text */
    dq_mp_put_str(&b, "one", 3);
    dq_mp_put_array(&b, 2);
    dq_mp_put_str(&b, "x", 1);
    dq_mp_put_nil(&b);
    dq_mp_put_bool(&b, true);
    dq_mp_put_bin(&b, "\x00", 1);
    dq_mp_put_int(&b, -2);
    dq_mp_put_str(&b, "\xff", 1); /* invalid UTF-8 key */
    dq_mp_put_array(&b, 1);
    dq_mp_put_double(&b, 0.5);
    json_is(&b, "{\"a\":[],\"b\":{},\"1\":\"one\",\"[\\\"x\\\",null]\":true,"
                "\"{\\\"$base64\\\":\\\"AA==\\\"}\":-2,"
                "\"{\\\"$str_base64\\\":\\\"/w==\\\"}\":[0.5]}");
    dq_buf_free(&b);
}

/* value_k = {value_(k-1): nil}, value_0 = "\"": keys nested k - 1 deep. */
static void
nested_keys(struct dq_buf *b, int k)
{
    for (int i = 0; i < k; i++)
        dq_mp_put_map(b, 1);
    dq_mp_put_str(b, "\"", 1);
    for (int i = 0; i < k; i++)
        dq_mp_put_nil(b);
}

/* Re-escaping doubles the text per level of non-string keys; the nesting is capped. */
static void
test_nested_keys(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    nested_keys(&b, 2);
    json_is(&b, "{\"{\\\"\\\\\\\"\\\":null}\":null}");
    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 0, &err), DQ_OK);
    assert_string_equal(out.data, "{\"\\\"\":null}: nil\n");

    dq_buf_reset(&b);
    dq_buf_reset(&out);
    nested_keys(&b, 5);
    assert_int_equal(dq_mp_to_json(&out, b.data, b.len, &err), DQ_OK);
    dq_buf_reset(&out);
    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 0, &err), DQ_OK);

    dq_buf_reset(&b);
    nested_keys(&b, 6);
    json_fails(b.data, b.len, "msgpack: map key at byte 5 nests non-string keys more than 4 deep");

    /* a key bomb: 64 levels would be 2^63 times larger; refused at once */
    dq_buf_reset(&b);
    nested_keys(&b, 64);
    json_fails(b.data, b.len, "msgpack: map key at byte 5 nests non-string keys more than 4 deep");
    dq_buf_reset(&out);
    dq_mp_summary(&out, b.data, b.len, 40);
    assert_int_equal(strncmp(out.data, "raw: ", 5), 0);
    dq_buf_free(&out);
    dq_buf_free(&b);
}

static void
test_json_errors(void **state)
{
    static const unsigned char c1[] = {0x92, 0x01, 0xc1};
    static const unsigned char str8[] = {0x92, 0x01, 0xd9, 0x05, 'a'};
    static const unsigned char arr32[] = {0xdd, 0xee, 0x6b, 0x28, 0x00};
    static const unsigned char map16[] = {0x91, 0xde, 0x00, 0x02, 0x01, 0x02, 0x03};
    static const unsigned char trailing[] = {0x01, 0x02};
    (void)state;

    json_fails(c1, sizeof c1, "msgpack: reserved byte 0xc1 at byte 2");
    json_fails(str8, sizeof str8, "msgpack: truncated at byte 2");
    json_fails(arr32, sizeof arr32,
               "msgpack: array at byte 0 claims 4000000000 elements but only 0 bytes follow");
    json_fails(map16, sizeof map16,
               "msgpack: map at byte 1 claims 2 pairs but only 3 bytes follow");
    json_fails(trailing, sizeof trailing,
               "msgpack: trailing bytes at byte 1 (the value ends there; input is 2 bytes)");
    json_fails("", 0, "msgpack: truncated at byte 0");
    json_fails(NULL, 0, "msgpack: truncated at byte 0");
}

/* Empty str/bin/ext bodies (msgpack-c gives them a NULL pointer) in every renderer;
 * the fuzzer found the tree passing that NULL on (tests/fuzz/corpus/msgpack). */
static void
test_empty_bodies(void **state)
{
    struct dq_buf b = DQ_BUF_INIT, out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    dq_mp_put_array(&b, 4);
    dq_mp_put_str(&b, "", 0);
    dq_mp_put_bin(&b, "", 0);
    dq_mp_put_ext(&b, 1, "", 0);
    dq_mp_put_map(&b, 1);
    dq_mp_put_str(&b, "", 0);
    dq_mp_put_str(&b, "", 0);
    json_is(&b, "[\"\",{\"$base64\":\"\"},{\"$ext\":1,\"$base64\":\"\"},{\"\":\"\"}]");
    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 0, &err), DQ_OK);
    assert_string_equal(out.data, "- \"\"\n- bin (0 bytes)\n- ext type 1 (0 bytes)\n-\n  : \"\"\n");
    dq_buf_reset(&out);
    dq_mp_summary(&out, b.data, b.len, 80);
    assert_string_equal(out.data,
                        "[\"\",{\"$base64\":\"\"},{\"$ext\":1,\"$base64\":\"\"},{\"\":\"\"}]");
    dq_buf_free(&out);
    dq_buf_free(&b);
}

/* 5-byte headers claiming 2^30 elements or 1 GiB: refused at once, in every renderer,
 * without msgpack-c's allocation for the claim (ASan would abort on that). */
static void
test_gib_headers(void **state)
{
    static const struct {
        unsigned char head[5];
        const char *msg;
    } cases[] = {
        {{0xdd, 0x40, 0x00, 0x00, 0x00},
         "msgpack: array at byte 0 claims 1073741824 elements but only 0 bytes follow"},
        {{0xdf, 0x40, 0x00, 0x00, 0x00},
         "msgpack: map at byte 0 claims 1073741824 pairs but only 0 bytes follow"},
        {{0xdb, 0x40, 0x00, 0x00, 0x00}, "msgpack: truncated at byte 0"},
        {{0xc6, 0x40, 0x00, 0x00, 0x00}, "msgpack: truncated at byte 0"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dq_buf out = DQ_BUF_INIT;
        json_fails(cases[i].head, 5, cases[i].msg);
        dq_mp_summary(&out, cases[i].head, 5, 80);
        assert_int_equal(strncmp(out.data, "raw: ", 5), 0);
        dq_buf_free(&out);
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
test_depth_limit(void **state)
{
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};
    size_t len;
    (void)state;

    unsigned char *ok = nested_arrays(64, &len);
    assert_int_equal(dq_mp_to_json(&out, ok, len, &err), DQ_OK);
    assert_int_equal(out.len, 64 * 2 + 4);
    assert_memory_equal(out.data + 62, "[[null]]", 8);
    dq_buf_reset(&out);
    assert_int_equal(dq_mp_to_tree(&out, ok, len, 0, &err), DQ_OK);
    free(ok);

    unsigned char *deep = nested_arrays(65, &len);
    json_fails(deep, len, "msgpack: nesting deeper than 64 at byte 64");
    free(deep);

    unsigned char *bomb = nested_arrays(10000, &len);
    json_fails(bomb, len, "msgpack: nesting deeper than 64 at byte 64");
    free(bomb);

    /* maps nest too: {"k": {"k": ...}} */
    struct dq_buf m = DQ_BUF_INIT;
    for (int i = 0; i < 10000; i++) {
        dq_mp_put_map(&m, 1);
        dq_mp_put_str(&m, "k", 1);
    }
    dq_mp_put_nil(&m);
    json_fails(m.data, m.len, "msgpack: nesting deeper than 64 at byte 192");
    dq_buf_free(&m);
    dq_buf_free(&out);
}

/* A value using every type; every proper prefix must fail cleanly. */
static void
build_sample(struct dq_buf *b)
{
    dq_mp_put_map(b, 4);
    dq_mp_put_str(b, "id", 2);
    dq_mp_put_str(b, "task-0001", 9);
    dq_mp_put_str(b, "args", 4);
    dq_mp_put_array(b, 8);
    dq_mp_put_nil(b);
    dq_mp_put_bool(b, false);
    dq_mp_put_uint(b, 300);
    dq_mp_put_int(b, -70000);
    dq_mp_put_double(b, 0.25);
    dq_mp_put_bin(b, "\x00\x01\x02", 3);
    dq_mp_put_ext(b, 3, "abcdefgh", 8);
    dq_mp_put_str(b, "\xe6\x97\xa5\xe6\x9c\xac", 6);
    dq_mp_put_uint(b, 9);
    dq_mp_put_map(b, 1);
    dq_mp_put_str(b, "x", 1);
    dq_mp_put_array(b, 0);
    dq_mp_put_str(b, "bad", 3);
    dq_mp_put_str(b, "\xc3", 1);
}

static void
test_truncated_every_prefix(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    build_sample(&b);
    assert_int_equal(dq_mp_to_json(&out, b.data, b.len, &err), DQ_OK);
    for (size_t k = 0; k < b.len; k++) {
        unsigned char *copy = malloc(k ? k : 1);
        assert_non_null(copy);
        memcpy(copy, b.data, k);
        dq_buf_reset(&out);
        memset(&err, 0, sizeof err);
        assert_int_equal(dq_mp_to_json(&out, copy, k, &err), DQ_EPROTO);
        assert_int_equal(strncmp(err.msg, "msgpack: ", 9), 0);
        dq_buf_reset(&out);
        assert_int_equal(dq_mp_to_tree(&out, copy, k, 2, &err), DQ_EPROTO);
        assert_int_equal(strncmp(err.msg, "msgpack: ", 9), 0);
        dq_buf_reset(&out);
        dq_mp_summary(&out, copy, k, 60);
        assert_true(out.len <= 60);
        assert_terminal_safe(out.data, out.len, false);
        if (k > 0)
            assert_int_equal(strncmp(out.data, "raw: ", 5), 0);
        free(copy);
    }
    dq_buf_free(&out);
    dq_buf_free(&b);
}

static void
test_json_null_err(void **state)
{
    static const unsigned char c1[] = {0xc1};
    struct dq_buf out = DQ_BUF_INIT;
    (void)state;

    assert_int_equal(dq_mp_to_json(&out, c1, 1, NULL), DQ_EPROTO);
    assert_int_equal(dq_mp_to_tree(&out, c1, 1, 0, NULL), DQ_EPROTO);
    dq_buf_free(&out);
}

static void
test_tree_golden(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    dq_mp_put_map(&b, 11);
    dq_mp_put_str(&b, "id", 2);
    dq_mp_put_str(&b, "t-1", 3);
    dq_mp_put_str(&b, "n", 1);
    dq_mp_put_int(&b, -42);
    dq_mp_put_str(&b, "ok", 2);
    dq_mp_put_bool(&b, true);
    dq_mp_put_str(&b, "none", 4);
    dq_mp_put_nil(&b);
    dq_mp_put_str(&b, "f", 1);
    dq_mp_put_double(&b, 1.5);
    dq_mp_put_str(&b, "tags", 4);
    dq_mp_put_array(&b, 2);
    dq_mp_put_str(&b, "a", 1);
    dq_mp_put_str(&b, "b\nc", 3);
    dq_mp_put_str(&b, "nested", 6);
    dq_mp_put_map(&b, 2);
    dq_mp_put_str(&b, "empty", 5);
    dq_mp_put_map(&b, 0);
    dq_mp_put_str(&b, "list", 4);
    dq_mp_put_array(&b, 2);
    dq_mp_put_array(&b, 2);
    dq_mp_put_uint(&b, 1);
    dq_mp_put_array(&b, 0);
    dq_mp_put_map(&b, 1);
    dq_mp_put_str(&b, "x", 1);
    dq_mp_put_double(&b, NAN);
    dq_mp_put_str(&b, "raw", 3);
    dq_mp_put_bin(&b, "\x01\x02\x03", 3);
    dq_mp_put_str(&b, "e", 1);
    dq_mp_put_ext(&b, 5, "ab", 2);
    dq_mp_put_uint(&b, 7);
    dq_mp_put_str(&b, "seven", 5);
    dq_mp_put_str(&b, "esc\x1b", 4);
    dq_mp_put_str(&b, "\x1b]52;c;eA==\x07", 12);

    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 2, &err), DQ_OK);
    assert_string_equal(out.data,
                        "  id: \"t-1\"\n"
                        "  n: -42\n"
                        "  ok: true\n"
                        "  none: nil\n"
                        "  f: 1.5\n"
                        "  tags:\n"
                        "    - \"a\"\n"
                        "    - \"b\\nc\"\n"
                        "  nested:\n"
                        "    empty: {}\n"
                        "    list:\n"
                        "      -\n"
                        "        - 1\n"
                        "        - []\n"
                        "      -\n"
                        "        x: nan\n"
                        "  raw: bin (3 bytes)\n"
                        "    00000000  01 02 03                                          |...|\n"
                        "  e: ext type 5 (2 bytes)\n"
                        "    00000000  61 62                                             |ab|\n"
                        "  7: \"seven\"\n"
                        "  esc\\e: \"\\e]52;c;eA==\\x07\"\n");
    assert_terminal_safe(out.data, out.len, true);
    dq_buf_free(&out);
    dq_buf_free(&b);
}

static void
test_tree_top_level(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    dq_mp_put_str(&b, "\xe2\x80\xaehi", 5);
    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 0, &err), DQ_OK);
    assert_string_equal(out.data, "\"\\u{202e}hi\"\n");
    dq_buf_reset(&b);
    dq_buf_reset(&out);
    dq_mp_put_array(&b, 0);
    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 4, &err), DQ_OK);
    assert_string_equal(out.data, "    []\n");
    dq_buf_reset(&b);
    dq_buf_reset(&out);
    dq_mp_put_bin(&b, "0123456789abcdefXY", 18);
    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 0, &err), DQ_OK);
    assert_string_equal(out.data,
                        "bin (18 bytes)\n"
                        "  00000000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  "
                        "|0123456789abcdef|\n"
                        "  00000010  58 59                                             |XY|\n");
    dq_buf_reset(&b);
    dq_buf_reset(&out);
    dq_mp_put_array(&b, 2);
    dq_mp_put_int(&b, -1);
    dq_mp_put_map(&b, 1);
    dq_mp_put_str(&b, "k", 1);
    dq_mp_put_uint(&b, 2);
    assert_int_equal(dq_mp_to_tree(&out, b.data, b.len, 0, &err), DQ_OK);
    assert_string_equal(out.data, "- -1\n-\n  k: 2\n");
    dq_buf_free(&out);
    dq_buf_free(&b);
}

static void
test_hexdump(void **state)
{
    struct dq_buf out = DQ_BUF_INIT;
    unsigned char all[33];
    (void)state;

    for (int i = 0; i < 33; i++)
        all[i] = (unsigned char)(i * 8);
    dq_hexdump(&out, all, sizeof all, 1);
    assert_string_equal(out.data,
                        " 00000000  00 08 10 18 20 28 30 38  40 48 50 58 60 68 70 78  "
                        "|.... (08@HPX`hpx|\n"
                        " 00000010  80 88 90 98 a0 a8 b0 b8  c0 c8 d0 d8 e0 e8 f0 f8  "
                        "|................|\n"
                        " 00000020  00                                                |.|\n");
    assert_terminal_safe(out.data, out.len, true);
    dq_buf_reset(&out);
    dq_hexdump(&out, "", 0, 4);
    assert_int_equal(out.len, 0);
    dq_buf_free(&out);
}

static void
test_summary(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_buf out = DQ_BUF_INIT;
    (void)state;

    dq_mp_put_map(&b, 1);
    dq_mp_put_str(&b, "msg", 3);
    dq_mp_put_str(&b, "hi\x1b[2J", 6);
    dq_mp_summary(&out, b.data, b.len, 80);
    assert_string_equal(out.data, "{\"msg\":\"hi\\u001b[2J\"}");

    /* cut: at most max_bytes, ends with the ellipsis */
    dq_buf_reset(&out);
    dq_mp_summary(&out, b.data, b.len, 10);
    assert_string_equal(out.data, "{\"msg\":\xe2\x80\xa6");
    dq_buf_reset(&out);
    dq_mp_summary(&out, b.data, b.len, 2);
    assert_string_equal(out.data, "{\"");
    dq_buf_reset(&out);
    dq_mp_summary(&out, b.data, b.len, 0);
    assert_int_equal(out.len, 0);

    /* cut on a UTF-8 boundary: "日日日..." never splits a character */
    dq_buf_reset(&b);
    struct dq_buf s = DQ_BUF_INIT;
    for (int i = 0; i < 40; i++)
        dq_buf_puts(&s, "\xe6\x97\xa5");
    dq_mp_put_str(&b, s.data, s.len);
    for (size_t max = 3; max < 40; max++) {
        dq_buf_reset(&out);
        dq_mp_summary(&out, b.data, b.len, max);
        assert_true(out.len <= max);
        assert_true(out.len + 3 > max); /* nothing wasted beyond one character */
        assert_true(dq_utf8_valid(out.data, out.len));
        assert_memory_equal(out.data + out.len - 3, "\xe2\x80\xa6", 3);
    }
    dq_buf_free(&s);

    /* the stop mark falls just before a non-string key (found by fuzzing: the key's
     * text was empty and NULL) */
    dq_buf_reset(&b);
    dq_buf_reset(&out);
    dq_mp_put_map(&b, 2);
    dq_mp_put_str(&b, "a", 1);
    dq_mp_put_str(&b, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", 40);
    dq_mp_put_array(&b, 1);
    dq_mp_put_uint(&b, 1);
    dq_mp_put_uint(&b, 1);
    dq_mp_summary(&out, b.data, b.len, 10);
    assert_string_equal(out.data, "{\"a\":\"y\xe2\x80\xa6");

    /* not msgpack: raw bytes, escaped */
    dq_buf_reset(&out);
    dq_mp_summary(&out, "\xc1\x1b[31mred\xff", 10, 80);
    assert_string_equal(out.data, "raw: \\xc1\\e[31mred\\xff");
    dq_buf_reset(&out);
    dq_mp_summary(&out, "\x01\x02", 2, 80);
    assert_string_equal(out.data, "raw: \\x01\\x02");

    /* appends */
    dq_buf_reset(&out);
    dq_buf_puts(&out, "> ");
    dq_buf_reset(&b);
    dq_mp_put_uint(&b, 5);
    dq_mp_summary(&out, b.data, b.len, 80);
    assert_string_equal(out.data, "> 5");
    dq_buf_free(&out);
    dq_buf_free(&b);
}

/* A 4 MiB payload is summarised without rendering all of it. */
static void
test_summary_large(void **state)
{
    size_t n = 4u << 20;
    unsigned char *big = malloc(n);
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_buf out = DQ_BUF_INIT;
    (void)state;

    assert_non_null(big);
    memset(big, 'z', n);
    big[0] = 0x1b;
    dq_mp_put_array(&b, 3);
    dq_mp_put_str(&b, big, n);
    dq_mp_put_bin(&b, big, n);
    dq_mp_put_nil(&b);
    dq_mp_summary(&out, b.data, b.len, 40);
    /* [" + \u001b + 29 z + ellipsis = 40 bytes */
    assert_string_equal(out.data, "[\"\\u001bzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\xe2\x80\xa6");
    dq_buf_free(&out);
    dq_buf_free(&b);
    free(big);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_scalars),
        cmocka_unit_test(test_gib_headers),
        cmocka_unit_test(test_empty_bodies),
        cmocka_unit_test(test_json_floats),
        cmocka_unit_test(test_json_floats_locale),
        cmocka_unit_test(test_json_strings),
        cmocka_unit_test(test_json_bin_ext),
        cmocka_unit_test(test_json_containers),
        cmocka_unit_test(test_nested_keys),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_truncated_every_prefix),
        cmocka_unit_test(test_json_null_err),
        cmocka_unit_test(test_tree_golden),
        cmocka_unit_test(test_tree_top_level),
        cmocka_unit_test(test_hexdump),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_summary_large),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/mptext", tests, NULL, NULL);
}
