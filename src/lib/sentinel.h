/* SPDX-License-Identifier: MIT */
/*
 * sentinel.h: finding the master of a redis-sentinel:// URL. client.c calls in here
 * before each connect (ask the sentinels, in turn, where the master is) and right after
 * it (check with ROLE that the node is the master before using it), and for each reply
 * (a READONLY error means the node was demoted: drop, ask again). A sentinel's own
 * password is not in the URL (the URL's user info is the master's): it comes from
 * dq_client_opts.sentinel_user / sentinel_password ($DELAYQ_SENTINEL_USER and
 * $DELAYQ_SENTINEL_PASSWORD in the delayq command).
 */
#ifndef DQ_LIB_SENTINEL_H
#define DQ_LIB_SENTINEL_H

#include <stdbool.h>

#include "delayq.h"
#include "url.h"

/* What a dq_client keeps for its sentinels (by value: a subscriber copies it). */
struct dq_sentinel {
    char user[128];     /* AUTH user for the sentinels; "" for none */
    char password[256]; /* AUTH password for the sentinels; "" for none */
    int first;          /* index of the sentinel to ask first: the last one that answered */
};

struct redisReply;

/*
 * One command to sentinel @node over a connection of its own, with the sentinels'
 * credentials and the connect timeout: client.c's part (it owns connections; this file
 * stays below it). On DQ_OK *out is the reply, freed by the caller; else @err says what
 * failed at which sentinel.
 */
typedef int (*dq_sentinel_ask_fn)(void *arg, const struct dq_url_node *node, int argc,
                                  const char **argv, struct redisReply **out, dq_err *err);

/* Copies the sentinels' credentials from @o into @s. DQ_EINVAL naming the field when
 * one is too long. */
int dq_sentinel_init(struct dq_sentinel *s, const dq_client_opts *o, dq_err *err);

/*
 * Asks @u's sentinels in turn through @ask, from the last one that answered, where the
 * master is, and sets u->host and u->port to the answer. DQ_OK; DQ_ECONN (or
 * DQ_ETIMEOUT when every sentinel timed out) naming the master and the last sentinel's
 * error; DQ_ENOMEM.
 */
int dq_sentinel_resolve(struct dq_sentinel *s, struct dq_url *u, dq_sentinel_ask_fn ask, void *arg,
                        dq_err *err);

/*
 * Whether @r, the reply to ROLE from the node at @endpoint, says "master". When it
 * does not, DQ_ECONN with the role found, and the next resolve starts at another
 * sentinel.
 */
int dq_sentinel_role_ok(struct dq_sentinel *s, const struct dq_url *u, const char *endpoint,
                        const struct redisReply *r, dq_err *err);

/* Reads @r, sentinel @n's reply to get-master-addr-by-name, into u->host and u->port:
 * DQ_OK; DQ_ECONN when that sentinel does not know the master or refused; DQ_EPROTO for
 * any other shape. (Public for the fuzz target; dq_sentinel_resolve calls it.) */
int dq_sentinel_addr(struct dq_url *u, const struct dq_url_node *n, const struct redisReply *r,
                     dq_err *err);

/* Whether @r is a READONLY error: the node no longer takes writes (demoted). */
bool dq_sentinel_readonly(const struct redisReply *r);

/* Wipes the credentials in @s. */
void dq_sentinel_wipe(struct dq_sentinel *s);

#endif /* DQ_LIB_SENTINEL_H */
