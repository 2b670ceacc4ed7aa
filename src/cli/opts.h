/* SPDX-License-Identifier: MIT */
/*
 * opts.h: the declarative command line, in the way tmux's cmd_entry does it. Each
 * cmd_<name>.c exports one struct cli_cmd: its name, summary, usage, option specs and run
 * function. One parser (opts.c) reads every command's argv against its specs and the
 * global ones, with the messages and exit statuses of cli_usage_error and
 * cli_parse_uint; the same specs print --help and `delayq help --specs`, which the
 * lint checks the completions and man pages against.
 */
#ifndef DQ_CLI_OPTS_H
#define DQ_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cli;

enum cli_type {
    CLI_FLAG, /* no value */
    CLI_STR,  /* any text (CLI_NONEMPTY: not "") */
    CLI_INT,  /* a whole number in min..max */
    CLI_UINT, /* a non-negative whole number in min..max */
    CLI_DUR,  /* a duration (lib/dur.h), in ms; min..max when max > 0 */
    CLI_ENUM, /* one of values[]; num is its index */
    CLI_SIZE, /* bytes: a whole number with an optional k, M or G (1024s) in min..max */
};

enum {
    CLI_NONEMPTY = 1u << 0, /* an empty value is a missing one */
};

struct cli_opt {
    const char *name; /* "delay" for --delay; NULL ends a table */
    char letter;      /* 'n' for -n; 0: none */
    const char *arg;  /* "DUR" as help shows it; NULL for a flag */
    enum cli_type type;
    long long min, max;        /* numbers (ms for durations); both 0: no range */
    const char *limit;         /* the range as messages say it, when not min..max */
    const char *const *values; /* CLI_ENUM: the words, NULL-terminated */
    const char *needs;         /* a missing value: "--NAME needs <needs>" ("a value") */
    unsigned flags;            /* CLI_NONEMPTY */
    const char *help;          /* one paragraph, wrapped by the help printer */
};

struct cli_given {
    const struct cli_opt *opt;
    const char *val; /* in argv; NULL for a flag */
    long long num;   /* numbers, durations (ms), sizes, enum index */
};

/* What cli_parse read: the command's own options in order (every time one is given:
 * the lookups take the last, metrics walks them all for its repeatable -q), and the
 * rest. */
struct cli_args {
    const struct cli_cmd *cmd;
    struct cli_given *given; /* owned */
    size_t ngiven;
    char **pos; /* owned array, NULL-terminated; the strings are argv's */
    int npos;
    int dashdash; /* index in pos of the first argument after "--"; -1: no "--" */
};

struct cli_cmd {
    const char *name;
    const char *summary; /* one line, for delayq --help */
    const char *usage;   /* "delayq NAME ..." lines, without "usage: " */
    const char *about;   /* a few lines, wrapped already */
    const struct cli_opt *opts;
    int max_pos;      /* positional arguments allowed: 0 (none), N, or -1 (any number) */
    const char *hint; /* appended to "unexpected argument" messages, or NULL */
    /* NULL-terminated subcommands: `delayq NAME SUB ...` runs SUB with its own options */
    const struct cli_cmd *const *subs;
    int (*run)(struct cli *g, const struct cli_args *a);
};

/* The options every command takes (util.c applies them), in delayq --help's order. */
extern const struct cli_opt cli_globals[];

/*
 * Reads argv (the command's arguments, without its name) against @c's options, then the
 * global ones, anywhere on the line: "--opt value", "--opt=value", "-x value", "--" ends
 * options, -h/--help prints the help. Global options are applied to @g as they come.
 * Returns DQ_EXIT_OK with @a filled (free it with cli_args_free), -1 after printing the
 * help, or the exit status after printing the error.
 */
int cli_parse(struct cli *g, const struct cli_cmd *c, int argc, char **argv, struct cli_args *a);

void cli_args_free(struct cli_args *a);

/* cli_parse, then @c's run function. */
int cli_run_cmd(struct cli *g, const struct cli_cmd *c, int argc, char **argv);

/* Times option @name (its spec's name; one @c lacks is a bug: abort) was given. */
int cli_count(const struct cli_args *a, const char *name);
/* Whether @name was given. */
bool cli_has(const struct cli_args *a, const char *name);
/* The last value of @name, else @dflt. */
const char *cli_str(const struct cli_args *a, const char *name, const char *dflt);
/* The last number of @name (ms for durations, index for enums), else @dflt. */
long long cli_num(const struct cli_args *a, const char *name, long long dflt);

/* @c's --help: usage, about, its options, and a line pointing to delayq help options. */
void cli_help_cmd(FILE *f, const struct cli_cmd *c);
/* The global and TLS options, complete (delayq --help, delayq help options). */
void cli_help_globals(FILE *f);
/* `delayq help --specs`: the global options, then each command: a line with its name,
 * then one per option, "COMMAND --long -x ARG" ("-" for no letter, no argument), and
 * for a CLI_ENUM its words, comma-separated ("work --log-level - L error,warn,..."). The
 * completions read it, and tests/lint/cli_specs.py checks the man pages against it. */
void cli_print_specs(FILE *f, const struct cli_cmd *const *cmds, size_t n);

#endif /* DQ_CLI_OPTS_H */
