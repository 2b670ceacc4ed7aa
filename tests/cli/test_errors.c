/* SPDX-License-Identifier: MIT */
/*
 * test_errors.c: errors: failures grouped by signature, and requeue / drop scoped to a group or a
 * search text.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

/* delayq errors, and requeue / drop scoped to a group or a search text */
static void
errors_and_filtered_bulk(void **state)
{
    struct result r = {0};
    char q[96], id[16], msg[64];
    char *sig, *gid;

    (void)state;
    test_queue_name(q, sizeof q, "errors");
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "inv%d", i);
        snprintf(msg, sizeof msg, "invoice %d: total does not add up", 1000 + i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, msg, "at x()");
    }
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof id, "smtp%d", i);
        snprintf(msg, sizeof msg, "smtp \x1b[31m%d refused\nline two", i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, msg, "at send()");
    }
    RUN(&r, "errors", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 9);
    sig = json_str(r.out, "signature"); /* the largest group comes first */
    assert_string_equal(sig, "error: invoice #: total does not add up");
    assert_int_equal(json_int(r.out, "count"), 6);
    gid = json_str(r.out, "group");
    assert_int_equal(strlen(gid), 16);
    RUN(&r, "errors", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.out, "9 failed in 2 groups"));
    assert_non_null(strstr(r.out, "66.7%"));
    assert_null(strchr(r.out, '\x1b')); /* escaped, never sent to the terminal */
    /* usage errors name the option */
    RUN(&r, "requeue", "-q", q, "--group");
    ASSERT_EXIT(&r, 2);
    assert_non_null(strstr(r.err, "--group"));
    RUN(&r, "requeue", "-q", q, "--group", gid, "--match", "x");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "drop", "-q", q, "--group", "error: not a group");
    ASSERT_EXIT(&r, 1);
    assert_non_null(strstr(r.err, "no group"));
    /* requeue a group by its id, drop the rest by a search text */
    RUN(&r, "requeue", "-q", q, "--group", gid, "--delay", "1h", "--spread", "10m");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 6\n");
    RUN(&r, "drop", "-q", q, "--match", "refused");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 3\n");
    RUN(&r, "errors", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 0);
    assert_non_null(strstr(r.out, "\"groups\":[]"));
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.out, "match=refused"));
    assert_non_null(strstr(r.out, "group="));
    free(sig);
    free(gid);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_and_filtered_bulk),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/errors", tests, cli_group_setup, cli_group_teardown);
}
