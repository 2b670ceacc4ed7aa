/* SPDX-License-Identifier: MIT */
/*
 * keys.h: the key codes the inspector understands beyond plain characters. term.c maps
 * curses keys to these; keymap.c reacts to them. Nothing else lives here, so the terminal
 * backend does not depend on the UI state machine.
 */
#ifndef DQ_TUI_KEYS_H
#define DQ_TUI_KEYS_H

enum {
    KEY_APP_UP = 0x1000,
    KEY_APP_DOWN,
    KEY_APP_PGUP,
    KEY_APP_PGDN,
    KEY_APP_HOME,
    KEY_APP_END,
    KEY_APP_ENTER,
    KEY_APP_ESC,
    KEY_APP_TAB,
    KEY_APP_BTAB,
    KEY_APP_REDRAW, /* Ctrl-L */
    KEY_APP_CLICK,  /* mouse: term_mouse() tells where */
    KEY_APP_WHEEL_UP,
    KEY_APP_WHEEL_DOWN,
    KEY_APP_BACKSPACE,
    KEY_APP_PASTE, /* a bracketed paste ended: term_paste() has its text */
};

/* What term_key() returns when nothing came and when the terminal was resized. */
enum { KEY_APP_NONE = 0, KEY_APP_RESIZE = -2 };

#endif /* DQ_TUI_KEYS_H */
