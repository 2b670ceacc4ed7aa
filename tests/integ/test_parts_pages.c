/* SPDX-License-Identifier: MIT */
/*
 * test_parts_pages.c: pages of a partitioned queue against a real redis-server (single
 * server, partitions 4; PROTOCOL.md 14.7): `delayq ls due --limit 40` lists exactly the
 * 40 earliest in due order, paging with --after returns every task once in order, failed
 * and in-flight pages are merged by their times, export and import round-trip every
 * partition's tasks, and a queue that is not partitioned sends the page call of before.
 */
#include "harness/cli.h"
#include "harness/fixture.h"

#include "lib/parts.h"

#define NTASKS 200
#define NPARTS 4

static int
setup(void **state)
{
    if (cli_group_setup(state) != 0)
        return -1;
    *state = &cli_redis;
    return 0;
}

static int
teardown(void **state)
{
    return cli_group_teardown(state);
}

static void
set_partitions(struct fixture *f, const char *queue, int64_t n)
{
    dq_config cfg = {.partitions = n};
    ASSERT_OK(f, dq_config_set(f->c, queue, &cfg, &f->err));
}

/* The ids of the JSON lines of @out ({"id":"...",...} each), into @ids (at most @max). */
static size_t
json_ids(const char *out, char ids[][DQ_ID_MAX + 1], size_t max)
{
    size_t n = 0;

    for (const char *s = out; (s = strstr(s, "{\"id\":\"")) != NULL && n < max; n++) {
        s += 7;
        const char *e = strchr(s, '"');
        assert_non_null(e);
        snprintf(ids[n], DQ_ID_MAX + 1, "%.*s", (int)(e - s), s);
        s = e;
    }
    return n;
}

/* NTASKS tasks due 5 ms apart from a second ahead (times the harness's slowdown: a due
 * time passed before its enqueue would be clamped to now), enqueued in a shuffled order
 * (due rank k = 37 i mod NTASKS), with generated ids (round robin over the partitions):
 * byrank[k] is the id due k-th, *@base its due time minus 5 k. Returns once all are due. */
static void
fill(struct fixture *f, char byrank[][DQ_ID_MAX + 1], int64_t *base)
{
    dq_stats st;

    ASSERT_OK(f, dq_stats_get(f->c, f->queue, &st, &f->err));
    *base = st.now_ms + 1000 * test_slowdown();
    for (int i = 0; i < NTASKS; i++) {
        int k = (37 * i) % NTASKS;
        dq_enqueue_opts o = {.at_ms = *base + 5LL * k};
        dq_enqueued e;
        char payload[16];
        snprintf(payload, sizeof payload, "t%03d", k);
        ASSERT_OK(f, dq_enqueue(f->c, f->queue, &o, payload, strlen(payload), &e, &f->err));
        snprintf(byrank[k], DQ_ID_MAX + 1, "%s", e.id);
    }
    int64_t t0 = test_mono_ms();
    do {
        ASSERT_OK(f, dq_stats_get(f->c, f->queue, &st, &f->err));
        if (st.due == NTASKS)
            return;
        test_nap_ms(20);
    } while (test_mono_ms() - t0 < 10000 + 1000 * test_slowdown());
    fail_msg("%lld of %d due after the deadline", (long long)st.due, NTASKS);
}

/* Every partition holds some of the tasks (the merge has something to merge). */
static void
spread(struct fixture *f)
{
    struct dq_parts p;

    ASSERT_OK(f, dq_parts_get(f->c, f->queue, &p, &f->err));
    assert_int_equal(p.all, NPARTS);
    for (size_t i = 0; i < p.all; i++) {
        char key[200];
        snprintf(key, sizeof key, "dq:{%s}:sched", p.names[i]);
        const char *argv[] = {"ZCARD", key};
        if (redis_int(f, 2, argv) < NTASKS / NPARTS / 2)
            fail_msg("partition %zu (%s) holds %lld tasks", i, p.names[i], redis_int(f, 2, argv));
    }
    dq_parts_free(&p);
}

static void
ls_due_limit_and_paging(void **state)
{
    struct fixture f;
    int64_t base;
    static char byrank[NTASKS][DQ_ID_MAX + 1], got[NTASKS + 1][DQ_ID_MAX + 1];
    struct result r = {0};
    char after[4096] = "";
    size_t seen = 0;

    fixture_open(&f, state, "pdue");
    set_partitions(&f, f.queue, NPARTS);
    fill(&f, byrank, &base);
    spread(&f);

    /* the 40 earliest, in due order */
    RUN(&r, "ls", "due", "-q", f.queue, "--limit", "40", "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_ids(r.out, got, NTASKS), 40);
    for (size_t k = 0; k < 40; k++)
        assert_string_equal(got[k], byrank[k]);
    /* stdout stays JSON lines: the next page's cursor goes to stderr */
    assert_non_null(strstr(r.err, "next page: --after "));

    /* the text form: its footer names the next page's cursor */
    RUN(&r, "ls", "due", "-q", f.queue, "--limit", "40");
    ASSERT_EXIT(&r, 0);
    const char *hint = strstr(r.out, "(40 of 200 shown; next page: --after ");
    if (hint == NULL)
        fail_msg("no next-page footer in:\n%s", esc(r.out, r.out_len));

    /* paged through, 40 at a time: every task once, in due order */
    while (seen < NTASKS) {
        if (seen == 0)
            RUN(&r, "ls", "due", "-q", f.queue, "--limit", "40", "--after", "0");
        else
            RUN(&r, "ls", "due", "-q", f.queue, "--limit", "40", "--after", after);
        ASSERT_EXIT(&r, 0);
        const char *cut = strstr(r.out, "--after ");
        const char *last = strstr(r.out, "the last page");
        size_t rows = 0;
        for (const char *s = r.out; (s = strchr(s, '\n')) != NULL; s++)
            rows++;
        rows -= 2; /* the header and the footer */
        assert_true(rows >= 1 && rows <= 40);
        seen += rows;
        if (cut != NULL) {
            sscanf(cut + 8, "%4000[0-9.]", after);
        } else {
            assert_non_null(last);
            break;
        }
    }
    assert_int_equal(seen, NTASKS);

    /* the same through the library, checking each id */
    dq_page_cursor cur = {0};
    size_t k = 0;
    for (;;) {
        dq_page p;
        ASSERT_OK(&f, dq_page_next(f.c, f.queue, DQ_VIEW_DUE, 33, &cur, &p, &f.err));
        assert_int_equal(p.total, NTASKS);
        for (size_t i = 0; i < p.n; i++, k++) {
            assert_true(k < NTASKS);
            assert_string_equal(p.tasks[i].id, byrank[k]);
            assert_int_equal(p.tasks[i].due_ms, base + 5LL * (int64_t)k);
        }
        size_t n = p.n;
        dq_page_free(&p);
        if (n < 33)
            break;
    }
    assert_int_equal(k, NTASKS);
    assert_int_equal(cur.n, NPARTS);
    dq_page_cursor_free(&cur);

    /* dq_page_get's offsets on the logical queue (deep ones walk from the top) */
    dq_page p;
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 150, 30, &p, &f.err));
    assert_int_equal(p.n, 30);
    for (size_t i = 0; i < p.n; i++)
        assert_string_equal(p.tasks[i].id, byrank[150 + i]);
    dq_page_free(&p);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 190, 30, &p, &f.err));
    assert_int_equal(p.n, 10);
    assert_int_equal(p.total, NTASKS);
    dq_page_free(&p);

    /* bad cursors: a usage error naming the option */
    RUN(&r, "ls", "due", "-q", f.queue, "--after", "1.x");
    ASSERT_EXIT(&r, 2);
    assert_non_null(strstr(r.err, "--after"));
    RUN(&r, "ls", "due", "-q", f.queue, "--after", "0.0.0.0.0");
    ASSERT_EXIT(&r, 2);
    assert_non_null(strstr(r.err, "5 positions"));
    RUN(&r, "ls", "due", "-q", f.queue, "--after", "0", "--offset", "3");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
    fixture_close(&f);
}

/* Claims everything of partition @name (lease @lease_ms) into @out. */
static void
claim_all(struct fixture *f, const char *name, int64_t lease_ms, dq_claimed *out)
{
    ASSERT_OK(f, dq_claim(f->c, name, 1000, lease_ms, "w", out, &f->err));
}

static void
failed_and_inflight_merged(void **state)
{
    struct fixture f;
    int64_t base;
    static char byrank[NTASKS][DQ_ID_MAX + 1];
    struct dq_parts parts;
    size_t nfailed = 0, nflight = 0;

    fixture_open(&f, state, "pfail");
    set_partitions(&f, f.queue, NPARTS);
    fill(&f, byrank, &base);
    ASSERT_OK(&f, dq_parts_get(f.c, f.queue, &parts, &f.err));
    /* partitions 0 and 2 fail their tasks, alternately, so the failed times interleave;
     * 1 and 3 keep theirs in flight, 3's leases shorter than 1's */
    dq_claimed cl[NPARTS];
    for (size_t i = 0; i < NPARTS; i++)
        claim_all(&f, parts.names[i], i == 3 ? 60000 : 600000, &cl[i]);
    for (size_t j = 0; j < cl[0].n || j < cl[2].n; j++) {
        for (size_t i = 0; i < NPARTS; i += 2) {
            if (j >= cl[i].n)
                continue;
            ASSERT_OK(&f, dq_fail(f.c, parts.names[i], &cl[i].tasks[j], "boom", "", &f.err));
            nfailed++;
        }
    }
    nflight = cl[1].n + cl[3].n;
    assert_true(cl[0].n > 0 && cl[1].n > 0 && cl[2].n > 0 && cl[3].n > 0);

    dq_page p;
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FAILED, 0, 1000, &p, &f.err));
    assert_int_equal(p.n, nfailed);
    assert_int_equal(p.total, (int64_t)nfailed);
    bool from0 = false, from2 = false;
    for (size_t i = 0; i < p.n; i++) {
        if (i > 0 && p.tasks[i].failed_ms > p.tasks[i - 1].failed_ms)
            fail_msg("failed row %zu failed at %lld, after row %zu's %lld", i,
                     (long long)p.tasks[i].failed_ms, i - 1, (long long)p.tasks[i - 1].failed_ms);
        size_t part = dq_parts_of_seq(&parts, strtoll(p.tasks[i].id, NULL, 10));
        from0 = from0 || part == 0;
        from2 = from2 || part == 2;
    }
    assert_true(from0 && from2);
    /* the newest failure first: the last one failed */
    const dq_task *last = cl[0].n > cl[2].n ? &cl[0].tasks[cl[0].n - 1] : &cl[2].tasks[cl[2].n - 1];
    dq_task t;
    ASSERT_OK(&f, dq_find(f.c, f.queue, last->id, &t, &f.err));
    assert_int_equal(p.tasks[0].failed_ms, t.failed_ms);
    dq_task_clear(&t);
    dq_page_free(&p);

    /* ls failed through the command: the same ids, in the same order, 25 a page */
    struct result r = {0};
    static char got[NTASKS][DQ_ID_MAX + 1];
    RUN(&r, "ls", "failed", "-q", f.queue, "--limit", "25", "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_ids(r.out, got, NTASKS), 25);
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FAILED, 0, 25, &p, &f.err));
    for (size_t i = 0; i < 25; i++)
        assert_string_equal(got[i], p.tasks[i].id);
    dq_page_free(&p);

    /* in flight by lease deadline: partition 3's shorter leases first */
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_INFLIGHT, 0, 1000, &p, &f.err));
    assert_int_equal(p.n, nflight);
    for (size_t i = 1; i < p.n; i++)
        assert_true(p.tasks[i].lease_ms >= p.tasks[i - 1].lease_ms);
    for (size_t i = 0; i < cl[3].n; i++)
        assert_int_equal(dq_parts_of_seq(&parts, strtoll(p.tasks[i].id, NULL, 10)), 3);
    dq_page_free(&p);

    for (size_t i = 0; i < NPARTS; i++)
        dq_claimed_free(&cl[i]);
    dq_parts_free(&parts);
    result_free(&r);
    fixture_close(&f);
}

static void
export_import_round_trip(void **state)
{
    struct fixture f;
    int64_t base;
    static char byrank[NTASKS][DQ_ID_MAX + 1];
    char dest[120], src[120];
    struct result r = {0};
    dq_stats st;

    fixture_open(&f, state, "pexp");
    snprintf(src, sizeof src, "%s", f.queue);
    snprintf(dest, sizeof dest, "%s-copy", f.queue);
    set_partitions(&f, src, NPARTS);
    set_partitions(&f, dest, 3); /* another shape: import routes each task again */
    fill(&f, byrank, &base);

    RUN(&r, "export", "due", "-q", src);
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.err, "exported 200 tasks"));
    char *in = strdup(r.out);
    size_t in_len = r.out_len;
    RUN_IN(&r, in, in_len, "import", "-q", dest);
    ASSERT_EXIT(&r, 0);
    free(in);

    ASSERT_OK(&f, dq_stats_get(f.c, dest, &st, &f.err));
    assert_int_equal(st.due, NTASKS);
    /* every task, with its id and due time, in the same order across the copy's partitions */
    dq_page_cursor cur = {0};
    size_t k = 0;
    for (;;) {
        dq_page p;
        ASSERT_OK(&f, dq_page_next(f.c, dest, DQ_VIEW_DUE, 64, &cur, &p, &f.err));
        for (size_t i = 0; i < p.n; i++, k++) {
            assert_true(k < NTASKS);
            assert_string_equal(p.tasks[i].id, byrank[k]);
            assert_int_equal(p.tasks[i].due_ms, base + 5LL * (int64_t)k);
        }
        size_t n = p.n;
        dq_page_free(&p);
        if (n < 64)
            break;
    }
    assert_int_equal(k, NTASKS);
    assert_int_equal(cur.n, 3);
    dq_page_cursor_free(&cur);

    /* --limit still counts tasks of the whole queue; --match searches every partition */
    RUN(&r, "export", "due", "-q", src, "--limit", "120");
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.err, "exported 120 tasks"));
    RUN(&r, "export", "due", "-q", src, "--match", "t19");
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.err, "exported 10 tasks")); /* t190..t199 */
    result_free(&r);
    fixture_close(&f);
}

/* partitions 1: ls sends the one page call it sent before (offset and limit as given) */
static void
one_partition_same_commands(void **state)
{
    struct fixture f;
    struct result r = {0};

    fixture_open(&f, state, "pone");
    for (int i = 0; i < 30; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    long long f0 = test_redis_calls(f.redis, "fcall_ro") + test_redis_calls(f.redis, "evalsha_ro");
    long long h0 = test_redis_calls(f.redis, "hgetall");
    RUN(&r, "ls", "due", "-q", f.queue, "--limit", "10", "--offset", "5");
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.out, "(10 of 30 shown, from offset 5)"));
    long long f1 = test_redis_calls(f.redis, "fcall_ro") + test_redis_calls(f.redis, "evalsha_ro");
    /* the page, and the parked view's total of before (parked_footer); the one map read
     * of a client's first call on a queue (PROTOCOL.md 14.3) finds no map */
    assert_int_equal(f1 - f0, 2);
    assert_int_equal(test_redis_calls(f.redis, "hgetall") - h0, 1);
    /* --after on one partition is the offset */
    RUN(&r, "ls", "due", "-q", f.queue, "--limit", "10", "--after", "25");
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.out, "(5 of 30 shown; the last page)"));
    dq_page_cursor cur = {0};
    dq_page p;
    ASSERT_OK(&f, dq_page_next(f.c, f.queue, DQ_VIEW_DUE, 20, &cur, &p, &f.err));
    assert_int_equal(cur.n, 1);
    assert_int_equal(cur.at[0], 20);
    assert_int_equal(p.n, 20);
    dq_page_free(&p);
    dq_page_cursor_free(&cur);
    result_free(&r);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ls_due_limit_and_paging),
        cmocka_unit_test(failed_and_inflight_merged),
        cmocka_unit_test(export_import_round_trip),
        cmocka_unit_test(one_partition_same_commands),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
