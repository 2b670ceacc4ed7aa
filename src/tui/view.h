/* SPDX-License-Identifier: MIT */
/*
 * view.h: lays a snapshot and the UI state out into a grid of a given size. Pure: the
 * same inputs give the same grid; no curses, no Redis, no clock (time comes from the
 * snapshot's server time).
 */
#ifndef DQ_TUI_VIEW_H
#define DQ_TUI_VIEW_H

#include "app.h"
#include "grid.h"
#include "model.h"

/* The layout of a @rows x @cols screen in the UI's mode: rows per pane, where each pane
 * goes, how far a text view scrolls. The loop hands it to app_set_layout(). */
void view_layout(const struct ui *ui, int rows, int cols, struct layout *l);

/* The schedules the Schedules view (S) shows on a @rows x @cols screen, one row each:
 * the jobs look up the last runs of that many. */
int view_schedule_rows(int rows, int cols);

/* Renders into @g (already sized), laid out by view_layout() for its size. */
void view_render(const struct model *m, const struct ui *ui, struct grid *g);

#endif /* DQ_TUI_VIEW_H */
