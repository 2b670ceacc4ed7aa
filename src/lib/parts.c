/* SPDX-License-Identifier: MIT */
/*
 * parts.c: the map of a partitioned queue (parts.h): reading and caching it, routing a
 * task to a partition, and naming and preparing new partitions. The map itself is
 * written by lua/config.lua (dq_config_set), never here.
 */
#include "parts.h"

#include <hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "cluster.h"
#include "err.h"
#include "reply.h"
#include "scripts.h"

/* The salt k is looked for below this bound: with M masters the first fit is about M
 * tries away, so a bound this far out is never met on a real cluster, and it keeps a name
 * within the key buffers (DQ_QUEUE_NAME_MAX + 32: "~255.99999" is 10 bytes). */
#define SALT_MAX 100000

struct entry {
    char *queue; /* owned */
    struct dq_parts map;
    int64_t read_ms; /* monotonic */
    int64_t used_ms; /* monotonic: the last peek */
    size_t rr;       /* the round robin's next partition */
};

struct dq_parts_cache {
    struct entry *v; /* owned */
    size_t n, cap;
};

uint32_t
dq_parts_fnv1a(const void *p, size_t len)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 16777619u;
    }
    return h;
}

size_t
dq_parts_route_id(const struct dq_parts *p, const char *id, size_t len)
{
    return p->n <= 1 ? 0 : dq_parts_fnv1a(id, len) % p->n;
}

size_t
dq_parts_of_seq(const struct dq_parts *p, int64_t seq)
{
    size_t i = seq <= 0 ? 0 : (size_t)(seq / DQ_PART_SEQ_SPAN);

    return i < p->all ? i : p->all - 1;
}

void
dq_parts_free(struct dq_parts *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; p->names != NULL && i < p->all; i++)
        free(p->names[i]);
    free(p->names);
    memset(p, 0, sizeof *p);
}

void
dq_parts_cache_free(struct dq_parts_cache *pc)
{
    if (pc == NULL)
        return;
    for (size_t i = 0; i < pc->n; i++) {
        free(pc->v[i].queue);
        dq_parts_free(&pc->v[i].map);
    }
    free(pc->v);
    free(pc);
}

/* Parses a decimal in 0..max, the whole of @s; -1 when it is not one. */
static long long
num(const char *s, size_t len, long long max)
{
    long long v = 0;

    if (len == 0 || len > 18)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= max ? v : -1;
}

/* One field of the map: n, resized or a partition's name into @names. */
static int
take(const char *queue, const char *key, const char *f, size_t flen, const redisReply *v,
     long long *n, bool *resized, char **names, dq_err *err)
{
    size_t qlen = strlen(queue);
    long long at;

    if (v->type != REDIS_REPLY_STRING)
        return dq_err_set(err, DQ_EPROTO, "partitions: %s holds a field that is no string", key);
    if (flen == 1 && f[0] == 'n') {
        if ((*n = num(v->str, v->len, DQ_PARTITIONS_MAX)) < 1)
            return dq_err_set(err, DQ_EPROTO, "partitions: %s n is not in 1..%d", key,
                              DQ_PARTITIONS_MAX);
        return DQ_OK;
    }
    if (flen == 7 && memcmp(f, "resized", 7) == 0) {
        *resized = true;
        return DQ_OK;
    }
    at = num(f, flen, DQ_PARTITIONS_MAX - 1);
    /* a name must be this queue's partition: a map never sends work elsewhere */
    if (at < 1 || v->len <= qlen + 1 || memcmp(v->str, queue, qlen) != 0 || v->str[qlen] != '~' ||
        strlen(v->str) != v->len || dq_queue_run_name_check(v->str, NULL) != DQ_OK ||
        names[at] != NULL)
        return dq_err_set(err, DQ_EPROTO, "partitions: %s field \"%.*s\" is not a partition of %s",
                          key, (int)(flen > 20 ? 20 : flen), f, queue);
    if ((names[at] = strdup(v->str)) == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory reading %s", key);
    return DQ_OK;
}

/* Every field of the map by name, for a user whose ACL allows HMGET and not HGETALL (the
 * role lines of docs/SECURITY.md allow both; a hand-written line may not). */
static int
read_fields(dq_client *c, const char *key, redisReply **out, dq_err *err)
{
    const char *argv[3 + DQ_PARTITIONS_MAX];
    char fields[DQ_PARTITIONS_MAX][4];

    argv[0] = "HMGET";
    argv[1] = key;
    argv[2] = "n";
    argv[3] = "resized";
    for (int i = 1; i < DQ_PARTITIONS_MAX; i++) {
        snprintf(fields[i], sizeof fields[i], "%d", i);
        argv[3 + i] = fields[i];
    }
    return dq_conn_command(c, 3 + DQ_PARTITIONS_MAX, argv, NULL, out, err);
}

/* Reads the map of @queue from Redis into @out. */
static int
read_map(dq_client *c, const char *queue, struct dq_parts *out, dq_err *err)
{
    char key[DQ_QUEUE_NAME_MAX + 32];
    const char *argv[2] = {"HGETALL", key};
    char *names[DQ_PARTITIONS_MAX] = {0};
    long long n = 1;
    size_t all = 1;
    bool resized = false, by_name = false;
    redisReply *r = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    snprintf(key, sizeof key, "dq:{%s}:parts", queue);
    rc = dq_conn_command(c, 2, argv, NULL, &r, err);
    if (rc != DQ_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR && r->len > 7 && memcmp(r->str, "NOPERM ", 7) == 0) {
        freeReplyObject(r);
        r = NULL;
        if ((rc = read_fields(c, key, &r, err)) != DQ_OK)
            return rc;
        by_name = true;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        rc = dq_err_set(err, DQ_EREDIS, "partitions: reading %s: %.*s", key, (int)r->len, r->str);
        goto out;
    }
    if (r->type != REDIS_REPLY_ARRAY ||
        (by_name ? r->elements != 1 + DQ_PARTITIONS_MAX : r->elements % 2 != 0)) {
        rc = dq_err_set(err, DQ_EPROTO, "partitions: %s is not a hash of pairs", key);
        goto out;
    }
    for (size_t i = 0; by_name && i < r->elements; i++) {
        char f[24];
        if (r->element[i]->type == REDIS_REPLY_NIL)
            continue;
        snprintf(f, sizeof f, "%s", i == 0 ? "n" : i == 1 ? "resized" : "");
        if (i >= 2)
            snprintf(f, sizeof f, "%zu", i - 1);
        if ((rc = take(queue, key, f, strlen(f), r->element[i], &n, &resized, names, err)) != DQ_OK)
            goto out;
    }
    for (size_t i = 0; !by_name && i + 1 < r->elements; i += 2) {
        const redisReply *f = r->element[i];
        if (f->type != REDIS_REPLY_STRING) {
            rc = dq_err_set(err, DQ_EPROTO, "partitions: %s holds a field that is no string", key);
            goto out;
        }
        if ((rc = take(queue, key, f->str, f->len, r->element[i + 1], &n, &resized, names, err)) !=
            DQ_OK)
            goto out;
    }
    /* partitions are made in order, 1 up: a gap means someone else wrote the hash */
    while (all < DQ_PARTITIONS_MAX && names[all] != NULL)
        all++;
    for (size_t i = all; i < DQ_PARTITIONS_MAX; i++) {
        if (names[i] != NULL) {
            rc = dq_err_set(err, DQ_EPROTO, "partitions: %s has partition %zu but not %zu", key, i,
                            all);
            goto out;
        }
    }
    if ((size_t)n > all) {
        rc = dq_err_set(err, DQ_EPROTO, "partitions: %s routes %lld partitions; it names %zu", key,
                        n, all);
        goto out;
    }
    out->names = calloc(all, sizeof *out->names);
    if (out->names == NULL || (names[0] = strdup(queue)) == NULL) {
        free(out->names);
        out->names = NULL;
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory reading %s", key);
        goto out;
    }
    for (size_t i = 0; i < all; i++) {
        out->names[i] = names[i];
        names[i] = NULL;
    }
    out->n = (size_t)n;
    out->all = all;
    out->resized = resized;
out:
    for (size_t i = 0; i < DQ_PARTITIONS_MAX; i++)
        free(names[i]);
    freeReplyObject(r);
    return rc;
}

static struct entry *
find(struct dq_parts_cache *pc, const char *queue)
{
    for (size_t i = 0; pc != NULL && i < pc->n; i++)
        if (strcmp(pc->v[i].queue, queue) == 0)
            return &pc->v[i];
    return NULL;
}

/* A new entry for @queue, holding @map (taken over), or NULL on OOM. A full cache (as
 * many queues as the registry's names, client.h) gives up its last entry. */
static struct entry *
add(dq_client *c, const char *queue, struct dq_parts *map)
{
    struct dq_parts_cache *pc = c->parts;
    struct entry *e;
    char *q;

    if (pc == NULL) {
        if ((pc = c->parts = calloc(1, sizeof *pc)) == NULL)
            return NULL;
        c->parts_free = dq_parts_cache_free;
    }
    if ((q = strdup(queue)) == NULL)
        return NULL;
    if (pc->n >= DQ_NAMES_MAX) {
        e = &pc->v[pc->n - 1];
        free(e->queue);
        dq_parts_free(&e->map);
    } else {
        if (pc->n == pc->cap) {
            size_t cap = pc->cap ? pc->cap * 2 : 8;
            struct entry *v = realloc(pc->v, cap * sizeof *v);
            if (v == NULL) {
                free(q);
                return NULL;
            }
            pc->v = v;
            pc->cap = cap;
        }
        e = &pc->v[pc->n++];
    }
    e->queue = q;
    e->map = *map;
    memset(map, 0, sizeof *map);
    /* a random start: short-lived clients (one `delayq enqueue` each) spread too */
    e->rr = (size_t)dq_jitter(DQ_PARTITIONS_MAX - 1);
    return e;
}

int
dq_parts_peek(dq_client *c, const char *queue, const struct dq_parts **out, dq_err *err)
{
    struct entry *e = find(c->parts, queue);
    int64_t now = dq_mono_ms();
    struct dq_parts map;
    int rc;

    *out = NULL;
    /* A client busy with the queue reads the map again once a second. One back from
     * being idle (a requeue that waited for its payload on stdin) uses the cached map
     * for its first call unless that is a minute old: a re-read there would meet a busy
     * or unreachable server first, and time out instead of the call it precedes, whose
     * own outcome the caller reports (a stale map only routes to partitions that exist). */
    if (e != NULL && now - e->read_ms < DQ_PARTS_STALE_MS &&
        (now - e->read_ms < DQ_PARTS_REFRESH_MS || now - e->used_ms >= DQ_PARTS_REFRESH_MS)) {
        e->used_ms = now;
        *out = &e->map;
        return DQ_OK;
    }
    if ((rc = dq_queue_run_name_check(queue, err)) != DQ_OK)
        return rc;
    if (strchr(queue, '~') != NULL) {
        /* a partition (the library's own calls): one partition, itself, for good */
        memset(&map, 0, sizeof map);
        map.n = map.all = 1;
        if ((map.names = calloc(1, sizeof *map.names)) == NULL ||
            (map.names[0] = strdup(queue)) == NULL) {
            free(map.names);
            return dq_err_set(err, DQ_ENOMEM, "out of memory caching the partitions of %s", queue);
        }
        now = INT64_MAX / 2;
    } else if ((rc = read_map(c, queue, &map, err)) != DQ_OK) {
        /* partition 0's node unreachable: the map read before still routes to the other
         * partitions (a map only grows), and the next try is a second away */
        if (e != NULL && (rc == DQ_ECONN || rc == DQ_ETIMEOUT)) {
            e->read_ms = e->used_ms = now;
            *out = &e->map;
            return DQ_OK;
        }
        return rc;
    }
    if (e != NULL) {
        dq_parts_free(&e->map);
        e->map = map;
    } else if ((e = add(c, queue, &map)) == NULL) {
        dq_parts_free(&map);
        return dq_err_set(err, DQ_ENOMEM, "out of memory caching the partitions of %s", queue);
    }
    e->read_ms = e->used_ms = now;
    *out = &e->map;
    return DQ_OK;
}

int
dq_parts_get(dq_client *c, const char *queue, struct dq_parts *out, dq_err *err)
{
    const struct dq_parts *p;
    int rc = dq_parts_peek(c, queue, &p, err);

    memset(out, 0, sizeof *out);
    if (rc != DQ_OK)
        return rc;
    if ((out->names = calloc(p->all, sizeof *out->names)) == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory copying the partitions of %s", queue);
    out->all = p->all;
    out->n = p->n;
    out->resized = p->resized;
    for (size_t i = 0; i < p->all; i++) {
        if ((out->names[i] = strdup(p->names[i])) == NULL) {
            dq_parts_free(out);
            return dq_err_set(err, DQ_ENOMEM, "out of memory copying the partitions of %s", queue);
        }
    }
    return DQ_OK;
}

void
dq_parts_forget(dq_client *c, const char *queue)
{
    struct entry *e = find(c->parts, queue);

    if (e != NULL)
        e->read_ms = INT64_MIN / 2;
}

bool
dq_parts_maybe_single(dq_client *c, const char *queue)
{
    const struct entry *e = find(c->parts, queue);

    return e == NULL || e->map.all <= 1;
}

int
dq_parts_confirm_single(dq_client *c, const char *queue, dq_err *err)
{
    struct entry *e = find(c->parts, queue);
    struct dq_parts map = {.n = 1, .all = 1};

    if (e != NULL && e->map.all <= 1) {
        e->read_ms = e->used_ms = dq_mono_ms();
        return DQ_OK;
    }
    if (e != NULL)
        return DQ_OK; /* a partitioned map: a reply of one partition does not replace it */
    if ((map.names = calloc(1, sizeof *map.names)) == NULL ||
        (map.names[0] = strdup(queue)) == NULL || (e = add(c, queue, &map)) == NULL) {
        dq_parts_free(&map);
        return dq_err_set(err, DQ_ENOMEM, "out of memory caching the partitions of %s", queue);
    }
    e->read_ms = e->used_ms = dq_mono_ms();
    return DQ_OK;
}

size_t
dq_parts_next(dq_client *c, const char *queue, const struct dq_parts *p)
{
    struct entry *e = find(c->parts, queue);
    size_t i;

    if (p->n <= 1)
        return 0;
    if (e == NULL) /* not cached: a spread is still wanted, so any fair start will do */
        return (size_t)dq_jitter((int64_t)p->n - 1);
    i = e->rr % p->n;
    e->rr = (i + 1) % p->n;
    return i;
}

void
dq_parts_group(const size_t *part, size_t n, size_t all, size_t *order, size_t *first)
{
    size_t at[DQ_PARTITIONS_MAX];

    memset(first, 0, (all + 1) * sizeof *first);
    for (size_t i = 0; i < n; i++)
        first[part[i] + 1]++;
    for (size_t p = 0; p < all; p++) {
        first[p + 1] += first[p];
        at[p] = first[p];
    }
    for (size_t i = 0; i < n; i++)
        order[at[part[i]]++] = i;
}

/* a + b, stopping at the ends of int64 (counts from Redis are not trusted) */
static int64_t
add_sat(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

void
dq_parts_stats_add(dq_stats *sum, const dq_stats *one)
{
    int64_t *const s[] = {&sum->due,          &sum->future,        &sum->far_future,
                          &sum->inflight,     &sum->failed,        &sum->expired_leases,
                          &sum->enqueued,     &sum->done,          &sum->retried,
                          &sum->failed_total, &sum->expired,       &sum->trimmed,
                          &sum->reaped,       &sum->requeued,      &sum->dropped,
                          &sum->window_done,  &sum->window_failed, &sum->window_retried,
                          &sum->parked,       &sum->limited_rate,  &sum->limited_concurrency,
                          &sum->run_sum_ms};
    const int64_t *const o[] = {&one->due,          &one->future,        &one->far_future,
                                &one->inflight,     &one->failed,        &one->expired_leases,
                                &one->enqueued,     &one->done,          &one->retried,
                                &one->failed_total, &one->expired,       &one->trimmed,
                                &one->reaped,       &one->requeued,      &one->dropped,
                                &one->window_done,  &one->window_failed, &one->window_retried,
                                &one->parked,       &one->limited_rate,  &one->limited_concurrency,
                                &one->run_sum_ms};

    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        *s[i] = add_sat(*s[i], *o[i] > 0 ? *o[i] : 0);
    for (size_t i = 0; i < DQ_RUN_BUCKETS; i++)
        sum->run[i] = add_sat(sum->run[i], one->run[i] > 0 ? one->run[i] : 0);
    if (one->now_ms > sum->now_ms)
        sum->now_ms = one->now_ms;
    if (one->next_due_ms >= 0 && (sum->next_due_ms < 0 || one->next_due_ms < sum->next_due_ms))
        sum->next_due_ms = one->next_due_ms;
    if (one->oldest_due_age_ms > sum->oldest_due_age_ms)
        sum->oldest_due_age_ms = one->oldest_due_age_ms;
    if (one->rate_held_ms > sum->rate_held_ms)
        sum->rate_held_ms = one->rate_held_ms;
    sum->concurrency_held = sum->concurrency_held || one->concurrency_held;
    /* the largest error group any partition names (the same signature: added up) */
    if (one->top_group[0] != '\0') {
        if (strcmp(sum->top_group, one->top_group) == 0)
            sum->top_group_count = add_sat(sum->top_group_count, one->top_group_count);
        else if (one->top_group_count > sum->top_group_count) {
            memcpy(sum->top_group, one->top_group, sizeof sum->top_group);
            sum->top_group_count = one->top_group_count;
        }
    }
    /* a partition paused on its own (a pause half applied) shows the queue as paused */
    if (one->paused && !sum->paused) {
        sum->paused = true;
        sum->paused_since_ms = one->paused_since_ms;
        sum->paused_until_ms = one->paused_until_ms;
        memcpy(sum->paused_by, one->paused_by, sizeof sum->paused_by);
        memcpy(sum->pause_reason, one->pause_reason, sizeof sum->pause_reason);
    }
}

/* ---- naming and preparing partitions ----------------------------------------------- */

/* The masters of @c's slot map ordered by their lowest slot, as slot numbers (one slot of
 * each, the lowest): @first[m]. Returns M, 0 when the map is empty. */
static size_t
masters(const struct dq_cluster *cl, unsigned *first, size_t most)
{
    size_t m = 0;

    for (unsigned s = 0; s < DQ_CLUSTER_SLOTS; s++) {
        const char *a = dq_cluster_slot_addr(cl, s);
        size_t j;
        if (a[0] == '\0')
            continue;
        for (j = 0; j < m; j++)
            if (strcmp(dq_cluster_slot_addr(cl, first[j]), a) == 0)
                break;
        if (j == m && m < most)
            first[m++] = s;
    }
    return m;
}

long
dq_parts_name(const dq_client *c, const char *queue, size_t i, char *buf, size_t size)
{
    unsigned first[64];
    size_t m = c->cluster != NULL ? masters(c->cluster, first, 64) : 0;
    char want[300] = "";
    size_t m0 = 0;
    long k = 0;

    if (m > 1) {
        const char *a0 = dq_cluster_slot_addr(c->cluster, dq_cluster_slot(queue, strlen(queue)));
        for (size_t j = 0; j < m; j++)
            if (strcmp(dq_cluster_slot_addr(c->cluster, first[j]), a0) == 0)
                m0 = j;
        snprintf(want, sizeof want, "%s", dq_cluster_slot_addr(c->cluster, first[(m0 + i) % m]));
    }
    for (;; k++) {
        int len = snprintf(buf, size, "%s~%zu.%ld", queue, i, k);
        if (len < 0 || (size_t)len >= size)
            return -1;
        if (want[0] == '\0' || k + 1 >= SALT_MAX ||
            strcmp(dq_cluster_slot_addr(c->cluster, dq_cluster_slot(buf, (size_t)len)), want) == 0)
            return k;
    }
}

int
dq_parts_prepare(dq_client *c, const char *queue, int64_t n, const struct dq_args *set,
                 char **names, size_t *all, dq_err *err)
{
    struct dq_parts map = {0};
    dq_config cfg;
    int rc;

    *all = 0;
    if (n < 1 || n > DQ_PARTITIONS_MAX)
        return dq_err_set(err, DQ_EINVAL, "partitions: %lld is not in 1..%d", (long long)n,
                          DQ_PARTITIONS_MAX);
    dq_parts_forget(c, queue); /* a resize reads the map as it is now */
    if ((rc = dq_parts_get(c, queue, &map, err)) != DQ_OK)
        return rc;
    *all = map.all;
    if ((size_t)n <= map.all)
        goto out;
    {
        struct dq_args none;
        dq_args_init(&none); /* config_get: also for a user that may only read (FCALL_RO) */
        rc = dq_scripts_run(c, DQ_SCRIPT_CONFIG_GET, queue, &none, dq_reply_config, &cfg, err);
        dq_args_free(&none);
        if (rc != DQ_OK)
            goto out;
    }
    for (size_t i = map.all; i < (size_t)n; i++) {
        char name[DQ_QUEUE_NAME_MAX + 16];
        struct dq_args a;
        if (dq_parts_name(c, queue, i, name, sizeof name) < 0) {
            rc =
                dq_err_set(err, DQ_EINVAL, "partitions: no name for partition %zu of %s", i, queue);
            goto out;
        }
        if ((names[i] = strdup(name)) == NULL) {
            rc = dq_err_set(err, DQ_ENOMEM, "out of memory naming partitions");
            goto out;
        }
        /* the queue's config, as it is, and the seq span of partition i (config.lua) */
        dq_args_init(&a);
        dq_args_str(&a, dq_client_who(c));
        for (size_t f = 0; f < DQ_CONFIG_FIELDS; f++) {
            if (f == DQ_CONFIG_PARTITIONS)
                continue;
            dq_args_str(&a, dq_config_fields[f]);
            dq_args_i64(&a, *dq_config_slot(&cfg, f));
        }
        for (size_t f = 0; set != NULL && f < set->n; f++) /* after the copy: they win */
            dq_args_bytes(&a, set->v[f], set->len[f]);
        dq_args_str(&a, "seq_floor");
        dq_args_i64(&a, (int64_t)i * DQ_PART_SEQ_SPAN);
        rc = dq_scripts_run(c, DQ_SCRIPT_CONFIG, name, &a, NULL, NULL, err);
        dq_args_free(&a);
        if (rc != DQ_OK)
            goto out;
    }
out:
    dq_parts_free(&map);
    return rc;
}
