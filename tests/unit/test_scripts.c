/* SPDX-License-Identifier: MIT */
/* test_scripts.c: the embedded script table: every script is there, carries its
 * contract header, and has a well-formed SHA1 (the integration tests check that
 * SCRIPT LOAD returns exactly that SHA1). */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include "dq_scripts.h"

static void
every_script_has_its_header(void **state)
{
    static const char *const words[] = {"KEYS:", "ARGV:", "Reply:", "Complexity:"};

    for (int i = 0; i < DQ_SCRIPT_COUNT; i++) {
        const struct dq_script_src *s = &dq_script_table[i];
        char first[64];

        assert_int_equal(strlen(s->text), s->len);
        /* the script's own part starts after the prelude with "-- <name>:" */
        snprintf(first, sizeof first, "\n-- %s: ", s->name);
        const char *own = strstr(s->text, first);
        if (own == NULL)
            fail_msg("script %s does not start with \"-- %s: \"", s->name, s->name);
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
            const char *at = strstr(own, words[w]);
            if (at == NULL)
                fail_msg("script %s has no %s line in its header", s->name, words[w]);
        }
    }
}

static void
sha1s_are_hex_and_distinct(void **state)
{
    for (int i = 0; i < DQ_SCRIPT_COUNT; i++) {
        const char *h = dq_script_table[i].sha1;
        assert_int_equal(strlen(h), 40);
        assert_int_equal(strspn(h, "0123456789abcdef"), 40);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(h, dq_script_table[j].sha1);
    }
}

static void
names_match_ids(void **state)
{
    assert_string_equal(dq_script_table[DQ_SCRIPT_ENQUEUE].name, "enqueue");
    assert_string_equal(dq_script_table[DQ_SCRIPT_CLAIM].name, "claim");
    assert_string_equal(dq_script_table[DQ_SCRIPT_AUDIT].name, "audit");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_script_has_its_header),
        cmocka_unit_test(sha1s_are_hex_and_distinct),
        cmocka_unit_test(names_match_ids),
    };

    return cmocka_run_group_tests_name("unit/scripts", tests, NULL, NULL);
}
