/* SPDX-License-Identifier: MIT */
/*
 * test_opts.c: the one command-line parser (src/cli/opts.c) against a table with every
 * option type: the forms (--opt value, --opt=value, -x value, "--", "-"), global options
 * anywhere and a command's own option shadowing one, the --url password wiped from
 * argv, and each usage error's message and exit status; the help it prints from the
 * table fits 80 columns and points to delayq help options.
 */
#include "harness/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"

static const char *const words[] = {"red", "green", "blue", NULL};

static const struct cli_opt opts[] = {
    {"json", 0, NULL, CLI_FLAG, .help = "a flag"},
    {"limit", 'n', "N", CLI_UINT, 1, 1000, .help = "a count"},
    {"shift", 0, "N", CLI_INT, -5, 5, .help = "a signed number"},
    {"wait", 0, "DUR", CLI_DUR, 1, 3600000, .help = "a duration in 1ms..1h"},
    {"cache", 0, "DUR", CLI_DUR, 0, 60000, .help = "a duration up to 1m"},
    {"colour", 0, "C", CLI_ENUM, .values = words, .help = "one of three words"},
    {"size", 0, "BYTES", CLI_SIZE, 1, 1 << 20, .help = "bytes, up to 1 MiB"},
    {"path", 0, "PATH", CLI_STR, .needs = "a path", .flags = CLI_NONEMPTY,
     .help = "a long help text that the printer has to wrap because it goes on and on past "
             "the end of an eighty column line, and then some more words"},
    {"timeout", 0, "DUR", CLI_DUR, .help = "this command's own --timeout"},
    {NULL},
};

static int
run(struct cli *g, const struct cli_args *a)
{
    return DQ_EXIT_OK;
}

static const struct cli_cmd cmd_t = {
    .name = "t",
    .summary = "a test command",
    .usage = "delayq t [--json] [--limit N]\n"
             "                [--wait DUR]\n"
             "delayq t --path PATH",
    .about = "A paragraph that is joined and wrapped at eighty columns by the help printer, "
             "since it is written as one long line here.\n\n"
             "  an indented line, kept as it is",
    .opts = opts,
    .max_pos = 3,
    .hint = " (a hint)",
    .run = run,
};

/* A command without the own --timeout, for the global one. */
static const struct cli_cmd cmd_u = {.name = "u", .usage = "delayq u", .about = "U.", .run = run};

static struct cli g;
static struct cli_args args;
static char err_text[4096], out_text[16384];

static void
cli_reset(void)
{
    free(g.url_owned);
    memset(&g, 0, sizeof g);
    g.prog = "delayq t";
    g.queue = "default";
    g.min_replicas = -1;
}

/* Reads what was written to @fd's redirect @f into @buf. */
static void
slurp(FILE *f, char *buf, size_t size)
{
    size_t n;

    fflush(f);
    rewind(f);
    n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
}

/* cli_parse of @c with the NULL-terminated @argv (copied: the parser may write to it),
 * stderr and stdout captured. */
static int
parse_cmd(const struct cli_cmd *c, const char *const *argv)
{
    static char store[16][256];
    static char *av[17];
    FILE *ef = tmpfile(), *of = tmpfile();
    int argc = 0, saved_err = dup(2), saved_out = dup(1), rc;

    assert_non_null(ef);
    assert_non_null(of);
    for (; argv[argc] != NULL; argc++) {
        snprintf(store[argc], sizeof store[argc], "%s", argv[argc]);
        av[argc] = store[argc];
    }
    av[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    dup2(fileno(ef), 2);
    dup2(fileno(of), 1);
    rc = cli_parse(&g, c, argc, av, &args);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_err, 2);
    dup2(saved_out, 1);
    close(saved_err);
    close(saved_out);
    slurp(ef, err_text, sizeof err_text);
    slurp(of, out_text, sizeof out_text);
    fclose(ef);
    fclose(of);
    return rc;
}

#define PARSE(...)   parse_cmd(&cmd_t, (const char *const[]){__VA_ARGS__, NULL})
#define PARSE_U(...) parse_cmd(&cmd_u, (const char *const[]){__VA_ARGS__, NULL})

/* The parse failed with exit 2 and @want on stderr. */
#define USAGE(want, ...)                                                                           \
    do {                                                                                           \
        cli_reset();                                                                               \
        int rc_ = PARSE(__VA_ARGS__);                                                              \
        if (rc_ != DQ_EXIT_USAGE || strstr(err_text, want) == NULL)                                \
            fail_msg("exit %d, stderr \"%s\"; expected 2 and \"%s\"", rc_, err_text, want);        \
    } while (0)

static void
forms(void **state)
{
    (void)state;
    cli_reset();
    assert_int_equal(PARSE("--limit", "7", "--json", "a"), DQ_EXIT_OK);
    assert_true(cli_has(&args, "json"));
    assert_int_equal(cli_num(&args, "limit", 0), 7);
    assert_false(cli_has(&args, "wait"));
    assert_int_equal(cli_num(&args, "wait", 42), 42);
    assert_null(cli_str(&args, "path", NULL));
    assert_int_equal(args.npos, 1);
    assert_string_equal(args.pos[0], "a");
    assert_int_equal(args.dashdash, -1);
    cli_args_free(&args);

    /* --opt=value, -x value, the last of a repeated option, its count */
    cli_reset();
    assert_int_equal(PARSE("--limit=3", "-n", "9", "--shift", "-5", "--wait=1h", "--cache", "0",
                           "--colour", "blue", "--size", "2k", "--path=/x"),
                     DQ_EXIT_OK);
    assert_int_equal(cli_num(&args, "limit", 0), 9);
    assert_int_equal(cli_count(&args, "limit"), 2);
    assert_int_equal(cli_num(&args, "shift", 0), -5);
    assert_int_equal(cli_num(&args, "wait", 0), 3600000);
    assert_true(cli_has(&args, "cache"));
    assert_int_equal(cli_num(&args, "cache", 1), 0);
    assert_int_equal(cli_num(&args, "colour", -1), 2);
    assert_int_equal(cli_num(&args, "size", 0), 2048);
    assert_string_equal(cli_str(&args, "path", NULL), "/x");
    cli_args_free(&args);

    /* "-" is an argument; after "--" everything is, options included */
    cli_reset();
    assert_int_equal(PARSE("-", "--", "--json", "-n"), DQ_EXIT_OK);
    assert_false(cli_has(&args, "json"));
    assert_int_equal(args.npos, 3);
    assert_int_equal(args.dashdash, 1);
    assert_string_equal(args.pos[1], "--json");
    assert_null(args.pos[3]);
    cli_args_free(&args);

    cli_reset();
    assert_int_equal(PARSE("--size", "3M"), DQ_EXIT_USAGE); /* over 1 MiB */
    cli_reset();
    assert_int_equal(PARSE("--size", "1M"), DQ_EXIT_OK);
    assert_int_equal(cli_num(&args, "size", 0), 1 << 20);
    cli_args_free(&args);
}

static void
globals(void **state)
{
    (void)state;
    /* anywhere on the line, in both forms */
    cli_reset();
    assert_int_equal(PARSE_U("-q", "emails", "--who=ops", "--min-replicas", "2", "--tls-insecure",
                             "--timeout", "250ms", "--tls-ca=/ca"),
                     DQ_EXIT_OK);
    assert_string_equal(g.queue, "emails");
    assert_true(g.queue_flag);
    assert_string_equal(g.who, "ops");
    assert_int_equal(g.min_replicas, 2);
    assert_true(g.tls_insecure);
    assert_int_equal(g.timeout_ms, 250);
    assert_string_equal(g.tls_ca, "/ca");
    cli_args_free(&args);

    /* a command's own option wins over the global one of the same name */
    cli_reset();
    assert_int_equal(PARSE("--timeout", "5m"), DQ_EXIT_OK);
    assert_int_equal(g.timeout_ms, 0);
    assert_int_equal(cli_num(&args, "timeout", 0), 300000);
    cli_args_free(&args);

    /* the password of a --url is wiped from argv; the copy in use keeps it */
    cli_reset();
    static char a0[] = "--url", a1[] = "redis://u:secret@127.0.0.1:1/0";
    char *av[] = {a0, a1, NULL};
    FILE *ef = tmpfile();
    int saved = dup(2);
    dup2(fileno(ef), 2);
    int rc = cli_parse(&g, &cmd_u, 2, av, &args);
    dup2(saved, 2);
    close(saved);
    slurp(ef, err_text, sizeof err_text);
    fclose(ef);
    assert_int_equal(rc, DQ_EXIT_OK);
    assert_string_equal(a1, "redis://u:******@127.0.0.1:1/0");
    assert_string_equal(g.url, "redis://u:secret@127.0.0.1:1/0");
    assert_true(g.url_given);
    assert_non_null(strstr(err_text, "wiped from the command line"));
    cli_args_free(&args);
}

static void
errors(void **state)
{
    (void)state;
    USAGE("delayq t: --limit needs a value (see --help)", "--limit");
    USAGE("--path needs a path", "--path");
    USAGE("--path needs a path", "--path=");
    USAGE("--limit: \"0\" is not a whole number in 1..1000", "--limit", "0");
    USAGE("--limit: \"x\" is not a whole number in 1..1000", "-n", "x");
    USAGE("--shift: \"6\" is not a whole number in -5..5", "--shift", "6");
    USAGE("--wait: 2h is not in 1ms..1h", "--wait", "2h");
    USAGE("--wait: 0 is not in 1ms..1h", "--wait", "0");
    USAGE("--cache: 2m is over the limit of 1m", "--cache", "2m");
    USAGE("--wait: \"5q\" has unknown unit", "--wait", "5q");
    USAGE("--colour: use red, green or blue", "--colour", "pink");
    USAGE("--size: \"1x\" is not a size in 1..1048576 bytes", "--size", "1x");
    USAGE("unexpected argument \"--frob\" (a hint)", "--frob");
    USAGE("unexpected argument \"--json=1\" (a hint)", "--json=1");
    USAGE("unexpected argument \"d\" (a hint)", "a", "b", "c", "d");
    USAGE("--profile goes before the command: delayq --profile NAME t ...", "--profile", "p");
    USAGE("--timeout needs a value", "--timeout");
    USAGE("--tls-ca needs a value", "--tls-ca=");
    USAGE("--min-replicas: \"101\" is not a whole number in 0..100", "--min-replicas", "101");
    USAGE("queue:", "-q", "no spaces");
    cli_reset();
    assert_int_equal(PARSE_U("--timeout", "11m"), DQ_EXIT_USAGE);
    assert_non_null(strstr(err_text, "--timeout: 11m is not in 1ms..10m"));
}

static void
help(void **state)
{
    (void)state;
    cli_reset();
    assert_int_equal(PARSE("--json", "-h", "--frob"), -1); /* help comes first */
    assert_string_equal(err_text, "");
    assert_non_null(strstr(out_text, "usage: delayq t [--json] [--limit N]\n"
                                     "                [--wait DUR]\n"
                                     "       delayq t --path PATH\n"));
    assert_non_null(strstr(out_text, "  an indented line, kept as it is\n"));
    assert_non_null(strstr(out_text, "  -n, --limit N "));
    assert_non_null(strstr(out_text, "delayq help options"));
    assert_non_null(strstr(out_text, "--url"));
    assert_null(strstr(out_text, "--tls-ca")); /* the global block is not repeated */
    for (const char *p = out_text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        if (nl - p > 80)
            fail_msg("over 80 columns: %.*s", (int)(nl - p), p);
        p = nl + 1;
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forms),
        cmocka_unit_test(globals),
        cmocka_unit_test(errors),
        cmocka_unit_test(help),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    free(g.url_owned);
    return rc;
}
