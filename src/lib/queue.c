/* SPDX-License-Identifier: MIT */
/*
 * queue.c: the public queue operations, one per script in lua/. Each checks what the
 * library can check by itself, builds the script's arguments, and runs the script
 * with the parser of its reply (reply.c); tasks are built in task.c. No reply is read
 * here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "delayq.h"
#include "dur.h"
#include "env_build.h"
#include "pages.h"
#include "err.h"
#include "parts.h"
#include "registry.h"
#include "reply.h"
#include "scripts.h"
#include "task.h"
#include "view.h"

/* The lookups by id across partitions (below, with dq_find), for the actions on ids. */
static int find_in(dq_client *c, const char *name, const char *queue, const char *id, dq_task *out,
                   dq_err *err);
static size_t id_home(const struct dq_parts *p, const char *id);
static int find_parts(dq_client *c, const struct dq_parts *p, const char *queue, const char *id,
                      dq_task *out, size_t *at, dq_err *err);
static int where_is(dq_client *c, const char *queue, const char *id, char *name, size_t size,
                    dq_err *err);

/* ---- configuration ------------------------------------------------------------- */

int
dq_config_get(dq_client *c, const char *queue, dq_config *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    /* config_get, not config: a read-only (viewer) user may run it (FCALL_RO) */
    rc = dq_scripts_run(c, DQ_SCRIPT_CONFIG_GET, queue, &a, dq_reply_config, out, err);
    dq_args_free(&a);
    return rc;
}

/* The config script's pairs for the fields of @in other than partitions; how many. */
static size_t
config_pairs(struct dq_args *a, dq_config *in)
{
    size_t n = 0;

    for (size_t i = 0; i < DQ_CONFIG_FIELDS; i++) {
        int64_t v = *dq_config_slot(in, i);
        if (v != 0 && i != DQ_CONFIG_PARTITIONS) {
            n++;
            dq_args_str(a, dq_config_fields[i]);
            /* max_attempts 0 (unlimited), worker_lost_ms 0 (three beats), time_limit_ms 0
             * (none), done_retention 0 (none), done_retention_ms 0 (no age limit), the
             * queue limits' 0 (off), key_concurrency 0 (no limit) and history_minutes 0
             * (off) are -1 here */
            dq_args_i64(a,
                        v < 0 && (i == DQ_CONFIG_MAX_ATTEMPTS || i == DQ_CONFIG_WORKER_LOST ||
                                  i == DQ_CONFIG_TIME_LIMIT || i == DQ_CONFIG_DONE_RETENTION ||
                                  i == DQ_CONFIG_DONE_RETENTION_MS ||
                                  (i >= DQ_CONFIG_RATE_LIMIT && i <= DQ_CONFIG_CONCURRENCY_LIMIT) ||
                                  i == DQ_CONFIG_KEY_CONCURRENCY || i == DQ_CONFIG_HISTORY_MINUTES)
                            ? 0
                            : v);
        }
    }
    return n;
}

/*
 * A partitioned queue is configured as one: the fields go to partition 0 (the queue, with
 * its audit entry) and then to every other partition; `partitions` first prepares the new
 * partitions (parts.c: their config copied, their seq seeded), then the queue's config
 * script writes the map with their names. A change that fails part way leaves partitions
 * the map does not name yet (harmless: the same call again names them) or partitions
 * whose fields lag behind (the error says so; the same call again sets them).
 */
int
dq_config_set(dq_client *c, const char *queue, const dq_config *cfg, dq_err *err)
{
    char *names[DQ_PARTITIONS_MAX] = {0};
    char field[DQ_PARTITIONS_MAX][32];
    struct dq_args a, set;
    dq_config got, in = *cfg;
    size_t all = 1, nfields;
    int rc = DQ_OK;

    dq_args_init(&set);
    config_pairs(&set, &in);
    rc = in.partitions != 0 ? dq_parts_prepare(c, queue, in.partitions, &set, names, &all, err)
                            : DQ_OK;
    dq_args_free(&set);
    if (rc != DQ_OK)
        goto out;
    dq_args_init(&a);
    dq_args_str(&a, dq_client_who(c));
    nfields = config_pairs(&a, &in);
    if (in.partitions != 0) {
        dq_args_str(&a, "partitions");
        dq_args_i64(&a, in.partitions);
        for (size_t i = all; i < (size_t)in.partitions; i++) {
            snprintf(field[i], sizeof field[i], "part.%zu", i); /* borrowed by @a */
            dq_args_str(&a, field[i]);
            dq_args_str(&a, names[i]);
        }
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_CONFIG, queue, &a, dq_reply_config, &got, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        goto out;
    dq_registry_note(c, queue); /* configuring a queue makes it one (reading does not) */
    dq_parts_forget(c, queue);  /* this client routes by the new map at once */
    if (nfields > 0) {
        struct dq_parts map;
        if ((rc = dq_parts_get(c, queue, &map, err)) != DQ_OK)
            goto out;
        for (size_t i = 1; i < map.all && rc == DQ_OK; i++) {
            dq_args_init(&a);
            dq_args_str(&a, dq_client_who(c));
            config_pairs(&a, &in);
            rc = dq_scripts_run(c, DQ_SCRIPT_CONFIG, map.names[i], &a, NULL, NULL, err);
            dq_args_free(&a);
            if (rc != DQ_OK && err != NULL) {
                char was[sizeof err->msg];
                snprintf(was, sizeof was, "%s", err->msg);
                snprintf(err->msg, sizeof err->msg,
                         "partition %zu of %zu: %.120s (partitions 0..%zu are set; run it again)",
                         i, map.all, was, i - 1);
            }
        }
        dq_parts_free(&map);
    }
out:
    for (size_t i = 0; i < DQ_PARTITIONS_MAX; i++)
        free(names[i]);
    return rc;
}

/* ---- producing: enqueue -------------------------------------------------------- */

/* A limit only the library checks (PROTOCOL.md 5.2): out of range it harms no one but
 * the producer, so the script does not spend time on it. Max attempts is checked by
 * both (DQ_ATTEMPTS_MAX): past it the readers refuse the envelope. */
#define DQ_DEADLINE_MAX_MS 315360000000LL /* 10 years */

/*
 * What the library checks of one task before sending it: everything that needs no
 * server state (PROTOCOL.md 5.2 says which of these the script repeats).
 */
static int
enqueue_check(const dq_enqueue_opts *o, size_t payload_len, dq_err *err)
{
    if (o->id != NULL) {
        size_t n = strlen(o->id), digits = strspn(o->id, "0123456789");
        if (n == 0 || n > DQ_ID_MAX)
            return dq_err_set(err, DQ_EINVAL, "id: must be 1..%d bytes (got %zu)", DQ_ID_MAX, n);
        for (size_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)o->id[i];
            if (ch < 0x20 || ch == 0x7f)
                return dq_err_set(err, DQ_EINVAL, "id: byte %zu is a control character", i + 1);
        }
        if (digits == n)
            return dq_err_set(err, DQ_EINVAL,
                              "id: \"%.40s\" is all digits; those are the generated ids (add a "
                              "prefix)",
                              o->id);
    }
    if (o->at_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "at: %lld ms is before the epoch", (long long)o->at_ms);
    if (o->at_ms == 0 && o->delay_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "delay: %lld ms is negative", (long long)o->delay_ms);
    if (o->deadline_ms < 0 || o->deadline_ms > DQ_DEADLINE_MAX_MS)
        return dq_err_set(err, DQ_EINVAL,
                          "deadline: %lld ms is not in 0..%lld (10 years; 0 = none)",
                          (long long)o->deadline_ms, (long long)DQ_DEADLINE_MAX_MS);
    if (o->time_limit_ms < 0 || o->time_limit_ms > DQ_TIME_LIMIT_MAX)
        return dq_err_set(err, DQ_EINVAL,
                          "time_limit: %lld ms is not in 0..%lld (7 days; 0 = none)",
                          (long long)o->time_limit_ms, (long long)DQ_TIME_LIMIT_MAX);
    if (o->unique_for_ms < 0 || o->unique_for_ms > DQ_UNIQUE_FOR_MAX)
        return dq_err_set(err, DQ_EINVAL,
                          "unique_for: %lld ms is not in 0..%lld (7 days; 0 = none)",
                          (long long)o->unique_for_ms, (long long)DQ_UNIQUE_FOR_MAX);
    if ((o->unique_for_ms > 0 || o->replace) && o->id == NULL)
        return dq_err_set(err, DQ_EINVAL, "%s: needs a caller-chosen id",
                          o->replace ? "replace" : "unique_for");
    if (o->key != NULL) {
        size_t n = strlen(o->key);
        if (n == 0 || n > DQ_KEY_MAX)
            return dq_err_set(err, DQ_EINVAL, "key: must be 1..%d bytes (got %zu)", DQ_KEY_MAX, n);
        for (size_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)o->key[i];
            if (ch < 0x20 || ch == 0x7f)
                return dq_err_set(err, DQ_EINVAL, "key: byte %zu is a control character", i + 1);
        }
    }
    if (o->max_attempts > DQ_ATTEMPTS_MAX)
        return dq_err_set(err, DQ_EINVAL,
                          "max_attempts: %lld is over the limit of %d (-1 = unlimited)",
                          (long long)o->max_attempts, DQ_ATTEMPTS_MAX);
    if (payload_len > UINT32_MAX)
        return dq_err_set(err, DQ_EINVAL, "payload: %zu bytes is over 4 GiB", payload_len);
    return DQ_OK;
}

/* One task's envelope template and due time, as lua/enqueue.lua takes them. */
struct enq_slot {
    size_t env_at, env_len, time_at, time_len;
};

/* Appends task @o's template and time text to @b and notes where they are in @s. */
static void
enqueue_build(struct dq_buf *b, struct enq_slot *s, const dq_enqueue_opts *o, const void *payload,
              size_t len)
{
    /* max_attempts: 0 is the queue's default (nil in the template), -1 unlimited (0) */
    int64_t maxa = o->max_attempts == 0 ? -1 : o->max_attempts < 0 ? 0 : o->max_attempts;

    s->env_at = b->len;
    dq_env_template_ext(b, o->id, o->id ? strlen(o->id) : 0, maxa, o->deadline_ms, o->time_limit_ms,
                        o->unique_for_ms, o->key, o->key ? strlen(o->key) : 0, payload, len);
    s->env_len = b->len - s->env_at;
    s->time_at = b->len;
    /* capitals ask for replace (PROTOCOL.md 5.2) */
    dq_buf_printf(b, "%c%lld", o->at_ms > 0 ? (o->replace ? 'A' : 'a') : (o->replace ? 'D' : 'd'),
                  (long long)(o->at_ms > 0 ? o->at_ms : o->delay_ms));
    s->time_len = b->len - s->time_at;
}

/* One enqueue.lua call's arguments: @a points into @b, which holds the templates. */
struct enq_call {
    struct dq_buf b;
    struct dq_args a;
};

/* Builds the arguments of enqueue.lua on @count tasks into @e (freed by enqueue_free). */
static int
enqueue_args(struct enq_call *e, const dq_enqueue_opts *const *opts, const void *const *payloads,
             const size_t *lens, size_t count, dq_err *err)
{
    struct enq_slot one, *slots = count == 1 ? &one : calloc(count, sizeof *slots);
    int rc = DQ_OK;

    e->b = (struct dq_buf)DQ_BUF_INIT;
    dq_args_init(&e->a);
    if (slots == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory building %zu tasks", count);
    for (size_t i = 0; i < count; i++)
        enqueue_build(&e->b, &slots[i], opts[i], payloads[i], lens[i]);
    if (e->b.failed) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory building %zu tasks", count);
        goto out;
    }
    /* the buffer is complete: pointers into it stay put from here on */
    dq_args_i64(&e->a, (int64_t)count);
    for (size_t i = 0; i < count; i++) {
        dq_args_bytes(&e->a, e->b.data + slots[i].env_at, slots[i].env_len);
        dq_args_bytes(&e->a, e->b.data + slots[i].time_at, slots[i].time_len);
        dq_args_str(&e->a, opts[i]->id ? opts[i]->id : "");
    }
out:
    if (slots != &one)
        free(slots);
    return rc;
}

static void
enqueue_free(struct enq_call *e)
{
    dq_args_free(&e->a);
    dq_buf_free(&e->b);
}

/* Runs enqueue.lua on @count tasks. */
static int
enqueue_call(dq_client *c, const char *queue, const dq_enqueue_opts *const *opts,
             const void *const *payloads, const size_t *lens, size_t count,
             struct dq_enqueue_reply *o, dq_err *err)
{
    struct enq_call e;
    int rc = enqueue_args(&e, opts, payloads, lens, count, err);

    if (rc == DQ_OK)
        rc = dq_scripts_run(c, DQ_SCRIPT_ENQUEUE, queue, &e.a, dq_reply_enqueue, o, err);
    enqueue_free(&e);
    return rc;
}

/* The partition of a task to enqueue into @queue with map @p: by its caller id, else the
 * client's round robin (PROTOCOL.md 14). */
static size_t
enqueue_part(dq_client *c, const char *queue, const struct dq_parts *p, const dq_enqueue_opts *o)
{
    if (p->n <= 1)
        return 0;
    if (o->id != NULL)
        return dq_parts_route_id(p, o->id, strlen(o->id));
    return dq_parts_next(c, queue, p);
}

int
dq_enqueue(dq_client *c, const char *queue, const dq_enqueue_opts *opts, const void *payload,
           size_t payload_len, dq_enqueued *out, dq_err *err)
{
    static const dq_enqueue_opts none;
    struct dq_enqueue_reply o = {out, 1};
    const struct dq_parts *p;
    int rc;

    if (opts == NULL)
        opts = &none;
    memset(out, 0, sizeof *out);
    rc = enqueue_check(opts, payload_len, err);
    if (rc != DQ_OK)
        return rc;
    /* the cached map: no command of its own but once a second (parts.h) */
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    rc = enqueue_call(c, p->names[enqueue_part(c, queue, p, opts)], &opts, &payload, &payload_len,
                      1, &o, err);
    if (rc == DQ_OK || rc == DQ_EREPLICAS) /* made, only not confirmed: keep the id */
        dq_registry_note(c, queue);        /* producers make a queue discoverable */
    else
        memset(out, 0, sizeof *out);
    return rc;
}

/*
 * The script names a bad task by its place in the call ("task K: field: ..."); the caller
 * knows its items by index in the whole batch. Rewrites the message to "items[I]: ..."
 * and says which items were not added.
 */
static void
batch_error(dq_err *err, size_t base, size_t count)
{
    char rest[sizeof err->msg];
    unsigned long k = 0;
    int used = 0;

    if (err == NULL)
        return;
    snprintf(rest, sizeof rest, "%s", err->msg);
    if (sscanf(rest, "task %lu: %n", &k, &used) == 1 && used > 0 && k >= 1 && k <= count)
        snprintf(err->msg, sizeof err->msg, "items[%zu]: %.160s (items %zu..%zu not added)",
                 base + k - 1, rest + used, base, base + count - 1);
    else
        snprintf(err->msg, sizeof err->msg, "items %zu..%zu: %.160s (not added)", base,
                 base + count - 1, rest);
}

/*
 * dq_enqueue_batch of a partitioned queue: the items grouped by partition (keeping their
 * order within one), one call per DQ_ENQUEUE_CHUNK items of a partition, all of them sent
 * pipelined (dq_scripts_run_multi; a cluster client pipelines per master). Each call
 * is all or nothing; the items of a failed one keep an empty out[].id.
 */
static int
enqueue_batch_parts(dq_client *c, const char *queue, const struct dq_parts *p,
                    const dq_enqueue_item *items, size_t n, dq_enqueued *out, dq_err *err)
{
    size_t first[DQ_PARTITIONS_MAX + 1], ncalls = 0, most = p->all + n / DQ_ENQUEUE_CHUNK + 1;
    const dq_enqueue_opts **opts = malloc(DQ_ENQUEUE_CHUNK * sizeof *opts);
    const void **payloads = malloc(DQ_ENQUEUE_CHUNK * sizeof *payloads);
    size_t *lens = malloc(DQ_ENQUEUE_CHUNK * sizeof *lens);
    size_t *part = malloc(n * sizeof *part), *order = malloc(n * sizeof *order);
    size_t *at = calloc(most, sizeof *at); /* call k's items: order[at[k] ...] */
    dq_enqueued *got = calloc(n, sizeof *got);
    struct enq_call *calls = calloc(most, sizeof *calls);
    struct dq_enqueue_reply *replies = calloc(most, sizeof *replies);
    const struct dq_args **args = calloc(most, sizeof *args);
    const char **names = calloc(most, sizeof *names);
    int *rcs = calloc(most, sizeof *rcs), rc = DQ_OK;
    dq_err *errs = calloc(most, sizeof *errs);
    bool any = false;

    if (opts == NULL || payloads == NULL || lens == NULL || part == NULL || order == NULL ||
        at == NULL || got == NULL || calls == NULL || replies == NULL || args == NULL ||
        names == NULL || rcs == NULL || errs == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory splitting %zu items by partition", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        part[i] = enqueue_part(c, queue, p, &items[i].opts);
    dq_parts_group(part, n, p->all, order, first);
    for (size_t q = 0; q < p->all; q++) {
        for (size_t base = first[q]; base < first[q + 1]; base += DQ_ENQUEUE_CHUNK) {
            size_t count = first[q + 1] - base;
            count = count < DQ_ENQUEUE_CHUNK ? count : DQ_ENQUEUE_CHUNK;
            for (size_t k = 0; k < count; k++) {
                const dq_enqueue_item *it = &items[order[base + k]];
                opts[k] = &it->opts;
                payloads[k] = it->payload;
                lens[k] = it->payload_len;
            }
            rc = enqueue_args(&calls[ncalls], opts, payloads, lens, count, err);
            at[ncalls] = base;
            replies[ncalls] = (struct dq_enqueue_reply){got + base, count};
            args[ncalls] = &calls[ncalls].a;
            names[ncalls] = p->names[q];
            ncalls++;
            if (rc != DQ_OK)
                goto out;
        }
    }
    rc = dq_scripts_run_multi(c, DQ_SCRIPT_ENQUEUE, names, args, ncalls, dq_reply_enqueue, replies,
                              sizeof *replies, 16, rcs, errs, err);
    if (rc != DQ_OK)
        goto out;
    for (size_t k = 0; k < ncalls; k++) {
        size_t count = replies[k].n;
        unsigned long bad = 0;
        int used = 0;
        if (rcs[k] == DQ_OK || rcs[k] == DQ_EREPLICAS) { /* the latter: made, not confirmed */
            for (size_t j = 0; j < count; j++)
                out[order[at[k] + j]] = got[at[k] + j];
            any = true;
        }
        if (rcs[k] == DQ_OK || rc != DQ_OK) /* the first failure is the one reported */
            continue;
        rc = rcs[k];
        if (err == NULL)
            continue;
        if (rc == DQ_EREPLICAS)
            *err = errs[k];
        else if (sscanf(errs[k].msg, "task %lu: %n", &bad, &used) == 1 && used > 0 && bad >= 1 &&
                 bad <= count)
            dq_err_set(err, rc, "items[%zu]: %.150s (items with no id were not added)",
                       order[at[k] + bad - 1], errs[k].msg + used);
        else
            dq_err_set(err, rc, "partition %s: %.160s (items with no id were not added)", names[k],
                       errs[k].msg);
    }
    if (any)
        dq_registry_note(c, queue);
out:
    for (size_t k = 0; calls != NULL && k < ncalls; k++)
        enqueue_free(&calls[k]);
    free(opts);
    free(payloads);
    free(lens);
    free(part);
    free(order);
    free(at);
    free(got);
    free(calls);
    free(replies);
    free(args);
    free(names);
    free(rcs);
    free(errs);
    return rc;
}

int
dq_enqueue_batch(dq_client *c, const char *queue, const dq_enqueue_item *items, size_t n,
                 dq_enqueued *out, dq_err *err)
{
    const dq_enqueue_opts *opts[DQ_ENQUEUE_CHUNK];
    const void *payloads[DQ_ENQUEUE_CHUNK];
    size_t lens[DQ_ENQUEUE_CHUNK];
    const struct dq_parts *p;
    int rc = DQ_OK;

    if (n == 0)
        return dq_err_set(err, DQ_EINVAL, "n: 0 items; at least 1");
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        dq_err e1;
        rc = enqueue_check(&items[i].opts, items[i].payload_len, &e1);
        if (rc != DQ_OK)
            return dq_err_set(err, rc, "items[%zu]: %.200s (nothing added)", i, e1.msg);
    }
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->n > 1)
        return enqueue_batch_parts(c, queue, p, items, n, out, err);
    for (size_t base = 0; base < n && rc == DQ_OK; base += DQ_ENQUEUE_CHUNK) {
        size_t count = n - base < DQ_ENQUEUE_CHUNK ? n - base : DQ_ENQUEUE_CHUNK;
        struct dq_enqueue_reply o = {out + base, count};

        for (size_t i = 0; i < count; i++) {
            opts[i] = &items[base + i].opts;
            payloads[i] = items[base + i].payload;
            lens[i] = items[base + i].payload_len;
        }
        rc = enqueue_call(c, queue, opts, payloads, lens, count, &o, err);
        if (rc == DQ_OK || rc == DQ_EREPLICAS) { /* the latter ends the loop, ids kept */
            dq_registry_note(c, queue);          /* once per client: later chunks find it noted */
        } else {
            memset(out + base, 0, count * sizeof *out);
            if (rc == DQ_EINVAL)
                batch_error(err, base, count);
        }
    }
    return rc;
}

/* ---- consuming: claim, then ack, retry, fail, release; extend, reap ------------ */

int
dq_claim(dq_client *c, const char *queue, unsigned batch, int64_t lease_ms, const char *worker,
         dq_claimed *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    out->next_due_ms = -1;
    dq_args_init(&a);
    dq_args_i64(&a, batch);
    dq_args_i64(&a, lease_ms);
    dq_args_str(&a, worker ? worker : dq_client_who(c));
    dq_args_i64(&a, 0);                                  /* ahead */
    dq_args_str(&a, worker ? worker : dq_client_who(c)); /* who */
    dq_args_str(&a, "d"); /* the reply says whether acks keep done tasks */
    rc = dq_scripts_run(c, DQ_SCRIPT_CLAIM, queue, &a, dq_reply_claim, out, err);
    dq_args_free(&a);
    if (rc == DQ_OK) {
        dq_registry_note(c, queue); /* workers make a queue discoverable */
    } else {
        dq_claimed_free(out);
        out->next_due_ms = -1;
    }
    /* Claimed tasks' lease is now + lease; fill it in for the caller. */
    for (size_t i = 0; i < out->n; i++)
        out->tasks[i].lease_ms = out->now_ms + lease_ms;
    return rc;
}

int
dq_claim_settle(dq_client *c, const char *queue, dq_settle *results, size_t n, unsigned batch,
                int64_t lease_ms, int64_t ahead_ms, const char *worker, const char *who,
                dq_claimed *out, dq_err *err)
{
    static const char codes[] = {
        [DQ_DONE] = 'a', [DQ_RETRY] = 'r', [DQ_FAILED] = 'f', [DQ_RELEASE] = 'l'};
    char(*tk)[DQ_TASK_KEY_MAX + 1] = NULL;
    struct dq_claim_settle_reply cs = {out, results, n};
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    out->next_due_ms = -1;
    if (n > DQ_CALL_MAX || batch > DQ_CALL_MAX)
        return dq_err_set(err, DQ_EINVAL, "claim: %zu results and batch %u; each at most %d", n,
                          batch, DQ_CALL_MAX);
    for (size_t i = 0; i < n; i++) {
        const dq_task *t = results[i].task;
        if (t == NULL || t->id == NULL || t->undecodable)
            return dq_err_set(err, DQ_EINVAL, "results[%zu]: not a claimed task", i);
        if ((unsigned)results[i].outcome > DQ_RELEASE)
            return dq_err_set(err, DQ_EINVAL, "results[%zu]: outcome %d is not a dq_outcome", i,
                              (int)results[i].outcome);
    }
    if (n > 0 && (tk = malloc(n * sizeof *tk)) == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory building %zu results", n);
    if (worker == NULL)
        worker = dq_client_who(c);
    dq_args_init(&a);
    dq_args_i64(&a, batch);
    dq_args_i64(&a, lease_ms);
    dq_args_str(&a, worker);
    dq_args_i64(&a, ahead_ms);
    dq_args_str(&a, who ? who : worker);
    for (size_t i = 0; i < n; i++) {
        const dq_settle *r = &results[i];
        dq_task_key(r->task, tk[i], sizeof tk[i]);
        dq_args_bytes(&a, &codes[r->outcome], 1);
        dq_args_str(&a, tk[i]);
        dq_args_i64(&a, r->task->attempt);
        dq_args_i64(&a, r->task->claimed_ms); /* with the attempt: the lease's fence */
        dq_args_str(&a, r->outcome == DQ_RETRY || r->outcome == DQ_FAILED
                            ? (r->message ? r->message : "")
                            : "");
        if (r->outcome == DQ_FAILED && r->trace != NULL) /* a handler's stderr: any bytes */
            dq_args_bytes(&a, r->trace, dq_slen(r->trace, r->trace_len));
        else
            dq_args_str(&a, "");
    }
    dq_args_str(&a, "d"); /* the reply says whether acks keep done tasks */
    rc = dq_scripts_run(c, DQ_SCRIPT_CLAIM, queue, &a, dq_reply_claim_settle, &cs, err);
    dq_args_free(&a);
    free(tk);
    if (rc == DQ_OK) {
        if (batch > 0)
            dq_registry_note(c, queue); /* workers make a queue discoverable */
    } else {
        dq_claimed_free(out);
        out->next_due_ms = -1;
    }
    for (size_t i = 0; i < out->n; i++)
        out->tasks[i].lease_ms = out->now_ms + lease_ms;
    return rc;
}

/* Runs one of ack / retry / fail / release: they share (task key, attempt, claim time,
 * ...) arguments. */
static int
finish(dq_client *c, enum dq_script_id id, const char *queue, const dq_task *t,
       const char *const *extra, size_t nextra, dq_parse_fn parse, void *out, dq_err *err)
{
    char tk[DQ_TASK_KEY_MAX + 1];
    struct dq_args a;
    int rc;

    if (t == NULL || t->id == NULL || t->undecodable)
        return dq_err_set(err, DQ_EINVAL, "task: not a claimed task");
    dq_task_key(t, tk, sizeof tk);
    dq_args_init(&a);
    dq_args_str(&a, tk);
    dq_args_i64(&a, t->attempt);
    dq_args_i64(&a, t->claimed_ms); /* with the attempt: the lease's fencing token */
    for (size_t i = 0; i < nextra; i++)
        dq_args_str(&a, extra[i] ? extra[i] : "");
    rc = dq_scripts_run(c, id, queue, &a, parse, out, err);
    dq_args_free(&a);
    return rc;
}

int
dq_ack(dq_client *c, const char *queue, const dq_task *t, dq_err *err)
{
    /* the claim's done flag: an ack of a queue without done retention reads no config */
    static const char *const keep[] = {"1"};

    return finish(c, DQ_SCRIPT_ACK, queue, t, t != NULL && t->keep_done ? keep : NULL,
                  t != NULL && t->keep_done ? 1 : 0, NULL, NULL, err);
}

int
dq_ack_many(dq_client *c, const char *queue, const dq_task *const *tasks, size_t n, int *rcs,
            dq_err *errs, dq_err *err)
{
    struct dq_ack_reply am = {n, rcs, errs};
    struct dq_args a;
    char(*tk)[DQ_TASK_KEY_MAX + 1];
    bool keep = false;
    int rc;

    if (n == 0 || n > DQ_CALL_MAX)
        return dq_err_set(err, DQ_EINVAL, "ack: %zu tasks is not 1..%d", n, DQ_CALL_MAX);
    for (size_t i = 0; i < n; i++) {
        const dq_task *t = tasks[i];
        if (t == NULL || t->id == NULL || t->undecodable)
            return dq_err_set(err, DQ_EINVAL, "tasks[%zu]: not a claimed task", i);
    }
    if (n == 1) { /* the script answers one task with 1 or an error reply */
        dq_err one = {0};
        rc = dq_ack(c, queue, tasks[0], &one);
        if (rc != DQ_OK && rc != DQ_ELEASE && rc != DQ_EPROTO) {
            if (err != NULL)
                *err = one;
            return rc;
        }
        rcs[0] = rc;
        if (errs != NULL)
            errs[0] = one;
        return DQ_OK;
    }
    /* the arguments point into these keys until the call returns */
    if ((tk = malloc(n * sizeof *tk)) == NULL)
        return dq_err_set(err, DQ_ENOMEM, "ack: out of memory");
    dq_args_init(&a);
    for (size_t i = 0; i < n; i++) {
        dq_task_key(tasks[i], tk[i], sizeof tk[i]);
        dq_args_str(&a, tk[i]);
        dq_args_i64(&a, tasks[i]->attempt);
        dq_args_i64(&a, tasks[i]->claimed_ms);
        keep = keep || tasks[i]->keep_done;
    }
    if (keep)
        dq_args_str(&a, "1"); /* dq_ack's done flag */
    rc = dq_scripts_run(c, DQ_SCRIPT_ACK, queue, &a, dq_reply_ack_many, &am, err);
    dq_args_free(&a);
    free(tk);
    return rc;
}

int
dq_retry(dq_client *c, const char *queue, const dq_task *t, const char *message, dq_retried *out,
         dq_err *err)
{
    const char *extra[2] = {message, dq_client_who(c)};
    dq_retried tmp;

    if (out == NULL)
        out = &tmp;
    memset(out, 0, sizeof *out);
    return finish(c, DQ_SCRIPT_RETRY, queue, t, extra, 2, dq_reply_retry, out, err);
}

int
dq_fail(dq_client *c, const char *queue, const dq_task *t, const char *message, const char *trace,
        dq_err *err)
{
    const char *extra[3] = {message, trace, dq_client_who(c)};

    return finish(c, DQ_SCRIPT_FAIL, queue, t, extra, 3, NULL, NULL, err);
}

int
dq_release(dq_client *c, const char *queue, const dq_task *t, dq_err *err)
{
    return finish(c, DQ_SCRIPT_RELEASE, queue, t, NULL, 0, NULL, NULL, err);
}

int
dq_extend(dq_client *c, const char *queue, const dq_task *const *tasks, size_t n, int64_t lease_ms,
          bool *lost, dq_err *err)
{
    struct dq_extend_reply es = {lost, n};
    struct dq_args a;
    struct {
        char tk[DQ_TASK_KEY_MAX + 1];
        char attempt[16];
        char claimed[24];
    } * tks;
    int rc;

    if (n == 0 || n > DQ_CALL_MAX)
        return dq_err_set(err, DQ_EINVAL, "extend: %zu tasks; 1..%d per call", n, DQ_CALL_MAX);
    for (size_t i = 0; i < n; i++) {
        if (tasks[i] == NULL || tasks[i]->id == NULL || tasks[i]->undecodable)
            return dq_err_set(err, DQ_EINVAL, "extend: task %zu is not a claimed task", i + 1);
    }
    tks = malloc(n * sizeof *tks);
    if (tks == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory");
    dq_args_init(&a);
    dq_args_i64(&a, lease_ms);
    for (size_t i = 0; i < n; i++) {
        /* formatted here: dq_args_i64 keeps at most 16 numbers */
        dq_task_key(tasks[i], tks[i].tk, sizeof tks[i].tk);
        snprintf(tks[i].attempt, sizeof tks[i].attempt, "%u", tasks[i]->attempt);
        snprintf(tks[i].claimed, sizeof tks[i].claimed, "%lld", (long long)tasks[i]->claimed_ms);
        dq_args_str(&a, tks[i].tk);
        dq_args_str(&a, tks[i].attempt);
        dq_args_str(&a, tks[i].claimed);
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_EXTEND, queue, &a, dq_reply_extend, &es, err);
    dq_args_free(&a);
    free(tks);
    return rc;
}

int
dq_reap(dq_client *c, const char *queue, unsigned limit, dq_reaped *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    dq_args_i64(&a, limit);
    dq_args_str(&a, dq_client_who(c));
    rc = dq_scripts_run(c, DQ_SCRIPT_REAP, queue, &a, dq_reply_reap, out, err);
    dq_args_free(&a);
    return rc;
}

/* ---- operating: requeue, run now, drop ----------------------------------------- */

static int
check_ids(const char *const *ids, size_t n, dq_err *err)
{
    if (n == 0 || n > DQ_CALL_MAX)
        return dq_err_set(err, DQ_EINVAL, "ids: %zu given; 1..%d per call", n, DQ_CALL_MAX);
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == NULL || ids[i][0] == '\0' || strlen(ids[i]) > DQ_ID_MAX)
            return dq_err_set(err, DQ_EINVAL, "ids: id %zu is empty or longer than %d bytes", i + 1,
                              DQ_ID_MAX);
    }
    return DQ_OK;
}

/*
 * The partition of each of @n ids of a partitioned queue (map @p) into part[i]: its home,
 * or where find.lua finds it when the map has draining partitions or was resized. With
 * @found, each id is looked up and its task kept there (drop needs the bytes).
 */
static int
ids_parts(dq_client *c, const struct dq_parts *p, const char *queue, const char *const *ids,
          size_t n, size_t *part, dq_task *found, dq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        dq_task t;
        int rc;
        part[i] = id_home(p, ids[i]);
        if (found == NULL && p->all == p->n && !p->resized)
            continue;
        rc = find_parts(c, p, queue, ids[i], found ? &found[i] : &t, &part[i], err);
        if (found == NULL)
            dq_task_clear(&t);
        if (rc != DQ_OK && rc != DQ_ENOTFOUND)
            return rc;
    }
    return DQ_OK;
}

/*
 * What the scripts refuse a whole call for, checked across partitions before any is sent,
 * so that an action on ids of several partitions stays all or nothing (as each script is;
 * a change between this look and the calls is still refused by the script of its
 * partition): for @requeue ids not failed, else (drop) ids in flight or found nowhere.
 */
static int
ids_precheck(const char *const *ids, size_t n, const dq_task *found, bool requeue, dq_err *err)
{
    /* in the scripts' order: drop refuses ids in flight first, then those found nowhere */
    for (int pass = 0; pass < (requeue ? 1 : 2); pass++) {
        char list[200] = "";
        size_t used = 0, bad = 0;
        for (size_t i = 0; i < n; i++) {
            dq_state s = found[i].state;
            bool refused = requeue     ? s != DQ_STATE_FAILED
                           : pass == 0 ? s == DQ_STATE_INFLIGHT
                                       : s == DQ_STATE_NONE || s == DQ_STATE_DONE;
            if (refused && bad++ < 20 && used < sizeof list - 1)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? "," : "",
                                         ids[i]);
        }
        if (bad == 0)
            continue;
        if (used >= sizeof list)
            snprintf(list + sizeof list - 4, 4, "...");
        if (requeue)
            return dq_err_set(err, DQ_ENOTFOUND, "not in the failed set: %s", list);
        if (pass == 0)
            return dq_err_set(err, DQ_EINVAL, "in flight, cannot be dropped while running: %s",
                              list);
        return dq_err_set(err, DQ_ENOTFOUND, "not found (failed or scheduled): %s", list);
    }
    return DQ_OK;
}

/* requeue.lua "ids" on partition @name. */
static int
requeue_ids(dq_client *c, const char *name, const char *const *ids, const size_t *pick, size_t n,
            int64_t delay_ms, size_t *moved, dq_err *err)
{
    struct dq_args a;
    size_t m = 0;
    int rc;

    dq_args_init(&a);
    dq_args_str(&a, "ids");
    dq_args_i64(&a, delay_ms);
    dq_args_str(&a, dq_client_who(c));
    for (size_t i = 0; i < n; i++)
        dq_args_str(&a, ids[pick ? pick[i] : i]);
    rc = dq_scripts_run(c, DQ_SCRIPT_REQUEUE, name, &a, dq_reply_requeue_ids, &m, err);
    dq_args_free(&a);
    *moved += m;
    return rc;
}

int
dq_requeue(dq_client *c, const char *queue, const char *const *ids, size_t n, int64_t delay_ms,
           size_t *moved, dq_err *err)
{
    size_t first[DQ_PARTITIONS_MAX + 1], *part = NULL, *order = NULL;
    const struct dq_parts *p;
    dq_task *found = NULL;
    size_t tmp;
    int rc;

    if (moved == NULL)
        moved = &tmp;
    *moved = 0;
    rc = check_ids(ids, n, err);
    if (rc != DQ_OK)
        return rc;
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all <= 1)
        return requeue_ids(c, queue, ids, NULL, n, delay_ms, moved, err);
    /* one call per partition holding some of them */
    part = malloc(n * sizeof *part);
    order = malloc(n * sizeof *order);
    found = calloc(n, sizeof *found);
    if (part == NULL || order == NULL || found == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = ids_parts(c, p, queue, ids, n, part, found, err)) != DQ_OK ||
        (rc = ids_precheck(ids, n, found, true, err)) != DQ_OK)
        goto out;
    dq_parts_group(part, n, p->all, order, first);
    for (size_t q = 0; q < p->all && rc == DQ_OK; q++)
        if (first[q + 1] > first[q])
            rc = requeue_ids(c, p->names[q], ids, order + first[q], first[q + 1] - first[q],
                             delay_ms, moved, err);
out:
    for (size_t i = 0; found != NULL && i < n; i++)
        dq_task_clear(&found[i]);
    free(found);
    free(part);
    free(order);
    return rc;
}

/* fix and requeue */
int
dq_requeue_replace(dq_client *c, const char *queue, const dq_task *t, const void *payload,
                   size_t len, int64_t delay_ms, dq_err *err)
{
    char name[DQ_QUEUE_NAME_MAX + 16];
    struct dq_args a;
    size_t moved = 0;
    int rc;

    if (t == NULL || t->id == NULL || t->state != DQ_STATE_FAILED || t->raw == NULL)
        return dq_err_set(err, DQ_EINVAL, "replace: not a failed task as read from Redis");
    if (t->undecodable)
        return dq_err_set(err, DQ_EINVAL, "undecodable, can only be dropped: %s", t->id);
    if (delay_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "delay: %lld ms is negative", (long long)delay_ms);
    if ((rc = where_is(c, queue, t->id, name, sizeof name, err)) != DQ_OK)
        return rc;
    dq_args_init(&a);
    dq_args_str(&a, t->id);
    dq_args_bytes(&a, t->raw, t->raw_len);
    dq_args_i64(&a, t->failed_ms);
    dq_args_bytes(&a, len > 0 ? payload : "", len);
    dq_args_i64(&a, delay_ms);
    dq_args_str(&a, dq_client_who(c));
    rc = dq_scripts_run(c, DQ_SCRIPT_REPLACE, name, &a, dq_reply_requeue_ids, &moved, err);
    dq_args_free(&a);
    return rc;
}

int
dq_run_now(dq_client *c, const char *queue, const dq_task *t, dq_err *err)
{
    char name[DQ_QUEUE_NAME_MAX + 16];
    struct dq_args a;
    int rc;

    if (t == NULL || t->id == NULL || t->undecodable || t->state != DQ_STATE_SCHEDULED)
        return dq_err_set(err, DQ_EINVAL, "run now: not a scheduled task");
    if ((rc = where_is(c, queue, t->id, name, sizeof name, err)) != DQ_OK)
        return rc;
    dq_args_init(&a);
    dq_args_str(&a, "now");
    dq_args_i64(&a, 0);
    dq_args_str(&a, dq_client_who(c));
    dq_args_str(&a, t->id);
    if (t->custom_id)
        dq_args_str(&a, "");
    else
        dq_args_bytes(&a, t->raw, t->raw_len);
    rc = dq_scripts_run(c, DQ_SCRIPT_REQUEUE, name, &a, NULL, NULL, err);
    dq_args_free(&a);
    return rc;
}

int
dq_drop(dq_client *c, const char *queue, const char *const *ids, size_t n, size_t *dropped,
        dq_err *err)
{
    size_t first[DQ_PARTITIONS_MAX + 1], *part = NULL, *order = NULL, tmp;
    const struct dq_parts *p;
    struct dq_args a;
    dq_task *found = NULL;
    int rc;

    if (dropped == NULL)
        dropped = &tmp;
    *dropped = 0;
    rc = check_ids(ids, n, err);
    if (rc != DQ_OK)
        return rc;
    /* A scheduled task with a generated id, and an undecodable scheduled member
     * ("undecodable:<sha1>"), are named by their bytes, which only a scan can find; look
     * those up first. So is a parked task of any id (PROTOCOL.md 4.10): its envelope names
     * the key whose kq holds it, so every id is looked up (a failed or scheduled
     * caller-chosen id: one O(1) find call more each). The script re-checks everything
     * atomically. */
    found = calloc(n, sizeof *found);
    part = calloc(n, sizeof *part);
    order = malloc(n * sizeof *order);
    if (found == NULL || part == NULL || order == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        goto out;
    if (p->all > 1) {
        /* each id's partition (PROTOCOL.md 14), found with its bytes */
        if ((rc = ids_parts(c, p, queue, ids, n, part, found, err)) != DQ_OK ||
            (rc = ids_precheck(ids, n, found, false, err)) != DQ_OK)
            goto out;
    } else {
        for (size_t i = 0; i < n; i++) {
            dq_err ferr;
            rc = find_in(c, queue, queue, ids[i], &found[i], &ferr);
            if (rc != DQ_OK && rc != DQ_ENOTFOUND) {
                if (err != NULL)
                    *err = ferr;
                goto out;
            }
        }
    }
    rc = DQ_OK;
    dq_parts_group(part, n, p->all, order, first);
    for (size_t q = 0; q < p->all && rc == DQ_OK; q++) {
        size_t m = 0;
        if (first[q + 1] == first[q])
            continue;
        dq_args_init(&a);
        dq_args_str(&a, "ids");
        dq_args_str(&a, dq_client_who(c));
        for (size_t j = first[q]; j < first[q + 1]; j++) {
            const dq_task *t = &found[order[j]];
            dq_args_str(&a, ids[order[j]]);
            if (t->state == DQ_STATE_SCHEDULED || t->state == DQ_STATE_PARKED)
                dq_args_bytes(&a, t->raw, t->raw_len);
            else
                dq_args_str(&a, "");
        }
        rc = dq_scripts_run(c, DQ_SCRIPT_DROP, p->names[q], &a, dq_reply_drop_ids, &m, err);
        dq_args_free(&a);
        *dropped += m;
    }
out:
    for (size_t i = 0; found != NULL && i < n; i++)
        dq_task_clear(&found[i]);
    free(found);
    free(part);
    free(order);
    return rc;
}

/* ---- inspecting: stats, page, search, find, audit ------------------------------ */

static int
view_check(dq_view view, dq_err *err)
{
    if ((unsigned)view > DQ_VIEW_PARKED)
        return dq_err_set(err, DQ_EINVAL, "view: %d is not a view", (int)view);
    return DQ_OK;
}

int
dq_partitions_get(dq_client *c, const char *queue, size_t *routed, size_t *all, dq_err *err)
{
    const struct dq_parts *p;
    int rc = dq_parts_peek(c, queue, &p, err);

    *routed = *all = 0;
    if (rc != DQ_OK)
        return rc;
    *routed = p->n;
    *all = p->all;
    return DQ_OK;
}

int
dq_partition_name(dq_client *c, const char *queue, size_t i, char *buf, size_t size, dq_err *err)
{
    const struct dq_parts *p;
    int rc = dq_parts_peek(c, queue, &p, err);

    if (rc != DQ_OK)
        return rc;
    if (i >= p->all)
        return dq_err_set(err, DQ_EINVAL, "partition: %zu is not below %zu", i, p->all);
    snprintf(buf, size, "%s", p->names[i]);
    return DQ_OK;
}

int
dq_stats_get(dq_client *c, const char *queue, dq_stats *out, dq_err *err)
{
    size_t n;

    return dq_stats_get_each(c, queue, out, NULL, 0, &n, err);
}

int
dq_stats_get_each(dq_client *c, const char *queue, dq_stats *out, dq_stats *mine, size_t size,
                  size_t *n, dq_err *err)
{
    const struct dq_parts *p;
    dq_stats *each = NULL;
    dq_err *errs = NULL;
    struct dq_args a;
    int *rcs = NULL, rc;
    dq_stats first;
    bool have_first = false; /* partition 0's reply, from the try as one partition */

    memset(out, 0, sizeof *out);
    *n = 0;
    dq_args_init(&a);
    /* a queue of one partition, as far as this client knows: the stats reply says
     * whether it has a map, so that needs no read of its own (PROTOCOL.md 14.3) */
    if (dq_parts_maybe_single(c, queue)) {
        if ((rc = dq_queue_run_name_check(queue, err)) != DQ_OK)
            goto out;
        rc = dq_scripts_run(c, DQ_SCRIPT_STATS, queue, &a, dq_reply_stats, out, err);
        if (rc != DQ_OK || out->parts_map <= 0) {
            if (rc == DQ_OK && (rc = dq_parts_confirm_single(c, queue, err)) == DQ_OK) {
                *n = 1;
                if (size > 0)
                    mine[0] = *out;
            }
            if (rc != DQ_OK)
                memset(out, 0, sizeof *out);
            goto out;
        }
        /* it has a map: read it, and ask the other partitions */
        dq_parts_forget(c, queue);
        first = *out;
        have_first = true;
        memset(out, 0, sizeof *out);
    }
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        goto out;
    if (p->all <= 1) { /* a map of one partition (written by hand), or a partition */
        if (have_first)
            *out = first;
        else
            rc = dq_scripts_run(c, DQ_SCRIPT_STATS, queue, &a, dq_reply_stats, out, err);
        if (rc == DQ_OK) {
            *n = 1;
            if (size > 0)
                mine[0] = *out;
        }
        goto out;
    }
    /* one call per partition, pipelined on one node (dq_scripts_run_each), then summed */
    each = calloc(p->all, sizeof *each);
    errs = calloc(p->all, sizeof *errs);
    rcs = calloc(p->all, sizeof *rcs);
    if (each == NULL || errs == NULL || rcs == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory reading %zu partitions", p->all);
        goto out;
    }
    if (have_first) {
        each[0] = first;
        rcs[0] = DQ_OK;
    }
    size_t from = have_first ? 1 : 0;
    rc = dq_scripts_run_each(c, DQ_SCRIPT_STATS, (const char *const *)p->names + from,
                             p->all - from, &a, dq_reply_stats, each + from, sizeof *each,
                             p->all - from, rcs + from, errs + from, err);
    for (size_t i = 0; rc == DQ_OK && i < p->all; i++) {
        if (rcs[i] != DQ_OK) {
            rc = dq_err_set(err, rcs[i], "partition %zu: %.200s", i, errs[i].msg);
            break;
        }
        if (i == 0)
            *out = each[0];
        else
            dq_parts_stats_add(out, &each[i]);
    }
    if (rc != DQ_OK) {
        memset(out, 0, sizeof *out);
    } else {
        *n = p->all;
        if (size > 0)
            memcpy(mine, each, (size < p->all ? size : p->all) * sizeof *each);
    }
out:
    dq_args_free(&a);
    free(each);
    free(errs);
    free(rcs);
    return rc;
}

int
dq_page_get(dq_client *c, const char *queue, dq_view view, size_t offset, size_t limit,
            dq_page *out, dq_err *err)
{
    struct dq_page_reply ps = {out, view};
    const struct dq_parts *p;
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = view_check(view, err)) != DQ_OK || (rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all > 1) /* the logical queue's page, merged (PROTOCOL.md 14.7) */
        return dq_pages_at(c, queue, view, NULL, offset, limit, out, err);
    dq_args_init(&a);
    dq_args_str(&a, dq_view_name(view));
    dq_args_i64(&a, (int64_t)offset);
    dq_args_i64(&a, (int64_t)limit);
    rc = dq_scripts_run(c, DQ_SCRIPT_PAGE, queue, &a, dq_reply_page, &ps, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_page_free(out);
    return rc;
}

int
dq_search_step(dq_client *c, const char *queue, dq_view view, const char *needle, size_t most,
               dq_search *cur, dq_page *found, dq_err *err)
{
    struct dq_search_reply ss = {cur, found, view};
    struct dq_args a;
    int rc;

    if (cur->done)
        return DQ_OK;
    if ((rc = view_check(view, err)) != DQ_OK)
        return rc;
    if (needle == NULL || needle[0] == '\0' || strlen(needle) > DQ_NEEDLE_MAX)
        return dq_err_set(err, DQ_EINVAL, "search: the text must be 1..%d bytes", DQ_NEEDLE_MAX);
    dq_args_init(&a);
    dq_args_str(&a, dq_view_name(view));
    dq_args_str(&a, needle);
    dq_args_i64(&a, cur->cursor);
    dq_args_i64(&a, DQ_STEP_MAX);
    dq_args_i64(&a, (int64_t)(most < 1 ? 1 : most > DQ_CALL_MAX ? DQ_CALL_MAX : most));
    rc = dq_scripts_run(c, DQ_SCRIPT_SEARCH, queue, &a, dq_reply_search, &ss, err);
    dq_args_free(&a);
    return rc;
}

/* find.lua on partition (or queue) @name; messages name the logical @queue. */
static int
find_in(dq_client *c, const char *name, const char *queue, const char *id, dq_task *out,
        dq_err *err)
{
    struct dq_find_reply fs = {.out = out, .cursor = DQ_BUF_INIT, .unique_until_ms = -1};
    int rc;

    memset(out, 0, sizeof *out);
    if (id == NULL || id[0] == '\0' || strlen(id) > DQ_ID_MAX)
        return dq_err_set(err, DQ_EINVAL, "id: must be 1..%d bytes", DQ_ID_MAX);
    do {
        struct dq_args a;
        fs.more = false;
        dq_args_init(&a);
        dq_args_str(&a, id);
        dq_args_bytes(&a, fs.cursor.len ? fs.cursor.data : "", fs.cursor.len);
        dq_args_str(&a, fs.cursor_score);
        rc = dq_scripts_run(c, DQ_SCRIPT_FIND, name, &a, dq_reply_find, &fs, err);
        dq_args_free(&a);
    } while (rc == DQ_OK && fs.more);
    dq_buf_free(&fs.cursor);
    if (rc != DQ_OK) {
        dq_task_clear(out);
        return rc;
    }
    if (!fs.found && fs.unique_until_ms >= 0) {
        char until[DQ_TIME_BUFSZ], left[DQ_DUR_BUFSZ];
        dq_time_format(until, sizeof until, fs.unique_until_ms);
        dq_dur_format(left, sizeof left,
                      fs.unique_until_ms > fs.now_ms ? fs.unique_until_ms - fs.now_ms : 0);
        return dq_err_set(err, DQ_ENOTFOUND,
                          "task %s: not found in queue %s; it finished within its unique-for "
                          "window: the id is refused until %s (%s left)",
                          id, queue, until, left);
    }
    if (!fs.found)
        return dq_err_set(err, DQ_ENOTFOUND, "task %s: not found in queue %s", id, queue);
    return DQ_OK;
}

/* The partition task @id would be in: a generated id's seq span, a caller id's hash. */
static size_t
id_home(const struct dq_parts *p, const char *id)
{
    size_t len = strlen(id);

    if (strspn(id, "0123456789") == len)
        return dq_parts_of_seq(p, strtoll(id, NULL, 10));
    return dq_parts_route_id(p, id, len);
}

/*
 * The first step of find.lua for @id on every partition of @p but @home, pipelined on one
 * node (dq_scripts_run_each), then the partitions whose step asked for more (a scan of a
 * generated id, a walk of parked tasks) one after another. *@at: the lowest partition
 * holding it. DQ_ENOTFOUND when none does.
 */
static int
find_others(dq_client *c, const struct dq_parts *p, size_t home, const char *queue, const char *id,
            dq_task *out, size_t *at, dq_err *err)
{
    size_t k = p->all - 1, hit = SIZE_MAX;
    const char **names = malloc(k * sizeof *names);
    struct dq_find_reply *fs = calloc(k, sizeof *fs);
    dq_task *tasks = calloc(k, sizeof *tasks);
    dq_err *errs = calloc(k, sizeof *errs);
    int *rcs = calloc(k, sizeof *rcs), rc;
    struct dq_args a;

    dq_args_init(&a);
    if (names == NULL || fs == NULL || tasks == NULL || errs == NULL || rcs == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0, j = 0; i < p->all; i++) {
        if (i == home)
            continue;
        names[j] = p->names[i];
        fs[j] =
            (struct dq_find_reply){.out = &tasks[j], .cursor = DQ_BUF_INIT, .unique_until_ms = -1};
        j++;
    }
    dq_args_str(&a, id);
    dq_args_str(&a, "");
    dq_args_str(&a, "");
    rc = dq_scripts_run_each(c, DQ_SCRIPT_FIND, names, k, &a, dq_reply_find, fs, sizeof *fs, k, rcs,
                             errs, err);
    for (size_t j = 0; rc == DQ_OK && j < k && hit == SIZE_MAX; j++) {
        if (rcs[j] != DQ_OK) {
            rc = rcs[j];
            if (err != NULL)
                *err = errs[j];
        } else if (fs[j].found) {
            hit = j;
        } else if (fs[j].more) {
            /* the rest of its scan: the whole lookup again, on that partition alone */
            dq_task_clear(&tasks[j]);
            rc = find_in(c, names[j], queue, id, &tasks[j], &errs[j]);
            if (rc == DQ_OK)
                hit = j;
            else if (rc == DQ_ENOTFOUND)
                rc = DQ_OK;
            else if (err != NULL)
                *err = errs[j];
        }
    }
    if (rc == DQ_OK && hit == SIZE_MAX)
        rc = DQ_ENOTFOUND;
    if (hit != SIZE_MAX && rc == DQ_OK) {
        *out = tasks[hit];
        memset(&tasks[hit], 0, sizeof tasks[hit]);
        *at = hit < home ? hit : hit + 1;
    }
out:
    for (size_t j = 0; fs != NULL && tasks != NULL && j < k; j++) {
        dq_buf_free(&fs[j].cursor);
        dq_task_clear(&tasks[j]);
    }
    dq_args_free(&a);
    free(names);
    free(fs);
    free(tasks);
    free(errs);
    free(rcs);
    return rc;
}

/*
 * find.lua for @id across the partitions of map @p (PROTOCOL.md 14):
 * its home partition first; only when it is not there and the map has draining
 * partitions or was resized, the others. *@at: the partition holding it (its home when
 * none does).
 */
static int
find_parts(dq_client *c, const struct dq_parts *p, const char *queue, const char *id, dq_task *out,
           size_t *at, dq_err *err)
{
    size_t home = id_home(p, id);
    dq_err first = {0}, other;
    int rc;

    *at = home;
    rc = find_in(c, p->names[home], queue, id, out, &first);
    if (rc != DQ_ENOTFOUND || (p->all == p->n && !p->resized)) {
        if (rc != DQ_OK && err != NULL)
            *err = first;
        return rc;
    }
    rc = find_others(c, p, home, queue, id, out, at, &other);
    if (rc != DQ_ENOTFOUND) {
        if (rc != DQ_OK && err != NULL)
            *err = other;
        return rc;
    }
    *at = home;
    if (err != NULL)
        *err = first;
    return DQ_ENOTFOUND;
}

int
dq_find(dq_client *c, const char *queue, const char *id, dq_task *out, dq_err *err)
{
    const struct dq_parts *p;
    size_t at;
    int rc;

    memset(out, 0, sizeof *out);
    if (id == NULL || id[0] == '\0' || strlen(id) > DQ_ID_MAX)
        return dq_err_set(err, DQ_EINVAL, "id: must be 1..%d bytes", DQ_ID_MAX);
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all <= 1)
        return find_in(c, queue, queue, id, out, err);
    return find_parts(c, p, queue, id, out, &at, err);
}

/* The partition of task @id for an action on it: the one holding it, else its home.
 * Copies the name to @name (@p may be read again by a later call). */
static int
where_is(dq_client *c, const char *queue, const char *id, char *name, size_t size, dq_err *err)
{
    const struct dq_parts *p;
    dq_task t;
    size_t at = 0;
    int rc;

    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all > 1) {
        rc = find_parts(c, p, queue, id, &t, &at, err);
        dq_task_clear(&t);
        if (rc != DQ_OK && rc != DQ_ENOTFOUND)
            return rc;
    }
    snprintf(name, size, "%s", p->names[at]);
    return DQ_OK;
}

int
dq_audit_get(dq_client *c, const char *queue, size_t limit, dq_audit *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    dq_args_i64(&a, (int64_t)limit);
    rc = dq_scripts_run(c, DQ_SCRIPT_AUDIT, queue, &a, dq_reply_audit, out, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_audit_free(out);
    return rc;
}

/* ---- workers and pause: heartbeat, workers, pause ---------------------------------- */

int
dq_heartbeat(dq_client *c, const char *queue, const char *name, dq_beat_mode mode,
             const dq_beat *rec, dq_beat_reply *out, dq_err *err)
{
    static const char *const modes[] = {"beat", "check", "gone", "look"};
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    out->started_ms = -1;
    out->next_due_ms = out->next_lease_ms = out->paused_until_ms = -2;
    if ((unsigned)mode > DQ_BEAT_LOOK)
        return dq_err_set(err, DQ_EINVAL, "heartbeat: mode %d is not a dq_beat_mode", (int)mode);
    if (name == NULL || name[0] == '\0' || strlen(name) > DQ_ID_MAX)
        return dq_err_set(err, DQ_EINVAL, "worker name: must be 1..%d bytes (got %zu)", DQ_ID_MAX,
                          name ? strlen(name) : 0);
    dq_args_init(&a);
    dq_args_str(&a, modes[mode]);
    dq_args_str(&a, name);
    if (rec != NULL && mode != DQ_BEAT_GONE) {
        const char *cmd = rec->command ? rec->command : "";
        dq_args_str(&a, rec->host ? rec->host : "");
        dq_args_i64(&a, rec->pid);
        dq_args_str(&a, rec->version ? rec->version : "");
        if (rec->started_ms > 0)
            dq_args_i64(&a, rec->started_ms);
        else
            dq_args_str(&a, ""); /* the script takes its own now */
        dq_args_i64(&a, rec->interval_ms);
        dq_args_i64(&a, rec->concurrency);
        dq_args_i64(&a, rec->busy);
        dq_args_i64(&a, rec->done);
        dq_args_i64(&a, rec->retried);
        dq_args_i64(&a, rec->failed);
        dq_args_bytes(&a, cmd,
                      strlen(cmd) > DQ_WORKER_COMMAND_MAX ? DQ_WORKER_COMMAND_MAX : strlen(cmd));
        dq_args_str(&a, rec->draining ? "1" : "0");
        if (rec->hung > 0) /* only then: a record without it reads as before */
            dq_args_i64(&a, rec->hung);
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_HEARTBEAT, queue, &a, dq_reply_heartbeat, out, err);
    dq_args_free(&a);
    return rc;
}

/* Both readers of the registry: @look in-flight tasks are looked at for their holders. */
static int
workers_read(dq_client *c, const char *queue, size_t most, size_t tasks_per_worker, int64_t look,
             dq_workers *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if (most < 1 || most > DQ_CALL_MAX)
        return dq_err_set(err, DQ_EINVAL, "workers: %zu is not in 1..%d", most, DQ_CALL_MAX);
    if (tasks_per_worker > 100)
        return dq_err_set(err, DQ_EINVAL, "tasks per worker: %zu is not in 0..100",
                          tasks_per_worker);
    dq_args_init(&a);
    dq_args_i64(&a, (int64_t)most);
    dq_args_i64(&a, (int64_t)tasks_per_worker);
    dq_args_i64(&a, look);
    rc = dq_scripts_run(c, DQ_SCRIPT_WORKERS, queue, &a, dq_reply_workers, out, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_workers_free(out);
    return rc;
}

/* The registry's @w (the workers script's, read without looking at in-flight tasks)
 * given the holders of partitioned @queue's tasks: the DQ_STEP_MAX with the earliest
 * leases of the logical queue, one merged in-flight page (one page call per partition,
 * pipelined, PROTOCOL.md 14.7), each counted for the worker its running record names,
 * as the script counts one queue's (PROTOCOL.md 10.10). */
static int
workers_held(dq_client *c, const char *queue, size_t tasks_per_worker, dq_workers *w, dq_err *err)
{
    dq_page_cursor cur = {0};
    dq_page pg;
    int rc = dq_pages_merge(c, queue, DQ_VIEW_INFLIGHT, NULL, DQ_STEP_MAX, &cur, &pg, err);

    dq_page_cursor_free(&cur);
    if (rc != DQ_OK)
        return rc;
    w->inflight = pg.total;
    w->inflight_looked = (int64_t)pg.n;
    for (size_t i = 0; i < pg.n && rc == DQ_OK; i++) {
        const dq_task *t = &pg.tasks[i];
        size_t len = t->worker == NULL ? 0 : t->worker_len ? t->worker_len : strlen(t->worker);
        for (size_t j = 0; len > 0 && j < w->n; j++) {
            dq_worker_info *wi = &w->workers[j];
            if (strlen(wi->name) != len || memcmp(wi->name, t->worker, len) != 0)
                continue;
            if (wi->ntasks < tasks_per_worker) {
                dq_worker_task *v = realloc(wi->tasks, (wi->ntasks + 1) * sizeof *v);
                if (v == NULL) {
                    rc = dq_err_set(err, DQ_ENOMEM, "out of memory listing held tasks");
                    break;
                }
                wi->tasks = v;
                snprintf(v[wi->ntasks].id, sizeof v[wi->ntasks].id, "%.*s", (int)t->id_len, t->id);
                v[wi->ntasks++].claimed_ms = t->claimed_ms;
            }
            wi->held++;
            break;
        }
    }
    dq_page_free(&pg);
    return rc;
}

int
dq_workers_get(dq_client *c, const char *queue, size_t most, size_t tasks_per_worker,
               dq_workers *out, dq_err *err)
{
    const struct dq_parts *p;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all <= 1) /* the one call of before: the script looks at the holders itself */
        return workers_read(c, queue, most, tasks_per_worker, DQ_STEP_MAX, out, err);
    /* one registry, partition 0's; the tasks a worker holds are in any partition */
    if ((rc = workers_read(c, queue, most, tasks_per_worker, 0, out, err)) != DQ_OK)
        return rc;
    if ((rc = workers_held(c, queue, tasks_per_worker, out, err)) != DQ_OK)
        dq_workers_free(out);
    return rc;
}

int
dq_workers_summary(dq_client *c, const char *queue, size_t most, dq_workers *out, dq_err *err)
{
    return workers_read(c, queue, most, 0, 0, out, err);
}

int
dq_pause(dq_client *c, const char *queue, int64_t for_ms, const char *reason, dq_err *err)
{
    struct dq_pause_reply r;
    struct dq_args a;
    int rc;

    if (for_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "for: %lld ms is negative", (long long)for_ms);
    if (reason != NULL && strlen(reason) > DQ_PAUSE_REASON_MAX)
        return dq_err_set(err, DQ_EINVAL, "reason: %zu bytes is over the limit of %d bytes",
                          strlen(reason), DQ_PAUSE_REASON_MAX);
    dq_args_init(&a);
    dq_args_str(&a, "pause");
    dq_args_str(&a, dq_client_who(c));
    dq_args_i64(&a, for_ms);
    dq_args_str(&a, reason ? reason : "");
    rc = dq_scripts_run(c, DQ_SCRIPT_PAUSE, queue, &a, dq_reply_pause, &r, err);
    dq_args_free(&a);
    return rc;
}

int
dq_throttle(dq_client *c, const char *queue, int64_t rate_per_min, int64_t concurrency,
            int64_t for_ms, const char *reason, dq_err *err)
{
    struct dq_pause_reply r;
    struct dq_args a;
    int rc;

    if (rate_per_min <= 0 && concurrency <= 0)
        return dq_err_set(err, DQ_EINVAL, "throttle: give a rate or a concurrency (or lift it)");
    if (rate_per_min < 0 || concurrency < 0 || for_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "throttle: rate, concurrency and for must be 0 or more");
    if (reason != NULL && strlen(reason) > DQ_PAUSE_REASON_MAX)
        return dq_err_set(err, DQ_EINVAL, "reason: %zu bytes is over the limit of %d bytes",
                          strlen(reason), DQ_PAUSE_REASON_MAX);
    dq_args_init(&a);
    dq_args_str(&a, "set");
    dq_args_str(&a, dq_client_who(c));
    dq_args_i64(&a, rate_per_min);
    dq_args_i64(&a, concurrency);
    dq_args_i64(&a, for_ms);
    dq_args_str(&a, reason ? reason : "");
    /* the reply has pause's shape: {now, until, was} */
    rc = dq_scripts_run(c, DQ_SCRIPT_THROTTLE, queue, &a, dq_reply_pause, &r, err);
    dq_args_free(&a);
    return rc;
}

int
dq_throttle_off(dq_client *c, const char *queue, bool *was, dq_err *err)
{
    struct dq_pause_reply r = {0};
    struct dq_args a;
    int rc;

    dq_args_init(&a);
    dq_args_str(&a, "off");
    dq_args_str(&a, dq_client_who(c));
    rc = dq_scripts_run(c, DQ_SCRIPT_THROTTLE, queue, &a, dq_reply_pause, &r, err);
    dq_args_free(&a);
    if (was != NULL)
        *was = rc == DQ_OK && r.was_paused;
    return rc;
}

int
dq_cancel(dq_client *c, const char *queue, const char *id, bool drop, dq_cancelled *out,
          dq_err *err)
{
    char name[DQ_QUEUE_NAME_MAX + 16];
    dq_cancelled r = {0};
    struct dq_args a;
    int rc;

    if (id == NULL || id[0] == '\0' || strlen(id) > DQ_ID_MAX)
        return dq_err_set(err, DQ_EINVAL, "id: must be 1..%d bytes", DQ_ID_MAX);
    if ((rc = where_is(c, queue, id, name, sizeof name, err)) != DQ_OK)
        return rc;
    dq_args_init(&a);
    dq_args_str(&a, id);
    dq_args_str(&a, drop ? "drop" : "fail");
    dq_args_str(&a, dq_client_who(c));
    rc = dq_scripts_run(c, DQ_SCRIPT_CANCEL, name, &a, dq_reply_cancel, &r, err);
    dq_args_free(&a);
    if (rc == DQ_OK && out != NULL)
        *out = r;
    return rc;
}

int
dq_resume(dq_client *c, const char *queue, bool *was_paused, dq_err *err)
{
    struct dq_pause_reply r = {0};
    struct dq_args a;
    int rc;

    dq_args_init(&a);
    dq_args_str(&a, "resume");
    dq_args_str(&a, dq_client_who(c));
    rc = dq_scripts_run(c, DQ_SCRIPT_PAUSE, queue, &a, dq_reply_pause, &r, err);
    dq_args_free(&a);
    if (was_paused != NULL)
        *was_paused = rc == DQ_OK && r.was_paused;
    return rc;
}

int
dq_reschedule(dq_client *c, const char *queue, const char *id, int64_t at_ms, int64_t delay_ms,
              int64_t *due_ms, dq_err *err)
{
    int64_t r[2] = {-1, -1};
    char name[DQ_QUEUE_NAME_MAX + 16];
    const struct dq_parts *p;
    size_t at = 0;
    dq_task found;
    struct dq_args a;
    char when[32];
    int rc;

    memset(&found, 0, sizeof found);
    if (id == NULL || id[0] == '\0' || strlen(id) > DQ_ID_MAX)
        return dq_err_set(err, DQ_EINVAL, "id: must be 1..%d bytes", DQ_ID_MAX);
    if (at_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "at: %lld ms is before the epoch", (long long)at_ms);
    if (at_ms == 0 && delay_ms < 0)
        return dq_err_set(err, DQ_EINVAL, "delay: %lld ms is negative", (long long)delay_ms);
    /* a generated id has no index: its member is found by a scan (find.lua) and named by
     * its bytes; the script checks they are still that task's */
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all > 1) { /* the partition holding it (PROTOCOL.md 14) */
        rc = find_parts(c, p, queue, id, &found, &at, err);
        if (rc != DQ_OK && rc != DQ_ENOTFOUND)
            return rc;
    } else if (strspn(id, "0123456789") == strlen(id)) {
        rc = find_in(c, queue, queue, id, &found, err);
        if (rc != DQ_OK && rc != DQ_ENOTFOUND)
            return rc;
    }
    snprintf(name, sizeof name, "%s", p->names[at]);
    snprintf(when, sizeof when, "%c%lld", at_ms > 0 ? 'a' : 'd',
             (long long)(at_ms > 0 ? at_ms : delay_ms));
    dq_args_init(&a);
    dq_args_str(&a, id);
    if (found.state == DQ_STATE_SCHEDULED && strspn(id, "0123456789") == strlen(id))
        dq_args_bytes(&a, found.raw, found.raw_len);
    else
        dq_args_str(&a, "");
    dq_args_str(&a, when);
    dq_args_str(&a, dq_client_who(c));
    rc = dq_scripts_run(c, DQ_SCRIPT_RESCHEDULE, name, &a, dq_reply_ints2, r, err);
    dq_args_free(&a);
    dq_task_clear(&found);
    if (rc == DQ_OK && due_ms != NULL)
        *due_ms = r[1];
    return rc;
}
