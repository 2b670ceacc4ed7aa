/* SPDX-License-Identifier: MIT */
/*
 * test_cluster.c: the pure parts of the cluster router (src/lib/cluster.c): the slot of
 * a key (against values CLUSTER KEYSLOT gave on redis-server 7.0.15), the redirection
 * text and the CLUSTER SLOTS reader, fed through hiredis's reader as a client reads it.
 */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "lib/client.h"
#include "lib/cluster.h"

static unsigned
slot(const char *key)
{
    return dq_cluster_slot(key, strlen(key));
}

static void
slots_match_redis(void **state)
{
    (void)state;
    /* CLUSTER KEYSLOT on redis-server 7.0.15 */
    assert_int_equal(slot("dq:{payments}:sched"), 8507);
    assert_int_equal(slot("dq:{emails}:sched"), 3728);
    assert_int_equal(slot("dq:{reports}:sched"), 5152);
    assert_int_equal(slot("foo"), 12182);
    assert_int_equal(slot("123456789"), 0x31c3 & 16383); /* the CRC16/XMODEM check value */
    /* every key of a queue, and its wake channel, is in the queue's slot */
    assert_int_equal(slot("dq:{payments}:wake"), 8507);
    assert_int_equal(slot("{payments}"), 8507);
    assert_int_equal(slot("payments"), 8507);
    /* the tag is the first {...}; an empty one hashes the whole key */
    assert_int_equal(slot("a{payments}b{x}"), 8507);
    assert_int_equal(slot("foo{}{bar}"), dq_cluster_slot("foo{}{bar}", 10));
    assert_int_not_equal(slot("foo{}{bar}"), slot("bar"));
    assert_int_equal(slot("foo{{bar}}"), slot("{bar"));
    assert_int_equal(slot("foo{bar"), dq_cluster_slot("foo{bar", 7));
    assert_int_equal(dq_cluster_slot("", 0), 0);
}

static void
redirections(void **state)
{
    char host[64];
    int s, port;

    (void)state;
    const char *m = "MOVED 3999 127.0.0.1:6381";
    assert_int_equal(dq_cluster_parse_redirect(m, strlen(m), &s, host, sizeof host, &port), 0);
    assert_int_equal(s, 3999);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 6381);
    m = "ASK 16383 [::1]:7000";
    assert_int_equal(dq_cluster_parse_redirect(m, strlen(m), &s, host, sizeof host, &port), 0);
    assert_int_equal(s, 16383);
    assert_string_equal(host, "::1");
    m = "ASK 0 ::1:7000";
    assert_int_equal(dq_cluster_parse_redirect(m, strlen(m), &s, host, sizeof host, &port), 0);
    assert_string_equal(host, "::1");
    const char *bad[] = {"MOVED",        "MOVED 16384 h:1", "MOVED x h:1",     "MOVED 1 h",
                         "MOVED 1 h:",   "MOVED 1 h:0",     "MOVED 1 h:65536", "MOVED 1 :1",
                         "MOVED 1 h:1x", "MOVED -1 h:1",    "MOVED 1  h:1x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (dq_cluster_parse_redirect(bad[i], strlen(bad[i]), &s, host, sizeof host, &port) != -1)
            fail_msg("accepted \"%s\"", bad[i]);
    }
    /* a host longer than the buffer is refused, not cut */
    m = "MOVED 1 abcdefghij:1";
    assert_int_equal(dq_cluster_parse_redirect(m, strlen(m), &s, host, 8, &port), -1);
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
slot_map(void **state)
{
    struct dq_cluster *cl = dq_cluster_alloc();
    dq_err err = {0};

    (void)state;
    assert_non_null(cl);
    /* 0-5460 on 127.0.0.1:7000 (with a replica), 5461-16383 on the node asked (""),
     * then entries of the wrong shape and a hostile host name, which are skipped */
    redisReply *r = resp("*5\r\n"
                         "*4\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n"
                         "*2\r\n$9\r\n127.0.0.1\r\n:7003\r\n"
                         "*3\r\n:5461\r\n:16383\r\n*2\r\n$0\r\n\r\n:7001\r\n"
                         "*2\r\n:1\r\n:2\r\n"
                         "*3\r\n:1\r\n:2\r\n*2\r\n$3\r\nh\x1b]\r\n:7009\r\n"
                         ":5\r\n");
    assert_int_equal(dq_cluster_apply_slots(cl, r, "10.0.0.5", &err), DQ_OK);
    freeReplyObject(r);
    assert_string_equal(dq_cluster_slot_addr(cl, 0), "127.0.0.1:7000");
    assert_string_equal(dq_cluster_slot_addr(cl, 1), "127.0.0.1:7000");
    assert_string_equal(dq_cluster_slot_addr(cl, 5460), "127.0.0.1:7000");
    assert_string_equal(dq_cluster_slot_addr(cl, 5461), "10.0.0.5:7001");
    assert_string_equal(dq_cluster_slot_addr(cl, 16383), "10.0.0.5:7001");
    assert_string_equal(dq_cluster_slot_addr(cl, 16384), "");
    /* a later map replaces the whole of the earlier one */
    r = resp("*1\r\n*3\r\n:100\r\n:100\r\n*2\r\n$3\r\n::1\r\n:7002\r\n");
    assert_int_equal(dq_cluster_apply_slots(cl, r, "x", &err), DQ_OK);
    freeReplyObject(r);
    assert_string_equal(dq_cluster_slot_addr(cl, 100), "[::1]:7002");
    assert_string_equal(dq_cluster_slot_addr(cl, 0), "");
    r = resp("-ERR This instance has cluster support disabled\r\n");
    assert_int_equal(dq_cluster_apply_slots(cl, r, "x", &err), DQ_EPROTO);
    freeReplyObject(r);
    assert_string_equal(dq_cluster_slot_addr(cl, 100), "[::1]:7002");
    dq_cluster_free(cl);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slots_match_redis),
        cmocka_unit_test(redirections),
        cmocka_unit_test(slot_map),
    };
    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/cluster", tests, NULL, NULL);
}
