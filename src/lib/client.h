/* SPDX-License-Identifier: MIT */
/*
 * client.h: the connection behind a dq_client. The only place (with scripts.c and
 * registry.c) that sends commands through hiredis, and it uses only hiredis's reply
 * reader and command formatter: the bytes travel through net.c (TCP, unix socket or
 * TLS). One reused connection; on an I/O error or a timeout it is dropped (its state is
 * unknown) and the next call reconnects, with capped exponential backoff between
 * attempts.
 */
#ifndef DQ_LIB_CLIENT_H
#define DQ_LIB_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "clock.h"
#include "delayq.h"
#include "net.h"
#include "retry.h"
#include "sentinel.h"
#include "url.h"

/*
 * A set of names, kept sorted so a lookup is a binary search (a few strcmp for the
 * hundreds of queues a busy client may use). Bounded by DQ_NAMES_MAX so a client that
 * walks through ever-new queue names cannot grow it without end. A full set takes no
 * more names rather than evicting old ones: a client cycling through more queues than
 * the bound would then miss on every call, where this way the first DQ_NAMES_MAX keep
 * hitting and only the rest pay a round trip.
 */
#define DQ_NAMES_MAX 1024
struct dq_names {
    char **v; /* owned, each owned, in strcmp order */
    size_t n, cap;
};

struct dq_parts_cache; /* parts.h */

struct dq_client {
    struct dq_net net;   /* net.fd is -1 while disconnected */
    redisReader *reader; /* replies on this connection; NULL while disconnected */
    struct dq_tls *tls;  /* rediss://: owned (a reference); NULL otherwise */
    bool answered;       /* the server has sent a reply on this connection */
    bool unanswered;     /* the last command was sent whole and no reply came (a timeout
                          * or a lost connection): it may have run (dq_client_unanswered) */
    struct dq_url url;
    char endpoint[300];
    char who[160];
    char name[104]; /* CLIENT SETNAME on each connection; legal bytes only */
    int connect_timeout_ms;
    int command_timeout_ms;
    int64_t retry_at_ms;         /* monotonic: no connect attempt before this */
    int backoff_ms;              /* next backoff step; 0 after a success */
    struct dq_names registered;  /* queues this client added to the registry (registry.c) */
    int scripts_path;            /* scripts.c: how this server runs the scripts; 0 unknown */
    struct dq_sentinel sentinel; /* redis-sentinel:// (url.sentinel): sentinel.c */
    int min_replicas;            /* scripts.c: WAIT after writes when > 0 */
    int min_replicas_timeout_ms;
    struct dq_cluster *cluster; /* redis-cluster://: slot map and node clients (cluster.c),
                                 * owned; NULL otherwise (then this is the connection) */
    /* parts.c: the partition maps this client read, owned, and their free function (set
     * with them, so that freeing a client does not call back up into parts.c); NULL: none */
    struct dq_parts_cache *parts;
    void (*parts_free)(struct dq_parts_cache *);
};

/* Whether @set holds @name. */
bool dq_names_has(const struct dq_names *set, const char *name);

/*
 * Adds a copy of @name to @set. Returns false, leaving @set as it was, when @set already
 * holds DQ_NAMES_MAX names or on OOM: the caller then simply does not remember it.
 */
bool dq_names_add(struct dq_names *set, const char *name);

/* Removes @name from @set if it is there. */
void dq_names_remove(struct dq_names *set, const char *name);

/* Frees every name and empties @set. */
void dq_names_free(struct dq_names *set);

/* A pseudo-random value in [0, max], to spread retries (not for anything else). */
int64_t dq_jitter(int64_t max);

/* Connects if not connected (respecting the backoff). DQ_OK, DQ_ECONN or DQ_ETIMEOUT. */
int dq_conn_ensure(dq_client *c, dq_err *err);

/*
 * Sends one command and reads its reply. On DQ_OK *out holds the reply, which may be
 * an error reply; the caller frees it with freeReplyObject on the same path. On an
 * I/O error or timeout the connection is dropped and DQ_ECONN / DQ_ETIMEOUT returned.
 */
int dq_conn_command(dq_client *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                    dq_err *err);

/* One node's side of the calls above and below (conn.c), for a client that is no cluster
 * client: what cluster.c uses on its nodes, so it depends on the connection only. */
int dq_node_command(dq_client *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                    dq_err *err);
int dq_node_sub_open(dq_client *c, const char *channel, dq_client **out, dq_err *err);
/* @n commands sent at once, then their @n replies read into out[0..n-1] (the caller
 * frees each; error replies among them). On DQ_ECONN / DQ_ETIMEOUT the connection is
 * dropped and no reply is kept. For a client that is no cluster client (the commands
 * are not routed). */
int dq_node_pipeline(dq_client *c, size_t n, const int *argc, const char **const *argv,
                     const size_t *const *lens, redisReply **out, dq_err *err);
/* Frees a node client (no cluster of its own): its connection, TLS reference, secrets. */
void dq_node_free(dq_client *c);

/*
 * A client for the node @host:@port of @c's cluster: @c's credentials, TLS settings (a
 * reference), timeouts and name, not a cluster client itself, not yet connected (the
 * first command connects it). DQ_OK or DQ_ENOMEM.
 */
int dq_client_for_node(const dq_client *c, const char *host, int port, dq_client **out,
                       dq_err *err);

/* ---- Redis Cluster routing: implemented in cluster.c, which builds on this file ---- */

struct dq_cluster; /* the slot map and the node clients of a redis-cluster:// client */

/*
 * Sets up @c->cluster for @c (whose url is a cluster URL, with TLS settings made) and
 * reads the slot map from the first seed that answers. DQ_OK; DQ_ECONN / DQ_ETIMEOUT
 * naming the seeds when none answers; DQ_EREDIS when a seed is not in cluster mode.
 */
int dq_cluster_open(dq_client *c, dq_err *err);

/* Frees the map, every node client and @cl. Accepts NULL. */
void dq_cluster_free(struct dq_cluster *cl);

/* dq_conn_command for a cluster client: to the master of the key's slot, following
 * MOVED, ASK, TRYAGAIN, CLUSTERDOWN and failed nodes (cluster.h). */
int dq_cluster_command(dq_client *c, int argc, const char **argv, const size_t *lens,
                       redisReply **out, dq_err *err);

/*
 * @n commands of a cluster client, each to the master of its key's slot in the current
 * map, pipelined per node: one dq_node_pipeline, so one round trip, per master. A command
 * that node answered with MOVED, ASK, TRYAGAIN or CLUSTERDOWN was not run: its out[i] is
 * left NULL for the caller to send alone through dq_cluster_command, which follows those
 * (a MOVED also marks the map stale); so is a command without a key or of a slot no
 * master is known for. When a node's connection fails, what it ran is unknown: that
 * error is returned (DQ_ECONN / DQ_ETIMEOUT), out[] freed, as dq_node_pipeline does.
 */
int dq_cluster_pipeline(dq_client *c, size_t n, const int *argc, const char **const *argv,
                        const size_t *const *lens, redisReply **out, dq_err *err);

/* dq_sub_open for a cluster client: SSUBSCRIBE on the node of @channel's slot,
 * following MOVED and a stale map. */
int dq_cluster_sub_open(dq_client *c, const char *channel, dq_client **out, dq_err *err);

/* "host:port" of the master that serves @key's slot in the current map, or "" when
 * the map has no master for it. Borrowed from @c, valid until the next call on @c. */
const char *dq_cluster_node_of(const dq_client *c, const char *key);

/* "user@host" of this process, for audit entries and worker names. */
void dq_default_who(char *buf, size_t size);

/*
 * A second connection to @c's server, subscribed to pub/sub @channel (the worker's
 * wake-up). *out is a dq_client in subscribe mode: use it only with dq_sub_*.
 */
int dq_sub_open(dq_client *c, const char *channel, dq_client **out, dq_err *err);

/* The socket to poll for readability, or -1 while disconnected. */
int dq_sub_fd(const dq_client *s);

/* What arrived on the wake-up channel. */
/* Cancellations one drain keeps ("cancel:<task key>"); more set cancel_more. */
#define DQ_WAKE_CANCELS 16

struct dq_wake {
    bool due;         /* a task became the earliest scheduled one (or: unknown message) */
    bool parts;       /* "parts": the queue's partition map changed (PROTOCOL.md 10.10) */
    bool pause;       /* "pause": the queue was paused (not a due time) */
    int64_t lease_ms; /* earliest "lease:<ms>" announced (a new earliest lease); -1: none */
    /* running tasks an operator cancelled (cancel.lua): their task keys */
    char cancel[DQ_WAKE_CANCELS][DQ_TASK_KEY_MAX + 1];
    size_t cancel_len[DQ_WAKE_CANCELS], ncancel;
    bool cancel_more; /* more arrived than were kept: check every lease */
};

/* Reads what arrived (call when the fd is readable) into @w. Returns the number of
 * messages, or DQ_ECONN after dropping a connection that closed or failed. */
int dq_sub_drain(dq_client *s, struct dq_wake *w, dq_err *err);

#endif /* DQ_LIB_CLIENT_H */
