/* SPDX-License-Identifier: MIT */
/*
 * groups.c: error groups and the bulk actions scoped to a filter (PROTOCOL.md
 * 4.5). The scripts keep the groups; this file only calls them: errors.lua for the list,
 * requeue.lua and drop.lua in their filtered 'all' mode (a group, a text match or a task
 * key), page.lua with a group. On a partitioned queue (PROTOCOL.md 14, "Error groups and
 * bulk actions") it merges the partitions' groups and walks the partitions one by one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "err.h"
#include "pages.h"
#include "parts.h"
#include "reply.h"
#include "scripts.h"

static const char *const filter_words[] = {
    [DQ_FILTER_NONE] = "",
    [DQ_FILTER_GROUP] = "group",
    [DQ_FILTER_MATCH] = "match",
    [DQ_FILTER_KEY] = "key",
};

int
dq_filter_check(const dq_filter *f, dq_err *err)
{
    size_t n;

    if (f == NULL || f->kind == DQ_FILTER_NONE)
        return DQ_OK;
    if ((unsigned)f->kind > DQ_FILTER_KEY)
        return dq_err_set(err, DQ_EINVAL, "filter: %d is not a filter", (int)f->kind);
    n = f->value != NULL ? strlen(f->value) : 0;
    if (f->kind == DQ_FILTER_GROUP && (n < 1 || n > DQ_SIGNATURE_MAX))
        return dq_err_set(err, DQ_EINVAL,
                          "--group: must be 1..%d bytes (a group id or a signature)",
                          DQ_SIGNATURE_MAX);
    if (f->kind == DQ_FILTER_MATCH && (n < 1 || n > DQ_NEEDLE_MAX))
        return dq_err_set(err, DQ_EINVAL, "--match: must be 1..%d bytes", DQ_NEEDLE_MAX);
    if (f->kind == DQ_FILTER_KEY && (n < 1 || n > DQ_KEY_MAX))
        return dq_err_set(err, DQ_EINVAL, "--key: must be 1..%d bytes (got %zu)", DQ_KEY_MAX, n);
    for (size_t i = 0; f->kind == DQ_FILTER_KEY && i < n; i++) {
        unsigned char ch = (unsigned char)f->value[i];
        if (ch < 0x20 || ch == 0x7f) /* no task has such a key: enqueue refuses it */
            return dq_err_set(err, DQ_EINVAL, "--key: byte %zu is a control character", i + 1);
    }
    return DQ_OK;
}

/* Orders groups as errors.lua does: largest first, then newest, then by id. */
static int
group_cmp(const void *pa, const void *pb)
{
    const dq_error_group *a = pa, *b = pb;

    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->last_ms != b->last_ms)
        return a->last_ms > b->last_ms ? -1 : 1;
    return strcmp(a->id, b->id);
}

static bool
same_signature(const dq_error_group *a, const dq_error_group *b)
{
    return a->signature_len == b->signature_len &&
           memcmp(a->signature, b->signature, a->signature_len) == 0;
}

/* Moves @one's groups into @sum, merged by signature (the one key every partition
 * shares): counts add up, first seen is the earliest, last seen the latest, whose
 * partition gives the sample. */
static int
errors_merge(dq_errors *sum, dq_errors *one, dq_err *err)
{
    dq_error_group *v;

    sum->failed += one->failed > 0 ? one->failed : 0;
    if (one->now_ms > sum->now_ms)
        sum->now_ms = one->now_ms;
    if (one->n == 0)
        return DQ_OK;
    if ((v = realloc(sum->groups, (sum->n + one->n) * sizeof *v)) == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory merging error groups");
    sum->groups = v;
    for (size_t i = 0; i < one->n; i++) {
        dq_error_group *g = &one->groups[i], *s = NULL;
        for (size_t j = 0; j < sum->n && s == NULL; j++)
            if (same_signature(&v[j], g))
                s = &v[j];
        if (s == NULL) {
            v[sum->n++] = *g;
            memset(g, 0, sizeof *g);
            continue;
        }
        s->count += g->count;
        if (g->first_ms < s->first_ms)
            s->first_ms = g->first_ms;
        if (g->last_ms > s->last_ms) {
            s->last_ms = g->last_ms;
            free(s->sample_id);
            free(s->sample_error);
            s->sample_id = g->sample_id;
            s->sample_id_len = g->sample_id_len;
            s->sample_error = g->sample_error;
            s->sample_error_len = g->sample_error_len;
            g->sample_id = g->sample_error = NULL;
        }
    }
    return DQ_OK;
}

/* The groups of every partition of @p, one call each (stats' way: pipelined, or one
 * node at a time on a cluster), into @each (p->all of them, zeroed). */
static int
errors_each(dq_client *c, const struct dq_parts *p, dq_errors *each, dq_err *err)
{
    int *rcs = calloc(p->all, sizeof *rcs);
    dq_err *errs = calloc(p->all, sizeof *errs);
    struct dq_args a;
    int rc;

    if (rcs == NULL || errs == NULL) {
        free(rcs);
        free(errs);
        return dq_err_set(err, DQ_ENOMEM, "out of memory reading %zu partitions", p->all);
    }
    dq_args_init(&a);
    rc = dq_scripts_run_each(c, DQ_SCRIPT_ERRORS, (const char *const *)p->names, p->all, &a,
                             dq_reply_errors, each, sizeof *each, p->all, rcs, errs, err);
    for (size_t i = 0; rc == DQ_OK && i < p->all; i++)
        if (rcs[i] != DQ_OK)
            rc = dq_err_set(err, rcs[i], "partition %zu: %.200s", i, errs[i].msg);
    dq_args_free(&a);
    free(rcs);
    free(errs);
    return rc;
}

int
dq_errors_get(dq_client *c, const char *queue, dq_errors *out, dq_err *err)
{
    const struct dq_parts *p;
    dq_errors *each = NULL;
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all <= 1) {
        dq_args_init(&a);
        rc = dq_scripts_run(c, DQ_SCRIPT_ERRORS, queue, &a, dq_reply_errors, out, err);
        dq_args_free(&a);
        if (rc != DQ_OK)
            dq_errors_free(out);
        return rc;
    }
    size_t all = p->all;
    if ((each = calloc(all, sizeof *each)) == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory reading %zu partitions", all);
    rc = errors_each(c, p, each, err);
    for (size_t i = 0; rc == DQ_OK && i < all; i++)
        rc = errors_merge(out, &each[i], err);
    if (rc == DQ_OK && out->n > 1)
        qsort(out->groups, out->n, sizeof *out->groups, group_cmp);
    for (size_t i = 0; i < all; i++)
        dq_errors_free(&each[i]);
    free(each);
    if (rc != DQ_OK)
        dq_errors_free(out);
    return rc;
}

void
dq_errors_free(dq_errors *e)
{
    if (e == NULL)
        return;
    for (size_t i = 0; i < e->n; i++) {
        free(e->groups[i].signature);
        free(e->groups[i].sample_id);
        free(e->groups[i].sample_error);
    }
    free(e->groups);
    memset(e, 0, sizeof *e);
}

/* Whether @queue has more than one partition into *@yes; DQ_OK or the map's error (kept
 * apart from the answer: an error code can be any int, DQ_EINVAL is -1). */
static int
parted(dq_client *c, const char *queue, bool *yes, dq_err *err)
{
    const struct dq_parts *p;
    int rc = dq_parts_peek(c, queue, &p, err);

    *yes = rc == DQ_OK && p->all > 1;
    return rc;
}

static size_t
step_of(size_t step)
{
    return step == 0 ? DQ_BULK_STEP : step > DQ_STEP_MAX ? DQ_STEP_MAX : step;
}

/* ---- a partitioned queue's bulk actions --------------------------------------------- */

/* Finds the group @value (an id or a signature) names in any partition, by one errors call
 * each: its id into cur->part_group and the partitions that hold its signature (the key
 * the partitions share) into cur->part_has. DQ_ENOTFOUND when none does. */
static int
group_resolve(dq_client *c, const struct dq_parts *p, const char *value, dq_bulk *cur, dq_err *err)
{
    size_t all = p->all, vlen = strlen(value);
    dq_errors *each = calloc(all, sizeof *each);
    const dq_error_group *hit = NULL;
    int rc;

    if (each == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory reading %zu partitions", all);
    rc = errors_each(c, p, each, err);
    for (size_t i = 0; rc == DQ_OK && i < all && hit == NULL; i++)
        for (size_t j = 0; j < each[i].n && hit == NULL; j++) {
            const dq_error_group *g = &each[i].groups[j];
            if (strcmp(g->id, value) == 0 ||
                (g->signature_len == vlen && memcmp(g->signature, value, vlen) == 0))
                hit = g;
        }
    if (rc == DQ_OK && hit == NULL)
        rc = dq_err_set(err, DQ_ENOTFOUND, "group: no group \"%.*s\" in any of %zu partitions",
                        (int)(vlen > 64 ? 64 : vlen), value, all);
    if (rc == DQ_OK) {
        snprintf(cur->part_group, sizeof cur->part_group, "%s", hit->id);
        memset(cur->part_has, 0, sizeof cur->part_has);
        for (size_t i = 0; i < all; i++)
            for (size_t j = 0; j < each[i].n; j++)
                if (same_signature(&each[i].groups[j], hit))
                    cur->part_has[i / 64] |= UINT64_C(1) << (i % 64);
    }
    for (size_t i = 0; i < all; i++)
        dq_errors_free(&each[i]);
    free(each);
    return rc;
}

/*
 * One step of a bulk action on partitioned queue @queue (PROTOCOL.md 14, "Error groups and
 * bulk actions"): requeue (@delay_ms, @spread_ms: each partition's tasks spread over it)
 * when @requeue, else drop, of filter @f's failures (NULL or kind none: every failure),
 * @step failures looked at (0: DQ_BULK_STEP). Each step is one bounded call on one
 * partition: partitions 1.. in order (no audit entry), then partition 0, whose last step
 * writes the one entry with the walk's totals. A group is found by signature in every
 * partition first (one errors call each); DQ_ENOTFOUND when none holds it.
 */
static int
parts_bulk_step(dq_client *c, const char *queue, bool requeue, const dq_filter *f, int64_t delay_ms,
                int64_t spread_ms, size_t step, dq_bulk *cur, dq_err *err)
{
    const struct dq_parts *p;
    dq_filter none = {DQ_FILTER_NONE, NULL};
    dq_bulk one;
    struct dq_args a;
    char audit[80], name[DQ_QUEUE_NAME_MAX + 32];
    size_t q = 0, base_done, base_total, base_skipped;
    bool first;
    int rc;

    if (f == NULL)
        f = &none;
    if ((rc = dq_filter_check(f, err)) != DQ_OK || (rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (f->kind == DQ_FILTER_GROUP && cur->part_group[0] == '\0' &&
        (rc = group_resolve(c, p, f->value, cur, err)) != DQ_OK)
        return rc;
    /* partitions 1.. first, 0 last: its last step writes the queue's one audit entry; a
     * partition begun stays the one walked though a resize adds partitions meanwhile */
    for (; cur->part_until == 0;) {
        if (cur->part_at >= p->all) {
            cur->done = true;
            return DQ_OK;
        }
        q = cur->part_at + 1 < p->all ? cur->part_at + 1 : 0;
        if (q == 0 || f->kind != DQ_FILTER_GROUP || (cur->part_has[q / 64] >> (q % 64) & 1))
            break;
        cur->part_at++; /* this partition has none of the group: nothing to ask it */
    }
    if (cur->part_until == 0)
        cur->part_q = q;
    q = cur->part_q;
    if (q >= p->all)
        return dq_err_set(err, DQ_EPROTO, "partitions: %s has %zu partitions; the walk is on %zu",
                          queue, p->all, q);
    snprintf(name, sizeof name, "%s", p->names[q]);
    first = cur->part_until == 0;
    base_done = cur->done_n - cur->part_done;
    base_total = cur->total - cur->part_total;
    base_skipped = cur->skipped - cur->part_skipped;
    if (q == 0)
        snprintf(audit, sizeof audit, "+%zu,%zu,%zu", base_done, requeue ? base_total : 0,
                 requeue ? base_skipped : 0);
    else
        snprintf(audit, sizeof audit, "off");
    memset(&one, 0, sizeof one);
    one.until_ms = cur->part_until;
    one.total = cur->part_total;
    one.done_n = cur->part_done;
    one.skipped = cur->part_skipped;
    memcpy(one.cursor_key, cur->cursor_key, sizeof one.cursor_key);
    one.cursor_ms = cur->cursor_ms;
    dq_args_init(&a);
    dq_args_str(&a, "all");
    if (requeue) {
        dq_args_i64(&a, delay_ms);
        dq_args_str(&a, dq_client_who(c));
    } else {
        dq_args_str(&a, dq_client_who(c));
    }
    if (first)
        dq_args_str(&a, "");
    else
        dq_args_i64(&a, one.until_ms);
    if (requeue) {
        dq_args_i64(&a, spread_ms);
        if (first)
            dq_args_str(&a, "");
        else
            dq_args_i64(&a, (int64_t)one.total);
        dq_args_i64(&a, (int64_t)one.done_n);
        dq_args_i64(&a, (int64_t)one.skipped);
        dq_args_str(&a, first ? "" : one.cursor_key);
        dq_args_i64(&a, first ? 0 : one.cursor_ms);
    }
    dq_args_str(&a, filter_words[f->kind]);
    dq_args_str(&a, f->kind == DQ_FILTER_GROUP ? cur->part_group
                    : f->value != NULL         ? f->value
                                               : "");
    if (!requeue) {
        dq_args_i64(&a, (int64_t)one.done_n);
        dq_args_str(&a, first ? "" : one.cursor_key);
        dq_args_i64(&a, first ? 0 : one.cursor_ms);
    }
    dq_args_i64(&a, (int64_t)step_of(step));
    dq_args_str(&a, audit);
    rc = dq_scripts_run(c, requeue ? DQ_SCRIPT_REQUEUE : DQ_SCRIPT_DROP, name, &a,
                        requeue ? dq_reply_requeue_all : dq_reply_drop_all, &one, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        return rc;
    cur->done_n = base_done + one.done_n;
    cur->total = base_total + one.total;
    cur->skipped = base_skipped + one.skipped;
    if (cur->until_ms == 0)
        cur->until_ms = one.until_ms;
    if (one.done) {
        cur->part_at++;
        cur->part_until = 0;
        cur->part_total = cur->part_done = cur->part_skipped = 0;
        cur->cursor_key[0] = '\0';
        cur->cursor_ms = 0;
        cur->done = q == 0;
        return DQ_OK;
    }
    cur->part_until = one.until_ms;
    cur->part_total = one.total;
    cur->part_done = one.done_n;
    cur->part_skipped = one.skipped;
    memcpy(cur->cursor_key, one.cursor_key, sizeof cur->cursor_key);
    cur->cursor_ms = one.cursor_ms;
    return DQ_OK;
}

int
dq_requeue_all_step(dq_client *c, const char *queue, int64_t delay_ms, int64_t spread_ms,
                    dq_bulk *cur, dq_err *err)
{
    const struct dq_parts *p;
    struct dq_args a;
    bool first = cur->until_ms == 0;
    int rc;

    if (cur->done)
        return DQ_OK;
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all > 1) /* the whole failed set of every partition, as many per step */
        return parts_bulk_step(c, queue, true, NULL, delay_ms, spread_ms, DQ_STEP_MAX, cur, err);
    dq_args_init(&a);
    dq_args_str(&a, "all");
    dq_args_i64(&a, delay_ms);
    dq_args_str(&a, dq_client_who(c));
    if (first) {
        dq_args_str(&a, "");
        dq_args_i64(&a, spread_ms);
        dq_args_str(&a, "");
    } else {
        dq_args_i64(&a, cur->until_ms);
        dq_args_i64(&a, spread_ms);
        dq_args_i64(&a, (int64_t)cur->total);
    }
    dq_args_i64(&a, (int64_t)cur->done_n);
    dq_args_i64(&a, (int64_t)cur->skipped);
    dq_args_str(&a, first ? "" : cur->cursor_key);
    dq_args_i64(&a, first ? 0 : cur->cursor_ms);
    rc = dq_scripts_run(c, DQ_SCRIPT_REQUEUE, queue, &a, dq_reply_requeue_all, cur, err);
    dq_args_free(&a);
    return rc;
}

int
dq_drop_all_step(dq_client *c, const char *queue, dq_bulk *cur, dq_err *err)
{
    const struct dq_parts *p;
    struct dq_args a;
    int rc;

    if (cur->done)
        return DQ_OK;
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->all > 1)
        return parts_bulk_step(c, queue, false, NULL, 0, 0, DQ_STEP_MAX, cur, err);
    dq_args_init(&a);
    dq_args_str(&a, "all");
    dq_args_str(&a, dq_client_who(c));
    if (cur->until_ms == 0)
        dq_args_str(&a, "");
    else
        dq_args_i64(&a, cur->until_ms);
    rc = dq_scripts_run(c, DQ_SCRIPT_DROP, queue, &a, dq_reply_drop_all, cur, err);
    dq_args_free(&a);
    return rc;
}

int
dq_requeue_filter_step(dq_client *c, const char *queue, const dq_filter *f, int64_t delay_ms,
                       int64_t spread_ms, size_t step, dq_bulk *cur, dq_err *err)
{
    struct dq_args a;
    bool first = cur->until_ms == 0;
    dq_filter none = {DQ_FILTER_NONE, NULL};
    int rc;

    if (cur->done)
        return DQ_OK;
    if (f == NULL)
        f = &none;
    if ((rc = dq_filter_check(f, err)) != DQ_OK)
        return rc;
    bool many;
    if ((rc = parted(c, queue, &many, err)) != DQ_OK)
        return rc;
    if (many)
        return parts_bulk_step(c, queue, true, f, delay_ms, spread_ms, step, cur, err);
    dq_args_init(&a);
    dq_args_str(&a, "all");
    dq_args_i64(&a, delay_ms);
    dq_args_str(&a, dq_client_who(c));
    if (first)
        dq_args_str(&a, "");
    else
        dq_args_i64(&a, cur->until_ms);
    dq_args_i64(&a, spread_ms);
    if (first)
        dq_args_str(&a, "");
    else
        dq_args_i64(&a, (int64_t)cur->total);
    dq_args_i64(&a, (int64_t)cur->done_n);
    dq_args_i64(&a, (int64_t)cur->skipped);
    dq_args_str(&a, first ? "" : cur->cursor_key);
    dq_args_i64(&a, first ? 0 : cur->cursor_ms);
    dq_args_str(&a, filter_words[f->kind]);
    dq_args_str(&a, f->value != NULL ? f->value : "");
    dq_args_i64(&a, (int64_t)step_of(step));
    rc = dq_scripts_run(c, DQ_SCRIPT_REQUEUE, queue, &a, dq_reply_requeue_all, cur, err);
    dq_args_free(&a);
    return rc;
}

int
dq_drop_filter_step(dq_client *c, const char *queue, const dq_filter *f, size_t step, dq_bulk *cur,
                    dq_err *err)
{
    struct dq_args a;
    bool first = cur->until_ms == 0;
    int rc;

    if (cur->done)
        return DQ_OK;
    if (f == NULL || f->kind == DQ_FILTER_NONE)
        return dq_drop_all_step(c, queue, cur, err);
    if ((rc = dq_filter_check(f, err)) != DQ_OK)
        return rc;
    bool many;
    if ((rc = parted(c, queue, &many, err)) != DQ_OK)
        return rc;
    if (many)
        return parts_bulk_step(c, queue, false, f, 0, 0, step, cur, err);
    dq_args_init(&a);
    dq_args_str(&a, "all");
    dq_args_str(&a, dq_client_who(c));
    if (first)
        dq_args_str(&a, "");
    else
        dq_args_i64(&a, cur->until_ms);
    dq_args_str(&a, filter_words[f->kind]);
    dq_args_str(&a, f->value);
    dq_args_i64(&a, (int64_t)cur->done_n);
    dq_args_str(&a, first ? "" : cur->cursor_key);
    dq_args_i64(&a, first ? 0 : cur->cursor_ms);
    dq_args_i64(&a, (int64_t)step_of(step));
    rc = dq_scripts_run(c, DQ_SCRIPT_DROP, queue, &a, dq_reply_drop_all, cur, err);
    dq_args_free(&a);
    return rc;
}

int
dq_page_group_get(dq_client *c, const char *queue, const char *group, size_t offset, size_t limit,
                  dq_page *out, dq_err *err)
{
    struct dq_page_reply ps = {out, DQ_VIEW_FAILED};
    dq_filter f = {DQ_FILTER_GROUP, group};
    const struct dq_parts *p;
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = dq_filter_check(&f, err)) != DQ_OK ||
        (rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    /* the group's id is its signature's in every partition (4.6): each partition's page
     * of it, merged newest first as the failed view is (PROTOCOL.md 14.7) */
    if (p->all > 1)
        return dq_pages_at(c, queue, DQ_VIEW_FAILED, group, offset, limit, out, err);
    dq_args_init(&a);
    dq_args_str(&a, "failed");
    dq_args_i64(&a, (int64_t)offset);
    dq_args_i64(&a, (int64_t)limit);
    dq_args_str(&a, group);
    rc = dq_scripts_run(c, DQ_SCRIPT_PAGE, queue, &a, dq_reply_page, &ps, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_page_free(out);
    return rc;
}
