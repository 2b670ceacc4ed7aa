/* SPDX-License-Identifier: MIT */
/*
 * persist.c: `delayq work --persistent`: one long-running handler process per
 * concurrency slot. A task goes to its stdin as one JSON line; one JSON result line
 * comes back on its stdout (hproto.h); what it writes to stderr between two results is
 * that task's trace.
 *
 * Each worker handler thread owns one slot for its life (a thread-local index), so a
 * slot is never shared by two tasks at once. A handler that exits, overruns --timeout,
 * writes a line that is not a valid result for this task, or a line over
 * HPROTO_LINE_MAX, is killed (its process group) and its task retried: the handler gave
 * no verdict, and a long-lived process may have been broken by an earlier task or its
 * surroundings, so this is not the task's failure for good; the queue's max attempts
 * still end a task that breaks every handler it meets. The next start of that slot
 * waits a backoff that doubles per consecutive failure (100 ms to 10 s).
 *
 * Handler processes are started by one spawner thread that lives until persist_close:
 * PR_SET_PDEATHSIG fires when the *thread* that started a child exits, and the worker's
 * handler threads exit before the handlers get their stdin closed at shutdown. (Should
 * the worker die, the guardian kills the handlers' whole groups, spawn.c; the signal is
 * the handler's own backstop.)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hproto.h"
#include "lib/err.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "spawn.h"
#include "work.h"

#define BACKOFF_FIRST_MS 100
#define BACKOFF_CAP_MS   10000

/* One handler process and what is in flight between us. */
struct handler {
    pthread_mutex_t mu;  /* held for a task, and by persist_close */
    unsigned slot;       /* 1-based, in DELAYQ_SLOT */
    pid_t pid;           /* 0: not running */
    int in, out, err;    /* our ends of its stdin, stdout, stderr; -1 once closed */
    char **envp;         /* its environment, built once (the child must not allocate) */
    char *own[2];        /* the DELAYQ_* strings in envp */
    struct dq_buf rbuf;  /* stdout bytes not yet taken as a line */
    size_t scanned;      /* bytes of rbuf known to hold no newline */
    struct tail tail;    /* stderr since the last result */
    unsigned failures;   /* abnormal ends in a row, for the backoff */
    int64_t restart_at;  /* monotonic ms: no start before */
    int status;          /* waitpid status of the last process, once reaped */
    bool reaped;         /* pid was waited for already (its group may still exist) */
    int64_t limit_ms;    /* the task's run time limit (work_limit_ms); 0: none */
    const dq_task *task; /* the task it runs now (NULL between tasks) */
};

static const struct work *wk;
static struct handler *slots;
static atomic_uint next_slot;
static _Thread_local struct handler *my_slot;

/* ---- the spawner thread -------------------------------------------------------------- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct handler *req; /* a start asked for; NULL: none */
    int rc;              /* 0 or errno of the last start */
    bool done, quit, running;
    pthread_t th;
} sp = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* Starts @h's process with its stdio on three pipes. Returns 0 or an errno. */
static int
start_process(struct handler *h)
{
    int p[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    int rc = 0;

    spawn_lock();
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = spawn_pipe(p[i]) ? 0 : errno;
    if (rc == 0) {
        int fds[3] = {p[0][0], p[1][1], p[2][1]};
        h->pid = spawn_cmd(wk->path, wk->cmd, h->envp, fds);
        if (h->pid < 0) {
            rc = errno;
            h->pid = 0;
        }
    }
    spawn_unlock();
    /* the child's ends always close here; ours only when the start failed */
    for (int i = 0; i < 3; i++) {
        int child = i == 0 ? p[i][0] : p[i][1], ours = i == 0 ? p[i][1] : p[i][0];
        if (child >= 0)
            close(child);
        if (rc != 0 && ours >= 0)
            close(ours);
    }
    if (rc != 0)
        return rc;
    h->in = p[0][1];
    h->out = p[1][0];
    h->err = p[2][0];
    for (int i = 0; i < 3; i++) {
        int fd = i == 0 ? h->in : i == 1 ? h->out : h->err;
        fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    return 0;
}

static void *
spawner_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&sp.mu);
    for (;;) {
        while ((sp.req == NULL || sp.done) && !sp.quit)
            pthread_cond_wait(&sp.cv, &sp.mu);
        if (sp.quit)
            break;
        struct handler *h = sp.req;
        pthread_mutex_unlock(&sp.mu);
        int rc = start_process(h);
        pthread_mutex_lock(&sp.mu);
        sp.rc = rc;
        sp.done = true;
        pthread_cond_broadcast(&sp.cv);
    }
    pthread_mutex_unlock(&sp.mu);
    return NULL;
}

/* Has the spawner thread start @h; 0 or an errno (ESHUTDOWN once it is gone). */
static int
spawn_via_thread(struct handler *h)
{
    int rc;

    pthread_mutex_lock(&sp.mu);
    while (sp.req != NULL && !sp.quit)
        pthread_cond_wait(&sp.cv, &sp.mu);
    if (sp.quit) {
        pthread_mutex_unlock(&sp.mu);
        return ESHUTDOWN;
    }
    sp.req = h;
    sp.done = false;
    pthread_cond_broadcast(&sp.cv);
    while (!sp.done && !sp.quit)
        pthread_cond_wait(&sp.cv, &sp.mu);
    rc = sp.done ? sp.rc : ESHUTDOWN;
    sp.req = NULL;
    sp.done = false;
    pthread_cond_broadcast(&sp.cv);
    pthread_mutex_unlock(&sp.mu);
    return rc;
}

/* ---- one handler --------------------------------------------------------------------- */

static char *
env_entry(const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);

    if (s != NULL)
        snprintf(s, len, "%s=%s", name, value);
    return s;
}

/* The handlers' environment (work_env) with DELAYQ_QUEUE and DELAYQ_SLOT set. */
static bool
build_env(struct handler *h)
{
    char slot[16];
    size_t n = 0, k = 0;

    snprintf(slot, sizeof slot, "%u", h->slot);
    h->own[0] = env_entry("DELAYQ_QUEUE", wk->queue);
    h->own[1] = env_entry("DELAYQ_SLOT", slot);
    for (char **e = wk->env; *e != NULL; e++)
        n++;
    h->envp = calloc(n + 3, sizeof *h->envp);
    if (h->envp == NULL || h->own[0] == NULL || h->own[1] == NULL)
        return false;
    for (char **e = wk->env; *e != NULL; e++) {
        if (strncmp(*e, "DELAYQ_QUEUE=", 13) != 0 && strncmp(*e, "DELAYQ_SLOT=", 12) != 0)
            h->envp[k++] = *e;
    }
    h->envp[k++] = h->own[0];
    h->envp[k++] = h->own[1];
    h->envp[k] = NULL;
    return true;
}

static void
close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Reads what stderr has now into the tail, without waiting. */
static void
drain_stderr(struct handler *h)
{
    char buf[4096];

    while (h->err >= 0) {
        ssize_t n = read(h->err, buf, sizeof buf);
        if (n > 0) {
            tail_add(&h->tail, buf, (size_t)n);
        } else {
            if (n == 0 || (errno != EAGAIN && errno != EINTR))
                close_fd(&h->err);
            if (n == 0 || errno != EINTR)
                break;
        }
    }
}

/* Waits up to @ms for @h's process to exit by itself; true once it is reaped. */
static bool
reap_within(struct handler *h, int ms)
{
    int64_t deadline = dq_mono_ms() + ms;
    long nap_us = 200;

    for (;;) {
        if (waitpid(h->pid, &h->status, WNOHANG) == h->pid)
            return h->reaped = true;
        if (dq_mono_ms() >= deadline)
            return false;
        struct timespec ts = {0, nap_us * 1000};
        nanosleep(&ts, NULL);
        nap_us = nap_us * 2 > 20000 ? 20000 : nap_us * 2;
    }
}

/*
 * Ends @h's process: lets it exit by itself for up to @wait_ms (its stdout closed as it
 * exits, a moment before waitpid can see that), else SIGKILL to its group; reaps it and
 * closes the pipes. An abnormal end (@failure) counts towards the restart backoff.
 */
static void
stop_process(struct handler *h, int wait_ms, bool failure)
{
    if (h->pid > 0) {
        if (!h->reaped && !reap_within(h, wait_ms)) {
            kill(-h->pid, SIGKILL);
            while (waitpid(h->pid, &h->status, 0) < 0 && errno == EINTR) {
            }
        }
        /* the group may hold children of the handler still: they go too (the group id
         * stays taken while any member is left, so this cannot hit a stranger) */
        kill(-h->pid, SIGKILL);
        spawn_forget(h->pid);
        h->pid = 0;
        h->reaped = false;
    }
    drain_stderr(h);
    close_fd(&h->in);
    close_fd(&h->out);
    close_fd(&h->err);
    dq_buf_reset(&h->rbuf);
    h->scanned = 0;
    if (failure) {
        h->failures++;
        int64_t wait = BACKOFF_FIRST_MS;
        for (unsigned i = 1; i < h->failures && wait < BACKOFF_CAP_MS; i++)
            wait *= 2;
        h->restart_at = dq_mono_ms() + (wait < BACKOFF_CAP_MS ? wait : BACKOFF_CAP_MS);
    }
}

/* How the last process ended, for a message: "exit 3", "killed by signal 9 (Killed)". */
static void
describe_status(int status, char *buf, size_t size)
{
    if (WIFEXITED(status))
        snprintf(buf, size, "exit %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, size, "status %d", status);
}

/*
 * Before a task: a handler that exited while idle, or wrote to stdout with no task
 * outstanding, is stopped here, so the next task is not blamed for it.
 */
static void
check_idle(struct handler *h)
{
    char b[1];

    if (h->pid <= 0)
        return;
    drain_stderr(h);
    ssize_t n = h->rbuf.len > 0 ? 1 : read(h->out, b, 1);
    if (n < 0 && errno == EAGAIN && !reap_within(h, 0))
        return;
    stop_process(h, n == 0 ? 1000 : 0, true);
}

/* A running process for @h, after its backoff. False with @res filled when there is
 * none (shutting down, or the start failed). */
static bool
ensure_started(struct handler *h, dq_result *res)
{
    check_idle(h);
    if (h->pid > 0)
        return true;
    for (int64_t left; (left = h->restart_at - dq_mono_ms()) > 0;) {
        if (spawn_killing()) {
            res->outcome = DQ_RELEASE;
            snprintf(res->message, sizeof res->message, "handler not restarted: shutting down");
            return false;
        }
        struct timespec ts = {0, (long)(left < 50 ? left : 50) * 1000000L};
        nanosleep(&ts, NULL); /* the backoff itself, re-checking for a shutdown */
    }
    int rc = spawn_via_thread(h);
    if (rc != 0) {
        h->failures++;
        h->restart_at = dq_mono_ms() + BACKOFF_CAP_MS;
        res->outcome = rc == ESHUTDOWN ? DQ_RELEASE : DQ_RETRY;
        snprintf(res->message, sizeof res->message, "cannot start the handler %.300s: %s", wk->path,
                 strerror(rc));
        return false;
    }
    h->tail.len = 0;
    return true;
}

enum ending { GOT_LINE, EXITED, TIMED_OUT, KILLED, TOO_LONG, CANCELLED };

/* Reads stdout; true when a whole line is in rbuf (its length in *line_len). */
static bool
have_line(struct handler *h, size_t *line_len)
{
    const char *nl = memchr(h->rbuf.data + h->scanned, '\n', h->rbuf.len - h->scanned);

    if (nl == NULL) {
        h->scanned = h->rbuf.len;
        return false;
    }
    *line_len = (size_t)(nl - h->rbuf.data);
    return true;
}

/* Sends @req and waits for one stdout line, the process's end, the timeout or a kill. */
static enum ending
exchange(struct handler *h, const struct dq_buf *req, size_t *line_len)
{
    int64_t deadline = h->limit_ms > 0 ? dq_mono_ms() + h->limit_ms : -1;
    size_t written = 0;
    char buf[65536];

    for (;;) {
        if (h->rbuf.len > 0 && have_line(h, line_len))
            return GOT_LINE;
        if (h->rbuf.len > HPROTO_LINE_MAX)
            return TOO_LONG;
        if (spawn_killing())
            return KILLED;
        /* the worker asks it to stop: an operator cancelled the task (the library's own
         * time limit check says TIMED_OUT, as ours below would a moment later) */
        if (h->task != NULL && dq_task_cancelled(h->task))
            return dq_task_time_left_ms(h->task) == 0 ? TIMED_OUT : CANCELLED;
        int wait = 100; /* also re-checks for a shutdown and a cancel */
        if (deadline >= 0) {
            int64_t left = deadline - dq_mono_ms();
            if (left <= 0)
                return TIMED_OUT;
            wait = left < wait ? (int)left : wait;
        }
        bool sending = written < req->len && h->in >= 0;
        struct pollfd pfd[3] = {
            {h->out, POLLIN, 0}, {h->err, POLLIN, 0}, {sending ? h->in : -1, POLLOUT, 0}};
        if (poll(pfd, 3, wait) < 0 && errno != EINTR)
            return EXITED;
        if (pfd[2].revents != 0) {
            ssize_t n = write(h->in, req->data + written, req->len - written);
            if (n > 0)
                written += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EINTR)
                close_fd(&h->in); /* EPIPE: it closed stdin; its stdout says the rest */
        }
        if (pfd[1].revents != 0)
            drain_stderr(h);
        if (pfd[0].revents != 0) {
            ssize_t n = read(h->out, buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                return EXITED;
            if (n > 0)
                dq_buf_append(&h->rbuf, buf, (size_t)n);
            if (h->rbuf.failed)
                return TOO_LONG; /* out of memory holding the line: as good as too long */
        }
    }
}

/* An excerpt of what the handler wrote, escaped for a one-line message. */
static void
excerpt(char *out, size_t size, const char *s, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < n && k + 5 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[k++] = (char)c;
        } else {
            snprintf(out + k, size - k, "\\x%02x", c);
            k += 4;
        }
        if (i == 120 && n > 121) {
            snprintf(out + k, size - k, "...");
            k += 3;
            break;
        }
    }
    out[k < size ? k : size - 1] = '\0';
}

/* A result line as the task's result; false (with @res filled) when it is garbage. */
static bool
take_result(struct handler *h, size_t line_len, const struct dq_buf *wire_id, dq_result *res)
{
    struct hproto_result r;
    char why[300], ex[600], last[320];
    bool ok = false;

    /* stderr the handler wrote before its result line is in the pipe by now */
    drain_stderr(h);
    if (hproto_parse_result(h->rbuf.data, line_len, &r, why, sizeof why) != 0) {
        excerpt(ex, sizeof ex, h->rbuf.data, line_len);
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "handler wrote garbage (%s): %s", why, ex);
    } else if (r.id_len != wire_id->len || memcmp(r.id, wire_id->data, r.id_len) != 0) {
        excerpt(ex, sizeof ex, r.id, r.id_len);
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message,
                 "handler answered for task \"%s\", not this one", ex);
    } else {
        ok = true;
        tail_last_line(&h->tail, last, sizeof last);
        const char *msg = r.error != NULL && r.error[0] ? r.error : last;
        if (r.verdict == HPROTO_DONE) {
            res->outcome = DQ_DONE;
        } else if (r.verdict == HPROTO_RETRY) {
            res->outcome = DQ_RETRY;
            snprintf(res->message, sizeof res->message, "%s", msg[0] ? msg : "handler: retry");
        } else {
            res->outcome = DQ_FAILED;
            snprintf(res->message, sizeof res->message, "%s", msg[0] ? msg : "handler: fail");
            if (r.trace != NULL && r.trace[0] != '\0') {
                res->trace = r.trace;
                r.trace = NULL;
            } else if ((res->trace = malloc(h->tail.len + 1)) != NULL) {
                memcpy(res->trace, h->tail.buf, h->tail.len);
                res->trace[h->tail.len] = '\0';
                res->trace_len = h->tail.len; /* stderr may hold NULs: every byte is kept */
            }
        }
    }
    hproto_result_free(&r);
    /* the line is used up, and so is the stderr that went with it */
    size_t used = line_len + 1;
    memmove(h->rbuf.data, h->rbuf.data + used, h->rbuf.len - used);
    h->rbuf.len -= used;
    h->scanned = 0;
    h->tail.len = 0;
    return ok;
}

/* The process ended the exchange without a result: why, as the task's result. */
static void
abnormal_result(struct handler *h, enum ending how, dq_result *res)
{
    char last[320], st[96];

    tail_last_line(&h->tail, last, sizeof last);
    describe_status(h->status, st, sizeof st);
    res->outcome = DQ_RETRY;
    if (how == KILLED) {
        res->outcome = DQ_RELEASE; /* shutdown, not the task's fault: hand it back */
        snprintf(res->message, sizeof res->message, "killed at worker shutdown");
    } else if (how == CANCELLED) {
        snprintf(res->message, sizeof res->message,
                 "cancelled; handler process group killed and restarted");
    } else if (how == TIMED_OUT) {
        snprintf(res->message, sizeof res->message,
                 "timed out after %lld ms; handler process group killed and restarted",
                 (long long)h->limit_ms);
    } else if (how == TOO_LONG) {
        snprintf(res->message, sizeof res->message,
                 "handler wrote a line over %d bytes (the limit of a result line); handler "
                 "restarted",
                 HPROTO_LINE_MAX);
    } else {
        snprintf(res->message, sizeof res->message, "handler ended (%s) before answering%s%s", st,
                 last[0] ? ": " : "", last);
    }
}

static struct handler *
this_slot(void)
{
    if (my_slot == NULL) {
        unsigned i = atomic_fetch_add(&next_slot, 1);
        if (i < wk->slots)
            my_slot = &slots[i];
    }
    return my_slot;
}

void
persist_run(const dq_task *t, dq_result *res, void *arg)
{
    struct handler *h = this_slot();
    struct dq_buf req = DQ_BUF_INIT, wire_id = DQ_BUF_INIT;
    size_t line_len = 0;

    (void)arg;
    if (h == NULL) { /* more handler threads than slots: not how the worker runs */
        res->outcome = DQ_RELEASE;
        snprintf(res->message, sizeof res->message, "no free handler slot");
        return;
    }
    pthread_mutex_lock(&h->mu);
    if (!ensure_started(h, res))
        goto out;
    hproto_request(&req, t, wk->queue);
    hproto_wire_id(&wire_id, t->id);
    if (req.failed || wire_id.failed) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "out of memory encoding the task");
        goto out;
    }
    h->limit_ms = work_limit_ms(wk, t);
    h->task = t;
    enum ending how = exchange(h, &req, &line_len);
    h->task = NULL;
    /* the grace timer and a second signal set the kill flag, then kill every handler: an
     * end seen with the flag set is that kill, not the handler's failure, so the task is
     * handed back (not an attempt), as a command killed at shutdown is */
    if ((how == EXITED || how == TIMED_OUT) && spawn_killing())
        how = KILLED;
    if (how == GOT_LINE && take_result(h, line_len, &wire_id, res)) {
        h->failures = 0;
        goto out;
    }
    if (how == GOT_LINE) {
        stop_process(h, 0, true); /* garbage: what it writes next cannot be trusted either */
        goto out;
    }
    stop_process(h, how == EXITED ? 1000 : 0, how != KILLED);
    abnormal_result(h, how, res);
out:
    pthread_mutex_unlock(&h->mu);
    dq_buf_free(&req);
    dq_buf_free(&wire_id);
}

int
persist_init(const struct work *w, dq_err *err)
{
    wk = w;
    slots = calloc(w->slots, sizeof *slots);
    if (slots == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    for (unsigned i = 0; i < w->slots; i++) {
        struct handler *h = &slots[i];
        pthread_mutex_init(&h->mu, NULL);
        h->slot = i + 1;
        h->in = h->out = h->err = -1;
        h->rbuf = (struct dq_buf)DQ_BUF_INIT;
        if (!build_env(h))
            return dq_err_set(err, DQ_ENOMEM, "out of memory");
    }
    if (pthread_create(&sp.th, NULL, spawner_main, NULL) != 0)
        return dq_err_set(err, DQ_ENOMEM, "cannot start the spawner thread");
    sp.running = true;
    return DQ_OK;
}

void
persist_close(int64_t wait_ms)
{
    int64_t deadline = dq_mono_ms() + wait_ms;
    bool *held = calloc(wk ? wk->slots : 1, sizeof *held);
    char buf[4096];

    if (wk == NULL || held == NULL) {
        free(held);
        return;
    }
    /* idle handlers: EOF on stdin is their cue to exit. A slot still locked belongs to
     * a task abandoned at the end of the grace period, whose process is being killed. */
    for (unsigned i = 0; i < wk->slots; i++) {
        held[i] = pthread_mutex_trylock(&slots[i].mu) == 0;
        if (held[i])
            close_fd(&slots[i].in);
    }
    for (;;) {
        struct pollfd pfd[2 * DQ_CALL_MAX];
        int *fdp[2 * DQ_CALL_MAX];
        nfds_t n = 0;
        bool running = false;
        for (unsigned i = 0; i < wk->slots; i++) {
            struct handler *h = &slots[i];
            if (!held[i] || h->pid <= 0)
                continue;
            if (reap_within(h, 0)) {
                stop_process(h, 0, false);
                continue;
            }
            running = true;
            pfd[n] = (struct pollfd){h->out, POLLIN, 0};
            fdp[n++] = &h->out;
            pfd[n] = (struct pollfd){h->err, POLLIN, 0};
            fdp[n++] = &h->err;
        }
        int64_t left = deadline - dq_mono_ms();
        if (!running || left <= 0 || spawn_killing())
            break;
        /* keep reading what they write on the way out, so none blocks on a full pipe;
         * the 20 ms is how soon an exit without output is seen */
        if (poll(pfd, n, left < 20 ? (int)left : 20) > 0) {
            for (nfds_t k = 0; k < n; k++) {
                if (pfd[k].fd < 0 || pfd[k].revents == 0)
                    continue;
                ssize_t got = read(pfd[k].fd, buf, sizeof buf);
                if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
                    close_fd(fdp[k]);
            }
        }
    }
    for (unsigned i = 0; i < wk->slots; i++) {
        if (held[i]) {
            stop_process(&slots[i], 0, false);
            pthread_mutex_unlock(&slots[i].mu);
        }
    }
    free(held);
    if (sp.running) {
        pthread_mutex_lock(&sp.mu);
        sp.quit = true;
        pthread_cond_broadcast(&sp.cv);
        pthread_mutex_unlock(&sp.mu);
        pthread_join(sp.th, NULL);
        sp.running = false;
    }
}
