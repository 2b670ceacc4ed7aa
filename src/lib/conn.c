/* SPDX-License-Identifier: MIT */
/*
 * conn.c: one node's connection: connecting, authenticating, selecting the db, running
 * one command with a timeout, reconnecting with capped backoff, and the wake-up
 * subscription. Routing across a cluster's nodes (cluster.c) and the client that owns
 * it all (client.c) are above it: this file calls neither. The bytes go through net.c; hiredis
 * only formats commands (redisFormatCommandArgv) and parses replies (redisReader), one
 * reader per connection, dropped with it. A connection is up exactly when its reader
 * exists. Timeouts are idle timeouts, as they were with hiredis's socket timeouts:
 * each wait for progress may last command_timeout_ms.
 */
#include "client.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"

#define BACKOFF_FIRST_MS 100
#define BACKOFF_CAP_MS   1000
/* one TLS record; a larger read buys nothing */
#define READ_CHUNK 16384
/* reads per wake-up drain, so a flood of messages cannot hold the worker */
#define DRAIN_READS 64

static bool
connected(const dq_client *c)
{
    return c->reader != NULL;
}

static void
drop(dq_client *c)
{
    dq_net_close(&c->net);
    if (c->reader != NULL)
        redisReaderFree(c->reader);
    c->reader = NULL;
}

/* Drops the connection after a failed @what and reports @code (DQ_ETIMEOUT after
 * @timeout_ms without progress, else DQ_ECONN) with the transport's reason @why. */
static int
io_error(dq_client *c, const char *what, int timeout_ms, int code, const char *why, dq_err *err)
{
    char msg[200];
    /* In TLS 1.3 the client's handshake is over before the server has looked at our
     * certificate; a server that wants one and got none closes the connection, often
     * with a reset that discards its alert. Say what that most likely means. */
    bool first = !c->answered && code == DQ_ECONN && strcmp(what, "connect") != 0;
    const char *hint = "";

    if (first && c->tls != NULL && !dq_tls_has_cert(c->tls))
        hint = " (does the server require a client certificate? see --tls-cert)";
    /* a TLS port resets a plain client as soon as its first command arrives */
    else if (first && c->tls == NULL && c->url.kind == DQ_URL_TCP)
        hint = " (if that is a TLS port, use rediss://)";
    snprintf(msg, sizeof msg, "%s%s", why, hint);
    drop(c);
    if (code == DQ_ETIMEOUT) {
        /* a plain Redis port takes a ClientHello for an unfinished command and waits */
        if (strncmp(msg, "tls:", 4) == 0)
            return dq_err_set(err, code,
                              "redis at %s did not answer the TLS handshake within %d ms (is it "
                              "a TLS port?)",
                              c->endpoint, timeout_ms);
        return dq_err_set(err, code, "redis at %s did not answer %s within %d ms", c->endpoint,
                          what, timeout_ms);
    }
    return dq_err_set(err, DQ_ECONN, "redis at %s: %s: %s", c->endpoint, what, msg);
}

/* Sends one command and reads one reply into *out (the caller frees it). */
static int
roundtrip(dq_client *c, int argc, const char **argv, const size_t *lens, redisReply **out,
          dq_err *err)
{
    char *cmd = NULL, why[200] = "";
    void *reply = NULL;
    int len, rc;

    *out = NULL;
    len = redisFormatCommandArgv(&cmd, argc, argv, lens);
    if (len < 0)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    rc = dq_net_write(&c->net, cmd, (size_t)len, c->command_timeout_ms, why, sizeof why);
    redisFreeCommand(cmd);
    if (rc != DQ_OK)
        return io_error(c, argv[0], c->command_timeout_ms, rc, why, err);
    for (;;) {
        char buf[READ_CHUNK];
        ssize_t n;

        /* from here on Redis has the whole command: a failure leaves it unknown whether
         * it ran (a write that failed sent only part of it, which Redis never runs) */
        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK) {
            snprintf(why, sizeof why, "protocol error: %s", c->reader->errstr);
            c->unanswered = true;
            return io_error(c, argv[0], c->command_timeout_ms, DQ_ECONN, why, err);
        }
        if (reply != NULL) {
            c->answered = true;
            break;
        }
        n = dq_net_read(&c->net, buf, sizeof buf, c->command_timeout_ms, why, sizeof why);
        if (n < 0) {
            c->unanswered = true;
            return io_error(c, argv[0], c->command_timeout_ms, (int)n, why, err);
        }
        if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK) {
            c->unanswered = true;
            return io_error(c, argv[0], c->command_timeout_ms, DQ_ECONN, "out of memory", err);
        }
    }
    *out = reply;
    return DQ_OK;
}

/* Runs a setup command (AUTH, SELECT) on a fresh connection. */
static int
setup_command(dq_client *c, int argc, const char **argv, dq_err *err)
{
    redisReply *r = NULL;
    int rc = roundtrip(c, argc, argv, NULL, &r, err);

    if (rc != DQ_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR) {
        if (r->len >= 6 && memcmp(r->str, "NOAUTH", 6) == 0)
            rc = dq_err_set(err, DQ_ECONN,
                            "redis at %s requires a password (NOAUTH); give it "
                            "in the URL or $DELAYQ_PASSWORD",
                            c->endpoint);
        else
            rc = dq_err_set(err, DQ_ECONN, "redis at %s refused %s: %.*s", c->endpoint, argv[0],
                            (int)r->len, r->str);
        drop(c);
    }
    freeReplyObject(r);
    return rc;
}

/* sentinel.c's dq_sentinel_ask_fn: one command to a sentinel over a short-lived plain
 * dq_client of its own (so timeouts, TLS and AUTH are the master's code), with the
 * sentinels' credentials and the connect timeout for every step. */
static int
ask_sentinel(void *arg, const struct dq_url_node *n, int argc, const char **argv, redisReply **out,
             dq_err *err)
{
    const dq_client *c = arg;
    dq_client *s = calloc(1, sizeof *s);
    int rc;

    *out = NULL;
    if (s == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    s->net = DQ_NET_CLOSED;
    s->url.kind = DQ_URL_TCP;
    s->url.tls = c->url.tls;
    snprintf(s->url.host, sizeof s->url.host, "%s", n->host);
    s->url.port = n->port;
    memcpy(s->url.user, c->sentinel.user, sizeof s->url.user);
    memcpy(s->url.password, c->sentinel.password, sizeof s->url.password);
    s->url.has_password = s->url.password[0] != '\0';
    snprintf(s->endpoint, sizeof s->endpoint, "sentinel %s:%d", n->host, n->port);
    snprintf(s->who, sizeof s->who, "%s", c->who);
    s->connect_timeout_ms = c->connect_timeout_ms;
    s->command_timeout_ms = c->connect_timeout_ms;
    if (c->tls != NULL && (s->tls = dq_tls_ref_named(c->tls, n->host)) == NULL)
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
    else
        rc = dq_node_command(s, argc, argv, NULL, out, err);
    dq_node_free(s);
    return rc;
}

static int
connect_once(dq_client *c, bool *not_master, dq_err *err)
{
    bool un = c->url.kind == DQ_URL_UNIX;
    char why[200];
    int rc;

    if (c->url.sentinel) { /* sentinel.c: where the master is now, and its TLS name */
        struct dq_tls *named;
        char was[sizeof c->endpoint];

        snprintf(was, sizeof was, "%s", c->endpoint);
        rc = dq_sentinel_resolve(&c->sentinel, &c->url, ask_sentinel, c, err);
        if (rc != DQ_OK)
            return rc;
        dq_url_endpoint(&c->url, c->endpoint, sizeof c->endpoint);
        /* a new master may have lost registry entries this client made: note them again */
        if (strcmp(was, c->endpoint) != 0)
            dq_names_free(&c->registered);
        if (c->tls != NULL) {
            if ((named = dq_tls_ref_named(c->tls, c->url.host)) == NULL)
                return dq_err_set(err, DQ_ENOMEM, "out of memory");
            dq_tls_free(c->tls);
            c->tls = named;
        }
    }
    rc = dq_net_connect(&c->net, un ? NULL : c->url.host, c->url.port, un ? c->url.path : NULL,
                        c->tls, c->connect_timeout_ms, why, sizeof why);
    if (rc != DQ_OK)
        return io_error(c, "connect", c->connect_timeout_ms, rc, why, err);
    c->answered = false;
    c->reader = redisReaderCreate();
    if (c->reader == NULL) {
        drop(c);
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    if (c->url.has_password) {
        const char *auth[3] = {"AUTH", c->url.user, c->url.password};
        if (c->url.user[0] != '\0')
            rc = setup_command(c, 3, auth, err);
        else
            rc = setup_command(c, 2, (const char *[]){"AUTH", c->url.password}, err);
        if (rc != DQ_OK)
            return rc;
    }
    if (c->url.db != 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", c->url.db);
        rc = setup_command(c, 2, (const char *[]){"SELECT", db}, err);
        if (rc != DQ_OK)
            return rc;
    }
    /* Best effort: a user whose ACL lacks CLIENT SETNAME (docs/SECURITY.md grants it to
     * every role) connects all the same; only a failed transport fails the connect. */
    if (c->name[0] != '\0') {
        redisReply *r = NULL;
        rc = roundtrip(c, 3, (const char *[]){"CLIENT", "SETNAME", c->name}, NULL, &r, err);
        if (rc != DQ_OK)
            return rc;
        freeReplyObject(r);
    }
    /* One round trip proves the server answers (and accepts us) before we report a
     * connection: a listener that never replies is a timeout here, not later. Over TLS
     * it is also where a server that refused our certificate says so (in TLS 1.3 the
     * client's handshake ends before the server has checked it). */
    rc = setup_command(c, 1, (const char *[]){"PING"}, err);
    if (rc == DQ_OK && c->url.sentinel) { /* a sentinel's answer may be stale */
        redisReply *r = NULL;

        rc = roundtrip(c, 1, (const char *[]){"ROLE"}, NULL, &r, err);
        if (rc == DQ_OK &&
            (rc = dq_sentinel_role_ok(&c->sentinel, &c->url, c->endpoint, r, err)) != DQ_OK) {
            *not_master = true;
            drop(c);
        }
        freeReplyObject(r);
    }
    return rc;
}

/* Sentinel: a node that is not (or no longer) the master makes us ask again, a few
 * times at once (the next sentinel first), then through the reconnect backoff. */
#define ROLE_TRIES 3

static int
connect_now(dq_client *c, dq_err *err)
{
    bool not_master = false;
    int rc = connect_once(c, &not_master, err);

    for (int i = 1; i < ROLE_TRIES && not_master; i++) {
        not_master = false;
        rc = connect_once(c, &not_master, err);
    }
    return rc;
}

/* A pseudo-random value in [0, max]: a per-process xorshift, seeded from the clock and
 * the pid; good enough to spread reconnects, not for anything else. */
int64_t
dq_jitter(int64_t max)
{
    static _Thread_local uint64_t s;

    if (s == 0)
        s = (((uint64_t)dq_mono_ms() * 2654435761u) ^ ((uint64_t)getpid() << 32)) | 1;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return max > 0 ? (int64_t)(s % (uint64_t)(max + 1)) : 0;
}

int64_t
dq_conn_retry_in_ms(const dq_client *c)
{
    int64_t left = c->retry_at_ms - dq_mono_ms();
    return connected(c) || left < 0 ? 0 : left;
}

int
dq_conn_ensure(dq_client *c, dq_err *err)
{
    int rc;
    int64_t now;

    if (connected(c) || c->cluster != NULL) /* a cluster client connects per node */
        return DQ_OK;
    now = dq_mono_ms();
    if (now < c->retry_at_ms)
        return dq_err_set(err, DQ_ECONN, "redis at %s is unreachable; next try in %lld ms",
                          c->endpoint, (long long)(c->retry_at_ms - now));
    rc = connect_now(c, err);
    if (rc == DQ_OK) {
        c->backoff_ms = 0;
        c->retry_at_ms = 0;
        return DQ_OK;
    }
    c->backoff_ms = c->backoff_ms == 0 ? BACKOFF_FIRST_MS : c->backoff_ms * 2;
    if (c->backoff_ms > BACKOFF_CAP_MS)
        c->backoff_ms = BACKOFF_CAP_MS;
    /* up to 25% jitter, so many clients cut off together do not reconnect together */
    c->retry_at_ms = dq_mono_ms() + c->backoff_ms + dq_jitter(c->backoff_ms / 4);
    return rc;
}

int
dq_node_command(dq_client *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                dq_err *err)
{
    int rc;

    c->unanswered = false;
    rc = dq_conn_ensure(c, err);
    *out = NULL;
    if (rc != DQ_OK) {
        c->unanswered = false; /* a connect or AUTH that failed: the command was not sent */
        return rc;
    }
    rc = roundtrip(c, argc, argv, lens, out, err);
    if (rc == DQ_OK && c->url.sentinel && dq_sentinel_readonly(*out)) {
        /* demoted under us: the command did not run, so one more try on the master the
         * sentinels name now is safe */
        freeReplyObject(*out);
        *out = NULL;
        drop(c);
        rc = dq_conn_ensure(c, err);
        if (rc == DQ_OK)
            rc = roundtrip(c, argc, argv, lens, out, err);
        else
            c->unanswered = false;
    }
    return rc;
}

int
dq_node_pipeline(dq_client *c, size_t n, const int *argc, const char **const *argv,
                 const size_t *const *lens, redisReply **out, dq_err *err)
{
    struct dq_buf cmds = DQ_BUF_INIT;
    char why[200] = "";
    size_t got = 0;
    int rc;

    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    c->unanswered = false;
    if ((rc = dq_conn_ensure(c, err)) != DQ_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        char *cmd = NULL;
        int len = redisFormatCommandArgv(&cmd, argc[i], argv[i], lens[i]);
        if (len < 0) {
            dq_buf_free(&cmds);
            return dq_err_set(err, DQ_ENOMEM, "out of memory");
        }
        dq_buf_append(&cmds, cmd, (size_t)len);
        redisFreeCommand(cmd);
    }
    if (cmds.failed) {
        dq_buf_free(&cmds);
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    /* Redis reads and answers while we write: replies wait in its output buffer (and
     * ours), so writing all of them before reading cannot stall */
    rc = dq_net_write(&c->net, cmds.data, cmds.len, c->command_timeout_ms, why, sizeof why);
    dq_buf_free(&cmds);
    if (rc != DQ_OK)
        return io_error(c, argv[0][0], c->command_timeout_ms, rc, why, err);
    while (got < n) {
        void *reply = NULL;
        char buf[READ_CHUNK];
        ssize_t r;

        if (redisReaderGetReply(c->reader, &reply) != REDIS_OK) {
            snprintf(why, sizeof why, "protocol error: %s", c->reader->errstr);
            rc = DQ_ECONN;
            goto fail;
        }
        if (reply != NULL) {
            c->answered = true;
            out[got++] = reply;
            continue;
        }
        r = dq_net_read(&c->net, buf, sizeof buf, c->command_timeout_ms, why, sizeof why);
        if (r < 0) {
            rc = (int)r;
            goto fail;
        }
        if (redisReaderFeed(c->reader, buf, (size_t)r) != REDIS_OK) {
            snprintf(why, sizeof why, "out of memory");
            rc = DQ_ECONN;
            goto fail;
        }
    }
    return DQ_OK;
fail:
    c->unanswered = true;
    for (size_t i = 0; i < got; i++) {
        freeReplyObject(out[i]);
        out[i] = NULL;
    }
    return io_error(c, argv[0][0], c->command_timeout_ms, rc, why, err);
}

void
dq_node_free(dq_client *c)
{
    if (c == NULL)
        return;
    drop(c);
    dq_tls_free(c->tls);
    memset(c->url.password, 0, sizeof c->url.password);
    dq_sentinel_wipe(&c->sentinel);
    dq_names_free(&c->registered);
    free(c);
}
/* A copy of @c's settings, not connected and owning nothing of @c's but a reference
 * to its TLS settings. */
static int
client_copy(const dq_client *c, dq_client **out, dq_err *err)
{
    dq_client *s = malloc(sizeof *s);

    *out = NULL;
    if (s == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    *s = *c;
    s->net = DQ_NET_CLOSED;
    s->reader = NULL;
    s->tls = NULL;
    s->cluster = NULL;
    s->parts = NULL; /* c's to free */
    s->parts_free = NULL;
    memset(&s->registered, 0, sizeof s->registered); /* c's to free, and unused here */
    s->retry_at_ms = 0;
    s->backoff_ms = 0;
    if (c->tls != NULL && (s->tls = dq_tls_ref(c->tls)) == NULL) {
        free(s);
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    *out = s;
    return DQ_OK;
}

int
dq_client_for_node(const dq_client *c, const char *host, int port, dq_client **out, dq_err *err)
{
    int rc = client_copy(c, out, err);

    if (rc != DQ_OK)
        return rc;
    (*out)->url.cluster = false;
    (*out)->url.nseeds = 0;
    snprintf((*out)->url.host, sizeof(*out)->url.host, "%s", host);
    (*out)->url.port = port;
    (*out)->scripts_path = 0;
    dq_url_endpoint(&(*out)->url, (*out)->endpoint, sizeof(*out)->endpoint);
    return DQ_OK;
}

/* Whether @r is an error reply for a command the server does not have. */
static bool
unknown_command(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ERR unknown command", 19) == 0;
}

int
dq_node_sub_open(dq_client *c, const char *channel, dq_client **out, dq_err *err)
{
    dq_client *s = NULL;
    redisReply *r = NULL;
    int rc;

    *out = NULL;
    rc = client_copy(c, &s, err);
    if (rc != DQ_OK)
        return rc;
    rc = dq_conn_ensure(s, err);
    if (rc != DQ_OK)
        goto out;
    /* Sharded pub/sub (Redis 7): the scripts SPUBLISH, on the node of the queue's slot
     * in a cluster. A server without SSUBSCRIBE (Redis 6) gets PUBLISH from the
     * scripts' fallback, so SUBSCRIBE there (docs/PROTOCOL.md 5.1). */
    rc = roundtrip(s, 2, (const char *[]){"SSUBSCRIBE", channel}, NULL, &r, err);
    if (rc == DQ_OK && unknown_command(r)) {
        freeReplyObject(r);
        r = NULL;
        rc = roundtrip(s, 2, (const char *[]){"SUBSCRIBE", channel}, NULL, &r, err);
    }
    if (rc != DQ_OK)
        goto out;
    if (r->type == REDIS_REPLY_ERROR)
        rc = dq_err_set(err, DQ_EREDIS, "redis at %s refused SSUBSCRIBE: %.*s", s->endpoint,
                        (int)(r->len > 120 ? 120 : r->len), r->str);
    else if (r->type != REDIS_REPLY_ARRAY)
        rc = dq_err_set(err, DQ_EREDIS, "redis at %s refused SSUBSCRIBE", s->endpoint);
    freeReplyObject(r);
out:
    if (rc != DQ_OK) {
        dq_node_free(s);
        return rc;
    }
    *out = s;
    return DQ_OK;
}

int
dq_sub_fd(const dq_client *s)
{
    return s != NULL && connected(s) ? s->net.fd : -1;
}

int
dq_sub_drain(dq_client *s, struct dq_wake *w, dq_err *err)
{
    void *r = NULL;
    char why[200] = "";
    int n = 0;

    w->due = false;
    w->parts = false;
    w->pause = false;
    w->lease_ms = -1;
    w->ncancel = 0;
    w->cancel_more = false;
    if (!connected(s))
        return dq_err_set(err, DQ_ECONN, "wake-up connection is closed");
    /* everything ready now, without waiting: over TLS a readable socket may hold only
     * part of a record, and decrypted bytes left inside OpenSSL would not wake poll() */
    for (int i = 0; i < DRAIN_READS; i++) {
        char buf[READ_CHUNK];
        ssize_t got = dq_net_read(&s->net, buf, sizeof buf, 0, why, sizeof why);

        if (got < 0)
            return io_error(s, "wake-up read", s->command_timeout_ms, (int)got, why, err);
        if (got == 0)
            break;
        if (redisReaderFeed(s->reader, buf, (size_t)got) != REDIS_OK)
            return io_error(s, "wake-up read", s->command_timeout_ms, DQ_ECONN, "out of memory",
                            err);
    }
    for (;;) {
        if (redisReaderGetReply(s->reader, &r) != REDIS_OK) {
            snprintf(why, sizeof why, "protocol error: %s", s->reader->errstr);
            return io_error(s, "wake-up read", s->command_timeout_ms, DQ_ECONN, why, err);
        }
        if (r == NULL)
            break;
        const redisReply *m = r;
        /* the server took the subscription away: the queue's slot moved to another
         * node (cluster resharding or failover); the caller opens it again there */
        if (m->type == REDIS_REPLY_ARRAY && m->elements >= 1 &&
            m->element[0]->type == REDIS_REPLY_STRING &&
            strcmp(m->element[0]->str, "sunsubscribe") == 0) {
            freeReplyObject(r);
            return io_error(s, "wake-up read", s->command_timeout_ms, DQ_ECONN,
                            "the channel's slot moved to another node", err);
        }
        /* {"message" or "smessage", channel, payload}: "lease:<ms>", "cancel:<task key>",
         * "parts", "pause" or a due time; anything else (a subscribe confirmation, an
         * unknown form) counts as "look again" */
        const redisReply *p = m->type == REDIS_REPLY_ARRAY && m->elements == 3 &&
                                      m->element[2]->type == REDIS_REPLY_STRING
                                  ? m->element[2]
                                  : NULL;
        if (p != NULL && p->len > 7 && memcmp(p->str, "cancel:", 7) == 0) {
            size_t kl = p->len - 7;
            if (w->ncancel < DQ_WAKE_CANCELS && kl <= DQ_TASK_KEY_MAX) {
                memcpy(w->cancel[w->ncancel], p->str + 7, kl);
                w->cancel[w->ncancel][kl] = '\0';
                w->cancel_len[w->ncancel++] = kl;
            } else {
                w->cancel_more = true;
            }
        } else if (p != NULL && p->len == 5 && memcmp(p->str, "pause", 5) == 0) {
            w->pause = true; /* not a due time: only partitioned queues' workers act */
        } else if (p != NULL && strncmp(p->str, "lease:", 6) == 0) {
            char *end;
            long long v = strtoll(m->element[2]->str + 6, &end, 10);
            if (*end == '\0' && v > 0 && (w->lease_ms < 0 || v < w->lease_ms))
                w->lease_ms = v;
            else if (*end != '\0' || v <= 0)
                w->due = true;
        } else {
            /* "parts": the partition map changed (a resize); older workers take it as
             * "look again", which is harmless */
            w->parts = w->parts || (p != NULL && p->len == 5 && memcmp(p->str, "parts", 5) == 0);
            w->due = true;
        }
        freeReplyObject(r);
        r = NULL;
        n++;
    }
    return n;
}
