/* SPDX-License-Identifier: MIT */
/*
 * test_config.c: config: reading and writing a queue's settings, and the trim they cause.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

static void
config_read_and_write(void **state)
{
    struct result r = {0};
    char q[96], id[16];

    (void)state;
    test_queue_name(q, sizeof q, "config");
    /* reading the config of a queue nothing made is a typo; setting it makes the queue */
    RUN(&r, "config", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not known on ");
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "1"); /* never claimed below */
    ASSERT_EXIT(&r, 0);
    RUN(&r, "config", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "failed_retention  100000\n");
    ASSERT_HAS(r.out, "max_payload       1048576\n");
    ASSERT_HAS(r.out, "max_delay_ms      604800000 (7d00h)\n");

    RUN(&r, "config", "-q", q, "failed_retention=3", "--who", "cfg-op");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "failed_retention  3\n");
    RUN(&r, "config", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed_retention"), 3);
    assert_int_equal(json_int(r.out, "max_payload"), 1048576);
    /* a field named *_ms takes a bare number as milliseconds, and a duration */
    RUN(&r, "config", "-q", q, "backoff_base_ms=50");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "backoff_base_ms   50 (50ms)\n");
    RUN(&r, "config", "-q", q, "backoff_base_ms=1s");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "backoff_base_ms   1000 (1s)\n");

    /* bad fields and values are usage errors and change nothing */
    RUN(&r, "config", "-q", q, "no_such_field=1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "no_such_field");
    RUN(&r, "config", "-q", q, "failed_retention=abc");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "failed_retention");
    RUN(&r, "config", "-q", q, "failed_retention=0");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "config", "-q", q, "max_delay_ms=5x");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_delay_ms");
    RUN(&r, "config", "-q", q, "max_payload=1099511627776"); /* past the script's range */
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_payload");
    RUN(&r, "config", "-q", q, "failed_retention=5", "max_payload=1099511627776");
    ASSERT_EXIT(&r, 2); /* all or nothing */
    RUN(&r, "config", "-q", q, "failed_retention");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "config", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed_retention"), 3);
    assert_int_equal(json_int(r.out, "max_payload"), 1048576);

    /* the limit is enforced: five failures, three kept, two trimmed */
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "ret%d", i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, "x", "");
    }
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 3);
    ASSERT_HAS(r.out, "\"id\":\"ret4\""); /* newest kept */
    ASSERT_LACKS(r.out, "\"id\":\"ret0\"");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(json_find(r.out, "counters"), "trimmed"), 2);

    /* durations take units, and enqueue enforces the queue's own limit */
    RUN(&r, "config", "-q", q, "max_delay_ms=1h");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "max_delay_ms      3600000 (1h00m)\n");
    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_delay_ms");

    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "  cfg-op  config  failed_retention=3  -> ok");
    result_free(&r);
}

/* Keys of the private server that match @pattern. */
static long long
keys_matching(const char *pattern)
{
    const char *argv[] = {"KEYS", pattern};
    redisReply *r = test_redis_cmd(&cli_redis, 2, argv);
    long long n;

    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

static void
config_partitions(void **state)
{
    struct result r = {0};
    char q[96], pat[128];

    (void)state;
    test_queue_name(q, sizeof q, "cfgparts");
    snprintf(pat, sizeof pat, "dq:{%s~*", q);
    /* out of range, or with a bad field beside it: usage errors, nothing written anywhere */
    RUN(&r, "config", "-q", q, "partitions=300");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "partitions: 300 is not in 1..256");
    RUN(&r, "config", "-q", q, "partitions=0");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "partitions");
    RUN(&r, "config", "-q", q, "partitions=4", "max_payload=1099511627776");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_payload");
    assert_int_equal(keys_matching(pat), 0);
    /* partitions 1 is today's layout: no map */
    RUN(&r, "config", "-q", q, "partitions=1");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "partitions        1\n");
    snprintf(pat, sizeof pat, "dq:{%s}:parts", q);
    assert_int_equal(keys_matching(pat), 0);
    RUN(&r, "config", "-q", q, "partitions=4", "max_attempts=3");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "partitions        4\n");
    ASSERT_HAS(r.out, "max_attempts      3\n");
    assert_int_equal(keys_matching(pat), 1);
    RUN(&r, "config", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "partitions"), 4);
    /* the partitions are not queues of their own: the registry lists only the queue */
    RUN(&r, "queues", "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, "~1.0");
    RUN(&r, "stats", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "partitions   4 on 1 node\n");
    /* delayq import into a partitioned queue: each task where enqueue would put it, and
     * show finds every one (exported from a plain queue: generated and caller ids) */
    char plain[96], id[16];
    test_queue_name(plain, sizeof plain, "cfgplain");
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "imp-%d", i);
        RUN(&r, "enqueue", "-q", plain, "--delay", "1h", "--json", "1");
        ASSERT_EXIT(&r, 0);
        RUN(&r, "enqueue", "-q", plain, "--delay", "1h", "--id", id, "--json", "2");
        ASSERT_EXIT(&r, 0);
    }
    RUN(&r, "export", "future", "-q", plain);
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 40);
    char *file = strdup(r.out);
    assert_non_null(file);
    RUN_IN(&r, file, strlen(file), "import", "-q", q);
    ASSERT_EXIT(&r, 0);
    free(file);
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "future"), 40);
    for (int i = 0; i < 20; i++) {
        char gen[16];
        snprintf(id, sizeof id, "imp-%d", i);
        snprintf(gen, sizeof gen, "%d", 2 * i + 1);
        RUN(&r, "show", "-q", q, id);
        ASSERT_EXIT(&r, 0);
        RUN(&r, "show", "-q", q, gen);
        ASSERT_EXIT(&r, 0);
    }
    /* the caller ids went to their partitions (not all to partition 0) */
    snprintf(pat, sizeof pat, "dq:{%s~*}:ids", q);
    assert_true(keys_matching(pat) >= 1);
    /* a user never names a partition */
    snprintf(pat, sizeof pat, "%s~1.0", q);
    RUN(&r, "stats", "-q", pat);
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_read_and_write),
        cmocka_unit_test(config_partitions),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/config", tests, cli_group_setup, cli_group_teardown);
}
