/* SPDX-License-Identifier: MIT */
/*
 * test_tz.c: time zones from zoneinfo and POSIX TZ strings (src/lib/tz.c). Pure: no
 * server; reads /usr/share/zoneinfo (Debian's tzdata). Known DST dates are checked by
 * hand-worked instants, and glibc is the oracle for thousands of random instants in
 * ~20 zones: this test is single-threaded, so it may set TZ and call tzset, which is
 * exactly what tz.c exists to avoid doing in the library.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#include "delayq.h"
#include "lib/dur.h"
#include "lib/tz.h"

/* Seconds since the epoch of a UTC civil time. */
static int64_t
utc(int y, int mo, int d, int h, int mi)
{
    return dq_dur_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60;
}

static struct dq_tz *
zone(const char *name)
{
    struct dq_tz *z = NULL;
    dq_err err = {0};

    if (dq_tz_load(name, &z, &err) != DQ_OK)
        fail_msg("%s: %s", name, err.msg);
    assert_string_equal(dq_tz_name(z), name);
    return z;
}

static struct dq_tz *
posix(const char *s)
{
    struct dq_tz *z = NULL;
    dq_err err = {0};

    if (dq_tz_from_posix(s, &z, &err) != DQ_OK)
        fail_msg("%s: %s", s, err.msg);
    return z;
}

static void
offset_is(const struct dq_tz *z, int64_t t, int32_t want, bool want_dst)
{
    bool dst = !want_dst;
    int32_t got = dq_tz_offset(z, t, &dst);

    if (got != want || dst != want_dst)
        fail_msg("%s at %lld: offset %d dst %d, want %d dst %d", dq_tz_name(z), (long long)t, got,
                 dst, want, want_dst);
}

/* The offset changes from @before to @after exactly at @t. */
static void
transition_at(const struct dq_tz *z, int64_t t, int32_t before, int32_t after, bool dst_after)
{
    offset_is(z, t - 1, before, !dst_after);
    offset_is(z, t, after, dst_after);
}

static void
local_is(const struct dq_tz *z, int64_t local, int want_n, int64_t want0, int64_t want1)
{
    int64_t u[2] = {-1, -1}, gap = -1;
    int n = dq_tz_local_to_utc(z, local, u, &gap);

    if (n != want_n)
        fail_msg("%s local %lld: %d instants, want %d", dq_tz_name(z), (long long)local, n, want_n);
    if (n == 0) {
        assert_int_equal(gap, want0);
        return;
    }
    assert_int_equal(u[0], want0);
    if (n == 2)
        assert_int_equal(u[1], want1);
}

static void
test_tz_new_york(void **state)
{
    (void)state;
    struct dq_tz *z = zone("America/New_York");

    transition_at(z, utc(2026, 3, 8, 7, 0), -18000, -14400, true);
    transition_at(z, utc(2026, 11, 1, 6, 0), -14400, -18000, false);
    /* 02:30 local on the spring day does not exist; the gap ends at 07:00Z */
    local_is(z, utc(2026, 3, 8, 2, 30), 0, utc(2026, 3, 8, 7, 0), 0);
    local_is(z, utc(2026, 3, 8, 1, 59), 1, utc(2026, 3, 8, 6, 59), 0);
    local_is(z, utc(2026, 3, 8, 3, 0), 1, utc(2026, 3, 8, 7, 0), 0);
    /* 01:30 on the autumn day happens twice, in EDT and then EST */
    local_is(z, utc(2026, 11, 1, 1, 30), 2, utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 30));
    local_is(z, utc(2026, 11, 1, 2, 0), 1, utc(2026, 11, 1, 7, 0), 0);
    /* 2100 is past the last transition of the table: the footer's rule decides
     * (March 1 2100 is a Monday, so the second Sunday is the 14th) */
    transition_at(z, utc(2100, 3, 14, 7, 0), -18000, -14400, true);
    transition_at(z, utc(2100, 11, 7, 6, 0), -14400, -18000, false);
    /* 1970: the table (New York kept DST then, from the last Sunday of April) */
    transition_at(z, utc(1970, 4, 26, 7, 0), -18000, -14400, true);
    dq_tz_free(z);
}

static void
test_tz_london(void **state)
{
    (void)state;
    struct dq_tz *z = zone("Europe/London");

    transition_at(z, utc(2026, 3, 29, 1, 0), 0, 3600, true);
    transition_at(z, utc(2026, 10, 25, 1, 0), 3600, 0, false);
    local_is(z, utc(2026, 3, 29, 1, 30), 0, utc(2026, 3, 29, 1, 0), 0);
    local_is(z, utc(2026, 10, 25, 1, 30), 2, utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 1, 30));
    dq_tz_free(z);
}

/* Lord Howe Island moves its clocks by half an hour. */
static void
test_tz_lord_howe(void **state)
{
    (void)state;
    struct dq_tz *z = zone("Australia/Lord_Howe");
    const int32_t std = 37800, dst = 39600;

    /* DST ends on the first Sunday of April at 02:00 LHDT, 2026-04-04T15:00Z */
    transition_at(z, utc(2026, 4, 4, 15, 0), dst, std, false);
    /* and starts on the first Sunday of October at 02:00 LHST, 2026-10-03T15:30Z */
    transition_at(z, utc(2026, 10, 3, 15, 30), std, dst, true);
    local_is(z, utc(2026, 10, 4, 2, 15), 0, utc(2026, 10, 3, 15, 30), 0);
    local_is(z, utc(2026, 10, 4, 2, 30), 1, utc(2026, 10, 3, 15, 30), 0);
    local_is(z, utc(2026, 4, 5, 1, 45), 2, utc(2026, 4, 4, 14, 45), utc(2026, 4, 4, 15, 15));
    local_is(z, utc(2026, 4, 5, 1, 29), 1, utc(2026, 4, 4, 14, 29), 0);
    dq_tz_free(z);
}

static void
test_tz_no_dst(void **state)
{
    (void)state;
    struct dq_tz *k = zone("Asia/Kolkata"), *t = zone("Asia/Tokyo");

    for (int64_t s = utc(1980, 1, 1, 0, 0); s < utc(2100, 1, 1, 0, 0); s += 86400 * 97) {
        offset_is(k, s, 19800, false);
        offset_is(t, s, 32400, false);
    }
    local_is(k, utc(2026, 6, 1, 9, 0), 1, utc(2026, 6, 1, 3, 30), 0);
    local_is(t, utc(2026, 6, 1, 9, 0), 1, utc(2026, 6, 1, 0, 0), 0);
    dq_tz_free(k);
    dq_tz_free(t);
}

/* UTC and Etc/UTC are built in: they load even where no zoneinfo is installed. */
static void
test_tz_utc_without_files(void **state)
{
    (void)state;
    struct dq_tz *z = NULL;
    dq_err err = {0};

    assert_int_equal(setenv("TZDIR", "/nonexistent-zoneinfo", 1), 0);
    for (int i = 0; i < 2; i++) {
        const char *name = i == 0 ? "UTC" : "Etc/UTC";
        assert_int_equal(dq_tz_load(name, &z, &err), DQ_OK);
        offset_is(z, utc(2026, 7, 1, 0, 0), 0, false);
        local_is(z, 1234567, 1, 1234567, 0);
        dq_tz_free(z);
    }
    assert_int_equal(dq_tz_load("Europe/Berlin", &z, &err), DQ_EINVAL);
    assert_null(z);
    assert_string_equal(err.msg, "tz: unknown zone \"Europe/Berlin\" (no file "
                                 "/nonexistent-zoneinfo/Europe/Berlin)");
    assert_int_equal(unsetenv("TZDIR"), 0);
}

static void
load_bad(const char *name, const char *want)
{
    struct dq_tz *z = (struct dq_tz *)&z;
    dq_err err = {0};

    assert_int_equal(dq_tz_load(name, &z, &err), DQ_EINVAL);
    assert_null(z);
    assert_int_equal(err.code, DQ_EINVAL);
    if (strcmp(err.msg, want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", name, err.msg, want);
}

static void
test_tz_bad_names(void **state)
{
    (void)state;
    load_bad("", "tz: zone name of 0 bytes (use 1-64, such as Europe/Berlin)");
    load_bad("../../etc/passwd", "tz: zone name has byte 0x2e at 0 (use A-Z a-z 0-9 / _ + -, "
                                 "such as Europe/Berlin)");
    load_bad("/etc/localtime", "tz: zone name \"/etc/localtime\" is a path (use such as "
                               "Europe/Berlin)");
    load_bad("Europe/Ber lin", "tz: zone name has byte 0x20 at 10 (use A-Z a-z 0-9 / _ + -, "
                               "such as Europe/Berlin)");
    load_bad("Europe/Berlin\x1b[2J", "tz: zone name has byte 0x1b at 13 (use A-Z a-z 0-9 / _ + "
                                     "-, such as Europe/Berlin)");
    load_bad("Mars/Olympus", "tz: unknown zone \"Mars/Olympus\" (no file "
                             "/usr/share/zoneinfo/Mars/Olympus)");
    load_bad("America", "tz: unknown zone \"America\" (/usr/share/zoneinfo/America is not a zone "
                        "file)");
    load_bad("right/UTC", "tz: right/UTC: has leap-second records (zones of the right/ tree are "
                          "not supported)");
    load_bad("iso3166.tab", "tz: zone name has byte 0x2e at 7 (use A-Z a-z 0-9 / _ + -, such as "
                            "Europe/Berlin)");
    char longname[80];
    memset(longname, 'A', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    load_bad(longname, "tz: zone name of 79 bytes (use 1-64, such as Europe/Berlin)");
}

/* The TZ string forms: M, J and n dates, v3 times beyond 24 h and below 0. */
static void
test_tz_posix_rules(void **state)
{
    (void)state;
    struct dq_tz *z = posix("EST5EDT,M3.2.0,M11.1.0");
    transition_at(z, utc(2030, 3, 10, 7, 0), -18000, -14400, true);
    transition_at(z, utc(2030, 11, 3, 6, 0), -14400, -18000, false);
    dq_tz_free(z);

    /* no rule after the DST name: the US rule, as glibc has it */
    z = posix("EST5EDT");
    transition_at(z, utc(2030, 3, 10, 7, 0), -18000, -14400, true);
    dq_tz_free(z);

    z = posix("<+0630>-6:30");
    offset_is(z, utc(2030, 1, 1, 0, 0), 23400, false);
    dq_tz_free(z);

    /* Jn never counts Feb 29: J60 is March 1; n does: 300 is Oct 27 in a leap year */
    z = posix("AAA3BBB,J60/2,300/2");
    transition_at(z, utc(2028, 3, 1, 5, 0), -10800, -7200, true);
    transition_at(z, utc(2028, 10, 27, 4, 0), -7200, -10800, false);
    transition_at(z, utc(2027, 3, 1, 5, 0), -10800, -7200, true);
    transition_at(z, utc(2027, 10, 28, 4, 0), -7200, -10800, false);
    dq_tz_free(z);

    /* Palestine: Saturday 02:00 written as Thursday + 50 h */
    z = posix("EET-2EEST,M3.4.4/50,M10.4.4/50");
    transition_at(z, utc(2030, 3, 30, 0, 0), 7200, 10800, true);
    transition_at(z, utc(2030, 10, 25, 23, 0), 10800, 7200, false);
    dq_tz_free(z);

    /* Greenland: a negative time, 23:00 the day before */
    z = posix("<-02>2<-01>,M3.5.0/-1,M10.5.0/0");
    transition_at(z, utc(2030, 3, 31, 1, 0), -7200, -3600, true);
    transition_at(z, utc(2030, 10, 27, 1, 0), -3600, -7200, false);
    dq_tz_free(z);

    /* southern hemisphere: DST across the new year */
    z = posix("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0");
    offset_is(z, utc(2031, 1, 1, 0, 0), 39600, true);
    offset_is(z, utc(2031, 7, 1, 0, 0), 37800, false);
    dq_tz_free(z);

    /* DST all year, as zic writes it: stays DST across the year's end */
    z = posix("EST5EDT,0/0,J365/25");
    for (int64_t t = utc(2030, 12, 31, 0, 0); t < utc(2031, 1, 2, 0, 0); t += 1800)
        offset_is(z, t, -14400, true);
    dq_tz_free(z);
}

static void
posix_bad(const char *s, const char *want)
{
    struct dq_tz *z = (struct dq_tz *)&z;
    dq_err err = {0};

    assert_int_equal(dq_tz_from_posix(s, &z, &err), DQ_EINVAL);
    assert_null(z);
    if (strcmp(err.msg, want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", s, err.msg, want);
}

static void
test_tz_posix_errors(void **state)
{
    (void)state;
    posix_bad("", "tz: TZ string: standard time name of 0 letters before byte 0 (use 3-32)");
    posix_bad("ES5", "tz: TZ string: standard time name of 2 letters before byte 2 (use 3-32)");
    posix_bad("EST", "tz: TZ string: standard offset at byte 3: expected hours 0-24");
    posix_bad("EST25", "tz: TZ string: standard offset at byte 5: expected hours 0-24");
    posix_bad("EST5:60", "tz: TZ string: standard offset at byte 7: expected minutes 0-59");
    posix_bad("<+05", "tz: TZ string: standard time name not closed by '>' at byte 4");
    posix_bad("EST5EDT,M13.1.0,M11.1.0",
              "tz: TZ string: DST start date at byte 8: expected Jn (1-365), n (0-365) or "
              "Mm.w.d (m 1-12, w 1-5, d 0-6)");
    posix_bad("EST5EDT,M3.2.0", "tz: TZ string: expected ',' at byte 14");
    posix_bad("EST5EDT,J0,J365",
              "tz: TZ string: DST start date at byte 8: expected Jn (1-365), n (0-365) or "
              "Mm.w.d (m 1-12, w 1-5, d 0-6)");
    posix_bad("EST5EDT,M3.2.0/168,M11.1.0",
              "tz: TZ string: DST start at byte 18: expected hours 0-167");
    posix_bad("EST5EDT,M3.2.0,M11.1.0x", "tz: TZ string: unexpected byte 0x78 at byte 22");
}

static unsigned char *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    static unsigned char buf[DQ_TZ_FILE_MAX];

    assert_non_null(f);
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void
tzif_bad(const unsigned char *data, size_t len, const char *want)
{
    struct dq_tz *z = (struct dq_tz *)&z;
    dq_err err = {0};

    assert_int_equal(dq_tz_from_tzif(data, len, "t", &z, &err), DQ_EINVAL);
    assert_null(z);
    if (strstr(err.msg, want) == NULL)
        fail_msg("got \"%s\", want \"%s\"", err.msg, want);
}

/* Malformed TZif data is refused with a reason, never read past its end. */
static void
test_tz_tzif_errors(void **state)
{
    (void)state;
    size_t len;
    const unsigned char *orig = slurp("/usr/share/zoneinfo/America/New_York", &len);
    unsigned char *d = malloc(len);
    assert_non_null(d);

    struct dq_tz *z = NULL;
    assert_int_equal(dq_tz_from_tzif(orig, len, "ny", &z, NULL), DQ_OK);
    offset_is(z, utc(2026, 7, 1, 0, 0), -14400, true);
    dq_tz_free(z);

    tzif_bad(orig, 10, "not a TZif file");
    for (size_t cut = 44; cut < len; cut += len / 7)
        tzif_bad(orig, cut, "t: ");
    tzif_bad(orig, len - 1, "TZif footer is not a TZ string");
    memcpy(d, orig, len);
    d[4] = '9';
    tzif_bad(d, len, "TZif version byte 0x39");
    memcpy(d, orig, len);
    d[0] = 'X';
    tzif_bad(d, len, "not a TZif file");
    /* the second transition of the 64-bit body made to go backwards (the 32-bit body
     * of a version 2+ file is skipped, as RFC 9636 allows) */
    size_t v2 = 4;
    while (v2 + 4 <= len && memcmp(orig + v2, "TZif", 4) != 0)
        v2++;
    assert_true(v2 + 4 <= len);
    size_t at = v2 + 44 + 8;
    memcpy(d, orig, len);
    memset(d + at, 0x80, 8);
    tzif_bad(d, len, "transition 1 is not after the one before it");
    memcpy(d, orig, len);
    memset(d + 44 + 4, 0x80, 4);
    assert_int_equal(dq_tz_from_tzif(d, len, "ny", &z, NULL), DQ_OK);
    dq_tz_free(z);
    /* typecnt 0 in the v1 header */
    memcpy(d, orig, len);
    memset(d + 36, 0, 4);
    tzif_bad(d, len, "TZif header has 0 types");
    free(d);
}

/* splitmix64: a fixed sequence, so a failure names an instant that reproduces. */
static uint64_t
next_rand(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static const char *const oracle_zones[] = {
    "America/New_York",  "Europe/London",      "Australia/Lord_Howe", "Asia/Kolkata",
    "Asia/Tokyo",        "Europe/Berlin",      "Europe/Dublin",       "America/Sao_Paulo",
    "America/Santiago",  "Pacific/Auckland",   "Pacific/Chatham",     "Asia/Tehran",
    "Africa/Casablanca", "America/Nuuk",       "Asia/Gaza",           "America/St_Johns",
    "Asia/Kathmandu",    "Pacific/Apia",       "Antarctica/Troll",    "Australia/Sydney",
    "Etc/GMT+5",         "Pacific/Kiritimati", "America/Los_Angeles", "Africa/Monrovia",
};

/* One instant: our offset, DST flag and local-to-UTC round trip against glibc's. */
static void
oracle_check(const struct dq_tz *z, int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    bool dst;

    assert_non_null(localtime_r(&tt, &tm));
    int32_t off = dq_tz_offset(z, t, &dst);
    if (off != tm.tm_gmtoff || dst != (tm.tm_isdst > 0))
        fail_msg("%s at %lld: offset %d dst %d, glibc %ld dst %d", dq_tz_name(z), (long long)t, off,
                 dst, (long)tm.tm_gmtoff, tm.tm_isdst);
    int64_t u[2], gap;
    int n = dq_tz_local_to_utc(z, t + off, u, &gap);
    if (n < 1 || (u[0] != t && (n < 2 || u[1] != t)))
        fail_msg("%s: local time of %lld does not map back (%d instants)", dq_tz_name(z),
                 (long long)t, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(u[i] + dq_tz_offset(z, u[i], NULL), t + off);
}

static void
test_tz_glibc_oracle(void **state)
{
    (void)state;
    uint64_t seed = 20261202;
    const int64_t lo = 0, hi = utc(2100, 1, 1, 0, 0);
    char *saved = getenv("TZ") != NULL ? strdup(getenv("TZ")) : NULL;
    long checked = 0;

    for (size_t i = 0; i < sizeof oracle_zones / sizeof oracle_zones[0]; i++) {
        struct dq_tz *z = zone(oracle_zones[i]);
        assert_int_equal(setenv("TZ", oracle_zones[i], 1), 0);
        tzset();
        for (int k = 0; k < 3000; k++) {
            int64_t t = lo + (int64_t)(next_rand(&seed) % (uint64_t)(hi - lo));
            oracle_check(z, t);
            checked++;
        }
        /* every second around each change of offset, found by stepping a day at a time:
         * the instants where a wrong rule shows first */
        int32_t prev = dq_tz_offset(z, lo, NULL);
        for (int64_t d = lo; d < hi; d += 86400) {
            int32_t o = dq_tz_offset(z, d + 86400, NULL);
            if (o == prev)
                continue;
            int64_t a = d, b = d + 86400; /* the change is in (a, b] */
            while (b - a > 1) {
                int64_t mid = a + (b - a) / 2;
                if (dq_tz_offset(z, mid, NULL) == prev)
                    a = mid;
                else
                    b = mid;
            }
            for (int64_t t = b - 2; t <= b + 1; t++, checked++)
                oracle_check(z, t);
            prev = o;
        }
        dq_tz_free(z);
    }
    if (saved != NULL) {
        setenv("TZ", saved, 1);
        free(saved);
    } else {
        unsetenv("TZ");
    }
    tzset();
    print_message("glibc oracle: %ld instants in %zu zones agree\n", checked,
                  sizeof oracle_zones / sizeof oracle_zones[0]);
}

/* Zones are values: threads sharing them get the answers one thread gets alone. */
enum { SHARED_ZONES = 4, SHARED_INSTANTS = 2000, SHARED_THREADS = 4 };

struct shared {
    struct dq_tz *zones[SHARED_ZONES];
    int64_t t[SHARED_INSTANTS];
    int32_t want[SHARED_ZONES][SHARED_INSTANTS];
    int64_t want_utc[SHARED_ZONES][SHARED_INSTANTS];
};

static void *
shared_run(void *arg)
{
    const struct shared *sh = arg;
    long bad = 0;

    for (int round = 0; round < 5; round++) {
        for (int z = 0; z < SHARED_ZONES; z++) {
            for (int i = 0; i < SHARED_INSTANTS; i++) {
                int32_t o = dq_tz_offset(sh->zones[z], sh->t[i], NULL);
                int64_t u[2];
                int n = dq_tz_local_to_utc(sh->zones[z], sh->t[i], u, NULL);
                bad += o != sh->want[z][i] || (n > 0 ? u[0] : -1) != sh->want_utc[z][i];
            }
        }
    }
    return (void *)(intptr_t)bad;
}

static void
test_tz_shared_between_threads(void **state)
{
    (void)state;
    static struct shared sh;
    static const char *const names[SHARED_ZONES] = {"America/New_York", "Australia/Lord_Howe",
                                                    "Europe/Berlin", "Asia/Kolkata"};
    uint64_t seed = 99;
    pthread_t th[SHARED_THREADS];

    for (int i = 0; i < SHARED_INSTANTS; i++)
        sh.t[i] = (int64_t)(next_rand(&seed) % (uint64_t)utc(2100, 1, 1, 0, 0));
    for (int z = 0; z < SHARED_ZONES; z++) {
        sh.zones[z] = zone(names[z]);
        for (int i = 0; i < SHARED_INSTANTS; i++) {
            int64_t u[2];
            sh.want[z][i] = dq_tz_offset(sh.zones[z], sh.t[i], NULL);
            int n = dq_tz_local_to_utc(sh.zones[z], sh.t[i], u, NULL);
            sh.want_utc[z][i] = n > 0 ? u[0] : -1;
        }
    }
    for (int k = 0; k < SHARED_THREADS; k++)
        assert_int_equal(pthread_create(&th[k], NULL, shared_run, &sh), 0);
    for (int k = 0; k < SHARED_THREADS; k++) {
        void *bad = NULL;
        assert_int_equal(pthread_join(th[k], &bad), 0);
        assert_int_equal((intptr_t)bad, 0);
    }
    for (int z = 0; z < SHARED_ZONES; z++)
        dq_tz_free(sh.zones[z]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tz_new_york),
        cmocka_unit_test(test_tz_london),
        cmocka_unit_test(test_tz_lord_howe),
        cmocka_unit_test(test_tz_no_dst),
        cmocka_unit_test(test_tz_utc_without_files),
        cmocka_unit_test(test_tz_bad_names),
        cmocka_unit_test(test_tz_posix_rules),
        cmocka_unit_test(test_tz_posix_errors),
        cmocka_unit_test(test_tz_tzif_errors),
        cmocka_unit_test(test_tz_glibc_oracle),
        cmocka_unit_test(test_tz_shared_between_threads),
    };

    return cmocka_run_group_tests_name("unit/tz", tests, NULL, NULL);
}
