/* SPDX-License-Identifier: MIT */
/*
 * test_tls.c: rediss:// against a real TLS-only redis-server on 127.0.0.1, with
 * certificates made by `openssl` in the server's temp dir (tests/harness/redis.c): the
 * right CA works end to end, a wrong CA, a wrong server name and a missing client
 * certificate are refused with the reason and exit 3, --tls-insecure connects and warns,
 * a listener that never speaks TLS times out at the connect timeout, and the wake-up
 * subscription and a `delayq work` process carry on across a Redis restart.
 */
#include "harness/fixture.h"
#include "harness/worker.h"
#include "lib/client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_TIMEOUT_MS 20000

static struct test_redis tls_redis;
static char tmpdir[200];
/* the `delayq work` a test started: a failed assertion must not leave it running */
static pid_t worker_pid;

static int
group_setup(void **state)
{
    int rc;

    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dq-tls-test-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    rc = test_redis_start_tls(&tls_redis, NULL);
    if (rc == TEST_REDIS_SKIP)
        exit(77);
    /* what the children see comes from the test alone */
    unsetenv("DELAYQ_URL");
    unsetenv("DELAYQ_PASSWORD");
    unsetenv("DELAYQ_TLS_CA");
    unsetenv("DELAYQ_TLS_CERT");
    unsetenv("DELAYQ_TLS_KEY");
    unsetenv("DELAYQ_TLS_SERVER_NAME");
    unsetenv("DELAYQ_TLS_INSECURE");
    return rc;
}

static int
group_teardown(void **state)
{
    char cmd[300];

    (void)state;
    if (worker_pid > 0) {
        kill(worker_pid, SIGKILL);
        waitpid(worker_pid, NULL, 0);
    }
    test_redis_stop(&tls_redis);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- running delayq ----------------------------------------------------------------- */

struct run {
    int status; /* exit status; -1 if killed at the deadline */
    int64_t elapsed_ms;
    char err[8192]; /* stderr and stdout, as written */
};

/* Runs $DELAYQ_BIN @args (NULL-terminated) with "NAME=VALUE" strings @env added, its
 * output into @r->err, killed at RUN_TIMEOUT_MS. */
static void
run(const char *const *env, const char *const *args, struct run *r)
{
    const char *bin = getenv("DELAYQ_BIN");
    char out[300];
    int64_t t0, deadline;
    int status = 0;
    pid_t pid;
    FILE *f;
    size_t n;

    assert_non_null(bin);
    memset(r, 0, sizeof *r);
    snprintf(out, sizeof out, "%s/run.out", tmpdir);
    fflush(NULL);
    t0 = test_mono_ms();
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *argv[40];
        int k = 0, fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        dup2(fd, 1);
        dup2(fd, 2);
        argv[k++] = strdup(bin);
        for (int i = 0; args[i] != NULL && k < 39; i++)
            argv[k++] = strdup(args[i]);
        argv[k] = NULL;
        for (int i = 0; env != NULL && env[i] != NULL; i++)
            putenv(strdup(env[i]));
        signal(SIGPIPE, SIG_DFL);
        execv(bin, argv);
        _exit(127);
    }
    deadline = t0 + RUN_TIMEOUT_MS;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            break;
        }
        if (test_mono_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            r->status = -1;
            break;
        }
        test_nap_ms(5);
    }
    r->elapsed_ms = test_mono_ms() - t0;
    f = fopen(out, "r");
    assert_non_null(f);
    n = fread(r->err, 1, sizeof r->err - 1, f);
    r->err[n] = '\0';
    fclose(f);
}

#define ASSERT_RUN(r, want_status, want_text)                                                      \
    do {                                                                                           \
        if ((r)->status != (want_status) || strstr((r)->err, (want_text)) == NULL)                 \
            fail_msg("exit %d (want %d), output (want \"%s\"):\n%s", (r)->status, (want_status),   \
                     (want_text), (r)->err);                                                       \
    } while (0)

/* ---- the library -------------------------------------------------------------------- */

/* The message a certificate from an unknown CA gets. */
static bool
verify_failed(const char *msg)
{
    return strstr(msg, "tls: certificate verify failed: self-signed certificate in certificate "
                       "chain") != NULL ||
           strstr(msg, "tls: certificate verify failed: unable to get local issuer "
                       "certificate") != NULL;
}

static int
open_tls(const char *url, const dq_client_opts *o, dq_client **c, dq_err *err)
{
    dq_client_opts d = *o;

    d.who = "tls-tester";
    return dq_client_open(url, &d, c, err);
}

static void
right_ca_round_trip(void **state)
{
    struct fixture f;
    dq_client_opts o = {.tls_ca = tls_redis.ca};
    dq_enqueued e;
    dq_claimed cl;
    dq_stats s;
    char url[340];

    (void)state;
    memset(&f, 0, sizeof f);
    f.redis = &tls_redis;
    test_queue_name(f.queue, sizeof f.queue, "roundtrip");
    /* the URL's host is an IP: checked against the certificate's IP subjectAltName */
    ASSERT_OK(&f, open_tls(tls_redis.url, &o, &f.c, &f.err));
    ASSERT_OK(&f, dq_enqueue(f.c, f.queue, NULL, "over tls", 8, &e, &f.err));
    ASSERT_OK(&f, dq_claim(f.c, f.queue, 1, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 1);
    assert_int_equal(cl.tasks[0].payload_len, 8);
    assert_memory_equal(cl.tasks[0].payload, "over tls", 8);
    ASSERT_OK(&f, dq_ack(f.c, f.queue, &cl.tasks[0], &f.err));
    dq_claimed_free(&cl);
    ASSERT_OK(&f, dq_stats_get(f.c, f.queue, &s, &f.err));
    assert_int_equal(s.done, 1);
    fixture_close(&f);

    /* a DNS name from the certificate, checked instead of the URL's host */
    o.tls_server_name = "localhost";
    ASSERT_OK(&f, open_tls(tls_redis.url, &o, &f.c, &f.err));
    fixture_close(&f);
    /* a URL by name: that name is sent as SNI and checked */
    o.tls_server_name = NULL;
    snprintf(url, sizeof url, "rediss://localhost:%d", tls_redis.port);
    ASSERT_OK(&f, open_tls(url, &o, &f.c, &f.err));
    fixture_close(&f);
    o.tls_server_name = "localhost";
    /* a big reply (many TLS records) arrives whole */
    snprintf(url, sizeof url, "%s/0", tls_redis.url);
    ASSERT_OK(&f, open_tls(url, &o, &f.c, &f.err));
    for (int i = 0; i < 50; i++) {
        char big[4000];
        memset(big, 'a' + i % 26, sizeof big);
        ASSERT_OK(&f, dq_enqueue(f.c, f.queue, NULL, big, sizeof big, &e, &f.err));
    }
    dq_page p;
    ASSERT_OK(&f, dq_page_get(f.c, f.queue, DQ_VIEW_DUE, 0, 50, &p, &f.err));
    assert_int_equal(p.n, 50);
    dq_page_free(&p);
    fixture_close(&f);
}

static void
wrong_ca_and_name_are_refused(void **state)
{
    dq_client *c = NULL;
    dq_client_opts o = {.tls_ca = tls_redis.other_ca};
    dq_err err = {0};

    (void)state;
    assert_int_equal(open_tls(tls_redis.url, &o, &c, &err), DQ_ECONN);
    assert_null(c);
    /* redis-server sends its CA along with its certificate, so OpenSSL's words are
     * "self-signed certificate in certificate chain"; a server that sends only its own
     * gets "unable to get local issuer certificate" */
    if (!verify_failed(err.msg))
        fail_msg("wrong CA: %s", err.msg);
    /* no CA given: the system store, which does not know our test CA either */
    o.tls_ca = NULL;
    assert_int_equal(open_tls(tls_redis.url, &o, &c, &err), DQ_ECONN);
    assert_non_null(strstr(err.msg, "certificate verify failed"));
    o.tls_ca = tls_redis.ca;
    o.tls_server_name = "other.example";
    assert_int_equal(open_tls(tls_redis.url, &o, &c, &err), DQ_ECONN);
    if (strstr(err.msg, "certificate verify failed: hostname mismatch") == NULL ||
        strstr(err.msg, "other.example") == NULL)
        fail_msg("wrong name: %s", err.msg);
    o.tls_server_name = "127.0.0.2";
    assert_int_equal(open_tls(tls_redis.url, &o, &c, &err), DQ_ECONN);
    assert_non_null(strstr(err.msg, "IP address mismatch"));
}

static void
options_are_checked(void **state)
{
    dq_client *c = NULL;
    dq_client_opts o = {.tls_ca = tls_redis.ca};
    dq_err err = {0};

    (void)state;
    /* TLS options with a plain URL: refused, never a silent plain connection */
    assert_int_equal(open_tls("redis://127.0.0.1:1", &o, &c, &err), DQ_EINVAL);
    assert_non_null(strstr(err.msg, "rediss://"));
    o.tls_ca = "/nonexistent/ca.pem";
    assert_int_equal(open_tls(tls_redis.url, &o, &c, &err), DQ_EINVAL);
    assert_non_null(strstr(err.msg, "tls-ca: cannot read /nonexistent/ca.pem"));
    o.tls_ca = tls_redis.ca;
    o.tls_key = tls_redis.client_key;
    assert_int_equal(open_tls(tls_redis.url, &o, &c, &err), DQ_EINVAL);
    assert_non_null(strstr(err.msg, "tls-key"));
    /* a key that does not belong to the certificate */
    o.tls_cert = tls_redis.client_cert;
    char other_key[340];
    snprintf(other_key, sizeof other_key, "%s/ca.key", tls_redis.dir);
    o.tls_key = other_key;
    assert_int_equal(open_tls(tls_redis.url, &o, &c, &err), DQ_EINVAL);
    assert_non_null(strstr(err.msg, "tls-key: cannot use"));
    assert_non_null(strstr(err.msg, "mismatch"));
    /* a CA directory in `openssl rehash` form works like the file */
    char dir[340], cmd[1600];
    snprintf(dir, sizeof dir, "%s/cadir", tmpdir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s/' && openssl rehash '%s' 2>/dev/null",
             dir, tls_redis.ca, dir, dir);
    assert_int_equal(system(cmd), 0);
    dq_client_opts od = {.tls_ca = dir};
    if (open_tls(tls_redis.url, &od, &c, &err) != DQ_OK)
        fail_msg("CA directory: %s", err.msg);
    dq_client_free(c);
}

/* A TCP listener that accepts (the kernel completes the handshake) and never answers. */
static int
silent_listener(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void
silent_listener_times_out(void **state)
{
    int port, fd = silent_listener(&port);
    char url[64], msg[100];
    dq_client *c = NULL;
    dq_client_opts o = {.tls_ca = tls_redis.ca, .connect_timeout_ms = 300};
    dq_err err = {0};
    struct run r;

    (void)state;
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d", port);
    int64_t t0 = test_mono_ms();
    assert_int_equal(open_tls(url, &o, &c, &err), DQ_ETIMEOUT);
    int64_t took = test_mono_ms() - t0;
    printf("# library: timed out after %lld ms (connect timeout 300 ms)\n", (long long)took);
    assert_true(took >= 290 && took < 300 + 1000 * test_slowdown());
    assert_non_null(strstr(err.msg, "did not answer the TLS handshake within 300 ms"));

    const char *args[] = {"stats",      "--url",     url,     "--tls-ca",
                          tls_redis.ca, "--timeout", "500ms", NULL};
    run(NULL, args, &r);
    snprintf(msg, sizeof msg, "did not answer the TLS handshake within 500 ms");
    ASSERT_RUN(&r, 3, msg);
    printf("# delayq stats: exit 3 after %lld ms (timeout 500 ms)\n", (long long)r.elapsed_ms);
    assert_true(r.elapsed_ms >= 490 && r.elapsed_ms < 500 + 2000);
    close(fd);
}

/* AUTH and SELECT travel inside TLS, and a wrong password is refused as over TCP */
static void
password_and_db_over_tls(void **state)
{
    struct test_redis own;
    const char *setpass[] = {"CONFIG", "SET", "requirepass", "s3cret"};
    dq_client *c = NULL;
    dq_client_opts o = {0};
    dq_err err = {0};
    dq_enqueued e;
    char url[400];

    (void)state;
    assert_int_equal(test_redis_start_tls(&own, NULL), 0);
    o.tls_ca = own.ca;
    redisReply *r = test_redis_cmd(&own, 4, setpass);
    assert_non_null(r);
    freeReplyObject(r);
    assert_int_equal(open_tls(own.url, &o, &c, &err), DQ_ECONN);
    assert_non_null(strstr(err.msg, "NOAUTH"));
    snprintf(url, sizeof url, "rediss://:wrong@127.0.0.1:%d", own.port);
    assert_int_equal(open_tls(url, &o, &c, &err), DQ_ECONN);
    assert_null(strstr(err.msg, "wrong"));
    snprintf(url, sizeof url, "rediss://:s3cret@127.0.0.1:%d/5", own.port);
    if (open_tls(url, &o, &c, &err) != DQ_OK)
        fail_msg("password over TLS: %s", err.msg);
    assert_int_equal(dq_enqueue(c, "dbq", NULL, "x", 1, &e, &err), DQ_OK);
    dq_client_free(c);
    /* the task went to db 5 (the password now from the options, as $DELAYQ_PASSWORD) */
    o.password = "s3cret";
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d/5", own.port);
    assert_int_equal(open_tls(url, &o, &c, &err), DQ_OK);
    dq_stats s;
    assert_int_equal(dq_stats_get(c, "dbq", &s, &err), DQ_OK);
    assert_int_equal(s.due, 1);
    dq_client_free(c);
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d/0", own.port);
    assert_int_equal(open_tls(url, &o, &c, &err), DQ_OK);
    assert_int_equal(dq_stats_get(c, "dbq", &s, &err), DQ_OK);
    assert_int_equal(s.due, 0);
    dq_client_free(c);
    test_redis_stop(&own);
}

/* rediss:// to a plain port and redis:// to a TLS port: an error that says so, in time */
static void
wrong_scheme_for_the_port(void **state)
{
    struct test_redis plain;
    dq_client *c = NULL;
    dq_client_opts o = {.tls_ca = tls_redis.ca, .connect_timeout_ms = 300};
    dq_err err = {0};
    char url[64];

    (void)state;
    assert_int_equal(test_redis_start(&plain, NULL), 0);
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d", plain.port);
    int64_t t0 = test_mono_ms();
    int rc = open_tls(url, &o, &c, &err);
    int64_t took = test_mono_ms() - t0;
    /* Redis reads the ClientHello as the start of a command and waits for the rest (or,
     * when its bytes happen to end one, answers with an error: not TLS either) */
    printf("# rediss:// to a plain port: %s after %lld ms: %s\n", dq_strerror(rc), (long long)took,
           err.msg);
    assert_true(rc == DQ_ETIMEOUT || rc == DQ_ECONN);
    assert_true(took < 300 + 1000 * test_slowdown());
    if (rc == DQ_ETIMEOUT)
        assert_non_null(strstr(err.msg, "is it a TLS port?"));
    test_redis_stop(&plain);

    dq_client_opts none = {0};
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", tls_redis.port);
    assert_int_equal(open_tls(url, &none, &c, &err), DQ_ECONN);
    printf("# redis:// to a TLS port: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "use rediss://"));
}

static void
wake_up_subscription_over_tls(void **state)
{
    struct fixture f;
    dq_client_opts o = {.tls_ca = tls_redis.ca};
    dq_client *sub = NULL;
    struct dq_wake w;

    (void)state;
    memset(&f, 0, sizeof f);
    f.redis = &tls_redis;
    ASSERT_OK(&f, open_tls(tls_redis.url, &o, &f.c, &f.err));
    ASSERT_OK(&f, dq_sub_open(f.c, "dq:{tlswake}:wake", &sub, &f.err));
    const char *pub[] = {"SPUBLISH", "dq:{tlswake}:wake", "lease:12345"};
    assert_int_equal(test_redis_int(&tls_redis, 3, pub), 1);
    int got = 0;
    int64_t deadline = test_mono_ms() + 5000;
    while (got == 0 && test_mono_ms() < deadline) {
        struct pollfd p = {.fd = dq_sub_fd(sub), .events = POLLIN};
        if (poll(&p, 1, 100) > 0) {
            got = dq_sub_drain(sub, &w, &f.err);
            assert_true(got >= 0);
        }
    }
    assert_int_equal(got, 1);
    assert_int_equal(w.lease_ms, 12345);
    dq_client_free(sub);
    fixture_close(&f);
}

/* ---- the delayq command ------------------------------------------------------------- */

static void
cli_right_and_wrong_ca(void **state)
{
    struct run r;

    (void)state;
    const char *ok[] = {"enqueue", "--url",  tls_redis.url, "--tls-ca",       tls_redis.ca,
                        "-q",      "clitls", "--json",      "{\"hello\": 1}", NULL};
    run(NULL, ok, &r);
    ASSERT_RUN(&r, 0, "");
    const char *stats[] = {"stats", "--url", tls_redis.url, "-q", "clitls", NULL};
    const char *env_ok[] = {NULL, NULL};
    char ca_env[340];
    snprintf(ca_env, sizeof ca_env, "DELAYQ_TLS_CA=%s", tls_redis.ca);
    env_ok[0] = ca_env;
    run(env_ok, stats, &r);
    ASSERT_RUN(&r, 0, "");

    const char *bad[] = {"stats", "--url",  tls_redis.url, "--tls-ca", tls_redis.other_ca,
                         "-q",    "clitls", NULL};
    run(NULL, bad, &r);
    ASSERT_RUN(&r, 3, "tls: certificate verify failed: ");
    if (!verify_failed(r.err))
        fail_msg("wrong CA: %s", r.err);
    const char *name[] = {"stats",         "--url",      tls_redis.url,
                          "--tls-ca",      tls_redis.ca, "--tls-server-name",
                          "other.example", NULL};
    run(NULL, name, &r);
    ASSERT_RUN(&r, 3, "hostname mismatch");
    /* delayq metrics builds its client by itself: the same options reach it */
    const char *metrics[] = {"metrics",    "--url", tls_redis.url, "--tls-ca", tls_redis.ca,
                             "--textfile", "-",     "-q",          "clitls",   NULL};
    run(NULL, metrics, &r);
    ASSERT_RUN(&r, 0, "delayq_up 1");
    const char *metrics_bad[] = {"metrics",          "--url",      tls_redis.url, "--tls-ca",
                                 tls_redis.other_ca, "--textfile", "-",           "-q",
                                 "clitls",           NULL};
    run(NULL, metrics_bad, &r);
    ASSERT_RUN(&r, 3, "delayq_up 0");
    const char *plain[] = {"stats", "--url", "redis://127.0.0.1:1", "--tls-ca", tls_redis.ca, NULL};
    run(NULL, plain, &r);
    ASSERT_RUN(&r, 2, "need a rediss:// URL");
    const char *nofile[] = {"stats", "--url", tls_redis.url, "--tls-ca", "/nonexistent.pem", NULL};
    run(NULL, nofile, &r);
    ASSERT_RUN(&r, 2, "tls-ca: cannot read /nonexistent.pem");
}

static void
cli_insecure_connects_and_warns(void **state)
{
    struct run r;

    (void)state;
    /* stats needs a queue the server knows: the default one, made the way a user would */
    const char *make[] = {"enqueue",    "--url",  tls_redis.url, "--tls-ca",
                          tls_redis.ca, "--json", "1",           NULL};
    run(NULL, make, &r);
    ASSERT_RUN(&r, 0, "");
    const char *args[] = {"stats",          "--url", tls_redis.url, "--tls-ca", tls_redis.other_ca,
                          "--tls-insecure", NULL};
    run(NULL, args, &r);
    ASSERT_RUN(&r, 0, "warning: --tls-insecure");
    const char *env[] = {"DELAYQ_TLS_INSECURE=1", NULL};
    const char *args2[] = {"stats", "--url", tls_redis.url, NULL};
    run(env, args2, &r);
    ASSERT_RUN(&r, 0, "NOT checked");
    /* anything but an explicit yes keeps checking on */
    const char *env_no[] = {"DELAYQ_TLS_INSECURE=0", NULL};
    run(env_no, args2, &r);
    ASSERT_RUN(&r, 3, "certificate verify failed");
}

static void
client_certificate_required(void **state)
{
    struct test_redis own;
    const char *need[] = {"--tls-auth-clients", "yes", NULL};
    struct run r;
    dq_client *c = NULL;
    dq_err err = {0};

    (void)state;
    assert_int_equal(test_redis_start_tls(&own, need), 0);
    dq_client_opts o = {.tls_ca = own.ca};
    assert_int_equal(open_tls(own.url, &o, &c, &err), DQ_ECONN);
    printf("# without a client certificate: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "tls: "));
    assert_non_null(strstr(err.msg, "certificate"));
    o.tls_cert = own.client_cert;
    o.tls_key = own.client_key;
    if (open_tls(own.url, &o, &c, &err) != DQ_OK)
        fail_msg("with a client certificate: %s", err.msg);
    dq_client_free(c);

    const char *none[] = {"stats", "--url", own.url, "--tls-ca", own.ca, NULL};
    run(NULL, none, &r);
    ASSERT_RUN(&r, 3, "certificate");
    /* the stats below need a queue the server knows: the default one */
    const char *make[] = {
        "enqueue",       "--url",     own.url,        "--tls-ca", own.ca, "--tls-cert",
        own.client_cert, "--tls-key", own.client_key, "--json",   "1",    NULL};
    run(NULL, make, &r);
    ASSERT_RUN(&r, 0, "");
    const char *given[] = {"stats",      "--url",         own.url,     "--tls-ca",     own.ca,
                           "--tls-cert", own.client_cert, "--tls-key", own.client_key, NULL};
    run(NULL, given, &r);
    ASSERT_RUN(&r, 0, "");
    /* the same through the environment */
    char e1[340], e2[340], e3[340];
    snprintf(e1, sizeof e1, "DELAYQ_TLS_CA=%s", own.ca);
    snprintf(e2, sizeof e2, "DELAYQ_TLS_CERT=%s", own.client_cert);
    snprintf(e3, sizeof e3, "DELAYQ_TLS_KEY=%s", own.client_key);
    const char *env[] = {e1, e2, e3, NULL};
    const char *bare[] = {"stats", "--url", own.url, NULL};
    run(env, bare, &r);
    ASSERT_RUN(&r, 0, "");
    test_redis_stop(&own);
}

/* ---- a worker across a restart ------------------------------------------------------ */

struct done_at_least {
    struct fixture *f;
    int64_t done;
};

static bool
done_reached(void *arg)
{
    struct done_at_least *d = arg;
    dq_stats s;

    if (dq_stats_get(d->f->c, d->f->queue, &s, &d->f->err) != DQ_OK)
        return false;
    return s.done >= d->done && s.inflight == 0;
}

static void
worker_survives_a_restart(void **state)
{
    struct fixture f;
    struct test_redis own;
    const char *aof[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};
    dq_client_opts o = {.tls_ca = NULL, .connect_timeout_ms = 1000, .command_timeout_ms = 1000};
    char log[300], handler[300];
    pid_t pid;

    (void)state;
    assert_int_equal(test_redis_start_tls(&own, aof), 0);
    o.tls_ca = own.ca;
    memset(&f, 0, sizeof f);
    f.redis = &own;
    snprintf(f.queue, sizeof f.queue, "tlswork");
    ASSERT_OK(&f, open_tls(own.url, &o, &f.c, &f.err));
    snprintf(handler, sizeof handler, "%s/ok.sh", tmpdir);
    FILE *h = fopen(handler, "w");
    assert_non_null(h);
    fprintf(h, "#!/bin/sh\nexit 0\n");
    fclose(h);
    chmod(handler, 0755);
    snprintf(log, sizeof log, "%s/work.log", tmpdir);
    for (int i = 0; i < 10; i++)
        enqueue_str(&f, "before", 0, NULL, NULL);

    const char *wargv[] = {"--url",  own.url, "--tls-ca", own.ca,  "-q", f.queue,
                           "--name", "tlsw",  "--",       handler, NULL};
    pid = test_work_start(wargv, log);
    worker_pid = pid;
    struct done_at_least d = {.f = &f, .done = 10};
    assert_true(wait_until(done_reached, &d, 15000, "the first ten tasks done over TLS"));

    assert_int_equal(test_redis_restart(&own), 0);
    dq_client_free(f.c);
    f.c = NULL;
    ASSERT_OK(&f, open_tls(own.url, &o, &f.c, &f.err));
    for (int i = 0; i < 10; i++)
        enqueue_str(&f, "after", i * 20, NULL, NULL);
    d.done = 20;
    assert_true(wait_until(done_reached, &d, 20000, "ten more done after the restart"));
    /* the worker is still the same process, and stops cleanly */
    assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
    assert_int_equal(test_work_stop(pid, SIGTERM), 0);
    worker_pid = 0;
    fixture_close(&f);
    test_redis_stop(&own);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(right_ca_round_trip),
        cmocka_unit_test(wrong_ca_and_name_are_refused),
        cmocka_unit_test(options_are_checked),
        cmocka_unit_test(silent_listener_times_out),
        cmocka_unit_test(password_and_db_over_tls),
        cmocka_unit_test(wrong_scheme_for_the_port),
        cmocka_unit_test(wake_up_subscription_over_tls),
        cmocka_unit_test(cli_right_and_wrong_ca),
        cmocka_unit_test(cli_insecure_connects_and_warns),
        cmocka_unit_test(client_certificate_required),
        cmocka_unit_test(worker_survives_a_restart),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/tls", tests, group_setup, group_teardown);
}
