/* SPDX-License-Identifier: MIT */
/* grid.c: the in-memory cell frame. Pure: no curses, no I/O. */
#include "grid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/esc.h"
#include "lib/buf.h"

int
grid_init(struct grid *g, int rows, int cols)
{
    struct cell *c;

    if (rows < 1)
        rows = 1;
    if (cols < 1)
        cols = 1;
    c = calloc((size_t)rows * (size_t)cols, sizeof *c);
    if (c == NULL)
        return -1;
    free(g->cells);
    g->cells = c;
    g->rows = rows;
    g->cols = cols;
    grid_clear(g);
    return 0;
}

void
grid_free(struct grid *g)
{
    free(g->cells);
    g->cells = NULL;
    g->rows = g->cols = 0;
}

void
grid_clear(struct grid *g)
{
    for (int i = 0; i < g->rows * g->cols; i++) {
        g->cells[i].glyph[0] = ' ';
        g->cells[i].glyph[1] = '\0';
        g->cells[i].attr = 0;
    }
}

static struct cell *
at(struct grid *g, int row, int col)
{
    return &g->cells[row * g->cols + col];
}

int
grid_put(struct grid *g, int row, int col, int width, uint16_t attr, const char *s, size_t len)
{
    struct dq_buf b = DQ_BUF_INIT;
    int used = 0;

    if (row < 0 || row >= g->rows || col < 0 || col >= g->cols || width <= 0)
        return 0;
    if (width > g->cols - col)
        width = g->cols - col;
    dq_esc_text(&b, s, len, DQ_ESC_KEEP_BACKSLASH);
    for (size_t i = 0; i < b.len;) {
        uint32_t cp;
        size_t n = dq_utf8_decode(b.data + i, b.len - i, &cp);
        int w;

        if (n == 0) { /* cannot happen after escaping; be safe anyway */
            n = 1;
            cp = '?';
        }
        w = (int)dq_esc_width(b.data + i, n);
        if (w == 0) {
            i += n; /* combining marks are dropped rather than mis-drawn */
            continue;
        }
        /* leave room for the ellipsis when more follows and it would not fit */
        if (used + w > width || (used + w == width && i + n < b.len)) {
            if (width - used >= 1) {
                struct cell *c = at(g, row, col + used);
                memcpy(c->glyph, "…", sizeof "…");
                c->attr = attr;
                used++;
            }
            break;
        }
        struct cell *c = at(g, row, col + used);
        memcpy(c->glyph, b.data + i, n);
        c->glyph[n] = '\0';
        c->attr = attr;
        if (w == 2) {
            struct cell *r = at(g, row, col + used + 1);
            r->glyph[0] = '\0';
            r->attr = attr;
        }
        used += w;
        i += n;
    }
    dq_buf_free(&b);
    return used;
}

int
grid_text_cols(const char *s, size_t len)
{
    struct dq_buf b = DQ_BUF_INIT;
    int cols = 0;

    dq_esc_text(&b, s, len, DQ_ESC_KEEP_BACKSLASH);
    for (size_t i = 0; i < b.len;) {
        uint32_t cp;
        size_t n = dq_utf8_decode(b.data + i, b.len - i, &cp);
        n = n == 0 ? 1 : n;
        cols += (int)dq_esc_width(b.data + i, n);
        i += n;
    }
    dq_buf_free(&b);
    return cols;
}

int
grid_puts(struct grid *g, int row, int col, int width, uint16_t attr, const char *s)
{
    return grid_put(g, row, col, width, attr, s, strlen(s));
}

int
grid_printf(struct grid *g, int row, int col, int width, uint16_t attr, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return grid_puts(g, row, col, width, attr, buf);
}

void
grid_attr(struct grid *g, int row, int col, int width, uint16_t attr)
{
    if (row < 0 || row >= g->rows)
        return;
    for (int c = col; c < col + width && c < g->cols; c++) {
        if (c >= 0)
            at(g, row, c)->attr = attr;
    }
}

char *
grid_to_text(const struct grid *g)
{
    struct dq_buf b = DQ_BUF_INIT;

    for (int r = 0; r < g->rows; r++) {
        size_t line_start = b.len, last = b.len;
        for (int c = 0; c < g->cols; c++) {
            const char *glyph = g->cells[r * g->cols + c].glyph;
            dq_buf_puts(&b, glyph);
            if (glyph[0] != ' ' && glyph[0] != '\0')
                last = b.len;
        }
        (void)line_start;
        b.len = last; /* trim trailing blanks */
        dq_buf_putc(&b, '\n');
    }
    return dq_buf_steal(&b, NULL);
}
