/* SPDX-License-Identifier: MIT */
/*
 * check.h: the one way tests include cmocka. cmocka.h needs these headers first
 * and does not include them itself.
 */
#ifndef DQ_HARNESS_CHECK_H
#define DQ_HARNESS_CHECK_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

/* DQ_TEST_FILTER=PATTERN runs only the test cases of this executable whose names match
 * (cmocka's pattern: * and ?), so one case can be run alone; every test main calls this
 * before cmocka_run_group_tests. */
static inline void
test_filter_from_env(void)
{
    const char *f = getenv("DQ_TEST_FILTER");

    if (f != NULL && f[0] != '\0')
        cmocka_set_test_filter(f);
}

#endif /* DQ_HARNESS_CHECK_H */
