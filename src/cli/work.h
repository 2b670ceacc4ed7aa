/* SPDX-License-Identifier: MIT */
/*
 * work.h: what `delayq work`'s two handler modes share: the command, the shutdown flag
 * and the stderr tail (the registry of running process groups is spawn.c's). One worker
 * per process: cmd_work.c owns the state; persist.c is the --persistent mode.
 */
#ifndef DQ_CLI_WORK_H
#define DQ_CLI_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "delayq.h"

#define STDERR_KEEP 16384

struct work {
    char **cmd;
    char path[4096]; /* cmd[0] resolved on $PATH once, for execve */
    bool raw;
    bool persistent;
    const char *queue;
    int64_t timeout_ms;
    unsigned slots; /* --persistent: handler processes, one per concurrency slot */
    /* The environment every handler starts from (work_env): this process's, less the
     * credentials unless --pass-credentials. Strings borrowed from environ, except
     * env_url (owned), the DELAYQ_URL entry without its password. */
    char **env;
    char *env_url;
};

/*
 * Fills @wk->env from environ: with @pass_credentials everything, else without
 * DELAYQ_PASSWORD, DELAYQ_SENTINEL_USER, DELAYQ_SENTINEL_PASSWORD, DELAYQ_TLS_KEY and
 * DELAYQ_PROFILE (each a credential or the way to one), and with DELAYQ_URL's password
 * removed. Call before any thread starts. Returns false on OOM. work_env_free undoes it.
 */
bool work_env(struct work *wk, bool pass_credentials);

/* A run's time limit: the smaller of the task's own (--time-limit at enqueue) and
 * --timeout; 0 when neither is set. The same rule as the library's (dq_task_time_left_ms). */
static inline int64_t
work_limit_ms(const struct work *wk, const dq_task *t)
{
    if (t->time_limit_ms > 0 && (wk->timeout_ms <= 0 || t->time_limit_ms < wk->timeout_ms))
        return t->time_limit_ms;
    return wk->timeout_ms > 0 ? wk->timeout_ms : 0;
}
void work_env_free(struct work *wk);

/* Keeps the last STDERR_KEEP bytes a command wrote. */
struct tail {
    char buf[STDERR_KEEP];
    size_t len;
};

static inline void
tail_add(struct tail *t, const char *p, size_t n)
{
    if (n > STDERR_KEEP) {
        p += n - STDERR_KEEP;
        n = STDERR_KEEP;
    }
    if (t->len + n > STDERR_KEEP) {
        size_t drop = t->len + n - STDERR_KEEP;
        memmove(t->buf, t->buf + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->buf + t->len, p, n);
    t->len += n;
}

/* The last non-empty line of the tail (at most 300 bytes), for a one-line error. */
static inline void
tail_last_line(const struct tail *t, char *out, size_t size)
{
    size_t end = t->len;

    while (end > 0 && (t->buf[end - 1] == '\n' || t->buf[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start > 0 && t->buf[start - 1] != '\n')
        start--;
    snprintf(out, size, "%.*s", (int)(end - start > 300 ? 300 : end - start), t->buf + start);
}

/* ---- persist.c: --persistent ------------------------------------------------------ */

/* Prepares one handler slot per @wk->slots (processes start on first use). Returns
 * DQ_OK or DQ_ENOMEM with @err. @wk is borrowed until persist_close. */
int persist_init(const struct work *wk, dq_err *err);

/* The worker's handler: the task to a handler process, its result line back. */
void persist_run(const dq_task *t, dq_result *res, void *arg);

/* After the worker returned: closes each idle handler's stdin and waits up to @wait_ms
 * (less if spawn_killing() turns true) for it to exit, then kills what is left. */
void persist_close(int64_t wait_ms);

#endif /* DQ_CLI_WORK_H */
