/* SPDX-License-Identifier: MIT */
/*
 * test_race.c: several clients (threads, one connection each) claiming from one queue
 * at once get disjoint sets whose union is everything that was due, and nothing is
 * handed out before its due time by server time.
 */
#include "harness/fixture.h"

#include <pthread.h>

#define NTASKS   6000
#define NCLIENTS 4

struct claimer {
    const char *url, *queue;
    int seen_count;
    unsigned char *seen; /* seen[seq] counts claims of task seq (shared, guarded) */
    pthread_mutex_t *mu;
    int early; /* tasks claimed before their due time */
    int errors;
    int64_t stop_after_ms;
};

static void *
claimer_run(void *arg)
{
    struct claimer *cm = arg;
    dq_client *c;
    dq_err err;
    int idle = 0;

    if (dq_client_open(cm->url, NULL, &c, &err) != DQ_OK) {
        cm->errors++;
        return NULL;
    }
    while (test_mono_ms() < cm->stop_after_ms) {
        dq_claimed cl;
        if (dq_claim(c, cm->queue, 50, 60000, "racer", &cl, &err) != DQ_OK) {
            cm->errors++;
            break;
        }
        pthread_mutex_lock(cm->mu);
        for (size_t i = 0; i < cl.n; i++) {
            uint64_t seq = cl.tasks[i].seq;
            if (seq >= 1 && seq <= NTASKS)
                cm->seen[seq]++;
            if (cl.tasks[i].due_ms > cl.now_ms)
                cm->early++;
        }
        pthread_mutex_unlock(cm->mu);
        cm->seen_count += (int)cl.n;
        for (size_t i = 0; i < cl.n; i++) {
            if (dq_ack(c, cm->queue, &cl.tasks[i], &err) != DQ_OK)
                cm->errors++;
        }
        idle = cl.n == 0 && cl.next_due_ms < 0 ? idle + 1 : 0;
        dq_claimed_free(&cl);
        if (idle > 20)
            break; /* the set is empty and has stayed empty */
    }
    dq_client_free(c);
    return NULL;
}

static void
concurrent_claims_are_disjoint_and_complete(void **state)
{
    struct fixture f;
    struct claimer cm[NCLIENTS];
    pthread_t th[NCLIENTS];
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    unsigned char *seen = calloc(NTASKS + 1, 1);
    dq_stats s;

    fixture_open(&f, state, "race");
    /* due over the next ~1.5 s, so claims race with tasks becoming due */
    for (int i = 0; i < NTASKS; i++) {
        dq_enqueue_opts o = {.delay_ms = i % 1500};
        dq_enqueued e;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "x", 1, &e, &f.err));
    }
    for (int i = 0; i < NCLIENTS; i++) {
        cm[i] = (struct claimer){.url = f.redis->url,
                                 .queue = f.queue,
                                 .seen = seen,
                                 .mu = &mu,
                                 .stop_after_ms = test_mono_ms() + 60000};
        assert_int_equal(pthread_create(&th[i], NULL, claimer_run, &cm[i]), 0);
    }
    int total = 0, early = 0, errors = 0, busy = 0;
    for (int i = 0; i < NCLIENTS; i++) {
        pthread_join(th[i], NULL);
        total += cm[i].seen_count;
        early += cm[i].early;
        errors += cm[i].errors;
        busy += cm[i].seen_count > 0;
    }
    int dup = 0, missing = 0;
    for (int i = 1; i <= NTASKS; i++) {
        dup += seen[i] > 1;
        missing += seen[i] == 0;
    }
    printf("# %d claims by %d clients (%d got work), %d duplicates, %d missing, %d early\n", total,
           NCLIENTS, busy, dup, missing, early);
    assert_int_equal(errors, 0);
    assert_int_equal(dup, 0);
    assert_int_equal(missing, 0);
    assert_int_equal(total, NTASKS);
    assert_int_equal(early, 0);
    assert_true(busy >= 2);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.done, NTASKS);
    assert_int_equal(s.inflight, 0);
    assert_int_equal(s.due + s.future, 0);
    free(seen);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_claims_are_disjoint_and_complete),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/race", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
