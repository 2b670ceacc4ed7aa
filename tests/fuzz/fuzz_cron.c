/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cron.c: the cron spec parser and next-firing search (src/lib/cron.c), which
 * read `--cron` specs. Invariants: a refused spec leaves the result zeroed and a
 * one-line "cron: " message with no control byte; an accepted spec has bits only in
 * each field's range and fires, in UTC and in a DST zone, strictly after each start,
 * on a whole local minute, ascending, within the documented horizon or not at all.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/cron.h"
#include "lib/dur.h"
#include "lib/tz.h"

static void
check_firings(const struct dq_cron *c, const struct dq_tz *z, int64_t after)
{
    int64_t out[4];
    dq_err err = {0};

    int n = dq_cron_next_n(c, z, after, 4, out, &err);
    FUZZ_CHECK(n >= 0 && n <= 4);
    for (int i = 0; i < n; i++) {
        int64_t prev = i == 0 ? after : out[i - 1];
        FUZZ_CHECK(out[i] > prev && out[i] <= DQ_TIME_MAX_MS && out[i] % 1000 == 0);
        int64_t s = out[i] / 1000;
        FUZZ_CHECK((s + dq_tz_offset(z, s, NULL)) % 60 == 0);
        /* within the horizon: 50 years and a day of slack for the zone's offset */
        FUZZ_CHECK(out[i] - prev <= (int64_t)(DQ_CRON_HORIZON_YEARS + 1) * 366 * 86400000);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    struct dq_cron c;
    dq_err err = {0};

    int rc = dq_cron_parse(s, &c, &err);
    if (rc != DQ_OK) {
        static const struct dq_cron zero;
        FUZZ_CHECK(rc == DQ_EINVAL && err.code == DQ_EINVAL);
        FUZZ_CHECK(memcmp(&c, &zero, sizeof c) == 0);
        FUZZ_CHECK(strncmp(err.msg, "cron: ", 6) == 0);
        FUZZ_CHECK(fuzz_text_safe(err.msg, strlen(err.msg), ""));
        free(s);
        return 0;
    }
    FUZZ_CHECK(c.minute != 0 && c.minute >> 60 == 0);
    FUZZ_CHECK(c.hour != 0 && c.hour >> 24 == 0);
    FUZZ_CHECK(c.dom != 0 && (c.dom & 1) == 0);
    FUZZ_CHECK(c.month != 0 && (c.month & 1) == 0 && c.month >> 13 == 0);
    FUZZ_CHECK(c.dow != 0 && c.dow >> 7 == 0);

    struct dq_tz *utc = NULL, *ny = NULL;
    FUZZ_CHECK(dq_tz_load("UTC", &utc, NULL) == DQ_OK);
    FUZZ_CHECK(dq_tz_from_posix("EST5EDT,M3.2.0,M11.1.0", &ny, NULL) == DQ_OK);
    static const int64_t starts[] = {0, 1772953200000, 1793512800000, 4107542399999,
                                     DQ_TIME_MAX_MS - 86400000};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        check_firings(&c, utc, starts[i]);
        check_firings(&c, ny, starts[i]);
    }
    dq_tz_free(utc);
    dq_tz_free(ny);
    free(s);
    return 0;
}
