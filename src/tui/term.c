/* SPDX-License-Identifier: MIT */
/*
 * term.c: the ncurses backend. The only file that includes <curses.h>. Everything it
 * draws comes from a grid, whose text was escaped when it entered the grid.
 */
#include "term.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "fmt/b64.h"
#include "fmt/esc.h"
#include "lib/buf.h"
#include "lib/clock.h"

static bool colors;
static int mouse_row, mouse_col;
static char paste[TERM_PASTE_MAX];
static size_t paste_len;

/* Bracketed paste (xterm, tmux, most terminals): the terminal wraps what is pasted in
 * ESC [200~ ... ESC [201~, so it can be told from typing. Off again on exit, and while
 * an editor has the terminal. */
static void
bracketed_paste(bool on)
{
    fputs(on ? "\033[?2004h" : "\033[?2004l", stdout);
    fflush(stdout);
}

bool
term_utf8(void)
{
    return strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
}

int
term_start(bool color, bool mouse)
{
    setlocale(LC_ALL, "");
    /* newterm, unlike initscr, returns NULL (not exit) when this is no terminal */
    if (newterm(NULL, stdout, stdin) == NULL)
        return -1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    if (mouse)
        mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    bracketed_paste(true);
    colors = color && has_colors();
    if (colors) {
        start_color();
        use_default_colors();
        for (short c = 1; c <= GRID_COLOR_LAST; c++)
            init_pair(c, c, -1);
    }
    return 0;
}

void
term_stop(void)
{
    bracketed_paste(false);
    endwin();
}

void
term_size(int *rows, int *cols)
{
    getmaxyx(stdscr, *rows, *cols);
}

static attr_t
term_attr(uint16_t a)
{
    attr_t r = A_NORMAL;

    if (a & GRID_BOLD)
        r |= A_BOLD;
    if (a & GRID_DIM)
        r |= A_DIM;
    if (a & GRID_REVERSE)
        r |= A_REVERSE;
    if (a & GRID_UNDERLINE)
        r |= A_UNDERLINE;
    /* a colour with no pair would be drawn black on black: none instead */
    if (colors && GRID_COLOR_OF(a) != 0 && GRID_COLOR_OF(a) <= GRID_COLOR_LAST)
        r |= COLOR_PAIR(GRID_COLOR_OF(a));
    return r;
}

void
term_blit(const struct grid *g)
{
    int rows, cols;

    getmaxyx(stdscr, rows, cols);
    for (int r = 0; r < g->rows && r < rows; r++) {
        for (int c = 0; c < g->cols && c < cols; c++) {
            const struct cell *cell = &g->cells[r * g->cols + c];

            if (cell->glyph[0] == '\0')
                continue; /* right half of a wide character */
            /* the last cell too (else a character from before a resize stays there):
             * without scrollok curses writes it and only reports that the cursor could
             * not move on, which is no error here */
            attrset(term_attr(cell->attr));
            (void)mvaddstr(r, c, cell->glyph);
        }
    }
    attrset(A_NORMAL);
    wnoutrefresh(stdscr);
    doupdate();
}

void
term_mouse(int *row, int *col)
{
    *row = mouse_row;
    *col = mouse_col;
}

void
term_invalidate(void)
{
    clearok(curscr, TRUE);
}

/* fix and requeue */
void
term_suspend(void)
{
    def_prog_mode(); /* remembered, so reset_prog_mode restores exactly this mode */
    bracketed_paste(false);
    endwin();
    fflush(stdout);
}

void
term_resume(void)
{
    reset_prog_mode();
    bracketed_paste(true);
    clearok(curscr, TRUE);
    refresh();
}

/* After an ESC: reads the rest of "[200~" if it follows at once; otherwise gives back
 * what it read (so Esc then a key stays two keys). True for the start of a paste. */
static bool
paste_begins(void)
{
    static const char mark[] = "[200~";
    int got[sizeof mark];
    size_t n = 0;

    timeout(0); /* a terminal sends the marker in one write: it is already here */
    while (n < sizeof mark - 1) {
        int c = getch();
        if (c == ERR)
            break;
        got[n++] = c;
        if (c != mark[n - 1])
            break;
    }
    if (n == sizeof mark - 1 && got[n - 1] == '~')
        return true;
    while (n > 0)
        ungetch(got[--n]);
    return false;
}

/* Reads a paste up to ESC [201~ into paste[], within a deadline (a terminal that never
 * ends it cannot hang the inspector); past TERM_PASTE_MAX bytes the rest is dropped. */
static void
paste_read(void)
{
    static const char end[] = "\033[201~";
    size_t matched = 0;
    int64_t deadline = dq_mono_ms() + 2000;
    bool resized = false;

    paste_len = 0;
    timeout(100);
    while (dq_mono_ms() < deadline) {
        int c = getch();
        if (c == ERR)
            break;
        resized |= c == KEY_RESIZE; /* not text, but not to be lost: given back below */
        if (c > 0xff)
            continue; /* keypad decoding of bytes inside the paste: not text */
        if (c == end[matched]) {
            if (++matched == sizeof end - 1)
                break;
            continue;
        }
        /* a partial end marker was text after all */
        for (size_t i = 0; i < matched && paste_len < sizeof paste; i++)
            paste[paste_len++] = end[i];
        matched = c == end[0] ? 1 : 0;
        if (matched == 0 && paste_len < sizeof paste)
            paste[paste_len++] = (char)c;
    }
    if (resized)
        ungetch(KEY_RESIZE);
}

const char *
term_paste(size_t *len)
{
    *len = paste_len;
    return paste;
}

int
term_key(int timeout_ms)
{
    int k;

    timeout(timeout_ms);
    k = getch();
    switch (k) {
    case ERR:
        return KEY_APP_NONE;
    case KEY_RESIZE:
        return KEY_APP_RESIZE;
    case KEY_MOUSE: {
        MEVENT ev;
        if (getmouse(&ev) != OK)
            return 0;
        mouse_row = ev.y;
        mouse_col = ev.x;
        if (ev.bstate & BUTTON4_PRESSED)
            return KEY_APP_WHEEL_UP;
        if (ev.bstate & BUTTON5_PRESSED)
            return KEY_APP_WHEEL_DOWN;
        return ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED) ? KEY_APP_CLICK : 0;
    }
    case KEY_UP:
        return KEY_APP_UP;
    case KEY_DOWN:
        return KEY_APP_DOWN;
    case KEY_PPAGE:
        return KEY_APP_PGUP;
    case KEY_NPAGE:
        return KEY_APP_PGDN;
    case KEY_HOME:
        return KEY_APP_HOME;
    case KEY_END:
        return KEY_APP_END;
    case KEY_ENTER:
    case '\r':
    case '\n':
        return KEY_APP_ENTER;
    case 27:
        if (paste_begins()) {
            paste_read();
            return KEY_APP_PASTE;
        }
        return KEY_APP_ESC;
    case '\t':
        return KEY_APP_TAB;
    case KEY_BTAB:
        return KEY_APP_BTAB;
    case 12: /* Ctrl-L */
        return KEY_APP_REDRAW;
    case KEY_BACKSPACE:
        return KEY_APP_BACKSPACE;
    default:
        return k > 0 && k < 0x1000 ? k : 0;
    }
}

void
term_osc52(struct dq_buf *b, const void *data, size_t len)
{
    struct dq_buf safe = DQ_BUF_INIT;

    /* OSC 52: the terminal (also over ssh) sets its clipboard; the bytes are base64, so
     * nothing in them can act as a terminal command now. What they decode to is pasted
     * later, into a terminal or a shell (a raw ESC or CR there runs), so it is escaped
     * as on the screen first. */
    dq_esc_text(&safe, data, len, DQ_ESC_KEEP_NL | DQ_ESC_KEEP_TAB);
    dq_buf_puts(b, "\033]52;c;");
    if (safe.failed)
        b->failed = true;
    else
        dq_b64_encode(b, safe.data, safe.len);
    dq_buf_puts(b, "\a");
    dq_buf_free(&safe);
}

void
term_copy(const void *data, size_t len)
{
    struct dq_buf b = DQ_BUF_INIT;
    const char *tmux = getenv("TMUX");

    /* Inside tmux, the same sequence wrapped for passthrough reaches the outer terminal
     * too. */
    term_osc52(&b, data, len);
    if (!b.failed) {
        fwrite(b.data, 1, b.len, stdout);
        if (tmux != NULL && tmux[0] != '\0') {
            fputs("\033Ptmux;\033", stdout);
            fwrite(b.data, 1, b.len, stdout);
            fputs("\033\\", stdout);
        }
        fflush(stdout);
    }
    dq_buf_free(&b);
}
