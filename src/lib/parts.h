/* SPDX-License-Identifier: MIT */
/*
 * parts.h: partitioned queues (docs/PROTOCOL.md 14). A queue with
 * `partitions` N > 1 is N complete queues of today's shape: partition 0 is the queue
 * itself, partition i >= 1 is the internal queue "Q~<i>.<k>" (k chosen so that the
 * partitions spread over a cluster's masters). The map is the hash dq:{Q}:parts (absent:
 * partitions 1, today's layout byte for byte). Each client caches the map of a queue and
 * reads it again at most once a second, so a resize reaches every client within about a
 * second, and a queue that is not partitioned costs one HGETALL a second at most.
 */
#ifndef DQ_LIB_PARTS_H
#define DQ_LIB_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

/* Generated ids of partition i start at i * DQ_PART_SEQ_SPAN (its seq key is seeded so),
 * so the partition of a generated id is id / DQ_PART_SEQ_SPAN. 10^13, not the 10^15 first
 * planned: a seq must stay below 2^53 (9.007e15), where Lua numbers stop being exact and
 * the envelope readers refuse it, and 255 * 10^15 is far past that; 256 * 10^13 = 2.56e15
 * is not, and leaves each partition 10^13 ids (100 000 a second for three years). */
#define DQ_PART_SEQ_SPAN 10000000000000LL
/* How often a client reads a queue's map again (ms). */
#define DQ_PARTS_REFRESH_MS 1000
/* A cached map older than this is read again before any call (parts.c dq_parts_peek) */
#define DQ_PARTS_STALE_MS 60000

struct dq_parts {
    size_t n;     /* routed partitions (enqueue goes to 0..n-1), >= 1 */
    size_t all;   /* partitions that exist, >= n (n..all-1 draining) */
    char **names; /* all names, owned, each owned; names[0] is the queue itself */
    bool resized; /* n changed once: a caller id may be in another partition than its hash's */
};

/* The per-client cache of maps (owned by the dq_client; freed by dq_parts_cache_free). */
struct dq_parts_cache;

/*
 * The map of @queue into @out (a copy the caller frees with dq_parts_free), from the
 * client's cache when read less than DQ_PARTS_REFRESH_MS ago, else from one HGETALL of
 * dq:{queue}:parts. DQ_OK; DQ_EINVAL for a bad queue name; DQ_EPROTO for a map that is
 * not one delayq wrote; DQ_ECONN / DQ_ETIMEOUT.
 */
int dq_parts_get(dq_client *c, const char *queue, struct dq_parts *out, dq_err *err);

/* The same, borrowed from the cache: valid until the next dq_parts_* call on @c. */
int dq_parts_peek(dq_client *c, const char *queue, const struct dq_parts **out, dq_err *err);

/*
 * True when @c's cache holds no map of @queue or one of a single partition: a call that
 * learns the map's size from its own reply (the stats script's partition map field) may
 * go to @queue directly, and then confirms with dq_parts_confirm_single or, for a
 * partitioned queue, forgets the map and goes by dq_parts_peek. So the inspector's
 * refresh and `delayq stats` of an unpartitioned queue send no HGETALL (PROTOCOL.md 14.3).
 */
bool dq_parts_maybe_single(dq_client *c, const char *queue);

/* @queue's own reply said it has no partition map: caches (or refreshes) its map of one
 * partition as if just read. */
int dq_parts_confirm_single(dq_client *c, const char *queue, dq_err *err);

/* Forgets the cached map of @queue (after this client changed it). */
void dq_parts_forget(dq_client *c, const char *queue);

/* Releases what @p owns and zeroes it. Accepts NULL. */
void dq_parts_free(struct dq_parts *p);

/* Frees a client's cache. Accepts NULL. */
void dq_parts_cache_free(struct dq_parts_cache *pc);

/* The partition of caller-chosen id @id (FNV-1a 32 of its bytes, mod p->n). */
size_t dq_parts_route_id(const struct dq_parts *p, const char *id, size_t len);

/* The partition of generated id (sequence) @seq: seq / DQ_PART_SEQ_SPAN, clamped to
 * 0..all-1. */
size_t dq_parts_of_seq(const struct dq_parts *p, int64_t seq);

/* The partition a task without a caller id goes to: round robin over 0..p->n-1, per
 * client and queue. @p is the map dq_parts_peek gave for @queue. */
size_t dq_parts_next(dq_client *c, const char *queue, const struct dq_parts *p);

/*
 * Orders the indexes 0..n-1 by their partition part[i] (< all), keeping their order within
 * a partition: order[first[p] .. first[p + 1] - 1] are partition p's. @first has all + 1
 * entries. For splitting a batch into one call per partition.
 */
void dq_parts_group(const size_t *part, size_t n, size_t all, size_t *order, size_t *first);

/*
 * Adds partition @one's stats to @sum, the logical queue's (PROTOCOL.md, "Partitioned
 * queues", which lists the rule of each field): counts and counters are sums; the next due
 * time the earliest, the oldest due age and the server time the largest; the queue's own
 * settings (horizon, window, limits, throttle) partition 0's. @sum starts as partition 0's.
 */
void dq_parts_stats_add(dq_stats *sum, const dq_stats *one);

/* FNV-1a, 32 bits, of @len bytes at @p (the routing hash; PROTOCOL.md). */
uint32_t dq_parts_fnv1a(const void *p, size_t len);

/*
 * Prepares partitions of @queue for `partitions` @n (1..DQ_PARTITIONS_MAX): each one in
 * all..n-1 that does not exist yet gets its name (salted for the cluster's masters; k 0
 * on a single server), its config copied from @queue and its seq seeded to i *
 * DQ_PART_SEQ_SPAN. Their names go to @names[i] (owned by the caller; NULL for the
 * partitions that already exist), for the config script that writes the map. *@all is
 * the number of partitions the map holds before the change. @set (field, value pairs;
 * may be NULL) are the other fields the same change sets: each new partition gets them
 * too, so a bad one is refused by the first new partition's config call, which checks
 * every pair before it writes, and nothing anywhere is written.
 */
struct dq_args;
int dq_parts_prepare(dq_client *c, const char *queue, int64_t n, const struct dq_args *set,
                     char **names, size_t *all, dq_err *err);

/*
 * The name of partition @i of @queue on the current slot map of @c (a cluster client:
 * the master at (m0 + i) mod M in the order of lowest slots, m0 the master of @queue's
 * slot; otherwise k 0), into @buf. Returns the salt k, or -1 when @buf is too small.
 */
long dq_parts_name(const dq_client *c, const char *queue, size_t i, char *buf, size_t size);

#endif /* DQ_LIB_PARTS_H */
