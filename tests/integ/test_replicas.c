/* SPDX-License-Identifier: MIT */
/*
 * test_replicas.c: --min-replicas (dq_client_opts.min_replicas) against a real
 * redis-server that has no replica, so every WAIT falls short: enqueue, ack and
 * operator actions report DQ_EREPLICAS after the write was made (result filled in),
 * while reads and claims never wait; a bad count is refused at open. Also a
 * redis-sentinel:// URL whose "sentinel" is a plain Redis is refused with the reason.
 */
#include "harness/fixture.h"

static dq_client *
open_waiting(struct fixture *f, int n)
{
    dq_client_opts o = {.who = "tester", .min_replicas = n, .min_replicas_timeout_ms = 50};
    dq_client *c = NULL;

    ASSERT_OK(f, dq_client_open(f->redis->url, &o, &c, &f->err));
    return c;
}

static void
writes_wait_and_report_shortfall(void **state)
{
    struct fixture f;
    dq_enqueued e;
    dq_stats st;
    dq_claimed cl;
    size_t n = 0;

    fixture_open(&f, state, "replicas_writes");
    dq_client *c = open_waiting(&f, 1);
    dq_enqueue_opts eo = {.id = "w1"};
    int64_t t0 = test_mono_ms();

    memset(&e, 0, sizeof e);
    assert_int_equal(dq_enqueue(c, f.queue, &eo, "x", 1, &e, &f.err), DQ_EREPLICAS);
    assert_int_equal(f.err.code, DQ_EREPLICAS);
    assert_non_null(strstr(f.err.msg, "the write was made on the master"));
    assert_non_null(strstr(f.err.msg, "not confirmed on 1 replicas"));
    assert_true(test_mono_ms() - t0 >= 40); /* WAIT ran its 50 ms */
    assert_string_equal(e.id, "w1");        /* the result is there to retry with */
    assert_string_equal(dq_strerror(DQ_EREPLICAS), "DQ_EREPLICAS");

    /* the write was made: a read sees it, and reads do not wait */
    ASSERT_OK(&f, dq_stats_get(c, f.queue, &st, &f.err));
    assert_int_equal(st.due, 1);
    /* a claim does not wait; an ack does (and is made all the same) */
    ASSERT_OK(&f, dq_claim(c, f.queue, 1, 30000, "w", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    assert_int_equal(dq_ack(c, f.queue, &cl.tasks[0], &f.err), DQ_EREPLICAS);
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_stats_get(c, f.queue, &st, &f.err));
    assert_int_equal(st.due + st.inflight, 0);

    /* operator actions wait too */
    assert_int_equal(dq_enqueue(c, f.queue, &(dq_enqueue_opts){.id = "w2", .delay_ms = 60000}, "y",
                                1, &e, &f.err),
                     DQ_EREPLICAS);
    assert_int_equal(dq_drop(c, f.queue, (const char *const[]){"w2"}, 1, &n, &f.err), DQ_EREPLICAS);
    assert_int_equal(n, 1);
    assert_int_equal(dq_pause(c, f.queue, 0, "test", &f.err), DQ_EREPLICAS);

    /* without min_replicas nothing waits */
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &(dq_enqueue_opts){.id = "w3"}, "z", 1, &e, &f.err));
    dq_client_free(c);
    fixture_close(&f);
}

static void
bad_count_refused(void **state)
{
    struct fixture f;
    dq_client *c = NULL;

    fixture_open(&f, state, "replicas_bad");
    dq_client_opts o = {.min_replicas = -1};
    assert_int_equal(dq_client_open(f.redis->url, &o, &c, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "min-replicas: -1 is not in 0..100"));
    assert_null(c);
    fixture_close(&f);
}

static void
sentinel_url_on_a_plain_redis(void **state)
{
    struct fixture f;
    dq_client *c = NULL;
    char url[300];

    fixture_open(&f, state, "replicas_sentinel");
    snprintf(url, sizeof url, "redis-sentinel://127.0.0.1:%d/mymaster", f.redis->port);
    assert_int_equal(dq_client_open(url, NULL, &c, &f.err), DQ_ECONN);
    assert_non_null(strstr(f.err.msg, "no sentinel of 1 named the master of \"mymaster\""));
    assert_non_null(strstr(f.err.msg, "refused SENTINEL"));
    assert_null(c);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_wait_and_report_shortfall),
        cmocka_unit_test(bad_count_refused),
        cmocka_unit_test(sentinel_url_on_a_plain_redis),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/replicas", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
