/* SPDX-License-Identifier: MIT */
/*
 * url.c: parses redis://, rediss://, unix:// redis-sentinel:// (rediss-sentinel://)
 * and redis-cluster:// (rediss-cluster://)
 * URLs. Pure: no I/O, no name resolution.
 *
 * The password must never reach a message. User info is located first (it ends at
 * the last '@', or the last "@/" for unix://) and no message quotes any text before
 * that point; the only part quoted from before it is the scheme, and only after it
 * has been checked to be a well-formed scheme name. The parse works on a local copy
 * that is wiped before returning, so a failed parse leaves no secret in *out.
 */
#include "url.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/err.h"

/* Output characters of a quoted piece of input, before "..." marks a cut. */
#define QUOTE_MAX 48

#define SCHEME_HINT   "(use redis://host:port, rediss://host:port or unix:///path)"
#define SENTINEL_HINT "(use redis-sentinel://host:port[,host:port...]/MASTER_NAME[/db])"

struct span {
    const char *p;
    size_t len;
};

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool
is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
hex_value(char c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Case-insensitive comparison of @sp with the lower-case @lit. */
static bool
span_is(struct span sp, const char *lit)
{
    size_t n = strlen(lit);

    if (sp.len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = sp.p[i];

        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return false;
    }
    return true;
}

/*
 * Copies @sp into @dst (at least QUOTE_MAX + 8 bytes) for use inside double quotes:
 * printable ASCII stays, '"' and '\\' get a backslash, other bytes become \xNN, and a
 * longer piece ends in "...". Returns @dst.
 */
static const char *
quote(char *dst, size_t size, struct span sp)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    for (size_t i = 0; i < sp.len; i++) {
        unsigned char c = (unsigned char)sp.p[i];
        size_t need = (c >= 0x20 && c < 0x7f) ? (c == '"' || c == '\\' ? 2 : 1) : 4;

        if (o + need > QUOTE_MAX || o + need + 4 > size) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        if (need == 4) {
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = hex[c >> 4];
            dst[o++] = hex[c & 0xf];
        } else {
            if (need == 2)
                dst[o++] = '\\';
            dst[o++] = (char)c;
        }
    }
    dst[o] = '\0';
    return dst;
}

/* Zeroes memory in a way the compiler may not drop (the struct may hold a password). */
static void
wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;

    while (n-- > 0)
        *v++ = 0;
}

/*
 * Percent-decodes @sp into @dst (@cap bytes with the NUL). @what names the part for
 * messages, which never quote the part itself: it may be the password.
 */
static int
decode(struct span sp, char *dst, size_t cap, const char *what, dq_err *err)
{
    size_t n = 0;

    for (size_t i = 0; i < sp.len; i++, n++) {
        if (sp.p[i] != '%')
            continue;
        if (sp.len - i < 3 || hex_value(sp.p[i + 1]) < 0 || hex_value(sp.p[i + 2]) < 0)
            return dq_err_set(err, DQ_EINVAL,
                              "url: %s has a bad percent-escape (use %%XX with two hex digits)",
                              what);
        if (hex_value(sp.p[i + 1]) == 0 && hex_value(sp.p[i + 2]) == 0)
            return dq_err_set(err, DQ_EINVAL, "url: %s contains %%00, which is not allowed", what);
        i += 2;
    }
    if (n >= cap)
        return dq_err_set(err, DQ_EINVAL, "url: %s is %zu bytes; limit is %zu", what, n, cap - 1);
    n = 0;
    for (size_t i = 0; i < sp.len; i++) {
        if (sp.p[i] == '%') {
            dst[n++] = (char)(hex_value(sp.p[i + 1]) << 4 | hex_value(sp.p[i + 2]));
            i += 2;
        } else {
            dst[n++] = sp.p[i];
        }
    }
    dst[n] = '\0';
    return DQ_OK;
}

/* Splits "[user][:password]" and decodes both parts. */
static int
parse_userinfo(struct span ui, struct dq_url *u, dq_err *err)
{
    const char *colon = memchr(ui.p, ':', ui.len);
    struct span user = {ui.p, colon != NULL ? (size_t)(colon - ui.p) : ui.len};
    int rc;

    rc = decode(user, u->user, sizeof u->user, "user", err);
    if (rc != DQ_OK || colon == NULL)
        return rc;
    struct span pass = {colon + 1, ui.len - user.len - 1};
    rc = decode(pass, u->password, sizeof u->password, "password", err);
    u->has_password = rc == DQ_OK && u->password[0] != '\0';
    return rc;
}

static int
parse_db(struct span sp, const char *where, struct dq_url *u, bool *db_seen, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    long long v = 0;
    size_t i = 0;

    if (*db_seen)
        return dq_err_set(err, DQ_EINVAL, "url: db is given twice (last in the %s)", where);
    *db_seen = true;
    for (; i < sp.len && is_digit(sp.p[i]); i++) {
        if (v <= INT_MAX) /* keep scanning, but stop growing */
            v = v * 10 + (sp.p[i] - '0');
    }
    if (sp.len == 0 || i < sp.len)
        return dq_err_set(err, DQ_EINVAL, "url: db \"%s\" in the %s is not a number 0..%d",
                          quote(q, sizeof q, sp), where, INT_MAX);
    if (v > INT_MAX)
        return dq_err_set(err, DQ_EINVAL, "url: db \"%s\" is out of range 0..%d",
                          quote(q, sizeof q, sp), INT_MAX);
    u->db = (int)v;
    return DQ_OK;
}

/* Parses "name=value&..." after '?'. Empty parameters ("a&&b", a lone "?") are skipped. */
static int
parse_query(const char *s, struct dq_url *u, bool *db_seen, dq_err *err)
{
    char q[QUOTE_MAX + 8];

    while (*s != '\0') {
        size_t len = strcspn(s, "&");
        const char *eq = memchr(s, '=', len);
        struct span key = {s, eq != NULL ? (size_t)(eq - s) : len};
        struct span val = {eq != NULL ? eq + 1 : s + len, eq != NULL ? len - key.len - 1 : 0};

        if (len > 0) {
            int rc;

            if (!span_is(key, "db"))
                return dq_err_set(err, DQ_EINVAL,
                                  "url: query parameter \"%s\" is not supported (only db)",
                                  quote(q, sizeof q, key));
            rc = parse_db(val, "query", u, db_seen, err);
            if (rc != DQ_OK)
                return rc;
        }
        s += len;
        if (*s == '&')
            s++;
    }
    return DQ_OK;
}

/* @s is what follows a URL's address: [/db][?query] (the db given at most once). */
static int
parse_db_tail(const char *s, struct dq_url *u, dq_err *err)
{
    bool db_seen = false;
    int rc;

    if (*s == '/') {
        struct span db = {s + 1, strcspn(s + 1, "?")};

        s += 1 + db.len;
        if (db.len > 0) {
            rc = parse_db(db, "path", u, &db_seen, err);
            if (rc != DQ_OK)
                return rc;
        }
    }
    if (*s == '?')
        return parse_query(s + 1, u, &db_seen, err);
    return DQ_OK;
}

static int
parse_port(struct span sp, struct dq_url *u, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    long v = 0;
    size_t i = 0;

    for (; i < sp.len && is_digit(sp.p[i]); i++) {
        if (v <= 65535)
            v = v * 10 + (sp.p[i] - '0');
    }
    if (sp.len == 0 || i < sp.len)
        return dq_err_set(err, DQ_EINVAL, "url: port \"%s\" is not a number 1..65535",
                          quote(q, sizeof q, sp));
    if (v < 1 || v > 65535)
        return dq_err_set(err, DQ_EINVAL, "url: port \"%s\" is out of range 1..65535",
                          quote(q, sizeof q, sp));
    u->port = (int)v;
    return DQ_OK;
}

static bool
host_char_ok(char c)
{
    return is_digit(c) || is_alpha(c) || c == '-' || c == '.' || c == '_';
}

/* @s is what follows the user info: host[:port][/db][?query]. */
static int
parse_tcp_rest(const char *s, struct dq_url *u, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    struct span host;
    int rc;

    if (*s == '[') {
        const char *close = strchr(s, ']');
        size_t hlen = strcspn(s, "/?");

        if (close == NULL || (size_t)(close - s) > hlen)
            return dq_err_set(err, DQ_EINVAL, "url: host \"%s\" has no closing ']'",
                              quote(q, sizeof q, (struct span){s, hlen}));
        host = (struct span){s + 1, (size_t)(close - s - 1)};
        s = close + 1;
        if (host.len == 0)
            return dq_err_set(err, DQ_EINVAL, "url: host is empty " SCHEME_HINT);
        bool colon = false, ok = true;
        for (size_t i = 0; i < host.len; i++) {
            char c = host.p[i];

            if (c == ':')
                colon = true;
            else if (hex_value(c) < 0 && c != '.')
                ok = false;
        }
        if (!ok || !colon)
            return dq_err_set(err, DQ_EINVAL, "url: host \"[%s]\" is not an IPv6 address",
                              quote(q, sizeof q, host));
        if (*s != '\0' && *s != ':' && *s != '/' && *s != '?') {
            char q2[QUOTE_MAX + 8];

            return dq_err_set(err, DQ_EINVAL,
                              "url: unexpected \"%s\" after host \"[%s]\" (use :port, /db or "
                              "?db=N)",
                              quote(q2, sizeof q2, (struct span){s, strcspn(s, ":/?")}),
                              quote(q, sizeof q, host));
        }
    } else {
        size_t hlen = strcspn(s, "/?");
        const char *c1 = memchr(s, ':', hlen);

        if (c1 != NULL && memchr(c1 + 1, ':', hlen - (size_t)(c1 + 1 - s)) != NULL)
            return dq_err_set(err, DQ_EINVAL,
                              "url: IPv6 address \"%s\" needs brackets, as in "
                              "redis://[::1]:6379",
                              quote(q, sizeof q, (struct span){s, hlen}));
        host = (struct span){s, c1 != NULL ? (size_t)(c1 - s) : hlen};
        s += host.len;
        if (host.len == 0)
            return dq_err_set(err, DQ_EINVAL, "url: host is empty " SCHEME_HINT);
        for (size_t i = 0; i < host.len; i++) {
            if (!host_char_ok(host.p[i]))
                return dq_err_set(err, DQ_EINVAL,
                                  "url: host \"%s\" may hold only letters, digits, '-', '.' "
                                  "and '_'",
                                  quote(q, sizeof q, host));
        }
    }
    if (host.len >= sizeof u->host)
        return dq_err_set(err, DQ_EINVAL, "url: host is %zu bytes; limit is %zu", host.len,
                          sizeof u->host - 1);
    memcpy(u->host, host.p, host.len);
    u->host[host.len] = '\0';

    u->port = DQ_URL_DEFAULT_PORT;
    if (*s == ':') {
        s++;
        rc = parse_port((struct span){s, strcspn(s, "/?")}, u, err);
        if (rc != DQ_OK)
            return rc;
        s += strcspn(s, "/?");
    }
    return parse_db_tail(s, u, err);
}

static int
parse_tcp(const char *rest, struct dq_url *u, dq_err *err)
{
    const char *at = strrchr(rest, '@');
    int rc;

    u->kind = DQ_URL_TCP;
    if (at != NULL) {
        rc = parse_userinfo((struct span){rest, (size_t)(at - rest)}, u, err);
        if (rc != DQ_OK)
            return rc;
        rest = at + 1;
    }
    return parse_tcp_rest(rest, u, err);
}

/* @rest is what follows "redis-cluster://": [userinfo@]seed[,seed...], each seed
 * host[:port] as in redis://, with no /db or ?query. */
static int
parse_cluster(const char *rest, struct dq_url *u, dq_err *err)
{
    const char *at = strrchr(rest, '@');
    int rc;

    u->kind = DQ_URL_TCP;
    u->cluster = true;
    if (at != NULL) {
        rc = parse_userinfo((struct span){rest, (size_t)(at - rest)}, u, err);
        if (rc != DQ_OK)
            return rc;
        rest = at + 1;
    }
    for (;;) {
        size_t len = strcspn(rest, ",");
        char piece[sizeof u->host + 16];
        struct dq_url one;

        if (len == 0)
            return dq_err_set(err, DQ_EINVAL,
                              "url: seed %d is empty (use redis-cluster://host:port,host:port)",
                              u->nseeds + 1);
        if (u->nseeds == DQ_URL_SEEDS_MAX)
            return dq_err_set(err, DQ_EINVAL, "url: more than %d seed nodes", DQ_URL_SEEDS_MAX);
        if (memchr(rest, '/', len) != NULL || memchr(rest, '?', len) != NULL)
            return dq_err_set(err, DQ_EINVAL,
                              "url: a cluster URL takes no /db or ?query (Redis Cluster has "
                              "only db 0)");
        if (len >= sizeof piece)
            return dq_err_set(err, DQ_EINVAL, "url: seed %d is %zu bytes; limit is %zu",
                              u->nseeds + 1, len, sizeof piece - 1);
        memcpy(piece, rest, len);
        piece[len] = '\0';
        memset(&one, 0, sizeof one);
        rc = parse_tcp_rest(piece, &one, err);
        if (rc != DQ_OK)
            return rc;
        memcpy(u->seeds[u->nseeds].host, one.host, sizeof one.host);
        u->seeds[u->nseeds].port = one.port;
        u->nseeds++;
        rest += len;
        if (*rest == '\0')
            break;
        rest++;
    }
    memcpy(u->host, u->seeds[0].host, sizeof u->host);
    u->port = u->seeds[0].port;
    return DQ_OK;
}

static int
parse_unix(const char *rest, struct dq_url *u, dq_err *err)
{
    const char *path = rest;
    bool db_seen = false;
    size_t len;
    int rc;

    u->kind = DQ_URL_UNIX;
    if (*rest == '\0')
        return dq_err_set(err, DQ_EINVAL, "url: socket path is empty (use unix:///path/to/sock)");
    if (*rest != '/') {
        const char *at = NULL;

        for (const char *p = strstr(rest, "@/"); p != NULL; p = strstr(p + 1, "@/"))
            at = p;
        if (at == NULL)
            return dq_err_set(err, DQ_EINVAL,
                              "url: socket path must be absolute (use unix:///path/to/sock)");
        rc = parse_userinfo((struct span){rest, (size_t)(at - rest)}, u, err);
        if (rc != DQ_OK)
            return rc;
        path = at + 1;
    }
    len = strcspn(path, "?");
    if (len >= sizeof u->path)
        return dq_err_set(err, DQ_EINVAL, "url: socket path is %zu bytes; limit is %zu (sun_path)",
                          len, sizeof u->path - 1);
    memcpy(u->path, path, len);
    u->path[len] = '\0';
    if (path[len] == '?')
        return parse_query(path + len + 1, u, &db_seen, err);
    return DQ_OK;
}

/* ---- redis-sentinel:// ---------------------------------------------------------------- */

static bool
master_char_ok(char c)
{
    return is_digit(c) || is_alpha(c) || c == '-' || c == '.' || c == '_';
}

/* One "host[:port]" of the sentinel list (@i counts from 1, for messages): parsed as a
 * redis:// host, with the sentinel port as the default. */
static int
parse_sentinel_node(struct span sp, int i, struct dq_url *u, dq_err *err)
{
    char piece[300];
    struct dq_url tmp;
    const char *after;
    int rc;

    if (sp.len == 0)
        return dq_err_set(err, DQ_EINVAL, "url: sentinel %d of the list is empty " SENTINEL_HINT,
                          i);
    if (sp.len >= sizeof piece)
        return dq_err_set(err, DQ_EINVAL, "url: sentinel %d is %zu bytes; limit is %zu", i, sp.len,
                          sizeof piece - 1);
    if (u->nsentinels == DQ_URL_SENTINELS_MAX)
        return dq_err_set(err, DQ_EINVAL, "url: more than %d sentinels in the list",
                          DQ_URL_SENTINELS_MAX);
    memcpy(piece, sp.p, sp.len);
    piece[sp.len] = '\0';
    memset(&tmp, 0, sizeof tmp);
    rc = parse_tcp_rest(piece, &tmp, err);
    if (rc != DQ_OK) {
        char msg[sizeof err->msg];

        /* "url: port ..." becomes "url: sentinel 2: port ..." */
        if (err != NULL) {
            snprintf(msg, sizeof msg, "%s", err->msg + 5);
            dq_err_set(err, rc, "url: sentinel %d: %s", i, msg);
        }
        return rc;
    }
    after = piece[0] == '[' ? strchr(piece, ']') : piece;
    if (after == NULL || strchr(after, ':') == NULL)
        tmp.port = DQ_URL_SENTINEL_PORT;
    snprintf(u->sentinels[u->nsentinels].host, sizeof u->sentinels[0].host, "%s", tmp.host);
    u->sentinels[u->nsentinels].port = tmp.port;
    u->nsentinels++;
    return DQ_OK;
}

/* @s is what follows the user info: host[:port][,host[:port]...]/MASTER[/db][?query]. */
static int
parse_sentinel_rest(const char *s, struct dq_url *u, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    size_t list = strcspn(s, "/?");
    struct span name;
    int rc;

    if (list == 0)
        return dq_err_set(err, DQ_EINVAL, "url: sentinel list is empty " SENTINEL_HINT);
    for (size_t at = 0, i = 1; at <= list; i++) {
        size_t len = strcspn(s + at, ",/?");

        rc = parse_sentinel_node((struct span){s + at, len}, (int)i, u, err);
        if (rc != DQ_OK)
            return rc;
        at += len + 1; /* past the ',' (or past the end of the list) */
    }
    s += list;
    if (*s != '/')
        return dq_err_set(err, DQ_EINVAL, "url: master name is missing " SENTINEL_HINT);
    s++;
    name = (struct span){s, strcspn(s, "/?")};
    if (name.len == 0)
        return dq_err_set(err, DQ_EINVAL, "url: master name is empty " SENTINEL_HINT);
    if (name.len > DQ_URL_MASTER_MAX)
        return dq_err_set(err, DQ_EINVAL, "url: master name is %zu bytes; limit is %d", name.len,
                          DQ_URL_MASTER_MAX);
    for (size_t i = 0; i < name.len; i++) {
        if (!master_char_ok(name.p[i]))
            return dq_err_set(err, DQ_EINVAL,
                              "url: master name \"%s\" may hold only letters, digits, '-', '.' "
                              "and '_'",
                              quote(q, sizeof q, name));
    }
    memcpy(u->master, name.p, name.len);
    u->master[name.len] = '\0';
    s += name.len;
    return parse_db_tail(s, u, err);
}

static int
parse_sentinel(const char *rest, struct dq_url *u, dq_err *err)
{
    const char *at = strrchr(rest, '@');
    int rc;

    u->kind = DQ_URL_TCP;
    u->sentinel = true;
    if (at != NULL) {
        rc = parse_userinfo((struct span){rest, (size_t)(at - rest)}, u, err);
        if (rc != DQ_OK)
            return rc;
        rest = at + 1;
    }
    return parse_sentinel_rest(rest, u, err);
}

static bool
scheme_ok(struct span sp)
{
    if (sp.len == 0 || !is_alpha(sp.p[0]))
        return false;
    for (size_t i = 1; i < sp.len; i++) {
        char c = sp.p[i];

        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.')
            return false;
    }
    return true;
}

static int
url_parse(const char *s, struct dq_url *u, dq_err *err)
{
    char q[QUOTE_MAX + 8];
    const char *sep = strstr(s, "://");
    struct span scheme = {s, sep != NULL ? (size_t)(sep - s) : 0};

    if (*s == '\0')
        return dq_err_set(err, DQ_EINVAL, "url: \"\" is not a URL " SCHEME_HINT);
    if (sep == NULL || !scheme_ok(scheme)) {
        /* Could be "user:password@host": quote only what follows the last '@'. */
        const char *at = strrchr(s, '@');

        if (at != NULL)
            return dq_err_set(err, DQ_EINVAL, "url: \"***@%s\" has no scheme " SCHEME_HINT,
                              quote(q, sizeof q, (struct span){at + 1, strlen(at + 1)}));
        return dq_err_set(err, DQ_EINVAL, "url: \"%s\" has no scheme " SCHEME_HINT,
                          quote(q, sizeof q, (struct span){s, strlen(s)}));
    }
    if (span_is(scheme, "redis"))
        return parse_tcp(sep + 3, u, err);
    if (span_is(scheme, "rediss")) {
        u->tls = true;
        return parse_tcp(sep + 3, u, err);
    }
    if (span_is(scheme, "unix"))
        return parse_unix(sep + 3, u, err);
    if (span_is(scheme, "redis-sentinel"))
        return parse_sentinel(sep + 3, u, err);
    if (span_is(scheme, "rediss-sentinel")) {
        u->tls = true;
        return parse_sentinel(sep + 3, u, err);
    }
    if (span_is(scheme, "redis-cluster"))
        return parse_cluster(sep + 3, u, err);
    if (span_is(scheme, "rediss-cluster")) {
        u->tls = true;
        return parse_cluster(sep + 3, u, err);
    }
    return dq_err_set(err, DQ_EINVAL,
                      "url: scheme \"%s\" is not supported (use redis://, rediss://, unix:// or "
                      "redis-sentinel://)",
                      quote(q, sizeof q, scheme));
}

int
dq_url_parse(const char *s, struct dq_url *out, dq_err *err)
{
    struct dq_url u;
    int rc;

    memset(&u, 0, sizeof u);
    memset(out, 0, sizeof *out);
    rc = url_parse(s != NULL ? s : "", &u, err);
    if (rc == DQ_OK)
        *out = u;
    wipe(&u, sizeof u);
    return rc;
}

size_t
dq_url_endpoint(const struct dq_url *u, char *buf, size_t size)
{
    int n;

    if (u->sentinel && u->host[0] == '\0')
        n = snprintf(buf, size, "sentinel %s", u->master);
    else if (u->sentinel && strchr(u->host, ':') != NULL)
        n = snprintf(buf, size, "[%s]:%d via sentinel %s", u->host, u->port, u->master);
    else if (u->sentinel)
        n = snprintf(buf, size, "%s:%d via sentinel %s", u->host, u->port, u->master);
    else if (u->kind == DQ_URL_UNIX)
        n = snprintf(buf, size, "%s", u->path);
    else if (strchr(u->host, ':') != NULL)
        n = snprintf(buf, size, "[%s]:%d", u->host, u->port);
    else
        n = snprintf(buf, size, "%s:%d", u->host, u->port);
    return n < 0 ? 0 : (size_t)n;
}

size_t
dq_url_redact(const char *s, char *buf, size_t size)
{
    const char *sep = strstr(s, "://"), *rest, *at = NULL, *colon;
    int n;

    if (sep == NULL)
        return (size_t)snprintf(buf, size, "%s", s);
    rest = sep + 3;
    if (strncasecmp(s, "unix://", 7) == 0) {
        /* unix:///path has no user info: the path is taken literally, '@' and all */
        for (const char *p = strstr(rest, "@/"); p != NULL && *rest != '/'; p = strstr(p + 1, "@/"))
            at = p;
    } else {
        at = strrchr(rest, '@');
    }
    colon = at != NULL ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
    if (colon == NULL)
        n = snprintf(buf, size, "%s", s);
    else if (colon == rest) /* ":password@": no user left to name */
        n = snprintf(buf, size, "%.*s%s", (int)(rest - s), s, at + 1);
    else
        n = snprintf(buf, size, "%.*s%s", (int)(colon - s), s, at);
    return n < 0 ? 0 : (size_t)n;
}
