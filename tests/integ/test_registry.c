/* SPDX-License-Identifier: MIT */
/*
 * test_registry.c: the worker registry against a real redis-server with real workers:
 * a worker's record and the tasks it holds, lost after missed beats, pruning in bounded
 * steps, a clean exit leaving at once, a SIGKILLed `delayq work` left behind as lost,
 * and what an idle worker's beats cost (INFO commandstats, commands in scripts
 * included).
 */
#include "harness/fixture.h"
#include "harness/worker.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

struct seen {
    atomic_int started;
    atomic_int release; /* blocked handlers wait for this */
};

static void
handler(const dq_task *t, dq_result *res, void *arg)
{
    struct seen *s = arg;

    (void)t;
    (void)res;
    atomic_fetch_add(&s->started, 1);
    while (!atomic_load(&s->release))
        test_nap_ms(2);
}

/* Waits for the registry to satisfy @pred; ws holds the last listing. */
struct until_workers {
    struct fixture *f;
    dq_workers ws;
    bool (*pred)(const dq_workers *ws, const void *arg);
    const void *arg;
};

static bool
workers_ready(void *arg)
{
    struct until_workers *u = arg;

    dq_workers_free(&u->ws);
    if (dq_workers_get(u->f->c, u->f->queue, 100, 10, &u->ws, &u->f->err) != DQ_OK)
        return false;
    return u->pred(&u->ws, u->arg);
}

static const dq_worker_info *
find_worker(const dq_workers *ws, const char *name)
{
    for (size_t i = 0; i < ws->n; i++) {
        if (strcmp(ws->workers[i].name, name) == 0)
            return &ws->workers[i];
    }
    return NULL;
}

static bool
registered_n(const dq_workers *ws, const void *arg)
{
    return ws->registered == *(const int64_t *)arg;
}

struct want_worker {
    const char *name;
    int64_t busy, done, held;
    int lost; /* -1: either */
};

static bool
worker_is(const dq_workers *ws, const void *arg)
{
    const struct want_worker *want = arg;
    const dq_worker_info *w = find_worker(ws, want->name);

    return w != NULL && (want->busy < 0 || w->busy == want->busy) &&
           (want->done < 0 || w->done == want->done) &&
           (want->held < 0 || (int64_t)w->held == want->held) &&
           (want->lost < 0 || w->lost == (want->lost == 1));
}

static void
registration_and_heartbeat_fields(void **state)
{
    struct fixture f;
    struct seen s = {0};
    struct test_worker r;
    dq_worker_opts o = {
        .name = "reg-1", .concurrency = 3, .beat_ms = 100, .command = "./run.sh --x"};
    char host[128] = "";

    fixture_open(&f, state, "reg");
    gethostname(host, sizeof host - 1);
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    struct want_worker want = {.name = "reg-1", .busy = 0, .done = 0, .held = 0, .lost = 0};
    struct until_workers u = {.f = &f, .pred = worker_is, .arg = &want};
    assert_true(wait_until(workers_ready, &u, 5000, "the worker to register"));
    const dq_worker_info *w = find_worker(&u.ws, "reg-1");
    assert_string_equal(w->host, host);
    assert_int_equal(w->pid, getpid());
    assert_string_equal(w->version, DQ_VERSION);
    assert_string_equal(w->command, "./run.sh --x");
    assert_int_equal(w->concurrency, 3);
    assert_int_equal(w->beat_interval_ms, 100);
    assert_false(w->draining);
    assert_true(w->started_ms > 0 && w->started_ms <= u.ws.now_ms);
    assert_true(w->beat_age_ms >= 0 && w->beat_age_ms < 5000);
    assert_int_equal(u.ws.live, 1);
    assert_int_equal(u.ws.lost, 0);

    /* two tasks held: busy 2 after the next beat, and both listed with their claim time */
    dq_enqueued e1, e2;
    enqueue_str(&f, "a", 0, "held-a", &e1);
    enqueue_str(&f, "b", 0, "held-b", &e2);
    want.busy = 2;
    want.held = 2;
    assert_true(wait_until(workers_ready, &u, 5000, "busy 2 and two held tasks"));
    w = find_worker(&u.ws, "reg-1");
    assert_int_equal(w->ntasks, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_true(strcmp(w->tasks[i].id, "held-a") == 0 || strcmp(w->tasks[i].id, "held-b") == 0);
        assert_true(w->tasks[i].claimed_ms > 0 && w->tasks[i].claimed_ms <= u.ws.now_ms);
    }
    assert_int_equal(u.ws.inflight, 2);
    assert_int_equal(u.ws.inflight_looked, 2);
    /* the summary (the inspector's refresh, the metrics scrape): the same counts and
     * record, and no lease looked at */
    dq_workers sum;
    ASSERT_OK(&f, dq_workers_summary(f.c, f.queue, 100, &sum, &f.err));
    assert_int_equal(sum.registered, 1);
    assert_int_equal(sum.live, 1);
    assert_int_equal(sum.inflight, 2);
    assert_int_equal(sum.inflight_looked, 0);
    assert_int_equal(sum.n, 1);
    assert_string_equal(sum.workers[0].name, "reg-1");
    assert_int_equal(sum.workers[0].busy, 2);
    assert_int_equal(sum.workers[0].held, 0);
    assert_int_equal(sum.workers[0].ntasks, 0);
    dq_workers_free(&sum);

    atomic_store(&s.release, 1);
    want.busy = 0;
    want.held = 0;
    want.done = 2;
    assert_true(wait_until(workers_ready, &u, 5000, "done 2 in the record"));
    dq_workers_free(&u.ws);
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
lost_after_missed_beats(void **state)
{
    struct fixture f;
    struct seen s = {0};
    struct test_worker r;
    dq_worker_opts o = {.name = "alive", .beat_ms = 50};
    dq_beat rec = {.host = "h", .version = "x", .pid = 1, .interval_ms = 50, .concurrency = 1};
    dq_beat_reply br;

    fixture_open(&f, state, "lost");
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    /* a worker that beats once and then dies */
    ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "ghost", DQ_BEAT, &rec, &br, &f.err));
    assert_true(br.registered);
    int64_t beat_at = br.now_ms;
    struct want_worker want = {.name = "ghost", .busy = -1, .done = -1, .held = -1, .lost = 1};
    struct until_workers u = {.f = &f, .pred = worker_is, .arg = &want};
    assert_true(wait_until(workers_ready, &u, 5000, "the silent worker to be lost"));
    /* lost only once three of its 50 ms intervals passed, by server time */
    assert_true(u.ws.now_ms - beat_at > 150);
    const dq_worker_info *alive = find_worker(&u.ws, "alive");
    assert_non_null(alive);
    assert_false(alive->lost); /* beating every 50 ms */
    assert_int_equal(u.ws.live, 1);
    assert_int_equal(u.ws.lost, 1);

    /* a queue setting overrides the three intervals */
    dq_config cfg = {.worker_lost_ms = 60000};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    want.lost = 0;
    assert_true(wait_until(workers_ready, &u, 5000, "the silent worker live under 60 s"));
    assert_int_equal(u.ws.lost_after_ms, 60000);
    dq_workers_free(&u.ws);
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
pruned_in_bounded_steps(void **state)
{
    struct fixture f;
    struct seen s = {0};
    struct test_worker r;
    dq_beat rec = {.host = "h", .version = "x", .pid = 1, .interval_ms = 1000, .concurrency = 1};
    dq_beat_reply br;
    char name[32];

    fixture_open(&f, state, "prune");
    for (int i = 0; i < 250; i++) {
        snprintf(name, sizeof name, "dead-%03d", i);
        ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, name, DQ_BEAT, &rec, &br, &f.err));
    }
    dq_config cfg = {.worker_prune_ms = 1};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    /* a look reports like a check and prunes nothing */
    test_nap_ms(2);
    ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "pruner", DQ_BEAT_LOOK, &rec, &br, &f.err));
    assert_int_equal(br.pruned, 0);
    assert_int_equal(br.next_due_ms, -1);
    assert_int_equal(br.paused_until_ms, -1);
    /* each check beat prunes at most 100 (its own entry is fresh) */
    size_t pruned[3];
    for (int i = 0; i < 3; i++) {
        test_nap_ms(2); /* past worker_prune_ms (1 ms) since the beats above */
        ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "pruner", DQ_BEAT_CHECK, &rec, &br, &f.err));
        pruned[i] = br.pruned;
    }
    assert_int_equal(pruned[0], 100);
    assert_int_equal(pruned[1], 100);
    assert_true(pruned[2] >= 50); /* the last 50, and the pruner itself once 1 ms old */

    /* a running worker prunes too: its idle look (max_idle_ms) is a check beat */
    cfg.worker_prune_ms = 300;
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    ASSERT_OK(&f, dq_heartbeat(f.c, f.queue, "gone-soon", DQ_BEAT, &rec, &br, &f.err));
    dq_worker_opts o = {.name = "pruner-2", .beat_ms = 50, .max_idle_ms = 100};
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    int64_t one = 1;
    struct until_workers u = {.f = &f, .pred = registered_n, .arg = &one};
    assert_true(wait_until(workers_ready, &u, 5000, "only the running worker left"));
    assert_non_null(find_worker(&u.ws, "pruner-2"));
    dq_workers_free(&u.ws);
    test_worker_stop(&r, false);
    fixture_close(&f);
}

static void
clean_exit_removes_at_once(void **state)
{
    struct fixture f;
    struct seen s = {0};
    struct test_worker r;
    dq_worker_opts o = {.name = "leaver"};
    dq_workers ws;

    fixture_open(&f, state, "leave");
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    int64_t one = 1, none = 0;
    struct until_workers u = {.f = &f, .pred = registered_n, .arg = &one};
    assert_true(wait_until(workers_ready, &u, 5000, "the worker to register"));
    dq_workers_free(&u.ws);
    test_worker_stop(&r, false); /* returns after the entry was removed */
    ASSERT_OK(&f, dq_workers_get(f.c, f.queue, 10, 0, &ws, &f.err));
    assert_true(registered_n(&ws, &none));
    dq_workers_free(&ws);
    fixture_close(&f);
}

static void
killed_delayq_work_shows_as_lost(void **state)
{
    struct fixture f;
    pid_t pid;

    fixture_open(&f, state, "killed");
    const char *wargv[] = {"--url",   f.redis->url, "-q",    f.queue, "--name", "victim",
                           "--quiet", "--",         "sleep", "5",     NULL};
    pid = test_work_start(wargv, NULL);
    struct want_worker want = {.name = "victim", .busy = -1, .done = -1, .held = -1, .lost = 0};
    struct until_workers u = {.f = &f, .pred = worker_is, .arg = &want};
    assert_true(wait_until(workers_ready, &u, 10000, "delayq work to register"));
    assert_string_equal(find_worker(&u.ws, "victim")->command, "sleep 5");
    assert_int_equal(find_worker(&u.ws, "victim")->pid, pid);
    assert_int_equal(test_work_stop(pid, SIGKILL), 128 + SIGKILL);
    /* no clean exit: the entry stays; with its 30 s beats it would be lost after 90 s, so
     * the queue's lost time is shortened to see it */
    dq_workers_free(&u.ws);
    ASSERT_OK(&f, dq_workers_get(f.c, f.queue, 10, 0, &u.ws, &f.err));
    assert_non_null(find_worker(&u.ws, "victim"));
    dq_config cfg = {.worker_lost_ms = 200};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    want.lost = 1;
    assert_true(wait_until(workers_ready, &u, 5000, "the killed worker to show as lost"));
    assert_int_equal(u.ws.lost, 1);
    assert_int_equal(u.ws.live, 0);
    dq_workers_free(&u.ws);
    fixture_close(&f);
}

static void
idle_beats_stay_within_budget(void **state)
{
    struct fixture f;
    struct seen s = {0};
    struct test_worker r;
    /* the defaults (30 s beats, a 60 s idle look) 100 times faster: W4's budget of 0.2
     * commands/s per idle worker becomes 20/s */
    const int scale = 100;
    dq_worker_opts o = {.name = "idle", .beat_ms = 30000 / scale, .max_idle_ms = 60000 / scale};

    fixture_open(&f, state, "budget");
    test_worker_start(&r, &f, NULL, &o, handler, &s);
    int64_t settle = test_mono_ms() + 2 * o.max_idle_ms;
    while (test_mono_ms() < settle)
        test_nap_ms(10);
    long long before = redis_calls_total(&f) + 1; /* +1: this INFO itself */
    int64_t t0 = test_mono_ms();
    while (test_mono_ms() < t0 + 30 * o.max_idle_ms) /* 30 idle looks, 60 beats */
        test_nap_ms(20);
    long long after = redis_calls_total(&f);
    double secs = (double)(test_mono_ms() - t0) / 1000.0;
    double rate = (double)(after - before) / secs;
    test_worker_stop(&r, false);
    printf("# idle worker, intervals / %d: %.1f Redis commands/s (commands inside scripts "
           "included) = %.3f/s at the default intervals (budget 0.2)\n",
           scale, rate, rate / scale);
    assert_true(rate / scale <= 0.2);
    assert_true(after - before > 0); /* it does beat */
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registration_and_heartbeat_fields),
        cmocka_unit_test(lost_after_missed_beats),
        cmocka_unit_test(pruned_in_bounded_steps),
        cmocka_unit_test(clean_exit_removes_at_once),
        cmocka_unit_test(killed_delayq_work_shows_as_lost),
        cmocka_unit_test(idle_beats_stay_within_budget),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/registry", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
