/* SPDX-License-Identifier: MIT */
/*
 * grid.h: a frame of terminal cells in memory. Knows nothing about curses or Redis:
 * the view lays text into it, the terminal backend copies it out, tests compare it
 * with golden text. The only way text enters a grid is grid_put, which escapes it.
 */
#ifndef DQ_TUI_GRID_H
#define DQ_TUI_GRID_H

#include <stddef.h>
#include <stdint.h>

enum {
    GRID_BOLD = 1,
    GRID_DIM = 2,
    GRID_REVERSE = 4,
    GRID_UNDERLINE = 8,
};

/* Colours (in attr bits 8..11): one value, never a bit set. An attribute holds at most
 * one colour; grid_color() replaces the colour an attribute has (OR-ing two colours
 * gives a third that nobody asked for). */
enum {
    GRID_DEFAULT = 0,
    GRID_RED = 1,
    GRID_GREEN = 2,
    GRID_YELLOW = 3,
    GRID_BLUE = 4,
    GRID_MAGENTA = 5,
    GRID_CYAN = 6,
};
#define GRID_COLOR(c)       ((uint16_t)((c) << 8))
#define GRID_COLOR_OF(attr) (((attr) >> 8) & 0xf)
#define GRID_COLOR_MASK     ((uint16_t)0x0f00)
#define GRID_COLOR_LAST     GRID_CYAN

/* @attr with its colour replaced by @c (GRID_DEFAULT: none). */
static inline uint16_t
grid_color(uint16_t attr, int c)
{
    return (uint16_t)((attr & ~GRID_COLOR_MASK) | GRID_COLOR(c));
}

struct cell {
    char glyph[8]; /* one escaped UTF-8 character; "" = right half of a wide one */
    uint16_t attr;
};

struct grid {
    int rows, cols;
    struct cell *cells; /* rows * cols, row-major; owned */
};

/* Sizes @g to rows x cols (blank). Returns 0, or -1 when out of memory. */
int grid_init(struct grid *g, int rows, int cols);
void grid_free(struct grid *g);
void grid_clear(struct grid *g);

/*
 * Puts untrusted @s (@len bytes) at (@row, @col), escaped (control characters, escape
 * sequences and invalid UTF-8 become visible \e, \xHH ...) and clipped to @width
 * columns; a cut string ends with "…". Returns the columns used. A backslash is kept
 * as it is, not doubled: the view hands the grid both raw bytes and text fmt/ has
 * already escaped (payload summaries, details), and escaping that again would double
 * every backslash it wrote. So on screen a raw field put here directly (an id, an
 * error's first line) is safe but not unambiguous; docs/SECURITY.md says so.
 */
int grid_put(struct grid *g, int row, int col, int width, uint16_t attr, const char *s, size_t len);
/* The columns grid_put would use for @s with room enough (escaped, wide glyphs 2). */
int grid_text_cols(const char *s, size_t len);
/* grid_put of a NUL-terminated string. */
int grid_puts(struct grid *g, int row, int col, int width, uint16_t attr, const char *s);
/* printf-style grid_puts. */
int grid_printf(struct grid *g, int row, int col, int width, uint16_t attr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* Sets the attributes of @width cells from (@row, @col) (a highlight bar). */
void grid_attr(struct grid *g, int row, int col, int width, uint16_t attr);

/* The grid as text, one line per row, trailing blanks trimmed (malloc()ed; for tests). */
char *grid_to_text(const struct grid *g);

#endif /* DQ_TUI_GRID_H */
