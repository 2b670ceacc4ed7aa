/* SPDX-License-Identifier: MIT */
/*
 * registry.h: what the queue operations need of the queue registry (registry.c; the
 * public half, dq_queues_get and dq_queue_forget, is in delayq.h).
 */
#ifndef DQ_LIB_REGISTRY_H
#define DQ_LIB_REGISTRY_H

#include "delayq.h"

/*
 * Adds @queue to the registry (dq:queues) unless this client already did. Called by
 * the operations that make a queue (enqueue, claim, config set) after they succeed.
 * Best effort: a failed SADD is not reported, and is retried by the next such call.
 */
void dq_registry_note(dq_client *c, const char *queue);

#endif /* DQ_LIB_REGISTRY_H */
