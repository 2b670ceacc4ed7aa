/* SPDX-License-Identifier: MIT */
/*
 * histview.h: the inspector's History view (H): the queue's per-minute rollups (PROTOCOL.md,
 * "History: per-minute rollups") as bar charts of done, failed, retried and the due
 * backlog over a span, with the audit log's operator actions marked under the minute they
 * happened in. Pure: drawn into a grid from a dq_history and a dq_audit (jobs.c reads
 * them); no curses, no Redis, no clock (time is the reply's server time).
 */
#ifndef DQ_TUI_HISTVIEW_H
#define DQ_TUI_HISTVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"
#include "grid.h"

struct hist_view {
    const dq_history *h;   /* NULL: not read yet */
    const dq_audit *audit; /* its marks (newest first); NULL or empty: none */
    const char *queue;
    const char *span; /* the span h covers ("1h") */
    const char *status;
    bool status_error;
    bool ascii; /* no block characters: the locale is not UTF-8, or --ascii */
    bool no_color;
};

/* The letter an audit entry's action gets under its column: p pause, u resume, t throttle,
 * o throttle off, r a requeue (by id, bulk, or with a fixed payload), d a drop, c a
 * config change, x a cancel, s a schedule's change, m a task moved (run now,
 * reschedule), i an import; '*' any other action. @action is untrusted bytes. */
char histview_mark(const char *action, size_t len);

/* Draws the view over the whole grid: a title, the span's totals and run-time
 * percentiles, one panel per series (done, failed, retried, due backlog) with a column
 * per step (steps merged when the screen is narrower than the span), the time axis, the
 * marks and their legend, and the key line. With history off it says so and how to turn
 * it on. */
void histview_render(const struct hist_view *v, struct grid *g);

#endif /* DQ_TUI_HISTVIEW_H */
