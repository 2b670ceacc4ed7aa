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

/* Renders into @g (already sized). Sets ui->rows_visible from the layout. */
void view_render(const struct model *m, struct ui *ui, struct grid *g);

#endif /* DQ_TUI_VIEW_H */
