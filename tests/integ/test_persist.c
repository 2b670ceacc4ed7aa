/* SPDX-License-Identifier: MIT */
/*
 * test_persist.c: `delayq work --persistent` as a user runs it: docs/GUIDE.md's Python
 * handler (examples/handler.py) and Node handler for real, a Python handler that
 * misbehaves in every way the protocol names (garbage, another id, an unknown result,
 * an exit, a hang past --timeout, a line over the limit), SIGTERM with a task running,
 * and kill -9 of the worker, against a real redis-server.
 */
#include "harness/fixture.h"
#include "harness/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[160];

/* Writes @body to tmpdir/@name, executable; returns its path (static, 8 in rotation). */
static const char *
write_file(const char *name, const char *body)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    FILE *f;

    snprintf(p, 320, "%s/%s", tmpdir, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    chmod(p, 0755);
    return p;
}

/* Starts `delayq work --persistent -q QUEUE ARGS... -- CMD...` with its stderr in
 * tmpdir/NAME.log. */
static pid_t
start_work(struct fixture *f, const char *name, const char *const *args, const char *const *cmd)
{
    const char *argv[48];
    char log[320];
    int n = 0;

    snprintf(log, sizeof log, "%s/%s.log", tmpdir, name);
    const char *fixed[] = {"--url", f->redis->url, "-q", f->queue, "--name", name, "--persistent"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = fixed[i];
    for (int i = 0; args != NULL && args[i] != NULL && n < 36; i++)
        argv[n++] = args[i];
    argv[n++] = "--";
    for (int i = 0; cmd[i] != NULL && n < 46; i++)
        argv[n++] = cmd[i];
    argv[n] = NULL;
    return test_work_start(argv, log);
}

struct counts {
    struct fixture *f;
    int64_t done, failed, retried;
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

static void
wait_counts(struct counts *c, int ms, const char *what, const char *logname)
{
    if (!wait_until(counts_reached, c, ms, what)) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "cat %s/%s.log >&2", tmpdir, logname);
        if (system(cmd) != 0)
            fprintf(stderr, "(no worker log)\n");
        fail_msg("done %lld failed %lld retried %lld inflight %lld", (long long)c->s.done,
                 (long long)c->s.failed, (long long)c->s.retried, (long long)c->s.inflight);
    }
}

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

static int
count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void
example_path(char *buf, size_t size, const char *name)
{
    const char *root = getenv("DQ_SOURCE_ROOT");
    assert_non_null(root);
    snprintf(buf, size, "%s/examples/%s", root, name);
}

static void
task_error_has(struct fixture *f, const char *id, dq_state state, const char *want)
{
    dq_task t;

    ASSERT_OK(f, dq_find(f->c, f->queue, id, &t, &f->err));
    const char *msg = state == DQ_STATE_FAILED ? t.error : t.last_error;
    if (t.state != state || msg == NULL || strstr(msg, want) == NULL)
        fail_msg("task %s: state %d (want %d), error \"%s\", want \"%s\"", id, (int)t.state,
                 (int)state, msg ? msg : "(none)", want);
    dq_task_clear(&t);
}

/* The guide's handler, run by the worker as docs/GUIDE.md says. */
static void
guide_python_handler(void **state)
{
    struct fixture f;
    char handler[400];
    dq_enqueued e;
    dq_task t;

    fixture_open(&f, state, "readme");
    example_path(handler, sizeof handler, "handler.py");
    dq_enqueue_opts o = {.id = "plain"};
    const char *map = "\x81\xa2to\xa3"
                      "a@b"; /* {"to":"a@b"} */
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, map, strlen(map), &e, &f.err));
    o.id = "declined";
    const char *err = "\x81\xa5"
                      "error\xad"
                      "card declined"; /* {"error":"card declined"} */
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, err, strlen(err), &e, &f.err));
    o.id = "busy";
    const char *busy = "\x81\xa4"
                       "busy\xc3"; /* {"busy":true} */
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, busy, strlen(busy), &e, &f.err));
    o.id = "raw";
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, "\xc1\x00", 2, &e, &f.err)); /* not msgpack */
    for (int i = 0; i < 100; i++)
        enqueue_str(&f, "x", 0, NULL, NULL);
    dq_config cfg = {.backoff_base_ms = 600000}; /* a retried task waits: easy to inspect */
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    const char *args[] = {"--concurrency", "2", NULL};
    const char *cmd[] = {handler, NULL};
    pid_t pid = start_work(&f, "readme", args, cmd);
    struct counts c = {.f = &f, .done = 102, .failed = 1, .retried = 1};
    wait_counts(&c, 30000, "the guide handler's tasks", "readme");
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    assert_int_equal(c.s.done, 102);

    ASSERT_OK(&f, dq_find(f.c, f.queue, "declined", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_string_equal(t.error, "RuntimeError('card declined')");
    assert_non_null(strstr(t.trace, "Traceback (most recent call last):"));
    assert_non_null(strstr(t.trace, "RuntimeError: card declined"));
    dq_task_clear(&t);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "busy", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED);
    assert_int_equal(t.attempt, 1);
    dq_task_clear(&t);
    fixture_close(&f);
}

/* A Python handler that misbehaves once per kind, on a task's first attempt. */
static const char bad_handler[] =
    "import json, os, sys, time\n"
    "log = open(sys.argv[1], 'a')\n"
    "log.write('start %d %s\\n' % (os.getpid(), os.environ.get('DELAYQ_SLOT')))\n"
    "log.flush()\n"
    "for line in sys.stdin:\n"
    "    t = json.loads(line)\n"
    "    i = t['id']\n"
    "    if i == 'ok-1':\n"
    "        log.write('line ' + line)\n"
    "        log.flush()\n"
    "    out = {'id': i, 'result': 'done'}\n"
    "    if t['attempt'] == 1:\n"
    "        if i == 'stderr-fail':\n"
    "            sys.stderr.write('step 1\\nstep 2: card declined\\n')\n"
    "            sys.stderr.flush()\n"
    "            out = {'id': i, 'result': 'fail'}\n"
    "        elif i == 'garbage':\n"
    "            print('hello world', flush=True)\n"
    "            continue\n"
    "        elif i == 'wrongid':\n"
    "            out = {'id': 'nope', 'result': 'done'}\n"
    "        elif i == 'unknown':\n"
    "            out = {'id': i, 'result': 'maybe'}\n"
    "        elif i == 'exit':\n"
    "            sys.stderr.write('dying\\n')\n"
    "            sys.stderr.flush()\n"
    "            sys.exit(3)\n"
    "        elif i == 'hang':\n"
    "            time.sleep(60)\n"
    "        elif i == 'huge':\n"
    "            sys.stdout.write('x' * (2 << 20) + '\\n')\n"
    "            sys.stdout.flush()\n"
    "            continue\n"
    "    print(json.dumps(out), flush=True)\n"
    "log.write('eof %d\\n' % os.getpid())\n"
    "log.flush()\n";

static void
misbehaving_handler_is_restarted(void **state)
{
    struct fixture f;
    char runlog[320], slow_cmd[200];
    static const char *const bad[] = {"garbage", "wrongid", "unknown", "exit", "hang", "huge"};
    dq_enqueued e;
    dq_task t;

    fixture_open(&f, state, "bad");
    snprintf(runlog, sizeof runlog, "%s/bad.runs", tmpdir);
    const char *h = write_file("bad.py", bad_handler);
    dq_enqueue_opts o = {0};
    const char *one = "\x81\xa1n\x01"; /* {"n":1} */
    for (int i = 1; i <= 40; i++) {
        char id[16];
        snprintf(id, sizeof id, "ok-%d", i);
        o.id = id;
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, one, strlen(one), &e, &f.err));
    }
    o.id = "stderr-fail";
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, one, strlen(one), &e, &f.err));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.id = bad[i];
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, one, strlen(one), &e, &f.err));
    }
    dq_config cfg = {.backoff_base_ms = 600000};
    ASSERT_OK(&f, dq_config_set(f.c, f.queue, &cfg, &f.err));
    /* --timeout includes the interpreter's start for a slot's first task: 10 s leaves a
     * loaded machine room for that (3 s was once not enough under ASan at load 7), and
     * the hang sleeps 60 s */
    const char *args[] = {"--concurrency", "2", "--timeout", "10s", NULL};
    snprintf(slow_cmd, sizeof slow_cmd, "%s", h);
    const char *cmd[] = {"python3", slow_cmd, runlog, NULL};
    int64_t t0 = test_mono_ms();
    pid_t pid = start_work(&f, "bad", args, cmd);
    struct counts c = {.f = &f, .done = 40, .failed = 1, .retried = 6};
    wait_counts(&c, 60000, "every misbehaviour handled", "bad");
    int64_t took = test_mono_ms() - t0;
    /* a slot is restarted when its next task comes: some for the shutdown to close */
    for (int i = 0; i < 4; i++)
        enqueue_str(&f, "\xc0", 0, NULL, NULL);
    c.done = 44;
    wait_counts(&c, 30000, "tasks after the restarts", "bad");
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    printf("# 47 tasks, 6 handler restarts with backoff: %lld ms\n", (long long)took);

    task_error_has(&f, "garbage", DQ_STATE_SCHEDULED, "handler wrote garbage (not JSON (json: ");
    task_error_has(&f, "garbage", DQ_STATE_SCHEDULED, "): hello world");
    task_error_has(&f, "wrongid", DQ_STATE_SCHEDULED, "handler answered for task \"nope\"");
    task_error_has(&f, "unknown", DQ_STATE_SCHEDULED, "unknown result \"maybe\"");
    task_error_has(&f, "exit", DQ_STATE_SCHEDULED,
                   "handler ended (exit 3) before answering: dying");
    task_error_has(&f, "hang", DQ_STATE_SCHEDULED,
                   "timed out after 10000 ms; handler process group");
    task_error_has(&f, "huge", DQ_STATE_SCHEDULED, "over 1048576 bytes");
    /* no error member: the last stderr line is the error, all of it the trace */
    ASSERT_OK(&f, dq_find(f.c, f.queue, "stderr-fail", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_string_equal(t.error, "step 2: card declined");
    assert_string_equal(t.trace, "step 1\nstep 2: card declined\n");
    dq_task_clear(&t);

    char *runs = slurp(runlog);
    int starts = count_of(runs, "start "), eofs = count_of(runs, "eof ");
    printf("# handler starts: %d (2 slots + 6 restarts at most); exits at EOF: %d\n", starts, eofs);
    /* once per slot, and once more after each kill: never once per task */
    assert_true(starts >= 1 && starts <= 2 + 6);
    assert_true(count_of(runs, " 1\n") >= 1); /* DELAYQ_SLOT */
    /* at shutdown the handlers saw EOF and exited by themselves */
    assert_true(eofs >= 1);
    /* the task line as documented */
    char q[160];
    snprintf(q, sizeof q,
             "line {\"id\":\"ok-1\",\"queue\":\"%s\",\"attempt\":1,\"due_ms\":", f.queue);
    if (strstr(runs, q) == NULL || strstr(runs, ",\"payload\":{\"n\":1}}\n") == NULL)
        fail_msg("task line not as documented:\n%s", runs);
    free(runs);
    fixture_close(&f);
}

/* Waits for a line in a file. */
struct seen {
    const char *path, *needle;
};

static bool
file_has(void *arg)
{
    struct seen *s = arg;
    char *text = slurp(s->path);
    bool ok = strstr(text, s->needle) != NULL;
    free(text);
    return ok;
}

static void
sigterm_finishes_the_task_then_closes_stdin(void **state)
{
    struct fixture f;
    char body[1500], runlog[320], flag[320];

    fixture_open(&f, state, "pterm");
    snprintf(runlog, sizeof runlog, "%s/pterm.runs", tmpdir);
    snprintf(flag, sizeof flag, "%s/pterm.go", tmpdir);
    /* the task waits for a flag file, so the test decides when it finishes */
    snprintf(body, sizeof body,
             "import json, os, sys, time\n"
             "log = open('%s', 'a')\n"
             "for line in sys.stdin:\n"
             "    t = json.loads(line)\n"
             "    log.write('start %%s\\n' %% t['id']); log.flush()\n"
             "    while not os.path.exists('%s'): time.sleep(0.02)\n"
             "    print(json.dumps({'id': t['id'], 'result': 'done'}), flush=True)\n"
             "log.write('eof\\n'); log.flush()\n",
             runlog, flag);
    const char *h = write_file("pterm.py", body);
    enqueue_str(&f, "x", 0, "slow", NULL);
    const char *args[] = {"--grace", "20s", NULL};
    const char *cmd[] = {"python3", h, NULL};
    pid_t pid = start_work(&f, "pterm", args, cmd);
    struct seen started = {runlog, "start slow"};
    assert_true(wait_until(file_has, &started, 15000, "the task started"));
    kill(pid, SIGTERM);
    char log[320];
    snprintf(log, sizeof log, "%s/pterm.log", tmpdir);
    struct seen stopping = {log, "event=worker.stopping"};
    assert_true(wait_until(file_has, &stopping, 15000, "the worker stopping"));
    /* the task runs on under the grace period, its handler's stdin still open */
    struct seen eof = {runlog, "eof"};
    assert_false(file_has(&eof));
    assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
    FILE *go = fopen(flag, "w");
    fclose(go);
    assert_int_equal(test_work_stop(pid, 0), 0);
    assert_true(file_has(&eof)); /* it saw EOF and exited by itself before the worker did */
    dq_stats s;
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.done, 1);
    assert_int_equal(s.inflight, 0);
    fixture_close(&f);
}

static bool
pid_gone(void *arg)
{
    pid_t pid = *(pid_t *)arg;
    char path[64], buf[512];

    if (kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    /* a zombie waiting for init to reap it is gone too */
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return true;
    bool zombie = fgets(buf, sizeof buf, f) != NULL && strstr(buf, ") Z ") != NULL;
    fclose(f);
    return zombie;
}

static void
kill9_of_the_worker_takes_its_handlers(void **state)
{
    struct fixture f;
    char body[600], pidfile[320];

    fixture_open(&f, state, "pkill");
    snprintf(pidfile, sizeof pidfile, "%s/pkill.pid", tmpdir);
    snprintf(body, sizeof body,
             "import os, sys, time\n"
             "open('%s', 'w').write('%%d\\n' %% os.getpid())\n"
             "for line in sys.stdin:\n"
             "    time.sleep(60)\n",
             pidfile);
    const char *h = write_file("pkill.py", body);
    enqueue_str(&f, "x", 0, NULL, NULL);
    const char *cmd[] = {"python3", h, NULL};
    pid_t pid = start_work(&f, "pkill", NULL, cmd);
    struct seen written = {pidfile, "\n"};
    assert_true(wait_until(file_has, &written, 15000, "the handler started"));
    char *text = slurp(pidfile);
    pid_t handler = (pid_t)atoi(text);
    free(text);
    assert_true(handler > 0);
    assert_false(pid_gone(&handler));
    assert_int_equal(test_work_stop(pid, SIGKILL), 128 + SIGKILL);
    /* PR_SET_PDEATHSIG: the handler does not finish a task that will be run again */
    assert_true(wait_until(pid_gone, &handler, 5000, "the handler killed with its worker"));
    fixture_close(&f);
}

/* A handler that sleeps on its task, for the ends of a shutdown: the grace period
 * running out, and a second signal. Both kill it and hand the task back. */
static void
shutdown_kills_a_stuck_handler(struct fixture *f, const char *name, const char *grace,
                               bool second_signal)
{
    char body[600], pidfile[320];

    snprintf(pidfile, sizeof pidfile, "%s/%s.pid", tmpdir, name);
    snprintf(body, sizeof body,
             "import os, sys, time\n"
             "for line in sys.stdin:\n"
             "    open('%s', 'w').write('%%d\\n' %% os.getpid())\n"
             "    time.sleep(60)\n",
             pidfile);
    char script[64];
    snprintf(script, sizeof script, "%s.py", name);
    const char *h = write_file(script, body);
    enqueue_str(f, "x", 0, "stuck", NULL);
    const char *args[] = {"--grace", grace, NULL};
    const char *cmd[] = {"python3", h, NULL};
    pid_t pid = start_work(f, name, args, cmd);
    struct seen running = {pidfile, "\n"};
    assert_true(wait_until(file_has, &running, 15000, "the task running"));
    char *text = slurp(pidfile);
    pid_t handler = (pid_t)atoi(text);
    free(text);
    int64_t t0 = test_mono_ms();
    kill(pid, SIGTERM);
    if (second_signal) {
        char log[320];
        snprintf(log, sizeof log, "%s/%s.log", tmpdir, name);
        struct seen stopping = {log, "event=worker.stopping"};
        assert_true(wait_until(file_has, &stopping, 15000, "the worker stopping"));
        kill(pid, SIGTERM);
    }
    assert_int_equal(test_work_stop(pid, 0), 0);
    int64_t took = test_mono_ms() - t0;
    printf("# %s: worker out %lld ms after the first signal\n", name, (long long)took);
    assert_true(took < 10000); /* not the handler's 60 s */
    assert_true(wait_until(pid_gone, &handler, 5000, "the stuck handler killed"));
    dq_task t;
    ASSERT_OK(f, dq_find(f->c, f->queue, "stuck", &t, &f->err));
    assert_int_equal(t.state, DQ_STATE_SCHEDULED); /* handed back, due now */
    assert_int_equal(t.attempt, 0);                /* not an attempt */
    dq_task_clear(&t);
}

static void
grace_over_kills_and_hands_back(void **state)
{
    struct fixture f;

    fixture_open(&f, state, "pgrace");
    shutdown_kills_a_stuck_handler(&f, "pgrace", "1s", false);
    fixture_close(&f);
}

static void
second_signal_kills_and_hands_back(void **state)
{
    struct fixture f;

    fixture_open(&f, state, "psecond");
    shutdown_kills_a_stuck_handler(&f, "psecond", "30s", true);
    fixture_close(&f);
}

static void
node_handler(void **state)
{
    struct fixture f;
    char handler[400];
    dq_enqueued e;
    dq_task t;

    if (system("command -v node >/dev/null 2>&1") != 0) {
        printf("# node not on PATH: the Node handler is not run\n");
        skip();
    }
    fixture_open(&f, state, "node");
    example_path(handler, sizeof handler, "handler.js");
    dq_enqueue_opts o = {.id = "fine"};
    const char *map = "\x81\xa2to\xa3"
                      "a@b";
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, map, strlen(map), &e, &f.err));
    o.id = "declined";
    const char *err = "\x81\xa5"
                      "error\xad"
                      "card declined";
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, &o, err, strlen(err), &e, &f.err));
    const char *cmd[] = {handler, NULL};
    pid_t pid = start_work(&f, "node", NULL, cmd);
    struct counts c = {.f = &f, .done = 1, .failed = 1};
    wait_counts(&c, 30000, "the Node handler's tasks", "node");
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    ASSERT_OK(&f, dq_find(f.c, f.queue, "declined", &t, &f.err));
    assert_int_equal(t.state, DQ_STATE_FAILED);
    assert_string_equal(t.error, "Error: card declined");
    assert_non_null(strstr(t.trace, "at handle ("));
    dq_task_clear(&t);
    fixture_close(&f);
}

/* docs/GUIDE.md shows the very files the tests run. */
static void
guide_shows_the_example_handlers(void **state)
{
    char path[400];
    const char *root = getenv("DQ_SOURCE_ROOT");

    (void)state;
    assert_non_null(root);
    snprintf(path, sizeof path, "%s/docs/GUIDE.md", root);
    char *readme = slurp(path);
    static const char *const names[] = {"handler.py", "handler.js"};
    for (int i = 0; i < 2; i++) {
        example_path(path, sizeof path, names[i]);
        char *code = slurp(path);
        assert_true(strlen(code) > 100);
        if (strstr(readme, code) == NULL)
            fail_msg("docs/GUIDE.md does not show examples/%s as it is", names[i]);
        free(code);
    }
    free(readme);
}

/* After each test: kill whatever worker it left running (only after a failure). */
static int
reap_workers(void **state)
{
    (void)state;
    test_work_reap_all();
    return 0;
}

static int
setup(void **state)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dq-persist-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(guide_python_handler, reap_workers),
        cmocka_unit_test_teardown(misbehaving_handler_is_restarted, reap_workers),
        cmocka_unit_test_teardown(sigterm_finishes_the_task_then_closes_stdin, reap_workers),
        cmocka_unit_test_teardown(kill9_of_the_worker_takes_its_handlers, reap_workers),
        cmocka_unit_test_teardown(grace_over_kills_and_hands_back, reap_workers),
        cmocka_unit_test_teardown(second_signal_kills_and_hands_back, reap_workers),
        cmocka_unit_test_teardown(node_handler, reap_workers),
        cmocka_unit_test(guide_shows_the_example_handlers),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/persist", tests, setup, teardown);
}
