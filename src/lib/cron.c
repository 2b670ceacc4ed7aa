/* SPDX-License-Identifier: MIT */
/*
 * cron.c: 5-field cron specs and their firing times in a zone. Pure: no I/O and no
 * libc time functions; zones come from tz.c.
 *
 * dq_cron_next works on local wall time. g(L), the instant a matching local minute L
 * fires at, is its earliest UTC instant, or the end of the gap when clocks skip L. g
 * never decreases as L grows (in an overlap the earlier occurrence comes first, and
 * the later ones are never used), so the first firing after an instant A is g of the
 * first matching minute L at or after floor(local(A)) with g(L) > A: the search walks
 * matching minutes forward and stops at the first one past A. Only inside an overlap
 * can a matching minute map before A; an overlap lasts at most a day, so the walk is
 * bounded by CRON_STEPS_MAX, and the calendar search by DQ_CRON_HORIZON_YEARS.
 */
#include "cron.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/dur.h"
#include "lib/err.h"

/* A spec is a line typed by a person; nothing legitimate is longer. */
#define CRON_SPEC_MAX 256
/* Matching minutes looked at by one dq_cron_next: the first, plus an overlap's worth
 * (a day at most in real zones) of minutes that map before the start. */
#define CRON_STEPS_MAX 4096
/* dq_cron_next_n answers at most this many at once. */
#define CRON_NEXT_N_MAX 1000

enum { F_MIN, F_HOUR, F_DOM, F_MON, F_DOW, F_COUNT };

struct field {
    const char *name;
    int lo, hi;
    const char *const *names; /* names[i] is value lo + i (month) or i (weekday) */
    const char *hint;         /* shown with an unknown name */
};

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const dow_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

static const struct field fields[F_COUNT] = {
    {"minute", 0, 59, NULL, NULL},
    {"hour", 0, 23, NULL, NULL},
    {"day-of-month", 1, 31, NULL, NULL},
    {"month", 1, 12, month_names, "JAN-DEC"},
    {"day-of-week", 0, 7, dow_names, "SUN-SAT"},
};

static const struct {
    const char *name;
    const char *spec;
} macros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char
upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

static bool
is_alpha(char c)
{
    return upper(c) >= 'A' && upper(c) <= 'Z';
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t';
}

static int64_t
floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* "'x'" for a printable byte, "byte 0x1b" for any other, into @buf (16 bytes). */
static const char *
describe(char *buf, size_t size, char c)
{
    unsigned char u = (unsigned char)c;

    if (u > 0x20 && u < 0x7f)
        snprintf(buf, size, "'%c'", c);
    else
        snprintf(buf, size, "byte 0x%02x", u);
    return buf;
}

/* One value: digits or (month, weekday) a 3-letter name. Advances *@p. */
static int
parse_value(const char **p, const char *end, const struct field *f, int *out, dq_err *err)
{
    const char *s = *p;
    char what[16];

    if (s < end && is_digit(*s)) {
        long v = 0;
        const char *q = s;
        while (q < end && is_digit(*q)) {
            if (v < 100000)
                v = v * 10 + (*q - '0');
            q++;
        }
        if (v < f->lo || v > f->hi)
            return dq_err_set(err, DQ_EINVAL, "cron: %s %.*s%s is out of range %d-%d", f->name,
                              (int)(q - s > 10 ? 10 : q - s), s, q - s > 10 ? "..." : "", f->lo,
                              f->hi);
        *p = q;
        *out = (int)v;
        return DQ_OK;
    }
    if (s < end && is_alpha(*s) && f->names != NULL) {
        const char *q = s;
        while (q < end && is_alpha(*q))
            q++;
        size_t n = (size_t)(q - s);
        int count = f == &fields[F_MON] ? 12 : 7;
        for (int i = 0; n == 3 && i < count; i++) {
            if (upper(s[0]) == f->names[i][0] && upper(s[1]) == f->names[i][1] &&
                upper(s[2]) == f->names[i][2]) {
                *p = q;
                *out = f == &fields[F_MON] ? i + 1 : i;
                return DQ_OK;
            }
        }
        return dq_err_set(err, DQ_EINVAL, "cron: %s name \"%.*s\" is unknown (use %s)", f->name,
                          (int)(n > 10 ? 10 : n), s, f->hint);
    }
    if (s >= end)
        return dq_err_set(err, DQ_EINVAL, "cron: %s: a value is missing (use %d-%d)", f->name,
                          f->lo, f->hi);
    return dq_err_set(err, DQ_EINVAL, "cron: %s: unexpected %s (use %d-%d%s%s)", f->name,
                      describe(what, sizeof what, *s), f->lo, f->hi, f->hint ? " or " : "",
                      f->hint ? f->hint : "");
}

/* One comma-separated item of a field into *@bits. */
static int
parse_item(const char *s, const char *end, const struct field *f, uint64_t *bits, dq_err *err)
{
    const char *p = s;
    int a, b, step = 1, rc;
    bool range;
    char what[16];

    if (p == end)
        return dq_err_set(err, DQ_EINVAL, "cron: %s: empty list item", f->name);
    if (*p == '*') {
        p++;
        a = f->lo;
        b = f->hi;
        range = true;
    } else {
        if ((rc = parse_value(&p, end, f, &a, err)) != DQ_OK)
            return rc;
        b = a;
        range = false;
        if (p < end && *p == '-') {
            p++;
            if ((rc = parse_value(&p, end, f, &b, err)) != DQ_OK)
                return rc;
            if (b < a)
                return dq_err_set(err, DQ_EINVAL,
                                  "cron: %s range %d-%d goes backwards (use %d-%d,%d-%d)", f->name,
                                  a, b, a, f->hi, f->lo, b);
            range = true;
        }
    }
    if (p < end && *p == '/') {
        p++;
        if (!range)
            return dq_err_set(err, DQ_EINVAL, "cron: %s step needs a range or * (use %d-%d/N)",
                              f->name, a, f->hi);
        const char *q = p;
        long v = 0;
        while (q < end && is_digit(*q)) {
            if (v < 100000)
                v = v * 10 + (*q - '0');
            q++;
        }
        if (q == p)
            return dq_err_set(err, DQ_EINVAL, "cron: %s step: a number is missing (use 1-%d)",
                              f->name, f->hi);
        if (v < 1 || v > f->hi)
            return dq_err_set(err, DQ_EINVAL, "cron: %s step %.*s%s is out of range 1-%d", f->name,
                              (int)(q - p > 10 ? 10 : q - p), p, q - p > 10 ? "..." : "", f->hi);
        step = (int)v;
        p = q;
    }
    if (p != end)
        return dq_err_set(err, DQ_EINVAL, "cron: %s: unexpected %s", f->name,
                          describe(what, sizeof what, *p));
    for (int v = a; v <= b; v += step)
        *bits |= UINT64_C(1) << v;
    return DQ_OK;
}

static int
parse_field(const char *s, const char *end, int which, struct dq_cron *c, dq_err *err)
{
    const struct field *f = &fields[which];
    uint64_t bits = 0;
    int rc;

    for (const char *p = s;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma != NULL ? comma : end;
        if ((rc = parse_item(p, stop, f, &bits, err)) != DQ_OK)
            return rc;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    bool star = *s == '*';
    switch (which) {
    case F_MIN:
        c->minute = bits;
        break;
    case F_HOUR:
        c->hour = (uint32_t)bits;
        break;
    case F_DOM:
        c->dom = (uint32_t)bits;
        c->dom_star = star;
        break;
    case F_MON:
        c->month = (uint16_t)bits;
        break;
    default:
        c->dow = (uint8_t)((bits | bits >> 7) & 0x7f); /* 7 is Sunday too */
        c->dow_star = star;
        break;
    }
    return DQ_OK;
}

/* A spec whose days of month exist in none of its months, when they alone decide. */
static int
check_fires(const struct dq_cron *c, dq_err *err)
{
    static const int longest[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int first_dom = 1, longest_month = 0, month = 0;

    if (!c->dom_star && !c->dow_star)
        return DQ_OK; /* either day field matches, and every weekday comes */
    while (!(c->dom >> first_dom & 1))
        first_dom++;
    for (int m = 1; m <= 12; m++) {
        if ((c->month >> m & 1) && longest[m] > longest_month) {
            longest_month = longest[m];
            month = m;
        }
    }
    if (first_dom <= longest_month)
        return DQ_OK;
    if ((c->month & (c->month - 1)) == 0)
        return dq_err_set(err, DQ_EINVAL,
                          "cron: never fires: day-of-month %d does not occur in %s (%d days at "
                          "most)",
                          first_dom, month_names[month - 1], longest_month);
    return dq_err_set(err, DQ_EINVAL,
                      "cron: never fires: day-of-month %d does not occur in the months given (%d "
                      "days at most)",
                      first_dom, longest_month);
}

int
dq_cron_parse(const char *spec, struct dq_cron *out, dq_err *err)
{
    struct dq_cron c = {0};
    const char *p = spec, *end;
    size_t len = strlen(spec);
    int rc, n = 0;

    memset(out, 0, sizeof *out);
    if (len > CRON_SPEC_MAX)
        return dq_err_set(err, DQ_EINVAL, "cron: spec is %zu bytes (limit %d)", len, CRON_SPEC_MAX);
    while (is_space(*p))
        p++;
    end = spec + len;
    while (end > p && is_space(end[-1]))
        end--;
    if (p < end && *p == '@') {
        for (size_t i = 0; i < sizeof macros / sizeof macros[0]; i++) {
            size_t ml = strlen(macros[i].name);
            bool same = (size_t)(end - p) == ml;
            for (size_t k = 0; same && k < ml; k++)
                same = upper(p[k]) == upper(macros[i].name[k]);
            if (same)
                return dq_cron_parse(macros[i].spec, out, err);
        }
        return dq_err_set(err, DQ_EINVAL,
                          "cron: unknown macro (use @yearly, @monthly, @weekly, @daily, @hourly "
                          "or MIN HOUR DOM MON DOW)");
    }
    const char *f[F_COUNT + 1][2];
    while (p < end) {
        const char *q = p;
        while (q < end && !is_space(*q))
            q++;
        if (n <= F_COUNT) {
            f[n][0] = p;
            f[n][1] = q;
        }
        n++;
        p = q;
        while (p < end && is_space(*p))
            p++;
    }
    if (n != F_COUNT)
        return dq_err_set(err, DQ_EINVAL, "cron: expected 5 fields (MIN HOUR DOM MON DOW), got %d",
                          n);
    for (int i = 0; i < F_COUNT; i++) {
        if ((rc = parse_field(f[i][0], f[i][1], i, &c, err)) != DQ_OK)
            return rc;
    }
    if ((rc = check_fires(&c, err)) != DQ_OK)
        return rc;
    *out = c;
    return DQ_OK;
}

/* ---- firing times ----------------------------------------------------------------- */

/* The lowest set bit of @bits at or above @from, or -1. */
static int
next_bit(uint64_t bits, int from)
{
    if (from > 63)
        return -1;
    uint64_t m = bits & (~UINT64_C(0) << from);
    return m == 0 ? -1 : __builtin_ctzll(m);
}

static bool
day_matches(const struct dq_cron *c, int64_t y, int m, int d)
{
    int64_t days = dq_dur_days_from_civil(y, m, d) + 4; /* 1970-01-01 was a Thursday */
    int wd = (int)(days - floor_div(days, 7) * 7);
    bool dom = c->dom >> d & 1, dow = c->dow >> wd & 1;

    return c->dom_star || c->dow_star ? dom && dow : dom || dow;
}

/*
 * The first local minute at or after @l (minute-aligned local seconds) that @c matches,
 * in *@out; false once the search passes the end of year @ylim.
 */
static bool
next_match(const struct dq_cron *c, int64_t l, int64_t ylim, int64_t *out)
{
    int64_t days = floor_div(l, 86400), sec = l - days * 86400, y;
    int m, d, h = (int)(sec / 3600), mi = (int)(sec % 3600 / 60);

    dq_dur_civil_from_days(days, &y, &m, &d);
    /* each pass moves forward by at least a minute and at most 12 passes a year skip
     * months, so the year bound ends it */
    for (;;) {
        if (y > ylim)
            return false;
        if (!(c->month >> m & 1)) {
            int nm = next_bit(c->month, m + 1);
            if (nm < 0 || nm > 12) {
                y++;
                nm = next_bit(c->month, 1);
            }
            m = nm;
            d = 1;
            h = mi = 0;
            continue;
        }
        if (d > dq_dur_month_days(y, m) || !day_matches(c, y, m, d)) {
            if (++d > dq_dur_month_days(y, m)) {
                d = 1;
                if (++m > 12) {
                    m = 1;
                    y++;
                }
            }
            h = mi = 0;
            continue;
        }
        int nh = next_bit(c->hour, h);
        if (nh < 0) {
            h = mi = 0;
            if (++d > dq_dur_month_days(y, m)) {
                d = 1;
                if (++m > 12) {
                    m = 1;
                    y++;
                }
            }
            continue;
        }
        if (nh != h) {
            h = nh;
            mi = 0;
        }
        int nmi = next_bit(c->minute, mi);
        if (nmi < 0) {
            h++;
            mi = 0;
            if (h > 23) {
                h = 0;
                if (++d > dq_dur_month_days(y, m)) {
                    d = 1;
                    if (++m > 12) {
                        m = 1;
                        y++;
                    }
                }
            }
            continue;
        }
        *out = dq_dur_days_from_civil(y, m, d) * 86400 + h * 3600 + nmi * 60;
        return true;
    }
}

static const char *
time_text(char *buf, size_t size, int64_t ms)
{
    dq_time_format(buf, size, ms);
    return buf;
}

/* The instant local minute @l fires at: its first occurrence, or after a gap the first
 * whole local minute past it. */
static int64_t
fire_instant(const struct dq_tz *z, int64_t l)
{
    int64_t u[2], gap_end = 0;

    if (dq_tz_local_to_utc(z, l, u, &gap_end) > 0)
        return u[0];
    int64_t lg = gap_end + dq_tz_offset(z, gap_end, NULL);
    int64_t r = lg - floor_div(lg, 60) * 60;
    return r == 0 ? gap_end : gap_end + 60 - r;
}

int
dq_cron_next(const struct dq_cron *c, const struct dq_tz *z, int64_t after_ms, int64_t *out_ms,
             dq_err *err)
{
    *out_ms = 0;
    if (after_ms < 0 || after_ms > DQ_TIME_MAX_MS)
        return dq_err_set(err, DQ_EINVAL, "cron: start %" PRId64 " ms is out of range 0-%" PRId64,
                          after_ms, DQ_TIME_MAX_MS);
    int64_t a = after_ms / 1000; /* firings are whole seconds: t * 1000 > after_ms iff t > a */
    int64_t la = a + dq_tz_offset(z, a, NULL);
    int64_t l = floor_div(la, 60) * 60, y;
    int mo, d;
    char when[DQ_TIME_BUFSZ];

    dq_dur_civil_from_days(floor_div(la, 86400), &y, &mo, &d);
    for (int i = 0; i < CRON_STEPS_MAX; i++) {
        int64_t m;
        if (!next_match(c, l, y + DQ_CRON_HORIZON_YEARS, &m))
            break;
        int64_t t = fire_instant(z, m);
        if (t > a) {
            if (t > DQ_TIME_MAX_MS / 1000)
                return dq_err_set(err, DQ_ENOTFOUND,
                                  "cron: no firing after %s before the year 10000",
                                  time_text(when, sizeof when, after_ms));
            *out_ms = t * 1000;
            return DQ_OK;
        }
        l = m + 60;
    }
    return dq_err_set(err, DQ_ENOTFOUND, "cron: no firing within %d years after %s in %s",
                      DQ_CRON_HORIZON_YEARS, time_text(when, sizeof when, after_ms), dq_tz_name(z));
}

int
dq_cron_next_n(const struct dq_cron *c, const struct dq_tz *z, int64_t after_ms, int n,
               int64_t *out_ms, dq_err *err)
{
    if (n < 0 || n > CRON_NEXT_N_MAX)
        return dq_err_set(err, DQ_EINVAL, "cron: %d firings asked for (limit %d)", n,
                          CRON_NEXT_N_MAX);
    for (int i = 0; i < n; i++) {
        int rc = dq_cron_next(c, z, i == 0 ? after_ms : out_ms[i - 1], &out_ms[i], err);
        if (rc == DQ_ENOTFOUND)
            return i;
        if (rc != DQ_OK)
            return rc;
    }
    return n;
}

int
dq_cron_every_next(int64_t anchor_ms, int64_t every_ms, int64_t after_ms, int64_t *out_ms,
                   dq_err *err)
{
    *out_ms = 0;
    if (every_ms < 1 || every_ms > DQ_DUR_MAX_MS)
        return dq_err_set(err, DQ_EINVAL, "--every: %" PRId64 " ms is out of range 1-%" PRId64,
                          every_ms, DQ_DUR_MAX_MS);
    if (anchor_ms < 0 || anchor_ms > DQ_TIME_MAX_MS || after_ms < 0 || after_ms > DQ_TIME_MAX_MS)
        return dq_err_set(err, DQ_EINVAL,
                          "--every: anchor %" PRId64 " or start %" PRId64
                          " ms is out of range 0-%" PRId64,
                          anchor_ms, after_ms, DQ_TIME_MAX_MS);
    int64_t t = anchor_ms;
    if (after_ms >= anchor_ms)
        t = anchor_ms + ((after_ms - anchor_ms) / every_ms + 1) * every_ms;
    if (t > DQ_TIME_MAX_MS)
        return dq_err_set(err, DQ_ENOTFOUND, "--every: the next firing is past year 9999");
    *out_ms = t;
    return DQ_OK;
}
