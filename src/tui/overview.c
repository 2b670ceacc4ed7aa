/* SPDX-License-Identifier: MIT */
/* overview.c: the inspector's Overview (see overview.h). */
#include "overview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/overview.h"

int
overview_fetch(dq_client *c, char **names, size_t n, struct overview **out, dq_err *err)
{
    struct overview *o = calloc(1, sizeof *o);
    dq_server_info info = {0};
    int rc;

    *out = NULL;
    if (o == NULL || (o->rows = calloc(n ? n : 1, sizeof *o->rows)) == NULL ||
        (o->lines = calloc(n ? n : 1, sizeof *o->lines)) == NULL) {
        overview_free(o);
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    o->n = n;
    for (size_t i = 0; i < n; i++)
        snprintf(o->rows[i].queue, sizeof o->rows[i].queue, "%s", names[i]);
    if ((rc = dq_overview_get(c, o->rows, n, err)) != DQ_OK ||
        (rc = dq_server_info_get(c, &info, err)) != DQ_OK) {
        overview_free(o);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        dq_ov_judge(&o->lines[i], &o->rows[i], info.used_memory, info.maxmemory);
    dq_ov_sort(o->lines, n);
    /* the names in the rows' order: rows[] keeps the registry's order, so names[i] are
     * the same strings, moved */
    char **sorted = calloc(n ? n : 1, sizeof *sorted);
    if (sorted == NULL) {
        overview_free(o);
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = names[o->lines[i].row - o->rows];
    memcpy(names, sorted, n * sizeof *names);
    free(sorted);
    *out = o;
    return DQ_OK;
}

void
overview_free(struct overview *o)
{
    if (o == NULL)
        return;
    free(o->rows);
    free(o->lines);
    free(o);
}

int
overview_rows_visible(int rows)
{
    /* title, column titles; the selected queue's verdict, the key line */
    return rows - 4 > 0 ? rows - 4 : 1;
}

static uint16_t
level_color(const struct overview_view *v, enum dq_health_level level)
{
    static const int colors[] = {GRID_GREEN, GRID_YELLOW, GRID_RED};
    return v->no_color ? 0 : GRID_COLOR(colors[level]);
}

/* Room for the words beside each row from this width on; below it only the selected
 * row's words show, on their own line. */
#define WORDS_FROM_COLS 110
#define NAME_COLS_WIDE  20

void
overview_render(const struct overview_view *v, struct grid *g)
{
    const struct overview *o = v->ov;
    int shown = overview_rows_visible(g->rows);
    size_t first = v->sel >= (size_t)shown ? v->sel - (size_t)shown + 1 : 0;
    bool words = g->cols >= WORDS_FROM_COLS;
    /* one column for the * of the queue shown; the name takes what the others leave */
    int name_cols = words ? NAME_COLS_WIDE : g->cols - 1 - dq_ov_fixed_cols(0);
    name_cols = name_cols < 6 ? 6 : name_cols > DQ_QUEUE_NAME_MAX ? DQ_QUEUE_NAME_MAX : name_cols;
    int fixed = 1 + dq_ov_fixed_cols(name_cols);
    char cell[512];

    grid_attr(g, 0, 0, g->cols, GRID_REVERSE);
    grid_printf(g, 0, 0, g->cols, GRID_REVERSE | GRID_BOLD,
                " overview: %lld queues on %s, worst first", (long long)v->total, v->endpoint);
    dq_ov_header(cell, sizeof cell, name_cols);
    int c = grid_printf(g, 1, 0, g->cols, GRID_BOLD, " %s", cell);
    if (words)
        grid_puts(g, 1, c, g->cols - c, GRID_BOLD, " VERDICT");
    for (int r = 0; r < shown && first + (size_t)r < o->n; r++) {
        size_t i = first + (size_t)r;
        const struct dq_ov_line *l = &o->lines[i];
        bool sel = i == v->sel;
        uint16_t attr = sel ? GRID_REVERSE : 0;
        if (sel)
            grid_attr(g, 2 + r, 0, g->cols, attr);
        grid_puts(g, 2 + r, 0, 1, attr, strcmp(l->row->queue, v->shown) == 0 ? "*" : " ");
        dq_ov_cells(cell, sizeof cell, l, name_cols, !v->ascii);
        /* the level in its colour, the rest plain */
        grid_puts(g, 2 + r, 1, g->cols - 1, attr, cell);
        grid_put(g, 2 + r, 1, 4, attr | level_color(v, l->level) | GRID_BOLD, cell, 4);
        if (words && g->cols > fixed + 1)
            grid_puts(g, 2 + r, fixed + 1, g->cols - fixed - 1, attr, l->words);
    }
    if (o->n > 0 && v->sel < o->n) {
        const struct dq_ov_line *l = &o->lines[v->sel];
        int at = grid_printf(g, g->rows - 2, 0, g->cols, GRID_BOLD, " %s: ", l->row->queue);
        grid_puts(g, g->rows - 2, at, g->cols - at, level_color(v, l->level), l->words);
    }
    const char *back = v->first ? "q quit" : "Esc back";
    if (v->status != NULL && v->status[0] != '\0')
        grid_printf(g, g->rows - 1, 0, g->cols, 0, " %s", v->status);
    else if (v->total > (int64_t)o->n)
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " %lld more not listed  j/k move  Enter open  %s",
                    (long long)(v->total - (int64_t)o->n), back);
    else
        grid_printf(g, g->rows - 1, 0, g->cols, GRID_DIM,
                    " j/k move  Enter open  %s  (10 min per row; P paused, T throttled)", back);
}
