/* SPDX-License-Identifier: MIT */
/*
 * client.c: the client: opening it (URL, TLS, who, connection name), its routing (one
 * node's connection in conn.c, or a cluster's nodes in cluster.c), its subscription,
 * freeing it, and INFO parsing. The registry names cache is names.c.
 */
#include "client.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

int
dq_conn_command(dq_client *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                dq_err *err)
{
    if (c->cluster != NULL) {
        c->unanswered = false;
        return dq_cluster_command(c, argc, argv, lens, out, err);
    }
    return dq_node_command(c, argc, argv, lens, out, err);
}

int
dq_sub_open(dq_client *c, const char *channel, dq_client **out, dq_err *err)
{
    if (c->cluster != NULL) {
        *out = NULL;
        return dq_cluster_sub_open(c, channel, out, err);
    }
    return dq_node_sub_open(c, channel, out, err);
}

void
dq_default_who(char *buf, size_t size)
{
    const char *user = getenv("USER");
    struct passwd pwd, *pw = NULL;
    char pwbuf[1024], host[128] = "";

    /* getpwuid_r: clients are opened from many threads at once (getpwuid shares one
     * static buffer) */
    if (getpwuid_r(getuid(), &pwd, pwbuf, sizeof pwbuf, &pw) == 0 && pw != NULL &&
        pw->pw_name != NULL)
        user = pw->pw_name;
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "?");
    snprintf(buf, size, "%s@%s", user ? user : "?", host);
}

static const char *
opt_str(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/* The TLS settings for a rediss:// URL; TLS options with any other URL are an error,
 * so that a plain connection is never taken for a protected one. */
static int
tls_setup(dq_client *c, const dq_client_opts *opts, dq_err *err)
{
    dq_client_opts o = {0};

    if (opts != NULL) {
        o.tls_ca = opt_str(opts->tls_ca);
        o.tls_cert = opt_str(opts->tls_cert);
        o.tls_key = opt_str(opts->tls_key);
        o.tls_server_name = opt_str(opts->tls_server_name);
        o.tls_insecure = opts->tls_insecure;
    }
    if (!c->url.tls) {
        if (o.tls_ca || o.tls_cert || o.tls_key || o.tls_server_name || o.tls_insecure)
            return dq_err_set(err, DQ_EINVAL,
                              "tls options need a rediss:// URL; %s is not one (refusing to "
                              "connect without TLS)",
                              c->endpoint);
        return DQ_OK;
    }
    /* sentinel: the first sentinel's name for now; connect_once names each server */
    return dq_tls_new(&o, c->url.sentinel ? c->url.sentinels[0].host : c->url.host, &c->tls, err);
}

/* The connection name: @name, else delayq:lib:host:pid, with every byte Redis refuses
 * in a name (anything but '!'..'~') made '_'. */
static void
client_name(dq_client *c, const char *name)
{
    char host[64] = "";

    if (name != NULL && name[0] != '\0') {
        snprintf(c->name, sizeof c->name, "%s", name);
    } else {
        if (gethostname(host, sizeof host - 1) != 0)
            snprintf(host, sizeof host, "?");
        snprintf(c->name, sizeof c->name, "delayq:lib:%s:%ld", host, (long)getpid());
    }
    for (char *p = c->name; *p != '\0'; p++) {
        if (*p < '!' || *p > '~')
            *p = '_';
    }
}

int
dq_client_open(const char *url, const dq_client_opts *opts, dq_client **out, dq_err *err)
{
    dq_client *c;
    int rc;

    *out = NULL;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    c->net = DQ_NET_CLOSED;
    rc = dq_url_parse(url ? url : DQ_URL_DEFAULT, &c->url, err);
    if (rc != DQ_OK)
        goto out;
    dq_url_endpoint(&c->url, c->endpoint, sizeof c->endpoint);
    rc = tls_setup(c, opts, err);
    if (rc != DQ_OK)
        goto out;
    if (opts != NULL && opts->password != NULL) {
        if (strlen(opts->password) >= sizeof c->url.password) {
            rc = dq_err_set(err, DQ_EINVAL, "password: longer than %zu bytes",
                            sizeof c->url.password - 1);
            goto out;
        }
        snprintf(c->url.password, sizeof c->url.password, "%s", opts->password);
        c->url.has_password = true;
    }
    if (opts != NULL && opts->user != NULL && opts->user[0] != '\0' && c->url.user[0] == '\0') {
        if (strlen(opts->user) >= sizeof c->url.user) {
            rc = dq_err_set(err, DQ_EINVAL, "user: longer than %zu bytes", sizeof c->url.user - 1);
            goto out;
        }
        snprintf(c->url.user, sizeof c->url.user, "%s", opts->user);
    }
    if (c->url.sentinel && (rc = dq_sentinel_init(&c->sentinel, opts, err)) != DQ_OK)
        goto out;
    if (opts != NULL && (opts->min_replicas < 0 || opts->min_replicas > 100)) {
        rc = dq_err_set(err, DQ_EINVAL,
                        "min-replicas: %d is not in 0..100 (--min-replicas, $DELAYQ_MIN_REPLICAS)",
                        opts->min_replicas);
        goto out;
    }
    c->min_replicas = opts != NULL ? opts->min_replicas : 0;
    c->connect_timeout_ms = opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 3000;
    c->command_timeout_ms = opts && opts->command_timeout_ms > 0 ? opts->command_timeout_ms : 3000;
    c->min_replicas_timeout_ms = opts && opts->min_replicas_timeout_ms > 0
                                     ? opts->min_replicas_timeout_ms
                                     : c->command_timeout_ms;
    if (opts != NULL && opts->who != NULL && opts->who[0] != '\0')
        snprintf(c->who, sizeof c->who, "%s", opts->who);
    else
        dq_default_who(c->who, sizeof c->who);
    client_name(c, opts != NULL ? opts->client_name : NULL);
    if (c->url.cluster)
        rc = dq_cluster_open(c, err); /* the slot map, from the first seed that answers */
    else
        rc = dq_conn_ensure(c, err);
out:
    if (rc != DQ_OK) {
        dq_client_free(c);
        return rc;
    }
    *out = c;
    return DQ_OK;
}

void
dq_client_free(dq_client *c)
{
    if (c == NULL)
        return;
    dq_cluster_free(c->cluster);
    c->cluster = NULL;
    if (c->parts != NULL)
        c->parts_free(c->parts);
    c->parts = NULL;
    dq_node_free(c);
}

const char *
dq_client_endpoint(const dq_client *c)
{
    return c->endpoint;
}

const char *
dq_client_node(const dq_client *c, const char *queue)
{
    char key[DQ_QUEUE_NAME_MAX + 32];

    if (c->cluster == NULL)
        return c->endpoint;
    snprintf(key, sizeof key, "dq:{%s}:sched", queue ? queue : "");
    return dq_cluster_node_of(c, key);
}

const char *
dq_client_who(const dq_client *c)
{
    return c->who;
}

bool
dq_client_unanswered(const dq_client *c)
{
    return c->unanswered;
}

/* The value of "@key:" in INFO text @info, as a number (0 when absent). */
static int64_t
info_num(const char *info, const char *key)
{
    const char *p = strstr(info, key);

    return p != NULL ? strtoll(p + strlen(key), NULL, 10) : 0;
}

static void
info_str(const char *info, const char *key, char *out, size_t size)
{
    const char *p = strstr(info, key);
    size_t n;

    out[0] = '\0';
    if (p == NULL)
        return;
    p += strlen(key);
    n = strcspn(p, "\r\n");
    snprintf(out, size, "%.*s", (int)n, p);
}

int
dq_server_info_get(dq_client *c, dq_server_info *out, dq_err *err)
{
    const char *argv[] = {"INFO", "server", "clients", "memory", "replication"};
    redisReply *r = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    rc = dq_conn_command(c, 5, argv, NULL, &r, err);
    if (rc != DQ_OK)
        return rc;
    if (r->type != REDIS_REPLY_STRING) {
        rc = r->type == REDIS_REPLY_ERROR
                 ? dq_err_set(err, DQ_EREDIS, "redis refused INFO: %.*s", (int)r->len, r->str)
                 : dq_err_set(err, DQ_EPROTO, "unexpected reply to INFO");
        freeReplyObject(r);
        return rc;
    }
    info_str(r->str, "\nredis_version:", out->version, sizeof out->version);
    info_str(r->str, "\nrole:", out->role, sizeof out->role);
    out->used_memory = info_num(r->str, "\nused_memory:");
    out->maxmemory = info_num(r->str, "\nmaxmemory:");
    out->connected_clients = info_num(r->str, "\nconnected_clients:");
    out->uptime_s = info_num(r->str, "\nuptime_in_seconds:");
    freeReplyObject(r);
    return DQ_OK;
}
