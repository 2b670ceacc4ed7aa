/* SPDX-License-Identifier: MIT */
/*
 * net.c: sockets and TLS for client.c. The only file that includes OpenSSL.
 *
 * Every fd is non-blocking from the start and every wait is a poll() against a
 * deadline: a connect, a handshake with a server that never answers, a read of a reply
 * that never comes all end at their timeout. OpenSSL's WANT_READ / WANT_WRITE tell which
 * way to wait. Writes never raise SIGPIPE: plain sockets use MSG_NOSIGNAL, and around
 * OpenSSL's writes SIGPIPE is blocked for the thread and a pending one consumed (a
 * library must not kill its host because a server went away).
 */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "clock.h"
#include "err.h"

struct dq_tls {
    SSL_CTX *ctx; /* one reference, shared through SSL_CTX_up_ref */
    char name[256];
    bool verify;
    bool has_cert;
    bool name_fixed; /* tls_server_name was given: dq_tls_ref_named keeps it */
    bool asked;      /* OpenSSL asked for a passphrase: the key is encrypted */
};

/* ---- TLS settings --------------------------------------------------------------------- */

/* The reason of the earliest queued OpenSSL error, then the queue is emptied. */
static void
ssl_reason(char *buf, size_t size, const char *fallback)
{
    unsigned long e = ERR_get_error();
    const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;

    if (r != NULL)
        snprintf(buf, size, "%s", r);
    else if (e != 0)
        ERR_error_string_n(e, buf, size);
    else
        snprintf(buf, size, "%s", fallback);
    ERR_clear_error();
}

/* An encrypted key must fail, not prompt on the terminal (OpenSSL's default); the
 * question itself says why it failed (OpenSSL's reason is "interrupted or cancelled"). */
static int
no_passphrase(char *buf, int size, int rwflag, void *arg)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    if (arg != NULL)
        ((struct dq_tls *)arg)->asked = true;
    return -1;
}

static int
file_error(dq_err *err, const char *opt, const char *path)
{
    char why[160];

    ssl_reason(why, sizeof why, "unreadable");
    return dq_err_set(err, DQ_EINVAL, "%s: cannot use %s: %s", opt, path, why);
}

static bool
readable(const char *opt, const char *path, bool *is_dir, dq_err *err)
{
    struct stat st;

    if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
        dq_err_set(err, DQ_EINVAL, "%s: cannot read %s: %s", opt, path, strerror(errno));
        return false;
    }
    if (is_dir != NULL)
        *is_dir = S_ISDIR(st.st_mode);
    return true;
}

int
dq_tls_new(const dq_client_opts *o, const char *host, struct dq_tls **out, dq_err *err)
{
    const char *name = o->tls_server_name && o->tls_server_name[0] ? o->tls_server_name : host;
    struct dq_tls *t;
    bool dir = false;
    int rc = DQ_OK;

    *out = NULL;
    if (o->tls_key != NULL && o->tls_cert == NULL)
        return dq_err_set(err, DQ_EINVAL, "tls-key: given without tls-cert");
    if (strlen(name) >= sizeof t->name)
        return dq_err_set(err, DQ_EINVAL, "tls-server-name: %zu bytes; limit is %zu", strlen(name),
                          sizeof t->name - 1);
    t = calloc(1, sizeof *t);
    if (t == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    snprintf(t->name, sizeof t->name, "%s", name);
    t->name_fixed = name != host;
    t->verify = !o->tls_insecure;
    ERR_clear_error();
    t->ctx = SSL_CTX_new(TLS_client_method());
    if (t->ctx == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "tls: cannot create a context");
        goto out;
    }
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    /* a retried write passes the same bytes from a buffer that may have moved */
    SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_default_passwd_cb(t->ctx, no_passphrase);
    SSL_CTX_set_default_passwd_cb_userdata(t->ctx, t);
    SSL_CTX_set_verify(t->ctx, t->verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    if (o->tls_ca != NULL && o->tls_ca[0] != '\0') {
        if (!readable("tls-ca", o->tls_ca, &dir, err)) {
            rc = DQ_EINVAL;
            goto out;
        }
        if ((dir ? SSL_CTX_load_verify_dir(t->ctx, o->tls_ca)
                 : SSL_CTX_load_verify_file(t->ctx, o->tls_ca)) != 1) {
            rc = file_error(err, "tls-ca", o->tls_ca);
            goto out;
        }
    } else if (SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
        rc = file_error(err, "tls-ca", "the system CA store");
        goto out;
    }
    if (o->tls_cert != NULL) {
        const char *key = o->tls_key != NULL ? o->tls_key : o->tls_cert;

        if (!readable("tls-cert", o->tls_cert, NULL, err) || !readable("tls-key", key, NULL, err)) {
            rc = DQ_EINVAL;
            goto out;
        }
        if (SSL_CTX_use_certificate_chain_file(t->ctx, o->tls_cert) != 1) {
            rc = file_error(err, "tls-cert", o->tls_cert);
            goto out;
        }
        if (SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1) {
            if (t->asked) {
                ERR_clear_error();
                rc = dq_err_set(err, DQ_EINVAL,
                                "tls-key: %s: the key is encrypted; delayq cannot prompt for a "
                                "passphrase: decrypt it with openssl pkey -in %s -out NEW.key",
                                key, key);
            } else {
                rc = file_error(err, "tls-key", key);
            }
            goto out;
        }
        if (SSL_CTX_check_private_key(t->ctx) != 1) {
            ERR_clear_error();
            rc = dq_err_set(err, DQ_EINVAL, "tls-key: %s does not match the certificate in %s", key,
                            o->tls_cert);
            goto out;
        }
        t->has_cert = true;
    }
    /* the context outlives this dq_tls (dq_tls_ref_named shares it) */
    SSL_CTX_set_default_passwd_cb_userdata(t->ctx, NULL);
out:
    if (rc != DQ_OK) {
        dq_tls_free(t);
        return rc;
    }
    *out = t;
    return DQ_OK;
}

struct dq_tls *
dq_tls_ref(const struct dq_tls *t)
{
    struct dq_tls *c = malloc(sizeof *c);

    if (c == NULL)
        return NULL;
    *c = *t;
    SSL_CTX_up_ref(c->ctx);
    return c;
}

struct dq_tls *
dq_tls_ref_named(const struct dq_tls *t, const char *host)
{
    struct dq_tls *c;

    if (strlen(host) >= sizeof t->name)
        return NULL;
    if ((c = dq_tls_ref(t)) != NULL && !c->name_fixed)
        snprintf(c->name, sizeof c->name, "%s", host);
    return c;
}

bool
dq_tls_has_cert(const struct dq_tls *t)
{
    return t->has_cert;
}

void
dq_tls_free(struct dq_tls *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    free(t);
}

/* ---- waiting ---------------------------------------------------------------------------- */

/* Waits for @events on @fd until @deadline (monotonic ms): 1 ready, 0 timed out. Errors
 * and hang-ups count as ready: the next call on the fd reports them. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - dq_mono_ms();
        struct pollfd p = {.fd = fd, .events = events};
        int r;

        if (left <= 0)
            return 0;
        r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 1;
    }
}

/* ---- connecting ------------------------------------------------------------------------- */

static int
connect_unix(struct dq_net *n, const char *path, char *why, size_t why_size)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(why, why_size, "socket path too long");
        return DQ_ECONN;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    n->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (n->fd < 0 || connect(n->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        /* a unix connect does not go "in progress": EAGAIN is a full backlog */
        snprintf(why, why_size, "%s", strerror(errno));
        return DQ_ECONN;
    }
    return DQ_OK;
}

static int
connect_tcp(struct dq_net *n, const char *host, int port, int64_t deadline, char *why,
            size_t why_size)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char service[16];
    int rc = DQ_ECONN, g;

    snprintf(service, sizeof service, "%d", port);
    /* getaddrinfo has no timeout; a literal address (the usual case) resolves at once */
    g = getaddrinfo(host, service, &hints, &res);
    if (g != 0) {
        snprintf(why, why_size, "cannot resolve %s: %s", host,
                 g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
        return DQ_ECONN;
    }
    snprintf(why, why_size, "no address");
    for (struct addrinfo *a = res; a != NULL; a = a->ai_next) {
        int fd =
            socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        int soerr = 0, one = 1;
        socklen_t len = sizeof soerr;

        if (fd < 0) {
            snprintf(why, why_size, "%s", strerror(errno));
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            if (errno != EINPROGRESS) {
                snprintf(why, why_size, "%s", strerror(errno));
                close(fd);
                continue;
            }
            if (wait_fd(fd, POLLOUT, deadline) == 0) {
                close(fd);
                rc = DQ_ETIMEOUT;
                break;
            }
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
                soerr = errno;
            if (soerr != 0) {
                snprintf(why, why_size, "%s", strerror(soerr));
                close(fd);
                continue;
            }
        }
        /* commands are small and answered one at a time: do not wait for Nagle */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        n->fd = fd;
        rc = DQ_OK;
        break;
    }
    freeaddrinfo(res);
    return rc;
}

static bool
is_ip(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* Why a TLS call failed, into @why: the certificate check's own words when that is
 * what failed, else OpenSSL's reason, else the system's. */
static void
tls_failure(const struct dq_net *n, const struct dq_tls *tls, int ssl_error, char *why,
            size_t why_size)
{
    long v = tls != NULL && tls->verify ? SSL_get_verify_result(n->ssl) : X509_V_OK;
    char reason[160];

    if (v != X509_V_OK) {
        ERR_clear_error();
        if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH)
            snprintf(why, why_size,
                     "tls: certificate verify failed: %s (the certificate is not "
                     "for \"%s\")",
                     X509_verify_cert_error_string(v), tls->name);
        else
            snprintf(why, why_size, "tls: certificate verify failed: %s",
                     X509_verify_cert_error_string(v));
        return;
    }
    if (ssl_error == SSL_ERROR_ZERO_RETURN) {
        snprintf(why, why_size, "tls: connection closed by the server");
    } else if (ssl_error == SSL_ERROR_SYSCALL) {
        int e = errno;
        ssl_reason(reason, sizeof reason, "");
        if (reason[0] != '\0')
            snprintf(why, why_size, "tls: %s", reason);
        else if (e != 0 && e != EAGAIN)
            snprintf(why, why_size, "tls: %s", strerror(e));
        else
            snprintf(why, why_size, "tls: connection closed by the server");
    } else {
        ssl_reason(reason, sizeof reason, "protocol error");
        snprintf(why, why_size, "tls: %s", reason);
    }
}

/* SIGPIPE held back for this thread around an OpenSSL call that may write. */
struct pipe_guard {
    sigset_t old;
    bool was_pending;
};

static void
pipe_block(struct pipe_guard *g)
{
    sigset_t set, pending;

    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

static void
pipe_restore(struct pipe_guard *g)
{
    sigset_t set, pending;

    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigpending(&pending);
    /* consume only the SIGPIPE our write raised, never one that was already waiting */
    if (!g->was_pending && sigismember(&pending, SIGPIPE) == 1) {
        struct timespec zero = {0, 0};
        int saved = errno;
        sigtimedwait(&set, NULL, &zero);
        errno = saved;
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static int
handshake(struct dq_net *n, const struct dq_tls *tls, int64_t deadline, char *why, size_t why_size)
{
    SSL *ssl = SSL_new(tls->ctx);

    if (ssl == NULL || SSL_set_fd(ssl, n->fd) != 1) {
        SSL_free(ssl);
        ssl_reason(why, why_size, "out of memory");
        return DQ_ECONN;
    }
    n->ssl = ssl;
    /* SNI carries names only (RFC 6066); an address is checked as an address. The
     * macro casts its argument to void *: give it a copy that is not const. */
    if (!is_ip(tls->name)) {
        char sni[sizeof tls->name];
        memcpy(sni, tls->name, sizeof sni);
        SSL_set_tlsext_host_name(ssl, sni);
    }
    if (tls->verify) {
        int ok = is_ip(tls->name) ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), tls->name)
                                  : SSL_set1_host(ssl, tls->name);
        if (ok != 1) {
            ssl_reason(why, why_size, "cannot set the name to check");
            return DQ_ECONN;
        }
        SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    }
    for (;;) {
        struct pipe_guard g;
        int r, e;

        ERR_clear_error();
        errno = 0;
        pipe_block(&g);
        r = SSL_connect(ssl);
        e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl, r);
        pipe_restore(&g);
        if (r == 1)
            return DQ_OK;
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            n->failed = true;
            tls_failure(n, tls, e, why, why_size);
            return DQ_ECONN;
        }
        if (wait_fd(n->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline) == 0) {
            snprintf(why, why_size, "tls: no handshake");
            return DQ_ETIMEOUT;
        }
    }
}

int
dq_net_connect(struct dq_net *n, const char *host, int port, const char *path,
               const struct dq_tls *tls, int timeout_ms, char *why, size_t why_size)
{
    int64_t deadline = dq_mono_ms() + timeout_ms;
    int rc;

    *n = DQ_NET_CLOSED;
    why[0] = '\0';
    rc = host == NULL ? connect_unix(n, path, why, why_size)
                      : connect_tcp(n, host, port, deadline, why, why_size);
    if (rc == DQ_OK && tls != NULL)
        rc = handshake(n, tls, deadline, why, why_size);
    if (rc != DQ_OK) {
        if (n->ssl != NULL)
            SSL_free(n->ssl);
        if (n->fd >= 0)
            close(n->fd);
        *n = DQ_NET_CLOSED;
    }
    return rc;
}

/* ---- I/O -------------------------------------------------------------------------------- */

int
dq_net_write(struct dq_net *n, const void *buf, size_t len, int idle_ms, char *why, size_t why_size)
{
    const char *p = buf;
    int64_t deadline = dq_mono_ms() + idle_ms;

    while (len > 0) {
        short ev = POLLOUT;

        if (n->ssl != NULL) {
            struct pipe_guard g;
            int r, e;

            ERR_clear_error();
            errno = 0;
            pipe_block(&g);
            r = SSL_write(n->ssl, p, len > INT_MAX ? INT_MAX : (int)len);
            e = r > 0 ? SSL_ERROR_NONE : SSL_get_error(n->ssl, r);
            pipe_restore(&g);
            if (r > 0) {
                p += r;
                len -= (size_t)r;
                deadline = dq_mono_ms() + idle_ms;
                continue;
            }
            if (e == SSL_ERROR_WANT_READ) {
                ev = POLLIN;
            } else if (e != SSL_ERROR_WANT_WRITE) {
                n->failed = true;
                tls_failure(n, NULL, e, why, why_size);
                return DQ_ECONN;
            }
        } else {
            ssize_t r = send(n->fd, p, len, MSG_NOSIGNAL);
            if (r > 0) {
                p += r;
                len -= (size_t)r;
                deadline = dq_mono_ms() + idle_ms;
                continue;
            }
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                snprintf(why, why_size, "%s", r == 0 ? "connection closed" : strerror(errno));
                return DQ_ECONN;
            }
        }
        if (wait_fd(n->fd, ev, deadline) == 0)
            return DQ_ETIMEOUT;
    }
    return DQ_OK;
}

ssize_t
dq_net_read(struct dq_net *n, void *buf, size_t cap, int idle_ms, char *why, size_t why_size)
{
    int64_t deadline = dq_mono_ms() + idle_ms;

    /* a reply is rarely there the moment its command went out: wait first rather than
     * pay a read that says EAGAIN (bytes OpenSSL already decrypted do not show in poll) */
    if (idle_ms > 0 && (n->ssl == NULL || SSL_pending(n->ssl) == 0) &&
        wait_fd(n->fd, POLLIN, deadline) == 0)
        return DQ_ETIMEOUT;
    for (;;) {
        short ev = POLLIN;

        if (n->ssl != NULL) {
            struct pipe_guard g;
            int r, e;

            ERR_clear_error();
            errno = 0;
            /* a read may write too (a key update, an alert) */
            pipe_block(&g);
            r = SSL_read(n->ssl, buf, cap > INT_MAX ? INT_MAX : (int)cap);
            e = r > 0 ? SSL_ERROR_NONE : SSL_get_error(n->ssl, r);
            pipe_restore(&g);
            if (r > 0)
                return r;
            if (e == SSL_ERROR_WANT_WRITE) {
                ev = POLLOUT;
            } else if (e != SSL_ERROR_WANT_READ) {
                n->failed = true;
                tls_failure(n, NULL, e, why, why_size);
                return DQ_ECONN;
            }
        } else {
            ssize_t r = recv(n->fd, buf, cap, 0);
            if (r > 0)
                return r;
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                snprintf(why, why_size, "%s",
                         r == 0 ? "connection closed by the server" : strerror(errno));
                return DQ_ECONN;
            }
        }
        if (idle_ms <= 0)
            return 0;
        if (wait_fd(n->fd, ev, deadline) == 0)
            return DQ_ETIMEOUT;
    }
}

void
dq_net_close(struct dq_net *n)
{
    if (n->ssl != NULL) {
        struct pipe_guard g;

        /* one non-blocking close_notify; after a failed call OpenSSL forbids it, and
         * whether it went out changes nothing for us */
        if (!n->failed && (SSL_get_shutdown(n->ssl) & SSL_SENT_SHUTDOWN) == 0) {
            pipe_block(&g);
            ERR_clear_error();
            SSL_shutdown(n->ssl);
            ERR_clear_error();
            pipe_restore(&g);
        }
        SSL_free(n->ssl);
    }
    if (n->fd >= 0)
        close(n->fd);
    *n = DQ_NET_CLOSED;
}
