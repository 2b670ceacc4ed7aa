/* SPDX-License-Identifier: MIT */
/*
 * test_reply.c: the reply parsers (src/lib/reply.c) refuse a malformed reply with a
 * message naming the element, what it is and what was expected. Replies are RESP bytes
 * read by hiredis's own reader, as the client reads them from Redis.
 */
#include "harness/check.h"

#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "lib/reply.h"

/* The one reply in RESP text @resp; the caller frees it with freeReplyObject. */
static redisReply *
read_reply(const char *resp)
{
    redisReader *rd = redisReaderCreate();
    void *reply = NULL;

    assert_non_null(rd);
    assert_int_equal(redisReaderFeed(rd, resp, strlen(resp)), REDIS_OK);
    assert_int_equal(redisReaderGetReply(rd, &reply), REDIS_OK);
    assert_non_null(reply);
    redisReaderFree(rd);
    return reply;
}

typedef int (*parser)(const redisReply *r, void *out, dq_err *err);

/* Runs @parse on @resp and asserts it fails with DQ_EPROTO and exactly @msg. */
static void
expect_refusal(parser parse, void *out, const char *resp, const char *msg)
{
    redisReply *r = read_reply(resp);
    dq_err err = {0};

    assert_int_equal(parse(r, out, &err), DQ_EPROTO);
    assert_int_equal(err.code, DQ_EPROTO);
    assert_string_equal(err.msg, msg);
    freeReplyObject(r);
}

static void
claim_names_the_element(void **state)
{
    dq_claimed cl;
    redisReply *r;
    dq_err err = {0};

    memset(&cl, 0, sizeof cl);
    expect_refusal(dq_reply_claim, &cl, "*5\r\n:1\r\n$3\r\nabc\r\n:0\r\n:0\r\n:0\r\n",
                   "claim reply: element 2 (next due) is a string, expected an integer");
    dq_claimed_free(&cl);
    expect_refusal(dq_reply_claim, &cl, "*5\r\n:1\r\n:2\r\n$-1\r\n:0\r\n:0\r\n",
                   "claim reply: element 3 (moved to failed) is nil, expected an integer");
    dq_claimed_free(&cl);
    expect_refusal(dq_reply_claim, &cl, "*6\r\n:1\r\n:2\r\n:0\r\n$1\r\nx\r\n:0\r\n:0\r\n",
                   "claim reply: an array of 6, expected an array of 3, then 2 per task "
                   "(envelope, due), then one per result, now us and the done flag");
    dq_claimed_free(&cl);
    expect_refusal(dq_reply_claim, &cl, ":7\r\n",
                   "claim reply: an integer, expected an array of 3, then 2 per task "
                   "(envelope, due), then one per result, now us and the done flag");
    dq_claimed_free(&cl);
    expect_refusal(dq_reply_claim, &cl,
                   "*9\r\n:1\r\n:2\r\n:0\r\n$1\r\nx\r\n:5\r\n:6\r\n:7\r\n:0\r\n:0\r\n",
                   "claim reply: element 6 (envelope of task 2) is an integer, expected a "
                   "string");
    dq_claimed_free(&cl);
    expect_refusal(dq_reply_claim, &cl, "*7\r\n:1\r\n:2\r\n:0\r\n$1\r\nx\r\n*0\r\n:0\r\n:0\r\n",
                   "claim reply: element 5 (due of task 1) is an array of 0, expected an "
                   "integer");
    dq_claimed_free(&cl);
    /* the done flag (done retention) is 0 or 1, after now us */
    expect_refusal(dq_reply_claim, &cl, "*5\r\n:1\r\n:2\r\n:0\r\n:0\r\n:2\r\n",
                   "claim reply: element 5 (done flag) is an integer, expected 0 or 1");
    dq_claimed_free(&cl);

    /* and a well-formed reply still parses, numbers as strings included */
    r = read_reply("*5\r\n:1700000000000\r\n$2\r\n-1\r\n:0\r\n:7\r\n:0\r\n");
    assert_int_equal(dq_reply_claim(r, &cl, &err), DQ_OK);
    assert_int_equal(cl.now_ms, 1700000000000);
    assert_int_equal(cl.next_due_ms, -1);
    assert_int_equal(cl.n, 0);
    assert_int_equal(cl.now_us, 7);
    assert_false(cl.keep_done);
    dq_claimed_free(&cl);
    freeReplyObject(r);
    /* with done retention on, each claimed task carries the flag to its ack */
    r = read_reply("*7\r\n:1700000000000\r\n:-1\r\n:0\r\n$1\r\nx\r\n:1700000000000\r\n"
                   ":0\r\n:1\r\n");
    assert_int_equal(dq_reply_claim(r, &cl, &err), DQ_OK);
    assert_int_equal(cl.n, 1);
    assert_true(cl.keep_done);
    assert_true(cl.tasks[0].keep_done);
    dq_claimed_free(&cl);
    freeReplyObject(r);
}

static void
enqueue_names_the_task(void **state)
{
    dq_enqueued e[2];
    struct dq_enqueue_reply o = {e, 2};

    expect_refusal(dq_reply_enqueue, &o, "*6\r\n$1\r\na\r\n:0\r\n:5\r\n:9\r\n:0\r\n:5\r\n",
                   "enqueue reply: element 4 (id of task 2) is an integer, expected a string");
    expect_refusal(dq_reply_enqueue, &o,
                   "*6\r\n$1\r\na\r\n:0\r\n:5\r\n$1\r\nb\r\n$2\r\nno\r\n:5\r\n",
                   "enqueue reply: element 5 (status of task 2) is a string, expected an "
                   "integer");
    expect_refusal(dq_reply_enqueue, &o, "*6\r\n$0\r\n\r\n:0\r\n:5\r\n$1\r\nb\r\n:0\r\n:5\r\n",
                   "enqueue reply: element 1 (id of task 1) is 0 bytes, expected 1..200");
    expect_refusal(dq_reply_enqueue, &o, "*3\r\n$1\r\na\r\n:0\r\n:5\r\n",
                   "enqueue reply: an array of 3, expected an array of 6 (id, status, due per "
                   "task)");
}

static void
stats_and_config_name_their_fields(void **state)
{
    dq_stats s;
    dq_config c;
    char resp[512];
    size_t n = 0;

    n += (size_t)snprintf(resp + n, sizeof resp - n, "*19\r\n");
    for (int i = 0; i < 19; i++)
        n += (size_t)snprintf(resp + n, sizeof resp - n, i == 7 ? "$-1\r\n" : ":%d\r\n", i);
    expect_refusal(dq_reply_stats, &s, resp,
                   "stats reply: element 8 (next due) is nil, expected an integer");
    expect_refusal(dq_reply_stats, &s, "*2\r\n:1\r\n:2\r\n",
                   "stats reply: an array of 2, expected an array of 19 integers");

    n = 0;
    n += (size_t)snprintf(resp + n, sizeof resp - n, "*16\r\n");
    for (int i = 0; i < 8; i++)
        n += (size_t)snprintf(resp + n, sizeof resp - n, "$1\r\nf\r\n%s",
                              i == 0 ? "$3\r\nabc\r\n" : ":1\r\n");
    expect_refusal(dq_reply_config, &c, resp,
                   "config reply: element 2 (max_delay_ms) is a string, expected an integer");
}

static void
page_and_search_name_the_item(void **state)
{
    dq_page p;
    struct dq_page_reply inflight = {&p, DQ_VIEW_INFLIGHT}, failed = {&p, DQ_VIEW_FAILED};
    dq_search cur = {0};
    struct dq_search_reply ss = {&cur, &p, DQ_VIEW_DUE};

    memset(&p, 0, sizeof p);
    expect_refusal(dq_reply_page, &inflight, "*5\r\n:1\r\n:1\r\n$3\r\nc:x\r\n*0\r\n$0\r\n\r\n",
                   "page reply: element 4 (lease deadline of item 1) is an array of 0, "
                   "expected an integer");
    dq_page_free(&p);
    expect_refusal(dq_reply_page, &failed, "*5\r\n:1\r\n:1\r\n$3\r\nc:x\r\n:5\r\n:0\r\n",
                   "page reply: element 5 (failure record of item 1) is an integer, expected "
                   "a string");
    dq_page_free(&p);
    expect_refusal(dq_reply_page, &failed, "*4\r\n:1\r\n:1\r\n$3\r\nc:x\r\n:5\r\n",
                   "page reply: an array of 4, expected an array of 2 (now, total), then 3 "
                   "per item");
    dq_page_free(&p);
    expect_refusal(dq_reply_search, &ss, "*2\r\n$1\r\nx\r\n:10\r\n",
                   "search reply: element 1 (next cursor) is a string, expected an integer");
    dq_page_free(&p);
    expect_refusal(dq_reply_search, &ss, "*5\r\n:-1\r\n:10\r\n:3\r\n:5\r\n$0\r\n\r\n",
                   "search reply: element 3 (envelope of item 1) is an integer, expected a "
                   "string");
    dq_page_free(&p);
}

static void
find_bulk_audit_and_the_rest(void **state)
{
    dq_task t;
    struct dq_find_reply fs = {.out = &t, .cursor = DQ_BUF_INIT};
    dq_bulk b;
    dq_audit au;
    dq_retried rt;
    dq_reaped rp;
    size_t count;
    bool lost[2];
    struct dq_extend_reply es = {lost, 2};
    int rcs[2];
    struct dq_ack_reply am = {2, rcs, NULL};

    memset(&t, 0, sizeof t);
    expect_refusal(dq_reply_find, &fs, "*1\r\n$3\r\nxyz\r\n",
                   "find reply: element 1 (kind) is \"xyz\", expected inflight, failed, "
                   "done, scheduled, parked, more or none");
    /* a parked task (PROTOCOL.md 4.10): {"parked", envelope, due, key, in flight, limit} */
    expect_refusal(dq_reply_find, &fs, "*4\r\n$6\r\nparked\r\n$3\r\nbad\r\n:5\r\n$1\r\nk\r\n",
                   "find reply: an array of 4, expected an array of 6 (\"parked\", envelope, "
                   "due, key, in flight, limit)");
    expect_refusal(dq_reply_find, &fs,
                   "*6\r\n$6\r\nparked\r\n$3\r\nbad\r\n:5\r\n$0\r\n\r\n:1\r\n:1\r\n",
                   "find reply: element 4 (key) is a string, expected a key of 1..64 bytes");
    expect_refusal(dq_reply_find, &fs,
                   "*6\r\n$6\r\nparked\r\n$3\r\nbad\r\n:5\r\n$1\r\nk\r\n$1\r\nx\r\n:1\r\n",
                   "find reply: element 5 (key in flight) is a string, expected an integer");
    dq_task_clear(&t);
    {
        /* an envelope that does not decode: parked all the same, its key from the reply */
        redisReply *r =
            read_reply("*7\r\n$6\r\nparked\r\n$3\r\nbad\r\n:5\r\n$4\r\nacme\r\n:2\r\n:2\r\n*0\r\n");
        dq_err err = {0};
        fs.found = false;
        assert_int_equal(dq_reply_find(r, &fs, &err), DQ_OK);
        assert_true(fs.found);
        assert_int_equal(t.state, DQ_STATE_PARKED);
        assert_int_equal(t.due_ms, 5);
        assert_string_equal(t.key, "acme");
        assert_int_equal(t.key_len, 4);
        assert_int_equal(t.key_inflight, 2);
        assert_int_equal(t.key_limit, 2);
        freeReplyObject(r);
        dq_task_clear(&t);
    }
    /* done retention: {"done", task key, done ms, done record} */
    expect_refusal(dq_reply_find, &fs, "*4\r\n$4\r\ndone\r\n$3\r\nc:x\r\n$2\r\nno\r\n$0\r\n\r\n",
                   "find reply: element 3 (done time) is a string, expected an integer");
    dq_task_clear(&t);
    {
        /* a done record that does not decode still names the finished task */
        redisReply *r = read_reply("*4\r\n$4\r\ndone\r\n$5\r\nc:abc\r\n:77\r\n$3\r\nbad\r\n");
        dq_err err = {0};
        fs.found = false;
        assert_int_equal(dq_reply_find(r, &fs, &err), DQ_OK);
        assert_true(fs.found);
        assert_int_equal(t.state, DQ_STATE_DONE);
        assert_string_equal(t.id, "abc");
        assert_true(t.custom_id);
        assert_int_equal(t.done_ms, 77);
        assert_int_equal(t.claimed_ms, -1);
        assert_null(t.worker);
        freeReplyObject(r);
        dq_task_clear(&t);
    }
    /* a done task's open unique-for window (fifth element), and a gone id's (none) */
    expect_refusal(dq_reply_find, &fs,
                   "*5\r\n$4\r\ndone\r\n$3\r\nc:x\r\n:7\r\n$0\r\n\r\n$1\r\nx\r\n",
                   "find reply: element 5 (unique until) is a string, expected an integer");
    dq_task_clear(&t);
    {
        redisReply *r = read_reply("*5\r\n$4\r\ndone\r\n$3\r\nc:x\r\n:7\r\n$3\r\nbad\r\n:99\r\n");
        dq_err err = {0};
        assert_int_equal(dq_reply_find(r, &fs, &err), DQ_OK);
        assert_int_equal(t.unique_until_ms, 99);
        freeReplyObject(r);
        dq_task_clear(&t);
        r = read_reply("*3\r\n$4\r\nnone\r\n:5000\r\n:1000\r\n");
        fs.found = false;
        assert_int_equal(dq_reply_find(r, &fs, &err), DQ_OK);
        assert_false(fs.found);
        assert_int_equal(fs.unique_until_ms, 5000);
        assert_int_equal(fs.now_ms, 1000);
        freeReplyObject(r);
    }
    expect_refusal(dq_reply_find, &fs, "*3\r\n$4\r\nnone\r\n$1\r\nx\r\n:1000\r\n",
                   "find reply: element 2 (unique until) is a string, expected an integer");
    expect_refusal(dq_reply_find, &fs,
                   "*4\r\n$8\r\ninflight\r\n$3\r\nc:x\r\n$2\r\nno\r\n$0\r\n\r\n",
                   "find reply: element 3 (lease deadline) is a string, expected an integer");
    dq_task_clear(&t);
    expect_refusal(dq_reply_find, &fs, "*3\r\n$9\r\nscheduled\r\n$1\r\nx\r\n$-1\r\n",
                   "find reply: element 3 (due) is nil, expected an integer");
    dq_task_clear(&t);
    expect_refusal(dq_reply_find, &fs, "*2\r\n$6\r\nfailed\r\n$3\r\nc:x\r\n",
                   "find reply: an array of 2, expected an array of 4 (\"failed\", task key, "
                   "failed time, record)");
    dq_task_clear(&t);
    /* history: the fifth element (fourth for scheduled), an array of strings */
    expect_refusal(dq_reply_find, &fs, "*5\r\n$6\r\nfailed\r\n$3\r\nc:x\r\n:5\r\n$0\r\n\r\n:1\r\n",
                   "find reply: element 5 (history) is an integer, expected an array of "
                   "history records");
    dq_task_clear(&t);
    expect_refusal(dq_reply_find, &fs,
                   "*4\r\n$9\r\nscheduled\r\n$1\r\nx\r\n:5\r\n*2\r\n$1\r\nx\r\n:3\r\n",
                   "find reply: element 4 (history) entry 2 is an integer, expected a string");
    dq_task_clear(&t);
    {
        /* an entry that does not decode is kept as "?", not a reason to refuse the task */
        redisReply *r = read_reply("*4\r\n$9\r\nscheduled\r\n$1\r\nx\r\n:5\r\n*2\r\n$1\r\nx\r\n"
                                   "$13\r\n\x97\x01\x02\x05\xa1w\xa4"
                                   "fail\x03\xa0\r\n");
        dq_err err = {0};
        assert_int_equal(dq_reply_find(r, &fs, &err), DQ_OK);
        assert_int_equal(t.nhistory, 2);
        assert_string_equal(t.history[0].outcome, "?");
        assert_int_equal(t.history[1].attempt, 2);
        assert_int_equal(t.history[1].started_ms, 5);
        assert_string_equal(t.history[1].worker, "w");
        assert_string_equal(t.history[1].outcome, "fail");
        assert_int_equal(t.history[1].duration_ms, 3);
        assert_string_equal(t.history[1].error, "");
        freeReplyObject(r);
        dq_task_clear(&t);
    }
    dq_buf_free(&fs.cursor);

    memset(&b, 0, sizeof b);
    expect_refusal(dq_reply_requeue_all, &b,
                   "*8\r\n:0\r\n:1\r\n:2\r\n:3\r\n:4\r\n:0\r\n:9\r\n:0\r\n",
                   "requeue reply: element 7 (cursor key) is an integer, expected a string");
    expect_refusal(dq_reply_requeue_all, &b,
                   "*8\r\n:0\r\n:1\r\n:2\r\n$1\r\nx\r\n:4\r\n:0\r\n$0\r\n\r\n:0\r\n",
                   "requeue reply: element 4 (done) is a string, expected an integer");
    expect_refusal(dq_reply_drop_all, &b, "*3\r\n:0\r\n:1\r\n$-1\r\n",
                   "drop reply: element 3 (finished) is nil, expected an integer");
    expect_refusal(dq_reply_requeue_ids, &count, "*0\r\n",
                   "requeue reply: an array of 0, expected an array of 1 (moved)");
    expect_refusal(dq_reply_drop_ids, &count, "*1\r\n$1\r\nx\r\n",
                   "drop reply: element 1 (dropped) is a string, expected an integer");
    expect_refusal(dq_reply_retry, &rt, "*2\r\n:0\r\n*1\r\n:1\r\n",
                   "retry reply: element 2 (due) is an array of 1, expected an integer");
    expect_refusal(dq_reply_reap, &rp, "*3\r\n:0\r\n:0\r\n+OK\r\n",
                   "reap reply: element 3 (next lease) is a status, expected an integer");
    expect_refusal(dq_reply_extend, &es, "*2\r\n:5\r\n$1\r\nx\r\n",
                   "extend reply: element 2 (lease deadline of task 2) is a string, expected "
                   "an integer");
    expect_refusal(dq_reply_ack_many, &am, "*2\r\n:1\r\n:0\r\n",
                   "ack reply: element 2 (result of task 2) is an integer, expected 1 or an "
                   "error text");

    memset(&au, 0, sizeof au);
    expect_refusal(dq_reply_audit, &au, "*1\r\n:5\r\n",
                   "audit reply: element 1 (entry 1) is an integer, expected an array of 2 "
                   "(stream id, fields)");
    dq_audit_free(&au);
    expect_refusal(dq_reply_audit, &au, "*1\r\n*2\r\n$3\r\n1-0\r\n$1\r\nx\r\n",
                   "audit reply: element 1 (entry 1's fields) is a string, expected an array");
    dq_audit_free(&au);
}

/* An overview reply (PROTOCOL.md 5.15a) of 31 + 2k elements, with @extra RESP elements
 * (counted in @nextra) after it: the throttle's hook. */
static char *
overview_resp(const char *extra, int nextra)
{
    static char buf[4096];
    int n = snprintf(buf, sizeof buf, "*%d\r\n", 31 + 20 + nextra);
    /* now, due, future, far, in flight, failed, expired, oldest, far_future_ms */
    const long long head[] = {1000, 7, 2, 0, 1, 3, 0, 4000, 3600000};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, ":%lld\r\n", head[i]);
    n += snprintf(buf + n, sizeof buf - (size_t)n,
                  ":1\r\n:500\r\n:0\r\n$5\r\nalice\r\n$6\r\ndeploy\r\n");
    const long long mid[] = {300000, 240000, 5, 9, 1, 300000, 100000, 50, 60, 90, 2, 1, 1, 900, 0};
    for (size_t i = 0; i < sizeof mid / sizeof mid[0]; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, ":%lld\r\n", mid[i]);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "$0\r\n\r\n:10\r\n");
    for (int i = 0; i < 20; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, ":%d\r\n", i);
    snprintf(buf + n, sizeof buf - (size_t)n, "%s", extra);
    return buf;
}

static void
overview_reads_its_row_and_the_throttle_hook(void **state)
{
    struct dq_overview_row row;
    dq_err err = {0};

    (void)state;
    memset(&row, 0, sizeof row);
    redisReply *r = read_reply(overview_resp("", 0));
    assert_int_equal(dq_reply_overview(r, &row, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(row.stats.due, 7);
    assert_int_equal(row.stats.failed, 3);
    assert_int_equal(row.stats.oldest_due_age_ms, 4000);
    assert_true(row.stats.paused);
    assert_string_equal(row.stats.paused_by, "alice");
    assert_string_equal(row.stats.pause_reason, "deploy");
    assert_int_equal(row.stats.window_failed, 9);
    assert_int_equal(row.alert_memory_pct, 90);
    assert_int_equal(row.workers_registered, 2);
    assert_int_equal(row.last_beat_ms, 900);
    assert_int_equal(row.done_per_min[0], 0);
    assert_int_equal(row.done_per_min[9], 9);
    assert_int_equal(row.failed_per_min[9], 19);
    assert_int_equal(row.throttled, -1); /* no throttle element: not known */
    r = read_reply(overview_resp(":1\r\n", 1));
    assert_int_equal(dq_reply_overview(r, &row, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(row.throttled, 1);
    r = read_reply(overview_resp(":0\r\n$3\r\nnew\r\n", 2)); /* and more after it */
    assert_int_equal(dq_reply_overview(r, &row, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(row.throttled, 0);
    expect_refusal(dq_reply_overview, &row, "*3\r\n:1\r\n:2\r\n:3\r\n",
                   "overview reply: not an array of at least 31 elements");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(claim_names_the_element),
        cmocka_unit_test(enqueue_names_the_task),
        cmocka_unit_test(stats_and_config_name_their_fields),
        cmocka_unit_test(page_and_search_name_the_item),
        cmocka_unit_test(find_bulk_audit_and_the_rest),
        cmocka_unit_test(overview_reads_its_row_and_the_throttle_hook),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/reply", tests, NULL, NULL);
}
