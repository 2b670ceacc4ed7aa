/* SPDX-License-Identifier: MIT */
/*
 * dur.c: duration and RFC 3339 parsing and formatting. Pure: no I/O, and no libc
 * time or ctype functions, so results do not depend on TZ or the locale. Calendar
 * arithmetic is done here on the proleptic Gregorian calendar (days from civil date
 * and back, after Howard Hinnant's public-domain algorithms).
 *
 * Inputs come from argv and config files, so every message quotes the input through
 * quote(): printable ASCII only, shortened, so a message stays one line.
 */
#include "dur.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/err.h"

#define MS_PER_S   INT64_C(1000)
#define MS_PER_MIN INT64_C(60000)
#define MS_PER_H   INT64_C(3600000)
#define MS_PER_DAY INT64_C(86400000)

/* Output characters of a quoted input, before "..." marks a cut. */
#define QUOTE_MAX 48

#define DUR_HINT  "(use 250ms, 30s, 5m, 2h, 7d)"
#define TIME_HINT "(use epoch milliseconds or RFC 3339 such as 2026-11-29T08:42:38Z)"

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool
is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * Copies @s into @dst (at least QUOTE_MAX + 8 bytes) for use inside double quotes:
 * printable ASCII stays, '"' and '\\' get a backslash, anything else becomes \xNN.
 * Longer inputs end in "...". Returns @dst.
 */
static const char *
quote(char *dst, size_t size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        size_t need = (c >= 0x20 && c < 0x7f) ? (c == '"' || c == '\\' ? 2 : 1) : 4;

        if (o + need > QUOTE_MAX || o + need + 4 > size) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        if (need == 4) {
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = hex[c >> 4];
            dst[o++] = hex[c & 0xf];
        } else {
            if (need == 2)
                dst[o++] = '\\';
            dst[o++] = (char)c;
        }
    }
    dst[o] = '\0';
    return dst;
}

static size_t
fmt_result(int n)
{
    return n < 0 ? 0 : (size_t)n;
}

/* ---- durations ------------------------------------------------------------------ */

/* Ordered smallest first: a duration's units must strictly decrease. */
static const struct {
    const char *name;
    int64_t ms;
} units[] = {
    {"ms", 1}, {"s", MS_PER_S}, {"m", MS_PER_MIN}, {"h", MS_PER_H}, {"d", MS_PER_DAY},
};

static int
unit_find(const char *u, size_t len)
{
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strlen(units[i].name) == len && memcmp(units[i].name, u, len) == 0)
            return (int)i;
    }
    return -1;
}

/*
 * Adds the fraction digits @f (@flen of them) of one @unit to *@ms. Returns false when
 * the fraction is not a whole number of milliseconds. Trailing zeros do not count. With
 * the last digit non-zero, 10^k divides f * unit only if 2^k or 5^k divides unit, and
 * no unit has a factor 2^11, so more than 10 significant digits can never be exact.
 */
static bool
frac_add(const char *f, size_t flen, int64_t unit, int64_t *ms)
{
    int64_t fv = 0, scale = 1;

    while (flen > 0 && f[flen - 1] == '0')
        flen--;
    if (flen > 10)
        return false;
    for (size_t i = 0; i < flen; i++) {
        fv = fv * 10 + (f[i] - '0');
        scale *= 10;
    }
    if (fv * unit % scale != 0) /* fv < 10^10 and unit <= 8.64e7: no overflow */
        return false;
    *ms += fv * unit / scale;
    return true;
}

int
dq_dur_parse(const char *s, const char *field, int64_t *out_ms, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    const char *p;
    int64_t total = 0;
    int prev = (int)(sizeof units / sizeof units[0]);
    int parts = 0;

    if (out_ms != NULL)
        *out_ms = 0;
    if (field == NULL)
        field = "duration";
    if (s == NULL)
        s = "";
    quote(q, sizeof q, s);

    if (strcmp(s, "0") == 0)
        return DQ_OK;
    if (s[0] == '\0')
        return dq_err_set(err, DQ_EINVAL, "%s: \"\" is not a duration " DUR_HINT, field);
    if (s[0] == '-')
        return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is negative; a duration is 0 or more", field,
                          q);

    for (p = s; *p != '\0'; parts++) {
        const char *fp = NULL, *up;
        size_t flen = 0, ulen;
        int64_t iv = 0, ms;
        int u;

        if (!is_digit(*p))
            return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is not a duration " DUR_HINT, field, q);
        for (; is_digit(*p); p++) {
            if (iv <= DQ_DUR_MAX_MS) /* keep scanning, but stop growing */
                iv = iv * 10 + (*p - '0');
        }
        if (*p == '.') {
            for (fp = ++p; is_digit(*p); p++)
                ;
            flen = (size_t)(p - fp);
            if (flen == 0)
                return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is not a duration " DUR_HINT, field,
                                  q);
        }
        for (up = p; is_alpha(*p); p++)
            ;
        ulen = (size_t)(p - up);
        if (ulen == 0) {
            if (*p == '\0')
                return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" has no unit " DUR_HINT, field, q);
            return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is not a duration " DUR_HINT, field, q);
        }
        u = unit_find(up, ulen);
        if (u < 0) {
            char uq[QUOTE_MAX + 8];
            char ubuf[QUOTE_MAX + 8];
            size_t n = ulen < sizeof ubuf - 1 ? ulen : sizeof ubuf - 1;

            memcpy(ubuf, up, n);
            ubuf[n] = '\0';
            return dq_err_set(err, DQ_EINVAL,
                              "%s: \"%s\" has unknown unit \"%s\" (use ms, s, m, h or d)", field, q,
                              quote(uq, sizeof uq, ubuf));
        }
        if (u >= prev)
            return dq_err_set(err, DQ_EINVAL,
                              "%s: \"%s\" repeats or misorders a unit (largest first, each "
                              "once, as in 1h30m)",
                              field, q);
        prev = u;
        if (fp != NULL && (parts > 0 || *p != '\0'))
            return dq_err_set(err, DQ_EINVAL,
                              "%s: \"%s\" has a fraction in a multi-unit duration (a fraction "
                              "is allowed alone, as in 1.5h)",
                              field, q);
        if (iv > DQ_DUR_MAX_MS / units[u].ms)
            goto too_long;
        ms = iv * units[u].ms;
        if (fp != NULL && !frac_add(fp, flen, units[u].ms, &ms))
            return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is not a whole number of milliseconds",
                              field, q);
        total += ms; /* both <= DQ_DUR_MAX_MS + 1 day: no overflow */
        if (total > DQ_DUR_MAX_MS)
            goto too_long;
    }
    if (out_ms != NULL)
        *out_ms = total;
    return DQ_OK;

too_long:
    return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is longer than 100 years (limit 36525d)", field,
                      q);
}

size_t
dq_dur_format(char *buf, size_t size, int64_t ms)
{
    const char *sign = ms < 0 ? "-" : "";
    uint64_t v = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    int n;

    if (v == 0) {
        n = snprintf(buf, size, "0s");
    } else if (v < 1000) {
        n = snprintf(buf, size, "%s%" PRIu64 "ms", sign, v);
    } else if (v < 60000) {
        uint64_t tenths = v / 100;

        if (tenths % 10 == 0)
            n = snprintf(buf, size, "%s%" PRIu64 "s", sign, tenths / 10);
        else
            n = snprintf(buf, size, "%s%" PRIu64 ".%" PRIu64 "s", sign, tenths / 10, tenths % 10);
    } else if (v < 3600000) {
        n = snprintf(buf, size, "%s%" PRIu64 "m%02" PRIu64 "s", sign, v / 60000, v / 1000 % 60);
    } else if (v < 86400000) {
        n = snprintf(buf, size, "%s%" PRIu64 "h%02" PRIu64 "m", sign, v / 3600000, v / 60000 % 60);
    } else {
        n = snprintf(buf, size, "%s%" PRIu64 "d%02" PRIu64 "h", sign, v / 86400000,
                     v / 3600000 % 24);
    }
    return fmt_result(n);
}

/* ---- calendar ------------------------------------------------------------------- */

static bool
is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int
dq_dur_month_days(int64_t y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

int64_t
dq_dur_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

    return era * 146097 + doe - 719468;
}

void
dq_dur_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;

    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* ---- points in time ------------------------------------------------------------- */

/* Reads exactly @n digits at *@p into *@v and advances. */
static bool
digits(const char **p, int n, int *v)
{
    int x = 0;

    for (int i = 0; i < n; i++) {
        if (!is_digit((*p)[i]))
            return false;
        x = x * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *v = x;
    return true;
}

static bool
expect(const char **p, char c)
{
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

static int
time_parse_epoch(const char *s, const char *field, const char *q, int64_t *out_ms, dq_err *err)
{
    int64_t v = 0;

    for (const char *p = s; *p != '\0'; p++) {
        v = v * 10 + (*p - '0');
        if (v > DQ_TIME_MAX_MS)
            return dq_err_set(err, DQ_EINVAL,
                              "%s: \"%s\" is after 9999-12-31T23:59:59.999Z, the latest time",
                              field, q);
    }
    *out_ms = v;
    return DQ_OK;
}

static int
time_parse_rfc3339(const char *s, const char *field, const char *q, int64_t *out_ms, dq_err *err)
{
    const char *p = s;
    int year, mon, day, hour, min, sec, oh = 0, om = 0, sign = 0, dim;
    int64_t frac_ms = 0, ms;

    if (!digits(&p, 4, &year) || !expect(&p, '-') || !digits(&p, 2, &mon) || !expect(&p, '-') ||
        !digits(&p, 2, &day))
        goto malformed;
    if (*p != 'T' && *p != 't' && *p != ' ')
        goto malformed;
    p++;
    if (!digits(&p, 2, &hour) || !expect(&p, ':') || !digits(&p, 2, &min) || !expect(&p, ':') ||
        !digits(&p, 2, &sec))
        goto malformed;
    if (*p == '.') {
        const char *f = ++p;
        size_t flen;

        while (is_digit(*p))
            p++;
        flen = (size_t)(p - f);
        if (flen == 0)
            goto malformed;
        if (flen > 9)
            return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" has a fraction of %zu digits; limit is 9",
                              field, q, flen);
        for (size_t i = 0; i < 3; i++)
            frac_ms = frac_ms * 10 + (i < flen ? f[i] - '0' : 0);
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p++ == '+' ? 1 : -1;
        if (!digits(&p, 2, &oh) || !expect(&p, ':') || !digits(&p, 2, &om))
            goto malformed;
    } else if (*p == '\0') {
        return dq_err_set(err, DQ_EINVAL,
                          "%s: \"%s\" has no time zone (end it with Z for UTC or an offset "
                          "such as +01:00)",
                          field, q);
    } else {
        goto malformed;
    }
    if (*p != '\0')
        goto malformed;

    if (year < 1970)
        return dq_err_set(err, DQ_EINVAL, "%s: year %d in \"%s\" is out of range 1970..9999", field,
                          year, q);
    if (mon < 1 || mon > 12)
        return dq_err_set(err, DQ_EINVAL, "%s: month %d in \"%s\" is out of range 1..12", field,
                          mon, q);
    dim = dq_dur_month_days(year, mon);
    if (day < 1 || day > dim)
        return dq_err_set(err, DQ_EINVAL,
                          "%s: day %d in \"%s\" is out of range 1..%d for %04d-%02d", field, day, q,
                          dim, year, mon);
    if (hour > 23)
        return dq_err_set(err, DQ_EINVAL, "%s: hour %d in \"%s\" is out of range 0..23", field,
                          hour, q);
    if (min > 59)
        return dq_err_set(err, DQ_EINVAL, "%s: minute %d in \"%s\" is out of range 0..59", field,
                          min, q);
    if (sec == 60)
        return dq_err_set(err, DQ_EINVAL,
                          "%s: second 60 in \"%s\" is a leap second, which is not supported "
                          "(use 59)",
                          field, q);
    if (sec > 59)
        return dq_err_set(err, DQ_EINVAL, "%s: second %d in \"%s\" is out of range 0..59", field,
                          sec, q);
    if (oh > 23)
        return dq_err_set(err, DQ_EINVAL, "%s: offset hour %d in \"%s\" is out of range 0..23",
                          field, oh, q);
    if (om > 59)
        return dq_err_set(err, DQ_EINVAL, "%s: offset minute %d in \"%s\" is out of range 0..59",
                          field, om, q);

    ms = dq_dur_days_from_civil(year, mon, day) * MS_PER_DAY + hour * MS_PER_H + min * MS_PER_MIN +
         sec * MS_PER_S + frac_ms;
    ms -= sign * (oh * MS_PER_H + om * MS_PER_MIN); /* local = UTC + offset */
    if (ms < 0)
        return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is before 1970-01-01T00:00:00Z", field, q);
    if (ms > DQ_TIME_MAX_MS)
        return dq_err_set(err, DQ_EINVAL,
                          "%s: \"%s\" is after 9999-12-31T23:59:59.999Z, the latest time", field,
                          q);
    *out_ms = ms;
    return DQ_OK;

malformed:
    return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is not a time " TIME_HINT, field, q);
}

int
dq_time_parse(const char *s, const char *field, int64_t *out_ms, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    int64_t ms = 0;
    const char *p;
    int rc;

    if (out_ms != NULL)
        *out_ms = 0;
    if (field == NULL)
        field = "time";
    if (s == NULL)
        s = "";
    quote(q, sizeof q, s);

    for (p = s; is_digit(*p); p++)
        ;
    if (*s == '\0')
        return dq_err_set(err, DQ_EINVAL, "%s: \"\" is not a time " TIME_HINT, field);
    if (*p == '\0')
        rc = time_parse_epoch(s, field, q, &ms, err);
    else
        rc = time_parse_rfc3339(s, field, q, &ms, err);
    if (rc == DQ_OK && out_ms != NULL)
        *out_ms = ms;
    return rc;
}

size_t
dq_time_format(char *buf, size_t size, int64_t ms)
{
    /* Floor division, so times before the epoch land on the right day. */
    int64_t days = ms / MS_PER_DAY;
    int64_t rem = ms % MS_PER_DAY;
    int64_t y;
    int m, d;

    if (rem < 0) {
        rem += MS_PER_DAY;
        days--;
    }
    dq_dur_civil_from_days(days, &y, &m, &d);
    return fmt_result(snprintf(buf, size, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d,
                               (int)(rem / MS_PER_H), (int)(rem / MS_PER_MIN % 60),
                               (int)(rem / MS_PER_S % 60), (int)(rem % MS_PER_S)));
}

/* ---- rates (queue limits) ----------------------------------------------------------- */

int
dq_rate_parse(const char *s, const char *field, int64_t *per_min, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    const char *p;
    int64_t n = 0, v;

    if (per_min != NULL)
        *per_min = 0;
    if (field == NULL)
        field = "rate";
    if (s == NULL)
        s = "";
    quote(q, sizeof q, s);
    for (p = s; is_digit(*p); p++) {
        if (n <= DQ_RATE_MAX_PER_MIN * 60) /* keep scanning, but stop growing */
            n = n * 10 + (*p - '0');
    }
    if (p == s)
        return dq_err_set(err, DQ_EINVAL,
                          "%s: \"%s\" is not a rate (a count and /s, /m or /h: 20/s, 1200/m; "
                          "a bare number is per second)",
                          field, q);
    if (*p == '\0' || strcmp(p, "/s") == 0) {
        v = n > DQ_RATE_MAX_PER_MIN ? DQ_RATE_MAX_PER_MIN + 1 : n * 60;
    } else if (strcmp(p, "/m") == 0 || strcmp(p, "/min") == 0) {
        v = n;
    } else if (strcmp(p, "/h") == 0) {
        if (n % 60 != 0)
            return dq_err_set(err, DQ_EINVAL,
                              "%s: \"%s\" is not a whole number a minute (rates are kept per "
                              "minute: use a multiple of 60/h, or /m)",
                              field, q);
        v = n / 60;
    } else {
        return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" has an unknown unit (use /s, /m or /h)",
                          field, q);
    }
    if (v > DQ_RATE_MAX_PER_MIN)
        return dq_err_set(err, DQ_EINVAL, "%s: \"%s\" is over the limit of %lld/m (10 million/s)",
                          field, q, (long long)DQ_RATE_MAX_PER_MIN);
    if (per_min != NULL)
        *per_min = v;
    return DQ_OK;
}

size_t
dq_rate_format(char *buf, size_t size, int64_t per_min)
{
    int n;

    if (per_min <= 0)
        n = snprintf(buf, size, "off");
    else if (per_min % 60 == 0)
        n = snprintf(buf, size, "%lld/s", (long long)(per_min / 60));
    else
        n = snprintf(buf, size, "%lld/m", (long long)per_min);
    return n < 0 ? 0 : (size_t)n;
}
