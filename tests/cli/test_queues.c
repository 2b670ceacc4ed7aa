/* SPDX-License-Identifier: MIT */
/*
 * test_queues.c: queues: the registry listing, --invalid and --forget of foreign members, and
 * operator commands on a queue nothing has made.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

static void
queues_lists_used_queues(void **state)
{
    struct result r = {0};
    char q[96], line[200];

    (void)state;
    test_queue_name(q, sizeof q, "queues");
    lib_make_failed(q, "f1", mp_map_kind, sizeof mp_map_kind - 1, "boom", "at x()");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "2");
    ASSERT_EXIT(&r, 0);

    /* --counts: the table by name that was the default before the overview */
    RUN(&r, "queues", "--counts");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "QUEUE ");
    snprintf(line, sizeof line, "\n%-32s %10d %10d %10d %10d\n", q, 1, 1, 0, 1);
    ASSERT_HAS(r.out, line);
    assert_terminal_safe("queues --counts", r.out, r.out_len);
    RUN(&r, "queues", "--counts", "--json");
    ASSERT_EXIT(&r, 0);
    snprintf(line, sizeof line,
             "{\"queue\":\"%s\",\"due\":1,\"future\":1,\"inflight\":0,\"failed\":1}\n", q);
    ASSERT_HAS(r.out, line);

    /* the overview: the same four counts first in --json, then the verdict and the rest */
    RUN(&r, "queues");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "LVL  QUEUE ");
    assert_terminal_safe("queues", r.out, r.out_len);
    RUN(&r, "queues", "--json");
    ASSERT_EXIT(&r, 0);
    assert_json_safe("queues --json", r.out, r.out_len);
    snprintf(line, sizeof line,
             "{\"queue\":\"%s\",\"due\":1,\"future\":1,\"inflight\":0,\"failed\":1,", q);
    ASSERT_HAS(r.out, line);

    /* stats of a typo is not a use: refused, and the queue list does not grow */
    RUN(&r, "stats", "-q", "no-such-queue-typo");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "queue \"no-such-queue-typo\" is not known on ");
    RUN(&r, "queues");
    ASSERT_LACKS(r.out, "no-such-queue-typo");

    RUN(&r, "queues", "--forget", q);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "queues");
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, q);
    RUN(&r, "queues", "--forget", "");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "queues", "--bogus");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

/* SADD of raw bytes (a foreign write) to the registry. */
static void
registry_add_raw(const char *member, size_t len)
{
    redisContext *c = redisConnect("127.0.0.1", cli_redis.port);
    const char *argv[3] = {"SADD", "dq:queues", member};
    size_t lens[3] = {4, 9, len};

    assert_non_null(c);
    assert_int_equal(c->err, 0);
    redisReply *rep = redisCommandArgv(c, 3, argv, lens);
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
    freeReplyObject(rep);
    redisFree(c);
}

/* Members of the registry that are no valid queue names (a foreign write: too long, a
 * space, a NUL) are listed by --invalid, escaped, and --forget removes each, named as
 * shown; a NUL member is no longer listed as the name before its NUL. */
static void
queues_forget_any_member(void **state)
{
    struct result r = {0};
    char q[96], nul[128], longname[151];
    (void)state;

    test_queue_name(q, sizeof q, "regjunk");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    int n = snprintf(nul, sizeof nul, "%s", q);
    memcpy(nul + n, "\0evil", 5);
    registry_add_raw(nul, (size_t)n + 5);
    memset(longname, 'L', 150);
    longname[150] = '\0';
    registry_add_raw(longname, 150);
    registry_add_raw("q x\x1b[2J", 7);

    RUN(&r, "queues");
    ASSERT_EXIT(&r, 0);
    const char *first = strstr(r.out, q);
    assert_non_null(first);
    assert_null(strstr(first + strlen(q), q)); /* listed once, not twice */

    RUN(&r, "queues", "--invalid");
    ASSERT_EXIT(&r, 0);
    assert_terminal_safe("queues --invalid", r.out, r.out_len);
    ASSERT_HAS(r.out, "q x\\e[2J  (7 bytes)\n");
    ASSERT_HAS(r.out, "\\x00evil  (");
    ASSERT_HAS(r.out, longname);
    ASSERT_HAS(r.out, "(3 of ");

    char shown[160];
    snprintf(shown, sizeof shown, "%s\\x00evil", q);
    RUN(&r, "queues", "--forget", shown);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "forgot registry member ");
    RUN(&r, "queues", "--forget", longname);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "queues", "--forget", "q x\\e[2J");
    ASSERT_EXIT(&r, 0);
    /* gone: a second forget says so; a bad escape is a usage error */
    RUN(&r, "queues", "--forget", "q x\\e[2J");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not in the registry");
    RUN(&r, "queues", "--forget", "q\\q");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "queues", "--invalid", "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.out_len, 0);
    /* the valid queue is still there */
    RUN(&r, "queues");
    ASSERT_HAS(r.out, q);
    result_free(&r);
}

/* An operator command on a queue nothing has made is a typo until shown otherwise: exit
 * 1 naming the queue, the server and the close registered name, never an empty answer
 * ("requeued 0", "all well"). Known means registered or having any key. */
static void
unknown_queues_are_named(void **state)
{
    static const char *const cmds[][4] = {
        {"stats"},         {"stats", "--check"}, {"stats", "--json"}, {"ls", "due"},
        {"show", "7"},     {"requeue", "--all"}, {"requeue", "7"},    {"drop", "--all-failed"},
        {"pause"},         {"resume"},           {"config"},          {"errors"},
        {"export", "due"}, {"workers"},          {"audit"},
    };
    struct result r = {0};
    char q[96], typo[96], want[3000], cmd[64], other[96];
    const char *where = cli_redis.url + strlen("redis://");

    (void)state;
    test_queue_name(q, sizeof q, "billing");
    test_queue_name(typo, sizeof typo, "billng");
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "1");
    ASSERT_EXIT(&r, 0);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *const *c = cmds[i];
        RUN(&r, c[0], c[1] ? c[1] : "-q", c[1] ? "-q" : typo, c[1] ? typo : NULL);
        snprintf(cmd, sizeof cmd, "%s%s%s", c[0], c[1] ? " " : "", c[1] ? c[1] : "");
        if (r.status != 1)
            fail_msg("%s: exit %d, want 1 (stderr: %s)", cmd, r.status, r.err);
        snprintf(want, sizeof want,
                 "delayq %s: queue \"%s\" is not known on %s (did you mean %s?)\n", c[0], typo,
                 where, q);
        if (strcmp(r.err, want) != 0)
            fail_msg("%s: stderr\n%s\nwant\n%s", cmd, r.err, want);
        assert_int_equal(r.out_len, 0);
    }
    /* nothing close: some registered names instead */
    RUN(&r, "stats", "-q", "zz-nothing-like-it");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "queue \"zz-nothing-like-it\" is not known on ");
    ASSERT_HAS(r.err, " (known: ");
    /* none of it made the typo a queue */
    RUN(&r, "queues");
    ASSERT_LACKS(r.out, typo);

    /* known without the registry: its keys exist (forgotten, or an SADD that failed) */
    RUN(&r, "queues", "--forget", q);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "future"), 1);
    /* and registered without keys (a worker that never got a task) */
    test_queue_name(other, sizeof other, "idle");
    const char *sadd[] = {"SADD", "dq:queues", other};
    assert_int_equal(test_redis_int(&cli_redis, 3, sadd), 1);
    RUN(&r, "ls", "due", "-q", other);
    ASSERT_EXIT(&r, 0);
    /* config with FIELD=VALUE prepares a new queue; reading it back then works */
    test_queue_name(other, sizeof other, "prepared");
    RUN(&r, "config", "-q", other, "max_attempts=3");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", other, "--check");
    ASSERT_EXIT(&r, 0);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queues_lists_used_queues),
        cmocka_unit_test(queues_forget_any_member),
        cmocka_unit_test(unknown_queues_are_named),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/queues", tests, cli_group_setup, cli_group_teardown);
}
