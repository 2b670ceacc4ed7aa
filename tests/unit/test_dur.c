/* SPDX-License-Identifier: MIT */
/*
 * test_dur.c: durations and RFC 3339 times (src/lib/dur.c). Pure: no server. Every
 * error path is checked against its whole message, so the field, the value and the
 * limit it names are pinned down.
 */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include "delayq.h"
#include "lib/dur.h"

#define HINT      "(use 250ms, 30s, 5m, 2h, 7d)"
#define TIME_HINT "(use epoch milliseconds or RFC 3339 such as 2026-11-29T08:42:38Z)"

static void
dur_ok(const char *s, int64_t want)
{
    dq_err err = {0};
    int64_t ms = -1;

    int rc = dq_dur_parse(s, "--delay", &ms, &err);
    if (rc != DQ_OK)
        fail_msg("\"%s\": unexpected error: %s", s, err.msg);
    assert_int_equal(err.code, 0);
    if (ms != want)
        fail_msg("\"%s\": got %lld, want %lld", s, (long long)ms, (long long)want);
}

static void
dur_bad(const char *s, const char *want)
{
    dq_err err = {0};
    int64_t ms = -1;

    assert_int_equal(dq_dur_parse(s, "--delay", &ms, &err), DQ_EINVAL);
    assert_int_equal(err.code, DQ_EINVAL);
    assert_int_equal(ms, 0);
    assert_string_equal(err.msg, want);
}

static void
time_ok(const char *s, int64_t want)
{
    dq_err err = {0};
    int64_t ms = -1;

    int rc = dq_time_parse(s, "--at", &ms, &err);
    if (rc != DQ_OK)
        fail_msg("\"%s\": unexpected error: %s", s, err.msg);
    if (ms != want)
        fail_msg("\"%s\": got %lld, want %lld", s, (long long)ms, (long long)want);
}

static void
time_bad(const char *s, const char *want)
{
    dq_err err = {0};
    int64_t ms = -1;

    assert_int_equal(dq_time_parse(s, "--at", &ms, &err), DQ_EINVAL);
    assert_int_equal(err.code, DQ_EINVAL);
    assert_int_equal(ms, 0);
    assert_string_equal(err.msg, want);
}

static void
dur_fmt_is(int64_t ms, const char *want)
{
    char buf[DQ_DUR_BUFSZ];
    size_t n = dq_dur_format(buf, sizeof buf, ms);

    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void
time_fmt_is(int64_t ms, const char *want)
{
    char buf[DQ_TIME_BUFSZ];
    size_t n = dq_time_format(buf, sizeof buf, ms);

    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

/* ---- dq_dur_parse --------------------------------------------------------------- */

static void
test_dur_single_units(void **state)
{
    (void)state;
    dur_ok("0", 0);
    dur_ok("0ms", 0);
    dur_ok("0s", 0);
    dur_ok("0d", 0);
    dur_ok("1ms", 1);
    dur_ok("250ms", 250);
    dur_ok("30s", 30000);
    dur_ok("5m", 300000);
    dur_ok("2h", 7200000);
    dur_ok("7d", 604800000);
    dur_ok("90m", 5400000);
    dur_ok("1500ms", 1500);
    dur_ok("007s", 7000);
}

static void
test_dur_compound(void **state)
{
    (void)state;
    dur_ok("1h30m", 5400000);
    dur_ok("2m30s", 150000);
    dur_ok("1d12h", 129600000);
    dur_ok("1m1ms", 60001);
    dur_ok("1d2h3m4s5ms", 86400000 + 7200000 + 180000 + 4000 + 5);
    dur_ok("0h0m", 0);
    dur_ok("1h90m", 9000000); /* a part may exceed the next unit */
}

static void
test_dur_fraction(void **state)
{
    (void)state;
    dur_ok("1.5s", 1500);
    dur_ok("0.25h", 900000);
    dur_ok("0.5d", 43200000);
    dur_ok("0.001s", 1);
    dur_ok("2.0ms", 2);
    dur_ok("1.500000000000000000000000000000s", 1500); /* trailing zeros do not count */
}

static void
test_dur_fraction_inexact(void **state)
{
    (void)state;
    dur_bad("1.5ms", "--delay: \"1.5ms\" is not a whole number of milliseconds");
    dur_bad("0.0001s", "--delay: \"0.0001s\" is not a whole number of milliseconds");
    dur_bad("0.1234567890s", "--delay: \"0.1234567890s\" is not a whole number of milliseconds");
    dur_bad("0.00000000001d", "--delay: \"0.00000000001d\" is not a whole number of milliseconds");
    dur_bad("0.3333333333333333333333h",
            "--delay: \"0.3333333333333333333333h\" is not a whole number of milliseconds");
}

static void
test_dur_limit(void **state)
{
    (void)state;
    dur_ok("36525d", DQ_DUR_MAX_MS);
    dur_ok("876600h", DQ_DUR_MAX_MS);
    dur_ok("3155760000000ms", DQ_DUR_MAX_MS);
    dur_ok("36524d23h59m59s999ms", DQ_DUR_MAX_MS - 1);
    dur_bad("36526d", "--delay: \"36526d\" is longer than 100 years (limit 36525d)");
    dur_bad("36525d1ms", "--delay: \"36525d1ms\" is longer than 100 years (limit 36525d)");
    dur_bad("3155760000001ms",
            "--delay: \"3155760000001ms\" is longer than 100 years (limit 36525d)");
    dur_bad("36524.9999999999d",
            "--delay: \"36524.9999999999d\" is not a whole number of milliseconds");
    dur_bad("36525.5d", "--delay: \"36525.5d\" is longer than 100 years (limit 36525d)");
    dur_bad("99999999999999999999999999999999s",
            "--delay: \"99999999999999999999999999999999s\" is longer than 100 years "
            "(limit 36525d)");
    dur_bad("9223372036854775807ms",
            "--delay: \"9223372036854775807ms\" is longer than 100 years (limit 36525d)");
}

static void
test_dur_errors(void **state)
{
    (void)state;
    dur_bad("", "--delay: \"\" is not a duration " HINT);
    dur_bad("abc", "--delay: \"abc\" is not a duration " HINT);
    dur_bad("5", "--delay: \"5\" has no unit " HINT);
    dur_bad("00", "--delay: \"00\" has no unit " HINT);
    dur_bad("1h30", "--delay: \"1h30\" has no unit " HINT);
    dur_bad("1.5", "--delay: \"1.5\" has no unit " HINT);
    dur_bad("5x", "--delay: \"5x\" has unknown unit \"x\" (use ms, s, m, h or d)");
    dur_bad("5S", "--delay: \"5S\" has unknown unit \"S\" (use ms, s, m, h or d)");
    dur_bad("5sec", "--delay: \"5sec\" has unknown unit \"sec\" (use ms, s, m, h or d)");
    dur_bad("2w", "--delay: \"2w\" has unknown unit \"w\" (use ms, s, m, h or d)");
    dur_bad(" 5s", "--delay: \" 5s\" is not a duration " HINT);
    dur_bad("5s ", "--delay: \"5s \" is not a duration " HINT);
    dur_bad("5 s", "--delay: \"5 s\" is not a duration " HINT);
    dur_bad("1h 30m", "--delay: \"1h 30m\" is not a duration " HINT);
    dur_bad("+5s", "--delay: \"+5s\" is not a duration " HINT);
    dur_bad(".5s", "--delay: \".5s\" is not a duration " HINT);
    dur_bad("5.s", "--delay: \"5.s\" is not a duration " HINT);
    dur_bad("1,5s", "--delay: \"1,5s\" is not a duration " HINT);
    dur_bad("5s!", "--delay: \"5s!\" is not a duration " HINT);
    dur_bad("-5s", "--delay: \"-5s\" is negative; a duration is 0 or more");
    dur_bad("-0", "--delay: \"-0\" is negative; a duration is 0 or more");
    dur_bad("30m1h", "--delay: \"30m1h\" repeats or misorders a unit (largest first, each once, "
                     "as in 1h30m)");
    dur_bad("1h1h", "--delay: \"1h1h\" repeats or misorders a unit (largest first, each once, "
                    "as in 1h30m)");
    dur_bad("1ms1s", "--delay: \"1ms1s\" repeats or misorders a unit (largest first, each once, "
                     "as in 1h30m)");
    dur_bad("1.5h30m", "--delay: \"1.5h30m\" has a fraction in a multi-unit duration (a "
                       "fraction is allowed alone, as in 1.5h)");
    dur_bad("1h0.5m", "--delay: \"1h0.5m\" has a fraction in a multi-unit duration (a "
                      "fraction is allowed alone, as in 1.5h)");
}

static void
test_dur_message_quoting(void **state)
{
    dq_err err = {0};
    char longs[300];

    (void)state;
    /* control bytes and quotes are escaped so the message stays one line */
    dur_bad("5s\n", "--delay: \"5s\\x0a\" is not a duration " HINT);
    dur_bad("\"5\"s", "--delay: \"\\\"5\\\"s\" is not a duration " HINT);
    dur_bad("5\xc2\xb5s", "--delay: \"5\\xc2\\xb5s\" is not a duration " HINT);
    dur_bad("5s\x1b[2J", "--delay: \"5s\\x1b[2J\" is not a duration " HINT);
    dur_bad("5\x7f", "--delay: \"5\\x7f\" is not a duration " HINT);

    /* a long input is cut, and the message still ends with its hint */
    memset(longs, 'x', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    assert_int_equal(dq_dur_parse(longs, "--delay", NULL, &err), DQ_EINVAL);
    assert_non_null(strstr(err.msg, "xxx...\" is not a duration " HINT));
    assert_true(strlen(err.msg) < 120);
    assert_null(strchr(err.msg, '\n'));
}

static void
test_dur_null_args(void **state)
{
    dq_err err = {0};
    int64_t ms = 7;

    (void)state;
    /* NULL field gets a generic name; NULL input is an empty one */
    assert_int_equal(dq_dur_parse("5x", NULL, &ms, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "duration: \"5x\" has unknown unit \"x\" (use ms, s, m, h or d)");
    assert_int_equal(dq_dur_parse(NULL, "--delay", &ms, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "--delay: \"\" is not a duration " HINT);
    /* NULL out only validates; NULL err is allowed */
    assert_int_equal(dq_dur_parse("1h", "--delay", NULL, NULL), DQ_OK);
    assert_int_equal(dq_dur_parse("1y", "--delay", NULL, NULL), DQ_EINVAL);
    assert_int_equal(dq_dur_parse("1y", "--delay", &ms, NULL), DQ_EINVAL);
    assert_int_equal(ms, 0);
}

/* ---- dq_dur_format -------------------------------------------------------------- */

static void
test_dur_format(void **state)
{
    (void)state;
    dur_fmt_is(0, "0s");
    dur_fmt_is(1, "1ms");
    dur_fmt_is(250, "250ms");
    dur_fmt_is(999, "999ms");
    dur_fmt_is(1000, "1s");
    dur_fmt_is(1099, "1s");
    dur_fmt_is(4200, "4.2s");
    dur_fmt_is(4299, "4.2s");
    dur_fmt_is(10000, "10s");
    dur_fmt_is(59999, "59.9s");
    dur_fmt_is(60000, "1m00s");
    dur_fmt_is(303000, "5m03s");
    dur_fmt_is(3599999, "59m59s");
    dur_fmt_is(3600000, "1h00m");
    dur_fmt_is(7440000, "2h04m");
    dur_fmt_is(86399999, "23h59m");
    dur_fmt_is(86400000, "1d00h");
    dur_fmt_is(266400000, "3d02h");
    dur_fmt_is(DQ_DUR_MAX_MS, "36525d00h");
    dur_fmt_is(-250, "-250ms");
    dur_fmt_is(-4200, "-4.2s");
    dur_fmt_is(-303000, "-5m03s");
    dur_fmt_is(-266400000, "-3d02h");
    dur_fmt_is(INT64_MAX, "106751991167d07h");
    dur_fmt_is(INT64_MIN, "-106751991167d07h");
}

static void
test_dur_format_snprintf(void **state)
{
    char buf[8];

    (void)state;
    assert_int_equal(dq_dur_format(NULL, 0, 250), 5);
    memset(buf, '#', sizeof buf);
    assert_int_equal(dq_dur_format(buf, 3, 250), 5);
    assert_string_equal(buf, "25");
    assert_int_equal(buf[3], '#');
    assert_int_equal(dq_dur_format(buf, 1, 250), 5);
    assert_string_equal(buf, "");
    assert_int_equal(dq_dur_format(buf, sizeof buf, 250), 5);
    assert_string_equal(buf, "250ms");
}

/* Every form dq_dur_format writes parses back to the value, truncated to what it shows. */
static void
test_dur_format_parses_back(void **state)
{
    static const int64_t v[] = {1,        250,      1000,      4200,      59900,
                                60000,    303000,   3599000,   3600000,   7440000,
                                86340000, 86400000, 266400000, 604800000, DQ_DUR_MAX_MS};
    char buf[DQ_DUR_BUFSZ];
    int64_t back;

    (void)state;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        dq_dur_format(buf, sizeof buf, v[i]);
        assert_int_equal(dq_dur_parse(buf, "x", &back, NULL), DQ_OK);
        assert_int_equal(back, v[i]);
    }
}

/* ---- dq_time_parse -------------------------------------------------------------- */

static void
test_time_epoch(void **state)
{
    (void)state;
    time_ok("0", 0);
    time_ok("1", 1);
    time_ok("1795941758123", INT64_C(1795941758123));
    time_ok("0001795941758123", INT64_C(1795941758123));
    time_ok("253402300799999", DQ_TIME_MAX_MS);
    time_bad("253402300800000", "--at: \"253402300800000\" is after 9999-12-31T23:59:59.999Z, "
                                "the latest time");
    time_bad("99999999999999999999999999",
             "--at: \"99999999999999999999999999\" is after 9999-12-31T23:59:59.999Z, the "
             "latest time");
}

static void
test_time_rfc3339(void **state)
{
    (void)state;
    time_ok("1970-01-01T00:00:00Z", 0);
    time_ok("2026-11-29T08:42:38Z", INT64_C(1795941758000));
    time_ok("2026-11-29T08:42:38.123Z", INT64_C(1795941758123));
    time_ok("2026-11-29t08:42:38.123z", INT64_C(1795941758123));
    time_ok("2026-11-29 08:42:38.123Z", INT64_C(1795941758123));
    time_ok("2038-01-19T03:14:08Z", INT64_C(2147483648000));
    time_ok("9999-12-31T23:59:59.999Z", DQ_TIME_MAX_MS);
}

static void
test_time_fraction(void **state)
{
    (void)state;
    time_ok("1970-01-01T00:00:00.1Z", 100);
    time_ok("1970-01-01T00:00:00.12Z", 120);
    time_ok("1970-01-01T00:00:00.123Z", 123);
    time_ok("1970-01-01T00:00:00.1239Z", 123); /* truncated, not rounded */
    time_ok("1970-01-01T00:00:00.999999999Z", 999);
    time_ok("1970-01-01T00:00:00.000000001Z", 0);
    time_bad("1970-01-01T00:00:00.1234567890Z",
             "--at: \"1970-01-01T00:00:00.1234567890Z\" has a fraction of 10 digits; limit is 9");
    time_bad("1970-01-01T00:00:00.Z", "--at: \"1970-01-01T00:00:00.Z\" is not a time " TIME_HINT);
}

static void
test_time_offsets(void **state)
{
    (void)state;
    time_ok("2026-11-29T09:42:38+01:00", INT64_C(1795941758000));
    time_ok("2026-11-29T03:12:38-05:30", INT64_C(1795941758000));
    time_ok("2026-11-29T08:42:38+00:00", INT64_C(1795941758000));
    time_ok("2026-11-29T08:42:38-00:00", INT64_C(1795941758000));
    time_ok("2026-11-30T08:41:38+23:59", INT64_C(1795941758000));
    time_ok("2026-11-29T07:42:38.123-01:00", INT64_C(1795941758123));
    time_ok("1970-01-01T00:00:00-01:00", 3600000);
    time_bad("1970-01-01T00:00:00+00:01",
             "--at: \"1970-01-01T00:00:00+00:01\" is before 1970-01-01T00:00:00Z");
    time_bad("9999-12-31T23:59:59-00:01",
             "--at: \"9999-12-31T23:59:59-00:01\" is after 9999-12-31T23:59:59.999Z, the "
             "latest time");
    time_bad("2026-11-29T08:42:38+24:00",
             "--at: offset hour 24 in \"2026-11-29T08:42:38+24:00\" is out of range 0..23");
    time_bad("2026-11-29T08:42:38+01:60",
             "--at: offset minute 60 in \"2026-11-29T08:42:38+01:60\" is out of range 0..59");
}

static void
test_time_leap_years(void **state)
{
    (void)state;
    time_ok("2024-02-29T00:00:00Z", INT64_C(1709164800000));
    time_ok("2000-02-29T12:00:00Z", INT64_C(951825600000));
    time_ok("2400-02-29T00:00:00Z", INT64_C(13574563200000));
    time_ok("2024-12-31T23:59:59.999Z", INT64_C(1735689599999));
    time_bad("2023-02-29T00:00:00Z",
             "--at: day 29 in \"2023-02-29T00:00:00Z\" is out of range 1..28 for 2023-02");
    time_bad("2100-02-29T00:00:00Z",
             "--at: day 29 in \"2100-02-29T00:00:00Z\" is out of range 1..28 for 2100-02");
    time_bad("2024-02-30T00:00:00Z",
             "--at: day 30 in \"2024-02-30T00:00:00Z\" is out of range 1..29 for 2024-02");
    time_bad("2024-04-31T00:00:00Z",
             "--at: day 31 in \"2024-04-31T00:00:00Z\" is out of range 1..30 for 2024-04");
    time_bad("2024-01-32T00:00:00Z",
             "--at: day 32 in \"2024-01-32T00:00:00Z\" is out of range 1..31 for 2024-01");
    time_bad("2024-01-00T00:00:00Z",
             "--at: day 0 in \"2024-01-00T00:00:00Z\" is out of range 1..31 for 2024-01");
}

static void
test_time_ranges(void **state)
{
    (void)state;
    time_bad("1969-12-31T23:59:59Z",
             "--at: year 1969 in \"1969-12-31T23:59:59Z\" is out of range 1970..9999");
    time_bad("0000-01-01T00:00:00Z",
             "--at: year 0 in \"0000-01-01T00:00:00Z\" is out of range 1970..9999");
    time_bad("2026-00-01T00:00:00Z",
             "--at: month 0 in \"2026-00-01T00:00:00Z\" is out of range 1..12");
    time_bad("2026-13-01T00:00:00Z",
             "--at: month 13 in \"2026-13-01T00:00:00Z\" is out of range 1..12");
    time_bad("2026-11-29T24:00:00Z",
             "--at: hour 24 in \"2026-11-29T24:00:00Z\" is out of range 0..23");
    time_bad("2026-11-29T08:60:00Z",
             "--at: minute 60 in \"2026-11-29T08:60:00Z\" is out of range 0..59");
    time_bad("2016-12-31T23:59:60Z", "--at: second 60 in \"2016-12-31T23:59:60Z\" is a leap "
                                     "second, which is not supported (use 59)");
    time_bad("2026-11-29T08:42:61Z",
             "--at: second 61 in \"2026-11-29T08:42:61Z\" is out of range 0..59");
}

static void
test_time_malformed(void **state)
{
    static const char *const bad[] = {
        "now",
        "-5",
        "12a",
        "+1795941758123",
        " 1795941758123",
        "1795941758123 ",
        "2026-11-29",
        "2026-11-29T08:42Z",
        "2026-11-29T08:42:38.Z",
        "2026-11-29T08:42:38+0100",
        "2026-11-29T08:42:38+01",
        "2026-11-29T08:42:38Zx",
        "2026-11-29T08:42:38Z ",
        "2026-11-29X08:42:38Z",
        "2026-11-29T08-42-38Z",
        "2026-1-29T08:42:38Z",
        "2026/11/29T08:42:38Z",
        "20261-11-29T08:42:38Z",
        "2026-11-29T8:42:38Z",
        "2026-11-29T08:42:38UTC",
        "2026-11-29T08:42:38.1.2Z",
        "\xef\xbc\x92\xef\xbc\x90",
    };
    char want[256];
    char q[64];

    (void)state;
    time_bad("", "--at: \"\" is not a time " TIME_HINT);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t o = 0;

        for (const char *p = bad[i]; *p != '\0'; p++) {
            unsigned char c = (unsigned char)*p;

            if (c < 0x20 || c >= 0x7f)
                o += (size_t)snprintf(q + o, sizeof q - o, "\\x%02x", c);
            else
                q[o++] = (char)c;
        }
        q[o] = '\0';
        snprintf(want, sizeof want, "--at: \"%s\" is not a time " TIME_HINT, q);
        time_bad(bad[i], want);
    }
    time_bad("2026-11-29T08:42:38",
             "--at: \"2026-11-29T08:42:38\" has no time zone (end it with Z for UTC or an "
             "offset such as +01:00)");
    time_bad("2026-11-29T08:42:38.5",
             "--at: \"2026-11-29T08:42:38.5\" has no time zone (end it with Z for UTC or an "
             "offset such as +01:00)");
}

static void
test_time_null_args(void **state)
{
    dq_err err = {0};
    int64_t ms = 5;

    (void)state;
    assert_int_equal(dq_time_parse("soon", NULL, &ms, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "time: \"soon\" is not a time " TIME_HINT);
    assert_int_equal(ms, 0);
    assert_int_equal(dq_time_parse(NULL, "--at", &ms, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "--at: \"\" is not a time " TIME_HINT);
    assert_int_equal(dq_time_parse("2026-11-29T08:42:38Z", "--at", NULL, NULL), DQ_OK);
    assert_int_equal(dq_time_parse("2026-11-29T08:42:60Z", "--at", NULL, NULL), DQ_EINVAL);
}

/* ---- dq_time_format ------------------------------------------------------------- */

static void
test_time_format(void **state)
{
    char buf[8];

    (void)state;
    time_fmt_is(0, "1970-01-01T00:00:00.000Z");
    time_fmt_is(INT64_C(1795941758123), "2026-11-29T08:42:38.123Z");
    time_fmt_is(INT64_C(1709164800000), "2024-02-29T00:00:00.000Z");
    time_fmt_is(INT64_C(951825600000), "2000-02-29T12:00:00.000Z");
    time_fmt_is(INT64_C(2147483648000), "2038-01-19T03:14:08.000Z");
    time_fmt_is(DQ_TIME_MAX_MS, "9999-12-31T23:59:59.999Z");
    time_fmt_is(-1, "1969-12-31T23:59:59.999Z");
    time_fmt_is(-86400000, "1969-12-31T00:00:00.000Z");
    time_fmt_is(DQ_TIME_MAX_MS + 1, "10000-01-01T00:00:00.000Z");

    /* the extremes fit the documented buffer */
    assert_true(dq_time_format(NULL, 0, INT64_MAX) < DQ_TIME_BUFSZ);
    assert_true(dq_time_format(NULL, 0, INT64_MIN) < DQ_TIME_BUFSZ);
    assert_true(dq_dur_format(NULL, 0, INT64_MIN) < DQ_DUR_BUFSZ);

    assert_int_equal(dq_time_format(NULL, 0, 0), 24);
    assert_int_equal(dq_time_format(buf, sizeof buf, 0), 24);
    assert_string_equal(buf, "1970-01");
}

/* Every day from 1970 to 2500 at an odd time of day: format, then parse back. */
static void
test_time_round_trip(void **state)
{
    char buf[DQ_TIME_BUFSZ];
    int64_t back;
    int64_t last_day = 193578; /* 2499-12-31 */

    (void)state;
    for (int64_t day = 0; day <= last_day; day++) {
        int64_t ms = day * 86400000 + (day * 7919 % 86400000);

        dq_time_format(buf, sizeof buf, ms);
        assert_int_equal(dq_time_parse(buf, "t", &back, NULL), DQ_OK);
        if (back != ms)
            fail_msg("%s: got %lld, want %lld", buf, (long long)back, (long long)ms);
    }
    dq_time_format(buf, sizeof buf, DQ_TIME_MAX_MS);
    assert_int_equal(dq_time_parse(buf, "t", &back, NULL), DQ_OK);
    assert_int_equal(back, DQ_TIME_MAX_MS);
}

/* Rates (the queue limits): kept a minute; a bare number is per second; errors name
 * the field and say what is wanted. */
static void
test_rate_parse_and_format(void **state)
{
    static const struct {
        const char *in;
        int64_t per_min;
    } good[] = {{"20/s", 1200}, {"20", 1200}, {"1200/m", 1200}, {"30/min", 30},
                {"120/h", 2},   {"0", 0},     {"1/m", 1},       {"10000000/s", 600000000}};
    static const struct {
        const char *in, *msg;
    } bad[] = {{"", "--rate: \"\" is not a rate"},
               {"abc", "--rate: \"abc\" is not a rate"},
               {"-5/s", "--rate: \"-5/s\" is not a rate"},
               {"5/x", "--rate: \"5/x\" has an unknown unit (use /s, /m or /h)"},
               {"5/s ", "--rate: \"5/s \" has an unknown unit"},
               {"90/h", "--rate: \"90/h\" is not a whole number a minute"},
               {"10000001/s", "is over the limit of 600000000/m"},
               {"99999999999999999999/m", "is over the limit of 600000000/m"}};
    char buf[DQ_RATE_BUFSZ];
    int64_t v;
    dq_err err;

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        v = -1;
        if (dq_rate_parse(good[i].in, "--rate", &v, NULL) != DQ_OK || v != good[i].per_min)
            fail_msg("%s: got %lld, want %lld", good[i].in, (long long)v,
                     (long long)good[i].per_min);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        v = -1;
        assert_int_equal(dq_rate_parse(bad[i].in, "--rate", &v, &err), DQ_EINVAL);
        assert_int_equal(v, 0);
        if (strstr(err.msg, bad[i].msg) == NULL)
            fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].in, err.msg, bad[i].msg);
    }
    dq_rate_format(buf, sizeof buf, 1200);
    assert_string_equal(buf, "20/s");
    dq_rate_format(buf, sizeof buf, 90);
    assert_string_equal(buf, "90/m");
    dq_rate_format(buf, sizeof buf, 0);
    assert_string_equal(buf, "off");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dur_single_units),
        cmocka_unit_test(test_dur_compound),
        cmocka_unit_test(test_dur_fraction),
        cmocka_unit_test(test_dur_fraction_inexact),
        cmocka_unit_test(test_dur_limit),
        cmocka_unit_test(test_dur_errors),
        cmocka_unit_test(test_dur_message_quoting),
        cmocka_unit_test(test_dur_null_args),
        cmocka_unit_test(test_dur_format),
        cmocka_unit_test(test_dur_format_snprintf),
        cmocka_unit_test(test_dur_format_parses_back),
        cmocka_unit_test(test_time_epoch),
        cmocka_unit_test(test_time_rfc3339),
        cmocka_unit_test(test_time_fraction),
        cmocka_unit_test(test_time_offsets),
        cmocka_unit_test(test_time_leap_years),
        cmocka_unit_test(test_time_ranges),
        cmocka_unit_test(test_time_malformed),
        cmocka_unit_test(test_time_null_args),
        cmocka_unit_test(test_time_format),
        cmocka_unit_test(test_time_round_trip),
        cmocka_unit_test(test_rate_parse_and_format),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/dur", tests, NULL, NULL);
}
