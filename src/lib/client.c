/* SPDX-License-Identifier: MIT */
/*
 * client.c: connecting, authenticating, selecting the db, running one command with a
 * timeout, and reconnecting with capped backoff. hiredis 0.14 reports a timeout as
 * REDIS_ERR_IO with errno EAGAIN; that mapping lives here and nowhere else.
 */
#include "client.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

#define BACKOFF_FIRST_MS 100
#define BACKOFF_CAP_MS   5000

static struct timeval
tv_ms(int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    return tv;
}

/* Classifies a failed I/O on @c (dropping the connection): DQ_ETIMEOUT after
 * @timeout_ms without an answer, DQ_ECONN otherwise. */
static int
io_error(dq_client *c, const char *what, int timeout_ms, dq_err *err)
{
    int code = DQ_ECONN;
    char msg[160];

    if (c->ctx != NULL) {
        if (c->ctx->err == REDIS_ERR_IO &&
            (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT || errno == EINPROGRESS))
            code = DQ_ETIMEOUT;
        snprintf(msg, sizeof msg, "%s", c->ctx->errstr[0] ? c->ctx->errstr : strerror(errno));
        redisFree(c->ctx);
        c->ctx = NULL;
    } else {
        snprintf(msg, sizeof msg, "out of memory");
    }
    if (code == DQ_ETIMEOUT)
        return dq_err_set(err, code, "redis at %s did not answer %s within %d ms", c->endpoint,
                          what, timeout_ms);
    return dq_err_set(err, code, "redis at %s: %s: %s", c->endpoint, what, msg);
}

/* Runs a setup command (AUTH, SELECT) on a fresh connection. */
static int
setup_command(dq_client *c, int argc, const char **argv, dq_err *err)
{
    redisReply *r = redisCommandArgv(c->ctx, argc, argv, NULL);
    int rc = DQ_OK;

    if (r == NULL)
        return io_error(c, argv[0], c->command_timeout_ms, err);
    if (r->type == REDIS_REPLY_ERROR) {
        if (r->len >= 6 && memcmp(r->str, "NOAUTH", 6) == 0)
            rc = dq_err_set(err, DQ_ECONN,
                            "redis at %s requires a password (NOAUTH); give it "
                            "in the URL or $DELAYQ_PASSWORD",
                            c->endpoint);
        else
            rc = dq_err_set(err, DQ_ECONN, "redis at %s refused %s: %.*s", c->endpoint, argv[0],
                            (int)r->len, r->str);
        redisFree(c->ctx);
        c->ctx = NULL;
    }
    freeReplyObject(r);
    return rc;
}

static int
connect_now(dq_client *c, dq_err *err)
{
    struct timeval ct = tv_ms(c->connect_timeout_ms);
    int rc;

    if (c->url.kind == DQ_URL_UNIX)
        c->ctx = redisConnectUnixWithTimeout(c->url.path, ct);
    else
        c->ctx = redisConnectWithTimeout(c->url.host, c->url.port, ct);
    if (c->ctx == NULL || c->ctx->err)
        return io_error(c, "connect", c->connect_timeout_ms, err);
    if (redisSetTimeout(c->ctx, tv_ms(c->command_timeout_ms)) != REDIS_OK)
        return io_error(c, "connect", c->connect_timeout_ms, err);
    /* processes a worker starts must not inherit the connection */
    fcntl(c->ctx->fd, F_SETFD, FD_CLOEXEC);
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
    /* One round trip proves the server answers (and accepts us) before we report a
     * connection: a listener that never replies is a timeout here, not later. */
    return setup_command(c, 1, (const char *[]){"PING"}, err);
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
    return c->ctx != NULL || left < 0 ? 0 : left;
}

int
dq_conn_ensure(dq_client *c, dq_err *err)
{
    int rc;
    int64_t now;

    if (c->ctx != NULL)
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
dq_conn_command(dq_client *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                dq_err *err)
{
    int rc = dq_conn_ensure(c, err);

    *out = NULL;
    if (rc != DQ_OK)
        return rc;
    redisReply *r = redisCommandArgv(c->ctx, argc, argv, lens);
    if (r == NULL)
        return io_error(c, argv[0], c->command_timeout_ms, err);
    *out = r;
    return DQ_OK;
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

int
dq_client_open(const char *url, const dq_client_opts *opts, dq_client **out, dq_err *err)
{
    dq_client *c;
    int rc;

    *out = NULL;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    rc = dq_url_parse(url ? url : "redis://127.0.0.1:6379", &c->url, err);
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
    dq_url_endpoint(&c->url, c->endpoint, sizeof c->endpoint);
    c->connect_timeout_ms = opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 3000;
    c->command_timeout_ms = opts && opts->command_timeout_ms > 0 ? opts->command_timeout_ms : 3000;
    if (opts != NULL && opts->who != NULL && opts->who[0] != '\0')
        snprintf(c->who, sizeof c->who, "%s", opts->who);
    else
        dq_default_who(c->who, sizeof c->who);
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
    redisFree(c->ctx);
    memset(c->url.password, 0, sizeof c->url.password);
    dq_names_free(&c->registered);
    free(c);
}

/* Where @name is in @set, or where it would go; *found says which. */
static size_t
names_find(const struct dq_names *set, const char *name, bool *found)
{
    size_t lo = 0, hi = set->n;

    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(set->v[mid], name);
        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool
dq_names_has(const struct dq_names *set, const char *name)
{
    bool found;

    names_find(set, name, &found);
    return found;
}

bool
dq_names_add(struct dq_names *set, const char *name)
{
    bool found;
    size_t at = names_find(set, name, &found);
    char *copy;

    if (found)
        return true;
    if (set->n == DQ_NAMES_MAX)
        return false;
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        char **v = realloc(set->v, cap * sizeof *v);
        if (v == NULL)
            return false;
        set->v = v;
        set->cap = cap;
    }
    if ((copy = strdup(name)) == NULL)
        return false;
    memmove(set->v + at + 1, set->v + at, (set->n - at) * sizeof *set->v);
    set->v[at] = copy;
    set->n++;
    return true;
}

void
dq_names_remove(struct dq_names *set, const char *name)
{
    bool found;
    size_t at = names_find(set, name, &found);

    if (!found)
        return;
    free(set->v[at]);
    memmove(set->v + at, set->v + at + 1, (set->n - at - 1) * sizeof *set->v);
    set->n--;
}

void
dq_names_free(struct dq_names *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->v[i]);
    free(set->v);
    memset(set, 0, sizeof *set);
}

const char *
dq_client_endpoint(const dq_client *c)
{
    return c->endpoint;
}

const char *
dq_client_who(const dq_client *c)
{
    return c->who;
}

int
dq_sub_open(const dq_client *c, const char *channel, dq_client **out, dq_err *err)
{
    dq_client *s = malloc(sizeof *s);
    redisReply *r;
    int rc;

    *out = NULL;
    if (s == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    *s = *c;
    s->ctx = NULL;
    memset(&s->registered, 0, sizeof s->registered); /* c's to free, and unused here */
    s->retry_at_ms = 0;
    s->backoff_ms = 0;
    rc = dq_conn_ensure(s, err);
    if (rc != DQ_OK)
        goto out;
    r = redisCommand(s->ctx, "SUBSCRIBE %s", channel);
    if (r == NULL) {
        rc = io_error(s, "SUBSCRIBE", s->command_timeout_ms, err);
        goto out;
    }
    if (r->type != REDIS_REPLY_ARRAY)
        rc = dq_err_set(err, DQ_EREDIS, "redis at %s refused SUBSCRIBE", s->endpoint);
    freeReplyObject(r);
out:
    if (rc != DQ_OK) {
        dq_client_free(s);
        return rc;
    }
    *out = s;
    return DQ_OK;
}

int
dq_sub_fd(const dq_client *s)
{
    return s != NULL && s->ctx != NULL ? s->ctx->fd : -1;
}

int
dq_sub_drain(dq_client *s, struct dq_wake *w, dq_err *err)
{
    void *r = NULL;
    int n = 0;

    w->due = false;
    w->lease_ms = -1;
    if (s->ctx == NULL)
        return dq_err_set(err, DQ_ECONN, "wake-up connection is closed");
    if (redisBufferRead(s->ctx) != REDIS_OK)
        return io_error(s, "wake-up read", s->command_timeout_ms, err);
    while (redisGetReplyFromReader(s->ctx, &r) == REDIS_OK && r != NULL) {
        const redisReply *m = r;
        /* {"message", channel, payload}: "lease:<ms>" or a due time; anything else
         * (a subscribe confirmation, an unknown form) counts as "look again" */
        if (m->type == REDIS_REPLY_ARRAY && m->elements == 3 &&
            m->element[2]->type == REDIS_REPLY_STRING &&
            strncmp(m->element[2]->str, "lease:", 6) == 0) {
            char *end;
            long long v = strtoll(m->element[2]->str + 6, &end, 10);
            if (*end == '\0' && v > 0 && (w->lease_ms < 0 || v < w->lease_ms))
                w->lease_ms = v;
            else if (*end != '\0' || v <= 0)
                w->due = true;
        } else {
            w->due = true;
        }
        freeReplyObject(r);
        r = NULL;
        n++;
    }
    if (s->ctx->err)
        return io_error(s, "wake-up read", s->command_timeout_ms, err);
    return n;
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
