/* SPDX-License-Identifier: MIT */
/*
 * test_requeue.c: requeue, drop and audit: single and bulk moves, the audit log they write, a
 * bulk step whose reply was lost, and requeue with a new payload.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>

static void
requeue_drop_and_audit(void **state)
{
    struct result r = {0};
    char q[96], line[2048];
    static const char *const actions[][3] = {
        /* newest first: who, action, detail */
        {"op5", "drop-all", "failed until"},
        {"op4", "drop", "sched"},
        {"op3", "drop", "f2"},
        {"op1", "requeue", "f1"},
    };

    (void)state;
    test_queue_name(q, sizeof q, "ops");
    lib_make_failed(q, "f1", mp_map_kind, sizeof mp_map_kind - 1, "e1", "t1");
    lib_make_failed(q, "f2", mp_map_kind, sizeof mp_map_kind - 1, "e2", "t2");
    lib_make_failed(q, "f3", mp_map_kind, sizeof mp_map_kind - 1, "e3", "t3");
    RUN(&r, "enqueue", "-q", q, "--id", "sched", "--delay", "1h", "--json", "1");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "requeue", "f1", "-q", q, "--who", "op1");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 1\n");
    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\nf1 ");
    RUN(&r, "show", "f1", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"state\":\"scheduled\"");
    assert_int_equal(json_int(r.out, "attempt"), 0);
    RUN(&r, "ls", "failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, "f1 ");

    /* again: it is no longer failed */
    RUN(&r, "requeue", "f1", "-q", q, "--who", "op2");
    ASSERT_EXIT(&r, 1);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "f1");
    assert_one_line(&r);

    /* all or nothing: one unknown id and nothing moves */
    RUN(&r, "requeue", "f2", "nope", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "nope");
    RUN(&r, "drop", "f2", "nope", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "nope");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 2);

    RUN(&r, "drop", "f2", "-q", q, "--who", "op3");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 1\n");
    RUN(&r, "drop", "sched", "-q", q, "--who", "op4");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 1\n");
    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, "sched");
    RUN(&r, "show", "f2", "-q", q);
    ASSERT_EXIT(&r, 1);

    RUN(&r, "drop", "unknown-id", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "unknown-id");
    assert_one_line(&r);

    RUN(&r, "drop", "--all-failed", "-q", q, "--who", "op5");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 1\n"); /* f3 */
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.out_len, 0);

    /* usage */
    RUN(&r, "requeue", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "drop", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "x", "--all", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "x", "--spread", "1m", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "x", "--delay", "5x", "-q", q);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--delay");

    /* the successful actions, newest first, each with its operator */
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    {
        const char *prev = r.out;
        for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++) {
            char pat[64];
            const char *p;
            snprintf(pat, sizeof pat, "  %s  %s  ", actions[i][0], actions[i][1]);
            p = strstr(r.out, pat);
            if (p == NULL || p < prev)
                fail_msg("audit entry \"%s\" missing or out of order:\n%s", pat,
                         esc(r.out, r.out_len));
            prev = p;
        }
    }
    ASSERT_HAS(r.out, "  op1  requeue  f1  -> ok");
    ASSERT_HAS(r.out, "  op3  drop  f2  -> ok");
    ASSERT_HAS(r.out, "  op2  requeue  f1  -> refused"); /* refusals are recorded too */
    assert_terminal_safe("audit", r.out, r.out_len);

    RUN(&r, "audit", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_json_safe("audit --json", r.out, r.out_len);
    {
        long long prev_at = LLONG_MAX;
        size_t n = count_lines(r.out), k = 0;

        assert_true(n >= 4);
        for (size_t i = 0; i < n; i++) {
            char *who, *action;
            long long at;

            assert_true(nth_line(r.out, i, line, sizeof line));
            at = json_int(line, "at_ms");
            assert_true(at <= prev_at);
            prev_at = at;
            who = json_str(line, "who");
            action = json_str(line, "action");
            if (k < 4 && strcmp(who, actions[k][0]) == 0) {
                assert_string_equal(action, actions[k][1]);
                k++;
            }
            free(who);
            free(action);
        }
        assert_int_equal(k, 4);
        assert_true(nth_line(r.out, 0, line, sizeof line));
        ASSERT_HAS(line, "\"who\":\"op5\"");
    }
    RUN(&r, "audit", "-q", q, "--json", "--limit", "1");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"who\":\"op5\"");
    RUN(&r, "audit", "-q", q, "--limit", "0");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

static void
requeue_all(void **state)
{
    struct result r = {0};
    char q[96], id[16];

    (void)state;
    test_queue_name(q, sizeof q, "requeue-all");
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "bulk%d", i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, "down", "at x()");
    }
    RUN(&r, "requeue", "--all", "-q", q, "--delay", "1h");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 4\n");
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.out_len, 0);
    RUN(&r, "ls", "future", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 4);
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(json_find(r.out, "counters"), "requeued"), 4);
    assert_int_equal(json_int(r.out, "due"), 0);
    /* nothing left: a second --all moves nothing and still succeeds */
    RUN(&r, "requeue", "--all", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 0\n");
    RUN(&r, "drop", "--all-failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 0\n");
    result_free(&r);
}

/* ---- a reply lost on the way back ----------------------------------------------------- */

/*
 * A loopback proxy to the test's redis-server that forwards both ways, except that on
 * the @cut_at-th command holding @needle it forwards the command, waits for the reply,
 * drops it and closes both sides: the step ran, its caller sees a lost connection.
 * Runs on its own thread until @stop (bounded by a deadline either way).
 */
struct proxy {
    int listen_fd, port;
    const char *needle;
    int cut_at, seen;
    bool cut; /* the cut happened */
    volatile bool stop;
    pthread_t thread;
};

enum { PROXY_PAIRS = 8 };

static bool
holds(const char *buf, size_t len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(buf + i, needle, n) == 0)
            return true;
    return false;
}

static int
proxy_upstream(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cli_redis.port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void *
proxy_run(void *arg)
{
    struct proxy *p = arg;
    int down[PROXY_PAIRS], up[PROXY_PAIRS];
    bool cutting[PROXY_PAIRS] = {false};
    int64_t deadline = test_mono_ms() + 60000;
    char buf[65536];

    for (int i = 0; i < PROXY_PAIRS; i++)
        down[i] = up[i] = -1;
    while (!p->stop && test_mono_ms() < deadline) {
        struct pollfd fds[1 + 2 * PROXY_PAIRS];
        int n = 0;
        fds[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        for (int i = 0; i < PROXY_PAIRS; i++) {
            fds[n++] = (struct pollfd){.fd = down[i], .events = POLLIN};
            fds[n++] = (struct pollfd){.fd = up[i], .events = POLLIN};
        }
        if (poll(fds, (nfds_t)n, 50) <= 0)
            continue;
        if (fds[0].revents & POLLIN) {
            int c = accept(p->listen_fd, NULL, NULL);
            int slot = -1;
            for (int i = 0; i < PROXY_PAIRS && slot < 0; i++)
                slot = down[i] < 0 ? i : -1;
            if (c >= 0 && slot >= 0 && (up[slot] = proxy_upstream()) >= 0)
                down[slot] = c;
            else if (c >= 0)
                close(c);
        }
        for (int i = 0; i < PROXY_PAIRS; i++) {
            for (int side = 0; side < 2 && down[i] >= 0; side++) {
                struct pollfd *f = &fds[1 + 2 * i + side];
                if (f->fd < 0 || !(f->revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                int from = side == 0 ? down[i] : up[i], to = side == 0 ? up[i] : down[i];
                ssize_t got = read(from, buf, sizeof buf - 1);
                bool drop_pair = got <= 0;
                if (got > 0 && side == 1 && cutting[i]) {
                    drop_pair = true; /* the reply of the cut command: never delivered */
                    p->cut = true;
                } else if (got > 0) {
                    buf[got] = '\0';
                    if (side == 0 && !p->cut && holds(buf, (size_t)got, p->needle) &&
                        ++p->seen == p->cut_at)
                        cutting[i] = true;
                    drop_pair = write(to, buf, (size_t)got) != got;
                }
                if (drop_pair) {
                    close(down[i]);
                    close(up[i]);
                    down[i] = up[i] = -1;
                    cutting[i] = false;
                }
            }
        }
    }
    for (int i = 0; i < PROXY_PAIRS; i++) {
        if (down[i] >= 0) {
            close(down[i]);
            close(up[i]);
        }
    }
    return NULL;
}

static void
proxy_start(struct proxy *p, const char *needle, int cut_at)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof a;

    memset(p, 0, sizeof *p);
    p->needle = needle;
    p->cut_at = cut_at;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(p->listen_fd >= 0);
    assert_int_equal(bind(p->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(p->listen_fd, 8), 0);
    assert_int_equal(getsockname(p->listen_fd, (struct sockaddr *)&a, &len), 0);
    p->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&p->thread, NULL, proxy_run, p), 0);
}

static void
proxy_stop(struct proxy *p)
{
    p->stop = true;
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}

/* @n failed tasks in @q, made through one library client. */
static void
lib_make_failed_many(const char *q, size_t n)
{
    dq_client *c = lib_open();
    dq_err e = {0};

    for (size_t i = 0; i < n; i++) {
        dq_enqueued en;
        if (dq_enqueue(c, q, NULL, "\x01", 1, &en, &e) != DQ_OK)
            fail_msg("dq_enqueue: %s", e.msg);
    }
    for (size_t left = n; left > 0;) {
        dq_claimed cl;
        if (dq_claim(c, q, DQ_CALL_MAX, 60000, WORKER, &cl, &e) != DQ_OK)
            fail_msg("dq_claim: %s", e.msg);
        assert_true(cl.n > 0);
        for (size_t i = 0; i < cl.n; i++)
            if (dq_fail(c, q, &cl.tasks[i], "down", "", &e) != DQ_OK)
                fail_msg("dq_fail: %s", e.msg);
        left -= cl.n;
        dq_claimed_free(&cl);
    }
    dq_client_free(c);
}

/* The reply to the last step of requeue --all / drop --all-failed is lost (the step ran):
 * the command reads the audit log back and reports what moved, not what answered. */
static void
bulk_reply_lost_is_read_back(void **state)
{
    struct result r = {0};
    struct proxy p;
    char q[96], url[64];

    (void)state;
    test_queue_name(q, sizeof q, "lostreply");
    lib_make_failed_many(q, 1500); /* two steps of 1000 */

    proxy_start(&p, "_requeue\r\n", 2);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", p.port);
    RUN(&r, "requeue", "--all", "-q", q, "--delay", "1h", "--url", url);
    proxy_stop(&p);
    assert_true(p.cut);
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 1500\n");
    assert_non_null(strstr(r.err, "the audit log shows it ran"));
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(json_find(r.out, "counters"), "requeued"), 1500);

    /* the same for drop, whose steps each log their own count */
    RUN(&r, "drop", "--all-failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    lib_make_failed_many(q, 1500);
    proxy_start(&p, "_drop\r\n", 2);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", p.port);
    RUN(&r, "drop", "--all-failed", "-q", q, "--url", url);
    proxy_stop(&p);
    ASSERT_EXIT(&r, 0);
    assert_true(p.cut);
    assert_string_equal(r.out, "dropped 1500\n");

    /* a first step lost: nothing names the bulk yet, so the count is "at least" */
    lib_make_failed_many(q, 10);
    proxy_start(&p, "_requeue\r\n", 1);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", p.port);
    RUN(&r, "requeue", "--all", "-q", q, "--url", url);
    proxy_stop(&p);
    ASSERT_EXIT(&r, 3);
    assert_non_null(strstr(r.err, "stopped after requeueing at least 0; the last step's "
                                  "outcome is unknown: see delayq audit -q "));
    result_free(&r);
}

static void
requeue_with_a_new_payload(void **state)
{
    struct result r = {0};
    char q[96], path[300];

    (void)state;
    test_queue_name(q, sizeof q, "fix");
    lib_make_failed(q, "inv", mp_total_old, sizeof mp_total_old - 1, "total does not add up", "");
    lib_make_failed(q, "inv2", mp_total_old, sizeof mp_total_old - 1, "total does not add up", "");
    lib_make_failed(q, "blob", "\xc1raw", 4, "bad bytes", "");

    /* show --json carries the history */
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, ",\"history\":[{\"attempt\":1,\"started_ms\":");
    ASSERT_HAS(r.out, ",\"worker\":\"" WORKER "\",\"outcome\":\"fail\",\"error\":\"total does not "
                      "add up\"}]}");

    /* invalid JSON: exit 2, and nothing changed */
    RUN(&r, "requeue", "inv", "-q", q, "--json", "{\"total\":");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "nothing changed");
    snprintf(path, sizeof path, "%s/fix-bad.json", cli_redis.dir);
    FILE *f = fopen(path, "w");
    fputs("{\"total\": 12.5", f);
    fclose(f);
    RUN(&r, "requeue", "inv", "-q", q, "--file", path);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--file: json: ");
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.50\"}");

    /* a payload JSON cannot show faithfully is refused */
    RUN(&r, "requeue", "blob", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "not msgpack: JSON cannot show it faithfully");
    ASSERT_HAS(r.err, "nothing changed");

    /* --json: replaced and requeued in one step; what changed is printed */
    RUN(&r, "requeue", "inv", "-q", q, "--json", "{\"total\":\"12.5\"}");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out,
               "payload 13 -> 12 bytes\n-   \"total\": \"12.50\"\n+   \"total\": \"12.5\"\n");
    ASSERT_HAS(r.out, "requeued 1 with the new payload\n");
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"scheduled\"");
    ASSERT_HAS(r.out, "\"attempt\":0,");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.5\"}");
    ASSERT_HAS(r.out, "\"outcome\":\"fail\""); /* the history survives the requeue */
    RUN(&r, "audit", "-q", q, "--limit", "1");
    ASSERT_HAS(r.out, "replace  inv old=sha1:");
    ASSERT_HAS(r.out, " new=sha1:");

    /* --file, the same (pretty JSON as an editor leaves it) */
    snprintf(path, sizeof path, "%s/fix-good.json", cli_redis.dir);
    f = fopen(path, "w");
    fputs("{\n  \"total\": \"12.5\"\n}\n", f);
    fclose(f);
    RUN(&r, "requeue", "inv2", "-q", q, "--file", path, "--delay", "1h");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "show", "inv2", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.5\"}");
    RUN(&r, "stats", "-q", q, "--json");
    assert_int_equal(json_int(r.out, "future"), 1);

    /* not failed any more: exit 1 */
    RUN(&r, "requeue", "inv", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not failed");
    /* usage */
    RUN(&r, "requeue", "inv", "inv2", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "--all", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

/* The task changes between the moment requeue reads it and the moment it replaces it:
 * --file names a fifo, which the command opens after it read the task; this process
 * fails the task again before it writes the new payload into the fifo. */
static void
requeue_refuses_a_task_changed_meanwhile(void **state)
{
    struct result r = {0};
    char q[96], path[300];

    (void)state;
    test_queue_name(q, sizeof q, "fix-race");
    lib_make_failed(q, "race", mp_total_old, sizeof mp_total_old - 1, "first", "");
    snprintf(path, sizeof path, "%s/fix-race.fifo", cli_redis.dir);
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* blocks until the command opens the fifo: it has read the task by then */
        int fd = open(path, O_WRONLY);
        dq_client *c = lib_open();
        const char *ids[] = {"race"};
        size_t moved;
        dq_claimed cl;
        dq_err e = {0};
        int ok = fd >= 0 && dq_requeue(c, q, ids, 1, 0, &moved, &e) == DQ_OK &&
                 dq_claim(c, q, 1, 60000, WORKER, &cl, &e) == DQ_OK && cl.n == 1;
        test_nap_ms(2); /* the next failure falls in another millisecond */
        ok = ok && dq_fail(c, q, &cl.tasks[0], "second", "", &e) == DQ_OK;
        ok = ok && write(fd, "{\"total\":\"1\"}", 13) == 13;
        close(fd);
        _exit(ok ? 0 : 1);
    }
    RUN(&r, "requeue", "race", "-q", q, "--file", path);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "changed since you opened it");
    RUN(&r, "show", "race", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"error\":\"second\"");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.50\"}");
    unlink(path);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requeue_drop_and_audit),
        cmocka_unit_test(requeue_all),
        cmocka_unit_test(bulk_reply_lost_is_read_back),
        cmocka_unit_test(requeue_with_a_new_payload),
        cmocka_unit_test(requeue_refuses_a_task_changed_meanwhile),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/requeue", tests, cli_group_setup, cli_group_teardown);
}
