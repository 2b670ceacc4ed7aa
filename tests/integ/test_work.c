/* SPDX-License-Identifier: MIT */
/*
 * test_work.c: `delayq work` as a user runs it: real worker processes running small
 * shell handlers against a real redis-server. Each exit path, several workers on one
 * queue, kill -9 of a worker mid-task, SIGTERM during work, a Redis restart under a
 * running worker, and what an idle worker costs.
 */
#include "harness/fixture.h"
#include "harness/worker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[160];

/* Writes an executable shell script @name into tmpdir; returns its path (static). */
static const char *
script(const char *name, const char *body)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    FILE *f;

    snprintf(p, 320, "%s/%s", tmpdir, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(p, 0755);
    return p;
}

/* Starts `delayq work -q QUEUE ARGS... -- HANDLER` with its stderr in tmpdir/NAME.log. */
static pid_t
start_work(struct fixture *f, const char *name, const char *const *args, const char *handler)
{
    const char *argv[40];
    char log[320];
    int n = 0;

    snprintf(log, sizeof log, "%s/%s.log", tmpdir, name);
    argv[n++] = "--url";
    argv[n++] = f->redis->url;
    argv[n++] = "-q";
    argv[n++] = f->queue;
    argv[n++] = "--name";
    argv[n++] = name;
    for (int i = 0; args != NULL && args[i] != NULL && n < 36; i++)
        argv[n++] = args[i];
    argv[n++] = "--";
    argv[n++] = handler;
    argv[n] = NULL;
    return test_work_start(argv, log);
}

struct counts {
    struct fixture *f;
    int64_t done, failed, retried, idle_sched;
    dq_stats s;
};

static bool
counts_reached(void *arg)
{
    struct counts *c = arg;
    if (dq_stats_get(c->f->c, c->f->queue, &c->s, &c->f->err) != DQ_OK)
        return false;
    return c->s.done >= c->done && c->s.failed >= c->failed && c->s.retried >= c->retried &&
           c->s.inflight == 0;
}

/* A file (the handlers' run log), read whole. */
static char *
slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf;
    long n;

    if (f == NULL)
        return strdup("");
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = calloc(1, (size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        buf[0] = '\0';
    fclose(f);
    return buf;
}

static void
exit_paths(void **state)
{
    struct fixture f;
    char body[1024], runlog[320];
    dq_task t;

    fixture_open(&f, state, "exits");
    snprintf(runlog, sizeof runlog, "%s/exits.runs", tmpdir);
    snprintf(body, sizeof body,
             "payload=$(cat)\n"
             "echo \"$DELAYQ_TASK_ID $DELAYQ_QUEUE $DELAYQ_ATTEMPT $DELAYQ_DUE_MS "
             "$DELAYQ_ENQUEUED_MS $payload\" >> %s\n"
             "case \"$DELAYQ_TASK_ID\" in\n"
             "  ok) exit 0 ;;\n"
             "  later) echo 'try again soon' >&2; exit 75 ;;\n"
             "  broken) echo 'Traceback (most recent call last):' >&2;"
             " echo '  File \"h.py\", line 3' >&2; echo 'KeyError: card' >&2; exit 3 ;;\n"
             "  crash) kill -9 $$ ;;\n"
             "  hang) sleep 30 ;;\n"
             "esac\n",
             runlog);
    const char *h = script("exits.sh", body);
    dq_enqueue_opts o = {.id = "ok"};
    dq_enqueued e;
    const char *json = "\x82\xa1"
                       "a\x01\xa1"
                       "b\x92\xc3\xc0"; /* {"a":1,"b":[true,null]} */
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, json, strlen(json), &e, &f.err));
    const char *ids[] = {"later", "broken", "crash", "hang"};
    for (int i = 0; i < 4; i++) {
        o.id = ids[i];
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xa1x", 2, &e, &f.err));
    }
    dq_config cfg = {.backoff_base_ms = 600000}; /* retried tasks wait: easy to inspect */
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    const char *args[] = {"--concurrency", "5", "--timeout", "700ms", NULL};
    pid_t pid = start_work(&f, "exits", args, h);
    struct counts c = {.f = &f, .done = 1, .failed = 2, .retried = 2};
    if (!wait_until(counts_reached, &c, 15000, "every exit path handled")) {
        char log[400];
        snprintf(log, sizeof log, "cat %s/exits.log >&2", tmpdir);
        if (system(log) != 0)
            fprintf(stderr, "(no worker log)\n");
        fail_msg("done %lld failed %lld retried %lld inflight %lld", (long long)c.s.done,
                 (long long)c.s.failed, (long long)c.s.retried, (long long)c.s.inflight);
    }
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);

    char *runs = slurp(runlog);
    /* stdin is the payload as JSON; the environment names the task */
    assert_non_null(strstr(runs, "ok "));
    assert_non_null(strstr(runs, " 1 "));
    assert_non_null(strstr(runs, "{\"a\":1,\"b\":[true,null]}"));
    char q[120];
    snprintf(q, sizeof q, "ok %s 1 ", f.queue);
    assert_non_null(strstr(runs, q));
    free(runs);

    ASSERT_OK(&f, dq_find(f.c, f.queue, "later", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_int_equal(t.attempt, 1);
    if (t.last_error == NULL || strstr(t.last_error, "exit 75") == NULL)
        fail_msg("last error of 'later': %s", t.last_error ? t.last_error : "(none)");
    assert_non_null(strstr(t.last_error, "try again soon"));
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "hang", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_non_null(strstr(t.last_error, "timed out"));
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "broken", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_non_null(strstr(t.error, "exit 3"));
    assert_non_null(strstr(t.error, "KeyError: card"));
    assert_non_null(strstr(t.trace, "Traceback (most recent call last):\n  File \"h.py\""));
    assert_non_null(strstr(t.failed_by, "exits"));
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "crash", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_non_null(strstr(t.error, "signal 9"));
    dq_task_clear(&t);
    fixture_close(&f);
}

static void
several_workers_each_task_once_never_early(void **state)
{
    struct fixture f;
    char body[1024], runlog[320];
    const int n = 2000;
    pid_t pids[3];

    fixture_open(&f, state, "many");
    snprintf(runlog, sizeof runlog, "%s/many.runs", tmpdir);
    /* one line per run: id, due ms, start ms (same host, so the same clock as Redis) */
    snprintf(body, sizeof body, "echo \"$DELAYQ_TASK_ID $DELAYQ_DUE_MS $(date +%%s%%3N)\" >> %s\n",
             runlog);
    const char *h = script("many.sh", body);
    for (int i = 0; i < n; i++) {
        dq_enqueue_opts o = {.delay_ms = (i * 13) % 2000};
        dq_enqueued e;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xc0", 1, &e, &f.err));
    }
    const char *args[] = {"--concurrency", "4", "--quiet", NULL};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "many-%d", i);
        pids[i] = start_work(&f, name, args, h);
    }
    struct counts c = {.f = &f, .done = n};
    assert_true(wait_until(counts_reached, &c, 60000, "all tasks done by three workers"));
    for (int i = 0; i < 3; i++)
        assert_int_equal(test_work_stop(pids[i], SIGTERM), 0);

    char *runs = slurp(runlog);
    int *count = calloc((size_t)n + 1, sizeof *count);
    int early = 0, lines = 0, worst_early = 0;
    for (char *line = strtok(runs, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        long id;
        long long due, start;
        if (sscanf(line, "%ld %lld %lld", &id, &due, &start) != 3 || id < 1 || id > n)
            fail_msg("bad run line: %s", line);
        count[id]++;
        lines++;
        if (start < due) {
            early++;
            worst_early = (int)(due - start) > worst_early ? (int)(due - start) : worst_early;
        }
    }
    int dup = 0, missing = 0;
    for (int i = 1; i <= n; i++) {
        dup += count[i] > 1;
        missing += count[i] == 0;
    }
    printf("# %d runs by 3 workers: %d duplicates, %d missing, %d early\n", lines, dup, missing,
           early);
    assert_int_equal(dup, 0);
    assert_int_equal(missing, 0);
    assert_int_equal(early, 0);
    assert_int_equal(c.s.done, n);
    free(count);
    free(runs);
    fixture_close(&f);
}

static void
kill9_mid_task_runs_it_again_after_the_lease(void **state)
{
    struct fixture f;
    char body[1024], runlog[320];

    fixture_open(&f, state, "kill9");
    snprintf(runlog, sizeof runlog, "%s/kill9.runs", tmpdir);
    snprintf(body, sizeof body,
             "echo \"start $DELAYQ_TASK_ID $DELAYQ_ATTEMPT\" >> %s\n"
             "[ \"$DELAYQ_TASK_ID\" = slow ] && [ \"$DELAYQ_ATTEMPT\" = 1 ] && sleep 30\n"
             "echo \"end $DELAYQ_TASK_ID $DELAYQ_ATTEMPT\" >> %s\n",
             runlog, runlog);
    const char *h = script("kill9.sh", body);
    dq_enqueue_opts o = {.id = "slow"};
    dq_enqueued e;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xc0", 1, &e, &f.err));
    const char *args[] = {"--lease", "1s", NULL};
    pid_t a = start_work(&f, "victim", args, h);
    /* wait until the slow handler runs under worker A */
    dq_task t;
    int64_t deadline = test_mono_ms() + 10000;
    for (;;) {
        if (dq_find(f.c, f.queue, "slow", &t, &f.err) == DQ_OK) {
            bool running = t.state == DQ_STATE_INFLIGHT;
            dq_task_clear(&t);
            char *runs = slurp(runlog);
            bool started = strstr(runs, "start slow 1") != NULL;
            free(runs);
            if (running && started)
                break;
        }
        assert_true(test_mono_ms() < deadline);
        test_nap_ms(20);
    }
    assert_int_equal(test_work_stop(a, SIGKILL), 128 + SIGKILL);
    /* another worker, with other work too: it reaps the lease and runs the task again */
    o.id = "other";
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xc0", 1, &e, &f.err));
    pid_t b = start_work(&f, "rescuer", NULL, h);
    struct counts c = {.f = &f, .done = 2};
    assert_true(wait_until(counts_reached, &c, 15000, "slow task run again and done"));
    assert_int_equal(test_work_stop(b, SIGTERM), 0);
    char *runs = slurp(runlog);
    assert_non_null(strstr(runs, "start slow 2"));
    assert_non_null(strstr(runs, "end slow 2"));
    assert_null(strstr(runs, "end slow 1")); /* the first run died with its worker */
    assert_non_null(strstr(runs, "end other 1"));
    free(runs);
    assert_int_equal(c.s.reaped, 1);
    assert_int_equal(c.s.failed, 0);
    fixture_close(&f);
}

static void
sigterm_finishes_running_and_hands_back_the_rest(void **state)
{
    struct fixture f;
    char body[1200], runlog[320], flag[320];

    fixture_open(&f, state, "term");
    snprintf(runlog, sizeof runlog, "%s/term.runs", tmpdir);
    snprintf(flag, sizeof flag, "%s/term.go", tmpdir);
    /* handlers wait for a flag file, so the test decides when they finish */
    snprintf(body, sizeof body,
             "echo \"start $DELAYQ_TASK_ID\" >> %s\n"
             "while [ ! -e %s ]; do sleep 0.02; done\n"
             "echo \"end $DELAYQ_TASK_ID\" >> %s\n",
             runlog, flag, runlog);
    const char *h = script("term.sh", body);
    for (int i = 0; i < 4; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    const char *args[] = {"--concurrency", "2", "--batch", "4", "--grace", "20s", NULL};
    pid_t pid = start_work(&f, "term", args, h);
    int64_t deadline = test_mono_ms() + 10000;
    for (;;) {
        char *runs = slurp(runlog);
        int started = 0;
        for (char *p = runs; (p = strstr(p, "start")) != NULL; p++)
            started++;
        free(runs);
        if (started == 2)
            break;
        assert_true(test_mono_ms() < deadline);
        test_nap_ms(20);
    }
    kill(pid, SIGTERM);
    /* the two claimed but unstarted tasks go back at once */
    dq_stats s;
    deadline = test_mono_ms() + 10000;
    do {
        ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
        assert_true(test_mono_ms() < deadline);
        test_nap_ms(20);
    } while (s.due != 2);
    FILE *go = fopen(flag, "w");
    fclose(go);
    assert_int_equal(test_work_stop(pid, 0), 0); /* exits 0 once the running two finish */
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.done, 2);
    assert_int_equal(s.due, 2);
    assert_int_equal(s.inflight, 0);
    dq_page p;
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 10, &p, &f.err));
    for (size_t i = 0; i < p.n; i++)
        assert_int_equal(p.tasks[i].attempt, 0); /* handing back is not an attempt */
    dq_page_free(&p);
    fixture_close(&f);
}

static void
redis_restart_under_a_running_worker(void **state)
{
    struct fixture f;
    struct test_redis own;
    const char *aof[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    char body[1024], runlog[320];

    assert_int_equal(test_redis_start(&own, aof), 0);
    memset(&f, 0, sizeof f);
    f.redis = &own;
    snprintf(f.queue, sizeof f.queue, "restart");
    ASSERT_OK(&f, dq_client_open(own.url, NULL, &f.c, &f.err));
    snprintf(runlog, sizeof runlog, "%s/restart.runs", tmpdir);
    snprintf(body, sizeof body, "echo \"$DELAYQ_TASK_ID\" >> %s\n", runlog);
    const char *h = script("restart.sh", body);
    for (int i = 0; i < 20; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    pid_t pid = start_work(&f, "restart", NULL, h);
    struct counts c = {.f = &f, .done = 20};
    assert_true(wait_until(counts_reached, &c, 15000, "first batch done"));
    test_redis_kill(&own);
    assert_int_equal(test_redis_start_again(&own), 0);
    dq_client_free(f.c);
    ASSERT_OK(&f, dq_client_open(own.url, NULL, &f.c, &f.err));
    for (int i = 0; i < 20; i++)
        enqueue_str(&f, "y", i * 20, NULL, NULL);
    c.done = 40;
    assert_true(wait_until(counts_reached, &c, 20000, "tasks after the restart done"));
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    char log[320];
    snprintf(log, sizeof log, "%s/restart.log", tmpdir);
    char *text = slurp(log);
    /* one line when Redis went away and one when it came back, not one per try */
    int down = 0;
    for (char *p = text; (p = strstr(p, "event=redis.down")) != NULL; p++)
        down++;
    free(text);
    assert_true(down <= 1);
    fixture_close(&f);
    test_redis_stop(&own);
}

static long long
cpu_ticks(pid_t pid)
{
    char path[64], buf[1024];
    FILE *f;
    unsigned long ut = 0, st = 0;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    if (fgets(buf, sizeof buf, f) == NULL)
        buf[0] = '\0';
    fclose(f);
    char *p = strrchr(buf, ')');
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (long long)(ut + st);
}

static void
idle_worker_costs_little_and_wakes_fast(void **state)
{
    struct fixture f;
    char body[1024], runlog[320];

    fixture_open(&f, state, "idle");
    snprintf(runlog, sizeof runlog, "%s/idle.runs", tmpdir);
    snprintf(body, sizeof body, "echo \"$DELAYQ_TASK_ID $(date +%%s%%3N)\" >> %s\n", runlog);
    const char *h = script("idle.sh", body);
    pid_t pid = start_work(&f, "idle", NULL, h);
    /* settled: it has made its first claim and subscribed */
    int64_t settle = test_mono_ms() + 500;
    while (test_mono_ms() < settle)
        test_nap_ms(20);
    long long t0 = cpu_ticks(pid);
    int64_t m0 = test_mono_ms();
    while (test_mono_ms() < m0 + 3000)
        test_nap_ms(50);
    long long t1 = cpu_ticks(pid);
    double cpu = (double)(t1 - t0) / (double)sysconf(_SC_CLK_TCK) /
                 ((double)(test_mono_ms() - m0) / 1000.0) * 100.0;
    dq_enqueued e;
    dq_stats s;
    enqueue_str(&f, "now", 0, NULL, &e);
    struct counts c = {.f = &f, .done = 1};
    assert_true(wait_until(counts_reached, &c, 5000, "task due now done"));
    /* run now (the inspector's key): a task an hour ahead, made due, wakes the idle
     * worker (the default --max-idle is 60 s) */
    dq_enqueued later;
    dq_task t;
    enqueue_str(&f, "later", 3600000, NULL, &later);
    int64_t settle2 = test_mono_ms() + 300;
    while (test_mono_ms() < settle2)
        test_nap_ms(20);
    ASSERT_OK(&f, dq_find(f.c, f.queue, later.id, &t, &f.err));
    int64_t run_now_mono = test_mono_ms();
    ASSERT_OK(&f, dq_run_now(f.c, f.queue, &t, &f.err));
    dq_task_clear(&t);
    c.done = 2;
    assert_true(wait_until(counts_reached, &c, 5000, "the task run now done"));
    int64_t run_now_ms = test_mono_ms() - run_now_mono;
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    char *runs = slurp(runlog);
    long long started = 0;
    assert_int_equal(sscanf(runs, "%*s %lld", &started), 1);
    free(runs);
    printf("# run now: the idle worker finished the task %lld ms after the call\n",
           (long long)run_now_ms);
    assert_true(run_now_ms < 1000);
    printf("# idle delayq work: %.3f%% CPU over 3 s; a task due now started %lld ms after "
           "its due time (process spawn included)\n",
           cpu, started - e.due_ms);
    assert_true(cpu < 5.0);
    assert_true(started - e.due_ms < 1000);
    fixture_close(&f);
}

/* A command that exits is reaped at once: its stderr closes a moment before waitpid can
 * see the exit, and the worker must not then wait out a 100 ms poll per command. */
static void
short_commands_finish_without_poll_delay(void **state)
{
    enum { N = 60 };
    struct fixture f;

    fixture_open(&f, state, "short");
    for (int i = 0; i < N; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    int64_t t0 = test_mono_ms();
    pid_t pid = start_work(&f, "short", NULL, "true");
    struct counts c = {.f = &f, .done = N};
    assert_true(wait_until(counts_reached, &c, 20000, "60 short commands done"));
    int64_t took = test_mono_ms() - t0;
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    printf("# %d runs of true, one at a time: %lld ms\n", N, (long long)took);
    /* measured here: 2 to 6 ms per command; 60 ms per command (3.5 s) before the fix */
    assert_true(took < 1800);

    /* Many at once: forks from 8 handler threads while the others allocate. A child that
     * allocated before exec (setenv) could deadlock on the allocator's lock; under ASan it
     * did, leaving tasks in flight for good. */
    for (int i = 0; i < 300; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    const char *args[] = {"--concurrency", "8", NULL};
    pid = start_work(&f, "short8", args, "true");
    c.done = N + 300;
    assert_true(wait_until(counts_reached, &c, 60000, "300 more, 8 at a time"));
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    fixture_close(&f);
}

/* A script with no #! line runs under /bin/sh, as execvp would run it (the worker
 * execs a resolved path with execve, which would refuse it). */
static void
script_without_shebang_runs_under_sh(void **state)
{
    struct fixture f;
    char path[320], runlog[320];

    fixture_open(&f, state, "nosb");
    snprintf(runlog, sizeof runlog, "%s/nosb.runs", tmpdir);
    snprintf(path, sizeof path, "%s/nosb.sh", tmpdir);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fprintf(file, "cat >/dev/null\necho \"ran $DELAYQ_TASK_ID $0\" >> %s\n", runlog);
    fclose(file);
    chmod(path, 0755);
    enqueue_str(&f, "x", 0, "plain", NULL);
    pid_t pid = start_work(&f, "nosb", NULL, path);
    struct counts c = {.f = &f, .done = 1};
    assert_true(wait_until(counts_reached, &c, 15000, "the task done"));
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    char *runs = slurp(runlog);
    char want[400];
    snprintf(want, sizeof want, "ran plain %s\n", path);
    assert_string_equal(runs, want);
    free(runs);
    fixture_close(&f);
}

/* After each test: kill whatever worker it left running (only after a failure). */
static int
reap_workers(void **state)
{
    (void)state;
    test_work_reap_all();
    return 0;
}

/* CPU seconds a process used between two samples, as a percentage of wall time. */
static double
cpu_percent(pid_t pid, int ms)
{
    long long t0 = cpu_ticks(pid);
    int64_t m0 = test_mono_ms();
    while (test_mono_ms() < m0 + ms)
        test_nap_ms(20);
    long long t1 = cpu_ticks(pid);
    return (double)(t1 - t0) / (double)sysconf(_SC_CLK_TCK) /
           ((double)(test_mono_ms() - m0) / 1000.0) * 100.0;
}

static void
busy_slots_and_outages_do_not_spin(void **state)
{
    struct fixture f;
    struct test_redis own;
    char body[256];

    assert_int_equal(test_redis_start(&own, NULL), 0);
    memset(&f, 0, sizeof f);
    f.redis = &own;
    snprintf(f.queue, sizeof f.queue, "nospin");
    ASSERT_OK(&f, dq_client_open(own.url, NULL, &f.c, &f.err));
    snprintf(body, sizeof body, "cat >/dev/null; sleep 2");
    const char *h = script("nospin.sh", body);
    enqueue_str(&f, "x", 0, NULL, NULL);
    /* every slot busy for longer than max idle */
    const char *args[] = {"--max-idle", "200ms", "--grace", "1s", NULL};
    pid_t pid = start_work(&f, "nospin", args, h);
    int64_t deadline = test_mono_ms() + 5000;
    dq_stats s;
    do {
        ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
        assert_true(test_mono_ms() < deadline);
    } while (s.inflight == 0);
    double busy_cpu = cpu_percent(pid, 1000);
    /* Redis gone under a worker with a running command and a task due soon */
    enqueue_str(&f, "y", 300, NULL, NULL);
    test_redis_kill(&own);
    double down_cpu = cpu_percent(pid, 1500);
    /* and a shutdown while it is down: grace, then give up on the hand-back, exit */
    int64_t t0 = test_mono_ms();
    int code = test_work_stop(pid, SIGTERM);
    int64_t took = test_mono_ms() - t0;
    printf("# worker CPU: %.1f%% with its slot busy past max idle, %.1f%% with Redis down; "
           "stopped %lld ms after SIGTERM with Redis down\n",
           busy_cpu, down_cpu, (long long)took);
    assert_true(busy_cpu < 10.0);
    assert_true(down_cpu < 10.0);
    assert_int_equal(code, 0);
    /* grace 1 s + 5 s to give up the hand-back, + a Redis call that may be waiting out
     * its 3 s timeout when the signal comes, + slack for a loaded CI machine */
    assert_true(took < 15000);
    fixture_close(&f);
    test_redis_stop(&own);
}

/* Script calls (FCALL and EVALSHA, either path) in an INFO commandstats text. */
static long long
script_calls(const char *info)
{
    static const char *const keys[] = {"cmdstat_evalsha:calls=", "cmdstat_fcall:calls="};
    long long n = 0;

    for (size_t i = 0; i < 2; i++) {
        const char *p = strstr(info, keys[i]);
        if (p != NULL)
            n += atoll(p + strlen(keys[i]));
    }
    return n;
}

static void
redis_refusing_writes_is_backed_off_not_hammered(void **state)
{
    struct fixture f;
    struct test_redis own;
    char body[128], log[320];

    assert_int_equal(test_redis_start(&own, NULL), 0);
    memset(&f, 0, sizeof f);
    f.redis = &own;
    snprintf(f.queue, sizeof f.queue, "oom");
    ASSERT_OK(&f, dq_client_open(own.url, NULL, &f.c, &f.err));
    snprintf(body, sizeof body, "cat >/dev/null");
    const char *h = script("oom.sh", body);
    enqueue_str(&f, "x", 200, NULL, NULL);
    pid_t pid = start_work(&f, "oom", NULL, h);
    const char *oom[] = {"CONFIG", "SET", "maxmemory", "1"};
    redisReply *r = test_redis_cmd(&own, 4, oom);
    freeReplyObject(r);
    const char *stats[] = {"INFO", "commandstats"};
    r = test_redis_cmd(&own, 2, stats);
    long long before = 0, after = 0;
    before = script_calls(r->str);
    freeReplyObject(r);
    int64_t m0 = test_mono_ms();
    while (test_mono_ms() < m0 + 2000)
        test_nap_ms(50);
    r = test_redis_cmd(&own, 2, stats);
    after = script_calls(r->str);
    freeReplyObject(r);
    /* Redis accepts writes again: the task runs */
    const char *ok[] = {"CONFIG", "SET", "maxmemory", "0"};
    r = test_redis_cmd(&own, 4, ok);
    freeReplyObject(r);
    struct counts c = {.f = &f, .done = 1};
    assert_true(wait_until(counts_reached, &c, 15000, "task done once Redis accepts writes"));
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    snprintf(log, sizeof log, "%s/oom.log", tmpdir);
    char *text = slurp(log);
    int errors = 0;
    for (char *p = text; (p = strstr(p, "event=redis.error")) != NULL; p++)
        errors++;
    free(text);
    printf("# Redis refusing writes for 2 s: %lld script calls from the worker, %d error "
           "lines logged\n",
           after - before, errors);
    assert_true(after - before < 40); /* backoff: 100 ms doubling to 5 s, not thousands */
    assert_true(errors <= 1);
    fixture_close(&f);
    test_redis_stop(&own);
}

static int
setup(void **state)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dq-work-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return fixture_group_setup(state);
}

static int
teardown(void **state)
{
    char cmd[300];
    fixture_group_teardown(state);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The process has exited: gone, or a zombie waiting for whoever reaps orphans (that
 * reaping is the system's pace, not the worker's). */
static bool
pid_gone(void *arg)
{
    char path[64], st[256];
    pid_t pid = *(pid_t *)arg;

    if (kill(pid, 0) != 0)
        return true;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return true;
    size_t n = fread(st, 1, sizeof st - 1, fp);
    fclose(fp);
    st[n] = '\0';
    const char *close_paren = strrchr(st, ')');
    return close_paren != NULL && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

/* A task's own time limit (--time-limit at enqueue; the envelope's tl extension) stops
 * a command that overruns it, its whole process group, even with no --timeout: the task
 * is retried at once with the reason, and keeps its limit for the next run. */
static void
task_time_limit_stops_the_command_and_retries(void **state)
{
    struct fixture f;
    char body[512], pidfile[320];
    dq_task t = {0};

    fixture_open(&f, state, "tlimit");
    snprintf(pidfile, sizeof pidfile, "%s/tlimit.pid", tmpdir);
    /* a shell wrapper whose child does the sleeping: the child must die too */
    snprintf(body, sizeof body, "sleep 60 & echo $! > %s; wait", pidfile);
    const char *h = script("tlimit.sh", body);
    dq_enqueue_opts o = {.id = "slow", .time_limit_ms = 1000, .max_attempts = 5};
    dq_enqueued e;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xa1x", 2, &e, &f.err));
    ASSERT_OK(&f, dq_find(f.c, f.queue, "slow", &t, &f.err));
    assert_int_equal(t.time_limit_ms, 1000);
    assert_int_equal(t.raw[0], 0x9a); /* a v2 envelope: it has an extension */
    dq_task_clear(&t);
    /* retries far apart, so the retried task waits in scheduled to be looked at */
    dq_config cfg = {.backoff_base_ms = 60000};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    int64_t t0 = test_mono_ms();
    pid_t pid = start_work(&f, "tlimit", NULL, h);
    struct counts c = {.f = &f, .retried = 1};
    if (!wait_until(counts_reached, &c, 5000, "the overrunning command stopped and retried"))
        fail_msg("retried %lld inflight %lld", (long long)c.s.retried, (long long)c.s.inflight);
    int64_t took = test_mono_ms() - t0;
    printf("# time limit 1 s: retried %lld ms after the worker started\n", (long long)took);
    assert_true(took < 3000); /* the limit, not the 30 s lease, ended it */
    ASSERT_OK(&f, dq_find(f.c, f.queue, "slow", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_int_equal(t.attempt, 1);
    if (t.last_error == NULL || strstr(t.last_error, "timed out after 1000 ms") == NULL)
        fail_msg("last error: %s", t.last_error ? t.last_error : "(none)");
    assert_int_equal(t.time_limit_ms, 1000); /* the retry kept the extension */
    dq_task_clear(&t);
    /* no process of the handler is left: the backgrounded sleep is gone too */
    char *spid = slurp(pidfile);
    pid_t child = (pid_t)atoi(spid);
    free(spid);
    assert_true(child > 1);
    assert_true(wait_until(pid_gone, &child, 3000, "the command's child killed"));
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    fixture_close(&f);
}

struct running_probe {
    struct fixture *f;
    const char *id;
};

static bool
task_running(void *arg)
{
    struct running_probe *p = arg;
    dq_task t = {0};
    bool yes = dq_find(p->f->c, p->f->queue, p->id, &t, &p->f->err) == DQ_OK &&
               t.state == DQ_STATE_INFLIGHT;
    dq_task_clear(&t);
    return yes;
}

/* dq_cancel (delayq cancel) stops a running command within about a second — the worker
 * hears it on the wake-up channel, no polling — kills its whole process group, and the
 * task is in failed saying who cancelled it (or gone, with drop). A scheduled or
 * unknown task is not "running": the error says where it is. */
static void
cancel_stops_the_running_command(void **state)
{
    struct fixture f;
    char body[512], pidfile[320];
    dq_task t = {0};
    dq_cancelled cc;

    fixture_open(&f, state, "cancel");
    snprintf(pidfile, sizeof pidfile, "%s/cancel.pid", tmpdir);
    snprintf(body, sizeof body, "sleep 60 & echo $! > %s.$DELAYQ_TASK_ID; wait", pidfile);
    const char *h = script("cancel.sh", body);
    dq_enqueue_opts o = {.id = "charge-1"};
    dq_enqueued e;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xa1x", 2, &e, &f.err));
    o.id = "charge-2";
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xa1x", 2, &e, &f.err));
    o.id = "later";
    o.delay_ms = 3600000;
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xa1x", 2, &e, &f.err));
    const char *args[] = {"--concurrency", "2", NULL};
    pid_t pid = start_work(&f, "cancel", args, h);
    struct running_probe p1 = {&f, "charge-1"}, p2 = {&f, "charge-2"};
    assert_true(wait_until(task_running, &p1, 5000, "charge-1 running"));
    assert_true(wait_until(task_running, &p2, 5000, "charge-2 running"));

    for (int k = 1; k <= 2; k++) {
        char path[360];
        snprintf(path, sizeof path, "%s.charge-%d", pidfile, k);
        char *spid = NULL;
        int64_t until = test_mono_ms() + 5000;
        while (test_mono_ms() < until) { /* the wrapper writes it as it starts */
            free(spid);
            spid = slurp(path);
            if (atoi(spid) > 1)
                break;
            test_nap_ms(10);
        }
        pid_t child = (pid_t)atoi(spid);
        free(spid);
        assert_true(child > 1);
        int64_t t0 = test_mono_ms();
        ASSERT_OK(&f,
                  dq_cancel(f.c, f.queue, k == 1 ? "charge-1" : "charge-2", k == 2, &cc, &f.err));
        assert_string_equal(cc.worker, "cancel");
        assert_int_equal(cc.attempt, 1);
        assert_true(wait_until(pid_gone, &child, 3000, "the cancelled command's child killed"));
        printf("# cancel %d: the command's process group gone %lld ms after the call\n", k,
               (long long)(test_mono_ms() - t0));
    }
    ASSERT_OK(&f, dq_find(f.c, f.queue, "charge-1", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_string_equal(t.reason, "cancelled");
    assert_non_null(strstr(t.error, "cancelled by "));
    dq_task_clear(&t);
    assert_int_equal(dq_find(f.c, f.queue, "charge-2", &t, &f.err), DQ_ENOTFOUND);
    dq_task_clear(&t);
    /* not running: said so, with where it is */
    assert_int_equal(dq_cancel(f.c, f.queue, "later", false, NULL, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, "scheduled"));
    assert_int_equal(dq_cancel(f.c, f.queue, "charge-1", false, NULL, &f.err), DQ_ENOTFOUND);
    assert_non_null(strstr(f.err.msg, "failed"));
    assert_int_equal(dq_cancel(f.c, f.queue, "nope", false, NULL, &f.err), DQ_ENOTFOUND);
    /* the worker refused nothing it should not have: its results for the two were
     * refused, nothing else moved, and it is still running */
    dq_stats s;
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.inflight, 0);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.future, 1);
    assert_int_equal(s.dropped, 1);
    assert_int_equal(kill(pid, 0), 0);
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    char log[320];
    snprintf(log, sizeof log, "%s/cancel.log", tmpdir);
    char *lg = slurp(log);
    assert_non_null(strstr(lg, "task.cancelled"));
    free(lg);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(exit_paths, reap_workers),
        cmocka_unit_test_teardown(task_time_limit_stops_the_command_and_retries, reap_workers),
        cmocka_unit_test_teardown(cancel_stops_the_running_command, reap_workers),
        cmocka_unit_test_teardown(several_workers_each_task_once_never_early, reap_workers),
        cmocka_unit_test_teardown(kill9_mid_task_runs_it_again_after_the_lease, reap_workers),
        cmocka_unit_test_teardown(sigterm_finishes_running_and_hands_back_the_rest, reap_workers),
        cmocka_unit_test_teardown(redis_restart_under_a_running_worker, reap_workers),
        cmocka_unit_test_teardown(idle_worker_costs_little_and_wakes_fast, reap_workers),
        cmocka_unit_test_teardown(short_commands_finish_without_poll_delay, reap_workers),
        cmocka_unit_test_teardown(busy_slots_and_outages_do_not_spin, reap_workers),
        cmocka_unit_test_teardown(redis_refusing_writes_is_backed_off_not_hammered, reap_workers),
        cmocka_unit_test_teardown(script_without_shebang_runs_under_sh, reap_workers),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/work", tests, setup, teardown);
}
