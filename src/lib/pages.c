/* SPDX-License-Identifier: MIT */
/*
 * pages.c: pages of a partitioned queue's logical queue (pages.h, PROTOCOL.md 14.7).
 *
 * A merged page of limit L asks every partition for L tasks from its own position and
 * takes the first L of their k-way merge: the first L of the logical view can hold at
 * most L of any one partition, so nothing a partition holds beyond its L can belong to
 * the page. The cursor is one rank per partition, moved by what the merge took from
 * each: ranks, not a last score and id, because the page script pages by rank (one
 * O(log N + L) call, no script change), and a listing that moves between two pages
 * shifts or repeats rows as --offset does on one partition.
 */
#include "pages.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "parts.h"
#include "reply.h"
#include "scripts.h"
#include "task.h"
#include "view.h"

/* The largest rank a cursor's text may hold (as --offset's bound). */
#define RANK_MAX (1LL << 40)

/* The page call's arguments: view, offset, limit and the group when there is one. */
static void
page_args(struct dq_args *a, dq_view view, const char *group, int64_t offset, size_t limit)
{
    dq_args_init(a);
    dq_args_str(a, group != NULL ? "failed" : dq_view_name(view));
    dq_args_i64(a, offset);
    dq_args_i64(a, (int64_t)limit);
    if (group != NULL)
        dq_args_str(a, group);
}

/* (the group's own text is the page script's to check: it names what it refuses) */
static int
check(dq_view view, const char *group, dq_err *err)
{
    if (dq_view_name(view) == NULL)
        return dq_err_set(err, DQ_EINVAL, "view: %d is not a view", (int)view);
    if (group != NULL && view != DQ_VIEW_FAILED)
        return dq_err_set(err, DQ_EINVAL, "group: only the failed view has groups");
    return DQ_OK;
}

/* The score a view is ordered by, as the page read it. */
static int64_t
score_of(dq_view view, const dq_task *t)
{
    switch (view) {
    case DQ_VIEW_INFLIGHT:
        return t->lease_ms;
    case DQ_VIEW_FAILED:
        return t->failed_ms;
    case DQ_VIEW_DONE:
        return t->done_ms;
    default:
        return t->due_ms;
    }
}

/* Whether @a goes before @b in @view's merged order (from a lower partition on a tie:
 * the merge asks only when @a's partition is above @b's). Parked is key by key in each
 * partition, no score order, so it is partition by partition. */
static bool
before(dq_view view, const dq_task *a, const dq_task *b)
{
    if (view == DQ_VIEW_PARKED)
        return false;
    if (view == DQ_VIEW_FAILED || view == DQ_VIEW_DONE)
        return score_of(view, a) > score_of(view, b);
    return score_of(view, a) < score_of(view, b);
}

/* Gives @cur one position per partition of @all (new ones at 0). */
static int
cursor_fit(dq_page_cursor *cur, size_t all, const char *queue, dq_err *err)
{
    if (cur->n > all)
        return dq_err_set(err, DQ_EINVAL,
                          "cursor: %zu positions; queue %s has %zu partitions (a cursor of "
                          "another queue?)",
                          cur->n, queue, all);
    if (cur->n == all)
        return DQ_OK;
    int64_t *at = realloc(cur->at, all * sizeof *at);
    if (at == NULL)
        return dq_err_set(err, DQ_ENOMEM, "out of memory for a cursor of %zu partitions", all);
    for (size_t i = cur->n; i < all; i++)
        at[i] = 0;
    cur->at = at;
    cur->n = all;
    return DQ_OK;
}

int
dq_pages_merge(dq_client *c, const char *queue, dq_view view, const char *group, size_t limit,
               dq_page_cursor *cur, dq_page *out, dq_err *err)
{
    const struct dq_parts *p;
    dq_page *pages = NULL;
    struct dq_page_reply *prs = NULL;
    struct dq_args *args = NULL;
    const struct dq_args **argps = NULL;
    dq_err *errs = NULL;
    size_t *head = NULL, all = 0;
    int *rcs = NULL, rc;

    memset(out, 0, sizeof *out);
    if ((rc = check(view, group, err)) != DQ_OK || (rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    all = p->all;
    if ((rc = cursor_fit(cur, all, queue, err)) != DQ_OK)
        return rc;
    if (all == 1) { /* the one call of before, with the script's own checks */
        struct dq_page_reply pr = {out, view};
        struct dq_args a;
        page_args(&a, view, group, cur->at[0], limit);
        rc = dq_scripts_run(c, DQ_SCRIPT_PAGE, queue, &a, dq_reply_page, &pr, err);
        dq_args_free(&a);
        if (rc == DQ_OK)
            cur->at[0] += (int64_t)out->n;
        else
            dq_page_free(out);
        return rc;
    }
    if (limit < 1 || limit > DQ_CALL_MAX)
        return dq_err_set(err, DQ_EINVAL, "limit: %zu is not in 1..%d", limit, DQ_CALL_MAX);
    pages = calloc(all, sizeof *pages);
    prs = calloc(all, sizeof *prs);
    args = calloc(all, sizeof *args);
    argps = calloc(all, sizeof *argps);
    errs = calloc(all, sizeof *errs);
    head = calloc(all, sizeof *head);
    rcs = calloc(all, sizeof *rcs);
    out->tasks = malloc(limit * sizeof *out->tasks);
    if (pages == NULL || prs == NULL || args == NULL || argps == NULL || errs == NULL ||
        head == NULL || rcs == NULL || out->tasks == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory reading %zu partitions", all);
        goto out;
    }
    for (size_t i = 0; i < all; i++) {
        prs[i] = (struct dq_page_reply){&pages[i], view};
        page_args(&args[i], view, group, cur->at[i], limit);
        argps[i] = &args[i];
    }
    rc = dq_scripts_run_multi(c, DQ_SCRIPT_PAGE, (const char *const *)p->names, argps, all,
                              dq_reply_page, prs, sizeof *prs, all, rcs, errs, err);
    for (size_t i = 0; rc == DQ_OK && i < all; i++) {
        if (rcs[i] != DQ_OK)
            rc = dq_err_set(err, rcs[i], "partition %zu: %.200s", i, errs[i].msg);
    }
    if (rc != DQ_OK)
        goto out;
    while (out->n < limit) {
        size_t best = all;
        for (size_t i = 0; i < all; i++) {
            if (head[i] < pages[i].n && (best == all || before(view, &pages[i].tasks[head[i]],
                                                               &pages[best].tasks[head[best]])))
                best = i;
        }
        if (best == all)
            break;
        /* moved, not copied: the partition's page no longer owns it */
        out->tasks[out->n++] = pages[best].tasks[head[best]];
        dq_task_init(&pages[best].tasks[head[best]++]);
    }
    for (size_t i = 0; i < all; i++) {
        out->total =
            pages[i].total > INT64_MAX - out->total ? INT64_MAX : out->total + pages[i].total;
        out->now_ms = pages[i].now_ms > out->now_ms ? pages[i].now_ms : out->now_ms;
        cur->at[i] += (int64_t)head[i];
    }
out:
    for (size_t i = 0; i < all; i++) {
        if (pages != NULL)
            dq_page_free(&pages[i]);
        if (args != NULL && argps != NULL && argps[i] != NULL)
            dq_args_free(&args[i]);
    }
    if (rc != DQ_OK)
        dq_page_free(out);
    free(pages);
    free(prs);
    free(args);
    free(argps);
    free(errs);
    free(head);
    free(rcs);
    return rc;
}

int
dq_page_next(dq_client *c, const char *queue, dq_view view, size_t limit, dq_page_cursor *cur,
             dq_page *out, dq_err *err)
{
    return dq_pages_merge(c, queue, view, NULL, limit, cur, out, err);
}

void
dq_page_cursor_free(dq_page_cursor *cur)
{
    if (cur == NULL)
        return;
    free(cur->at);
    memset(cur, 0, sizeof *cur);
}

int
dq_pages_at(dq_client *c, const char *queue, dq_view view, const char *group, size_t offset,
            size_t limit, dq_page *out, dq_err *err)
{
    dq_page_cursor cur = {0};
    int rc = DQ_OK;

    memset(out, 0, sizeof *out);
    while (offset > 0) {
        size_t step = offset < DQ_CALL_MAX ? offset : DQ_CALL_MAX, got;
        dq_page skip;
        if ((rc = dq_pages_merge(c, queue, view, group, step, &cur, &skip, err)) != DQ_OK)
            goto out;
        got = skip.n;
        dq_page_free(&skip);
        offset -= got;
        if (got < step)
            break; /* past the end: the page below is empty, with the view's total */
    }
    rc = dq_pages_merge(c, queue, view, group, limit, &cur, out, err);
out:
    dq_page_cursor_free(&cur);
    return rc;
}

int
dq_pages_part_get(dq_client *c, const char *queue, size_t part, dq_view view, const char *group,
                  size_t offset, size_t limit, dq_page *out, dq_err *err)
{
    const struct dq_parts *p;
    struct dq_page_reply pr = {out, view};
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = check(view, group, err)) != DQ_OK || (rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (part >= p->all)
        return dq_err_set(err, DQ_EINVAL, "partition: %zu is not below %zu", part, p->all);
    page_args(&a, view, group, (int64_t)offset, limit);
    rc = dq_scripts_run(c, DQ_SCRIPT_PAGE, p->names[part], &a, dq_reply_page, &pr, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_page_free(out);
    return rc;
}

size_t
dq_page_cursor_format(const dq_page_cursor *cur, char *buf, size_t size)
{
    size_t len = 0;

    if (size > 0)
        buf[0] = '\0';
    if (cur->n == 0)
        return (size_t)snprintf(buf, size, "0");
    for (size_t i = 0; i < cur->n; i++) {
        int w = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%" PRId64,
                         i > 0 ? "." : "", cur->at[i]);
        len += w > 0 ? (size_t)w : 0;
    }
    return len;
}

int
dq_page_cursor_parse(const char *s, const char *what, dq_page_cursor *out, dq_err *err)
{
    size_t n = 1;
    int rc = DQ_EINVAL;

    memset(out, 0, sizeof *out);
    for (const char *q = s; *q != '\0'; q++)
        n += *q == '.';
    if (s[0] == '\0' || n > DQ_PARTITIONS_MAX)
        goto out;
    if ((out->at = calloc(n, sizeof *out->at)) == NULL) {
        rc = DQ_ENOMEM;
        goto out;
    }
    out->n = n;
    for (size_t i = 0; i < n; i++, s++) {
        int64_t v = 0;
        if (*s < '0' || *s > '9')
            goto out;
        for (; *s >= '0' && *s <= '9'; s++) {
            if ((v = v * 10 + (*s - '0')) > RANK_MAX)
                goto out;
        }
        out->at[i] = v;
        if (*s != (i + 1 < n ? '.' : '\0'))
            goto out;
    }
    rc = DQ_OK;
out:
    if (rc == DQ_OK)
        return DQ_OK;
    dq_page_cursor_free(out);
    if (rc == DQ_ENOMEM)
        return dq_err_set(err, rc, "out of memory for a cursor of %zu partitions", n);
    return dq_err_set(err, rc,
                      "%s: not a cursor: 1..%d ranks (0..2^40) joined by '.', as ls prints "
                      "after a page",
                      what, DQ_PARTITIONS_MAX);
}
