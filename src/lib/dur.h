/* SPDX-License-Identifier: MIT */
/*
 * dur.h: durations ("1h30m", "1.5s") and points in time (epoch milliseconds or
 * RFC 3339) to and from int64_t milliseconds. Pure: no I/O, no libc time
 * functions, independent of locale and TZ.
 */
#ifndef DQ_LIB_DUR_H
#define DQ_LIB_DUR_H

#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

/* The longest duration accepted: 100 years of 365.25 days (36525d). */
#define DQ_DUR_MAX_MS INT64_C(3155760000000)

/* The latest time accepted: 9999-12-31T23:59:59.999Z. The earliest is the epoch, 0. */
#define DQ_TIME_MAX_MS INT64_C(253402300799999)

/* Buffer sizes that always hold dq_dur_format() and dq_time_format() output. */
#define DQ_DUR_BUFSZ  24
#define DQ_TIME_BUFSZ 40

/**
 * Parses a duration: a non-negative integer with a unit ms, s, m, h or d, or several
 * joined with the largest unit first and each unit at most once ("1h30m", "2m30s",
 * "1d12h"). "0" alone is accepted; whitespace, signs and upper-case units are not. A
 * fraction is allowed in a single-unit form ("1.5s" is 1500, "0.25h") when it is a whole
 * number of milliseconds. At most DQ_DUR_MAX_MS.
 *
 * On DQ_OK stores the value in *@out_ms (which may be NULL to only validate). Returns
 * DQ_EINVAL otherwise, leaving *@out_ms at 0, with a message that starts with @field
 * (e.g. "--delay"; NULL: "duration") and quotes the input, escaped and shortened.
 */
int dq_dur_parse(const char *s, const char *field, int64_t *out_ms, dq_err *err);

/**
 * Formats @ms for people, with snprintf semantics: returns the length needed (without
 * the NUL) and always NUL-terminates when @size > 0; @buf may be NULL when @size is 0.
 * Values are truncated, never rounded up: 0 is "0s"; under a second "250ms"; under a
 * minute "4.2s" (one decimal, ".0" dropped); under an hour "5m03s"; under a day "2h04m";
 * otherwise "3d02h". Negative values get a leading "-". DQ_DUR_BUFSZ always suffices.
 */
size_t dq_dur_format(char *buf, size_t size, int64_t ms);

/**
 * Parses a point in time: epoch milliseconds (digits only, 0..DQ_TIME_MAX_MS) or
 * RFC 3339, YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM). 't', 'z' and a space in
 * place of 'T' are accepted; the fraction has 1..9 digits and is truncated to
 * milliseconds. Fields are range-checked (the day against the month, leap years
 * included); a leap second (:60) is rejected; the year must be 1970..9999 and the
 * resulting instant must lie within 0..DQ_TIME_MAX_MS.
 *
 * On DQ_OK stores the value in *@out_ms (may be NULL). Returns DQ_EINVAL otherwise,
 * leaving *@out_ms at 0, with a message that starts with @field (NULL: "time").
 */
int dq_time_parse(const char *s, const char *field, int64_t *out_ms, dq_err *err);

/**
 * Formats @ms as RFC 3339 UTC with milliseconds, "2026-11-29T08:42:38.123Z", with
 * snprintf semantics (see dq_dur_format). Any int64_t is accepted; years outside
 * 0000..9999 print with more digits or a sign. DQ_TIME_BUFSZ always suffices.
 */
size_t dq_time_format(char *buf, size_t size, int64_t ms);

/* The largest rate accepted, tasks a minute (10 million a second). */
#define DQ_RATE_MAX_PER_MIN INT64_C(600000000)
/* A buffer that always holds dq_rate_format() output. */
#define DQ_RATE_BUFSZ 32

/**
 * Parses a rate (the queue limits' rate_limit, delayq throttle --rate): a non-negative
 * integer and a unit, "/s", "/m" (or "/min") or "/h"; a bare number is per second. "0"
 * is "off". Stored as tasks a minute, so "/h" must be a whole number a minute (120/h).
 * At most DQ_RATE_MAX_PER_MIN. On DQ_OK stores it in *@per_min (may be NULL); DQ_EINVAL
 * otherwise, with a message that starts with @field (NULL: "rate").
 */
int dq_rate_parse(const char *s, const char *field, int64_t *per_min, dq_err *err);

/**
 * Formats a rate of @per_min tasks a minute: "20/s" when it is whole per second, else
 * "30/m"; 0 is "off". snprintf semantics; DQ_RATE_BUFSZ always suffices.
 */
size_t dq_rate_format(char *buf, size_t size, int64_t per_min);

/*
 * The proleptic Gregorian calendar, shared with the cron and time zone code (cron.c,
 * tz.c). Days count from 1970-01-01 (day 0, a Thursday); @m is 1..12, @d 1..31.
 * Exact for any year whose day count fits in int64_t with room to spare (|y| < 2^50).
 */
int dq_dur_month_days(int64_t y, int m);                 /* 28..31 */
int64_t dq_dur_days_from_civil(int64_t y, int m, int d); /* a valid date */
void dq_dur_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

#endif /* DQ_LIB_DUR_H */
