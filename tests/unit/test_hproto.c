/* SPDX-License-Identifier: MIT */
/*
 * test_hproto.c: the line protocol of `delayq work --persistent` (src/cli/hproto.c):
 * the task line byte for byte, the id a handler echoes back, and the result line
 * parser on good lines, lines a handler may write by mistake and hostile ones.
 */
#include "harness/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/hproto.h"

/* Parses @line (NUL-terminated) and expects it accepted. */
static void
parse_ok(const char *line, struct hproto_result *r)
{
    char why[300] = "";

    if (hproto_parse_result(line, strlen(line), r, why, sizeof why) != 0)
        fail_msg("refused %s: %s", line, why);
}

/* Parses @line and expects it refused with a reason containing @want. */
static void
parse_refused(const char *line, size_t len, const char *want)
{
    struct hproto_result r;
    char why[300] = "";

    if (hproto_parse_result(line, len, &r, why, sizeof why) == 0)
        fail_msg("accepted %.*s", (int)len, line);
    if (strstr(why, want) == NULL)
        fail_msg("refused %.*s with \"%s\", expected \"%s\"", (int)len, line, why, want);
    assert_null(r.id);
    assert_null(r.error);
    assert_null(r.trace);
}

#define REFUSED(line, want) parse_refused(line, strlen(line), want)

static void
results_accepted(void **state)
{
    struct hproto_result r;

    (void)state;
    parse_ok("{\"id\":\"7\",\"result\":\"done\"}", &r);
    assert_int_equal(r.verdict, HPROTO_DONE);
    assert_int_equal(r.id_len, 1);
    assert_string_equal(r.id, "7");
    assert_null(r.error);
    assert_null(r.trace);
    hproto_result_free(&r);

    /* any member order, whitespace, nulls, and members of our own ignored */
    parse_ok(" { \"trace\" : null, \"result\":\"retry\", \"mine\": {\"a\":[1,2.5,{\"b\":null}],"
             "\"c\":\"\\u00e9\"}, \"error\":\"upstream 503\", \"n\": -12345678901, "
             "\"id\":\"inv-42\", \"f\": true, \"bin\": {\"$base64\":\"AAE=\"} }\r",
             &r);
    assert_int_equal(r.verdict, HPROTO_RETRY);
    assert_string_equal(r.id, "inv-42");
    assert_string_equal(r.error, "upstream 503");
    assert_null(r.trace);
    hproto_result_free(&r);

    /* escapes decode; a trace keeps its newlines */
    parse_ok("{\"id\":\"a\\\"b\",\"result\":\"fail\",\"error\":\"caf\\u00e9 \\ud83d\\ude00\","
             "\"trace\":\"Traceback:\\n  line 3\\n\"}",
             &r);
    assert_int_equal(r.verdict, HPROTO_FAIL);
    assert_string_equal(r.id, "a\"b");
    assert_string_equal(r.error, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    assert_string_equal(r.trace, "Traceback:\n  line 3\n");
    hproto_result_free(&r);

    /* an id is compared as bytes, NUL included; error is cut at a NUL */
    parse_ok("{\"id\":\"x\\u0000y\",\"result\":\"fail\",\"error\":\"a\\u0000b\"}", &r);
    assert_int_equal(r.id_len, 3);
    assert_memory_equal(r.id, "x\0y", 3);
    assert_string_equal(r.error, "a");
    hproto_result_free(&r);
    hproto_result_free(&r); /* twice is fine: it is zeroed */
}

static void
garbage_refused(void **state)
{
    (void)state;
    REFUSED("", "not JSON (json: ");
    REFUSED("done", "not JSON (json: ");
    REFUSED("Traceback (most recent call last):", "not JSON");
    REFUSED("{\"id\":\"1\",\"result\":\"done\"} {}", "not JSON");
    REFUSED("{\"id\":\"1\",\"result\":\"done\"", "not JSON");
    REFUSED("{\"id\":\"1\",\"result\":\"done\",}", "not JSON");
    REFUSED("[\"1\",\"done\"]", "not a JSON object");
    REFUSED("\"done\"", "not a JSON object");
    REFUSED("null", "not a JSON object");
    REFUSED("{\"result\":\"done\"}", "no \"id\" member");
    REFUSED("{\"id\":\"1\"}", "no \"result\" member");
    REFUSED("{}", "no \"id\" member");
    REFUSED("{\"id\":1,\"result\":\"done\"}", "\"id\" is not a string");
    REFUSED("{\"id\":\"1\",\"result\":true}", "\"result\" is not a string");
    REFUSED("{\"id\":\"1\",\"result\":\"ok\"}", "unknown result \"ok\"");
    REFUSED("{\"id\":\"1\",\"result\":\"DONE\"}", "unknown result \"DONE\"");
    REFUSED("{\"id\":\"1\",\"result\":\"done \"}", "unknown result");
    REFUSED("{\"id\":\"1\",\"result\":\"\\u001b[2Jdone\"}", "unknown result \"?[2Jdone\"");
    REFUSED("{\"id\":\"1\",\"result\":\"done\",\"result\":\"fail\"}", "\"result\" given twice");
    REFUSED("{\"id\":\"1\",\"id\":\"2\",\"result\":\"done\"}", "\"id\" given twice");
    REFUSED("{\"id\":\"1\",\"result\":\"fail\",\"error\":42}", "\"error\" is not a string or null");
    REFUSED("{\"id\":\"1\",\"result\":\"fail\",\"trace\":[\"a\"]}",
            "\"trace\" is not a string or null");
    /* a NUL byte and invalid UTF-8 in the raw line are not JSON */
    static const char nul[] = "{\"id\":\"1\",\0\"result\":\"done\"}";
    parse_refused(nul, sizeof nul - 1, "not JSON");
    REFUSED("{\"id\":\"\xff\",\"result\":\"done\"}", "not JSON");
}

static void
nesting_and_size_limits(void **state)
{
    struct hproto_result r;
    char why[300];
    size_t depth = 100000;

    (void)state;
    /* a deep member of our own is refused by the JSON parser's depth limit, not a crash */
    char *deep = malloc(depth * 2 + 64);
    size_t n = (size_t)sprintf(deep, "{\"id\":\"1\",\"result\":\"done\",\"x\":");
    memset(deep + n, '[', depth);
    memset(deep + n + depth, ']', depth);
    deep[n + 2 * depth] = '}';
    parse_refused(deep, n + 2 * depth + 1, "not JSON");
    free(deep);

    /* just inside the nesting limit still parses */
    char ok[256];
    n = (size_t)sprintf(ok, "{\"id\":\"1\",\"result\":\"done\",\"x\":");
    for (int i = 0; i < 60; i++)
        ok[n++] = '[';
    for (int i = 0; i < 60; i++)
        ok[n++] = ']';
    ok[n++] = '}';
    ok[n] = '\0';
    parse_ok(ok, &r);
    hproto_result_free(&r);

    /* over the line limit: refused by its length, naming the limit */
    size_t big = HPROTO_LINE_MAX + 1;
    char *line = malloc(big);
    memset(line, ' ', big);
    assert_int_equal(hproto_parse_result(line, big, &r, why, sizeof why), -1);
    assert_non_null(strstr(why, "over the limit of 1048576 bytes"));
    /* a long error inside the limit is fine */
    n = (size_t)sprintf(line, "{\"id\":\"1\",\"result\":\"fail\",\"error\":\"");
    memset(line + n, 'e', HPROTO_LINE_MAX - n - 2);
    memcpy(line + HPROTO_LINE_MAX - 2, "\"}", 2);
    assert_int_equal(hproto_parse_result(line, HPROTO_LINE_MAX, &r, why, sizeof why), 0);
    assert_int_equal(strlen(r.error), HPROTO_LINE_MAX - n - 2);
    hproto_result_free(&r);
    free(line);
    /* a tiny reason buffer is still NUL-terminated */
    assert_int_equal(hproto_parse_result("x", 1, &r, why, 8), -1);
    assert_int_equal(strlen(why), 7);
}

static void
task_line(void **state)
{
    static unsigned char map[] = {0x82, 0xa2, 't', 'o', 0xa3, 'a', '@', 'b', 0xa1, 'n', 0x01};
    static unsigned char raw[] = {0xc1, 0x00};
    static char id[] = "inv\"42\n";
    dq_task t = {.id = id,
                 .attempt = 2,
                 .due_ms = 1795942260000,
                 .enqueued_ms = 1795942200000,
                 .payload = map,
                 .payload_len = sizeof map};
    struct dq_buf b = DQ_BUF_INIT;

    (void)state;
    hproto_request(&b, &t, "emails");
    assert_string_equal(b.data, "{\"id\":\"inv\\\"42\\n\",\"queue\":\"emails\",\"attempt\":3,"
                                "\"due_ms\":1795942260000,\"enqueued_ms\":1795942200000,"
                                "\"payload\":{\"to\":\"a@b\",\"n\":1}}\n");
    /* one line: the only newline is the last byte */
    assert_ptr_equal(strchr(b.data, '\n'), b.data + b.len - 1);
    dq_buf_free(&b);

    /* bytes that are not msgpack, as without --persistent */
    t.payload = raw;
    t.payload_len = sizeof raw;
    hproto_request(&b, &t, "q");
    assert_non_null(strstr(b.data, ",\"payload\":{\"$raw_base64\":\"wQA=\"}}\n"));
    dq_buf_free(&b);
}

static void
wire_id(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;

    (void)state;
    hproto_wire_id(&b, "inv-42");
    assert_int_equal(b.len, 6);
    assert_memory_equal(b.data, "inv-42", 6);
    dq_buf_free(&b);
    /* invalid UTF-8 goes out as \u00ff, so a handler echoes U+00FF back */
    hproto_wire_id(&b, "a\xff");
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "a\xc3\xbf", 3);
    dq_buf_free(&b);
    hproto_wire_id(&b, "tab\there \"q\" \xe2\x80\xa8");
    assert_string_equal(b.data, "tab\there \"q\" \xe2\x80\xa8");
    dq_buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(results_accepted),
        cmocka_unit_test(garbage_refused),
        cmocka_unit_test(nesting_and_size_limits),
        cmocka_unit_test(task_line),
        cmocka_unit_test(wire_id),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/hproto", tests, NULL, NULL);
}
