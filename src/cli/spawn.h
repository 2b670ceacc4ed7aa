/* SPDX-License-Identifier: MIT */
/*
 * spawn.h: a private redis-server for delayq demo: temp dir, free loopback port, held
 * by PID (never daemonized), stopped on exit. Loopback only.
 */
#ifndef DQ_CLI_SPAWN_H
#define DQ_CLI_SPAWN_H

#include <sys/types.h>

struct spawned_redis {
    pid_t pid;
    int port;
    char dir[256];
    char url[64];
};

/* Starts redis-server ($DQ_REDIS_SERVER or on PATH) and waits up to 5 s for it to
 * answer PING. Returns 0, or -1 with a message on stderr. */
int spawn_redis(struct spawned_redis *r);

/* SIGTERM, wait up to 5 s, SIGKILL; removes the temp dir. Idempotent. */
void spawn_redis_stop(struct spawned_redis *r);

#endif /* DQ_CLI_SPAWN_H */
