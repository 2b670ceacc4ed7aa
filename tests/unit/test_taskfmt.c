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
    /* a bidi override would reorder the line on a terminal: \u202e, the same code point */
    struct dq_buf bidi = DQ_BUF_INIT;
    dq_fmt_json_str(&bidi,
                    "a\xe2\x80\xae"
                    "b\xe2\x81\xa6",
                    8);
    dq_buf_putc(&bidi, '\0');
    assert_string_equal(bidi.data, "\"a\\u202eb\\u2066\"");
    dq_buf_free(&bidi);
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

/* Strings with NUL bytes (a foreign write): every byte after the NUL is kept, as \u0000
 * in JSON (export and --json) and as \x00 for people, by the lengths dq_task carries. */
static void
nul_bytes_are_kept(void **state)
{
    unsigned char payload[8];
    dq_task t;
    struct dq_buf b = DQ_BUF_INIT;
    static char id[] = "ida\0b", err[] = "erra\0hidden", trace[] = "first\0second\nthird",
                by[] = "whoa\0evil";
    (void)state;

    make_failed(&t, payload);
    t.id = id;
    t.id_len = sizeof id - 1;
    t.error = err;
    t.error_len = sizeof err - 1;
    t.trace = trace;
    t.trace_len = sizeof trace - 1;
    t.failed_by = by;
    t.failed_by_len = sizeof by - 1;
    dq_fmt_task_export(&b, &t, "q");
    assert_false(b.failed);
    assert_has(&b, "{\"id\":\"ida\\u0000b\",\"queue\":\"q\"");
    assert_has(&b, "\"error\":\"erra\\u0000hidden\"");
    assert_has(&b, "\"trace\":\"first\\u0000second\\nthird\"");
    assert_has(&b, "\"failed_by\":\"whoa\\u0000evil\"");
    dq_buf_reset(&b);
    dq_fmt_task_details(&b, &t, now);
    assert_has(&b, "id            ida\\x00b\n");
    assert_has(&b, "failed by     whoa\\x00evil\n");
    assert_has(&b, "  erra\\x00hidden\n");
    assert_has(&b, "  first\\x00second\n  third\n");
    dq_buf_free(&b);
}

static void
history_in_json_and_details(void **state)
{
    unsigned char payload[8];
    dq_task t;
    struct dq_buf b = DQ_BUF_INIT;
    static char w1[] = "w1", w2[] = "w2", retry[] = "retry", lost[] = "lease expired",
                e1[] = "503 \x1b[2J", e2[] = "";
    dq_attempt h[2] = {
        {1, now - 50000, 1200, w1, retry, e1, 0, 0, 0},
        {2, now - 3000, 640, w2, lost, e2, 0, 0, 0},
    };

    make_failed(&t, payload);
    dq_fmt_task_json(&b, &t, now);
    assert_null(strstr(b.data, "\"history\"")); /* none: no key at all */
    dq_buf_reset(&b);
    t.history = h;
    t.nhistory = 2;
    dq_fmt_task_json(&b, &t, now);
    dq_buf_putc(&b, '\0');
    assert_has(&b, ",\"history\":[{\"attempt\":1,\"started_ms\":1795942210000,"
                   "\"duration_ms\":1200,\"worker\":\"w1\",\"outcome\":\"retry\","
                   "\"error\":\"503 \\u001b[2J\"},{\"attempt\":2,");
    assert_has(&b, "\"outcome\":\"lease expired\",\"error\":\"\"}]}");
    dq_buf_reset(&b);
    dq_fmt_task_details(&b, &t, now);
    dq_buf_putc(&b, '\0');
    assert_has(&b, "history       2 attempts, oldest first (at most 5 kept)\n"
                   "  #1   2026-11-29T08:50:10.000Z (50s ago)  retry after 1.2s, w1\n"
                   "       503 \\e[2J\n"
                   "  #2   2026-11-29T08:50:57.000Z (3s ago)  lease expired after 640ms, w2\n"
                   "       (no message)\n");
    assert_null(strstr(b.data, "\x1b"));
    dq_buf_free(&b);
}

/* fix and requeue */
static void
payload_edit_is_pretty_json_or_refused(void **state)
{
    unsigned char payload[8];
    dq_task t;
    dq_err err = {0};
    struct dq_buf b = DQ_BUF_INIT;
    /* {"a":[1,{}],"b":"x"} */
    static unsigned char nested[] = {0x82, 0xa1, 'a', 0x92, 0x01, 0x80, 0xa1, 'b', 0xa1, 'x'};
    static unsigned char wide[] = {0xcc, 0x05};    /* 5 as a uint8: JSON reads back 05 */
    static unsigned char raw[] = {'h', 'i', '\n'}; /* not msgpack */

    make_failed(&t, payload);
    t.payload = nested;
    t.payload_len = sizeof nested;
    assert_int_equal(dq_fmt_payload_edit(&b, &t, &err), DQ_OK);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"x\"\n}\n");
    dq_buf_reset(&b);
    t.payload = wide;
    t.payload_len = sizeof wide;
    assert_int_equal(dq_fmt_payload_edit(&b, &t, &err), DQ_EINVAL);
    assert_non_null(strstr(err.msg, "JSON cannot show faithfully"));
    assert_int_equal(b.len, 0);
    t.payload = raw;
    t.payload_len = sizeof raw;
    assert_int_equal(dq_fmt_payload_edit(&b, &t, &err), DQ_EINVAL);
    assert_non_null(strstr(err.msg, "3 bytes that are not msgpack"));
    t.undecodable = true;
    assert_int_equal(dq_fmt_payload_edit(&b, &t, &err), DQ_EINVAL);
    dq_buf_free(&b);
}

static void
payload_change_is_a_short_diff(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    /* {"n":1,"s":"a"} -> {"n":2,"s":"a"} */
    static const unsigned char a[] = {0x82, 0xa1, 'n', 0x01, 0xa1, 's', 0xa1, 'a'};
    static const unsigned char c[] = {0x82, 0xa1, 'n', 0x02, 0xa1, 's', 0xa1, 'a'};
    static const unsigned char big[] = {0x94, 1, 2, 3, 4};

    dq_fmt_payload_change(&b, a, sizeof a, c, sizeof c, 10);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "payload 8 -> 8 bytes\n-   \"n\": 1,\n+   \"n\": 2,\n");
    dq_buf_reset(&b);
    dq_fmt_payload_change(&b, a, sizeof a, a, sizeof a, 10);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "payload 8 -> 8 bytes\n  (no change)\n");
    dq_buf_reset(&b);
    dq_fmt_payload_change(&b, a, sizeof a, big, sizeof big, 2);
    dq_buf_putc(&b, '\0');
    assert_has(&b, "payload 8 -> 5 bytes\n- {\n-   \"n\": 1,\n- ... 2 more lines\n");
    assert_has(&b, "+ [\n+   1,\n+ ... 4 more lines\n");
    dq_buf_free(&b);
}

/* Audit details for people: durations and the times after until/since; other numbers,
 * ids and a number inside a word stay as they are. */
static void
audit_detail_reads_as_times(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_fmt_audit_detail(&b, "failed until 1795942200000; delay=0ms spread=30000ms", now);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data,
                        "failed until 2026-11-29T08:50:00.000Z (1m00s ago); delay=0s spread=30s");
    dq_buf_reset(&b);
    dq_fmt_audit_detail(&b, "for 180000ms until 1795942440000: ux 12ms2 x99ms id 1795942440000",
                        now);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "for 3m00s until 2026-11-29T08:54:00.000Z (in 3m00s): ux 12ms2 "
                                "x99ms id 1795942440000");
    dq_buf_reset(&b);
    dq_fmt_audit_detail(&b, "remind-42 due 1795942440000", now);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data, "remind-42 due 2026-11-29T08:54:00.000Z (in 3m00s)");
    dq_buf_reset(&b);
    /* no server time: the time alone; a number too large for a time is kept */
    dq_fmt_audit_detail(&b, "paused by bob since 1795942200000 until 99999999999999999999", -1);
    dq_buf_putc(&b, '\0');
    assert_string_equal(b.data,
                        "paused by bob since 2026-11-29T08:50:00.000Z until 99999999999999999999");
    dq_buf_free(&b);
}

/* One rule for LATE in `schedule ls` and the inspector: a missed firing, or a second or
 * more after its time. */
static void
schedule_late_rule(void **state)
{
    dq_schedule s = {0};

    assert_false(dq_fmt_schedule_late(&s));
    s.late_ms = 999;
    assert_false(dq_fmt_schedule_late(&s));
    s.late_ms = 1000;
    assert_true(dq_fmt_schedule_late(&s));
    s.late_ms = 0;
    s.missed = 1;
    assert_true(dq_fmt_schedule_late(&s));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(details_name_every_field_and_escape),
        cmocka_unit_test(nul_bytes_are_kept),
        cmocka_unit_test(json_is_one_line_and_escaped),
        cmocka_unit_test(copy_prefers_the_trace_only_when_asked),
        cmocka_unit_test(payload_that_is_not_msgpack_becomes_raw_base64),
        cmocka_unit_test(relative_times),
        cmocka_unit_test(export_record_is_lossless),
        cmocka_unit_test(history_in_json_and_details),
        cmocka_unit_test(payload_edit_is_pretty_json_or_refused),
        cmocka_unit_test(payload_change_is_a_short_diff),
        cmocka_unit_test(audit_detail_reads_as_times),
        cmocka_unit_test(schedule_late_rule),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
