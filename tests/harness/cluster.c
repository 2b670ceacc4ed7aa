/* SPDX-License-Identifier: MIT */
/*
 * cluster.c: a local Redis Cluster on loopback for tests and the bench (cluster.h).
 */
#include "harness/cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "harness/wait.h"

enum { PORT_TRIES = 50 };

const char *
test_redis_cli(void)
{
    const char *v = getenv("DQ_REDIS_CLI");

    return v != NULL && v[0] != '\0' ? v : "redis-cli";
}

int
test_cluster_free_port(void)
{
    for (int k = 0; k < PORT_TRIES; k++) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

        if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
            getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
            port = ntohs(sa.sin_port);
        if (fd >= 0)
            close(fd);
        if (port > 0 && port < TEST_CLUSTER_PORT_MAX)
            return port;
    }
    return 0;
}

int
test_run(const char *const *argv, const char *out_path, int deadline_ms)
{
    int status = -1;
    pid_t pid = fork();

    if (pid < 0)
        return -1;
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = out_path != NULL ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600)
                                   : open("/dev/null", O_WRONLY);
        if (in >= 0)
            dup2(in, 0);
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
        char *av[64];
        int n = 0;
        for (; argv[n] != NULL && n < 63; n++)
            av[n] = strdup(argv[n]); /* execvp's argv is not const; the child exits anyway */
        av[n] = NULL;
        execvp(av[0], av);
        _exit(127);
    }
    for (int64_t end = test_mono_ms() + deadline_ms; test_mono_ms() < end;) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        test_nap_ms(20);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return 124;
}

bool
test_cluster_ok(struct test_cluster *c, int known)
{
    char want[48];

    snprintf(want, sizeof want, "cluster_known_nodes:%d\r", known);
    for (int i = 0; i < c->n; i++) {
        if (c->node[i].pid == 0)
            continue;
        const char *argv[] = {"CLUSTER", "INFO"};
        redisReply *r = test_redis_cmd(&c->node[i], 2, argv);
        bool ok = r != NULL && r->type == REDIS_REPLY_STRING &&
                  strstr(r->str, "cluster_state:ok") != NULL && strstr(r->str, want) != NULL;
        freeReplyObject(r);
        if (!ok)
            return false;
    }
    return true;
}

/* The first 8 KiB of file @path on stderr. */
static void
copy_to_stderr(const char *path)
{
    char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(buf, 1, sizeof buf, f) : 0;

    if (f != NULL)
        fclose(f);
    fwrite(buf, 1, n, stderr);
}

static bool
all_ok(void *arg)
{
    struct test_cluster *c = arg;

    return test_cluster_ok(c, c->n);
}

int
test_cluster_start(struct test_cluster *c, int masters, int replicas, int node_timeout_ms,
                   const char *const *extra)
{
    const char *argv[TEST_CLUSTER_MAX + 8];
    char timeout[16], reps[16];
    int n = 0, total = masters * (1 + replicas), rc = -1;

    memset(c, 0, sizeof *c);
    if (masters < 1 || replicas < 0 || total > TEST_CLUSTER_MAX) {
        fprintf(stderr, "test_cluster: %d masters with %d replicas each: at most %d nodes\n",
                masters, replicas, TEST_CLUSTER_MAX);
        return -1;
    }
    c->masters = masters;
    snprintf(timeout, sizeof timeout, "%d", node_timeout_ms);
    for (int i = 0; i < total; i++) {
        const char *args[TEST_REDIS_MAX_EXTRA + 1];
        char bus[16];
        int k = 0, port = test_cluster_free_port();

        if (port == 0) {
            fprintf(stderr, "test_cluster: no free port below %d for a bus\n",
                    TEST_CLUSTER_PORT_MAX);
            goto fail;
        }
        snprintf(bus, sizeof bus, "%d", port);
        args[k++] = "--cluster-enabled";
        args[k++] = "yes";
        args[k++] = "--cluster-node-timeout";
        args[k++] = timeout;
        args[k++] = "--cluster-port";
        args[k++] = bus;
        for (int e = 0; extra != NULL && extra[e] != NULL && k < TEST_REDIS_MAX_EXTRA; e++)
            args[k++] = extra[e];
        args[k] = NULL;
        /* the harness takes the kernel's port: one at or above the limit is tried again */
        for (int tries = 0;; tries++) {
            int st = test_redis_start(&c->node[i], args);
            if (st != 0) {
                rc = st;
                goto fail;
            }
            if (c->node[i].port < TEST_CLUSTER_PORT_MAX)
                break;
            test_redis_stop(&c->node[i]);
            if (tries + 1 == PORT_TRIES) {
                fprintf(stderr, "test_cluster: no port below %d for node %d\n",
                        TEST_CLUSTER_PORT_MAX, i);
                goto fail;
            }
        }
        c->n = i + 1;
        snprintf(c->addr[i], sizeof c->addr[i], "127.0.0.1:%d", c->node[i].port);
    }
    snprintf(reps, sizeof reps, "%d", replicas);
    argv[n++] = test_redis_cli();
    argv[n++] = "--cluster";
    argv[n++] = "create";
    for (int i = 0; i < total; i++)
        argv[n++] = c->addr[i];
    argv[n++] = "--cluster-replicas";
    argv[n++] = reps;
    argv[n++] = "--cluster-yes";
    argv[n] = NULL;
    char out[300];
    snprintf(out, sizeof out, "%s/cluster-create.out", c->node[0].dir);
    int st = test_run(argv, out, 60000);
    if (st != 0) {
        fprintf(stderr, "test_cluster: redis-cli --cluster create exited %d; its output:\n", st);
        copy_to_stderr(out); /* the node's dir goes with it below */
        goto fail;
    }
    if (!wait_until(all_ok, c, 30000, "cluster_state:ok on every node"))
        goto fail;
    snprintf(c->url, sizeof c->url, "redis-cluster://%s,%s", c->addr[0],
             c->addr[total > 1 ? 1 : 0]);
    return 0;
fail:
    test_cluster_stop(c);
    return rc == TEST_REDIS_SKIP ? rc : -1;
}

void
test_cluster_stop(struct test_cluster *c)
{
    for (int i = 0; i < TEST_CLUSTER_MAX; i++)
        test_redis_stop(&c->node[i]);
    c->n = 0;
}

int
test_cluster_node_at(const struct test_cluster *c, const char *addr)
{
    const char *colon = strrchr(addr, ':');
    int port = colon != NULL ? atoi(colon + 1) : -1;

    for (int i = 0; i < c->n; i++)
        if (c->node[i].port == port)
            return i;
    return -1;
}

int
test_cluster_masters(struct test_cluster *c, int *out)
{
    int k = 0;

    for (int i = 0; i < c->n; i++) {
        if (c->node[i].pid == 0)
            continue;
        const char *argv[] = {"INFO", "replication"};
        redisReply *r = test_redis_cmd(&c->node[i], 2, argv);
        if (r != NULL && r->type == REDIS_REPLY_STRING && strstr(r->str, "role:master") != NULL)
            out[k++] = i;
        freeReplyObject(r);
    }
    return k;
}

int
test_cluster_node_id(struct test_cluster *c, int i, char *out, size_t size)
{
    const char *argv[] = {"CLUSTER", "MYID"};
    redisReply *r = c->node[i].pid != 0 ? test_redis_cmd(&c->node[i], 2, argv) : NULL;
    int rc = r != NULL && r->type == REDIS_REPLY_STRING ? 0 : -1;

    if (rc == 0)
        snprintf(out, size, "%s", r->str);
    freeReplyObject(r);
    return rc;
}

int
test_cluster_owner(struct test_cluster *c, int ask, unsigned slot, unsigned *lo)
{
    const char *argv[] = {"CLUSTER", "SLOTS"};
    redisReply *r = c->node[ask].pid != 0 ? test_redis_cmd(&c->node[ask], 2, argv) : NULL;
    int who = -1;

    /* each entry: first slot, last slot, then the master as [host, port, id, ...] */
    for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[2]->type != REDIS_REPLY_ARRAY || e->element[2]->elements < 2)
            continue;
        unsigned a = (unsigned)e->element[0]->integer, b = (unsigned)e->element[1]->integer;
        if (a <= slot && slot <= b) {
            for (int k = 0; k < c->n; k++)
                if (c->node[k].port == e->element[2]->element[1]->integer)
                    who = k;
            if (lo != NULL)
                *lo = a;
        }
    }
    freeReplyObject(r);
    return who;
}
