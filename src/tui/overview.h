/* SPDX-License-Identifier: MIT */
/*
 * overview.h: the inspector's Overview, the queue picker with one overview row per queue
 * (fmt/overview.h: the rows of `delayq queues`), worst first. Fetched on the Redis thread
 * by a job (jobs.c), owned by the UI state while shown, drawn into the grid. No curses.
 */
#ifndef DQ_TUI_OVERVIEW_H
#define DQ_TUI_OVERVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"
#include "fmt/overview.h"
#include "grid.h"

/* The rows of one refresh: lines[i] borrows rows; lines are worst first. Owns both. */
struct overview {
    struct dq_overview_row *rows;
    struct dq_ov_line *lines;
    size_t n;
};

/*
 * Reads the rows of the @n queues @names (one pipelined call each, and one INFO), judges
 * and sorts them, and puts @names in the same worst-first order (the picker's names, so
 * Enter opens the row shown). *out is new (overview_free) on DQ_OK, NULL otherwise.
 */
int overview_fetch(dq_client *c, char **names, size_t n, struct overview **out, dq_err *err);

/* Frees @o and everything in it. Accepts NULL. */
void overview_free(struct overview *o);

/* Where the selected row's verdict line and the column widths go: the rows a screen of
 * @rows shows. */
int overview_rows_visible(int rows);

struct overview_view {
    const struct overview *ov;
    size_t sel;        /* the selected row */
    const char *shown; /* the queue the inspector shows (marked *), or "" */
    const char *endpoint;
    int64_t total; /* queues registered (more than listed when there are many) */
    const char *status;
    bool first; /* opened at start: q quits, Esc stays */
    bool ascii; /* the locale is not UTF-8 */
    bool no_color;
};

/* Draws the Overview over the whole grid: a title, the column titles, the rows (the
 * selected one reversed), the selected queue's verdict in full, and the key line. */
void overview_render(const struct overview_view *v, struct grid *g);

#endif /* DQ_TUI_OVERVIEW_H */
