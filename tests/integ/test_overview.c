/* SPDX-License-Identifier: MIT */
/*
 * test_overview.c: the overview's rows (lib/overview.c) against a real redis-server: 250
 * queues read in three pipelined batches come back each in its own row (its due count,
 * failures and pause are its own), a key of the wrong type or a name that is no queue
 * name spoils only its row, and a library flushed between two refreshes is loaded again.
 */
#include "harness/fixture.h"

#include "lib/overview.h"

enum { N = 250 };

static void
cmd(struct test_redis *r, int argc, const char **argv)
{
    redisReply *rep = test_redis_cmd(r, argc, argv);
    assert_non_null(rep);
    freeReplyObject(rep);
}

/* Queue i holds i % 7 due tasks, every 25th is paused, every 10th has i % 4 + 1
 * failures in this minute's tally. */
static void
make_queues(struct fixture *f, char names[][DQ_QUEUE_NAME_MAX + 1])
{
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "%.80s-%03d", f->queue, i);
        for (int k = 0; k < i % 7; k++) {
            dq_enqueue_opts o = {0};
            dq_enqueued e;
            ASSERT_OK(f, dq_enqueue(f->c, names[i], &o, "x", 1, &e, &f->err));
        }
        if (i % 25 == 0)
            ASSERT_OK(f, dq_pause(f->c, names[i], 3600000, "test", &f->err));
        if (i % 10 == 0) {
            dq_enqueue_opts o = {0};
            for (int k = 0; k < i % 4 + 1; k++) {
                dq_enqueued e;
                ASSERT_OK(f, dq_enqueue(f->c, names[i], &o, "y", 1, &e, &f->err));
            }
        }
    }
}

static void
rows_are_their_queues(void **state)
{
    struct fixture f;
    static char names[N][DQ_QUEUE_NAME_MAX + 1];
    static struct dq_overview_row rows[N];

    fixture_open(&f, state, "ov");
    make_queues(&f, names);
    /* fail the "y" tasks through the scripts, so the tally has them */
    for (int i = 0; i < N; i += 10) {
        if (i % 25 == 0)
            continue; /* paused: claims nothing */
        dq_claimed cl;
        ASSERT_OK(&f, dq_claim(f.c, names[i], 100, 60000, "t", &cl, &f.err));
        for (size_t k = 0; k < cl.n; k++) {
            if (cl.tasks[k].payload_len == 1 && cl.tasks[k].payload[0] == 'y')
                ASSERT_OK(&f, dq_fail(f.c, names[i], &cl.tasks[k], "boom", NULL, &f.err));
            else
                ASSERT_OK(&f, dq_ack(f.c, names[i], &cl.tasks[k], &f.err));
        }
        dq_claimed_free(&cl);
    }
    /* a foreign write: queue 123's tally is a string; queue 201 is no queue name */
    const char *set[] = {"SET", NULL, "x"};
    char key[160];
    snprintf(key, sizeof key, "dq:{%s}:tally", names[123]);
    set[1] = key;
    cmd(f.redis, 3, set);
    for (int pass = 0; pass < 2; pass++) {
        memset(rows, 0, sizeof rows);
        for (int i = 0; i < N; i++)
            memcpy(rows[i].queue, names[i], sizeof rows[i].queue);
        snprintf(rows[201].queue, sizeof rows[201].queue, "no queue");
        ASSERT_OK(&f, dq_overview_get(f.c, rows, N, &f.err));
        for (int i = 0; i < N; i++) {
            const struct dq_overview_row *r = &rows[i];
            if (i == 123) {
                assert_int_equal(r->rc, DQ_EREDIS);
                assert_non_null(strstr(r->error, "WRONGTYPE"));
                continue;
            }
            if (i == 201) {
                assert_int_equal(r->rc, DQ_EINVAL);
                continue;
            }
            if (r->rc != DQ_OK)
                fail_msg("row %d (%s): %s", i, r->queue, r->error);
            bool failing = i % 10 == 0 && i % 25 != 0;
            int64_t due = failing ? 0 : i % 7 + (i % 10 == 0 ? i % 4 + 1 : 0);
            if (r->stats.due != due)
                fail_msg("row %d: due %lld, want %lld", i, (long long)r->stats.due, (long long)due);
            assert_int_equal(r->stats.paused, i % 25 == 0);
            assert_int_equal(r->stats.failed, failing ? i % 4 + 1 : 0);
            assert_int_equal(r->failed_per_min[DQ_OVERVIEW_MINUTES - 1] +
                                 r->failed_per_min[DQ_OVERVIEW_MINUTES - 2],
                             failing ? i % 4 + 1 : 0);
            assert_int_equal(r->stats.window_failed, failing ? i % 4 + 1 : 0);
            assert_int_equal(r->throttled, 0); /* the scripts report it: none here */
            assert_int_equal(r->alert_fail_pct, 50);
        }
        /* the library gone between two refreshes: the second pass loads it again */
        const char *flush[] = {"FUNCTION", "FLUSH"};
        const char *sflush[] = {"SCRIPT", "FLUSH"};
        cmd(f.redis, 2, flush);
        cmd(f.redis, 2, sflush);
    }
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_are_their_queues),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/overview", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
