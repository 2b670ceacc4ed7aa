/* SPDX-License-Identifier: MIT */
/*
 * fixture.h: per-test client and queue on the executable's private Redis. Each test
 * gets its own queue name, so no test depends on another's leftovers.
 */
#ifndef DQ_HARNESS_FIXTURE_H
#define DQ_HARNESS_FIXTURE_H

#include "harness/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "harness/redis.h"
#include "harness/wait.h"

struct fixture {
    struct test_redis *redis;
    dq_client *c;
    char queue[96];
    dq_err err;
};

static inline int
fixture_group_setup(void **state)
{
    static struct test_redis redis;
    int rc = test_redis_start(&redis, NULL);

    if (rc == TEST_REDIS_SKIP)
        exit(77);
    if (rc != 0)
        return -1;
    *state = &redis;
    return 0;
}

static inline int
fixture_group_teardown(void **state)
{
    test_redis_stop(*state);
    return 0;
}

static inline void
fixture_open(struct fixture *f, void **state, const char *name)
{
    dq_client_opts o = {.who = "tester"};

    memset(f, 0, sizeof *f);
    f->redis = *state;
    test_queue_name(f->queue, sizeof f->queue, name);
    if (dq_client_open(f->redis->url, &o, &f->c, &f->err) != DQ_OK)
        fail_msg("dq_client_open: %s", f->err.msg);
}

static inline void
fixture_close(struct fixture *f)
{
    dq_client_free(f->c);
    f->c = NULL;
}

/* Asserts a call returned DQ_OK, printing the error message if not. */
#define ASSERT_OK(f, call)                                                                         \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != DQ_OK)                                                                          \
            fail_msg("%s -> %s: %s", #call, dq_strerror(rc_), (f)->err.msg);                       \
    } while (0)

static inline void
enqueue_str(struct fixture *f, const char *payload, int64_t delay_ms, const char *id,
            dq_enqueued *out)
{
    dq_enqueue_opts o = {.delay_ms = delay_ms, .id = id};
    dq_enqueued tmp;

    ASSERT_OK(f,
              dq_enqueue(f->c, f->queue, &o, payload, strlen(payload), out ? out : &tmp, &f->err));
}

/* Runs a raw Redis command on the fixture's server (test-only pokes). */
static inline long long
redis_int(struct fixture *f, int argc, const char **argv)
{
    return test_redis_int(f->redis, argc, argv);
}

/* The calls of every command the fixture's server has counted (INFO commandstats, which
 * counts itself from the next INFO on); fails the test when INFO fails. For what an idle
 * worker sends. */
static inline long long
redis_calls_total(struct fixture *f)
{
    const char *argv[] = {"INFO", "commandstats"};
    redisReply *rep = test_redis_cmd(f->redis, 2, argv);
    long long sum = 0;

    assert_non_null(rep);
    for (const char *p = rep->str; (p = strstr(p, "calls=")) != NULL; p += 6)
        sum += atoll(p + 6);
    freeReplyObject(rep);
    return sum;
}

#endif /* DQ_HARNESS_FIXTURE_H */
