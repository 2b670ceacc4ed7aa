/* SPDX-License-Identifier: MIT */
/*
 * test_groups.c: error groups (PROTOCOL.md 4.6) against a real redis-server: the
 * signature's masking rules, counts that equal a full scan of the failed set after a
 * random mix of every path into and out of it, paging a group, and the bulk actions
 * scoped to a group or a search text.
 */
#include "harness/fixture.h"

#define HOUR_MS 3600000

/* Error templates: the text before and after a number (printed as 8 digits), and the
 * signature the masking rules must give it (reason "error"). */
static const struct {
    const char *pre, *post, *sig;
} templates[] = {
    {"invoice ", ": total does not add up", "error: invoice #: total does not add up"},
    {"user u", "@example.com not found", "error: user <email> not found"},
    {"upload /srv/data/f", ".csv failed", "error: upload /srv/data/* failed"},
    {"key \"k", "\" missing in 'cfg'", "error: key \"*\" missing in '*'"},
    {"request 1b4e28ba-2fa1-11d2-883f-0000", " timed out", "error: request <uuid> timed out"},
    {"pointer 0x", " is null", "error: pointer # is null"},
    {"checksum deadbeef", "  differs\nsecond line 42", "error: checksum # differs"},
    {"took 3.", " s at  10.0.0.1", "error: took # s at #"},
};
#define NTEMPLATES (sizeof templates / sizeof templates[0])

static int
template_of(const char *msg)
{
    /* the first word after the variable part tells them apart */
    static const char *const marks[NTEMPLATES] = {"invoice", "user",    "upload",   "key",
                                                  "request", "pointer", "checksum", "took"};
    for (size_t i = 0; i < NTEMPLATES; i++)
        if (strncmp(msg, marks[i], strlen(marks[i])) == 0)
            return (int)i;
    return -1;
}

/* The signature the scripts must give a failure: the reference, written from the
 * rules in PROTOCOL.md 4.5 for the messages this test makes. */
static const char *
expected_sig(const dq_task *t)
{
    int k;

    if (strcmp(t->reason, "error") == 0 && (k = template_of(t->error)) >= 0)
        return templates[k].sig;
    if (strcmp(t->reason, "attempts exhausted") == 0 && strncmp(t->error, "lease", 5) == 0)
        return "attempts exhausted: lease expired (held by w#)";
    if (strcmp(t->reason, "attempts exhausted") == 0 && (k = template_of(t->error)) >= 0) {
        static char buf[DQ_SIGNATURE_MAX + 1];
        snprintf(buf, sizeof buf, "attempts exhausted: %s", templates[k].sig + strlen("error: "));
        return buf;
    }
    if (strcmp(t->reason, "expired") == 0)
        return "expired: claimed # ms after its deadline";
    if (strcmp(t->reason, "undecodable") == 0)
        return "undecodable: scheduled member is not a delayq v# envelope";
    return NULL;
}

static void
message(char *buf, size_t size, int k, int n)
{
    snprintf(buf, size, "%s%08d%s", templates[k].pre, n % 100000000, templates[k].post);
}

/* Claims exactly one task (the only due one) with @lease_ms. */
static void
claim_one(struct fixture *f, int64_t lease_ms, dq_claimed *cl)
{
    ASSERT_OK(f, dq_claim(f->c, f->queue, 1, lease_ms, "w1", cl, &f->err));
    assert_int_equal(cl->n, 1);
}

static void
fail_one(struct fixture *f, int k, int n)
{
    dq_claimed cl;
    char msg[160];

    enqueue_str(f, "{}", 0, NULL, NULL);
    claim_one(f, 30000, &cl);
    message(msg, sizeof msg, k, n);
    ASSERT_OK(f, dq_fail(f->c, f->queue, &cl.tasks[0], msg, "at x()", &f->err));
    dq_claimed_free(&cl);
}

static void
exhaust_one(struct fixture *f, int k, int n)
{
    dq_enqueue_opts o = {.max_attempts = 1};
    dq_enqueued e;
    dq_claimed cl;
    dq_retried r;
    char msg[160];

    ASSERT_OK(f, dq_enqueue(f->c, f->queue, &o, "{}", 2, &e, &f->err));
    claim_one(f, 30000, &cl);
    message(msg, sizeof msg, k, n);
    ASSERT_OK(f, dq_retry(f->c, f->queue, &cl.tasks[0], msg, &r, &f->err));
    assert_true(r.exhausted);
    dq_claimed_free(&cl);
}

struct reap_wait {
    struct fixture *f;
    size_t exhausted;
};

static bool
reaped(void *arg)
{
    struct reap_wait *w = arg;
    dq_reaped r;

    if (dq_reap(w->f->c, w->f->queue, 10, &r, &w->f->err) != DQ_OK)
        return false;
    w->exhausted += r.exhausted;
    return w->exhausted > 0;
}

static void
reap_one(struct fixture *f)
{
    dq_enqueue_opts o = {.max_attempts = 1};
    struct reap_wait w = {f, 0};
    dq_enqueued e;
    dq_claimed cl;

    ASSERT_OK(f, dq_enqueue(f->c, f->queue, &o, "{}", 2, &e, &f->err));
    claim_one(f, 1, &cl);
    dq_claimed_free(&cl);
    assert_true(wait_until(reaped, &w, 5000, "the lease to expire and be reaped"));
}

struct clock_wait {
    struct fixture *f;
    int64_t after_ms;
};

static bool
server_time_passed(void *arg)
{
    struct clock_wait *w = arg;
    dq_stats s;

    return dq_stats_get(w->f->c, w->f->queue, &s, &w->f->err) == DQ_OK && s.now_ms > w->after_ms;
}

static void
expire_one(struct fixture *f)
{
    dq_enqueue_opts o = {.deadline_ms = 1};
    struct clock_wait w = {f, 0};
    dq_enqueued e;
    dq_claimed cl;
    dq_stats s;

    ASSERT_OK(f, dq_enqueue(f->c, f->queue, &o, "{}", 2, &e, &f->err));
    ASSERT_OK(f, dq_stats_get(f->c, f->queue, &s, &f->err));
    w.after_ms = s.now_ms + 1; /* the task is due at or before s.now_ms */
    assert_true(wait_until(server_time_passed, &w, 5000, "its deadline to pass"));
    ASSERT_OK(f, dq_claim(f->c, f->queue, 1, 30000, "w1", &cl, &f->err));
    assert_int_equal(cl.n, 0);
    assert_int_equal(cl.to_failed, 1);
    dq_claimed_free(&cl);
}

static void
undecodable_one(struct fixture *f, int n)
{
    char key[160], member[32];
    dq_claimed cl;

    snprintf(key, sizeof key, "dq:{%s}:sched", f->queue);
    snprintf(member, sizeof member, "garbage-%d", n);
    const char *argv[] = {"ZADD", key, "0", member};
    assert_int_equal(redis_int(f, 4, argv), 1);
    ASSERT_OK(f, dq_claim(f->c, f->queue, 1, 30000, "w1", &cl, &f->err));
    assert_int_equal(cl.to_failed, 1);
    dq_claimed_free(&cl);
}

/* A random failed task's id into @id, or false when the failed set is empty. */
static bool
random_failed(struct fixture *f, char *id, size_t size)
{
    dq_stats s;
    dq_page p;

    ASSERT_OK(f, dq_stats_get(f->c, f->queue, &s, &f->err));
    if (s.failed == 0)
        return false;
    ASSERT_OK(f, dq_page_get(f->c, f->queue, DQ_VIEW_FAILED, (size_t)(rand() % s.failed), 1, &p,
                             &f->err));
    assert_int_equal(p.n, 1);
    snprintf(id, size, "%s", p.tasks[0].id);
    bool undecodable = p.tasks[0].undecodable;
    dq_page_free(&p);
    return !undecodable;
}

struct scan_group {
    char sig[DQ_SIGNATURE_MAX + 1];
    int64_t n;
};

/* The full scan: every failed task's expected signature, counted, against dq_errors. */
static void
assert_groups_exact(struct fixture *f)
{
    static struct scan_group seen[64];

    size_t nseen = 0;

    memset(seen, 0, sizeof seen);
    int64_t total = 0;
    dq_errors e;
    dq_page p;

    for (size_t off = 0;; off += DQ_CALL_MAX) {
        ASSERT_OK(f, dq_page_get(f->c, f->queue, DQ_VIEW_FAILED, off, DQ_CALL_MAX, &p, &f->err));
        for (size_t i = 0; i < p.n; i++) {
            const char *sig = expected_sig(&p.tasks[i]);
            size_t j;
            if (sig == NULL)
                fail_msg("no expected signature for %s: %s", p.tasks[i].reason, p.tasks[i].error);
            for (j = 0; j < nseen && strcmp(seen[j].sig, sig) != 0; j++)
                ;
            if (j == nseen) {
                assert_true(nseen < 64);
                snprintf(seen[nseen++].sig, sizeof seen[0].sig, "%s", sig);
            }
            seen[j].n++;
            total++;
        }
        size_t n = p.n;
        dq_page_free(&p);
        if (n < DQ_CALL_MAX)
            break;
    }
    ASSERT_OK(f, dq_errors_get(f->c, f->queue, &e, &f->err));
    assert_int_equal(e.failed, total);
    if (e.n != nseen)
        for (size_t i = 0; i < e.n; i++)
            fprintf(stderr, "group %s %lld \"%s\"\n", e.groups[i].id, (long long)e.groups[i].count,
                    e.groups[i].signature);
    assert_int_equal(e.n, nseen);
    int64_t sum = 0;
    for (size_t i = 0; i < e.n; i++) {
        size_t j;
        for (j = 0; j < nseen && strcmp(seen[j].sig, e.groups[i].signature) != 0; j++)
            ;
        if (j == nseen)
            fail_msg("group \"%s\" (%lld) is not in the scan", e.groups[i].signature,
                     (long long)e.groups[i].count);
        assert_int_equal(e.groups[i].count, seen[j].n);
        assert_true(e.groups[i].first_ms <= e.groups[i].last_ms);
        assert_true(i == 0 || e.groups[i - 1].count >= e.groups[i].count);
        /* the sample is a failed task of this very group */
        dq_task t;
        ASSERT_OK(f, dq_find(f->c, f->queue, e.groups[i].sample_id, &t, &f->err));
        assert_int_equal(t.state, DQ_STATE_FAILED);
        assert_string_equal(expected_sig(&t), e.groups[i].signature);
        dq_task_clear(&t);
        /* and the group's own index pages the same number */
        ASSERT_OK(f, dq_page_group_get(f->c, f->queue, e.groups[i].id, 0, 1, &p, &f->err));
        assert_int_equal(p.total, e.groups[i].count);
        dq_page_free(&p);
        sum += e.groups[i].count;
    }
    assert_int_equal(sum, total);
    dq_errors_free(&e);
}

static void
signatures_mask_the_variable_parts(void **state)
{
    struct fixture f;
    dq_errors e;

    fixture_open(&f, state, "sig");
    for (size_t k = 0; k < NTEMPLATES; k++) {
        fail_one(&f, (int)k, 17 + (int)k);
        fail_one(&f, (int)k, 123456 + (int)k); /* another number: the same group */
    }
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    assert_int_equal(e.failed, 2 * NTEMPLATES);
    assert_int_equal(e.n, NTEMPLATES);
    for (size_t k = 0; k < NTEMPLATES; k++) {
        size_t i;
        for (i = 0; i < e.n && strcmp(e.groups[i].signature, templates[k].sig) != 0; i++)
            ;
        if (i == e.n)
            fail_msg("no group \"%s\"; first is \"%s\"", templates[k].sig, e.groups[0].signature);
        assert_int_equal(e.groups[i].count, 2);
        assert_int_equal(strlen(e.groups[i].id), 16);
        assert_true(e.groups[i].sample_error[0] != '\0');
        assert_null(strchr(e.groups[i].sample_error, '\n')); /* first line only */
    }
    dq_errors_free(&e);
    assert_groups_exact(&f);
    fixture_close(&f);
}

static void
counts_equal_a_full_scan_after_random_operations(void **state)
{
    struct fixture f;
    dq_config cfg = {.failed_retention = 200};
    int ops = test_slowdown() > 1 ? 1500 : 10000; /* valgrind runs 10x slower */
    int counts[12] = {0};
    char id[DQ_ID_MAX + 1];

    fixture_open(&f, state, "mix");
    srand(13);
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    for (int i = 0; i < ops; i++) {
        int op = rand() % 100, k = rand() % (int)NTEMPLATES;
        int what = op < 40   ? 0
                   : op < 55 ? 1
                   : op < 60 ? 2
                   : op < 65 ? 3
                   : op < 68 ? 4
                   : op < 80 ? 5
                   : op < 92 ? 6
                   : op < 95 ? 7
                   : op < 98 ? 8
                             : 9;
        counts[what]++;
        switch (what) {
        case 0:
            fail_one(&f, k, rand());
            break;
        case 1:
            exhaust_one(&f, k, rand());
            break;
        case 2:
            reap_one(&f);
            break;
        case 3:
            expire_one(&f);
            break;
        case 4:
            undecodable_one(&f, i);
            break;
        case 5:
            if (random_failed(&f, id, sizeof id)) {
                const char *ids[] = {id};
                size_t moved;
                ASSERT_OK(&f, dq_requeue(f.c, f.queue, ids, 1, HOUR_MS, &moved, &f.err));
            }
            break;
        case 6:
            if (random_failed(&f, id, sizeof id)) {
                const char *ids[] = {id};
                size_t dropped;
                ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 1, &dropped, &f.err));
            }
            break;
        case 7: /* retention: trims on the next failure and in config */
            cfg.failed_retention = 50 + rand() % 300;
            ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
            break;
        case 8: { /* a group requeue, in small steps */
            dq_errors e;
            ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
            if (e.n > 0) {
                dq_filter flt = {DQ_FILTER_GROUP, e.groups[(size_t)rand() % e.n].signature};
                dq_bulk cur = {0};
                while (!cur.done)
                    ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &flt, HOUR_MS, 0, 7, &cur,
                                                         &f.err));
            }
            dq_errors_free(&e);
            break;
        }
        default: { /* a drop of a search text */
            static const char *const texts[] = {"invoice", "lease", "garbage", "0x"};
            dq_filter flt = {DQ_FILTER_MATCH, texts[rand() % 4]};
            dq_bulk cur = {0};
            while (!cur.done)
                ASSERT_OK(&f, dq_drop_filter_step(f.c, f.queue, &flt, 11, &cur, &f.err));
            break;
        }
        }
        if (i % 2500 == 2499)
            assert_groups_exact(&f);
    }
    for (int w = 0; w < 10; w++)
        assert_true(counts[w] > 0); /* every path ran */
    assert_groups_exact(&f);
    fixture_close(&f);
}

/* Makes @n failures of template @k. */
static void
fail_many(struct fixture *f, int k, int n)
{
    for (int i = 0; i < n; i++)
        fail_one(f, k, i);
}

static void
group_requeue_touches_only_its_group_and_writes_one_audit_entry(void **state)
{
    struct fixture f;
    dq_filter flt = {DQ_FILTER_GROUP, templates[0].sig};
    dq_bulk cur = {0};
    dq_stats s;
    dq_audit au;
    int steps = 0;

    fixture_open(&f, state, "greq");
    fail_many(&f, 0, 30);
    fail_many(&f, 1, 20);
    while (!cur.done) {
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &flt, 0, 0, 8, &cur, &f.err));
        if (steps++ == 0) { /* failed after the command started: not touched */
            struct clock_wait w = {&f, cur.until_ms};
            assert_true(wait_until(server_time_passed, &w, 5000, "the next millisecond"));
            fail_one(&f, 0, 999);
        }
    }
    assert_int_equal(cur.done_n, 30);
    assert_true(steps >= 4);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 21);
    assert_int_equal(s.due, 30);
    ASSERT_OK(&f, dq_audit_get(f.c, f.queue, 10, &au, &f.err));
    int requeues = 0;
    for (size_t i = 0; i < au.n; i++)
        if (strcmp(au.entries[i].action, "requeue-all") == 0) {
            requeues++;
            assert_non_null(strstr(au.entries[i].detail, "group=error: invoice #"));
            assert_non_null(strstr(au.entries[i].result, "30 moved"));
        }
    assert_int_equal(requeues, 1);
    dq_audit_free(&au);
    assert_groups_exact(&f);

    /* by its id too; a group that does not exist is "not found" */
    dq_errors e;
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    dq_filter byid = {DQ_FILTER_GROUP, e.groups[0].id};
    memset(&cur, 0, sizeof cur);
    while (!cur.done)
        ASSERT_OK(&f, dq_drop_filter_step(f.c, f.queue, &byid, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, 20);
    dq_errors_free(&e);
    memset(&cur, 0, sizeof cur);
    dq_filter none = {DQ_FILTER_GROUP, "error: no such thing"};
    assert_int_equal(dq_requeue_filter_step(f.c, f.queue, &none, 0, 0, 0, &cur, &f.err),
                     DQ_ENOTFOUND);
    assert_groups_exact(&f);
    fixture_close(&f);
}

static void
match_requeue_moves_only_matches_with_spread(void **state)
{
    struct fixture f;
    dq_filter flt = {DQ_FILTER_MATCH, "/srv/data"};
    dq_bulk cur = {0};
    dq_stats s;
    dq_page p;

    fixture_open(&f, state, "mreq");
    for (int i = 0; i < 40; i++)
        fail_one(&f, i % 2 == 0 ? 2 : 3, i);
    while (!cur.done)
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &flt, 0, 100000, 9, &cur, &f.err));
    assert_int_equal(cur.done_n, 20);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 20);
    assert_int_equal(s.due + s.future, 20);
    assert_true(s.future >= 15); /* spread over 100 s */
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_FAILED, 0, 100, &p, &f.err));
    for (size_t i = 0; i < p.n; i++)
        assert_null(strstr(p.tasks[i].error, "/srv/data"));
    dq_page_free(&p);
    /* bad filters name the field */
    dq_filter empty = {DQ_FILTER_MATCH, ""};
    memset(&cur, 0, sizeof cur);
    assert_int_equal(dq_requeue_filter_step(f.c, f.queue, &empty, 0, 0, 0, &cur, &f.err),
                     DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "--match"));
    assert_groups_exact(&f);
    fixture_close(&f);
}

/* A failed task @id with task key @key (NULL: none; an unkeyed task is a v1 envelope). */
static void
fail_keyed(struct fixture *f, const char *id, const char *key, int n)
{
    dq_enqueue_opts o = {.id = id, .key = key};
    dq_enqueued e;
    dq_claimed cl;
    char msg[160];

    ASSERT_OK(f, dq_enqueue(f->c, f->queue, &o, "{}", 2, &e, &f->err));
    claim_one(f, 30000, &cl);
    message(msg, sizeof msg, n % 4, n);
    ASSERT_OK(f, dq_fail(f->c, f->queue, &cl.tasks[0], msg, "at x()", &f->err));
    dq_claimed_free(&cl);
}

/* The state of task @id, or -1 when it is gone. */
static int
state_of(struct fixture *f, const char *id)
{
    dq_task t;
    int rc = dq_find(f->c, f->queue, id, &t, &f->err);

    if (rc == DQ_ENOTFOUND)
        return -1;
    ASSERT_OK(f, rc);
    int st = (int)t.state;
    dq_task_clear(&t);
    return st;
}

/* The key filter (PROTOCOL.md 5.11): steps smaller than the failed set resume at their
 * cursor and act on exactly the failures of one key, not of a key it is a prefix of nor
 * the unkeyed ones; counts and groups stay exact; a bad key names --key. */
static void
key_filter_steps_act_on_one_key(void **state)
{
    struct fixture f;
    dq_filter ka = {DQ_FILTER_KEY, "t-a"}, kb = {DQ_FILTER_KEY, "t-b"};
    dq_bulk cur = {0};
    char id[32];
    dq_stats s;
    size_t steps = 0;

    fixture_open(&f, state, "keyf");
    static const char *const keys[] = {"t-a", "t-b", "t-a2", NULL};
    for (int i = 0; i < 40; i++) {
        snprintf(id, sizeof id, "task-%d", i);
        fail_keyed(&f, id, keys[i % 4], i);
    }
    for (; !cur.done; steps++)
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &ka, 0, 0, 3, &cur, &f.err));
    assert_int_equal(cur.done_n, 10);
    assert_true(steps >= 40 / 3); /* 3 looked at a step: the cursor carried the walk */
    memset(&cur, 0, sizeof cur);
    while (!cur.done)
        ASSERT_OK(&f, dq_drop_filter_step(f.c, f.queue, &kb, 4, &cur, &f.err));
    assert_int_equal(cur.done_n, 10);
    for (int i = 0; i < 40; i++) {
        snprintf(id, sizeof id, "task-%d", i);
        int want = i % 4 == 0 ? DQ_STATE_SCHEDULED : i % 4 == 1 ? -1 : DQ_STATE_FAILED;
        assert_int_equal(state_of(&f, id), want);
    }
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.failed, 20);
    assert_int_equal(s.due + s.future, 10);
    assert_groups_exact(&f);
    /* the same key again finds nothing; a bad key is refused naming --key */
    memset(&cur, 0, sizeof cur);
    while (!cur.done)
        ASSERT_OK(&f, dq_requeue_filter_step(f.c, f.queue, &ka, 0, 0, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, 0);
    char big[DQ_KEY_MAX + 2];
    memset(big, 'k', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    dq_filter bad = {DQ_FILTER_KEY, big};
    memset(&cur, 0, sizeof cur);
    assert_int_equal(dq_drop_filter_step(f.c, f.queue, &bad, 0, &cur, &f.err), DQ_EINVAL);
    assert_non_null(strstr(f.err.msg, "--key: must be 1..64 bytes"));
    fixture_close(&f);
}

static void
groups_past_the_limit_share_other(void **state)
{
    struct fixture f;
    char key[160], field[32];
    dq_errors e;

    fixture_open(&f, state, "other");
    /* fill the groups hash to its bound with placeholders, as if 500 groups existed */
    snprintf(key, sizeof key, "dq:{%s}:groups", f.queue);
    for (int i = 0; i < DQ_GROUPS_MAX; i++) {
        snprintf(field, sizeof field, "fake%04d", i);
        const char *argv[] = {"HSET", key, field, "1 1 placeholder"};
        assert_int_equal(redis_int(&f, 4, argv), 1);
    }
    fail_one(&f, 0, 1);
    fail_one(&f, 1, 1);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    assert_string_equal(e.groups[0].id, "other");
    assert_int_equal(e.groups[0].count, 2);
    dq_errors_free(&e);
    dq_filter flt = {DQ_FILTER_GROUP, "other"};
    dq_bulk cur = {0};
    while (!cur.done)
        ASSERT_OK(&f, dq_drop_filter_step(f.c, f.queue, &flt, 0, &cur, &f.err));
    assert_int_equal(cur.done_n, 2);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    assert_int_equal(e.n, DQ_GROUPS_MAX); /* the placeholders (count 0) are left */
    assert_int_equal(e.failed, 0);
    dq_errors_free(&e);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(signatures_mask_the_variable_parts),
        cmocka_unit_test(counts_equal_a_full_scan_after_random_operations),
        cmocka_unit_test(group_requeue_touches_only_its_group_and_writes_one_audit_entry),
        cmocka_unit_test(match_requeue_moves_only_matches_with_spread),
        cmocka_unit_test(key_filter_steps_act_on_one_key),
        cmocka_unit_test(groups_past_the_limit_share_other),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/groups", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
