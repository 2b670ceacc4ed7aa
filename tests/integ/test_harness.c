/* SPDX-License-Identifier: MIT */
/*
 * test_harness.c: tests the test fixture itself: start, unix socket, restart
 * with AOF, crash and start again, stop cleanup, two servers at once, and the
 * wait helpers. The group owns one server; tests that kill, stop or configure a
 * server start their own in f->own, which a per-test teardown always stops, so a
 * failed assertion cannot leak it.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "harness/check.h"
#include "harness/redis.h"
#include "harness/wait.h"

struct fixture {
    struct test_redis main; /* group server */
    struct test_redis own;  /* per-test server; zeroed when unused */
};

static void
assert_reply_str(redisReply *reply, int type, const char *want)
{
    assert_non_null(reply);
    assert_int_equal(reply->type, type);
    assert_string_equal(reply->str, want);
    freeReplyObject(reply);
}

static void
assert_pong(struct test_redis *r)
{
    const char *ping[] = {"PING"};

    assert_reply_str(test_redis_cmd(r, 1, ping), REDIS_REPLY_STATUS, "PONG");
}

static bool
path_gone(const char *path)
{
    struct stat st;

    return stat(path, &st) != 0 && errno == ENOENT;
}

static void
start_or_skip(struct test_redis *r, const char *const *extra)
{
    int rc = test_redis_start(r, extra);

    if (rc == TEST_REDIS_SKIP)
        exit(77);
    assert_int_equal(rc, 0);
}

static void
start_answers_ping(void **state)
{
    struct test_redis *r = &((struct fixture *)*state)->main;

    assert_true(r->pid > 0);
    assert_true(r->port > 0 && r->port != 6379);
    assert_pong(r);
    assert_true(strncmp(r->url, "redis://127.0.0.1:", 18) == 0);
    assert_int_equal(atoi(r->url + 18), r->port);
}

static void
unix_socket_answers_ping(void **state)
{
    struct test_redis *r = &((struct fixture *)*state)->main;
    struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    redisContext *c;

    assert_true(strncmp(r->sock, r->dir, strlen(r->dir)) == 0);
    assert_true(strncmp(r->unix_url, "unix://", 7) == 0);
    assert_string_equal(r->unix_url + 7, r->sock);

    c = redisConnectUnixWithTimeout(r->sock, tv);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    assert_reply_str(redisCommand(c, "PING"), REDIS_REPLY_STATUS, "PONG");
    redisFree(c);
}

static void
restart_keeps_aof_data(void **state)
{
    static const char *const extra[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    const char *set[] = {"SET", "k", "v"};
    const char *get[] = {"GET", "k"};
    const char *cfg[] = {"CONFIG", "GET", "appendonly"};
    struct fixture *f = *state;
    struct test_redis *aof = &f->own;
    pid_t old_pid;
    int old_port;
    char dir[sizeof aof->dir];
    redisReply *reply;

    start_or_skip(aof, extra);

    /* the later --appendonly yes overrode the fixture's --appendonly no */
    reply = test_redis_cmd(aof, 3, cfg);
    assert_non_null(reply);
    assert_int_equal(reply->type, REDIS_REPLY_ARRAY);
    assert_int_equal(reply->elements, 2);
    assert_string_equal(reply->element[1]->str, "yes");
    freeReplyObject(reply);

    assert_reply_str(test_redis_cmd(aof, 3, set), REDIS_REPLY_STATUS, "OK");
    old_pid = aof->pid;
    old_port = aof->port;
    assert_int_equal(test_redis_restart(aof), 0);
    assert_true(aof->pid != old_pid);
    assert_int_equal(aof->port, old_port);
    assert_reply_str(test_redis_cmd(aof, 2, get), REDIS_REPLY_STRING, "v");

    /* the AOF subdirectory must go too */
    snprintf(dir, sizeof dir, "%s", aof->dir);
    test_redis_stop(aof);
    assert_true(path_gone(dir));
}

static void
kill_then_start_again(void **state)
{
    const char *ping[] = {"PING"};
    struct fixture *f = *state;
    struct test_redis *r = &f->own;
    pid_t old_pid;

    start_or_skip(r, NULL);
    old_pid = r->pid;

    test_redis_kill(r);
    assert_int_equal(r->pid, 0);
    assert_int_equal(kill(old_pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_null(test_redis_cmd(r, 1, ping));
    assert_int_equal(test_redis_int(r, 1, ping), LLONG_MIN);
    assert_false(path_gone(r->dir)); /* a crash keeps the data dir */

    assert_int_equal(test_redis_start_again(r), 0);
    assert_true(r->pid > 0 && r->pid != old_pid);
    assert_pong(r);
    test_redis_stop(r);
}

static void
stop_reaps_pid_and_removes_dir(void **state)
{
    struct fixture *f = *state;
    struct test_redis *r = &f->own;
    char dir[sizeof r->dir];
    pid_t pid;

    start_or_skip(r, NULL);
    pid = r->pid;
    snprintf(dir, sizeof dir, "%s", r->dir);
    assert_false(path_gone(dir));

    test_redis_stop(r);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_true(path_gone(dir));
    assert_int_equal(r->pid, 0);

    test_redis_stop(r); /* idempotent */
    assert_int_equal(r->pid, 0);
}

static void
two_servers_get_different_ports(void **state)
{
    const char *incr[] = {"INCR", "n"};
    struct fixture *f = *state;
    struct test_redis *first = &f->main;
    struct test_redis *second = &f->own;

    start_or_skip(second, NULL);
    assert_int_not_equal(second->port, first->port);
    assert_string_not_equal(second->dir, first->dir);
    assert_pong(first);
    assert_pong(second);
    /* separate data: a key set on one is absent on the other */
    assert_int_equal(test_redis_int(second, 2, incr), 1);
    assert_int_equal(test_redis_int(second, 2, incr), 2);
    assert_int_equal(test_redis_int(first, 2, incr), 1);
    test_redis_stop(second);
    assert_pong(first);
}

static bool
never(void *arg)
{
    (void)arg;
    return false;
}

static bool
third_call(void *arg)
{
    int *calls = arg;

    return ++*calls >= 3;
}

static void
wait_until_polls_and_times_out(void **state)
{
    int calls = 0;
    int64_t t0;
    char name[64];

    (void)state;
    assert_true(wait_until(third_call, &calls, 5000, "the third call"));
    assert_int_equal(calls, 3);

    t0 = test_mono_ms();
    assert_false(wait_until(never, NULL, 30, "nothing (expected timeout)"));
    assert_true(test_mono_ms() - t0 >= 30);

    test_queue_name(name, sizeof name, "harness");
    assert_true(strncmp(name, "t-harness-", 10) == 0);
    assert_int_equal(atol(name + 10), (long)getpid());
}

static int
setup(void **state)
{
    static struct fixture f;
    int rc = test_redis_start(&f.main, NULL);

    if (rc == TEST_REDIS_SKIP)
        exit(77);
    if (rc != 0)
        return -1;
    *state = &f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    test_redis_stop(&f->own);
    test_redis_stop(&f->main);
    return 0;
}

/* Per test: whatever a test started in f->own is stopped, pass or fail. */
static int
stop_own(void **state)
{
    test_redis_stop(&((struct fixture *)*state)->own);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(start_answers_ping),
        cmocka_unit_test(unix_socket_answers_ping),
        cmocka_unit_test_teardown(restart_keeps_aof_data, stop_own),
        cmocka_unit_test_teardown(kill_then_start_again, stop_own),
        cmocka_unit_test_teardown(stop_reaps_pid_and_removes_dir, stop_own),
        cmocka_unit_test_teardown(two_servers_get_different_ports, stop_own),
        cmocka_unit_test(wait_until_polls_and_times_out),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/harness", tests, setup, teardown);
}
