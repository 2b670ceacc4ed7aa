/* SPDX-License-Identifier: MIT */
/* overview.c: the overview's verdicts, order, sparklines and columns (see overview.h). */
#include "overview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dur.h"

void
dq_ov_judge(struct dq_ov_line *l, const struct dq_overview_row *row, int64_t used_memory,
            int64_t maxmemory)
{
    memset(l, 0, sizeof *l);
    l->row = row;
    if (row->rc != DQ_OK) {
        l->level = DQ_HEALTH_BAD;
        snprintf(l->words, sizeof l->words, "not read: %s", row->error);
        return;
    }
    for (int i = 0; i < DQ_OVERVIEW_MINUTES; i++) {
        l->done10 += row->done_per_min[i];
        l->failed10 += row->failed_per_min[i];
    }
    struct dq_health_facts f = {.stats = &row->stats,
                                .max_oldest_due_ms = row->alert_oldest_due_ms,
                                .max_far_future = row->alert_far_future,
                                .used_memory = used_memory,
                                .maxmemory = maxmemory,
                                .memory_warn_pct = (int)row->alert_memory_pct,
                                .fail_pct = row->alert_fail_pct,
                                .fail_per_min = row->alert_fail_per_min,
                                .workers_registered = row->workers_registered,
                                .workers_live = row->workers_live,
                                .workers_lost = row->workers_lost,
                                .last_beat_ms = row->last_beat_ms,
                                .workers_hung = row->workers_hung,
                                .hung_worker = row->hung_worker[0] ? row->hung_worker : NULL,
                                .retry_rate = -1,
                                .max_running_ms = -1,
                                .longest_running_ms = -1};
    l->level = dq_health_verdict(&f, l->words, sizeof l->words);
}

static int
cmp64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

int
dq_ov_cmp(const struct dq_ov_line *a, const struct dq_ov_line *b)
{
    int c;

    if ((c = cmp64(b->level, a->level)) != 0)
        return c;
    if ((c = cmp64(b->failed10, a->failed10)) != 0)
        return c;
    if ((c = cmp64(b->row->stats.oldest_due_age_ms, a->row->stats.oldest_due_age_ms)) != 0)
        return c;
    if ((c = cmp64(b->row->stats.due, a->row->stats.due)) != 0)
        return c;
    return strcmp(a->row->queue, b->row->queue);
}

static int
cmp_lines(const void *a, const void *b)
{
    return dq_ov_cmp(a, b);
}

void
dq_ov_sort(struct dq_ov_line *v, size_t n)
{
    /* the name breaks every tie and names are unique: a total order, so qsort's lack of
     * stability cannot reorder rows between two refreshes */
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_lines);
}

size_t
dq_ov_spark(char *buf, size_t size, const int64_t *v, size_t n, bool utf8)
{
    static const char *const bars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                       "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char ascii[] = ".:-=+*#@";
    int64_t max = 0;
    size_t len = 0;

    for (size_t i = 0; i < n; i++)
        max = v[i] > max ? v[i] : max;
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char one[8] = " ";
        if (v[i] > 0) {
            /* 1..max onto the eight heights: any count at all shows at least the lowest */
            int h = (int)((v[i] * 8 - 1) / max);
            h = h < 0 ? 0 : h > 7 ? 7 : h;
            if (utf8)
                snprintf(one, sizeof one, "%s", bars[h]);
            else
                snprintf(one, sizeof one, "%c", ascii[h]);
        }
        size_t k = strlen(one);
        if (len + k < size) {
            memcpy(buf + len, one, k);
            buf[len + k] = '\0';
        }
        len += k;
    }
    return len;
}

/* The widths of the fixed columns after the name, and their titles. */
#define OV_LEVEL_COLS 4
#define OV_TAIL_FMT   " %6s %6s %5s %6s %-*s %-*s %3s %-2s"

int
dq_ov_fixed_cols(int name_cols)
{
    return OV_LEVEL_COLS + 1 + name_cols + 1 + 6 + 1 + 6 + 1 + 5 + 1 + 6 + 1 + DQ_OVERVIEW_MINUTES +
           1 + DQ_OVERVIEW_MINUTES + 1 + 3 + 1 + 2;
}

size_t
dq_ov_header(char *buf, size_t size, int name_cols)
{
    int n = snprintf(buf, size, "%-*s %-*s" OV_TAIL_FMT, OV_LEVEL_COLS, "LVL", name_cols, "QUEUE",
                     "DUE", "OLDEST", "INFL", "FAILED", DQ_OVERVIEW_MINUTES, "DONE/min",
                     DQ_OVERVIEW_MINUTES, "FAILED/min", "WRK", "PT");
    return n < 0 ? 0 : (size_t)n;
}

/* Display columns of our own UTF-8 (one per character). */
static size_t
columns(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void
count(char *buf, size_t size, int64_t v)
{
    snprintf(buf, size, "%lld", (long long)v);
}

size_t
dq_ov_cells(char *buf, size_t size, const struct dq_ov_line *l, int name_cols, bool utf8)
{
    const struct dq_overview_row *r = l->row;
    char name[DQ_QUEUE_NAME_MAX + 2], due[24] = "?", age[DQ_DUR_BUFSZ] = "?", inf[24] = "?",
                                      failed[24] = "?", wrk[24] = "?", pt[3] = "";
    char sd[4 * DQ_OVERVIEW_MINUTES + 1] = "", sf[4 * DQ_OVERVIEW_MINUTES + 1] = "";
    int n;

    snprintf(name, sizeof name, "%s", r->queue);
    if (name_cols > 0 && (int)strlen(name) > name_cols) {
        name[name_cols - 1] = '~';
        name[name_cols] = '\0';
    }
    if (r->rc == DQ_OK) {
        const dq_stats *s = &r->stats;
        count(due, sizeof due, s->due);
        if (s->oldest_due_age_ms > 0)
            dq_dur_format(age, sizeof age, s->oldest_due_age_ms);
        else
            snprintf(age, sizeof age, "-");
        count(inf, sizeof inf, s->inflight);
        count(failed, sizeof failed, s->failed);
        count(wrk, sizeof wrk, r->workers_live);
        dq_ov_spark(sd, sizeof sd, r->done_per_min, DQ_OVERVIEW_MINUTES, utf8);
        dq_ov_spark(sf, sizeof sf, r->failed_per_min, DQ_OVERVIEW_MINUTES, utf8);
        snprintf(pt, sizeof pt, "%s%s", s->paused ? "P" : "", r->throttled > 0 ? "T" : "");
    }
    /* a sparkline is DQ_OVERVIEW_MINUTES columns but more bytes in UTF-8 (a bar is three,
     * a blank one): printf pads bytes, so pad to its byte length plus the columns short */
    size_t wd = columns(sd), wf = columns(sf);
    n = snprintf(buf, size, "%-*s %-*s" OV_TAIL_FMT, OV_LEVEL_COLS, dq_health_level_name(l->level),
                 name_cols, name, due, age, inf, failed,
                 (int)(strlen(sd) + (DQ_OVERVIEW_MINUTES - wd)), sd,
                 (int)(strlen(sf) + (DQ_OVERVIEW_MINUTES - wf)), sf, wrk, pt);
    return n < 0 ? 0 : (size_t)n;
}
