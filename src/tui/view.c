/* SPDX-License-Identifier: MIT */
/*
 * view.c: the inspector's screen, laid into a grid. Layout: a header line, a counters
 * line, a sparkline line, the panes (all four in a 2x2 grid on a large terminal, the
 * focused one with a tab bar otherwise), and a status line.
 */
#include "view.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fmt/health.h"
#include "fmt/mptext.h"
#include "fmt/overview.h"
#include "fmt/taskfmt.h"
#include "histview.h"
#include "keymap.h"
#include "lib/buf.h"
#include "lib/dur.h"
#include "lib/task.h"
#include "overview.h"

static const char *const pane_names[PANE_COUNT] = {"Due", "Future", "In-flight", "Failed", "Done"};

/* The verdict's thresholds, and the one that flags a long-running in-flight row, are
 * the queue's alert_* config fields (m->config), as `delayq stats --check` has them. */

/* A colour to OR into an attribute that has none yet. */
static uint16_t
color(const struct ui *ui, int c)
{
    return ui->no_color ? 0 : GRID_COLOR(c);
}

/* @attr in colour @c, whatever colour it had: for attributes built in steps. */
static uint16_t
paint(const struct ui *ui, uint16_t attr, int c)
{
    return grid_color(attr, ui->no_color ? GRID_DEFAULT : c);
}

static void
human_bytes(char *buf, size_t size, int64_t n)
{
    const char *units = "BKMGT";
    double v = (double)n;
    int u = 0;

    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, u == 0 ? "%.0f%c" : "%.1f%c", v, units[u]);
}

/*
 * The header block: three lines laid out by priority, so what an on-call engineer must
 * see survives at 80 columns (queue, badges, due and its oldest age, failed, the
 * verdict) and the rest is added as the width allows. A segment of priority 0 is never
 * dropped; among the others the least important go first, later ones before earlier.
 */
struct seg {
    char text[200];
    uint16_t attr;
    int prio;
    bool untrusted; /* holds bytes from Redis: escaped, measured escaped */
};

#define SEGS_MAX 16

static void seg_add(struct seg *s, int *n, int prio, uint16_t attr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static void
seg_add(struct seg *s, int *n, int prio, uint16_t attr, const char *fmt, ...)
{
    va_list ap;

    if (*n >= SEGS_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(s[*n].text, sizeof s[*n].text, fmt, ap);
    va_end(ap);
    s[*n].attr = attr;
    s[*n].prio = prio;
    (*n)++;
}

/* Lays @n segments from @col within @width, dropping the least important to fit. */
static int
render_segs(struct grid *g, int row, int col, int width, const struct seg *s, int n)
{
    bool keep[SEGS_MAX];
    int total = 0;

    for (int i = 0; i < n; i++) {
        keep[i] = true;
        total += grid_text_cols(s[i].text, strlen(s[i].text));
    }
    while (total > width) {
        int drop = -1;
        for (int i = 0; i < n; i++)
            if (keep[i] && s[i].prio > 0 && (drop < 0 || s[i].prio >= s[drop].prio))
                drop = i;
        if (drop < 0)
            break; /* only what must stay: grid_put clips the end */
        keep[drop] = false;
        total -= grid_text_cols(s[drop].text, strlen(s[drop].text));
    }
    int c = col;
    for (int i = 0; i < n; i++)
        if (keep[i])
            c += grid_puts(g, row, c, col + width - c, s[i].attr, s[i].text);
    return c - col;
}

static void
render_title(const struct model *m, const struct ui *ui, struct grid *g)
{
    struct seg s[SEGS_MAX];
    char now[40], used[16], max[16];
    uint16_t bar = GRID_REVERSE;
    int n = 0, badges = 0;

    dq_time_format(now, sizeof now, m->stats.now_ms);
    human_bytes(used, sizeof used, m->info.used_memory);
    if (m->info.maxmemory > 0)
        human_bytes(max, sizeof max, m->info.maxmemory);
    else
        snprintf(max, sizeof max, "nolimit");
    grid_attr(g, 0, 0, g->cols, bar);
    /* badges at the right end first: they are never cut (the verdict says who paused) */
    if (ui->read_only)
        badges += 11;
    if (m->stats.paused)
        badges += 8;
    if (m->unknown[0] != '\0')
        badges += 15;
    if (ui->insecure)
        badges += 10;
    if (badges > 0 && g->cols > badges) {
        int at = g->cols - badges;
        if (ui->insecure) /* --tls-insecure: anyone on the path may read and change it all */
            at += grid_puts(g, 0, at, 10, bar | GRID_BOLD | color(ui, GRID_RED), " INSECURE ");
        if (m->unknown[0] != '\0') /* a typo must not look like an idle queue */
            at += grid_puts(g, 0, at, 15, bar | GRID_BOLD | color(ui, GRID_RED), " UNKNOWN QUEUE ");
        if (m->stats.paused)
            at += grid_puts(g, 0, at, 8, bar | GRID_BOLD | color(ui, GRID_RED), " PAUSED ");
        if (ui->read_only)
            grid_puts(g, 0, at, 11, bar | GRID_BOLD | color(ui, GRID_YELLOW), " READ-ONLY ");
    }
    seg_add(s, &n, 0, bar | GRID_BOLD, " delayq top ");
    seg_add(s, &n, 0, bar, "| queue %s ", m->queue);
    if (m->parts_all > 1) { /* one logical queue: the counts below are the sums */
        char drain[40] = "";
        if (m->parts_all > m->parts)
            snprintf(drain, sizeof drain, " (%zu draining)", m->parts_all - m->parts);
        seg_add(s, &n, 1, bar, "| partitions %zu%s on %zu %s%s ", m->parts, drain, m->parts_nodes,
                m->parts_cluster ? (m->parts_nodes == 1 ? "master" : "masters") : "server",
                m->parts_nodes >= MODEL_PARTS_NODES_MAX ? " or more" : "");
    }
    if (m->nqueues > 1)
        seg_add(s, &n, 2, bar, "(Q: %lld queues) ", (long long)m->nqueues);
    if (m->stats.throttled) { /* who throttled it and why: never dropped (grid_put escapes) */
        char th[sizeof s[0].text - 16];
        dq_health_throttle(th, sizeof th, &m->stats);
        seg_add(s, &n, 0, bar | GRID_BOLD | color(ui, GRID_YELLOW), "| THROTTLED %s ", th);
    }
    if (!m->connected)
        seg_add(s, &n, 0, bar | GRID_BOLD | color(ui, GRID_RED), "| DISCONNECTED ");
    else if (ui->paused)
        seg_add(s, &n, 1, bar | GRID_BOLD, "| REFRESH PAUSED (Z) ");
    else
        seg_add(s, &n, 3, bar, "| every %lldms ", (long long)ui->refresh_ms);
    if (m->node[0] != '\0') /* a cluster: the master of the queue's slot */
        seg_add(s, &n, 4, bar, "| cluster node %s ", m->node);
    else
        seg_add(s, &n, 4, bar, "| %s ", m->endpoint);
    seg_add(s, &n, 4, bar, "redis %s %s ", m->info.version, m->info.role);
    seg_add(s, &n, 5, bar, "| mem %s/%s ", used, max);
    seg_add(s, &n, 6, bar, "| %lld clients ", (long long)m->info.connected_clients);
    seg_add(s, &n, 3, bar, "| %s ", m->have_data ? now : "-");
    render_segs(g, 0, 0, g->cols - badges - (badges > 0), s, n);
}

static void
render_counts(const struct model *m, const struct ui *ui, struct grid *g)
{
    const dq_stats *s = &m->stats;
    struct seg sg[SEGS_MAX];
    char age[32], next[32];
    int n = 0;

    dq_dur_format(age, sizeof age, s->oldest_due_age_ms);
    seg_add(sg, &n, 0, GRID_BOLD, " due %lld", (long long)s->due);
    if (s->oldest_due_age_ms > 0)
        seg_add(sg, &n, 0, 0, " (oldest %s)", age);
    seg_add(sg, &n, 0, s->failed > 0 ? color(ui, GRID_RED) | GRID_BOLD : 0, "  failed %lld",
            (long long)s->failed);
    const struct worker_summary *w = &m->workers;
    if (w->registered >= 0 && w->lost > 0)
        seg_add(sg, &n, 0, w->live == 0 ? color(ui, GRID_RED) | GRID_BOLD : color(ui, GRID_YELLOW),
                "  workers %lld (%lld lost)", (long long)w->live, (long long)w->lost);
    else if (w->registered >= 0)
        seg_add(sg, &n, 0, w->live == 0 && s->due > 0 ? color(ui, GRID_RED) | GRID_BOLD : 0,
                "  workers %lld", (long long)w->live);
    seg_add(sg, &n, 1, 0, "  in-flight %lld", (long long)s->inflight);
    if (s->expired_leases > 0)
        seg_add(sg, &n, 1, color(ui, GRID_RED), " (%lld expired)", (long long)s->expired_leases);
    seg_add(sg, &n, 1, 0, "  future %lld", (long long)s->future);
    seg_add(sg, &n, 4, 0, "  far %lld", (long long)s->far_future);
    if (s->window_ms > 0) {
        /* the scripts' per-minute counts, so the figures hold still between refreshes */
        char win[32];
        dq_dur_format(win, sizeof win, s->window_ms);
        seg_add(sg, &n, 2, 0, "  | last %s: done %lld failed %lld", win, (long long)s->window_done,
                (long long)s->window_failed);
    } else {
        seg_add(sg, &n, 2, 0, "  | enq %.1f/s done %.1f/s fail %.1f/s (per refresh)", m->enq_rate,
                m->done_rate, m->fail_rate);
    }
    if (s->next_due_ms >= 0) {
        dq_dur_format(next, sizeof next, s->next_due_ms - s->now_ms);
        seg_add(sg, &n, 3, 0, "  | next in %s", next);
    }
    if (s->trimmed > 0)
        seg_add(sg, &n, 1, color(ui, GRID_YELLOW) | GRID_BOLD,
                "  | failed-set retention has removed %lld tasks", (long long)s->trimmed);
    render_segs(g, 1, 0, g->cols, sg, n);
}

/* The verdict, then the due backlog's sparkline where there is room. */
static void
render_verdict(const struct model *m, const struct ui *ui, struct grid *g)
{
    static const char *const marks[] = {"ok", "!", "!!"};
    static const int colors[] = {GRID_GREEN, GRID_YELLOW, GRID_RED};
    struct dq_health_facts f = {.stats = &m->stats,
                                .max_oldest_due_ms = m->config.alert_oldest_due_ms,
                                .max_far_future = m->config.alert_far_future,
                                .used_memory = m->info.used_memory,
                                .maxmemory = m->info.maxmemory,
                                .memory_warn_pct = (int)m->config.alert_memory_pct,
                                .fail_pct = m->config.alert_fail_pct,
                                .fail_per_min = m->config.alert_fail_per_min,
                                .workers_registered = m->workers.registered,
                                .workers_live = m->workers.live,
                                .workers_lost = m->workers.lost,
                                .last_beat_ms = m->workers.last_beat_ms,
                                .workers_hung = m->workers.hung,
                                .hung_worker =
                                    m->workers.hung_worker[0] ? m->workers.hung_worker : NULL,
                                .retry_rate = m->have_data ? m->retry_rate : -1,
                                .max_running_ms = m->config.alert_running_ms,
                                .longest_running_ms = -1,
                                .unknown_queue = m->unknown[0] != '\0' ? m->unknown : NULL};
    /* what the pages shown tell: a hung handler, why tasks wait to retry */
    const dq_page *inf = &m->pages[PANE_INFLIGHT], *fut = &m->pages[PANE_FUTURE];
    for (size_t i = 0; i < inf->n; i++) {
        int64_t ran =
            inf->tasks[i].claimed_ms >= 0 ? m->stats.now_ms - inf->tasks[i].claimed_ms : 0;
        if (ran > m->config.alert_running_ms) {
            f.long_running++;
            f.longest_running_ms = ran > f.longest_running_ms ? ran : f.longest_running_ms;
        }
    }
    for (size_t i = 0; i < fut->n && f.retry_error == NULL; i++)
        if (fut->tasks[i].attempt > 0 && fut->tasks[i].last_error != NULL)
            f.retry_error = fut->tasks[i].last_error;
    char text[512];
    enum dq_health_level level = dq_health_verdict(&f, text, sizeof text);
    uint16_t attr = (level > DQ_HEALTH_OK ? GRID_BOLD : 0) | color(ui, colors[level]);

    if (!m->have_data)
        return;
    int c = grid_printf(g, 2, 0, g->cols, attr, " %s %s", marks[level], text);
    /* the last SPARK_MINUTES minutes from the rollups when the queue keeps them; else the
     * samples since the inspector opened */
    int first = 0; /* minutes before the first sample (history just turned on) are left out */
    while (first < m->nhspark && m->hspark[first] < 0)
        first++;
    bool rolled = first < m->nhspark;
    const int64_t *v = rolled ? m->hspark + first : m->spark;
    int n = rolled ? m->nhspark - first : m->nspark;
    char label[32];
    snprintf(label, sizeof label, rolled ? "due backlog %dm " : "due backlog ", n);
    int lw = (int)strlen(label);
    if (g->cols - c < lw + 14 || n == 0)
        return;
    /* the sparkline takes what is left, right-aligned, two blanks after the verdict */
    int len = n < g->cols - c - lw - 4 ? n : g->cols - c - lw - 4;
    int at = g->cols - len - 1;
    char spark[SPARK_LEN * 4 + 1];
    dq_ov_spark(spark, sizeof spark, v + (n - len), (size_t)len, !ui->ascii);
    grid_puts(g, 2, at - lw - 1, lw + 1, GRID_DIM, label);
    grid_puts(g, 2, at, len, color(ui, GRID_CYAN), spark);
}

static void
first_line(struct dq_buf *b, const char *s)
{
    if (s != NULL)
        dq_buf_append(b, s, strcspn(s, "\n"));
}

static char
lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Where @needle is in @len bytes of @hay, in the server's smart case (text_needle in
 * lua/lib.lua): a needle with an ASCII capital matches exactly, one without matches
 * ASCII letters in either case. NULL when it is not there. For the rows of a search:
 * which field matched. */
static const char *
find_smart(const void *hay, size_t len, const char *needle)
{
    const char *h = hay;
    size_t n = strlen(needle);
    bool exact = false;

    for (const char *p = needle; *p; p++)
        exact |= *p >= 'A' && *p <= 'Z';
    if (h == NULL || n == 0)
        return NULL;
    for (size_t i = 0; i + n <= len; i++) {
        size_t k = 0;
        while (k < n && (exact ? h[i + k] == needle[k] : lower(h[i + k]) == needle[k]))
            k++;
        if (k == n)
            return h + i;
    }
    return NULL;
}

/* A search match whose row would not show why it matched (in Failed: the needle is in
 * the trace or the payload, not the error; elsewhere: in the last error, not the
 * payload): that field, named, with the line that holds the needle. False when the
 * row's usual text shows it (or it matched the id). */
static bool
match_field(const dq_task *t, int pane, const char *needle, struct dq_buf *rest)
{
    const char *hit;

    if (pane == PANE_FAILED && t->error && find_smart(t->error, strlen(t->error), needle))
        return false;
    if (pane != PANE_FAILED && t->payload && find_smart(t->payload, t->payload_len, needle) != NULL)
        return false;
    if (pane == PANE_FAILED && t->trace && (hit = find_smart(t->trace, strlen(t->trace), needle))) {
        const char *from = hit, *to = hit + strcspn(hit, "\n");
        while (from > t->trace && from[-1] != '\n')
            from--;
        while (from < hit && (*from == ' ' || *from == '\t'))
            from++;
        dq_buf_puts(rest, "trace: ");
        if (hit - from > 16) { /* the needle, not the start of a long line, must show */
            for (from = hit - 16; ((unsigned char)*from & 0xc0) == 0x80; from++)
                ;
            dq_buf_puts(rest, "…");
        }
        dq_buf_append(rest, from, (size_t)(to - from));
        return true;
    }
    if (pane == PANE_FAILED && t->payload && find_smart(t->payload, t->payload_len, needle)) {
        dq_buf_puts(rest, "payload: ");
        dq_mp_summary(rest, t->payload, t->payload_len, 400);
        return true;
    }
    if (pane != PANE_FAILED && t->last_error &&
        find_smart(t->last_error, strlen(t->last_error), needle)) {
        dq_buf_puts(rest, "last error: ");
        first_line(rest, t->last_error);
        return true;
    }
    return false;
}

/* One row of a pane: id, time column, attempt, then the rest. */
static void
render_row(const struct model *m, const struct ui *ui, struct grid *g, int pane, const dq_task *t,
           int row, int col, int width, bool selected)
{
    struct dq_buf rest = DQ_BUF_INIT;
    char when[32] = "-", att[24];
    int64_t now = m->stats.now_ms;
    uint16_t attr = selected ? GRID_REVERSE : 0, when_attr = attr, rest_attr = 0;
    int idw = width >= 60 ? 22 : 14, ww = 10, aw = 6;

    switch (pane) {
    case PANE_DUE: /* how long it has waited */
        dq_dur_format(when, sizeof when, now - t->due_ms);
        break;
    case PANE_FUTURE:
        dq_dur_format(when, sizeof when, t->due_ms - now);
        break;
    case PANE_INFLIGHT: /* how long it has been running, flagged past the threshold */
        if (t->claimed_ms >= 0) {
            dq_dur_format(when, sizeof when, now - t->claimed_ms);
            if (now - t->claimed_ms > m->config.alert_running_ms)
                when_attr = attr | color(ui, GRID_YELLOW) | GRID_BOLD;
        }
        break;
    case PANE_DONE: /* how long ago it finished */
        dq_dur_format(when, sizeof when, now - t->done_ms);
        break;
    default:
        dq_dur_format(when, sizeof when, now - t->failed_ms);
        break;
    }
    dq_fmt_attempts(att, sizeof att, t);
    if (pane == PANE_DONE) /* the run that finished: a done record keeps no limit */
        snprintf(att, sizeof att, "%u", t->attempt);
    if (ui->filter[0] != '\0' && pane == ui->filter_pane && pane != PANE_INFLIGHT &&
        match_field(t, pane, ui->filter, &rest)) {
        rest_attr = color(ui, GRID_CYAN); /* why it matched, where the row would not say */
    } else if (pane == PANE_FAILED) {
        dq_buf_puts(&rest, t->reason ? t->reason : "?");
        dq_buf_puts(&rest, ": ");
        first_line(&rest, t->error);
    } else if (pane == PANE_INFLIGHT) {
        /* the lease (renewed while it runs) says whether its worker is still there */
        char left[32];
        if (t->lease_ms < now) {
            dq_buf_puts(&rest, "EXPIRED ");
            rest_attr = color(ui, GRID_RED) | GRID_BOLD;
        } else {
            dq_dur_format(left, sizeof left, t->lease_ms - now);
            dq_buf_printf(&rest, "lease %s ", left);
        }
        dq_buf_puts(&rest, t->worker ? t->worker : "?");
    } else if (pane == PANE_DONE) {
        /* how long it ran (claim to ack), where, and when it finished */
        char took[DQ_DUR_BUFSZ] = "?", at[DQ_TIME_BUFSZ], today[DQ_TIME_BUFSZ];
        if (t->claimed_ms >= 0 && t->done_ms >= t->claimed_ms)
            dq_dur_format(took, sizeof took, t->done_ms - t->claimed_ms);
        dq_time_format(at, sizeof at, t->done_ms);
        dq_time_format(today, sizeof today, now);
        dq_buf_printf(&rest, "%-7s ", took);
        dq_buf_append(&rest, t->worker ? t->worker : "?",
                      t->worker ? dq_slen(t->worker, t->worker_len) : 1);
        /* the time of day when it finished on the server's day (UTC), else the date too */
        dq_buf_printf(&rest, "  %s", strncmp(at, today, 11) == 0 ? at + 11 : at);
    } else if (t->undecodable) {
        dq_buf_puts(&rest, "UNDECODABLE ");
        dq_mp_summary(&rest, t->raw, t->raw_len, 200);
        rest_attr = color(ui, GRID_MAGENTA);
    } else if ((pane == PANE_FUTURE || pane == PANE_DUE) && t->attempt > 0 &&
               t->last_error != NULL) {
        /* failed before (waiting to retry, or due again): why it failed matters more than
         * what it carries */
        dq_buf_puts(&rest, "retry: ");
        first_line(&rest, t->last_error);
        rest_attr = color(ui, GRID_YELLOW);
    } else {
        dq_mp_summary(&rest, t->payload, t->payload_len, 400);
    }
    grid_attr(g, row, col, width, attr);
    if (app_is_marked(ui, pane, t->id)) {
        grid_puts(g, row, col, 1, attr | GRID_BOLD | color(ui, GRID_YELLOW), "*");
        grid_puts(g, row, col + 1, idw - 1, attr | GRID_BOLD | color(ui, GRID_YELLOW), t->id);
    } else {
        grid_puts(g, row, col, idw, attr | GRID_BOLD, t->id);
    }
    grid_puts(g, row, col + idw + 1, ww, when_attr, when);
    grid_puts(g, row, col + idw + ww + 2, aw, attr, att);
    if (width > idw + ww + aw + 3)
        grid_put(g, row, col + idw + ww + aw + 3, width - (idw + ww + aw + 3), attr | rest_attr,
                 rest.data ? rest.data : "", rest.len);
    dq_buf_free(&rest);
}

static void
render_pane(const struct model *m, const struct ui *ui, struct grid *g, int pane,
            const struct pane_box *box)
{
    int row = box->row, col = box->col, height = box->height, width = box->width;
    static const char *const when_names[] = {"WAITING", "DUE IN", "RUNNING", "FAILED", "FINISHED"};
    static const char *const rest_names[] = {"PAYLOAD OR LAST ERROR", "PAYLOAD OR LAST ERROR",
                                             "LEASE, WORKER", "REASON: ERROR",
                                             "TOOK    WORKER, FINISHED AT"};
    bool focused = ui->focus == pane;
    const dq_page *p = &m->pages[pane];
    uint16_t title = focused ? GRID_BOLD | GRID_UNDERLINE | color(ui, GRID_CYAN) : GRID_BOLD;
    int idw = width >= 60 ? 22 : 14;

    if (height == 0)
        return;
    /* the position ("1-17 of 24") is kept at the right end; the title takes the rest */
    char range[64] = "";
    if ((int64_t)(m->offsets[pane] + p->n) < p->total || m->offsets[pane] > 0)
        snprintf(range, sizeof range, " %zu-%zu of %lld", m->offsets[pane] + 1,
                 m->offsets[pane] + p->n, (long long)p->total);
    int rangew = (int)strlen(range), titlew = width - rangew > 10 ? width - rangew : width;
    if (pane == PANE_FAILED && ui->group[0] != '\0')
        /* a filter banner: what r d A X act on, before the signature that may be cut */
        grid_printf(g, row, col, titlew, paint(ui, title, GRID_YELLOW),
                    "[%d] Failed FILTER group %.8s: %lld of %lld (Esc: all) \"%s\"", pane + 1,
                    ui->group, (long long)p->total, (long long)m->stats.failed, ui->group_sig);
    else if (pane == ui->filter_pane && ui->filter[0] != '\0')
        grid_printf(g, row, col, titlew, paint(ui, title, GRID_YELLOW),
                    "[%d] %s FILTER: %lld matching \"%s\" (%s %lld of %lld; Esc clears)", pane + 1,
                    pane_names[pane], (long long)p->total, ui->filter,
                    ui->search_done ? "searched" : "searching", (long long)ui->search_scanned,
                    (long long)ui->search_total);
    else
        grid_printf(g, row, col, titlew, title, "[%d] %s (%lld)", pane + 1, pane_names[pane],
                    (long long)p->total);
    if (titlew < width)
        grid_puts(g, row, col + titlew, rangew, GRID_DIM, range);
    grid_printf(g, row + 1, col, width, GRID_DIM, "%-*s %-10s %-6s %s", idw, "ID", when_names[pane],
                "ATT", rest_names[pane]);
    int rows = height - 2;
    if (p->n == 0 && pane == PANE_DONE && m->have_data && m->config_ms >= 0 &&
        m->config.done_retention == 0 && m->config.done_retention_ms == 0) {
        /* an empty Done pane must not read as "nothing finished" */
        grid_puts(g, row + 2, col, width, GRID_DIM,
                  "(done retention is off: finished tasks are not kept)");
        grid_puts(g, row + 3, col, width, 0,
                  "delayq config done_retention=1000 keeps the last 1000 finished tasks");
        grid_puts(g, row + 4, col, width, GRID_DIM,
                  "(when, how long, which worker, which attempt; see delayq-config(1))");
        return;
    }
    if (p->n == 0) {
        grid_puts(g, row + 2, col, width, GRID_DIM, m->have_data ? "(empty)" : "(loading)");
        return;
    }
    /* the window starts at the pane's first row shown, inside the fetched page (a search
     * holds all its matches in one page) */
    size_t first = ui->top[pane] >= m->offsets[pane] ? ui->top[pane] - m->offsets[pane] : 0;
    for (int i = 0; i < rows && first + (size_t)i < p->n; i++) {
        size_t index = m->offsets[pane] + first + (size_t)i;
        render_row(m, ui, g, pane, &p->tasks[first + (size_t)i], row + 2 + i, col, width,
                   focused && index == ui->sel[pane]);
    }
}

/* Where each pane goes on a @rows x @cols screen; a pane too small to show is left out. */
static void
set_box(struct layout *l, int pane, int row, int col, int height, int width)
{
    if (height >= 3 && width >= 20)
        l->boxes[pane] = (struct pane_box){row, col, height, width};
}

static void
render_panes(const struct model *m, const struct ui *ui, const struct layout *l, struct grid *g,
             int top, int bottom)
{
    if (!l->tabs) {
        for (int p = 0; p < PANE_COUNT; p++)
            render_pane(m, ui, g, p, &l->boxes[p]);
        for (int r = top; r < bottom; r++)
            grid_puts(g, r, g->cols / 2, 1, GRID_DIM, "│");
        return;
    }
    /* small terminal: a tab bar, then the focused pane */
    int c = 0;
    for (int i = 0; i < PANE_COUNT; i++) {
        uint16_t a = i == ui->focus ? GRID_REVERSE | GRID_BOLD : 0;
        c += grid_printf(g, top, c, g->cols - c, a, " %d %s %lld ", i + 1, pane_names[i],
                         (long long)model_pane_total(m, i));
        c++;
    }
    render_pane(m, ui, g, ui->focus, &l->boxes[ui->focus]);
}

static void
render_status(const struct model *m, const struct ui *ui, struct grid *g)
{
    int row = g->rows - 1;

    if (!m->connected && m->have_data) {
        grid_attr(g, row, 0, g->cols, GRID_REVERSE | color(ui, GRID_RED));
        grid_printf(g, row, 0, g->cols, GRID_REVERSE | GRID_BOLD | color(ui, GRID_RED),
                    " DISCONNECTED: %s (retrying in %llds) ", m->error,
                    (long long)((ui->retry_in_ms + 999) / 1000));
        return;
    }
    if (!m->have_data && m->error[0] != '\0') {
        grid_printf(g, row, 0, g->cols, color(ui, GRID_RED) | GRID_BOLD, " %s", m->error);
        return;
    }
    if (ui->status[0] != '\0') {
        grid_printf(g, row, 0, g->cols, ui->status_error ? color(ui, GRID_RED) | GRID_BOLD : 0,
                    " %s", ui->status);
        return;
    }
    char hints[512];
    keymap_hints(ui, g->cols, hints, sizeof hints);
    grid_puts(g, row, 0, g->cols, GRID_DIM, hints);
}

/*
 * A question or a prompt for the status line, made to fit @width columns: when it is too
 * wide, the text between its first and last double quote (a signature or a search: bytes
 * from Redis or typed) is shortened with an ellipsis, so what comes before (the count)
 * and after ("y/N", what to type) stays whole. Returns false when even that is not
 * enough, with a dozen bytes of it left (the caller wraps). @out gets the text.
 */
static bool
fit_quoted(const char *q, int width, char *out, size_t size)
{
    snprintf(out, size, "%s", q);
    if (grid_text_cols(out, strlen(out)) <= width)
        return true;
    const char *open = strchr(q, '"'), *close = strrchr(q, '"');
    if (open == NULL || close == open)
        return false;
    size_t body = (size_t)(close - open - 1);
    /* shorter than this, the quoted text says nothing: two lines are better */
    while (body > 12) {
        body--;
        while (body > 0 && ((unsigned char)open[1 + body] & 0xc0) == 0x80)
            body--; /* not inside a UTF-8 sequence */
        snprintf(out, size, "%.*s…%s", (int)(open + 1 + body - q), q, close);
        if (grid_text_cols(out, strlen(out)) <= width)
            return true;
    }
    return false;
}

/* The question (y/N) or the prompt with what was typed, on the status line; on the line
 * above too when it holds a newline (the question, then what to type) or does not fit
 * on one line even with its quoted text shortened. */
static void
render_question(const struct ui *ui, struct grid *g, const char *q)
{
    uint16_t bar = paint(ui, GRID_REVERSE, GRID_YELLOW);
    int width = g->cols - 1, row = g->rows - 1;
    const char *nl = strchr(q, '\n');
    char fitted[1200], first[1200];
    size_t cut = 0;

    if (nl == NULL && (fit_quoted(q, width, fitted, sizeof fitted) || g->rows < 3)) {
        grid_attr(g, row, 0, g->cols, bar);
        grid_printf(g, row, 0, g->cols, bar | GRID_BOLD, " %s", fitted);
        return;
    }
    if (nl != NULL) {
        snprintf(first, sizeof first, "%.*s", (int)(nl - q), q);
        fit_quoted(first, width, fitted, sizeof fitted);
        snprintf(first, sizeof first, "%s", fitted);
        snprintf(fitted, sizeof fitted, "%s", nl + 1);
    } else {
        /* broken at the last blank that leaves the first line within the width */
        size_t len = strlen(fitted);
        for (size_t i = 1; i < len; i++)
            if (fitted[i] == ' ' && grid_text_cols(fitted, i) <= width)
                cut = i;
        cut = cut == 0 ? len / 2 : cut;
        snprintf(first, sizeof first, "%.*s", (int)cut, fitted);
        memmove(fitted, fitted + cut + (fitted[cut] == ' '), strlen(fitted + cut) + 1);
    }
    if (g->rows < 3) { /* no room for two lines: what to type matters most */
        grid_attr(g, row, 0, g->cols, bar);
        grid_printf(g, row, 0, g->cols, bar | GRID_BOLD, " %s", fitted);
        return;
    }
    grid_attr(g, row - 1, 0, g->cols, bar);
    grid_attr(g, row, 0, g->cols, bar);
    grid_printf(g, row - 1, 0, g->cols, bar | GRID_BOLD, " %s", first);
    grid_printf(g, row, 0, g->cols, bar | GRID_BOLD, " %s", fitted);
}

/* Line @i of a text view into @buf (snprintf semantics). */
typedef void (*line_fn)(const struct ui *ui, size_t i, char *buf, size_t size);

static void
detail_line(const struct ui *ui, size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "%s", ui->detail[i]);
}

static void
help_line(const struct ui *ui, size_t i, char *buf, size_t size)
{
    keymap_help_line(i, buf, size);
}

static void
render_lines(const struct ui *ui, struct grid *g, line_fn get, size_t n, const char *title,
             const char *status)
{
    int body = g->rows - 2;
    int max = n > 0 ? (int)n - 1 : 0;
    /* app_set_layout keeps the scroll within the text; a render before it still fits */
    int scroll = ui->scroll > max ? max : ui->scroll < 0 ? 0 : ui->scroll;

    grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
    grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD, " %s", title);
    for (int r = 0; r < body && (size_t)(scroll + r) < n; r++) {
        /* tabs in traces: shown as spaces, not as \t */
        char line[2048];
        get(ui, (size_t)(scroll + r), line, sizeof line);
        for (char *p = line; *p; p++)
            *p = *p == '\t' ? ' ' : *p;
        grid_puts(g, 1 + r, 1, g->cols - 1, 0, line);
    }
    if (status != NULL && status[0] != '\0')
        grid_printf(g, g->rows - 1, 0, g->cols, 0, " %s", status);
    else
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " j/k PgUp/PgDn scroll  y copy  Esc back  (%d/%zu)", n ? scroll + 1 : 0, n);
}

/* The queue picker: one row per queue with its counts, the selected one reversed. */
static void
render_picker(const struct model *m, const struct ui *ui, const struct layout *l, struct grid *g)
{
    int body = g->rows - 3;
    size_t shown = (size_t)l->rows_visible;
    size_t first = ui->pick_sel >= shown ? ui->pick_sel - shown + 1 : 0;
    grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
    grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD, " queues on %s (%lld)", m->endpoint,
                (long long)ui->pick_total);
    grid_printf(g, 1, 0, g->cols, GRID_BOLD, "   %-40s %10s %10s %10s %10s", "QUEUE", "DUE",
                "FUTURE", "IN-FLIGHT", "FAILED");
    for (int r = 0; r < body && first + (size_t)r < ui->npick; r++) {
        size_t i = first + (size_t)r;
        bool cur = strcmp(ui->pick_names[i], m->queue) == 0;
        uint16_t attr = i == ui->pick_sel ? GRID_REVERSE : 0;
        if (i == ui->pick_sel)
            grid_attr(g, 2 + r, 0, g->cols, attr);
        int c = grid_printf(g, 2 + r, 0, g->cols, attr, " %s ", cur ? "*" : " ");
        grid_puts(g, 2 + r, c, 40, attr, ui->pick_names[i]);
        int64_t *n = ui->pick_counts[i];
        grid_printf(g, 2 + r, c + 40, g->cols - c - 40, attr | (n[3] > 0 ? color(ui, GRID_RED) : 0),
                    " %10lld %10lld %10lld %10lld", (long long)n[0], (long long)n[1],
                    (long long)n[2], (long long)n[3]);
    }
    if (ui->status[0] != '\0')
        grid_printf(g, g->rows - 1, 0, g->cols, 0, " %s", ui->status);
    else if (ui->pick_total > (int64_t)ui->npick)
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " %lld more not listed  j/k move  Enter open  %s",
                    (long long)(ui->pick_total - (int64_t)ui->npick),
                    ui->pick_first ? "q quit" : "Esc back");
    else if (ui->pick_first)
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM, " j/k move  Enter open  q quit");
    else
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " j/k move  Enter open  Esc back  (* shown now)");
}

/* Where text @s, wrapped at blanks, breaks into lines of @first then @next columns (at
 * most @max lines; the last one is cut by grid_put with "…"): @cuts[i] is where line i
 * starts. Returns the number of lines. Measured escaped, as grid_put draws it. */
static int
wrap_text(const char *s, int first, int next, int max, size_t *cuts)
{
    size_t len = strlen(s), at = 0;
    int n = 0;

    while (n < max) {
        cuts[n++] = at;
        int w = n == 1 ? first : next;
        if (n == max || grid_text_cols(s + at, len - at) <= w)
            break;
        size_t cut = 0, fit = 0;
        for (size_t i = at + 1; i <= len; i++) {
            if (((unsigned char)s[i] & 0xc0) == 0x80)
                continue; /* inside a UTF-8 sequence */
            if (grid_text_cols(s + at, i - at) > w)
                break;
            fit = i;
            if (s[i] == ' ')
                cut = i;
        }
        at = cut > at ? cut + 1 : fit > at ? fit : at + 1;
    }
    return n;
}

/* The columns before the signature (with and without the group's id), where its next
 * lines start (under SHARE, so the count stands out), and how many it may take. */
enum { ERR_COLS = 57, ERR_COLS_NARROW = 39, ERR_INDENT = 10, ERR_SIG_LINES = 3 };

/* How many lines group @x takes (its signature wrapped), and where they break. */
static int
error_lines(const dq_error_group *x, int sigw, int cols, size_t *cuts)
{
    return wrap_text(x->signature, sigw, cols - ERR_INDENT - 1, ERR_SIG_LINES, cuts);
}

/*
 * The Errors view (E): one row per error group, largest first, the selected one
 * reversed: count, share, first and last seen, the group's id (what the CLI takes), and
 * the whole signature, on more lines where it does not fit beside the columns. The
 * sample error is a column on a wide screen, else the selected group's is shown above
 * the footer (with its id, below 100 columns). Signatures and sample errors come from Redis:
 * grid_put escapes them.
 */
static void
render_errors(const struct model *m, const struct ui *ui, const struct layout *l, struct grid *g)
{
    const dq_errors *e = &ui->errors;
    bool sample_col = g->cols >= 160, id_col = g->cols >= 100;
    int before = id_col ? ERR_COLS : ERR_COLS_NARROW;
    int sigw = sample_col ? (g->cols - before) / 2 : g->cols - before;
    int body = g->rows - 3 - (sample_col ? 0 : 2);
    size_t cuts[ERR_SIG_LINES];

    sigw = sigw < 10 ? 10 : sigw;
    grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
    grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD,
                " error groups of %s: %lld failed in %zu group%s", m->queue, (long long)e->failed,
                e->n, e->n == 1 ? "" : "s");
    grid_printf(g, 1, 0, g->cols, GRID_BOLD, " %8s %6s %10s %9s  %s%-*s%s", "COUNT", "SHARE",
                "FIRST SEEN", "LAST SEEN", id_col ? "GROUP             " : "", sigw, "SIGNATURE",
                sample_col ? " SAMPLE ERROR" : "");
    if (e->n == 0)
        grid_puts(g, 2, 1, g->cols - 1, GRID_DIM, "(no failed tasks)");
    /* the first group shown: the selected one and those above it fit */
    size_t first = ui->err_sel < e->n ? ui->err_sel : 0;
    for (int used = 0; first < e->n;) {
        used += error_lines(&e->groups[first], sigw, g->cols, cuts);
        if (first == 0 || used + error_lines(&e->groups[first - 1], sigw, g->cols, cuts) > body)
            break;
        first--;
    }
    int row = 2;
    for (size_t i = first; i < e->n && row < 2 + body; i++) {
        const dq_error_group *x = &e->groups[i];
        uint16_t attr = i == ui->err_sel ? GRID_REVERSE : 0;
        char last[32], since[32];
        int64_t now = e->now_ms;
        dq_dur_format(last, sizeof last, now > x->last_ms ? now - x->last_ms : 0);
        dq_dur_format(since, sizeof since, now > x->first_ms ? now - x->first_ms : 0);
        int lines = error_lines(x, sigw, g->cols, cuts);
        for (int k = 0; k < lines && row + k < 2 + body && i == ui->err_sel; k++)
            grid_attr(g, row + k, 0, g->cols, attr);
        int c = grid_printf(g, row, 0, g->cols, attr | color(ui, GRID_RED), " %8lld",
                            (long long)x->count);
        c += grid_printf(g, row, c, g->cols - c, attr, " %5.1f%% %10s %9s  ",
                         e->failed > 0 ? 100.0 * (double)x->count / (double)e->failed : 0.0, since,
                         last);
        if (id_col)
            c += grid_printf(g, row, c, g->cols - c, attr, "%-16s  ", x->id);
        size_t len = strlen(x->signature);
        for (int k = 0; k < lines && row < 2 + body; k++, row++) {
            size_t end = k + 1 < lines ? cuts[k + 1] : len;
            int at = k == 0 ? c : ERR_INDENT;
            /* a line cut before a blank: the blank is not drawn */
            while (end > cuts[k] && k + 1 < lines && x->signature[end - 1] == ' ')
                end--;
            grid_put(g, row, at, k == 0 ? sigw : g->cols - at - 1, attr | GRID_BOLD,
                     x->signature + cuts[k], k + 1 < lines ? end - cuts[k] : len - cuts[k]);
            if (k == 0 && sample_col)
                grid_puts(g, row, c + sigw + 1, g->cols - c - sigw - 1, attr | GRID_DIM,
                          x->sample_error ? x->sample_error : "");
        }
    }
    if (!sample_col && ui->err_sel < e->n) {
        const dq_error_group *x = &e->groups[ui->err_sel];
        grid_printf(g, g->rows - 3, 1, g->cols - 1, GRID_DIM,
                    "%s%s%sits newest failure, task %s:", id_col ? "" : "group ",
                    id_col ? "" : x->id, id_col ? "" : ", ",
                    x->sample_id && x->sample_id[0] ? x->sample_id : "?");
        grid_puts(g, g->rows - 2, 3, g->cols - 3, 0, x->sample_error ? x->sample_error : "");
    }
    grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                " j/k move  Enter: its tasks in Failed  Esc back  (exact counts)");
}

/* ---- the Schedules view (S; periodic schedules, PROTOCOL.md 5.30) ------------------ */

/* Lines about the selected schedule above the footer (a blank line before them). */
enum { SCHED_PANEL = 5 };

int
view_schedule_rows(int rows, int cols)
{
    return rows - 4 - SCHED_PANEL > 1 ? rows - 4 - SCHED_PANEL : 1;
}

/* A schedule's question (y/N) is asked over the Schedules view. */
static bool
sched_question(const struct ui *ui)
{
    return ui->mode == MODE_CONFIRM &&
           (ui->confirm_action == ACT_SCHED_PAUSE || ui->confirm_action == ACT_SCHED_RESUME);
}

/* "every 1m00s", or the cron spec with its zone (bytes from Redis: grid_put escapes). */
static void
sched_spec(const dq_schedule *s, char *buf, size_t size)
{
    char every[DQ_DUR_BUFSZ];

    if (s->every_ms > 0) {
        dq_dur_format(every, sizeof every, s->every_ms);
        snprintf(buf, size, "every %s", every);
    } else {
        snprintf(buf, size, "%s%s%s", s->spec ? s->spec : "?", s->tz && s->tz[0] ? " " : "",
                 s->tz ? s->tz : "");
    }
}

/* What the last run became: short for its column, or @full for the line about it. The
 * attribute says it at a glance (failed red, done green, waiting to retry yellow). */
static uint16_t
sched_outcome(const struct ui *ui, const struct sched_last *l, int64_t now, bool full, char *buf,
              size_t size)
{
    char d[DQ_DUR_BUFSZ], at[DQ_TIME_BUFSZ];

    dq_dur_format(d, sizeof d, l->since_ms >= 0 && now > l->since_ms ? now - l->since_ms : 0);
    switch (l->run) {
    case SCHED_RUN_NEVER:
        snprintf(buf, size, "%s", full ? "it has not fired yet" : "-");
        return GRID_DIM;
    case SCHED_RUN_SCHEDULED:
        if (l->attempt > 0) {
            snprintf(buf, size, "%s %u: %s", full ? "waiting to retry after attempt" : "retry",
                     l->attempt, l->text);
            return color(ui, GRID_YELLOW);
        }
        snprintf(buf, size, "%s", full ? "its task waits for a worker" : "waiting");
        return 0;
    case SCHED_RUN_INFLIGHT:
        snprintf(buf, size, "running %s%s%s", d, full ? " on worker " : "", full ? l->worker : "");
        return color(ui, GRID_CYAN);
    case SCHED_RUN_DONE:
        dq_dur_format(d, sizeof d, l->took_ms >= 0 ? l->took_ms : 0);
        dq_time_format(at, sizeof at, l->since_ms);
        if (full)
            snprintf(buf, size, "done %s after %s on worker %s (attempt %u)", at, d, l->worker,
                     l->attempt);
        else
            snprintf(buf, size, "done in %s", d);
        return color(ui, GRID_GREEN);
    case SCHED_RUN_FAILED:
        if (full)
            snprintf(buf, size, "failed %s ago: %s", d, l->text);
        else /* the usual reason says nothing: its error does */
            snprintf(buf, size, "failed: %s",
                     strncmp(l->text, "error: ", 7) == 0 ? l->text + 7 : l->text);
        return color(ui, GRID_RED) | GRID_BOLD;
    case SCHED_RUN_GONE:
        snprintf(buf, size, "%s",
                 full ? "its task is gone: finished and not kept, or dropped" : "gone");
        return GRID_DIM;
    default:
        snprintf(buf, size, "%s", full && l->text[0] ? l->text : "?");
        return GRID_DIM;
    }
}

/* One row per schedule: name, spec, next run, last run, LATE, the last run's outcome;
 * below them, the selected one in full (absolute times, its task, the catch-up). */
static void
render_schedules(const struct model *m, const struct ui *ui, struct grid *g)
{
    const dq_schedules *ss = &ui->scheds;
    int64_t now = ss->now_ms;
    int namew = g->cols >= 160 ? 28 : g->cols >= 100 ? 22 : 14;
    int specw = g->cols >= 160 ? 34 : g->cols >= 100 ? 26 : 23;
    int body = view_schedule_rows(g->rows, g->cols);
    size_t paused = 0;
    char buf[600];

    for (size_t i = 0; i < ss->n; i++)
        paused += ss->items[i].paused;
    grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
    grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD, " schedules of %s: %zu (%zu paused)",
                m->queue, ss->n, paused);
    grid_printf(g, 1, 0, g->cols, GRID_BOLD, " %-*s %-*s %-9s %-10s %-4s %s", namew, "NAME", specw,
                "SPEC", "NEXT RUN", "LAST RUN", "LATE",
                g->cols >= 100 ? "LAST RUN'S OUTCOME" : "OUTCOME");
    if (ss->n == 0)
        grid_puts(g, 2, 1, g->cols - 1, GRID_DIM,
                  "(no schedules: delayq schedule add NAME --every 1m --json '{}' adds one)");
    for (int r = 0; r < body && ui->sched_top + (size_t)r < ss->n; r++) {
        size_t i = ui->sched_top + (size_t)r;
        const dq_schedule *s = &ss->items[i];
        uint16_t attr = i == ui->sched_sel ? GRID_REVERSE : 0;
        char next[32], last[32], d[DQ_DUR_BUFSZ];
        int row = 2 + r, c = 1;
        if (attr)
            grid_attr(g, row, 0, g->cols, attr);
        grid_puts(g, row, c, namew, attr | GRID_BOLD, s->name ? s->name : "?");
        c = 1 + namew + 1;
        sched_spec(s, buf, sizeof buf);
        grid_puts(g, row, c, specw, attr, buf);
        c += specw + 1;
        dq_dur_format(d, sizeof d, s->next_ms > now ? s->next_ms - now : 0);
        /* passed: it fires at the next claim of a worker */
        snprintf(next, sizeof next, "%s%s",
                 s->paused           ? "paused"
                 : s->next_ms < 0    ? "-"
                 : s->next_ms <= now ? "due"
                                     : "in ",
                 s->paused || s->next_ms <= now ? "" : d);
        grid_puts(g, row, c, 9, attr | (s->paused ? color(ui, GRID_YELLOW) | GRID_BOLD : 0), next);
        c += 10;
        dq_dur_format(d, sizeof d, now > s->last_ms ? now - s->last_ms : 0);
        snprintf(last, sizeof last, "%s%s", s->last_ms < 0 ? "never" : d,
                 s->last_ms < 0 ? "" : " ago");
        grid_puts(g, row, c, 10, attr, last);
        c += 11;
        if (dq_fmt_schedule_late(s))
            grid_puts(g, row, c, 4, attr | color(ui, GRID_YELLOW) | GRID_BOLD, "LATE");
        c += 5;
        if (ui->sched_last != NULL) {
            uint16_t a =
                sched_outcome(ui, &ui->sched_last[i], now, g->cols >= 160, buf, sizeof buf);
            grid_puts(g, row, c, g->cols - c, attr | a, buf);
        }
    }
    /* the selected schedule in full: its spec, both times absolute and relative, its
     * last task and what became of it, and whether the last run was a late catch-up */
    const dq_schedule *s = app_selected_schedule(ui);
    int at = g->rows - 1 - SCHED_PANEL;
    if (s != NULL && at >= 3) { /* on a tiny screen the rows come first */
        char when[DQ_TIME_BUFSZ + 40], late[DQ_DUR_BUFSZ];
        sched_spec(s, buf, sizeof buf);
        int c = 1 + grid_puts(g, at, 1, g->cols - 1, GRID_BOLD, s->name ? s->name : "?");
        grid_printf(g, at, c, g->cols - c, 0, "  %s  (%lld run%s; set by %s)", buf,
                    (long long)s->runs, s->runs == 1 ? "" : "s", s->by && s->by[0] ? s->by : "?");
        dq_fmt_time_rel(when, sizeof when, s->next_ms, now);
        grid_printf(g, at + 1, 1, g->cols - 1, 0, "next  %s",
                    s->paused         ? "none: paused (P resumes it)"
                    : s->next_ms >= 0 ? when
                                      : "none");
        if (s->last_ms < 0) {
            grid_puts(g, at + 2, 1, g->cols - 1, GRID_DIM, "last  never: it has not fired yet");
        } else {
            dq_fmt_time_rel(when, sizeof when, s->last_ms, now);
            grid_printf(g, at + 2, 1, g->cols - 1, 0, "last  %s, task %s", when,
                        s->last_id ? s->last_id : "?");
            uint16_t a = GRID_DIM;
            if (ui->sched_last != NULL)
                a = sched_outcome(ui, &ui->sched_last[ui->sched_sel], now, true, buf, sizeof buf);
            grid_puts(g, at + 3, 7, g->cols - 7, a, ui->sched_last != NULL ? buf : "?");
        }
        dq_dur_format(late, sizeof late, s->late_ms);
        if (dq_fmt_schedule_late(s))
            grid_printf(g, at + 4, 1, g->cols - 1, color(ui, GRID_YELLOW),
                        "LATE: ran %s late; %lld missed firings skipped (one catch-up at most)",
                        late, (long long)s->missed);
        else if (ui->sched_last != NULL && ui->sched_last[ui->sched_sel].run == SCHED_RUN_GONE &&
                 m->config_ms >= 0 && m->config.done_retention == 0 &&
                 m->config.done_retention_ms == 0)
            grid_puts(g, at + 4, 1, g->cols - 1, GRID_DIM,
                      "finished tasks are not kept: delayq config done_retention=1000 keeps them");
    }
    if (ui->status[0] != '\0')
        grid_printf(g, g->rows - 1, 0, g->cols,
                    ui->status_error ? color(ui, GRID_RED) | GRID_BOLD : 0, " %s", ui->status);
    else
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " j/k move  Enter last task  %sEsc back  (read every %ds)",
                    ui->read_only ? "" : "P pause/resume  ", APP_WORKERS_REFRESH_MS / 1000);
}

void
view_layout(const struct ui *ui, int rows, int cols, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (ui->mode == MODE_DETAILS || ui->mode == MODE_HELP) {
        size_t n = ui->mode == MODE_DETAILS ? ui->ndetail : keymap_help_lines();
        l->rows_visible = rows > 3 ? rows - 2 : 1;
        l->scroll_max = n > 0 ? (int)n - 1 : 0;
        return;
    }
    if (ui->mode == MODE_PICK && ui->pick_ov != NULL) {
        l->rows_visible = overview_rows_visible(rows);
        return;
    }
    if (ui->mode == MODE_PICK || ui->mode == MODE_ERRORS) {
        l->rows_visible = rows - 3 > 0 ? rows - 3 : 1;
        return;
    }
    if (ui->mode == MODE_SCHEDULES || sched_question(ui)) {
        l->rows_visible = view_schedule_rows(rows, cols);
        return;
    }
    if (ui->mode == MODE_HISTORY) {
        l->rows_visible = rows > 1 ? rows - 1 : 1;
        return;
    }
    /* header, counters and sparkline above; the status line below */
    int top = 3, height = rows - 1 - top;
    /* the four live panes side by side; Done, a record of what finished, as a tab */
    if (cols >= 120 && height >= 16 && ui->focus != PANE_DONE) {
        int h1 = height / 2, w1 = cols / 2;
        l->rows_visible = h1 - 3 > 1 ? h1 - 3 : 1;
        set_box(l, PANE_DUE, top, 0, h1 - 1, w1 - 1);
        set_box(l, PANE_FUTURE, top, w1 + 1, h1 - 1, cols - w1 - 1);
        set_box(l, PANE_INFLIGHT, top + h1, 0, height - h1, w1 - 1);
        set_box(l, PANE_FAILED, top + h1, w1 + 1, height - h1, cols - w1 - 1);
        return;
    }
    l->tabs = true;
    l->rows_visible = height - 3 > 1 ? height - 3 : 1;
    set_box(l, ui->focus, top + 1, 0, height - 1, cols);
}

void
view_render(const struct model *m, const struct ui *ui, struct grid *g)
{
    struct layout l;

    view_layout(ui, g->rows, g->cols, &l);
    grid_clear(g);
    if (ui->mode == MODE_DETAILS) {
        render_lines(ui, g, detail_line, ui->ndetail,
                     ui->detail_title[0] ? ui->detail_title : "task details", ui->status);
        return;
    }
    if (ui->mode == MODE_HELP) {
        render_lines(ui, g, help_line, keymap_help_lines(), "delayq top: help", NULL);
        return;
    }
    if (ui->mode == MODE_PICK && ui->pick_ov != NULL) {
        struct overview_view ov = {.ov = ui->pick_ov,
                                   .sel = ui->pick_sel,
                                   .shown = ui->pick_first ? "" : m->queue,
                                   .endpoint = m->endpoint,
                                   .total = ui->pick_total,
                                   .status = ui->status,
                                   .first = ui->pick_first,
                                   .ascii = ui->ascii,
                                   .no_color = ui->no_color};
        overview_render(&ov, g);
        return;
    }
    if (ui->mode == MODE_PICK) {
        render_picker(m, ui, &l, g);
        return;
    }
    /* fix and requeue: what changed, over the whole screen */
    if (ui->mode == MODE_CONFIRM && ui->confirm_action == ACT_REPLACE) {
        char q[300];
        snprintf(q, sizeof q, "requeue task %s with this payload? y/N ", ui->action_id);
        render_lines(ui, g, detail_line, ui->ndetail, ui->detail_title, q);
        grid_attr(g, g->rows - 1, 0, g->cols, GRID_REVERSE | color(ui, GRID_YELLOW));
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_REVERSE | GRID_BOLD | color(ui, GRID_YELLOW),
                    " %s", q);
        return;
    }
    if (ui->mode == MODE_ERRORS) {
        render_errors(m, ui, &l, g);
        return;
    }
    if (ui->mode == MODE_HISTORY) {
        struct hist_view hv = {.h = ui->have_hist ? &ui->hist : NULL,
                               .audit = &ui->hist_audit,
                               .queue = m->queue,
                               .span = app_hist_spans[ui->hist_span_read].name,
                               .status = ui->status,
                               .status_error = ui->status_error,
                               .ascii = ui->ascii,
                               .no_color = ui->no_color};
        histview_render(&hv, g);
        return;
    }
    if (ui->mode == MODE_SCHEDULES || sched_question(ui)) {
        render_schedules(m, ui, g);
        if (ui->mode == MODE_CONFIRM) {
            char q[300];
            if (ui->confirm_action == ACT_SCHED_PAUSE)
                snprintf(q, sizeof q, "pause schedule %s (it fires no more until resumed)? y/N ",
                         ui->action_id);
            else
                snprintf(q, sizeof q,
                         "resume schedule %s (from its next time; what it missed is not run)? y/N ",
                         ui->action_id);
            render_question(ui, g, q);
        }
        return;
    }
    render_title(m, ui, g);
    render_counts(m, ui, g);
    render_verdict(m, ui, g);
    render_panes(m, ui, &l, g, 3, g->rows - 1);
    if (ui->mode == MODE_CONFIRM) {
        char q[1000];
        if (ui->confirm_action == ACT_REQUEUE)
            snprintf(q, sizeof q, "requeue %s%s now? y/N ",
                     ui->nmarks[ui->focus] > 0 ? "" : "task ", ui->action_id);
        else if (ui->confirm_action == ACT_REQUEUE_FILTER)
            snprintf(q, sizeof q, "requeue %s now? y/N ", ui->prompt);
        else if (ui->confirm_action == ACT_REQUEUE_ALL)
            snprintf(q, sizeof q, "requeue %s%s%s? y/N ", ui->prompt,
                     ui->spread[0] ? ", spread over " : " now", ui->spread);
        else if (ui->confirm_action == ACT_DROP_FILTER || ui->confirm_action == ACT_DROP_ALL)
            snprintf(q, sizeof q, "drop %s for good? y/N ", ui->prompt);
        else if (ui->confirm_action == ACT_RUN_NOW)
            snprintf(q, sizeof q, "run task %s now? y/N ", ui->action_id);
        else if (ui->confirm_action == ACT_CANCEL)
            snprintf(q, sizeof q, "cancel running task %s (to Failed)? y/N ", ui->action_id);
        else if (ui->confirm_action == ACT_PAUSE)
            snprintf(q, sizeof q, "pause queue %s %s%s%s%s? y/N ", ui->action_id,
                     ui->pause_for[0] ? "for " : "until resumed", ui->pause_for,
                     ui->input[0] ? ": " : "", ui->input);
        else if (ui->confirm_action == ACT_RESCHEDULE)
            snprintf(q, sizeof q, "reschedule task %s to %s%s? y/N ", ui->action_id, ui->input,
                     dq_time_parse(ui->input, "time", &(int64_t){0}, NULL) == DQ_OK ? ""
                                                                                    : " from now");
        else if (ui->confirm_action == ACT_THROTTLE)
            snprintf(q, sizeof q, "throttle queue %s to %s%s%s%s %s%s%s%s? y/N ", ui->action_id,
                     ui->throttle_rate, ui->throttle_rate[0] && ui->throttle_conc[0] ? ", " : "",
                     ui->throttle_conc, ui->throttle_conc[0] ? " in flight" : "",
                     ui->pause_for[0] ? "for " : "until lifted", ui->pause_for,
                     ui->input[0] ? ": " : "", ui->input);
        else if (ui->confirm_action == ACT_THROTTLE_OFF)
            snprintf(q, sizeof q, "lift the throttle of queue %s (by %s)? y/N ", ui->action_id,
                     m->stats.throttle_by);
        else if (ui->confirm_action == ACT_RESUME)
            snprintf(q, sizeof q, "resume queue %s (paused by %s)? y/N ", ui->action_id,
                     m->stats.paused_by);
        else
            snprintf(q, sizeof q, "drop %s%s for good? y/N ",
                     ui->nmarks[ui->focus] > 0 ? "" : "task ", ui->action_id);
        render_question(ui, g, q);
        return;
    }
    if (ui->mode == MODE_INPUT) {
        /* a one-line prompt is fitted first, so what was typed always shows */
        char fitted[900], line[1200];
        int typed = grid_text_cols(ui->input, strlen(ui->input)) + 1;
        if (strchr(ui->prompt, '\n') == NULL)
            fit_quoted(ui->prompt, g->cols - 1 - typed > 20 ? g->cols - 1 - typed : 20, fitted,
                       sizeof fitted);
        else
            snprintf(fitted, sizeof fitted, "%s", ui->prompt);
        snprintf(line, sizeof line, "%s%s_", fitted, ui->input);
        render_question(ui, g, line);
        return;
    }
    render_status(m, ui, g);
}
