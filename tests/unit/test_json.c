/* SPDX-License-Identifier: MIT */
/*
 * test_json.c: JSON to msgpack. Exact smallest-encoding bytes, strings and surrogates,
 * the reserved {"$base64": ...} shapes, errors with their line and column, depth
 * bombs, and round trips both ways through dq_mp_to_json().
 */
#include "harness/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "fmt/json.h"
#include "fmt/mptext.h"
#include "lib/buf.h"
#include "lib/mp.h"

/* Parses @json (NUL-terminated) and expects exactly @n bytes @want. */
static void
mp_is(const char *json, const void *want, size_t n)
{
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};

    int rc = dq_json_to_mp(&out, json, strlen(json), &err);
    if (rc != DQ_OK)
        fail_msg("%s: %d %s", json, rc, err.msg);
    assert_false(out.failed);
    assert_int_equal(out.len, n);
    assert_memory_equal(out.data, want, n);
    dq_buf_free(&out);
}

#define MP_IS(json, lit) mp_is(json, lit, sizeof(lit) - 1)

/* The range in the message for an integer that fits neither int64 nor uint64. */
#define RANGE "-9223372036854775808..18446744073709551615 (quote it to keep it exact)"

/* Parses @len bytes of @json and expects DQ_EINVAL with exactly @msg. */
static void
fails_n(const char *json, size_t len, const char *msg)
{
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};

    int rc = dq_json_to_mp(&out, json, len, &err);
    if (rc != DQ_EINVAL)
        fail_msg("%s: want DQ_EINVAL, got %d", json, rc);
    assert_int_equal(err.code, DQ_EINVAL);
    assert_string_equal(err.msg, msg);
    assert_true(out.len == 0);
    dq_buf_free(&out);
}

static void
fails(const char *json, const char *msg)
{
    fails_n(json, strlen(json), msg);
}

static void
test_scalars(void **state)
{
    (void)state;
    MP_IS("null", "\xc0");
    MP_IS("true", "\xc3");
    MP_IS("false", "\xc2");
    MP_IS("0", "\x00");
    MP_IS("-0", "\x00");
    MP_IS("127", "\x7f");
    MP_IS("128", "\xcc\x80");
    MP_IS("255", "\xcc\xff");
    MP_IS("256", "\xcd\x01\x00");
    MP_IS("65535", "\xcd\xff\xff");
    MP_IS("65536", "\xce\x00\x01\x00\x00");
    MP_IS("4294967296", "\xcf\x00\x00\x00\x01\x00\x00\x00\x00");
    MP_IS("18446744073709551615", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff");
    MP_IS("-1", "\xff");
    MP_IS("-32", "\xe0");
    MP_IS("-33", "\xd0\xdf");
    MP_IS("-129", "\xd1\xff\x7f");
    MP_IS("-9223372036854775808", "\xd3\x80\x00\x00\x00\x00\x00\x00\x00");
    /* beyond 64 bits as a double: only when written as one (test_number_limits) */
    MP_IS("1.8446744073709552e19", "\xcb\x43\xf0\x00\x00\x00\x00\x00\x00");
    MP_IS("-9223372036854775809.0", "\xcb\xc3\xe0\x00\x00\x00\x00\x00\x00");
    MP_IS("1.5", "\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00");
    MP_IS("1.0", "\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00");
    MP_IS("1e2", "\xcb\x40\x59\x00\x00\x00\x00\x00\x00");
    MP_IS("1E+2", "\xcb\x40\x59\x00\x00\x00\x00\x00\x00");
    MP_IS("10000e-2", "\xcb\x40\x59\x00\x00\x00\x00\x00\x00");
    MP_IS("-0.0", "\xcb\x80\x00\x00\x00\x00\x00\x00\x00");
    MP_IS(" \t\r\n 7 \n", "\x07");
}

static void
test_strings(void **state)
{
    (void)state;
    MP_IS("\"\"", "\xa0");
    MP_IS("\"a\\u0041\\n\\t\\r\\b\\f\\/\\\\\\\"\"", "\xaa"
                                                    "aA\n\t\r\b\f/\\\"");
    MP_IS("\"\\u00e9\\u00E9\"", "\xa4\xc3\xa9\xc3\xa9");
    MP_IS("\"\\ud83d\\ude00\"", "\xa4\xf0\x9f\x98\x80");
    MP_IS("\"\\uDBFF\\uDFFF\"", "\xa4\xf4\x8f\xbf\xbf");
    MP_IS("\"\\u0000\"", "\xa1\x00");
    MP_IS("\"caf\xc3\xa9 \xe6\x97\xa5\"", "\xa9"
                                          "caf\xc3\xa9 \xe6\x97\xa5");
    MP_IS("\"\xf0\x9f\x98\x80\"", "\xa4\xf0\x9f\x98\x80");
    /* 31 and 32 bytes: fixstr and str8 */
    MP_IS("\"0123456789012345678901234567890\"", "\xbf"
                                                 "0123456789012345678901234567890");
    MP_IS("\"01234567890123456789012345678901\"", "\xd9\x20"
                                                  "01234567890123456789012345678901");
}

static void
test_string_errors(void **state)
{
    (void)state;
    fails("\"\\ud800\"", "json: lone surrogate \\ud800 at line 1 column 2");
    fails("\"\\udc00\"", "json: lone surrogate \\udc00 at line 1 column 2");
    fails("\"x\\ud800\\u0041\"", "json: lone surrogate \\ud800 at line 1 column 3");
    fails("\"\\ud800\\n\"", "json: lone surrogate \\ud800 at line 1 column 2");
    fails("\"\\u12\"",
          "json: invalid (non-hex) character occurs after '\\u' inside string at line 1 column 6");
    fails("\"\\u12g4\"",
          "json: invalid (non-hex) character occurs after '\\u' inside string at line 1 column 6");
    fails("\"\\x41\"", "json: inside a string, '\\' occurs before a character which it may not at "
                       "line 1 column 3");
    fails("\"a\nb\"", "json: invalid character inside string at line 1 column 3");
    fails("\"\x1b[2J\"", "json: invalid character inside string at line 1 column 2");
    fails("\"\xff\"", "json: invalid UTF-8 byte 0xff in string at line 1 column 2");
    fails("\"\xc0\x80\"", "json: invalid UTF-8 byte 0xc0 in string at line 1 column 2");
    fails("\"\xed\xa0\x80\"", "json: invalid UTF-8 byte 0xed in string at line 1 column 2");
    fails("\"\xe6\x97\"", "json: invalid UTF-8 byte 0xe6 in string at line 1 column 2");
    fails("[\"abc", "json: premature EOF at line 1 column 6");
    fails("\"abc\\", "json: inside a string, '\\' occurs before a character which it may not at "
                     "line 1 column 6");
    fails_n("\"a\0b\"", 5, "json: invalid character inside string at line 1 column 3");
}

static void
test_containers(void **state)
{
    (void)state;
    MP_IS("[]", "\x90");
    MP_IS("{}", "\x80");
    MP_IS("[ ]", "\x90");
    MP_IS("{ }", "\x80");
    MP_IS("{\"a\":1,\"b\":[true,null]}", "\x82\xa1"
                                         "a\x01\xa1"
                                         "b\x92\xc3\xc0");
    /* key order and duplicates are kept */
    MP_IS("{\"z\":1,\"a\":2,\"z\":3}", "\x83\xa1z\x01\xa1"
                                       "a\x02\xa1z\x03");
    MP_IS(" [ [ ] , { \"k\" : [ 1 ] } ] ", "\x92\x90\x81\xa1k\x91\x01");
}

/* "[0,0,...]" with @n zeros must get the smallest array header. */
static void
check_array_size(uint32_t n, const void *hdr, size_t hdr_len)
{
    struct dq_buf json = DQ_BUF_INIT, out = DQ_BUF_INIT;
    struct dq_mp_scan s;
    msgpack_zone zone;
    msgpack_object o;
    size_t off = 0;

    assert_true(msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE));
    dq_buf_putc(&json, '[');
    for (uint32_t i = 0; i < n; i++)
        dq_buf_puts(&json, i ? ",0" : "0");
    dq_buf_putc(&json, ']');
    assert_int_equal(dq_json_to_mp(&out, json.data, json.len, NULL), DQ_OK);
    assert_int_equal(out.len, hdr_len + n);
    assert_memory_equal(out.data, hdr, hdr_len);
    assert_int_equal(dq_mp_unpack(out.data, out.len, &off, 1, &zone, &o, &s), DQ_OK);
    assert_int_equal(off, out.len);
    assert_int_equal(o.type, MSGPACK_OBJECT_ARRAY);
    assert_int_equal(o.via.array.size, n);

    /* the same count as an object: {"0":0,"1":0,...} */
    dq_buf_reset(&json);
    dq_buf_reset(&out);
    dq_buf_putc(&json, '{');
    for (uint32_t i = 0; i < n; i++)
        dq_buf_printf(&json, "%s\"%u\":0", i ? "," : "", (unsigned)i);
    dq_buf_putc(&json, '}');
    assert_int_equal(dq_json_to_mp(&out, json.data, json.len, NULL), DQ_OK);
    off = 0;
    assert_int_equal(dq_mp_unpack(out.data, out.len, &off, 1, &zone, &o, &s), DQ_OK);
    assert_int_equal(off, out.len);
    assert_int_equal(o.type, MSGPACK_OBJECT_MAP);
    assert_int_equal(o.via.map.size, n);
    /* the first key starts right after the smallest header */
    assert_int_equal(n == 0 ? hdr_len : dq_mp_item_offset(out.data, out.len, 0, 1), hdr_len);
    if (n > 0)
        assert_memory_equal(o.via.map.ptr[0].key.via.str.ptr, "0", 1);
    msgpack_zone_destroy(&zone);
    dq_buf_free(&json);
    dq_buf_free(&out);
}

static void
test_container_sizes(void **state)
{
    (void)state;
    check_array_size(0, "\x90", 1);
    check_array_size(15, "\x9f", 1);
    check_array_size(16, "\xdc\x00\x10", 3);
    check_array_size(65535, "\xdc\xff\xff", 3);
    check_array_size(65536, "\xdd\x00\x01\x00\x00", 5);
}

static void
test_reserved_objects(void **state)
{
    struct dq_buf out = DQ_BUF_INIT;
    struct dq_mp_scan s;
    msgpack_zone zone;
    msgpack_object o;
    size_t off = 0;
    (void)state;

    MP_IS("{\"$base64\":\"AQID\"}", "\xc4\x03\x01\x02\x03");
    MP_IS("{\"$base64\":\"\"}", "\xc4\x00");
    MP_IS("{\"$base64\":\"AQI\"}", "\xc4\x02\x01\x02"); /* unpadded */
    MP_IS("{\"$ext\":-1,\"$base64\":\"AAAAAQ==\"}", "\xd6\xff\x00\x00\x00\x01");
    MP_IS("{ \"$base64\" : \"YWJj\" , \"$ext\" : 127 }", "\xc7\x03\x7f"
                                                         "abc");
    MP_IS("{\"$ext\":-128,\"$base64\":\"\"}", "\xc7\x00\x80");
    MP_IS("{\"$str_base64\":\"/w==\"}", "\xa1\xff");
    MP_IS("{\"\\u0024base64\":\"AA==\"}", "\xc4\x01\x00"); /* the key after unescaping */
    MP_IS("{\"$float\":\"inf\"}", "\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00");
    MP_IS("{\"$float\":\"-inf\"}", "\xcb\xff\xf0\x00\x00\x00\x00\x00\x00");
    assert_int_equal(dq_json_to_mp(&out, "{\"$float\":\"nan\"}", 16, NULL), DQ_OK);
    assert_true(msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE));
    assert_int_equal(dq_mp_unpack(out.data, out.len, &off, 1, &zone, &o, &s), DQ_OK);
    assert_int_equal(off, out.len);
    assert_int_equal(o.type, MSGPACK_OBJECT_FLOAT64);
    assert_true(isnan(o.via.f64));
    msgpack_zone_destroy(&zone);
    dq_buf_free(&out);

    /* other shapes are plain maps */
    MP_IS("{\"$base64\":\"AQ==\",\"x\":1}", "\x82\xa7$base64\xa4"
                                            "AQ==\xa1x\x01");
    MP_IS("{\"$ext\":1}", "\x81\xa4$ext\x01");
    MP_IS("{\"$base64\":\"AQ==\",\"$base64\":\"AQ==\"}", "\x82\xa7$base64\xa4"
                                                         "AQ==\xa7$base64\xa4"
                                                         "AQ==");
    MP_IS("{\"$b64\":\"\"}", "\x81\xa4$b64\xa0");
    /* the reserved shapes with bad values are errors */
    fails("{\"$base64\":\"AQ=\"}", "json: \"$base64\" is not valid base64 at line 1 column 12");
    fails("{\"$base64\":\"A Q==\"}", "json: \"$base64\" is not valid base64 at line 1 column 12");
    fails("{\"$base64\":\"AR==\"}", "json: \"$base64\" is not valid base64 at line 1 column 12");
    fails("{\"$base64\":5}", "json: \"$base64\" must be a string at line 1 column 12");
    fails("{\"$base64\":[1]}", "json: \"$base64\" must be a string at line 1 column 12");
    fails("{\"$str_base64\":\"*\"}",
          "json: \"$str_base64\" is not valid base64 at line 1 column 16");
    fails("{\"$ext\":128,\"$base64\":\"\"}",
          "json: \"$ext\" must be an integer -128..127 at line 1 column 9");
    fails("{\"$ext\":1.0,\"$base64\":\"\"}",
          "json: \"$ext\" must be an integer -128..127 at line 1 column 9");
    fails("{\"$ext\":\"1\",\"$base64\":\"\"}",
          "json: \"$ext\" must be an integer -128..127 at line 1 column 9");
    fails("{\"$float\":\"NaN\"}",
          "json: \"$float\" must be \"nan\", \"inf\" or \"-inf\" at line 1 column 11");
}

static void
test_syntax_errors(void **state)
{
    (void)state;
    fails("", "json: premature EOF at line 1 column 1");
    fails("   \n  ", "json: premature EOF at line 2 column 3");
    fails("[1,]", "json: unallowed token at this point in JSON text at line 1 column 4");
    fails("[1 2]", "json: after array element, I expect ',' or ']' at line 1 column 4");
    fails("[1", "json: premature EOF at line 1 column 3");
    fails("{\n  \"a\": tru\n}", "json: invalid string in json text at line 2 column 10");
    fails("[\"\xe6\x97\xa5\xe6\x9c\xac\", x]",
          "json: invalid char in json text at line 1 column 8");
    fails("{\"a\" 1}",
          "json: object key and value must be separated by a colon (':') at line 1 column 6");
    fails("{1:2}", "json: invalid object key (must be a string) at line 1 column 2");
    fails("{\"a\":1,}", "json: invalid object key (must be a string) at line 1 column 8");
    fails("{\"a\":1 \"b\":2}",
          "json: after key and value, inside map, I expect ',' or '}' at line 1 column 9");
    fails("{\"a\"", "json: premature EOF at line 1 column 5");
    fails("{\"a\":1", "json: premature EOF at line 1 column 7");
    fails("1 2", "json: trailing garbage at line 1 column 3");
    fails("{}x", "json: trailing garbage at line 1 column 3");
    fails("01", "json: trailing garbage at line 1 column 2");
    fails("-",
          "json: malformed number, a digit is required after the minus sign at line 1 column 1");
    fails("-x",
          "json: malformed number, a digit is required after the minus sign at line 1 column 1");
    fails("1.",
          "json: malformed number, a digit is required after the decimal point at line 1 column 2");
    fails("1.e5",
          "json: malformed number, a digit is required after the decimal point at line 1 column 2");
    fails("1e+",
          "json: malformed number, a digit is required after the exponent at line 1 column 3");
    fails("+1", "json: invalid char in json text at line 1 column 1");
    fails(".5", "json: invalid char in json text at line 1 column 1");
    fails("[1e400]", "json: $[0]: number 1e400 is too large for a double (limit "
                     "1.7976931348623157e308) at line 1 column 2");
    fails("NaN", "json: invalid char in json text at line 1 column 1");
    fails("nul", "json: invalid string in json text at line 1 column 3");
    fails("'a'", "json: invalid char in json text at line 1 column 1");
    fails("\xef\xbb\xbf{}", "json: invalid char in json text at line 1 column 1");
    fails("[1,\n2,\n\x01]", "json: invalid char in json text at line 3 column 1");
    fails_n("[1]\0", 4, "json: trailing garbage at line 1 column 4");
}

/* What yajl 2.1 lets through and json.c must refuse or keep exact itself. */
static void
test_yajl_gaps(void **state)
{
    (void)state;
    /* yajl decodes a lone high half as '?' and a lone low half as ED B0 80 */
    fails("{\"\\ud800\":1}", "json: lone surrogate \\ud800 at line 1 column 3");
    fails("[\"ok\", \"\\udfff\"]", "json: lone surrogate \\udfff at line 1 column 9");
    fails("{\"$base64\":\"\\udc00\"}", "json: lone surrogate \\udc00 at line 1 column 13");
    fails("\"\\ud800\\ud800\"", "json: lone surrogate \\ud800 at line 1 column 2");
    MP_IS("\"?\\u003f\"", "\xa2??");
    /* yajl checks only the byte pattern: overlong, surrogate and > U+10FFFF pass it */
    fails("\"\xf4\x90\x80\x80\"", "json: invalid UTF-8 byte 0xf4 in string at line 1 column 2");
    fails("{\"\xe0\x80\xaf\":1}", "json: invalid UTF-8 byte 0xe0 in string at line 1 column 3");
    fails("[\"\xc3\xa9\",\n\"\xed\xbf\xbf\"]",
          "json: invalid UTF-8 byte 0xed in string at line 2 column 2");
    /* numbers arrive as text: exact at both ends of 64 bits, also as the last token */
    MP_IS("18446744073709551615", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff");
    MP_IS("[9223372036854775808,-9223372036854775808]",
          "\x92\xcf\x80\x00\x00\x00\x00\x00\x00\x00\xd3\x80\x00\x00\x00\x00\x00\x00\x00");
    MP_IS("  -5", "\xfb");
    fails("1e400", "json: $: number 1e400 is too large for a double (limit "
                   "1.7976931348623157e308) at line 1 column 1");
    fails(" \n -1e999 ", "json: $: number -1e999 is too large for a double (limit "
                         "1.7976931348623157e308) at line 2 column 2");
}

/* Numbers are exact or refused: an integer past 64 bits, or a double that would be inf
 * or 0 while its digits are not, is an error naming the path; nothing is written. */
static void
test_number_limits(void **state)
{
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    fails("{\"n\":18446744073709551616}",
          "json: $.n: integer 18446744073709551616 is outside " RANGE " at line 1 column 6");
    fails("[1,{\"a\":[2,-9223372036854775809]}]",
          "json: $[1].a[1]: integer -9223372036854775809 is outside " RANGE " at line 1 column 12");
    fails("99999999999999999999999999999999",
          "json: $: integer 999999999999999999999... is outside " RANGE " at line 1 column 1");
    fails("{\"a b\":{\"\\u0041\":[0,1e-400]}}",
          "json: $[\"a b\"][\"\\u0041\"][1]: number 1e-400 is too small for a double (it would "
          "be 0; limit 4.9406564584124654e-324) at line 1 column 21");
    /* the reserved {"$ext":T} checks its range after this one */
    fails("{\"$ext\":18446744073709551616,\"$base64\":\"\"}",
          "json: $.$ext: integer 18446744073709551616 is outside " RANGE " at line 1 column 9");
    /* a long key is cut at a character, a deep path keeps its tail */
    fails("{\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
          "\xa9\xc3\xa9"
          "\xc3\xa9\":1e999}",
          "json: "
          "$["
          "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
          "\xa9\xc3\xa9...\"]: "
          "number 1e999 is too large for a double (limit 1.7976931348623157e308) at line 1 "
          "column 18");
    fails("{\"a\":{\"b\":[[[[[[[[[[[[[[[[[[[[[[1e999]]]]]]]]]]]]]]]]]]]]]]}}",
          "json: $(...)[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: number 1e999 "
          "is too large for a double (limit 1.7976931348623157e308) at line 1 column 33");
    /* yajl takes \v and \f for whitespace: what follows them is found, and checked */
    fails("{\v\"\\ud800\":1}", "json: lone surrogate \\ud800 at line 1 column 4");
    fails("[\f1e999]", "json: $[0]: number 1e999 is too large for a double (limit "
                       "1.7976931348623157e308) at line 1 column 3");
    fails("{\v\v\"k\":1e999}", "json: $.k: number 1e999 is too large for a double (limit "
                               "1.7976931348623157e308) at line 1 column 8");
    /* a key's DEL, C1 controls and bidi overrides reach the message as \uXXXX */
    fails("{\"a\xe2\x80\xae\x7f\xc2\x85\":1e999}",
          "json: $[\"a\\u202e\\u007f\\u0085\"]: number 1e999 is too large for a double (limit "
          "1.7976931348623157e308) at line 1 column 9");
    /* and the output is as it was */
    dq_buf_puts(&out, "kept");
    assert_int_equal(dq_json_to_mp(&out, "[18446744073709551616]", 22, &err), DQ_EINVAL);
    assert_int_equal(out.len, 4);
    assert_string_equal(out.data, "kept");
    dq_buf_free(&out);

    /* what stays: the 64-bit ends, rounding, the smallest subnormal, zeros */
    MP_IS("-9223372036854775808", "\xd3\x80\x00\x00\x00\x00\x00\x00\x00");
    MP_IS("0.1", "\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a");
    MP_IS("1.00000000000000000000001", "\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00");
    MP_IS("5e-324", "\xcb\x00\x00\x00\x00\x00\x00\x00\x01");
    MP_IS("0e-999", "\xcb\x00\x00\x00\x00\x00\x00\x00\x00");
    MP_IS("-0.000e999", "\xcb\x80\x00\x00\x00\x00\x00\x00\x00");
    MP_IS("1.7976931348623157e308", "\xcb\x7f\xef\xff\xff\xff\xff\xff\xff");
}

/* 64 arrays around @inner, as text. */
static void
arrays_around(struct dq_buf *json, const char *inner)
{
    dq_buf_reset(json);
    for (int i = 0; i < 64; i++)
        dq_buf_putc(json, '[');
    dq_buf_puts(json, inner);
    for (int i = 0; i < 64; i++)
        dq_buf_putc(json, ']');
}

/*
 * A reserved object stands for a scalar, so it may sit inside 64 containers: that is
 * how dq_mp_to_json() writes a bin 64 levels down (libFuzzer found the round trip
 * broken there; tests/fuzz/corpus/msgpack/crash-bin-at-depth-limit). Anything else one
 * level past the limit is refused at its brace.
 */
static void
test_depth_reserved(void **state)
{
    struct dq_buf json = DQ_BUF_INIT, out = DQ_BUF_INIT, back = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    arrays_around(&json, "{\"$base64\":\"AA==\"}");
    assert_int_equal(dq_json_to_mp(&out, json.data, json.len, &err), DQ_OK);
    assert_int_equal(out.len, 64 + 3);
    assert_memory_equal(out.data + 63, "\x91\xc4\x01\x00", 4);
    assert_int_equal(dq_mp_to_json(&back, out.data, out.len, &err), DQ_OK);
    assert_int_equal(back.len, json.len);
    assert_memory_equal(back.data, json.data, json.len);

    dq_buf_reset(&out);
    arrays_around(&json, "{\"$ext\":1,\"$base64\":\"\"}");
    assert_int_equal(dq_json_to_mp(&out, json.data, json.len, &err), DQ_OK);
    assert_memory_equal(out.data + 64, "\xc7\x00\x01", 3);

    static const char *const refused[] = {
        "{}",
        "{\"a\":1}",
        "{\"$base64\":\"\",\"x\":1}",
        "{\"$base64\":[1]}",
        "{\"$float\":{}}",
        "{\"$base64\":\"\",\"$float\":\"nan\"}",
        "[]",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        arrays_around(&json, refused[i]);
        fails_n(json.data, json.len, "json: nesting deeper than 64 at line 1 column 65");
    }
    /* the values are still checked */
    arrays_around(&json, "{\"$base64\":5}");
    fails_n(json.data, json.len, "json: \"$base64\" must be a string at line 1 column 76");
    dq_buf_free(&json);
    dq_buf_free(&out);
    dq_buf_free(&back);
}

static void
test_depth(void **state)
{
    struct dq_buf json = DQ_BUF_INIT, out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    for (int i = 0; i < 64; i++)
        dq_buf_putc(&json, '[');
    for (int i = 0; i < 64; i++)
        dq_buf_putc(&json, ']');
    assert_int_equal(dq_json_to_mp(&out, json.data, json.len, &err), DQ_OK);
    assert_int_equal(out.len, 64);
    assert_int_equal((unsigned char)out.data[63], 0x90);

    dq_buf_reset(&json);
    for (int i = 0; i < 65; i++)
        dq_buf_putc(&json, '[');
    for (int i = 0; i < 65; i++)
        dq_buf_putc(&json, ']');
    fails_n(json.data, json.len, "json: nesting deeper than 64 at line 1 column 65");

    dq_buf_reset(&json);
    for (int i = 0; i < 10000; i++)
        dq_buf_putc(&json, '[');
    fails_n(json.data, json.len, "json: nesting deeper than 64 at line 1 column 65");

    dq_buf_reset(&json);
    for (int i = 0; i < 10000; i++)
        dq_buf_puts(&json, "{\"a\":");
    fails_n(json.data, json.len, "json: nesting deeper than 64 at line 1 column 321");
    dq_buf_free(&json);
    dq_buf_free(&out);
}

/* JSON → msgpack → JSON gives back the (compact, canonical) text. */
static void
test_round_trip_json(void **state)
{
    static const char *docs[] = {
        "null",
        "true",
        "false",
        "[]",
        "{}",
        "0",
        "-1",
        "18446744073709551615",
        "-9223372036854775808",
        "1.5",
        "1.0",
        "-0.0",
        "0.1",
        "1e+300",
        "1.7976931348623157e+308",
        "\"\"",
        "\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\"",
        "\"\\u001b[2J\\n\\t\\\"\\\\\"",
        "\"\\u202e\\u009b\\u2028\\u007f\\u0000\"",
        "{\"a\":[1,2,{\"b\":null}],\"c\":\"d\"}",
        "{\"k\":1,\"k\":2}",
        "[{\"a\":{}},[[[]]],[-32,-33,127,128,65536]]",
        "{\"$base64\":\"AQID\"}",
        "{\"$base64\":\"\"}",
        "{\"$ext\":5,\"$base64\":\"YWI=\"}",
        "{\"$ext\":-128,\"$base64\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}",
        "{\"$str_base64\":\"/w==\"}",
        "{\"$float\":\"nan\"}",
        "{\"$float\":\"inf\"}",
        "{\"$float\":\"-inf\"}",
        "{\"payload\":{\"$base64\":\"AA==\"},\"list\":[{\"$float\":\"nan\"}]}",
    };
    struct dq_buf mp = DQ_BUF_INIT, text = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        dq_buf_reset(&mp);
        dq_buf_reset(&text);
        if (dq_json_to_mp(&mp, docs[i], strlen(docs[i]), &err) != DQ_OK)
            fail_msg("%s: %s", docs[i], err.msg);
        if (dq_mp_to_json(&text, mp.data, mp.len, &err) != DQ_OK)
            fail_msg("%s: %s", docs[i], err.msg);
        assert_string_equal(text.data, docs[i]);
    }

    /* whitespace and escapes normalise */
    dq_buf_reset(&mp);
    dq_buf_reset(&text);
    const char *loose = " { \"a\" : [ 1 , 2.50 ] ,\n\"\\u0062\" : \"\\u00e9\\/\" } ";
    assert_int_equal(dq_json_to_mp(&mp, loose, strlen(loose), &err), DQ_OK);
    assert_int_equal(dq_mp_to_json(&text, mp.data, mp.len, &err), DQ_OK);
    assert_string_equal(text.data, "{\"a\":[1,2.5],\"b\":\"\xc3\xa9/\"}");
    dq_buf_free(&mp);
    dq_buf_free(&text);
}

/* msgpack → JSON → msgpack gives back the same bytes (for smallest encodings). */
static void
test_round_trip_mp(void **state)
{
    struct dq_buf mp = DQ_BUF_INIT, text = DQ_BUF_INIT, back = DQ_BUF_INIT;
    unsigned char blob[300];
    dq_err err = {0};
    (void)state;

    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (unsigned char)(i * 7);
    dq_mp_put_map(&mp, 5);
    dq_mp_put_str(&mp, "ints", 4);
    dq_mp_put_array(&mp, 12);
    dq_mp_put_uint(&mp, 0);
    dq_mp_put_uint(&mp, 127);
    dq_mp_put_uint(&mp, 128);
    dq_mp_put_uint(&mp, 65535);
    dq_mp_put_uint(&mp, 65536);
    dq_mp_put_uint(&mp, UINT64_MAX);
    dq_mp_put_int(&mp, -32);
    dq_mp_put_int(&mp, -33);
    dq_mp_put_int(&mp, INT16_MIN);
    dq_mp_put_int(&mp, INT32_MIN);
    dq_mp_put_int(&mp, INT64_MIN);
    dq_mp_put_double(&mp, 3.141592653589793);
    dq_mp_put_str(&mp, "strs", 4);
    dq_mp_put_array(&mp, 5);
    dq_mp_put_str(&mp, blob, 0);
    dq_mp_put_str(&mp, "\xff\x00\x1b", 3); /* not UTF-8: $str_base64 */
    dq_mp_put_str(&mp, "\x1b]52;c;eA==\x07", 12);
    dq_mp_put_str(&mp, "0123456789012345678901234567890123456789", 40);
    dq_mp_put_nil(&mp);
    dq_mp_put_str(&mp, "bins", 4);
    dq_mp_put_array(&mp, 6);
    dq_mp_put_bin(&mp, blob, 0);
    dq_mp_put_bin(&mp, blob, 300);
    dq_mp_put_ext(&mp, 1, blob, 1);
    dq_mp_put_ext(&mp, -5, blob, 16);
    dq_mp_put_ext(&mp, 9, blob, 17);
    dq_mp_put_ext(&mp, 9, blob, 300);
    dq_mp_put_str(&mp, "floats", 6);
    dq_mp_put_array(&mp, 5);
    dq_mp_put_double(&mp, NAN);
    dq_mp_put_double(&mp, -INFINITY);
    dq_mp_put_double(&mp, 0.0);
    dq_mp_put_double(&mp, 1e-310);
    dq_mp_put_double(&mp, 2.0);
    dq_mp_put_str(&mp, "", 0);
    dq_mp_put_map(&mp, 0);

    assert_int_equal(dq_mp_to_json(&text, mp.data, mp.len, &err), DQ_OK);
    if (dq_json_to_mp(&back, text.data, text.len, &err) != DQ_OK)
        fail_msg("%s: %s", text.data, err.msg);
    assert_int_equal(back.len, mp.len);
    assert_memory_equal(back.data, mp.data, mp.len);
    dq_buf_free(&mp);
    dq_buf_free(&text);
    dq_buf_free(&back);
}

static void
test_appends_and_rollback(void **state)
{
    struct dq_buf out = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    dq_buf_puts(&out, "abc");
    assert_int_equal(dq_json_to_mp(&out, "[1,2,", 5, &err), DQ_EINVAL);
    assert_int_equal(out.len, 3);
    assert_string_equal(out.data, "abc");
    /* a failure found only in the second pass rolls back too */
    assert_int_equal(dq_json_to_mp(&out, "[1,{\"$base64\":\"!\"}]", 19, &err), DQ_EINVAL);
    assert_int_equal(out.len, 3);
    assert_int_equal(dq_json_to_mp(&out, "[1]", 3, NULL), DQ_OK);
    assert_int_equal(out.len, 5);
    assert_memory_equal(out.data, "abc\x91\x01", 5);
    assert_int_equal(dq_json_to_mp(&out, "{", 1, NULL), DQ_EINVAL);
    assert_int_equal(out.len, 5);
    dq_buf_free(&out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),         cmocka_unit_test(test_strings),
        cmocka_unit_test(test_string_errors),   cmocka_unit_test(test_containers),
        cmocka_unit_test(test_container_sizes), cmocka_unit_test(test_reserved_objects),
        cmocka_unit_test(test_syntax_errors),   cmocka_unit_test(test_yajl_gaps),
        cmocka_unit_test(test_number_limits),   cmocka_unit_test(test_depth),
        cmocka_unit_test(test_depth_reserved),  cmocka_unit_test(test_round_trip_json),
        cmocka_unit_test(test_round_trip_mp),   cmocka_unit_test(test_appends_and_rollback),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/json", tests, NULL, NULL);
}
