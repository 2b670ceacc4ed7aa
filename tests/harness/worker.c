/* SPDX-License-Identifier: MIT */
/*
 * worker.c: a dq_worker on a test's thread (harness/worker.h).
 */
#include "harness/worker.h"

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
