/* SPDX-License-Identifier: MIT */
/*
 * wait.h: deadline polling for tests. A test never sleeps and hopes; it names the
 * condition it waits for and how long it is willing to wait.
 */
#ifndef DQ_HARNESS_WAIT_H
#define DQ_HARNESS_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
int64_t test_mono_ms(void);

/* Sleeps @ms milliseconds, resuming after signals. Only for use inside
 * wait_until-style polls that have a deadline; never as a bare sleep in a test. */
void test_nap_ms(int ms);

/*
 * Polls @ready(@arg) every 10 ms until it returns true or @timeout_ms passes.
 * @ready is always called at least once, and once more at the deadline. On
 * timeout prints "wait_until: timed out after N ms waiting for <what>" to
 * stderr and returns false.
 */
bool wait_until(bool (*ready)(void *), void *arg, int timeout_ms, const char *what);

/*
 * How many times slower than native this test process runs: 10 under the valgrind test
 * setup (which sets DQ_VALGRIND), else 1. Scales only margins that stand for the test's
 * own speed ("enqueue 300 tasks before this due time", "let the in-process worker make
 * its first claim"), never a bound the test asserts about delayq.
 */
int test_slowdown(void);

/* Writes the queue name "t-<name>-<pid>" into @buf (@size bytes, truncated and
 * always NUL-terminated) and returns @buf. */
const char *test_queue_name(char *buf, size_t size, const char *name);

#endif /* DQ_HARNESS_WAIT_H */
