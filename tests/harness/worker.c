/* SPDX-License-Identifier: MIT */
/*
 * worker.c: a dq_worker on a test's thread, `delayq work` as a child process, and the
 * server's clock for handlers (harness/worker.h).
 */
#include "harness/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void *
run_thread(void *arg)
{
    struct test_worker *r = arg;

    r->rc = dq_worker_run(r->w, &r->err);
    return NULL;
}

void
test_worker_start(struct test_worker *r, struct fixture *f, const dq_client_opts *copts,
                  const dq_worker_opts *o, dq_handler_fn handler, void *arg)
{
    memset(r, 0, sizeof *r);
    ASSERT_OK(f, dq_worker_new(f->redis->url, copts, f->queue, o, handler, arg, &r->w, &f->err));
    test_worker_run(r);
}

void
test_worker_run(struct test_worker *r)
{
    assert_int_equal(pthread_create(&r->th, NULL, run_thread, r), 0);
}

void
test_worker_join(struct test_worker *r)
{
    pthread_join(r->th, NULL);
    if (r->rc != DQ_OK)
        fail_msg("dq_worker_run: %s", r->err.msg);
    dq_worker_free(r->w);
    r->w = NULL;
}

void
test_worker_stop(struct test_worker *r, bool now)
{
    dq_worker_stop(r->w, now);
    test_worker_join(r);
}

/* ---- `delayq work` as a child process --------------------------------------------- */

/* Started and not yet reaped by test_work_stop(); a slot is 0 when free. */
static pid_t work_pids[16];

pid_t
test_work_start(const char *const *argv, const char *log)
{
    const char *bin = getenv("DELAYQ_BIN");
    char *av[64];
    size_t n = 0;
    pid_t pid;

    if (bin == NULL || bin[0] == '\0')
        fail_msg("DELAYQ_BIN must name the delayq binary");
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);

        if (in >= 0)
            dup2(in, 0);
        if (log != NULL) {
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (fd >= 0)
                dup2(fd, 2);
        }
        /* the child owns copies: execv wants char *, the arguments are const */
        av[n++] = strdup(bin);
        av[n++] = strdup("work");
        for (size_t i = 0; argv[i] != NULL && n + 1 < sizeof av / sizeof av[0]; i++)
            av[n++] = strdup(argv[i]);
        av[n] = NULL;
        signal(SIGPIPE, SIG_DFL);
        execv(bin, av);
        _exit(127);
    }
    for (size_t i = 0; i < sizeof work_pids / sizeof work_pids[0]; i++) {
        if (work_pids[i] == 0) {
            work_pids[i] = pid;
            break;
        }
    }
    return pid;
}

static void
forget(pid_t pid)
{
    for (size_t i = 0; i < sizeof work_pids / sizeof work_pids[0]; i++) {
        if (work_pids[i] == pid)
            work_pids[i] = 0;
    }
}

int
test_work_stop(pid_t pid, int sig)
{
    int status = 0;
    int64_t deadline = test_mono_ms() + 15000;

    if (sig != 0)
        kill(pid, sig);
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            fail_msg("waitpid %d: %s", (int)pid, strerror(errno));
        if (test_mono_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            forget(pid);
            fail_msg("worker %d did not exit within 15 s of signal %d", (int)pid, sig);
        }
        test_nap_ms(10);
    }
    forget(pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void
test_work_reap_all(void)
{
    for (size_t i = 0; i < sizeof work_pids / sizeof work_pids[0]; i++) {
        if (work_pids[i] > 0 && kill(work_pids[i], SIGKILL) == 0)
            waitpid(work_pids[i], NULL, 0);
        work_pids[i] = 0;
    }
}

/* ---- the server's clock, read inside handlers -------------------------------------- */

static pthread_mutex_t time_mu = PTHREAD_MUTEX_INITIALIZER;
static redisContext *time_pool[64];
static int time_n, time_port;

int64_t
test_server_time_us(void)
{
    struct timeval tv = {1, 0};
    redisContext *c = NULL;
    redisReply *r = NULL;
    int64_t us = -1;

    pthread_mutex_lock(&time_mu);
    if (time_n > 0)
        c = time_pool[--time_n];
    pthread_mutex_unlock(&time_mu);
    if (c == NULL && (c = redisConnectWithTimeout("127.0.0.1", time_port, tv)) != NULL)
        redisSetTimeout(c, tv);
    if (c != NULL && c->err == 0)
        r = redisCommand(c, "TIME");
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        us = atoll(r->element[0]->str) * 1000000 + atoll(r->element[1]->str);
    freeReplyObject(r);
    pthread_mutex_lock(&time_mu);
    if (us >= 0 && time_n < 64)
        time_pool[time_n++] = c;
    else
        redisFree(c);
    pthread_mutex_unlock(&time_mu);
    return us;
}

int
test_worker_group_setup(void **state)
{
    int rc = fixture_group_setup(state);

    time_port = rc == 0 ? ((struct test_redis *)*state)->port : 0;
    return rc;
}

int
test_worker_group_teardown(void **state)
{
    while (time_n > 0)
        redisFree(time_pool[--time_n]);
    return fixture_group_teardown(state);
}
