/* SPDX-License-Identifier: MIT */
/* util.c: shared CLI helpers: options, connecting, exit statuses, safe printing. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/esc.h"
#include "fmt/b64.h"
#include "fmt/mptext.h"
#include "lib/dur.h"

const char cli_global_help[] =
    "Global options:\n"
    "  --url URL        redis://[user:password@]host[:port][/db], rediss://... (TLS)\n"
    "                   or unix:///path[?db=N] (default: $DELAYQ_URL, else\n"
    "                   redis://127.0.0.1:6379; password also from $DELAYQ_PASSWORD)\n"
    "                   redis-cluster://host:port[,host:port...]: a Redis Cluster's\n"
    "                   seed nodes (rediss-cluster:// over TLS)\n"
    "  -q, --queue NAME queue name (default: $DELAYQ_QUEUE, else \"default\")\n"
    "  --who NAME       name recorded in the audit log (default: user@host)\n"
    "  --timeout DUR    connect and command timeout (default 3s)\n"
    "  -h, --help       this help\n"
    "TLS options, for rediss:// URLs only (also $DELAYQ_TLS_CA, $DELAYQ_TLS_CERT,\n"
    "$DELAYQ_TLS_KEY, $DELAYQ_TLS_SERVER_NAME, DELAYQ_TLS_INSECURE=1); the server's\n"
    "certificate and name are always checked unless --tls-insecure:\n"
    "  --tls-ca FILE|DIR       CAs that may sign the server's certificate\n"
    "                          (default: the system store)\n"
    "  --tls-cert FILE         client certificate, for servers that require one\n"
    "  --tls-key FILE          its private key (default: in the --tls-cert file)\n"
    "  --tls-server-name NAME  the name the certificate must carry, sent as SNI\n"
    "                          (default: the URL's host)\n"
    "  --tls-insecure          check nothing (tests only; warns every time)\n"
    "Exit status: 0 ok, 1 operation failed, 2 usage or bad input, 3 Redis unreachable,\n"
    "timed out or refused the connection (TLS included).\n";

int
cli_exit_status(int code)
{
    switch (code) {
    case DQ_OK:
        return DQ_EXIT_OK;
    case DQ_EINVAL:
        return DQ_EXIT_USAGE;
    case DQ_ECONN:
    case DQ_ETIMEOUT:
        return DQ_EXIT_REDIS;
    default:
        return DQ_EXIT_FAILED;
    }
}

void
cli_put_safe(FILE *f, const void *s, size_t len)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_esc_text(&b, s, len, 0);
    if (b.len > 0)
        fwrite(b.data, 1, b.len, f);
    dq_buf_free(&b);
}

int
cli_error(const struct cli *g, const dq_err *err)
{
    fprintf(stderr, "%s: ", g->prog);
    cli_put_safe(stderr, err->msg, strlen(err->msg));
    fputc('\n', stderr);
    return cli_exit_status(err->code);
}

int
cli_usage_error(const struct cli *g, const char *fmt, ...)
{
    va_list ap;
    char msg[512];

    /* the message quotes what the user typed: escape it like anything untrusted */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: ", g->prog);
    cli_put_safe(stderr, msg, strlen(msg));
    fprintf(stderr, " (see --help)\n");
    return DQ_EXIT_USAGE;
}

/* Matches "--name value", "--name=value" or "-s value" at argv[*i]. */
static int
opt_value(int argc, char **argv, int *i, const char *lname, const char *sname, const char **val)
{
    const char *a = argv[*i];
    size_t ln = strlen(lname);

    if (strncmp(a, lname, ln) == 0 && a[ln] == '=') {
        *val = a + ln + 1;
        return 1;
    }
    if (strcmp(a, lname) == 0 || (sname != NULL && strcmp(a, sname) == 0)) {
        if (*i + 1 >= argc)
            return -1;
        *val = argv[++*i];
        return 1;
    }
    return 0;
}

int
cli_global_opt(struct cli *g, int argc, char **argv, int *i)
{
    static const struct {
        const char *lname, *sname;
    } opts[] = {{"--url", NULL},     {"--queue", "-q"},          {"--who", NULL},
                {"--timeout", NULL}, {"--tls-ca", NULL},         {"--tls-cert", NULL},
                {"--tls-key", NULL}, {"--tls-server-name", NULL}};
    const char **tls_dst[] = {&g->tls_ca, &g->tls_cert, &g->tls_key, &g->tls_server_name};
    const char *val = NULL;

    if (strcmp(argv[*i], "--tls-insecure") == 0) {
        g->tls_insecure = true;
        (*i)++;
        return 1;
    }
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        int m = opt_value(argc, argv, i, opts[k].lname, opts[k].sname, &val);
        if (m < 0) {
            cli_usage_error(g, "%s needs a value", opts[k].lname);
            return -1;
        }
        if (m == 0)
            continue;
        if (k == 0) {
            g->url = val;
        } else if (k == 1) {
            dq_err err;
            if (dq_queue_name_check(val, &err) != DQ_OK) {
                cli_error(g, &err);
                return -1;
            }
            g->queue = val;
            g->queue_chosen = true;
        } else if (k == 2) {
            g->who = val;
        } else if (k >= 4) {
            if (val[0] == '\0') {
                cli_usage_error(g, "%s needs a value", opts[k].lname);
                return -1;
            }
            *tls_dst[k - 4] = val;
        } else {
            dq_err err;
            int64_t ms;
            if (dq_dur_parse(val, "--timeout", &ms, &err) != DQ_OK) {
                cli_error(g, &err);
                return -1;
            }
            if (ms < 1 || ms > 600000) {
                cli_usage_error(g, "--timeout: %s is not in 1ms..10m", val);
                return -1;
            }
            g->timeout_ms = (int)ms;
        }
        (*i)++;
        return 1;
    }
    return 0;
}

int
cli_common_opt(struct cli *g, int argc, char **argv, int *i, const char *help)
{
    int m = cli_global_opt(g, argc, argv, i);

    if (m < 0)
        return CLI_ERROR;
    if (m > 0) {
        (*i)--; /* the caller's loop steps past the option */
        return CLI_CONSUMED;
    }
    if (strcmp(argv[*i], "-h") == 0 || strcmp(argv[*i], "--help") == 0) {
        printf("%s%s", help, cli_global_help);
        return CLI_HELP;
    }
    return CLI_NEXT;
}

int
cli_opt(int argc, char **argv, int *i, const char *lname, const char *sname, const char **val)
{
    return opt_value(argc, argv, i, lname, sname, val);
}

/* @flag if given, else the variable @name unless it is empty. */
static const char *
flag_or_env(const char *flag, const char *name)
{
    const char *v = flag != NULL ? flag : getenv(name);

    return v != NULL && v[0] != '\0' ? v : NULL;
}

void
cli_client_opts(const struct cli *g, dq_client_opts *o)
{
    static bool warned; /* once per run, not once per reconnect or scrape */
    const char *insecure = getenv("DELAYQ_TLS_INSECURE");

    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = g->timeout_ms;
    o->command_timeout_ms = g->timeout_ms;
    o->password = flag_or_env(NULL, "DELAYQ_PASSWORD");
    o->who = g->who;
    o->tls_ca = flag_or_env(g->tls_ca, "DELAYQ_TLS_CA");
    o->tls_cert = flag_or_env(g->tls_cert, "DELAYQ_TLS_CERT");
    o->tls_key = flag_or_env(g->tls_key, "DELAYQ_TLS_KEY");
    o->tls_server_name = flag_or_env(g->tls_server_name, "DELAYQ_TLS_SERVER_NAME");
    /* only an explicit yes turns checking off; anything unclear keeps it on */
    o->tls_insecure = g->tls_insecure || (insecure != NULL && (strcmp(insecure, "1") == 0 ||
                                                               strcmp(insecure, "yes") == 0 ||
                                                               strcmp(insecure, "true") == 0));
    if (o->tls_insecure && !warned) {
        warned = true;
        fprintf(stderr,
                "%s: warning: --tls-insecure: the server's certificate and name are NOT "
                "checked; anyone on the network path can read and change this "
                "connection\n",
                g->prog);
    }
}

int
cli_connect(struct cli *g)
{
    dq_client_opts o;
    dq_err err = {0};

    if (g->client != NULL)
        return DQ_EXIT_OK;
    cli_client_opts(g, &o);
    if (dq_client_open(g->url, &o, &g->client, &err) != DQ_OK)
        return cli_error(g, &err);
    return DQ_EXIT_OK;
}

int
cli_parse_uint(const struct cli *g, const char *opt, const char *s, long long min, long long max,
               long long *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "%s: %s: \"", g->prog, opt);
        cli_put_safe(stderr, s, strlen(s));
        fprintf(stderr, "\" is not a whole number in %lld..%lld\n", min, max);
        return DQ_EXIT_USAGE;
    }
    *out = v;
    return DQ_EXIT_OK;
}

char *
cli_read_all(FILE *f, size_t max, size_t *len)
{
    struct dq_buf b = DQ_BUF_INIT;
    char chunk[65536];
    size_t n;

    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        dq_buf_append(&b, chunk, n);
        if (b.len > max)
            break;
    }
    if (ferror(f) || b.failed) {
        dq_buf_free(&b);
        return NULL;
    }
    return dq_buf_steal(&b, len);
}
