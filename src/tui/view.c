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
#include "fmt/taskfmt.h"
#include "lib/buf.h"
#include "lib/dur.h"

static const char *const pane_names[PANE_COUNT] = {"Due", "Future", "In-flight", "Failed"};

/* The verdict's thresholds, and the one that flags a long-running in-flight row, are
 * the queue's alert_* config fields (m->config), as `delayq stats --check` has them. */

static uint16_t
color(const struct ui *ui, int c)
{
    return ui->no_color ? 0 : GRID_COLOR(c);
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
    if (m->nqueues > 1)
        seg_add(s, &n, 2, bar, "(Q: %lld queues) ", (long long)m->nqueues);
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
    static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
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
    int64_t max = 1;

    if (!m->have_data)
        return;
    int c = grid_printf(g, 2, 0, g->cols, attr, " %s %s", marks[level], text);
    if (g->cols - c < 26 || m->nspark == 0)
        return;
    /* the sparkline takes what is left, right-aligned, two blanks after the verdict */
    int len = m->nspark < g->cols - c - 16 ? m->nspark : g->cols - c - 16;
    int at = g->cols - len - 1;
    grid_puts(g, 2, at - 13, 13, GRID_DIM, "due backlog ");
    for (int i = 0; i < m->nspark; i++)
        max = m->spark[i] > max ? m->spark[i] : max;
    for (int i = m->nspark - len; i < m->nspark; i++) {
        int level7 = (int)(m->spark[i] * 7 / max);
        grid_puts(g, 2, at++, 1, color(ui, GRID_CYAN), bars[level7]);
    }
}

static void
first_line(struct dq_buf *b, const char *s)
{
    if (s != NULL)
        dq_buf_append(b, s, strcspn(s, "\n"));
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
    default:
        dq_dur_format(when, sizeof when, now - t->failed_ms);
        break;
    }
    dq_fmt_attempts(att, sizeof att, t);
    if (pane == PANE_FAILED) {
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
    } else if (t->undecodable) {
        dq_buf_puts(&rest, "UNDECODABLE ");
        dq_mp_summary(&rest, t->raw, t->raw_len, 200);
        rest_attr = color(ui, GRID_MAGENTA);
    } else if (pane == PANE_FUTURE && t->attempt > 0 && t->last_error != NULL) {
        /* waiting to retry: why it failed matters more than what it carries */
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
    static const char *const when_names[] = {"WAITING", "DUE IN", "RUNNING", "FAILED"};
    static const char *const rest_names[] = {"PAYLOAD", "PAYLOAD OR LAST ERROR", "LEASE, WORKER",
                                             "REASON: ERROR"};
    bool focused = ui->focus == pane;
    const dq_page *p = &m->pages[pane];
    uint16_t title = focused ? GRID_BOLD | GRID_UNDERLINE | color(ui, GRID_CYAN) : GRID_BOLD;
    int idw = width >= 60 ? 22 : 14;

    if (height == 0)
        return;
    if (pane == PANE_FAILED && ui->group[0] != '\0')
        grid_printf(g, row, col, width, title | color(ui, GRID_YELLOW),
                    "[%d] %s of group \"%s\": %lld (Esc: all; r d A X act on the group)", pane + 1,
                    pane_names[pane], ui->group_sig, (long long)p->total);
    else if (pane == ui->filter_pane && ui->filter[0] != '\0')
        grid_printf(g, row, col, width, title | color(ui, GRID_YELLOW),
                    "[%d] %s matching \"%s\": %lld (%s %lld of %lld; Esc clears)", pane + 1,
                    pane_names[pane], ui->filter, (long long)p->total,
                    ui->search_done ? "searched" : "searching", (long long)ui->search_scanned,
                    (long long)ui->search_total);
    else
        grid_printf(g, row, col, width, title, "[%d] %s (%lld)", pane + 1, pane_names[pane],
                    (long long)p->total);
    grid_printf(g, row + 1, col, width, GRID_DIM, "%-*s %-10s %-6s %s", idw, "ID", when_names[pane],
                "ATT", rest_names[pane]);
    int rows = height - 2;
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
    if ((int64_t)(m->offsets[pane] + p->n) < p->total || m->offsets[pane] > 0)
        grid_printf(g, row, col + width - 24 > col ? col + width - 24 : col, 24, GRID_DIM,
                    "%zu-%zu of %lld", m->offsets[pane] + 1, m->offsets[pane] + p->n,
                    (long long)p->total);
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
    app_hints(ui, g->cols, hints, sizeof hints);
    grid_puts(g, row, 0, g->cols, GRID_DIM, hints);
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
    app_help_line(i, buf, size);
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
    if (ui->pick_total > (int64_t)ui->npick)
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " %lld more not listed  j/k move  Enter open  Esc back",
                    (long long)(ui->pick_total - (int64_t)ui->npick));
    else
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " j/k move  Enter open  Esc back  (* shown now)");
}

/* The Errors view (E): one row per error group, largest first, the selected one reversed.
 * Signatures and sample errors come from Redis: grid_puts escapes them. */
static void
render_errors(const struct model *m, const struct ui *ui, const struct layout *l, struct grid *g)
{
    const dq_errors *e = &ui->errors;
    int body = g->rows - 3;
    size_t shown = (size_t)l->rows_visible;
    size_t first = ui->err_sel >= shown ? ui->err_sel - shown + 1 : 0;
    int sigw = g->cols > 60 ? (g->cols - 28) * 3 / 5 : 20;

    grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
    grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD,
                " error groups of %s: %lld failed in %zu groups", m->queue, (long long)e->failed,
                e->n);
    grid_printf(g, 1, 0, g->cols, GRID_BOLD, " %8s %6s %9s  %-*s %s", "COUNT", "SHARE", "LAST SEEN",
                sigw, "SIGNATURE", "SAMPLE ERROR");
    if (e->n == 0)
        grid_puts(g, 2, 1, g->cols - 1, GRID_DIM, "(no failed tasks)");
    for (int r = 0; r < body && first + (size_t)r < e->n; r++) {
        size_t i = first + (size_t)r;
        const dq_error_group *x = &e->groups[i];
        uint16_t attr = i == ui->err_sel ? GRID_REVERSE : 0;
        char last[32];
        dq_dur_format(last, sizeof last, e->now_ms > x->last_ms ? e->now_ms - x->last_ms : 0);
        if (i == ui->err_sel)
            grid_attr(g, 2 + r, 0, g->cols, attr);
        int c = grid_printf(g, 2 + r, 0, g->cols, attr | color(ui, GRID_RED), " %8lld",
                            (long long)x->count);
        c += grid_printf(g, 2 + r, c, g->cols - c, attr, " %5.1f%% %9s  ",
                         e->failed > 0 ? 100.0 * (double)x->count / (double)e->failed : 0.0, last);
        grid_puts(g, 2 + r, c, sigw, attr | GRID_BOLD, x->signature);
        if (c + sigw + 1 < g->cols)
            grid_puts(g, 2 + r, c + sigw + 1, g->cols - c - sigw - 1, attr | GRID_DIM,
                      x->sample_error);
    }
    grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                " j/k move  Enter: the group's tasks in Failed  Esc back  (counts kept by the "
                "scripts: exact)");
}

void
view_layout(const struct ui *ui, int rows, int cols, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (ui->mode == MODE_DETAILS || ui->mode == MODE_HELP) {
        size_t n = ui->mode == MODE_DETAILS ? ui->ndetail : app_help_lines();
        l->rows_visible = rows > 3 ? rows - 2 : 1;
        l->scroll_max = n > 0 ? (int)n - 1 : 0;
        return;
    }
    if (ui->mode == MODE_PICK || ui->mode == MODE_ERRORS) {
        l->rows_visible = rows - 3 > 0 ? rows - 3 : 1;
        return;
    }
    /* header, counters and sparkline above; the status line below */
    int top = 3, height = rows - 1 - top;
    if (cols >= 120 && height >= 16) {
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
        render_lines(ui, g, help_line, app_help_lines(), "delayq top: help", NULL);
        return;
    }
    if (ui->mode == MODE_PICK) {
        render_picker(m, ui, &l, g);
        return;
    }
    /* history: begin (fix and requeue: what changed, over the whole screen) */
    if (ui->mode == MODE_CONFIRM && ui->confirm_action == ACT_REPLACE) {
        char q[300];
        snprintf(q, sizeof q, "requeue task %s with this payload? y/N ", ui->action_id);
        render_lines(ui, g, detail_line, ui->ndetail, ui->detail_title, q);
        grid_attr(g, g->rows - 1, 0, g->cols, GRID_REVERSE | color(ui, GRID_YELLOW));
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_REVERSE | GRID_BOLD | color(ui, GRID_YELLOW),
                    " %s", q);
        return;
    }
    /* history: end */
    if (ui->mode == MODE_ERRORS) {
        render_errors(m, ui, &l, g);
        return;
    }
    render_title(m, ui, g);
    render_counts(m, ui, g);
    render_verdict(m, ui, g);
    render_panes(m, ui, &l, g, 3, g->rows - 1);
    if (ui->mode == MODE_CONFIRM) {
        char q[600];
        if (ui->confirm_action == ACT_REQUEUE)
            snprintf(q, sizeof q, "requeue %s%s now? y/N ",
                     ui->nmarks[ui->focus] > 0 ? "" : "task ", ui->action_id);
        else if (ui->confirm_action == ACT_REQUEUE_FILTER)
            snprintf(q, sizeof q, "requeue %s now? y/N ", ui->action_id);
        else if (ui->confirm_action == ACT_DROP_FILTER)
            snprintf(q, sizeof q, "drop %s for good? y/N ", ui->action_id);
        else if (ui->confirm_action == ACT_RUN_NOW)
            snprintf(q, sizeof q, "run task %s now? y/N ", ui->action_id);
        else if (ui->confirm_action == ACT_PAUSE)
            snprintf(q, sizeof q, "pause queue %s %s%s%s%s? y/N ", ui->action_id,
                     ui->pause_for[0] ? "for " : "until resumed", ui->pause_for,
                     ui->input[0] ? ": " : "", ui->input);
        else if (ui->confirm_action == ACT_RESUME)
            snprintf(q, sizeof q, "resume queue %s (paused by %s)? y/N ", ui->action_id,
                     m->stats.paused_by);
        else
            snprintf(q, sizeof q, "drop %s%s for good? y/N ",
                     ui->nmarks[ui->focus] > 0 ? "" : "task ", ui->action_id);
        grid_attr(g, g->rows - 1, 0, g->cols, GRID_REVERSE | color(ui, GRID_YELLOW));
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_REVERSE | GRID_BOLD | color(ui, GRID_YELLOW),
                    " %s", q);
        return;
    }
    if (ui->mode == MODE_INPUT) {
        grid_attr(g, g->rows - 1, 0, g->cols, GRID_REVERSE | color(ui, GRID_YELLOW));
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_REVERSE | GRID_BOLD | color(ui, GRID_YELLOW),
                    " %s%s_", ui->prompt, ui->input);
        return;
    }
    render_status(m, ui, g);
}
