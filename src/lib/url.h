/* SPDX-License-Identifier: MIT */
/*
 * url.h: the Redis URL parser (redis://, rediss://, unix://, redis-sentinel:// and
 * rediss-sentinel://, redis-cluster:// and rediss-cluster:// for seed nodes). Pure: no
 * I/O, no name resolution; client.c turns the result into a connection (through
 * sentinel.c for the sentinel forms, cluster.c for the cluster forms).
 */
#ifndef DQ_LIB_URL_H
#define DQ_LIB_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "delayq.h"

#define DQ_URL_DEFAULT_PORT 6379
#define DQ_URL_DEFAULT      "redis://127.0.0.1:6379" /* where a NULL URL points */

/* ---- Sentinel (sentinel.c) ---- */
#define DQ_URL_SENTINEL_PORT 26379 /* a sentinel's port when the URL gives none */
#define DQ_URL_SENTINELS_MAX 16    /* sentinels one URL may list */
#define DQ_URL_MASTER_MAX    64    /* master name bytes, [A-Za-z0-9._-] */
struct dq_url_node {
    char host[256]; /* hostname or IP literal without brackets */
    int port;
};

enum dq_url_kind { DQ_URL_TCP, DQ_URL_UNIX };

/* Seed nodes of a redis-cluster:// URL: a handful is plenty, since the first that
 * answers gives the whole slot map. */
#define DQ_URL_SEEDS_MAX 16
struct dq_url_seed {
    char host[256]; /* as dq_url.host */
    int port;
};

struct dq_url {
    enum dq_url_kind kind;
    char host[256];     /* TCP: hostname or IP literal without brackets; "" for UNIX */
    int port;           /* TCP: 1..65535, default 6379; 0 for UNIX */
    char path[108];     /* UNIX: socket path, at most 107 bytes (sun_path); "" for TCP */
    char user[128];     /* percent-decoded; "" if none */
    char password[256]; /* percent-decoded; "" if none */
    bool has_password;  /* a non-empty password was given */
    int db;             /* 0..INT_MAX (the server decides how many exist); default 0 */
    bool tls;           /* rediss://: TCP with TLS (kind is DQ_URL_TCP) */
    /* redis-sentinel:// (kind DQ_URL_TCP): host and port stay "" and 0 until sentinel.c
     * has asked the sentinels where master is; user and password are the master's */
    bool sentinel;
    char master[DQ_URL_MASTER_MAX + 1];
    int nsentinels;
    struct dq_url_node sentinels[DQ_URL_SENTINELS_MAX];
    /* redis-cluster:// (rediss-cluster:// also sets tls): kind is DQ_URL_TCP, db is 0,
     * host and port are those of seeds[0] */
    bool cluster;
    int nseeds; /* 1..DQ_URL_SEEDS_MAX when cluster; 0 otherwise */
    struct dq_url_seed seeds[DQ_URL_SEEDS_MAX];
};

/**
 * Parses @s into *@out:
 *
 *   redis://[[user][:password]@]host[:port][/db][?db=N]
 *   rediss://... (the same, over TLS; the default port is 6379 too)
 *   unix://[[user][:password]@]/path/to/sock[?db=N]
 *   redis-sentinel://[[user][:password]@]host[:port][,host[:port]...]/MASTER[/db][?db=N]
 *   rediss-sentinel://... (the same, TLS to the sentinels and to the master)
 *
 * In the sentinel forms the hosts are the sentinels (port 26379 by default, at most
 * DQ_URL_SENTINELS_MAX), MASTER is the name the sentinels monitor, and the user info is
 * the master's (a sentinel's own password is not part of the URL; see sentinel.h).
 *   redis-cluster://[[user][:password]@]host[:port][,host[:port]...]
 *   rediss-cluster://... (the same, over TLS)
 *
 * A cluster URL lists seed nodes (at most DQ_URL_SEEDS_MAX); it takes no db and no
 * query, since Redis Cluster has only db 0.
 * The scheme is case-insensitive. An IPv6 host goes in brackets ("redis://[::1]:6380/2").
 * User and password are percent-decoded (%XX); they end at the last '@' (for unix://, the
 * last "@/"), so a password may hold '@', '/', '?' or ':' unencoded. An empty password
 * counts as none. The socket path is taken literally up to '?'. The only query
 * parameter is db, and the db may be given once.
 *
 * Returns DQ_OK, or DQ_EINVAL with a message that starts with "url: " and names the part
 * that is wrong; *@out is then zeroed. Messages never include the user info, so never
 * the password.
 */
int dq_url_parse(const char *s, struct dq_url *out, dq_err *err);

/**
 * Writes where @u points, without user info: "host:port", "[::1]:6379" or the socket
 * path; for a cluster URL, its first seed; for a sentinel URL, "host:port via sentinel MASTER" once
 * host is known, else "sentinel MASTER". snprintf semantics: returns the length needed (without the
 * NUL) and always NUL-terminates when @size > 0; @buf may be NULL when @size is 0.
 */
size_t dq_url_endpoint(const struct dq_url *u, char *buf, size_t size);

/**
 * Writes the URL text @s without its password: "redis://alice:pw@host" becomes
 * "redis://alice@host", ":pw@" with no user is dropped whole, and a URL without user info
 * is copied as it is. The user info is found as dq_url_parse finds it (up to the last '@';
 * for unix://, the last "@/"), so what is left never holds the password dq_url_parse would
 * read. snprintf semantics, as dq_url_endpoint.
 */
size_t dq_url_redact(const char *s, char *buf, size_t size);

#endif /* DQ_LIB_URL_H */
