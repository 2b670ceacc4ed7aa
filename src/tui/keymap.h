/* SPDX-License-Identifier: MIT */
/*
 * keymap.h: the inspector's keys. One table (keymap.c) says, for the main screen, the
 * text views, the queue picker and the Errors view, which key does what and where;
 * its handlers make app.c's state transitions. The help overlay, the status line's
 * hints and the list of bound keys are generated from the same table. Pure: no curses,
 * no Redis. Calls go one way, keymap -> app.
 */
#ifndef DQ_TUI_KEYMAP_H
#define DQ_TUI_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* Applies @key in the current mode: through the table, or, in a prompt or a y/N
 * question, as text entry. @m is the last snapshot (for totals and the selected task).
 * Returns the reaction flags (APP_*). */
int keymap_key(struct ui *ui, const struct model *m, int key);

/* The help overlay: how many lines, and line @i into @buf (snprintf semantics; "" past
 * the end). */
size_t keymap_help_lines(void);
void keymap_help_line(size_t i, char *buf, size_t size);

/* The key hints for the status line, fitted to @cols: the focused pane's actions
 * first, then the general keys (no actions when read-only). Returns the length. */
size_t keymap_hints(const struct ui *ui, int cols, char *buf, size_t size);

/* Whether @key is bound anywhere, and every bound key code with the label that help
 * shows for it (up to @max of them; returns how many there are). */
bool keymap_bound(int key);
size_t keymap_bound_keys(int *keys, size_t max, const char **labels);

#endif /* DQ_TUI_KEYMAP_H */
