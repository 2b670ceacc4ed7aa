/* SPDX-License-Identifier: MIT */
/*
 * keys.c: the task keys with the most tasks (per-key limits, PROTOCOL.md 4.10 and 5.31):
 * one read-only call of keys.lua (its reply is read by reply.c, dq_reply_keys); and the
 * drop of one key's parked tasks (drop.lua's 'parked' mode), on a partitioned queue
 * walked partition by partition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "err.h"
#include "parts.h"
#include "reply.h"
#include "scripts.h"

int
dq_keys_get(dq_client *c, const char *queue, unsigned limit, dq_keys *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    if (limit < 1 || limit > 100)
        return dq_err_set(err, DQ_EINVAL, "limit: %u is not in 1..100", limit);
    dq_args_init(&a);
    dq_args_i64(&a, limit);
    rc = dq_scripts_run(c, DQ_SCRIPT_KEYS, queue, &a, dq_reply_keys, out, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_keys_free(out);
    return rc;
}

void
dq_keys_free(dq_keys *k)
{
    if (k == NULL)
        return;
    free(k->rows);
    memset(k, 0, sizeof *k);
}

/*
 * One step of the parked drop on partitioned queue @p (PROTOCOL.md 14.8), as the other
 * bulk actions walk: partitions 1.. in order with audit 'off', then partition 0 with
 * '+D,0,0', whose last step writes the queue's one entry with the walk's total. A step
 * has no cursor (it takes the key's earliest), so a partition is begun once it dropped
 * one (part_done): it stays the one walked though a resize adds partitions meanwhile.
 */
static int
parts_parked_step(dq_client *c, const struct dq_parts *p, const char *key, size_t step,
                  dq_bulk *cur, dq_err *err)
{
    dq_bulk one = {0};
    struct dq_args a;
    char audit[48];
    size_t q, base;
    int rc;

    if (cur->part_done == 0) {
        if (cur->part_at >= p->all) {
            cur->done = true;
            return DQ_OK;
        }
        cur->part_q = cur->part_at + 1 < p->all ? cur->part_at + 1 : 0;
    }
    if ((q = cur->part_q) >= p->all)
        return dq_err_set(err, DQ_EPROTO, "partitions: %s has %zu partitions; the walk is on %zu",
                          p->names[0], p->all, q);
    base = cur->done_n - cur->part_done;
    if (q == 0)
        snprintf(audit, sizeof audit, "+%zu,0,0", base);
    else
        snprintf(audit, sizeof audit, "off");
    one.done_n = cur->part_done;
    dq_args_init(&a);
    dq_args_str(&a, "parked");
    dq_args_str(&a, dq_client_who(c));
    dq_args_str(&a, key);
    dq_args_i64(&a, (int64_t)one.done_n);
    dq_args_i64(&a, (int64_t)step);
    dq_args_str(&a, audit);
    rc = dq_scripts_run(c, DQ_SCRIPT_DROP, p->names[q], &a, dq_reply_drop_all, &one, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        return rc;
    cur->done_n = base + one.done_n;
    cur->part_done = one.done_n;
    if (one.done) {
        cur->part_at++;
        cur->part_done = 0;
        cur->done = q == 0;
    }
    return DQ_OK;
}

int
dq_drop_parked_step(dq_client *c, const char *queue, const char *key, size_t step, dq_bulk *cur,
                    dq_err *err)
{
    dq_filter f = {DQ_FILTER_KEY, key};
    const struct dq_parts *p;
    struct dq_args a;
    int rc;

    if (cur->done)
        return DQ_OK;
    if ((rc = dq_filter_check(&f, err)) != DQ_OK ||
        (rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    step = step == 0 ? DQ_BULK_STEP : step > DQ_STEP_MAX ? DQ_STEP_MAX : step;
    if (p->all > 1) /* a key's tasks spread over the partitions by id */
        return parts_parked_step(c, p, key, step, cur, err);
    dq_args_init(&a);
    dq_args_str(&a, "parked");
    dq_args_str(&a, dq_client_who(c));
    dq_args_str(&a, key);
    dq_args_i64(&a, (int64_t)cur->done_n);
    dq_args_i64(&a, (int64_t)step);
    rc = dq_scripts_run(c, DQ_SCRIPT_DROP, queue, &a, dq_reply_drop_all, cur, err);
    dq_args_free(&a);
    return rc;
}
