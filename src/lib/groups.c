/* SPDX-License-Identifier: MIT */
/*
 * groups.c: error groups and the bulk actions scoped to a filter (PROTOCOL.md
 * 4.5). The scripts keep the groups; this file only calls them: errors.lua for the list,
 * requeue.lua and drop.lua in their filtered 'all' mode (a group, a text match or a task
 * key), page.lua with a group.
 */
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "err.h"
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

int
dq_errors_get(dq_client *c, const char *queue, dq_errors *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    rc = dq_scripts_run(c, DQ_SCRIPT_ERRORS, queue, &a, dq_reply_errors, out, err);
    dq_args_free(&a);
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

static size_t
step_of(size_t step)
{
    return step == 0 ? DQ_BULK_STEP : step > DQ_STEP_MAX ? DQ_STEP_MAX : step;
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
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = dq_filter_check(&f, err)) != DQ_OK)
        return rc;
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
