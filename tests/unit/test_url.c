/* SPDX-License-Identifier: MIT */
/*
 * test_url.c: the Redis URL parser (src/lib/url.c). Pure: no server. Covers every
 * accepted form, every error message, and that no message or failed result ever
 * holds the password.
 */
#include "harness/check.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "delayq.h"
#include "lib/url.h"

#define SCHEME_HINT "(use redis://host:port, rediss://host:port or unix:///path)"

/* Distinctive, so a leak shows up as a plain substring. */
#define SECRET "S3cr3tPw"

static struct dq_url
url_ok(const char *s)
{
    struct dq_url u;
    dq_err err = {0};

    if (dq_url_parse(s, &u, &err) != DQ_OK)
        fail_msg("\"%s\": unexpected error: %s", s, err.msg);
    assert_int_equal(err.code, 0);
    return u;
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

static void
url_bad(const char *s, const char *want)
{
    struct dq_url u;
    dq_err err = {0};

    memset(&u, 0x5a, sizeof u);
    assert_int_equal(dq_url_parse(s, &u, &err), DQ_EINVAL);
    assert_int_equal(err.code, DQ_EINVAL);
    assert_string_equal(err.msg, want);
    assert_true(all_zero(&u));
    assert_null(strstr(err.msg, SECRET));
}

static void
endpoint_is(const char *s, const char *want)
{
    struct dq_url u = url_ok(s);
    char buf[300];

    assert_int_equal(dq_url_endpoint(&u, buf, sizeof buf), strlen(want));
    assert_string_equal(buf, want);
}

/* ---- accepted forms ------------------------------------------------------------- */

static void
test_tcp_basic(void **state)
{
    struct dq_url u;

    (void)state;
    u = url_ok("redis://localhost");
    assert_int_equal(u.kind, DQ_URL_TCP);
    assert_string_equal(u.host, "localhost");
    assert_int_equal(u.port, 6379);
    assert_int_equal(u.db, 0);
    assert_string_equal(u.user, "");
    assert_string_equal(u.password, "");
    assert_false(u.has_password);
    assert_string_equal(u.path, "");

    u = url_ok("redis://127.0.0.1:6380/2");
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 2);

    u = url_ok("REDIS://Cache-1.example_net:1/0");
    assert_string_equal(u.host, "Cache-1.example_net");
    assert_int_equal(u.port, 1);
    assert_int_equal(u.db, 0);

    u = url_ok("redis://h:65535/");
    assert_int_equal(u.port, 65535);
    assert_int_equal(u.db, 0);

    u = url_ok("redis://h:06379");
    assert_int_equal(u.port, 6379);

    u = url_ok("redis://h/2147483647");
    assert_int_equal(u.db, INT_MAX);
}

static void
test_tcp_query(void **state)
{
    struct dq_url u;

    (void)state;
    u = url_ok("redis://h?db=3");
    assert_int_equal(u.db, 3);
    assert_int_equal(u.port, 6379);
    u = url_ok("redis://h:7000/?db=4");
    assert_int_equal(u.port, 7000);
    assert_int_equal(u.db, 4);
    u = url_ok("redis://h?&DB=5&");
    assert_int_equal(u.db, 5);
    u = url_ok("redis://h?");
    assert_int_equal(u.db, 0);
}

static void
test_tcp_userinfo(void **state)
{
    struct dq_url u;

    (void)state;
    u = url_ok("redis://:" SECRET "@h");
    assert_string_equal(u.user, "");
    assert_string_equal(u.password, SECRET);
    assert_true(u.has_password);
    assert_string_equal(u.host, "h");

    u = url_ok("redis://alice:" SECRET "@h:6390/1");
    assert_string_equal(u.user, "alice");
    assert_string_equal(u.password, SECRET);
    assert_int_equal(u.port, 6390);
    assert_int_equal(u.db, 1);

    u = url_ok("redis://alice@h");
    assert_string_equal(u.user, "alice");
    assert_false(u.has_password);

    u = url_ok("redis://:@h");
    assert_string_equal(u.password, "");
    assert_false(u.has_password);

    u = url_ok("redis://@h");
    assert_string_equal(u.user, "");
    assert_false(u.has_password);
}

static void
test_tcp_percent_decoding(void **state)
{
    struct dq_url u;

    (void)state;
    u = url_ok("redis://al%69ce:p%40ss%2Fw%3Ard%25@h");
    assert_string_equal(u.user, "alice");
    assert_string_equal(u.password, "p@ss/w:rd%");
    u = url_ok("redis://:%C3%a9t%c3%A9@h");
    assert_string_equal(u.password, "\xc3\xa9t\xc3\xa9");

    /* the user info ends at the last '@': unencoded '@', '/', '?', ':' in a password */
    u = url_ok("redis://:p@ss@h");
    assert_string_equal(u.password, "p@ss");
    u = url_ok("redis://bob:a/b?c#d:e@h:1/2");
    assert_string_equal(u.user, "bob");
    assert_string_equal(u.password, "a/b?c#d:e");
    assert_string_equal(u.host, "h");
    assert_int_equal(u.port, 1);
    assert_int_equal(u.db, 2);
}

static void
test_tcp_ipv6(void **state)
{
    struct dq_url u;

    (void)state;
    u = url_ok("redis://[::1]:6380/2");
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 2);
    u = url_ok("redis://[::1]");
    assert_int_equal(u.port, 6379);
    u = url_ok("redis://:" SECRET "@[2001:DB8::a1]/3");
    assert_string_equal(u.host, "2001:DB8::a1");
    assert_string_equal(u.password, SECRET);
    u = url_ok("redis://[::ffff:192.0.2.1]?db=1");
    assert_string_equal(u.host, "::ffff:192.0.2.1");
    assert_int_equal(u.db, 1);
}

static void
test_unix(void **state)
{
    struct dq_url u;
    char path[200];
    char url[220];

    (void)state;
    u = url_ok("unix:///tmp/redis.sock");
    assert_int_equal(u.kind, DQ_URL_UNIX);
    assert_string_equal(u.path, "/tmp/redis.sock");
    assert_string_equal(u.host, "");
    assert_int_equal(u.port, 0);
    assert_int_equal(u.db, 0);
    assert_false(u.has_password);

    u = url_ok("unix:///tmp/redis.sock?db=1");
    assert_string_equal(u.path, "/tmp/redis.sock");
    assert_int_equal(u.db, 1);

    u = url_ok("unix://:" SECRET "@/var/run/redis/r.sock?db=7");
    assert_string_equal(u.path, "/var/run/redis/r.sock");
    assert_string_equal(u.password, SECRET);
    assert_true(u.has_password);
    assert_int_equal(u.db, 7);

    u = url_ok("UNIX://u:p%2F@/a@b/c.sock");
    assert_string_equal(u.user, "u");
    assert_string_equal(u.password, "p/");
    assert_string_equal(u.path, "/a@b/c.sock");

    /* 107 bytes is the sun_path limit */
    path[0] = '/';
    memset(path + 1, 'p', 106);
    path[107] = '\0';
    snprintf(url, sizeof url, "unix://%s", path);
    u = url_ok(url);
    assert_string_equal(u.path, path);
}

static void
test_tls(void **state)
{
    struct dq_url u;

    (void)state;
    u = url_ok("rediss://cache.example.com");
    assert_int_equal(u.kind, DQ_URL_TCP);
    assert_true(u.tls);
    assert_string_equal(u.host, "cache.example.com");
    assert_int_equal(u.port, 6379);
    assert_int_equal(u.db, 0);

    u = url_ok("RedisS://alice:" SECRET "@10.0.0.5:6380/4");
    assert_true(u.tls);
    assert_string_equal(u.user, "alice");
    assert_string_equal(u.password, SECRET);
    assert_true(u.has_password);
    assert_string_equal(u.host, "10.0.0.5");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 4);

    u = url_ok("rediss://[::1]:6390?db=2");
    assert_true(u.tls);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.db, 2);

    /* only rediss is TLS */
    assert_false(url_ok("redis://h").tls);
    assert_false(url_ok("unix:///tmp/r.sock").tls);
    endpoint_is("rediss://:" SECRET "@h:6380/1", "h:6380");
}

static void
test_endpoint(void **state)
{
    struct dq_url u;
    char buf[8];

    (void)state;
    endpoint_is("redis://localhost", "localhost:6379");
    endpoint_is("redis://alice:" SECRET "@10.0.0.1:7000/3", "10.0.0.1:7000");
    endpoint_is("redis://[::1]:6380/2", "[::1]:6380");
    endpoint_is("unix://:" SECRET "@/tmp/redis.sock?db=1", "/tmp/redis.sock");

    u = url_ok("redis://localhost");
    assert_int_equal(dq_url_endpoint(&u, NULL, 0), 14);
    memset(buf, '#', sizeof buf);
    assert_int_equal(dq_url_endpoint(&u, buf, sizeof buf), 14);
    assert_string_equal(buf, "localho");
    assert_int_equal(dq_url_endpoint(&u, buf, 1), 14);
    assert_string_equal(buf, "");
}

/* redact(URL) is what dq_url_redact leaves of URL; it parses to the same place, without
 * the password */
static void
redact_is(const char *url, const char *want)
{
    char buf[512];
    struct dq_url a, b;

    assert_int_equal(dq_url_redact(url, buf, sizeof buf), strlen(want));
    assert_string_equal(buf, want);
    assert_null(strstr(buf, SECRET));
    if (dq_url_parse(url, &a, NULL) == DQ_OK) {
        b = url_ok(buf);
        assert_false(b.has_password);
        assert_string_equal(a.user, b.user);
        assert_string_equal(a.host, b.host);
        assert_string_equal(a.path, b.path);
        assert_int_equal(a.port, b.port);
        assert_int_equal(a.db, b.db);
    }
}

static void
test_redact(void **state)
{
    char buf[8];

    (void)state;
    redact_is("redis://alice:" SECRET "@10.0.0.1:7000/3", "redis://alice@10.0.0.1:7000/3");
    redact_is("redis://:" SECRET "@localhost", "redis://localhost");
    redact_is("rediss://alice@localhost:6380", "rediss://alice@localhost:6380");
    redact_is("redis://localhost", "redis://localhost");
    /* the password ends at the last '@', as the parser reads it */
    redact_is("redis://alice:p@ss:" SECRET "@host/1", "redis://alice@host/1");
    redact_is("unix://bob:" SECRET "@/tmp/x.sock?db=2", "unix://bob@/tmp/x.sock?db=2");
    redact_is("unix://bob:a@/b" SECRET "@/tmp/x.sock", "unix://bob@/tmp/x.sock");
    redact_is("unix:///tmp/redis.sock", "unix:///tmp/redis.sock");
    redact_is("unix:///tmp/a:b@/c.sock", "unix:///tmp/a:b@/c.sock"); /* a path, not user info */
    redact_is("redis-sentinel://u:" SECRET "@s1:26379,s2/mymaster/1",
              "redis-sentinel://u@s1:26379,s2/mymaster/1");
    redact_is("redis-cluster://:" SECRET "@n1:7000,n2:7001", "redis-cluster://n1:7000,n2:7001");
    redact_is("not a url", "not a url");
    assert_int_equal(dq_url_redact("redis://a:" SECRET "@host", buf, sizeof buf), 14);
    assert_string_equal(buf, "redis:/");
}

/* ---- redis-sentinel:// --------------------------------------------------------- */

#define SENTINEL_HINT "(use redis-sentinel://host:port[,host:port...]/MASTER_NAME[/db])"

static void
test_sentinel(void **state)
{
    struct dq_url u;
    char buf[400];

    (void)state;
    u = url_ok("redis-sentinel://127.0.0.1:26380,h2,[::1]:5/mymaster");
    assert_true(u.sentinel);
    assert_false(u.tls);
    assert_int_equal(u.kind, DQ_URL_TCP);
    assert_string_equal(u.master, "mymaster");
    assert_int_equal(u.nsentinels, 3);
    assert_string_equal(u.sentinels[0].host, "127.0.0.1");
    assert_int_equal(u.sentinels[0].port, 26380);
    assert_string_equal(u.sentinels[1].host, "h2");
    assert_int_equal(u.sentinels[1].port, DQ_URL_SENTINEL_PORT);
    assert_string_equal(u.sentinels[2].host, "::1");
    assert_int_equal(u.sentinels[2].port, 5);
    assert_string_equal(u.host, "");
    assert_int_equal(u.port, 0);
    assert_int_equal(u.db, 0);
    dq_url_endpoint(&u, buf, sizeof buf);
    assert_string_equal(buf, "sentinel mymaster");
    snprintf(u.host, sizeof u.host, "10.0.0.2");
    u.port = 6380;
    dq_url_endpoint(&u, buf, sizeof buf);
    assert_string_equal(buf, "10.0.0.2:6380 via sentinel mymaster");

    u = url_ok("REDISS-SENTINEL://app:" SECRET "@s1:1/m.a-b_c/3");
    assert_true(u.tls);
    assert_true(u.sentinel);
    assert_string_equal(u.user, "app");
    assert_string_equal(u.password, SECRET);
    assert_true(u.has_password);
    assert_string_equal(u.master, "m.a-b_c");
    assert_int_equal(u.db, 3);
    u = url_ok("redis-sentinel://s1/m?db=4");
    assert_int_equal(u.db, 4);
    u = url_ok("redis-sentinel://s1/m/");
    assert_int_equal(u.db, 0);
    /* sixteen sentinels is the limit, not one more */
    snprintf(buf, sizeof buf, "redis-sentinel://a");
    for (int i = 1; i < DQ_URL_SENTINELS_MAX; i++)
        strcat(buf, ",a");
    strcat(buf, "/m");
    u = url_ok(buf);
    assert_int_equal(u.nsentinels, DQ_URL_SENTINELS_MAX);
}

static void
test_err_sentinel(void **state)
{
    char buf[400];

    (void)state;
    url_bad("redis-sentinel://", "url: sentinel list is empty " SENTINEL_HINT);
    url_bad("redis-sentinel:///m", "url: sentinel list is empty " SENTINEL_HINT);
    url_bad("redis-sentinel://:" SECRET "@/m", "url: sentinel list is empty " SENTINEL_HINT);
    url_bad("redis-sentinel://h", "url: master name is missing " SENTINEL_HINT);
    url_bad("redis-sentinel://h?db=1", "url: master name is missing " SENTINEL_HINT);
    url_bad("redis-sentinel://h/", "url: master name is empty " SENTINEL_HINT);
    url_bad("redis-sentinel://h//1", "url: master name is empty " SENTINEL_HINT);
    url_bad("redis-sentinel://a,,b/m", "url: sentinel 2 of the list is empty " SENTINEL_HINT);
    url_bad("redis-sentinel://a,/m", "url: sentinel 2 of the list is empty " SENTINEL_HINT);
    url_bad("redis-sentinel://,a/m", "url: sentinel 1 of the list is empty " SENTINEL_HINT);
    url_bad("redis-sentinel://a,b:0/m", "url: sentinel 2: port \"0\" is out of range 1..65535");
    url_bad("redis-sentinel://a,b:x/m", "url: sentinel 2: port \"x\" is not a number 1..65535");
    url_bad("redis-sentinel://a,b c/m",
            "url: sentinel 2: host \"b c\" may hold only letters, digits, '-', '.' and '_'");
    url_bad("redis-sentinel://::1/m",
            "url: sentinel 1: IPv6 address \"::1\" needs brackets, as in redis://[::1]:6379");
    url_bad("redis-sentinel://h/my master",
            "url: master name \"my master\" may hold only letters, digits, '-', '.' and '_'");
    url_bad("redis-sentinel://h/m/x", "url: db \"x\" in the path is not a number 0..2147483647");
    url_bad("redis-sentinel://h/m/1?db=2", "url: db is given twice (last in the query)");
    url_bad("redis-sentinel://h/m?foo=1",
            "url: query parameter \"foo\" is not supported (only db)");
    url_bad("rediss-sentinel://h:99999/m",
            "url: sentinel 1: port \"99999\" is out of range 1..65535");
    snprintf(buf, sizeof buf, "redis-sentinel://h/%065d", 0);
    url_bad(buf, "url: master name is 65 bytes; limit is 64");
    snprintf(buf, sizeof buf, "redis-sentinel://a");
    for (int i = 0; i < DQ_URL_SENTINELS_MAX; i++)
        strcat(buf, ",a");
    strcat(buf, "/m");
    url_bad(buf, "url: more than 16 sentinels in the list");
    /* the password never shows, whatever fails after it */
    url_bad("redis-sentinel://u:" SECRET "@a,b:0/m",
            "url: sentinel 2: port \"0\" is out of range 1..65535");
}

/* ---- errors --------------------------------------------------------------------- */

static void
test_err_scheme(void **state)
{
    (void)state;
    url_bad("", "url: \"\" is not a URL " SCHEME_HINT);
    url_bad(NULL, "url: \"\" is not a URL " SCHEME_HINT);
    url_bad("foo", "url: \"foo\" has no scheme " SCHEME_HINT);
    url_bad("localhost:6379", "url: \"localhost:6379\" has no scheme " SCHEME_HINT);
    url_bad("/tmp/redis.sock", "url: \"/tmp/redis.sock\" has no scheme " SCHEME_HINT);
    url_bad("://h", "url: \"://h\" has no scheme " SCHEME_HINT);
    url_bad("1redis://h", "url: \"1redis://h\" has no scheme " SCHEME_HINT);
    url_bad("http://h",
            "url: scheme \"http\" is not supported (use redis://, rediss://, unix:// or "
            "redis-sentinel://)");
    url_bad("redis+sentinel://h",
            "url: scheme \"redis+sentinel\" is not supported (use redis://, rediss://, unix:// or "
            "redis-sentinel://)");
    url_bad("redisss://h",
            "url: scheme \"redisss\" is not supported (use redis://, rediss://, unix:// or "
            "redis-sentinel://)");
    /* rediss:// has every error of redis:// */
    url_bad("rediss://", "url: host is empty " SCHEME_HINT);
    url_bad("rediss://h:0", "url: port \"0\" is out of range 1..65535");
    url_bad("rediss://:" SECRET "@h/x", "url: db \"x\" in the path is not a number 0..2147483647");
}

static void
test_err_host(void **state)
{
    char url[400];

    (void)state;
    url_bad("redis://", "url: host is empty " SCHEME_HINT);
    url_bad("redis://:6379", "url: host is empty " SCHEME_HINT);
    url_bad("redis:///0", "url: host is empty " SCHEME_HINT);
    url_bad("redis://:" SECRET "@", "url: host is empty " SCHEME_HINT);
    url_bad("redis://[]:6379", "url: host is empty " SCHEME_HINT);
    url_bad("redis://ex ample",
            "url: host \"ex ample\" may hold only letters, digits, '-', '.' and '_'");
    url_bad("redis://h%41", "url: host \"h%41\" may hold only letters, digits, '-', '.' and '_'");
    url_bad("redis://h\n", "url: host \"h\\x0a\" may hold only letters, digits, '-', '.' and '_'");
    url_bad("redis://fe80::1",
            "url: IPv6 address \"fe80::1\" needs brackets, as in redis://[::1]:6379");
    url_bad("redis://::1:6379/0",
            "url: IPv6 address \"::1:6379\" needs brackets, as in redis://[::1]:6379");
    url_bad("redis://[::1", "url: host \"[::1\" has no closing ']'");
    url_bad("redis://[::1/0]", "url: host \"[::1\" has no closing ']'");
    url_bad("redis://[xyz::1]", "url: host \"[xyz::1]\" is not an IPv6 address");
    url_bad("redis://[192.0.2.1]", "url: host \"[192.0.2.1]\" is not an IPv6 address");
    url_bad("redis://[::1]x:1",
            "url: unexpected \"x\" after host \"[::1]\" (use :port, /db or ?db=N)");

    memset(url, 0, sizeof url);
    strcpy(url, "redis://");
    memset(url + 8, 'a', 256);
    url_bad(url, "url: host is 256 bytes; limit is 255");
    url[8 + 255] = '\0';
    assert_int_equal(dq_url_parse(url, &(struct dq_url){0}, NULL), DQ_OK);
}

static void
test_err_port(void **state)
{
    (void)state;
    url_bad("redis://h:99999", "url: port \"99999\" is out of range 1..65535");
    url_bad("redis://h:65536/0", "url: port \"65536\" is out of range 1..65535");
    url_bad("redis://h:0", "url: port \"0\" is out of range 1..65535");
    url_bad("redis://h:99999999999999999999999",
            "url: port \"99999999999999999999999\" is out of range 1..65535");
    url_bad("redis://h:", "url: port \"\" is not a number 1..65535");
    url_bad("redis://h:/0", "url: port \"\" is not a number 1..65535");
    url_bad("redis://h:abc", "url: port \"abc\" is not a number 1..65535");
    url_bad("redis://h:-1", "url: port \"-1\" is not a number 1..65535");
    url_bad("redis://h:+80", "url: port \"+80\" is not a number 1..65535");
}

static void
test_err_db(void **state)
{
    (void)state;
    url_bad("redis://h/x", "url: db \"x\" in the path is not a number 0..2147483647");
    url_bad("redis://h/-1", "url: db \"-1\" in the path is not a number 0..2147483647");
    url_bad("redis://h/1/2", "url: db \"1/2\" in the path is not a number 0..2147483647");
    url_bad("redis://h/2147483648", "url: db \"2147483648\" is out of range 0..2147483647");
    url_bad("redis://h/99999999999999999999",
            "url: db \"99999999999999999999\" is out of range 0..2147483647");
    url_bad("redis://h?db=", "url: db \"\" in the query is not a number 0..2147483647");
    url_bad("redis://h?db", "url: db \"\" in the query is not a number 0..2147483647");
    url_bad("redis://h?db=a1", "url: db \"a1\" in the query is not a number 0..2147483647");
    url_bad("redis://h/1?db=2", "url: db is given twice (last in the query)");
    url_bad("redis://h?db=1&db=1", "url: db is given twice (last in the query)");
    url_bad("unix:///s?db=-3", "url: db \"-3\" in the query is not a number 0..2147483647");
}

static void
test_err_query(void **state)
{
    (void)state;
    url_bad("redis://h?foo=1", "url: query parameter \"foo\" is not supported (only db)");
    url_bad("redis://h?db=1&password=x",
            "url: query parameter \"password\" is not supported (only db)");
    url_bad("redis://h?=1", "url: query parameter \"\" is not supported (only db)");
    url_bad("unix:///tmp/s?timeout=3", "url: query parameter \"timeout\" is not supported (only "
                                       "db)");
}

static void
test_err_userinfo(void **state)
{
    char url[600];

    (void)state;
    url_bad("redis://:p%zz" SECRET "@h",
            "url: password has a bad percent-escape (use %XX with two hex digits)");
    url_bad("redis://:" SECRET "%4@h",
            "url: password has a bad percent-escape (use %XX with two hex digits)");
    url_bad("redis://:" SECRET "%@h",
            "url: password has a bad percent-escape (use %XX with two hex digits)");
    url_bad("redis://:" SECRET "%00@h", "url: password contains %00, which is not allowed");
    url_bad("redis://al%g1ce:" SECRET "@h",
            "url: user has a bad percent-escape (use %XX with two hex digits)");
    url_bad("redis://a%00:" SECRET "@h", "url: user contains %00, which is not allowed");

    /* limits count decoded bytes */
    strcpy(url, "redis://:");
    memset(url + 9, 'x', 256);
    strcpy(url + 9 + 256, "@h");
    url_bad(url, "url: password is 256 bytes; limit is 255");
    strcpy(url + 9 + 255, "@h");
    assert_int_equal(dq_url_parse(url, &(struct dq_url){0}, NULL), DQ_OK);
    strcpy(url, "redis://:");
    for (int i = 0; i < 128; i++)
        strcat(url, "%41");
    strcat(url, "@h");
    assert_int_equal(dq_url_parse(url, &(struct dq_url){0}, NULL), DQ_OK);

    strcpy(url, "redis://");
    memset(url + 8, 'u', 128);
    strcpy(url + 8 + 128, ":" SECRET "@h");
    url_bad(url, "url: user is 128 bytes; limit is 127");
}

static void
test_err_unix(void **state)
{
    char url[220];

    (void)state;
    url_bad("unix://", "url: socket path is empty (use unix:///path/to/sock)");
    url_bad("unix://tmp/redis.sock",
            "url: socket path must be absolute (use unix:///path/to/sock)");
    url_bad("unix://" SECRET "@tmp/r.sock",
            "url: socket path must be absolute (use unix:///path/to/sock)");
    url_bad("unix://:" SECRET "%zz@/tmp/r.sock",
            "url: password has a bad percent-escape (use %XX with two hex digits)");

    strcpy(url, "unix:///");
    memset(url + 8, 'p', 107);
    url[8 + 107] = '\0';
    url_bad(url, "url: socket path is 108 bytes; limit is 107 (sun_path)");
    strcat(url, "?db=1");
    url_bad(url, "url: socket path is 108 bytes; limit is 107 (sun_path)");
}

/* No failure, whatever its kind, may quote the password or leave it in *out. */
static void
test_err_never_leaks_password(void **state)
{
    static const char *const bad[] = {
        "alice:" SECRET "@localhost",
        "alice:" SECRET "@localhost:6379/0",
        ":" SECRET "@h",
        "x:" SECRET "://y@h",
        "redis//:" SECRET "@h",
        "rediss://:" SECRET "@h:0",
        "rediss://:" SECRET "@",
        "rediss://:" SECRET "%zz@h",
        "http://:" SECRET "@h",
        "redis://:" SECRET "@",
        "redis://:" SECRET "@h:99999",
        "redis://:" SECRET "@h:x",
        "redis://:" SECRET "@h/x",
        "redis://:" SECRET "@h?x=1",
        "redis://:" SECRET "@h/1?db=1",
        "redis://:" SECRET "@[::1",
        "redis://:" SECRET "@fe80::1",
        "redis://:" SECRET "@ bad host",
        "redis://:" SECRET "%zz@h",
        "redis://" SECRET ":x@h:0",
        "redis://:/" SECRET "/@h/99999999999",
        "redis://:" SECRET "?db=x@h?db=y",
        "unix://:" SECRET "@relative",
        "unix://:" SECRET "@/p?x=1",
        "unix://:" SECRET "@/p?db=x",
        "unix://" SECRET,
        SECRET "@",
    };

    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct dq_url u;
        dq_err err = {0};

        memset(&u, 0x5a, sizeof u);
        if (dq_url_parse(bad[i], &u, &err) != DQ_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
        if (strstr(err.msg, SECRET) != NULL || strstr(err.msg, "S3cr") != NULL)
            fail_msg("\"%s\": message leaks the password: %s", bad[i], err.msg);
        assert_true(all_zero(&u));
    }
}

static void
test_err_null_err(void **state)
{
    struct dq_url u;

    (void)state;
    assert_int_equal(dq_url_parse("redis://h:0", &u, NULL), DQ_EINVAL);
    assert_true(all_zero(&u));
    assert_int_equal(dq_url_parse("redis://h", &u, NULL), DQ_OK);
}

/* ---- cluster seeds --------------------------------------------------------------- */

static void
test_cluster(void **state)
{
    struct dq_url u;

    (void)state;
    u = url_ok("redis-cluster://127.0.0.1:7000,127.0.0.1:7001,[::1]:7002,node-3");
    assert_true(u.cluster);
    assert_false(u.tls);
    assert_int_equal(u.kind, DQ_URL_TCP);
    assert_int_equal(u.nseeds, 4);
    assert_string_equal(u.seeds[0].host, "127.0.0.1");
    assert_int_equal(u.seeds[0].port, 7000);
    assert_int_equal(u.seeds[1].port, 7001);
    assert_string_equal(u.seeds[2].host, "::1");
    assert_int_equal(u.seeds[2].port, 7002);
    assert_string_equal(u.seeds[3].host, "node-3");
    assert_int_equal(u.seeds[3].port, 6379);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 7000);
    assert_int_equal(u.db, 0);

    u = url_ok("REDISS-CLUSTER://app:" SECRET "@h1:7000");
    assert_true(u.cluster && u.tls);
    assert_int_equal(u.nseeds, 1);
    assert_string_equal(u.user, "app");
    assert_string_equal(u.password, SECRET);
    /* the password may hold ',' and '@': user info ends at the last '@' */
    u = url_ok("redis-cluster://:a,b@c@h1:1,h2:2");
    assert_string_equal(u.password, "a,b@c");
    assert_int_equal(u.nseeds, 2);
    assert_string_equal(u.seeds[1].host, "h2");

    u = url_ok("redis://h");
    assert_false(u.cluster);
    assert_int_equal(u.nseeds, 0);
}

static void
test_err_cluster(void **state)
{
    char many[600] = "redis-cluster://h:1";

    (void)state;
    url_bad("redis-cluster://", "url: seed 1 is empty (use redis-cluster://host:port,host:port)");
    url_bad("redis-cluster://:" SECRET "@h:1,,h:2",
            "url: seed 2 is empty (use redis-cluster://host:port,host:port)");
    url_bad("redis-cluster://h:1,",
            "url: seed 2 is empty (use redis-cluster://host:port,host:port)");
    url_bad("redis-cluster://h:1/2",
            "url: a cluster URL takes no /db or ?query (Redis Cluster has only db 0)");
    url_bad("redis-cluster://h:1,h:2?db=1",
            "url: a cluster URL takes no /db or ?query (Redis Cluster has only db 0)");
    url_bad("rediss-cluster://h:1,h:0", "url: port \"0\" is out of range 1..65535");
    url_bad("redis-cluster://h:1,::1", "url: IPv6 address \"::1\" needs brackets, as in "
                                       "redis://[::1]:6379");
    for (int i = 1; i <= DQ_URL_SEEDS_MAX; i++)
        strcat(many, ",h:1");
    url_bad(many, "url: more than 16 seed nodes");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcp_basic),    cmocka_unit_test(test_tcp_query),
        cmocka_unit_test(test_tcp_userinfo), cmocka_unit_test(test_tcp_percent_decoding),
        cmocka_unit_test(test_tcp_ipv6),     cmocka_unit_test(test_unix),
        cmocka_unit_test(test_tls),          cmocka_unit_test(test_endpoint),
        cmocka_unit_test(test_err_scheme),   cmocka_unit_test(test_err_host),
        cmocka_unit_test(test_err_port),     cmocka_unit_test(test_err_db),
        cmocka_unit_test(test_err_query),    cmocka_unit_test(test_err_userinfo),
        cmocka_unit_test(test_err_unix),     cmocka_unit_test(test_err_never_leaks_password),
        cmocka_unit_test(test_err_null_err), cmocka_unit_test(test_sentinel),
        cmocka_unit_test(test_err_sentinel), cmocka_unit_test(test_cluster),
        cmocka_unit_test(test_err_cluster),  cmocka_unit_test(test_redact),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/url", tests, NULL, NULL);
}
