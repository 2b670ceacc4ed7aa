/* SPDX-License-Identifier: MIT */
/*
 * cron.h: 5-field cron specs and the firing times of periodic schedules, in a time
 * zone (tz.h). Pure: no I/O, no libc time functions, no global state; a parsed spec is
 * a value, safe to share between threads.
 */
#ifndef DQ_LIB_CRON_H
#define DQ_LIB_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "delayq.h"
#include "lib/tz.h"

/* dq_cron_next looks this many years of local time past its start, no further. */
#define DQ_CRON_HORIZON_YEARS 50

/* A parsed spec: one bit per allowed value of each field. */
struct dq_cron {
    uint64_t minute; /* bits 0..59 */
    uint32_t hour;   /* bits 0..23 */
    uint32_t dom;    /* bits 1..31 */
    uint16_t month;  /* bits 1..12 */
    uint8_t dow;     /* bits 0..6, Sunday 0 (7 in the spec is Sunday too) */
    /* the field was written starting with '*' (Vixie cron's DOM_STAR / DOW_STAR): when
     * both day fields are restricted a day matches either, otherwise both */
    bool dom_star, dow_star;
};

/**
 * Parses `MIN HOUR DOM MON DOW` (fields separated by spaces or tabs): each field a
 * comma-separated list of `*`, `N`, `A-B`, `*\/S` or `A-B/S`; months JAN..DEC and
 * weekdays SUN..SAT by name in any case; weekday 0 and 7 are Sunday. Also @yearly
 * (@annually), @monthly, @weekly, @daily (@midnight) and @hourly.
 *
 * A spec that can never fire (`0 0 30 2 *`: no such day in that month) is refused.
 * Returns DQ_OK and fills *@out, or DQ_EINVAL with a message that names the field and
 * the limit ("cron: hour 24 is out of range 0-23").
 */
int dq_cron_parse(const char *spec, struct dq_cron *out, dq_err *err);

/**
 * The first firing strictly after @after_ms (0..DQ_TIME_MAX_MS), in *@out_ms, for @c in
 * the zone @z. A firing is a whole local minute the spec matches, at its first
 * occurrence when clocks are set back (an overlap fires once, at the earlier instant);
 * a matching local time that a gap skips fires once at the first valid minute after
 * the gap (02:30 on a spring-forward day in America/New_York fires at 03:00 EDT), and
 * several gap minutes fire as that one instant. Looks DQ_CRON_HORIZON_YEARS years
 * ahead at most (enough for a Feb 29 that must be a Monday); beyond that, or beyond
 * DQ_TIME_MAX_MS, returns DQ_ENOTFOUND. DQ_EINVAL for @after_ms out of range.
 */
int dq_cron_next(const struct dq_cron *c, const struct dq_tz *z, int64_t after_ms, int64_t *out_ms,
                 dq_err *err);

/**
 * The next @n firings after @after_ms, ascending, into @out_ms: dq_cron_next applied
 * @n times. Returns the number stored (fewer than @n when the horizon ends them), or
 * DQ_EINVAL.
 */
int dq_cron_next_n(const struct dq_cron *c, const struct dq_tz *z, int64_t after_ms, int n,
                   int64_t *out_ms, dq_err *err);

/**
 * For `--every`: the first of @anchor_ms + k * @every_ms (k >= 0) strictly after
 * @after_ms, in *@out_ms. @every_ms is 1..DQ_DUR_MAX_MS and @anchor_ms
 * 0..DQ_TIME_MAX_MS; DQ_ENOTFOUND when the result would pass DQ_TIME_MAX_MS.
 */
int dq_cron_every_next(int64_t anchor_ms, int64_t every_ms, int64_t after_ms, int64_t *out_ms,
                       dq_err *err);

#endif /* DQ_LIB_CRON_H */
