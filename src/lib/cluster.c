/* SPDX-License-Identifier: MIT */
/*
 * cluster.c: the slot map of a Redis Cluster and the routing of each command to the
 * master of its key's slot (cluster.h says what happens on each redirection). Each
 * node is an ordinary single-node dq_client, so connecting, AUTH, TLS, timeouts and
 * reconnect backoff are those of client.c; this file only picks the node.
 *
 * hiredis 0.14 (Debian 12) has no cluster support and Debian packages no cluster
 * client for C, so the slot function (CRC16/XMODEM, as the Redis Cluster spec defines
 * it) and the CLUSTER SLOTS reader are written here.
 */
#include "cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "err.h"

/* Redirections followed for one command before giving up: a slot moves once per
 * reshard step, so more than a few MOVED in a row means the map keeps changing under
 * us. ASK comes back after each TRYAGAIN while a slot is half moved (the backoff and
 * the command timeout bound that), so it has a bound of its own. */
#define HOPS_MAX 16
#define ASKS_MAX 64
/* Nodes remembered: far beyond any real cluster; bounds what a hostile map can add. */
#define NODES_MAX 1024
/* Backoff between TRYAGAIN / CLUSTERDOWN retries, within the command timeout. */
#define RETRY_FIRST_MS 10
#define RETRY_CAP_MS   250

struct node {
    char host[256];
    int port;
    char addr[300]; /* "host:port" ("[::1]:port") for messages and dq_client_node */
    dq_client *c;   /* owned; opened on first use */
};

struct dq_cluster {
    struct node *nodes; /* owned */
    int n, cap;
    uint16_t slot[DQ_CLUSTER_SLOTS]; /* node index + 1 of the slot's master; 0: unknown */
    int last;                        /* node of the previous call; -1 none */
    bool stale;                      /* read the map again before the next call */
    struct dq_cluster_counts counts;
};

/* CRC16/XMODEM (poly 0x1021, init 0), bit by bit: a key is hashed once per call, and
 * a table would be 512 bytes of constants for no measurable gain. */
static uint16_t
crc16(const char *p, size_t len)
{
    uint16_t crc = 0;

    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((unsigned char)p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

unsigned
dq_cluster_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);

    /* the hash tag: from the first '{' to the next '}', when not empty */
    if (open != NULL) {
        size_t off = (size_t)(open - key) + 1;
        const char *close = memchr(key + off, '}', len - off);
        if (close != NULL && close > key + off)
            return crc16(key + off, (size_t)(close - key - off)) & (DQ_CLUSTER_SLOTS - 1);
    }
    return crc16(key, len) & (DQ_CLUSTER_SLOTS - 1);
}

static bool
is_cmd(const char *a, size_t len, const char *name)
{
    size_t n = strlen(name);

    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = a[i];
        if (ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 'a' + 'A');
        if (ch != name[i])
            return false;
    }
    return true;
}

/* The key that routes the command, for the commands delayq sends: the first key of a
 * script call, the key of a registry command or of EXISTS (dq_queue_known). Others have no key
 * (false). */
static bool
command_key(int argc, const char **argv, const size_t *lens, const char **key, size_t *klen)
{
    size_t l0;

    if (argc < 2)
        return false;
    l0 = lens != NULL ? lens[0] : strlen(argv[0]);
    if (is_cmd(argv[0], l0, "FCALL") || is_cmd(argv[0], l0, "FCALL_RO") ||
        is_cmd(argv[0], l0, "EVALSHA") || is_cmd(argv[0], l0, "EVALSHA_RO") ||
        is_cmd(argv[0], l0, "EVAL") || is_cmd(argv[0], l0, "EVAL_RO")) {
        if (argc < 4 || argv[2][0] == '0')
            return false;
        *key = argv[3];
        *klen = lens != NULL ? lens[3] : strlen(argv[3]);
        return true;
    }
    if (is_cmd(argv[0], l0, "SADD") || is_cmd(argv[0], l0, "SREM") ||
        is_cmd(argv[0], l0, "SCARD") || is_cmd(argv[0], l0, "SSCAN") ||
        is_cmd(argv[0], l0, "SMEMBERS") || is_cmd(argv[0], l0, "SISMEMBER") ||
        is_cmd(argv[0], l0, "EXISTS")) { /* EXISTS: keys of one queue, so of one slot */
        *key = argv[1];
        *klen = lens != NULL ? lens[1] : strlen(argv[1]);
        return true;
    }
    return false;
}

/* The index of node @host:@port, added when new; -1 on OOM or past NODES_MAX. */
static int
node_get(struct dq_cluster *cl, const char *host, size_t hlen, int port)
{
    struct node *nd;

    if (hlen == 0 || hlen >= sizeof nd->host || port < 1 || port > 65535)
        return -1;
    /* names and addresses only: these bytes come from the server and reach messages
     * and the inspector's header */
    for (size_t i = 0; i < hlen; i++) {
        char ch = host[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '-' || ch == '_' || ch == ':'))
            return -1;
    }
    for (int i = 0; i < cl->n; i++) {
        if (cl->nodes[i].port == port && strlen(cl->nodes[i].host) == hlen &&
            memcmp(cl->nodes[i].host, host, hlen) == 0)
            return i;
    }
    if (cl->n == NODES_MAX)
        return -1;
    if (cl->n == cl->cap) {
        int cap = cl->cap ? cl->cap * 2 : 8;
        struct node *v = realloc(cl->nodes, (size_t)cap * sizeof *v);
        if (v == NULL)
            return -1;
        cl->nodes = v;
        cl->cap = cap;
    }
    nd = &cl->nodes[cl->n];
    memset(nd, 0, sizeof *nd);
    memcpy(nd->host, host, hlen);
    nd->port = port;
    snprintf(nd->addr, sizeof nd->addr, memchr(host, ':', hlen) ? "[%s]:%d" : "%s:%d", nd->host,
             port);
    cl->counts.nodes = ++cl->n;
    return cl->n - 1;
}

/* Node @i's client, made on first use. */
static dq_client *
node_client(dq_client *c, int i, dq_err *err)
{
    struct node *nd = &c->cluster->nodes[i];

    if (nd->c == NULL && dq_client_for_node(c, nd->host, nd->port, &nd->c, err) != DQ_OK)
        return NULL;
    return nd->c;
}

int
dq_cluster_parse_redirect(const char *msg, size_t len, int *slot, char *host, size_t hsize,
                          int *port)
{
    const char *sp = memchr(msg, ' ', len), *at, *colon = NULL, *end = msg + len;
    long s, p = 0;
    size_t hlen;

    if (sp == NULL || hsize == 0)
        return -1;
    s = 0;
    at = sp + 1;
    if (at == end || *at < '0' || *at > '9')
        return -1;
    for (; at < end && *at >= '0' && *at <= '9'; at++) {
        s = s * 10 + (*at - '0');
        if (s >= DQ_CLUSTER_SLOTS)
            return -1;
    }
    if (at == end || *at != ' ')
        return -1;
    at++;
    for (const char *q = at; q < end; q++) {
        if (*q == ':')
            colon = q;
    }
    if (colon == NULL || colon + 1 == end)
        return -1;
    for (const char *q = colon + 1; q < end; q++) {
        if (*q < '0' || *q > '9')
            return -1;
        p = p * 10 + (*q - '0');
        if (p > 65535)
            return -1;
    }
    if (p < 1)
        return -1;
    /* an IPv6 address may come bracketed or bare */
    if (*at == '[' && colon > at + 1 && colon[-1] == ']') {
        at++;
        hlen = (size_t)(colon - at - 1);
    } else {
        hlen = (size_t)(colon - at);
    }
    if (hlen == 0 || hlen >= hsize || memchr(at, '\0', hlen) != NULL)
        return -1;
    memcpy(host, at, hlen);
    host[hlen] = '\0';
    *slot = (int)s;
    *port = (int)p;
    return 0;
}

/* The node index a redirection names (added when new), and its slot in *slot; -1 when
 * the text is not of that form. */
static int
redirect_target(struct dq_cluster *cl, const char *msg, size_t len, int *slot)
{
    char host[sizeof cl->nodes[0].host];
    int port, s;

    if (dq_cluster_parse_redirect(msg, len, &s, host, sizeof host, &port) != 0)
        return -1;
    *slot = s;
    return node_get(cl, host, strlen(host), port);
}

/* Reads CLUSTER SLOTS @r, asked of a node on host @self, into a new map in @slot. */
static int
parse_slots(struct dq_cluster *cl, const redisReply *r, const char *self, uint16_t *slot,
            dq_err *err)
{
    if (r->type != REDIS_REPLY_ARRAY)
        return dq_err_set(err, DQ_EPROTO, "cluster: unexpected reply to CLUSTER SLOTS");
    memset(slot, 0, DQ_CLUSTER_SLOTS * sizeof *slot);
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i], *m;
        const char *host;
        size_t hlen;
        int idx;

        /* [start, end, [host, port, id, ...] (the master), replicas...] */
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER ||
            e->element[2]->type != REDIS_REPLY_ARRAY || e->element[2]->elements < 2)
            continue;
        m = e->element[2];
        if (m->element[0]->type != REDIS_REPLY_STRING ||
            m->element[1]->type != REDIS_REPLY_INTEGER ||
            memchr(m->element[0]->str, '\0', m->element[0]->len) != NULL)
            continue;
        host = m->element[0]->str;
        hlen = m->element[0]->len;
        /* "" (or "?"): the node does not know its own address; it is the one we asked */
        if (hlen == 0 || (hlen == 1 && host[0] == '?')) {
            host = self;
            hlen = strlen(host);
        }
        idx = node_get(cl, host, hlen, (int)m->element[1]->integer);
        if (idx < 0)
            continue;
        long long lo = e->element[0]->integer, hi = e->element[1]->integer;
        for (long long s = lo < 0 ? 0 : lo; s <= hi && s < DQ_CLUSTER_SLOTS; s++)
            slot[s] = (uint16_t)(idx + 1);
    }
    return DQ_OK;
}

/* Reads the map from node @i. */
static int
refresh_from(dq_client *c, int i, dq_err *err)
{
    struct dq_cluster *cl = c->cluster;
    const char *argv[2] = {"CLUSTER", "SLOTS"};
    dq_client *nc = node_client(c, i, err);
    redisReply *r = NULL;
    char self[sizeof cl->nodes[0].host];
    int rc;

    if (nc == NULL)
        return DQ_ENOMEM;
    rc = dq_node_command(nc, 2, argv, NULL, &r, err);
    if (rc != DQ_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR) {
        /* a NOPERM is the ACL user, not the server's mode: say which grant is missing */
        bool noperm = r->len >= 6 && memcmp(r->str, "NOPERM", 6) == 0;
        rc = dq_err_set(err, DQ_EREDIS, "redis at %s refused CLUSTER SLOTS (%s): %.*s",
                        cl->nodes[i].addr,
                        noperm ? "a cluster user needs +cluster|slots and +asking; see the "
                                 "roles in docs/SECURITY.md"
                               : "is it in cluster mode?",
                        (int)(r->len > 100 ? 100 : r->len), r->str);
        freeReplyObject(r);
        return rc;
    }
    /* a copy: reading the map may add nodes, which moves the array */
    snprintf(self, sizeof self, "%s", cl->nodes[i].host);
    rc = dq_cluster_apply_slots(cl, r, self, err);
    freeReplyObject(r);
    if (rc == DQ_OK && cl->last < 0)
        cl->last = i;
    return rc;
}

int
dq_cluster_apply_slots(struct dq_cluster *cl, const redisReply *r, const char *self, dq_err *err)
{
    uint16_t *slot = malloc(DQ_CLUSTER_SLOTS * sizeof *slot);
    int rc;

    if (slot == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    rc = parse_slots(cl, r, self, slot, err);
    if (rc == DQ_OK) {
        memcpy(cl->slot, slot, sizeof cl->slot);
        cl->stale = false;
        cl->counts.refreshes++;
    }
    free(slot);
    return rc;
}

struct dq_cluster *
dq_cluster_alloc(void)
{
    struct dq_cluster *cl = calloc(1, sizeof *cl);

    if (cl != NULL)
        cl->last = -1;
    return cl;
}

const char *
dq_cluster_slot_addr(const struct dq_cluster *cl, unsigned slot)
{
    int node = slot < DQ_CLUSTER_SLOTS ? cl->slot[slot] - 1 : -1;
    return node >= 0 ? cl->nodes[node].addr : "";
}

/* Reads the map from the first node that answers: the previous call's node, then every
 * known node in turn (the seeds are known from the start). */
static int
refresh(dq_client *c, dq_err *err)
{
    struct dq_cluster *cl = c->cluster;
    int rc = DQ_ECONN, first = cl->last;

    if (first >= 0 && (rc = refresh_from(c, first, err)) == DQ_OK)
        return DQ_OK;
    for (int i = 0; i < cl->n; i++) {
        if (i == first)
            continue;
        rc = refresh_from(c, i, err);
        if (rc == DQ_OK || rc == DQ_ENOMEM)
            return rc;
    }
    return rc;
}

int
dq_cluster_open(dq_client *c, dq_err *err)
{
    struct dq_cluster *cl = dq_cluster_alloc();
    int rc = DQ_OK;
    dq_err last = {0};

    if (cl == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    c->cluster = cl;
    /* "cluster h1:p1,h2:p2": what messages and `stats` name */
    size_t at = (size_t)snprintf(c->endpoint, sizeof c->endpoint, "cluster ");
    for (int i = 0; i < c->url.nseeds && at < sizeof c->endpoint; i++) {
        struct dq_url one = {.kind = DQ_URL_TCP, .port = c->url.seeds[i].port};
        memcpy(one.host, c->url.seeds[i].host, sizeof one.host);
        if (i > 0)
            at += (size_t)snprintf(c->endpoint + at, sizeof c->endpoint - at, ",");
        if (at < sizeof c->endpoint)
            at += dq_url_endpoint(&one, c->endpoint + at, sizeof c->endpoint - at);
    }
    for (int i = 0; i < c->url.nseeds; i++) {
        const struct dq_url_seed *sd = &c->url.seeds[i];
        if (node_get(cl, sd->host, strlen(sd->host), sd->port) < 0)
            return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    for (int i = 0; i < cl->n; i++) {
        rc = refresh_from(c, i, &last);
        if (rc == DQ_OK || rc == DQ_ENOMEM || rc == DQ_EREDIS || rc == DQ_EPROTO)
            break;
    }
    if (rc != DQ_OK) {
        if (rc == DQ_ECONN || rc == DQ_ETIMEOUT)
            return dq_err_set(err, rc, "no seed node of %s answered (last: %s)", c->endpoint,
                              last.msg);
        if (err != NULL)
            *err = last;
    }
    return rc;
}

void
dq_cluster_free(struct dq_cluster *cl)
{
    if (cl == NULL)
        return;
    for (int i = 0; i < cl->n; i++)
        dq_node_free(cl->nodes[i].c);
    free(cl->nodes);
    free(cl);
}

static bool
reply_starts(const redisReply *r, const char *prefix)
{
    size_t n = strlen(prefix);
    return r->type == REDIS_REPLY_ERROR && r->len >= n && memcmp(r->str, prefix, n) == 0;
}

static void
sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int
dq_cluster_command(dq_client *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                   dq_err *err)
{
    struct dq_cluster *cl = c->cluster;
    const char *key = NULL;
    size_t klen = 0;
    int slot = command_key(argc, argv, lens, &key, &klen) ? (int)dq_cluster_slot(key, klen) : -1;
    int64_t deadline = dq_mono_ms() + c->command_timeout_ms;
    int wait = RETRY_FIRST_MS, ask = -1, asks = 0, rc = DQ_OK;
    bool retried_conn = false, reread = false;

    *out = NULL;
    for (int hop = 0; hop < HOPS_MAX && asks < ASKS_MAX;) {
        redisReply *r = NULL;
        dq_client *nc;
        int node, to;

        if (cl->stale)
            (void)refresh(c, err); /* a failure leaves the old map, which may still work */
        node = ask >= 0 ? ask : slot >= 0 ? cl->slot[slot] - 1 : cl->last;
        if (node < 0 && slot >= 0 && !reread) {
            reread = true;
            cl->stale = true;
            continue; /* not a hop: read the map once, then decide */
        }
        if (node < 0)
            return dq_err_set(err, DQ_ECONN, "cluster %s: no master serves slot %d", c->endpoint,
                              slot);
        if ((nc = node_client(c, node, err)) == NULL)
            return DQ_ENOMEM;
        if (ask >= 0) {
            cl->counts.round_trips++;
            rc = dq_node_command(nc, 1, (const char *[]){"ASKING"}, NULL, &r, err);
            freeReplyObject(r);
            r = NULL;
        }
        if (rc == DQ_OK) {
            cl->counts.round_trips++;
            rc = dq_node_command(nc, argc, argv, lens, &r, err);
        }
        ask = -1;
        c->unanswered = rc != DQ_OK && nc->unanswered;
        if (rc != DQ_OK) {
            /* the node is gone or unreachable: a failover moves its slots to a replica,
             * which the map says once the cluster has agreed (cluster-node-timeout) */
            cl->counts.node_errors++;
            cl->stale = true;
            if (rc == DQ_ENOMEM || retried_conn || slot < 0)
                return rc;
            retried_conn = true;
            if (refresh(c, NULL) != DQ_OK || cl->slot[slot] - 1 == node)
                return rc;
            rc = DQ_OK;
            hop++;
            continue;
        }
        cl->last = node;
        if (reply_starts(r, "MOVED ") && (to = redirect_target(cl, r->str, r->len, &slot)) >= 0) {
            cl->counts.moved++;
            cl->slot[slot] = (uint16_t)(to + 1);
            /* one moved slot often means more: read the whole map, from the new owner
             * first (a node that has not heard of the move yet would undo it) */
            cl->stale = true;
            cl->last = to;
            freeReplyObject(r);
            hop++;
            continue;
        }
        if (reply_starts(r, "ASK ") && (to = redirect_target(cl, r->str, r->len, &slot)) >= 0) {
            cl->counts.ask++;
            ask = to; /* this command only; the slot is still the old node's */
            freeReplyObject(r);
            asks++;
            continue;
        }
        if (reply_starts(r, "TRYAGAIN") || reply_starts(r, "CLUSTERDOWN")) {
            bool down = reply_starts(r, "CLUSTERDOWN");
            if (dq_mono_ms() + wait > deadline) {
                /* an outage of the slot, not a refusal of the call: exit 3, and the
                 * worker backs off as for an unreachable Redis */
                rc = dq_err_set(err, down ? DQ_ECONN : DQ_ETIMEOUT,
                                "cluster %s: %s still answered %.*s after %d ms", c->endpoint,
                                cl->nodes[node].addr, (int)(r->len > 80 ? 80 : r->len), r->str,
                                c->command_timeout_ms);
                freeReplyObject(r);
                return rc;
            }
            if (down) {
                cl->counts.down++;
                cl->stale = true;
            } else {
                cl->counts.tryagain++;
            }
            freeReplyObject(r);
            sleep_ms(wait);
            wait = wait * 2 > RETRY_CAP_MS ? RETRY_CAP_MS : wait * 2;
            continue; /* bounded by the deadline, not a hop */
        }
        *out = r;
        return DQ_OK;
    }
    return dq_err_set(err, DQ_EREDIS, "cluster %s: more than %d redirections for slot %d",
                      c->endpoint, HOPS_MAX, slot);
}

int
dq_cluster_pipeline(dq_client *c, size_t n, const int *argc, const char **const *argv,
                    const size_t *const *lens, redisReply **out, dq_err *err)
{
    struct dq_cluster *cl = c->cluster;
    int *node = malloc((n ? n : 1) * sizeof *node), rc = DQ_OK;
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    int *sargc = malloc((n ? n : 1) * sizeof *sargc);
    const char ***sargv = malloc((n ? n : 1) * sizeof *sargv);
    const size_t **slens = malloc((n ? n : 1) * sizeof *slens);
    redisReply **sout = malloc((n ? n : 1) * sizeof *sout);

    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    if (node == NULL || idx == NULL || sargc == NULL || sargv == NULL || slens == NULL ||
        sout == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
        goto out;
    }
    if (cl->stale)
        (void)refresh(c, NULL); /* a failure leaves the old map; the calls alone then follow */
    for (size_t i = 0; i < n; i++) {
        const char *key;
        size_t klen;
        node[i] = command_key(argc[i], argv[i], lens[i], &key, &klen)
                      ? cl->slot[dq_cluster_slot(key, klen)] - 1
                      : -1;
    }
    /* node by node, in the order of each node's first command */
    for (size_t i = 0; i < n; i++) {
        int nd = node[i];
        size_t k = 0;
        dq_client *nc;

        if (nd < 0)
            continue;
        for (size_t j = i; j < n; j++) {
            if (node[j] != nd)
                continue;
            idx[k] = j;
            sargc[k] = argc[j];
            sargv[k] = argv[j];
            slens[k++] = lens[j];
            node[j] = -1; /* taken */
        }
        if ((nc = node_client(c, nd, err)) == NULL) {
            rc = DQ_ENOMEM;
            goto out;
        }
        cl->counts.round_trips++;
        if ((rc = dq_node_pipeline(nc, k, sargc, sargv, slens, sout, err)) != DQ_OK) {
            cl->counts.node_errors++;
            cl->stale = true;
            c->unanswered = nc->unanswered;
            goto out;
        }
        cl->last = nd;
        for (size_t j = 0; j < k; j++) {
            redisReply *r = sout[j];
            if (reply_starts(r, "MOVED ") || reply_starts(r, "ASK ") ||
                reply_starts(r, "TRYAGAIN") || reply_starts(r, "CLUSTERDOWN")) {
                if (reply_starts(r, "MOVED "))
                    cl->stale = true;
                freeReplyObject(r);
                continue; /* not run there: the caller sends it alone */
            }
            out[idx[j]] = r;
        }
    }
out:
    if (rc != DQ_OK) {
        for (size_t i = 0; i < n; i++) {
            freeReplyObject(out[i]);
            out[i] = NULL;
        }
    }
    free(node);
    free(idx);
    free(sargc);
    free(sargv);
    free(slens);
    free(sout);
    return rc;
}

int
dq_cluster_sub_open(dq_client *c, const char *channel, dq_client **out, dq_err *err)
{
    struct dq_cluster *cl = c->cluster;
    unsigned slot = dq_cluster_slot(channel, strlen(channel));
    int rc = DQ_ECONN;

    *out = NULL;
    for (int pass = 0; pass < 3; pass++) {
        dq_client *nc;
        int node;

        if (cl->stale || cl->slot[slot] == 0)
            (void)refresh(c, err);
        node = cl->slot[slot] - 1;
        if (node < 0)
            return dq_err_set(err, DQ_ECONN, "cluster %s: no master serves slot %u", c->endpoint,
                              slot);
        if ((nc = node_client(c, node, err)) == NULL)
            return DQ_ENOMEM;
        rc = dq_node_sub_open(nc, channel, out, err);
        if (rc == DQ_OK)
            return DQ_OK;
        /* MOVED (the slot left this node), or the node is gone */
        cl->stale = true;
        if (rc == DQ_EREDIS && (err == NULL || strstr(err->msg, "MOVED ") == NULL))
            return rc;
    }
    return rc;
}

const char *
dq_cluster_node_of(const dq_client *c, const char *key)
{
    if (c->cluster == NULL)
        return "";
    return dq_cluster_slot_addr(c->cluster, dq_cluster_slot(key, strlen(key)));
}

void
dq_cluster_counts_get(const dq_client *c, struct dq_cluster_counts *out)
{
    if (c->cluster == NULL)
        memset(out, 0, sizeof *out);
    else
        *out = c->cluster->counts;
}
