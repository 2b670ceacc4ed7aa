/* SPDX-License-Identifier: MIT */
/*
 * tz.h: time zones from the system's zoneinfo (TZif files, tzfile(5) / RFC 9636) and
 * POSIX TZ strings, read by hand so that any number of zones can be used at once from
 * any thread: glibc reads another zone only through the process-global TZ variable
 * (setenv + tzset), which is neither thread-safe nor cheap. No libc time functions.
 * Instants are int64_t seconds since the epoch (UTC); local wall times are seconds
 * since 1970-01-01T00:00 on the local clock.
 */
#ifndef DQ_LIB_TZ_H
#define DQ_LIB_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

/* A zone's name: at most this many bytes of [A-Za-z0-9/_+-]. */
#define DQ_TZ_NAME_MAX 64
/* A TZif file larger than this is refused (the largest real one is under 4 KiB). */
#define DQ_TZ_FILE_MAX (256 * 1024)
/* UTC offsets beyond +-25 h are refused in both TZif data and TZ strings. */
#define DQ_TZ_OFFSET_MAX (25 * 3600)

/* A loaded zone. Immutable once made, so one zone may be read from many threads. */
struct dq_tz;

/**
 * Loads the zone @name ("Europe/Berlin") from $TZDIR or /usr/share/zoneinfo. "UTC" and
 * "Etc/UTC" need no file. Names that are empty, longer than DQ_TZ_NAME_MAX, absolute,
 * hold "..", or hold a byte outside [A-Za-z0-9/_+-] are refused before any file is
 * opened. Zones with leap-second records (the right/ tree) are refused.
 *
 * On DQ_OK stores a new zone in *@out (free it with dq_tz_free). Otherwise *@out is NULL
 * and the code is DQ_EINVAL (bad name, no such zone, malformed file) or DQ_ENOMEM.
 */
int dq_tz_load(const char *name, struct dq_tz **out, dq_err *err);

/**
 * Parses @len bytes of TZif data (versions 1 to 4: the 64-bit body and the footer's TZ
 * string when the version is 2 or later) as the zone @name (used in messages and by
 * dq_tz_name; NULL: "zone"). Every count, index and offset is checked; the data is
 * untrusted. Returns as dq_tz_load.
 */
int dq_tz_from_tzif(const unsigned char *data, size_t len, const char *name, struct dq_tz **out,
                    dq_err *err);

/**
 * Parses a POSIX TZ string, `std offset [dst [offset] [,start[/time],end[/time]]]`, with
 * names alphabetic or <quoted>, offsets [+-]hh[:mm[:ss]] (hours 0..24, positive west of
 * Greenwich, as POSIX has it), dates Mm.w.d, Jn and n, and times of -167..167 hours
 * (TZif version 3). A dst without a rule follows the US rule, M3.2.0,M11.1.0, as glibc
 * does. The zone has no transitions: the rule decides every instant. Returns as
 * dq_tz_load.
 */
int dq_tz_from_posix(const char *s, struct dq_tz **out, dq_err *err);

void dq_tz_free(struct dq_tz *z);

/* The name the zone was loaded under (borrowed; lives as long as @z). */
const char *dq_tz_name(const struct dq_tz *z);

/**
 * The offset from UTC, in seconds east (New York in winter: -18000), in effect at the
 * instant @utc_s, and in *@is_dst (may be NULL) whether it is daylight saving time.
 * Before the first transition the zone's first type applies (RFC 9636); from the last
 * transition on, the footer's rule when there is one. Instants are clamped to
 * +-2^40 s (about 35 000 years).
 */
int32_t dq_tz_offset(const struct dq_tz *z, int64_t utc_s, bool *is_dst);

/**
 * The instants whose local wall time is @local_s, earliest first, in @utc_s: returns 0
 * when @local_s falls in a gap (clocks jumped over it), 1, or 2 in an overlap (clocks
 * were set back). On 0, *@gap_end_s (may be NULL) is the instant the gap ends, the
 * first one whose local time is past @local_s. Data that would give more than two (no
 * real zone does) gives the earliest two.
 */
int dq_tz_local_to_utc(const struct dq_tz *z, int64_t local_s, int64_t utc_s[2],
                       int64_t *gap_end_s);

#endif /* DQ_LIB_TZ_H */
