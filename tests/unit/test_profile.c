/* SPDX-License-Identifier: MIT */
/*
 * test_profile.c: the connection profiles file (src/cli/profile.c): a full file, every
 * kind of bad line named by file:line, the limits, the permission checks of the file
 * and of a password-file (ssh's rule), and the three password sources.
 */
#include "harness/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/profile.h"

static void
parse_ok(const char *text, struct profiles *p)
{
    char why[600] = "";

    if (profile_parse(text, strlen(text), "cfg", p, why, sizeof why) != 0)
        fail_msg("refused:\n%s\nwith: %s", text, why);
}

/* Expects @text refused with exactly @want. */
static void
parse_refused(const char *text, size_t len, const char *want)
{
    struct profiles p;
    char why[600] = "";

    if (profile_parse(text, len, "cfg", &p, why, sizeof why) == 0)
        fail_msg("accepted:\n%.*s", (int)len, text);
    if (strncmp(why, want, strlen(want)) != 0)
        fail_msg("refused with \"%s\", expected \"%s...\"", why, want);
    assert_int_equal(p.n, 0);
    assert_null(p.v);
}

static void
full_file(void **state)
{
    struct profiles p;
    const struct profile *x;

    (void)state;
    setenv("HOME", "/home/alice", 1);
    parse_ok("# delayq profiles\n"
             "; another comment\n"
             "\n"
             "[prod]\n"
             "  url = rediss://redis.internal:6380/0  \n"
             "user=alice\n"
             "password-file = ~/.config/delayq/prod.password\n"
             "tls-ca = ~/ca.crt\n"
             "tls-cert = /etc/c.crt\r\n"
             "tls-key = /etc/c.key\n"
             "tls-server-name = redis.internal\n"
             "min-replicas = 1\n"
             "queue = emails\n"
             "read-only = yes\n"
             "[dev.local_2]\n"
             "url = redis://127.0.0.1\n"
             "password-command = pass show redis/dev\n"
             "read-only = no",
             &p);
    assert_int_equal(p.n, 2);
    assert_false(p.has_password);
    x = profile_find(&p, "prod");
    assert_non_null(x);
    assert_int_equal(x->line, 4);
    assert_string_equal(x->url, "rediss://redis.internal:6380/0");
    assert_string_equal(x->user, "alice");
    assert_string_equal(x->password_file, "/home/alice/.config/delayq/prod.password");
    assert_string_equal(x->tls_ca, "/home/alice/ca.crt");
    assert_string_equal(x->tls_cert, "/etc/c.crt");
    assert_string_equal(x->tls_key, "/etc/c.key");
    assert_string_equal(x->tls_server_name, "redis.internal");
    assert_int_equal(x->min_replicas, 1);
    assert_string_equal(x->queue, "emails");
    assert_int_equal(x->read_only, 1);
    assert_null(x->password);
    x = profile_find(&p, "dev.local_2");
    assert_non_null(x);
    assert_string_equal(x->password_command, "pass show redis/dev");
    assert_int_equal(x->read_only, 0);
    assert_int_equal(x->min_replicas, -1);
    assert_null(x->queue);
    assert_null(profile_find(&p, "staging"));
    profile_free(&p);

    parse_ok("[a]\npassword = s3 cret=x\n", &p);
    assert_true(p.has_password);
    assert_string_equal(p.v[0].password, "s3 cret=x"); /* the first '=' splits */
    profile_free(&p);
    parse_ok("", &p);
    assert_int_equal(p.n, 0);
    profile_free(&p);
}

static void
bad_lines(void **state)
{
    (void)state;
    parse_refused("url = redis://x\n", 16, "cfg:1: \"key = value\" before the first [name]");
    parse_refused("[a]\n\nnope = 1\n", 14, "cfg:3: unknown key \"nope\" (known: url, user,");
    parse_refused("[a]\n[b]\n[a]\n", 12, "cfg:3: profile [a] is defined twice (first on line 1)");
    parse_refused("[a]\nurl = x\nurl = y\n", 20, "cfg:3: url is set twice in [a]");
    parse_refused("[a]\nread-only = 1\nread-only = 0\n", 31, "cfg:3: read-only is set twice");
    parse_refused("[a]\nurl\n", 8, "cfg:2: expected \"key = value\", \"[name]\" or a # comment");
    parse_refused("[a]\n= x\n", 8, "cfg:2: expected \"key = value\"");
    parse_refused("[a]\nurl =\n", 10, "cfg:2: url needs a value");
    parse_refused("[a b]\n", 6, "cfg:1: byte 2 of the profile name is not one of [A-Za-z0-9._-]");
    parse_refused("[]\n", 3, "cfg:1: profile name must be 1..63 bytes (got 0)");
    parse_refused("[a\n", 3, "cfg:1: a section header is \"[name]\"");
    parse_refused("[a]\nmin-replicas = 101\n", 22,
                  "cfg:2: min-replicas: \"101\" is not a whole number in 0..100");
    parse_refused("[a]\nmin-replicas = -1\n", 21, "cfg:2: min-replicas: \"-1\" is not");
    parse_refused("[a]\nmin-replicas = 1x\n", 21, "cfg:2: min-replicas: \"1x\" is not");
    parse_refused("[a]\nread-only = maybe\n", 21, "cfg:2: read-only: \"maybe\" is not yes or no");
    parse_refused("[a]\nqueue = bad queue\n", 21, "cfg:2: queue: byte 4 of the name is not one of");
    parse_refused("[a]\nurl = a\0b\n", 13, "cfg:2: url: value holds a NUL byte");
}

static void
limits(void **state)
{
    char *big = malloc(PROFILE_FILE_MAX + 2);
    char line[PROFILE_VALUE_MAX + 32];
    size_t n = 0;

    (void)state;
    memset(big, '#', PROFILE_FILE_MAX + 1);
    parse_refused(big, PROFILE_FILE_MAX + 1, "cfg: 65537 bytes, over the limit of 65536");
    for (int i = 0; i <= PROFILE_COUNT_MAX; i++)
        n += (size_t)snprintf(big + n, 16, "[p%d]\n", i);
    parse_refused(big, n, "cfg:101: more than 100 profiles");
    snprintf(line, sizeof line, "[a]\nurl = %0*d\n", PROFILE_VALUE_MAX + 1, 0);
    parse_refused(line, strlen(line), "cfg:2: url: value is 1025 bytes, over the limit of 1024");
    n = (size_t)snprintf(big, 80, "[%0*d]\n", PROFILE_NAME_MAX + 1, 0);
    parse_refused(big, n, "cfg:1: profile name must be 1..63 bytes (got 64)");
    free(big);
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void
permissions(void **state)
{
    char dir[] = "/tmp/dq-profile-XXXXXX", path[128], pw[128], why[600], buf[256];
    struct profiles p;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/config", dir);
    snprintf(pw, sizeof pw, "%s/pw", dir);
    assert_int_equal(profile_load(path, &p, why, sizeof why), 1); /* no file: no profiles */
    assert_int_equal(p.n, 0);

    write_file(path, "[a]\npassword = hunter2\n", 0644);
    assert_int_equal(profile_load(path, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "it holds a password (password = of profile a), and its "
                                "permissions (644) let others read it; refusing to use it: "
                                "chmod 600"));
    write_file(path, "[a]\npassword = hunter2\n", 0600);
    assert_int_equal(profile_load(path, &p, why, sizeof why), 0);
    assert_int_equal(profile_password(&p.v[0], buf, sizeof buf, why, sizeof why), 1);
    assert_string_equal(buf, "hunter2");
    profile_free(&p);

    /* a password in a url is one too: in a later profile, with a user or without, in
     * every URL form, and in a url that does not parse */
    static const char *const url_pw[] = {
        "[a]\nurl = redis://x\n[b]\nurl = redis://alice:hunter2@x\n",
        "[b]\nurl = rediss://:hunter2@x:6380/1\n",
        "[b]\nurl = unix://u:hunter2@/tmp/r.sock\n",
        "[b]\nurl = redis-sentinel://u:hunter2@s1,s2/mymaster\n",
        "[b]\nurl = redis-cluster://u:hunter2@n1:7000\n",
        "[b]\nurl = redis://alice:hunter2@x:notaport\n",
    };
    for (size_t i = 0; i < sizeof url_pw / sizeof url_pw[0]; i++) {
        write_file(path, url_pw[i], 0640);
        assert_int_equal(profile_load(path, &p, why, sizeof why), -1);
        assert_non_null(strstr(why, "it holds a password (in the url of profile b), and its "
                                    "permissions (640) let others read it"));
        assert_null(strstr(why, "hunter2"));
        write_file(path, url_pw[i], 0600);
        assert_int_equal(profile_load(path, &p, why, sizeof why), 0);
        assert_true(p.v[p.n - 1].url_password);
        profile_free(&p);
    }
    write_file(path, "[a]\nurl = redis://alice@x\n", 0644);
    assert_int_equal(profile_load(path, &p, why, sizeof why), 0);
    assert_false(p.v[0].url_password);
    profile_free(&p);

    /* no password in it: others may read it, but never change it */
    write_file(path, "[a]\nurl = redis://x\n", 0644);
    assert_int_equal(profile_load(path, &p, why, sizeof why), 0);
    profile_free(&p);
    write_file(path, "[a]\nurl = redis://x\n", 0664);
    assert_int_equal(profile_load(path, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "others may change this file"));
    assert_non_null(strstr(why, "chmod 600"));
    write_file(path, "[a]\nurl = redis://x\n[a]\n", 0600);
    assert_int_equal(profile_load(path, &p, why, sizeof why), -1);
    assert_non_null(strstr(why, "/config:3: profile [a] is defined twice"));

    /* password-file: first line, and private */
    snprintf(buf, sizeof buf, "[a]\npassword-file = %s\n", pw);
    write_file(path, buf, 0644);
    write_file(pw, "from-file\nsecond line\n", 0640);
    assert_int_equal(profile_load(path, &p, why, sizeof why), 0);
    assert_int_equal(profile_password(&p.v[0], buf, sizeof buf, why, sizeof why), -1);
    assert_non_null(strstr(why, "(640) let others read it; refusing to use it: chmod 600"));
    assert_int_equal(chmod(pw, 0600), 0);
    assert_int_equal(profile_password(&p.v[0], buf, sizeof buf, why, sizeof why), 1);
    assert_string_equal(buf, "from-file");
    write_file(pw, "\n", 0600);
    assert_int_equal(profile_password(&p.v[0], buf, sizeof buf, why, sizeof why), -1);
    assert_non_null(strstr(why, "its first line must be a password"));
    unlink(pw);
    assert_int_equal(profile_password(&p.v[0], buf, sizeof buf, why, sizeof why), -1);
    assert_non_null(strstr(why, "No such file"));
    profile_free(&p);

    /* password-command: its first line; a failure is an error, not an empty password */
    write_file(path,
               "[ok]\npassword-command = printf 'from-cmd\\nrest'\n"
               "[fails]\npassword-command = echo nope; exit 3\n"
               "[empty]\npassword-command = true\n"
               "[none]\nurl = redis://x\n",
               0600);
    assert_int_equal(profile_load(path, &p, why, sizeof why), 0);
    assert_int_equal(profile_password(profile_find(&p, "ok"), buf, sizeof buf, why, sizeof why), 1);
    assert_string_equal(buf, "from-cmd");
    assert_int_equal(profile_password(profile_find(&p, "fails"), buf, sizeof buf, why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "of profile fails failed (status 3)"));
    assert_int_equal(profile_password(profile_find(&p, "empty"), buf, sizeof buf, why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "the first line it prints must be a password"));
    assert_int_equal(profile_password(profile_find(&p, "none"), buf, sizeof buf, why, sizeof why),
                     0);
    profile_free(&p);
    unlink(path);
    rmdir(dir);
}

static void
path_from_env(void **state)
{
    char buf[256];

    (void)state;
    setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
    setenv("HOME", "/home/bob", 1);
    assert_true(profile_path(buf, sizeof buf));
    assert_string_equal(buf, "/x/cfg/delayq/config");
    setenv("XDG_CONFIG_HOME", "relative", 1); /* the spec says: ignore a relative one */
    assert_true(profile_path(buf, sizeof buf));
    assert_string_equal(buf, "/home/bob/.config/delayq/config");
    unsetenv("XDG_CONFIG_HOME");
    assert_true(profile_path(buf, sizeof buf));
    assert_string_equal(buf, "/home/bob/.config/delayq/config");
    unsetenv("HOME");
    assert_false(profile_path(buf, sizeof buf));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_file),   cmocka_unit_test(bad_lines),     cmocka_unit_test(limits),
        cmocka_unit_test(permissions), cmocka_unit_test(path_from_env),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/profile", tests, NULL, NULL);
}
