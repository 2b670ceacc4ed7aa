/* SPDX-License-Identifier: MIT */
/*
 * spawn.h: starting child processes. spawn_cmd starts a handler command of delayq work
 * in its own process group with its stdio on pipes, registered so that the group dies
 * with the worker (spawn_guard_start); spawn_redis starts a private
 * redis-server for delayq demo: temp dir, free loopback port, held by PID (never
 * daemonized), stopped on exit. Loopback only.
 */
#ifndef DQ_CLI_SPAWN_H
#define DQ_CLI_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Resolves @name as execvp would find it (a name with a '/' as given, else the first
 * executable file of that name on $PATH) into @out (@size bytes). Returns false when
 * there is none. Done once up front: the child of spawn_cmd may not search (see there).
 */
bool spawn_resolve(const char *name, char *out, size_t size);

/*
 * Starts @path (a resolved path) with @argv and @envp (borrowed; built before the call:
 * the child must not allocate) in a new process group whose id is the returned pid, and
 * registers that group (spawn_forget, spawn_kill_all, spawn_guard_start). fds[0..2]
 * become the child's stdin, stdout and stderr (-1: inherit ours); every other descriptor
 * is closed in the child, SIGPIPE, SIGINT and SIGTERM are back to their defaults, and
 * the child gets SIGKILL if the calling thread dies (PR_SET_PDEATHSIG). Safe to call
 * from several threads at once, with spawn_lock() held from before the pipes in @fds
 * were made (spawn_pipe: they are close-on-exec only once pipe() has returned and fcntl
 * has run: the lock keeps a child started by another thread from inheriting them in
 * between). Returns the pid, or -1 with errno set (EAGAIN: the registry is full).
 */
pid_t spawn_cmd(const char *path, char *const argv[], char *const envp[], const int fds[3]);

/* Held from making the pipes to spawn_cmd's return (see there). */
void spawn_lock(void);
void spawn_unlock(void);

/* A pipe whose two ends are close-on-exec; false with errno set. Made under spawn_lock. */
bool spawn_pipe(int fds[2]);

/*
 * The registry of running process groups, one home for both modes of delayq work.
 * spawn_cmd adds a command's group; the caller removes it with spawn_forget once it has
 * reaped the group's leader (the group id stays the command's until then). Holds up to
 * DQ_CALL_MAX groups, the most commands that run at once.
 */
void spawn_forget(pid_t pgid);

/* SIGKILL to every registered group, and from then on spawn_killing() is true: the
 * grace period ended or a second signal came, so what still runs is killed and its
 * task handed back. Async-signal-safe (kill and a flag only, no lock). */
void spawn_kill_all(void);
bool spawn_killing(void);

/*
 * Forks the guardian, a small process that outlives the worker however it dies, kill -9
 * included, and then kills every group still registered (spawn.c says why this way).
 * Call it once, before any spawn_cmd and before the process starts threads. Returns 0,
 * or -1 with errno set.
 */
int spawn_guard_start(void);

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
