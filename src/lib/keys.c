/* SPDX-License-Identifier: MIT */
/*
 * keys.c: the task keys with the most tasks (per-key limits, PROTOCOL.md 4.10 and 5.31):
 * one read-only call of keys.lua (its reply is read by reply.c, dq_reply_keys); and the
 * drop of one key's parked tasks (drop.lua's 'parked' mode).
 */
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "err.h"
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

int
dq_drop_parked_step(dq_client *c, const char *queue, const char *key, size_t step, dq_bulk *cur,
                    dq_err *err)
{
    dq_filter f = {DQ_FILTER_KEY, key};
    struct dq_args a;
    int rc;

    if (cur->done)
        return DQ_OK;
    if ((rc = dq_filter_check(&f, err)) != DQ_OK)
        return rc;
    dq_args_init(&a);
    dq_args_str(&a, "parked");
    dq_args_str(&a, dq_client_who(c));
    dq_args_str(&a, key);
    dq_args_i64(&a, (int64_t)cur->done_n);
    dq_args_i64(&a, (int64_t)(step == 0 ? DQ_BULK_STEP : step > DQ_STEP_MAX ? DQ_STEP_MAX : step));
    rc = dq_scripts_run(c, DQ_SCRIPT_DROP, queue, &a, dq_reply_drop_all, cur, err);
    dq_args_free(&a);
    return rc;
}
