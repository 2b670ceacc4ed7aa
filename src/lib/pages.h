/* SPDX-License-Identifier: MIT */
/*
 * pages.h: pages of the logical queue of a partitioned queue (docs/PROTOCOL.md 14.7):
 * one bounded page call per partition, k-way merged in the view's order, and the
 * cursor's text form ("r0.r1...", one rank per partition) that `delayq ls --after`
 * takes. On a queue that is not partitioned every call here is the one page call of
 * before.
 */
#ifndef DQ_LIB_PAGES_H
#define DQ_LIB_PAGES_H

#include <stddef.h>

#include "delayq.h"

/*
 * dq_page_next, optionally of the failed tasks of error group @group (its id or
 * signature; @view must then be DQ_VIEW_FAILED; NULL: the whole view).
 */
int dq_pages_merge(dq_client *c, const char *queue, dq_view view, const char *group, size_t limit,
                   dq_page_cursor *cur, dq_page *out, dq_err *err);

/* dq_page_get (or, with @group non-NULL, dq_page_group_get) on a partitioned queue:
 * @offset is reached by merging from the top in pages of DQ_CALL_MAX. */
int dq_pages_at(dq_client *c, const char *queue, dq_view view, const char *group, size_t offset,
                size_t limit, dq_page *out, dq_err *err);

/* One page of partition @part (< the partitions dq_partitions_get counts) alone, as
 * dq_page_get / dq_page_group_get (@group non-NULL) would read a queue: for walks that
 * need no order across partitions (export). */
int dq_pages_part_get(dq_client *c, const char *queue, size_t part, dq_view view, const char *group,
                      size_t offset, size_t limit, dq_page *out, dq_err *err);

/* @cur as text, its ranks joined by '.' ("0" for an empty cursor), into @buf; snprintf
 * semantics. */
size_t dq_page_cursor_format(const dq_page_cursor *cur, char *buf, size_t size);

/* Reads that text into @out (emptied first; free with dq_page_cursor_free): 1 to
 * DQ_PARTITIONS_MAX ranks of at most 2^40 each, joined by '.'. DQ_EINVAL naming @what
 * and the rule otherwise. */
int dq_page_cursor_parse(const char *s, const char *what, dq_page_cursor *out, dq_err *err);

#endif /* DQ_LIB_PAGES_H */
