/* SPDX-License-Identifier: MIT */
/*
 * io.h: the inspector's Redis thread. Every Redis call of `delayq top` runs here, one at
 * a time on the one connection, so the keyboard and the screen never wait for Redis
 * (a call can take up to the command timeout while Redis is slow or down).
 *
 * Work goes through slots. The keyboard thread fills a slot's argument and submits it;
 * from then until io_done() reports it finished, the argument belongs to the Redis
 * thread and the keyboard thread must not touch it. No curses here.
 */
#ifndef DQ_TUI_IO_H
#define DQ_TUI_IO_H

#include <stdbool.h>

#include "delayq.h"

/* In the order the thread takes pending work: an operator's action first. */
enum { IO_JOB = 0, IO_FETCH, IO_SEARCH, IO_SLOTS };

typedef void (*io_fn)(dq_client *c, void *arg);

struct io;

/* Starts the thread, which then owns @c (freed by io_stop). Returns NULL on failure. */
struct io *io_start(dq_client *c);

/* Asks the thread to stop, waits for the call it is in (at most the command timeout)
 * and frees everything, @c included. Accepts NULL. */
void io_stop(struct io *io);

/* Queues fn(c, arg) in @slot. False when the slot is still busy (nothing queued). */
bool io_submit(struct io *io, int slot, io_fn fn, void *arg);

/* True once when the work in @slot has finished: its argument is the caller's again. */
bool io_done(struct io *io, int slot);

/* Whether @slot has work queued or running. */
bool io_busy(struct io *io, int slot);

/* Whether any slot has work queued or running (the keyboard thread then polls). */
bool io_any_busy(struct io *io);

#endif /* DQ_TUI_IO_H */
