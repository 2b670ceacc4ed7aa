/* SPDX-License-Identifier: MIT */
/*
 * test_errors.c: errors: failures grouped by signature, and requeue / drop scoped to a group or a
 * search text, on one queue and on a partitioned one (PROTOCOL.md 14.7).
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

/* A queue of 4 partitions with 12 failures spread over them by their ids: "a<i>" fail
 * with one signature, "b<i>" with another, "c<i>" with a third (6, 4 and 2 of them). */
static void
make_parted_failures(const char *q)
{
    static const char *const msgs[] = {"disk 7 full", "peer 10.0.0.9 reset", "quota 3 spent"};
    static const int counts[] = {6, 4, 2};
    struct result r = {0};
    dq_client *c = lib_open();
    dq_err e = {0};
    size_t failed = 0, parts_used = 0;

    RUN(&r, "config", "-q", q, "partitions=4");
    ASSERT_EXIT(&r, 0);
    result_free(&r);
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < counts[k]; i++) {
            dq_enqueue_opts o = {0};
            dq_enqueued en;
            char id[16];
            snprintf(id, sizeof id, "%c%d", 'a' + k, i);
            o.id = id;
            if (dq_enqueue(c, q, &o, "\xc0", 1, &en, &e) != DQ_OK)
                fail_msg("dq_enqueue %s: %s", id, e.msg);
        }
    for (size_t p = 0; p < 4; p++) {
        char name[160];
        dq_claimed cl;
        if (dq_partition_name(c, q, p, name, sizeof name, &e) != DQ_OK ||
            dq_claim(c, name, DQ_CALL_MAX, 60000, WORKER, &cl, &e) != DQ_OK)
            fail_msg("partition %zu: %s", p, e.msg);
        parts_used += cl.n > 0;
        for (size_t j = 0; j < cl.n; j++) {
            if (dq_fail(c, name, &cl.tasks[j], msgs[cl.tasks[j].id[0] - 'a'], NULL, &e) != DQ_OK)
                fail_msg("dq_fail: %s", e.msg);
            failed++;
        }
        dq_claimed_free(&cl);
    }
    assert_int_equal(failed, 12);
    assert_true(parts_used >= 3); /* spread: the ids' hash is fixed */
    dq_client_free(c);
}

/* errors merges the partitions' groups; requeue --group / --match and drop --all-failed
 * act on every partition and print the exact totals */
static void
errors_and_bulk_partitioned(void **state)
{
    struct result r = {0};
    char q[96];
    char *gid;

    (void)state;
    test_queue_name(q, sizeof q, "errors_parts");
    make_parted_failures(q);
    RUN(&r, "errors", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 12);
    assert_int_equal(json_int(r.out, "count"), 6); /* the largest group first */
    gid = json_str(r.out, "group");
    RUN(&r, "errors", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "12 failed in 3 groups");
    ASSERT_HAS(r.out, "error: peer # reset");
    RUN(&r, "requeue", "-q", q, "--group", "error: peer <ip> reset");
    ASSERT_EXIT(&r, 1); /* no such signature anywhere */
    ASSERT_HAS(r.err, "no group");
    RUN(&r, "requeue", "-q", q, "--group", gid);
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 6\n");
    RUN(&r, "requeue", "-q", q, "--match", "quota");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 2\n");
    RUN(&r, "drop", "-q", q, "--all-failed");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 4\n");
    RUN(&r, "errors", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "0 failed in 0 groups");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 0);
    assert_int_equal(json_int(r.out, "due"), 8);
    free(gid);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_and_filtered_bulk),
        cmocka_unit_test(errors_and_bulk_partitioned),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/errors", tests, cli_group_setup, cli_group_teardown);
}
