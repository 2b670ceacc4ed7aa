/* SPDX-License-Identifier: MIT */
/*
 * test_pages.c: the pure side of merged pages (src/lib/pages.c): the cursor's text form
 * that `delayq ls --after` takes and prints, read back exactly, and refused with the
 * option's name when it is not one.
 */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include "delayq.h"
#include "lib/pages.h"

static void
round_trip(const char *text, size_t n)
{
    dq_page_cursor cur;
    dq_err err = {0};
    char buf[256];

    if (dq_page_cursor_parse(text, "--after", &cur, &err) != DQ_OK)
        fail_msg("\"%s\": %s", text, err.msg);
    assert_int_equal(cur.n, n);
    assert_int_equal(dq_page_cursor_format(&cur, buf, sizeof buf), strlen(text));
    assert_string_equal(buf, text);
    dq_page_cursor_free(&cur);
}

static void
cursor_text_round_trips(void **state)
{
    (void)state;
    round_trip("0", 1);
    round_trip("40", 1);
    round_trip("12.9.10.9", 4);
    round_trip("0.0.1099511627776", 3); /* 2^40, the largest rank */
}

static void
cursor_text_refused(void **state)
{
    const char *bad[] = {"", ".", "1.", ".1", "1..2", "1.x", "-1", "1 2", "+3", "1099511627777"};
    dq_page_cursor cur;
    dq_err err = {0};
    char many[1024] = "0";

    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (dq_page_cursor_parse(bad[i], "--after", &cur, &err) != DQ_EINVAL)
            fail_msg("\"%s\" was read as a cursor", bad[i]);
        assert_null(cur.at);
        assert_int_equal(cur.n, 0);
        assert_non_null(strstr(err.msg, "--after"));
    }
    for (int i = 1; i <= DQ_PARTITIONS_MAX; i++) /* one rank past the most partitions */
        strcat(many, ".0");
    assert_int_equal(dq_page_cursor_parse(many, "--after", &cur, &err), DQ_EINVAL);
    many[strlen(many) - 2] = '\0';
    assert_int_equal(dq_page_cursor_parse(many, "--after", &cur, &err), DQ_OK);
    assert_int_equal(cur.n, DQ_PARTITIONS_MAX);
    dq_page_cursor_free(&cur);
    dq_page_cursor_free(NULL);
}

static void
format_truncates_like_snprintf(void **state)
{
    int64_t at[] = {123, 45, 6};
    dq_page_cursor cur = {at, 3}, none = {0};
    char buf[6];

    (void)state;
    assert_int_equal(dq_page_cursor_format(&cur, buf, sizeof buf), 8); /* "123.45.6" */
    assert_string_equal(buf, "123.4");
    assert_int_equal(dq_page_cursor_format(&none, buf, sizeof buf), 1);
    assert_string_equal(buf, "0");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cursor_text_round_trips),
        cmocka_unit_test(cursor_text_refused),
        cmocka_unit_test(format_truncates_like_snprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
