/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tzif.c: the TZif parser (src/lib/tz.c), which reads zoneinfo files for
 * schedules' time zones. Invariants: a refused file leaves no zone and a one-line
 * "tz: " message with no control byte; an accepted zone gives offsets within
 * +-DQ_TZ_OFFSET_MAX at every instant tried, local-to-UTC answers of 0..2 ascending
 * instants that each map back to the local time asked, a gap end whose local time is
 * past it, and cron firings in the zone that are strictly later than their start.
 */
#include <string.h>

#include "fuzz.h"
#include "lib/cron.h"
#include "lib/tz.h"

static void
check_instant(const struct dq_tz *z, int64_t t)
{
    bool dst;
    int32_t off = dq_tz_offset(z, t, &dst);
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
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dq_tz *z = (struct dq_tz *)&z;
    dq_err err = {0};

    int rc = dq_tz_from_tzif(data, size, "fuzz", &z, &err);
    if (rc != DQ_OK) {
        FUZZ_CHECK(z == NULL && rc == err.code && (rc == DQ_EINVAL || rc == DQ_ENOMEM));
        FUZZ_CHECK(strncmp(err.msg, "tz: ", 4) == 0);
        FUZZ_CHECK(fuzz_text_safe(err.msg, strlen(err.msg), ""));
        return 0;
    }
    static const int64_t fixed[] = {
        0,
        1,
        -1,
        951782400,
        1774836000,
        1792980000,
        INT32_MAX,
        INT32_MIN,
        4102444800,
        INT64_C(253402300799),
        INT64_MAX,
        INT64_MIN,
        INT64_C(1) << 40,
        -(INT64_C(1) << 40),
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_instant(z, fixed[i]);
    /* instants taken from the data itself, where its transitions are likely to be */
    for (size_t i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
        uint64_t v = 0;
        memcpy(&v, data + i, 8);
        check_instant(z, (int64_t)v);
        check_instant(z, (int64_t)(int32_t)(uint32_t)v);
    }
    struct dq_cron c;
    FUZZ_CHECK(dq_cron_parse("*/7 1-3 * * *", &c, NULL) == DQ_OK);
    int64_t after = 1774836000000, next = 0;
    for (int i = 0; i < 8; i++) {
        rc = dq_cron_next(&c, z, after, &next, NULL);
        FUZZ_CHECK(rc == DQ_OK || rc == DQ_ENOTFOUND);
        if (rc != DQ_OK)
            break;
        FUZZ_CHECK(next > after);
        after = next;
    }
    dq_tz_free(z);
    return 0;
}
