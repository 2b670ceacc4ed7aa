/* SPDX-License-Identifier: MIT */
/*
 * test_storm.c: a kill storm. Four chaos_worker processes run tasks spread over a
 * window; every second one of them, chosen at random, is killed with SIGKILL and
 * started again; halfway through, Redis (appendonly, appendfsync always) is stopped and
 * started again. When the queue has drained, the run records must show at-least-once
 * delivery with no early run and no run that the lease or the ack should have
 * prevented, and Redis must hold exactly the failures the handler was told to make.
 *
 * Short mode (CI): 4 000 tasks over 8 s. DQ_CHAOS_LONG=1: 20 000 tasks over 20 s.
 * DQ_CHAOS_SEED=N repeats a run's choice of victims.
 */
#include "harness/check.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chaos.h"
#include "delayq.h"
#include "harness/redis.h"
#include "harness/wait.h"

#define WORKERS     4
#define CONCURRENCY 8
#define LEASE_MS    3000
#define BACKOFF_MS  1000 /* the queue's default backoff base: a retry waits this long */
#define MAX_KILLS   64

enum kind { OK, FAIL, RETRY };

struct kill {
    pid_t pid;
    int64_t wall;
};

static struct test_redis redis;

struct storm {
    dq_client *c;
    char queue[64];
    int n;
    int64_t *due;
    int64_t *ready; /* max(due, when its enqueue returned): lateness counts from here */
    enum kind *kind;
};

static bool
drained(void *arg)
{
    struct storm *s = arg;
    dq_stats st;
    dq_err err;

    return dq_stats_get(s->c, s->queue, &st, &err) == DQ_OK && st.enqueued == s->n && st.due == 0 &&
           st.future == 0 && st.inflight == 0;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static pid_t
start_worker(const char *dir, const char *queue)
{
    char lease[16], conc[16], out[300];

    snprintf(lease, sizeof lease, "%d", LEASE_MS);
    snprintf(conc, sizeof conc, "%d", CONCURRENCY);
    snprintf(out, sizeof out, "%s/worker.out", dir);
    const char *argv[] = {chaos_worker_bin(), redis.url, queue, dir, lease, conc, "3000", NULL};
    pid_t pid = chaos_spawn(argv, out);
    assert_true(pid > 0);
    return pid;
}

/* Was @pid killed between @from and @to (server ms)? */
static bool
killed_between(const struct kill *kills, int nk, pid_t pid, int64_t from, int64_t to)
{
    for (int i = 0; i < nk; i++) {
        if (kills[i].pid == pid && kills[i].wall >= from && kills[i].wall <= to)
            return true;
    }
    return false;
}

/* The failed set holds exactly the tasks told to fail, with the handler's error. */
static void
check_failed_set(struct storm *s, int n_fail)
{
    char *seen = calloc((size_t)s->n, 1);
    int found = 0;
    dq_err err;

    assert_non_null(seen);
    for (size_t off = 0; off < (size_t)n_fail + 1; off += 1000) {
        dq_page p;
        assert_int_equal(dq_page_get(s->c, s->queue, DQ_VIEW_FAILED, off, 1000, &p, &err), DQ_OK);
        for (size_t j = 0; j < p.n; j++) {
            const dq_task *t = &p.tasks[j];
            int i = atoi(t->id + 1);
            if (t->id[0] != 't' || i < 0 || i >= s->n || s->kind[i] != FAIL || seen[i])
                fail_msg("failed set holds %s, which was not told to fail", t->id);
            if (strcmp(t->reason, "error") != 0 || strstr(t->error, "told to fail") == NULL)
                fail_msg("failed task %s: reason %s, error %s", t->id, t->reason, t->error);
            seen[i] = 1;
            found++;
        }
        dq_page_free(&p);
    }
    free(seen);
    assert_int_equal(found, n_fail);
}

/*
 * Producers: threads that enqueue the tasks during the storm, each a lead ahead of its
 * due time, as a service would. One client cannot enqueue 1000 tasks a second through
 * appendfsync always on a busy 2-core machine, so there are several. They pause while
 * Redis restarts: an enqueue whose reply is lost may or may not have happened, and
 * enqueueing again under the same id is only safe while the task still exists; this
 * test is about workers. A call that fails after the restart never reached the new
 * server, so it is simply made again.
 */
#define PRODUCERS 4
#define LEAD_MS   2000

static struct producers {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool paused, stop;
    int busy; /* enqueues in progress */
    pthread_t th[PRODUCERS];
    int started;
    struct storm *s;
    dq_client *c[PRODUCERS];
    int retried;   /* calls made again after a failure */
    char err[300]; /* the first final error */
} prod = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static const char *
payload_of(int i, const struct storm *s, char *buf, size_t size)
{
    static const char *const names[] = {"ok", "fail", "retry"};
    snprintf(buf, size, "%s %d", names[s->kind[i]], 2 + (i * 7) % 19); /* handler ms */
    return buf;
}

static void *
produce(void *arg)
{
    int p = (int)(intptr_t)arg;
    struct storm *s = prod.s;

    for (int i = p; i < s->n; i += PRODUCERS) {
        char id[32], payload[32];
        dq_enqueue_opts o = {.at_ms = s->due[i], .id = id};
        dq_enqueued e;
        dq_err err;
        int rc;

        int64_t ahead = s->due[i] - LEAD_MS - chaos_wall_ms();
        if (ahead > 0)
            test_nap_ms((int)ahead); /* the producer's pace */
        snprintf(id, sizeof id, "t%d", i);
        payload_of(i, s, payload, sizeof payload);
        for (;;) {
            pthread_mutex_lock(&prod.mu);
            while (prod.paused && !prod.stop)
                pthread_cond_wait(&prod.cv, &prod.mu);
            if (prod.stop) {
                pthread_mutex_unlock(&prod.mu);
                return NULL;
            }
            prod.busy++;
            pthread_mutex_unlock(&prod.mu);
            rc = dq_enqueue(prod.c[p], s->queue, &o, payload, strlen(payload), &e, &err);
            pthread_mutex_lock(&prod.mu);
            prod.busy--;
            pthread_cond_broadcast(&prod.cv);
            if (rc == DQ_ECONN || rc == DQ_ETIMEOUT)
                prod.retried++;
            else if (rc != DQ_OK && prod.err[0] == '\0')
                snprintf(prod.err, sizeof prod.err, "enqueue %s: %s", id, err.msg);
            pthread_mutex_unlock(&prod.mu);
            if (rc != DQ_ECONN && rc != DQ_ETIMEOUT)
                break;
            test_nap_ms(20); /* the client's own backoff decides when it really tries */
        }
        if (rc != DQ_OK)
            return NULL;
        int64_t now = chaos_wall_ms();
        s->ready[i] = now > s->due[i] ? now : s->due[i];
    }
    return NULL;
}

static void
producers_pause(bool pause)
{
    pthread_mutex_lock(&prod.mu);
    prod.paused = pause;
    pthread_cond_broadcast(&prod.cv);
    while (pause && prod.busy > 0)
        pthread_cond_wait(&prod.cv, &prod.mu);
    pthread_mutex_unlock(&prod.mu);
}

/* Joins the producers; with @stop, tells them to give up first (a failed test). */
static void
producers_join(bool stop)
{
    pthread_mutex_lock(&prod.mu);
    prod.stop = stop;
    pthread_cond_broadcast(&prod.cv);
    pthread_mutex_unlock(&prod.mu);
    for (int p = 0; p < prod.started; p++)
        pthread_join(prod.th[p], NULL);
    prod.started = 0;
    for (int p = 0; p < PRODUCERS; p++) {
        dq_client_free(prod.c[p]);
        prod.c[p] = NULL;
    }
}

static void
kill_storm_and_redis_restart(void **state)
{
    const bool lng = chaos_long();
    const int n = lng ? 20000 : 4000;
    const int spread_ms = lng ? 20000 : 8000;
    const char *seed_env = getenv("DQ_CHAOS_SEED");
    unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 10)
                             : (unsigned)chaos_wall_ms() ^ ((unsigned)getpid() << 16);
    const char *extra[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    struct storm s = {.n = n};
    struct kill kills[MAX_KILLS];
    int nk = 0;
    pid_t workers[WORKERS];
    dq_err err = {0};
    dq_stats st;
    const char *dir = chaos_dir("storm");
    int64_t down_wall = 0, up_wall = 0;

    printf("# seed %u (DQ_CHAOS_SEED), %d tasks over %d ms, %s mode\n", seed, n, spread_ms,
           lng ? "long" : "short");
    srand(seed);
    assert_non_null(dir);
    assert_int_equal(test_redis_start(&redis, extra), 0);
    test_queue_name(s.queue, sizeof s.queue, "storm");
    if (dq_client_open(redis.url, NULL, &s.c, &err) != DQ_OK)
        fail_msg("dq_client_open: %s", err.msg);
    s.due = calloc((size_t)n, sizeof *s.due);
    s.kind = calloc((size_t)n, sizeof *s.kind);
    s.ready = calloc((size_t)n, sizeof *s.ready);
    assert_non_null(s.due);
    assert_non_null(s.kind);
    assert_non_null(s.ready);

    for (int i = 0; i < WORKERS; i++)
        workers[i] = start_worker(dir, s.queue);

    /* Due times on the server clock, spread over the window; producers enqueue each a
     * lead ahead of it while the storm runs. */
    assert_int_equal(dq_stats_get(s.c, s.queue, &st, &err), DQ_OK);
    const int64_t base = st.now_ms + LEAD_MS + 500;
    int n_fail = 0;
    for (int i = 0; i < n; i++) {
        s.kind[i] = i % 40 == 3 ? FAIL : i % 40 == 7 ? RETRY : OK;
        n_fail += s.kind[i] == FAIL;
        s.due[i] = base + (int64_t)i * spread_ms / n;
    }
    prod.s = &s;
    for (int p = 0; p < PRODUCERS; p++) {
        if (dq_client_open(redis.url, NULL, &prod.c[p], &err) != DQ_OK)
            fail_msg("dq_client_open: %s", err.msg);
    }
    for (; prod.started < PRODUCERS; prod.started++)
        assert_int_equal(
            pthread_create(&prod.th[prod.started], NULL, produce, (void *)(intptr_t)prod.started),
            0);

    /* The storm: a kill a second while tasks fall due, Redis restarted at the midpoint. */
    const int64_t m0 = test_mono_ms() + (base - chaos_wall_ms());
    const int ticks = spread_ms / 1000;
    for (int k = 1; k <= ticks; k++) {
        int64_t wait = m0 + (int64_t)k * 1000 - test_mono_ms();
        if (wait > 0)
            test_nap_ms((int)wait); /* the storm's schedule, not a wait for a condition */
        for (int i = 0; i < WORKERS; i++) {
            int status;
            if (!chaos_running(workers[i], &status))
                fail_msg("worker %ld exited by itself (status 0x%x) before it was killed; see "
                         "%s/worker.out",
                         (long)workers[i], status, dir);
        }
        if (k == ticks / 2) {
            producers_pause(true);
            down_wall = chaos_wall_ms();
            assert_int_equal(test_redis_restart(&redis), 0);
            up_wall = chaos_wall_ms();
            producers_pause(false);
        }
        int v = rand() % WORKERS;
        kills[nk].pid = workers[v];
        kills[nk].wall = chaos_wall_ms();
        nk++;
        chaos_kill9(workers[v]);
        workers[v] = start_worker(dir, s.queue);
    }
    const int64_t storm_end = chaos_wall_ms();
    producers_join(false);
    if (prod.err[0] != '\0')
        fail_msg("%s", prod.err);
    int enqueued_late = 0;
    for (int i = 0; i < n; i++) {
        if (s.ready[i] == 0)
            fail_msg("t%d was never enqueued", i);
        enqueued_late += s.ready[i] > s.due[i];
    }

    /* Drained: every lease a kill left behind expires and its task runs again. */
    assert_true(wait_until(drained, &s, LEASE_MS * 4 + 60000, "the queue to drain"));
    const int64_t drained_wall = chaos_wall_ms();
    for (int i = 0; i < WORKERS; i++) {
        int status = chaos_stop(workers[i], 10000);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("worker %ld did not stop cleanly on SIGTERM (status 0x%x); see "
                     "%s/worker.out",
                     (long)workers[i], status, dir);
    }

    /* Redis: nothing left scheduled or in flight; each task acked or failed once. */
    assert_int_equal(dq_stats_get(s.c, s.queue, &st, &err), DQ_OK);
    assert_int_equal(st.inflight, 0);
    assert_int_equal(st.due + st.future, 0);
    assert_int_equal(st.failed, n_fail);
    assert_int_equal(st.failed_total, n_fail);
    assert_int_equal(st.done, n - n_fail); /* an ack is fenced: one per task, at most */

    check_failed_set(&s, n_fail);

    /* The run records. */
    struct chaos_runs runs;
    chaos_runs_read(dir, &runs);
    char *ran = calloc((size_t)n, 1);
    int64_t *late = calloc((size_t)n, sizeof *late);
    size_t nlate = 0, dup_kill = 0, dup_restart = 0, dup_retry = 0, ahead = 0;
    assert_non_null(ran);
    assert_non_null(late);
    for (size_t r = 0; r < runs.n; r++) {
        const struct chaos_run *a = &runs.v[r];
        int i = atoi(a->id + 1);

        if (a->id[0] != 't' || i < 0 || i >= n)
            fail_msg("a run of unknown task %s", a->id);
        /* The handler's start against the due time. Redis runs on this host, so the
         * worker's wall clock is the server's TIME; the claim's TIME may come before the
         * due time (claim-ahead, PROTOCOL.md 10.2), the start must not. */
        if (a->wall < s.due[i])
            fail_msg("%s attempt %u started at %lld, %lld ms before it was due", a->id, a->attempt,
                     (long long)a->wall, (long long)(s.due[i] - a->wall));
        ahead += a->claimed < s.due[i];
        if (!ran[i] && s.kind[i] == OK)
            late[nlate++] = a->wall - s.ready[i];
        ran[i] = 1;
        if (r + 1 == runs.n || strcmp(runs.v[r + 1].id, a->id) != 0)
            continue;

        /* @a ran again as @b. Why is allowed to differ; that it was safe is not. */
        const struct chaos_run *b = &runs.v[r + 1];
        if (b->attempt == a->attempt)
            fail_msg("%s attempt %u ran twice (pids %ld, %ld): two claims under one lease", a->id,
                     a->attempt, (long)a->pid, (long)b->pid);
        if (a->done >= 0)
            fail_msg("%s ran again (attempt %u) after the ack of attempt %u was written", a->id,
                     b->attempt, a->attempt);
        if (s.kind[i] == RETRY && a->attempt == 1) {
            /* told to retry: runs again after the backoff (or after the lease, if its
             * worker died before it could write the retry). Its start, not its claim: a
             * claim may come up to the claim-ahead window before the due time. */
            if (b->wall < a->claimed + BACKOFF_MS)
                fail_msg("%s retried %lld ms after its claim, before the %d ms backoff", a->id,
                         (long long)(b->wall - a->claimed), BACKOFF_MS);
            dup_retry++;
            continue;
        }
        /* No one else may run a task while its lease holds: the reap that returns it
         * needs the lease deadline (claim + lease, or later if renewed) to have passed. */
        if (b->claimed < a->claimed + LEASE_MS)
            fail_msg("%s attempt %u claimed %lld ms after attempt %u, inside its %d ms lease",
                     a->id, b->attempt, (long long)(b->claimed - a->claimed), a->attempt, LEASE_MS);
        /*
         * What is honestly guaranteed about the cause: a task runs again only when the
         * lease of its previous run ran out without a result. Here that happens when
         * that run's worker was killed while it held the lease (between the claim and
         * the next claim), or when the run overlapped the Redis restart: a worker whose
         * result or renewal could not be written while Redis was down can lose the lease
         * if reconnecting took longer than the lease had left. Anything else is a bug.
         */
        if (killed_between(kills, nk, a->pid, a->claimed, b->claimed))
            dup_kill++;
        else if (a->claimed <= up_wall && b->claimed >= down_wall)
            dup_restart++;
        else
            fail_msg("%s attempt %u (pid %ld, claimed %lld) ran again as attempt %u (pid %ld, "
                     "claimed %lld), but its worker was not killed and it did not overlap the "
                     "Redis restart (%lld..%lld)",
                     a->id, a->attempt, (long)a->pid, (long long)a->claimed, b->attempt,
                     (long)b->pid, (long long)b->claimed, (long long)down_wall, (long long)up_wall);
    }
    int lost = 0;
    for (int i = 0; i < n; i++)
        lost += !ran[i];
    /* chaos_worker leaves claim_ahead_ms at its default (5 ms): some runs must have been
     * claimed before their due time, or "0 early" would say nothing about claim-ahead */
    printf("# claim-ahead on (5 ms): %zu of %zu runs claimed before due; 0 early starts "
           "(checked per run above), %d lost\n",
           ahead, runs.n, lost);
    for (int i = 0; i < n; i++) {
        if (!ran[i])
            fail_msg("task t%d never ran", i);
    }
    assert_true(ahead > 0);
    qsort(late, nlate, sizeof *late, cmp_i64);
    printf("# %d tasks, %zu runs, %d kills, Redis down %lld ms\n", n, runs.n, nk,
           (long long)(up_wall - down_wall));
    printf("# ran again: %zu after a kill, %zu across the restart, %zu told to retry\n", dup_kill,
           dup_restart, dup_retry);
    printf("# counters: reaped %lld, retried %lld, done %lld, failed %lld\n", (long long)st.reaped,
           (long long)st.retried, (long long)st.done, (long long)st.failed_total);
    if (nlate > 0)
        printf("# first-run lateness (handler start - due or enqueued, ms): p50 %lld, p99 %lld, "
               "max %lld\n",
               (long long)late[nlate / 2], (long long)late[nlate * 99 / 100],
               (long long)late[nlate - 1]);
    printf("# drained %lld ms after the last kill; %d enqueues made again after the restart, "
           "%d enqueued after their due time\n",
           (long long)(drained_wall - storm_end), prod.retried, enqueued_late);
    free(ran);
    free(late);
    chaos_runs_free(&runs);
    dq_client_free(s.c);
    free(s.due);
    free(s.kind);
    free(s.ready);
}

/* The handler `delayq work` runs: one record per run, like chaos_worker's, with the due
 * time the claim saw where chaos_worker has the claim time (which is not in the
 * environment), and the worker's pid ($PPID: delayq work forks the command directly). */
static const char work_handler[] =
    "now=$(date +%s%3N)\n"
    "printf 'run %s %s %s %s %s\\n' \"$DELAYQ_TASK_ID\" \"$DELAYQ_ATTEMPT\" \"$DELAYQ_DUE_MS\" "
    "\"$now\" "
    "\"$PPID\" >>\"$1/runs.$PPID\"\n"
    "case $(cat) in fail) echo 'told to fail' >&2; exit 2 ;; esac\n";

/* A delayq work process of the storm has logged worker.start: its signal handlers are
 * in place, so SIGTERM stops it cleanly (before that it would die of the signal). */
struct started {
    const char *dir;
    pid_t pid;
};

static bool
work_started(void *arg)
{
    const struct started *st = arg;
    char out[300], needle[48];

    snprintf(out, sizeof out, "%s/work.out", st->dir);
    snprintf(needle, sizeof needle, ":%ld redis=", (long)st->pid);
    return chaos_file_has(out, needle);
}

static pid_t
start_work(const char *dir, const char *queue)
{
    char handler[300], out[300];

    snprintf(handler, sizeof handler, "%s/handler.sh", dir);
    snprintf(out, sizeof out, "%s/work.out", dir);
    const char *argv[] = {chaos_delayq_bin(),
                          "work",
                          "--url",
                          redis.url,
                          "-q",
                          queue,
                          "--concurrency",
                          "4",
                          "--lease",
                          "2s",
                          "--grace",
                          "1s",
                          "--raw",
                          "--",
                          "/bin/sh",
                          handler,
                          dir,
                          NULL};
    pid_t pid = chaos_spawn(argv, out);
    assert_true(pid > 0);
    return pid;
}

/* The same storm at a smaller scale through `delayq work`, which runs a process per
 * task: every task runs, none early, a task runs again only after its worker was killed
 * holding it, and the failed set is exact. */
static void
work_kill_storm(void **state)
{
    const bool lng = chaos_long();
    const int n = lng ? 1000 : 300;
    const int spread_ms = lng ? 10000 : 5000;
    struct storm s = {.n = n};
    struct kill kills[MAX_KILLS];
    pid_t workers[2];
    int nk = 0, n_fail = 0;
    dq_err err = {0};
    dq_stats st;
    char path[300];
    const char *dir = chaos_dir("work");

    assert_non_null(dir);
    assert_int_equal(test_redis_start(&redis, NULL), 0);
    test_queue_name(s.queue, sizeof s.queue, "work");
    if (dq_client_open(redis.url, NULL, &s.c, &err) != DQ_OK)
        fail_msg("dq_client_open: %s", err.msg);
    snprintf(path, sizeof path, "%s/handler.sh", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(work_handler, f);
    fclose(f);
    s.due = calloc((size_t)n, sizeof *s.due);
    s.kind = calloc((size_t)n, sizeof *s.kind);
    assert_non_null(s.due);
    assert_non_null(s.kind);
    for (int i = 0; i < 2; i++)
        workers[i] = start_work(dir, s.queue);

    assert_int_equal(dq_stats_get(s.c, s.queue, &st, &err), DQ_OK);
    const int64_t base = st.now_ms + 1500; /* after the enqueues, on a quiet machine */
    for (int i = 0; i < n; i++) {
        char id[32];
        dq_enqueued e;
        s.kind[i] = i % 10 == 3 ? FAIL : OK;
        n_fail += s.kind[i] == FAIL;
        s.due[i] = base + (int64_t)i * spread_ms / n;
        snprintf(id, sizeof id, "t%d", i);
        dq_enqueue_opts o = {.at_ms = s.due[i], .id = id};
        const char *payload = s.kind[i] == FAIL ? "fail" : "ok";
        if (dq_enqueue(s.c, s.queue, &o, payload, strlen(payload), &e, &err) != DQ_OK)
            fail_msg("enqueue %s: %s", id, err.msg);
    }
    const int64_t m0 = test_mono_ms() + (base - chaos_wall_ms());
    for (int k = 1; k <= spread_ms / 1000; k++) {
        int64_t wait = m0 + (int64_t)k * 1000 - test_mono_ms();
        if (wait > 0)
            test_nap_ms((int)wait); /* the storm's schedule */
        for (int i = 0; i < 2; i++) {
            int status;
            if (!chaos_running(workers[i], &status))
                fail_msg("delayq work %ld exited by itself (status 0x%x); see %s/work.out",
                         (long)workers[i], status, dir);
        }
        int v = rand() % 2;
        kills[nk].pid = workers[v];
        kills[nk++].wall = chaos_wall_ms();
        chaos_kill9(workers[v]);
        workers[v] = start_work(dir, s.queue);
    }
    assert_true(wait_until(drained, &s, 60000, "the queue to drain"));
    for (int i = 0; i < 2; i++) {
        /* the storm's last restart may be moments old */
        struct started up = {dir, workers[i]};
        assert_true(wait_until(work_started, &up, 10000, "the restarted delayq work to start"));
        int status = chaos_stop(workers[i], 10000);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("delayq work %ld did not stop cleanly (status 0x%x); see %s/work.out",
                     (long)workers[i], status, dir);
    }

    assert_int_equal(dq_stats_get(s.c, s.queue, &st, &err), DQ_OK);
    assert_int_equal(st.inflight, 0);
    assert_int_equal(st.due + st.future, 0);
    assert_int_equal(st.failed, n_fail);
    assert_int_equal(st.done, n - n_fail);
    check_failed_set(&s, n_fail);

    struct chaos_runs runs;
    size_t again = 0;
    char *ran = calloc((size_t)n, 1);
    assert_non_null(ran);
    chaos_runs_read(dir, &runs);
    for (size_t r = 0; r < runs.n; r++) {
        const struct chaos_run *a = &runs.v[r];
        int i = atoi(a->id + 1);
        if (a->id[0] != 't' || i < 0 || i >= n)
            fail_msg("a run of unknown task %s", a->id);
        /* the handler's clock is the server's (same host), and it reads it after the
         * claim, which is at or after the due time */
        if (a->wall < s.due[i])
            fail_msg("%s attempt %u started %lld ms before it was due", a->id, a->attempt,
                     (long long)(s.due[i] - a->wall));
        ran[i] = 1;
        if (r + 1 == runs.n || strcmp(runs.v[r + 1].id, a->id) != 0)
            continue;
        const struct chaos_run *b = &runs.v[r + 1];
        if (b->attempt == a->attempt)
            fail_msg("%s attempt %u ran twice", a->id, a->attempt);
        /* From the due time on, not from the handler's start: a command outlives its
         * killed worker by the moment the kernel takes to deliver its parent-death
         * signal, long enough to write its record after the kill. */
        if (!killed_between(kills, nk, a->pid, a->claimed, b->wall))
            fail_msg("%s ran again (attempt %u, worker %ld) but worker %ld was not killed while "
                     "it held attempt %u",
                     a->id, b->attempt, (long)b->pid, (long)a->pid, a->attempt);
        again++;
    }
    for (int i = 0; i < n; i++) {
        if (!ran[i])
            fail_msg("task t%d never ran", i);
    }
    printf("# delayq work: %d tasks, %zu runs, %d kills, %zu ran again after a kill, reaped "
           "%lld\n",
           n, runs.n, nk, again, (long long)st.reaped);
    free(ran);
    chaos_runs_free(&runs);
    dq_client_free(s.c);
    free(s.due);
    free(s.kind);
}

static int
teardown(void **state)
{
    producers_join(true);
    chaos_cleanup();
    test_redis_stop(&redis);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(kill_storm_and_redis_restart, teardown),
        cmocka_unit_test_teardown(work_kill_storm, teardown),
    };
    test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
