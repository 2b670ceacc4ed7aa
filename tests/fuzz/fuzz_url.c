/* SPDX-License-Identifier: MIT */
/*
 * fuzz_url.c: the Redis URL parser (src/lib/url.c), which reads --url and DELAYQ_URL.
 * Invariants: a refused URL leaves the result zeroed and a one-line "url: " message; an
 * accepted URL, written back out in canonical form (every user-info byte
 * percent-encoded, explicit port and db), parses to the same result, so the parse is
 * stable; the user info never shows in a message (a URL made to fail after the user
 * info gives the same message with and without it); the endpoint text follows
 * snprintf semantics. Sentinel URLs (redis-sentinel://) keep the same invariants, with
 * the sentinel list and the master name in the canonical form. dq_url_redact (what
 * delayq work hands its handlers) leaves a URL that parses to the same place and user,
 * without a password.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/buf.h"
#include "lib/url.h"

static void
put_encoded(struct dq_buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            dq_buf_putc(b, (char)c);
        else
            dq_buf_printf(b, "%%%02X", c);
    }
}

/* Writes @u as a URL; with @userinfo false, leaves the user info out. */
static void
format_url(struct dq_buf *b, const struct dq_url *u, bool userinfo)
{
    if (u->sentinel)
        dq_buf_puts(b, u->tls ? "rediss-sentinel://" : "redis-sentinel://");
    else if (u->cluster)
        dq_buf_puts(b, u->tls ? "rediss-cluster://" : "redis-cluster://");
    else
        dq_buf_puts(b, u->kind == DQ_URL_UNIX ? "unix://" : u->tls ? "rediss://" : "redis://");
    if (userinfo && (u->user[0] != '\0' || u->has_password)) {
        put_encoded(b, u->user);
        if (u->has_password) {
            dq_buf_putc(b, ':');
            put_encoded(b, u->password);
        }
        dq_buf_putc(b, '@');
    }
    if (u->sentinel) {
        for (int i = 0; i < u->nsentinels; i++) {
            const struct dq_url_node *n = &u->sentinels[i];
            dq_buf_printf(b, strchr(n->host, ':') != NULL ? "%s[%s]:%d" : "%s%s:%d",
                          i > 0 ? "," : "", n->host, n->port);
        }
        dq_buf_printf(b, "/%s/%d", u->master, u->db);
    } else if (u->cluster) {
        for (int i = 0; i < u->nseeds; i++) {
            const struct dq_url_seed *sd = &u->seeds[i];
            dq_buf_printf(b, strchr(sd->host, ':') != NULL ? "%s[%s]:%d" : "%s%s:%d",
                          i > 0 ? "," : "", sd->host, sd->port);
        }
    } else if (u->kind == DQ_URL_UNIX) {
        dq_buf_printf(b, "%s?db=%d", u->path, u->db);
    } else if (strchr(u->host, ':') != NULL) {
        dq_buf_printf(b, "[%s]:%d/%d", u->host, u->port, u->db);
    } else {
        dq_buf_printf(b, "%s:%d/%d", u->host, u->port, u->db);
    }
}

static bool
all_zero(const struct dq_url *u)
{
    const unsigned char *p = (const unsigned char *)u;

    for (size_t i = 0; i < sizeof *u; i++) {
        if (p[i] != 0)
            return false;
    }
    return true;
}

static bool
seeds_same(const struct dq_url *a, const struct dq_url *b)
{
    for (int i = 0; i < a->nseeds && i < DQ_URL_SEEDS_MAX; i++) {
        if (strcmp(a->seeds[i].host, b->seeds[i].host) != 0 || a->seeds[i].port != b->seeds[i].port)
            return false;
    }
    return true;
}

static bool
same_url(const struct dq_url *a, const struct dq_url *b)
{
    return a->kind == b->kind && strcmp(a->host, b->host) == 0 && a->port == b->port &&
           strcmp(a->path, b->path) == 0 && strcmp(a->user, b->user) == 0 &&
           strcmp(a->password, b->password) == 0 && a->has_password == b->has_password &&
           a->db == b->db && a->tls == b->tls && a->sentinel == b->sentinel &&
           strcmp(a->master, b->master) == 0 && a->nsentinels == b->nsentinels &&
           memcmp(a->sentinels, b->sentinels, sizeof a->sentinels) == 0 &&
           a->cluster == b->cluster && a->nseeds == b->nseeds && seeds_same(a, b);
}

static void
check_endpoint(const struct dq_url *u)
{
    char big[512], small[6];
    size_t n = dq_url_endpoint(u, NULL, 0);

    FUZZ_CHECK(dq_url_endpoint(u, big, sizeof big) == n && strlen(big) == n);
    FUZZ_CHECK(dq_url_endpoint(u, small, sizeof small) == n);
    FUZZ_CHECK(strlen(small) == (n < 5 ? n : 5) && strncmp(small, big, 5) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    struct dq_url u, again;
    dq_err err = {0};
    struct dq_buf text = DQ_BUF_INIT, bare = DQ_BUF_INIT;

    memset(&u, 0x5a, sizeof u);
    if (dq_url_parse(s, &u, &err) != DQ_OK) {
        FUZZ_CHECK(err.code == DQ_EINVAL && strncmp(err.msg, "url: ", 5) == 0);
        FUZZ_CHECK(all_zero(&u));
        FUZZ_CHECK(fuzz_text_safe(err.msg, strlen(err.msg), ""));
        free(s);
        return 0;
    }
    FUZZ_CHECK(err.code == 0);
    FUZZ_CHECK(u.has_password == (u.password[0] != '\0'));
    if (u.sentinel) {
        FUZZ_CHECK(u.kind == DQ_URL_TCP && u.host[0] == '\0' && u.port == 0);
        FUZZ_CHECK(u.nsentinels >= 1 && u.nsentinels <= DQ_URL_SENTINELS_MAX);
        FUZZ_CHECK(u.master[0] != '\0');
        for (int i = 0; i < u.nsentinels; i++)
            FUZZ_CHECK(u.sentinels[i].host[0] != '\0' && u.sentinels[i].port >= 1 &&
                       u.sentinels[i].port <= 65535);
    } else {
        FUZZ_CHECK(u.kind == DQ_URL_UNIX ? u.port == 0 && u.host[0] == '\0' && u.path[0] == '/'
                                         : u.port >= 1 && u.port <= 65535 && u.host[0] != '\0');
    }
    FUZZ_CHECK(u.db >= 0);
    FUZZ_CHECK(!u.tls || u.kind == DQ_URL_TCP);
    FUZZ_CHECK(u.cluster ? u.nseeds >= 1 && u.nseeds <= DQ_URL_SEEDS_MAX && u.db == 0 &&
                               u.port == u.seeds[0].port && strcmp(u.host, u.seeds[0].host) == 0
                         : u.nseeds == 0);
    check_endpoint(&u);

    size_t rn = dq_url_redact(s, NULL, 0);
    char *red = malloc(rn + 1);
    FUZZ_CHECK(red != NULL && dq_url_redact(s, red, rn + 1) == rn && strlen(red) == rn);
    memset(&again, 0x5a, sizeof again);
    FUZZ_CHECK(dq_url_parse(red, &again, NULL) == DQ_OK);
    FUZZ_CHECK(!again.has_password && strcmp(again.user, u.user) == 0 &&
               strcmp(again.host, u.host) == 0 && again.port == u.port &&
               strcmp(again.path, u.path) == 0 && again.db == u.db);
    free(red);

    format_url(&text, &u, true);
    FUZZ_CHECK(!text.failed);
    memset(&again, 0x5a, sizeof again);
    FUZZ_CHECK(dq_url_parse(text.data, &again, NULL) == DQ_OK);
    FUZZ_CHECK(same_url(&u, &again));

    /* The same failure after the user info reads the same with and without it. */
    format_url(&bare, &u, false);
    dq_buf_puts(&text, "&bogus=1");
    dq_buf_puts(&bare, "&bogus=1");
    dq_err with = {0}, without = {0};
    FUZZ_CHECK(dq_url_parse(text.data, &again, &with) == DQ_EINVAL);
    FUZZ_CHECK(dq_url_parse(bare.data, &again, &without) == DQ_EINVAL);
    FUZZ_CHECK(strcmp(with.msg, without.msg) == 0);

    dq_buf_free(&text);
    dq_buf_free(&bare);
    free(s);
    return 0;
}
