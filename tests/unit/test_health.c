/* SPDX-License-Identifier: MIT */
/* test_health.c: the queue's verdict line (fmt/health.c). Pure. */
#include "harness/check.h"

#include <string.h>

#include "fmt/health.h"

static void
all_well_in_one_phrase(void **state)
{
    dq_stats s = {.due = 3, .oldest_due_age_ms = 2000};
    struct dq_health_facts f = {.stats = &s, .max_oldest_due_ms = 60000, .fail_rate = 0};
    char buf[256];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
    assert_string_equal(buf, "all well");
}

static void
problems_worst_first(void **state)
{
    dq_stats s = {
        .due = 40, .oldest_due_age_ms = 300000, .expired_leases = 3, .far_future = 120000};
    struct dq_health_facts f = {.stats = &s,
                                .max_oldest_due_ms = 60000,
                                .max_far_future = 100000,
                                .used_memory = 91,
                                .maxmemory = 100,
                                .memory_warn_pct = 90,
                                .fail_rate = 12};
    char buf[512];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_BAD);
    assert_string_equal(buf, "oldest due has waited 5m00s (limit 1m00s); 3 leases expired: "
                             "workers died holding tasks (x recovers); failing 12.0/s; "
                             "far-future backlog 120000 over 100000; Redis memory 91% of "
                             "maxmemory");
}

static void
warnings_alone_and_checks_off(void **state)
{
    dq_stats s = {.far_future = 5};
    struct dq_health_facts f = {.stats = &s, .max_far_future = 4, .fail_rate = -1};
    char buf[64], tiny[12];

    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_WARN);
    assert_string_equal(buf, "far-future backlog 5 over 4");
    f.max_far_future = 0; /* a zero threshold is no check */
    assert_int_equal(dq_health_verdict(&f, buf, sizeof buf), DQ_HEALTH_OK);
    /* a small buffer still ends in a NUL and keeps the worst level */
    s.expired_leases = 1;
    assert_int_equal(dq_health_verdict(&f, tiny, sizeof tiny), DQ_HEALTH_BAD);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_well_in_one_phrase),
        cmocka_unit_test(problems_worst_first),
        cmocka_unit_test(warnings_alone_and_checks_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
