/* SPDX-License-Identifier: MIT */
/*
 * test_schedule.c: the list of firings a cron schedule keeps (src/lib/schedule.c,
 * dq_schedule_fires), worked out from a fixed clock, against hand-worked UTC instants
 * across both DST changes of Europe/Berlin in 2026 (29 March, 25 October): a daily
 * 02:30 falls in the spring gap (fires once, at its end: 03:00 CEST) and in the autumn
 * overlap (fires once, at the first 02:30). Pure: no server.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "delayq.h"
#include "lib/dur.h"
#include "lib/schedule.h"

static int64_t
utc_ms(int y, int mo, int d, int h, int mi)
{
    return (dq_dur_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60) * 1000;
}

static void
spring_gap(void **state)
{
    (void)state;
    int64_t t[DQ_SCHEDULE_FIRES];
    dq_err err = {0};
    /* the fixed clock: 26 March 2026, 12:00Z */
    int n = dq_schedule_fires("30 2 * * *", "Europe/Berlin", utc_ms(2026, 3, 26, 12, 0),
                              DQ_SCHEDULE_FIRES, t, &err);
    assert_int_equal(n, DQ_SCHEDULE_FIRES);
    assert_int_equal(t[0], utc_ms(2026, 3, 27, 1, 30)); /* CET, UTC+1 */
    assert_int_equal(t[1], utc_ms(2026, 3, 28, 1, 30));
    assert_int_equal(t[2], utc_ms(2026, 3, 29, 1, 0));  /* 02:30 is skipped: 03:00 CEST */
    assert_int_equal(t[3], utc_ms(2026, 3, 30, 0, 30)); /* CEST, UTC+2 */
    for (int i = 4; i < n; i++)
        assert_int_equal(t[i], t[i - 1] + 86400000); /* once a day, no second run */
}

static void
autumn_overlap(void **state)
{
    (void)state;
    int64_t t[DQ_SCHEDULE_FIRES];
    dq_err err = {0};
    int n =
        dq_schedule_fires("30 2 * * *", "Europe/Berlin", utc_ms(2026, 10, 23, 12, 0), 4, t, &err);
    assert_int_equal(n, 4);
    assert_int_equal(t[0], utc_ms(2026, 10, 24, 0, 30)); /* CEST */
    /* 02:30 comes twice on the 25th (00:30Z CEST, 01:30Z CET): it fires once, first */
    assert_int_equal(t[1], utc_ms(2026, 10, 25, 0, 30));
    assert_int_equal(t[2], utc_ms(2026, 10, 26, 1, 30)); /* CET */
    assert_int_equal(t[3], utc_ms(2026, 10, 27, 1, 30));
}

static void
hourly_through_the_gap(void **state)
{
    (void)state;
    int64_t t[DQ_SCHEDULE_FIRES];
    dq_err err = {0};
    /* every hour at :15 from 29 March 00:00Z (01:00 CET): 01:15 CET; 02:15 never is, so
     * it fires at the gap's end, 03:00 CEST; then 03:15 CEST as usual */
    int n = dq_schedule_fires("15 * * * *", "Europe/Berlin", utc_ms(2026, 3, 29, 0, 0), 3, t, &err);
    assert_int_equal(n, 3);
    assert_int_equal(t[0], utc_ms(2026, 3, 29, 0, 15));
    assert_int_equal(t[1], utc_ms(2026, 3, 29, 1, 0));
    assert_int_equal(t[2], utc_ms(2026, 3, 29, 1, 15));
}

static void
bad_input(void **state)
{
    (void)state;
    int64_t t[DQ_SCHEDULE_FIRES];
    dq_err err = {0};
    assert_int_equal(dq_schedule_fires("0 24 * * *", NULL, 0, 1, t, &err), DQ_EINVAL);
    assert_string_equal(err.msg, "cron: hour 24 is out of range 0-23");
    assert_int_equal(dq_schedule_fires("0 1 * * *", "Mars/Olympus", 0, 1, t, &err), DQ_EINVAL);
    /* more than the list holds is cut to DQ_SCHEDULE_FIRES, not an overrun */
    assert_int_equal(dq_schedule_fires("* * * * *", "UTC", 0, 100, t, &err), DQ_SCHEDULE_FIRES);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spring_gap),
        cmocka_unit_test(autumn_overlap),
        cmocka_unit_test(hourly_through_the_gap),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
