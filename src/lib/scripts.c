/* SPDX-License-Identifier: MIT */
/*
 * scripts.c: EVALSHA with transparent reload on NOSCRIPT, the queue key layout, and
 * script error replies mapped to codes. No reply leaves this file except through a
 * parse callback that copies what it needs.
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

static bool
is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && r->len >= 8 && memcmp(r->str, "NOSCRIPT", 8) == 0;
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
    if (r->type == REDIS_REPLY_ERROR)
        rc = dq_err_from_reply(err, src->name, r->str, r->len);
    else if (r->type != REDIS_REPLY_STRING || r->len != 40 || memcmp(r->str, src->sha1, 40) != 0)
        rc = dq_err_set(err, DQ_EPROTO, "SCRIPT LOAD of %s returned an unexpected SHA1", src->name);
    freeReplyObject(r);
    return rc;
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

    rc = dq_queue_name_check(queue, err);
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
    argv[0] = "EVALSHA";
    lens[0] = 7;
    argv[1] = src->sha1;
    lens[1] = 40;
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

    rc = dq_conn_command(c, (int)argc, argv, lens, &r, err);
    if (rc == DQ_OK && is_noscript(r)) {
        freeReplyObject(r);
        r = NULL;
        rc = load_script(c, src, err);
        if (rc == DQ_OK)
            rc = dq_conn_command(c, (int)argc, argv, lens, &r, err);
    }
    if (rc != DQ_OK)
        goto out;
    if (r->type == REDIS_REPLY_ERROR) {
        rc = dq_err_from_reply(err, src->name, r->str, r->len);
        goto out;
    }
    if (parse != NULL)
        rc = parse(r, out, err);
out:
    freeReplyObject(r);
    free(argv);
    free(lens);
    return rc;
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
