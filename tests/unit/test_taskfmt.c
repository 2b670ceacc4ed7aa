/* SPDX-License-Identifier: MIT */
/*
 * test_taskfmt.c: the one home of a task's text (fmt/taskfmt.c), as `delayq show`,
 * `ls --json` and the inspector's details and clipboard use it. Pure; no Redis.
 */
#include "harness/check.h"

#include <stdlib.h>
#include <string.h>

#include "fmt/taskfmt.h"

static const int64_t now = 1795942260000;

static void
assert_has(const struct dq_buf *b, const char *needle)
{
    if (b->data == NULL || strstr(b->data, needle) == NULL)
        fail_msg("missing \"%s\" in:\n%s", needle, b->data ? b->data : "(empty)");
}

/* A failed task whose error and trace carry terminal escapes; payload {"a":1}. */
static void
make_failed(dq_task *t, unsigned char *payload)
{
    static const unsigned char map[] = {0x81, 0xa1, 'a', 0x01};
    static char id[] = "inv-7", reason[] = "error", error[] = "card declined \x1b[2J",
                trace[] = "panic\n\tat main.go:57\x07", by[] = "w@host";

    memset(t, 0, sizeof *t);
    memcpy(payload, map, sizeof map);
    t->id = id;
    t->custom_id = true;
    t->seq = 7;
    t->attempt = 3;
    t->max_attempts = 5;
    t->enqueued_ms = now - 60000;
    t->due_ms = now - 30000;
    t->deadline_ms = -1;
    t->payload = payload;
    t->payload_len = sizeof map;
    t->state = DQ_STATE_FAILED;
    t->lease_ms = t->claimed_ms = -1;
    t->failed_ms = now - 2000;
    t->reason = reason;
    t->error = error;
    t->trace = trace;
    t->failed_by = by;
}

static void
details_name_every_field_and_escape(void **state)
{
    unsigned char payload[8];
    dq_task t;
    struct dq_buf b = DQ_BUF_INIT;

    make_failed(&t, payload);
    dq_fmt_task_details(&b, &t, now);
    assert_false(b.failed);
    assert_has(&b, "id            inv-7\n");
    assert_has(&b, "state         failed\n");
    assert_has(&b, "attempts      3 made, at most 5\n");
    assert_has(&b, "deadline      none\n");
    assert_has(&b, "(2s ago)");
    assert_has(&b, "payload       4 bytes\n  a: 1\n");
    assert_has(&b, "error\n  card declined \\e[2J\n");
    assert_has(&b, "stack trace\n  panic\n  \tat main.go:57\\x07\n");
    assert_null(memchr(b.data, 0x1b, b.len)); /* nothing raw reaches a terminal */
    assert_null(memchr(b.data, 0x07, b.len));
    dq_buf_free(&b);
}

static void
json_is_one_line_and_escaped(void **state)
{
    unsigned char payload[8];
    dq_task t;
    struct dq_buf b = DQ_BUF_INIT;

    make_failed(&t, payload);
    dq_fmt_task_json(&b, &t, now);
    dq_buf_putc(&b, '\0');
    assert_has(&b, "{\"id\":\"inv-7\",\"state\":\"failed\"");
    assert_has(&b, "\"payload\":{\"a\":1}");
    assert_has(&b, "\"error\":\"card declined \\u001b[2J\"");
    assert_null(strchr(b.data, '\n'));
    dq_buf_free(&b);
}

static void
copy_prefers_the_trace_only_when_asked(void **state)
{
    unsigned char payload[8];
    dq_task t;
    struct dq_buf b = DQ_BUF_INIT;

    make_failed(&t, payload);
    dq_fmt_task_copy(&b, &t, true);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "panic\n\tat main.go:57\x07");
    dq_buf_reset(&b);
    dq_fmt_task_copy(&b, &t, false);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "{\"a\":1}");
    dq_buf_reset(&b);
    t.undecodable = true; /* raw bytes have no JSON form: nothing to copy */
    dq_fmt_task_copy(&b, &t, false);
    assert_int_equal(b.len, 0);
    dq_buf_free(&b);
}

static void
payload_that_is_not_msgpack_becomes_raw_base64(void **state)
{
    static const unsigned char junk[] = {0xc1, 0xff};
    struct dq_buf b = DQ_BUF_INIT;

    dq_fmt_payload_json(&b, junk, sizeof junk);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "{\"$raw_base64\":\"wf8=\"}");
    dq_buf_reset(&b);
    dq_fmt_json_str(&b, "a\xff\n", 3);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "\"a\\u00ff\\n\"");
    dq_buf_free(&b);
}

static void
relative_times(void **state)
{
    char buf[96];

    dq_fmt_time_rel(buf, sizeof buf, -1, now);
    assert_string_equal(buf, "-");
    dq_fmt_time_rel(buf, sizeof buf, now + 90000, now);
    assert_non_null(strstr(buf, "(in 1m30s)"));
    dq_fmt_time_rel(buf, sizeof buf, now - 2000, now);
    assert_non_null(strstr(buf, "(2s ago)"));
}

/* Export records are lossless: text that is not UTF-8 as $str_base64, a payload as JSON
 * only when it reads back to its bytes, and nothing that depends on the moment. */
static void
export_record_is_lossless(void **state)
{
    unsigned char payload[8];
    static char bad_utf8[] = "w\xff\xfe";
    static unsigned char str8[] = {0xd9, 0x01, 0x61}; /* "a" not in its shortest form */
    dq_task t;
    struct dq_buf b = DQ_BUF_INIT;

    (void)state;
    make_failed(&t, payload);
    t.failed_by = bad_utf8;
    dq_fmt_task_export(&b, &t, "jobs");
    assert_false(b.failed);
    assert_has(&b, "{\"id\":\"inv-7\",\"queue\":\"jobs\",\"state\":\"failed\"");
    assert_has(&b, ",\"payload\":{\"a\":1},");
    assert_has(&b, ",\"failed_by\":{\"$str_base64\":\"d//+\"}}");
    assert_has(&b, ",\"error\":\"card declined \\u001b[2J\"");
    assert_null(memchr(b.data, '\n', b.len));

    dq_buf_reset(&b);
    t.payload = str8;
    t.payload_len = sizeof str8;
    t.state = DQ_STATE_INFLIGHT;
    t.lease_ms = now - 1; /* expired, but export does not say so */
    dq_fmt_task_export(&b, &t, "jobs");
    assert_has(&b, ",\"payload_b64\":\"2QFh\",");
    assert_null(strstr(b.data, "lease_expired"));
    assert_null(strstr(b.data, "\"payload\":"));
    dq_buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(details_name_every_field_and_escape),
        cmocka_unit_test(json_is_one_line_and_escaped),
        cmocka_unit_test(copy_prefers_the_trace_only_when_asked),
        cmocka_unit_test(payload_that_is_not_msgpack_becomes_raw_base64),
        cmocka_unit_test(relative_times),
        cmocka_unit_test(export_record_is_lossless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
