/* SPDX-License-Identifier: MIT */
/*
 * term.h: the terminal backend: the only code that talks to curses (term.c is the
 * only file that includes <curses.h>). It starts and stops the screen, copies a grid
 * to it (curses sends only what changed, so nothing flickers) and reads keys.
 */
#ifndef DQ_TUI_TERM_H
#define DQ_TUI_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "grid.h"

/* Starts curses on the terminal, with bracketed paste on (a paste arrives as one
 * KEY_APP_PASTE, never as keys). Returns 0, or -1 (not a terminal). */
int term_start(bool color, bool mouse);
void term_stop(void);
/* Whether the locale term_start set takes UTF-8 (else the Overview draws ASCII). */
bool term_utf8(void);

/* The screen size now. */
void term_size(int *rows, int *cols);

/* Copies @g to the screen. */
void term_blit(const struct grid *g);

/* Waits up to @timeout_ms for a key; returns it (KEY_APP_* for special keys, keys.h),
 * KEY_APP_NONE on timeout, KEY_APP_RESIZE on a terminal resize. */
int term_key(int timeout_ms);

/* The text of the last KEY_APP_PASTE (borrowed until the next term_key; at most
 * TERM_PASTE_MAX bytes, the rest of a longer paste is dropped). */
#define TERM_PASTE_MAX 4096
const char *term_paste(size_t *len);

/* Puts @len bytes on the local clipboard with OSC 52 (through tmux when inside it), made
 * safe to paste by term_osc52. */
void term_copy(const void *data, size_t len);

struct dq_buf;
/*
 * Appends to @b the OSC 52 sequence that puts @len untrusted bytes (a stack trace, a
 * payload) on the clipboard, escaped as the screen escapes them (dq_esc_text, keeping
 * newlines and tabs): what is pasted into a terminal or a shell can hold no ESC, BEL,
 * CR, BS or other control, so it cannot act as a command to either. Pure: for tests.
 */
void term_osc52(struct dq_buf *b, const void *data, size_t len);

/* Where the last KEY_APP_CLICK happened. */
void term_mouse(int *row, int *col);

/* Forces a full repaint at the next blit (Ctrl-L). */
void term_invalidate(void);

/* fix and requeue */
/* Hands the terminal over to another program (an editor) and takes it back, as git and
 * tig do: term_suspend leaves curses mode (the screen as the shell had it, cooked
 * mode), term_resume returns to it and repaints everything at the next blit. */
void term_suspend(void);
void term_resume(void);

#endif /* DQ_TUI_TERM_H */
