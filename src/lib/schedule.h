/* SPDX-License-Identifier: MIT */
/*
 * schedule.h: the C side of periodic schedules (docs/PROTOCOL.md 5.30) that the public
 * dq_schedule_* functions are built on.
 */
#ifndef DQ_LIB_SCHEDULE_H
#define DQ_LIB_SCHEDULE_H

#include <stdint.h>

#include "delayq.h"

/**
 * The list a cron schedule keeps: its next @n (at most DQ_SCHEDULE_FIRES) firings after
 * @after_ms for @spec in zone @zone (NULL or "": UTC), ascending, into @out_ms, with the
 * DST rule of dq_cron_next (lib/cron.h). Returns how many, or DQ_EINVAL (bad spec or
 * zone, with the message naming it).
 */
int dq_schedule_fires(const char *spec, const char *zone, int64_t after_ms, int n, int64_t *out_ms,
                      dq_err *err);

#endif /* DQ_LIB_SCHEDULE_H */
