/* SPDX-License-Identifier: MIT */
/* clock.h: the monotonic clock in milliseconds, for timeouts, backoff and refresh
 * timers (never for due times: those are Redis server time). Header-only. */
#ifndef DQ_LIB_CLOCK_H
#define DQ_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t
dq_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* DQ_LIB_CLOCK_H */
