/* SPDX-License-Identifier: MIT */
/*
 * tz.c: TZif files and POSIX TZ strings, parsed by hand. glibc can evaluate another
 * zone only by changing the process-global TZ (setenv + tzset), which races with every
 * other thread's localtime and mktime; a schedule engine serving many zones at once
 * needs zones as values, so this file reads zoneinfo itself and uses no libc time
 * function. A loaded zone is immutable, hence safe to share between threads.
 *
 * The data is untrusted (a file, or a fuzzer): every count is checked against the
 * bytes present before anything is read, transitions must ascend, type indices and
 * offsets are range-checked, and every loop is bounded by the data's size or by a
 * constant. Evaluating a zone agrees with glibc's localtime_r on real zoneinfo
 * (tests/unit/test_tz.c checks it for thousands of instants in ~20 zones).
 */
#include "tz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/dur.h"
#include "lib/err.h"

#define TZ_DEFAULT_DIR "/usr/share/zoneinfo"
/* Instants (and local times) are clamped to +-2^40 s so calendar arithmetic cannot
 * overflow; that is +-35 000 years. */
#define TZ_T_MAX (INT64_C(1) << 40)
/* POSIX names: 3 bytes at least (POSIX); zic never writes more than a handful. */
#define TZ_ABBR_MIN 3
#define TZ_ABBR_MAX 32
/* Candidate transitions looked at around one local time (local_to_utc). Real zones
 * have at most two in any 50-hour window; extra ones only cost accuracy on junk data. */
#define TZ_WINDOW_MAX 32

struct tz_type {
    int32_t utoff; /* seconds east of UTC */
    bool isdst;
};

/* One end of a DST period in a POSIX rule: the day it falls on and the local time. */
struct rule_date {
    char kind;      /* 'J': Jn, 1..365 without Feb 29; 'D': n, 0..365; 'M': Mm.w.d */
    int n;          /* J, D */
    int m, w, d;    /* M: month 1..12, week 1..5 (5 = last), weekday 0..6 (Sunday 0) */
    int32_t time_s; /* local time of day, -167 h..167 h; default 02:00 */
};

struct rule {
    int32_t std_off; /* seconds east */
    int32_t dst_off;
    bool has_dst;
    struct rule_date start, end; /* start in standard time, end in DST, as POSIX says */
};

struct dq_tz {
    char name[DQ_TZ_NAME_MAX + 1];
    size_t ntrans;
    int64_t *trans; /* ascending instants */
    uint8_t *idx;   /* type after each transition */
    size_t ntypes;  /* 1..256 */
    struct tz_type types[256];
    bool has_rule; /* footer or TZ string: decides from the last transition on */
    struct rule rule;
};

static int64_t
clamp_t(int64_t t)
{
    return t < -TZ_T_MAX ? -TZ_T_MAX : t > TZ_T_MAX ? TZ_T_MAX : t;
}

static int64_t
floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static int
mod7(int64_t v)
{
    return (int)(v - floor_div(v, 7) * 7);
}

static struct dq_tz *
tz_alloc(const char *name)
{
    struct dq_tz *z = calloc(1, sizeof *z);

    if (z != NULL)
        snprintf(z->name, sizeof z->name, "%s", name);
    return z;
}

void
dq_tz_free(struct dq_tz *z)
{
    if (z == NULL)
        return;
    free(z->trans);
    free(z->idx);
    free(z);
}

const char *
dq_tz_name(const struct dq_tz *z)
{
    return z->name;
}

/* ---- POSIX TZ strings --------------------------------------------------------- */

struct cursor {
    const char *p;
    const char *s; /* the whole string, for messages */
};

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

/* A describable position for messages: "at byte 5". */
static int
pos(const struct cursor *c)
{
    return (int)(c->p - c->s);
}

static int
parse_abbr(struct cursor *c, const char *what, dq_err *err)
{
    size_t n = 0;

    if (*c->p == '<') {
        c->p++;
        while (is_alpha(*c->p) || is_digit(*c->p) || *c->p == '+' || *c->p == '-') {
            c->p++;
            n++;
        }
        if (*c->p != '>')
            return dq_err_set(err, DQ_EINVAL, "tz: TZ string: %s name not closed by '>' at byte %d",
                              what, pos(c));
        c->p++;
    } else {
        while (is_alpha(*c->p)) {
            c->p++;
            n++;
        }
    }
    if (n < TZ_ABBR_MIN || n > TZ_ABBR_MAX)
        return dq_err_set(err, DQ_EINVAL,
                          "tz: TZ string: %s name of %zu letters before byte %d (use %d-%d)", what,
                          n, pos(c), TZ_ABBR_MIN, TZ_ABBR_MAX);
    return DQ_OK;
}

/* Reads 1..@maxdig digits as an int no greater than @max. */
static bool
parse_num(struct cursor *c, int maxdig, int max, int *out)
{
    int v = 0, n = 0;

    while (is_digit(*c->p) && n < maxdig) {
        v = v * 10 + (*c->p - '0');
        c->p++;
        n++;
    }
    if (n == 0 || is_digit(*c->p) || v > max)
        return false;
    *out = v;
    return true;
}

/* [+-]hh[:mm[:ss]], hours 0..@hmax; seconds into *@out. */
static int
parse_hms(struct cursor *c, int hmax, const char *what, int32_t *out, dq_err *err)
{
    int sign = 1, h = 0, m = 0, s = 0;

    if (*c->p == '+' || *c->p == '-')
        sign = *c->p++ == '-' ? -1 : 1;
    if (!parse_num(c, 3, hmax, &h))
        return dq_err_set(err, DQ_EINVAL, "tz: TZ string: %s at byte %d: expected hours 0-%d", what,
                          pos(c), hmax);
    if (*c->p == ':') {
        c->p++;
        if (!parse_num(c, 2, 59, &m))
            return dq_err_set(err, DQ_EINVAL, "tz: TZ string: %s at byte %d: expected minutes 0-59",
                              what, pos(c));
        if (*c->p == ':') {
            c->p++;
            if (!parse_num(c, 2, 59, &s))
                return dq_err_set(err, DQ_EINVAL,
                                  "tz: TZ string: %s at byte %d: expected seconds 0-59", what,
                                  pos(c));
        }
    }
    *out = (int32_t)(sign * (h * 3600 + m * 60 + s));
    return DQ_OK;
}

static int
parse_date(struct cursor *c, const char *what, struct rule_date *r, dq_err *err)
{
    bool ok;
    int start = pos(c);

    memset(r, 0, sizeof *r);
    if (*c->p == 'J') {
        c->p++;
        r->kind = 'J';
        ok = parse_num(c, 3, 365, &r->n) && r->n >= 1;
    } else if (*c->p == 'M') {
        c->p++;
        r->kind = 'M';
        ok = parse_num(c, 2, 12, &r->m) && r->m >= 1 && *c->p == '.';
        if (ok) {
            c->p++;
            ok = parse_num(c, 1, 5, &r->w) && r->w >= 1 && *c->p == '.';
        }
        if (ok) {
            c->p++;
            ok = parse_num(c, 1, 6, &r->d);
        }
    } else {
        r->kind = 'D';
        ok = parse_num(c, 3, 365, &r->n);
    }
    if (!ok)
        return dq_err_set(err, DQ_EINVAL,
                          "tz: TZ string: %s date at byte %d: expected Jn (1-365), n (0-365) or "
                          "Mm.w.d (m 1-12, w 1-5, d 0-6)",
                          what, start);
    r->time_s = 2 * 3600;
    if (*c->p == '/') {
        c->p++;
        return parse_hms(c, 167, what, &r->time_s, err);
    }
    return DQ_OK;
}

/* Parses @s (a C string) into @r. */
static int
parse_rule(const char *s, struct rule *r, dq_err *err)
{
    struct cursor c = {s, s};
    int32_t off;
    int rc;

    memset(r, 0, sizeof *r);
    if ((rc = parse_abbr(&c, "standard time", err)) != DQ_OK)
        return rc;
    if ((rc = parse_hms(&c, 24, "standard offset", &off, err)) != DQ_OK)
        return rc;
    r->std_off = -off; /* POSIX counts west as positive */
    if (*c.p == '\0')
        return DQ_OK;
    if ((rc = parse_abbr(&c, "DST", err)) != DQ_OK)
        return rc;
    r->has_dst = true;
    r->dst_off = r->std_off + 3600;
    if (*c.p != ',' && *c.p != '\0') {
        if ((rc = parse_hms(&c, 24, "DST offset", &off, err)) != DQ_OK)
            return rc;
        r->dst_off = -off;
    }
    if (*c.p == '\0') {
        /* no rule: glibc's default, the US rule since 2007 */
        r->start = (struct rule_date){'M', 0, 3, 2, 0, 2 * 3600};
        r->end = (struct rule_date){'M', 0, 11, 1, 0, 2 * 3600};
        return DQ_OK;
    }
    if (*c.p != ',')
        return dq_err_set(err, DQ_EINVAL, "tz: TZ string: expected ',' at byte %d", pos(&c));
    c.p++;
    if ((rc = parse_date(&c, "DST start", &r->start, err)) != DQ_OK)
        return rc;
    if (*c.p != ',')
        return dq_err_set(err, DQ_EINVAL, "tz: TZ string: expected ',' at byte %d", pos(&c));
    c.p++;
    if ((rc = parse_date(&c, "DST end", &r->end, err)) != DQ_OK)
        return rc;
    if (*c.p != '\0')
        return dq_err_set(err, DQ_EINVAL, "tz: TZ string: unexpected byte 0x%02x at byte %d",
                          (unsigned char)*c.p, pos(&c));
    return DQ_OK;
}

static bool
offset_ok(int64_t off)
{
    return off >= -DQ_TZ_OFFSET_MAX && off <= DQ_TZ_OFFSET_MAX;
}

int
dq_tz_from_posix(const char *s, struct dq_tz **out, dq_err *err)
{
    struct rule r;
    int rc;

    *out = NULL;
    if ((rc = parse_rule(s, &r, err)) != DQ_OK)
        return rc;
    if (!offset_ok(r.std_off) || !offset_ok(r.dst_off))
        return dq_err_set(err, DQ_EINVAL, "tz: TZ string: offset beyond %d hours", 25);
    struct dq_tz *z = tz_alloc("TZ string");
    if (z == NULL)
        return dq_err_set(err, DQ_ENOMEM, "tz: out of memory");
    z->ntypes = 1;
    z->types[0] = (struct tz_type){r.std_off, false};
    z->has_rule = true;
    z->rule = r;
    *out = z;
    return DQ_OK;
}

/* The day (since the epoch) a rule date falls on in year @y. */
static int64_t
rule_day(const struct rule_date *r, int64_t y)
{
    int64_t jan1 = dq_dur_days_from_civil(y, 1, 1);

    if (r->kind == 'J')
        return jan1 + r->n - 1 + (r->n >= 60 && dq_dur_month_days(y, 2) == 29);
    if (r->kind == 'D')
        return jan1 + r->n;
    int64_t first = dq_dur_days_from_civil(y, r->m, 1);
    int64_t day = first + mod7(r->d - mod7(first + 4)) + (int64_t)(r->w - 1) * 7;
    int mdays = dq_dur_month_days(y, r->m);
    while (day >= first + mdays) /* week 5 means the last one */
        day -= 7;
    return day;
}

static int64_t
utc_year(int64_t t)
{
    int64_t y;
    int m, d;

    dq_dur_civil_from_days(floor_div(t, 86400), &y, &m, &d);
    return y;
}

static void
rule_events(const struct rule *r, int64_t y, int64_t *start, int64_t *end)
{
    *start = rule_day(&r->start, y) * 86400 + r->start.time_s - r->std_off;
    *end = rule_day(&r->end, y) * 86400 + r->end.time_s - r->dst_off;
}

/*
 * The rule's state at @t: that of its latest event at or before @t, among the years
 * around @t's (a rule time may reach 167 h past its day, so events of the year before
 * can fall in this one and this year's in the next). A start and an end at the same
 * instant (DST all year, "J365/25") counts as the start.
 */
static int32_t
rule_offset(const struct rule *r, int64_t t, bool *is_dst)
{
    if (!r->has_dst) {
        *is_dst = false;
        return r->std_off;
    }
    int64_t y = utc_year(t), best = INT64_MIN;
    bool dst = false;
    for (int64_t yy = y - 2; yy <= y + 1; yy++) {
        int64_t s, e;
        rule_events(r, yy, &s, &e);
        if (e <= t && e > best) {
            best = e;
            dst = false;
        }
        if (s <= t && s >= best) {
            best = s;
            dst = true;
        }
    }
    *is_dst = dst;
    return dst ? r->dst_off : r->std_off;
}

int32_t
dq_tz_offset(const struct dq_tz *z, int64_t utc_s, bool *is_dst)
{
    bool dst_local;
    bool *dst = is_dst != NULL ? is_dst : &dst_local;
    int64_t t = clamp_t(utc_s);
    size_t n = z->ntrans;

    if (z->has_rule && (n == 0 || t >= z->trans[n - 1]))
        return rule_offset(&z->rule, t, dst);
    if (n == 0 || t < z->trans[0]) {
        *dst = z->types[0].isdst;
        return z->types[0].utoff;
    }
    size_t lo = 0, hi = n; /* the last transition <= t is in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    const struct tz_type *ty = &z->types[z->idx[lo]];
    *dst = ty->isdst;
    return ty->utoff;
}

/* Instants in (lo, hi] where the offset may change: transitions and rule events. */
static size_t
window_breaks(const struct dq_tz *z, int64_t lo, int64_t hi, int64_t *out)
{
    size_t nb = 0, a = 0, b = z->ntrans;

    while (a < b) { /* first transition > lo */
        size_t mid = a + (b - a) / 2;
        if (z->trans[mid] <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (size_t i = a; i < z->ntrans && z->trans[i] <= hi && nb < TZ_WINDOW_MAX; i++)
        out[nb++] = z->trans[i];
    if (z->has_rule && z->rule.has_dst) {
        for (int64_t y = utc_year(lo) - 1; y <= utc_year(hi) + 1; y++) {
            int64_t ev[2];
            rule_events(&z->rule, y, &ev[0], &ev[1]);
            for (int k = 0; k < 2; k++) {
                if (ev[k] > lo && ev[k] <= hi && nb < TZ_WINDOW_MAX)
                    out[nb++] = ev[k];
            }
        }
    }
    return nb;
}

int
dq_tz_local_to_utc(const struct dq_tz *z, int64_t local_s, int64_t utc_s[2], int64_t *gap_end_s)
{
    int64_t l = clamp_t(local_s);
    int64_t lo = l - DQ_TZ_OFFSET_MAX - 1, hi = l + DQ_TZ_OFFSET_MAX + 1;
    int64_t breaks[TZ_WINDOW_MAX], offs[TZ_WINDOW_MAX + 1];
    size_t nb = window_breaks(z, lo, hi, breaks), noffs = 0;
    int found = 0;

    /* every offset in force somewhere in the window, once */
    for (size_t i = 0; i <= nb; i++) {
        int64_t o = dq_tz_offset(z, i == 0 ? lo : breaks[i - 1], NULL);
        size_t k = 0;
        while (k < noffs && offs[k] != o)
            k++;
        if (k == noffs)
            offs[noffs++] = o;
    }
    for (size_t k = 0; k < noffs; k++) {
        int64_t u = l - offs[k];
        if (dq_tz_offset(z, u, NULL) != offs[k])
            continue;
        /* keep the earliest two, ascending */
        if (found < 2) {
            utc_s[found++] = u;
        } else if (u < utc_s[1]) {
            utc_s[1] = u;
        }
        if (found == 2 && utc_s[1] < utc_s[0]) {
            int64_t tmp = utc_s[0];
            utc_s[0] = utc_s[1];
            utc_s[1] = tmp;
        }
    }
    if (found == 0 && gap_end_s != NULL) {
        /* the transition that jumps over l; hi when the data is too odd to say */
        int64_t g = hi;
        for (size_t i = 0; i < nb; i++) {
            int64_t b = breaks[i];
            if (b < g && b - 1 + dq_tz_offset(z, b - 1, NULL) < l &&
                b + dq_tz_offset(z, b, NULL) > l)
                g = b;
        }
        *gap_end_s = g;
    }
    return found;
}

/* ---- TZif ----------------------------------------------------------------------- */

struct tzif_hdr {
    char version;
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

static uint32_t
be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t
be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

#define TZIF_HDR_LEN 44

static int
read_hdr(const unsigned char *p, size_t len, const char *name, struct tzif_hdr *h, dq_err *err)
{
    if (len < TZIF_HDR_LEN || memcmp(p, "TZif", 4) != 0)
        return dq_err_set(err, DQ_EINVAL, "tz: %s: not a TZif file (no TZif header)", name);
    h->version = (char)p[4];
    if (h->version != '\0' && (h->version < '2' || h->version > '4'))
        return dq_err_set(err, DQ_EINVAL, "tz: %s: TZif version byte 0x%02x (known: 1-4)", name,
                          p[4]);
    h->isutcnt = be32(p + 20);
    h->isstdcnt = be32(p + 24);
    h->leapcnt = be32(p + 28);
    h->timecnt = be32(p + 32);
    h->typecnt = be32(p + 36);
    h->charcnt = be32(p + 40);
    if (h->typecnt == 0 || h->typecnt > 256 || h->charcnt == 0)
        return dq_err_set(err, DQ_EINVAL,
                          "tz: %s: TZif header has %u types and %u name bytes (need 1-256 and "
                          "at least 1)",
                          name, h->typecnt, h->charcnt);
    if ((h->isstdcnt != 0 && h->isstdcnt != h->typecnt) ||
        (h->isutcnt != 0 && h->isutcnt != h->typecnt))
        return dq_err_set(err, DQ_EINVAL, "tz: %s: TZif indicator counts do not match %u types",
                          name, h->typecnt);
    if (h->leapcnt != 0)
        return dq_err_set(err, DQ_EINVAL,
                          "tz: %s: has leap-second records (zones of the right/ tree are not "
                          "supported)",
                          name);
    return DQ_OK;
}

/* Bytes of the data block after a header whose times take @tsize bytes. */
static uint64_t
body_len(const struct tzif_hdr *h, unsigned tsize)
{
    return (uint64_t)h->timecnt * (tsize + 1) + (uint64_t)h->typecnt * 6 + h->charcnt +
           (uint64_t)h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
}

static int
read_body(struct dq_tz *z, const unsigned char *p, const struct tzif_hdr *h, unsigned tsize,
          dq_err *err)
{
    size_t n = h->timecnt;

    if (n > 0) {
        z->trans = malloc(n * sizeof *z->trans);
        z->idx = malloc(n);
        if (z->trans == NULL || z->idx == NULL)
            return dq_err_set(err, DQ_ENOMEM, "tz: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const unsigned char *q = p + i * tsize;
        z->trans[i] = tsize == 8 ? be64(q) : (int64_t)(int32_t)be32(q);
        if (i > 0 && z->trans[i] <= z->trans[i - 1])
            return dq_err_set(err, DQ_EINVAL,
                              "tz: %s: transition %zu is not after the one before it", z->name, i);
    }
    p += n * tsize;
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= h->typecnt)
            return dq_err_set(err, DQ_EINVAL, "tz: %s: transition %zu has type %u of %u", z->name,
                              i, p[i], h->typecnt);
        z->idx[i] = p[i];
    }
    p += n;
    z->ntrans = n;
    z->ntypes = h->typecnt;
    for (size_t i = 0; i < h->typecnt; i++, p += 6) {
        int32_t off = (int32_t)be32(p);
        if (!offset_ok(off) || p[4] > 1 || p[5] >= h->charcnt)
            return dq_err_set(err, DQ_EINVAL,
                              "tz: %s: type %zu: offset %d s (limit +-%d), dst %u, name index %u "
                              "of %u",
                              z->name, i, (int)off, DQ_TZ_OFFSET_MAX, p[4], p[5], h->charcnt);
        z->types[i] = (struct tz_type){off, p[4] == 1};
    }
    return DQ_OK;
}

/* The footer, "\n<TZ string>\n", at @p (@len bytes to the end of the data). */
static int
read_footer(struct dq_tz *z, const unsigned char *p, size_t len, dq_err *err)
{
    char s[128];
    size_t n = 0;

    if (len < 2 || p[0] != '\n')
        return dq_err_set(err, DQ_EINVAL, "tz: %s: TZif footer missing", z->name);
    while (1 + n < len && p[1 + n] != '\n' && n < sizeof s - 1) {
        if (p[1 + n] == '\0')
            break;
        s[n] = (char)p[1 + n];
        n++;
    }
    if (1 + n >= len || p[1 + n] != '\n')
        return dq_err_set(err, DQ_EINVAL,
                          "tz: %s: TZif footer is not a TZ string of at most %zu bytes", z->name,
                          sizeof s - 1);
    s[n] = '\0';
    if (n == 0)
        return DQ_OK; /* no rule: the last transition's type stays */
    dq_err sub = {0};
    if (parse_rule(s, &z->rule, &sub) != DQ_OK)
        return dq_err_set(err, DQ_EINVAL, "tz: %s: footer: %s", z->name,
                          sub.msg + (strncmp(sub.msg, "tz: ", 4) == 0 ? 4 : 0));
    if (!offset_ok(z->rule.std_off) || !offset_ok(z->rule.dst_off))
        return dq_err_set(err, DQ_EINVAL, "tz: %s: footer: offset beyond 25 hours", z->name);
    z->has_rule = true;
    return DQ_OK;
}

int
dq_tz_from_tzif(const unsigned char *data, size_t len, const char *name, struct dq_tz **out,
                dq_err *err)
{
    struct tzif_hdr h;
    struct dq_tz *z = NULL;
    int rc;

    *out = NULL;
    if (name == NULL)
        name = "zone";
    if ((rc = read_hdr(data, len, name, &h, err)) != DQ_OK)
        return rc;
    uint64_t at = TZIF_HDR_LEN, blen = body_len(&h, 4);
    if (blen > len - at)
        return dq_err_set(err, DQ_EINVAL, "tz: %s: TZif data cut short (%zu bytes)", name, len);
    unsigned tsize = 4;
    if (h.version != '\0') {
        at += blen;
        if ((rc = read_hdr(data + at, len - at, name, &h, err)) != DQ_OK)
            return rc;
        at += TZIF_HDR_LEN;
        tsize = 8;
        blen = body_len(&h, 8);
        if (blen > len - at)
            return dq_err_set(err, DQ_EINVAL, "tz: %s: TZif data cut short (%zu bytes)", name, len);
    }
    z = tz_alloc(name);
    if (z == NULL)
        return dq_err_set(err, DQ_ENOMEM, "tz: out of memory");
    rc = read_body(z, data + at, &h, tsize, err);
    if (rc == DQ_OK && h.version != '\0')
        rc = read_footer(z, data + at + blen, len - at - blen, err);
    if (rc != DQ_OK) {
        dq_tz_free(z);
        return rc;
    }
    *out = z;
    return DQ_OK;
}

/* ---- loading by name ------------------------------------------------------------ */

static int
check_name(const char *name, dq_err *err)
{
    size_t n = strlen(name);

    if (n == 0 || n > DQ_TZ_NAME_MAX)
        return dq_err_set(err, DQ_EINVAL,
                          "tz: zone name of %zu bytes (use 1-%d, such as "
                          "Europe/Berlin)",
                          n, DQ_TZ_NAME_MAX);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!is_alpha(c) && !is_digit(c) && c != '/' && c != '_' && c != '+' && c != '-')
            return dq_err_set(err, DQ_EINVAL,
                              "tz: zone name has byte 0x%02x at %zu (use A-Z a-z 0-9 / _ + -, "
                              "such as Europe/Berlin)",
                              (unsigned char)c, i);
    }
    /* '.' is already refused above; this is the rule that matters, said on its own */
    if (name[0] == '/' || strstr(name, "..") != NULL)
        return dq_err_set(err, DQ_EINVAL,
                          "tz: zone name \"%s\" is a path (use such as "
                          "Europe/Berlin)",
                          name);
    return DQ_OK;
}

static int
read_file(const char *path, const char *name, unsigned char **out, size_t *out_len, dq_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = DQ_OK;

    *out = NULL;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return dq_err_set(err, DQ_EINVAL, "tz: unknown zone \"%s\" (no file %s)", name, path);
        return dq_err_set(err, DQ_EINVAL, "tz: zone \"%s\": cannot read %s: %s", name, path,
                          strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = dq_err_set(err, DQ_EINVAL, "tz: unknown zone \"%s\" (%s is not a zone file)", name,
                        path);
        goto out;
    }
    if (st.st_size > DQ_TZ_FILE_MAX) {
        rc = dq_err_set(err, DQ_EINVAL, "tz: zone \"%s\": %s is %lld bytes (limit %d)", name, path,
                        (long long)st.st_size, DQ_TZ_FILE_MAX);
        goto out;
    }
    /* one byte more than the limit, so a file that grew since fstat is still caught */
    buf = malloc(DQ_TZ_FILE_MAX + 1);
    if (buf == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "tz: out of memory");
        goto out;
    }
    while (len <= DQ_TZ_FILE_MAX) {
        ssize_t r = read(fd, buf + len, DQ_TZ_FILE_MAX + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = dq_err_set(err, DQ_EINVAL, "tz: zone \"%s\": cannot read %s: %s", name, path,
                            strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    if (len > DQ_TZ_FILE_MAX) {
        rc = dq_err_set(err, DQ_EINVAL, "tz: zone \"%s\": %s is over %d bytes", name, path,
                        DQ_TZ_FILE_MAX);
        goto out;
    }
    *out = buf;
    *out_len = len;
    buf = NULL;
out:
    free(buf);
    close(fd);
    return rc;
}

int
dq_tz_load(const char *name, struct dq_tz **out, dq_err *err)
{
    int rc;

    *out = NULL;
    if ((rc = check_name(name, err)) != DQ_OK)
        return rc;
    if (strcmp(name, "UTC") == 0 || strcmp(name, "Etc/UTC") == 0) {
        struct dq_tz *z = tz_alloc(name);
        if (z == NULL)
            return dq_err_set(err, DQ_ENOMEM, "tz: out of memory");
        z->ntypes = 1; /* types[0] is UTC, no DST (calloc) */
        *out = z;
        return DQ_OK;
    }
    const char *dir = getenv("TZDIR");
    char path[4096];
    if (dir == NULL || dir[0] == '\0')
        dir = TZ_DEFAULT_DIR;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return dq_err_set(err, DQ_EINVAL, "tz: TZDIR is too long (limit %zu bytes)",
                          sizeof path - DQ_TZ_NAME_MAX - 2);
    unsigned char *data;
    size_t len = 0;
    if ((rc = read_file(path, name, &data, &len, err)) != DQ_OK)
        return rc;
    rc = dq_tz_from_tzif(data, len, name, out, err);
    free(data);
    return rc;
}
