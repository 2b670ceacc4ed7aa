/* SPDX-License-Identifier: MIT */
/*
 * profile.c: the connection profiles file (profile.h). Written by hand: the format is a
 * dozen keys in named sections, and Debian's INI libraries (libinih, glib's key files)
 * would either accept what we must refuse (keys outside a section, duplicates) or pull
 * in far more than a parser of a few lines needs.
 */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "delayq.h"
#include "lib/url.h"

/* The keys, in the order `delayq profiles` and messages name them. */
static const char *const keys[] = {
    "url",    "user",      "password", "password-file",   "password-command",
    "tls-ca", "tls-cert",  "tls-key",  "tls-server-name", "min-replicas",
    "queue",  "read-only",
};
enum {
    K_URL,
    K_USER,
    K_PASSWORD,
    K_PASSWORD_FILE,
    K_PASSWORD_COMMAND,
    K_TLS_CA,
    K_TLS_CERT,
    K_TLS_KEY,
    K_TLS_SERVER_NAME,
    K_MIN_REPLICAS,
    K_QUEUE,
    K_READ_ONLY,
    K_COUNT
};

static int fail(char *why, size_t size, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int
fail(char *why, size_t size, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    int n =
        line > 0 ? snprintf(why, size, "%s:%d: ", file, line) : snprintf(why, size, "%s: ", file);

    if (n < 0 || (size_t)n >= size)
        return -1;
    va_start(ap, fmt);
    vsnprintf(why + n, size - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static char **
slot(struct profile *p, int k)
{
    char **s[] = {&p->url,    &p->user,     &p->password, &p->password_file,  &p->password_command,
                  &p->tls_ca, &p->tls_cert, &p->tls_key,  &p->tls_server_name};
    return k < (int)(sizeof s / sizeof s[0]) ? s[k] : NULL;
}

static void
profile_clear(struct profile *p)
{
    if (p->password != NULL)
        memset(p->password, 0, strlen(p->password));
    for (int k = 0; slot(p, k) != NULL; k++)
        free(*slot(p, k));
    free(p->queue);
    memset(p, 0, sizeof *p);
}

void
profile_free(struct profiles *p)
{
    for (size_t i = 0; i < p->n; i++)
        profile_clear(&p->v[i]);
    free(p->v);
    memset(p, 0, sizeof *p);
}

const struct profile *
profile_find(const struct profiles *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++) {
        if (strcmp(p->v[i].name, name) == 0)
            return &p->v[i];
    }
    return NULL;
}

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* A copy of @s (@n bytes), "~/" at the start made $HOME/ for the file keys. */
static char *
value_copy(const char *s, size_t n, bool path)
{
    const char *home = getenv("HOME");
    size_t pre = path && n >= 2 && s[0] == '~' && s[1] == '/' && home != NULL ? strlen(home) : 0;
    char *v = malloc(pre + n + 1);

    if (v == NULL)
        return NULL;
    if (pre > 0) {
        memcpy(v, home, pre);
        memcpy(v + pre, s + 1, n - 1);
        v[pre + n - 1] = '\0';
    } else {
        memcpy(v, s, n);
        v[n] = '\0';
    }
    return v;
}

/* Whether @url carries a password: as the parser reads it, else (a URL that does not
 * parse, refused only when used) whether it has user info with a ':' in it, so that a
 * typo elsewhere in the URL does not let its password skip the permission check. */
static bool
url_holds_password(const char *url)
{
    struct dq_url u;
    bool has;
    char *redacted;
    size_t len;

    if (dq_url_parse(url, &u, NULL) == DQ_OK) {
        has = u.has_password;
        memset(u.password, 0, sizeof u.password);
        return has;
    }
    len = dq_url_redact(url, NULL, 0) + 1;
    if ((redacted = malloc(len)) == NULL)
        return true; /* cannot tell: take it as a secret */
    dq_url_redact(url, redacted, len);
    has = strcmp(redacted, url) != 0;
    free(redacted);
    return has;
}

/* One "key = value" of @p; -1 with the reason. */
static int
set_key(struct profile *p, const char *key, size_t kn, const char *val, size_t vn, const char *file,
        int line, char *why, size_t size)
{
    int k;
    char tmp[32];

    for (k = 0; k < K_COUNT; k++) {
        if (strlen(keys[k]) == kn && memcmp(keys[k], key, kn) == 0)
            break;
    }
    if (k == K_COUNT)
        return fail(why, size, file, line,
                    "unknown key \"%.*s\" (known: url, user, password, password-file, "
                    "password-command, tls-ca, tls-cert, tls-key, tls-server-name, "
                    "min-replicas, queue, read-only)",
                    (int)(kn > 64 ? 64 : kn), key);
    if (vn == 0)
        return fail(why, size, file, line, "%s needs a value", keys[k]);
    if (vn > PROFILE_VALUE_MAX)
        return fail(why, size, file, line, "%s: value is %zu bytes, over the limit of %d", keys[k],
                    vn, PROFILE_VALUE_MAX);
    if (memchr(val, '\0', vn) != NULL)
        return fail(why, size, file, line, "%s: value holds a NUL byte", keys[k]);
    if (k == K_MIN_REPLICAS || k == K_READ_ONLY) {
        int *dst = k == K_MIN_REPLICAS ? &p->min_replicas : &p->read_only;
        if (*dst != -1)
            return fail(why, size, file, line, "%s is set twice in [%s]", keys[k], p->name);
        snprintf(tmp, sizeof tmp, "%.*s", (int)(vn < sizeof tmp ? vn : sizeof tmp - 1), val);
        if (k == K_READ_ONLY) {
            if (strcmp(tmp, "yes") == 0 || strcmp(tmp, "true") == 0 || strcmp(tmp, "1") == 0)
                *dst = 1;
            else if (strcmp(tmp, "no") == 0 || strcmp(tmp, "false") == 0 || strcmp(tmp, "0") == 0)
                *dst = 0;
            else
                return fail(why, size, file, line, "read-only: \"%s\" is not yes or no", tmp);
        } else {
            char *end;
            long v;
            errno = 0;
            v = strtol(tmp, &end, 10);
            if (vn >= sizeof tmp || errno != 0 || end == tmp || *end != '\0' || v < 0 || v > 100)
                return fail(why, size, file, line,
                            "min-replicas: \"%s\" is not a whole number in 0..100", tmp);
            *dst = (int)v;
        }
        return 0;
    }
    char **dst = k == K_QUEUE ? &p->queue : slot(p, k);
    if (*dst != NULL)
        return fail(why, size, file, line, "%s is set twice in [%s]", keys[k], p->name);
    if ((*dst = value_copy(val, vn,
                           k == K_PASSWORD_FILE || k == K_TLS_CA || k == K_TLS_CERT ||
                               k == K_TLS_KEY)) == NULL)
        return fail(why, size, file, line, "out of memory");
    if (k == K_QUEUE) {
        dq_err err;
        if (dq_queue_name_check(*dst, &err) != DQ_OK)
            return fail(why, size, file, line, "%s", err.msg);
    }
    if (k == K_URL)
        p->url_password = url_holds_password(*dst);
    return 0;
}

/* A [name] header at @s (@n bytes, trimmed, starting with '['). */
static int
new_section(struct profiles *out, const char *s, size_t n, const char *file, int line, char *why,
            size_t size)
{
    struct profile *grown;
    size_t nl;

    if (n < 2 || s[n - 1] != ']')
        return fail(why, size, file, line, "a section header is \"[name]\"");
    s++;
    nl = n - 2;
    if (nl == 0 || nl > PROFILE_NAME_MAX)
        return fail(why, size, file, line, "profile name must be 1..%d bytes (got %zu)",
                    PROFILE_NAME_MAX, nl);
    for (size_t i = 0; i < nl; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return fail(why, size, file, line,
                        "byte %zu of the profile name is not one of [A-Za-z0-9._-]", i + 1);
    }
    for (size_t i = 0; i < out->n; i++) {
        if (strlen(out->v[i].name) == nl && memcmp(out->v[i].name, s, nl) == 0)
            return fail(why, size, file, line, "profile [%.*s] is defined twice (first on line %d)",
                        (int)nl, s, out->v[i].line);
    }
    if (out->n == PROFILE_COUNT_MAX)
        return fail(why, size, file, line, "more than %d profiles", PROFILE_COUNT_MAX);
    grown = realloc(out->v, (out->n + 1) * sizeof *grown);
    if (grown == NULL)
        return fail(why, size, file, line, "out of memory");
    out->v = grown;
    struct profile *p = &out->v[out->n++];
    memset(p, 0, sizeof *p);
    memcpy(p->name, s, nl);
    p->line = line;
    p->min_replicas = -1;
    p->read_only = -1;
    return 0;
}

int
profile_parse(const char *text, size_t len, const char *file, struct profiles *out, char *why,
              size_t size)
{
    size_t at = 0;
    int line = 0;

    memset(out, 0, sizeof *out);
    if (len > PROFILE_FILE_MAX) {
        fail(why, size, file, 0, "%zu bytes, over the limit of %d", len, PROFILE_FILE_MAX);
        return -1;
    }
    while (at < len) {
        const char *s = text + at, *nl = memchr(s, '\n', len - at);
        size_t n = nl != NULL ? (size_t)(nl - s) : len - at;
        const char *eq;

        at += n + (nl != NULL);
        line++;
        while (n > 0 && is_space(*s))
            s++, n--;
        while (n > 0 && is_space(s[n - 1]))
            n--;
        if (n == 0 || s[0] == '#' || s[0] == ';')
            continue;
        if (s[0] == '[') {
            if (new_section(out, s, n, file, line, why, size) != 0)
                goto bad;
            continue;
        }
        eq = memchr(s, '=', n);
        if (eq == NULL || eq == s) {
            fail(why, size, file, line, "expected \"key = value\", \"[name]\" or a # comment");
            goto bad;
        }
        if (out->n == 0) {
            fail(why, size, file, line, "\"key = value\" before the first [name]");
            goto bad;
        }
        size_t kn = (size_t)(eq - s), vn = n - kn - 1;
        const char *val = eq + 1;
        while (kn > 0 && is_space(s[kn - 1]))
            kn--;
        while (vn > 0 && is_space(*val))
            val++, vn--;
        if (set_key(&out->v[out->n - 1], s, kn, val, vn, file, line, why, size) != 0)
            goto bad;
        const struct profile *p = &out->v[out->n - 1];
        if ((p->password != NULL || p->url_password) && !out->has_password) {
            out->has_password = true;
            out->secret_at = out->n - 1;
        }
    }
    return 0;
bad:
    profile_free(out);
    return -1;
}

bool
profile_path(char *buf, size_t size)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int n;

    if (xdg != NULL && xdg[0] == '/')
        n = snprintf(buf, size, "%s/delayq/config", xdg);
    else if (home != NULL && home[0] != '\0')
        n = snprintf(buf, size, "%s/.config/delayq/config", home);
    else
        return false;
    return n > 0 && (size_t)n < size;
}

/* Refuses a file that holds a secret and that others may read (ssh's rule). */
static int
private_check(const char *path, const struct stat *st, const char *what, char *why, size_t size)
{
    if ((st->st_mode & 077) != 0)
        return fail(why, size, path, 0,
                    "%s, and its permissions (%03o) let others read it; refusing to use it: "
                    "chmod 600 %s",
                    what, (unsigned)(st->st_mode & 0777), path);
    return 0;
}

int
profile_load(const char *path, struct profiles *out, char *why, size_t size)
{
    struct stat st;
    char *text;
    ssize_t got;
    int fd, rc;

    memset(out, 0, sizeof *out);
    /* a symlink (dotfiles managers make them) is fine: fstat checks its target */
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 1;
    if (fd < 0)
        return fail(why, size, path, 0, "cannot open: %s", strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(why, size, path, 0, "not a regular file");
    }
    /* password-command runs what the file says: a file someone else may change is
     * someone else's code (ssh refuses such a config too) */
    if ((st.st_uid != getuid() && st.st_uid != 0) || (st.st_mode & 022) != 0) {
        close(fd);
        return fail(why, size, path, 0,
                    "others may change this file (owner uid %u, permissions %03o); refusing "
                    "to use it: chmod 600 %s",
                    (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777), path);
    }
    if (st.st_size > PROFILE_FILE_MAX) {
        close(fd);
        return fail(why, size, path, 0, "%lld bytes, over the limit of %d", (long long)st.st_size,
                    PROFILE_FILE_MAX);
    }
    text = malloc((size_t)st.st_size + 1);
    if (text == NULL) {
        close(fd);
        return fail(why, size, path, 0, "out of memory");
    }
    got = read(fd, text, (size_t)st.st_size + 1);
    close(fd);
    if (got < 0 || got > st.st_size) {
        free(text);
        return fail(why, size, path, 0, "cannot read (or it changed while read)");
    }
    rc = profile_parse(text, (size_t)got, path, out, why, size);
    memset(text, 0, (size_t)got);
    free(text);
    if (rc == 0 && out->has_password) {
        const struct profile *p = &out->v[out->secret_at];
        char what[160];
        snprintf(what, sizeof what, "it holds a password (%s of profile %s)",
                 p->password != NULL ? "password =" : "in the url", p->name);
        if (private_check(path, &st, what, why, size) != 0) {
            profile_free(out);
            return -1;
        }
    }
    return rc;
}

/* The first line of @s (@n bytes) into @buf; -1 when it does not fit. */
static int
first_line(const char *s, size_t n, char *buf, size_t size)
{
    size_t l = 0;

    while (l < n && s[l] != '\n' && s[l] != '\r')
        l++;
    if (l >= size)
        return -1;
    memcpy(buf, s, l);
    buf[l] = '\0';
    return 0;
}

static int
password_file(const struct profile *p, char *buf, size_t size, char *why, size_t wsize)
{
    char data[1024];
    struct stat st;
    ssize_t got;
    int fd = open(p->password_file, O_RDONLY | O_CLOEXEC);
    int rc = -1;

    if (fd < 0)
        return fail(why, wsize, p->password_file, 0, "password-file of profile %s: %s", p->name,
                    strerror(errno));
    if (fstat(fd, &st) != 0 ||
        private_check(p->password_file, &st, "it is the password-file of a profile", why, wsize)) {
        close(fd);
        return -1;
    }
    got = read(fd, data, sizeof data);
    close(fd);
    if (got < 0)
        fail(why, wsize, p->password_file, 0, "cannot read: %s", strerror(errno));
    else if (got == 0 || first_line(data, (size_t)got, buf, size) != 0 || buf[0] == '\0')
        fail(why, wsize, p->password_file, 0, "its first line must be a password of 1..%zu bytes",
             size - 1);
    else
        rc = 1;
    memset(data, 0, sizeof data);
    return rc;
}

static int
password_command(const struct profile *p, char *buf, size_t size, char *why, size_t wsize)
{
    char data[1024];
    size_t n = 0;
    int status, rc = -1;
    FILE *f;

    fflush(NULL);
    f = popen(p->password_command, "r");
    if (f == NULL)
        return fail(why, wsize, "password-command", 0, "of profile %s: cannot run: %s", p->name,
                    strerror(errno));
    n = fread(data, 1, sizeof data, f);
    while (fgetc(f) != EOF) /* the rest, so the command is not killed by SIGPIPE */
        ;
    status = pclose(f);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail(why, wsize, "password-command", 0, "of profile %s failed (status %d)", p->name,
             status == -1        ? -1
             : WIFEXITED(status) ? WEXITSTATUS(status)
                                 : 128 + WTERMSIG(status));
    else if (n == 0 || first_line(data, n, buf, size) != 0 || buf[0] == '\0')
        fail(why, wsize, "password-command", 0,
             "of profile %s: the first line it prints must be a password of 1..%zu bytes", p->name,
             size - 1);
    else
        rc = 1;
    memset(data, 0, sizeof data);
    return rc;
}

int
profile_password(const struct profile *p, char *buf, size_t size, char *why, size_t wsize)
{
    if (p->password != NULL) {
        if (strlen(p->password) >= size)
            return fail(why, wsize, "password", 0, "of profile %s: longer than %zu bytes", p->name,
                        size - 1);
        snprintf(buf, size, "%s", p->password);
        return 1;
    }
    if (p->password_file != NULL)
        return password_file(p, buf, size, why, wsize);
    if (p->password_command != NULL)
        return password_command(p, buf, size, why, wsize);
    return 0;
}
