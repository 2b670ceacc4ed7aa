/* SPDX-License-Identifier: MIT */
/*
 * cmd_work.c: delayq work: a worker that runs a command once per task, so a handler
 * can be written in any language. The payload goes to the command's stdin; its exit
 * status decides the result; the tail of its stderr becomes the stack trace of a
 * failure. Each command runs in its own process group, so a timeout or a shutdown can
 * kill everything it started.
 *
 * run_command, the handler, per task: encode_stdin (payload as JSON or raw),
 * start_command (pipes and spawn_cmd), supervise (feed stdin, keep the stderr tail, kill at
 * the timeout or shutdown, until it exits), exit_to_result.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "lib/scripts.h"
#include "fmt/taskfmt.h"
#include "lib/clock.h"
#include "lib/dur.h"
#include "lib/url.h"
#include "spawn.h"
#include "work.h"

static dq_worker *the_worker;
static volatile sig_atomic_t signals_seen;
static int64_t grace_ms;

static void
arm_timer(int64_t ms)
{
    struct itimerval it = {{0, 0}, {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static void
on_signal(int sig)
{
    int saved = errno;

    if (sig == SIGALRM) {
        /* the grace period is over: kill what still runs, just before the worker gives
         * up on it, so each task is handed back after its command is gone */
        spawn_kill_all();
    } else if (++signals_seen > 1) {
        spawn_kill_all();
        dq_worker_stop(the_worker, true);
    } else {
        arm_timer(grace_ms > 100 ? grace_ms - 100 : 1);
        dq_worker_stop(the_worker, false);
    }
    errno = saved;
}

static void
log_line(int level, const char *line, void *arg)
{
    (void)level;
    (void)arg;
    fprintf(stderr, "%s\n", line);
}

extern char **environ; /* <unistd.h> declares it only with _GNU_SOURCE */

/* The names run_command sets for each task. */
static const char *const task_vars[] = {"DELAYQ_TASK_ID",     "DELAYQ_QUEUE",
                                        "DELAYQ_ATTEMPT",     "DELAYQ_DUE_MS",
                                        "DELAYQ_ENQUEUED_MS", "DELAYQ_CLAIMED_MS"};
#define NTASK_VARS (sizeof task_vars / sizeof task_vars[0])

/* The variables that give a handler the worker's access to Redis (work.h). */
static const char *const secret_vars[] = {"DELAYQ_PASSWORD", "DELAYQ_SENTINEL_USER",
                                          "DELAYQ_SENTINEL_PASSWORD", "DELAYQ_TLS_KEY",
                                          "DELAYQ_PROFILE"};

/* Whether the entry "NAME=value" @e names @name. */
static bool
env_is(const char *e, const char *name)
{
    size_t len = strlen(name);

    return strncmp(e, name, len) == 0 && e[len] == '=';
}

bool
work_env(struct work *wk, bool pass_credentials)
{
    size_t n = 0, k = 0;

    for (char **e = environ; *e != NULL; e++)
        n++;
    if ((wk->env = calloc(n + 1, sizeof *wk->env)) == NULL)
        return false;
    for (char **e = environ; *e != NULL; e++) {
        bool secret = false;
        for (size_t i = 0; i < sizeof secret_vars / sizeof secret_vars[0] && !pass_credentials; i++)
            secret = secret || env_is(*e, secret_vars[i]);
        if (secret)
            continue;
        if (!pass_credentials && env_is(*e, "DELAYQ_URL")) {
            /* where the queue is may stay; how to log in may not (a second DELAYQ_URL,
             * which getenv never sees, goes) */
            if (wk->env_url != NULL)
                continue;
            const char *url = *e + strlen("DELAYQ_URL=");
            size_t pre = (size_t)(url - *e), len = pre + dq_url_redact(url, NULL, 0) + 1;
            if ((wk->env_url = malloc(len)) == NULL)
                return false;
            memcpy(wk->env_url, *e, pre);
            dq_url_redact(url, wk->env_url + pre, len - pre);
            wk->env[k++] = wk->env_url;
            continue;
        }
        wk->env[k++] = *e;
    }
    wk->env[k] = NULL;
    return true;
}

void
work_env_free(struct work *wk)
{
    free(wk->env);
    free(wk->env_url);
    wk->env = NULL;
    wk->env_url = NULL;
}

/*
 * The command's environment: the handlers' (work_env), with the task's DELAYQ_* variables.
 * Built before the spawn, because the child of a threaded process must not allocate
 * (setenv there deadlocked when another thread held the allocator's lock at fork; seen with
 * ASan's). The array and the strings in @own are the caller's to free; NULL on OOM.
 */
static char **
task_env(const struct work *wk, const dq_task *t, char *own[NTASK_VARS])
{
    char vals[NTASK_VARS][32];
    const char *v[NTASK_VARS] = {t->id, wk->queue, vals[2], vals[3], vals[4], vals[5]};
    size_t n = 0, k = 0;
    char **envp;

    snprintf(vals[2], sizeof vals[2], "%u", t->attempt + 1);
    snprintf(vals[3], sizeof vals[3], "%lld", (long long)t->due_ms);
    snprintf(vals[4], sizeof vals[4], "%lld", (long long)t->enqueued_ms);
    /* the claim's server time: what the queue limits count by (PROTOCOL.md 8.4) */
    snprintf(vals[5], sizeof vals[5], "%lld", (long long)t->claimed_ms);
    for (size_t i = 0; i < NTASK_VARS; i++) {
        size_t len = strlen(task_vars[i]) + 1 + strlen(v[i]) + 1;
        own[i] = malloc(len);
        if (own[i] != NULL)
            snprintf(own[i], len, "%s=%s", task_vars[i], v[i]);
    }
    for (char **e = wk->env; *e != NULL; e++)
        n++;
    envp = calloc(n + NTASK_VARS + 1, sizeof *envp);
    for (size_t i = 0; i < NTASK_VARS; i++) {
        if (own[i] == NULL) {
            free(envp);
            return NULL;
        }
    }
    if (envp == NULL)
        return NULL;
    for (char **e = wk->env; *e != NULL; e++) {
        bool ours = false;
        for (size_t i = 0; i < NTASK_VARS && !ours; i++)
            ours = env_is(*e, task_vars[i]);
        if (!ours)
            envp[k++] = *e;
    }
    for (size_t i = 0; i < NTASK_VARS; i++)
        envp[k++] = own[i];
    envp[k] = NULL;
    return envp;
}

/* One command run for one task, as run_command's steps share it. */
struct command {
    const struct work *wk;
    struct dq_buf in;    /* what goes to its stdin */
    size_t written;      /* bytes of @in written so far */
    struct tail *tail;   /* the end of its stderr */
    int inp[2], errp[2]; /* its stdin and stderr pipes; -1 once closed */
    pid_t pid;
    int status; /* from waitpid, once it exited */
    bool exited, killed, timed_out, cancelled;
    const dq_task *task;
    int64_t limit_ms; /* its time limit (work_limit_ms); 0: none */
};

static void
encode_stdin(struct command *c, const dq_task *t)
{
    if (c->wk->raw)
        dq_buf_append(&c->in, t->payload, t->payload_len);
    else
        dq_fmt_payload_json(&c->in, t->payload, t->payload_len);
}

/*
 * Starts the command with @envp, its stdin and stderr on pipes, in its own process
 * group (spawn_cmd). On failure fills @res (retry: not the task's fault) and returns
 * false.
 */
static bool
start_command(struct command *c, char **envp, dq_result *res)
{
    /* A command started by another handler thread must not inherit this command's pipes
     * (it would hold our stderr open): they are close-on-exec, and made and spawned under
     * one lock so no spawn falls between pipe() and the flag (pipe2 needs _GNU_SOURCE). */
    spawn_lock();
    if (c->tail == NULL || envp == NULL || !spawn_pipe(c->inp) || !spawn_pipe(c->errp)) {
        spawn_unlock();
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "cannot start the handler: %s",
                 strerror(errno));
        return false;
    }
    int fds[3] = {c->inp[0], -1, c->errp[1]};
    c->pid = spawn_cmd(c->wk->path, c->wk->cmd, envp, fds);
    int saved = errno;
    spawn_unlock();
    if (c->pid < 0) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "cannot start %.300s: %s", c->wk->path,
                 strerror(saved));
        return false;
    }
    close(c->inp[0]);
    close(c->errp[1]);
    c->inp[0] = c->errp[1] = -1;
    fcntl(c->inp[1], F_SETFL, O_NONBLOCK);
    fcntl(c->errp[0], F_SETFL, O_NONBLOCK);
    if (c->in.len == 0) {
        close(c->inp[1]);
        c->inp[1] = -1;
    }
    return true;
}

/* Kills the command's process group, once, at @deadline (-1: none) or at shutdown.
 * Returns @wait, shortened so that poll() wakes at the deadline. */
static int
kill_if_due(struct command *c, int64_t deadline, int wait)
{
    if (deadline >= 0) {
        int64_t left = deadline - dq_mono_ms();
        if (left <= 0 && !c->killed) {
            c->timed_out = c->killed = true;
            kill(-c->pid, SIGKILL);
        }
        if (left > 0 && left < wait)
            wait = (int)left;
    }
    if (spawn_killing() && !c->killed) {
        c->killed = true;
        kill(-c->pid, SIGKILL);
    }
    /* the worker asks it to stop: an operator cancelled the task (or the library saw
     * the time limit pass a moment before the deadline above) */
    if (!c->killed && dq_task_cancelled(c->task)) {
        c->killed = true;
        if (dq_task_time_left_ms(c->task) == 0)
            c->timed_out = true;
        else
            c->cancelled = true;
        kill(-c->pid, SIGKILL);
    }
    return wait;
}

/* Writes what the pipe takes of the payload; closes stdin when it is all written or
 * the command stopped reading. */
static void
feed_stdin(struct command *c)
{
    ssize_t n = write(c->inp[1], c->in.data + c->written, c->in.len - c->written);

    if (n > 0)
        c->written += (size_t)n;
    if (n < 0 && errno != EAGAIN) /* EPIPE: it did not read it all; fine */
        c->written = c->in.len;
    if (c->written == c->in.len) {
        close(c->inp[1]);
        c->inp[1] = -1;
    }
}

/* Adds what its stderr has to the tail: one read while it runs; after the exit, all
 * that is left in the pipe, without waiting for EOF (a background process the command
 * started may hold its stderr open). */
static void
read_stderr(struct command *c, short revents)
{
    while (c->errp[0] >= 0 && (c->exited || (revents & (POLLIN | POLLHUP | POLLERR)))) {
        char buf[4096];
        ssize_t n = read(c->errp[0], buf, sizeof buf);
        if (n > 0) {
            tail_add(c->tail, buf, (size_t)n);
            if (!c->exited)
                break;
        } else {
            if (n == 0 || errno != EAGAIN) {
                close(c->errp[0]);
                c->errp[0] = -1;
            }
            break;
        }
    }
}

/* Runs the command to its exit: feeds stdin, keeps the tail of stderr, and kills it at
 * its timeout or at shutdown. */
static void
supervise(struct command *c)
{
    int64_t deadline = c->limit_ms > 0 ? dq_mono_ms() + c->limit_ms : -1;
    int idle_wait = 1;

    while (!c->exited) {
        /* poll() ignores a negative fd: stderr may close before the command exits */
        struct pollfd pfd[2] = {{c->errp[0], POLLIN, 0}, {c->inp[1], POLLOUT, 0}};
        int wait = 100; /* also re-checks the shutdown flag */
        if (c->errp[0] < 0 && c->inp[1] < 0) {
            /* Nothing left to poll: stderr closed as the command exits, a moment before
             * waitpid can see it (or the command closed it and runs on). Look again
             * soon, backing off to 100 ms, rather than a full 100 ms per command. */
            wait = idle_wait;
            idle_wait = idle_wait * 2 > 100 ? 100 : idle_wait * 2;
        }
        wait = kill_if_due(c, deadline, wait);
        if (poll(pfd, c->inp[1] >= 0 ? 2 : 1, wait) < 0 && errno != EINTR)
            break;
        c->exited = waitpid(c->pid, &c->status, WNOHANG) == c->pid;
        if (c->inp[1] >= 0 && (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP)))
            feed_stdin(c);
        read_stderr(c, pfd[0].revents);
    }
    if (!c->exited) {
        while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {
        }
    }
    spawn_forget(c->pid);
}

/* The exit status as a result: 0 done, 75 retry, a kill of ours retry (timeout) or
 * hand back (shutdown), anything else failed with the stderr tail as its trace. */
static void
exit_to_result(const struct command *c, dq_result *res)
{
    int status = c->status;
    char last[320];

    tail_last_line(c->tail, last, sizeof last);
    /* killed: only when our SIGKILL is what ended it (it may have exited just before) */
    bool by_us = c->killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (c->timed_out && by_us) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message,
                 "timed out after %lld ms; process group "
                 "killed",
                 (long long)c->limit_ms);
    } else if (c->cancelled && by_us) {
        /* refused by Redis anyway: the task left flight when it was cancelled */
        res->outcome = DQ_FAILED;
        snprintf(res->message, sizeof res->message, "cancelled; process group killed");
    } else if (by_us) {
        res->outcome = DQ_RELEASE; /* shutdown, not the task's fault: hand it back */
        snprintf(res->message, sizeof res->message, "killed at worker shutdown");
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        res->outcome = DQ_DONE;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 75) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "exit 75 (temporary failure)%s%s",
                 last[0] ? ": " : "", last);
    } else {
        res->outcome = DQ_FAILED;
        if (WIFSIGNALED(status))
            snprintf(res->message, sizeof res->message, "killed by signal %d (%s)%s%s",
                     WTERMSIG(status), strsignal(WTERMSIG(status)), last[0] ? ": " : "", last);
        else
            snprintf(res->message, sizeof res->message, "exit %d%s%s", WEXITSTATUS(status),
                     last[0] ? ": " : "", last);
        res->trace = malloc(c->tail->len + 1);
        if (res->trace != NULL) {
            memcpy(res->trace, c->tail->buf, c->tail->len);
            res->trace[c->tail->len] = '\0';
            res->trace_len = c->tail->len; /* stderr may hold NULs: every byte is kept */
        }
    }
}

static void
command_close(struct command *c)
{
    for (int i = 0; i < 2; i++) {
        if (c->inp[i] >= 0)
            close(c->inp[i]);
        if (c->errp[i] >= 0)
            close(c->errp[i]);
    }
    dq_buf_free(&c->in);
    free(c->tail);
}

/* The handler: one command per task, from its stdin payload to its exit status. */
static void
run_command(const dq_task *t, dq_result *res, void *arg)
{
    struct command c = {.wk = arg, .in = DQ_BUF_INIT, .inp = {-1, -1}, .errp = {-1, -1}};
    c.limit_ms = work_limit_ms(c.wk, t);
    c.task = t;
    char *env_own[NTASK_VARS] = {NULL};
    char **envp;

    c.tail = calloc(1, sizeof *c.tail);
    encode_stdin(&c, t);
    envp = task_env(c.wk, t, env_own);
    if (start_command(&c, envp, res)) {
        supervise(&c);
        exit_to_result(&c, res);
    }
    command_close(&c);
    free(envp);
    for (size_t i = 0; i < NTASK_VARS; i++)
        free(env_own[i]);
}

static int
run(struct cli *g, const struct cli_args *args)
{
    dq_worker_opts o = {.log = log_line, .log_level = DQ_LOG_INFO};
    struct work wk = {0};
    dq_client_opts co;
    bool grace_given = cli_has(args, "grace"), pass_credentials = cli_has(args, "pass-credentials");
    dq_err err = {0};
    int rc, i = args->dashdash;

    if (args->npos > 0 && (i != 0))
        return cli_usage_error(g, "unexpected argument \"%s\" (the command goes after --)",
                               args->pos[0]);
    if (i < 0 || i >= args->npos)
        return cli_usage_error(g, "which command runs the tasks? give it after --");
    wk.raw = cli_has(args, "raw");
    wk.persistent = cli_has(args, "persistent");
    wk.timeout_ms = cli_num(args, "timeout", 0);
    for (size_t k = 0; k < args->ngiven; k++) { /* --quiet and --log-level: the last says */
        if (strcmp(args->given[k].opt->name, "quiet") == 0)
            o.log_level = DQ_LOG_WARN;
        else if (strcmp(args->given[k].opt->name, "log-level") == 0)
            o.log_level = (int)args->given[k].num;
    }
    o.concurrency = (unsigned)cli_num(args, "concurrency", 0);
    o.batch = (unsigned)cli_num(args, "batch", 0);
    o.lease_ms = cli_num(args, "lease", 0);
    o.grace_ms = cli_num(args, "grace", 0);
    o.max_idle_ms = cli_num(args, "max-idle", 0);
    o.name = cli_str(args, "name", NULL);
    if (wk.raw && wk.persistent)
        return cli_usage_error(g, "--raw and --persistent do not mix: a JSON line cannot carry "
                                  "raw bytes (they arrive as {\"$raw_base64\": ...})");
    if (grace_given && o.grace_ms == 0)
        o.grace_ms = 1; /* "--grace 0": hand back at once (0 in the options means 30 s) */
    else if (o.grace_ms == 0)
        o.grace_ms = 30000;
    wk.cmd = args->pos + i;
    if (!spawn_resolve(wk.cmd[0], wk.path, sizeof wk.path))
        return cli_usage_error(g, "cannot run \"%s\": no such executable%s", wk.cmd[0],
                               strchr(wk.cmd[0], '/') ? "" : " on $PATH");
    wk.queue = g->queue;
    /* the command line, for the worker registry (delayq workers, the inspector) */
    struct dq_buf cmdline = DQ_BUF_INIT;
    for (int k = i; k < args->npos; k++)
        dq_buf_printf(&cmdline, "%s%s", k > i ? " " : "", args->pos[k]);
    o.command = cmdline.failed ? NULL : cmdline.data;
    if ((rc = cli_client_opts(g, &co)) != DQ_EXIT_OK) {
        dq_buf_free(&cmdline);
        return rc;
    }
    /* A user whom the ACL will never let work is told so at once (exit 1), rather than
     * retried for ever; a server that is down now is left to the worker's reconnects. */
    dq_client *pc = NULL;
    if (dq_client_open(g->url, &co, &pc, &err) == DQ_OK) {
        char why[400] = "";
        (void)dq_scripts_may_work(pc, g->queue, why, sizeof why, &err);
        dq_client_free(pc);
        if (why[0] != '\0') {
            dq_buf_free(&cmdline);
            fprintf(stderr, "%s: ", g->prog);
            cli_put_safe(stderr, why, strlen(why));
            fprintf(stderr, "; see the roles in docs/SECURITY.md\n");
            return DQ_EXIT_FAILED;
        }
    }
    /* before any thread and any command: the guardian kills the commands' groups if
     * this process dies without doing so itself (PROTOCOL 10.8) */
    if (spawn_guard_start() != 0) {
        dq_buf_free(&cmdline);
        fprintf(stderr, "%s: cannot start the guardian process: %s\n", g->prog, strerror(errno));
        return DQ_EXIT_FAILED;
    }
    err = (dq_err){0};
    wk.slots = o.concurrency > 0 ? o.concurrency : 1;
    if (!work_env(&wk, pass_credentials)) {
        dq_buf_free(&cmdline);
        work_env_free(&wk);
        fprintf(stderr, "%s: out of memory\n", g->prog);
        return DQ_EXIT_FAILED;
    }
    if (wk.persistent && persist_init(&wk, &err) != DQ_OK) {
        dq_buf_free(&cmdline);
        work_env_free(&wk);
        return cli_error(g, &err);
    }
    rc = dq_worker_new(g->url, &co, g->queue, &o, wk.persistent ? persist_run : run_command, &wk,
                       &the_worker, &err);
    dq_buf_free(&cmdline); /* the worker keeps its own copy */
    if (rc != DQ_OK) {
        if (wk.persistent)
            persist_close(0);
        work_env_free(&wk);
        return cli_error(g, &err);
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    grace_ms = o.grace_ms;
    rc = dq_worker_run(the_worker, &err);
    /* persistent handlers exit on EOF; the grace timer, if a signal armed it, still ends
     * the wait early */
    if (wk.persistent)
        persist_close(grace_ms);
    /* no signal or timer may reach the worker once it is freed */
    arm_timer(0);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    /* Commands whose tasks were handed back at the end of the grace period (or at a
     * second signal) must not outlive the worker. */
    spawn_kill_all();
    work_env_free(&wk);
    dq_worker_free(the_worker);
    return rc != DQ_OK ? cli_error(g, &err) : DQ_EXIT_OK;
}

static const char *const levels[] = {"error", "warn", "info", "debug", NULL};

/* Here --timeout is the command's (the parser reads a command's own options first):
 * Redis calls keep their 3 s. */
static const struct cli_opt opts[] = {
    {"concurrency", 'c', "N", CLI_UINT, 1, DQ_CALL_MAX,
     .help = "commands running at once (default 1)"},
    {"batch", 0, "N", CLI_UINT, 1, DQ_CALL_MAX, .help = "tasks per claim (default: concurrency)"},
    {"lease", 0, "DUR", CLI_DUR, .help = "lease per claim, renewed while CMD runs (default 30s)"},
    {"timeout", 0, "DUR", CLI_DUR,
     .help = "kill CMD running longer, retry its task (default: none)"},
    {"grace", 0, "DUR", CLI_DUR, .help = "at SIGTERM, time to finish before kill (default 30s)"},
    {"max-idle", 0, "DUR", CLI_DUR, .help = "longest sleep with nothing due (default 60s)"},
    {"raw", 0, NULL, CLI_FLAG, .help = "the payload's raw bytes on stdin, not JSON"},
    {"persistent", 0, NULL, CLI_FLAG, .help = "one long-running CMD per slot, JSON lines"},
    {"name", 0, "NAME", CLI_STR, .help = "worker name in leases and logs (default user@host:pid)"},
    {"pass-credentials", 0, NULL, CLI_FLAG, .help = "give CMD the password, TLS key and profile"},
    {"log-level", 0, "L", CLI_ENUM, .values = levels,
     .help = "error, warn, info (default) or debug (logfmt, stderr)"},
    {"quiet", 0, NULL, CLI_FLAG, .help = "--log-level warn"},
    {NULL},
};

const struct cli_cmd cmd_work = {
    .name = "work",
    .summary = "run a command once per due task",
    .usage = "delayq work [-q QUEUE] [--concurrency N] [--batch N] [--lease DUR]\n"
             "                   [--timeout DUR] [--grace DUR] [--max-idle DUR]\n"
             "                   [--raw | --persistent] [--name NAME]\n"
             "                   [--log-level LEVEL | --quiet] -- CMD [ARGS...]",
    .about = "Runs CMD once per due task: the payload as JSON on stdin (--raw: its bytes), the\n"
             "task in DELAYQ_TASK_ID, DELAYQ_QUEUE, DELAYQ_ATTEMPT, DELAYQ_DUE_MS,\n"
             "DELAYQ_ENQUEUED_MS and DELAYQ_CLAIMED_MS. Exit 0: done; 75: retry later;\n"
             "else failed (stderr: its trace). --persistent: delayq-work(1).",
    .opts = opts,
    .max_pos = -1,
    .hint = " (the command goes after --)",
    .run = run,
};
