/* SPDX-License-Identifier: MIT */
/* view.c: the view names (view.h). */
#include "view.h"

#include <string.h>

static const char *const names[] = {
    [DQ_VIEW_DUE] = "due",       [DQ_VIEW_FUTURE] = "future", [DQ_VIEW_INFLIGHT] = "inflight",
    [DQ_VIEW_FAILED] = "failed", [DQ_VIEW_DONE] = "done",     [DQ_VIEW_PARKED] = "parked",
};

const char *
dq_view_name(dq_view view)
{
    return (unsigned)view < sizeof names / sizeof names[0] ? names[view] : NULL;
}

bool
dq_view_parse(const char *s, dq_view *out)
{
    for (unsigned v = 0; v < sizeof names / sizeof names[0]; v++) {
        if (strcmp(s, names[v]) == 0) {
            *out = (dq_view)v;
            return true;
        }
    }
    if (strcmp(s, "in-flight") == 0) { /* as the inspector's pane title spells it */
        *out = DQ_VIEW_INFLIGHT;
        return true;
    }
    return false;
}
