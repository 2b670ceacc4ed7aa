/* SPDX-License-Identifier: MIT */
/* histview.c: the History view (see histview.h). Pure: no curses, no Redis. */
#include "histview.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dur.h"

/* The gutter left of the bars: a series' name, its scale, the axis line. */
#define GUTTER 8
/* Columns a step may take when the screen is wider than the span needs. */
#define STEP_CELLS_MAX 3
/* Columns at most (a 1 000-column terminal is clipped to this). */
#define COLS_MAX 1024

enum { S_DONE, S_FAILED, S_RETRIED, S_BACKLOG, S_COUNT };

static const struct {
    const char *name;
    int color;
    int weight; /* its share of the chart's rows */
} series[S_COUNT] = {
    [S_DONE] = {"done", GRID_GREEN, 3},
    [S_FAILED] = {"failed", GRID_RED, 3},
    [S_RETRIED] = {"retried", GRID_YELLOW, 2},
    [S_BACKLOG] = {"backlog", GRID_CYAN, 3},
};

/* One column: one step, or several merged on a narrow screen. */
struct col {
    int64_t at_ms;      /* start of its first step */
    int64_t v[S_COUNT]; /* sums; the backlog is the last sample (-1: none) */
    char mark;          /* the audit log's letter ('\0': none; '+': several kinds) */
};

static uint16_t
paint(const struct hist_view *v, uint16_t attr, int c)
{
    return grid_color(attr, v->no_color ? GRID_DEFAULT : c);
}

static int64_t
nonneg(int64_t x)
{
    return x > 0 ? x : 0; /* counts from Redis are untrusted: never below zero */
}

/* @a + @b for counts (both >= 0), stopping at INT64_MAX: hostile values cannot overflow. */
static int64_t
add(int64_t a, int64_t b)
{
    return b > INT64_MAX - a ? INT64_MAX : a + b;
}

/* Whether two byte strings from Redis (either may be NULL when empty) are the same. */
static bool
same_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && (alen == 0 || (a != NULL && b != NULL && memcmp(a, b, alen) == 0));
}

char
histview_mark(const char *action, size_t len)
{
    static const struct {
        const char *name;
        char letter;
    } marks[] = {
        {"pause", 'p'},           {"resume", 'u'},      {"throttle", 't'},
        {"throttle off", 'o'},    {"requeue", 'r'},     {"requeue-all", 'r'},
        {"replace", 'r'},         {"drop", 'd'},        {"drop-all", 'd'},
        {"drop-parked", 'd'},     {"config", 'c'},      {"cancel", 'x'},
        {"schedule add", 's'},    {"schedule rm", 's'}, {"schedule pause", 's'},
        {"schedule resume", 's'}, {"run-now", 'm'},     {"reschedule", 'm'},
        {"import", 'i'},
    };

    for (size_t i = 0; action != NULL && i < sizeof marks / sizeof marks[0]; i++)
        if (strlen(marks[i].name) == len && memcmp(marks[i].name, action, len) == 0)
            return marks[i].letter;
    return '*';
}

/* An audit entry that changed something: a refused action is not marked. */
static bool
mark_worthy(const dq_audit_entry *e)
{
    return e->result != NULL && e->result_len >= 2 && memcmp(e->result, "ok", 2) == 0;
}

/* A count in at most 5 columns, truncated (never rounded up past what it is): 1234,
 * 12.3k, 456k, 7.8M, 910M, 12G ... */
static void
short_count(char *buf, size_t size, int64_t n)
{
    static const char units[] = "kMGTPE";
    int64_t scale = 1000;

    if (n < 10000) {
        snprintf(buf, size, "%lld", (long long)n);
        return;
    }
    for (int u = 0; units[u] != '\0'; u++, scale *= 1000) {
        if (n / scale < 100) {
            snprintf(buf, size, "%lld.%lld%c", (long long)(n / scale),
                     (long long)(n / (scale / 10) % 10), units[u]);
            return;
        }
        if (n / scale < 1000 || units[u + 1] == '\0') {
            snprintf(buf, size, "%lld%c", (long long)(n / scale), units[u]);
            return;
        }
    }
}

/* A whole number of minutes for people: "15m", "6h", "7d". */
static void
minutes_text(char *buf, size_t size, int64_t min)
{
    if (min > 0 && min % 1440 == 0 && min > 1440)
        snprintf(buf, size, "%lldd", (long long)(min / 1440));
    else if (min > 0 && min % 60 == 0)
        snprintf(buf, size, "%lldh", (long long)(min / 60));
    else
        snprintf(buf, size, "%lldm", (long long)min);
}

/* The @q-quantile of @run: the open last bucket says only "at least its lower bound". */
static void
run_text(const struct hist_view *v, char *buf, size_t size, const int64_t run[DQ_RUN_BUCKETS],
         double q)
{
    char d[DQ_DUR_BUFSZ];

    dq_dur_format(d, sizeof d, dq_run_quantile(run, q));
    snprintf(buf, size, "%s%s", dq_run_quantile_open(run, q) ? v->ascii ? ">=" : "≥" : "", d);
}

/* HH:MM of server time @ms (UTC, as the rest of the inspector's times). */
static void
hhmm(char *buf, size_t size, int64_t ms)
{
    int64_t min = (ms / 60000) % 1440;

    if (min < 0)
        min += 1440;
    snprintf(buf, size, "%02d:%02d", (int)(min / 60), (int)(min % 60));
}

/* The columns of @h, @col_ms each: a column starts on a multiple of its length
 * (as the reader's steps do), so the axis reads round times; the oldest and the newest
 * may hold fewer steps. At most @max, the newest. Returns the count. */
static size_t
make_cols(const dq_history *h, size_t from, int64_t col_ms, struct col *cols, size_t max)
{
    size_t n = 0;
    int64_t key = 0;

    for (size_t i = from; i < h->n; i++) {
        const dq_history_row *r = &h->rows[i];
        int64_t k = r->at_ms / col_ms - (r->at_ms % col_ms < 0);
        if (n == 0 || k != key) {
            if (n == max) { /* the oldest column goes: the newest are kept */
                memmove(cols, cols + 1, (max - 1) * sizeof *cols);
                n--;
            }
            memset(&cols[n], 0, sizeof cols[n]);
            cols[n].at_ms = k * col_ms;
            cols[n].v[S_BACKLOG] = -1;
            key = k;
            n++;
        }
        struct col *c = &cols[n - 1];
        c->v[S_DONE] = add(c->v[S_DONE], nonneg(r->done));
        c->v[S_FAILED] = add(c->v[S_FAILED], nonneg(r->failed));
        c->v[S_RETRIED] = add(c->v[S_RETRIED], nonneg(r->retried));
        if (r->backlog >= 0)
            c->v[S_BACKLOG] = r->backlog;
    }
    return n;
}

/* One series' bars over rows @top..@top+@height-1. */
static void
draw_series(const struct hist_view *v, struct grid *g, int s, const struct col *cols, size_t n,
            int w, int top, int height)
{
    static const char *const eighths[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    uint16_t attr = paint(v, 0, series[s].color);
    int64_t max = 1;
    char num[16];

    for (size_t c = 0; c < n; c++)
        max = cols[c].v[s] > max ? cols[c].v[s] : max;
    grid_puts(g, top, 0, GUTTER - 1, attr | GRID_BOLD, series[s].name);
    if (height >= 2) {
        short_count(num, sizeof num, max);
        grid_printf(g, top + 1, 0, GUTTER - 1, GRID_DIM, "%*s", GUTTER - 1, num);
    }
    for (int r = 0; r < height; r++)
        grid_puts(g, top + r, GUTTER - 1, 1, GRID_DIM,
                  v->ascii               ? "|"
                  : r == 0 && height > 1 ? "┤"
                                         : "│");
    for (size_t c = 0; c < n; c++) {
        int64_t val = cols[c].v[s];
        int x = GUTTER + (int)c * w;
        if (s == S_BACKLOG && val < 0) { /* no sample that minute: nobody claimed or beat */
            for (int k = 0; k < w; k++)
                grid_puts(g, top + height - 1, x + k, 1, GRID_DIM, v->ascii ? "." : "·");
            continue;
        }
        if (val <= 0)
            continue;
        /* eighths of a cell, at least one for any count at all */
        double exact = (double)val * height * 8 / (double)max;
        int e = (int)exact + ((double)(int)exact < exact);
        int cells = e / 8 + (e % 8 >= 4);
        if (cells == 0)
            cells = 1;
        for (int r = 0; r < height; r++) {
            int here = e - r * 8;
            const char *glyph;
            if (v->ascii)
                glyph = r < cells ? "#" : NULL;
            else
                glyph = here <= 0 ? NULL : eighths[(here > 8 ? 8 : here) - 1];
            for (int k = 0; glyph != NULL && k < w; k++)
                grid_puts(g, top + height - 1 - r, x + k, 1, attr, glyph);
        }
    }
}

/* The time axis: a label at columns that start on a round time, far enough apart. */
static void
draw_axis(const struct hist_view *v, struct grid *g, int row, const struct col *cols, size_t n,
          int w, int64_t col_ms)
{
    static const int64_t ticks_min[] = {1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440};
    int64_t col_min = col_ms / 60000 > 0 ? col_ms / 60000 : 1, tick = 0;
    char at[8];

    grid_puts(g, row, 0, GUTTER - 1, GRID_DIM, "UTC");
    /* the shortest round interval whose labels (HH:MM and a blank) do not touch */
    for (size_t i = 0; i < sizeof ticks_min / sizeof ticks_min[0] && tick == 0; i++)
        if (ticks_min[i] % col_min == 0 && ticks_min[i] / col_min * w >= 7)
            tick = ticks_min[i];
    if (tick == 0)
        tick = 1440;
    int next_free = 0;
    for (size_t c = 0; c < n; c++) {
        int x = GUTTER + (int)c * w;
        if ((cols[c].at_ms / 60000) % tick != 0 || x < next_free)
            continue;
        hhmm(at, sizeof at, cols[c].at_ms);
        grid_puts(g, row, x, g->cols - x, GRID_DIM, v->ascii ? "^" : "╵");
        grid_puts(g, row, x + 1, g->cols - x - 1, GRID_DIM, at);
        next_free = x + 7;
    }
}

/* The column of server time @ms, or -1 before the first. */
static int
col_of(const struct col *cols, size_t n, int64_t ms)
{
    int at = -1;

    for (size_t c = 0; c < n && cols[c].at_ms <= ms; c++)
        at = (int)c;
    return at;
}

/* @len bytes of @s up to a NUL, at most @max, cut between UTF-8 sequences. */
static int
field_len(const char *s, size_t len, size_t max)
{
    size_t n = 0;

    while (s != NULL && n < len && s[n] != '\0')
        n++;
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    return (int)n;
}

/* The marks under their columns, then the legend: newest first, as many as fit in
 * @lines rows from @row. */
static void
draw_marks(const struct hist_view *v, struct grid *g, int row, int lines, struct col *cols,
           size_t n, int w, int64_t end_ms)
{
    const dq_audit *a = v->audit;
    uint16_t attr = paint(v, GRID_BOLD, GRID_MAGENTA);
    size_t shown = 0, left = 0;

    grid_puts(g, row, 0, GUTTER - 1, GRID_DIM, "marks");
    for (size_t i = 0; a != NULL && i < a->n; i++) {
        const dq_audit_entry *e = &a->entries[i];
        int c = col_of(cols, n, e->at_ms);
        if (c < 0 || e->at_ms > end_ms || !mark_worthy(e))
            continue;
        char letter = histview_mark(e->action, e->action_len);
        cols[c].mark = cols[c].mark == '\0' || cols[c].mark == letter ? letter : '+';
    }
    for (size_t c = 0; c < n; c++)
        if (cols[c].mark != '\0')
            grid_printf(g, row, GUTTER + (int)c * w, 1, attr, "%c", cols[c].mark);
    /* the legend: letter, time, action, who; a run of the same (a bulk action's steps)
     * as one item */
    int line = row + 1, x = 1;
    for (size_t i = 0; a != NULL && i < a->n; i++) {
        const dq_audit_entry *e = &a->entries[i];
        if (col_of(cols, n, e->at_ms) < 0 || e->at_ms > end_ms || !mark_worthy(e))
            continue;
        size_t same = 1;
        while (i + same < a->n) {
            const dq_audit_entry *f = &a->entries[i + same];
            if (f->at_ms / 60000 != e->at_ms / 60000 ||
                !same_bytes(f->action, f->action_len, e->action, e->action_len) ||
                !same_bytes(f->who, f->who_len, e->who, e->who_len) || !mark_worthy(f))
                break;
            same++;
        }
        char at[8], item[200], times[32] = "";
        hhmm(at, sizeof at, e->at_ms);
        if (same > 1)
            snprintf(times, sizeof times, " (%zux)", same);
        snprintf(item, sizeof item, " %s %.*s %.*s%s", at, field_len(e->action, e->action_len, 24),
                 e->action ? e->action : "", field_len(e->who, e->who_len, 32),
                 e->who ? e->who : "", times);
        int need = 1 + grid_text_cols(item, strlen(item)) + 2;
        if (x + need > g->cols && x > 1 && line + 1 < row + 1 + lines) {
            line++;
            x = 1;
        }
        if (x + need > g->cols || line >= row + 1 + lines) {
            for (size_t k = i; k < a->n; k++) /* what did not fit, said in numbers */
                left += col_of(cols, n, a->entries[k].at_ms) >= 0 &&
                        a->entries[k].at_ms <= end_ms && mark_worthy(&a->entries[k]);
            break;
        }
        grid_printf(g, line, x, 1, attr, "%c", histview_mark(e->action, e->action_len));
        x += 1 + grid_puts(g, line, x + 1, g->cols - x - 1, 0, item) + 2;
        shown += same;
        i += same - 1;
    }
    if (shown == 0 && left == 0)
        grid_puts(g, row + 1, 1, g->cols - 1, GRID_DIM,
                  "no operator actions in this span (the audit log, L, has them all)");
    else if (left > 0)
        grid_printf(g, line, x, g->cols - x, GRID_DIM, "+%zu more (L)", left);
}

/* History off: what it costs to turn on, and how. */
static void
draw_off(const struct hist_view *v, struct grid *g)
{
    static const char *const lines[] = {
        "History is off for this queue: its history_minutes is 0, so the scripts write",
        "no per-minute rollups, and there is nothing to chart.",
        "",
        "Turn it on (keeps the last 24 h; up to 10080 = 7 days; README says the memory):",
        "",
        NULL, /* the command, with the queue's name */
        "",
        "The rollups start with the next minute; this view then fills as minutes pass.",
        "Until then the header's due backlog is sampled by this inspector while open.",
    };

    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        int row = 2 + (int)i;
        if (lines[i] != NULL)
            grid_puts(g, row, 1, g->cols - 1, 0, lines[i]);
        else
            grid_printf(g, row, 5, g->cols - 5, GRID_BOLD,
                        "delayq config -q %s history_minutes=1440", v->queue);
    }
}

/* The title and the two summary lines: totals over the span, run-time percentiles, the
 * backlog now and at its peak. */
static void
draw_summary(const struct hist_view *v, struct grid *g, int64_t col_ms)
{
    const dq_history *h = v->h;
    dq_history_row sum = {0};
    int64_t runs = 0, peak = -1, peak_ms = 0, now = -1;
    char col_d[32], kept[32], buf[400];

    for (size_t i = 0; i < h->n; i++) {
        const dq_history_row *r = &h->rows[i];
        dq_history_row_add(&sum, r);
        if (r->backlog >= 0) {
            now = r->backlog;
            if (r->backlog > peak) {
                peak = r->backlog;
                peak_ms = r->at_ms;
            }
        }
    }
    const int64_t t[9] = {sum.done,     sum.failed,   sum.retried,
                          sum.requeued, sum.expired,  sum.dropped,
                          sum.lost,     sum.enqueued, 0};
    for (int k = 0; k < DQ_RUN_BUCKETS; k++)
        runs = add(runs, sum.run[k]);
    minutes_text(col_d, sizeof col_d, col_ms / 60000);
    minutes_text(kept, sizeof kept, h->history_minutes);
    snprintf(buf, sizeof buf, " history of %s: the last %s, a column = %s, UTC (rollups kept %s)",
             v->queue, v->span, col_d, kept);
    grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
    grid_puts(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD, buf);
    char line[400];
    size_t len;
    static const char *const names[9] = {"done",    "failed", "retried",  "requeued", "expired",
                                         "dropped", "lost",   "enqueued", NULL};
    len = (size_t)snprintf(line, sizeof line, " totals:");
    for (int k = 0; names[k] != NULL && len < sizeof line; k++)
        if (k < 3 || t[k] > 0) /* the three charted always; the rest when they happened */
            len += (size_t)snprintf(line + len, sizeof line - len, " %s %lld", names[k],
                                    (long long)t[k]);
    grid_puts(g, 1, 0, g->cols, 0, line);
    if (runs > 0) {
        char p[3][DQ_DUR_BUFSZ + 4];
        const double q[3] = {0.50, 0.95, 0.99};
        for (int k = 0; k < 3; k++)
            run_text(v, p[k], sizeof p[k], sum.run, q[k]);
        snprintf(buf, sizeof buf, " runs: p50 %s p95 %s p99 %s (%lld)", p[0], p[1], p[2],
                 (long long)runs);
    } else {
        snprintf(buf, sizeof buf, " runs: none settled in this span");
    }
    int c = grid_puts(g, 2, 0, g->cols, 0, buf);
    if (peak >= 0) {
        char at[8];
        hhmm(at, sizeof at, peak_ms);
        grid_printf(g, 2, c, g->cols - c, 0, "  due backlog now %lld, peak %lld at %s",
                    (long long)now, (long long)peak, at);
    }
}

void
histview_render(const struct hist_view *v, struct grid *g)
{
    const dq_history *h = v->h;

    grid_clear(g);
    if (v->status != NULL && v->status[0] != '\0')
        grid_printf(g, g->rows - 1, 0, g->cols, v->status_error ? paint(v, GRID_BOLD, GRID_RED) : 0,
                    " %s", v->status);
    else
        grid_puts(g, g->rows - 1, 0, g->cols, GRID_DIM,
                  " [ ] span 1h 6h 24h  Ctrl-L read now  Esc back  (read each minute)");
    if (h == NULL) {
        grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
        grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD, " history of %s", v->queue);
        grid_puts(g, 2, 1, g->cols - 1, GRID_DIM, "reading the history...");
        return;
    }
    if (h->history_minutes <= 0) {
        grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
        grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD, " history of %s: off", v->queue);
        draw_off(v, g);
        return;
    }
    int avail = g->cols - GUTTER;
    if (avail < 1 || h->n == 0 || h->rows == NULL) {
        grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
        grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD, " history of %s", v->queue);
        return;
    }
    avail = avail > COLS_MAX ? COLS_MAX : avail;
    /* steps a column: as few as fit */
    int64_t step_ms = h->step_ms >= 60000 ? h->step_ms : 60000;
    /* the reader's oldest step is partial when the span does not start on a step (6 h at 5
     * minutes is 73 rows): one step more than fits is dropped rather than halving them all */
    size_t from = h->n == (size_t)avail + 1 ? 1 : 0;
    size_t per = (h->n - from + (size_t)avail - 1) / (size_t)avail;
    int64_t col_ms = (int64_t)per * step_ms;
    struct col *cols = calloc((size_t)avail, sizeof *cols);
    if (cols == NULL) {
        grid_puts(g, 2, 1, g->cols - 1, 0, "out of memory");
        return;
    }
    size_t n = make_cols(h, from, col_ms, cols, (size_t)avail);
    int w = per == 1 && n > 0 ? avail / (int)n : 1;
    w = w > STEP_CELLS_MAX ? STEP_CELLS_MAX : w < 1 ? 1 : w;
    draw_summary(v, g, col_ms);
    /* title and summary (3), then the panels, the axis, the marks, the legend, the keys */
    int legend = g->rows >= 40 ? 3 : g->rows >= 20 ? 2 : 1;
    int chart = g->rows - 3 - 3 - legend;
    bool gaps = chart >= 4 * 7; /* a blank row between panels when there is room */
    int body = chart - (gaps ? S_COUNT - 1 : 0), weights = 0, heights[S_COUNT], used = 0;
    for (int s = 0; s < S_COUNT; s++)
        weights += series[s].weight;
    for (int s = 0; s < S_COUNT; s++) {
        heights[s] = body > 0 ? body * series[s].weight / weights : 0;
        heights[s] = heights[s] < 1 && body >= S_COUNT ? 1 : heights[s];
        used += heights[s];
    }
    if (body > used)
        heights[S_DONE] += body - used;
    int top = 3;
    for (int s = 0; s < S_COUNT; s++) {
        if (heights[s] > 0 && top + heights[s] <= g->rows - 1)
            draw_series(v, g, s, cols, n, w, top, heights[s]);
        top += heights[s] + (gaps ? 1 : 0);
    }
    top -= gaps ? 1 : 0;
    if (top < g->rows - 1)
        draw_axis(v, g, top, cols, n, w, col_ms);
    if (top + 1 < g->rows - 1)
        draw_marks(v, g, top + 1, legend, cols, n, w, h->now_ms);
    free(cols);
}
