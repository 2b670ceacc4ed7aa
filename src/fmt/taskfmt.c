/* SPDX-License-Identifier: MIT */
/* taskfmt.c: task fields as text for listings (see taskfmt.h). Pure. */
#include "taskfmt.h"

#include <stdio.h>

size_t
dq_fmt_attempts(char *buf, size_t size, const dq_task *t)
{
    int n;

    if (t->undecodable)
        n = snprintf(buf, size, "-");
    else if (t->max_attempts > 0)
        n = snprintf(buf, size, "%u/%u", t->attempt, t->max_attempts);
    else
        n = snprintf(buf, size, "%u", t->attempt);
    return n < 0 ? 0 : (size_t)n;
}
