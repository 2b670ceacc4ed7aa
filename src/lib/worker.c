/* SPDX-License-Identifier: MIT */
/*
 * worker.c: the worker loop behind dq_worker_run.
 *
 * One coordinator thread owns the Redis connection and makes every call (claim, ack,
 * retry, fail, extend, reap, release); handler threads only run handlers and hand the
 * job back. The coordinator sleeps in poll() on a self-pipe (handler finished, stop
 * requested) and the wake-up subscription, with a timeout computed from what it knows:
 * the next due time the claim reported, the next lease to renew, the next lease of any
 * worker that may expire (reap), and the reconnect backoff. Its own timer, not a
 * blocking command's timeout, wakes it at a due time: Redis checks those on its hz
 * clock, up to 100 ms late.
 *
 * Each pass of the coordinator's loop, in dq_worker_run's order:
 *   note_stop        a stop request becomes a grace deadline (earlier on a second stop)
 *   abandon_at_stop  stopping: unstarted jobs, and past the deadline running ones, go back
 *   count_jobs       what is owned: busy, results unwritten, hand-backs unwritten
 *   stop_done        stopping: leave once nothing is owned (or Redis stayed away)
 *   extend_leases    time out overrun handlers, renew leases past half their length
 *                    (one call for all of them)
 *   reap_leases      return any worker's expired leases to the queue
 *   heartbeat_step   register, beat, and (idle) look at the queue in the beat (see below)
 *   resubscribe      reopen the wake-up subscription when it was lost
 *   settle_and_claim one claim call that first writes finished jobs' results and hands
 *                    back abandoned jobs, then claims into free slots when something
 *                    may be due (or due within the claim-ahead window; not while the
 *                    queue is paused)
 *   next_wait, wait_for_wakeup  sleep until the earliest of the times above
 * Results go first (inside the claim script) because they free slots and end leases
 * before the claim. A task claimed ahead waits on its handler thread until its due time
 * has passed by the server's clock (take_claimed).
 *
 * A partitioned queue (PROTOCOL.md 10.10) is N complete queues: the worker keeps what
 * the loop knows of a queue (next due time, next reap, idle timer, wake-up
 * subscription, server clock) per partition (struct part), claims from each partition
 * whose tasks are due in the same pass, earliest first, and settles each job in the
 * partition it came from. The registry and the pause are partition 0's. An
 * unpartitioned queue is the one partition 0, and its calls are today's.

 *
 * The worker registry (PROTOCOL.md 10.9): a beat every beat_ms moves the
 * worker's last-beat time (3 commands in Redis; its record is rewritten only when a field
 * changed). An idle worker's max_idle_ms look is a "check" beat instead of a claim and a
 * reap: the beat's reply carries the next due time, the earliest lease and the pause, so
 * an idle worker costs one call per beat and nothing else. A paused claim says until
 * when; the worker then claims nothing until the pause ends by server time or a wake-up
 * (a resume publishes one) arrives.
 *
 * A job is owned from its claim until its result is written (or the task is handed
 * back). A result that cannot be written because Redis is unreachable stays queued and
 * is written after the reconnect; Redis decides, by the lease's fencing token (attempt
 * and claim time), whether the lease still holds.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "client.h"
#include "delayq.h"
#include "err.h"
#include "parts.h"
#include "task.h"

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_FINISHED };

struct job {
    dq_task task; /* first: a handler's task pointer is its job (dq_task_cancelled) */
    dq_result result;
    int64_t limit_ms;   /* the run's time limit: the smaller of the task's and the
                           worker's timeout_ms; 0: none */
    atomic_bool cancel; /* the handler is asked to stop (its limit passed, a stop, or an
                           operator cancelled it) */
    bool renew_now;     /* renew this lease at once (see take_cancels) */
    bool hung_logged;   /* task.hung was logged for it */
    enum job_state state;
    int64_t started_mono, finished_mono;
    int64_t start_ns;  /* monotonic ns: a task claimed ahead does not start before this */
    int64_t lease_srv; /* lease deadline, server ms */
    bool timed_out;    /* lease renewal stopped: the handler overran limit_ms */
    bool lost;         /* Redis said the lease is gone: renewal stopped */
    bool abandoned;    /* will not be written: not started, or stopped waiting at shutdown */
    bool released;     /* an abandoned job was handed back */
    unsigned part;     /* the partition it was claimed from (w->parts), settled there */
    struct job *next;  /* in the coordinator's list of owned jobs */
};

/*
 * One partition the worker claims from (docs/PROTOCOL.md 10.10). An unpartitioned queue
 * has one: the queue itself. Partition i >= 1 is a complete queue of today's shape
 * ("Q~<i>.<k>", perhaps on another node), so each has what the loop used to keep for
 * the queue: its wake-up subscription, its node's clock, its next due time, its next
 * reap and its idle timer. Indexes are stable: the map only ever adds partitions.
 */
struct part {
    char *name;           /* owned; parts[0]'s is the queue's own name */
    char channel[160];    /* its wake-up channel */
    dq_client *sub;       /* the wake-up subscription; NULL: not subscribed */
    int64_t sub_retry_at; /* monotonic: next attempt to subscribe to wake-ups */
    int sub_backoff_ms;
    bool sub_failed_logged;
    int64_t offset_ms;       /* server ms - monotonic ms, from its last reply with a time */
    int64_t next_due;        /* server ms of its next due task, from its last claim; -1: none */
    int64_t next_reap;       /* server ms: look for expired leases then */
    int64_t last_claim_mono; /* the idle timer runs from here */
    /* wake-ups may have been missed, or something earlier than next_due was scheduled:
     * claim at once. Not set by a claim that filled up: its reply's next due time is
     * exact (the earliest left), and next_due says when more is due */
    bool more_due;
    bool look_failed_logged; /* (i >= 1) a look was refused: its idle timer claims instead */
    /* from its claims and looks: -1 not paused; 0 paused until resumed; else server ms.
     * Partition 0's is the queue's pause (PROTOCOL.md 10.10). */
    int64_t paused_until;
    /* A claim Redis answered with a final error (bad options, a reply we cannot read)
     * would fail the same way at once: claims back off (100 ms doubling to 5 s) until
     * one succeeds. Separate from the outage episode, so another call getting through
     * (a beat, a renewal) does not reset it. */
    int64_t claim_retry_at; /* monotonic: no claim before this */
    int claim_backoff_ms;   /* 0: the last claim succeeded */
    long long claim_failures;
    /* Its node unreachable or refusing for the moment: a down episode, logged once, with
     * no call to it before retry_at (reached). Kept per partition, so that one dead
     * master holds back only its own partitions' calls, not the leases, claims and beats
     * of the others (chaos.parts_storm). Partition 0's also covers the registry, the
     * pause and the map, which live there. */
    bool down;
    int64_t retry_at; /* monotonic */
    int backoff_ms;
};

/* How soon a partition may have something to claim, for the order of a pass
 * (settle_and_claim_all): those woken or without wake-ups first (partition 0 before
 * them), then by next due time, those with only results to write last. */
struct part_order {
    int64_t key; /* monotonic ms */
    unsigned pi;
};

/* The strings of dq_client_opts a worker keeps (it connects again after every outage):
 * its own copies, so the caller's may go as soon as dq_worker_new returns. */
enum { OWNED_STRS = 10 };

struct dq_worker {
    char *url;
    char *strs[OWNED_STRS]; /* copies of the dq_client_opts strings (own_copts) */
    bool who_set;           /* else results are recorded as written by the worker's name */
    dq_client_opts copts;
    char queue[101];
    char name[200];
    dq_worker_opts o;
    dq_handler_fn fn;
    void *arg;

    dq_client *c;
    int pipe_rd, pipe_wr;
    atomic_int stop, stop_now; /* set by dq_worker_stop, from any thread or a signal */

    pthread_mutex_t mu; /* guards what handler threads share: the queue, job states, quit,
                           live and freed */
    pthread_cond_t cv;
    struct job **queued; /* claimed jobs waiting for a handler thread (FIFO ring) */
    size_t q_head, q_len, q_cap;
    bool quit;
    unsigned live; /* handler threads still running */
    bool freed;    /* dq_worker_free ran while some were: the last one out frees */
    pthread_t *threads;
    unsigned nthreads;

    /* coordinator only */
    struct job *owned; /* every job from claim to written result */
    /* the partitions (one for an unpartitioned queue), the poll set over their
     * subscriptions (1 + nparts), and when the map was last read (parts_step) */
    struct part *parts;
    size_t nparts;
    struct pollfd *pfds;
    size_t *nsettle;          /* scratch of a pass: results to write, per partition */
    struct part_order *order; /* scratch of a pass: the partitions in claim order */
    int64_t parts_read_mono;  /* the map was last read then */
    bool parts_known;         /* the map was read (at the start; see parts_step) */
    bool parts_failed_logged; /* a map Redis refused or delayq cannot read: logged once */

    /* worker registry and pause (coordinator only; see heartbeat_step) */
    char *command; /* owned copy of o.command */
    char host[128];
    int64_t beat_next;       /* monotonic: the next beat is due */
    int64_t started_srv;     /* the registry's start time; 0 before the first beat */
    bool registered;         /* our entry exists, as far as we know */
    bool beat_dirty;         /* a field of the record changed since it was last sent */
    bool beat_draining;      /* the record last sent said draining */
    unsigned beat_busy;      /* busy slots the record last sent said */
    unsigned beat_hung;      /* hung handlers the record last sent said */
    bool beat_failed_logged; /* a refused beat is logged once */
    unsigned looks;          /* idle looks sent: every other one prunes (DQ_BEAT_LOOK) */
    int64_t n_done, n_retried, n_failed; /* results written since the start */

    /* opts.lanes > 1: the other lanes, each a worker of its own (its own connection,
     * coordinator and handler threads) that dq_worker_run runs on a thread of its own */
    struct dq_worker *lanes[7];
    unsigned nlanes;
};

/* ---- logging ------------------------------------------------------------------------- */

static void
log_value(struct dq_buf *b, const char *v)
{
    bool quote = v[0] == '\0' || strpbrk(v, " =\"\\") != NULL;

    if (quote)
        dq_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') {
            dq_buf_putc(b, '\\');
            dq_buf_putc(b, (char)*p);
        } else if (*p < 0x20 || *p == 0x7f) {
            dq_buf_printf(b, "\\x%02x", *p);
        } else {
            dq_buf_putc(b, (char)*p);
        }
    }
    if (quote)
        dq_buf_putc(b, '"');
}

/*
 * Emits one logfmt line: time, level, event, queue, worker, then the task fields when
 * @job is given, then @n key/value string pairs from the variadic list.
 */
static void
wlog(struct dq_worker *w, int level, const char *event, const struct job *job, int n, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    struct dq_buf b = DQ_BUF_INIT;
    struct timespec ts;
    struct tm tm;
    char when[40];
    va_list ap;

    if (w->o.log == NULL || level > w->o.log_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    dq_buf_printf(&b, "time=%s.%03ldZ level=%s event=%s queue=", when, ts.tv_nsec / 1000000,
                  names[level], event);
    log_value(&b, w->queue);
    if (job != NULL) {
        dq_buf_puts(&b, " task=");
        log_value(&b, job->task.id);
        dq_buf_printf(&b, " attempt=%u", job->task.attempt + 1);
    }
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *k = va_arg(ap, const char *);
        const char *v = va_arg(ap, const char *);
        dq_buf_printf(&b, " %s=", k);
        log_value(&b, v ? v : "");
    }
    va_end(ap);
    if (!b.failed)
        w->o.log(level, b.data, w->o.log_arg);
    dq_buf_free(&b);
}

/* ---- lifecycle ----------------------------------------------------------------------- */

/* How many tasks claimed ahead may wait beyond the handler slots: the concurrency, at
 * least 4 (a one-slot worker sees a few tasks due within one window). */
static unsigned
ahead_allowance(const struct dq_worker *w)
{
    return w->o.concurrency < 4 ? 4 : w->o.concurrency;
}

static int new_lanes(struct dq_worker *w, dq_handler_fn handler, void *arg, dq_err *err);

/* Points every string of w->copts at a copy of its own. False when out of memory (the
 * copies made are freed with the worker). */
static bool
own_copts(struct dq_worker *w)
{
    const char **f[OWNED_STRS] = {&w->copts.password,      &w->copts.who,
                                  &w->copts.tls_ca,        &w->copts.tls_cert,
                                  &w->copts.tls_key,       &w->copts.tls_server_name,
                                  &w->copts.client_name,   &w->copts.user,
                                  &w->copts.sentinel_user, &w->copts.sentinel_password};
    bool ok = true;

    for (int i = 0; i < OWNED_STRS; i++) {
        if (*f[i] == NULL)
            continue;
        w->strs[i] = strdup(*f[i]);
        ok = ok && w->strs[i] != NULL;
        *f[i] = w->strs[i];
    }
    return ok;
}

int
dq_worker_new(const char *url, const dq_client_opts *copts, const char *queue,
              const dq_worker_opts *opts, dq_handler_fn handler, void *arg, dq_worker **out,
              dq_err *err)
{
    struct dq_worker *w;
    int rc, fds[2];

    *out = NULL;
    rc = dq_queue_name_check(queue, err);
    if (rc != DQ_OK)
        return rc;
    if (handler == NULL)
        return dq_err_set(err, DQ_EINVAL, "handler: missing");
    w = calloc(1, sizeof *w);
    if (w == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    w->pipe_rd = w->pipe_wr = -1; /* an early refusal must not close fd 0 in dq_worker_free */
    if (opts != NULL)
        w->o = *opts;
    if (w->o.concurrency == 0)
        w->o.concurrency = 1;
    if (w->o.batch == 0)
        w->o.batch = w->o.concurrency;
    if (w->o.lease_ms == 0)
        w->o.lease_ms = 30000;
    if (w->o.grace_ms == 0)
        w->o.grace_ms = 30000;
    if (w->o.max_idle_ms == 0)
        w->o.max_idle_ms = 60000;
    if (w->o.claim_ahead_ms < -1 || w->o.claim_ahead_ms > 1000) {
        rc = dq_err_set(err, DQ_EINVAL, "claim ahead: %lld ms is not in 0..1000 (-1 = off)",
                        (long long)w->o.claim_ahead_ms);
        goto out;
    }
    if (w->o.lanes == 0)
        w->o.lanes = 1;
    if (w->o.lanes > 8 || w->o.lanes > w->o.concurrency) {
        rc = dq_err_set(err, DQ_EINVAL, "lanes: %u is not in 1..8 and at most the concurrency (%u)",
                        w->o.lanes, w->o.concurrency);
        goto out;
    }
    if (w->o.concurrency > 1000 || w->o.batch > 1000) {
        rc = dq_err_set(err, DQ_EINVAL, "concurrency and batch: at most 1000 (got %u, %u)",
                        w->o.concurrency, w->o.batch);
        goto out;
    }
    if (w->o.lease_ms < 100 || w->o.lease_ms > 86400000) {
        rc = dq_err_set(err, DQ_EINVAL, "lease: %lld ms is not in 100ms..1d",
                        (long long)w->o.lease_ms);
        goto out;
    }
    if (w->o.beat_ms == 0)
        w->o.beat_ms = 30000;
    if (w->o.beat_ms < 10 || w->o.beat_ms > 3600000) {
        rc =
            dq_err_set(err, DQ_EINVAL, "beat: %lld ms is not in 10ms..1h", (long long)w->o.beat_ms);
        goto out;
    }
    if (w->o.timeout_ms < 0 || w->o.grace_ms < 0 || w->o.max_idle_ms < 10) {
        rc = dq_err_set(err, DQ_EINVAL, "timeout, grace and max idle must be positive");
        goto out;
    }
    snprintf(w->queue, sizeof w->queue, "%s", queue);
    w->fn = handler;
    w->arg = arg;
    w->url = strdup(url != NULL ? url : DQ_URL_DEFAULT); /* NULL: the default, as clients */
    if (copts != NULL)
        w->copts = *copts;
    w->who_set = w->copts.who != NULL;
    bool strs_ok = own_copts(w);
    if (w->o.name != NULL && w->o.name[0] != '\0') {
        snprintf(w->name, sizeof w->name, "%s", w->o.name);
    } else {
        char who[160];
        dq_default_who(who, sizeof who);
        snprintf(w->name, sizeof w->name, "%s:%ld", who, (long)getpid());
    }
    w->o.name = w->name;
    if (gethostname(w->host, sizeof w->host - 1) != 0)
        snprintf(w->host, sizeof w->host, "unknown");
    if (w->o.command != NULL) {
        size_t n = strlen(w->o.command);
        w->command = strndup(w->o.command, n > DQ_WORKER_COMMAND_MAX ? DQ_WORKER_COMMAND_MAX : n);
    }
    w->o.command = w->command;
    w->pipe_rd = w->pipe_wr = -1;
    if (pipe(fds) != 0) {
        rc = dq_err_set(err, DQ_ENOMEM, "pipe: %s", strerror(errno));
        goto out;
    }
    w->pipe_rd = fds[0];
    w->pipe_wr = fds[1];
    fcntl(w->pipe_rd, F_SETFL, O_NONBLOCK);
    fcntl(w->pipe_wr, F_SETFL, O_NONBLOCK);
    fcntl(w->pipe_rd, F_SETFD, FD_CLOEXEC); /* no thread exists yet: no fork can race */
    fcntl(w->pipe_wr, F_SETFD, FD_CLOEXEC);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    /* jobs not yet taken by a thread: at most the slots, plus those claimed ahead beyond
     * them (slots_free) */
    w->q_cap = w->o.concurrency + ahead_allowance(w);
    w->queued = calloc(w->q_cap, sizeof *w->queued);
    w->threads = calloc(w->o.concurrency, sizeof *w->threads);
    if (w->url == NULL || w->queued == NULL || w->threads == NULL ||
        (w->o.command == NULL && opts != NULL && opts->command != NULL) || !strs_ok) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
        goto out;
    }
    if (w->o.lanes > 1 && (rc = new_lanes(w, handler, arg, err)) != DQ_OK)
        goto out;
    *out = w;
    return DQ_OK;
out:
    if (w->pipe_rd >= 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
    dq_worker_free(w);
    return rc;
}

/*
 * Splits @w into opts.lanes workers: @w keeps the first share of the concurrency and
 * batch, and each other lane is a worker of its own with the rest, named "<name>/<k>".
 * A lane is no more than a second worker in the same process: it has its own
 * connection, so its claim call overlaps the others' (measured in bench/README.md, W2).
 */
/* Lane @k's share of @total over @n lanes: the first total % n lanes get one more. */
static unsigned
share(unsigned total, unsigned n, unsigned k)
{
    unsigned v = total / n + (k < total % n);
    return v > 0 ? v : 1;
}

static int
new_lanes(struct dq_worker *w, dq_handler_fn handler, void *arg, dq_err *err)
{
    unsigned n = w->o.lanes, conc = w->o.concurrency, batch = w->o.batch;

    for (unsigned k = 1; k < n; k++) {
        dq_worker_opts o = w->o;
        char name[sizeof w->name + 16];
        int rc;

        snprintf(name, sizeof name, "%.190s/%u", w->name, k + 1);
        o.name = name;
        o.lanes = 1;
        o.concurrency = share(conc, n, k);
        o.batch = share(batch, n, k);
        rc = dq_worker_new(w->url, &w->copts, w->queue, &o, handler, arg, &w->lanes[k - 1], err);
        if (rc != DQ_OK)
            return rc;
        w->nlanes++;
    }
    w->o.concurrency = share(conc, n, 0);
    w->o.batch = share(batch, n, 0);
    return DQ_OK;
}

static void
job_free(struct job *j)
{
    dq_task_clear(&j->task);
    free(j->result.trace);
    free(j);
}

/* Frees what dq_worker_free leaves to the last handler thread, or frees it all. */
static void
worker_release(dq_worker *w)
{
    while (w->owned != NULL) {
        struct job *j = w->owned;
        w->owned = j->next;
        job_free(j);
    }
    if (w->pipe_rd >= 0) {
        close(w->pipe_rd);
        close(w->pipe_wr);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
    dq_client_free(w->c);
    for (size_t i = 0; i < w->nparts; i++) {
        dq_client_free(w->parts[i].sub);
        free(w->parts[i].name);
    }
    free(w->parts);
    free(w->pfds);
    free(w->nsettle);
    free(w->order);
    free(w->queued);
    free(w->threads);
    free(w->url);
    for (int i = 0; i < OWNED_STRS; i++) {
        if (w->strs[i] != NULL) /* two of them are secrets: leave no copy in freed memory */
            memset(w->strs[i], 0, strlen(w->strs[i]));
        free(w->strs[i]);
    }
    free(w->command);
    free(w);
}

void
dq_worker_free(dq_worker *w)
{
    if (w == NULL)
        return;
    for (unsigned k = 0; k < w->nlanes; k++)
        dq_worker_free(w->lanes[k]);
    w->nlanes = 0;
    if (w->pipe_rd >= 0) {
        /* A handler abandoned at shutdown may still run on a detached thread: it still
         * needs the worker (its job, the lock); the last such thread frees it. */
        pthread_mutex_lock(&w->mu);
        if (w->live > 0) {
            w->freed = true;
            pthread_mutex_unlock(&w->mu);
            return;
        }
        pthread_mutex_unlock(&w->mu);
    }
    worker_release(w);
}

void
dq_worker_stop(dq_worker *w, bool now)
{
    int saved = errno;

    for (unsigned k = 0; k < w->nlanes; k++)
        dq_worker_stop(w->lanes[k], now);
    if (now)
        atomic_store(&w->stop_now, 1);
    atomic_store(&w->stop, 1);
    if (write(w->pipe_wr, "s", 1) < 0) {
        /* the pipe is full: the coordinator is awake anyway */
    }
    errno = saved;
}

/* ---- handler threads ----------------------------------------------------------------- */

static int64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps until the monotonic clock reads @ns or later (at once if it does). */
static void
wait_until_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};

    while (mono_ns() < ns && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void *
handler_thread(void *arg)
{
    struct dq_worker *w = arg;
    bool last;

    pthread_mutex_lock(&w->mu);
    for (;;) {
        struct job *j;

        while (w->q_len == 0 && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->q_len == 0)
            break;
        j = w->queued[w->q_head];
        w->q_head = (w->q_head + 1) % w->q_cap;
        w->q_len--;
        j->state = JOB_RUNNING;
        j->started_mono = dq_mono_ms(); /* set again below; the timeout check reads it */
        pthread_mutex_unlock(&w->mu);

        /* claimed ahead: not before its due time (PROTOCOL.md 10.2) */
        wait_until_ns(j->start_ns);
        pthread_mutex_lock(&w->mu);
        bool run = !j->abandoned; /* a stop may have handed it back while we waited */
        j->started_mono = dq_mono_ms();
        pthread_mutex_unlock(&w->mu);

        memset(&j->result, 0, sizeof j->result);
        if (run)
            w->fn(&j->task, &j->result, w->arg);

        pthread_mutex_lock(&w->mu);
        j->state = JOB_FINISHED;
        j->finished_mono = dq_mono_ms();
        if (!w->freed && write(w->pipe_wr, "j", 1) < 0) {
            /* the pipe is full: the coordinator is awake anyway */
        }
    }
    w->live--;
    last = w->live == 0 && w->freed;
    pthread_mutex_unlock(&w->mu);
    if (last)
        worker_release(w); /* dq_worker_free left this to us */
    return NULL;
}

/* ---- cancellations ------------------------------------------------------------------- */

/*
 * An operator cancelled running tasks (cancel.lua moved them out of flight and said so
 * on the wake-up channel): the jobs holding them are asked to stop, and their leases are
 * not renewed (Redis would refuse). When more were announced than one drain keeps, every
 * lease is renewed now: Redis reports the cancelled ones lost (extend_leases), which
 * asks their handlers to stop the same way.
 */
static void
take_cancels(struct dq_worker *w, unsigned pi, const struct dq_wake *wk)
{
    struct job *hit[DQ_WAKE_CANCELS];
    size_t nhit = 0;
    char key[DQ_TASK_KEY_MAX + 1];

    pthread_mutex_lock(&w->mu);
    for (struct job *j = w->owned; j != NULL; j = j->next) {
        if (j->state == JOB_FINISHED || j->abandoned || j->part != pi)
            continue; /* each partition announces its own cancellations */
        if (wk->cancel_more)
            j->renew_now = true;
        size_t kl = dq_task_key(&j->task, key, sizeof key);
        for (size_t i = 0; i < wk->ncancel; i++) {
            if (kl == wk->cancel_len[i] && memcmp(key, wk->cancel[i], kl) == 0 && !j->lost) {
                j->lost = true; /* gone from flight: no renewal, the result is refused */
                atomic_store(&j->cancel, true);
                if (nhit < DQ_WAKE_CANCELS)
                    hit[nhit++] = j;
            }
        }
    }
    pthread_mutex_unlock(&w->mu);
    for (size_t i = 0; i < nhit; i++)
        wlog(w, DQ_LOG_WARN, "task.cancelled", hit[i], 1, "by", "an operator (cancel)");
}

/* ---- what a handler may ask about its run ---------------------------------------- */

/* A handler's task is the first member of its job (handler_thread passes &j->task), so
 * the job is found from it without a lookup. */
static const struct job *
job_of(const dq_task *t)
{
    return (const struct job *)(const void *)t;
}

bool
dq_task_cancelled(const dq_task *t)
{
    return atomic_load(&job_of(t)->cancel);
}

int64_t
dq_task_time_left_ms(const dq_task *t)
{
    const struct job *j = job_of(t);

    if (j->limit_ms <= 0)
        return -1;
    /* started_mono is written by this job's own handler thread before the call */
    int64_t left = j->started_mono + j->limit_ms - dq_mono_ms();
    return left > 0 ? left : 0;
}

/* ---- coordinator --------------------------------------------------------------------- */

/* Server time now on the node of partition @p, as far as its replies tell. */
static int64_t
srv_now(const struct part *p)
{
    return dq_mono_ms() + p->offset_ms;
}

static int64_t
min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Errors that say "not now" rather than "never": unreachable, timed out, or Redis
 * refusing for the moment (OOM, READONLY after a failover, BUSY, LOADING, MISCONF). */
static bool
transient(int rc)
{
    return rc == DQ_ECONN || rc == DQ_ETIMEOUT || rc == DQ_EREDIS || rc == DQ_ENOMEM;
}

/*
 * Notes the outcome of a Redis call to partition @pi. A transient failure starts (or
 * continues) a down episode of that partition: one log line when it starts and one when
 * it ends, and no call to it before a capped, jittered backoff has passed, so neither
 * the log nor Redis is flooded. Returns true when Redis gave a real answer (success or
 * a final error).
 */
static bool
reached(struct dq_worker *w, unsigned pi, int rc, const dq_err *err)
{
    struct part *p = &w->parts[pi];

    if (transient(rc)) {
        if (!p->down) {
            const char *ev = rc == DQ_EREDIS ? "redis.error" : "redis.down";
            p->down = true;
            if (w->nparts > 1)
                wlog(w, DQ_LOG_WARN, ev, NULL, 2, "error", err->msg, "partition", p->name);
            else
                wlog(w, DQ_LOG_WARN, ev, NULL, 1, "error", err->msg);
        }
        /* capped at 1 s: a try is one refused connect, and work resumes within about a
         * second of Redis coming back (the chaos outage test asserts 2 s) */
        p->backoff_ms = p->backoff_ms == 0         ? 100
                        : p->backoff_ms * 2 > 1000 ? 1000
                                                   : p->backoff_ms * 2;
        p->retry_at = dq_mono_ms() + p->backoff_ms + dq_jitter(p->backoff_ms / 4);
        return false;
    }
    if (p->down) {
        p->down = false;
        p->backoff_ms = 0;
        if (w->nparts > 1)
            wlog(w, DQ_LOG_INFO, "redis.up", NULL, 1, "partition", p->name);
        else
            wlog(w, DQ_LOG_INFO, "redis.up", NULL, 0);
    }
    return true;
}

/* May the coordinator call partition @pi now? Not while it backs off. */
static bool
may_call(const struct dq_worker *w, unsigned pi)
{
    const struct part *p = &w->parts[pi];

    return !p->down || dq_mono_ms() >= p->retry_at;
}

static void
unlink_job(struct dq_worker *w, struct job *j)
{
    for (struct job **p = &w->owned; *p != NULL; p = &(*p)->next) {
        if (*p == j) {
            *p = j->next;
            return;
        }
    }
}

static void count_result(struct dq_worker *w, const struct job *j, int rc, bool exhausted);

/* Logs what became of a job whose result Redis answered (@rc, with @msg when it is not
 * DQ_OK; @exhausted for a retry) and frees it. */
static void
result_written(struct dq_worker *w, struct job *j, int rc, const char *msg, bool exhausted)
{
    char dur[32];

    snprintf(dur, sizeof dur, "%lld", (long long)(j->finished_mono - j->started_mono));
    if (rc != DQ_OK)
        wlog(w, rc == DQ_ELEASE ? DQ_LOG_WARN : DQ_LOG_ERROR, "task.result_lost", j, 1, "error",
             msg);
    else if (j->result.outcome == DQ_RELEASE)
        wlog(w, DQ_LOG_INFO, "task.released", j, 1, "reason", j->result.message);
    else if (j->result.outcome == DQ_DONE)
        wlog(w, DQ_LOG_INFO, "task.done", j, 1, "duration_ms", dur);
    else if (j->result.outcome == DQ_RETRY)
        wlog(w, exhausted ? DQ_LOG_WARN : DQ_LOG_INFO, exhausted ? "task.exhausted" : "task.retry",
             j, 2, "duration_ms", dur, "error", j->result.message);
    else
        wlog(w, DQ_LOG_WARN, "task.failed", j, 2, "duration_ms", dur, "error", j->result.message);
    count_result(w, j, rc, exhausted);
    unlink_job(w, j);
    job_free(j);
}

/* Renews the leases of @n jobs, all claimed from partition @pi, in one call. False
 * when Redis did not answer. */
static bool
extend_in(struct dq_worker *w, unsigned pi, struct job **jobs, size_t n)
{
    const dq_task *tasks[1000];
    bool lost[1000];
    int64_t now = srv_now(&w->parts[pi]);
    dq_err err = {0};

    for (size_t i = 0; i < n; i++)
        tasks[i] = &jobs[i]->task;
    int rc = dq_extend(w->c, w->parts[pi].name, tasks, n, w->o.lease_ms, lost, &err);
    if (!reached(w, pi, rc, &err))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (rc != DQ_OK || lost[i]) {
            wlog(w, DQ_LOG_WARN, "lease.lost", jobs[i], 1, "error", rc != DQ_OK ? err.msg : "");
            jobs[i]->lost = true;                 /* stop renewing; its result will be refused */
            atomic_store(&jobs[i]->cancel, true); /* so its handler need not run on */
        } else {
            jobs[i]->lease_srv = now + w->o.lease_ms;
        }
    }
    return true;
}

/*
 * Marks overrun handlers timed out and renews the leases that are past half their
 * length (one call per partition and 1000 leases). Returns the milliseconds until the
 * next renewal or timeout is due (3600000 when none).
 */
static int64_t
extend_leases(struct dq_worker *w)
{
    struct job *jobs[1000], *newly_timed_out[64];
    size_t n = 0, nt = 0;
    int64_t now_mono = dq_mono_ms(), next = 3600000;

    pthread_mutex_lock(&w->mu);
    for (struct job *j = w->owned; j != NULL; j = j->next) {
        /* not started yet: it starts no earlier than now, so its limit passes no earlier
         * than limit_ms from now; look again then (a handler thread that takes it up
         * does not wake this loop) */
        if (j->state == JOB_QUEUED && j->limit_ms > 0 && j->limit_ms < next)
            next = j->limit_ms;
        /* past its limit and still running: look again when it counts as hung */
        if (j->state == JOB_RUNNING && j->timed_out && !j->hung_logged && j->limit_ms > 0) {
            int64_t h = j->started_mono + j->limit_ms + DQ_HUNG_AFTER_MS - now_mono;
            if (h < next)
                next = h > 0 ? h : 0;
        }
        if (j->state == JOB_RUNNING && j->limit_ms > 0 && !j->timed_out && !j->abandoned) {
            int64_t left = j->started_mono + j->limit_ms - now_mono;
            if (left <= 0) {
                j->timed_out = true;
                atomic_store(&j->cancel, true);
                if (left + DQ_HUNG_AFTER_MS < next) /* look again when it would count as hung */
                    next = left + DQ_HUNG_AFTER_MS > 0 ? left + DQ_HUNG_AFTER_MS : 0;
                if (nt < 64)
                    newly_timed_out[nt++] = j;
            } else if (left < next) {
                next = left;
            }
        }
        if (j->state == JOB_FINISHED || j->timed_out || j->abandoned || j->lost)
            continue;
        int64_t renew =
            j->renew_now ? 0 : j->lease_srv - w->o.lease_ms / 2 - srv_now(&w->parts[j->part]);
        j->renew_now = false;
        if (renew <= 0 && n < 1000) {
            jobs[n++] = j;
        } else if (renew < next) {
            next = renew;
        }
    }
    pthread_mutex_unlock(&w->mu);
    for (size_t i = 0; i < nt; i++) {
        char ms[32];
        snprintf(ms, sizeof ms, "%lld", (long long)newly_timed_out[i]->limit_ms);
        wlog(w, DQ_LOG_WARN, "task.timeout", newly_timed_out[i], 1, "timeout_ms", ms);
    }
    if (n == 0)
        return next;
    /* each partition's leases in one call to its node: the jobs are grouped in place. A
     * partition that is down is tried again after its backoff; the others go on. */
    for (size_t i = 0; i < n;) {
        size_t m = i + 1;
        unsigned pi = jobs[i]->part;
        for (size_t k = m; k < n; k++) {
            if (jobs[k]->part == pi) {
                struct job *t = jobs[m];
                jobs[m++] = jobs[k];
                jobs[k] = t;
            }
        }
        if (!may_call(w, pi) || !extend_in(w, pi, jobs + i, m - i))
            next = min64(next, w->parts[pi].retry_at - dq_mono_ms());
        i = m;
    }
    return next < w->o.lease_ms / 2 ? next : w->o.lease_ms / 2;
}

static void
enqueue_job(struct dq_worker *w, struct job *j)
{
    pthread_mutex_lock(&w->mu);
    w->queued[(w->q_head + w->q_len) % w->q_cap] = j;
    w->q_len++;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/*
 * Takes in the tasks of a claim whose reply arrived at monotonic @arrival_ns. A task
 * claimed ahead (due after the claim's server time now_ms + now_us) starts that many
 * microseconds later, plus 1 ns per us for the rate at which two clocks may drift
 * apart (1000 ppm): the reply was written at that server time or later and arrived
 * later still, so the start is never before the due time on the server's clock
 * (PROTOCOL.md 10.2).
 */
static int
take_claimed(struct dq_worker *w, unsigned pi, dq_claimed *cl, int64_t arrival_ns,
             int64_t *skipped_lease)
{
    w->parts[pi].offset_ms = cl->now_ms - arrival_ns / 1000000;
    if (cl->to_failed > 0) {
        char n[24];
        snprintf(n, sizeof n, "%zu", cl->to_failed);
        wlog(w, DQ_LOG_WARN, "claim.to_failed", NULL, 2, "count", n, "reason",
             "undecodable or expired");
    }
    int taken = 0;
    for (size_t i = 0; i < cl->n; i++) {
        if (cl->tasks[i].undecodable) {
            /* The claim script fails what a strict reader refuses (PROTOCOL.md 5.3), so
             * only older scripts or a stricter reader get here: never run it (it would
             * run as "?"), and hold no slot for it. It has no task key to ack or fail
             * with; its lease ends and reap parks it as undecodable. */
            wlog(w, DQ_LOG_ERROR, "task.undecodable", NULL, 1, "action",
                 "not run; reaped when its lease ends");
            dq_task_clear(&cl->tasks[i]);
            *skipped_lease = cl->now_ms + w->o.lease_ms;
            continue;
        }
        struct job *j = calloc(1, sizeof *j);
        if (j == NULL) {
            /* Hand it back rather than hold a lease we cannot serve. */
            dq_release(w->c, w->parts[pi].name, &cl->tasks[i], NULL);
            continue;
        }
        taken++;
        j->task = cl->tasks[i];
        memset(&cl->tasks[i], 0, sizeof cl->tasks[i]);
        j->lease_srv = cl->now_ms + w->o.lease_ms;
        j->part = pi;
        j->limit_ms = w->o.timeout_ms;
        if (j->task.time_limit_ms > 0 && (j->limit_ms <= 0 || j->task.time_limit_ms < j->limit_ms))
            j->limit_ms = j->task.time_limit_ms;
        atomic_init(&j->cancel, false);
        int64_t ahead_us = (j->task.due_ms - cl->now_ms) * 1000 - cl->now_us;
        j->start_ns = ahead_us > 0 ? arrival_ns + ahead_us * 1000 + ahead_us : 0;
        j->state = JOB_QUEUED;
        j->next = w->owned;
        w->owned = j;
        if (w->o.log_level >= DQ_LOG_DEBUG) {
            char late[24];
            snprintf(late, sizeof late, "%lld", (long long)(cl->now_ms - j->task.due_ms));
            wlog(w, DQ_LOG_DEBUG, "task.claimed", j, 1, "late_ms", late);
        }
        enqueue_job(w, j);
    }
    return taken;
}

static void
drain_pipe(struct dq_worker *w)
{
    char buf[256];

    while (read(w->pipe_rd, buf, sizeof buf) > 0) {
    }
}

/* Subscribes to partition @p's wake-up channel when not subscribed, with its own
 * backoff (on a cluster, on the node that holds it). A subscription just opened means
 * wake-ups may have been missed before: the partition claims at once (more_due). */
static void
resubscribe(struct dq_worker *w, struct part *p)
{
    dq_err err;

    if (p->sub != NULL || p->down || dq_mono_ms() < p->sub_retry_at)
        return;
    if (dq_sub_open(w->c, p->channel, &p->sub, &err) == DQ_OK) {
        p->sub_backoff_ms = 0;
        p->sub_failed_logged = false;
        p->more_due = true;
        return;
    }
    p->sub = NULL;
    if (!p->sub_failed_logged) {
        if (w->nparts > 1)
            wlog(w, DQ_LOG_WARN, "wake.unsubscribed", NULL, 2, "partition", p->name, "error",
                 err.msg);
        else
            wlog(w, DQ_LOG_WARN, "wake.unsubscribed", NULL, 1, "error", err.msg);
        p->sub_failed_logged = true;
    }
    p->sub_backoff_ms = p->sub_backoff_ms == 0         ? 500
                        : p->sub_backoff_ms * 2 > 1000 ? 1000
                                                       : p->sub_backoff_ms * 2;
    p->sub_retry_at = dq_mono_ms() + p->sub_backoff_ms + dq_jitter(p->sub_backoff_ms / 4);
}

/* What dq_worker_run's loop carries from one pass to the next (besides each
 * partition's own, struct part). */
struct loop {
    int64_t stop_deadline; /* monotonic: running handlers are abandoned then */
    int64_t giveup;        /* monotonic: stop even with hand-backs unwritten */
    bool stopping;
    bool reread_map; /* read the map in this pass (the start, or a "parts" wake-up) */
    bool active;     /* the last pass settled or claimed something */
};

/* The jobs owned, by why they are still here (count_jobs). */
struct unsettled {
    unsigned busy;       /* queued or running, not abandoned */
    unsigned ahead;      /* of those, claimed ahead and not yet at their start time */
    unsigned unwritten;  /* finished; the result waits for Redis */
    unsigned unreleased; /* abandoned; the hand-back waits for Redis */
};

/* Starts the handler threads. On failure the ones started are stopped by
 * stop_handlers like any others. */
static int
start_handlers(struct dq_worker *w, dq_err *err)
{
    for (unsigned i = 0; i < w->o.concurrency; i++) {
        pthread_mutex_lock(&w->mu);
        w->live++;
        pthread_mutex_unlock(&w->mu);
        if (pthread_create(&w->threads[i], NULL, handler_thread, w) != 0) {
            pthread_mutex_lock(&w->mu);
            w->live--;
            pthread_mutex_unlock(&w->mu);
            return dq_err_set(err, DQ_ENOMEM, "cannot start handler thread %u", i + 1);
        }
        w->nthreads++;
    }
    return DQ_OK;
}

static void
log_start(struct dq_worker *w)
{
    char conc[16], lease[24];

    snprintf(conc, sizeof conc, "%u", w->o.concurrency);
    snprintf(lease, sizeof lease, "%lld", (long long)w->o.lease_ms);
    wlog(w, DQ_LOG_INFO, "worker.start", NULL, 4, "worker", w->name, "redis",
         dq_client_endpoint(w->c), "concurrency", conc, "lease_ms", lease);
}

/* Turns a dq_worker_stop into deadlines. They are set once and only ever move earlier
 * (a second stop, "now"). */
static void
note_stop(struct dq_worker *w, struct loop *lp, int64_t nowm)
{
    if (atomic_load(&w->stop) && !lp->stopping) {
        lp->stopping = true;
        lp->stop_deadline = nowm + (atomic_load(&w->stop_now) ? 0 : w->o.grace_ms);
        lp->giveup = lp->stop_deadline + 5000;
        wlog(w, DQ_LOG_INFO, "worker.stopping", NULL, 1, "grace",
             atomic_load(&w->stop_now) ? "none" : "yes");
    }
    if (lp->stopping && atomic_load(&w->stop_now) && nowm < lp->stop_deadline) {
        lp->stop_deadline = nowm;
        lp->giveup = nowm + 5000;
    }
}

/* Stopping: claimed jobs no handler has started go back; past the deadline, running
 * ones are abandoned (handed back; what their handler returns is ignored). */
static void
abandon_at_stop(struct dq_worker *w, const struct loop *lp, int64_t nowm)
{
    if (!lp->stopping)
        return;
    pthread_mutex_lock(&w->mu);
    while (w->q_len > 0) {
        struct job *j = w->queued[w->q_head];
        w->q_head = (w->q_head + 1) % w->q_cap;
        w->q_len--;
        j->state = JOB_FINISHED;
        j->abandoned = true;
    }
    for (struct job *j = w->owned; j != NULL; j = j->next) {
        if (nowm >= lp->stop_deadline && j->state == JOB_RUNNING) {
            j->abandoned = true;
            atomic_store(&j->cancel, true); /* past the grace: a handler that polls stops */
        }
    }
    pthread_mutex_unlock(&w->mu);
}

/* Counts the owned jobs by what they wait for, and frees those handed back whose handler
 * has returned. */
static struct unsettled
count_jobs(struct dq_worker *w)
{
    struct unsettled left = {0};
    int64_t now_ns = mono_ns();

    for (struct job *j = w->owned, *next; j != NULL; j = next) {
        enum job_state st;
        next = j->next;
        pthread_mutex_lock(&w->mu);
        st = j->state;
        pthread_mutex_unlock(&w->mu);
        if (j->abandoned && j->released) {
            if (st == JOB_FINISHED) {
                unlink_job(w, j);
                job_free(j);
            }
        } else if (j->abandoned) {
            left.unreleased++;
        } else if (st == JOB_FINISHED) {
            left.unwritten++;
        } else {
            left.busy++;
            if (j->start_ns > now_ns)
                left.ahead++;
        }
    }
    return left;
}

/*
 * Handler slots free for a claim. A task claimed ahead that waits for its start time
 * does not hold a slot (up to ahead_allowance of such tasks): with every slot
 * held by a task due in 3 ms, the next one due within the window is claimed now and
 * runs on the first thread free after its due time, instead of being claimed only once
 * a handler has finished, a claim's round trip late (W3's tail). Those tasks are due
 * within the claim-ahead window, so this worker holds at most ahead_allowance of them
 * beyond its slots; each one's start is still bounded below by its due time
 * (PROTOCOL.md 10.2).
 */
static unsigned
slots_free(const struct dq_worker *w, const struct unsettled *left)
{
    unsigned conc = w->o.concurrency, cap = ahead_allowance(w);
    unsigned held = left->busy - (left->ahead < cap ? left->ahead : cap);

    return conc > held ? conc - held : 0;
}

/* A stop is done when nothing is owned any more, or when Redis has been unreachable
 * for too long (leases will return what is left). */
static bool
stop_done(const struct loop *lp, const struct unsettled *left, int64_t nowm)
{
    if (!lp->stopping)
        return false;
    return (left->busy == 0 && left->unwritten == 0 && left->unreleased == 0) || nowm >= lp->giveup;
}

/* Returns the expired leases of any worker (ours included) to each partition whose
 * next reap is due, or fails their tasks when attempts are exhausted, 100 per call;
 * plans the next look. */
static void
reap_leases(struct dq_worker *w)
{
    for (size_t i = 0; i < w->nparts; i++) {
        struct part *p = &w->parts[i];
        dq_reaped rp;
        dq_err err = {0};
        int rc;

        if (!may_call(w, (unsigned)i) || srv_now(p) < p->next_reap)
            continue;
        rc = dq_reap(w->c, p->name, 100, &rp, &err);
        if (!reached(w, (unsigned)i, rc, &err))
            continue;
        if (rc == DQ_OK && rp.returned + rp.exhausted > 0) {
            char n1[24], n2[24];
            snprintf(n1, sizeof n1, "%zu", rp.returned);
            snprintf(n2, sizeof n2, "%zu", rp.exhausted);
            if (w->nparts > 1)
                wlog(w, DQ_LOG_INFO, "lease.reaped", NULL, 3, "returned", n1, "exhausted", n2,
                     "partition", p->name);
            else
                wlog(w, DQ_LOG_INFO, "lease.reaped", NULL, 2, "returned", n1, "exhausted", n2);
        }
        /* nothing in flight: the idle look (every max_idle_ms) reports new leases, so
         * this timer is only its fallback */
        p->next_reap = rc != DQ_OK                         ? srv_now(p) + w->o.max_idle_ms
                       : rp.returned + rp.exhausted == 100 ? 0
                       : rp.next_lease_ms < 0              ? srv_now(p) + 2 * w->o.max_idle_ms
                                                           : rp.next_lease_ms + 1;
    }
}

static bool part_paused(const struct part *p);

/* The claim-ahead window (opts.claim_ahead_ms; 0 is the default, -1 off). */
static int64_t
ahead_ms(const struct dq_worker *w)
{
    return w->o.claim_ahead_ms < 0 ? 0 : w->o.claim_ahead_ms == 0 ? 5 : w->o.claim_ahead_ms;
}

/* How many tasks to claim from partition @pi into @free_slots: some when something
 * may be due there (a wake-up, its next due time is within the
 * claim-ahead window, its idle timer ran out, or no wake-ups arrive), else 0. The
 * pause is the queue's (partition 0's): while it holds, the other partitions claim
 * nothing, and partition 0 only on a wake-up (a resume). */
static unsigned
claim_wanted(const struct dq_worker *w, const struct loop *lp, unsigned pi, unsigned free_slots,
             int64_t nowm)
{
    const struct part *p = &w->parts[pi];

    if (lp->stopping || free_slots == 0)
        return 0;
    if (pi > 0 && part_paused(&w->parts[0]))
        return 0; /* the queue is paused */
    if (part_paused(p) && !p->more_due)
        return 0; /* only a wake-up (a resume) or the pause's end makes it claim */
    if (p->claim_backoff_ms > 0 && nowm < p->claim_retry_at)
        return 0;
    if (!(p->more_due || (p->next_due >= 0 && srv_now(p) >= p->next_due - ahead_ms(w)) ||
          nowm - p->last_claim_mono >= w->o.max_idle_ms || p->sub == NULL))
        return 0;
    return free_slots < w->o.batch ? free_slots : w->o.batch;
}

/* Whether job @j has something to write: a result, or a hand-back. */
static bool
to_settle(const struct job *j)
{
    return j->abandoned ? !j->released : j->state == JOB_FINISHED;
}

static void note_pause(struct dq_worker *w, unsigned pi, int64_t paused_until);

/* A final error on a claim from partition @p: logged when a streak starts, then
 * backed off (see claim_retry_at). */
static void
claim_failed(struct dq_worker *w, struct part *p, const dq_err *err)
{
    if (p->claim_backoff_ms == 0) {
        if (w->nparts > 1)
            wlog(w, DQ_LOG_ERROR, "claim.failed", NULL, 2, "partition", p->name, "error", err->msg);
        else
            wlog(w, DQ_LOG_ERROR, "claim.failed", NULL, 1, "error", err->msg);
    }
    p->claim_failures++;
    p->claim_backoff_ms = p->claim_backoff_ms == 0         ? 100
                          : p->claim_backoff_ms * 2 > 5000 ? 5000
                                                           : p->claim_backoff_ms * 2;
    p->claim_retry_at = dq_mono_ms() + p->claim_backoff_ms + dq_jitter(p->claim_backoff_ms / 4);
}

/*
 * One script call for everything the coordinator has to write to partition @pi and to
 * claim from it: the results of its finished jobs and the hand-backs of its abandoned
 * ones (@nsettle of them, at most DQ_CALL_MAX), then a claim into *@free_slots when
 * claim_wanted says so (the slots it fills are taken off). Returns how many jobs it
 * settled or claimed: 0 when there was nothing to do or Redis did not answer (results
 * stay owned and go again after the backoff; the fence makes that safe).
 */
static int
settle_and_claim(struct dq_worker *w, struct loop *lp, unsigned pi, size_t nsettle,
                 unsigned *free_slots, int64_t nowm)
{
    struct part *p = &w->parts[pi];
    unsigned want = claim_wanted(w, lp, pi, *free_slots, nowm);
    dq_settle *res = NULL;
    struct job **jobs = NULL;
    dq_claimed cl;
    dq_err err = {0};
    size_t n = nsettle;
    int got = 0;

    if (!may_call(w, pi))
        return 0;
    if (n == 0 && want == 0)
        return 0;
    if (n > 0) {
        res = calloc(n, sizeof *res);
        jobs = calloc(n, sizeof *jobs);
        if (res == NULL || jobs == NULL)
            n = 0; /* claim only; the results go next time */
    }
    size_t k = 0;
    pthread_mutex_lock(&w->mu);
    for (struct job *j = w->owned; j != NULL && k < n; j = j->next) {
        if (j->part != pi || !to_settle(j))
            continue;
        jobs[k] = j;
        res[k].task = &j->task;
        res[k].outcome = j->abandoned ? DQ_RELEASE : j->result.outcome;
        j->result.message[sizeof j->result.message - 1] = '\0';
        res[k].message = j->result.message;
        res[k].trace = j->result.trace;
        res[k].trace_len = j->result.trace_len;
        k++;
    }
    pthread_mutex_unlock(&w->mu);
    n = k;
    if (n == 0 && want == 0) {
        free(res);
        free(jobs);
        return 0;
    }

    int rc = dq_claim_settle(w->c, p->name, res, n, want, w->o.lease_ms, ahead_ms(w), w->name,
                             dq_client_who(w->c), &cl, &err);
    int64_t arrival_ns = mono_ns();
    if (want > 0)
        p->last_claim_mono = arrival_ns / 1000000;
    bool answered = reached(w, pi, rc, &err);
    if (answered && rc != DQ_OK && want > 0) {
        claim_failed(w, p, &err); /* the results in this call were not written either */
    } else if (answered && rc != DQ_OK) {
        wlog(w, DQ_LOG_ERROR, "settle.failed", NULL, 1, "error", err.msg);
        reached(w, pi, DQ_EREDIS, &err);
    }
    if (!answered || rc != DQ_OK) {
        /* A claim that timed out may still run when a stalled Redis catches up, leasing
         * us tasks we never see. Nothing else would reap them before the idle timer:
         * look again once such a lease can have run out. */
        if (want > 0)
            p->next_reap = min64(p->next_reap, srv_now(p) + w->o.lease_ms + 1);
        free(res);
        free(jobs);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        struct job *j = jobs[i];
        if (j->abandoned) {
            j->released = true; /* freed by count_jobs once its handler is out */
            wlog(w, DQ_LOG_INFO, "task.released", j, 1, "result",
                 res[i].rc == DQ_OK ? "ok" : res[i].err.msg);
        } else {
            result_written(w, j, res[i].rc, res[i].err.msg,
                           res[i].outcome == DQ_RETRY && res[i].rc == DQ_OK &&
                               res[i].retry_due_ms < 0);
        }
    }
    free(res);
    free(jobs);
    if (want > 0 && p->claim_backoff_ms > 0) {
        char nf[24];
        snprintf(nf, sizeof nf, "%lld", p->claim_failures);
        wlog(w, DQ_LOG_INFO, "claim.ok", NULL, 1, "failures", nf);
        p->claim_backoff_ms = 0;
        p->claim_failures = 0;
    }
    if (want > 0) {
        note_pause(w, pi, cl.paused ? cl.paused_until_ms : -1);
        p->next_due = cl.next_due_ms;
        int64_t skipped_lease = -1;
        got = take_claimed(w, pi, &cl, arrival_ns, &skipped_lease);
        if (skipped_lease >= 0)
            p->next_reap = min64(p->next_reap, skipped_lease + 1);
        p->more_due = false; /* next_due (exact) says whether more is due */
        *free_slots -= (unsigned)got < *free_slots ? (unsigned)got : *free_slots;
        if (got < (int)want && p->next_due >= 0 && p->next_due - ahead_ms(w) <= srv_now(p))
            /* nothing claimable yet: our estimate of the server clock runs up to a
             * millisecond ahead (server time is whole ms). Look again shortly, not at
             * once (no spin), and not 10 ms later (that was W3's worst lateness). */
            p->next_due = srv_now(p) + ahead_ms(w) + 2;
    }
    dq_claimed_free(&cl);
    return (int)n + got;
}

static int
cmp_order(const void *a, const void *b)
{
    const struct part_order *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->pi > y->pi) - (x->pi < y->pi);
}

/* Partition 0's reply carries the pause, which holds every partition: a worker busy
 * on the others looks at partition 0 at least this often, so a pause takes effect on
 * them within about this long even when nothing is due in partition 0. */
#define PAUSE_LOOK_MS 1000

/*
 * settle_and_claim for every partition with something to write or something that may
 * be due. The claims go first, partition 0's first of all (its reply says whether the
 * queue is paused), then the others by next due time, so that when slots are short
 * they go to the earliest tasks and a due task does not wait behind other partitions'
 * results; each claim takes the slots it filled from the next one's. Partitions with
 * only results to write come last. (Holding those results back until the partition's
 * next claim, to save their round trip, made W3's lateness worse: they then went in
 * bursts.) Returns how many jobs were settled or claimed.
 */
static int
settle_and_claim_all(struct dq_worker *w, struct loop *lp, unsigned free_slots, int64_t nowm)
{
    size_t *nsettle = w->nsettle, k = 0;
    struct part_order *order = w->order;
    int total = 0;

    memset(nsettle, 0, w->nparts * sizeof *nsettle);
    pthread_mutex_lock(&w->mu);
    for (struct job *j = w->owned; j != NULL; j = j->next)
        if (nsettle[j->part] < DQ_CALL_MAX && to_settle(j))
            nsettle[j->part]++;
    pthread_mutex_unlock(&w->mu);
    if (w->nparts == 1)
        return settle_and_claim(w, lp, 0, nsettle[0], &free_slots, nowm);
    bool others = false;
    for (unsigned i = 1; i < w->nparts; i++)
        others = others || claim_wanted(w, lp, i, free_slots, nowm) > 0;
    if (others && nowm - w->parts[0].last_claim_mono >= PAUSE_LOOK_MS)
        w->parts[0].more_due = true; /* the pause look: first in the pass */
    for (unsigned i = 0; i < w->nparts; i++) {
        const struct part *p = &w->parts[i];
        bool claims = claim_wanted(w, lp, i, free_slots, nowm) > 0;
        if (!claims && nsettle[i] == 0)
            continue;
        order[k].pi = i;
        /* by next due time, which a claim's reply gives exactly; first
         * what may hold something earlier than we know (woken, no wake-ups), partition
         * 0 before them (its reply carries the pause). Not partition 0 first always: a
         * claim-ahead allowance it filled with later tasks held the others' earlier ones
         * back (W3 at 4 partitions: p99 5 ms) */
        bool unknown = p->more_due || p->sub == NULL;
        order[k++].key = !claims            ? INT64_MAX
                         : unknown          ? (i == 0 ? INT64_MIN : INT64_MIN + 1)
                         : p->next_due >= 0 ? p->next_due - p->offset_ms
                                            : INT64_MAX - 1;
    }
    qsort(order, k, sizeof *order, cmp_order);
    for (size_t i = 0; i < k; i++)
        total += settle_and_claim(w, lp, order[i].pi, nsettle[order[i].pi], &free_slots, nowm);
    return total;
}

static int64_t pause_left(const struct part *p);

/* How long to sleep: until the earliest thing we know of, starting from @wait (the
 * next lease renewal or handler timeout). Each term is in the future (or was handled
 * by this pass and then is), so the loop never spins. */
static int64_t
next_wait(const struct dq_worker *w, const struct loop *lp, unsigned free_slots, int64_t wait)
{
    int64_t nowm = dq_mono_ms();
    bool held = part_paused(&w->parts[0]); /* the queue is paused: no partition claims */

    for (size_t i = 0; i < w->nparts; i++) {
        const struct part *p = &w->parts[i];
        if (p->down) {
            /* nothing of it can happen before its next try (its other terms may be past
             * and would spin the loop) */
            wait = min64(wait, p->retry_at - nowm > 10 ? p->retry_at - nowm : 10);
            continue;
        }
        if (!lp->stopping && free_slots > 0) {
            wait = min64(wait, w->o.max_idle_ms - (nowm - p->last_claim_mono));
            if (held && i > 0) {
                /* partition 0's term says when to look again */
            } else if (part_paused(p)) {
                wait = min64(wait, pause_left(p)); /* no due times, no polling */
            } else {
                if (p->claim_backoff_ms > 0)
                    wait = min64(wait, p->claim_retry_at - nowm); /* not before it */
                else if (p->next_due >= 0)
                    wait = min64(wait, p->next_due - ahead_ms(w) - srv_now(p));
                if (p->sub == NULL)
                    wait = min64(wait, 1000); /* no wake-ups: look more often */
            }
        }
        if (!lp->stopping)
            wait = min64(wait, p->next_reap - srv_now(p));
    }
    if (!w->parts[0].down)
        wait = min64(wait, w->beat_next - nowm);
    if (lp->stopping)
        wait = min64(wait, nowm < lp->stop_deadline ? lp->stop_deadline - nowm : lp->giveup - nowm);
    return wait < 0 ? 0 : wait;
}

/* Takes in what arrived on partition @pi's wake-up subscription. */
static void
take_wakeups(struct dq_worker *w, struct loop *lp, unsigned pi)
{
    struct part *p = &w->parts[pi];
    dq_err err;
    struct dq_wake wk;

    if (dq_sub_drain(p->sub, &wk, &err) < 0) {
        dq_client_free(p->sub);
        p->sub = NULL;
        p->more_due = true; /* wake-ups may be lost while it reconnects */
        return;
    }
    /* another worker's lease is now the earliest: reap it if that worker dies */
    if (wk.lease_ms >= 0)
        p->next_reap = min64(p->next_reap, wk.lease_ms + 1);
    if (wk.due)
        p->more_due = true; /* something earlier was scheduled: next_due may be late */
    if (wk.ncancel > 0 || wk.cancel_more)
        take_cancels(w, pi, &wk);
    if (wk.parts && pi == 0)
        lp->reread_map = true; /* a resize: read the map now */
    if (wk.pause && pi == 0 && w->nparts > 1)
        p->more_due = true; /* a claim of partition 0 says so, and holds the others */
}

/* Sleeps up to @wait ms in poll() on the self-pipe (a handler finished, a stop) and
 * every partition's wake-up subscription (a partition not subscribed has fd -1, which
 * poll() skips), and takes in what the wake-ups say. */
static void
wait_for_wakeup(struct dq_worker *w, struct loop *lp, int64_t wait)
{
    struct pollfd *pfd = w->pfds;

    pfd[0] = (struct pollfd){w->pipe_rd, POLLIN, 0};
    for (size_t i = 0; i < w->nparts; i++)
        pfd[1 + i] = (struct pollfd){dq_sub_fd(w->parts[i].sub), POLLIN, 0};
    int pr = poll(pfd, (nfds_t)(1 + w->nparts), (int)(wait > 3600000 ? 3600000 : wait));

    if (pr > 0 && (pfd[0].revents & POLLIN))
        drain_pipe(w);
    for (size_t i = 0; pr > 0 && i < w->nparts; i++) {
        if (pfd[1 + i].fd >= 0 && (pfd[1 + i].revents & (POLLIN | POLLHUP | POLLERR)))
            take_wakeups(w, lp, (unsigned)i);
    }
}

/* Lets idle handler threads go; any still inside a handler are abandoned, and the last
 * of them frees the worker if dq_worker_free comes first. */
static void
stop_handlers(struct dq_worker *w)
{
    bool stuck = false;

    pthread_mutex_lock(&w->mu);
    w->quit = true;
    pthread_cond_broadcast(&w->cv);
    for (struct job *j = w->owned; j != NULL; j = j->next)
        stuck |= j->state == JOB_RUNNING;
    pthread_mutex_unlock(&w->mu);
    for (unsigned i = 0; i < w->nthreads; i++) {
        if (stuck)
            pthread_detach(w->threads[i]);
        else
            pthread_join(w->threads[i], NULL);
    }
}

static void heartbeat_step(struct dq_worker *w, struct loop *lp, unsigned busy, int64_t nowm);
static void look_parts(struct dq_worker *w, const struct loop *lp, int64_t nowm);
static void parts_step(struct dq_worker *w, struct loop *lp, int64_t nowm);
static void unregister(struct dq_worker *w);

/* Adds partition @name as w->parts[w->nparts]: it claims at once (more_due) and
 * subscribes to its wake-ups on the next pass. */
static int
parts_add(struct dq_worker *w, const char *name, dq_err *err)
{
    size_t n = w->nparts + 1;
    struct part *ps = realloc(w->parts, n * sizeof *ps);

    if (ps != NULL)
        w->parts = ps;
    struct pollfd *pf = ps != NULL ? realloc(w->pfds, (n + 1) * sizeof *pf) : NULL;
    if (pf != NULL)
        w->pfds = pf;
    size_t *ns = pf != NULL ? realloc(w->nsettle, n * sizeof *ns) : NULL;
    if (ns != NULL)
        w->nsettle = ns;
    struct part_order *po = ns != NULL ? realloc(w->order, n * sizeof *po) : NULL;
    if (po != NULL)
        w->order = po;
    char *copy = po != NULL ? strdup(name) : NULL;
    if (copy == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    struct part *p = &w->parts[w->nparts];
    memset(p, 0, sizeof *p);
    p->name = copy;
    snprintf(p->channel, sizeof p->channel, "dq:{%s}:wake", name);
    p->next_due = -1;
    p->more_due = true;
    p->paused_until = -1;
    if (w->nparts > 0) {
        /* its first claim comes at once (more_due): no idle look before it; the
         * clock of partition 0's node stands in for its own until it answers */
        p->last_claim_mono = dq_mono_ms();
        p->offset_ms = w->parts[0].offset_ms;
    }
    w->nparts++;
    return DQ_OK;
}

struct lane_run {
    dq_worker *w;
    pthread_t th;
    bool started;
    int rc;
    dq_err err;
};

static void *
lane_main(void *arg)
{
    struct lane_run *lr = arg;
    lr->rc = dq_worker_run(lr->w, &lr->err);
    return NULL;
}

static int run_lane(dq_worker *w, dq_err *err);

/* Runs every lane (opts.lanes): the others on threads of their own, the first on this
 * one. A lane that fails stops the others; the first failure is returned. */
int
dq_worker_run(dq_worker *w, dq_err *err)
{
    struct lane_run lr[7];
    int rc = DQ_OK;

    memset(lr, 0, sizeof lr);
    for (unsigned k = 0; k < w->nlanes; k++) {
        lr[k].w = w->lanes[k];
        lr[k].started = pthread_create(&lr[k].th, NULL, lane_main, &lr[k]) == 0;
        if (!lr[k].started) {
            dq_worker_stop(w, true);
            rc = dq_err_set(err, DQ_ENOMEM, "cannot start lane %u", k + 2);
            break;
        }
    }
    if (rc == DQ_OK)
        rc = run_lane(w, err);
    if (rc != DQ_OK)
        dq_worker_stop(w, false);
    for (unsigned k = 0; k < w->nlanes; k++) {
        if (!lr[k].started)
            continue;
        pthread_join(lr[k].th, NULL);
        if (lr[k].rc != DQ_OK && rc == DQ_OK) {
            rc = lr[k].rc;
            if (err != NULL)
                *err = lr[k].err;
        }
    }
    return rc;
}

static int
run_lane(dq_worker *w, dq_err *err)
{
    struct loop lp = {.stop_deadline = INT64_MAX, .giveup = INT64_MAX, .reread_map = true};
    int rc;

    if (!w->who_set)
        w->copts.who = w->name;
    rc = dq_client_open(w->url, &w->copts, &w->c, err);
    if (rc != DQ_OK)
        return rc;
    rc = parts_add(w, w->queue, err);
    if (rc == DQ_OK)
        rc = start_handlers(w, err);
    log_start(w);

    while (rc == DQ_OK) {
        int64_t nowm = dq_mono_ms();

        note_stop(w, &lp, nowm);
        abandon_at_stop(w, &lp, nowm);
        struct unsettled left = count_jobs(w);
        if (stop_done(&lp, &left, nowm))
            break;
        parts_step(w, &lp, nowm);
        int64_t wait = extend_leases(w);
        heartbeat_step(w, &lp, left.busy, nowm);
        look_parts(w, &lp, nowm);
        if (!lp.stopping)
            reap_leases(w);
        for (size_t i = 0; i < w->nparts; i++)
            resubscribe(w, &w->parts[i]);
        unsigned free_slots = slots_free(w, &left);
        lp.active = settle_and_claim_all(w, &lp, free_slots, nowm) > 0;
        if (lp.active)
            continue; /* count what changed (freed, new jobs busy) before deciding to sleep */
        wait_for_wakeup(w, &lp, next_wait(w, &lp, free_slots, wait));
    }

    unregister(w);
    stop_handlers(w);
    wlog(w, DQ_LOG_INFO, "worker.stop", NULL, 0);
    return rc;
}

/* ---- worker registry and pause --------------------------------------------------------- */

/* Results Redis took, for the registry's done / retried / failed counts. */
static void
count_result(struct dq_worker *w, const struct job *j, int rc, bool exhausted)
{
    if (rc != DQ_OK)
        return;
    if (j->result.outcome == DQ_DONE)
        w->n_done++;
    else if (j->result.outcome == DQ_RETRY && !exhausted)
        w->n_retried++;
    else if (j->result.outcome != DQ_RELEASE)
        w->n_failed++;
    else
        return;
    w->beat_dirty = true;
}

/* Whether partition @p said it is paused (partition 0: the queue is). */
static bool
part_paused(const struct part *p)
{
    return p->paused_until == 0 || (p->paused_until > 0 && srv_now(p) < p->paused_until);
}

/* Milliseconds until @p's pause ends by itself (an hour when it has no end: a resume
 * publishes a wake-up). */
static int64_t
pause_left(const struct part *p)
{
    return p->paused_until == 0 ? 3600000 : p->paused_until - srv_now(p);
}

/* Takes in the pause a claim or a check beat of partition @pi reported (-1: none),
 * logging the queue's changes (partition 0's). An end our clock estimate already passed
 * is moved 2 ms on, so a claim a millisecond early (the server time is whole ms) does
 * not make the loop spin. */
static void
note_pause(struct dq_worker *w, unsigned pi, int64_t paused_until)
{
    struct part *p = &w->parts[pi];
    bool was = p->paused_until >= 0;

    if (paused_until > 0 && paused_until <= srv_now(p))
        paused_until = srv_now(p) + 2;
    p->paused_until = paused_until;
    if (pi > 0) {
        /* the queue's pause is partition 0's; a partition paused on its own only
         * holds itself */
    } else if (!was && paused_until >= 0) {
        char until[24];
        snprintf(until, sizeof until, "%lld", (long long)paused_until);
        wlog(w, DQ_LOG_INFO, "queue.paused", NULL, 1, "until_ms", paused_until ? until : "resume");
    } else if (was && paused_until < 0) {
        wlog(w, DQ_LOG_INFO, "queue.resumed", NULL, 0);
        /* the other partitions' tasks that came due during the pause: claim them now */
        for (size_t i = 1; i < w->nparts; i++)
            w->parts[i].more_due = true;
    }
}

/* Takes in what a check beat (partition 0) or a look (the others, look_parts)
 * reported: it stands for the partition's idle claim and idle reap. */
static void
take_check(struct dq_worker *w, unsigned pi, const dq_beat_reply *br, int64_t nowm)
{
    struct part *p = &w->parts[pi];

    p->offset_ms = br->now_ms - dq_mono_ms();
    p->last_claim_mono = nowm; /* a look at the queue: the idle timer starts again */
    p->next_due = br->next_due_ms;
    p->next_reap = br->next_lease_ms >= 0 ? min64(p->next_reap, br->next_lease_ms + 1)
                                          : srv_now(p) + 2 * w->o.max_idle_ms;
    note_pause(w, pi, br->paused_until_ms);
    if (br->pruned > 0) {
        char n[24];
        snprintf(n, sizeof n, "%zu", br->pruned);
        wlog(w, DQ_LOG_INFO, "workers.pruned", NULL, 1, "count", n);
    }
}

/*
 * Sends a beat when one is due, the draining flag changed, or (idle) max_idle_ms passed
 * since the last look at the queue, which makes it a check beat. The record goes with it
 * only when it changed (or the entry is new or was pruned), so an idle beat moves one
 * score. A beat Redis refuses is logged once and tried again at the next interval; a
 * transient failure waits for the backoff.
 */
/* Handlers still running DQ_HUNG_AFTER_MS past their run's time limit: asked to stop
 * (dq_task_cancelled), they go on, holding a slot; the lease is not renewed, so the task
 * itself runs again elsewhere. Reported in the registry and logged once each. */
static unsigned
count_hung(struct dq_worker *w, int64_t nowm)
{
    struct job *newly[16];
    unsigned hung = 0, nn = 0;

    pthread_mutex_lock(&w->mu);
    for (struct job *j = w->owned; j != NULL; j = j->next) {
        if (j->state != JOB_RUNNING || !j->timed_out || j->limit_ms <= 0 ||
            nowm - (j->started_mono + j->limit_ms) < DQ_HUNG_AFTER_MS)
            continue;
        hung++;
        if (!j->hung_logged && nn < 16) {
            j->hung_logged = true;
            newly[nn++] = j;
        }
    }
    pthread_mutex_unlock(&w->mu);
    for (unsigned i = 0; i < nn; i++) {
        char ms[32];
        snprintf(ms, sizeof ms, "%lld", (long long)newly[i]->limit_ms);
        wlog(w, DQ_LOG_ERROR, "task.hung", newly[i], 1, "timeout_ms", ms);
    }
    return hung;
}

static void
heartbeat_step(struct dq_worker *w, struct loop *lp, unsigned busy, int64_t nowm)
{
    unsigned hung = count_hung(w, nowm);
    /* while Redis refuses beats, the idle claim and reap of before do the looking */
    bool check = !lp->stopping && !w->beat_failed_logged &&
                 nowm - w->parts[0].last_claim_mono >= w->o.max_idle_ms;
    bool changed = !w->registered || w->beat_dirty || busy != w->beat_busy ||
                   hung != w->beat_hung || lp->stopping != w->beat_draining;
    dq_beat rec = {.host = w->host,
                   .version = DQ_VERSION,
                   .command = w->command,
                   .pid = (int64_t)getpid(),
                   .started_ms = w->started_srv,
                   .interval_ms = w->o.beat_ms,
                   .concurrency = w->o.concurrency,
                   .busy = busy,
                   .done = w->n_done,
                   .retried = w->n_retried,
                   .failed = w->n_failed,
                   .draining = lp->stopping,
                   .hung = hung};
    dq_beat_reply br;
    dq_err err = {0};

    /* a handler newly hung is said at once, not at the next beat */
    if (!may_call(w, 0) ||
        (!check && nowm < w->beat_next && lp->stopping == w->beat_draining && hung == w->beat_hung))
        return;
    /* an idle look prunes the registry every other time: the prune's two commands on each
     * look put an idle worker at W4's budget (12 commands a minute, 0.2/s) */
    dq_beat_mode mode = !check ? DQ_BEAT : w->looks++ % 2 == 0 ? DQ_BEAT_CHECK : DQ_BEAT_LOOK;
    int rc = dq_heartbeat(w->c, w->queue, w->name, mode, changed ? &rec : NULL, &br, &err);
    if (!reached(w, 0, rc, &err))
        return;
    w->beat_next = nowm + w->o.beat_ms;
    if (rc != DQ_OK) {
        if (!w->beat_failed_logged)
            wlog(w, DQ_LOG_ERROR, "heartbeat.failed", NULL, 1, "error", err.msg);
        w->beat_failed_logged = true;
        return;
    }
    w->beat_failed_logged = false;
    w->parts[0].offset_ms = br.now_ms - dq_mono_ms();
    if (changed) {
        w->registered = true;
        w->started_srv = br.started_ms;
        w->beat_dirty = false;
        w->beat_busy = busy;
        w->beat_hung = hung;
        w->beat_draining = lp->stopping;
    } else if (!br.registered) {
        w->registered = false; /* pruned while we were away: send the record at once */
        w->beat_next = nowm;
    }
    if (check)
        take_check(w, 0, &br, nowm);
    if (br.schedules_low > 0) {
        /* cron firings need time zones, which the claim script cannot evaluate: the
         * worker lists the next ones (PROTOCOL.md 5.30); every worker may, the script
         * keeps one list */
        size_t filled = 0;
        if (dq_schedule_refill(w->c, w->queue, &filled, &err) != DQ_OK)
            wlog(w, DQ_LOG_ERROR, "schedule.refill_failed", NULL, 1, "error", err.msg);
    }
}

/*
 * Reads the partition map (dq_parts_get): at the start, at once on a "parts" wake-up
 * (a resize), and at most once a second while the worker settles or claims on a
 * partitioned queue; then adds the partitions it did not know (the map only ever adds
 * them; a draining one stays in it). An unpartitioned queue's map is read at the start
 * and on that wake-up only, so its worker sends today's commands, and an idle worker
 * reads no map. A map that cannot be read is tried again a second later, while the
 * partitions known go on.
 */
static void
parts_step(struct dq_worker *w, struct loop *lp, int64_t nowm)
{
    bool periodic = nowm - w->parts_read_mono >= DQ_PARTS_REFRESH_MS &&
                    (!w->parts_known || (w->nparts > 1 && lp->active));
    struct dq_parts m = {0};
    dq_err err = {0};

    if (!(lp->reread_map || periodic) || !may_call(w, 0) || lp->stopping)
        return;
    if (lp->reread_map && w->parts_known)
        dq_parts_forget(w->c, w->queue); /* the cache may be younger than the change */
    int rc = dq_parts_get(w->c, w->queue, &m, &err);
    w->parts_read_mono = nowm;
    lp->reread_map = false;
    if (!reached(w, 0, rc, &err))
        return;            /* tried again once Redis answers */
    w->parts_known = true; /* answered: no more tries while idle */
    if (rc != DQ_OK) {
        if (!w->parts_failed_logged)
            wlog(w, DQ_LOG_ERROR, "parts.failed", NULL, 1, "error", err.msg);
        w->parts_failed_logged = true;
        return;
    }
    w->parts_failed_logged = false;
    for (size_t i = w->nparts; i < m.all; i++) {
        char idx[24];
        if (parts_add(w, m.names[i], &err) != DQ_OK) {
            w->parts_read_mono = 0; /* out of memory: again at the next pass */
            break;
        }
        snprintf(idx, sizeof idx, "%zu", i);
        wlog(w, DQ_LOG_INFO, "partition.added", NULL, 3, "partition", m.names[i], "index", idx,
             "draining", i >= m.n ? "yes" : "no");
    }
    dq_parts_free(&m);
}

/*
 * The idle look at partitions 1 and up (partition 0's is the check beat): a partition
 * whose idle timer ran out is asked for its next due time, earliest lease and pause in
 * one read, the heartbeat script's 'look' without a record, which registers nothing
 * there (the registry is partition 0's: ZADD XX of a name it does not hold). It stands
 * for the partition's idle claim and reap, as the check beat does for partition 0. A
 * look Redis refuses is logged once; that partition's idle timer then claims instead.
 */
static void
look_parts(struct dq_worker *w, const struct loop *lp, int64_t nowm)
{
    for (unsigned i = 1; i < w->nparts && !lp->stopping; i++) {
        struct part *p = &w->parts[i];
        dq_beat_reply br;
        dq_err err = {0};

        if (p->look_failed_logged || nowm - p->last_claim_mono < w->o.max_idle_ms ||
            !may_call(w, i))
            continue;
        int rc = dq_heartbeat(w->c, p->name, w->name, DQ_BEAT_LOOK, NULL, &br, &err);
        if (!reached(w, i, rc, &err))
            continue;
        if (rc != DQ_OK) {
            wlog(w, DQ_LOG_ERROR, "look.failed", NULL, 2, "partition", p->name, "error", err.msg);
            p->look_failed_logged = true;
            continue;
        }
        take_check(w, i, &br, nowm);
    }
}

/* A clean exit leaves the registry at once. When Redis is away the entry stays; it is
 * shown as lost and pruned like a dead worker's. */
static void
unregister(struct dq_worker *w)
{
    dq_beat_reply br;
    dq_err err;

    if (w->registered && w->nparts > 0 && !w->parts[0].down && w->c != NULL)
        dq_heartbeat(w->c, w->queue, w->name, DQ_BEAT_GONE, NULL, &br, &err);
    w->registered = false;
}

char *
dq_trace_capture(void)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    char **names = backtrace_symbols(frames, n);
    struct dq_buf b = DQ_BUF_INIT;

    /* Frame 0 is this function. */
    for (int i = 1; i < n; i++) {
        if (names != NULL)
            dq_buf_printf(&b, "  at %s\n", names[i]);
        else
            dq_buf_printf(&b, "  at %p\n", frames[i]);
    }
    free(names);
    return dq_buf_steal(&b, NULL);
}
