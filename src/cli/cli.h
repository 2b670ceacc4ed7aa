/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the delayq subcommands share: global options, connecting, the one
 * mapping from error codes to exit statuses, and printing helpers. Everything that
 * came from Redis is escaped before it reaches a terminal (util.c).
 */
#ifndef DQ_CLI_CLI_H
#define DQ_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "delayq.h"
#include "lib/buf.h"

struct cli_opt;
struct cli_cmd;
struct profile;
struct profiles;

/* Limits of delayq.h as text, for help ("1.." CLI_CALL_MAX_TEXT). */
#define CLI_STR_(x)       #x
#define CLI_STR(x)        CLI_STR_(x)
#define CLI_CALL_MAX_TEXT CLI_STR(DQ_CALL_MAX)
#define CLI_STEP_MAX_TEXT CLI_STR(DQ_STEP_MAX)
#define CLI_ID_MAX_TEXT   CLI_STR(DQ_ID_MAX)

enum {
    DQ_EXIT_OK = 0,
    DQ_EXIT_FAILED = 1, /* the operation failed (not found, refused, check failed) */
    DQ_EXIT_USAGE = 2,  /* usage error or bad input */
    DQ_EXIT_REDIS = 3,  /* Redis unreachable or timed out */
};

/* Options every subcommand accepts. */
struct cli {
    const char *prog;  /* "delayq enqueue" for messages */
    const char *url;   /* --url, else $DELAYQ_URL, else redis://127.0.0.1:6379 */
    const char *queue; /* -q, else $DELAYQ_QUEUE, else "default" */
    bool queue_chosen; /* -q or $DELAYQ_QUEUE named it (not the built-in default) */
    bool queue_flag;   /* -q named it (demo's own default gives way to it only) */
    bool url_given;    /* --url named the server (demo then starts none) */
    const char *who;   /* --who, else user@host */
    int timeout_ms;    /* --timeout */
    /* --tls-*, else $DELAYQ_TLS_* (read by cli_client_opts); NULL / false: not given */
    const char *tls_ca;
    const char *tls_cert;
    const char *tls_key;
    const char *tls_server_name;
    bool tls_insecure;
    int min_replicas; /* --min-replicas, else $DELAYQ_MIN_REPLICAS, else the profile's; 0: off;
                         -1: none of them given */
    dq_client *client;
    /* Connection profiles and names (cmd_profiles.c): --profile before the command,
     * else $DELAYQ_PROFILE; flags and variables override what the profile says. */
    const char *profile_name;
    const struct profile *profile; /* borrowed from profiles; NULL: none in use */
    struct profiles *profiles;     /* owned; freed by main */
    char *url_owned;               /* --url, copied before its password was wiped from argv */
    char client_name[160];         /* CLIENT SETNAME (cli_client_opts) */
    char password[256];            /* the profile's password, once read */
    char key_warning[300];         /* cli_client_opts: the TLS key others may read ("" if none) */
};

/* The code-to-exit-status mapping; the only one. */
int cli_exit_status(int code);

/* Prints "delayq: <msg>" (escaped) to stderr and returns the exit status for the error. */
int cli_error(const struct cli *g, const dq_err *err);

/* cli_error() for a call that changes something: when the call timed out or lost its
 * connection after Redis had the whole command (dq_client_unanswered), it may have run,
 * and a second line says "outcome unknown: " and @check, else "check the audit log
 * (delayq audit -q QUEUE)" when @check is NULL. */
int cli_action_error(const struct cli *g, const dq_err *err, const char *check);

/* Whether the call that failed with @err on g->client may have run (cli_action_error). */
bool cli_outcome_unknown(const struct cli *g, const dq_err *err);

/* Prints a usage error and returns DQ_EXIT_USAGE. */
int cli_usage_error(const struct cli *g, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Applies global option @o (opts.c's cli_globals) with @val, which is in argv (a
 * password in a --url is wiped from it), and @num, the number it was read as. Returns
 * DQ_EXIT_OK or the exit status after printing the error. */
int cli_global_set(struct cli *g, const struct cli_opt *o, char *val, long long num);

/* The connection options of @g (flags, else $DELAYQ_PASSWORD and $DELAYQ_TLS_*, else the
 * profile) into @o, which borrows @g's strings and the environment: @g must outlive a
 * worker made with them. Prints the --tls-insecure warning to stderr when verification
 * is off, once per run: every command that connects says so; and one for a TLS private
 * key that others may read (also kept in g->key_warning, for top's status line). Returns
 * DQ_EXIT_OK, or the exit status after printing why the profile's password could not be read. */
int cli_client_opts(struct cli *g, dq_client_opts *o);

/*
 * Once the process holds a password (from $DELAYQ_PASSWORD, $DELAYQ_SENTINEL_PASSWORD, a
 * URL, a profile) it is made not dumpable (PR_SET_DUMPABLE 0): no core dump (with
 * fs.suid_dumpable 2, one only root may read), and no other process of the same user may
 * ptrace it or read its /proc/PID/mem or environ. Called where a password may arrive:
 * at start (the environment), --url, a loaded profile, cli_client_opts. A handler of
 * delayq work is dumpable again (execve resets the flag).
 */
void cli_guard_secrets(const struct cli *g);

/* Loads g->profile_name from the profiles file and applies what no variable overrides
 * (url, queue, min-replicas); the rest is read by cli_client_opts. Returns DQ_EXIT_OK or
 * the exit status after printing the error (cmd_profiles.c). */
int cli_profile_use(struct cli *g);

/* Connects (once); returns DQ_EXIT_OK or the exit status after printing the error. */
int cli_connect(struct cli *g);

/*
 * cli_connect(), then the check every operator command makes before it reads or acts on
 * g->queue: a queue that is not known on the server (dq_queue_known: not registered and
 * none of its keys exists) is exit 1 with
 *   delayq stats: queue "billng" is not known on 127.0.0.1:6379 (did you mean billing?)
 * so a typo is never answered with an empty queue. Producers, workers and config --set
 * make queues and do not call this.
 */
int cli_connect_queue(struct cli *g);

/* Writes the unknown-queue sentence for g->queue (dq_health_unknown_queue, with the
 * registered names read for the suggestion) into @buf; for cli_connect_queue and top. */
void cli_unknown_queue(struct cli *g, char *buf, size_t size);

/* Terminal-safe printing of untrusted bytes. */
void cli_put_safe(FILE *f, const void *s, size_t len);

/* Parses a non-negative integer option in [min, max]. */
int cli_parse_uint(const struct cli *g, const char *opt, const char *s, long long min,
                   long long max, long long *out);

/* Reads all of @f, but never more than @max + 1 bytes (*len > @max: it had more); returns
 * NULL on error. */
char *cli_read_all(FILE *f, size_t max, size_t *len);

/* The hard cap on a payload read from a file or stdin, whatever the queue allows. */
#define CLI_READ_MAX ((size_t)512 << 20)

/*
 * The most payload bytes g->queue takes, read before a payload is read from a file or
 * stdin so the read stops there: the queue's max_payload (connecting first), capped at
 * CLI_READ_MAX, or CLI_READ_MAX when the configuration cannot be read. @why gets the
 * limit as the message names it ("max_payload (1048576 bytes) of queue emails" or
 * "512 MiB"). Returns DQ_EXIT_OK or the exit status after printing a connection error
 * (Redis unreachable or not answering the read: exit 3).
 */
int cli_payload_limit(struct cli *g, size_t *limit, char *why, size_t size);

/*
 * A task's payload as enqueue and schedule add take it, given once: @json (converted to
 * msgpack into @mp), or the bytes of @file, or of stdin with @use_stdin, read only up to
 * the queue's max_payload + 1 byte (cli_payload_limit), so a huge input costs no memory;
 * *raw then owns them. Connects in every case. On DQ_EXIT_OK *data / *len are the
 * payload (in @mp or *raw; the caller frees both); else the error was printed and the
 * exit status is returned.
 */
int cli_payload_read(struct cli *g, const char *json, const char *file, bool use_stdin,
                     struct dq_buf *mp, char **raw, const void **data, size_t *len);

/* A task as a one-line listing row for @view; payloads summarised and escaped. */
void cli_task_row(FILE *f, const dq_task *t, dq_view view, int64_t now_ms);
/* Header line matching cli_task_row. */
void cli_task_row_header(FILE *f, dq_view view);

/* The commands, one per cmd_<name>.c (opts.h), in the order of delayq --help. */
extern const struct cli_cmd cmd_enqueue, cmd_stats, cmd_ls, cmd_show, cmd_requeue, cmd_drop,
    cmd_cancel, cmd_reschedule, cmd_schedule, cmd_export, cmd_import, cmd_errors, cmd_keys,
    cmd_audit, cmd_config, cmd_queues, cmd_workers, cmd_pause, cmd_resume, cmd_throttle,
    cmd_metrics, cmd_top, cmd_work, cmd_demo, cmd_profiles;

#endif /* DQ_CLI_CLI_H */
