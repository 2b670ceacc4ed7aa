/* SPDX-License-Identifier: MIT */
/*
 * net.h: the byte transport under a dq_client: plain TCP, a unix socket, or TLS over
 * TCP through OpenSSL. No Redis protocol here (client.c formats commands and reads
 * replies with hiredis); no hiredis at all. Every wait is a poll() bounded by a
 * deadline, so nothing here can hang.
 */
#ifndef DQ_LIB_NET_H
#define DQ_LIB_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "delayq.h"

/* What a TLS connection checks and presents: an SSL_CTX (shared by reference between a
 * client and its subscriber) plus the name the server certificate must match. */
struct dq_tls;

/* One connection. fd is -1 while closed; ssl is NULL for plain TCP and unix sockets. */
struct dq_net {
    int fd;
    void *ssl;   /* SSL *, kept opaque so that only net.c includes OpenSSL */
    bool failed; /* a fatal TLS error happened: no close_notify may follow */
};

#define DQ_NET_CLOSED ((struct dq_net){.fd = -1, .ssl = NULL, .failed = false})

/*
 * Builds the TLS settings of a client from @o (its tls_* fields) for a server named
 * @host (the URL's host; @o->tls_server_name overrides it). Verification of the chain
 * and of the name is on unless @o->tls_insecure. Without tls_ca the system store is
 * used. Returns DQ_OK with *out to free with dq_tls_free(), or DQ_EINVAL naming the
 * option and the file that could not be used; DQ_ENOMEM.
 */
int dq_tls_new(const dq_client_opts *o, const char *host, struct dq_tls **out, dq_err *err);

/* Another reference to @t's settings (for a second connection); NULL on OOM. */
struct dq_tls *dq_tls_ref(const struct dq_tls *t);

/* Another reference to @t's settings for a server named @host (a sentinel, or the master
 * it named): the name to check is @host unless tls_server_name fixed it. NULL on OOM. */
struct dq_tls *dq_tls_ref_named(const struct dq_tls *t, const char *host);

/* True when @t presents a client certificate. */
bool dq_tls_has_cert(const struct dq_tls *t);

/* Releases one reference. Accepts NULL. */
void dq_tls_free(struct dq_tls *t);

/*
 * Connects to @host:@port (every address getaddrinfo gives, in turn) or, with @host
 * NULL, to the unix socket @path; then, when @tls is not NULL, does the TLS handshake.
 * All of it within @timeout_ms. TCP_NODELAY is set; the fd is non-blocking and
 * close-on-exec. Returns DQ_OK, DQ_ETIMEOUT, or DQ_ECONN with the reason in @why
 * ("connection refused", "tls: certificate verify failed: ...").
 */
int dq_net_connect(struct dq_net *n, const char *host, int port, const char *path,
                   const struct dq_tls *tls, int timeout_ms, char *why, size_t why_size);

/* Writes all @len bytes, waiting at most @idle_ms for each step of progress. DQ_OK,
 * DQ_ETIMEOUT or DQ_ECONN (reason in @why). */
int dq_net_write(struct dq_net *n, const void *buf, size_t len, int idle_ms, char *why,
                 size_t why_size);

/*
 * Reads up to @cap bytes into @buf. With @idle_ms > 0 it waits up to that long for at
 * least one byte; with 0 it never waits. Returns the number of bytes (0 only when
 * @idle_ms is 0 and nothing was ready), or DQ_ETIMEOUT, or DQ_ECONN (closed by the
 * peer, a TLS alert, an I/O error; reason in @why).
 */
ssize_t dq_net_read(struct dq_net *n, void *buf, size_t cap, int idle_ms, char *why,
                    size_t why_size);

/* Closes the connection (a TLS close_notify is attempted, never waited for). */
void dq_net_close(struct dq_net *n);

#endif /* DQ_LIB_NET_H */
