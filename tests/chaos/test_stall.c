/* SPDX-License-Identifier: MIT */
/*
 * test_stall.c: Redis stops answering for longer than the command timeout while a
 * chaos_worker runs and the delayq command is used: first with CLIENT PAUSE (commands
 * are held, connections stay up), then with DEBUG SLEEP (the whole server freezes).
 * Clients must time out cleanly (the command: exit status 3, a message that says what
 * did not answer and within what time), not spin, and work again afterwards; every task
 * that fell due during the stall runs once, after it.
 *
 * Short mode (CI): 4 s stalls. DQ_CHAOS_LONG=1: 10 s.
 */
#include "harness/check.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
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

#define TIMEOUT_MS   500 /* the command timeout of every client here */
#define DUE_IN_STALL 10
#define MAX_CPU_PCT  5.0

static struct test_redis redis;

struct stall {
    dq_client *c;
    char queue[64];
    const char *dir;
    pid_t worker;
    int64_t want_done;
};

static int
stall_ms(void)
{
    return chaos_long() ? 10000 : 4000;
}

static bool
all_done(void *arg)
{
    struct stall *s = arg;
    dq_stats st;
    dq_err err;

    return dq_stats_get(s->c, s->queue, &st, &err) == DQ_OK && st.done == s->want_done &&
           st.due + st.future + st.inflight == 0;
}

static bool
worker_started(void *arg)
{
    struct stall *s = arg;
    return chaos_log_count(s->dir, "event=worker.start") == 1;
}

static void
stall_open(struct stall *s, const char *name)
{
    char timeout[16], out[300];
    dq_client_opts co = {.command_timeout_ms = 5000};
    dq_err err;

    memset(s, 0, sizeof *s);
    s->dir = chaos_dir(name);
    assert_non_null(s->dir);
    test_queue_name(s->queue, sizeof s->queue, name);
    if (dq_client_open(redis.url, &co, &s->c, &err) != DQ_OK)
        fail_msg("dq_client_open: %s", err.msg);
    snprintf(timeout, sizeof timeout, "%d", TIMEOUT_MS);
    snprintf(out, sizeof out, "%s/worker.out", s->dir);
    const char *argv[] = {
        chaos_worker_bin(), redis.url, s->queue, s->dir, "5000", "2", timeout, NULL};
    s->worker = chaos_spawn(argv, out);
    assert_true(s->worker > 0);
    /* connected before the stall, so the stall hits a running worker */
    assert_true(wait_until(worker_started, s, 10000, "the worker to start"));
}

/* Enqueues @n tasks "PREFIX<i>" due over [now + 300 ms, now + span - 500 ms]; their due
 * times go to @due. */
static void
enqueue_spread(struct stall *s, const char *prefix, int n, int span_ms, int64_t *due)
{
    dq_stats st;
    dq_err err;

    assert_int_equal(dq_stats_get(s->c, s->queue, &st, &err), DQ_OK);
    for (int i = 0; i < n; i++) {
        char id[32];
        dq_enqueued e;
        due[i] = st.now_ms + 300 + (int64_t)i * (span_ms - 800) / n;
        snprintf(id, sizeof id, "%s%d", prefix, i);
        dq_enqueue_opts o = {.at_ms = due[i], .id = id};
        if (dq_enqueue(s->c, s->queue, &o, "ok 1", 4, &e, &err) != DQ_OK)
            fail_msg("enqueue %s: %s", id, err.msg);
    }
    s->want_done += n;
}

/* Runs `delayq ARGS... --url URL -q QUEUE --timeout 500ms` (@args NULL-terminated, at
 * most 8); returns its exit status and leaves its output in DIR/cli.out. */
static int
cli(struct stall *s, const char *const *args, int64_t *elapsed)
{
    char out[300], timeout[16];
    const char *argv[20] = {chaos_delayq_bin()};
    int n = 1;

    snprintf(out, sizeof out, "%s/cli.out", s->dir);
    snprintf(timeout, sizeof timeout, "%dms", TIMEOUT_MS);
    unlink(out);
    for (; *args != NULL && n < 9; args++)
        argv[n++] = *args;
    argv[n++] = "--url";
    argv[n++] = redis.url;
    argv[n++] = "-q";
    argv[n++] = s->queue;
    argv[n++] = "--timeout";
    argv[n++] = timeout;
    argv[n] = NULL;
    return chaos_run(argv, out, 30000, elapsed);
}

static const char *const stats_args[] = {"stats", NULL};

static bool
cli_works(void *arg)
{
    return cli(arg, stats_args, NULL) == 0;
}

/* The command timed out cleanly: status 3, a message naming the wait, in about the
 * timeout (the connect succeeds; the first command is the one that waits). */
static void
assert_cli_timed_out(struct stall *s, int rc, int64_t elapsed, const char *what)
{
    char out[300], want[64];

    snprintf(out, sizeof out, "%s/cli.out", s->dir);
    snprintf(want, sizeof want, "within %d ms", TIMEOUT_MS);
    if (rc != 3 || !chaos_file_has(out, "did not answer") || !chaos_file_has(out, want)) {
        char cat[400];
        snprintf(cat, sizeof cat, "cat %s >&2", out);
        if (system(cat) != 0)
            fprintf(stderr, "(no output)\n");
        fail_msg("%s during the stall: exit %d, expected 3 and \"did not answer ... %s\"", what, rc,
                 want);
    }
    if (elapsed < TIMEOUT_MS - 50 || elapsed > TIMEOUT_MS + 2000)
        fail_msg("%s took %lld ms to time out after %d ms", what, (long long)elapsed, TIMEOUT_MS);
    printf("# %s: exit 3 after %lld ms\n", what, (long long)elapsed);
}

/* Waits out the stall (its length is the schedule), checking the worker stays up, and
 * returns the worker's CPU time over it as a percentage of one CPU. */
static double
ride_out(struct stall *s, int64_t start_mono, int64_t cpu0)
{
    int status;

    while (test_mono_ms() < start_mono + stall_ms()) {
        if (!chaos_running(s->worker, &status))
            fail_msg("the worker exited during the stall (status 0x%x); see %s", status, s->dir);
        test_nap_ms(50);
    }
    int64_t cpu1 = chaos_cpu_ms(s->worker);
    assert_true(cpu0 >= 0 && cpu1 >= 0);
    return 100.0 * (double)(cpu1 - cpu0) / (double)(test_mono_ms() - start_mono);
}

/* After the stall: every task ran once, not early; the worker saw the stall and came
 * back; it stops cleanly. */
static void
check_after(struct stall *s, const char *prefix, int n, const int64_t *due, double cpu_pct)
{
    struct chaos_runs r;
    int runs[DUE_IN_STALL] = {0};
    size_t plen = strlen(prefix);

    assert_true(wait_until(all_done, s, 30000, "the tasks due during the stall to run"));
    int status = chaos_stop(s->worker, 10000);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the worker did not stop cleanly (status 0x%x); see %s", status, s->dir);
    chaos_runs_read(s->dir, &r);
    for (size_t i = 0; i < r.n; i++) {
        const struct chaos_run *x = &r.v[i];
        if (strncmp(x->id, prefix, plen) != 0)
            continue;
        int k = atoi(x->id + plen);
        assert_true(k >= 0 && k < n);
        runs[k]++;
        if (x->wall < due[k]) /* started before due (same host: wall = server TIME) */
            fail_msg("%s ran %lld ms early", x->id, (long long)(due[k] - x->wall));
    }
    chaos_runs_free(&r);
    /* Exactly once: a claim or an ack that timed out is either lost (its tasks come back
     * when the lease runs out, and run then) or applied late (a repeated ack is refused
     * by its fence); neither makes a handler run twice. */
    for (int k = 0; k < n; k++) {
        if (runs[k] != 1)
            fail_msg("%s%d ran %d times", prefix, k, runs[k]);
    }
    size_t down = chaos_log_count(s->dir, "event=redis.down");
    size_t timed_out = chaos_log_count(s->dir, "did not answer");
    size_t up = chaos_log_count(s->dir, "event=redis.up");
    if (down < 1 || timed_out < 1 || up < 1)
        fail_msg("worker log: %zu redis.down (%zu timed out), %zu redis.up; expected the stall "
                 "noticed and recovered from",
                 down, timed_out, up);
    printf("# worker: CPU over the stall %.2f%%, redis.down %zu, redis.up %zu\n", cpu_pct, down,
           up);
    if (cpu_pct > MAX_CPU_PCT)
        fail_msg("the worker used %.1f%% of a CPU during the stall (limit %.1f%%)", cpu_pct,
                 MAX_CPU_PCT);
}

static void
client_pause(void **state)
{
    struct stall s;
    int64_t due[DUE_IN_STALL], elapsed;
    char pause[16], payload[300];
    int rc;

    stall_open(&s, "pause");
    snprintf(payload, sizeof payload, "%s/payload", s.dir);
    FILE *f = fopen(payload, "w");
    assert_non_null(f);
    fputs("ok 1", f);
    fclose(f);
    enqueue_spread(&s, "p", DUE_IN_STALL, stall_ms(), due);

    snprintf(pause, sizeof pause, "%d", stall_ms());
    const char *argv[] = {"CLIENT", "PAUSE", pause, "ALL"};
    redisReply *reply = test_redis_cmd(&redis, 4, argv);
    const int64_t start = test_mono_ms();
    const int64_t cpu0 = chaos_cpu_ms(s.worker);
    assert_non_null(reply);
    assert_int_equal(reply->type, REDIS_REPLY_STATUS);
    freeReplyObject(reply);

    rc = cli(&s, stats_args, &elapsed);
    assert_cli_timed_out(&s, rc, elapsed, "delayq stats");
    /* An enqueue that times out may or may not have happened (a paused command runs
     * when the pause ends): with a caller-chosen id, enqueueing again is safe. */
    const char *const enqueue_args[] = {"enqueue", "--id", "again", "--file", payload, NULL};
    rc = cli(&s, enqueue_args, &elapsed);
    assert_cli_timed_out(&s, rc, elapsed, "delayq enqueue");
    assert_true(test_mono_ms() < start + stall_ms());
    double pct = ride_out(&s, start, cpu0);

    assert_true(wait_until(cli_works, &s, 10000, "delayq stats to work after the pause"));
    assert_int_equal(cli(&s, enqueue_args, &elapsed), 0);
    s.want_done++; /* "again" */
    check_after(&s, "p", DUE_IN_STALL, due, pct);
    dq_client_free(s.c);
}

struct sleeper {
    pthread_t th;
    int secs;
    bool ok;
};

static void *
debug_sleep(void *arg)
{
    struct sleeper *z = arg;
    struct timeval tv = {.tv_sec = 2 + z->secs, .tv_usec = 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", redis.port, tv);
    redisReply *r;

    if (c == NULL || c->err != 0) {
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    r = redisCommand(c, "DEBUG SLEEP %d", z->secs);
    z->ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    redisFree(c);
    return NULL;
}

/* True when the server does not answer PING within 100 ms. */
static bool
server_frozen(void *arg)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", redis.port, tv);
    redisReply *r = NULL;
    bool frozen;

    if (c == NULL || c->err != 0) {
        redisFree(c);
        return false;
    }
    redisSetTimeout(c, tv);
    r = redisCommand(c, "PING");
    frozen = r == NULL;
    freeReplyObject(r);
    redisFree(c);
    return frozen;
}

static void
debug_sleep_freezes_the_server(void **state)
{
    struct stall s;
    struct sleeper z = {.secs = stall_ms() / 1000};
    int64_t due[DUE_IN_STALL], elapsed = 0;

    stall_open(&s, "sleep");
    enqueue_spread(&s, "q", DUE_IN_STALL, stall_ms(), due);
    assert_int_equal(pthread_create(&z.th, NULL, debug_sleep, &z), 0);
    const int64_t start = test_mono_ms();
    const int64_t cpu0 = chaos_cpu_ms(s.worker);
    bool frozen = wait_until(server_frozen, NULL, 2000, "the server to freeze");

    int rc = frozen ? cli(&s, stats_args, &elapsed) : -1;
    bool in_time = test_mono_ms() < start + stall_ms();
    double pct = frozen ? ride_out(&s, start, cpu0) : 0;
    pthread_join(z.th, NULL);
    assert_true(frozen);
    assert_true(z.ok);
    assert_true(in_time);
    assert_cli_timed_out(&s, rc, elapsed, "delayq stats (server asleep)");

    assert_true(wait_until(cli_works, &s, 10000, "delayq stats to work after the sleep"));
    check_after(&s, "q", DUE_IN_STALL, due, pct);
    dq_client_free(s.c);
}

static int
group_setup(void **state)
{
    const char *extra[] = {"--enable-debug-command", "yes", NULL};
    return test_redis_start(&redis, extra);
}

static int
group_teardown(void **state)
{
    test_redis_stop(&redis);
    return 0;
}

static int
teardown(void **state)
{
    chaos_cleanup();
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(client_pause, teardown),
        cmocka_unit_test_teardown(debug_sleep_freezes_the_server, teardown),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
