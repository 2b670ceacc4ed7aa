/* SPDX-License-Identifier: MIT */
/*
 * registry.h: what the queue operations need of the queue registry (registry.c; the
 * public half, dq_queues_get and dq_queue_forget, is in delayq.h).
 */
#ifndef DQ_LIB_REGISTRY_H
#define DQ_LIB_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

/*
 * Adds @queue to the registry (dq:queues) unless this client already did. Called by
 * the operations that make a queue (enqueue, claim, config set) after they succeed.
 * Best effort: a failed SADD is not reported, and is retried by the next such call.
 */
void dq_registry_note(dq_client *c, const char *queue);

/*
 * Removes the member @name (@len bytes, any bytes) from the registry and sets
 * *@removed to whether it was there. For what dq_queue_forget() refuses: a member that
 * is no valid queue name (too long, bytes outside [A-Za-z0-9._:-], a NUL), which only
 * a foreign write can have put there, and which no listing shows.
 */
int dq_registry_forget(dq_client *c, const void *name, size_t len, bool *removed, dq_err *err);

/* A registry member that is no valid queue name, as dq_registry_invalid() finds it. */
struct dq_member {
    char *bytes; /* owned, NUL-terminated for convenience; may hold NULs: use len */
    size_t len;
};

/* Up to @most registry members that are no valid queue names, from a full SSCAN of the
 * registry in steps of DQ_STEP_MAX; *@n of them into *@out (free with
 * dq_members_free). *@scanned: the members looked at. */
int dq_registry_invalid(dq_client *c, size_t most, struct dq_member **out, size_t *n,
                        int64_t *scanned, dq_err *err);
void dq_members_free(struct dq_member *m, size_t n);

#endif /* DQ_LIB_REGISTRY_H */
