/* SPDX-License-Identifier: MIT */
/*
 * taskfmt.h: how a task's fields read on a terminal, shared by the delayq command's
 * listings and the inspector's panes. Pure: no I/O.
 */
#ifndef DQ_FMT_TASKFMT_H
#define DQ_FMT_TASKFMT_H

#include <stddef.h>

#include "delayq.h"

/* "3/25" (attempts made / at most), "3" when unlimited, "-" for undecodable bytes;
 * snprintf semantics. */
size_t dq_fmt_attempts(char *buf, size_t size, const dq_task *t);

#endif /* DQ_FMT_TASKFMT_H */
