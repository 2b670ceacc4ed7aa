/* SPDX-License-Identifier: MIT */
/*
 * task.c: task records. Turns stored envelopes and records into dq_task values, names
 * a task's key, and frees every result struct that holds tasks (or audit entries).
 */
#include "task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "env.h"

char *
dq_dup_bytes(const void *p, size_t len)
{
    char *s = malloc(len + 1);
    if (s != NULL) {
        if (len > 0)
            memcpy(s, p, len);
        s[len] = '\0';
    }
    return s;
}

void
dq_task_clear(dq_task *t)
{
    if (t == NULL)
        return;
    free(t->id);
    free(t->payload);
    free(t->last_error);
    free(t->key);
    free(t->worker);
    free(t->reason);
    free(t->error);
    free(t->trace);
    free(t->failed_by);
    free(t->raw);
    for (size_t i = 0; i < t->nhistory; i++) {
        free(t->history[i].worker);
        free(t->history[i].outcome);
        free(t->history[i].error);
    }
    free(t->history);
    memset(t, 0, sizeof *t);
}

void
dq_task_init(dq_task *t)
{
    memset(t, 0, sizeof *t);
    t->deadline_ms = t->due_ms = t->enqueued_ms = t->time_limit_ms = t->unique_for_ms = -1;
    t->lease_ms = t->claimed_ms = t->failed_ms = t->done_ms = t->unique_until_ms = -1;
    t->key_inflight = t->key_limit = -1;
}

int
dq_task_from_env(dq_task *t, const void *m, size_t len, const char *fallback_id)
{
    struct dq_env e;

    t->raw = (unsigned char *)dq_dup_bytes(m, len);
    t->raw_len = len;
    if (t->raw == NULL)
        return DQ_ENOMEM;
    if (dq_env_decode(m, len, &e, NULL) != DQ_OK) {
        t->undecodable = true;
        t->id_len = strlen(fallback_id);
        t->id = dq_dup_bytes(fallback_id, t->id_len);
        return t->id ? DQ_OK : DQ_ENOMEM;
    }
    if (e.id.ptr != NULL) {
        t->id = dq_dup_bytes(e.id.ptr, e.id.len);
        t->id_len = e.id.len;
        t->custom_id = true;
    } else {
        char buf[24];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)e.seq);
        t->id_len = strlen(buf);
        t->id = dq_dup_bytes(buf, t->id_len);
    }
    t->seq = e.seq;
    t->attempt = e.attempt;
    t->max_attempts = e.max_attempts;
    t->enqueued_ms = e.enqueued_ms;
    t->deadline_ms = e.deadline_ms;
    t->time_limit_ms = e.time_limit_ms;
    t->unique_for_ms = e.unique_for_ms;
    t->payload = (unsigned char *)dq_dup_bytes(e.payload.ptr, e.payload.len);
    t->payload_len = e.payload.len;
    if (e.last_error.ptr != NULL)
        t->last_error = dq_dup_bytes(e.last_error.ptr, e.last_error.len);
    t->last_error_len = e.last_error.len;
    if (e.key.ptr != NULL)
        t->key = dq_dup_bytes(e.key.ptr, e.key.len);
    t->key_len = e.key.len;
    if (t->id == NULL || t->payload == NULL || (e.last_error.ptr && t->last_error == NULL) ||
        (e.key.ptr && t->key == NULL))
        return DQ_ENOMEM;
    return DQ_OK;
}

int
dq_task_from_scheduled(dq_task *t, const void *m, size_t len, int64_t due_ms,
                       const char *fallback_id)
{
    int rc = dq_task_from_env(t, m, len, fallback_id);

    t->state = DQ_STATE_SCHEDULED;
    t->due_ms = due_ms;
    if (rc == DQ_OK && t->undecodable) {
        /* named as claim names it when it fails it ("undecodable:" + the member's SHA1):
         * show, find and drop take that name (PROTOCOL.md 5.14) */
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int mdlen = 0;
        char name[16 + 2 * EVP_MAX_MD_SIZE];
        size_t n = (size_t)snprintf(name, sizeof name, "undecodable:");
        if (EVP_Digest(m, len, md, &mdlen, EVP_sha1(), NULL) != 1)
            return DQ_OK; /* the plain fallback name stays */
        for (unsigned int i = 0; i < mdlen; i++)
            n += (size_t)snprintf(name + n, sizeof name - n, "%02x", md[i]);
        char *id = dq_dup_bytes(name, n);
        if (id == NULL)
            return DQ_ENOMEM;
        free(t->id);
        t->id = id;
    }
    return rc;
}

size_t
dq_task_key(const dq_task *t, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s%s", t->custom_id ? "c:" : "", t->id);
    return n < 0 ? 0 : (size_t)n;
}

/* The user-facing id of task key @tk ("c:x" -> "x"): dq_task_key read backwards. */
static const char *
tkey_id(const char *tk)
{
    return strncmp(tk, "c:", 2) == 0 ? tk + 2 : tk;
}

int
dq_task_from_running(dq_task *t, const char *tk, int64_t lease_ms, const void *rec, size_t len)
{
    struct dq_run_rec rr;
    int rc;

    t->state = DQ_STATE_INFLIGHT;
    t->lease_ms = lease_ms;
    if (dq_run_rec_decode(rec, len, &rr, NULL) != DQ_OK) {
        rc = dq_task_from_env(t, rec, len, tkey_id(tk));
        t->undecodable = true;
        return rc;
    }
    rc = dq_task_from_env(t, rr.envelope.ptr, rr.envelope.len, tkey_id(tk));
    if (rc != DQ_OK)
        return rc;
    t->claimed_ms = rr.claimed_ms;
    t->due_ms = rr.due_ms;
    t->worker = dq_dup_bytes(rr.worker.ptr, rr.worker.len);
    t->worker_len = rr.worker.len;
    return t->worker ? DQ_OK : DQ_ENOMEM;
}

int
dq_task_from_done(dq_task *t, const char *tk, int64_t done_ms, const void *rec, size_t len)
{
    struct dq_done_rec dr;
    const char *id = tkey_id(tk);

    t->state = DQ_STATE_DONE;
    t->custom_id = id != tk;
    t->done_ms = done_ms;
    t->id_len = strlen(id);
    t->id = dq_dup_bytes(id, t->id_len);
    /* no payload is kept: an empty one, so every reader of a decodable task finds one */
    t->payload = (unsigned char *)dq_dup_bytes("", 0);
    if (t->id == NULL || t->payload == NULL)
        return DQ_ENOMEM;
    if (!t->custom_id)
        t->seq = strtoull(id, NULL, 10);
    /* a record that does not decode still names a finished task: shown with what is known */
    if (dq_done_rec_decode(rec, len, &dr, NULL) != DQ_OK)
        return DQ_OK;
    t->done_ms = dr.done_ms;
    t->claimed_ms = dr.claimed_ms;
    t->due_ms = dr.due_ms;
    t->attempt = dr.attempt;
    t->worker = dq_dup_bytes(dr.worker.ptr, dr.worker.len);
    t->worker_len = dr.worker.len;
    return t->worker ? DQ_OK : DQ_ENOMEM;
}

int
dq_task_from_failed(dq_task *t, const char *tk, const void *rec, size_t len)
{
    struct dq_fail_rec fr;
    int rc;

    t->state = DQ_STATE_FAILED;
    if (dq_fail_rec_decode(rec, len, &fr, NULL) != DQ_OK) {
        rc = dq_task_from_env(t, rec, len, tkey_id(tk));
        t->undecodable = true;
        return rc;
    }
    rc = dq_task_from_env(t, fr.raw.ptr, fr.raw.len, tkey_id(tk));
    if (rc != DQ_OK)
        return rc;
    /* Undecodable bytes are named by their task key, whatever they look like. */
    if (fr.undecodable) {
        free(t->id);
        t->id_len = strlen(tk);
        t->id = dq_dup_bytes(tk, t->id_len);
        t->undecodable = true;
    }
    t->failed_ms = fr.failed_ms;
    t->reason = dq_dup_bytes(fr.reason.ptr, fr.reason.len);
    t->error = dq_dup_bytes(fr.error.ptr, fr.error.len);
    t->trace = dq_dup_bytes(fr.trace.ptr, fr.trace.len);
    t->failed_by = dq_dup_bytes(fr.who.ptr, fr.who.len);
    t->reason_len = fr.reason.len;
    t->error_len = fr.error.len;
    t->trace_len = fr.trace.len;
    t->failed_by_len = fr.who.len;
    if (!t->id || !t->reason || !t->error || !t->trace || !t->failed_by)
        return DQ_ENOMEM;
    return DQ_OK;
}

int
dq_task_add_history(dq_task *t, const void *rec, size_t len)
{
    struct dq_hist_rec h;
    dq_attempt *a = realloc(t->history, (t->nhistory + 1) * sizeof *a);

    if (a == NULL)
        return DQ_ENOMEM;
    t->history = a;
    a = &a[t->nhistory];
    memset(a, 0, sizeof *a);
    a->started_ms = a->duration_ms = -1;
    if (dq_hist_rec_decode(rec, len, &h, NULL) == DQ_OK) {
        a->attempt = h.attempt;
        a->started_ms = h.started_ms;
        a->duration_ms = h.duration_ms;
        a->worker = dq_dup_bytes(h.worker.ptr, h.worker.len);
        a->outcome = dq_dup_bytes(h.outcome.ptr, h.outcome.len);
        a->error = dq_dup_bytes(h.error.ptr, h.error.len);
        a->worker_len = h.worker.len;
        a->outcome_len = h.outcome.len;
        a->error_len = h.error.len;
    } else {
        /* a foreign write: shown as such, never a reason to refuse the whole task */
        a->worker = dq_dup_bytes("?", 1);
        a->outcome = dq_dup_bytes("?", 1);
        a->error = dq_dup_bytes("history entry does not decode", 29);
    }
    t->nhistory++;
    return a->worker && a->outcome && a->error ? DQ_OK : DQ_ENOMEM;
}

/* ---- result structs that own tasks ---------------------------------------------- */

void
dq_claimed_free(dq_claimed *out)
{
    if (out == NULL)
        return;
    for (size_t i = 0; i < out->n; i++)
        dq_task_clear(&out->tasks[i]);
    free(out->tasks);
    memset(out, 0, sizeof *out);
}

void
dq_page_free(dq_page *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        dq_task_clear(&p->tasks[i]);
    free(p->tasks);
    memset(p, 0, sizeof *p);
}

void
dq_audit_free(dq_audit *au)
{
    if (au == NULL)
        return;
    for (size_t i = 0; i < au->n; i++) {
        free(au->entries[i].who);
        free(au->entries[i].action);
        free(au->entries[i].detail);
        free(au->entries[i].result);
    }
    free(au->entries);
    memset(au, 0, sizeof *au);
}

/* ---- the worker registry's result --------------------------------------------------- */

void
dq_workers_free(dq_workers *ws)
{
    if (ws == NULL)
        return;
    for (size_t i = 0; i < ws->n; i++) {
        dq_worker_info *w = &ws->workers[i];
        free(w->name);
        free(w->host);
        free(w->version);
        free(w->command);
        free(w->tasks);
    }
    free(ws->workers);
    memset(ws, 0, sizeof *ws);
}
