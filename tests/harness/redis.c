/* SPDX-License-Identifier: MIT */
/*
 * redis.c: the integration-test Redis fixture.
 *
 * Rules learnt the hard way (STYLE §5.8): never daemonize (we must hold the PID),
 * always --save "" (otherwise SIGTERM makes Redis save into a dir we may already
 * have deleted, and it lingers), and escalate to SIGKILL after a deadline. The
 * free port comes from binding 127.0.0.1:0; someone else can take it before
 * redis-server binds it, so an early exit of the child means "try another port".
 * Readiness is PING + INFO's process_id, so we never mistake another test's
 * server on a recycled port for ours. A TLS server has no plain TCP port, so the
 * fixture itself talks to it through its unix socket (hiredis 0.14 has no TLS).
 */
#include "redis.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "wait.h"

#define START_DEADLINE_MS 5000
#define STOP_DEADLINE_MS  5000
#define POLL_MS           5
#define PORT_ATTEMPTS     5
#define SOCK_NAME         "redis.sock"
#define LOG_NAME          "redis.log"
/* sun_path is 108 bytes on Linux; keep the socket path well inside it. */
#define SUN_PATH_MAX 104

/* Arguments for execv, packed into one buffer before fork so the child never
 * allocates. */
struct argv_buf {
    char store[8192];
    size_t used;
    char *argv[64];
    int argc;
};

static bool
argv_add(struct argv_buf *a, const char *s)
{
    size_t len = strlen(s) + 1;

    if (a->argc + 1 >= (int)(sizeof a->argv / sizeof a->argv[0]) || len > sizeof a->store - a->used)
        return false;
    memcpy(a->store + a->used, s, len);
    a->argv[a->argc++] = a->store + a->used;
    a->argv[a->argc] = NULL;
    a->used += len;
    return true;
}

/* Finds the server binary into @out; false when it is missing. */
static bool
find_server(char *out, size_t size)
{
    const char *bin = getenv("DQ_REDIS_SERVER");
    const char *path;

    if (bin == NULL || bin[0] == '\0')
        bin = "redis-server";
    if (strchr(bin, '/') != NULL) {
        if (snprintf(out, size, "%s", bin) >= (int)size)
            return false;
        return access(out, X_OK) == 0;
    }
    path = getenv("PATH");
    if (path == NULL || path[0] == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path != '\0') {
        size_t n = strcspn(path, ":");
        int w;

        if (n == 0)
            w = snprintf(out, size, "./%s", bin);
        else
            w = snprintf(out, size, "%.*s/%s", (int)n, path, bin);
        if (w > 0 && (size_t)w < size && access(out, X_OK) == 0)
            return true;
        path += n;
        if (*path == ':')
            path++;
    }
    return false;
}

/* Asks the kernel for a free loopback port; 0 on failure. */
static int
free_port(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int port = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return 0;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port == 6379 ? 0 : port;
}

/* Removes @path and everything below it without following symlinks. */
static void
rm_tree(const char *path)
{
    DIR *d = opendir(path);

    if (d != NULL) {
        struct dirent *e;

        while ((e = readdir(d)) != NULL) {
            char child[PATH_MAX];
            struct stat st;

            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child)
                continue;
            if (lstat(child, &st) != 0)
                continue;
            if (S_ISDIR(st.st_mode))
                rm_tree(child);
            else
                unlink(child);
        }
        closedir(d);
    }
    rmdir(path);
}

/* Prints the end of the server log, so a failed start explains itself. */
static void
dump_log_tail(const struct test_redis *r)
{
    char path[PATH_MAX];
    char buf[2048];
    FILE *f;
    long size;
    size_t n;

    if (snprintf(path, sizeof path, "%s/%s", r->dir, LOG_NAME) >= (int)sizeof path)
        return;
    f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0) {
        long from = size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0;

        if (fseek(f, from, SEEK_SET) == 0) {
            n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = '\0';
            fprintf(stderr, "test_redis: tail of %s:\n%s%s", path, buf,
                    n > 0 && buf[n - 1] != '\n' ? "\n" : "");
        }
    }
    fclose(f);
}

/* A plain connection to the fixture's server: TCP, or its unix socket when it is TLS. */
static redisContext *
connect_tcp(const struct test_redis *r, int timeout_ms)
{
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    redisContext *c = r->tls ? redisConnectUnixWithTimeout(r->sock, tv)
                             : redisConnectWithTimeout("127.0.0.1", r->port, tv);

    if (c == NULL || c->err != 0) {
        redisFree(c);
        return NULL;
    }
    return c;
}

/* True when the server on r->port answers PING with PONG and is our child. */
static bool
is_ready(const struct test_redis *r)
{
    redisContext *c = connect_tcp(r, 100);
    redisReply *reply;
    bool ok = false;

    if (c == NULL)
        return false;
    redisSetTimeout(c, (struct timeval){.tv_sec = 0, .tv_usec = 500 * 1000});
    reply = redisCommand(c, "PING");
    if (reply != NULL && reply->type == REDIS_REPLY_STATUS && strcmp(reply->str, "PONG") == 0) {
        freeReplyObject(reply);
        reply = redisCommand(c, "INFO server");
        if (reply != NULL && reply->type == REDIS_REPLY_STRING) {
            const char *p = strstr(reply->str, "process_id:");

            ok = p != NULL && strtol(p + strlen("process_id:"), NULL, 10) == (long)r->pid;
        }
    }
    freeReplyObject(reply);
    redisFree(c);
    return ok;
}

/* Non-blocking reap of r->pid; true (and pid cleared) if it has exited. */
static bool
reaped(struct test_redis *r, int *status)
{
    pid_t w;

    do {
        w = waitpid(r->pid, status, WNOHANG);
    } while (w < 0 && errno == EINTR);
    if (w == r->pid || (w < 0 && errno == ECHILD)) {
        r->pid = 0;
        return true;
    }
    return false;
}

static void
kill_and_reap(struct test_redis *r)
{
    int status;

    if (r->pid <= 0)
        return;
    kill(r->pid, SIGKILL);
    while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
        ;
    r->pid = 0;
}

/* SIGTERM, wait up to the deadline, then SIGKILL. Keeps the dir. */
static void
terminate(struct test_redis *r)
{
    int64_t deadline;
    int status;

    if (r->pid <= 0)
        return;
    kill(r->pid, SIGTERM);
    deadline = test_mono_ms() + STOP_DEADLINE_MS;
    while (!reaped(r, &status)) {
        if (test_mono_ms() >= deadline) {
            fprintf(stderr, "test_redis: pid %ld ignored SIGTERM for %d ms; sending SIGKILL\n",
                    (long)r->pid, STOP_DEADLINE_MS);
            kill_and_reap(r);
            return;
        }
        test_nap_ms(POLL_MS);
    }
}

/*
 * Forks and execs the server on r->port, then waits for it. Returns 0 when
 * ready, 1 when the child exited early (port race or bad arguments), -1 on
 * any other failure. The child is gone on every non-zero return.
 */
static int
spawn_and_wait(struct test_redis *r, const char *bin)
{
    struct argv_buf *a;
    char port[16], logfile[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
    long maxfd = sysconf(_SC_OPEN_MAX);
    pid_t parent = getpid();
    int64_t deadline;
    int status, rc = -1;
    bool ok;

    a = calloc(1, sizeof *a);
    if (a == NULL)
        return -1;
    snprintf(port, sizeof port, "%d", r->port);
    snprintf(logfile, sizeof logfile, "%s/%s", r->dir, LOG_NAME);
    snprintf(cert, sizeof cert, "%s/server.crt", r->dir);
    snprintf(key, sizeof key, "%s/server.key", r->dir);
    const char *const fixed[] = {
        bin,
        "--port",
        r->tls ? "0" : port,
        "--bind",
        "127.0.0.1",
        "--dir",
        r->dir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--unixsocket",
        r->sock,
        "--unixsocketperm",
        "700",
        "--logfile",
        logfile,
    };
    const char *const tls[] = {
        "--tls-port",         port,  "--tls-cert-file",    cert, "--tls-key-file", key,
        "--tls-ca-cert-file", r->ca, "--tls-auth-clients", "no",
    };

    ok = true;
    for (size_t i = 0; ok && i < sizeof fixed / sizeof fixed[0]; i++)
        ok = argv_add(a, fixed[i]);
    for (size_t i = 0; ok && r->tls && i < sizeof tls / sizeof tls[0]; i++)
        ok = argv_add(a, tls[i]);
    for (int i = 0; ok && i < r->n_extra; i++)
        ok = argv_add(a, r->extra[i]);
    if (!ok) {
        fprintf(stderr, "test_redis: redis-server arguments too long\n");
        goto out;
    }
    if (maxfd < 0 || maxfd > 65536)
        maxfd = 65536;

    r->pid = fork();
    if (r->pid < 0) {
        fprintf(stderr, "test_redis: fork: %s\n", strerror(errno));
        r->pid = 0;
        goto out;
    }
    if (r->pid == 0) {
        int null = open("/dev/null", O_RDWR);

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) /* the test died before prctl took effect */
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
        }
        for (long fd = 3; fd < maxfd; fd++)
            close((int)fd);
        execv(bin, a->argv);
        fprintf(stderr, "test_redis: exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }

    deadline = test_mono_ms() + START_DEADLINE_MS;
    for (;;) {
        if (reaped(r, &status)) {
            rc = 1;
            goto out;
        }
        if (is_ready(r)) {
            rc = 0;
            goto out;
        }
        if (test_mono_ms() >= deadline) {
            fprintf(stderr, "test_redis: no PONG from port %d within %d ms\n", r->port,
                    START_DEADLINE_MS);
            dump_log_tail(r);
            kill_and_reap(r);
            goto out;
        }
        test_nap_ms(POLL_MS);
    }
out:
    free(a);
    return rc;
}

static void
free_extra(struct test_redis *r)
{
    for (int i = 0; i < r->n_extra; i++) {
        free(r->extra[i]);
        r->extra[i] = NULL;
    }
    r->n_extra = 0;
}

static void
set_urls(struct test_redis *r)
{
    snprintf(r->url, sizeof r->url, "%s://127.0.0.1:%d", r->tls ? "rediss" : "redis", r->port);
}

/* A private dir whose socket path fits in sun_path: $TMPDIR if short enough. */
static bool
make_dir(struct test_redis *r)
{
    static const char tmpl[] = "/dq-redis-XXXXXX";
    const char *base = getenv("TMPDIR");
    size_t need = strlen(tmpl) + 1 + strlen(SOCK_NAME);

    if (base == NULL || base[0] == '\0' || strlen(base) + need >= SUN_PATH_MAX)
        base = "/tmp";
    snprintf(r->dir, sizeof r->dir, "%s%s", base, tmpl);
    if (mkdtemp(r->dir) == NULL) {
        fprintf(stderr, "test_redis: mkdtemp %s: %s\n", r->dir, strerror(errno));
        r->dir[0] = '\0';
        return false;
    }
    snprintf(r->sock, sizeof r->sock, "%s/%s", r->dir, SOCK_NAME);
    snprintf(r->unix_url, sizeof r->unix_url, "unix://%s", r->sock);
    return true;
}

static int
start(struct test_redis *r, const char *const *extra, bool tls)
{
    char bin[PATH_MAX];
    const char *skip_env = getenv("DQ_TEST_ALLOW_SKIP");
    bool skip = skip_env != NULL && strcmp(skip_env, "1") == 0;
    int rc = -1;

    memset(r, 0, sizeof *r);
    r->tls = tls;
    signal(SIGPIPE, SIG_IGN);
    if (!find_server(bin, sizeof bin)) {
        const char *env = getenv("DQ_REDIS_SERVER");
        bool from_env = env != NULL && env[0] != '\0';

        fprintf(stderr,
                "test_redis: redis-server not found (%s%s); install redis-server or set "
                "DQ_REDIS_SERVER%s\n",
                from_env ? "DQ_REDIS_SERVER=" : "searched PATH", from_env ? env : "",
                skip ? "; skipping (DQ_TEST_ALLOW_SKIP=1)" : "");
        return skip ? TEST_REDIS_SKIP : -1;
    }
    for (; extra != NULL && extra[r->n_extra] != NULL; r->n_extra++) {
        if (r->n_extra == TEST_REDIS_MAX_EXTRA) {
            fprintf(stderr, "test_redis: more than %d extra arguments\n", TEST_REDIS_MAX_EXTRA);
            goto out;
        }
        r->extra[r->n_extra] = strdup(extra[r->n_extra]);
        if (r->extra[r->n_extra] == NULL)
            goto out;
    }
    if (!make_dir(r))
        goto out;
    if (tls) {
        snprintf(r->ca, sizeof r->ca, "%s/ca.crt", r->dir);
        snprintf(r->other_ca, sizeof r->other_ca, "%s/other-ca.crt", r->dir);
        snprintf(r->client_cert, sizeof r->client_cert, "%s/client.crt", r->dir);
        snprintf(r->client_key, sizeof r->client_key, "%s/client.key", r->dir);
        if (test_tls_make_certs(r->dir) != 0)
            goto out;
    }

    for (int attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
        int spawned;

        r->port = free_port();
        if (r->port == 0)
            continue;
        spawned = spawn_and_wait(r, bin);
        if (spawned == 0) {
            set_urls(r);
            rc = 0;
            goto out;
        }
        if (spawned < 0)
            goto out;
        fprintf(stderr, "test_redis: redis-server on port %d exited early (attempt %d of %d)\n",
                r->port, attempt, PORT_ATTEMPTS);
        if (attempt == PORT_ATTEMPTS)
            dump_log_tail(r);
    }
    fprintf(stderr, "test_redis: could not start redis-server after %d attempts\n", PORT_ATTEMPTS);
out:
    if (rc != 0)
        test_redis_stop(r);
    return rc;
}

int
test_redis_start(struct test_redis *r, const char *const *extra)
{
    return start(r, extra, false);
}

int
test_redis_start_tls(struct test_redis *r, const char *const *extra)
{
    return start(r, extra, true);
}

/* ---- certificates ------------------------------------------------------------------- */

#define OPENSSL_DEADLINE_MS 20000

static const char openssl_cnf[] = "[req]\n"
                                  "distinguished_name = dn\n"
                                  "prompt = no\n"
                                  "[dn]\n"
                                  "CN = delayq test\n"
                                  "[ca]\n"
                                  "basicConstraints = critical,CA:TRUE\n"
                                  "keyUsage = critical,keyCertSign,cRLSign\n"
                                  "subjectKeyIdentifier = hash\n"
                                  "[server]\n"
                                  "basicConstraints = critical,CA:FALSE\n"
                                  "keyUsage = critical,digitalSignature\n"
                                  "extendedKeyUsage = serverAuth,clientAuth\n"
                                  "subjectAltName = IP:127.0.0.1,DNS:localhost\n"
                                  "[client]\n"
                                  "basicConstraints = critical,CA:FALSE\n"
                                  "keyUsage = critical,digitalSignature\n"
                                  "extendedKeyUsage = clientAuth\n";

/* Runs `openssl ARGS...` in @dir with its output appended to dir/openssl.log, within
 * the deadline. 0 when it exited 0. */
static int
run_openssl(const char *dir, const char *const *args, int64_t deadline)
{
    char log[PATH_MAX];
    char *argv[40];
    int n = 0, status, rc = -1;
    pid_t pid;

    /* execvp wants char *: copies made before fork, so the child never allocates */
    argv[n++] = strdup("openssl");
    for (int i = 0; args[i] != NULL && n < 39; i++)
        argv[n++] = strdup(args[i]);
    argv[n] = NULL;
    for (int i = 0; i < n; i++) {
        if (argv[i] == NULL)
            goto out;
    }
    snprintf(log, sizeof log, "%s/openssl.log", dir);
    pid = fork();
    if (pid < 0)
        goto out;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

        if (fd < 0 || chdir(dir) != 0)
            _exit(126);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execvp("openssl", argv);
        _exit(127);
    }
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);

        if (w == pid) {
            rc = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        if (test_mono_ms() >= deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            fprintf(stderr, "test_tls: openssl %s ran past its deadline\n", args[0]);
            break;
        }
        test_nap_ms(POLL_MS);
    }
out:
    for (int i = 0; i < n; i++)
        free(argv[i]);
    return rc;
}

int
test_tls_make_certs(const char *dir)
{
#define EC "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"
    static const char *const steps[][24] = {
        {"req", "-x509", "-new", "-config", "openssl.cnf", "-extensions", "ca", EC, "-keyout",
         "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=delayq test CA", NULL},
        {"req", "-x509", "-new", "-config", "openssl.cnf", "-extensions", "ca", EC, "-keyout",
         "other-ca.key", "-out", "other-ca.crt", "-days", "2", "-subj", "/CN=unrelated test CA",
         NULL},
        {"req", "-new", "-config", "openssl.cnf", EC, "-keyout", "server.key", "-out", "server.csr",
         "-subj", "/CN=localhost", NULL},
        {"x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial",
         "2", "-days", "2", "-extfile", "openssl.cnf", "-extensions", "server", "-out",
         "server.crt", NULL},
        {"req", "-new", "-config", "openssl.cnf", EC, "-keyout", "client.key", "-out", "client.csr",
         "-subj", "/CN=delayq test client", NULL},
        {"x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial",
         "3", "-days", "2", "-extfile", "openssl.cnf", "-extensions", "client", "-out",
         "client.crt", NULL},
    };
#undef EC
    int64_t deadline = test_mono_ms() + OPENSSL_DEADLINE_MS;
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof path, "%s/openssl.cnf", dir);
    f = fopen(path, "w");
    if (f == NULL || fputs(openssl_cnf, f) == EOF || fclose(f) != 0) {
        fprintf(stderr, "test_tls: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (run_openssl(dir, steps[i], deadline) != 0) {
            char cat[PATH_MAX + 16];

            fprintf(stderr, "test_tls: openssl step %zu (%s ... %s) failed; its output:\n", i + 1,
                    steps[i][0], steps[i][1]);
            snprintf(cat, sizeof cat, "%s/openssl.log", dir);
            f = fopen(cat, "r");
            if (f != NULL) {
                char line[512];
                while (fgets(line, sizeof line, f) != NULL)
                    fputs(line, stderr);
                fclose(f);
            }
            return -1;
        }
    }
    return 0;
}

void
test_redis_stop(struct test_redis *r)
{
    terminate(r);
    if (r->dir[0] != '\0')
        rm_tree(r->dir);
    free_extra(r);
    memset(r, 0, sizeof *r);
}

void
test_redis_kill(struct test_redis *r)
{
    kill_and_reap(r);
}

int
test_redis_start_again(struct test_redis *r)
{
    char bin[PATH_MAX];
    int rc;

    if (r->pid != 0) {
        fprintf(stderr, "test_redis: start_again while pid %ld is running\n", (long)r->pid);
        return -1;
    }
    if (r->port == 0 || r->dir[0] == '\0') {
        fprintf(stderr, "test_redis: start_again on a fixture that was never started\n");
        return -1;
    }
    if (!find_server(bin, sizeof bin)) {
        fprintf(stderr, "test_redis: redis-server not found on start_again\n");
        return -1;
    }
    rc = spawn_and_wait(r, bin);
    if (rc == 1) {
        fprintf(stderr, "test_redis: redis-server on port %d exited early (port taken?)\n",
                r->port);
        dump_log_tail(r);
    }
    return rc == 0 ? 0 : -1;
}

int
test_redis_restart(struct test_redis *r)
{
    terminate(r);
    return test_redis_start_again(r);
}

struct redisReply *
test_redis_cmd(struct test_redis *r, int argc, const char **argv)
{
    redisContext *c;
    redisReply *reply;

    if (r->port == 0)
        return NULL;
    c = connect_tcp(r, 1000);
    if (c == NULL)
        return NULL;
    redisSetTimeout(c, (struct timeval){.tv_sec = 5, .tv_usec = 0});
    reply = redisCommandArgv(c, argc, argv, NULL);
    redisFree(c);
    return reply;
}

long long
test_redis_int(struct test_redis *r, int argc, const char **argv)
{
    redisReply *reply = test_redis_cmd(r, argc, argv);
    long long v = LLONG_MIN;

    if (reply != NULL && reply->type == REDIS_REPLY_INTEGER)
        v = reply->integer;
    freeReplyObject(reply);
    return v;
}

long long
test_redis_calls(struct test_redis *r, const char *name)
{
    const char *argv[] = {"INFO", "commandstats"};
    redisReply *reply = test_redis_cmd(r, 2, argv);
    char want[64];
    long long n = -1;

    if (reply != NULL && reply->type == REDIS_REPLY_STRING) {
        snprintf(want, sizeof want, "cmdstat_%s:calls=", name);
        const char *p = strstr(reply->str, want);
        n = p != NULL ? atoll(p + strlen(want)) : 0;
    }
    freeReplyObject(reply);
    return n;
}

char *
test_redis_info(struct test_redis *r, const char *section)
{
    const char *argv[] = {"INFO", section};
    redisReply *reply = r->pid != 0 ? test_redis_cmd(r, 2, argv) : NULL;
    char *s = strdup(reply != NULL && reply->type == REDIS_REPLY_STRING ? reply->str : "");

    freeReplyObject(reply);
    return s;
}
