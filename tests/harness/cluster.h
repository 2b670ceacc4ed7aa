/* SPDX-License-Identifier: MIT */
/*
 * cluster.h: a local Redis Cluster for tests and the bench: private redis-server nodes
 * (harness/redis.h) on loopback ports below TEST_CLUSTER_PORT_MAX, joined by the real
 * `redis-cli --cluster create`, and stopped by PID. One home for what the cluster tests
 * (prod.cluster, prod.parts_cluster, prod.parts_outage, chaos.parts_storm) and bench W9
 * need; each keeps only what is its own (which node to kill, which slot to move).
 */
#ifndef DQ_HARNESS_CLUSTER_H
#define DQ_HARNESS_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "harness/redis.h"

/* A node's cluster bus is its port + 10000 by default and must stay <= 65535; the bus
 * ports we pick ourselves stay below this too. */
#define TEST_CLUSTER_PORT_MAX 55000
#define TEST_CLUSTER_MAX      12

struct test_cluster {
    struct test_redis node[TEST_CLUSTER_MAX]; /* in the order given to --cluster create */
    int n;                                    /* nodes started */
    int masters;                              /* as asked; redis-cli picks which */
    char addr[TEST_CLUSTER_MAX][32];          /* "127.0.0.1:PORT" of each node */
    char url[2 * 32 + 32];                    /* "redis-cluster://" + the first two nodes */
};

/*
 * Starts @masters nodes, and @replicas more for each of them, with --cluster-enabled
 * yes, --cluster-node-timeout @node_timeout_ms and their own bus ports, then @extra
 * (NULL-terminated, may be NULL; e.g. {"--hz", "10", NULL}); runs `redis-cli --cluster
 * create` ($DQ_REDIS_CLI or redis-cli on PATH) within 60 s and waits up to 30 s until
 * every node says cluster_state:ok and knows all the others. Zeroes @c first.
 * Returns 0; TEST_REDIS_SKIP when redis-server is missing and skips are allowed; -1 on
 * any failure (the reason on stderr; every node started is stopped again).
 */
int test_cluster_start(struct test_cluster *c, int masters, int replicas, int node_timeout_ms,
                       const char *const *extra);

/* Stops every node by PID and removes their dirs. Idempotent; safe on a zeroed struct. */
void test_cluster_stop(struct test_cluster *c);

/* True when every node that is running says cluster_state:ok and knows @known nodes. */
bool test_cluster_ok(struct test_cluster *c, int known);

/* The node (index) whose "HOST:PORT" (or "...:PORT" at the end of @addr) is @addr; -1. */
int test_cluster_node_at(const struct test_cluster *c, const char *addr);

/* The id (CLUSTER MYID) of node @i into @out; 0, or -1 when it did not answer. */
int test_cluster_node_id(struct test_cluster *c, int i, char *out, size_t size);

/* The node (index) serving @slot as a master, as node @ask's CLUSTER SLOTS has it, and the
 * lowest slot of that node's range holding @slot into *@lo (may be NULL); -1 when @ask is
 * down or did not answer, or no node of @c serves the slot. */
int test_cluster_owner(struct test_cluster *c, int ask, unsigned slot, unsigned *lo);

/* The nodes (indexes) INFO replication calls masters, in node order, into @out (room for
 * c->n); returns how many. A node that is down is not one. */
int test_cluster_masters(struct test_cluster *c, int *out);

/*
 * Runs @argv (NULL-terminated; argv[0] looked up on PATH) with stdin from /dev/null and
 * stdout and stderr to @out_path (NULL: /dev/null), killed with SIGKILL after
 * @deadline_ms. Returns its exit status, 128 when it died of a signal, 124 when it was
 * killed at the deadline, -1 when it could not be started.
 */
int test_run(const char *const *argv, const char *out_path, int deadline_ms);

/* A free loopback port below TEST_CLUSTER_PORT_MAX (the kernel's pick, closed again) for
 * a cluster bus of a node the caller starts itself (test_cluster_start() picks its own);
 * 0 when none was found. */
int test_cluster_free_port(void);

/* $DQ_REDIS_CLI, or "redis-cli". */
const char *test_redis_cli(void);

#endif /* DQ_HARNESS_CLUSTER_H */
