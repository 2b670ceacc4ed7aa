/* SPDX-License-Identifier: MIT */
/*
 * test_parts_views.c: the operator views that once read partition 0 alone, on a
 * partitioned queue (PROTOCOL.md 14) against a real redis-server (single server,
 * partitions 4): one error group's task list merged newest first, as the failed view.
 */
#include "harness/fixture.h"

#include "harness/cli.h"
#include "lib/parts.h"

#define PARTS 4

static const char *const alpha = "alpha broke at step 17";
static const char *const beta = "beta timed out after 9 s";

static void
open_parted(struct fixture *f, void **state, const char *name, const dq_config *extra,
            struct dq_parts *p)
{
    dq_config cfg = extra != NULL ? *extra : (dq_config){0};

    cfg.partitions = PARTS;
    fixture_open(f, state, name);
    ASSERT_OK(f, dq_config_set(f->c, f->queue, &cfg, &f->err));
    ASSERT_OK(f, dq_parts_get(f->c, f->queue, p, &f->err));
    assert_int_equal(p->all, PARTS);
}

/* The partition of caller id @id (the routing hash; PROTOCOL.md 14.3). */
static size_t
part_of(const struct dq_parts *p, const char *id)
{
    return dq_parts_route_id(p, id, strlen(id));
}

/* Enqueues @n tasks "<prefix><i>" (key @key, may be NULL) due now. */
static void
enqueue_ids(struct fixture *f, const char *prefix, int n, const char *key)
{
    for (int i = 0; i < n; i++) {
        char id[32];
        dq_enqueue_opts o = {.key = key};
        dq_enqueued e;
        snprintf(id, sizeof id, "%s%d", prefix, i);
        o.id = id;
        ASSERT_OK(f, dq_enqueue(f->c, f->queue, &o, "{}", 2, &e, &f->err));
    }
}

/* ---- one error group's tasks ---------------------------------------------------------- */

/* Enqueues @n tasks "g<i>" and fails each on its partition: alpha for even i, else beta. */
static void
make_failures(struct fixture *f, const struct dq_parts *p, int n)
{
    int failed = 0;

    enqueue_ids(f, "g", n, NULL);
    for (size_t q = 0; q < p->all; q++) {
        dq_claimed cl;
        ASSERT_OK(f, dq_claim(f->c, p->names[q], DQ_CALL_MAX, 60000, "w", &cl, &f->err));
        for (size_t j = 0; j < cl.n; j++) {
            int i = atoi(cl.tasks[j].id + 1);
            ASSERT_OK(
                f, dq_fail(f->c, p->names[q], &cl.tasks[j], i % 2 ? beta : alpha, NULL, &f->err));
            failed++;
        }
        dq_claimed_free(&cl);
    }
    assert_int_equal(failed, n);
}

static void
group_page_merged(void **state)
{
    struct fixture f;
    struct dq_parts p;
    dq_errors e;
    dq_page all, part, none;
    char gid[DQ_GROUP_ID_MAX + 1] = "", sig[DQ_SIGNATURE_MAX + 1] = "";
    bool from[PARTS] = {false};
    size_t parts_seen = 0;

    open_parted(&f, state, "pv_group", NULL, &p);
    make_failures(&f, &p, 40);
    ASSERT_OK(&f, dq_errors_get(f.c, f.queue, &e, &f.err));
    for (size_t i = 0; i < e.n; i++)
        if (e.groups[i].sample_error != NULL && strstr(e.groups[i].sample_error, "alpha")) {
            snprintf(gid, sizeof gid, "%s", e.groups[i].id);
            snprintf(sig, sizeof sig, "%.*s", (int)e.groups[i].signature_len,
                     e.groups[i].signature);
            assert_int_equal(e.groups[i].count, 20);
        }
    dq_errors_free(&e);
    assert_true(gid[0] != '\0');

    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, gid, 0, 100, &all, &f.err));
    assert_int_equal(all.total, 20);
    assert_int_equal(all.n, 20); /* partition 0's alone before */
    for (size_t i = 0; i < all.n; i++) {
        const dq_task *t = &all.tasks[i];
        assert_int_equal(atoi(t->id + 1) % 2, 0);
        assert_non_null(strstr(t->error, "alpha"));
        if (i > 0) /* newest first, as one queue's list */
            assert_true(all.tasks[i - 1].failed_ms >= t->failed_ms);
        size_t q = part_of(&p, t->id);
        parts_seen += !from[q];
        from[q] = true;
    }
    assert_true(parts_seen >= 2);
    /* an offset walks the same merged order */
    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, gid, 7, 5, &part, &f.err));
    assert_int_equal(part.n, 5);
    assert_int_equal(part.total, 20);
    for (size_t i = 0; i < part.n; i++)
        assert_string_equal(part.tasks[i].id, all.tasks[7 + i].id);
    dq_page_free(&part);
    /* by signature too */
    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, sig, 0, 100, &part, &f.err));
    assert_int_equal(part.n, 20);
    dq_page_free(&part);
    /* a group no partition has: an empty page */
    ASSERT_OK(&f, dq_page_group_get(f.c, f.queue, "0123456789abcdef", 0, 10, &none, &f.err));
    assert_int_equal(none.n, 0);
    assert_int_equal(none.total, 0);
    dq_page_free(&none);
    dq_page_free(&all);
    dq_parts_free(&p);
    fixture_close(&f);
}

/* The cli harness's server (it also finds the delayq command and points DELAYQ_URL at
 * the server), as the fixture's. */
static int
group_setup(void **state)
{
    int rc = cli_group_setup(state);

    *state = &cli_redis;
    return rc;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_page_merged),
    };
    return cmocka_run_group_tests(tests, group_setup, cli_group_teardown);
}
