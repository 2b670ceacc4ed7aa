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

/* Calls of @cmd ("fcall", "evalsha", ...) the server has counted so far. */
static long long
calls(struct test_redis *r, const char *cmd)
{
    const char *argv[] = {"INFO", "commandstats"};
    redisReply *rep = test_redis_cmd(r, 2, argv);
    char key[64];
    long long n = 0;

    assert_non_null(rep);
    snprintf(key, sizeof key, "cmdstat_%s:calls=", cmd);
    const char *p = strstr(rep->str, key);
    if (p != NULL)
        n = atoll(p + strlen(key));
    freeReplyObject(rep);
    return n;
}

static bool
forced_evalsha(void)
{
    const char *v = getenv("DELAYQ_SCRIPTS");
    return v != NULL && strcmp(v, "evalsha") == 0;
}

static void
redis_ok(struct test_redis *r, int argc, const char **argv)
{
    redisReply *rep = test_redis_cmd(r, argc, argv);
    assert_non_null(rep);
    if (rep->type == REDIS_REPLY_ERROR)
        fail_msg("%s %s: %s", argv[0], argc > 1 ? argv[1] : "", rep->str);
    freeReplyObject(rep);
}

static void
library_registers_every_script_with_its_flags(void **state)
{
    struct test_redis *r = *state;
    const char *load[] = {"FUNCTION", "LOAD", "REPLACE", dq_library_text};
    const char *list[] = {"FUNCTION", "LIST", "LIBRARYNAME", dq_library_name};
    redisReply *rep = test_redis_cmd(r, 4, load);

    assert_non_null(rep);
    if (rep->type != REDIS_REPLY_STRING || strcmp(rep->str, dq_library_name) != 0)
        fail_msg("FUNCTION LOAD: %s", rep->str ? rep->str : "(no string)");
    freeReplyObject(rep);
    rep = test_redis_cmd(r, 4, list);
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_ARRAY);
    assert_int_equal(rep->elements, 1);
    /* {library_name, L, engine, LUA, functions, {{name, N, description, D, flags, F}...}} */
    const redisReply *lib = rep->element[0], *fns = NULL;
    for (size_t i = 0; i + 1 < lib->elements; i += 2) {
        if (strcmp(lib->element[i]->str, "functions") == 0)
            fns = lib->element[i + 1];
    }
    assert_non_null(fns);
    assert_int_equal(fns->elements, DQ_SCRIPT_COUNT);
    for (int i = 0; i < DQ_SCRIPT_COUNT; i++) {
        const struct dq_script_src *s = &dq_script_table[i];
        bool found = false;
        for (size_t j = 0; j < fns->elements; j++) {
            const redisReply *fn = fns->element[j];
            if (strcmp(fn->element[1]->str, s->function) != 0)
                continue;
            found = true;
            const redisReply *flags = fn->element[5];
            bool ro = flags->elements == 1 && strcmp(flags->element[0]->str, "no-writes") == 0;
            if (ro != s->no_writes)
                fail_msg("function %s: no-writes flag is %d, expected %d", s->function, ro,
                         s->no_writes);
        }
        if (!found)
            fail_msg("function %s is not in the library", s->function);
    }
    freeReplyObject(rep);
}

static void
function_flush_is_survived(void **state)
{
    struct fixture f;
    dq_stats s;
    const char *flush[] = {"FUNCTION", "FLUSH"};

    fixture_open(&f, state, "fflush");
    enqueue_str(&f, "a", 0, NULL, NULL);
    long long fc = calls(f.redis, "fcall"), ev = calls(f.redis, "evalsha");
    redis_ok(f.redis, 2, flush);
    enqueue_str(&f, "b", 0, NULL, NULL);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.due, 2);
    if (!forced_evalsha()) { /* reloaded and still on FCALL, not fallen back */
        assert_true(calls(f.redis, "fcall") > fc);
        assert_int_equal(calls(f.redis, "evalsha"), ev);
    }
    fixture_close(&f);
}

/* Opens a client as ACL user @user (password "pw") made with @rules. */
static dq_client *
open_as(struct test_redis *r, const char *user, const char *const *rules, int nrules)
{
    const char *argv[16] = {"ACL", "SETUSER", user, "reset", "on", ">pw", "~*", "&*"};
    char url[400];
    dq_client *c = NULL;
    dq_err err;

    for (int i = 0; i < nrules; i++)
        argv[8 + i] = rules[i];
    redis_ok(r, 8 + nrules, argv);
    snprintf(url, sizeof url, "redis://%s:pw@127.0.0.1:%d", user, r->port);
    if (dq_client_open(url, NULL, &c, &err) != DQ_OK)
        fail_msg("open as %s: %s", user, err.msg);
    return c;
}

/* A user who may not run FUNCTION, against a server without the library (a managed
 * service, say), and one who may not run FCALL: both fall back to EVALSHA and do the
 * whole task life there. */
static void
acl_without_function_or_fcall_falls_back(void **state)
{
    struct test_redis *r = *state;
    const char *flush[] = {"FUNCTION", "FLUSH"};
    const char *nofn[] = {"+@all", "-function"};
    const char *nofcall[] = {"+@all", "-fcall", "-fcall_ro"};
    const char *const *rules[] = {nofn, nofcall};
    char queue[96];

    for (int u = 0; u < 2; u++) {
        redis_ok(r, 2, flush);
        dq_client *c = open_as(r, u == 0 ? "nofn" : "nofcall", rules[u], u == 0 ? 2 : 3);
        long long ev = calls(r, "evalsha");
        dq_enqueued e;
        dq_claimed cl;
        dq_stats st;
        dq_err err;
        test_queue_name(queue, sizeof queue, u == 0 ? "nofn" : "nofcall");
        if (dq_enqueue(c, queue, NULL, "x", 1, &e, &err) != DQ_OK)
            fail_msg("enqueue: %s", err.msg);
        assert_int_equal(dq_claim(c, queue, 10, 30000, "w", &cl, &err), DQ_OK);
        assert_int_equal(cl.n, 1);
        assert_int_equal(dq_ack(c, queue, &cl.tasks[0], &err), DQ_OK);
        dq_claimed_free(&cl);
        assert_int_equal(dq_stats_get(c, queue, &st, &err), DQ_OK);
        assert_int_equal(st.done, 1);
        assert_true(calls(r, "evalsha") >= ev + 3);
        dq_client_free(c);
    }
}

/* A viewer who may not write reads through FCALL_RO (no-writes functions) and is
 * refused any change. */
static void
read_only_user_reads_with_fcall_ro(void **state)
{
    struct test_redis *r = *state;
    const char *load[] = {"FUNCTION", "LOAD", "REPLACE", dq_library_text};
    const char *viewer[] = {"+@all", "-@write", "-fcall", "-eval", "-evalsha", "-function"};
    struct fixture f;
    dq_stats st;
    dq_page p;
    dq_enqueued e;

    fixture_open(&f, state, "viewer");
    enqueue_str(&f, "seen", 0, NULL, NULL);
    redis_ok(r, 4, load);
    dq_client *c = open_as(r, "viewer", viewer, 6);
    long long ro = calls(r, forced_evalsha() ? "evalsha_ro" : "fcall_ro");
    assert_int_equal(dq_stats_get(c, f.queue, &st, &f.err), DQ_OK);
    assert_int_equal(st.due, 1);
    assert_int_equal(dq_page_get(c, f.queue, DQ_VIEW_DUE, 0, 10, &p, &f.err), DQ_OK);
    assert_int_equal(p.n, 1);
    dq_page_free(&p);
    assert_true(calls(r, forced_evalsha() ? "evalsha_ro" : "fcall_ro") >= ro + 2);
    assert_int_not_equal(dq_enqueue(c, f.queue, NULL, "x", 1, &e, &f.err), DQ_OK);
    assert_non_null(strstr(f.err.msg, "NOPERM"));
    dq_client_free(c);
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
        cmocka_unit_test(library_registers_every_script_with_its_flags),
        cmocka_unit_test(function_flush_is_survived),
        cmocka_unit_test(acl_without_function_or_fcall_falls_back),
        cmocka_unit_test(read_only_user_reads_with_fcall_ro),
        cmocka_unit_test(restart_under_a_client),
        cmocka_unit_test(unreachable_is_fast_and_classified),
        cmocka_unit_test(stalled_server_times_out_and_recovers),
        cmocka_unit_test(password_db_and_unix_socket),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/robust", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
