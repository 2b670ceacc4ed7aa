/* SPDX-License-Identifier: MIT */
/*
 * taskrec.c: an export record back into a task to import (taskrec.h). The JSON is read
 * by dq_json_to_mp, the one JSON reader (yajl), so the payload's msgpack is the very
 * bytes dq_fmt_task_export checked it reads back to; the fields are then taken from the
 * msgpack map.
 */
#include "taskrec.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fmt/b64.h"
#include "fmt/json.h"
#include "lib/env.h"
#include "lib/env_build.h"
#include "lib/err.h"
#include "lib/mp.h"

#define U53 9007199254740991ULL

enum field {
    F_ID,
    F_QUEUE,
    F_STATE,
    F_UNDECODABLE,
    F_RAW,
    F_CUSTOM,
    F_SEQ,
    F_ATTEMPT,
    F_MAX,
    F_ENQUEUED,
    F_DEADLINE,
    F_LAST_ERROR,
    F_PAYLOAD,
    F_PAYLOAD_B64,
    F_DUE,
    F_LEASE,
    F_CLAIMED,
    F_WORKER,
    F_FAILED_MS,
    F_REASON,
    F_ERROR,
    F_TRACE,
    F_FAILED_BY,
    F_HISTORY,
    F_TIME_LIMIT,
    F_UNIQUE_FOR,
    F_EXTENSIONS,
    F_COUNT
};

/* The record's members, as dq_fmt_task_export writes them. */
/* clang-format off */
static const char *const names[F_COUNT] = {
    "id",          "queue",      "state",     "undecodable",  "raw_base64",
    "custom_id",   "seq",        "attempt",   "max_attempts", "enqueued_ms",
    "deadline_ms", "last_error", "payload",   "payload_b64",  "due_ms",
    "lease_ms",    "claimed_ms", "worker",    "failed_ms",    "reason",
    "error",       "trace",      "failed_by", "history",      "time_limit_ms",
    "unique_for_ms", "extensions_b64",
};
/* clang-format on */

struct member {
    const msgpack_object *v; /* NULL: absent */
    size_t from, to;         /* the value's bytes in the msgpack of the line */
};

static int
want(dq_err *err, enum field f, const char *what)
{
    return dq_err_set(err, DQ_EINVAL, "%s: must be %s", names[f], what);
}

static bool
is_nil(const struct member *m)
{
    return m->v == NULL || m->v->type == MSGPACK_OBJECT_NIL;
}

/* A string member (never nil when @required): its bytes, or NULL for null / absent. */
static int
get_str(const struct member *ms, enum field f, bool required, const char **s, size_t *len,
        dq_err *err)
{
    const struct member *m = &ms[f];

    *s = NULL;
    *len = 0;
    if (is_nil(m))
        return required ? want(err, f, m->v ? "a string, not null" : "given (a string)") : DQ_OK;
    if (m->v->type != MSGPACK_OBJECT_STR)
        return want(err, f, "a string");
    *s = m->v->via.str.size ? m->v->via.str.ptr : "";
    *len = m->v->via.str.size;
    return DQ_OK;
}

/* A whole number 0..@max (-1 for null / absent when not @required). */
static int
get_num(const struct member *ms, enum field f, bool required, uint64_t min, uint64_t max,
        int64_t *out, dq_err *err)
{
    const struct member *m = &ms[f];
    char what[96];

    *out = -1;
    snprintf(what, sizeof what, "a whole number %llu..%llu%s", (unsigned long long)min,
             (unsigned long long)max, required ? "" : " or null");
    if (is_nil(m))
        return required ? want(err, f, what) : DQ_OK;
    if (m->v->type != MSGPACK_OBJECT_POSITIVE_INTEGER || m->v->via.u64 < min || m->v->via.u64 > max)
        return want(err, f, what);
    *out = (int64_t)m->v->via.u64;
    return DQ_OK;
}

static int
get_bool(const struct member *ms, enum field f, bool *out, dq_err *err)
{
    const struct member *m = &ms[f];

    *out = false;
    if (m->v == NULL)
        return DQ_OK;
    if (m->v->type != MSGPACK_OBJECT_BOOLEAN)
        return want(err, f, "true or false");
    *out = m->v->via.boolean;
    return DQ_OK;
}

static int
get_b64(const struct member *ms, enum field f, struct dq_buf *b, const void **p, size_t *len,
        dq_err *err)
{
    const char *s;
    size_t n;
    int rc = get_str(ms, f, true, &s, &n, err);

    if (rc != DQ_OK)
        return rc;
    if (dq_b64_decode(b, s, n) != 0)
        return want(err, f, "base64 text");
    if (b->failed)
        return dq_err_set(err, DQ_ENOMEM, "%s: out of memory", names[f]);
    *p = b->len ? b->data : "";
    *len = b->len;
    return DQ_OK;
}

/* The envelope's extensions: time_limit_ms and unique_for_ms, rebuilt into the map
 * enqueue writes, or extensions_b64, the map as it was stored (a later writer's keys
 * too), which must then hold exactly the two named ones: so a record that says one
 * thing in its readable members cannot import another. */
static int
extensions(struct dq_task_rec *r, const struct member *ms, dq_err *err)
{
    int64_t tl, uf;
    int rc;

    if ((rc = get_num(ms, F_TIME_LIMIT, false, 1, DQ_TIME_LIMIT_MAX, &tl, err)) != DQ_OK ||
        (rc = get_num(ms, F_UNIQUE_FOR, false, 1, DQ_UNIQUE_FOR_MAX, &uf, err)) != DQ_OK)
        return rc;
    if (ms[F_EXTENSIONS].v == NULL) {
        dq_env_ext_build(&r->ext, tl, uf);
        if (r->ext.failed)
            return dq_err_set(err, DQ_ENOMEM, "extensions: out of memory");
    } else {
        const void *p;
        size_t n;
        struct dq_env e;
        dq_err why = {0};
        if ((rc = get_b64(ms, F_EXTENSIONS, &r->ext, &p, &n, err)) != DQ_OK)
            return rc;
        if (dq_env_ext_decode(p, n, &e, &why) != DQ_OK)
            return dq_err_set(err, DQ_EINVAL, "extensions_b64: not an extension map (%s)", why.msg);
        if (e.time_limit_ms != tl || e.unique_for_ms != uf)
            return dq_err_set(err, DQ_EINVAL,
                              "extensions_b64: holds time limit %lld and unique-for %lld ms, "
                              "not time_limit_ms and unique_for_ms (-1: none)",
                              (long long)e.time_limit_ms, (long long)e.unique_for_ms);
    }
    r->task.ext = r->ext.len ? r->ext.data : NULL;
    r->task.ext_len = r->ext.len;
    return DQ_OK;
}

/* The map's members by name, with the byte span of each value (for the payload). */
static int
members(const struct dq_buf *mp, const msgpack_object *o, struct member *ms, dq_err *err)
{
    const unsigned char *d = (const unsigned char *)mp->data;
    size_t off;
    struct dq_mp_scan s;

    if (o->type != MSGPACK_OBJECT_MAP)
        return dq_err_set(err, DQ_EINVAL, "the line is not a JSON object");
    off = d[0] <= 0x8f ? 1 : d[0] == 0xde ? 3 : 5; /* fixmap, map16, map32 header */
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key;
        size_t f;

        if (!dq_mp_scan(d, mp->len, off, DQ_JSON_MAX_DEPTH, &s)) /* the key */
            return dq_err_set(err, DQ_EPROTO, "record: member %u", i + 1);
        off = s.end;
        if (!dq_mp_scan(d, mp->len, off, DQ_JSON_MAX_DEPTH, &s)) /* its value */
            return dq_err_set(err, DQ_EPROTO, "record: member %u", i + 1);
        for (f = 0; f < F_COUNT; f++) {
            if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(names[f]) &&
                memcmp(k->via.str.ptr, names[f], k->via.str.size) == 0)
                break;
        }
        if (f == F_COUNT) {
            char name[64];
            size_t n = k->type == MSGPACK_OBJECT_STR ? k->via.str.size : 0;
            if (n > 40)
                n = 40;
            for (size_t j = 0; j < n; j++) {
                unsigned char ch = (unsigned char)k->via.str.ptr[j];
                name[j] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
            }
            name[n] = '\0';
            return dq_err_set(err, DQ_EINVAL, "unknown field \"%s\"", name);
        }
        if (ms[f].v != NULL)
            return dq_err_set(err, DQ_EINVAL, "%s: given twice", names[f]);
        ms[f].v = &o->via.map.ptr[i].val;
        ms[f].from = off;
        ms[f].to = s.end;
        off = s.end;
    }
    return DQ_OK;
}

/* The members of a history entry, as json_history in taskfmt.c writes them. */
enum hfield { H_ATTEMPT, H_STARTED, H_DURATION, H_WORKER, H_OUTCOME, H_ERROR, H_COUNT };
static const char *const hnames[H_COUNT] = {"attempt", "started_ms", "duration_ms",
                                            "worker",  "outcome",    "error"};
#define HIST_WORKER_MAX 200 /* as failed_by: import.lua's TEXT_MAX */

static bool
is_outcome(const char *s, size_t n)
{
    static const char *const outcomes[] = {"retry", "fail", "lease expired", "timed out",
                                           "expired"};

    for (size_t i = 0; i < sizeof outcomes / sizeof outcomes[0]; i++) {
        if (n == strlen(outcomes[i]) && memcmp(s, outcomes[i], n) == 0)
            return true;
    }
    return false;
}

static bool
is_key(const msgpack_object *k, const char *name)
{
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(name) &&
           memcmp(k->via.str.ptr, name, k->via.str.size) == 0;
}

/* Entry @j (from 1) of the history: its members into @a. An entry that did not decode at
 * the source (dq_task_add_history: outcome "?" and no times) has nothing to import:
 * *skip is set. The limits are the history block's (lua/lib.lua): the script checks
 * them again. */
static int
hist_entry(const msgpack_object *o, size_t j, struct dq_import_attempt *a, bool *skip, dq_err *err)
{
    const msgpack_object *v[H_COUNT] = {0};

    *skip = false;
    if (o->type != MSGPACK_OBJECT_MAP)
        return dq_err_set(err, DQ_EINVAL, "history[%zu]: must be an object", j);
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key;
        size_t f;
        for (f = 0; f < H_COUNT && !is_key(k, hnames[f]); f++)
            ;
        if (f == H_COUNT)
            return dq_err_set(err, DQ_EINVAL,
                              "history[%zu]: unknown field (expected attempt, started_ms, "
                              "duration_ms, worker, outcome, error)",
                              j);
        if (v[f] != NULL)
            return dq_err_set(err, DQ_EINVAL, "history[%zu].%s: given twice", j, hnames[f]);
        v[f] = &o->via.map.ptr[i].val;
    }
    for (size_t f = H_WORKER; f < H_COUNT; f++) {
        if (v[f] == NULL || v[f]->type != MSGPACK_OBJECT_STR)
            return dq_err_set(err, DQ_EINVAL, "history[%zu].%s: must be a string", j, hnames[f]);
    }
    if (v[H_OUTCOME]->via.str.size == 1 && v[H_OUTCOME]->via.str.ptr[0] == '?' &&
        v[H_STARTED] != NULL && v[H_STARTED]->type == MSGPACK_OBJECT_NIL) {
        *skip = true;
        return DQ_OK;
    }
    for (size_t f = H_ATTEMPT; f <= H_DURATION; f++) {
        uint64_t lo = f == H_ATTEMPT ? 1 : 0, hi = f == H_ATTEMPT ? UINT32_MAX : U53;
        if (v[f] == NULL || v[f]->type != MSGPACK_OBJECT_POSITIVE_INTEGER || v[f]->via.u64 < lo ||
            v[f]->via.u64 > hi)
            return dq_err_set(err, DQ_EINVAL, "history[%zu].%s: must be a whole number %llu..%llu",
                              j, hnames[f], (unsigned long long)lo, (unsigned long long)hi);
    }
    a->attempt = (uint32_t)v[H_ATTEMPT]->via.u64;
    a->started_ms = (int64_t)v[H_STARTED]->via.u64;
    a->duration_ms = (int64_t)v[H_DURATION]->via.u64;
    a->worker = v[H_WORKER]->via.str.size ? v[H_WORKER]->via.str.ptr : "";
    a->worker_len = v[H_WORKER]->via.str.size;
    a->outcome = v[H_OUTCOME]->via.str.ptr;
    a->outcome_len = v[H_OUTCOME]->via.str.size;
    a->error = v[H_ERROR]->via.str.size ? v[H_ERROR]->via.str.ptr : "";
    a->error_len = v[H_ERROR]->via.str.size;
    if (a->worker_len > HIST_WORKER_MAX)
        return dq_err_set(err, DQ_EINVAL, "history[%zu].worker: longer than %d bytes", j,
                          HIST_WORKER_MAX);
    if (!is_outcome(a->outcome, a->outcome_len))
        return dq_err_set(err, DQ_EINVAL,
                          "history[%zu].outcome: must be \"retry\", \"fail\", \"lease "
                          "expired\", \"timed out\" or \"expired\"",
                          j);
    if (a->error_len > DQ_HISTORY_ERROR_MAX)
        return dq_err_set(err, DQ_EINVAL, "history[%zu].error: longer than %d bytes", j,
                          DQ_HISTORY_ERROR_MAX);
    return DQ_OK;
}

/* The history member (absent: none) into r->history. */
static int
history(struct dq_task_rec *r, const struct member *m, dq_err *err)
{
    struct dq_import_task *t = &r->task;

    if (m->v == NULL)
        return DQ_OK;
    if (m->v->type != MSGPACK_OBJECT_ARRAY)
        return want(err, F_HISTORY, "an array of attempts, oldest first");
    if (m->v->via.array.size > DQ_HISTORY_MAX)
        return dq_err_set(err, DQ_EINVAL, "history: %u attempts; at most %d are kept",
                          m->v->via.array.size, DQ_HISTORY_MAX);
    if (m->v->via.array.size > 0 && t->kind == DQ_IMPORT_RAW)
        return want(err, F_HISTORY, "absent for an undecodable entry (it has none)");
    for (uint32_t j = 0; j < m->v->via.array.size; j++) {
        bool skip;
        int rc = hist_entry(&m->v->via.array.ptr[j], j + 1, &r->history[t->nhistory], &skip, err);
        if (rc != DQ_OK)
            return rc;
        if (!skip)
            t->nhistory++;
    }
    t->history = t->nhistory ? r->history : NULL;
    return DQ_OK;
}

static int
fields(struct dq_task_rec *r, const struct member *ms, dq_err *err)
{
    struct dq_import_task *t = &r->task;
    const char *s, *id;
    size_t n, id_len;
    bool undecodable, custom;
    int64_t v;
    int rc;

    if ((rc = get_str(ms, F_ID, true, &id, &id_len, err)) != DQ_OK ||
        (rc = get_str(ms, F_QUEUE, false, &s, &n, err)) != DQ_OK ||
        (rc = get_str(ms, F_STATE, true, &s, &n, err)) != DQ_OK)
        return rc;
    if (n == 9 && memcmp(s, "scheduled", 9) == 0)
        r->state = DQ_STATE_SCHEDULED;
    else if (n == 8 && memcmp(s, "inflight", 8) == 0)
        r->state = DQ_STATE_INFLIGHT;
    else if (n == 6 && memcmp(s, "failed", 6) == 0)
        r->state = DQ_STATE_FAILED;
    else
        return want(err, F_STATE, "\"scheduled\", \"inflight\" or \"failed\"");
    if ((rc = get_bool(ms, F_UNDECODABLE, &undecodable, err)) != DQ_OK)
        return rc;
    t->deadline_ms = -1;
    if (undecodable) {
        if (r->state != DQ_STATE_FAILED)
            return want(err, F_UNDECODABLE,
                        "false unless the state is \"failed\" (a scheduled "
                        "member that is not an envelope has nothing to "
                        "import)");
        t->kind = DQ_IMPORT_RAW;
        if ((rc = get_b64(ms, F_RAW, &r->raw, &t->raw, &t->raw_len, err)) != DQ_OK)
            return rc;
        if (t->raw_len == 0)
            return want(err, F_RAW, "1 byte or more");
    } else {
        t->kind = r->state == DQ_STATE_FAILED ? DQ_IMPORT_FAILED : DQ_IMPORT_SCHEDULED;
        if ((rc = get_bool(ms, F_CUSTOM, &custom, err)) != DQ_OK)
            return rc;
        if (ms[F_CUSTOM].v == NULL)
            return want(err, F_CUSTOM, "given (true or false)");
        if ((rc = get_num(ms, F_SEQ, true, 1, U53, &v, err)) != DQ_OK)
            return rc;
        t->seq = (uint64_t)v;
        if (custom) {
            if (id_len == 0)
                return want(err, F_ID, "1 byte or more");
            t->id = id;
            t->id_len = id_len;
        } else {
            char digits[24];
            snprintf(digits, sizeof digits, "%llu", (unsigned long long)t->seq);
            if (id_len != strlen(digits) || memcmp(id, digits, id_len) != 0)
                return dq_err_set(err, DQ_EINVAL,
                                  "id: a generated id must be the seq in decimal (%s)", digits);
        }
        if ((rc = get_num(ms, F_ATTEMPT, true, 0, DQ_ATTEMPTS_MAX, &v, err)) != DQ_OK)
            return rc;
        t->attempt = (uint32_t)v;
        if ((rc = get_num(ms, F_MAX, true, 0, DQ_ATTEMPTS_MAX, &v, err)) != DQ_OK)
            return rc;
        t->max_attempts = (uint32_t)v;
        if ((rc = get_num(ms, F_ENQUEUED, true, 0, U53, &t->enqueued_ms, err)) != DQ_OK ||
            (rc = get_num(ms, F_DEADLINE, false, 0, U53, &t->deadline_ms, err)) != DQ_OK ||
            (rc = extensions(r, ms, err)) != DQ_OK ||
            (rc = get_str(ms, F_LAST_ERROR, false, &t->last_error, &t->last_error_len, err)) !=
                DQ_OK)
            return rc;
        if ((ms[F_PAYLOAD].v == NULL) == (ms[F_PAYLOAD_B64].v == NULL))
            return dq_err_set(err, DQ_EINVAL,
                              "payload: give exactly one of payload (JSON) "
                              "and payload_b64 (base64)");
        if (ms[F_PAYLOAD].v != NULL) {
            t->payload = r->mp.data + ms[F_PAYLOAD].from;
            t->payload_len = ms[F_PAYLOAD].to - ms[F_PAYLOAD].from;
        } else if ((rc = get_b64(ms, F_PAYLOAD_B64, &r->payload, &t->payload, &t->payload_len,
                                 err)) != DQ_OK) {
            return rc;
        }
    }
    /* Written by export, not needed to import: an in-flight task comes back scheduled
     * at its due time, as if its worker had handed it back. Checked all the same. */
    if ((rc = get_num(ms, F_DUE, t->kind == DQ_IMPORT_SCHEDULED, 0, U53, &t->due_ms, err)) !=
            DQ_OK ||
        (rc = get_num(ms, F_LEASE, false, 0, U53, &v, err)) != DQ_OK ||
        (rc = get_num(ms, F_CLAIMED, false, 0, U53, &v, err)) != DQ_OK ||
        (rc = get_str(ms, F_WORKER, false, &s, &n, err)) != DQ_OK)
        return rc;
    if ((rc = history(r, &ms[F_HISTORY], err)) != DQ_OK)
        return rc;
    if (t->kind == DQ_IMPORT_SCHEDULED)
        return DQ_OK;
    if ((rc = get_num(ms, F_FAILED_MS, true, 0, U53, &t->failed_ms, err)) != DQ_OK ||
        (rc = get_str(ms, F_REASON, true, &t->reason, &t->reason_len, err)) != DQ_OK ||
        (rc = get_str(ms, F_ERROR, true, &t->error, &t->error_len, err)) != DQ_OK ||
        (rc = get_str(ms, F_TRACE, true, &t->trace, &t->trace_len, err)) != DQ_OK ||
        (rc = get_str(ms, F_FAILED_BY, true, &t->failed_by, &t->failed_by_len, err)) != DQ_OK)
        return rc;
    return DQ_OK;
}

int
dq_task_rec_parse(struct dq_task_rec *r, const char *line, size_t len, dq_err *err)
{
    struct member ms[F_COUNT] = {0};
    msgpack_zone z;
    msgpack_object o;
    struct dq_mp_scan s;
    size_t off = 0;
    int rc;

    dq_task_rec_free(r);
    if ((rc = dq_json_to_mp(&r->mp, line, len, err)) != DQ_OK)
        return rc;
    if (r->mp.failed)
        return dq_err_set(err, DQ_ENOMEM, "record: out of memory");
    if (!msgpack_zone_init(&z, 1024))
        return dq_err_set(err, DQ_ENOMEM, "record: out of memory");
    rc = dq_mp_unpack(r->mp.data, r->mp.len, &off, DQ_JSON_MAX_DEPTH, &z, &o, &s);
    if (rc != DQ_OK)
        rc = dq_err_set(err, rc, "record: cannot read it back (%d)", rc);
    else if ((rc = members(&r->mp, &o, ms, err)) == DQ_OK)
        rc = fields(r, ms, err);
    msgpack_zone_destroy(&z);
    return rc;
}

void
dq_task_rec_free(struct dq_task_rec *r)
{
    dq_buf_free(&r->mp);
    dq_buf_free(&r->payload);
    dq_buf_free(&r->raw);
    dq_buf_free(&r->ext);
    memset(&r->task, 0, sizeof r->task);
    memset(r->history, 0, sizeof r->history);
    r->state = DQ_STATE_NONE;
}
