/* SPDX-License-Identifier: MIT */
/*
 * cluster.h: Redis Cluster routing under a dq_client opened with redis-cluster://. The
 * hooks client.c calls (dq_cluster_open, _command, _sub_open, _node_of, _free) are
 * declared in client.h, so that includes point one way (this file's code includes
 * client.h, never the reverse); here are the slot function, the counters and the pure
 * parsers. The
 * client then holds a slot map and one ordinary single-node dq_client per node (opened
 * lazily, with their own reconnect backoff); dq_conn_command hands each command here,
 * which sends it to the master of its key's slot. A queue's keys all carry the hash
 * tag {queue}, so a queue lives in one slot and its scripts never cross slots.
 *
 * Redirections: MOVED updates the slot and refreshes the whole map before the retry;
 * ASK sends ASKING and the command to the named node once, without touching the map;
 * TRYAGAIN (a slot half migrated) and CLUSTERDOWN are retried with backoff within the
 * command timeout, then reported as DQ_ETIMEOUT / DQ_ECONN (an outage, exit 3); a node that fails
 * (connection refused, reset, timeout) marks the map stale, and the map is read again from any node
 * that answers. Commands without a key (FUNCTION LOAD, SCRIPT LOAD, INFO) go to the node of the
 * previous call, so the library is loaded where "Function not found" was said.
 */
#ifndef DQ_LIB_CLUSTER_H
#define DQ_LIB_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "delayq.h"

#define DQ_CLUSTER_SLOTS 16384

struct dq_cluster;

/* Counters of what the routing met, for tests and `delayq stats`. */
struct dq_cluster_counts {
    int64_t moved, ask, tryagain, down, refreshes, node_errors;
    /* round trips to nodes for commands: one per command sent alone (ASKING and its
     * command count two), one per node's pipeline of dq_cluster_pipeline; the map's reads
     * are the refreshes */
    int64_t round_trips;
    int nodes; /* nodes known (masters and any others named by a redirection) */
};

/* The slot of @key (CRC16 of its hash tag, or of the whole key without one). */
unsigned dq_cluster_slot(const char *key, size_t len);

/* The counters of @c (zeroes for a client that is not a cluster client). */
void dq_cluster_counts_get(const dq_client *c, struct dq_cluster_counts *out);

/* ---- the parsers of what nodes send, pure (unit tests and tests/fuzz) ---- */

/* An empty map with no node and no client; dq_cluster_free() (client.h) releases it.
 * NULL: OOM. */
struct dq_cluster *dq_cluster_alloc(void);

/*
 * Reads a CLUSTER SLOTS reply @r into @cl's map, replacing it; the masters it names are
 * added as nodes (at most 1024). A master listed with host "" or "?" is on @self (the
 * host of the node asked). Entries of any other shape are skipped. DQ_OK, DQ_EPROTO
 * when @r is not an array, DQ_ENOMEM.
 */
int dq_cluster_apply_slots(struct dq_cluster *cl, const redisReply *r, const char *self,
                           dq_err *err);

/* "host:port" of the master of @slot in @cl's map, or "". Borrowed from @cl. */
const char *dq_cluster_slot_addr(const struct dq_cluster *cl, unsigned slot);

/*
 * Parses the text of a redirection, "MOVED 3999 127.0.0.1:6381" or "ASK 3999
 * [::1]:6381" (the word before the first space is not checked): the slot (0..16383), the
 * host without brackets (into @host, @hsize bytes) and the port (1..65535). 0, or -1
 * when the text is not of that form.
 */
int dq_cluster_parse_redirect(const char *msg, size_t len, int *slot, char *host, size_t hsize,
                              int *port);

#endif /* DQ_LIB_CLUSTER_H */
