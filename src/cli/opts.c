/* SPDX-License-Identifier: MIT */
/* opts.c: the one command-line parser and the help printed from the same specs (opts.h). */
#include "opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lib/dur.h"

/* The help's width: an 80-column terminal. */
#define WIDTH 80

const struct cli_opt cli_globals[] = {
    {"url", 0, "URL", CLI_STR,
     .help = "redis://[user:password@]host[:port][/db], rediss://... (TLS) "
             "or unix:///path[?db=N] (default: $DELAYQ_URL, else redis://127.0.0.1:6379; password "
             "also from $DELAYQ_PASSWORD); "
             "redis-sentinel://[user:password@]host[:port] [,host[:port]...] "
             "/MASTER[/db] asks those sentinels for MASTER and follows a failover "
             "(rediss-sentinel:// with TLS; the sentinels' own AUTH from $DELAYQ_SENTINEL_USER, "
             "$DELAYQ_SENTINEL_PASSWORD); redis-cluster://host:port[,host:port...]: a Redis "
             "Cluster's seed nodes (rediss-cluster:// over TLS)"},
    {"queue", 'q', "NAME", CLI_STR,
     .help = "queue name (default: $DELAYQ_QUEUE, else \"default\")"},
    {"who", 0, "NAME", CLI_STR, .help = "name recorded in the audit log (default: user@host)"},
    {"timeout", 0, "DUR", CLI_DUR, 1, 600000, .help = "connect and command timeout (default 3s)"},
    {"profile", 0, "NAME", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "before the command: the connection profile NAME of "
             "$XDG_CONFIG_HOME/delayq/config (default: $DELAYQ_PROFILE; see delayq profiles "
             "--help); flags and variables override it"},
    {"min-replicas", 0, "N", CLI_UINT, 0, 100,
     .help = "after each write (enqueue, ack, every operator action) wait up to --timeout "
             "until N replicas have it, else fail with exit 1 (default: $DELAYQ_MIN_REPLICAS, "
             "else 0: do not wait)"},
    {"help", 'h', NULL, CLI_FLAG, .help = "this help (after a command: the command's)"},
    {"tls-ca", 0, "FILE|DIR", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "CAs that may sign the server's certificate (default: the system store)"},
    {"tls-cert", 0, "FILE", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "client certificate, for servers that require one"},
    {"tls-key", 0, "FILE", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "its private key (default: in the --tls-cert file)"},
    {"tls-server-name", 0, "NAME", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "the name the certificate must carry, sent as SNI (default: the URL's host)"},
    {"tls-insecure", 0, NULL, CLI_FLAG, .help = "check nothing (tests only; warns every time)"},
    {NULL},
};

/* ---- reading values ------------------------------------------------------------- */

/* A duration limit as messages say it: the largest unit it is a whole number of. */
static void
dur_text(char *buf, size_t size, long long ms)
{
    static const struct {
        long long ms;
        const char *unit;
    } units[] = {{86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}};

    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ms > 0 && ms % units[i].ms == 0) {
            snprintf(buf, size, "%lld%s", ms / units[i].ms, units[i].unit);
            return;
        }
    }
    snprintf(buf, size, "%lldms", ms);
}

/* "1k" is 1024 bytes, "2M" and "1G" likewise; a bare number is bytes. */
static bool
size_parse(const char *s, long long *out)
{
    char *end;
    long long v, mul = 1;

    errno = 0;
    if (s[0] < '0' || s[0] > '9')
        return false;
    v = strtoll(s, &end, 10);
    if (errno != 0)
        return false;
    if (*end == 'k' || *end == 'K')
        mul = 1LL << 10;
    else if (*end == 'M')
        mul = 1LL << 20;
    else if (*end == 'G')
        mul = 1LL << 30;
    if (mul > 1)
        end++;
    if (*end != '\0' || v > (1LL << 62) / mul)
        return false;
    *out = v * mul;
    return true;
}

/* Checks @val against @o and stores it in *@num; DQ_EXIT_OK or the status after the error. */
static int
value_read(const struct cli *g, const struct cli_opt *o, const char *val, long long *num)
{
    char name[64], lo[DQ_DUR_BUFSZ], hi[DQ_DUR_BUFSZ];
    long long min = o->min, max = o->max;
    dq_err err = {0};
    int64_t ms;

    snprintf(name, sizeof name, "--%s", o->name);
    *num = 0;
    switch (o->type) {
    case CLI_FLAG:
    case CLI_STR:
        return DQ_EXIT_OK;
    case CLI_INT:
    case CLI_UINT:
        if (min == 0 && max == 0) {
            min = o->type == CLI_INT ? -(1LL << 53) : 0;
            max = 1LL << 53;
        }
        return cli_parse_uint(g, name, val, min, max, num);
    case CLI_SIZE:
        if (!size_parse(val, num) || ((min != 0 || max != 0) && (*num < min || *num > max)))
            return cli_usage_error(g,
                                   "%s: \"%s\" is not a size in %lld..%lld bytes (k, M, G: "
                                   "1024s)",
                                   name, val, min, max);
        return DQ_EXIT_OK;
    case CLI_DUR:
        if (dq_dur_parse(val, name, &ms, &err) != DQ_OK)
            return cli_error(g, &err);
        *num = ms;
        if (max <= 0 || (ms >= min && ms <= max))
            return DQ_EXIT_OK;
        dur_text(hi, sizeof hi, max);
        if (min <= 0)
            return cli_usage_error(g, "%s: %s is over the limit of %s", name, val,
                                   o->limit != NULL ? o->limit : hi);
        dur_text(lo, sizeof lo, min);
        if (o->limit != NULL)
            return cli_usage_error(g, "%s: %s is not in %s", name, val, o->limit);
        return cli_usage_error(g, "%s: %s is not in %s..%s", name, val, lo, hi);
    case CLI_ENUM: {
        char list[256] = "";
        size_t n = 0;
        for (; o->values[n] != NULL; n++) {
            if (strcmp(val, o->values[n]) == 0) {
                *num = (long long)n;
                return DQ_EXIT_OK;
            }
        }
        for (size_t k = 0; k < n; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     k == 0       ? ""
                     : k + 1 == n ? " or "
                                  : ", ",
                     o->values[k]);
        return cli_usage_error(g, "%s: use %s", name, list);
    }
    }
    return DQ_EXIT_USAGE;
}

/*
 * Whether argv[*i] is option @o: "--name", "--name=value" or "-x". Sets *@val (NULL for a
 * flag; *@missing when the value is not there) and advances *i past a separate value.
 */
static bool
opt_match(const struct cli_opt *o, int argc, char **argv, int *i, char **val, bool *missing)
{
    char *a = argv[*i];
    size_t n = strlen(o->name);
    bool lng = a[1] == '-' && strncmp(a + 2, o->name, n) == 0;

    *val = NULL;
    *missing = false;
    if (lng && a[2 + n] == '=' && o->arg != NULL) {
        *val = a + 3 + n;
    } else if ((lng && a[2 + n] == '\0') || (o->letter != 0 && a[1] == o->letter && a[2] == '\0')) {
        if (o->arg == NULL)
            return true;
        if (*i + 1 >= argc)
            *missing = true;
        else
            *val = argv[++*i];
    } else {
        return false;
    }
    if (*val != NULL && (o->flags & CLI_NONEMPTY) && (*val)[0] == '\0')
        *missing = true;
    return true;
}

static const struct cli_opt *
opt_find(const struct cli_opt *opts, int argc, char **argv, int *i, char **val, bool *missing)
{
    for (const struct cli_opt *o = opts; o != NULL && o->name != NULL; o++) {
        if (opt_match(o, argc, argv, i, val, missing))
            return o;
    }
    return NULL;
}

int
cli_parse(struct cli *g, const struct cli_cmd *c, int argc, char **argv, struct cli_args *a)
{
    int rc = DQ_EXIT_OK;

    memset(a, 0, sizeof *a);
    a->cmd = c;
    a->dashdash = -1;
    a->given = calloc((size_t)argc + 1, sizeof *a->given);
    a->pos = calloc((size_t)argc + 1, sizeof *a->pos);
    if (a->given == NULL || a->pos == NULL) {
        fprintf(stderr, "%s: out of memory\n", g->prog);
        cli_args_free(a);
        return DQ_EXIT_FAILED;
    }
    for (int i = 0; i < argc && rc == DQ_EXIT_OK; i++) {
        char *s = argv[i], *val;
        const struct cli_opt *o;
        bool missing, global = false;

        if (a->dashdash >= 0 || s[0] != '-' || s[1] == '\0') {
            if (c->max_pos >= 0 && a->npos >= c->max_pos)
                rc = cli_usage_error(g, "unexpected argument \"%s\"%s", s, c->hint ? c->hint : "");
            else
                a->pos[a->npos++] = s;
            continue;
        }
        if (strcmp(s, "--") == 0) {
            a->dashdash = a->npos; /* what follows is positional, even "-x" */
            continue;
        }
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            cli_help_cmd(stdout, c);
            cli_args_free(a);
            return -1;
        }
        /* the command's own options first: work's --timeout, metrics' repeatable -q */
        if ((o = opt_find(c->opts, argc, argv, &i, &val, &missing)) == NULL) {
            o = opt_find(cli_globals, argc, argv, &i, &val, &missing);
            global = true;
        }
        if (o == NULL) {
            rc = cli_usage_error(g, "unexpected argument \"%s\"%s", s, c->hint ? c->hint : "");
        } else if (global && strcmp(o->name, "profile") == 0) {
            rc = cli_usage_error(g,
                                 "--profile goes before the command: delayq --profile NAME "
                                 "%s ...",
                                 c->name);
        } else if (missing) {
            rc = cli_usage_error(g, "--%s needs %s", o->name, o->needs ? o->needs : "a value");
        } else {
            long long num;
            if ((rc = value_read(g, o, val, &num)) != DQ_EXIT_OK)
                break;
            if (global)
                rc = cli_global_set(g, o, val, num);
            else
                a->given[a->ngiven++] = (struct cli_given){o, val, num};
        }
    }
    if (rc != DQ_EXIT_OK)
        cli_args_free(a);
    return rc;
}

void
cli_args_free(struct cli_args *a)
{
    free(a->given);
    free(a->pos);
    a->given = NULL;
    a->pos = NULL;
    a->ngiven = 0;
    a->npos = 0;
}

int
cli_run_cmd(struct cli *g, const struct cli_cmd *c, int argc, char **argv)
{
    struct cli_args a;

    for (const struct cli_cmd *const *s = c->subs; s != NULL && *s != NULL && argc > 0; s++) {
        if (strcmp(argv[0], (*s)->name) == 0) {
            static char prog[64];
            snprintf(prog, sizeof prog, "%s %s", g->prog, (*s)->name);
            g->prog = prog;
            return cli_run_cmd(g, *s, argc - 1, argv + 1);
        }
    }
    int rc = cli_parse(g, c, argc, argv, &a);

    if (rc != DQ_EXIT_OK)
        return rc < 0 ? DQ_EXIT_OK : rc;
    rc = c->run(g, &a);
    cli_args_free(&a);
    return rc;
}

/* ---- looking values up ---------------------------------------------------------- */

/* The spec of @name in @a's command: a name it lacks is a programming error. */
static const struct cli_opt *
spec(const struct cli_args *a, const char *name)
{
    for (const struct cli_opt *o = a->cmd->opts; o != NULL && o->name != NULL; o++) {
        if (strcmp(o->name, name) == 0)
            return o;
    }
    fprintf(stderr, "delayq %s: no option --%s in its table\n", a->cmd->name, name);
    abort();
}

/* The last given entry of @name, or NULL. */
static const struct cli_given *
last(const struct cli_args *a, const char *name)
{
    const struct cli_opt *o = spec(a, name);

    for (size_t i = a->ngiven; i > 0; i--) {
        if (a->given[i - 1].opt == o)
            return &a->given[i - 1];
    }
    return NULL;
}

int
cli_count(const struct cli_args *a, const char *name)
{
    const struct cli_opt *o = spec(a, name);
    int n = 0;

    for (size_t i = 0; i < a->ngiven; i++)
        n += a->given[i].opt == o;
    return n;
}

bool
cli_has(const struct cli_args *a, const char *name)
{
    return last(a, name) != NULL;
}

const char *
cli_str(const struct cli_args *a, const char *name, const char *dflt)
{
    const struct cli_given *e = last(a, name);

    return e != NULL ? e->val : dflt;
}

long long
cli_num(const struct cli_args *a, const char *name, long long dflt)
{
    const struct cli_given *e = last(a, name);

    return e != NULL ? e->num : dflt;
}

/* ---- help ----------------------------------------------------------------------- */

/* "--name ARG" or "-x, --name ARG" */
static void
label(char *buf, size_t size, const struct cli_opt *o)
{
    char sh[8] = "";

    if (o->letter != 0)
        snprintf(sh, sizeof sh, "-%c, ", o->letter);
    snprintf(buf, size, "%s--%s%s%s", sh, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Writes @text word-wrapped to WIDTH, each line after the first indented by @col; the
 * first starts at column @at. */
static void
wrap(FILE *f, const char *text, int col, int at)
{
    const char *p = text;

    while (*p != '\0') {
        const char *end = p, *brk = NULL;
        while (*end != '\0' && (end - p) + at < WIDTH) {
            if (*end == ' ')
                brk = end;
            end++;
        }
        if (*end != '\0' && brk != NULL)
            end = brk; /* else one word longer than a line: printed whole */
        else if (*end != '\0')
            while (*end != '\0' && *end != ' ')
                end++;
        fprintf(f, "%.*s\n", (int)(end - p), p);
        p = *end == ' ' ? end + 1 : end;
        if (*p != '\0')
            fprintf(f, "%*s", col, "");
        at = col;
    }
}

/* The options of @opts from @from until @to (NULL: the end), labels in a column. */
static void
opt_list(FILE *f, const struct cli_opt *from, const struct cli_opt *to)
{
    char l[96];
    int col = 0;

    for (const struct cli_opt *o = from; o->name != NULL && o != to; o++) {
        label(l, sizeof l, o);
        if ((int)strlen(l) > col)
            col = (int)strlen(l);
    }
    col = col > 22 ? 22 : col; /* a longer label gets its help on the next line */
    col += 4;
    for (const struct cli_opt *o = from; o->name != NULL && o != to; o++) {
        label(l, sizeof l, o);
        if ((int)strlen(l) + 2 > col - 2) {
            fprintf(f, "  %s\n%*s", l, col, "");
        } else {
            fprintf(f, "  %-*s", col - 2, l);
        }
        wrap(f, o->help, col, col);
    }
}

/* A command's about text: lines that start with a space are printed as they are (a
 * table, an example); the others are joined into paragraphs and wrapped. */
static void
about(FILE *f, const char *text)
{
    struct dq_buf para = DQ_BUF_INIT;
    const char *p = text;

    for (;;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        if (n == 0 || p[0] == ' ') {
            if (para.len > 0 && !para.failed)
                wrap(f, para.data, 0, 0);
            dq_buf_reset(&para);
            if (n > 0 || nl != NULL)
                fprintf(f, "%.*s\n", (int)n, p);
        } else {
            if (para.len > 0)
                dq_buf_putc(&para, ' ');
            dq_buf_append(&para, p, n);
        }
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    if (para.len > 0 && !para.failed)
        wrap(f, para.data, 0, 0);
    dq_buf_free(&para);
}

void
cli_help_cmd(FILE *f, const struct cli_cmd *c)
{
    const char *p = c->usage;

    /* "usage: " before the first line, its width before the others */
    fprintf(f, "usage: ");
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        fprintf(f, "%.*s\n", (int)n, p);
        p += n;
        if (*p == '\n' && *++p != '\0')
            fprintf(f, "%s", strncmp(p, "delayq ", 7) == 0 ? "       " : "");
    }
    fputc('\n', f);
    about(f, c->about);
    if (c->opts != NULL && c->opts[0].name != NULL) {
        fprintf(f, "\n");
        opt_list(f, c->opts, NULL);
    }
    fprintf(f, "\nGlobal and TLS options (--url, -q, --timeout, ...): delayq help options\n");
}

void
cli_help_globals(FILE *f)
{
    const struct cli_opt *tls = cli_globals;

    while (tls->name != NULL && strncmp(tls->name, "tls-", 4) != 0)
        tls++;
    fprintf(f, "Global options, after the command or anywhere on its line:\n");
    opt_list(f, cli_globals, tls);
    fprintf(f, "TLS options, for rediss:// URLs only (also $DELAYQ_TLS_CA, $DELAYQ_TLS_CERT,\n"
               "$DELAYQ_TLS_KEY, $DELAYQ_TLS_SERVER_NAME, DELAYQ_TLS_INSECURE=1); the server's\n"
               "certificate and name are always checked unless --tls-insecure:\n");
    opt_list(f, tls, NULL);
    fprintf(f, "Exit status: 0 ok, 1 operation failed, 2 usage or bad input, 3 Redis\n"
               "unreachable, timed out or refused the connection (TLS included).\n");
}

static void
spec_lines(FILE *f, const char *who, const struct cli_opt *opts)
{
    for (const struct cli_opt *o = opts; o != NULL && o->name != NULL; o++) {
        char sh[3] = {'-', o->letter, '\0'};
        fprintf(f, "%s --%s %s %s", who, o->name, o->letter != 0 ? sh : "-",
                o->arg != NULL ? o->arg : "-");
        for (size_t k = 0; o->type == CLI_ENUM && o->values[k] != NULL; k++)
            fprintf(f, "%c%s", k == 0 ? ' ' : ',', o->values[k]);
        fputc('\n', f);
    }
}

void
cli_print_specs(FILE *f, const struct cli_cmd *const *cmds, size_t n)
{
    spec_lines(f, "global", cli_globals);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n", cmds[i]->name); /* a command without options is listed too */
        spec_lines(f, cmds[i]->name, cmds[i]->opts);
        /* subcommands' options under the command's name (its one man page lists them),
         * each name once: the first subcommand that has it says whether it takes a value */
        for (const struct cli_cmd *const *s = cmds[i]->subs; s != NULL && *s != NULL; s++) {
            for (const struct cli_opt *o = (*s)->opts; o != NULL && o->name != NULL; o++) {
                bool seen = false;
                for (const struct cli_opt *p = cmds[i]->opts; p != NULL && p->name && !seen; p++)
                    seen = strcmp(p->name, o->name) == 0;
                for (const struct cli_cmd *const *t = cmds[i]->subs; t != s && !seen; t++)
                    for (const struct cli_opt *p = (*t)->opts; p->name != NULL && !seen; p++)
                        seen = strcmp(p->name, o->name) == 0;
                if (!seen) {
                    struct cli_opt one[2] = {*o, {NULL}};
                    spec_lines(f, cmds[i]->name, one);
                }
            }
        }
    }
}
