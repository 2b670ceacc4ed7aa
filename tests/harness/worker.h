/* SPDX-License-Identifier: MIT */
/*
 * worker.h: the workers a test runs, one runner for each kind the tests share: a library
 * worker (dq_worker) on its own thread, whose handle the test keeps to stop it, join it
 * and check how dq_worker_run() returned; and `delayq work` as a child process, stopped
 * by its PID with a deadline. Also the server's clock, as handlers read it.
 */
#ifndef DQ_HARNESS_WORKER_H
#define DQ_HARNESS_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "delayq.h"
#include "harness/fixture.h"

struct test_worker {
    dq_worker *w;
    pthread_t th;
    int rc; /* dq_worker_run()'s return, valid after the join */
    dq_err err;
};

/* Creates a worker for @f's queue on @f's server (@copts may be NULL) and runs it on a
 * new thread; fails the test when either step fails. */
void test_worker_start(struct test_worker *r, struct fixture *f, const dq_client_opts *copts,
                       const dq_worker_opts *o, dq_handler_fn handler, void *arg);

/* Runs r->w, made by the caller with dq_worker_new() into a zeroed @r, on a new thread. */
void test_worker_run(struct test_worker *r);

/* Waits for the thread of a worker already asked to stop, fails the test unless
 * dq_worker_run() returned DQ_OK, and frees the worker. */
void test_worker_join(struct test_worker *r);

/* dq_worker_stop(@now), then test_worker_join(). */
void test_worker_stop(struct test_worker *r, bool now);

/* ---- `delayq work` as a child process ------------------------------------------- */

/*
 * Starts $DELAYQ_BIN work @argv... (NULL-terminated, the arguments after "work") with
 * stdin from /dev/null and stderr appended to @log (NULL: the test's own), SIGPIPE at
 * its default. Remembered until test_work_reap_all(); fails the test if it cannot fork.
 */
pid_t test_work_start(const char *const *argv, const char *log);

/* Sends @sig (0: none) and waits up to 15 s for @pid to exit: its exit status, or
 * 128 + the signal that ended it. After 15 s it is killed and the test fails. */
int test_work_stop(pid_t pid, int sig);

/* SIGKILL and reap every worker test_work_start() started that is still running: for a
 * teardown, so a failed assertion leaves no worker behind. */
void test_work_reap_all(void);

/* ---- the server's clock, read inside handlers -------------------------------------- */

/* A worker test's group setup: fixture_group_setup() (the executable's private Redis in
 * *@state), and test_server_time_us() set to read that server's clock. */
int test_worker_group_setup(void **state);

/* Closes test_server_time_us()'s connections, then fixture_group_teardown(). */
int test_worker_group_teardown(void **state);

/*
 * The TIME of the server test_worker_group_setup() started, in us; -1 when it could not
 * be read. Over connections of its own, a pool of one per handler running at once (up to
 * 64) kept for the run, so a handler can judge "early" by the server's clock at its start,
 * not by anything the worker reports. Thread-safe.
 */
int64_t test_server_time_us(void);

#endif /* DQ_HARNESS_WORKER_H */
