/* SPDX-License-Identifier: MIT */
/*
 * retry.h: a client's reconnect backoff, as the inspector needs it to tell a fetch that
 * was never sent (the client still waits to reconnect) from one that failed. No hiredis
 * here, so the tui may include it.
 */
#ifndef DQ_LIB_RETRY_H
#define DQ_LIB_RETRY_H

#include <stdint.h>

#include "delayq.h"

/* Milliseconds until the next connect attempt is allowed (0: now, or connected). */
int64_t dq_conn_retry_in_ms(const dq_client *c);

#endif /* DQ_LIB_RETRY_H */
