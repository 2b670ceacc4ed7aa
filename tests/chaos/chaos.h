/* SPDX-License-Identifier: MIT */
/*
 * chaos.h: what the chaos tests share: child processes that are always killed and
 * reaped (even when an assertion fails), CPU time from /proc, the run records the
 * chaos worker writes, and a private tmux server.
 *
 * Two modes: short (the default, for CI: sizes that fit a loaded 2-core machine under
 * ASan) and long (DQ_CHAOS_LONG=1: the figures of the Proof issue).
 */
#ifndef DQ_CHAOS_H
#define DQ_CHAOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* True when DQ_CHAOS_LONG=1. */
bool chaos_long(void);

/* CLOCK_REALTIME in ms. Redis runs on this host, so this is the clock TIME reads. */
int64_t chaos_wall_ms(void);

/* A fresh private directory for a test's files; removed by chaos_cleanup(). */
const char *chaos_dir(const char *name);

/*
 * Starts @argv (NULL-terminated; argv[0] is a path) with stdin from /dev/null and
 * stdout and stderr appended to @out_path (NULL: /dev/null). The child dies with the
 * test (PR_SET_PDEATHSIG) and is remembered until it is reaped. Returns its pid.
 */
pid_t chaos_spawn(const char *const *argv, const char *out_path);

/* True while @pid (ours) has not exited; when it has, reaps it and stores its wait
 * status in *status (may be NULL). */
bool chaos_running(pid_t pid, int *status);

/* SIGKILL and reap. */
void chaos_kill9(pid_t pid);

/* SIGTERM, wait up to @deadline_ms, then SIGKILL. Returns the wait status. */
int chaos_stop(pid_t pid, int deadline_ms);

/* Runs @argv to completion (at most @deadline_ms, then SIGKILL) with its output in
 * @out_path. Returns the exit status (128 + signal when killed), *elapsed_ms set. */
int chaos_run(const char *const *argv, const char *out_path, int deadline_ms, int64_t *elapsed_ms);

/* Kills and reaps every child still running, kills the tmux server if one was
 * started and removes the directories of chaos_dir(). Safe to call twice. */
void chaos_cleanup(void);

/* User + system CPU time of process @pid (all its threads) in ms; -1 if gone. */
int64_t chaos_cpu_ms(pid_t pid);

/* True when file @path contains @needle. */
bool chaos_file_has(const char *path, const char *needle);

/* ---- run records (written by chaos_worker, one file per worker process) ---------- */

struct chaos_run {
    char id[64];
    unsigned attempt; /* 1 on the first run */
    int64_t claimed;  /* server time of the claim that started this run */
    int64_t wall;     /* the handler's clock when it started */
    int64_t end;      /* "hold" tasks: the handler's clock when it returned; else -1 */
    int64_t done;     /* the worker's clock when it logged the ack as written; else -1 */
    pid_t pid;
};

struct chaos_runs {
    struct chaos_run *v;
    size_t n;
};

/* Reads every runs.PID and log.PID file in @dir: one entry per handler start, with
 * the end and ack times attached. A line cut short by SIGKILL is ignored. Sorted by
 * id, then attempt. */
void chaos_runs_read(const char *dir, struct chaos_runs *out);
void chaos_runs_free(struct chaos_runs *r);

/* Counts log lines (in every log.PID of @dir) that contain @needle. */
size_t chaos_log_count(const char *dir, const char *needle);

/* ---- tmux -------------------------------------------------------------------------- */

/* Starts a private tmux server (its own -L socket) with one detached session "s" of
 * @cols x @rows running @command (through sh -c). Returns the pane's pid, or -1. */
pid_t chaos_tmux_start(int cols, int rows, const char *command);

/* True when the pane's visible text contains @needle. */
bool chaos_tmux_has(const char *needle);

/* Prints the pane to stderr, for failure messages. */
void chaos_tmux_dump(void);

/* The path of the chaos worker (DQ_CHAOS_WORKER) and of delayq (DELAYQ_BIN). */
const char *chaos_worker_bin(void);
const char *chaos_delayq_bin(void);

#endif /* DQ_CHAOS_H */
