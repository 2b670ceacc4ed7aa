/* SPDX-License-Identifier: MIT */
/*
 * test_parts_errors.c: error groups and bulk actions on a partitioned queue (PROTOCOL.md
 * 14, "Error groups and bulk actions") against a real redis-server (single server,
 * partitions 4): failures of three signatures spread over the partitions, the merged
 * groups' exact counts, requeue of one group and of a text match from every partition,
 * drop of every failure, and one audit entry per action, in partition 0's log.
 */
#include "harness/fixture.h"
#include "harness/monitor.h"

#include "lib/parts.h"

#define PARTS 4
#define TASKS 60

/* Task i fails with signature i % 3; the counts are 30, 20, 10 (i % 6 picks). */
static const char *const messages[] = {"alpha broke at step 17", "beta timed out after 9 s",
                                       "gamma lost 3 rows"};
static const char *const sigs[] = {"error: alpha broke at step #",
                                   "error: beta timed out after # s", "error: gamma lost # rows"};
static const long long counts[] = {30, 20, 10};

static int
kind_of(int i)
{
    int r = i % 6;
    return r < 3 ? 0 : r < 5 ? 1 : 2;
}

static long long
zcard_of(struct fixture *f, const char *name, const char *which)
{
    char key[200];
    snprintf(key, sizeof key, "dq:{%s}:%s", name, which);
    const char *argv[] = {"ZCARD", key};
    return redis_int(f, 2, argv);
}

/* Enqueues TASKS caller-id tasks (spread by their ids' hash), then claims and fails every
 * one on its own partition with its kind's message. */
static void
make_failures(struct fixture *f, const struct dq_parts *p)
{
    size_t failed = 0;

    for (int i = 0; i < TASKS; i++) {
        char id[32];
        snprintf(id, sizeof id, "t%d", i);
        enqueue_str(f, "{}", 0, id, NULL);
    }
    for (size_t q = 0; q < p->all; q++) {
        dq_claimed cl;
        ASSERT_OK(f, dq_claim(f->c, p->names[q], DQ_CALL_MAX, 60000, "w", &cl, &f->err));
        for (size_t j = 0; j < cl.n; j++) {
            int i = atoi(cl.tasks[j].id + 1);
            ASSERT_OK(
                f, dq_fail(f->c, p->names[q], &cl.tasks[j], messages[kind_of(i)], NULL, &f->err));
            failed++;
        }
        dq_claimed_free(&cl);
    }
    assert_int_equal(failed, TASKS);
}

static long long
failed_everywhere(struct fixture *f, const struct dq_parts *p)
{
    long long n = 0;
    for (size_t q = 0; q < p->all; q++)
        n += zcard_of(f, p->names[q], "failidx");
    return n;
}

static long long
sched_everywhere(struct fixture *f, const struct dq_parts *p)
{
    long long n = 0;
    for (size_t q = 0; q < p->all; q++)
        n += zcard_of(f, p->names[q], "sched");
    return n;
}

static const dq_error_group *
group_of(const dq_errors *e, const char *sig)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->groups[i].signature_len == strlen(sig) &&
            memcmp(e->groups[i].signature, sig, strlen(sig)) == 0)
            return &e->groups[i];
    return NULL;
}

/* How many entries of @action @queue's audit log holds, the newest one's result into @last. */
static size_t
audits(struct fixture *f, const char *queue, const char *action, char *last, size_t size)
{
    dq_audit a;
    size_t n = 0;

    ASSERT_OK(f, dq_audit_get(f->c, queue, DQ_CALL_MAX, &a, &f->err));
    for (size_t i = 0; i < a.n; i++) {
        if (strcmp(a.entries[i].action, action) != 0)
            continue;
        if (n++ == 0 && last != NULL)
            snprintf(last, size, "%s", a.entries[i].result);
    }
    dq_audit_free(&a);
    return n;
}

static void
setup_queue(struct fixture *f, void **state, const char *name, struct dq_parts *p)
{
    dq_config cfg = {.partitions = PARTS};

    fixture_open(f, state, name);
    ASSERT_OK(f, dq_config_set(f->c, f->queue, &cfg, &f->err));
    ASSERT_OK(f, dq_parts_get(f->c, f->queue, p, &f->err));
    assert_int_equal(p->all, PARTS);
    make_failures(f, p);
    /* spread: every partition holds failures (the ids' hash is fixed, so this is too) */
    for (size_t q = 0; q < p->all; q++)
        if (zcard_of(f, p->names[q], "failidx") == 0)
            fail_msg("partition %zu holds no failure", q);
}

static void
errors_merged_exact(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_errors e;
    size_t parts_with_alpha = 0;

    setup_queue(&f, state, "perr_errors", &p);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    assert_int_equal(e.failed, TASKS);
    assert_int_equal(e.n, 3);
    for (int k = 0; k < 3; k++) {
        const dq_error_group *g = group_of(&e, sigs[k]);
        if (g == NULL)
            fail_msg("no group %s", sigs[k]);
        assert_int_equal(g->count, counts[k]);
        assert_true(g->first_ms <= g->last_ms);
        assert_true(g->sample_id_len > 0);
        assert_true(strncmp(g->sample_error, messages[k], strlen(messages[k])) == 0);
        assert_ptr_equal(g, &e.groups[k]); /* largest first, as on one queue */
    }
    /* the sample is the newest failure: its last seen is the group's last seen */
    for (size_t q = 0; q < p.all; q++) {
        dq_errors one;
        ASSERT_OK(&f, dq_errors_get(f.c, p.names[q], &one, &f.err));
        const dq_error_group *g = group_of(&one, sigs[0]);
        if (g != NULL) {
            parts_with_alpha++;
            assert_true(g->last_ms <= group_of(&e, sigs[0])->last_ms);
            assert_true(g->first_ms >= group_of(&e, sigs[0])->first_ms);
        }
        dq_errors_free(&one);
    }
    assert_true(parts_with_alpha >= 2); /* the merge had something to add up */
    dq_errors_free(&e);
    dq_parts_free(&p);
    fixture_close(&f);
}

static void
requeue_group_match_drop_all(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_errors e;
    dq_bulk cur = {0};
    char gid[DQ_GROUP_ID_MAX + 1], last[256];
    size_t steps = 0;

    setup_queue(&f, state, "perr_bulk", &p);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    snprintf(gid, sizeof gid, "%s", group_of(&e, sigs[1])->id);
    dq_errors_free(&e);

    /* a group no partition holds */
    dq_filter none = {DQ_FILTER_GROUP, "0123456789abcdef"};
    assert_int_equal(dq_requeue_filter_step(f.c, f.queue, &none, 0, 0, 0, &cur, &f.err),
                     DQ_ENOTFOUND);

    /* requeue --group beta, in steps of 3: exactly its 20, from every partition */
    dq_filter grp = {DQ_FILTER_GROUP, gid};
    memset(&cur, 0, sizeof cur);
    while (!cur.done) {
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &grp, 0, 0, 3, &cur, &f.err));
        assert_true(++steps < 100);
    }
    assert_true(steps > PARTS); /* bounded steps, not one call per partition */
    assert_int_equal(cur.done_n, counts[1]);
    assert_int_equal(cur.total, counts[1]);
    assert_int_equal(failed_everywhere(&f, &p), TASKS - counts[1]);
    assert_int_equal(sched_everywhere(&f, &p), counts[1]);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    assert_int_equal(e.n, 2);
    assert_null(group_of(&e, sigs[1]));
    assert_int_equal(group_of(&e, sigs[0])->count, counts[0]);
    dq_errors_free(&e);
    /* one audit entry, partition 0's, with the total; none in the other partitions */
    assert_int_equal(audits(&f, f.queue, "requeue-all", last, sizeof last), 1);
    if (strstr(last, "ok: 20 moved (of 20 in scope)") == NULL)
        fail_msg("audit result: %s", last);
    for (size_t q = 1; q < p.all; q++)
        assert_int_equal(audits(&f, p.names[q], "requeue-all", NULL, 0), 0);

    /* requeue --match gamma: its 10, by text, across the partitions */
    dq_filter m = {DQ_FILTER_MATCH, "gamma lost"};
    memset(&cur, 0, sizeof cur);
    while (!cur.done)
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &m, 0, 0, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, counts[2]);
    assert_int_equal(failed_everywhere(&f, &p), counts[0]);
    assert_int_equal(sched_everywhere(&f, &p), counts[1] + counts[2]);
    assert_int_equal(audits(&f, f.queue, "requeue-all", last, sizeof last), 2);
    if (strstr(last, "ok: 10 moved (of 40 in scope)") == NULL) /* all that failed */
        fail_msg("audit result: %s", last);

    /* drop --all-failed: the failed set of every partition empties */
    memset(&cur, 0, sizeof cur);
    while (!cur.done)
        ASSERT_OK(&f, dq_drop_filter_step(f.c, f.queue, NULL, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, counts[0]);
    assert_int_equal(failed_everywhere(&f, &p), 0);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    assert_int_equal(e.n, 0);
    assert_int_equal(e.failed, 0);
    dq_errors_free(&e);
    assert_int_equal(audits(&f, f.queue, "drop-all", last, sizeof last), 1);
    if (strstr(last, "ok: 30 dropped, finished") == NULL)
        fail_msg("audit result: %s", last);
    for (size_t q = 1; q < p.all; q++)
        assert_int_equal(audits(&f, p.names[q], "drop-all", NULL, 0), 0);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* requeue --all (no filter) walks every partition too, with exact totals */
static void
requeue_all_unfiltered(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_bulk cur = {0};
    char last[256];

    setup_queue(&f, state, "perr_all", &p);
    while (!cur.done)
        ASSERT_OK(&f, dq_requeue_all_step(f.c, f.queue, 0, 1000, &cur, &f.err));
    assert_int_equal(cur.done_n, TASKS);
    assert_int_equal(cur.total, TASKS);
    assert_int_equal(failed_everywhere(&f, &p), 0);
    assert_int_equal(sched_everywhere(&f, &p), TASKS);
    assert_int_equal(audits(&f, f.queue, "requeue-all", last, sizeof last), 1);
    if (strstr(last, "ok: 60 moved (of 60 in scope)") == NULL)
        fail_msg("audit result: %s", last);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* A queue of one partition sends the calls it sent before: no audit argument (MONITOR) */
static void
one_partition_same_calls(void **state)
{
    struct fixture f;
    struct test_redis *srv = *state;
    redisContext *mon;
    dq_bulk cur = {0};
    dq_claimed cl;
    dq_errors e;
    char log[65536];

    if (getenv("DELAYQ_SCRIPTS") != NULL) /* EVALSHA's lines name a hash, not a script */
        skip();
    fixture_open(&f, state, "perr_one");
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "u%d", i);
        enqueue_str(&f, "{}", 0, id, NULL);
    }
    ASSERT_OK(&f, dq_claim(f.c, f.queue, DQ_CALL_MAX, 60000, "w", &cl, &f.err));
    assert_int_equal(cl.n, 4);
    for (size_t j = 0; j < cl.n; j++)
        ASSERT_OK(&f, dq_fail(f.c, f.queue, &cl.tasks[j], messages[j % 2], NULL, &f.err));
    dq_claimed_free(&cl);
    mon = test_monitor_open(srv); /* after the skip, which returns */
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    assert_int_equal(e.n, 2);
    dq_filter g = {DQ_FILTER_GROUP, sigs[0]};
    while (!cur.done)
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &g, 0, 0, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, 2);
    dq_filter m = {DQ_FILTER_MATCH, "beta"};
    memset(&cur, 0, sizeof cur);
    while (!cur.done)
        ASSERT_OK(&f, dq_drop_filter_step(f.c, f.queue, &m, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, 2);
    dq_errors_free(&e);
    test_monitor_collect(srv, mon, log, sizeof log);
    /* requeue's filtered step ends with its step (500), drop's too: no audit argument */
    assert_true(test_monitor_fcalls(log, "requeue", "\"500\"") >= 1);
    assert_true(test_monitor_fcalls(log, "drop", "\"500\"") >= 1);
    assert_null(strstr(log, "\"off\""));
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_merged_exact),
        cmocka_unit_test(requeue_group_match_drop_all),
        cmocka_unit_test(requeue_all_unfiltered),
        cmocka_unit_test(one_partition_same_calls),
    };
    return cmocka_run_group_tests(tests, fixture_group_setup, fixture_group_teardown);
}
