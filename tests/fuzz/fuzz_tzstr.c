/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tzstr.c: the POSIX TZ string parser and rule evaluation (src/lib/tz.c), which
 * read the footer of every zoneinfo file. Invariants: a refused string leaves no zone
 * and a one-line "tz: TZ string: " message with no control byte; an accepted one
 * gives offsets within +-DQ_TZ_OFFSET_MAX, local-to-UTC answers of 0..2 ascending
 * instants that map back, a gap end past the local time asked, and, for rules at the
 * default 02:00 (no '/time', so no rule can reach into another year), every instant
 * tried is among the instants of its own local time.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/tz.h"

static void
check_instant(const struct dq_tz *z, int64_t t, bool round_trip)
{
    int32_t off = dq_tz_offset(z, t, NULL);
    FUZZ_CHECK(off >= -DQ_TZ_OFFSET_MAX && off <= DQ_TZ_OFFSET_MAX);
    /* tz.c clamps instants to +-2^40 s: beyond that only the range is checked */
    if (t > (INT64_C(1) << 40) - 4 * 86400 || t < -(INT64_C(1) << 40) + 4 * 86400)
        return;

    int64_t l = t + off, u[2] = {0, 0}, gap = 0;
    int n = dq_tz_local_to_utc(z, l, u, &gap);
    FUZZ_CHECK(n >= 0 && n <= 2);
    for (int i = 0; i < n; i++)
        FUZZ_CHECK(u[i] + dq_tz_offset(z, u[i], NULL) == l);
    if (n == 2)
        FUZZ_CHECK(u[0] < u[1]);
    if (n == 0)
        FUZZ_CHECK(gap + dq_tz_offset(z, gap, NULL) > l);
    if (round_trip)
        FUZZ_CHECK(n >= 1 && (u[0] == t || (n == 2 && u[1] == t)));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    struct dq_tz *z = (struct dq_tz *)&z;
    dq_err err = {0};

    int rc = dq_tz_from_posix(s, &z, &err);
    if (rc != DQ_OK) {
        FUZZ_CHECK(z == NULL && rc == err.code && (rc == DQ_EINVAL || rc == DQ_ENOMEM));
        FUZZ_CHECK(strncmp(err.msg, "tz: TZ string: ", 15) == 0 || rc == DQ_ENOMEM);
        FUZZ_CHECK(fuzz_text_safe(err.msg, strlen(err.msg), ""));
        free(s);
        return 0;
    }
    bool round_trip = strchr(s, '/') == NULL;
    /* weekly through two years; where the offset differs a week on, the change is
     * found by bisection and the two hours around it checked every quarter hour */
    const int64_t week = 7 * 86400;
    for (int64_t t = 1767225600; t < 1767225600 + 2 * 366 * 86400; t += week) {
        check_instant(z, t, round_trip);
        int32_t o = dq_tz_offset(z, t, NULL);
        if (o == dq_tz_offset(z, t + week, NULL))
            continue;
        int64_t a = t, b = t + week;
        while (b - a > 1) {
            int64_t mid = a + (b - a) / 2;
            if (dq_tz_offset(z, mid, NULL) == o)
                a = mid;
            else
                b = mid;
        }
        check_instant(z, b - 1, round_trip);
        for (int64_t h = b - 3600; h <= b + 3600; h += 900)
            check_instant(z, h, round_trip);
    }
    check_instant(z, INT64_MAX, false);
    check_instant(z, INT64_MIN, false);
    dq_tz_free(z);
    free(s);
    return 0;
}
