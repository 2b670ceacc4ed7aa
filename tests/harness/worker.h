/* SPDX-License-Identifier: MIT */
/*
 * worker.h: a library worker (dq_worker) run on its own thread inside a test, the one
 * runner the integ tests share. The test keeps the handle to stop it, join it and check
 * how dq_worker_run() returned.
 */
#ifndef DQ_HARNESS_WORKER_H
#define DQ_HARNESS_WORKER_H

#include <pthread.h>
#include <stdbool.h>

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

#endif /* DQ_HARNESS_WORKER_H */
