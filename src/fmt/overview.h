/* SPDX-License-Identifier: MIT */
/*
 * overview.h: what the all-queues overview says of each queue, in the same words in
 * `delayq queues` and the inspector's Overview: the verdict (health.h, from one row of
 * lib/overview.h), the order (worst first), the sparklines and the fixed columns of a
 * row. Pure: no I/O, no locale (the caller says whether the terminal takes UTF-8).
 */
#ifndef DQ_FMT_OVERVIEW_H
#define DQ_FMT_OVERVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/health.h"
#include "lib/overview.h"

/* One row as shown: its data (borrowed), its verdict and its words. */
struct dq_ov_line {
    const struct dq_overview_row *row;
    enum dq_health_level level;
    char words[512];          /* the verdict's text; untrusted bytes inside (a pause's reason):
                               * escape before a terminal */
    int64_t done10, failed10; /* done and failed over the sparklines' minutes */
};

/*
 * The verdict of @row (dq_health_verdict over what one overview call reads, and Redis
 * memory from one INFO: @used_memory, @maxmemory, 0 when not known) into @l. A row whose
 * call failed is BAD with "not read: <why>". No running tasks or retry errors are looked
 * at (they need pages), so the words can be fewer than the queue's own screen says.
 */
void dq_ov_judge(struct dq_ov_line *l, const struct dq_overview_row *row, int64_t used_memory,
                 int64_t maxmemory);

/* Worst first: the level, then failures over the last minutes, then the oldest due
 * age, then the due count, then the name (unique: the order is total). */
void dq_ov_sort(struct dq_ov_line *v, size_t n);

/* The rank order's comparison (qsort style), for tests. */
int dq_ov_cmp(const struct dq_ov_line *a, const struct dq_ov_line *b);

/*
 * A sparkline of @n values into @buf (snprintf semantics, returns bytes needed): one
 * character a value, a blank for 0, else one of eight heights scaled to the largest of
 * the @n (block characters U+2581..U+2588 with @utf8, else ".:-=+*#@"). @n columns wide.
 */
size_t dq_ov_spark(char *buf, size_t size, const int64_t *v, size_t n, bool utf8);

/* Display columns of a row's fixed part for a name column of @name_cols (the words
 * follow it after one blank). */
int dq_ov_fixed_cols(int name_cols);

/*
 * The column titles and one row's fixed part (level, queue, due, oldest due age, in
 * flight, failed, the done and failed sparklines, live workers, P for paused and T for
 * throttled), into @buf (snprintf semantics). Only a valid queue name, digits and the
 * sparkline's glyphs: terminal-safe as it is. A name longer than @name_cols is cut with
 * "~" at its end.
 */
size_t dq_ov_header(char *buf, size_t size, int name_cols);
size_t dq_ov_cells(char *buf, size_t size, const struct dq_ov_line *l, int name_cols, bool utf8);

#endif /* DQ_FMT_OVERVIEW_H */
