/* SPDX-License-Identifier: MIT */
/* import.c: one chunk of exported tasks into a queue (import.h). */
#include "import.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "parts.h"
#include "registry.h"
#include "reply.h"
#include "scripts.h"

/* import.lua on @n tasks into partition (or queue) @name. */
static int
import_call(dq_client *c, const char *name, const struct dq_import_task *tasks, size_t n,
            bool requeue, dq_enqueued *out, dq_err *err)
{
    struct dq_enqueue_reply er = {out, n};
    struct dq_args a;
    int rc;

    dq_args_init(&a);
    dq_args_str(&a, dq_client_who(c));
    dq_args_str(&a, requeue ? "1" : "0");
    dq_args_i64(&a, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        const struct dq_import_task *t = &tasks[i];
        bool failed = t->kind != DQ_IMPORT_SCHEDULED;
        /* numbers are formatted into @a's own storage; deadline "" is none */
        dq_args_str(&a, t->kind == DQ_IMPORT_SCHEDULED ? "s"
                        : t->kind == DQ_IMPORT_FAILED  ? "f"
                                                       : "u");
        dq_args_bytes(&a, t->id ? t->id : "", t->id ? t->id_len : 0);
        dq_args_i64(&a, (int64_t)t->seq);
        dq_args_i64(&a, t->attempt);
        dq_args_i64(&a, t->enqueued_ms);
        dq_args_i64(&a, t->max_attempts);
        if (t->deadline_ms >= 0)
            dq_args_i64(&a, t->deadline_ms);
        else
            dq_args_str(&a, "");
        dq_args_bytes(&a, t->payload ? t->payload : "", t->payload_len);
        dq_args_i64(&a, t->last_error != NULL); /* so that "" and none differ */
        dq_args_bytes(&a, t->last_error ? t->last_error : "", t->last_error_len);
        dq_args_i64(&a, failed ? 0 : t->due_ms);
        dq_args_i64(&a, failed ? t->failed_ms : 0);
        dq_args_bytes(&a, failed ? t->reason : "", failed ? t->reason_len : 0);
        dq_args_bytes(&a, failed ? t->error : "", failed ? t->error_len : 0);
        dq_args_bytes(&a, failed ? t->trace : "", failed ? t->trace_len : 0);
        dq_args_bytes(&a, failed ? t->failed_by : "", failed ? t->failed_by_len : 0);
        dq_args_bytes(&a, t->raw ? t->raw : "", t->kind == DQ_IMPORT_RAW ? t->raw_len : 0);
        dq_args_bytes(&a, t->ext && t->kind != DQ_IMPORT_RAW ? t->ext : "",
                      t->kind != DQ_IMPORT_RAW ? t->ext_len : 0);
        dq_args_i64(&a, (int64_t)t->nhistory);
    }
    /* the history entries after the groups, so that each group keeps its fixed size */
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < tasks[i].nhistory; j++) {
            const struct dq_import_attempt *h = &tasks[i].history[j];
            dq_args_i64(&a, h->attempt);
            dq_args_i64(&a, h->started_ms);
            dq_args_i64(&a, h->duration_ms);
            dq_args_bytes(&a, h->worker, h->worker_len);
            dq_args_bytes(&a, h->outcome, h->outcome_len);
            dq_args_bytes(&a, h->error, h->error_len);
        }
    }
    rc = dq_scripts_run(c, DQ_SCRIPT_IMPORT, name, &a, dq_reply_enqueue, &er, err);
    dq_args_free(&a);
    return rc;
}

/* The tasks of a partitioned queue go where enqueue and the lookups put them: a caller id
 * by its hash, a generated id by its sequence's span (PROTOCOL.md, "Partitioned queues");
 * one call per partition. */
static int
import_parts(dq_client *c, const struct dq_parts *p, const struct dq_import_task *tasks, size_t n,
             bool requeue, dq_enqueued *out, dq_err *err)
{
    size_t *part = malloc(n * sizeof *part), *order = malloc(n * sizeof *order);
    struct dq_import_task *sub = malloc(n * sizeof *sub);
    dq_enqueued *got = malloc(n * sizeof *got);
    size_t first[DQ_PARTITIONS_MAX + 1];
    int rc = DQ_OK;

    if (part == NULL || order == NULL || sub == NULL || got == NULL) {
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory splitting %zu tasks by partition", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        part[i] = tasks[i].id != NULL && tasks[i].id_len > 0
                      ? dq_parts_route_id(p, tasks[i].id, tasks[i].id_len)
                      : dq_parts_of_seq(p, (int64_t)tasks[i].seq);
    dq_parts_group(part, n, p->all, order, first);
    for (size_t q = 0; q < p->all && rc == DQ_OK; q++) {
        size_t k = first[q + 1] - first[q];
        if (k == 0)
            continue;
        for (size_t j = 0; j < k; j++)
            sub[j] = tasks[order[first[q] + j]]; /* a shallow copy: it borrows the same bytes */
        memset(got, 0, k * sizeof *got);
        rc = import_call(c, p->names[q], sub, k, requeue, got, err);
        if (rc == DQ_OK)
            for (size_t j = 0; j < k; j++)
                out[order[first[q] + j]] = got[j];
    }
out:
    free(part);
    free(order);
    free(sub);
    free(got);
    return rc;
}

int
dq_import(dq_client *c, const char *queue, const struct dq_import_task *tasks, size_t n,
          bool requeue, dq_enqueued *out, dq_err *err)
{
    const struct dq_parts *p;
    int rc;

    if (n < 1 || n > DQ_IMPORT_CHUNK)
        return dq_err_set(err, DQ_EINVAL, "import: %zu tasks; 1..%d per call", n, DQ_IMPORT_CHUNK);
    memset(out, 0, n * sizeof *out);
    if ((rc = dq_parts_peek(c, queue, &p, err)) != DQ_OK)
        return rc;
    if (p->n > 1)
        rc = import_parts(c, p, tasks, n, requeue, out, err);
    else
        rc = import_call(c, queue, tasks, n, requeue, out, err);
    if (rc == DQ_OK)
        dq_registry_note(c, queue); /* importing into a queue makes it one */
    return rc;
}
