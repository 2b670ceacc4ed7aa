/* SPDX-License-Identifier: MIT */
/*
 * top.h: `delayq top`, the queue inspector, as one call. The CLI parses options and
 * connects; tui_run() owns everything after: the terminal, the Redis thread, the loop.
 */
#ifndef DQ_TUI_TOP_H
#define DQ_TUI_TOP_H

#include <stdbool.h>
#include <stdint.h>

#include "delayq.h"

struct tui_options {
    const char *queue; /* the queue shown first */
    bool queue_chosen; /* given with -q or $DELAYQ_QUEUE (else an unused one opens the picker) */
    bool read_only;    /* every action refused, with a badge */
    /* why, when not --read-only (the user may not write: docs/SECURITY.md); NULL */
    const char *read_only_why;
    bool color, mouse;
    bool ascii;          /* --ascii: charts and sparklines in ASCII (also when the locale
                            is not UTF-8) */
    int64_t refresh_ms;  /* the first refresh interval; it then adapts */
    bool tls_insecure;   /* certificates are not checked: an INSECURE badge all along */
    const char *warning; /* shown on the status line at start (a TLS key others may
                            read); NULL: none */
};

enum { TUI_OK = 0, TUI_ENOTTY = -1, TUI_ETHREAD = -2 };

/*
 * Runs the inspector on the terminal until the user quits, a signal (SIGINT, SIGTERM,
 * SIGHUP) arrives or the terminal goes away. Takes @c (freed before returning, also on
 * failure). Returns TUI_OK, TUI_ENOTTY (stdin/stdout is not a terminal) or TUI_ETHREAD.
 */
int tui_run(dq_client *c, const struct tui_options *o);

#endif /* DQ_TUI_TOP_H */
