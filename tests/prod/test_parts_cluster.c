/* SPDX-License-Identifier: MIT */
/*
 * test_parts_cluster.c: a partitioned queue on a real Redis Cluster of three masters,
 * made by `redis-cli --cluster create` on free loopback ports (harness/cluster.h).
 * `partitions 6` puts two partitions on each master (keys on all three); 6 000 tasks
 * enqueued by the library (a batch, generated and caller ids) and by `delayq enqueue`
 * processes end up on every partition; `delayq stats` sums them exactly; `delayq show ID`
 * finds a task of every partition by generated and by caller id; `delayq ls due --limit
 * 40` of 6 000 due tasks lists the 40 earliest in due order across the masters; and a
 * queue of one partition writes no map and no partition key.
 */
#include "harness/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "harness/cluster.h"
#include "harness/wait.h"
#include "lib/cluster.h"
#include "lib/parts.h"

#define NODES   3
#define PARTS   6
#define LIB_N   5000
#define CLI_GEN 500
#define CLI_IDS 500

static struct test_cluster cl;

static int
group_setup(void **state)
{
    int rc;

    (void)state;
    if (getenv("DELAYQ_BIN") == NULL)
        return -1;
    rc = test_cluster_start(&cl, NODES, 0, 1000, NULL);
    if (rc == TEST_REDIS_SKIP)
        exit(77);
    return rc == 0 ? 0 : -1;
}

static int
group_teardown(void **state)
{
    (void)state;
    test_cluster_stop(&cl);
    return 0;
}

/* The node (index) whose port "127.0.0.1:P" names. */
static int
node_at(const char *addr)
{
    int i = test_cluster_node_at(&cl, addr);

    if (i < 0)
        fail_msg("no node at %s", addr);
    return i;
}

static long long
node_int(int i, int argc, const char **argv)
{
    return test_redis_int(&cl.node[i], argc, argv);
}

/* Runs the shell command @cmdline, returns its output (caller frees) and *@status. */
static char *
shell(const char *cmdline, int *status)
{
    FILE *f = popen(cmdline, "r");
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);

    assert_non_null(f);
    assert_non_null(out);
    for (size_t got; (got = fread(out + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (cap - len < 1024) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
    }
    out[len] = '\0';
    *status = pclose(f);
    *status = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128;
    return out;
}

static long long
json_int(const char *json, const char *field)
{
    char pat[64];
    const char *at;

    snprintf(pat, sizeof pat, "\"%s\":", field);
    at = strstr(json, pat);
    if (at == NULL)
        fail_msg("no %s in %s", field, json);
    return strtoll(at + strlen(pat), NULL, 10);
}

static void
six_partitions_on_three_masters(void **state)
{
    const char *q = "pcq";
    dq_client *c;
    dq_err err = {0};
    dq_config cfg = {.partitions = PARTS, .max_attempts = 4};
    char names[PARTS][DQ_QUEUE_NAME_MAX + 16], key[1024];
    int holder[PARTS], per_node[NODES] = {0};
    dq_client_opts o = {.who = "tester"};

    (void)state;
    if (dq_client_open(cl.url, &o, &c, &err) != DQ_OK)
        fail_msg("open %s: %s", cl.url, err.msg);
    if (dq_config_set(c, q, &cfg, &err) != DQ_OK)
        fail_msg("config partitions %d: %s", PARTS, err.msg);

    /* partition i on the master after partition i-1's, in the order of lowest slots */
    for (size_t i = 0; i < PARTS; i++) {
        assert_int_equal(dq_partition_name(c, q, i, names[i], sizeof names[i], &err), DQ_OK);
        holder[i] = node_at(dq_client_node(c, names[i]));
        per_node[holder[i]]++;
        if (i >= 3)
            assert_int_equal(holder[i], holder[i - 3]);
        /* config copied to each partition, on its own master */
        snprintf(key, sizeof key, "dq:{%s}:config", names[i]);
        const char *hget[] = {"HEXISTS", key, "max_attempts"};
        assert_int_equal(node_int(holder[i], 3, hget), 1);
    }
    for (int m = 0; m < NODES; m++)
        assert_int_equal(per_node[m], 2);
    snprintf(key, sizeof key, "dq:{%s}:parts", q);
    const char *hlen[] = {"HLEN", key};
    assert_int_equal(node_int(holder[0], 2, hlen), PARTS); /* n and names 1..5 */

    /* 5 000 by the library: one batch, 2 000 of them with caller ids */
    dq_enqueue_item *items = calloc(LIB_N, sizeof *items);
    dq_enqueued *out = calloc(LIB_N, sizeof *out);
    char(*ids)[24] = calloc(LIB_N, sizeof *ids);
    assert_non_null(items);
    assert_non_null(out);
    assert_non_null(ids);
    for (int i = 0; i < LIB_N; i++) {
        items[i].payload = "{}";
        items[i].payload_len = 2;
        items[i].opts.delay_ms = 3600000 * 2;
        if (i % 5 < 2) {
            snprintf(ids[i], sizeof ids[i], "lib-%d", i);
            items[i].opts.id = ids[i];
        }
    }
    if (dq_enqueue_batch(c, q, items, LIB_N, out, &err) != DQ_OK)
        fail_msg("enqueue batch: %s", err.msg);
    /* 1 000 by `delayq enqueue`, one process each: 500 generated, 500 --id */
    char cmdline[1024];
    int st;
    snprintf(cmdline, sizeof cmdline,
             "for i in $(seq 1 %d); do '%s' enqueue --url '%s' -q %s --delay 1h --json 1 || "
             "exit 1; done; for i in $(seq 1 %d); do '%s' enqueue --url '%s' -q %s --delay 1h "
             "--id cli-$i --json 2 || exit 1; done",
             CLI_GEN, getenv("DELAYQ_BIN"), cl.url, q, CLI_IDS, getenv("DELAYQ_BIN"), cl.url, q);
    char *printed = shell(cmdline, &st);
    assert_int_equal(st, 0);

    /* every partition has tasks, on its own master */
    long long total = 0;
    struct dq_parts map = {.n = PARTS, .all = PARTS};
    for (size_t i = 0; i < PARTS; i++) {
        snprintf(key, sizeof key, "dq:{%s}:sched", names[i]);
        const char *zc[] = {"ZCARD", key};
        long long k = node_int(holder[i], 2, zc);
        if (k < 600)
            fail_msg("partition %zu (%s) holds %lld tasks; expected its share of 6000", i, names[i],
                     k);
        total += k;
    }
    assert_int_equal(total, LIB_N + CLI_GEN + CLI_IDS);

    /* delayq stats sums exactly */
    snprintf(cmdline, sizeof cmdline, "'%s' stats --url '%s' -q %s --json", getenv("DELAYQ_BIN"),
             cl.url, q);
    char *js = shell(cmdline, &st);
    assert_int_equal(st, 0);
    assert_int_equal(json_int(js, "due") + json_int(js, "future"), LIB_N + CLI_GEN + CLI_IDS);
    assert_int_equal(json_int(js, "enqueued"), LIB_N + CLI_GEN + CLI_IDS);
    assert_int_equal(json_int(js, "far_future"), LIB_N);
    assert_int_equal(json_int(js, "partitions"), PARTS);
    free(js);
    snprintf(cmdline, sizeof cmdline, "'%s' stats --url '%s' -q %s", getenv("DELAYQ_BIN"), cl.url,
             q);
    js = shell(cmdline, &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(js, "partitions   6 on 3 nodes"));
    free(js);

    /* delayq show finds a task of every partition, by generated and by caller id */
    bool gen_seen[PARTS] = {false}, cid_seen[PARTS] = {false};
    for (int i = 0; i < LIB_N; i++) {
        size_t p = items[i].opts.id ? dq_parts_route_id(&map, ids[i], strlen(ids[i]))
                                    : dq_parts_of_seq(&map, strtoll(out[i].id, NULL, 10));
        bool *seen = items[i].opts.id ? cid_seen : gen_seen;
        if (seen[p])
            continue;
        seen[p] = true;
        snprintf(cmdline, sizeof cmdline, "'%s' show --url '%s' -q %s %s", getenv("DELAYQ_BIN"),
                 cl.url, q, out[i].id);
        char *shown = shell(cmdline, &st);
        if (st != 0 || strstr(shown, out[i].id) == NULL)
            fail_msg("show %s (partition %zu): status %d, %s", out[i].id, p, st, shown);
        free(shown);
    }
    for (size_t p = 0; p < PARTS; p++) {
        assert_true(gen_seen[p]);
        assert_true(cid_seen[p]);
    }
    /* and the ids `delayq enqueue` printed */
    char *line = strtok(printed, "\n");
    assert_non_null(line);
    snprintf(cmdline, sizeof cmdline, "'%s' show --url '%s' -q %s %s", getenv("DELAYQ_BIN"), cl.url,
             q, line);
    char *shown = shell(cmdline, &st);
    assert_int_equal(st, 0);
    free(shown);
    snprintf(cmdline, sizeof cmdline, "'%s' show --url '%s' -q %s cli-77", getenv("DELAYQ_BIN"),
             cl.url, q);
    shown = shell(cmdline, &st);
    assert_int_equal(st, 0);
    assert_non_null(strstr(shown, "cli-77"));
    free(shown);
    free(printed);
    free(items);
    free(out);
    free(ids);
    dq_client_free(c);
}

/* 6 000 tasks with distinct due times a few seconds ahead, enqueued in a shuffled order
 * over six partitions on three masters: once all are due, `delayq ls due --limit 40`
 * lists exactly the 40 earliest in due order (one page call per partition, each on its
 * master, merged), and paging with the cursor returns all 6 000 once, in order. */
static void
ls_due_merged_across_masters(void **state)
{
    const char *q = "pcls";
    enum { N = LIB_N + CLI_GEN + CLI_IDS };
    dq_client *c;
    dq_err err = {0};
    dq_config cfg = {.partitions = PARTS};
    dq_client_opts o = {.who = "tester"};
    dq_stats st;

    (void)state;
    if (dq_client_open(cl.url, &o, &c, &err) != DQ_OK)
        fail_msg("open %s: %s", cl.url, err.msg);
    assert_int_equal(dq_config_set(c, q, &cfg, &err), DQ_OK);
    assert_int_equal(dq_stats_get(c, q, &st, &err), DQ_OK);
    int64_t base = st.now_ms + 3000;
    dq_enqueue_item *items = calloc(N, sizeof *items);
    dq_enqueued *out = calloc(N, sizeof *out);
    char(*byrank)[DQ_ID_MAX + 1] = calloc(N, sizeof *byrank);
    assert_non_null(items);
    assert_non_null(out);
    assert_non_null(byrank);
    for (int i = 0; i < N; i++) {
        items[i].payload = "{}";
        items[i].payload_len = 2;
        items[i].opts.at_ms = base + (7 * i) % N; /* due rank (7 i mod N): a permutation */
    }
    if (dq_enqueue_batch(c, q, items, N, out, &err) != DQ_OK)
        fail_msg("enqueue batch: %s", err.msg);
    for (int i = 0; i < N; i++)
        snprintf(byrank[(7 * i) % N], DQ_ID_MAX + 1, "%s", out[i].id);
    int64_t t0 = test_mono_ms();
    do {
        assert_int_equal(dq_stats_get(c, q, &st, &err), DQ_OK);
        if (st.due == N)
            break;
        test_nap_ms(50);
    } while (test_mono_ms() - t0 < 30000);
    assert_int_equal(st.due, N);

    char cmdline[1024];
    int status;
    snprintf(cmdline, sizeof cmdline, "'%s' ls due --url '%s' -q %s --limit 40 --json",
             getenv("DELAYQ_BIN"), cl.url, q);
    char *listed = shell(cmdline, &status);
    assert_int_equal(status, 0);
    int rows = 0;
    for (const char *s = listed; (s = strstr(s, "{\"id\":\"")) != NULL; rows++) {
        s += 7;
        const char *e = strchr(s, '"');
        assert_non_null(e);
        if (rows >= 40 || strncmp(s, byrank[rows], (size_t)(e - s)) != 0 ||
            byrank[rows][e - s] != '\0')
            fail_msg("row %d: %.*s; expected %s", rows, (int)(e - s), s,
                     rows < 40 ? byrank[rows] : "no more rows");
    }
    assert_int_equal(rows, 40);
    free(listed);
    snprintf(cmdline, sizeof cmdline, "'%s' ls due --url '%s' -q %s --limit 40",
             getenv("DELAYQ_BIN"), cl.url, q);
    listed = shell(cmdline, &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(listed, "(40 of 6000 shown; next page: --after "));
    free(listed);

    /* the whole view, a page of 1000 at a time: every task once, in due order */
    dq_page_cursor cur = {0};
    int k = 0;
    for (;;) {
        dq_page p;
        if (dq_page_next(c, q, DQ_VIEW_DUE, 1000, &cur, &p, &err) != DQ_OK)
            fail_msg("page at %d: %s", k, err.msg);
        assert_int_equal(p.total, N);
        for (size_t i = 0; i < p.n; i++, k++) {
            assert_true(k < N);
            assert_string_equal(p.tasks[i].id, byrank[k]);
        }
        size_t n = p.n;
        dq_page_free(&p);
        if (n < 1000)
            break;
    }
    assert_int_equal(k, N);
    dq_page_cursor_free(&cur);
    free(items);
    free(out);
    free(byrank);
    dq_client_free(c);
}

/* The round trips of a page and of the stats of a queue of 12 partitions on three
 * masters: one call per partition, pipelined per node (the first alone, which finds the
 * scripts' path), so 1 + 3 round trips, not 12; the merged page is the same as before. */
static void
merges_pipelined_per_node(void **state)
{
    const char *q = "pcrt";
    enum { MANY = 12, TASKS = 600 };
    dq_client *c;
    dq_err err = {0};
    dq_config cfg = {.partitions = MANY};
    dq_client_opts o = {.who = "tester"};
    struct dq_cluster_counts before, after;
    dq_stats st;
    dq_page pg;

    (void)state;
    if (dq_client_open(cl.url, &o, &c, &err) != DQ_OK)
        fail_msg("open %s: %s", cl.url, err.msg);
    assert_int_equal(dq_config_set(c, q, &cfg, &err), DQ_OK);
    dq_enqueue_item *items = calloc(TASKS, sizeof *items);
    dq_enqueued *out = calloc(TASKS, sizeof *out);
    assert_non_null(items);
    assert_non_null(out);
    for (int i = 0; i < TASKS; i++) {
        items[i].payload = "{}";
        items[i].payload_len = 2;
        items[i].opts.delay_ms = 3600000 + 1000 * ((7 * i) % TASKS);
    }
    assert_int_equal(dq_enqueue_batch(c, q, items, TASKS, out, &err), DQ_OK);
    /* warm: the map is cached and every master has the library */
    assert_int_equal(dq_stats_get(c, q, &st, &err), DQ_OK);
    assert_int_equal(dq_page_get(c, q, DQ_VIEW_FUTURE, 0, 40, &pg, &err), DQ_OK);
    dq_page_free(&pg);

    dq_cluster_counts_get(c, &before);
    assert_int_equal(dq_stats_get(c, q, &st, &err), DQ_OK);
    dq_cluster_counts_get(c, &after);
    assert_int_equal(st.future, TASKS);
    printf("# stats of %d partitions on 3 masters: %lld round trips\n", MANY,
           (long long)(after.round_trips - before.round_trips));
    assert_true(after.round_trips - before.round_trips <= 1 + NODES);

    dq_cluster_counts_get(c, &before);
    assert_int_equal(dq_page_get(c, q, DQ_VIEW_FUTURE, 0, 40, &pg, &err), DQ_OK);
    dq_cluster_counts_get(c, &after);
    printf("# a page of %d partitions on 3 masters: %lld round trips\n", MANY,
           (long long)(after.round_trips - before.round_trips));
    assert_true(after.round_trips - before.round_trips <= 1 + NODES);
    assert_int_equal(pg.n, 40);
    assert_int_equal(pg.total, TASKS);
    for (size_t i = 1; i < pg.n; i++) /* merged in due order: delays 0, 1, 2 ... s apart */
        assert_true(pg.tasks[i - 1].due_ms < pg.tasks[i].due_ms);
    dq_page_free(&pg);
    free(items);
    free(out);
    dq_client_free(c);
}

/* partitions 1: no map and no partition key anywhere, today's keys only */
static void
one_partition_is_todays_layout(void **state)
{
    const char *q = "plainq";
    dq_client *c;
    dq_err err = {0};
    dq_config cfg = {.partitions = 1};
    dq_client_opts o = {.who = "tester"};
    dq_enqueued e;

    (void)state;
    if (dq_client_open(cl.url, &o, &c, &err) != DQ_OK)
        fail_msg("open %s: %s", cl.url, err.msg);
    assert_int_equal(dq_config_set(c, q, &cfg, &err), DQ_OK);
    for (int i = 0; i < 20; i++)
        assert_int_equal(dq_enqueue(c, q, NULL, "x", 1, &e, &err), DQ_OK);
    assert_string_equal(e.id, "20"); /* today's sequence, from 1 */
    for (int i = 0; i < NODES; i++) {
        const char *argv[] = {"KEYS", "dq:{plainq~*"};
        redisReply *r = test_redis_cmd(&cl.node[i], 2, argv);
        assert_non_null(r);
        assert_int_equal(r->elements, 0);
        freeReplyObject(r);
    }
    /* on the queue's master (the others answer MOVED): its keys, no map among them */
    int m = node_at(dq_client_node(c, q));
    const char *ex[] = {"EXISTS", "dq:{plainq}:parts"}, *seq[] = {"EXISTS", "dq:{plainq}:seq"};
    assert_int_equal(node_int(m, 2, ex), 0);
    assert_int_equal(node_int(m, 2, seq), 1);
    dq_client_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(six_partitions_on_three_masters),
        cmocka_unit_test(ls_due_merged_across_masters),
        cmocka_unit_test(merges_pipelined_per_node),
        cmocka_unit_test(one_partition_is_todays_layout),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
