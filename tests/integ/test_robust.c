/* SPDX-License-Identifier: MIT */
/*
 * test_robust.c: what goes wrong around the queue: keys of the wrong type, a script
 * flush, a Redis restart under a connected client, an unreachable server, a stalled
 * server past the command timeout, passwords, db numbers and unix sockets.
 */
#include "harness/fixture.h"

#include "dq_scripts.h"

static void
every_script_compiles_with_the_sha1_we_embed(void **state)
{
    struct test_redis *r = *state;

    for (int i = 0; i < DQ_SCRIPT_COUNT; i++) {
        const struct dq_script_src *s = &dq_script_table[i];
        const char *argv[] = {"SCRIPT", "LOAD", s->text};
        redisReply *rep = test_redis_cmd(r, 3, argv);
        assert_non_null(rep);
        if (rep->type != REDIS_REPLY_STRING || strcmp(rep->str, s->sha1) != 0)
            fail_msg("script %s: %s", s->name, rep->str ? rep->str : "(no reply)");
        freeReplyObject(rep);
    }
}

static void
wrong_type_key_is_a_clear_error(void **state)
{
    struct fixture f;
    dq_stats s;
    char key[160];

    fixture_open(&f, state, "wrongtype");
    snprintf(key, sizeof key, "dq:{%s}:sched", f.queue);
    const char *set[] = {"SET", key, "not a zset"};
    redisReply *r = test_redis_cmd(f.redis, 3, set);
    assert_non_null(r);
    freeReplyObject(r);
    dq_enqueue_opts o = {0};
    dq_enqueued e;
    assert_int_equal(dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err), DQ_EREDIS);
    assert_non_null(strstr(f.err.msg, "WRONGTYPE"));
    assert_null(strstr(f.err.msg, "@user_script")); /* our internals stay out of it */
    assert_int_equal(dq_stats_get(f.c, f.queue, &s, &f.err), DQ_EREDIS);
    fixture_close(&f);
}

static void
wrong_type_mid_script_loses_nothing(void **state)
{
    struct fixture f;
    dq_claimed cl;
    dq_page p;
    char key[160];

    fixture_open(&f, state, "midscript");
    enqueue_str(&f, "precious", 0, NULL, NULL);
    snprintf(key, sizeof key, "dq:{%s}:running", f.queue);
    const char *set[] = {"SET", key, "oops"};
    redisReply *r = test_redis_cmd(f.redis, 3, set);
    freeReplyObject(r);
    /* the claim fails on its first write, before the task leaves the scheduled set */
    assert_int_equal(dq_claim(f.c, f.queue, 10, 30000, "w1", &cl, &f.err), DQ_EREDIS);
    assert_non_null(strstr(f.err.msg, "WRONGTYPE"));
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 10, &p, &f.err));
    assert_int_equal(p.n, 1);
    assert_memory_equal(p.tasks[0].payload, "precious", 8);
    dq_page_free(&p);
    fixture_close(&f);
}

static void
script_flush_is_survived(void **state)
{
    struct fixture f;
    dq_stats s;
    const char *flush[] = {"SCRIPT", "FLUSH"};

    fixture_open(&f, state, "flush");
    enqueue_str(&f, "a", 0, NULL, NULL);
    redisReply *r = test_redis_cmd(f.redis, 2, flush);
    assert_non_null(r);
    freeReplyObject(r);
    enqueue_str(&f, "b", 0, NULL, NULL);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due, 2);
    fixture_close(&f);
}

struct stats_ok {
    struct fixture *f;
    dq_stats s;
};

static bool
stats_ok(void *arg)
{
    struct stats_ok *so = arg;
    return dq_stats_get(so->f->c, so->f->queue, &so->s, &so->f->err) == DQ_OK;
}

static void
restart_under_a_client(void **state)
{
    struct fixture f;
    struct test_redis own;
    const char *aof[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    dq_client_opts o = {.command_timeout_ms = 500, .connect_timeout_ms = 500};

    assert_int_equal(test_redis_start(&own, aof), 0);
    memset(&f, 0, sizeof f);
    f.redis = &own;
    snprintf(f.queue, sizeof f.queue, "restart");
    ASSERT_OK(&f, dq_client_open(own.url, &o, &f.c, &f.err));
    enqueue_str(&f, "kept", 0, NULL, NULL);
    test_redis_kill(&own);
    int64_t t0 = test_mono_ms();
    dq_stats s;
    int rc = dq_stats_get(f.c, f.queue, &s, &f.err);
    assert_true(rc == DQ_ECONN || rc == DQ_ETIMEOUT);
    assert_true(test_mono_ms() - t0 < 1500);
    assert_int_equal(test_redis_start_again(&own), 0);
    /* the client reconnects on its own (after its backoff), scripts reload on NOSCRIPT */
    struct stats_ok so = {.f = &f};
    assert_true(wait_until(stats_ok, &so, 10000, "stats after restart"));
    assert_int_equal(so.s.due, 1);
    enqueue_str(&f, "after", 0, NULL, NULL);
    fixture_close(&f);
    test_redis_stop(&own);
}

static void
unreachable_is_fast_and_classified(void **state)
{
    dq_client *c = NULL;
    dq_err err;
    int64_t t0 = test_mono_ms();

    assert_int_equal(dq_client_open("redis://127.0.0.1:1", NULL, &c, &err), DQ_ECONN);
    assert_null(c);
    assert_true(test_mono_ms() - t0 < 3000);
    assert_non_null(strstr(err.msg, "127.0.0.1:1"));
    assert_int_equal(dq_client_open("unix:///nonexistent/sock", NULL, &c, &err), DQ_ECONN);
    assert_int_equal(dq_client_open("http://x", NULL, &c, &err), DQ_EINVAL);
}

static void
stalled_server_times_out_and_recovers(void **state)
{
    struct fixture f;
    dq_client_opts o = {.command_timeout_ms = 200};
    const char *pause[] = {"CLIENT", "PAUSE", "1000", "ALL"};
    dq_stats s;

    fixture_open(&f, state, "stall");
    dq_client_free(f.c);
    ASSERT_OK(&f, dq_client_open(f.redis->url, &o, &f.c, &f.err));
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    redisReply *r = test_redis_cmd(f.redis, 4, pause);
    assert_non_null(r);
    freeReplyObject(r);
    int64_t t0 = test_mono_ms();
    assert_int_equal(dq_stats_get(f.c, f.queue, &s, &f.err), DQ_ETIMEOUT);
    int64_t took = test_mono_ms() - t0;
    printf("# timed out after %lld ms (timeout 200 ms)\n", (long long)took);
    assert_true(took >= 150 && took < 900);
    struct stats_ok so = {.f = &f};
    assert_true(wait_until(stats_ok, &so, 5000, "stats after the pause"));
    fixture_close(&f);
}

static void
password_db_and_unix_socket(void **state)
{
    struct test_redis own;
    const char *setpass[] = {"CONFIG", "SET", "requirepass", "s3cret"};
    dq_client *c = NULL;
    dq_client_opts o = {0};
    dq_err err;
    char url[400];
    dq_stats s;
    dq_enqueued e;

    /* the password is set after start: the fixture's readiness PING has none */
    assert_int_equal(test_redis_start(&own, NULL), 0);
    redisReply *r = test_redis_cmd(&own, 4, setpass);
    assert_non_null(r);
    freeReplyObject(r);
    assert_int_equal(dq_client_open(own.url, NULL, &c, &err), DQ_ECONN);
    assert_non_null(strstr(err.msg, "NOAUTH"));
    assert_null(strstr(err.msg, "s3cret"));
    snprintf(url, sizeof url, "redis://:wrong@127.0.0.1:%d", own.port);
    assert_int_equal(dq_client_open(url, NULL, &c, &err), DQ_ECONN);
    assert_null(strstr(err.msg, "wrong"));
    o.password = "s3cret";
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/3", own.port);
    if (dq_client_open(url, &o, &c, &err) != DQ_OK)
        fail_msg("open %s: %s", url, err.msg);
    assert_int_equal(dq_enqueue(c, "dbq", NULL, "x", 1, &e, &err), DQ_OK);
    dq_client_free(c);
    /* the task went to db 3: visible there through the unix socket, not in db 0 */
    snprintf(url, sizeof url, "unix://:s3cret@%s?db=3", own.sock);
    assert_int_equal(dq_client_open(url, NULL, &c, &err), DQ_OK);
    assert_int_equal(dq_stats_get(c, "dbq", &s, &err), DQ_OK);
    assert_int_equal(s.due, 1);
    dq_client_free(c);
    snprintf(url, sizeof url, "unix://:s3cret@%s", own.sock);
    assert_int_equal(dq_client_open(url, NULL, &c, &err), DQ_OK);
    assert_int_equal(dq_stats_get(c, "dbq", &s, &err), DQ_OK);
    assert_int_equal(s.due, 0);
    dq_client_free(c);
    test_redis_stop(&own);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_script_compiles_with_the_sha1_we_embed),
        cmocka_unit_test(wrong_type_key_is_a_clear_error),
        cmocka_unit_test(wrong_type_mid_script_loses_nothing),
        cmocka_unit_test(script_flush_is_survived),
        cmocka_unit_test(restart_under_a_client),
        cmocka_unit_test(unreachable_is_fast_and_classified),
        cmocka_unit_test(stalled_server_times_out_and_recovers),
        cmocka_unit_test(password_db_and_unix_socket),
    };

    return cmocka_run_group_tests_name("integ/robust", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
