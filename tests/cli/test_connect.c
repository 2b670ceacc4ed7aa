/* SPDX-License-Identifier: MIT */
/*
 * test_connect.c: connection failures: an unreachable server, a listener that never answers and a
 * paused server each end in exit 3 within the timeout, with one line naming the server.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

#include <netinet/in.h>
#include <sys/socket.h>

static void
unreachable_server(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "unreach");
    RUN(&r, "stats", "-q", q, "--url", "redis://127.0.0.1:1");
    ASSERT_EXIT(&r, 3);
    assert_true(r.elapsed_ms < 5000);
    assert_int_equal(r.out_len, 0);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "127.0.0.1:1");

    RUN(&r, "enqueue", "-q", q, "--url=redis://127.0.0.1:1", "--json", "1");
    ASSERT_EXIT(&r, 3);
    assert_one_line(&r);

    RUN(&r, "stats", "-q", q, "--url", "bogus://x");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "bogus");
    assert_one_line(&r);
    RUN(&r, "stats", "-q", q, "--timeout", "0");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "stats", "-q", q, "--timeout", "5x");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--timeout");

    /* the environment gives the URL, and --url wins over it */
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    run_full(ARGV("DELAYQ_URL=redis://127.0.0.1:1"), NULL, 0,
             ARGV("stats", "-q", q, "--url", cli_redis.url, "--json"), RUN_TIMEOUT_MS, &r);
    ASSERT_EXIT(&r, 0);
    run_full(ARGV("DELAYQ_URL=redis://127.0.0.1:1"), NULL, 0, ARGV("stats", "-q", q),
             RUN_TIMEOUT_MS, &r);
    ASSERT_EXIT(&r, 3);
    result_free(&r);
}

/* A loopback listener that never accepts: the TCP connect succeeds, nothing answers. */
static void
silent_listener(void **state)
{
    struct result r = {0};
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t alen = sizeof a;
    char url[64], q[96];
    int fd;

    (void)state;
    test_queue_name(q, sizeof q, "silent");
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", ntohs(a.sin_port));

    RUN(&r, "stats", "-q", q, "--url", url, "--timeout", "300ms");
    close(fd);
    ASSERT_EXIT(&r, 3);
    assert_true(r.elapsed_ms < 2000);
    assert_one_line(&r);
    result_free(&r);
}

static bool
server_answers(void *arg)
{
    const char *argv[] = {"PING"};
    redisReply *rep = test_redis_cmd(arg, 1, argv);
    bool ok = rep != NULL && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "PONG") == 0;

    if (rep != NULL)
        freeReplyObject(rep);
    return ok;
}

static void
paused_server_times_out(void **state)
{
    struct result r = {0};
    const char *pause[] = {"CLIENT", "PAUSE", "2000"};
    const char *unpause[] = {"CLIENT", "UNPAUSE"};
    redisReply *rep;
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "paused");
    RUN(&r, "enqueue", "-q", q, "--json", "1"); /* "works again" below needs a queue */
    ASSERT_EXIT(&r, 0);
    rep = test_redis_cmd(&cli_redis, 3, pause);
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_STATUS);
    freeReplyObject(rep);

    RUN(&r, "stats", "-q", q, "--timeout", "200ms");

    /* Unpause before asserting, so a failure here cannot stall the other tests. */
    rep = test_redis_cmd(&cli_redis, 2, unpause);
    if (rep != NULL)
        freeReplyObject(rep);
    assert_true(wait_until(server_answers, &cli_redis, 5000, "redis to answer PING again"));

    ASSERT_EXIT(&r, 3);
    if (r.elapsed_ms >= 1500)
        fail_msg("took %lld ms with --timeout 200ms", (long long)r.elapsed_ms);
    assert_one_line(&r);
    assert_int_equal(r.out_len, 0);

    /* and it works again afterwards */
    RUN(&r, "stats", "-q", q, "--timeout", "2s", "--json");
    ASSERT_EXIT(&r, 0);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unreachable_server),
        cmocka_unit_test(silent_listener),
        cmocka_unit_test(paused_server_times_out),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/connect", tests, cli_group_setup, cli_group_teardown);
}
