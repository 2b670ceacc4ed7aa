/* SPDX-License-Identifier: MIT */
/*
 * view.h: the one table of view names (due, future, inflight, failed, done, parked), as the scripts
 * take them and as `delayq ls` and `delayq export` read them. Pure.
 */
#ifndef DQ_LIB_VIEW_H
#define DQ_LIB_VIEW_H

#include <stdbool.h>

#include "delayq.h"

/* The name of @view ("inflight"), or NULL for a value that is no view. */
const char *dq_view_name(dq_view view);

/* Reads a view's name into *@out: its dq_view_name, or "in-flight" for the in-flight view.
 * False for anything else (*@out unchanged). */
bool dq_view_parse(const char *s, dq_view *out);

#endif /* DQ_LIB_VIEW_H */
