/* SPDX-License-Identifier: MIT */
/*
 * registry.c: the set of a server's queues (dq:queues), so pickers and listings find
 * queues without KEYS or SCAN over the keyspace. Kept outside the queues' hash tag on
 * purpose: it is written by its own command, never from inside a queue's script.
 */
#include <hiredis.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "delayq.h"
#include "err.h"
#include "registry.h"
#include "scripts.h"

#define REGISTRY_KEY "dq:queues"

/* DQ_STEP_MAX as the text of a command argument. */
#define STR_(x) #x
#define STR(x)  STR_(x)

void
dq_registry_note(dq_client *c, const char *queue)
{
    const char *argv[3] = {"SADD", REGISTRY_KEY, queue};
    size_t lens[3] = {4, sizeof REGISTRY_KEY - 1, strlen(queue)};
    redisReply *r = NULL;
    dq_err err = {0};

    if (dq_names_has(&c->registered, queue))
        return;
    /* Best effort: the caller's operation already succeeded, and a failed SADD is
     * retried by this client's next call for the queue, since it is not remembered.
     * Past DQ_NAMES_MAX remembered queues, further ones are not remembered either: each
     * call for them sends its (harmless, idempotent) SADD again. */
    if (dq_conn_command(c, 3, argv, lens, &r, &err) != DQ_OK)
        return;
    if (r->type == REDIS_REPLY_INTEGER)
        (void)dq_names_add(&c->registered, queue);
    freeReplyObject(r);
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void
dq_queues_free(dq_queues *q)
{
    if (q == NULL)
        return;
    for (size_t i = 0; i < q->n; i++)
        free(q->names[i]);
    free(q->names);
    memset(q, 0, sizeof *q);
}

/* Adds the names of one SSCAN reply page; returns the next cursor or -1 on a bad reply. */
static long long
add_page(const redisReply *r, dq_queues *out, size_t most, int *rc, dq_err *err)
{
    const redisReply *items;
    char *end;
    long long next;

    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_ARRAY) {
        *rc = dq_err_set(err, DQ_EPROTO, "queues: unexpected SSCAN reply");
        return -1;
    }
    next = strtoll(r->element[0]->str, &end, 10);
    items = r->element[1];
    for (size_t i = 0; i < items->elements && out->n < most; i++) {
        const redisReply *e = items->element[i];
        char **grown;
        /* not a name a client could have written (a NUL inside included: the name
         * check sees only the bytes before it): not listed; see dq_registry_invalid */
        if (e->type != REDIS_REPLY_STRING || memchr(e->str, '\0', e->len) != NULL ||
            dq_queue_name_check(e->str, NULL) != DQ_OK)
            continue;
        grown = realloc(out->names, (out->n + 1) * sizeof *grown);
        if (grown == NULL || (grown[out->n] = strdup(e->str)) == NULL) {
            if (grown != NULL)
                out->names = grown;
            *rc = dq_err_set(err, DQ_ENOMEM, "queues: out of memory");
            return -1;
        }
        out->names = grown;
        out->n++;
    }
    return next;
}

int
dq_queues_get(dq_client *c, size_t most, dq_queues *out, dq_err *err)
{
    const char *card[2] = {"SCARD", REGISTRY_KEY};
    size_t card_lens[2] = {5, sizeof REGISTRY_KEY - 1};
    redisReply *r = NULL;
    long long cursor = 0;
    int rc;

    memset(out, 0, sizeof *out);
    rc = dq_conn_command(c, 2, card, card_lens, &r, err);
    if (rc != DQ_OK)
        return rc;
    if (r->type != REDIS_REPLY_INTEGER) {
        rc = r->type == REDIS_REPLY_ERROR ? dq_err_from_reply(err, "queues", r->str, r->len)
                                          : dq_err_set(err, DQ_EPROTO, "queues: unexpected reply");
        freeReplyObject(r);
        return rc;
    }
    out->total = r->integer;
    freeReplyObject(r);
    while (most > 0 && out->n < most) {
        char cur[32];
        const char *argv[5] = {"SSCAN", REGISTRY_KEY, cur, "COUNT", STR(DQ_STEP_MAX)};
        size_t lens[5] = {5, sizeof REGISTRY_KEY - 1, 0, 5, sizeof STR(DQ_STEP_MAX) - 1};
        lens[2] = (size_t)snprintf(cur, sizeof cur, "%lld", cursor);
        rc = dq_conn_command(c, 5, argv, lens, &r, err);
        if (rc != DQ_OK)
            break;
        cursor = r->type == REDIS_REPLY_ERROR
                     ? (rc = dq_err_from_reply(err, "queues", r->str, r->len), -1)
                     : add_page(r, out, most, &rc, err);
        freeReplyObject(r);
        if (cursor <= 0)
            break;
    }
    if (rc != DQ_OK) {
        dq_queues_free(out);
        return rc;
    }
    if (out->n > 1)
        qsort(out->names, out->n, sizeof *out->names, cmp_names);
    return DQ_OK;
}

/*
 * The keys whose existence makes a queue known even when the registry lacks it (an
 * SADD that failed, a `queues --forget`, a registry lost on a restore): every key a
 * queue's scripts write except the channel `wake` and the per-task and per-group keys,
 * which never exist without one of these. One slot, so one EXISTS, also on a cluster.
 */
static const char *const known_keys[] = {
    "sched", "ids",    "inflight", "running", "failed", "failidx", "stats",
    "seq",   "config", "audit",    "workers", "beats",  "pause",   "groups",
};
#define KNOWN_KEYS (sizeof known_keys / sizeof known_keys[0])

/* Full SSCAN iterations of the registry are bounded by its size; this only guards
 * against a server that never returns cursor 0. */
#define KNOWN_SCAN_STEPS_MAX 100000

/*
 * One SSCAN step of the registry from @cursor (MATCH @match when not NULL): on DQ_OK
 * *@r is the reply, checked to be {cursor, [members]} (the caller frees it), *@items its
 * members and *@next the cursor to go on from (0: done).
 */
static int
sscan_step(dq_client *c, long long cursor, const char *match, redisReply **r,
           const redisReply **items, long long *next, dq_err *err)
{
    char cur[32];
    const char *argv[7] = {"SSCAN", REGISTRY_KEY, cur, "COUNT", STR(DQ_STEP_MAX), "MATCH", match};
    size_t lens[7] = {5, sizeof REGISTRY_KEY - 1,          0, 5, sizeof STR(DQ_STEP_MAX) - 1,
                      5, match != NULL ? strlen(match) : 0};
    int rc;

    lens[2] = (size_t)snprintf(cur, sizeof cur, "%lld", cursor);
    *r = NULL;
    if ((rc = dq_conn_command(c, match != NULL ? 7 : 5, argv, lens, r, err)) != DQ_OK)
        return rc;
    if ((*r)->type == REDIS_REPLY_ERROR) {
        rc = dq_err_from_reply(err, "queues", (*r)->str, (*r)->len);
    } else if ((*r)->type != REDIS_REPLY_ARRAY || (*r)->elements != 2 ||
               (*r)->element[0]->type != REDIS_REPLY_STRING ||
               (*r)->element[1]->type != REDIS_REPLY_ARRAY) {
        rc = dq_err_set(err, DQ_EPROTO, "queues: unexpected SSCAN reply");
    } else {
        *items = (*r)->element[1];
        *next = strtoll((*r)->element[0]->str, NULL, 10);
        return DQ_OK;
    }
    freeReplyObject(*r);
    *r = NULL;
    return rc;
}

/* Whether the registry holds @queue: SSCAN MATCH, since the viewer role may SSCAN but
 * not SISMEMBER. A queue name has no glob character (* ? [ ] \ are not allowed in
 * one), so MATCH compares it exactly. */
static int
registered(dq_client *c, const char *queue, bool *found, dq_err *err)
{
    long long cursor = 0;
    int rc = DQ_OK;

    *found = false;
    for (int step = 0; step < KNOWN_SCAN_STEPS_MAX && !*found; step++) {
        const redisReply *items;
        redisReply *r;
        if ((rc = sscan_step(c, cursor, queue, &r, &items, &cursor, err)) != DQ_OK)
            break;
        for (size_t i = 0; i < items->elements; i++)
            if (items->element[i]->type == REDIS_REPLY_STRING &&
                strcmp(items->element[i]->str, queue) == 0)
                *found = true;
        freeReplyObject(r);
        if (cursor <= 0)
            break;
    }
    return rc;
}

int
dq_queue_known(dq_client *c, const char *queue, bool *known, dq_err *err)
{
    char names[KNOWN_KEYS][DQ_QUEUE_NAME_MAX + 16];
    const char *argv[KNOWN_KEYS + 1] = {"EXISTS"};
    size_t lens[KNOWN_KEYS + 1] = {6};
    redisReply *r = NULL;
    int rc = dq_queue_name_check(queue, err);

    *known = false;
    if (rc != DQ_OK)
        return rc;
    for (size_t i = 0; i < KNOWN_KEYS; i++) {
        lens[i + 1] =
            (size_t)snprintf(names[i], sizeof names[i], "dq:{%s}:%s", queue, known_keys[i]);
        argv[i + 1] = names[i];
    }
    if ((rc = dq_conn_command(c, (int)KNOWN_KEYS + 1, argv, lens, &r, err)) != DQ_OK)
        return rc;
    if (r->type == REDIS_REPLY_INTEGER)
        *known = r->integer > 0;
    else
        rc = r->type == REDIS_REPLY_ERROR ? dq_err_from_reply(err, "queues", r->str, r->len)
                                          : dq_err_set(err, DQ_EPROTO, "queues: unexpected reply");
    freeReplyObject(r);
    if (rc == DQ_OK && !*known)
        rc = registered(c, queue, known, err);
    return rc;
}

int
dq_registry_forget(dq_client *c, const void *name, size_t len, bool *removed, dq_err *err)
{
    const char *argv[3] = {"SREM", REGISTRY_KEY, name};
    size_t lens[3] = {4, sizeof REGISTRY_KEY - 1, len};
    redisReply *r = NULL;
    int rc = dq_conn_command(c, 3, argv, lens, &r, err);

    *removed = false;
    if (rc != DQ_OK)
        return rc;
    if (r->type == REDIS_REPLY_ERROR)
        rc = dq_err_from_reply(err, "queues", r->str, r->len);
    else if (r->type == REDIS_REPLY_INTEGER)
        *removed = r->integer > 0;
    else
        rc = dq_err_set(err, DQ_EPROTO, "queues: unexpected SREM reply");
    freeReplyObject(r);
    return rc;
}

int
dq_queue_forget(dq_client *c, const char *queue, dq_err *err)
{
    bool removed;
    int rc = dq_queue_name_check(queue, err);

    if (rc != DQ_OK)
        return rc;
    rc = dq_registry_forget(c, queue, strlen(queue), &removed, err);
    if (rc == DQ_OK)
        dq_names_remove(&c->registered, queue); /* a later call registers it again */
    return rc;
}

void
dq_members_free(struct dq_member *m, size_t n)
{
    for (size_t i = 0; i < n && m != NULL; i++)
        free(m[i].bytes);
    free(m);
}

int
dq_registry_invalid(dq_client *c, size_t most, struct dq_member **out, size_t *n, int64_t *scanned,
                    dq_err *err)
{
    long long cursor = 0;
    int rc = DQ_OK;

    *out = NULL;
    *n = 0;
    *scanned = 0;
    for (int step = 0; step < KNOWN_SCAN_STEPS_MAX && rc == DQ_OK; step++) {
        const redisReply *items;
        redisReply *r;
        if ((rc = sscan_step(c, cursor, NULL, &r, &items, &cursor, err)) != DQ_OK)
            break;
        for (size_t i = 0; i < items->elements && rc == DQ_OK; i++) {
            const redisReply *e = items->element[i];
            if (e->type != REDIS_REPLY_STRING)
                continue;
            (*scanned)++;
            if (*n >= most || (memchr(e->str, '\0', e->len) == NULL &&
                               dq_queue_name_check(e->str, NULL) == DQ_OK))
                continue;
            struct dq_member *grown = realloc(*out, (*n + 1) * sizeof *grown);
            char *copy = malloc(e->len + 1);
            if (grown != NULL)
                *out = grown;
            if (grown == NULL || copy == NULL) {
                free(copy);
                rc = dq_err_set(err, DQ_ENOMEM, "queues: out of memory");
                break;
            }
            memcpy(copy, e->str, e->len);
            copy[e->len] = '\0';
            (*out)[(*n)++] = (struct dq_member){copy, e->len};
        }
        freeReplyObject(r);
        if (cursor <= 0)
            break;
    }
    if (rc != DQ_OK) {
        dq_members_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
