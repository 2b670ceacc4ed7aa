/* SPDX-License-Identifier: MIT */
/*
 * test_cli_misc.c: what every command shares: terminal safety of output built from Redis data,
 * usage errors that escape their arguments, --help, --version and usage.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

static void
terminal_safety(void **state)
{
    /* msgpack str8 with ESC sequences, a C1 CSI, a bidi override and invalid UTF-8 */
    static const char mp_str[] = "\xd9\x1e"
                                 "a\x1b[2J\x1b]52;c;AAAA\x07"
                                 "\xc2\x9b"
                                 "1m\xe2\x80\xae"
                                 "x\xff\xfe"
                                 "end";
    static const char raw[] = "\x1b[2J\x1b]52;c;AAAA\x07\xff\xfe\x9b\r\n";
    static const char json[] = "{\"k\\u001b[31m\":\"v\\u001b[2J\\u001b]52;c;AAAA\\u0007"
                               "\\u009b\\u202e\\r\"}";
    static const char error[] = "bad \x1b[2J\x1b]52;c;AAAA\x07 \xff\xfe end\rX";
    static const char trace[] = "at f() \x1b[31mred\x1b[0m\n\xff\xfe\x80\n"
                                "\x1b]52;c;AAAA\x07\n\xe2\x80\xae reversed \x08\x7f";
    static const char *const views[] = {"due", "failed"};
    struct result r = {0};
    char q[96], what[64];

    (void)state;
    assert_int_equal(sizeof mp_str - 1, 2 + 0x1e);
    test_queue_name(q, sizeof q, "escapes");
    lib_make_failed(q, "evil-fail", mp_str, sizeof mp_str - 1, error, trace);
    RUN_IN(&r, mp_str, sizeof mp_str - 1, "enqueue", "-q", q, "--id", "evil-mp", "-");
    ASSERT_EXIT(&r, 0);
    RUN_IN(&r, raw, sizeof raw - 1, "enqueue", "-q", q, "--id", "evil-raw", "-");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--id", "evil-json", "--json", json);
    ASSERT_EXIT(&r, 0);

    for (size_t i = 0; i < 2; i++) {
        RUN(&r, "ls", views[i], "-q", q);
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "ls %s", views[i]);
        assert_terminal_safe(what, r.out, r.out_len);
        assert_true(count_lines(r.out) >= 2);
        RUN(&r, "ls", views[i], "-q", q, "--json");
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "ls %s --json", views[i]);
        assert_json_safe(what, r.out, r.out_len);
    }
    static const char *const ids[] = {"evil-fail", "evil-mp", "evil-raw", "evil-json"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        RUN(&r, "show", ids[i], "-q", q);
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "show %s", ids[i]);
        assert_terminal_safe(what, r.out, r.out_len);
        RUN(&r, "show", ids[i], "-q", q, "--json");
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "show %s --json", ids[i]);
        assert_json_safe(what, r.out, r.out_len);
        assert_int_equal(count_lines(r.out), 1);
    }

    /* the escaped text still says what was there */
    RUN(&r, "show", "evil-fail", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "[2J");
    ASSERT_HAS(r.out, "]52;c;AAAA");
    ASSERT_HAS(r.out, "red");
    ASSERT_HAS(r.out, "reversed");
    /* the JSON keeps the control characters, as escapes */
    RUN(&r, "show", "evil-fail", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\\u001b[2J");
    ASSERT_HAS(r.out, "\\u0007");
    RUN(&r, "show", "evil-json", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"k\\u001b[31m\":\"v\\u001b[2J\\u001b]52;c;AAAA\\u0007");

    /* audit: an operator name with escapes, from --who */
    RUN(&r, "requeue", "evil-fail", "-q", q, "--delay", "1h", "--who", "op\x1b[2J\x07\xff");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_terminal_safe("audit", r.out, r.out_len);
    ASSERT_HAS(r.out, "requeue  evil-fail");
    RUN(&r, "audit", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_json_safe("audit --json", r.out, r.out_len);

    /* error messages that echo an id from the user or Redis are escaped as well */
    RUN(&r, "show", "gone\x1b]52;c;AAAA\x07\xff", "-q", q);
    ASSERT_EXIT(&r, 1);
    assert_terminal_safe("show unknown (stderr)", r.err, r.err_len);
    RUN(&r, "no\x1b[2Jcmd");
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("unknown command (stderr)", r.err, r.err_len);
    result_free(&r);
}

/*
 * Usage errors quote the offending argument. main.c escapes an unknown command name
 * before printing it, and every message built from Redis data goes through
 * cli_put_safe(); arguments quoted by cli_usage_error() must be escaped the same way,
 * since scripts pass ids and names they read from elsewhere.
 */
static void
usage_errors_escape_arguments(void **state)
{
    static const char evil[] = "x\x1b]52;c;AAAA\x07\x1b[2J\xff";
    struct result r = {0};
    char q[96], field[64];

    (void)state;
    test_queue_name(q, sizeof q, "usage-esc");
    snprintf(field, sizeof field, "%s=1", evil);

    RUN(&r, "ls", evil, "-q", q); /* view "..." is not due, ... */
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("ls VIEW (stderr)", r.err, r.err_len);
    RUN(&r, "show", "some-id", evil, "-q", q); /* unexpected argument "..." */
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("show ID EXTRA (stderr)", r.err, r.err_len);
    RUN(&r, "config", field, "-q", q); /* unknown field "..." */
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("config FIELD=1 (stderr)", r.err, r.err_len);
    RUN(&r, "enqueue", "-q", q, "--json", "1", evil);
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("enqueue EXTRA (stderr)", r.err, r.err_len);
    result_free(&r);
}

static void
help_and_usage(void **state)
{
    static const char *const cmds[] = {"enqueue", "stats", "ls",    "show",
                                       "requeue", "drop",  "audit", "config"};
    struct result r = {0};
    char want[64], q[96];

    (void)state;
    test_queue_name(q, sizeof q, "help");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        /* --help needs no server: point the command at an unreachable one */
        RUN(&r, cmds[i], "--help", "--url", "redis://127.0.0.1:1");
        ASSERT_EXIT(&r, 0);
        snprintf(want, sizeof want, "usage: delayq %s", cmds[i]);
        ASSERT_HAS(r.out, want);
        ASSERT_HAS(r.out, "--url");
        assert_int_equal(r.err_len, 0);
        RUN(&r, cmds[i], "-h");
        ASSERT_EXIT(&r, 0);
        ASSERT_HAS(r.out, "usage:");
    }
    RUN(&r, "--help");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "usage:");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(want, sizeof want, "\n  %s ", cmds[i]);
        ASSERT_HAS(r.out, want);
    }
    RUN(&r, "--version");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "delayq " DQ_VERSION "\n");

    RUN(&r, "frobnicate");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "frobnicate");
    assert_int_equal(r.out_len, 0);
    run(NULL, 0, (const char *const[]){NULL}, &r); /* no command at all */
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "usage:");

    /* a bad queue name is bad input */
    RUN(&r, "stats", "-q", "no spaces allowed");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "stats", "-q");
    ASSERT_EXIT(&r, 2);

    /* $DELAYQ_QUEUE picks the queue when -q is absent */
    char env[128];
    snprintf(env, sizeof env, "DELAYQ_QUEUE=%s", q);
    run_full(ARGV(env), NULL, 0, ARGV("enqueue", "--id", "via-env", "--json", "1"), RUN_TIMEOUT_MS,
             &r);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\nvia-env ");
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(terminal_safety),
        cmocka_unit_test(usage_errors_escape_arguments),
        cmocka_unit_test(help_and_usage),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/misc", tests, cli_group_setup, cli_group_teardown);
}
