/* SPDX-License-Identifier: MIT */
/*
 * test_ls.c: ls: the views, their order and paging, human and JSON.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

/* Asserts the ids appear in @out in this order. */
static void
assert_order(const char *out, const char *const *ids, size_t n)
{
    const char *prev = out;

    for (size_t i = 0; i < n; i++) {
        char pat[64];
        const char *p;

        snprintf(pat, sizeof pat, "\n%s ", ids[i]);
        p = strstr(out, pat);
        if (p == NULL || p < prev)
            fail_msg("%s missing or out of order in:\n%s", ids[i], esc(out, strlen(out)));
        prev = p;
    }
}

static void
ls_views_and_paging(void **state)
{
    struct result r = {0};
    char q[96], line[4096];
    static const char *const due_ids[] = {"d1", "d2", "d3", "d4", "d5"};

    (void)state;
    test_queue_name(q, sizeof q, "ls");
    lib_make_failed(q, "gone", mp_map_kind, sizeof mp_map_kind - 1, "smtp said no", "at send()");
    lib_make_inflight(q, "busy");
    for (size_t i = 0; i < 5; i++) {
        RUN(&r, "enqueue", "-q", q, "--id", due_ids[i], "--json", "{\"n\":1}");
        ASSERT_EXIT(&r, 0);
    }
    RUN(&r, "enqueue", "-q", q, "--id", "soon", "--delay", "1h", "--json", "{\"n\":2}");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_true(strncmp(r.out, "ID ", 3) == 0);
    ASSERT_HAS(r.out, "OVERDUE");
    assert_int_equal(count_lines(r.out), 6);
    assert_order(r.out, due_ids, 5);
    ASSERT_LACKS(r.out, "soon");
    ASSERT_LACKS(r.out, "busy");
    ASSERT_LACKS(r.out, "gone");

    RUN(&r, "ls", "due", "-q", q, "--limit", "2", "--offset", "1");
    ASSERT_EXIT(&r, 0);
    assert_order(r.out, due_ids + 1, 2);
    ASSERT_LACKS(r.out, "d1 ");
    ASSERT_LACKS(r.out, "d4 ");
    ASSERT_HAS(r.out, "(2 of 5 shown, from offset 1)");

    RUN(&r, "ls", "due", "-q", q, "--json", "--limit=2", "--offset=3");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 2);
    assert_json_safe("ls due --json", r.out, r.out_len);
    for (size_t i = 0; i < 2; i++) {
        assert_true(nth_line(r.out, i, line, sizeof line));
        assert_int_equal(line[0], '{');
        assert_int_equal(line[strlen(line) - 1], '}');
        char *jid = json_str(line, "id");
        assert_string_equal(jid, due_ids[3 + i]);
        free(jid);
        ASSERT_HAS(line, "\"state\":\"scheduled\"");
    }
    RUN(&r, "ls", "due", "-q", q, "--offset", "5");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 2); /* header and "(0 of 5 shown ...)" */

    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "DUE IN");
    ASSERT_HAS(r.out, "\nsoon ");
    ASSERT_LACKS(r.out, "d1");

    RUN(&r, "ls", "inflight", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\nbusy ");
    ASSERT_HAS(r.out, "[" WORKER "]");
    assert_int_equal(count_lines(r.out), 2);
    RUN(&r, "ls", "in-flight", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"state\":\"inflight\"");
    ASSERT_HAS(r.out, "\"worker\":\"" WORKER "\"");
    ASSERT_HAS(r.out, "\"lease_expired\":false");

    RUN(&r, "ls", "failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "REASON: ERROR");
    ASSERT_HAS(r.out, "\ngone ");
    ASSERT_HAS(r.out, "error: smtp said no");
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"id\":\"gone\"");
    ASSERT_HAS(r.out, "\"error\":\"smtp said no\"");
    ASSERT_HAS(r.out, "\"payload\":{\"kind\":\"email\"}");

    /* usage errors */
    RUN(&r, "ls", "pending", "-q", q);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "pending");
    assert_int_equal(r.out_len, 0);
    RUN(&r, "ls", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "ls", "due", "-q", q, "--limit", "0");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--limit");
    RUN(&r, "ls", "due", "-q", q, "--limit", "1001");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "ls", "due", "-q", q, "--offset", "-1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "ls", "due", "future", "-q", q);
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ls_views_and_paging),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/ls", tests, cli_group_setup, cli_group_teardown);
}
