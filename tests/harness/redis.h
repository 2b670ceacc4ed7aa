/* SPDX-License-Identifier: MIT */
/*
 * redis.h: a private redis-server per test executable. The fixture holds the
 * server's PID (never daemonized), so it can always stop what it started, and a
 * crashed test cannot leak a server (PR_SET_PDEATHSIG). Loopback only; the port
 * comes from the kernel, never 6379.
 */
#ifndef DQ_HARNESS_REDIS_H
#define DQ_HARNESS_REDIS_H

#include <stdbool.h>
#include <sys/types.h>

struct redisReply;

/* test_redis_start() returns this when redis-server is missing and the developer
 * set DQ_TEST_ALLOW_SKIP=1; the caller should then exit(77) (meson SKIP). */
#define TEST_REDIS_SKIP (-2)

#define TEST_REDIS_MAX_EXTRA 16

struct test_redis {
    pid_t pid;          /* 0 when no server is running */
    int port;           /* the TLS port when tls is set (the server then has no plain TCP port) */
    bool tls;           /* started by test_redis_start_tls */
    char dir[256];      /* private temp dir (mkdtemp under $TMPDIR or /tmp) */
    char url[320];      /* "redis://127.0.0.1:PORT" */
    char sock[300];     /* unix socket path inside dir */
    char unix_url[330]; /* "unix://" + sock */
    /* TLS only: files in dir made by test_tls_make_certs(); "" otherwise */
    char ca[300];          /* the CA that signed the server and client certificates */
    char other_ca[300];    /* an unrelated CA that signed nothing here */
    char client_cert[300]; /* a client certificate the server accepts */
    char client_key[300];
    /* private: extra arguments, owned (strdup'd), replayed by restart/start_again */
    char *extra[TEST_REDIS_MAX_EXTRA];
    int n_extra;
};

/*
 * Starts a private redis-server and fills @r (which it zeroes first; a running
 * @r must be stopped before it is reused). The binary is $DQ_REDIS_SERVER or
 * "redis-server" on PATH. Arguments: --port P --bind 127.0.0.1 --dir DIR
 * --save "" --appendonly no --unixsocket DIR/redis.sock --unixsocketperm 700
 * --logfile DIR/redis.log, then @extra (NULL-terminated, may be NULL, at most
 * TEST_REDIS_MAX_EXTRA strings, copied); later arguments override earlier ones.
 * Ready means PING answered PONG and INFO reports our PID, within 5 s. A lost
 * port race (the child exits early) is retried on a new port up to 5 times.
 *
 * Returns 0 on success, -1 on failure (message on stderr, nothing left behind),
 * TEST_REDIS_SKIP when the binary is missing and DQ_TEST_ALLOW_SKIP=1.
 * Also sets SIGPIPE to SIG_IGN in this process, so a server that dies mid-write
 * fails a hiredis call instead of killing the test.
 */
int test_redis_start(struct test_redis *r, const char *const *extra);

/*
 * Makes test certificates with the `openssl` command in @dir (within 20 s): ca.crt +
 * ca.key (a CA), server.crt + server.key (signed by it, serverAuth, subjectAltName
 * IP:127.0.0.1 and DNS:localhost), client.crt + client.key (signed by it, clientAuth),
 * other-ca.crt (an unrelated CA). EC P-256 keys, valid for two days. Returns 0, or -1
 * with the reason and openssl's output on stderr.
 */
int test_tls_make_certs(const char *dir);

/*
 * Like test_redis_start(), for a TLS-only server: certificates from
 * test_tls_make_certs() in its dir, then --port 0 --tls-port P --tls-cert-file
 * --tls-key-file --tls-ca-cert-file --tls-auth-clients no before @extra (so
 * {"--tls-auth-clients", "yes", NULL} requires client certificates). r->url is
 * "rediss://127.0.0.1:P"; readiness, test_redis_cmd() and test_redis_int() use the
 * unix socket. Restarts keep the port, the certificates and the arguments.
 */
int test_redis_start_tls(struct test_redis *r, const char *const *extra);

/* Stops the server by PID (SIGTERM, waitpid with a 5 s deadline, then SIGKILL),
 * removes the dir with everything in it and frees the extra arguments. Idempotent;
 * safe on a zeroed struct. */
void test_redis_stop(struct test_redis *r);

/* Stops the server (SIGTERM, waits; the dir is kept) and starts it again on the
 * same port and dir with the same extra arguments. Returns 0 when it is ready
 * again, -1 otherwise (for example when the port was taken meanwhile). */
int test_redis_restart(struct test_redis *r);

/* SIGKILL and reap, keeping the dir: simulates a crash. */
void test_redis_kill(struct test_redis *r);

/* Starts the server after test_redis_kill() or a failed restart: same port, dir
 * and arguments. Returns 0 when ready, -1 otherwise (also if one is running). */
int test_redis_start_again(struct test_redis *r);

/* Runs one command on a fresh short-lived TCP connection and returns the reply
 * (caller frees it with freeReplyObject), or NULL when the server is unreachable
 * or the connection failed mid-command. */
struct redisReply *test_redis_cmd(struct test_redis *r, int argc, const char **argv);

/* Like test_redis_cmd() for integer replies; LLONG_MIN on any other outcome. */
long long test_redis_int(struct test_redis *r, int argc, const char **argv);

/* The calls of command @name (lower case, e.g. "hincrby") Redis has counted since start or
 * CONFIG RESETSTAT (INFO commandstats); 0 when it has none; -1 when INFO failed. */
long long test_redis_calls(struct test_redis *r, const char *name);

/* The text of INFO @section (a copy, which the caller frees): "" when the server is down
 * (no PID) or did not answer; NULL only when out of memory. */
char *test_redis_info(struct test_redis *r, const char *section);

#endif /* DQ_HARNESS_REDIS_H */
