/* SPDX-License-Identifier: MIT */
/*
 * sentinel.c: the master of a redis-sentinel:// URL, asked of the sentinels with
 * SENTINEL get-master-addr-by-name and checked with ROLE. Each sentinel is asked over a
 * short-lived connection of its own that client.c makes (a plain dq_client, so
 * timeouts, TLS and AUTH work exactly as for the master); resolving happens only when a
 * connection is made, which is rare, so keeping sentinel connections open would buy
 * nothing.
 */
#include "sentinel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "err.h"

static void
wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;

    while (n-- > 0)
        *v++ = 0;
}

int
dq_sentinel_init(struct dq_sentinel *s, const dq_client_opts *o, dq_err *err)
{
    const char *user = o != NULL ? o->sentinel_user : NULL;
    const char *pass = o != NULL ? o->sentinel_password : NULL;

    memset(s, 0, sizeof *s);
    if (user != NULL && strlen(user) >= sizeof s->user)
        return dq_err_set(err, DQ_EINVAL, "sentinel user: longer than %zu bytes",
                          sizeof s->user - 1);
    if (pass != NULL && strlen(pass) >= sizeof s->password)
        return dq_err_set(err, DQ_EINVAL, "sentinel password: longer than %zu bytes",
                          sizeof s->password - 1);
    snprintf(s->user, sizeof s->user, "%s", user != NULL ? user : "");
    snprintf(s->password, sizeof s->password, "%s", pass != NULL ? pass : "");
    return DQ_OK;
}

void
dq_sentinel_wipe(struct dq_sentinel *s)
{
    wipe(s, sizeof *s);
}

int
dq_sentinel_addr(struct dq_url *u, const struct dq_url_node *n, const redisReply *r, dq_err *err)
{
    char *end;
    long port;

    if (r->type == REDIS_REPLY_NIL)
        return dq_err_set(err, DQ_ECONN, "sentinel at %s:%d does not know a master named \"%s\"",
                          n->host, n->port, u->master);
    if (r->type == REDIS_REPLY_ERROR)
        return dq_err_set(err, DQ_ECONN, "sentinel at %s:%d refused SENTINEL: %.*s", n->host,
                          n->port, (int)(r->len > 120 ? 120 : r->len), r->str);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[0]->len == 0 || r->element[0]->len >= sizeof u->host ||
        memchr(r->element[0]->str, '\0', r->element[0]->len) != NULL)
        return dq_err_set(err, DQ_EPROTO, "sentinel at %s:%d gave a malformed master address",
                          n->host, n->port);
    port = strtol(r->element[1]->str, &end, 10);
    if (end == r->element[1]->str || *end != '\0' || port < 1 || port > 65535)
        return dq_err_set(err, DQ_EPROTO, "sentinel at %s:%d gave a malformed master port", n->host,
                          n->port);
    snprintf(u->host, sizeof u->host, "%s", r->element[0]->str);
    u->port = (int)port;
    return DQ_OK;
}

int
dq_sentinel_resolve(struct dq_sentinel *s, struct dq_url *u, dq_sentinel_ask_fn ask, void *arg,
                    dq_err *err)
{
    const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", u->master};
    int n = u->nsentinels, timeouts = 0, rc = DQ_ECONN;
    dq_err last = {0};

    for (int k = 0; k < n; k++) {
        int i = (s->first + k) % n;
        redisReply *r = NULL;

        rc = ask(arg, &u->sentinels[i], 3, argv, &r, &last);
        if (rc == DQ_OK)
            rc = dq_sentinel_addr(u, &u->sentinels[i], r, &last);
        freeReplyObject(r);
        if (rc == DQ_OK) {
            s->first = i;
            return DQ_OK;
        }
        if (rc == DQ_ENOMEM)
            return dq_err_set(err, rc, "%s", last.msg);
        timeouts += rc == DQ_ETIMEOUT;
    }
    return dq_err_set(err, timeouts == n ? DQ_ETIMEOUT : DQ_ECONN,
                      "no sentinel of %d named the master of \"%s\"; last: %s", n, u->master,
                      last.msg);
}

int
dq_sentinel_role_ok(struct dq_sentinel *s, const struct dq_url *u, const char *endpoint,
                    const redisReply *r, dq_err *err)
{
    const redisReply *role = r->type == REDIS_REPLY_ARRAY && r->elements > 0 ? r->element[0] : r;

    if (role->type == REDIS_REPLY_STRING && strcmp(role->str, "master") == 0)
        return DQ_OK;
    /* this sentinel may lag behind the others: start with the next one */
    s->first = (s->first + 1) % (u->nsentinels > 0 ? u->nsentinels : 1);
    if (role->type == REDIS_REPLY_STRING)
        return dq_err_set(err, DQ_ECONN,
                          "redis at %s has role %.20s, not master (a failover under way?)",
                          endpoint, role->str);
    if (role->type == REDIS_REPLY_ERROR)
        return dq_err_set(err, DQ_ECONN, "redis at %s refused ROLE: %.120s", endpoint, role->str);
    return dq_err_set(err, DQ_EPROTO, "redis at %s gave a malformed ROLE reply", endpoint);
}

bool
dq_sentinel_readonly(const redisReply *r)
{
    /* the plain reply, or the same words inside a script's error (EVALSHA path) */
    return r != NULL && r->type == REDIS_REPLY_ERROR &&
           (strncmp(r->str, "READONLY", 8) == 0 ||
            strstr(r->str, "READONLY You can't write") != NULL);
}
