/* SPDX-License-Identifier: MIT */
/*
 * cmd_metrics.c: delayq metrics: every queue's counts, counters, workers and pause in
 * the Prometheus text exposition format (version 0.0.4), served on /metrics by
 * libmicrohttpd or written atomically to a file for node_exporter's textfile collector.
 *
 * One scrape costs one SCARD plus one SSCAN per 1000 registered queues (none with -q),
 * then two script calls per queue (FCALL_RO, or EVALSHA_RO where functions are refused):
 * the stats (O(log n)) and the worker registry's counts (one record asked, no tasks;
 * O(log W) plus at most 1000 beats and 1000 leases read). libmicrohttpd runs every
 * request on its one internal thread, so the single dq_client is never shared between
 * threads. Redis being down is reported as delayq_up 0 with HTTP 200, never a crash.
 *
 * The network may be hostile (docs/SECURITY.md, "The metrics exporter"): a scrape is
 * cached for --cache, so a flood of GETs costs Redis at most one scrape per interval,
 * and HEAD none; the connection limits are in serve(); --auth-file and --http-tls-cert guard
 * an exporter that listens beyond loopback.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "opts.h"
#include "fmt/b64.h"
#include "fmt/esc.h"
#include "lib/clock.h"
#include "lib/dur.h"

enum { METRICS_MAX_QUEUES = 1000 };

/* What one scrape read of one queue. */
struct queue_read {
    const char *name;
    dq_stats st;
    bool have_workers; /* the registry call succeeded: live and lost are set */
    int64_t live, lost;
    size_t parts; /* a partitioned queue's partitions (config partitions); 0: not one */
};

struct metrics {
    struct cli *g;
    const char **queues; /* the -q names, borrowed from argv; n_queues 0: the registry */
    size_t n_queues;
    long long scrape_errors; /* failed Redis calls since this process started */
    bool had_errors;         /* the previous scrape failed somewhere (log on change) */
    struct dq_buf out;       /* the last exposition; reused between scrapes */
    int64_t cache_ms;        /* --cache */
    int64_t scraped_ms;      /* dq_mono_ms() of the last scrape; 0: none yet */
    char *auth;              /* the Authorization header a request must carry, or NULL */
    int64_t log_ms;          /* when libmicrohttpd's last message was shown (http_log) */
    long long log_hidden;    /* its messages not shown since */
    const char *auth_scheme; /* "Basic" or "Bearer", for WWW-Authenticate */
};

/* Appends @s as a label value: UTF-8 with \\, \" and \n escaped as the exposition
 * format requires. Queue names are untrusted bytes (the library checks them today, but
 * the format must not depend on it), so other control bytes and invalid UTF-8 become
 * the visible text \xHH: a Prometheus parser rejects invalid UTF-8. */
static void
put_label(struct dq_buf *b, const char *s)
{
    size_t len = strlen(s), i = 0;

    while (i < len) {
        unsigned char ch = (unsigned char)s[i];
        uint32_t cp;
        size_t n = dq_utf8_decode(s + i, len - i, &cp);
        if (ch == '\\') {
            dq_buf_puts(b, "\\\\");
        } else if (ch == '"') {
            dq_buf_puts(b, "\\\"");
        } else if (ch == '\n') {
            dq_buf_puts(b, "\\n");
        } else if (n == 0 || ch < 0x20 || ch == 0x7f) {
            dq_buf_printf(b, "\\\\x%02x", ch);
            n = 1;
        } else {
            dq_buf_append(b, s + i, n);
        }
        i += n > 0 ? n : 1;
    }
}

static void
family(struct dq_buf *b, const char *name, const char *type, const char *what)
{
    dq_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, what, name, type);
}

/* name{queue="Q"[,LABEL="VALUE"]} */
static void
sample_start(struct dq_buf *b, const char *name, const char *queue, const char *label,
             const char *value)
{
    dq_buf_printf(b, "%s{queue=\"", name);
    put_label(b, queue);
    if (label != NULL)
        dq_buf_printf(b, "\",%s=\"%s", label, value);
    dq_buf_puts(b, "\"} ");
}

static bool
is_conn_error(int code)
{
    return code == DQ_ECONN || code == DQ_ETIMEOUT;
}

/* Opens the client on first use, so the exporter starts (and says delayq_up 0) while
 * Redis is down; once open, the client reconnects by itself. Same options as
 * cli_connect(), which would print on every failed scrape. */
static int
open_client(struct cli *g, dq_err *err)
{
    dq_client_opts o;

    if (g->client != NULL)
        return DQ_OK;
    if (cli_client_opts(g, &o) != DQ_EXIT_OK) {
        err->code = DQ_EINVAL;
        snprintf(err->msg, sizeof err->msg, "the profile's password could not be read");
        return DQ_EINVAL;
    }
    return dq_client_open(g->url, &o, &g->client, err);
}

/* The per-queue families: the @got queues read in @qr. */
static void
put_queues(struct dq_buf *b, const struct queue_read *qr, size_t got)
{
    static const char *const states[] = {"due", "future", "far_future", "inflight", "failed"};
    static const char *const events[] = {"enqueued", "done",   "retried",  "failed", "expired",
                                         "trimmed",  "reaped", "requeued", "dropped"};
    family(b, "delayq_tasks", "gauge",
           "Tasks by state: due (waiting for a worker), future (not due yet; includes "
           "far_future), far_future (due after the queue's far_future_ms), inflight "
           "(claimed, under a lease), failed (parked).");
    for (size_t i = 0; i < got; i++) {
        const dq_stats *s = &qr[i].st;
        const int64_t v[] = {s->due, s->future, s->far_future, s->inflight, s->failed};
        for (size_t k = 0; k < sizeof states / sizeof states[0]; k++) {
            sample_start(b, "delayq_tasks", qr[i].name, "state", states[k]);
            dq_buf_printf(b, "%lld\n", (long long)v[k]);
        }
    }
    family(b, "delayq_expired_leases", "gauge",
           "In-flight tasks whose lease has expired (their worker is gone or stuck).");
    for (size_t i = 0; i < got; i++) {
        sample_start(b, "delayq_expired_leases", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%lld\n", (long long)qr[i].st.expired_leases);
    }
    family(b, "delayq_oldest_due_seconds", "gauge",
           "How long the oldest due task has waited for a worker (0 when none is due).");
    for (size_t i = 0; i < got; i++) {
        sample_start(b, "delayq_oldest_due_seconds", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%.3f\n", (double)qr[i].st.oldest_due_age_ms / 1000.0);
    }
    family(b, "delayq_next_due_seconds", "gauge",
           "Seconds until the next future task is due (no sample when none is in the "
           "future).");
    for (size_t i = 0; i < got; i++) {
        if (qr[i].st.next_due_ms < 0)
            continue;
        sample_start(b, "delayq_next_due_seconds", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%.3f\n", (double)(qr[i].st.next_due_ms - qr[i].st.now_ms) / 1000.0);
    }
    family(b, "delayq_events_total", "counter",
           "Events counted by the queue's scripts since the queue was created.");
    for (size_t i = 0; i < got; i++) {
        const dq_stats *s = &qr[i].st;
        const int64_t v[] = {s->enqueued, s->done,   s->retried,  s->failed_total, s->expired,
                             s->trimmed,  s->reaped, s->requeued, s->dropped};
        for (size_t k = 0; k < sizeof events / sizeof events[0]; k++) {
            sample_start(b, "delayq_events_total", qr[i].name, "event", events[k]);
            dq_buf_printf(b, "%lld\n", (long long)v[k]);
        }
    }
    /* the all-time run-time histogram the scripts keep beside the per-minute rollups */
    family(b, "delayq_task_duration_seconds", "histogram",
           "Run time of tasks from claim to settle (done, retried and failed runs alike), "
           "since the queue was created; 0 everywhere from scripts without the rollups.");
    for (size_t i = 0; i < got; i++) {
        const dq_stats *s = &qr[i].st;
        int64_t cum = 0;
        for (size_t k = 0; k < DQ_RUN_BUCKETS; k++) {
            char le[32];
            cum = cum > INT64_MAX - s->run[k] ? INT64_MAX : cum + s->run[k];
            if (k < DQ_RUN_BUCKETS - 1)
                snprintf(le, sizeof le, "%g", (double)dq_run_bounds_ms[k] / 1000.0);
            else
                snprintf(le, sizeof le, "+Inf");
            sample_start(b, "delayq_task_duration_seconds_bucket", qr[i].name, "le", le);
            dq_buf_printf(b, "%lld\n", (long long)cum);
        }
        sample_start(b, "delayq_task_duration_seconds_sum", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%.3f\n", (double)s->run_sum_ms / 1000.0);
        sample_start(b, "delayq_task_duration_seconds_count", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%lld\n", (long long)cum);
    }
    family(b, "delayq_workers", "gauge",
           "Registered workers by state: live (beating), lost (silent past the queue's "
           "worker_lost_ms); counted among the 1000 with the latest beats.");
    for (size_t i = 0; i < got; i++) {
        if (!qr[i].have_workers)
            continue;
        sample_start(b, "delayq_workers", qr[i].name, "state", "live");
        dq_buf_printf(b, "%lld\n", (long long)qr[i].live);
        sample_start(b, "delayq_workers", qr[i].name, "state", "lost");
        dq_buf_printf(b, "%lld\n", (long long)qr[i].lost);
    }
    family(b, "delayq_queue_paused", "gauge",
           "1 when the queue is paused (claims hand out nothing), else 0.");
    for (size_t i = 0; i < got; i++) {
        sample_start(b, "delayq_queue_paused", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%d\n", qr[i].st.paused ? 1 : 0);
    }
    family(b, "delayq_queue_paused_until_seconds", "gauge",
           "When the pause ends, in Unix seconds (Redis time); no sample when the queue is "
           "not paused or is paused until resumed.");
    for (size_t i = 0; i < got; i++) {
        if (!qr[i].st.paused || qr[i].st.paused_until_ms <= 0)
            continue;
        sample_start(b, "delayq_queue_paused_until_seconds", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%.3f\n", (double)qr[i].st.paused_until_ms / 1000.0);
    }
    /* the queue limits (PROTOCOL.md 8.4) */
    family(b, "delayq_limited_total", "counter",
           "Claims in which a queue limit (rate or concurrency, the configured one or a "
           "throttle) held a due task back.");
    for (size_t i = 0; i < got; i++) {
        sample_start(b, "delayq_limited_total", qr[i].name, "limit", "rate");
        dq_buf_printf(b, "%lld\n", (long long)qr[i].st.limited_rate);
        sample_start(b, "delayq_limited_total", qr[i].name, "limit", "concurrency");
        dq_buf_printf(b, "%lld\n", (long long)qr[i].st.limited_concurrency);
    }
    family(b, "delayq_queue_rate_limit", "gauge",
           "Tasks a second the queue may start (the tighter of rate_limit and a throttle); no "
           "sample when there is no rate limit.");
    for (size_t i = 0; i < got; i++) {
        if (qr[i].st.rate_per_min <= 0)
            continue;
        sample_start(b, "delayq_queue_rate_limit", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%.3f\n", (double)qr[i].st.rate_per_min / 60.0);
    }
    family(b, "delayq_queue_concurrency_limit", "gauge",
           "Tasks the queue may have in flight (the tighter of concurrency_limit and a "
           "throttle); no sample when there is no concurrency limit.");
    for (size_t i = 0; i < got; i++) {
        if (qr[i].st.concurrency <= 0)
            continue;
        sample_start(b, "delayq_queue_concurrency_limit", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%lld\n", (long long)qr[i].st.concurrency);
    }
    family(b, "delayq_queue_throttled", "gauge",
           "1 while a live throttle (delayq throttle) is in force, else 0.");
    for (size_t i = 0; i < got; i++) {
        sample_start(b, "delayq_queue_throttled", qr[i].name, NULL, NULL);
        dq_buf_printf(b, "%d\n", qr[i].st.throttled ? 1 : 0);
    }
    /* partitioned queues (PROTOCOL.md 14): the family only when one was read, so a
     * server without any exposes what it did before */
    bool parted = false;
    for (size_t i = 0; i < got; i++)
        parted = parted || qr[i].parts > 0;
    if (parted) {
        family(b, "delayq_queue_partitions", "gauge",
               "Partitions a partitioned queue spreads its tasks over (config partitions; "
               "draining ones not counted); its other series are the sums over all of them. "
               "No sample for a queue that is not partitioned.");
        for (size_t i = 0; i < got; i++) {
            if (qr[i].parts == 0)
                continue;
            sample_start(b, "delayq_queue_partitions", qr[i].name, NULL, NULL);
            dq_buf_printf(b, "%zu\n", qr[i].parts);
        }
    }
}

/*
 * One scrape into m->out. Returns true when Redis was reachable. Families are written
 * whole, one after another, as the format requires, so every queue is read first.
 * A queue whose stats read fails is left out of this scrape; one whose registry read
 * fails keeps its other samples but has no delayq_workers ones; a connection error ends
 * the scrape. Both count as errors.
 */
static bool
scrape(struct metrics *m)
{
    struct dq_buf *b = &m->out;
    dq_queues reg = {0};
    const char *const *names = m->queues;
    size_t n = m->n_queues, got = 0;
    struct queue_read *qr = NULL;
    dq_err err = {0}, first = {0};
    long long errors = 0;
    bool up = true, reg_read = false;
    int rc;

    dq_buf_reset(b);
    rc = open_client(m->g, &err);
    if (rc == DQ_OK && n == 0) {
        rc = dq_queues_get(m->g->client, METRICS_MAX_QUEUES, &reg, &err);
        reg_read = rc == DQ_OK;
        names = (const char *const *)reg.names;
        n = reg.n;
    }
    if (rc != DQ_OK) {
        errors++;
        first = err;
        up = !is_conn_error(rc);
        n = 0;
    }
    if (n > 0) {
        qr = calloc(n, sizeof *qr);
        if (qr == NULL) {
            fprintf(stderr, "delayq: out of memory\n");
            exit(DQ_EXIT_FAILED);
        }
    }
    for (size_t i = 0; i < n && up; i++) {
        struct queue_read *r = &qr[got];
        dq_workers w;

        /* a partitioned queue's stats are the sums of its partitions' (one queue, one
         * set of series); partitions are never in the registry */
        rc = dq_stats_get(m->g->client, names[i], &r->st, &err);
        if (rc == DQ_OK) {
            size_t routed, all;
            dq_err perr; /* the map the stats call read: cached, no call */
            r->name = names[i];
            r->parts = 0;
            if (dq_partitions_get(m->g->client, names[i], &routed, &all, &perr) == DQ_OK && all > 1)
                r->parts = routed;
            got++;
            /* only the counts: one record (the least allowed), no tasks */
            rc = dq_workers_summary(m->g->client, names[i], 1, &w, &err);
            if (rc == DQ_OK) {
                r->have_workers = true;
                r->live = w.live;
                r->lost = w.lost;
                dq_workers_free(&w);
                continue;
            }
        }
        if (errors++ == 0)
            first = err;
        if (is_conn_error(rc))
            up = false;
    }
    m->scrape_errors += errors;

    family(b, "delayq_up", "gauge",
           "1 when this scrape reached Redis, 0 when Redis was unreachable or timed out.");
    dq_buf_printf(b, "delayq_up %d\n", up ? 1 : 0);
    family(b, "delayq_scrape_errors_total", "counter",
           "Redis calls that failed during scrapes since this exporter started.");
    dq_buf_printf(b, "delayq_scrape_errors_total %lld\n", m->scrape_errors);
    if (reg_read) {
        family(b, "delayq_registry_queues", "gauge",
               "Queues in the registry (at most 1000 are exported).");
        dq_buf_printf(b, "delayq_registry_queues %lld\n", (long long)reg.total);
    }
    if (got > 0)
        put_queues(b, qr, got);
    if (b->failed) {
        fprintf(stderr, "delayq: out of memory\n");
        exit(DQ_EXIT_FAILED);
    }
    /* log when the scrapes start or stop failing, not on every scrape */
    if (errors > 0 && !m->had_errors) {
        fprintf(stderr, "%s: scrape failed (%lld errors): ", m->g->prog, errors);
        cli_put_safe(stderr, first.msg, strlen(first.msg));
        fputc('\n', stderr);
    } else if (errors == 0 && m->had_errors) {
        fprintf(stderr, "%s: scrapes succeed again\n", m->g->prog);
    }
    m->had_errors = errors > 0;
    free(qr);
    dq_queues_free(&reg);
    return up;
}

/* Whether the request carries --auth-file's credentials (always, without the option).
 * The comparison takes the same time wherever the first difference is. */
static bool
authorized(const struct metrics *m, struct MHD_Connection *conn)
{
    const char *got;
    size_t want_len, got_len;
    unsigned char diff = 0;

    if (m->auth == NULL)
        return true;
    got = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (got == NULL)
        return false;
    want_len = strlen(m->auth);
    got_len = strlen(got);
    for (size_t i = 0; i < want_len; i++)
        diff |= (unsigned char)(m->auth[i] ^ (i < got_len ? got[i] : 0));
    return diff == 0 && got_len == want_len;
}

static enum MHD_Result
answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
       const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    static const char index_page[] = "delayq metrics: see /metrics\n";
    static const char not_found[] = "not found: delayq metrics serves /metrics\n";
    struct metrics *m = cls;
    struct MHD_Response *resp;
    unsigned status = MHD_HTTP_OK;
    enum MHD_Result ret;
    bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;

    if (!authorized(m, conn)) {
        static const char denied[] = "unauthorized: see --auth-file in delayq-metrics(1)\n";
        char www[64];
        resp = MHD_create_response_from_buffer(strlen(denied), (void *)(uintptr_t)denied,
                                               MHD_RESPMEM_PERSISTENT);
        if (resp == NULL)
            return MHD_NO;
        snprintf(www, sizeof www, "%s realm=\"delayq metrics\"", m->auth_scheme);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, www);
        status = MHD_HTTP_UNAUTHORIZED;
    } else if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && !head) {
        resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (resp == NULL)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
    } else if (strcmp(url, "/metrics") == 0) {
        /* HEAD gets the headers of the last exposition (MHD sends no body) and costs
         * Redis nothing; a GET scrapes only when the cached one is older than --cache */
        int64_t now = dq_mono_ms();
        if (!head && (m->scraped_ms == 0 || now - m->scraped_ms >= m->cache_ms)) {
            scrape(m);
            m->scraped_ms = dq_mono_ms();
        }
        resp = MHD_create_response_from_buffer(m->out.len, m->out.data, MHD_RESPMEM_MUST_COPY);
        if (resp == NULL)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "text/plain; version=0.0.4; charset=utf-8");
    } else {
        bool index = strcmp(url, "/") == 0;
        const char *body = index ? index_page : not_found;
        resp = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
                                               MHD_RESPMEM_PERSISTENT);
        if (resp == NULL)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
        status = index ? MHD_HTTP_OK : MHD_HTTP_NOT_FOUND;
    }
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* "A.B.C.D:PORT" or "[IPV6]:PORT", numeric only (no DNS at startup). */
static int
parse_listen(const struct cli *g, const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    const char *h = s;
    size_t hlen;
    struct addrinfo hints = {0}, *ai = NULL;

    if (colon == NULL || colon[1] == '\0')
        return cli_usage_error(g, "--listen needs HOST:PORT (got \"%s\")", s);
    hlen = (size_t)(colon - s);
    if (hlen >= 2 && s[0] == '[' && s[hlen - 1] == ']') {
        h = s + 1;
        hlen -= 2;
    }
    if (hlen == 0 || hlen >= sizeof host)
        return cli_usage_error(g, "--listen needs a numeric host before the port (got \"%s\")", s);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    /* getaddrinfo takes any number and wraps it (99999 listened on 34463) */
    const char *port = colon + 1;
    long long pn = 0;
    for (const char *p = port; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || pn > 65535)
            break;
        pn = pn * 10 + (*p - '0');
    }
    if (port[strspn(port, "0123456789")] != '\0' || strlen(port) > 5 || pn > 65535)
        return cli_usage_error(g, "--listen: port \"%s\" is not in 0..65535", port);
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || ai == NULL ||
        ai->ai_addrlen > sizeof *ss) {
        if (ai != NULL)
            freeaddrinfo(ai);
        return cli_usage_error(g,
                               "--listen: \"%s\" is not a numeric IPv4 or [IPv6] address "
                               "and port",
                               s);
    }
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return DQ_EXIT_OK;
}

/* Whether @ss is a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). */
static bool
is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* Connections: libmicrohttpd's one internal thread polls them all (epoll), so a client
 * that sends half a request, or nothing, holds a slot and a file descriptor, never the
 * thread. What knocked the exporter out was the slots: 32 of them, each held up to a
 * 30 s timeout (200 partial requests that closed kept it unreachable 180 s). Now up to
 * CONN_MAX slots (the file descriptor limit is raised to fit them), at most half of
 * them from one address, and a connection silent for CONN_IDLE_S is closed. Measured:
 * with 300 partial requests held open, or sent and closed, a GET answers in under 5 ms
 * (it did not within 60 s before); after 4000 from one address, within 4.5 s (the one
 * address's half clears by the timeout). A thread per connection was the other choice:
 * a stack per slot, and the one Redis client shared; a scrape is the only slow step,
 * and --cache bounds it. A slot's buffer is capped at CONN_MEM (a request line and
 * headers: Prometheus sends well under 1 KiB), so all slots hold 32 MiB at most. */
enum { CONN_MAX = 4096, CONN_IDLE_S = 5, CONN_MEM = 8192 };

/* The connection limit the process's file descriptors allow, after raising the soft
 * limit towards the hard one. */
static unsigned
conn_limit(void)
{
    struct rlimit rl;
    rlim_t want = CONN_MAX + 64; /* the listener, epoll, Redis, stdio, a margin */

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 256;
    if (rl.rlim_cur < want) {
        rlim_t cur = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            rl.rlim_cur = cur;
    }
    if (rl.rlim_cur <= 128)
        return 32;
    return rl.rlim_cur - 64 < CONN_MAX ? (unsigned)(rl.rlim_cur - 64) : CONN_MAX;
}

/* libmicrohttpd's messages (a refused connection, a bad request), one every 10 s at
 * most: a flood of connections past the limits must not become a flood of log lines.
 * They may quote what a client sent, so they are escaped. */
static void
http_log(void *cls, const char *fmt, va_list ap)
{
    struct metrics *m = cls;
    int64_t now = dq_mono_ms();
    char line[512];
    int n;

    if (m->log_ms != 0 && now - m->log_ms < 10000) {
        m->log_hidden++;
        return;
    }
    n = vsnprintf(line, sizeof line, fmt, ap);
    if (n < 0)
        return;
    n = n >= (int)sizeof line ? (int)sizeof line - 1 : n;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    fprintf(stderr, "%s: http: ", m->g->prog);
    cli_put_safe(stderr, line, (size_t)n);
    if (m->log_hidden > 0)
        fprintf(stderr, " (and %lld more messages in the last %lld s)", m->log_hidden,
                (long long)(now - m->log_ms) / 1000);
    fputc('\n', stderr);
    m->log_ms = now;
    m->log_hidden = 0;
}

static int
serve(struct metrics *m, const char *listen, const char *cert, const char *key)
{
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    struct MHD_Daemon *d;
    const union MHD_DaemonInfo *info;
    sigset_t set;
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, limit;
    int rc, sig = 0;

    if ((rc = parse_listen(m->g, listen, &ss, &sslen)) != DQ_EXIT_OK)
        return rc;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (cert != NULL)
        flags |= MHD_USE_TLS;
    if (!is_loopback(&ss) && (m->auth == NULL || cert == NULL))
        fprintf(stderr,
                "%s: warning: serving /metrics beyond loopback on %s %s: anyone who "
                "reaches the port reads the queues' names and volumes (use --auth-file "
                "and --http-tls-cert/--http-tls-key, a firewall, or a reverse proxy; "
                "docs/SECURITY.md)\n",
                m->g->prog, listen,
                m->auth == NULL && cert == NULL ? "without --auth-file or TLS"
                : m->auth == NULL               ? "without --auth-file"
                                                : "without TLS (credentials in clear text)");
    limit = conn_limit();
    /* Block the stop signals before MHD starts its thread (which inherits the mask), so
     * only sigwait() below receives them. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    /* the logger first: libmicrohttpd uses its own for what comes before it */
    d = MHD_start_daemon(flags, 0, NULL, NULL, answer, m, MHD_OPTION_EXTERNAL_LOGGER, http_log, m,
                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
                         limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, limit / 2,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_IDLE_S,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEM,
                         cert != NULL ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, cert,
                         MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_END);
    if (d == NULL) {
        fprintf(stderr, "%s: cannot listen on ", m->g->prog);
        cli_put_safe(stderr, listen, strlen(listen));
        fprintf(stderr, ": %s\n", strerror(errno));
        return DQ_EXIT_FAILED;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    fprintf(stderr, "%s: serving /metrics on %s port %u (%s; %s%s; cache %lld ms)\n", m->g->prog,
            listen, info != NULL ? (unsigned)info->port : 0u,
            m->n_queues > 0 ? "the -q queues" : "every registered queue",
            cert != NULL ? "https" : "http", m->auth != NULL ? " with auth" : "",
            (long long)m->cache_ms);
    while (sigwait(&set, &sig) != 0 || (sig != SIGINT && sig != SIGTERM))
        ;
    /* waits for a scrape in progress, which the command timeout bounds */
    MHD_stop_daemon(d);
    fprintf(stderr, "%s: stopped by signal %d\n", m->g->prog, sig);
    return DQ_EXIT_OK;
}

/* Writes to a temporary file next to @path and renames it over @path, so a reader sees
 * the old exposition or the new one, never half of one. */
static int
write_textfile(const struct metrics *m, const char *path)
{
    size_t plen = strlen(path), off = 0;
    char *tmp = malloc(plen + 8);
    const char *what = "create a temporary file for";
    int fd = -1, rc = DQ_EXIT_FAILED, e = 0;
    bool made = false;

    if (tmp == NULL) {
        fprintf(stderr, "delayq: out of memory\n");
        exit(DQ_EXIT_FAILED);
    }
    /* not ending in .prom, so the textfile collector never reads it half-written */
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".XXXXXX", 8);
    fd = mkstemp(tmp);
    if (fd < 0)
        goto out;
    made = true;
    what = "write";
    while (off < m->out.len) {
        ssize_t w = write(fd, m->out.data + off, m->out.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            goto out;
        off += (size_t)w;
    }
    /* mkstemp makes it 0600; node_exporter usually runs as another user */
    if (fchmod(fd, 0644) != 0 || fsync(fd) != 0)
        goto out;
    e = close(fd);
    fd = -1;
    if (e != 0)
        goto out;
    what = "rename a temporary file to";
    if (rename(tmp, path) != 0)
        goto out;
    made = false;
    rc = DQ_EXIT_OK;
out:
    if (rc != DQ_EXIT_OK) {
        e = errno;
        fprintf(stderr, "%s: cannot %s ", m->g->prog, what);
        cli_put_safe(stderr, path, plen);
        fprintf(stderr, ": %s\n", strerror(e));
    }
    if (fd >= 0)
        close(fd);
    if (made)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* Reads the whole of a small file named by option @opt (certificates, keys, the
 * credentials): NULL after a message (exit 2) when it cannot be read, is empty or is over
 * 1 MiB. With @secret, a file that group or others may read is refused: it holds what
 * lets anyone read the metrics. */
static char *
read_small(const struct cli *g, const char *opt, const char *path, bool secret)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    size_t len = 0;
    char *data;

    if (f == NULL) {
        fprintf(stderr, "%s: %s: cannot open ", g->prog, opt);
        cli_put_safe(stderr, path, strlen(path));
        fprintf(stderr, ": %s\n", strerror(errno));
        return NULL;
    }
    if (secret && fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0) {
        fprintf(stderr, "%s: %s: ", g->prog, opt);
        cli_put_safe(stderr, path, strlen(path));
        fprintf(stderr,
                " holds a secret and its permissions (%03o) let others read it: "
                "chmod 600 it\n",
                (unsigned)(st.st_mode & 0777));
        fclose(f);
        return NULL;
    }
    data = cli_read_all(f, 1 << 20, &len);
    fclose(f);
    if (data == NULL || len == 0 || len > 1 << 20) {
        fprintf(stderr, "%s: %s: ", g->prog, opt);
        cli_put_safe(stderr, path, strlen(path));
        fprintf(stderr, " %s\n",
                data == NULL ? "cannot be read"
                : len == 0   ? "is empty"
                             : "is over 1 MiB");
        free(data);
        return NULL;
    }
    return data;
}

/* --auth-file: the Authorization header value a request must carry, from the file's
 * first line: "user:password" is basic auth, anything else a bearer token (a token has
 * no ':', RFC 6750). */
static int
load_auth(struct metrics *m, const char *path)
{
    char *data = read_small(m->g, "--auth-file", path, true);
    struct dq_buf b = DQ_BUF_INIT;
    size_t n;

    if (data == NULL)
        return DQ_EXIT_USAGE;
    n = strcspn(data, "\r\n");
    data[n] = '\0';
    if (n == 0 || strchr(data, ' ') != NULL || data[0] == ':') {
        /* the secret is not echoed */
        explicit_bzero(data, n);
        free(data);
        return cli_usage_error(m->g, "--auth-file: the first line must be user:password or a token "
                                     "(no spaces)");
    }
    if (strchr(data, ':') != NULL) {
        m->auth_scheme = "Basic";
        dq_buf_puts(&b, "Basic ");
        dq_b64_encode(&b, data, n);
    } else {
        m->auth_scheme = "Bearer";
        dq_buf_printf(&b, "Bearer %s", data);
    }
    explicit_bzero(data, n);
    free(data);
    if (b.failed) {
        fprintf(stderr, "delayq: out of memory\n");
        exit(DQ_EXIT_FAILED);
    }
    m->auth = dq_buf_steal(&b, NULL);
    return DQ_EXIT_OK;
}

static int
run(struct cli *g, const struct cli_args *args)
{
    struct metrics m = {.g = g, .out = DQ_BUF_INIT, .cache_ms = cli_num(args, "cache", 1000)};
    const char *listen = cli_str(args, "listen", "127.0.0.1:9187");
    const char *textfile = cli_str(args, "textfile", NULL);
    const char *auth_file = cli_str(args, "auth-file", NULL);
    const char *cert_file = cli_str(args, "http-tls-cert", NULL);
    const char *key_file = cli_str(args, "http-tls-key", NULL);
    char *cert = NULL, *key = NULL;
    bool listen_given = cli_has(args, "listen");
    dq_err err = {0};
    int rc;

    m.queues = calloc(args->ngiven + 1, sizeof *m.queues);
    if (m.queues == NULL) {
        fprintf(stderr, "delayq: out of memory\n");
        return DQ_EXIT_FAILED;
    }
    /* -q is this command's own here, and repeatable: every one is exported */
    for (size_t i = 0; i < args->ngiven; i++) {
        if (strcmp(args->given[i].opt->name, "queue") != 0)
            continue;
        if (dq_queue_name_check(args->given[i].val, &err) != DQ_OK) {
            free(m.queues);
            return cli_error(g, &err);
        }
        m.queues[m.n_queues++] = args->given[i].val;
    }
    if (textfile != NULL && (listen_given || auth_file || cert_file || key_file)) {
        free(m.queues);
        return cli_usage_error(g, "--textfile writes a file: --listen, --cache, --auth-file and "
                                  "--http-tls-* are for the HTTP server");
    }
    if ((cert_file == NULL) != (key_file == NULL)) {
        free(m.queues);
        return cli_usage_error(g, "--http-tls-cert and --http-tls-key go together");
    }
    if ((auth_file != NULL && (rc = load_auth(&m, auth_file)) != DQ_EXIT_OK) ||
        (cert_file != NULL &&
         ((cert = read_small(g, "--http-tls-cert", cert_file, false)) == NULL ||
          (key = read_small(g, "--http-tls-key", key_file, true)) == NULL))) {
        rc = DQ_EXIT_USAGE;
        goto out;
    }
    /* a Redis that dies mid-write must fail the call, not kill the exporter */
    signal(SIGPIPE, SIG_IGN);
    if (textfile != NULL) {
        bool up = scrape(&m);
        if (strcmp(textfile, "-") == 0) {
            fwrite(m.out.data, 1, m.out.len, stdout);
            rc = fflush(stdout) == 0 ? DQ_EXIT_OK : DQ_EXIT_FAILED;
        } else {
            rc = write_textfile(&m, textfile);
        }
        if (rc == DQ_EXIT_OK && !up)
            rc = DQ_EXIT_REDIS;
    } else {
        rc = serve(&m, listen, cert, key);
    }
out:
    dq_buf_free(&m.out);
    if (key != NULL)
        explicit_bzero(key, strlen(key));
    if (m.auth != NULL)
        explicit_bzero(m.auth, strlen(m.auth));
    free(key);
    free(cert);
    free(m.auth);
    free(m.queues);
    return rc;
}

static const struct cli_opt opts[] = {
    {"queue", 'q', "NAME", CLI_STR, .needs = "a name",
     .help = "export NAME (repeatable; default: every registered queue)"},
    {"listen", 0, "HOST:PORT", CLI_STR, .needs = "HOST:PORT",
     .help = "serve there (default 127.0.0.1:9187; [IPv6]:PORT; port 0: any)"},
    {"cache", 0, "DUR", CLI_DUR, 0, 3600000, .needs = "a duration (e.g. 1s; 0: no cache)",
     .help = "answer GETs from a scrape younger than DUR (default 1s)"},
    {"auth-file", 0, "PATH", CLI_STR, .needs = "a path", .flags = CLI_NONEMPTY,
     .help = "require user:password (basic auth) or a token (Bearer)"},
    {"http-tls-cert", 0, "PATH", CLI_STR, .needs = "a path", .flags = CLI_NONEMPTY,
     .help = "serve HTTPS with this certificate chain (PEM)"},
    {"http-tls-key", 0, "PATH", CLI_STR, .needs = "a path", .flags = CLI_NONEMPTY,
     .help = "its key (PEM, chmod 600); --tls-key is the Redis one"},
    {"textfile", 0, "PATH", CLI_STR, .needs = "a path", .flags = CLI_NONEMPTY,
     .help = "write one scrape to PATH (\"-\": stdout) and exit; 3: Redis down"},
    {NULL},
};

const struct cli_cmd cmd_metrics = {
    .name = "metrics",
    .summary = "serve the queues' metrics to Prometheus, or write them to a file",
    .usage = "delayq metrics [-q QUEUE]... [--listen HOST:PORT] [--cache DUR]\n"
             "                      [--auth-file PATH]\n"
             "                      [--http-tls-cert PATH --http-tls-key PATH]\n"
             "delayq metrics [-q QUEUE]... --textfile PATH",
    .about = "The queues' counts, counters, workers and pause for Prometheus, on\n"
             "http://HOST:PORT/metrics until SIGTERM, or written once to PATH (atomically) for\n"
             "node_exporter. Every registered queue (up to 1000), or the -q ones. Redis down:\n"
             "HTTP 200 with delayq_up 0. Beyond loopback without --auth-file and TLS it warns.",
    .opts = opts,
    .run = run,
};
