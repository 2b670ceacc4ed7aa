/* SPDX-License-Identifier: MIT */
/* util.c: shared CLI helpers: the global options, connecting, exit statuses, safe printing. */
#include "cli.h"

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt/esc.h"
#include "fmt/b64.h"
#include "fmt/health.h"
#include "fmt/json.h"
#include "fmt/mptext.h"
#include "lib/dur.h"
#include "lib/url.h"
#include "opts.h"
#include "profile.h"

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

bool
cli_outcome_unknown(const struct cli *g, const dq_err *err)
{
    return (err->code == DQ_ETIMEOUT || err->code == DQ_ECONN) && g->client != NULL &&
           dq_client_unanswered(g->client);
}

int
cli_action_error(const struct cli *g, const dq_err *err, const char *check)
{
    int rc = cli_error(g, err);

    if (!cli_outcome_unknown(g, err))
        return rc;
    fprintf(stderr, "%s: outcome unknown: ", g->prog);
    if (check != NULL)
        cli_put_safe(stderr, check, strlen(check));
    else
        fprintf(stderr, "check the audit log (delayq audit -q %s)", g->queue);
    fprintf(stderr, "; Redis had the whole command when the reply failed, so it may have run\n");
    return rc;
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

/* Whether @url (NULL: the default) carries a password of its own. */
static bool
url_has_password(const char *url)
{
    struct dq_url u;
    bool has = url != NULL && dq_url_parse(url, &u, NULL) == DQ_OK && u.has_password;

    if (url != NULL)
        memset(u.password, 0, sizeof u.password);
    return has;
}

static bool
env_set(const char *name)
{
    const char *v = getenv(name);

    return v != NULL && v[0] != '\0';
}

void
cli_guard_secrets(const struct cli *g)
{
    static bool done;

    if (done || !(env_set("DELAYQ_PASSWORD") || env_set("DELAYQ_SENTINEL_PASSWORD") ||
                  url_has_password(g->url) || g->password[0] != '\0' ||
                  (g->profiles != NULL && g->profiles->has_password)))
        return;
    done = true;
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/*
 * A --url value (in argv) that holds a password: returns a copy for use, and overwrites
 * the password's bytes in argv with '*', so ps and /proc/PID/cmdline no longer show it
 * (they read the process's own argument memory), and warns, as redis-cli does. The
 * password was visible until now: the warning says what to use instead.
 */
static const char *
url_take(struct cli *g, char *val)
{
    bool unix_url = strncasecmp(val, "unix:", 5) == 0;
    char *from = strstr(val, "://"), *at = NULL, *colon;

    if (!url_has_password(val) || from == NULL)
        return val;
    free(g->url_owned);
    if ((g->url_owned = strdup(val)) == NULL)
        return val;
    g->url = g->url_owned;
    cli_guard_secrets(g);
    from += 3;
    /* the user info ends at the last '@' (unix://: the last "@/"), as url.c reads it */
    for (char *q = from; *q != '\0'; q++) {
        if (*q == '@' && (!unix_url || q[1] == '/'))
            at = q;
    }
    colon = at != NULL ? memchr(from, ':', (size_t)(at - from)) : NULL;
    if (colon != NULL)
        memset(colon + 1, '*', (size_t)(at - colon - 1));
    fprintf(stderr,
            "%s: warning: a password in --url can be read by other users of this machine "
            "(ps, /proc) while delayq starts; it is now wiped from the command line. Use "
            "DELAYQ_PASSWORD or a profile instead (delayq profiles --help)\n",
            g->prog);
    return g->url_owned;
}

int
cli_global_set(struct cli *g, const struct cli_opt *o, char *val, long long num)
{
    const char *n = o->name;
    dq_err err = {0};

    if (strcmp(n, "url") == 0) {
        g->url = url_take(g, val);
        g->url_given = true;
    } else if (strcmp(n, "queue") == 0) {
        if (dq_queue_name_check(val, &err) != DQ_OK)
            return cli_error(g, &err);
        g->queue = val;
        g->queue_chosen = g->queue_flag = true;
    } else if (strcmp(n, "who") == 0) {
        g->who = val;
    } else if (strcmp(n, "timeout") == 0) {
        g->timeout_ms = (int)num;
    } else if (strcmp(n, "min-replicas") == 0) {
        g->min_replicas = (int)num;
    } else if (strcmp(n, "tls-insecure") == 0) {
        g->tls_insecure = true;
    } else if (strcmp(n, "tls-ca") == 0) {
        g->tls_ca = val;
    } else if (strcmp(n, "tls-cert") == 0) {
        g->tls_cert = val;
    } else if (strcmp(n, "tls-key") == 0) {
        g->tls_key = val;
    } else if (strcmp(n, "tls-server-name") == 0) {
        g->tls_server_name = val;
    } else {
        abort(); /* a global in opts.c's table that is not applied here */
    }
    return DQ_EXIT_OK;
}

/* @flag if given, else the variable @name unless it is empty. */
static const char *
flag_or_env(const char *flag, const char *name)
{
    const char *v = flag != NULL ? flag : getenv(name);

    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* @v, else the profile's @pv. */
static const char *
or_profile(const char *v, const char *pv)
{
    return v != NULL ? v : pv;
}

/* "user@host" of this process (the connection name's tail). */
static void
user_host(char *buf, size_t size)
{
    struct passwd pwd, *pw = NULL;
    char pwbuf[1024], host[64] = "?";
    const char *user = getenv("USER");

    if (getpwuid_r(getuid(), &pwd, pwbuf, sizeof pwbuf, &pw) == 0 && pw != NULL)
        user = pw->pw_name;
    (void)gethostname(host, sizeof host - 1);
    snprintf(buf, size, "%s@%s", user != NULL ? user : "?", host);
}

/* The connection name: delayq:work:host:pid for a worker (one per process, like its
 * registry name), delayq:top:user@host, delayq:cli:COMMAND:user@host for the rest. */
static void
client_name(struct cli *g)
{
    const char *cmd = strncmp(g->prog, "delayq ", 7) == 0 ? g->prog + 7 : g->prog;
    char uh[128], host[64] = "?";

    if (strcmp(cmd, "work") == 0) {
        (void)gethostname(host, sizeof host - 1);
        snprintf(g->client_name, sizeof g->client_name, "delayq:work:%s:%ld", host, (long)getpid());
        return;
    }
    user_host(uh, sizeof uh);
    if (strcmp(cmd, "top") == 0)
        snprintf(g->client_name, sizeof g->client_name, "delayq:top:%s", uh);
    else
        snprintf(g->client_name, sizeof g->client_name, "delayq:cli:%s:%s", cmd, uh);
}

/* $DELAYQ_MIN_REPLICAS: 0 when unset; -1 when not a number, which dq_client_open refuses
 * (a typo must not silently turn the check off). */
static int
env_min_replicas(void)
{
    const char *v = flag_or_env(NULL, "DELAYQ_MIN_REPLICAS");
    char *end;
    long n;

    if (v == NULL)
        return 0;
    n = strtol(v, &end, 10);
    return *end == '\0' && n >= 0 && n <= 100 ? (int)n : -1;
}

/* A TLS private key others may read is warned about, once per run: ssh refuses such a
 * key, but a key file shared by design (a group of services) is the operator's call. */
static void
key_check(struct cli *g, const char *key)
{
    struct stat st;

    if (key == NULL || g->key_warning[0] != '\0' || stat(key, &st) != 0 || (st.st_mode & 077) == 0)
        return;
    snprintf(g->key_warning, sizeof g->key_warning,
             "tls-key %.200s: its permissions (%03o) let others read the private key; chmod "
             "600 it",
             key, (unsigned)(st.st_mode & 0777));
    fprintf(stderr, "%s: warning: ", g->prog);
    cli_put_safe(stderr, g->key_warning, strlen(g->key_warning));
    fputc('\n', stderr);
}

int
cli_client_opts(struct cli *g, dq_client_opts *o)
{
    static bool warned; /* once per run, not once per reconnect or scrape */
    const char *insecure = getenv("DELAYQ_TLS_INSECURE");
    const struct profile *p = g->profile;
    static const struct profile none = {.min_replicas = -1, .read_only = -1};

    if (p == NULL)
        p = &none;
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = g->timeout_ms;
    o->command_timeout_ms = g->timeout_ms;
    o->password = flag_or_env(NULL, "DELAYQ_PASSWORD");
    /* the profile's password goes with its server: not to a --url that has its own */
    if (o->password == NULL && g->profile != NULL && !url_has_password(g->url)) {
        char why[400];
        if (g->password[0] == '\0' &&
            profile_password(p, g->password, sizeof g->password, why, sizeof why) < 0) {
            fprintf(stderr, "%s: ", g->prog);
            cli_put_safe(stderr, why, strlen(why));
            fputc('\n', stderr);
            return DQ_EXIT_USAGE;
        }
        o->password = g->password[0] != '\0' ? g->password : NULL;
    }
    o->user = p->user;
    o->who = g->who;
    o->tls_ca = or_profile(flag_or_env(g->tls_ca, "DELAYQ_TLS_CA"), p->tls_ca);
    o->tls_cert = or_profile(flag_or_env(g->tls_cert, "DELAYQ_TLS_CERT"), p->tls_cert);
    o->tls_key = or_profile(flag_or_env(g->tls_key, "DELAYQ_TLS_KEY"), p->tls_key);
    o->tls_server_name =
        or_profile(flag_or_env(g->tls_server_name, "DELAYQ_TLS_SERVER_NAME"), p->tls_server_name);
    /* without tls-key, the key is in the tls-cert file */
    key_check(g, o->tls_key != NULL ? o->tls_key : o->tls_cert);
    if (g->client_name[0] == '\0')
        client_name(g);
    o->client_name = g->client_name;
    o->sentinel_user = flag_or_env(NULL, "DELAYQ_SENTINEL_USER");
    o->sentinel_password = flag_or_env(NULL, "DELAYQ_SENTINEL_PASSWORD");
    cli_guard_secrets(g); /* a profile's password, read just now */
    /* a flag or profile value, 0 included, wins over the variable */
    o->min_replicas = g->min_replicas >= 0 ? g->min_replicas : env_min_replicas();
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
    return DQ_EXIT_OK;
}

int
cli_connect(struct cli *g)
{
    dq_client_opts o;
    dq_err err = {0};
    int rc;

    if (g->client != NULL)
        return DQ_EXIT_OK;
    if ((rc = cli_client_opts(g, &o)) != DQ_EXIT_OK)
        return rc;
    if (dq_client_open(g->url, &o, &g->client, &err) != DQ_OK)
        return cli_error(g, &err);
    return DQ_EXIT_OK;
}

/* Registered names read for a suggestion: enough for any real server, bounded for a
 * registry someone filled with junk (the suggestion then comes from these only). */
#define SUGGEST_FROM 10000

void
cli_unknown_queue(struct cli *g, char *buf, size_t size)
{
    dq_queues q;
    dq_err err = {0};
    bool got = dq_queues_get(g->client, SUGGEST_FROM, &q, &err) == DQ_OK;

    dq_health_unknown_queue(buf, size, g->queue, dq_client_endpoint(g->client), got ? &q : NULL);
    if (got)
        dq_queues_free(&q);
}

int
cli_connect_queue(struct cli *g)
{
    dq_err err = {0};
    bool known = false;
    char msg[512];
    int rc;

    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_queue_known(g->client, g->queue, &known, &err) != DQ_OK)
        return cli_error(g, &err);
    if (known)
        return DQ_EXIT_OK;
    cli_unknown_queue(g, msg, sizeof msg);
    fprintf(stderr, "%s: ", g->prog);
    cli_put_safe(stderr, msg, strlen(msg));
    fputc('\n', stderr);
    return DQ_EXIT_FAILED;
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

    /* no more than one byte past @max: enough to tell it is over */
    while (b.len <= max &&
           (n = fread(chunk, 1, max + 1 - b.len < sizeof chunk ? max + 1 - b.len : sizeof chunk,
                      f)) > 0)
        dq_buf_append(&b, chunk, n);
    if (ferror(f) || b.failed) {
        dq_buf_free(&b);
        return NULL;
    }
    return dq_buf_steal(&b, len);
}

int
cli_payload_limit(struct cli *g, size_t *limit, char *why, size_t size)
{
    dq_config cfg;
    dq_err err = {0};
    int rc;

    *limit = CLI_READ_MAX;
    snprintf(why, size, "512 MiB");
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;
    /* a config this client may not read leaves the hard cap (the script checks anyway);
     * a server that does not answer would not take the payload either */
    if (dq_config_get(g->client, g->queue, &cfg, &err) != DQ_OK)
        return err.code == DQ_ECONN || err.code == DQ_ETIMEOUT ? cli_error(g, &err) : DQ_EXIT_OK;
    if (cfg.max_payload <= 0 || (uint64_t)cfg.max_payload >= CLI_READ_MAX)
        return DQ_EXIT_OK;
    *limit = (size_t)cfg.max_payload;
    snprintf(why, size, "max_payload (%lld bytes) of queue %s", (long long)cfg.max_payload,
             g->queue);
    return DQ_EXIT_OK;
}

int
cli_payload_read(struct cli *g, const char *json, const char *file, bool use_stdin,
                 struct dq_buf *mp, char **raw, const void **data, size_t *len)
{
    char limit_why[160];
    size_t limit, raw_len = 0;
    dq_err err = {0};
    int rc;

    if (json != NULL) {
        if (dq_json_to_mp(mp, json, strlen(json), &err) != DQ_OK)
            return cli_error(g, &err);
        if ((rc = cli_connect(g)) != DQ_EXIT_OK)
            return rc;
        *data = mp->data;
        *len = mp->len;
        return DQ_EXIT_OK;
    }
    FILE *f = use_stdin ? stdin : fopen(file, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: --file: cannot open \"", g->prog);
        cli_put_safe(stderr, file, strlen(file));
        fprintf(stderr, "\": %s\n", strerror(errno));
        return DQ_EXIT_USAGE;
    }
    if ((rc = cli_payload_limit(g, &limit, limit_why, sizeof limit_why)) == DQ_EXIT_OK)
        *raw = cli_read_all(f, limit, &raw_len);
    if (f != stdin)
        fclose(f);
    if (rc != DQ_EXIT_OK)
        return rc;
    if (*raw == NULL) {
        const char *from = use_stdin ? "stdin" : file;
        fprintf(stderr, "%s: cannot read the payload from ", g->prog);
        cli_put_safe(stderr, from, strlen(from));
        fputc('\n', stderr);
        return DQ_EXIT_USAGE;
    }
    if (raw_len > limit) {
        fprintf(stderr, "%s: payload: over ", g->prog);
        cli_put_safe(stderr, limit_why, strlen(limit_why));
        fputc('\n', stderr);
        return DQ_EXIT_USAGE;
    }
    *data = *raw;
    *len = raw_len;
    return DQ_EXIT_OK;
}
