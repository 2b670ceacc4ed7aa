/* SPDX-License-Identifier: MIT */
/*
 * test_outage.c: Redis goes away for a while under running workers (two chaos_worker
 * processes and a `delayq work`) and an open `delayq top` (in a private tmux server).
 * Nothing may crash or spin (CPU time sampled from /proc over the outage), the
 * inspector must show the outage and recover, a handler that finishes during the
 * outage must have its ack written after it, and the tasks that fell due during the
 * outage must run once each, after it.
 *
 * Short mode (CI): 8 s down. DQ_CHAOS_LONG=1: 30 s down.
 */
#include "harness/check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chaos.h"
#include "delayq.h"
#include "harness/redis.h"
#include "harness/wait.h"

#define DUE_IN_OUTAGE 20
/* A process may use this much of one CPU while Redis is down: reconnect attempts with
 * backoff and the inspector's once-a-second countdown cost far less; a loop that spins
 * costs all of it. */
#define MAX_CPU_PCT 5.0

static struct test_redis redis;

struct outage {
    dq_client *c;
    char qa[64], qb[64];
    const char *dir;
    int64_t done_a, done_b, failed_a;
};

static bool
counts_reached(void *arg)
{
    struct outage *o = arg;
    dq_stats a, b;
    dq_err err;

    return dq_stats_get(o->c, o->qa, &a, &err) == DQ_OK &&
           dq_stats_get(o->c, o->qb, &b, &err) == DQ_OK && a.done == o->done_a &&
           a.failed == o->failed_a && b.done == o->done_b && a.due + a.future + a.inflight == 0 &&
           b.due + b.future + b.inflight == 0;
}

static bool
held_started(void *arg)
{
    struct outage *o = arg;
    struct chaos_runs r;
    bool found = false;

    chaos_runs_read(o->dir, &r);
    for (size_t i = 0; i < r.n && !found; i++)
        found = strcmp(r.v[i].id, "held") == 0;
    chaos_runs_free(&r);
    return found;
}

static bool
held_ended(void *arg)
{
    struct outage *o = arg;
    struct chaos_runs r;
    bool found = false;

    chaos_runs_read(o->dir, &r);
    for (size_t i = 0; i < r.n && !found; i++)
        found = strcmp(r.v[i].id, "held") == 0 && r.v[i].end >= 0;
    chaos_runs_free(&r);
    return found;
}

static bool
top_shows_counts(void *arg)
{
    return chaos_tmux_has("[4] Failed (2)") && !chaos_tmux_has("DISCONNECTED");
}

static bool
top_shows_outage(void *arg)
{
    return chaos_tmux_has("DISCONNECTED");
}

static void
enqueue(struct outage *o, const char *queue, const char *id, const char *payload, int64_t at_ms)
{
    dq_enqueue_opts eo = {.at_ms = at_ms, .id = id};
    dq_enqueued e;
    dq_err err;

    if (dq_enqueue(o->c, queue, &eo, payload, strlen(payload), &e, &err) != DQ_OK)
        fail_msg("enqueue %s: %s", id, err.msg);
}

static void
redis_down_under_workers_and_top(void **state)
{
    const int outage_ms = chaos_long() ? 30000 : 8000;
    const char *extra[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    struct outage o = {0};
    char gate[300], out[300], cmd[1024];
    pid_t procs[4]; /* two chaos workers, delayq work, delayq top */
    const char *names[4] = {"chaos_worker", "chaos_worker", "delayq work", "delayq top"};
    int64_t cpu0[4], cpu1[4];
    dq_stats st;
    dq_err err;

    o.dir = chaos_dir("outage");
    assert_non_null(o.dir);
    assert_int_equal(test_redis_start(&redis, extra), 0);
    test_queue_name(o.qa, sizeof o.qa, "outage-a");
    test_queue_name(o.qb, sizeof o.qb, "outage-b");
    if (dq_client_open(redis.url, NULL, &o.c, &err) != DQ_OK)
        fail_msg("dq_client_open: %s", err.msg);
    snprintf(gate, sizeof gate, "%s/gate", o.dir);
    snprintf(out, sizeof out, "%s/worker.out", o.dir);

    /* The lease outlasts the outage and the reconnect backoff, so a result finished
     * during the outage can still be written after it. */
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {
            chaos_worker_bin(), redis.url, o.qa, o.dir, "60000", "4", "1000", NULL};
        procs[i] = chaos_spawn(argv, out);
        assert_true(procs[i] > 0);
    }
    {
        char work_out[300];
        snprintf(work_out, sizeof work_out, "%s/work.out", o.dir);
        const char *argv[] = {chaos_delayq_bin(),
                              "work",
                              "--url",
                              redis.url,
                              "-q",
                              o.qb,
                              "--lease",
                              "60s",
                              "--concurrency",
                              "2",
                              "--",
                              "/bin/sh",
                              "-c",
                              "cat >/dev/null",
                              NULL};
        procs[2] = chaos_spawn(argv, work_out);
        assert_true(procs[2] > 0);
    }
    snprintf(cmd, sizeof cmd, "exec '%s' top --url %s -q %s --refresh 250ms", chaos_delayq_bin(),
             redis.url, o.qa);
    procs[3] = chaos_tmux_start(120, 30, cmd);
    assert_true(procs[3] > 0);

    /* Before: tasks run, two fail, the inspector counts them. */
    assert_int_equal(dq_stats_get(o.c, o.qa, &st, &err), DQ_OK);
    enqueue(&o, o.qa, "f1", "fail 1", st.now_ms);
    enqueue(&o, o.qa, "f2", "fail 1", st.now_ms);
    for (int i = 0; i < 20; i++) {
        char id[16];
        snprintf(id, sizeof id, "a%d", i);
        enqueue(&o, o.qa, id, "ok 2", st.now_ms);
        snprintf(id, sizeof id, "b%d", i);
        enqueue(&o, o.qb, id, "{}", st.now_ms);
    }
    o.done_a = 20;
    o.failed_a = 2;
    o.done_b = 20;
    assert_true(wait_until(counts_reached, &o, 30000, "the first tasks to finish"));
    if (!wait_until(top_shows_counts, NULL, 10000, "delayq top to show 2 failed")) {
        chaos_tmux_dump();
        fail();
    }

    /* A handler that will still be running when Redis goes down, and tasks that fall
     * due during the outage. */
    assert_int_equal(dq_stats_get(o.c, o.qa, &st, &err), DQ_OK);
    enqueue(&o, o.qa, "held", "hold", st.now_ms);
    assert_true(wait_until(held_started, &o, 10000, "the held task to start"));
    int64_t due[DUE_IN_OUTAGE];
    for (int i = 0; i < DUE_IN_OUTAGE; i++) {
        char id[16];
        due[i] = st.now_ms + 1000 + (int64_t)i * (outage_ms - 2000) / DUE_IN_OUTAGE;
        snprintf(id, sizeof id, "d%d", i);
        enqueue(&o, o.qa, id, "ok 1", due[i]);
        snprintf(id, sizeof id, "e%d", i);
        enqueue(&o, o.qb, id, "{}", due[i]);
    }

    /* The outage. */
    const int64_t down_mono = test_mono_ms(), down_wall = chaos_wall_ms();
    test_redis_kill(&redis);
    for (int i = 0; i < 4; i++)
        cpu0[i] = chaos_cpu_ms(procs[i]);
    if (!wait_until(top_shows_outage, NULL, 10000, "delayq top to show the outage")) {
        chaos_tmux_dump();
        fail();
    }
    const int64_t banner_ms = test_mono_ms() - down_mono;
    FILE *g = fopen(gate, "w");
    assert_non_null(g);
    fclose(g);
    assert_true(wait_until(held_ended, &o, 10000, "the held handler to return"));
    while (test_mono_ms() < down_mono + outage_ms) {
        for (int i = 0; i < 3; i++) {
            int status;
            if (!chaos_running(procs[i], &status))
                fail_msg("%s (pid %ld) exited during the outage (status 0x%x); see %s", names[i],
                         (long)procs[i], status, o.dir);
        }
        if (kill(procs[3], 0) != 0)
            fail_msg("delayq top exited during the outage");
        test_nap_ms(100); /* the outage lasts as long as it lasts: this is its schedule */
    }
    const int64_t outage_real = test_mono_ms() - down_mono;
    for (int i = 0; i < 4; i++) {
        cpu1[i] = chaos_cpu_ms(procs[i]);
        assert_true(cpu0[i] >= 0 && cpu1[i] >= 0);
    }
    if (!chaos_tmux_has("DISCONNECTED")) {
        chaos_tmux_dump();
        fail_msg("the disconnected banner went away while Redis was still down");
    }

    /* Back: the inspector recovers, the held result is written, everything due runs. */
    assert_int_equal(test_redis_start_again(&redis), 0);
    const int64_t up_mono = test_mono_ms(), up_wall = chaos_wall_ms();
    if (!wait_until(top_shows_counts, NULL, 15000, "delayq top to recover")) {
        chaos_tmux_dump();
        fail();
    }
    const int64_t recover_ms = test_mono_ms() - up_mono;
    o.done_a = 20 + 1 + DUE_IN_OUTAGE;
    o.done_b = 20 + DUE_IN_OUTAGE;
    assert_true(wait_until(counts_reached, &o, 30000, "the tasks due during the outage to run"));
    const int64_t drained_ms = test_mono_ms() - up_mono;

    for (int i = 0; i < 3; i++) {
        int status = chaos_stop(procs[i], 10000);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("%s (pid %ld) did not stop cleanly (status 0x%x); see %s", names[i],
                     (long)procs[i], status, o.dir);
    }

    struct chaos_runs r;
    chaos_runs_read(o.dir, &r);
    int held_runs = 0, d_runs[DUE_IN_OUTAGE] = {0};
    int64_t first_run_ms = -1; /* the first task started after Redis came back */
    for (size_t i = 0; i < r.n; i++) {
        const struct chaos_run *x = &r.v[i];
        if (strcmp(x->id, "held") == 0) {
            held_runs++;
            if (x->end < 0 || x->end >= up_wall)
                fail_msg("the held handler did not finish during the outage (end %lld, Redis "
                         "back at %lld)",
                         (long long)x->end, (long long)up_wall);
            if (x->done < up_wall)
                fail_msg("the held task's ack was not written after the outage (ack logged at "
                         "%lld, Redis back at %lld)",
                         (long long)x->done, (long long)up_wall);
        } else if (x->id[0] == 'd') {
            int k = atoi(x->id + 1);
            assert_true(k >= 0 && k < DUE_IN_OUTAGE);
            d_runs[k]++;
            if (x->wall >= up_wall && (first_run_ms < 0 || x->wall - up_wall < first_run_ms))
                first_run_ms = x->wall - up_wall;
            if (x->wall < due[k]) /* started before due (same host: wall = server TIME) */
                fail_msg("%s ran %lld ms early", x->id, (long long)(due[k] - x->wall));
        }
    }
    chaos_runs_free(&r);
    assert_int_equal(held_runs, 1);
    for (int k = 0; k < DUE_IN_OUTAGE; k++) {
        /* the leases outlast the outage: nothing had to run twice */
        if (d_runs[k] != 1)
            fail_msg("d%d ran %d times", k, d_runs[k]);
    }
    assert_int_equal(dq_stats_get(o.c, o.qa, &st, &err), DQ_OK);
    assert_int_equal(st.failed, 2);
    assert_int_equal(st.reaped, 0);

    printf("# Redis down %lld ms (killed at %lld); banner after %lld ms; top recovered %lld ms, "
           "the first task started %lld ms and the queues drained %lld ms after Redis came "
           "back\n",
           (long long)outage_real, (long long)down_wall, (long long)banner_ms,
           (long long)recover_ms, (long long)first_run_ms, (long long)drained_ms);
    /* reconnect backoffs are capped at 1 s (+25% jitter): both are back within 2 s */
    if (recover_ms > 2000 * test_slowdown())
        fail_msg("delayq top recovered %lld ms after Redis came back (limit 2 s)",
                 (long long)recover_ms);
    if (first_run_ms < 0 || first_run_ms > 2000 * test_slowdown())
        fail_msg("the workers started again %lld ms after Redis came back (limit 2 s)",
                 (long long)first_run_ms);
    for (int i = 0; i < 4; i++) {
        double pct = 100.0 * (double)(cpu1[i] - cpu0[i]) / (double)outage_real;
        printf("# %-12s CPU over the outage: %lld ms (%.2f%%)\n", names[i],
               (long long)(cpu1[i] - cpu0[i]), pct);
        if (pct > MAX_CPU_PCT)
            fail_msg("%s used %.1f%% of a CPU while Redis was down (limit %.1f%%)", names[i], pct,
                     MAX_CPU_PCT);
    }
    dq_client_free(o.c);
}

static int
teardown(void **state)
{
    chaos_cleanup();
    test_redis_stop(&redis);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(redis_down_under_workers_and_top, teardown),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
