/* SPDX-License-Identifier: MIT */
/*
 * monitor.h: what a test's Redis was asked, through MONITOR: for checking that a queue of
 * one partition sends the calls it sent before (integ.parts_errors, integ.parts_views).
 */
#ifndef DQ_HARNESS_MONITOR_H
#define DQ_HARNESS_MONITOR_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "harness/redis.h"

/* A MONITOR connection to @srv; every later read times out after 10 s (its deadline).
 * Fails the test when it cannot connect. */
redisContext *test_monitor_open(struct test_redis *srv);

/* What @mon saw up to now, one command a line, into @log (@size bytes, cut there);
 * closes @mon. Fails the test when its end marker does not come within the deadline. */
void test_monitor_collect(struct test_redis *srv, redisContext *mon, char *log, size_t size);

/*
 * The lines of @log that call script @script by FCALL or FCALL_RO (the library's function
 * names end in "_<script>"; EVALSHA lines name a hash, so callers skip that path). With
 * @must_end, each such line must end with it (the test fails otherwise): the argument a
 * queue of one partition's call ends with.
 */
size_t test_monitor_fcalls(const char *log, const char *script, const char *must_end);

#endif /* DQ_HARNESS_MONITOR_H */
