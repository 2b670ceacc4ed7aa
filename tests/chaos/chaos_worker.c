/* SPDX-License-Identifier: MIT */
/*
 * chaos_worker.c: a worker process for the chaos tests, on the public dq_worker_* API
 * only. A process per task (delayq work) cannot keep up with a thousand tasks a second
 * on two cores; this one runs handlers on threads.
 *
 *   chaos_worker URL QUEUE DIR LEASE_MS CONCURRENCY COMMAND_TIMEOUT_MS
 *
 * The handler appends one line per run to DIR/runs.PID, in one write(2) each, so a
 * SIGKILL can cut at most the last line short:
 *
 *   run ID ATTEMPT CLAIMED_MS WALL_MS PID   when the handler starts (CLAIMED_MS is the
 *                                          server time of the claim)
 *   end ID ATTEMPT WALL_MS PID              when a "hold" handler returns
 *
 * The worker's log goes to DIR/log.PID as "WALL_MS logfmt-line". The payload says what
 * the handler does: "ok MS" (sleep MS, done), "fail MS" (failed for good), "retry MS"
 * (retry on the first attempt, then done), "hold" (wait until DIR/gate exists, then
 * done). SIGTERM or SIGINT stops the worker (1 s grace); exit status 0 after a clean
 * stop. While Redis cannot be reached at start, it tries again every 100 ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "delayq.h"

static dq_worker *the_worker;
static volatile sig_atomic_t stop_asked;
static int runs_fd = -1, log_fd = -1;
static char gate[512];

static int64_t
wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* One line, one write: O_APPEND keeps lines whole; a short write is a dying process. */
static void
put_line(int fd, const char *line, size_t len)
{
    if (write(fd, line, len) != (ssize_t)len) {
        /* nothing useful to do: the reader ignores a line without its newline */
    }
}

static void
on_log(int level, const char *line, void *arg)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "%lld %s\n", (long long)wall_ms(), line);

    if (n > 0)
        put_line(log_fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void
handle(const dq_task *t, dq_result *res, void *arg)
{
    char line[512], kind[16] = "";
    long ms = 0;
    int n;

    n = snprintf(line, sizeof line, "run %s %u %lld %lld %ld\n", t->id, t->attempt + 1,
                 (long long)t->claimed_ms, (long long)wall_ms(), (long)getpid());
    put_line(runs_fd, line, (size_t)n);
    if (t->payload_len < sizeof line) {
        memcpy(line, t->payload, t->payload_len);
        line[t->payload_len] = '\0';
        if (sscanf(line, "%15s %ld", kind, &ms) < 1)
            kind[0] = '\0';
    }
    if (strcmp(kind, "hold") == 0) {
        /* the test opens the gate during an outage; a 10-minute cap so a failed test
         * cannot leave this thread waiting forever */
        struct stat st;
        for (int i = 0; i < 120000 && stat(gate, &st) != 0; i++)
            nap_ms(5);
        n = snprintf(line, sizeof line, "end %s %u %lld %ld\n", t->id, t->attempt + 1,
                     (long long)wall_ms(), (long)getpid());
        put_line(runs_fd, line, (size_t)n);
        return;
    }
    if (ms > 0)
        nap_ms(ms);
    if (strcmp(kind, "fail") == 0) {
        res->outcome = DQ_FAILED;
        snprintf(res->message, sizeof res->message, "told to fail");
    } else if (strcmp(kind, "retry") == 0 && t->attempt == 0) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "told to retry once");
    } else if (strcmp(kind, "ok") != 0 && strcmp(kind, "retry") != 0) {
        res->outcome = DQ_FAILED;
        snprintf(res->message, sizeof res->message, "unknown payload");
    }
}

static void
on_signal(int sig)
{
    stop_asked = 1;
    if (the_worker != NULL)
        dq_worker_stop(the_worker, false);
}

static int
open_out(const char *dir, const char *name)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s.%ld", dir, name, (long)getpid());
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

int
main(int argc, char **argv)
{
    dq_worker_opts o = {.grace_ms = 1000, .log = on_log, .log_level = DQ_LOG_INFO};
    dq_client_opts co = {0};
    struct sigaction sa;
    dq_err err = {0};
    int rc;

    if (argc != 7) {
        fprintf(stderr, "usage: chaos_worker URL QUEUE DIR LEASE_MS CONCURRENCY TIMEOUT_MS\n");
        return 2;
    }
    o.lease_ms = atoll(argv[4]);
    o.concurrency = (unsigned)atoi(argv[5]);
    co.connect_timeout_ms = co.command_timeout_ms = atoi(argv[6]);
    snprintf(gate, sizeof gate, "%s/gate", argv[3]);
    runs_fd = open_out(argv[3], "runs");
    log_fd = open_out(argv[3], "log");
    if (runs_fd < 0 || log_fd < 0) {
        perror("chaos_worker: open");
        return 1;
    }
    if (dq_worker_new(argv[1], &co, argv[2], &o, handle, NULL, &the_worker, &err) != DQ_OK) {
        fprintf(stderr, "chaos_worker: %s\n", err.msg);
        return 1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* dq_worker_run connects first and returns when Redis is unreachable: a worker
     * restarted during an outage keeps trying, as a supervisor would restart it */
    for (;;) {
        rc = dq_worker_run(the_worker, &err);
        if ((rc != DQ_ECONN && rc != DQ_ETIMEOUT) || stop_asked)
            break;
        nap_ms(100);
    }
    sa.sa_handler = SIG_DFL;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    dq_worker_free(the_worker);
    close(runs_fd);
    close(log_fd);
    if (rc != DQ_OK && !(stop_asked && (rc == DQ_ECONN || rc == DQ_ETIMEOUT))) {
        fprintf(stderr, "chaos_worker: %s\n", err.msg);
        return 1;
    }
    return 0;
}
