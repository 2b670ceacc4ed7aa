/* SPDX-License-Identifier: MIT */
/*
 * test_cron.c: cron specs and firing times (src/lib/cron.c) in real zones from
 * /usr/share/zoneinfo. Pure: no server. Every parser error is checked against its whole
 * message; firing times across DST changes against hand-worked instants; and a
 * brute-force walk, minute by minute, written apart from cron.c, checks thousands of
 * random starts in ~20 zones. Prints the cost of dq_cron_next (never fails on time).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "delayq.h"
#include "lib/cron.h"
#include "lib/dur.h"
#include "lib/tz.h"

static int64_t
utc_s(int y, int mo, int d, int h, int mi)
{
    return dq_dur_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60;
}

static int64_t
utc_ms(int y, int mo, int d, int h, int mi)
{
    return utc_s(y, mo, d, h, mi) * 1000;
}

static struct dq_tz *
zone(const char *name)
{
    struct dq_tz *z = NULL;
    dq_err err = {0};

    if (dq_tz_load(name, &z, &err) != DQ_OK)
        fail_msg("%s: %s", name, err.msg);
    return z;
}

static struct dq_cron
spec(const char *s)
{
    struct dq_cron c;
    dq_err err = {0};

    if (dq_cron_parse(s, &c, &err) != DQ_OK)
        fail_msg("\"%s\": %s", s, err.msg);
    return c;
}

static char *
fmt_ms(char *buf, int64_t ms)
{
    dq_time_format(buf, DQ_TIME_BUFSZ, ms);
    return buf;
}

/* The firings of @s in @zname after @after, one by one, must be @want[0..n). */
static void
fires(const char *s, const char *zname, int64_t after, int n, const int64_t *want)
{
    struct dq_cron c = spec(s);
    struct dq_tz *z = zone(zname);
    char a[DQ_TIME_BUFSZ], b[DQ_TIME_BUFSZ], w[DQ_TIME_BUFSZ];

    for (int i = 0; i < n; i++) {
        int64_t got = -1;
        dq_err err = {0};
        if (dq_cron_next(&c, z, after, &got, &err) != DQ_OK)
            fail_msg("\"%s\" in %s after %s: %s", s, zname, fmt_ms(a, after), err.msg);
        if (got != want[i])
            fail_msg("\"%s\" in %s after %s: got %s, want %s", s, zname, fmt_ms(a, after),
                     fmt_ms(b, got), fmt_ms(w, want[i]));
        after = got;
    }
    dq_tz_free(z);
}

#define FIRES(s, z, after, ...)                                                                    \
    do {                                                                                           \
        const int64_t want_[] = {__VA_ARGS__};                                                     \
        fires(s, z, after, (int)(sizeof want_ / sizeof want_[0]), want_);                          \
    } while (0)

static void
test_cron_parse_fields(void **state)
{
    (void)state;
    struct dq_cron c = spec("*/15 9-17 * * MON-FRI");
    assert_true(c.minute ==
                (UINT64_C(1) << 0 | UINT64_C(1) << 15 | UINT64_C(1) << 30 | UINT64_C(1) << 45));
    assert_int_equal(c.hour, 0x3fe00); /* 9..17 */
    assert_int_equal(c.dom, 0xfffffffe);
    assert_int_equal(c.month, 0x1ffe);
    assert_int_equal(c.dow, 0x3e);
    assert_true(c.dom_star);
    assert_false(c.dow_star);

    c = spec("5-59/10 0 1,15 jan,JuL sun");
    assert_true(c.minute == (UINT64_C(1) << 5 | UINT64_C(1) << 15 | UINT64_C(1) << 25 |
                             UINT64_C(1) << 35 | UINT64_C(1) << 45 | UINT64_C(1) << 55));
    assert_int_equal(c.dom, 1 << 1 | 1 << 15);
    assert_int_equal(c.month, 1 << 1 | 1 << 7);
    assert_int_equal(c.dow, 1);
    assert_false(c.dom_star);
    assert_false(c.dow_star);

    /* 7 is Sunday, alone and at the end of a range */
    assert_int_equal(spec("0 0 * * 7").dow, 1);
    assert_int_equal(spec("0 0 * * 5-7").dow, 1 | 1 << 5 | 1 << 6);
    assert_int_equal(spec("0 0 * * */2").dow, 1 | 1 << 2 | 1 << 4 | 1 << 6);
    assert_true(spec("0 0 * * */2").dow_star);

    /* spaces and tabs, leading and trailing */
    struct dq_cron a = spec(" \t0   0\t* *  *  "), b = spec("@daily");
    assert_memory_equal(&a, &b, sizeof a);
    static const char *const macro[][2] = {
        {"@yearly", "0 0 1 1 *"}, {"@ANNUALLY", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@midnight", "0 0 * * *"}, {"@Hourly", "0 * * * *"},
    };
    for (size_t i = 0; i < sizeof macro / sizeof macro[0]; i++) {
        a = spec(macro[i][0]);
        b = spec(macro[i][1]);
        assert_memory_equal(&a, &b, sizeof a);
    }
    /* a day that occurs in only some of the months given is fine */
    spec("0 0 31 1-3 *");
    /* both day fields restricted: Mondays fire even though Feb 31 never comes */
    spec("0 0 31 2 MON");
}

static void
parse_bad(const char *s, const char *want)
{
    struct dq_cron c;
    dq_err err = {0};

    memset(&c, 0xff, sizeof c);
    assert_int_equal(dq_cron_parse(s, &c, &err), DQ_EINVAL);
    assert_int_equal(err.code, DQ_EINVAL);
    assert_int_equal(c.minute, 0);
    if (strcmp(err.msg, want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", s, err.msg, want);
}

static void
test_cron_parse_errors(void **state)
{
    (void)state;
    parse_bad("0 24 * * *", "cron: hour 24 is out of range 0-23");
    parse_bad("60 * * * *", "cron: minute 60 is out of range 0-59");
    parse_bad("* * 0 * *", "cron: day-of-month 0 is out of range 1-31");
    parse_bad("* * 32 * *", "cron: day-of-month 32 is out of range 1-31");
    parse_bad("* * * 13 *", "cron: month 13 is out of range 1-12");
    parse_bad("* * * 0 *", "cron: month 0 is out of range 1-12");
    parse_bad("* * * * 8", "cron: day-of-week 8 is out of range 0-7");
    parse_bad("123456789012345 * * * *", "cron: minute 1234567890... is out of range 0-59");
    parse_bad("* * * *", "cron: expected 5 fields (MIN HOUR DOM MON DOW), got 4");
    parse_bad("* * * * * *", "cron: expected 5 fields (MIN HOUR DOM MON DOW), got 6");
    parse_bad("", "cron: expected 5 fields (MIN HOUR DOM MON DOW), got 0");
    parse_bad("   ", "cron: expected 5 fields (MIN HOUR DOM MON DOW), got 0");
    parse_bad("*/0 * * * *", "cron: minute step 0 is out of range 1-59");
    parse_bad("* */24 * * *", "cron: hour step 24 is out of range 1-23");
    parse_bad("*/ * * * *", "cron: minute step: a number is missing (use 1-59)");
    parse_bad("5/10 * * * *", "cron: minute step needs a range or * (use 5-59/N)");
    parse_bad("30-10 * * * *", "cron: minute range 30-10 goes backwards (use 30-59,0-10)");
    parse_bad("* * * * FRI-MON", "cron: day-of-week range 5-1 goes backwards (use 5-7,0-1)");
    parse_bad("* * * FOO *", "cron: month name \"FOO\" is unknown (use JAN-DEC)");
    parse_bad("* * * * MONDAY", "cron: day-of-week name \"MONDAY\" is unknown (use SUN-SAT)");
    parse_bad("a * * * *", "cron: minute: unexpected 'a' (use 0-59)");
    parse_bad("* * * * ?", "cron: day-of-week: unexpected '?' (use 0-7 or SUN-SAT)");
    parse_bad("\x1b[2J * * * *", "cron: minute: unexpected byte 0x1b (use 0-59)");
    parse_bad("1,,2 * * * *", "cron: minute: empty list item");
    parse_bad("1, * * * *", "cron: minute: empty list item");
    parse_bad("1- * * * *", "cron: minute: a value is missing (use 0-59)");
    parse_bad("*x * * * *", "cron: minute: unexpected 'x'");
    parse_bad("1-2-3 * * * *", "cron: minute: unexpected '-'");
    parse_bad("0 0 30 2 *", "cron: never fires: day-of-month 30 does not occur in FEB (29 days "
                            "at most)");
    parse_bad("0 0 31 2 *", "cron: never fires: day-of-month 31 does not occur in FEB (29 days "
                            "at most)");
    parse_bad("0 0 31 4,6,9,11 *", "cron: never fires: day-of-month 31 does not occur in the "
                                   "months given (30 days at most)");
    parse_bad("0 0 30 2 */2", "cron: never fires: day-of-month 30 does not occur in FEB (29 days "
                              "at most)");
    parse_bad("@reboot", "cron: unknown macro (use @yearly, @monthly, @weekly, @daily, @hourly "
                         "or MIN HOUR DOM MON DOW)");
    parse_bad("@daily extra", "cron: unknown macro (use @yearly, @monthly, @weekly, @daily, "
                              "@hourly or MIN HOUR DOM MON DOW)");
    char longspec[300];
    memset(longspec, '*', sizeof longspec - 1);
    longspec[sizeof longspec - 1] = '\0';
    parse_bad(longspec, "cron: spec is 299 bytes (limit 256)");
}

static void
test_cron_next_utc(void **state)
{
    (void)state;
    int64_t t0 = utc_ms(2026, 12, 2, 0, 7) + 30500;
    FIRES("*/15 * * * *", "UTC", t0, utc_ms(2026, 12, 2, 0, 15), utc_ms(2026, 12, 2, 0, 30));
    /* strictly after: a start on a firing gives the next one */
    FIRES("*/15 * * * *", "UTC", utc_ms(2026, 12, 2, 0, 15), utc_ms(2026, 12, 2, 0, 30));
    FIRES("*/15 * * * *", "UTC", utc_ms(2026, 12, 2, 0, 15) - 1, utc_ms(2026, 12, 2, 0, 15));
    FIRES("*/15 * * * *", "UTC", utc_ms(2026, 12, 2, 0, 15) + 999, utc_ms(2026, 12, 2, 0, 30));
    /* month and year ends, leap day */
    FIRES("59 23 31 12 *", "UTC", utc_ms(2026, 6, 1, 0, 0), utc_ms(2026, 12, 31, 23, 59),
          utc_ms(2027, 12, 31, 23, 59));
    FIRES("0 12 29 2 *", "UTC", utc_ms(2026, 1, 1, 0, 0), utc_ms(2028, 2, 29, 12, 0),
          utc_ms(2032, 2, 29, 12, 0));
    FIRES("@monthly", "UTC", utc_ms(2026, 1, 31, 0, 0), utc_ms(2026, 2, 1, 0, 0),
          utc_ms(2026, 3, 1, 0, 0));
    FIRES("0 0 31 * *", "UTC", utc_ms(2026, 1, 31, 0, 0), utc_ms(2026, 3, 31, 0, 0),
          utc_ms(2026, 5, 31, 0, 0));
    /* DOW 7 and names: 2026-12-06 is a Sunday */
    FIRES("0 8 * * 7", "UTC", utc_ms(2026, 12, 2, 0, 0), utc_ms(2026, 12, 6, 8, 0));
    FIRES("0 8 * * sun", "UTC", utc_ms(2026, 12, 2, 0, 0), utc_ms(2026, 12, 6, 8, 0));
    FIRES("0 9-17/4 * * mon-fri", "UTC", utc_ms(2026, 12, 4, 16, 0), utc_ms(2026, 12, 4, 17, 0),
          utc_ms(2026, 12, 7, 9, 0), utc_ms(2026, 12, 7, 13, 0));
}

/* Vixie cron: both day fields restricted means either; a '*' in one means both. May
 * 2026 starts on a Friday, so the 13th is a Wednesday. */
static void
test_cron_vixie_days(void **state)
{
    (void)state;
    FIRES("0 0 13 * FRI", "UTC", utc_ms(2026, 5, 1, 0, 0), utc_ms(2026, 5, 8, 0, 0),
          utc_ms(2026, 5, 13, 0, 0), utc_ms(2026, 5, 15, 0, 0));
    FIRES("0 0 */2 * FRI", "UTC", utc_ms(2026, 4, 30, 0, 0), utc_ms(2026, 5, 1, 0, 0),
          utc_ms(2026, 5, 15, 0, 0), utc_ms(2026, 5, 29, 0, 0));
    FIRES("0 0 13 * *", "UTC", utc_ms(2026, 5, 1, 0, 0), utc_ms(2026, 5, 13, 0, 0));
    /* Feb 29 that is a Sunday: 2032 */
    FIRES("0 0 29 2 */7", "UTC", utc_ms(2026, 1, 1, 0, 0), utc_ms(2032, 2, 29, 0, 0));
}

/* The DST policy, on known dates. */
static void
test_cron_dst(void **state)
{
    (void)state;
    /* New York springs forward at 02:00 EST (07:00Z) on 2026-03-08: 02:30 does not
     * exist and fires once at 03:00 EDT; the next day at 02:30 EDT */
    FIRES("30 2 * * *", "America/New_York", utc_ms(2026, 3, 7, 12, 0), utc_ms(2026, 3, 8, 7, 0),
          utc_ms(2026, 3, 9, 6, 30));
    /* the whole gap hour fires once, and a 03:00 firing is the same one */
    FIRES("*/15 2 * * *", "America/New_York", utc_ms(2026, 3, 8, 5, 0), utc_ms(2026, 3, 8, 7, 0),
          utc_ms(2026, 3, 9, 6, 0));
    FIRES("0,30 2,3 * * *", "America/New_York", utc_ms(2026, 3, 8, 5, 0), utc_ms(2026, 3, 8, 7, 0),
          utc_ms(2026, 3, 8, 7, 30), utc_ms(2026, 3, 9, 6, 0));
    /* falls back at 02:00 EDT (06:00Z) on 2026-11-01: 01:30 fires once, in EDT */
    FIRES("30 1 * * *", "America/New_York", utc_ms(2026, 11, 1, 4, 0), utc_ms(2026, 11, 1, 5, 30),
          utc_ms(2026, 11, 2, 6, 30));
    /* every 20 minutes through the overlap: the repeated hour is not run twice */
    FIRES("*/20 * * * *", "America/New_York", utc_ms(2026, 11, 1, 5, 30),
          utc_ms(2026, 11, 1, 5, 40), utc_ms(2026, 11, 1, 7, 0), utc_ms(2026, 11, 1, 7, 20));
    /* a start inside the second pass of the overlap waits for the hour after it */
    FIRES("*/20 * * * *", "America/New_York", utc_ms(2026, 11, 1, 6, 10),
          utc_ms(2026, 11, 1, 7, 0));
    /* Europe/Berlin: 09:00 local is 08:00Z before the change and 07:00Z after */
    FIRES("0 9 * * *", "Europe/Berlin", utc_ms(2026, 3, 27, 12, 0), utc_ms(2026, 3, 28, 8, 0),
          utc_ms(2026, 3, 29, 7, 0), utc_ms(2026, 3, 30, 7, 0));
    FIRES("30 2 * * *", "Europe/Berlin", utc_ms(2026, 3, 28, 12, 0), utc_ms(2026, 3, 29, 1, 0),
          utc_ms(2026, 3, 30, 0, 30));
    FIRES("30 2 * * *", "Europe/Berlin", utc_ms(2026, 10, 24, 12, 0), utc_ms(2026, 10, 25, 0, 30),
          utc_ms(2026, 10, 26, 1, 30));
    FIRES("0 9 * * *", "Europe/Berlin", utc_ms(2026, 10, 24, 12, 0), utc_ms(2026, 10, 25, 8, 0));
    /* London: 01:00 GMT on 2026-03-29 does not exist */
    FIRES("0 1 * * *", "Europe/London", utc_ms(2026, 3, 28, 12, 0), utc_ms(2026, 3, 29, 1, 0),
          utc_ms(2026, 3, 30, 0, 0));
    /* Lord Howe's half-hour DST: 02:15 in the gap fires at 02:30 LHDT; 01:45 in the
     * overlap once, at +11 */
    FIRES("15 2 * * *", "Australia/Lord_Howe", utc_ms(2026, 10, 3, 0, 0),
          utc_ms(2026, 10, 3, 15, 30), utc_ms(2026, 10, 4, 15, 15));
    FIRES("45 1 * * *", "Australia/Lord_Howe", utc_ms(2026, 4, 4, 0, 0), utc_ms(2026, 4, 4, 14, 45),
          utc_ms(2026, 4, 5, 15, 15));
    /* Liberia left -0:44:30 at 1972-01-07T00:44:30Z: a local minute before is no whole
     * UTC minute, and the gap fires at the first whole local minute after it */
    FIRES("30 0 * * *", "Africa/Monrovia", utc_ms(1972, 1, 5, 12, 0),
          utc_ms(1972, 1, 6, 1, 14) + 30000, utc_ms(1972, 1, 7, 0, 45), utc_ms(1972, 1, 8, 0, 30));
    /* no DST: +5:30 and +9 */
    FIRES("0 9 * * *", "Asia/Kolkata", utc_ms(2026, 6, 1, 0, 0), utc_ms(2026, 6, 1, 3, 30),
          utc_ms(2026, 6, 2, 3, 30));
    FIRES("0 9 * * *", "Asia/Tokyo", utc_ms(2026, 6, 1, 0, 0), utc_ms(2026, 6, 2, 0, 0));
}

static void
test_cron_next_n_and_limits(void **state)
{
    (void)state;
    struct dq_cron c = spec("0 9 * * *");
    struct dq_tz *z = zone("Europe/Berlin");
    int64_t out[3];
    dq_err err = {0};

    assert_int_equal(dq_cron_next_n(&c, z, utc_ms(2026, 3, 27, 12, 0), 3, out, &err), 3);
    assert_int_equal(out[0], utc_ms(2026, 3, 28, 8, 0));
    assert_int_equal(out[1], utc_ms(2026, 3, 29, 7, 0));
    assert_int_equal(out[2], utc_ms(2026, 3, 30, 7, 0));
    assert_int_equal(dq_cron_next_n(&c, z, 0, 1001, out, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "cron: 1001 firings asked for (limit 1000)");
    dq_tz_free(z);

    z = zone("UTC");
    int64_t got = -1;
    assert_int_equal(dq_cron_next(&c, z, -1, &got, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "cron: start -1 ms is out of range 0-253402300799999");
    /* past the last representable time: none, and said so */
    c = spec("0 0 1 1 *");
    assert_int_equal(dq_cron_next(&c, z, utc_ms(9999, 6, 1, 0, 0), &got, &err), DQ_ENOTFOUND);
    assert_int_equal(got, 0);
    assert_string_equal(err.msg, "cron: no firing after 9999-06-01T00:00:00.000Z before the "
                                 "year 10000");
    assert_int_equal(dq_cron_next_n(&c, z, utc_ms(9998, 6, 1, 0, 0), 3, out, &err), 1);
    assert_int_equal(out[0], utc_ms(9999, 1, 1, 0, 0));
    dq_tz_free(z);
}

static void
test_cron_every(void **state)
{
    (void)state;
    int64_t t = -1;
    dq_err err = {0};

    assert_int_equal(dq_cron_every_next(1000, 500, 999, &t, &err), DQ_OK);
    assert_int_equal(t, 1000);
    assert_int_equal(dq_cron_every_next(1000, 500, 1000, &t, &err), DQ_OK);
    assert_int_equal(t, 1500);
    assert_int_equal(dq_cron_every_next(1000, 500, 1499, &t, &err), DQ_OK);
    assert_int_equal(t, 1500);
    assert_int_equal(dq_cron_every_next(0, 1, DQ_TIME_MAX_MS - 1, &t, &err), DQ_OK);
    assert_int_equal(t, DQ_TIME_MAX_MS);
    assert_int_equal(dq_cron_every_next(0, 1, DQ_TIME_MAX_MS, &t, &err), DQ_ENOTFOUND);
    assert_int_equal(t, 0);
    assert_int_equal(dq_cron_every_next(0, 0, 5, &t, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "--every: 0 ms is out of range 1-3155760000000");
    assert_int_equal(dq_cron_every_next(-1, 10, 5, &t, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "--every: anchor -1 or start 5 ms is out of range "
                                 "0-253402300799999");
}

/* ---- the brute-force oracle ---------------------------------------------------------- */

/* Written from the spec's bits alone, apart from cron.c's calendar search. */
static bool
brute_matches(const struct dq_cron *c, int64_t local)
{
    int64_t days = local / 86400, y;
    int sec = (int)(local % 86400), m, d;

    dq_dur_civil_from_days(days, &y, &m, &d);
    int wd = (int)((days + 4) % 7);
    bool dom = c->dom >> d & 1, dow = c->dow >> wd & 1;
    bool day = c->dom_star || c->dow_star ? dom && dow : dom || dow;
    return (c->minute >> (sec % 3600 / 60) & 1) && (c->hour >> (sec / 3600) & 1) &&
           (c->month >> m & 1) && day;
}

/*
 * The first firing after @after_s by walking UTC minutes (the zones used have whole-
 * minute offsets after 1972): a minute fires when its local time matches and was not
 * seen before (the first pass of an overlap), or when it ends a gap in which some
 * skipped local minute matches. @limit_s stops the walk.
 */
static int64_t
brute_next(const struct dq_cron *c, const struct dq_tz *z, int64_t after_s, int64_t limit_s)
{
    int64_t u = (after_s / 60 + 1) * 60, seen = INT64_MIN;

    for (int64_t v = u - 26 * 3600; v < u; v += 60) {
        int64_t l = v + dq_tz_offset(z, v, NULL);
        seen = l > seen ? l : seen;
    }
    for (; u <= limit_s; u += 60) {
        int64_t l = u + dq_tz_offset(z, u, NULL);
        int64_t prev = u - 60 + dq_tz_offset(z, u - 60, NULL);
        bool fire = l > seen && brute_matches(c, l);
        for (int64_t w = prev + 60; !fire && w < l; w += 60)
            fire = brute_matches(c, w); /* skipped by a gap */
        if (fire)
            return u;
        seen = l > seen ? l : seen;
    }
    return -1;
}

static uint64_t
next_rand(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static const char *const prop_zones[] = {
    "America/New_York",  "Europe/London",       "Australia/Lord_Howe",
    "Asia/Kolkata",      "Europe/Berlin",       "Europe/Dublin",
    "America/Sao_Paulo", "America/Santiago",    "Pacific/Auckland",
    "Pacific/Chatham",   "Asia/Tehran",         "Africa/Casablanca",
    "America/Nuuk",      "Asia/Gaza",           "America/St_Johns",
    "Asia/Kathmandu",    "Pacific/Apia",        "Antarctica/Troll",
    "Australia/Sydney",  "America/Los_Angeles", "UTC",
};

/* Specs that fire at least every three days, so each walk stays short. */
static const char *const prop_specs[] = {
    "*/7 * * * *",    "30 2 * * *",   "0 * * * *",   "15,45 1-3 * * *",
    "*/20 0-4 * * *", "0 0 * * *",    "59 23 * * *", "0 12 * * MON-FRI",
    "30 1 * * *",     "0,30 * * * *", "*/5 2 * * *", "0 3 * * *",
    "45 0 * * 0,3,5", "10 1,2 * * *", "* 2 * * *",   "0 0 1-31/2 * *",
};

/* One start: cron.c's answer must be the walk's, and a whole local minute. */
static void
prop_check(const struct dq_cron *c, const char *s, const struct dq_tz *z, int64_t after_ms)
{
    int64_t got = -1;
    dq_err err = {0};
    char a[DQ_TIME_BUFSZ], b[DQ_TIME_BUFSZ], w[DQ_TIME_BUFSZ];

    if (dq_cron_next(c, z, after_ms, &got, &err) != DQ_OK)
        fail_msg("\"%s\" in %s after %s: %s", s, dq_tz_name(z), fmt_ms(a, after_ms), err.msg);
    int64_t want = brute_next(c, z, after_ms / 1000, after_ms / 1000 + 4 * 86400);
    if (got != want * 1000)
        fail_msg("\"%s\" in %s after %s: got %s, the walk says %s", s, dq_tz_name(z),
                 fmt_ms(a, after_ms), fmt_ms(b, got), fmt_ms(w, want * 1000));
    assert_int_equal((got / 1000 + dq_tz_offset(z, got / 1000, NULL)) % 60, 0);
}

static void
test_cron_brute_force(void **state)
{
    (void)state;
    uint64_t seed = 42;
    const int64_t lo = utc_s(1973, 1, 1, 0, 0), hi = utc_s(2099, 1, 1, 0, 0);
    long checked = 0;

    for (size_t i = 0; i < sizeof prop_zones / sizeof prop_zones[0]; i++) {
        struct dq_tz *z = zone(prop_zones[i]);
        for (int k = 0; k < 120; k++) {
            const char *s = prop_specs[next_rand(&seed) % (sizeof prop_specs / sizeof *prop_specs)];
            struct dq_cron c = spec(s);
            int64_t t = lo + (int64_t)(next_rand(&seed) % (uint64_t)(hi - lo));
            if (k % 2 == 1) {
                /* near a change of offset: the next one after t within a year */
                int32_t o = dq_tz_offset(z, t, NULL);
                for (int64_t d = t; d < t + 366 * 86400; d += 3600) {
                    if (dq_tz_offset(z, d, NULL) != o) {
                        t = d - (int64_t)(next_rand(&seed) % (2 * 86400));
                        break;
                    }
                }
            }
            prop_check(&c, s, z, t * 1000 + (int64_t)(next_rand(&seed) % 1000));
            checked++;
        }
        dq_tz_free(z);
    }
    print_message("brute force: %ld starts in %zu zones agree\n", checked,
                  sizeof prop_zones / sizeof prop_zones[0]);
}

/* ---- cost ---------------------------------------------------------------------------- */

static int
by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Median time of 10 000 dq_cron_next calls from successive random starts; printed,
 * never compared with a limit (the machine may be busy). */
static void
test_cron_cost(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"*/5 * * * *", "UTC"},
        {"30 2 * * *", "America/New_York"},
        {"0 9 * * MON-FRI", "Europe/Berlin"},
        {"0 0 1 1 *", "Australia/Lord_Howe"},
        {"0 0 29 2 */7", "UTC"},
    };
    enum { N = 10000 };
    int64_t *ns = malloc(N * sizeof *ns);
    uint64_t seed = 7;

    assert_non_null(ns);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dq_cron c = spec(cases[i][0]);
        struct dq_tz *z = zone(cases[i][1]);
        for (int k = 0; k < N; k++) {
            int64_t after = utc_ms(2026, 1, 1, 0, 0) +
                            (int64_t)(next_rand(&seed) % (uint64_t)utc_ms(2000, 1, 1, 0, 0));
            int64_t got;
            int64_t t0 = now_ns();
            int rc = dq_cron_next(&c, z, after, &got, NULL);
            ns[k] = now_ns() - t0;
            assert_int_equal(rc, DQ_OK);
            assert_true(got > after);
        }
        qsort(ns, N, sizeof *ns, by_value);
        print_message("cost: dq_cron_next \"%s\" in %s: median %.2f us, p99 %.2f us\n", cases[i][0],
                      cases[i][1], (double)ns[N / 2] / 1000.0, (double)ns[N * 99 / 100] / 1000.0);
        dq_tz_free(z);
    }
    /* what a worker topping up a schedule's list asks for: the next 16 */
    struct dq_cron c = spec("0 9 * * MON-FRI");
    struct dq_tz *z = zone("Europe/Berlin");
    for (int k = 0; k < N / 10; k++) {
        int64_t after = utc_ms(2026, 1, 1, 0, 0) +
                        (int64_t)(next_rand(&seed) % (uint64_t)utc_ms(2000, 1, 1, 0, 0));
        int64_t out[16];
        int64_t t0 = now_ns();
        int n = dq_cron_next_n(&c, z, after, 16, out, NULL);
        ns[k] = now_ns() - t0;
        assert_int_equal(n, 16);
    }
    qsort(ns, N / 10, sizeof *ns, by_value);
    print_message(
        "cost: dq_cron_next_n 16 of \"0 9 * * MON-FRI\" in Europe/Berlin: median %.2f us\n",
        (double)ns[N / 20] / 1000.0);
    dq_tz_free(z);

    /* and what a worker pays to load a zone (a file read and parse) and parse a spec */
    for (int k = 0; k < N / 10; k++) {
        int64_t t0 = now_ns();
        z = zone("America/New_York");
        ns[k] = now_ns() - t0;
        dq_tz_free(z);
    }
    qsort(ns, N / 10, sizeof *ns, by_value);
    print_message("cost: dq_tz_load America/New_York: median %.2f us\n",
                  (double)ns[N / 20] / 1000.0);
    for (int k = 0; k < N / 10; k++) {
        int64_t t0 = now_ns();
        c = spec("*/15 9-17 1,15 JAN-JUN MON-FRI");
        ns[k] = now_ns() - t0;
    }
    qsort(ns, N / 10, sizeof *ns, by_value);
    print_message("cost: dq_cron_parse: median %.2f us\n", (double)ns[N / 20] / 1000.0);
    free(ns);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cron_parse_fields), cmocka_unit_test(test_cron_parse_errors),
        cmocka_unit_test(test_cron_next_utc),     cmocka_unit_test(test_cron_vixie_days),
        cmocka_unit_test(test_cron_dst),          cmocka_unit_test(test_cron_next_n_and_limits),
        cmocka_unit_test(test_cron_every),        cmocka_unit_test(test_cron_brute_force),
        cmocka_unit_test(test_cron_cost),
    };

    return cmocka_run_group_tests_name("unit/cron", tests, NULL, NULL);
}
