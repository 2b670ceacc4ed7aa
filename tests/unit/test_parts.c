/* SPDX-License-Identifier: MIT */
/*
 * test_parts.c: the pure side of partitioned queues (src/lib/parts.c): the routing hash
 * (FNV-1a 32 against its published test vectors), routing of caller ids and generated
 * ids, partition names on a three-master slot map (each partition on the master after
 * the one before), and the internal names scripts may run on.
 */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "lib/client.h"
#include "lib/cluster.h"
#include "lib/parts.h"
#include "lib/scripts.h"

static void
fnv1a_vectors(void **state)
{
    (void)state;
    /* the FNV-1a 32-bit test vectors (Fowler, Noll, Vo: "FNV test suite") */
    assert_int_equal(dq_parts_fnv1a("", 0), 0x811c9dc5u);
    assert_int_equal(dq_parts_fnv1a("a", 1), 0xe40c292cu);
    assert_int_equal(dq_parts_fnv1a("foobar", 6), 0xbf9cf968u);
}

static void
route_ids(void **state)
{
    struct dq_parts one = {.n = 1, .all = 1}, six = {.n = 6, .all = 8};
    int seen[6] = {0};
    char id[32];

    (void)state;
    assert_int_equal(dq_parts_route_id(&one, "order-1", 7), 0);
    assert_int_equal(dq_parts_route_id(&six, "foobar", 6), 0xbf9cf968u % 6);
    /* caller ids spread over the routed partitions only (6 and 7 are draining) */
    for (int i = 0; i < 6000; i++) {
        int len = snprintf(id, sizeof id, "order-%d", i);
        size_t p = dq_parts_route_id(&six, id, (size_t)len);
        assert_true(p < 6);
        assert_int_equal(dq_parts_route_id(&six, id, (size_t)len), p); /* stable */
        seen[p]++;
    }
    for (int p = 0; p < 6; p++)
        assert_in_range(seen[p], 800, 1200);
}

static void
route_seqs(void **state)
{
    struct dq_parts four = {.n = 2, .all = 4};

    (void)state;
    assert_int_equal(dq_parts_of_seq(&four, 0), 0);
    assert_int_equal(dq_parts_of_seq(&four, 1), 0);
    assert_int_equal(dq_parts_of_seq(&four, DQ_PART_SEQ_SPAN - 1), 0);
    assert_int_equal(dq_parts_of_seq(&four, DQ_PART_SEQ_SPAN), 1);
    assert_int_equal(dq_parts_of_seq(&four, 3 * DQ_PART_SEQ_SPAN + 5), 3);
    /* a partition that does not exist (a map read before a resize): the last one */
    assert_int_equal(dq_parts_of_seq(&four, 9 * DQ_PART_SEQ_SPAN), 3);
    assert_int_equal(dq_parts_of_seq(&four, -1), 0);
}

static void
stats_add(void **state)
{
    dq_stats sum = {.now_ms = 100,
                    .due = 3,
                    .next_due_ms = -1,
                    .oldest_due_age_ms = 5,
                    .enqueued = 10,
                    .rate_held_ms = -1,
                    .top_group_count = 4};
    dq_stats one = {.now_ms = 120,
                    .due = 4,
                    .future = 2,
                    .next_due_ms = 900,
                    .oldest_due_age_ms = 50,
                    .enqueued = INT64_MAX,
                    .rate_held_ms = 7,
                    .top_group_count = 9,
                    .concurrency_held = true,
                    .paused = true};

    (void)state;
    snprintf(sum.top_group, sizeof sum.top_group, "a");
    snprintf(one.top_group, sizeof one.top_group, "b");
    snprintf(one.paused_by, sizeof one.paused_by, "ops");
    one.run[2] = 5;
    dq_parts_stats_add(&sum, &one);
    assert_int_equal(sum.due, 7);
    assert_int_equal(sum.future, 2);
    assert_int_equal(sum.enqueued, INT64_MAX); /* saturates */
    assert_int_equal(sum.now_ms, 120);
    assert_int_equal(sum.next_due_ms, 900);
    assert_int_equal(sum.oldest_due_age_ms, 50);
    assert_int_equal(sum.rate_held_ms, 7);
    assert_true(sum.concurrency_held);
    assert_string_equal(sum.top_group, "b");
    assert_int_equal(sum.top_group_count, 9);
    assert_true(sum.paused);
    assert_string_equal(sum.paused_by, "ops");
    assert_int_equal(sum.run[2], 5);
    one = (dq_stats){.next_due_ms = 800, .top_group_count = 2};
    snprintf(one.top_group, sizeof one.top_group, "b");
    dq_parts_stats_add(&sum, &one);
    assert_int_equal(sum.next_due_ms, 800);
    assert_int_equal(sum.top_group_count, 11); /* one signature: added up */
}

static redisReply *
resp(const char *text)
{
    redisReader *rd = redisReaderCreate();
    void *r = NULL;

    assert_non_null(rd);
    assert_int_equal(redisReaderFeed(rd, text, strlen(text)), REDIS_OK);
    assert_int_equal(redisReaderGetReply(rd, &r), REDIS_OK);
    assert_non_null(r);
    redisReaderFree(rd);
    return r;
}

static void
names_spread_over_masters(void **state)
{
    struct dq_client c;
    char name[DQ_QUEUE_NAME_MAX + 16], key[DQ_QUEUE_NAME_MAX + 32];
    const char *order[3] = {"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"};
    dq_err err = {0};
    size_t m0 = 99;

    (void)state;
    memset(&c, 0, sizeof c);
    /* a single server: k is 0 */
    assert_int_equal(dq_parts_name(&c, "emails", 3, name, sizeof name), 0);
    assert_string_equal(name, "emails~3.0");
    assert_int_equal(dq_parts_name(&c, "emails", 3, name, 8), -1);

    /* three masters, listed out of slot order: the order is by lowest slot */
    c.cluster = dq_cluster_alloc();
    assert_non_null(c.cluster);
    redisReply *r = resp("*3\r\n"
                         "*3\r\n:10923\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:7002\r\n"
                         "*3\r\n:0\r\n:5460\r\n*2\r\n$9\r\n127.0.0.1\r\n:7000\r\n"
                         "*3\r\n:5461\r\n:10922\r\n*2\r\n$9\r\n127.0.0.1\r\n:7001\r\n");
    assert_int_equal(dq_cluster_apply_slots(c.cluster, r, "x", &err), DQ_OK);
    freeReplyObject(r);
    for (size_t j = 0; j < 3; j++)
        if (strcmp(dq_cluster_slot_addr(c.cluster, dq_cluster_slot("emails", 6)), order[j]) == 0)
            m0 = j;
    assert_true(m0 < 3); /* "emails" is slot 3728: 7000 */
    assert_int_equal(m0, 0);
    for (size_t i = 1; i < 12; i++) {
        long k = dq_parts_name(&c, "emails", i, name, sizeof name);
        assert_true(k >= 0);
        snprintf(key, sizeof key, "dq:{%s}:sched", name);
        assert_string_equal(dq_cluster_slot_addr(c.cluster, dq_cluster_slot(key, strlen(key))),
                            order[(m0 + i) % 3]);
        /* the smallest such k: every smaller one lands elsewhere */
        for (long j = 0; j < k; j++) {
            snprintf(key, sizeof key, "dq:{emails~%zu.%ld}:sched", i, j);
            assert_string_not_equal(
                dq_cluster_slot_addr(c.cluster, dq_cluster_slot(key, strlen(key))),
                order[(m0 + i) % 3]);
        }
    }
    dq_cluster_free(c.cluster);
}

static void
internal_names(void **state)
{
    (void)state;
    assert_int_equal(dq_queue_run_name_check("emails", NULL), DQ_OK);
    assert_int_equal(dq_queue_run_name_check("emails~1.0", NULL), DQ_OK);
    assert_int_equal(dq_queue_run_name_check("a.b:c~255.99999", NULL), DQ_OK);
    assert_int_equal(dq_queue_run_name_check("emails~1", NULL), DQ_EINVAL);
    assert_int_equal(dq_queue_run_name_check("emails~1.", NULL), DQ_EINVAL);
    assert_int_equal(dq_queue_run_name_check("emails~1.0x", NULL), DQ_EINVAL);
    assert_int_equal(dq_queue_run_name_check("emails~1234.0", NULL), DQ_EINVAL);
    assert_int_equal(dq_queue_run_name_check("~1.0", NULL), DQ_EINVAL);
    assert_int_equal(dq_queue_run_name_check("em ails~1.0", NULL), DQ_EINVAL);
    assert_int_equal(dq_queue_run_name_check("a~1.0~2.0", NULL), DQ_EINVAL);
    /* the public name check refuses them all: a user never types one */
    assert_int_equal(dq_queue_name_check("emails~1.0", NULL), DQ_EINVAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fnv1a_vectors),
        cmocka_unit_test(route_ids),
        cmocka_unit_test(route_seqs),
        cmocka_unit_test(stats_add),
        cmocka_unit_test(names_spread_over_masters),
        cmocka_unit_test(internal_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
