/* SPDX-License-Identifier: MIT */
/*
 * scripts.c: the scripts run as Redis functions (FCALL, FCALL_RO) with the library
 * loaded again on "Function not found", or, where a server refuses FUNCTION or FCALL
 * (Redis 6, an ACL), as EVALSHA / EVALSHA_RO with reload on NOSCRIPT: the same code
 * either way (lua/embed.py). Also the queue key layout and script error replies mapped
 * to codes. No reply leaves this file except through a parse callback that copies what
 * it needs.
 */
#include "scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "client.h"
#include "err.h"

/* Key order is the KEYS order every script in lua/ expects (lua/lib.lua). */
static const char *const key_names[DQ_QUEUE_KEYS] = {
    "sched", "ids", "inflight", "running", "failed", "failidx",
    "stats", "seq", "config",   "audit",   "wake",
};

size_t
dq_queue_key(const char *queue, int i, char *buf, size_t size)
{
    int n = snprintf(buf, size, "dq:{%s}:%s", queue, key_names[i]);
    return n < 0 ? 0 : (size_t)n;
}

void
dq_args_init(struct dq_args *a)
{
    memset(a, 0, sizeof *a);
}

struct dq_args_block {
    struct dq_args_block *next;
    size_t used;
    char nums[256][24];
};

void
dq_args_free(struct dq_args *a)
{
    while (a->more != NULL) {
        struct dq_args_block *b = a->more;
        a->more = b->next;
        free(b);
    }
    free(a->v);
    free(a->len);
    memset(a, 0, sizeof *a);
}

void
dq_args_bytes(struct dq_args *a, const void *p, size_t len)
{
    if (a->failed)
        return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        const char **v = realloc(a->v, cap * sizeof *v);
        if (v == NULL) {
            a->failed = true;
            return;
        }
        a->v = v;
        size_t *len_ = realloc(a->len, cap * sizeof *len_);
        if (len_ == NULL) {
            a->failed = true;
            return;
        }
        a->len = len_;
        a->cap = cap;
    }
    a->v[a->n] = p;
    a->len[a->n] = len;
    a->n++;
}

void
dq_args_str(struct dq_args *a, const char *s)
{
    dq_args_bytes(a, s, strlen(s));
}

/* Storage for one more formatted number, or NULL (and failed set) on OOM. */
static char *
num_slot(struct dq_args *a)
{
    struct dq_args_block *b = a->more;

    if (a->nnum < (int)(sizeof a->nums / sizeof a->nums[0]))
        return a->nums[a->nnum++];
    if (b == NULL || b->used == sizeof b->nums / sizeof b->nums[0]) {
        b = malloc(sizeof *b);
        if (b == NULL) {
            a->failed = true;
            return NULL;
        }
        b->used = 0;
        b->next = a->more;
        a->more = b;
    }
    return b->nums[b->used++];
}

void
dq_args_i64(struct dq_args *a, int64_t v)
{
    char *s;

    if (a->failed || (s = num_slot(a)) == NULL)
        return;
    snprintf(s, sizeof a->nums[0], "%lld", (long long)v);
    dq_args_str(a, s);
}

/* The values of dq_client.scripts_path. */
enum { PATH_UNKNOWN = 0, PATH_FUNCTIONS, PATH_EVALSHA };

static bool
error_starts(const redisReply *r, const char *prefix)
{
    size_t n = strlen(prefix);
    return r->type == REDIS_REPLY_ERROR && r->len >= n && memcmp(r->str, prefix, n) == 0;
}

/* NOPERM that names the command itself, not a key or channel the call touches: an ACL
 * user may be denied FUNCTION, FCALL or EVALSHA_RO and still run the other path. */
static bool
command_refused(const redisReply *r)
{
    return error_starts(r, "ERR unknown command") || error_starts(r, "ERR unknown subcommand") ||
           (error_starts(r, "NOPERM") && strstr(r->str, "permissions to run") != NULL);
}

/* Which path a new client starts on: FCALL, unless DELAYQ_SCRIPTS=evalsha forces the
 * fallback (the integration suites run both paths; PROTOCOL.md section 6). */
static int
first_path(void)
{
    const char *v = getenv("DELAYQ_SCRIPTS");
    return v != NULL && strcmp(v, "evalsha") == 0 ? PATH_EVALSHA : PATH_FUNCTIONS;
}

/* The library and the scripts are missing and this user may load neither (a viewer; a
 * producer or worker under the strict ACL lines of docs/SECURITY.md). */
static int
not_loaded(dq_client *c, dq_err *err)
{
    /* try the function library again next time, someone may load it */
    c->scripts_path = PATH_UNKNOWN;
    return dq_err_set(err, DQ_EREDIS,
                      "%s is not loaded on %s and this user may not load it (NOPERM); run one "
                      "command of this delayq version as the operator (docs/SECURITY.md)",
                      dq_library_name, c->endpoint);
}

static int
load_script(dq_client *c, const struct dq_script_src *src, dq_err *err)
{
    const char *argv[3] = {"SCRIPT", "LOAD", src->text};
    size_t lens[3] = {6, 4, src->len};
    redisReply *r = NULL;
    int rc = dq_conn_command(c, 3, argv, lens, &r, err);

    if (rc != DQ_OK)
        return rc;
    if (error_starts(r, "NOPERM")) {
        /* a viewer (docs/SECURITY.md) changes nothing on the server, script cache
         * included */
        rc = not_loaded(c, err);
    } else if (r->type == REDIS_REPLY_ERROR)
        rc = dq_err_from_reply(err, src->name, r->str, r->len);
    else if (r->type != REDIS_REPLY_STRING || r->len != 40 || memcmp(r->str, src->sha1, 40) != 0)
        rc = dq_err_set(err, DQ_EPROTO, "SCRIPT LOAD of %s returned an unexpected SHA1", src->name);
    freeReplyObject(r);
    return rc;
}

/* FUNCTION LOAD REPLACE of the library. *refused is set when the server will not run
 * FUNCTION at all (Redis 6, an ACL without it) or not now (maxmemory): the caller then
 * falls back. REPLACE
 * makes two clients loading at once both succeed. */
static int
load_library(dq_client *c, bool *refused, dq_err *err)
{
    const char *argv_r[4] = {"FUNCTION", "LOAD", "REPLACE", dq_library_text};
    size_t lens_r[4] = {8, 4, 7, dq_library_len};
    redisReply *r = NULL;
    int rc = dq_conn_command(c, 4, argv_r, lens_r, &r, err);

    *refused = false;
    if (rc != DQ_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR) {
        /* FUNCTION LOAD is deny-oom and SCRIPT LOAD is not: at maxmemory a server that
         * lost the library still runs the drainers on the EVALSHA path */
        *refused = command_refused(r) || error_starts(r, "OOM ");
        rc = dq_err_from_reply(err, "the function library", r->str, r->len);
    } else if (r->type != REDIS_REPLY_STRING || strcmp(r->str, dq_library_name) != 0) {
        rc = dq_err_set(err, DQ_EPROTO, "FUNCTION LOAD returned an unexpected library name");
    }
    freeReplyObject(r);
    return rc;
}

/* One call on the function path; *fallback is set when this server refuses it, and
 * *missing too when that is because the library is not there and may not be loaded. */
static int
run_function(dq_client *c, const struct dq_script_src *src, int argc, const char **argv,
             size_t *lens, redisReply **out, bool *fallback, bool *missing, dq_err *err)
{
    redisReply *r = NULL;
    int rc;

    argv[0] = src->no_writes ? "FCALL_RO" : "FCALL";
    lens[0] = strlen(argv[0]);
    argv[1] = src->function;
    lens[1] = strlen(src->function);
    *fallback = *missing = false;
    rc = dq_conn_command(c, argc, argv, lens, &r, err);
    if (rc == DQ_OK && error_starts(r, "ERR Function not found")) {
        /* a restart, FUNCTION FLUSH, a promoted replica that never had it */
        freeReplyObject(r);
        r = NULL;
        rc = load_library(c, fallback, err);
        *missing = *fallback;
        if (rc == DQ_OK)
            rc = dq_conn_command(c, argc, argv, lens, &r, err);
    } else if (rc == DQ_OK && command_refused(r)) {
        *fallback = true;
    }
    if (*fallback) {
        freeReplyObject(r);
        return DQ_OK;
    }
    *out = r;
    return rc;
}

/* One call on the EVALSHA path (EVALSHA_RO for the read-only scripts where the server
 * has it). */
static int
run_evalsha(dq_client *c, const struct dq_script_src *src, int argc, const char **argv,
            size_t *lens, redisReply **out, dq_err *err)
{
    redisReply *r = NULL;
    int rc;

    argv[0] = src->no_writes ? "EVALSHA_RO" : "EVALSHA";
    for (int pass = 0; pass < 2; pass++) {
        lens[0] = strlen(argv[0]);
        argv[1] = src->sha1;
        lens[1] = 40;
        rc = dq_conn_command(c, argc, argv, lens, &r, err);
        if (rc == DQ_OK && error_starts(r, "NOSCRIPT")) {
            freeReplyObject(r);
            r = NULL;
            rc = load_script(c, src, err);
            if (rc == DQ_OK)
                rc = dq_conn_command(c, argc, argv, lens, &r, err);
        }
        if (rc != DQ_OK || !src->no_writes || !command_refused(r))
            break;
        /* Redis 6 has no EVALSHA_RO: the script does not write either way */
        freeReplyObject(r);
        r = NULL;
        argv[0] = "EVALSHA";
    }
    *out = r;
    return rc;
}

/* ---- --min-replicas: WAIT after writes (PROTOCOL.md, "Failover") ---- */

/* Whether a successful call of @src waits for replicas. Every write does but those that
 * only keep the worker going: a claim, a lease renewal, a reap or a heartbeat lost in a
 * failover makes a task run again or a worker look late, never loses a task, and a WAIT
 * there would add a replication round trip to every worker loop. (The worker's results
 * ride on its claims, so they are not confirmed either: a lost ack is a second run.) */
static bool
waits_for_replicas(const struct dq_script_src *src)
{
    static const enum dq_script_id upkeep[] = {DQ_SCRIPT_CLAIM, DQ_SCRIPT_EXTEND, DQ_SCRIPT_REAP,
                                               DQ_SCRIPT_HEARTBEAT};

    if (src->no_writes)
        return false;
    for (size_t i = 0; i < sizeof upkeep / sizeof upkeep[0]; i++) {
        if (src == &dq_script_table[upkeep[i]])
            return false;
    }
    return true;
}

/* WAIT min_replicas timeout after a write @what: DQ_EREPLICAS when fewer confirmed it. */
static int
wait_replicas(dq_client *c, const char *what, dq_err *err)
{
    char n[16], ms[16];
    redisReply *r = NULL;
    int saved = c->command_timeout_ms, rc;

    snprintf(n, sizeof n, "%d", c->min_replicas);
    snprintf(ms, sizeof ms, "%d", c->min_replicas_timeout_ms);
    /* the reply may take the whole WAIT timeout: the idle timeout must not fire first */
    c->command_timeout_ms = saved + c->min_replicas_timeout_ms;
    rc = dq_conn_command(c, 3, (const char *[]){"WAIT", n, ms}, NULL, &r, err);
    c->command_timeout_ms = saved;
    if (rc != DQ_OK)
        return rc;
    if (r->type == REDIS_REPLY_INTEGER && r->integer >= c->min_replicas)
        rc = DQ_OK;
    else if (r->type == REDIS_REPLY_INTEGER)
        rc = dq_err_set(err, DQ_EREPLICAS,
                        "%s: the write was made on the master at %s but not confirmed on %d "
                        "replicas (--min-replicas) within %d ms, only on %lld; a failover may "
                        "lose it: retry it, or check the replicas",
                        what, c->endpoint, c->min_replicas, c->min_replicas_timeout_ms, r->integer);
    else if (r->type == REDIS_REPLY_ERROR)
        rc = dq_err_set(err, DQ_EREDIS, "redis refused WAIT after %s: %.120s", what, r->str);
    else
        rc = dq_err_set(err, DQ_EPROTO, "unexpected reply to WAIT after %s", what);
    freeReplyObject(r);
    return rc;
}

/* Redis refused a script for maxmemory: the operator's way out, with the limit it hit (INFO,
 * which every role may run; 0 when it cannot be read). The scripts that drain a queue
 * are not refused (lib.lua allow_oom): the words say what still works. */
static int
oom_error(dq_client *c, dq_err *err)
{
    dq_server_info info;
    dq_err ignored;
    long long max = dq_server_info_get(c, &info, &ignored) == DQ_OK ? (long long)info.maxmemory : 0;

    return dq_err_set(err, DQ_EREDIS,
                      "Redis is out of memory (maxmemory %lld): drop or export failed tasks, "
                      "or raise maxmemory",
                      max);
}

int
dq_scripts_run(dq_client *c, enum dq_script_id id, const char *queue, const struct dq_args *args,
               dq_parse_fn parse, void *out, dq_err *err)
{
    const struct dq_script_src *src = &dq_script_table[id];
    char keys[DQ_QUEUE_KEYS][DQ_QUEUE_NAME_MAX + 32]; /* "dq:{" name "}:" key name */
    const char **argv = NULL;
    size_t *lens = NULL;
    redisReply *r = NULL;
    size_t argc = 3 + DQ_QUEUE_KEYS + args->n;
    int rc;

    rc = dq_queue_run_name_check(queue, err);
    if (rc != DQ_OK)
        return rc;
    if (args->failed)
        return dq_err_set(err, DQ_ENOMEM, "out of memory building arguments of %s", src->name);
    argv = malloc(argc * sizeof *argv);
    lens = malloc(argc * sizeof *lens);
    if (argv == NULL || lens == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory building arguments of %s", src->name);
        goto out;
    }
    /* argv[0] and argv[1] (command, function name or SHA1) are set by the path */
    argv[2] = "11";
    lens[2] = 2;
    for (int i = 0; i < DQ_QUEUE_KEYS; i++) {
        lens[3 + i] = dq_queue_key(queue, i, keys[i], sizeof keys[i]);
        argv[3 + i] = keys[i];
    }
    for (size_t i = 0; i < args->n; i++) {
        argv[3 + DQ_QUEUE_KEYS + i] = args->v[i];
        lens[3 + DQ_QUEUE_KEYS + i] = args->len[i];
    }

    if (c->scripts_path == PATH_UNKNOWN)
        c->scripts_path = first_path();
    bool missing = false;
    if (c->scripts_path == PATH_FUNCTIONS) {
        bool fallback;
        rc = run_function(c, src, (int)argc, argv, lens, &r, &fallback, &missing, err);
        if (rc == DQ_OK && fallback)
            c->scripts_path = PATH_EVALSHA; /* for the life of this client */
    }
    if (c->scripts_path == PATH_EVALSHA)
        rc = run_evalsha(c, src, (int)argc, argv, lens, &r, err);
    if (rc != DQ_OK)
        goto out;
    if (error_starts(r, "OOM ")) {
        rc = oom_error(c, err);
        goto out;
    }
    if (missing && command_refused(r)) {
        /* no FUNCTION LOAD and no EVALSHA either: say what to do, not "no evalsha" */
        rc = not_loaded(c, err);
        goto out;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        rc = dq_err_from_reply(err, src->name, r->str, r->len);
        goto out;
    }
    if (parse != NULL)
        rc = parse(r, out, err);
    /* after the parse, so that the caller has the result (an enqueued id to retry with) */
    if (rc == DQ_OK && c->min_replicas > 0 && waits_for_replicas(src))
        rc = wait_replicas(c, src->name, err);
out:
    freeReplyObject(r);
    free(argv);
    free(lens);
    return rc;
}

/* A reply the pipeline leaves to dq_scripts_run, which knows what to do about it: the
 * library or a script to load again, a path to switch, maxmemory. */
static bool
needs_registry(const redisReply *r)
{
    return error_starts(r, "ERR Function not found") || error_starts(r, "NOSCRIPT") ||
           error_starts(r, "OOM ") || command_refused(r);
}

/* One queue's call in a pipeline: its key names and arguments (argv borrows both). */
struct each_call {
    char keys[DQ_QUEUE_KEYS][DQ_QUEUE_NAME_MAX + 32];
    const char **argv;
    size_t *lens;
    size_t queue; /* its index in the caller's arrays */
};

int
dq_scripts_run_multi(dq_client *c, enum dq_script_id id, const char *const *queues,
                     const struct dq_args *const *args, size_t n, dq_parse_fn parse, void *outs,
                     size_t stride, size_t batch, int *rcs, dq_err *errs, dq_err *err)
{
    const struct dq_script_src *src = &dq_script_table[id];
    size_t argc = 3 + DQ_QUEUE_KEYS, done = 0;
    bool failed = false;
    struct each_call *calls = NULL;
    redisReply **replies = NULL;
    const char ***argvs = NULL;
    const size_t **lenss = NULL;
    int *argcs = NULL, rc = DQ_OK;

    for (size_t i = 0; i < n; i++) {
        argc = 3 + DQ_QUEUE_KEYS + args[i]->n > argc ? 3 + DQ_QUEUE_KEYS + args[i]->n : argc;
        failed = failed || args[i]->failed;
    }
    /* the first call alone: it finds the path (and loads the library) for the others;
     * WAIT for replicas follows each write alone. A cluster client pipelines the rest per
     * node (dq_cluster_pipeline), each node loading the library at its first refusal. */
    while (done < n && (c->scripts_path == PATH_UNKNOWN || done == 0 ||
                        (c->min_replicas > 0 && waits_for_replicas(src)))) {
        rcs[done] = dq_scripts_run(c, id, queues[done], args[done], parse,
                                   (char *)outs + done * stride, &errs[done]);
        if (rcs[done] == DQ_ECONN || rcs[done] == DQ_ETIMEOUT || rcs[done] == DQ_ENOMEM)
            return dq_err_set(err, rcs[done], "%s", errs[done].msg);
        /* no way to run scripts on this server (the library missing and this user may
         * load nothing): the same for every queue, so say it once rather than N times */
        if (rcs[done] == DQ_EREDIS && c->cluster == NULL && c->scripts_path == PATH_UNKNOWN)
            return dq_err_set(err, rcs[done], "%s", errs[done].msg);
        done++;
    }
    if (done == n)
        return DQ_OK;
    batch = batch == 0 ? 1 : batch;
    calls = calloc(batch, sizeof *calls);
    replies = calloc(batch, sizeof *replies);
    argvs = calloc(batch, sizeof *argvs);
    lenss = calloc(batch, sizeof *lenss);
    argcs = calloc(batch, sizeof *argcs);
    if (calls == NULL || replies == NULL || argvs == NULL || lenss == NULL || argcs == NULL ||
        failed) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory building calls of %s", src->name);
        goto out;
    }
    for (size_t j = 0; j < batch; j++) {
        calls[j].argv = malloc(argc * sizeof *calls[j].argv);
        calls[j].lens = malloc(argc * sizeof *calls[j].lens);
        if (calls[j].argv == NULL || calls[j].lens == NULL) {
            rc = dq_err_set(err, DQ_ENOMEM, "out of memory building calls of %s", src->name);
            goto out;
        }
    }
    while (done < n) {
        size_t k = 0;
        for (; k < batch && done < n; done++) {
            if ((rcs[done] = dq_queue_run_name_check(queues[done], &errs[done])) != DQ_OK)
                continue;
            struct each_call *e = &calls[k];
            bool fn = c->scripts_path == PATH_FUNCTIONS;
            e->argv[0] = fn ? (src->no_writes ? "FCALL_RO" : "FCALL")
                            : (src->no_writes ? "EVALSHA_RO" : "EVALSHA");
            e->argv[1] = fn ? src->function : src->sha1;
            e->argv[2] = "11";
            for (int i = 0; i < DQ_QUEUE_KEYS; i++) {
                e->lens[3 + i] = dq_queue_key(queues[done], i, e->keys[i], sizeof e->keys[i]);
                e->argv[3 + i] = e->keys[i];
            }
            for (size_t i = 0; i < args[done]->n; i++) {
                e->argv[3 + DQ_QUEUE_KEYS + i] = args[done]->v[i];
                e->lens[3 + DQ_QUEUE_KEYS + i] = args[done]->len[i];
            }
            for (size_t i = 0; i < 3; i++)
                e->lens[i] = strlen(e->argv[i]);
            argcs[k] = (int)(3 + DQ_QUEUE_KEYS + args[done]->n);
            e->queue = done;
            argvs[k] = e->argv;
            lenss[k] = e->lens;
            k++;
        }
        if (k > 0 &&
            (rc = c->cluster != NULL
                      ? dq_cluster_pipeline(c, k, argcs, argvs, lenss, replies, err)
                      : dq_node_pipeline(c, k, argcs, argvs, lenss, replies, err)) != DQ_OK)
            goto out;
        /* the replies come in the order sent */
        for (size_t j = 0; j < k; j++) {
            size_t q = calls[j].queue;
            redisReply *r = replies[j];
            void *o = (char *)outs + q * stride;
            if (r == NULL || needs_registry(r)) /* NULL: a cluster node redirected it */
                rcs[q] = dq_scripts_run(c, id, queues[q], args[q], parse, o, &errs[q]);
            else if (r->type == REDIS_REPLY_ERROR)
                rcs[q] = dq_err_from_reply(&errs[q], src->name, r->str, r->len);
            else
                rcs[q] = parse != NULL ? parse(r, o, &errs[q]) : DQ_OK;
        }
        for (size_t i = 0; i < k; i++) {
            freeReplyObject(replies[i]);
            replies[i] = NULL;
        }
        for (size_t j = 0; j < k; j++) {
            size_t q = calls[j].queue;
            if (rcs[q] == DQ_ECONN || rcs[q] == DQ_ETIMEOUT || rcs[q] == DQ_ENOMEM) {
                rc = dq_err_set(err, rcs[q], "%s", errs[q].msg);
                goto out;
            }
        }
    }
out:
    for (size_t j = 0; calls != NULL && j < batch; j++) {
        free(calls[j].argv);
        free(calls[j].lens);
    }
    for (size_t j = 0; replies != NULL && j < batch; j++)
        freeReplyObject(replies[j]);
    free(calls);
    free(replies);
    free(argvs);
    free(lenss);
    free(argcs);
    return rc;
}

int
dq_scripts_run_each(dq_client *c, enum dq_script_id id, const char *const *queues, size_t n,
                    const struct dq_args *args, dq_parse_fn parse, void *outs, size_t stride,
                    size_t batch, int *rcs, dq_err *errs, dq_err *err)
{
    const struct dq_args **each = malloc((n ? n : 1) * sizeof *each);
    int rc;

    if (each == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory building calls");
    for (size_t i = 0; i < n; i++)
        each[i] = args;
    rc = dq_scripts_run_multi(c, id, queues, each, n, parse, outs, stride, batch, rcs, errs, err);
    free(each);
    return rc;
}

int
dq_queue_run_name_check(const char *queue, dq_err *err)
{
    const char *tilde = queue ? strchr(queue, '~') : NULL;
    char base[DQ_QUEUE_NAME_MAX + 1];
    size_t blen, d1, d2;

    if (tilde == NULL)
        return dq_queue_name_check(queue, err);
    blen = (size_t)(tilde - queue);
    if (blen == 0 || blen > DQ_QUEUE_NAME_MAX)
        return dq_queue_name_check(queue, err);
    memcpy(base, queue, blen);
    base[blen] = '\0';
    d1 = strspn(tilde + 1, "0123456789");
    d2 = tilde[1 + d1] == '.' ? strspn(tilde + 2 + d1, "0123456789") : 0;
    if (d1 == 0 || d1 > 3 || d2 == 0 || d2 > 5 || tilde[2 + d1 + d2] != '\0')
        return dq_queue_name_check(queue, err); /* names the '~' as the bad byte */
    return dq_queue_name_check(base, err);
}

int
dq_queue_name_check(const char *queue, dq_err *err)
{
    size_t len = queue ? strlen(queue) : 0;

    if (len == 0 || len > DQ_QUEUE_NAME_MAX)
        return dq_err_set(err, DQ_EINVAL, "queue: name must be 1..%d bytes (got %zu)",
                          DQ_QUEUE_NAME_MAX, len);
    for (size_t i = 0; i < len; i++) {
        char ch = queue[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == ':' || ch == '-'))
            return dq_err_set(err, DQ_EINVAL,
                              "queue: byte %zu of the name is not one of [A-Za-z0-9._:-]", i + 1);
    }
    return DQ_OK;
}

/* One probe command; *denied is set (and @why filled) when Redis answered NOPERM. */
static int
probe(dq_client *c, int argc, const char **argv, bool *denied, bool *unknown, char *why,
      size_t size, dq_err *err)
{
    redisReply *r = NULL;
    int rc = dq_conn_command(c, argc, argv, NULL, &r, err);

    *denied = *unknown = false;
    if (rc != DQ_OK)
        return rc;
    if (error_starts(r, "NOPERM")) {
        *denied = true;
        snprintf(why, size, "%.*s", (int)r->len, r->str);
    } else if (error_starts(r, "ERR unknown command")) {
        *unknown = true;
    }
    freeReplyObject(r);
    return DQ_OK;
}

/* Whether the user may call delayq's scripts on @queue's keys: "" in @why, or why not. */
static int
may_write(dq_client *c, const char *queue, char *why, size_t size, dq_err *err)
{
    char sched[DQ_QUEUE_NAME_MAX + 32], fn[160], fsays[200] = "", esays[200] = "";
    bool fdenied, funknown, edenied = false, eunknown = false;
    int rc;

    why[0] = '\0';
    dq_queue_key(queue, 0, sched, sizeof sched);
    /* ACL is checked before a command runs: a function that does not exist (or a SHA1
     * no script has) answers "not found" to a user who may run it on the queue's keys
     * (FCALL declares them read-write) and NOPERM to one who may not; nothing runs */
    snprintf(fn, sizeof fn, "%s_may_write_probe", dq_library_name);
    rc = probe(c, 4, (const char *[]){"FCALL", fn, "1", sched}, &fdenied, &funknown, fsays,
               sizeof fsays, err);
    if (rc == DQ_OK && (fdenied || funknown))
        rc = probe(
            c, 4,
            (const char *[]){"EVALSHA", "0000000000000000000000000000000000000000", "1", sched},
            &edenied, &eunknown, esays, sizeof esays, err);
    if (rc == DQ_OK && (fdenied || funknown) && (edenied || eunknown))
        snprintf(why, size, "this user may not write to queue %s (redis: %s)", queue,
                 fdenied ? fsays : esays);
    return rc;
}

/* One side-effect-free probe of a role's gate (lua/lib.lua): @argv is refused with
 * NOPERM, or fails after the ACL check without changing anything. */
static int
may_gate(dq_client *c, const char *queue, int argc, const char **argv, const char *role, char *why,
         size_t size, dq_err *err)
{
    char says[200];
    bool denied, unknown;
    int rc = may_write(c, queue, why, size, err);

    if (rc != DQ_OK || why[0] != '\0')
        return rc;
    rc = probe(c, argc, argv, &denied, &unknown, says, sizeof says, err);
    if (rc == DQ_OK && denied)
        snprintf(why, size, "this user may not run %s on queue %s (redis: %s)", role, queue, says);
    return rc;
}

int
dq_scripts_may_operate(dq_client *c, const char *queue, char *why, size_t size, dq_err *err)
{
    char audit[DQ_QUEUE_NAME_MAX + 32];
    int rc = dq_queue_name_check(queue, err);

    why[0] = '\0';
    if (rc != DQ_OK)
        return rc;
    dq_queue_key(queue, 9, audit, sizeof audit);
    /* operator actions write the audit log (operator_gate); ID 0-0 is refused after the
     * ACL check and before anything is added */
    return may_gate(c, queue, 6, (const char *[]){"XADD", audit, "NOMKSTREAM", "0-0", "gate", "1"},
                    "operator actions", why, size, err);
}

int
dq_scripts_may_work(dq_client *c, const char *queue, char *why, size_t size, dq_err *err)
{
    char workers[DQ_QUEUE_NAME_MAX + 32];
    int rc = dq_queue_name_check(queue, err);

    why[0] = '\0';
    if (rc != DQ_OK)
        return rc;
    /* workers register in dq:{Q}:workers (worker_gate); an increment that is not a
     * number is refused after the ACL check and before anything is written */
    snprintf(workers, sizeof workers, "dq:{%s}:workers", queue);
    return may_gate(c, queue, 4, (const char *[]){"HINCRBY", workers, "gate", "x"}, "a worker", why,
                    size, err);
}
