/* SPDX-License-Identifier: MIT */
/* wait.c: monotonic clock, deadline polling and per-test names for tests. */
#include "wait.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int64_t
test_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
test_nap_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int
test_slowdown(void)
{
    const char *v = getenv("DQ_VALGRIND");

    return v != NULL && v[0] != '\0' && v[0] != '0' ? 10 : 1;
}

bool
wait_until(bool (*ready)(void *), void *arg, int timeout_ms, const char *what)
{
    int64_t start = test_mono_ms();
    int64_t deadline = start + timeout_ms;

    for (;;) {
        if (ready(arg))
            return true;
        int64_t now = test_mono_ms();
        if (now >= deadline)
            break;
        int64_t left = deadline - now;
        test_nap_ms(left < 10 ? (int)left : 10);
    }
    fprintf(stderr, "wait_until: timed out after %d ms waiting for %s\n", timeout_ms,
            what != NULL ? what : "(unnamed condition)");
    return false;
}

const char *
test_queue_name(char *buf, size_t size, const char *name)
{
    if (size > 0)
        snprintf(buf, size, "t-%s-%ld", name, (long)getpid());
    return buf;
}
