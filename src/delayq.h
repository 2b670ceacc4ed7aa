/* SPDX-License-Identifier: MIT */
/*
 * delayq.h: the whole public API of libdelayq, a delayed task queue on Redis.
 * Nothing else under src/ is installed, and nothing else is exported (see
 * libdelayq.map). Every state change runs one Lua script inside Redis; see
 * docs/PROTOCOL.md for the keys, the envelope and each script's contract.
 *
 * Conventions:
 * - Fallible calls return DQ_OK (0) or a negative DQ_E* code and take a trailing
 *   dq_err * that may be NULL.
 * - Result structs are declared by the caller, filled by the call and emptied by
 *   their dq_*_free(); on failure they are left empty, so there is nothing to free.
 * - Times are int64_t milliseconds since the epoch, always taken from the Redis
 *   server clock (TIME), never from the client's.
 * - A dq_client belongs to one thread at a time.
 * - DQ_ETIMEOUT (or DQ_ECONN) on a call that reached Redis means its outcome is
 *   unknown: the script may have run. Enqueue with a caller-chosen id to make a retry
 *   safe; the library never retries a call by itself.
 */
#ifndef DELAYQ_H
#define DELAYQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DQ_VERSION "0.1.0"

enum {
    DQ_OK = 0,
    DQ_EINVAL = -1,    /* bad input: a field is out of range or malformed */
    DQ_ENOTFOUND = -2, /* no such task (or queue item) */
    DQ_EPROTO = -3,    /* malformed data in Redis or an unexpected reply */
    DQ_EREDIS = -4,    /* Redis refused the command (WRONGTYPE, OOM, READONLY, ...) */
    DQ_ECONN = -5,     /* cannot reach Redis, or the connection dropped */
    DQ_ETIMEOUT = -6,  /* Redis did not answer within the timeout */
    DQ_ENOMEM = -7,    /* out of memory in this process */
    DQ_ELEASE = -8,    /* the caller no longer holds the task's lease */
    /* the write was made on the master but fewer than dq_client_opts.min_replicas
     * replicas confirmed it in time (WAIT); retryable: repeat it (an enqueue with the
     * same caller-chosen id) or check the replicas. Enqueues fill in their ids as on
     * DQ_OK (a batch stops after the chunk that fell short) */
    DQ_EREPLICAS = -9,
};

/*
 * Limits of the protocol (docs/PROTOCOL.md 8.2). The scripts enforce the same numbers
 * (lua/lib.lua; a unit test checks they agree); the library checks them before it
 * sends anything. Lengths are in bytes without the NUL: a buffer for one needs +1.
 */
/* A queue's partitions: 1..DQ_PARTITIONS_MAX (dq_config.partitions). */
#define DQ_PARTITIONS_MAX 256
/* Queue name: 1..DQ_QUEUE_NAME_MAX bytes (checked client-side); a buffer needs +1. */
#define DQ_QUEUE_NAME_MAX 100
/* Task id: caller-chosen ids and the ids find, requeue and drop take; a buffer needs +1. */
#define DQ_ID_MAX 200
/* Task key ("c:" + an id; section "Task ids and task keys"); a buffer needs +1. */
#define DQ_TASK_KEY_MAX (DQ_ID_MAX + 2)
/* Tasks, ids or entries one script call takes or returns (a count, no NUL). */
#define DQ_CALL_MAX 1000
/* Entries one bounded step looks at: bulk requeue / drop, find's scan, search, trim. */
#define DQ_STEP_MAX 1000
/* Search text: 1..DQ_NEEDLE_MAX bytes; a buffer needs +1. */
#define DQ_NEEDLE_MAX 200
/* A task's attempt and max attempts, and a queue's max_attempts: producers, the scripts
 * and every reader refuse more, so no envelope past it is ever written or run. */
#define DQ_ATTEMPTS_MAX 1000000
/* A task's time limit (dq_enqueue_opts.time_limit_ms), ms: 7 days. */
#define DQ_TIME_LIMIT_MAX 604800000LL
/* A task's unique-for window (dq_enqueue_opts.unique_for_ms), ms: 7 days. */
#define DQ_UNIQUE_FOR_MAX 604800000LL
/* A task's key (dq_enqueue_opts.key; per-key limits, PROTOCOL.md 4.10): 1..DQ_KEY_MAX
 * bytes; a buffer needs +1. */
#define DQ_KEY_MAX 64
/* Buckets of the run-time histograms (dq_stats.run, dq_history_row.run). */
#define DQ_RUN_BUCKETS 12
/* Upper bounds (ms, inclusive) of buckets 0..10 (5, 10, 25, 50, 100, 250, 500, 1000,
 * 2500, 5000, 10000); bucket 11 is open. A run of d ms is in the first bucket whose bound
 * is >= d. */
extern const int64_t dq_run_bounds_ms[DQ_RUN_BUCKETS - 1];
/* Bytes of a failure's signature (reason + masked first line of its error). */
#define DQ_SIGNATURE_MAX 200
/* Reason given to dq_pause(): 0..DQ_PAUSE_REASON_MAX bytes; a buffer needs +1. */
#define DQ_PAUSE_REASON_MAX 200
/* A worker's command as kept in the worker registry (longer ones are cut). */
#define DQ_WORKER_COMMAND_MAX 1024

typedef struct dq_err {
    int code;      /* a DQ_E* value, 0 when nothing failed */
    char msg[256]; /* one line: what failed, which field, which limit */
} dq_err;

/** Returns a short constant name for @code ("DQ_EINVAL"). */
const char *dq_strerror(int code);

/* ---- connection ------------------------------------------------------------------ */

typedef struct dq_client dq_client; /* opaque; one thread at a time */

/*
 * Options of a connection. Strings are borrowed and only read while dq_client_open()
 * runs; dq_worker_new() copies every one of them (its worker connects again after an
 * outage), so they may go once it returns.
 *
 * The tls_* fields apply to rediss:// URLs only; any of them with another scheme is
 * DQ_EINVAL (a plain connection must never be mistaken for a protected one).
 */
typedef struct dq_client_opts {
    int connect_timeout_ms; /* 0: 3000; covers the TCP connect and the TLS handshake */
    int command_timeout_ms; /* 0: 3000 */
    const char *password;   /* overrides the URL's password; NULL: none */
    const char *who;        /* caller name written to the audit log; NULL: user@host */
    /* PEM file, or a directory in `openssl rehash` form, of the CAs that may sign the
     * server's certificate; NULL: the system store (/etc/ssl/certs) */
    const char *tls_ca;
    /* PEM client certificate (chain) for a server that asks for one; NULL: none */
    const char *tls_cert;
    /* PEM private key of tls_cert, unencrypted; NULL: read from the tls_cert file */
    const char *tls_key;
    /* the name sent as SNI and that the server certificate must carry (a DNS name, or an
     * IP address checked as an address); NULL: the URL's host */
    const char *tls_server_name;
    /* true: check neither the certificate chain nor the name (anyone on the path can
     * read and change the traffic); for tests only. Callers should warn when it is set. */
    bool tls_insecure;
    /* CLIENT SETNAME on every connection, so CLIENT LIST shows who is connected
     * ("delayq:work:host:pid"); bytes Redis does not allow in a name (space, control,
     * non-ASCII) become '_', cut at 100 bytes; NULL: "delayq:lib:host:pid". A server
     * that refuses CLIENT SETNAME (an ACL without it) is used all the same. */
    const char *client_name;
    /* the ACL user for AUTH when the URL names none (with the URL's password, or
     * password above); NULL: the URL's user, else the default user */
    const char *user;
    /* ---- Sentinel (redis-sentinel:// and rediss-sentinel:// URLs) ---- */
    /* AUTH for the sentinels themselves (the URL's user info is the master's); NULL:
     * none. */
    const char *sentinel_user;
    const char *sentinel_password;
    /* 0: off. Else after every write call but claims and lease upkeep (PROTOCOL.md,
     * "Failover"), WAIT until this many replicas have it: DQ_EREPLICAS when fewer did
     * within min_replicas_timeout_ms (0: the command timeout) */
    int min_replicas;
    int min_replicas_timeout_ms;
} dq_client_opts;

/**
 * Connects to @url: redis://[user:password@]host[:port][/db],
 * rediss://[user:password@]host[:port][/db] (TLS, certificate and name verified unless
 * opts->tls_insecure) or unix:///path/to/sock[?db=N]; NULL is redis://127.0.0.1:6379.
 * Connects at once, so an
 * unreachable server is reported here (DQ_ECONN or DQ_ETIMEOUT) within the connect
 * timeout; a failed TLS handshake is DQ_ECONN with the reason ("tls: certificate verify
 * failed: ..."). @opts may be NULL. On DQ_OK *out holds a client to release with
 * dq_client_free(). A client that loses its connection reconnects on the next call,
 * with capped backoff between attempts. Returns DQ_EINVAL for a malformed URL or an
 * unusable TLS file (named in the message).
 */
int dq_client_open(const char *url, const dq_client_opts *opts, dq_client **out, dq_err *err);

/** Closes the connection and frees the client. Accepts NULL. */
void dq_client_free(dq_client *c);

/** The server address as "host:port" or the socket path; for a cluster client
 * "cluster " and its seed nodes. Borrowed from @c. */
const char *dq_client_endpoint(const dq_client *c);

/** The node that serves @queue: for a cluster client "host:port" of the master of the
 * queue's slot in its current slot map ("" when none), else dq_client_endpoint().
 * Borrowed from @c, valid until the next call on @c. */
const char *dq_client_node(const dq_client *c, const char *queue);

/** The name written to the audit log for actions made through @c. Borrowed. */
const char *dq_client_who(const dq_client *c);

/**
 * After a call on @c that failed with DQ_ETIMEOUT or DQ_ECONN: whether its last command
 * had reached Redis whole before the connection failed or the timeout passed (a script
 * that ran long, a connection lost before the reply). Redis may then have run it, so the
 * outcome is unknown: an operator action's entry in the audit log tells (every action
 * script writes it in the same call). False when nothing reached Redis (unreachable, a
 * failed connect or AUTH): then nothing changed. Valid until the next call on @c.
 */
bool dq_client_unanswered(const dq_client *c);

typedef struct dq_server_info {
    char version[32];    /* redis_version */
    char role[16];       /* master, slave */
    int64_t used_memory; /* bytes */
    int64_t maxmemory;   /* bytes; 0: no limit */
    int64_t connected_clients;
    int64_t uptime_s;
} dq_server_info;

/** Reads what an operator wants to know about the server (one INFO call). */
int dq_server_info_get(dq_client *c, dq_server_info *out, dq_err *err);

/* ---- queues ---------------------------------------------------------------------- */

/*
 * The queues of a server, for pickers and listings. Every client adds a queue to the
 * registry set `dq:queues` the first time it enqueues to it, claims from it or
 * configures it, so queues are found without KEYS or SCAN. A client remembers the
 * first 1024 queues it registered and sends no SADD for them again; calls for queues
 * beyond those send one each time. A registered queue stays registered when it
 * empties (dq_queue_forget() removes it).
 */
typedef struct dq_queues {
    char **names;  /* owned, sorted; see dq_queues_free() */
    size_t n;      /* names returned (at most the @most asked for) */
    int64_t total; /* queues registered */
} dq_queues;

/**
 * Reads the registry: its size (one SCARD) and, when @most > 0, up to @most names in
 * byte order (SSCAN in steps of DQ_STEP_MAX, so a huge registry never blocks Redis).
 */
int dq_queues_get(dq_client *c, size_t most, dq_queues *out, dq_err *err);

/** Frees the names in @q and empties it. Accepts NULL. */
void dq_queues_free(dq_queues *q);

/** Removes @queue from the registry (its tasks, if any, are not touched). */
int dq_queue_forget(dq_client *c, const char *queue, dq_err *err);

/**
 * Sets *@known: whether @queue is known on the server, which is what the operator
 * commands need before they act on it. Known means registered (`dq:queues`), or any of
 * the queue's own keys exists (tasks, failures, counters, sequence, config, audit log,
 * workers, pause, error groups), so a queue missing from the registry still counts.
 * One EXISTS over the queue's keys (one slot) and, only when none exists, an SSCAN of
 * the registry for the name. Reads only: works for the viewer role and on a cluster.
 */
int dq_queue_known(dq_client *c, const char *queue, bool *known, dq_err *err);

/* ---- tasks ----------------------------------------------------------------------- */

/* Where a task is. */
typedef enum dq_state {
    DQ_STATE_NONE = 0,
    DQ_STATE_SCHEDULED, /* waiting in the scheduled set (due or future) */
    DQ_STATE_INFLIGHT,  /* claimed by a worker, under a lease */
    DQ_STATE_FAILED,    /* parked in the failed set */
    DQ_STATE_DONE,      /* finished, kept by the queue's done_retention (no payload) */
    DQ_STATE_PARKED,    /* due, held back: its key was at key_concurrency (PROTOCOL.md 4.10) */
} dq_state;

/* Attempts a task's history keeps (docs/PROTOCOL.md 4.5), and the bytes of each error. */
#define DQ_HISTORY_MAX       5
#define DQ_HISTORY_ERROR_MAX 1024

/* One past attempt of a task, from its history. Strings are owned by the dq_task. */
typedef struct dq_attempt {
    uint32_t attempt;    /* counted from 1 */
    int64_t started_ms;  /* when it was claimed */
    int64_t duration_ms; /* from the claim to its outcome */
    char *worker;        /* who held it */
    char *outcome;       /* "retry", "fail", "lease expired", "timed out" or "expired"; "?" when
                            the entry does not decode */
    char *error;         /* the first DQ_HISTORY_ERROR_MAX bytes of its error */
    size_t worker_len, outcome_len, error_len; /* their bytes, as in dq_task */
} dq_attempt;

/*
 * A task as read from Redis. Every pointer is owned by the struct and released by
 * dq_task_clear(). Strings are NUL-terminated; the payload is not (use
 * payload_len) and may hold any bytes. Fields that do not apply are -1 / NULL.
 * Each string has its length in bytes beside it (id_len ...): a string another client
 * wrote may hold NUL bytes, which a reader of C strings would cut short. The library
 * always sets them; a length of 0 means strlen() (a task built by hand).
 */
typedef struct dq_task {
    char *id; /* the task id: caller-chosen, or the queue sequence in decimal */
    size_t id_len;
    bool custom_id;         /* the id was chosen by the producer */
    uint64_t seq;           /* per-queue enqueue sequence (orders tasks due in one ms) */
    uint32_t attempt;       /* attempts already made (0 before the first run) */
    uint32_t max_attempts;  /* 0: unlimited */
    int64_t enqueued_ms;    /* when it was first enqueued */
    int64_t due_ms;         /* scheduled: due time; in-flight: due time when claimed */
    int64_t deadline_ms;    /* claimed after this, it fails as "expired"; -1: none */
    int64_t time_limit_ms;  /* a run is stopped after this long; -1: none (the worker's own) */
    int64_t unique_for_ms;  /* once done, its id is refused this long (the "uf" extension);
                               -1: none */
    unsigned char *payload; /* owned; payload_len bytes */
    size_t payload_len;
    char *last_error; /* message of the last retry; NULL if none */
    size_t last_error_len;
    char *key; /* its key (dq_enqueue_opts.key, the envelope's "k"); NULL: none */
    size_t key_len;
    dq_state state;

    /* parked only (dq_find): the key's tasks in flight and the queue's key_concurrency
     * then; it runs when a settle of its key finds room (PROTOCOL.md 4.10) */
    int64_t key_inflight, key_limit;

    /* in-flight only */
    int64_t lease_ms;   /* lease deadline */
    int64_t claimed_ms; /* when this lease began */
    char *worker;       /* who holds the lease */
    size_t worker_len;
    bool keep_done; /* its queue kept done tasks when it was claimed: its ack records it */

    /* failed only */
    int64_t failed_ms;
    char *reason;    /* "error", "attempts exhausted", "expired", "undecodable", ... */
    char *error;     /* the error message */
    char *trace;     /* the stack trace text; may be empty */
    char *failed_by; /* who failed it */
    size_t reason_len, error_len, trace_len, failed_by_len;
    bool undecodable; /* the raw member could not be decoded; see raw */

    unsigned char *raw; /* owned: the envelope bytes exactly as stored in Redis */
    size_t raw_len;

    /* its last attempts, oldest first (owned; dq_find fills it, listings leave it empty):
     * only a task that failed at least once has any */
    dq_attempt *history;
    size_t nhistory;

    /* done only (done retention): when it finished; claimed_ms, due_ms, worker and attempt
     * (counted from 1: the run that finished) tell how it ran; no payload is kept */
    int64_t done_ms;
    int64_t unique_until_ms; /* dq_find: its id is refused until then (an open unique-for
                                window); -1: none */
} dq_task;

/** Releases everything @t owns and zeroes it. Accepts NULL. */
void dq_task_clear(dq_task *t);

/* ---- queue configuration ------------------------------------------------------------ */

/*
 * Per-queue limits, stored in Redis (the queue's config hash) so that every client
 * of a queue enforces the same ones. A field left at 0 keeps its default.
 */
typedef struct dq_config {
    int64_t max_delay_ms;     /* longest allowed delay; default 7 days */
    int64_t max_payload;      /* bytes; default 1 MiB */
    int64_t backoff_base_ms;  /* first retry delay; default 1 s, doubling */
    int64_t backoff_cap_ms;   /* longest retry delay; default 5 min */
    int64_t max_attempts;     /* default for tasks enqueued without one; default 25 */
    int64_t failed_retention; /* failed tasks kept, exactly; default 100 000 */
    int64_t audit_retention;  /* audit entries kept (approximately); default 10 000 */
    int64_t far_future_ms;    /* "far future" starts this far ahead; default 1 h */
    int64_t worker_lost_ms;   /* a worker silent this long is shown as lost; default (0 in
                                 Redis) three of its own beat intervals; set -1 for that */
    int64_t worker_prune_ms;  /* a worker silent this long leaves the registry; default 1 h */
    /* The health verdict's thresholds (delayq top, delayq stats --check); no script
       reads them. */
    int64_t alert_oldest_due_ms; /* the oldest due task waits this long: bad; default 5 min */
    int64_t alert_far_future;    /* this many tasks in the far future: bad; default 100 000 */
    int64_t alert_running_ms;    /* a task in flight this long is long-running; default 5 min */
    int64_t alert_memory_pct;    /* Redis memory at this % of maxmemory: bad; default 90 */
    int64_t alert_window_ms;     /* the verdict's outcome window (whole minutes); default 5 min */
    int64_t alert_fail_pct;      /* failed share of the window's outcomes: bad; default 50 */
    int64_t alert_fail_per_min;  /* failures a minute over the window: bad; default 60 */
    int64_t time_limit_ms;       /* time limit of tasks enqueued without one (their envelopes get
                                    it at enqueue); default none (-1 here sets none) */
    int64_t done_retention;      /* finished tasks kept, exactly; default (0 in Redis) none;
                                    set -1 for that */
    int64_t done_retention_ms;   /* finished tasks kept no longer than this after they finish
                                    (either limit turns retention on; both: the tighter);
                                    default (0 in Redis) no age limit; set -1 for that */
    /* Queue limits, enforced by the claim script for all workers together (PROTOCOL.md
       8.4); each 0 in Redis is "off" / "default": set -1 for that. */
    int64_t rate_limit;        /* tasks started a minute (dq_rate_parse); default off */
    int64_t rate_burst;        /* tokens the rate's bucket holds; default one second's worth */
    int64_t concurrency_limit; /* tasks in flight at once; default off */
    int64_t key_concurrency;   /* tasks of one key (dq_enqueue_opts.key) in flight at once;
                                  default (0 in Redis) no limit; set -1 for that */
    int64_t history_minutes;   /* minutes each per-minute rollup is kept after its minute
                                  (PROTOCOL.md 13), 0..10080; default 1440; 0 in Redis is
                                  off (no history written): set -1 for that */
    int64_t partitions;        /* partitioned queue (PROTOCOL.md 14): tasks
                                  are spread over this many partitions, 1..DQ_PARTITIONS_MAX;
                                  default 1 (today's layout, no partition keys) */
} dq_config;

/** Reads the queue's effective configuration (defaults filled in). */
int dq_config_get(dq_client *c, const char *queue, dq_config *out, dq_err *err);

/** Sets the non-zero fields of @cfg (validated in the script; DQ_EINVAL names the
 * field and its range). Recorded in the audit log. */
int dq_config_set(dq_client *c, const char *queue, const dq_config *cfg, dq_err *err);

/* ---- producing ------------------------------------------------------------------- */

typedef struct dq_enqueue_opts {
    int64_t delay_ms;      /* run this long after now (server time); ignored if at_ms > 0 */
    int64_t at_ms;         /* run at this absolute time; 0: use delay_ms */
    const char *id;        /* caller-chosen id (1..DQ_ID_MAX bytes, no control bytes); NULL:
                              generated */
    int64_t max_attempts;  /* 0: the queue's default; -1: unlimited */
    int64_t deadline_ms;   /* if > 0, the task expires when not started by due + deadline_ms */
    int64_t time_limit_ms; /* if > 0 (1..DQ_TIME_LIMIT_MAX): a run still going this long is
                              stopped and retried ("timed out after ..."); PROTOCOL.md 10.4 */
    int64_t unique_for_ms; /* if > 0 (1..DQ_UNIQUE_FOR_MAX; needs id): once the task is done,
                              its id is refused for this long (PROTOCOL.md 4.1 "uf") */
    bool replace;          /* needs id: a scheduled task with this id gets this payload and
                              due time instead (debounce); one in flight or failed is left
                              as it is and reported as a duplicate there */
    const char *key;       /* the task's key (a tenant, a customer; 1..DQ_KEY_MAX bytes, no
                              control bytes), NULL: none; the queue's key_concurrency limits
                              the tasks of one key in flight (PROTOCOL.md 4.10) */
} dq_enqueue_opts;

typedef struct dq_enqueued {
    char id[DQ_ID_MAX + 1]; /* the task id */
    bool duplicate;         /* a task with this id already exists; nothing was added */
    dq_state where;         /* for a duplicate: where the existing task is */
    int64_t due_ms;         /* the due time (of the existing task for a duplicate, if scheduled) */
    bool replaced;          /* opts.replace: the scheduled task got the new payload and due */
    int64_t unique_left_ms; /* > 0: a duplicate of a task done within its unique-for window,
                               which ends this many ms from now; where is DQ_STATE_NONE */
} dq_enqueued;

/**
 * Schedules one task. @payload is stored as given (any bytes). The limits come from
 * the queue's configuration: a payload over max_payload or a delay over max_delay is
 * DQ_EINVAL with a message naming the field, the value and the limit, and nothing is
 * added. An id that already exists (scheduled, in flight or failed) is not added
 * again: @out->duplicate says so.
 */
int dq_enqueue(dq_client *c, const char *queue, const dq_enqueue_opts *opts, const void *payload,
               size_t payload_len, dq_enqueued *out, dq_err *err);

/* One task of a batch: the same fields dq_enqueue() takes. Pointers are borrowed. */
typedef struct dq_enqueue_item {
    dq_enqueue_opts opts;
    const void *payload;
    size_t payload_len;
} dq_enqueue_item;

/* Tasks per script call of dq_enqueue_batch(): its unit of atomicity. */
#define DQ_ENQUEUE_CHUNK DQ_CALL_MAX

/**
 * Schedules @n tasks (n >= 1) with the same rules as dq_enqueue(), in script calls of
 * DQ_ENQUEUE_CHUNK tasks (items[0..999], items[1000..1999], ...), one after another on
 * @c. @out has n entries; out[i] is item i's result (duplicates inside one batch: the
 * first is added, the later ones report duplicate).
 *
 * Atomicity: each chunk is all or nothing; the batch as a whole is not. What the library
 * checks by itself (id length, negative delay or deadline) is checked for every item
 * before anything is sent, so such an error adds nothing. A limit the queue's
 * configuration sets (max_payload, max_delay_ms) rejects the chunk holding the item:
 * the chunks before it are added, it and the chunks after it are not sent. Either way
 * DQ_EINVAL names the item and the field ("items[1234]: payload: ..."), and out[i].id
 * is "" for every item whose chunk did not run (out[i] is filled, added or duplicate,
 * for the others). On DQ_ETIMEOUT or
 * DQ_ECONN the outcome of the chunk in flight is unknown (see the top of this file).
 */
int dq_enqueue_batch(dq_client *c, const char *queue, const dq_enqueue_item *items, size_t n,
                     dq_enqueued *out, dq_err *err);

/* ---- consuming ------------------------------------------------------------------- */

typedef struct dq_claimed {
    dq_task *tasks; /* owned array of n tasks; see dq_claimed_free() */
    size_t n;
    int64_t now_ms;          /* server time of the claim */
    int64_t next_due_ms;     /* earliest due time still scheduled; -1 if the set is empty */
    size_t to_failed;        /* due members moved to failed instead (undecodable, expired) */
    int now_us;              /* dq_claim_settle: microseconds of the claim's TIME past now_ms */
    bool paused;             /* the queue is paused (dq_pause): nothing was claimed */
    int64_t paused_until_ms; /* when paused: the pause's end, server ms; 0: until resumed */
    bool keep_done;          /* the queue keeps done tasks (done_retention or _ms > 0) */
} dq_claimed;

/**
 * Moves up to @batch (1..DQ_CALL_MAX) due tasks to in-flight with a lease of @lease_ms
 * (1 ms..1 day), held by @worker (NULL: the client's name). Due members that cannot be
 * decoded, or whose deadline passed, go to failed instead and are counted in
 * to_failed. Tasks due in the same millisecond come out in enqueue order.
 */
int dq_claim(dq_client *c, const char *queue, unsigned batch, int64_t lease_ms, const char *worker,
             dq_claimed *out, dq_err *err);

/** Frees every task in @out and empties it. Accepts NULL. */
void dq_claimed_free(dq_claimed *out);

/**
 * Completes a task claimed as @t: it leaves in-flight for good. The attempt and
 * claimed_ms fields of @t are the lease's fencing token: a worker whose lease expired
 * and whose task was claimed again (or requeued, or handed back) gets DQ_ELEASE and
 * changes nothing. Its keep_done (from the claim) asks the queue to keep a done record
 * (done retention, PROTOCOL.md 4.7); a task claimed with it false is not kept.
 */
int dq_ack(dq_client *c, const char *queue, const dq_task *t, dq_err *err);

/**
 * Acks @n claimed tasks (1..DQ_CALL_MAX) in one call, as dq_ack() would one by one: each task's
 * lease is checked on its own. On DQ_OK, @rcs[i] is DQ_OK or the task's own DQ_ELEASE /
 * DQ_EPROTO, with its message in @errs[i] when @errs is not NULL. Any other return (the
 * call did not get through) means nothing is known to be acked.
 */
int dq_ack_many(dq_client *c, const char *queue, const dq_task *const *tasks, size_t n, int *rcs,
                dq_err *errs, dq_err *err);

typedef struct dq_retried {
    bool exhausted; /* max attempts reached: the task went to failed */
    int64_t due_ms; /* when it runs again (-1 if exhausted) */
} dq_retried;

/**
 * Transient failure: the task goes back to scheduled with attempt + 1, due after the
 * queue's backoff (base * 2^attempt, capped), keeping @message (truncated to 512 bytes)
 * as its last error. Past max attempts it goes to failed ("attempts exhausted").
 */
int dq_retry(dq_client *c, const char *queue, const dq_task *t, const char *message,
             dq_retried *out, dq_err *err);

/**
 * Permanent failure: the task goes to failed with @message (≤ 4 KiB kept), @trace
 * (≤ 64 KiB kept; may be NULL) and reason "error". Failed-set retention then trims the
 * oldest failures beyond the configured number, counting them.
 */
int dq_fail(dq_client *c, const char *queue, const dq_task *t, const char *message,
            const char *trace, dq_err *err);

typedef struct dq_reaped {
    size_t returned;       /* expired leases moved back to scheduled */
    size_t exhausted;      /* expired leases that ran out of attempts and went to failed */
    int64_t next_lease_ms; /* earliest lease still running; -1 if none */
} dq_reaped;

/** Returns up to @limit (1..DQ_CALL_MAX) in-flight tasks whose lease passed to scheduled,
 * due now, with attempt + 1. */
int dq_reap(dq_client *c, const char *queue, unsigned limit, dq_reaped *out, dq_err *err);

/**
 * Renews the leases of @n (1..DQ_CALL_MAX) tasks this caller claimed to now + @lease_ms, in one
 * call. lost (may be NULL; n entries) is set true for a task whose lease was lost
 * (reaped, or claimed again by another worker): its result must not be written.
 */
int dq_extend(dq_client *c, const char *queue, const dq_task *const *tasks, size_t n,
              int64_t lease_ms, bool *lost, dq_err *err);

/** Hands a claimed task back unrun (a worker shutting down): due now, attempt unchanged. */
int dq_release(dq_client *c, const char *queue, const dq_task *t, dq_err *err);

/* ---- worker ---------------------------------------------------------------------- */

typedef enum dq_outcome {
    DQ_DONE = 0, /* the task is finished */
    DQ_RETRY,    /* transient failure: run again after the queue's backoff */
    DQ_FAILED,   /* permanent failure: park it in the failed set */
    DQ_RELEASE,  /* not run (shutting down, say): hand it back, due now, not an attempt */
} dq_outcome;

/* What a handler reports. The worker zeroes it before each call. */
typedef struct dq_result {
    dq_outcome outcome;
    char message[1024]; /* retry / failed: what went wrong (one line is best) */
    char *trace;        /* failed: stack trace text, malloc()ed by the handler; the worker
                           frees it. NULL: none. See dq_trace_capture(). */
    size_t trace_len;   /* its bytes, when it may hold NULs (a program's stderr); 0: strlen */
} dq_result;

/* One result settled inside a claim (dq_claim_settle). */
typedef struct dq_settle {
    const dq_task *task; /* borrowed: a task claimed by this caller */
    dq_outcome outcome;  /* DQ_DONE (ack), DQ_RETRY, DQ_FAILED or DQ_RELEASE */
    const char *message; /* retry, failed: what went wrong; NULL: "" */
    const char *trace;   /* failed: stack trace text; NULL: "" */
    size_t trace_len;    /* its bytes (it may hold NULs); 0: strlen(trace) */
    /* set by dq_claim_settle when it returns DQ_OK */
    int rc;               /* DQ_OK, or DQ_ELEASE / DQ_EPROTO for this task alone */
    dq_err err;           /* rc's message */
    int64_t retry_due_ms; /* retry: when it runs again; -1: attempts exhausted (failed) */
} dq_settle;

/**
 * In one script call: settles @n results (0..DQ_CALL_MAX) exactly as dq_ack(),
 * dq_retry(), dq_fail() and dq_release() would, each checked against its own lease,
 * then claims up to @batch (0..DQ_CALL_MAX; 0: settle only) tasks as dq_claim() does.
 * With @ahead_ms > 0 (at most 1000) it also claims tasks due up to @ahead_ms after the
 * claim's server time: such a task has due_ms > out->now_ms, and its handler must not
 * start before (due_ms - now_ms) ms - now_us us have passed on a monotonic clock read
 * after this call returned (then it never starts before its due time by the server's clock:
 * docs/PROTOCOL.md 10.2). @who names the failures in their records (NULL: @worker).
 * On DQ_OK every result's rc is set; a lost lease is that result's DQ_ELEASE, not the
 * call's. On any other return nothing is known of the results (a timeout may still
 * have applied them; they are safe to send again, the fence refuses what is done).
 */
int dq_claim_settle(dq_client *c, const char *queue, dq_settle *results, size_t n, unsigned batch,
                    int64_t lease_ms, int64_t ahead_ms, const char *worker, const char *who,
                    dq_claimed *out, dq_err *err);

/*
 * Runs one task. Called on one of the worker's handler threads; @task is borrowed for
 * the call. Handlers of one worker run concurrently (opts.concurrency).
 */
typedef void (*dq_handler_fn)(const dq_task *task, dq_result *result, void *arg);

/*
 * For a handler, about the run of the @task it was given (only that pointer, and only
 * during the call). A run has a time limit: the smaller of the task's time_limit_ms and
 * the worker's timeout_ms. Once it has passed, the worker stops renewing the lease (a
 * reap retries the task, PROTOCOL.md 10.4) and asks the handler to stop; so it does
 * when a stop's grace ends. A handler that can stop early should poll.
 */
/** True once the worker asks the handler to stop: return soon (the result is kept). */
bool dq_task_cancelled(const dq_task *task);
/** Milliseconds left of the run's time limit (0 when passed), or -1 when it has none. */
int64_t dq_task_time_left_ms(const dq_task *task);

enum { DQ_LOG_ERROR = 0, DQ_LOG_WARN = 1, DQ_LOG_INFO = 2, DQ_LOG_DEBUG = 3 };

/* Receives one logfmt line (no newline) per event at or below the configured level. */
typedef void (*dq_log_fn)(int level, const char *line, void *arg);

typedef struct dq_worker_opts {
    unsigned concurrency; /* handlers running at once (1..DQ_CALL_MAX); 0: 1 */
    unsigned batch;       /* tasks per claim (1..DQ_CALL_MAX); 0: concurrency */
    int64_t lease_ms;     /* lease per claim, renewed while a handler runs; 0: 30 s */
    int64_t timeout_ms;   /* a handler running longer stops having its lease renewed: once
                             the lease runs out, reap returns the task (an attempt), and a
                             result the handler gives after that is refused; the handler
                             keeps its slot until it returns. 0: no timeout */
    int64_t grace_ms;     /* on stop, how long running handlers may finish; 0: 30 s */
    int64_t max_idle_ms;  /* longest sleep between claims with nothing due; 0: 60 s */
    const char *name;     /* worker name in leases and logs; NULL: user@host:pid */
    dq_log_fn log;        /* NULL: no logging */
    void *log_arg;
    int log_level;          /* DQ_LOG_*; events above it are not formatted */
    const char *command;    /* what the worker runs, shown in the worker registry (delayq
                               work sets its command line); NULL: none. Borrowed until
                               dq_worker_new returns (copied, cut at DQ_WORKER_COMMAND_MAX) */
    int64_t beat_ms;        /* heartbeat interval (10 ms..1 h); 0: 30 s. See dq_workers_get() */
    int64_t claim_ahead_ms; /* claim tasks due this soon and start each at its due time,
                               never before it by the server's clock (docs/PROTOCOL.md
                               10.2); 0: 5 ms; -1: off; at most 1000. Tasks waiting for
                               their start hold no slot: up to max(concurrency, 4) more
                               are held than the concurrency */
    unsigned lanes;         /* coordinators, each with its own connection, sharing the
                               concurrency and batch (1..8; 0: 1): while one waits for its
                               claim reply the other's tasks run. Each lane registers as a
                               worker of its own, named "<name>/<lane>" from the second on */
} dq_worker_opts;

typedef struct dq_worker dq_worker; /* opaque */

/**
 * Creates a worker for @queue on @url (as dq_client_open takes it; NULL is
 * redis://127.0.0.1:6379). It connects when run. On DQ_OK *out holds a worker to release
 * with dq_worker_free().
 */
int dq_worker_new(const char *url, const dq_client_opts *copts, const char *queue,
                  const dq_worker_opts *opts, dq_handler_fn handler, void *arg, dq_worker **out,
                  dq_err *err);

/**
 * Runs the worker until dq_worker_stop(): claims due tasks (the first claim at once),
 * runs them on handler threads, writes each result (ack, retry or fail), renews leases
 * while handlers run, returns expired leases of any worker (reap), and sleeps until the
 * next due time when nothing is due, woken early when an earlier task is scheduled.
 * While Redis is unreachable it keeps finished results and writes them after it
 * reconnects (capped backoff with jitter), as long as the lease still holds. Returns
 * DQ_OK after a clean stop.
 */
int dq_worker_run(dq_worker *w, dq_err *err);

/**
 * Asks a running worker to stop: no more claims; running handlers get the grace period,
 * then unfinished tasks are handed back (not counted as an attempt). @now skips the
 * grace period. Async-signal-safe: may be called from a signal handler.
 */
void dq_worker_stop(dq_worker *w, bool now);

/** Frees a worker that is not running. Accepts NULL. */
void dq_worker_free(dq_worker *w);

/**
 * Writes the calling thread's stack (function names where the binary exports them,
 * else addresses) to a new malloc()ed string, for dq_result.trace. NULL on OOM.
 */
char *dq_trace_capture(void);

/* ---- operating ------------------------------------------------------------------- */

/**
 * Moves the failed tasks @ids (1..DQ_CALL_MAX of them) back to scheduled, due after @delay_ms,
 * with attempt reset to 0 and the deadline cleared. All or nothing: if any id is not in
 * the failed set (someone else requeued or dropped it), nothing moves and DQ_ENOTFOUND
 * names it. Recorded in the audit log. *moved receives the count.
 */
int dq_requeue(dq_client *c, const char *queue, const char *const *ids, size_t n, int64_t delay_ms,
               size_t *moved, dq_err *err);

/* fix and requeue */
/**
 * Fix and requeue: replaces the payload of failed task @t (as read with dq_find() or a
 * page: its envelope bytes and failure time name the failure) with @len bytes at
 * @payload, and moves it back to scheduled due after @delay_ms, as dq_requeue() does
 * (attempt 0, deadline cleared, history kept), in one script call. DQ_ENOTFOUND ("changed
 * since you opened it") when the task failed again or left the failed set since @t was
 * read, DQ_EINVAL for an undecodable failure or a payload over the queue's max_payload;
 * nothing changes then. Recorded in the audit log with the sha1 of the old and the new
 * payload.
 */
int dq_requeue_replace(dq_client *c, const char *queue, const dq_task *t, const void *payload,
                       size_t len, int64_t delay_ms, dq_err *err);

/**
 * Makes scheduled task @t (as read from a page or dq_find) due now, keeping its attempts
 * ("run now" in the inspector). DQ_ENOTFOUND when it is no longer scheduled (claimed,
 * dropped). Recorded in the audit log.
 */
int dq_run_now(dq_client *c, const char *queue, const dq_task *t, dq_err *err);

/**
 * Cursor for bulk operations over the failed set. Zero it before the first call and
 * pass it back until done is true. Only tasks that failed at or before the server time
 * of the first call are touched, so a bulk requeue ends even while tasks keep failing; a step
 * resumes after the last task the previous one looked at, so none is skipped when others change the
 * set in between.
 */
typedef struct dq_bulk {
    int64_t until_ms; /* set by the first call: failures up to this time are in scope */
    size_t total;     /* set by the first call: how many were in scope */
    size_t done_n;    /* tasks moved so far */
    size_t skipped;   /* undecodable failures a requeue left in place */
    bool done;
    char cursor_key[DQ_TASK_KEY_MAX + 1]; /* where the next step resumes (internal) */
    int64_t cursor_ms;
    /* A partitioned queue's walk (internal; PROTOCOL.md 14, "Error groups and bulk
     * actions"): partitions 1.. in order, then 0; until_ms and total above are then the
     * walk's (total: of the partitions started so far), these the current partition's. */
    size_t part_at;     /* how many partitions are finished */
    size_t part_q;      /* the partition walked now (kept across a resize) */
    int64_t part_until; /* 0: the partition's first step is next */
    size_t part_total, part_done, part_skipped;
    uint64_t part_has[4]; /* with a group: the partitions that hold it (bit i: partition i) */
    char part_group[17];  /* with a group: its id (DQ_GROUP_ID_MAX + 1 bytes) */
} dq_bulk;

/**
 * One bounded step (at most DQ_STEP_MAX tasks) of "requeue all failed": due after @delay_ms,
 * spread evenly over @spread_ms (0: all at once). Call until @cur->done.
 */
int dq_requeue_all_step(dq_client *c, const char *queue, int64_t delay_ms, int64_t spread_ms,
                        dq_bulk *cur, dq_err *err);

/**
 * Drops tasks by id, from the failed set or the scheduled set (an in-flight task cannot
 * be dropped: it is running). All or nothing, like dq_requeue(). Recorded in the audit
 * log.
 */
int dq_drop(dq_client *c, const char *queue, const char *const *ids, size_t n, size_t *dropped,
            dq_err *err);

/** One bounded step (at most DQ_STEP_MAX tasks) of "drop all failed". Call until @cur->done. */
int dq_drop_all_step(dq_client *c, const char *queue, dq_bulk *cur, dq_err *err);

/* ---- inspecting ------------------------------------------------------------------ */

typedef struct dq_stats {
    int64_t now_ms;
    int64_t due, future, far_future, inflight, failed, expired_leases;
    int64_t next_due_ms;       /* earliest due time after now; -1 if nothing is in the future */
    int64_t oldest_due_age_ms; /* now - earliest due time when something is due; 0 otherwise */
    int64_t far_future_ms;     /* the queue's far-future horizon */
    /* cumulative counters kept by the scripts */
    int64_t enqueued, done, retried, failed_total, expired, trimmed, reaped, requeued, dropped;
    /* the pause (dq_pause); the other fields are -1 / "" when not paused */
    bool paused;
    int64_t paused_since_ms;
    int64_t paused_until_ms; /* 0: until resumed */
    char paused_by[DQ_ID_MAX + 1];
    char pause_reason[DQ_PAUSE_REASON_MAX + 1];
    /* outcomes over the verdict's window (alert_window_ms; window_ms -1: not known, an
     * older server's scripts), counted by the scripts per minute of server time */
    int64_t window_ms, window_elapsed_ms; /* the window, and the part of it that has passed */
    int64_t window_done, window_failed, window_retried;
    /* the largest error group, given only while the window's failures cross a threshold:
     * its signature ("" otherwise) and its count in the failed set */
    char top_group[DQ_SIGNATURE_MAX + 1];
    int64_t top_group_count;
    /* keyed tasks parked because their key is at key_concurrency (PROTOCOL.md 4.10): not in
     * due or future; 0 from scripts older than per-key limits */
    int64_t parked;
    /* the queue limits (PROTOCOL.md 8.4; all 0 / -1 / "" from older scripts) */
    int64_t limited_rate, limited_concurrency;     /* claims a limit held a due task back in */
    int64_t rate_per_min, rate_burst, concurrency; /* the limits in force (tighter of the
                                                      config and throttle); 0: off */
    int64_t rate_held_ms;  /* server ms the rate limit last held a task back; -1: never */
    bool concurrency_held; /* a claim waits for a slot to free */
    bool throttled;        /* a live throttle (dq_throttle) is in force */
    int64_t throttle_rate_per_min, throttle_concurrency; /* its limits; 0: none */
    int64_t throttle_since_ms, throttle_until_ms;        /* until 0: until lifted */
    char throttle_by[DQ_ID_MAX + 1];
    char throttle_reason[DQ_PAUSE_REASON_MAX + 1];
    /* run times (claim to settle) of every done, retried and failed run since the queue
     * was created, per bucket of dq_run_bounds_ms, and their sum; cumulative (all 0 from
     * scripts older than the per-minute rollups) */
    int64_t run[DQ_RUN_BUCKETS];
    int64_t run_sum_ms;
    /* fields of the queue's partition map (PROTOCOL.md 14.2): 0 not partitioned; -1 from
     * scripts older than partitions. dq_stats_get's sum of a partitioned queue: partition
     * 0's */
    int64_t parts_map;
} dq_stats;

/** Reads the queue's counts and counters in one bounded call (O(log n)). A partitioned
 * queue: one call per partition (pipelined on one node), summed (PROTOCOL.md 14.5 says
 * which fields are sums and which the earliest or latest). */
int dq_stats_get(dq_client *c, const char *queue, dq_stats *out, dq_err *err);

/** dq_stats_get, also keeping each partition's own stats: partition i's into @each[i] for
 * i below @size (@each may be NULL when @size is 0), and the number of partitions into
 * *@n (1 for a queue that is not partitioned; @each[0] is then *@out). The same calls as
 * dq_stats_get, for views that show the partitions side by side (the inspector's P). */
int dq_stats_get_each(dq_client *c, const char *queue, dq_stats *out, dq_stats *each, size_t size,
                      size_t *n, dq_err *err);

/**
 * The partitions of @queue (dq_config.partitions; PROTOCOL.md 14):
 * *@routed take new tasks, *@all exist (the rest drain). 1 and 1 for a queue that is not
 * partitioned. From the client's cache of the map, read again at most once a second.
 */
int dq_partitions_get(dq_client *c, const char *queue, size_t *routed, size_t *all, dq_err *err);

/** The internal name of partition @i of @queue (0: @queue itself), for dq_client_node and
 * for display; snprintf semantics into @buf. DQ_EINVAL when @i is not below its all. */
int dq_partition_name(dq_client *c, const char *queue, size_t i, char *buf, size_t size,
                      dq_err *err);

/*
 * History: per-minute rollups (PROTOCOL.md 13, the reader 5.33). The scripts
 * that change state add their counts to one hash per minute of server time, kept for the
 * queue's history_minutes (config; 0: off), so the hour before anyone looked is there.
 */

/* How far back dq_history_get reads: 7 days (history_minutes' own limit). */
#define DQ_HISTORY_SPAN_MAX 604800000LL

/* One step of the history. Counters and the run-time histogram are sums over the step's
 * minutes; backlog and oldest_due_ms are the step's last sample (taken once a minute, by
 * the first call that writes the minute's hash). Negative counts in Redis (a foreign
 * write) read as 0; sums that would overflow stop at INT64_MAX. */
typedef struct dq_history_row {
    int64_t at_ms; /* start of the step, server time */
    int64_t enqueued, started, done, retried, failed, expired, requeued, dropped, lost;
    int64_t run[DQ_RUN_BUCKETS]; /* run times (claim to settle) per bucket */
    int64_t run_sum_ms;
    int64_t backlog;       /* due tasks at the step's last sample; -1: no sample */
    int64_t oldest_due_ms; /* age of the oldest due task then; -1: no sample */
} dq_history_row;

typedef struct dq_history {
    dq_history_row *rows; /* owned; oldest first; see dq_history_free() */
    size_t n;
    int64_t now_ms, step_ms;
    int64_t history_minutes; /* the queue's retention (0: off) */
} dq_history;

/**
 * Per-minute rollups of the last @span_ms (rounded up to whole minutes, at most
 * DQ_HISTORY_SPAN_MAX), ending with the current minute, @step_ms per row (a multiple of
 * 60000, at most DQ_HISTORY_SPAN_MAX). Steps are aligned to multiples of @step_ms since
 * the epoch, so the first row may cover less than a step; every step of the span has its
 * row, with zeros (and backlog -1) where nothing was recorded. Read-only (the viewer role
 * may call it): one call per 240 minutes (a few ms of Redis time each), each one HMGET
 * per minute read.
 */
int dq_history_get(dq_client *c, const char *queue, int64_t span_ms, int64_t step_ms,
                   dq_history *out, dq_err *err);

/** Frees @h's rows and empties it. Accepts NULL. */
void dq_history_free(dq_history *h);

/**
 * Estimated @q-quantile (0..1) of run times in ms from a histogram of dq_run_bounds_ms:
 * linear interpolation inside the bucket that holds it, so the error is at most that
 * bucket's width; in the open last bucket the answer is its lower bound (10000: "10 s or
 * more"). -1 when @run counts no runs (or @q is out of range).
 */
int64_t dq_run_quantile(const int64_t run[DQ_RUN_BUCKETS], double q);

/** Whether dq_run_quantile(@run, @q) falls in the open last bucket (its answer then means
 * "at least that"). */
bool dq_run_quantile_open(const int64_t run[DQ_RUN_BUCKETS], double q);

/** Adds @r's counters, run-time buckets and run-time sum to @sum's (a negative value counts
 * 0, a sum stops at INT64_MAX); the backlog sample is left alone. */
void dq_history_row_add(dq_history_row *sum, const dq_history_row *r);

typedef enum dq_view {
    DQ_VIEW_DUE = 0,
    DQ_VIEW_FUTURE,
    DQ_VIEW_INFLIGHT,
    DQ_VIEW_FAILED,
    DQ_VIEW_DONE,   /* finished tasks kept by done_retention, newest first */
    DQ_VIEW_PARKED, /* due keyed tasks held back by key_concurrency, key by key
                       (PROTOCOL.md 4.10, 5.13); not in due */
} dq_view;

typedef struct dq_page {
    dq_task *tasks; /* owned array; see dq_page_free() */
    size_t n;
    int64_t total; /* items in the whole view */
    int64_t now_ms;
} dq_page;

/**
 * One page of a view: due and future in due order, in-flight by lease deadline, failed
 * newest first. @limit is 1..DQ_CALL_MAX. Members that cannot be decoded are returned with
 * undecodable set and their raw bytes, never dropped from the listing. On a partitioned
 * queue the page of the logical queue, merged as dq_page_next() merges; an @offset past 0
 * there walks from the top in pages of DQ_CALL_MAX (ceil(@offset / 1000) more rounds of
 * one call per partition): page deep with dq_page_next().
 */
int dq_page_get(dq_client *c, const char *queue, dq_view view, size_t offset, size_t limit,
                dq_page *out, dq_err *err);

/** Frees every task in @p and empties it. Accepts NULL. */
void dq_page_free(dq_page *p);

/* Where a listing of a view stands in each partition of a queue (PROTOCOL.md 14.7):
 * at[i] is the rank in partition i's view where the next page starts. Zero it to start
 * at the top; dq_page_next() sizes it. Free it with dq_page_cursor_free(). */
typedef struct dq_page_cursor {
    int64_t *at; /* owned; n entries */
    size_t n;
} dq_page_cursor;

/**
 * The next page (@limit 1..DQ_CALL_MAX tasks) of @view from @cur, which then stands after
 * it. A queue that is not partitioned: the one call dq_page_get(@cur->at[0]) makes. A
 * partitioned queue: one page call per partition (pipelined on one node; on a cluster one
 * per partition's master), each of @limit from its own position, merged in the view's
 * order (due and future by due time, in flight by lease deadline, failed and done newest
 * first, parked partition by partition), ties in partition order; total is the sum of the
 * partitions'. A cursor holding more positions than the queue has partitions is
 * DQ_EINVAL; one holding fewer (the queue grew) starts the others at 0.
 */
int dq_page_next(dq_client *c, const char *queue, dq_view view, size_t limit, dq_page_cursor *cur,
                 dq_page *out, dq_err *err);

/** Frees @cur's positions and zeroes it. Accepts NULL. */
void dq_page_cursor_free(dq_page_cursor *cur);

/* Cursor of a search of a view. Zero it to start. */
typedef struct dq_search {
    int64_t cursor;  /* where the next step starts (a rank within the view) */
    int64_t total;   /* tasks in the view when the last step ran */
    int64_t scanned; /* failures looked at so far */
    bool done;
} dq_search;

/**
 * One bounded step (DQ_STEP_MAX tasks looked at, at most @most matches) of a search of @view for
 * @needle (1..DQ_NEEDLE_MAX bytes, plain, smart case: a needle without an ASCII capital letter
 * matches letters in either case, one with a capital exactly): in ids and payload bytes, and for
 * failed tasks also in errors and stack traces (in-flight: also the worker). Failed is searched
 * newest first, the others in their listing order. Matches are appended to @found (a page
 * the caller owns and frees with dq_page_free; its total counts the matches). Call until
 * @cur->done.
 */
int dq_search_step(dq_client *c, const char *queue, dq_view view, const char *needle, size_t most,
                   dq_search *cur, dq_page *found, dq_err *err);

/**
 * Finds one task by id wherever it is (in flight, failed or scheduled). Generated ids
 * of scheduled tasks have no index (it would cost memory on every task), so for them
 * this walks the scheduled set in bounded steps of DQ_STEP_MAX members; each step is one
 * short script call. DQ_ENOTFOUND when it is nowhere.
 */
int dq_find(dq_client *c, const char *queue, const char *id, dq_task *out, dq_err *err);

typedef struct dq_audit_entry {
    int64_t at_ms;
    char *who, *action, *detail, *result;               /* owned */
    size_t who_len, action_len, detail_len, result_len; /* their bytes, as in dq_task */
} dq_audit_entry;

typedef struct dq_audit {
    dq_audit_entry *entries; /* owned; newest first */
    size_t n;
} dq_audit;

/** Reads the newest @limit (1..DQ_CALL_MAX) entries of the queue's operator-action log. */
int dq_audit_get(dq_client *c, const char *queue, size_t limit, dq_audit *out, dq_err *err);

/** Frees @a's entries and empties it. Accepts NULL. */
void dq_audit_free(dq_audit *a);

/* ---- workers and pause ------------------------------------------------------------ */

/*
 * The worker registry. Every dq_worker registers when it starts, sends a heartbeat every
 * beat_ms (default 30 s) and removes its entry when it stops cleanly; an entry whose
 * beats stop (a killed worker) is shown as lost after the queue's worker_lost_ms
 * (default three beat intervals) and removed after worker_prune_ms (default 1 h). Other
 * consumers can take part with dq_heartbeat(). See docs/PROTOCOL.md 5.20-5.22.
 */

/* A worker's record, as dq_heartbeat() sends it. Strings are borrowed for the call;
 * NULL is "". */
typedef struct dq_beat {
    const char *host, *version, *command; /* command: cut at DQ_WORKER_COMMAND_MAX bytes */
    int64_t pid;
    int64_t started_ms;  /* server ms; 0: now (the first beat); keep the reply's started_ms */
    int64_t interval_ms; /* how often it beats: 1 ms..1 day */
    unsigned concurrency, busy;
    int64_t done, retried, failed; /* tasks since it started */
    bool draining;                 /* stopping: claims nothing more */
    unsigned hung; /* handlers still running DQ_HUNG_AFTER_MS past their time limit */
} dq_beat;

/* A handler still running this long after its run's time limit (its cancel flag set) is
 * counted as hung in its worker's record (dq_worker_info.hung) and by the verdict. */
#define DQ_HUNG_AFTER_MS 5000

typedef enum dq_beat_mode {
    DQ_BEAT = 0,   /* only the beat */
    DQ_BEAT_CHECK, /* the beat, plus the next due time, earliest lease and pause; prunes */
    DQ_BEAT_GONE,  /* removes the entry (a clean exit) */
    DQ_BEAT_LOOK,  /* DQ_BEAT_CHECK without the prune (two fewer commands) */
} dq_beat_mode;

typedef struct dq_beat_reply {
    int64_t now_ms;
    bool registered;         /* false: the entry was missing (pruned) and no record was sent */
    int64_t started_ms;      /* the record's start time; -1 when no record was sent */
    int64_t next_due_ms;     /* DQ_BEAT_CHECK: earliest due time (-1: none); else -2 */
    int64_t next_lease_ms;   /* DQ_BEAT_CHECK: earliest lease deadline (-1: none); else -2 */
    int64_t paused_until_ms; /* DQ_BEAT_CHECK: -1 not paused, 0 until resumed, else the end;
                                else -2 */
    size_t pruned;           /* entries removed for silence (DQ_BEAT_CHECK) */
    size_t schedules_low;    /* DQ_BEAT_CHECK, and a beat with @rec: 1 when a cron
                                schedule's list of firings wants a top-up
                                (dq_schedule_refill); else 0 */
} dq_beat_reply;

/**
 * One heartbeat of worker @name (1..DQ_ID_MAX bytes) in @queue's registry: with @rec,
 * writes its record; with @rec NULL, only moves its last-beat time (an idle worker whose
 * fields did not change), and out->registered says whether the entry still existed.
 * The dq_worker calls this itself; it is here for consumers with their own loop.
 */
int dq_heartbeat(dq_client *c, const char *queue, const char *name, dq_beat_mode mode,
                 const dq_beat *rec, dq_beat_reply *out, dq_err *err);

/* A task a worker holds, from the in-flight set. */
typedef struct dq_worker_task {
    char id[DQ_ID_MAX + 1];
    int64_t claimed_ms; /* when its lease began: "running for" is now - claimed */
} dq_worker_task;

/* One registered worker. Strings and tasks are owned by the dq_workers holding it. */
typedef struct dq_worker_info {
    char *name, *host, *version, *command; /* never NULL; "" when unknown */
    int64_t pid;
    int64_t started_ms, beat_interval_ms;
    int64_t last_beat_ms, beat_age_ms; /* by server time */
    bool lost;                         /* silent past the queue's worker_lost_ms */
    bool draining;
    int64_t concurrency, busy, done, retried, failed; /* as of its last beat */
    int64_t hung; /* handlers past their time limit by DQ_HUNG_AFTER_MS, as of its last beat */
    size_t held;  /* tasks it holds among the in-flight tasks looked at */
    dq_worker_task *tasks; /* the first ntasks of them (at most the tasks_per_worker asked) */
    size_t ntasks;
} dq_worker_info;

typedef struct dq_workers {
    int64_t now_ms;
    int64_t registered;      /* entries in the registry */
    int64_t live, lost;      /* among the DQ_STEP_MAX entries with the latest beats */
    int64_t inflight;        /* tasks in flight in the queue */
    int64_t inflight_looked; /* of those, looked at for their holders (earliest leases) */
    int64_t lost_after_ms;   /* the queue's worker_lost_ms; 0: three beat intervals */
    dq_worker_info *workers; /* owned, by name; see dq_workers_free() */
    size_t n;
} dq_workers;

/**
 * Reads the worker registry in one bounded, read-only call: up to @most (1..DQ_CALL_MAX)
 * workers by name with their records, last beat age and lost flag, up to
 * @tasks_per_worker (0..100) of the tasks each holds (looking at the DQ_STEP_MAX
 * in-flight tasks with the earliest leases), and the live and lost counts. On a
 * partitioned queue the registry is partition 0's and the tasks looked at are those of
 * every partition, from one merged in-flight page (N page calls more; PROTOCOL.md 10.10).
 */
int dq_workers_get(dq_client *c, const char *queue, size_t most, size_t tasks_per_worker,
                   dq_workers *out, dq_err *err);

/**
 * As dq_workers_get() with no tasks, and without looking at the in-flight tasks: every
 * held and inflight_looked is 0. What a refresh or a metrics scrape needs (counts, last
 * beats, records): O(log W + most) however many tasks are in flight, where
 * dq_workers_get() also reads up to DQ_STEP_MAX leases and their running records.
 */
int dq_workers_summary(dq_client *c, const char *queue, size_t most, dq_workers *out, dq_err *err);

/** Frees everything in @w and empties it. Accepts NULL. */
void dq_workers_free(dq_workers *w);

/**
 * Pauses @queue: claims hand out nothing until dq_resume(), or for @for_ms (> 0) by
 * server time (0: until resumed). Enqueue, retries, reaping and operator actions go on;
 * running tasks finish. @reason (NULL: none) is 0..DQ_PAUSE_REASON_MAX bytes. Pausing a
 * paused queue replaces its pause. Recorded in the audit log with the client's who.
 */
int dq_pause(dq_client *c, const char *queue, int64_t for_ms, const char *reason, dq_err *err);

/**
 * Ends @queue's pause and wakes idle workers (a message on the wake channel), so due
 * tasks start at once. *was_paused (may be NULL) says whether it was paused. Recorded
 * in the audit log.
 */
int dq_resume(dq_client *c, const char *queue, bool *was_paused, dq_err *err);

/**
 * Throttles @queue live (PROTOCOL.md 8.4): at most @rate_per_min tasks started a minute
 * (0: no rate; dq_rate_parse reads "10/s") and/or @concurrency in flight (0: none), over
 * the configured limits (the tighter wins), for @for_ms by server time (0: until
 * lifted), with @reason (NULL: none; 0..DQ_PAUSE_REASON_MAX bytes). Replaces a throttle
 * in force. Recorded in the audit log with the client's who; wakes idle workers.
 */
int dq_throttle(dq_client *c, const char *queue, int64_t rate_per_min, int64_t concurrency,
                int64_t for_ms, const char *reason, dq_err *err);

/** Lifts @queue's throttle; *was (may be NULL) says whether one was in force. Audited. */
int dq_throttle_off(dq_client *c, const char *queue, bool *was, dq_err *err);

/* What dq_cancel() found. */
typedef struct dq_cancelled {
    char worker[DQ_ID_MAX + 1]; /* the worker that held it ("?" when its record was bad) */
    uint32_t attempt;           /* the attempt it was on, from 1 (0: not known) */
} dq_cancelled;

/**
 * Cancels the running task @id of @queue (operator action): it leaves flight at once,
 * to failed with reason "cancelled" and error "cancelled by <who>", or deleted with
 * @drop. The worker holding it is told on the wake-up channel and stops its handler
 * (dq_task_cancelled; `delayq work` kills the command's process group); the handler's
 * result is refused. DQ_ENOTFOUND when the task is not in flight (the message says where
 * it is: a scheduled task is cancelled with dq_drop). Recorded in the audit log.
 * @out may be NULL.
 */
int dq_cancel(dq_client *c, const char *queue, const char *id, bool drop, dq_cancelled *out,
              dq_err *err);

/**
 * Moves the scheduled task @id of @queue to @at_ms (server epoch ms; 0: use @delay_ms,
 * ms from now) without touching its envelope (payload, attempt and deadline stay).
 * Idle workers are woken when it becomes the earliest. DQ_ENOTFOUND when the task is
 * not scheduled (the message says where it is: in flight or failed); DQ_EINVAL past
 * max_delay_ms. Operator action, recorded in the audit log. *@due_ms (may be NULL) is the
 * new due time. A generated id is found by a scan first (as dq_find does).
 */
int dq_reschedule(dq_client *c, const char *queue, const char *id, int64_t at_ms, int64_t delay_ms,
                  int64_t *due_ms, dq_err *err);

/* ---- error groups and filtered bulk actions (PROTOCOL.md 4.6) ---------------------- */

/* Error groups a queue keeps; later signatures share the group "other". */
#define DQ_GROUPS_MAX 500
/* Bytes of a group id: 16 hex digits of the signature's SHA1, or "other"; +1 for a buffer. */
#define DQ_GROUP_ID_MAX 16
/* Failures one step of a filtered requeue or drop looks at, at most: a step also stops
 * once it has used 2 ms of Redis time (PROTOCOL.md 4.5), so it stays near that however
 * large the failed set is; bench W7 measures it. */
#define DQ_BULK_STEP 500

/* Which failed tasks a bulk action, a page or an export covers. */
typedef enum dq_filter_kind {
    DQ_FILTER_NONE = 0, /* every failed task */
    DQ_FILTER_GROUP,    /* one error group: value is its id or its signature */
    DQ_FILTER_MATCH,    /* value (1..DQ_NEEDLE_MAX bytes) occurs in the task key or its record */
    DQ_FILTER_KEY,      /* the failed task's envelope has task key value (dq_enqueue_opts.key,
                           1..DQ_KEY_MAX bytes; PROTOCOL.md 4.10) */
} dq_filter_kind;

typedef struct dq_filter {
    dq_filter_kind kind;
    const char *value; /* borrowed; NULL for DQ_FILTER_NONE */
} dq_filter;

/** Checks @f: DQ_EINVAL names the field and the limit. */
int dq_filter_check(const dq_filter *f, dq_err *err);

typedef struct dq_error_group {
    char id[DQ_GROUP_ID_MAX + 1];
    char *signature; /* owned; raw bytes from Redis (escape before a terminal) */
    int64_t count;
    int64_t first_ms, last_ms; /* first and last failure seen since the group appeared */
    char *sample_id;           /* owned: the user-facing id of its newest failure ("" if none) */
    char *sample_error;        /* owned: that failure's first error line, at most 200 bytes */
    size_t signature_len, sample_id_len, sample_error_len; /* their bytes, as in dq_task */
} dq_error_group;

typedef struct dq_errors {
    dq_error_group *groups; /* owned; largest first */
    size_t n;
    int64_t failed; /* tasks in the failed set */
    int64_t now_ms;
} dq_errors;

/** Reads the error groups of the failed set: O(groups), read-only (FCALL_RO). A partitioned
 * queue's: one call per partition, merged by signature (PROTOCOL.md 14.8). */
int dq_errors_get(dq_client *c, const char *queue, dq_errors *out, dq_err *err);

/** Frees @e's groups and empties it. Accepts NULL. */
void dq_errors_free(dq_errors *e);

/* One task key (dq_enqueue_opts.key) in dq_keys_get()'s answer. */
typedef struct dq_key_row {
    char key[DQ_KEY_MAX + 1]; /* raw bytes from Redis (escape before a terminal) */
    size_t key_len;
    int64_t due;           /* scheduled and due, among the oldest due tasks looked at */
    int64_t parked;        /* parked: due, held back by key_concurrency (exact) */
    int64_t inflight;      /* in flight, as claim counted them (exact) */
    int64_t failed;        /* failed, among the newest failures looked at */
    int64_t oldest_due_ms; /* the earliest due time of its scheduled or parked tasks; -1 */
} dq_key_row;

typedef struct dq_keys {
    dq_key_row *rows; /* owned; most tasks (due + parked + in flight + failed) first */
    size_t n;
    int64_t now_ms;
    int64_t due_seen, due_total;       /* due tasks looked at (at most 1000), and in all */
    int64_t failed_seen, failed_total; /* failures looked at (the newest 1000), and in all */
    int64_t parked_total;              /* parked tasks of every key */
} dq_keys;

/** The @limit (1..100) task keys with the most tasks (PROTOCOL.md 4.10, 5.31): parked and
 * in-flight counts exact, due and failed counted in bounded samples; read-only. */
int dq_keys_get(dq_client *c, const char *queue, unsigned limit, dq_keys *out, dq_err *err);

/** Frees @k's rows and empties it. Accepts NULL. */
void dq_keys_free(dq_keys *k);

/**
 * One bounded step (@step tasks, 1..DQ_STEP_MAX; 0 means DQ_BULK_STEP) of "drop the parked
 * tasks of task key @key" (held back by key_concurrency, PROTOCOL.md 4.10 and 5.12):
 * earliest first, with their ids entries; the key's parked count and the parked gauge
 * shrink by as many. Call until @cur->done; the last step writes one audit entry. On a
 * partitioned queue the steps walk every partition, and the one entry is partition 0's
 * (PROTOCOL.md 14.8).
 */
int dq_drop_parked_step(dq_client *c, const char *queue, const char *key, size_t step, dq_bulk *cur,
                        dq_err *err);

/**
 * One bounded step (@step failures looked at, 1..DQ_STEP_MAX; 0 means DQ_BULK_STEP) of
 * "requeue the failed tasks of filter @f", like dq_requeue_all_step(). Only tasks that
 * failed at or before the first call's server time are touched; one audit entry with the
 * filter is written by the last step. A group that does not exist is DQ_ENOTFOUND. On a
 * partitioned queue every bulk step here walks the partitions, one bounded call on one
 * partition a step, and the one audit entry is partition 0's (PROTOCOL.md 14.8).
 */
int dq_requeue_filter_step(dq_client *c, const char *queue, const dq_filter *f, int64_t delay_ms,
                           int64_t spread_ms, size_t step, dq_bulk *cur, dq_err *err);

/** The same for "drop the failed tasks of filter @f". */
int dq_drop_filter_step(dq_client *c, const char *queue, const dq_filter *f, size_t step,
                        dq_bulk *cur, dq_err *err);

/**
 * One page of the failed tasks of group @group (id or signature), newest first, paged
 * on the server in the group's own index. A group that does not exist is an empty page.
 * On a partitioned queue, every partition's page of the group merged newest first, as
 * dq_page_get() merges (PROTOCOL.md 14.7).
 */
int dq_page_group_get(dq_client *c, const char *queue, const char *group, size_t offset,
                      size_t limit, dq_page *out, dq_err *err);

/* ---- end of error groups ---------------------------------------------------------- */

/* ---- periodic schedules (PROTOCOL.md 5.30) ----------------------------------------- */

/*
 * A schedule fires inside the claims the workers already make, by server time: each
 * firing enqueues one ordinary task with id NAME@<firing ms>, so it runs once however
 * many workers there are, with no leader. Of the firings missed while no worker claimed
 * only the latest runs (late, with the others counted as missed). Cron times are worked
 * out in C (zones: lib/tz.h, DST rule: lib/cron.h) and kept as a short list per
 * schedule that workers top up (dq_schedule_refill); --every is worked out in Lua.
 */

/* A schedule's name: 1..DQ_SCHEDULE_NAME_MAX bytes of [A-Za-z0-9_.:-]. */
#define DQ_SCHEDULE_NAME_MAX 100
/* Schedules per queue, at most. */
#define DQ_SCHEDULES_MAX 1000
/* --every, ms: 1 ms .. 366 days. */
#define DQ_SCHEDULE_EVERY_MAX 31622400000LL
/* Precomputed cron firings kept per schedule. */
#define DQ_SCHEDULE_FIRES 16

typedef struct dq_schedule_def {
    const char *cron;      /* 5-field spec (lib/cron.h), or NULL with every_ms */
    const char *tz;        /* cron's zone; NULL or "": UTC */
    int64_t every_ms;      /* > 0: every this long (first firing one period after add) */
    int64_t max_attempts;  /* of each task, as dq_enqueue_opts */
    int64_t time_limit_ms; /* of each task, as dq_enqueue_opts */
    const void *payload;   /* each task's payload */
    size_t len;
} dq_schedule_def;

typedef struct dq_schedule {
    char *name, *spec, *tz, *last_id, *by; /* spec "" for --every; tz "" for UTC */
    int64_t every_ms;                      /* 0 for cron */
    bool paused;
    int64_t next_ms; /* -1: none (paused, or its cron list is used up) */
    int64_t last_ms; /* the last firing's time, -1: never */
    int64_t late_ms; /* how long after its time the last firing ran */
    int64_t missed;  /* firings the last one skipped (the catch-up rule) */
    int64_t runs;    /* firings so far */
    int64_t created_ms, updated_ms;
    int64_t fires;      /* cron firings listed ahead */
    int64_t fires_last; /* the last listed, -1: none */
} dq_schedule;

typedef struct dq_schedules {
    int64_t now_ms;
    dq_schedule *items;
    size_t n;
} dq_schedules;

/**
 * Adds (or redefines: its run count and last run are kept) schedule @name. Operator
 * action, audited. *@next_ms (may be NULL) gets its first firing, *@replaced (may be
 * NULL) whether it existed. DQ_EINVAL names the bad field and its limit.
 */
int dq_schedule_add(dq_client *c, const char *queue, const char *name, const dq_schedule_def *def,
                    int64_t *next_ms, bool *replaced, dq_err *err);
/** All the schedules of @queue, by name; free with dq_schedules_free. Read-only. */
int dq_schedule_ls(dq_client *c, const char *queue, dq_schedules *out, dq_err *err);
void dq_schedules_free(dq_schedules *s);
/** Removes schedule @name (DQ_ENOTFOUND if none). Its tasks already made stay. Audited. */
int dq_schedule_rm(dq_client *c, const char *queue, const char *name, dq_err *err);
/** Stops @name firing until resumed; *@changed: it was not paused. Audited. */
int dq_schedule_pause(dq_client *c, const char *queue, const char *name, bool *changed,
                      dq_err *err);
/** Resumes @name from its next firing after now (nothing missed is run). Audited. */
int dq_schedule_resume(dq_client *c, const char *queue, const char *name, int64_t *next_ms,
                       bool *changed, dq_err *err);
/**
 * Tops up the cron schedules of @queue whose list of firings runs low (the heartbeat
 * reports them: dq_beat_reply.schedules_low); the dq_worker calls it itself. Returns
 * DQ_OK and in *@filled (may be NULL) how many it topped up.
 */
int dq_schedule_refill(dq_client *c, const char *queue, size_t *filled, dq_err *err);

/* ---- end of periodic schedules ------------------------------------------------------ */

/** Checks a queue name: 1..DQ_QUEUE_NAME_MAX bytes of [A-Za-z0-9._:-]. DQ_EINVAL names the problem.
 */
int dq_queue_name_check(const char *queue, dq_err *err);

#ifdef __cplusplus
}
#endif

#endif /* DELAYQ_H */
