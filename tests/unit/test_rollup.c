/* SPDX-License-Identifier: MIT */
/*
 * test_rollup.c: the per-minute rollups as the C side reads them (PROTOCOL.md 13 and
 * 5.33): the history reply parser refuses short, malformed,
 * negative-length and wrongly counted replies with a message naming the element, and
 * reads negative or huge counts without overflowing; the stats reply's run-time totals
 * (absent from older scripts: zeros); and the quantile estimate: known histograms give
 * known answers, and on random samples the estimate is never further from the true
 * quantile than the width of the bucket that holds it. Replies are RESP bytes read by
 * hiredis's own reader, as the client reads them.
 */
#include "harness/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "lib/reply.h"

/* A growing RESP text. */
struct resp {
    char *s;
    size_t len, cap;
};

static void
put(struct resp *b, const char *fmt, ...)
{
    va_list ap;
    char tmp[256];

    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof tmp);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    memcpy(b->s + b->len, tmp, (size_t)n + 1);
    b->len += (size_t)n;
}

static redisReply *
read_resp(const struct resp *b)
{
    redisReader *rd = redisReaderCreate();
    void *reply = NULL;

    assert_non_null(rd);
    assert_int_equal(redisReaderFeed(rd, b->s, b->len), REDIS_OK);
    assert_int_equal(redisReaderGetReply(rd, &reply), REDIS_OK);
    assert_non_null(reply);
    redisReaderFree(rd);
    return reply;
}

/* A history reply: the head, then @nrows rows of 25 where row i has at = base + i min,
 * counter k = 10 * (i + 1) + k, run bucket b = b + i, sum 1000 + i, backlog 7 + i and age
 * 70 + i; @elements overrides the array's length (0: the right one). */
static void
history_resp(struct resp *b, long long version, long long step_ms, long long nrows, size_t elements,
             long long base_ms)
{
    size_t n = elements ? elements : 5 + (size_t)(nrows > 0 ? nrows : 0) * 25;

    b->len = 0;
    put(b, "*%zu\r\n:%lld\r\n:%lld\r\n:%lld\r\n:%lld\r\n:%lld\r\n", n, version, 1767312000000LL,
        1440LL, step_ms, nrows);
    for (long long i = 0; i < nrows && 5 + (size_t)i * 25 < n; i++) {
        put(b, ":%lld\r\n", base_ms + i * step_ms);
        for (int k = 0; k < 9; k++)
            put(b, ":%lld\r\n", 10 * (i + 1) + k);
        for (int k = 0; k < DQ_RUN_BUCKETS; k++)
            put(b, ":%lld\r\n", k + i);
        put(b, ":%lld\r\n:%lld\r\n:%lld\r\n", 1000 + i, 7 + i, 70 + i);
    }
}

/* Parses @b, expecting DQ_EPROTO with exactly @msg, and that nothing is left to leak. */
static void
expect_history_refusal(const struct resp *b, const char *msg)
{
    redisReply *r = read_resp(b);
    dq_history h = {0};
    dq_err err = {0};

    assert_int_equal(dq_reply_history(r, &h, &err), DQ_EPROTO);
    assert_int_equal(err.code, DQ_EPROTO);
    assert_string_equal(err.msg, msg);
    dq_history_free(&h);
    assert_null(h.rows);
    freeReplyObject(r);
}

static void
history_reads_rows(void **state)
{
    struct resp b = {0};
    dq_history h = {0};
    dq_err err = {0};
    const long long base = 29455200LL * 60000; /* a minute */

    (void)state;
    history_resp(&b, 1, 60000, 3, 0, base);
    redisReply *r = read_resp(&b);
    assert_int_equal(dq_reply_history(r, &h, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(h.n, 3);
    assert_int_equal(h.now_ms, 1767312000000LL);
    assert_int_equal(h.history_minutes, 1440);
    assert_int_equal(h.step_ms, 60000);
    for (size_t i = 0; i < 3; i++) {
        const dq_history_row *w = &h.rows[i];
        int64_t k = 10 * (int64_t)(i + 1);
        assert_int_equal(w->at_ms, base + (int64_t)i * 60000);
        assert_int_equal(w->enqueued, k);
        assert_int_equal(w->started, k + 1);
        assert_int_equal(w->done, k + 2);
        assert_int_equal(w->retried, k + 3);
        assert_int_equal(w->failed, k + 4);
        assert_int_equal(w->expired, k + 5);
        assert_int_equal(w->requeued, k + 6);
        assert_int_equal(w->dropped, k + 7);
        assert_int_equal(w->lost, k + 8);
        for (int j = 0; j < DQ_RUN_BUCKETS; j++)
            assert_int_equal(w->run[j], j + (int64_t)i);
        assert_int_equal(w->run_sum_ms, 1000 + (int64_t)i);
        assert_int_equal(w->backlog, 7 + (int64_t)i);
        assert_int_equal(w->oldest_due_ms, 70 + (int64_t)i);
    }
    dq_history_free(&h);
    assert_null(h.rows);
    assert_int_equal(h.n, 0);

    /* no rows at all is a well-formed answer */
    history_resp(&b, 1, 900000, 0, 0, base);
    r = read_resp(&b);
    assert_int_equal(dq_reply_history(r, &h, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(h.n, 0);
    assert_int_equal(h.step_ms, 900000);
    dq_history_free(&h);

    /* numbers as strings (Lua may answer either); a negative count (a foreign HINCRBY)
     * reads as 0; no sample is -1 / -1, and so is half of one */
    b.len = 0;
    put(&b, "*55\r\n:1\r\n$13\r\n1767312000000\r\n:60\r\n:60000\r\n:2\r\n");
    put(&b, "$13\r\n%lld\r\n:-5\r\n", base);
    for (int k = 0; k < 8 + DQ_RUN_BUCKETS; k++)
        put(&b, ":%d\r\n", k);
    put(&b, ":-9\r\n:-1\r\n:-1\r\n");
    put(&b, ":%lld\r\n", base + 60000);
    for (int k = 0; k < 9 + DQ_RUN_BUCKETS + 1; k++)
        put(&b, ":1\r\n");
    put(&b, ":5\r\n:-3\r\n");
    r = read_resp(&b);
    assert_int_equal(dq_reply_history(r, &h, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(h.n, 2);
    assert_int_equal(h.history_minutes, 60);
    assert_int_equal(h.rows[0].enqueued, 0);
    assert_int_equal(h.rows[0].started, 0);
    assert_int_equal(h.rows[0].lost, 7);
    assert_int_equal(h.rows[0].run_sum_ms, 0);
    assert_int_equal(h.rows[0].backlog, -1);
    assert_int_equal(h.rows[0].oldest_due_ms, -1);
    assert_int_equal(h.rows[1].backlog, -1);
    assert_int_equal(h.rows[1].oldest_due_ms, -1);
    dq_history_free(&h);
    free(b.s);
}

static void
history_refuses_malformed(void **state)
{
    struct resp b = {0};
    const long long base = 29455200LL * 60000;

    (void)state;
    b.len = 0;
    put(&b, ":7\r\n");
    expect_history_refusal(&b, "history reply: an integer, expected an array of 5, then 25 "
                               "per row");
    b.len = 0;
    put(&b, "*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n");
    expect_history_refusal(&b, "history reply: an array of 4, expected an array of 5, then 25 "
                               "per row");
    history_resp(&b, 2, 60000, 1, 0, base);
    expect_history_refusal(&b, "history reply: element 1 (version) is 2, expected 1");
    history_resp(&b, 1, 90000, 1, 0, base);
    expect_history_refusal(&b, "history reply: element 4 (step ms) is 90000, expected a whole "
                               "number of minutes, 1..1440");
    history_resp(&b, 1, 0, 1, 30, base);
    expect_history_refusal(&b, "history reply: element 4 (step ms) is 0, expected a whole "
                               "number of minutes, 1..1440");
    history_resp(&b, 1, 60000, -1, 5, base);
    expect_history_refusal(&b, "history reply: element 5 (rows) is -1, expected 0..1441");
    /* a huge row count is refused before anything is allocated for it */
    history_resp(&b, 1, 60000, 1LL << 60, 5, base);
    expect_history_refusal(&b, "history reply: element 5 (rows) is 1152921504606846976, "
                               "expected 0..1441");
    /* a row count that does not match the length: short, and one element too many */
    history_resp(&b, 1, 60000, 2, 30, base);
    expect_history_refusal(&b, "history reply: an array of 30, expected an array of 5 + 25 per "
                               "row (2 rows)");
    history_resp(&b, 1, 60000, 1, 0, base);
    b.s[1] = '3', b.s[2] = '1'; /* "*30" -> "*31", then the one extra */
    put(&b, ":0\r\n");
    expect_history_refusal(&b, "history reply: an array of 31, expected an array of 5 + 25 per "
                               "row (1 rows)");
    /* a row element of the wrong type is named with its row */
    b.len = 0;
    put(&b, "*55\r\n:1\r\n:1767312000000\r\n:60\r\n:60000\r\n:2\r\n");
    for (int i = 0; i < 25; i++)
        put(&b, ":%lld\r\n", i == 0 ? base : 1);
    put(&b, ":%lld\r\n:1\r\n:1\r\n$2\r\nno\r\n", base + 60000);
    for (int i = 4; i < 25; i++)
        put(&b, ":1\r\n");
    expect_history_refusal(&b, "history reply: element 34 (done of row 2) is a string, expected "
                               "an integer");
    /* rows must come in time order */
    b.len = 0;
    put(&b, "*55\r\n:1\r\n:1767312000000\r\n:1440\r\n:60000\r\n:2\r\n");
    for (int i = 0; i < 50; i++)
        put(&b, ":%lld\r\n", i % 25 == 0 ? base : 1);
    expect_history_refusal(&b, "history reply: element 31 (at of row 2) is 1767312000000, "
                               "expected a time after the row before's");
    /* the history switch is 0..10080 minutes */
    b.len = 0;
    put(&b, "*5\r\n:1\r\n:1767312000000\r\n:10081\r\n:60000\r\n:0\r\n");
    expect_history_refusal(&b, "history reply: element 3 (history minutes) is 10081, expected "
                               "0..10080");
    free(b.s);
}

/* Counts near INT64_MAX read as they are; the quantile of such a row stays in range. */
static void
history_huge_counts(void **state)
{
    struct resp b = {0};
    dq_history h = {0};
    dq_err err = {0};

    (void)state;
    put(&b, "*30\r\n:1\r\n:1767312000000\r\n:1440\r\n:60000\r\n:1\r\n:1767312000000\r\n");
    for (int k = 0; k < 22; k++)
        put(&b, ":9223372036854775807\r\n");
    put(&b, ":9223372036854775807\r\n:9223372036854775807\r\n");
    redisReply *r = read_resp(&b);
    assert_int_equal(dq_reply_history(r, &h, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(h.n, 1);
    assert_int_equal(h.rows[0].done, INT64_MAX);
    int64_t p = dq_run_quantile(h.rows[0].run, 0.99);
    assert_true(p >= 0 && p <= 10000);
    assert_int_equal(dq_run_quantile(h.rows[0].run, 1.0), 10000);
    dq_history_free(&h);
    free(b.s);
}

/* A stats reply of @n elements: the 19 counts, the pause, the window and the limits as
 * stats.lua writes them, then (with @n 59) the 13 run-time integers. */
static void
stats_resp(struct resp *b, size_t n, const char *bucket3)
{
    static const char *const pause[] = {":0\r\n", ":-1\r\n", ":-1\r\n", "$0\r\n\r\n", "$0\r\n\r\n"};
    static const char *const window[] = {":300000\r\n", ":1000\r\n",  ":0\r\n", ":0\r\n",
                                         ":0\r\n",      "$0\r\n\r\n", ":0\r\n", ":0\r\n"};
    size_t i;

    b->len = 0;
    put(b, "*%zu\r\n", n);
    for (i = 0; i < 19; i++)
        put(b, ":%zu\r\n", i == 0 ? (size_t)1767312000000ULL : i);
    for (size_t k = 0; k < 5; k++, i++)
        put(b, "%s", pause[k]);
    for (size_t k = 0; k < 8; k++, i++)
        put(b, "%s", window[k]);
    for (size_t k = 0; k < 14; k++, i++)
        put(b, "%s",
            k == 12 || k == 13               ? "$0\r\n\r\n"
            : (k == 5 || k == 10 || k == 11) ? ":-1\r\n"
                                             : ":0\r\n");
    for (size_t k = 0; i < n; k++, i++) {
        if (k == 3 && bucket3 != NULL)
            put(b, "%s", bucket3);
        else
            put(b, ":%lld\r\n", k == 0 ? -4LL : (long long)(k * 100));
    }
}

static void
stats_run_totals(void **state)
{
    struct resp b = {0};
    dq_stats s;
    dq_err err = {0};
    redisReply *r;

    (void)state;
    /* an older server's reply has no run-time totals: zeros */
    stats_resp(&b, 46, NULL);
    r = read_resp(&b);
    memset(&s, 0xff, sizeof s);
    assert_int_equal(dq_reply_stats(r, &s, &err), DQ_OK);
    freeReplyObject(r);
    for (int i = 0; i < DQ_RUN_BUCKETS; i++)
        assert_int_equal(s.run[i], 0);
    assert_int_equal(s.run_sum_ms, 0);
    assert_int_equal(s.dropped, 18);
    /* with them: 12 buckets and the sum; a negative count reads as 0 */
    stats_resp(&b, 59, NULL);
    r = read_resp(&b);
    assert_int_equal(dq_reply_stats(r, &s, &err), DQ_OK);
    freeReplyObject(r);
    assert_int_equal(s.run[0], 0);
    assert_int_equal(s.run[1], 100);
    assert_int_equal(s.run[11], 1100);
    assert_int_equal(s.run_sum_ms, 1200);
    /* and a bad one is named */
    stats_resp(&b, 59, "$3\r\nabc\r\n");
    r = read_resp(&b);
    assert_int_equal(dq_reply_stats(r, &s, &err), DQ_EPROTO);
    assert_string_equal(err.msg, "stats reply: element 50 (run bucket 3) is a string, expected "
                                 "an integer");
    freeReplyObject(r);
    free(b.s);
}

static void
quantile_known_answers(void **state)
{
    int64_t h[DQ_RUN_BUCKETS];

    (void)state;
    memset(h, 0, sizeof h);
    assert_int_equal(dq_run_quantile(h, 0.5), -1); /* no runs */
    h[4] = 100;                                    /* 100 runs of 51..100 ms */
    assert_int_equal(dq_run_quantile(h, 0.5), 75);
    assert_int_equal(dq_run_quantile(h, 0.95), 98); /* 97.5 */
    assert_int_equal(dq_run_quantile(h, 0.0), 50);
    assert_int_equal(dq_run_quantile(h, 1.0), 100);
    assert_int_equal(dq_run_quantile(h, -0.1), -1);
    assert_int_equal(dq_run_quantile(h, 1.5), -1);
    assert_int_equal(dq_run_quantile(h, NAN), -1);
    memset(h, 0, sizeof h);
    h[0] = 50; /* half at most 5 ms, half 101..250 ms */
    h[5] = 50;
    assert_int_equal(dq_run_quantile(h, 0.5), 5);
    assert_int_equal(dq_run_quantile(h, 0.25), 3); /* 2.5 */
    assert_int_equal(dq_run_quantile(h, 0.95), 235);
    assert_int_equal(dq_run_quantile(h, 0.99), 247);
    h[11] = 1; /* one run past 10 s: p99 still in 101..250, the max in the open bucket */
    assert_int_equal(dq_run_quantile(h, 0.99), 250);
    assert_int_equal(dq_run_quantile(h, 1.0), 10000);
    memset(h, 0, sizeof h);
    h[3] = -7; /* a foreign negative count is no run */
    assert_int_equal(dq_run_quantile(h, 0.5), -1);
    h[10] = 4;
    assert_int_equal(dq_run_quantile(h, 0.5), 7500);
}

/* The bucket of a run of @d ms, as the scripts count it: the first bound >= d. */
static int
bucket_of(int64_t d)
{
    for (int i = 0; i < DQ_RUN_BUCKETS - 1; i++)
        if (d <= dq_run_bounds_ms[i])
            return i;
    return DQ_RUN_BUCKETS - 1;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t
next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The stated error bound: on random samples from several shapes (uniform, log-uniform,
 * two clusters, a heavy tail past 10 s), the estimate of p50, p90, p95, p99 and p99.9 is
 * within the width of the bucket holding the true (nearest-rank) quantile; in the open
 * bucket it is its lower bound, never above the truth. */
static void
quantile_error_bound(void **state)
{
    enum { N = 2000 };
    static int64_t v[N];
    const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};

    (void)state;
    for (int shape = 0; shape < 4; shape++) {
        for (int trial = 0; trial < 50; trial++) {
            int64_t h[DQ_RUN_BUCKETS] = {0};
            size_t n = 1 + next_rand() % N;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = next_rand();
                switch (shape) {
                case 0:
                    v[i] = (int64_t)(x % 3000);
                    break;
                case 1:
                    v[i] = (int64_t)exp((double)(x % 10000) / 10000.0 * log(20000.0));
                    break;
                case 2:
                    v[i] = (x & 1) ? (int64_t)(x % 8) : 400 + (int64_t)(x % 200);
                    break;
                default:
                    v[i] = (x % 10 == 0) ? 10001 + (int64_t)(x % 50000) : (int64_t)(x % 900);
                }
                h[bucket_of(v[i])]++;
            }
            qsort(v, n, sizeof v[0], cmp_i64);
            for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
                size_t rank = (size_t)ceil(qs[k] * (double)n);
                int64_t truth = v[rank > 0 ? rank - 1 : 0];
                int b = bucket_of(truth);
                int64_t est = dq_run_quantile(h, qs[k]);
                if (b == DQ_RUN_BUCKETS - 1) {
                    assert_int_equal(est, dq_run_bounds_ms[DQ_RUN_BUCKETS - 2]);
                    assert_true(est <= truth);
                    continue;
                }
                int64_t lo = b == 0 ? 0 : dq_run_bounds_ms[b - 1], hi = dq_run_bounds_ms[b];
                if (llabs(est - truth) > hi - lo)
                    fail_msg("shape %d n %zu q %g: estimate %lld, truth %lld, bucket %lld..%lld",
                             shape, n, qs[k], (long long)est, (long long)truth, (long long)lo,
                             (long long)hi);
                assert_true(est >= lo && est <= hi);
            }
        }
    }
}

/* The open-bucket test beside the quantile (a closed bucket's top, exactly 10 s, is not
 * open), and the row sum: negatives count 0, sums stop at INT64_MAX, the sample stays. */
static void
quantile_open_and_row_add(void **state)
{
    (void)state;
    int64_t run[DQ_RUN_BUCKETS] = {0};

    run[10] = 1; /* 5..10 s */
    assert_int_equal(dq_run_quantile(run, 1.0), 10000);
    assert_false(dq_run_quantile_open(run, 1.0));
    run[11] = 1; /* and one over 10 s */
    assert_false(dq_run_quantile_open(run, 0.5));
    assert_true(dq_run_quantile_open(run, 0.99));
    assert_false(dq_run_quantile_open((int64_t[DQ_RUN_BUCKETS]){0}, 0.5));

    dq_history_row sum = {.done = INT64_MAX - 1, .backlog = 7, .oldest_due_ms = 9};
    dq_history_row r = {.done = 5, .failed = -3, .retried = 2, .run_sum_ms = 40, .backlog = 1};
    r.run[3] = 4;
    dq_history_row_add(&sum, &r);
    dq_history_row_add(&sum, &r);
    assert_true(sum.done == INT64_MAX);
    assert_int_equal(sum.failed, 0);
    assert_int_equal(sum.retried, 4);
    assert_int_equal(sum.run[3], 8);
    assert_int_equal(sum.run_sum_ms, 80);
    assert_int_equal(sum.backlog, 7);
    assert_int_equal(sum.oldest_due_ms, 9);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(history_reads_rows),        cmocka_unit_test(history_refuses_malformed),
        cmocka_unit_test(history_huge_counts),       cmocka_unit_test(stats_run_totals),
        cmocka_unit_test(quantile_known_answers),    cmocka_unit_test(quantile_error_bound),
        cmocka_unit_test(quantile_open_and_row_add),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/rollup", tests, NULL, NULL);
}
