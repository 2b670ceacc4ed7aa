/* SPDX-License-Identifier: MIT */
/*
 * env.c: decoders for the envelope, running and failure records, on msgpack-c (through
 * lib/mp.h). Pure. They accept exactly the forms the Lua prelude (lua/lib.lua) writes,
 * so the C and Lua sides agree on what "undecodable" means.
 */
#include "env.h"

#include <stdio.h>
#include <string.h>

#include <msgpack.h>

#include "err.h"
#include "mp.h"

enum field_kind { F_UINT, F_BYTES, F_OPT_UINT, F_OPT_BYTES, F_BOOL };

struct field {
    const char *name;
    enum field_kind kind;
};

struct value {
    bool present;
    uint64_t u;
    bool b;
    struct dq_bytes bytes;
};

/* The message for a field of the wrong type. */
static int
wrong_type(dq_err *err, const char *what, const struct field *f)
{
    static const char *const want[] = {
        [F_UINT] = "an unsigned integer", [F_OPT_UINT] = "an unsigned integer",
        [F_BYTES] = "a string",           [F_OPT_BYTES] = "a string",
        [F_BOOL] = "a boolean",
    };

    return dq_err_set(err, DQ_EPROTO, "%s: %s is not %s", what, f->name, want[f->kind]);
}

/* Decodes field @f from the msgpack-c object @o; @body_end is where its bytes end. */
static int
take_field(const msgpack_object *o, const unsigned char *body_end, const char *what,
           const struct field *f, struct value *v, dq_err *err)
{
    switch (f->kind) {
    case F_UINT:
    case F_OPT_UINT:
        if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return wrong_type(err, what, f);
        v->u = o->via.u64;
        break;
    case F_BYTES:
    case F_OPT_BYTES:
        if (o->type == MSGPACK_OBJECT_STR) {
            v->bytes.ptr = (const unsigned char *)o->via.str.ptr;
            v->bytes.len = o->via.str.size;
        } else if (o->type == MSGPACK_OBJECT_BIN) {
            v->bytes.ptr = (const unsigned char *)o->via.bin.ptr;
            v->bytes.len = o->via.bin.size;
        } else {
            return wrong_type(err, what, f);
        }
        /* An empty body is present, not absent: point it at the input, not at NULL. */
        if (v->bytes.len == 0)
            v->bytes.ptr = body_end;
        break;
    case F_BOOL:
        if (o->type != MSGPACK_OBJECT_BOOLEAN)
            return wrong_type(err, what, f);
        v->b = o->via.boolean;
        break;
    }
    v->present = true;
    return DQ_OK;
}

/*
 * Records are a fixarray, the only array form Lua's reader (lua/lib.lua rd) knows, so
 * the header is that one byte. Each field is then decoded by msgpack-c on its own, so a
 * failure names the field.
 */
static int
read_fields(const void *data, size_t len, const char *what, uint32_t arity,
            const struct field *fields, uint32_t n, struct value *out, size_t *end, dq_err *err)
{
    const unsigned char *p = data;
    struct dq_mp_scan scan;
    msgpack_zone zone;
    msgpack_object o;
    size_t off = 1;
    int rc = DQ_OK;

    if (p == NULL || len == 0 || p[0] != (0x90 | arity))
        return dq_err_set(err, DQ_EPROTO, "%s: not an array of %u fields", what, (unsigned)arity);
    if (!msgpack_zone_init(&zone, 256))
        return dq_err_set(err, DQ_ENOMEM, "%s: out of memory", what);
    for (uint32_t i = 0; i < n; i++) {
        const struct field *f = &fields[i];
        struct value *v = &out[i];

        memset(v, 0, sizeof *v);
        /* Lua's reader knows only the unsigned forms; the signed ones (0xd0..0xd3) are
         * rejected here too, so both sides agree on "undecodable". */
        if (off < len && p[off] >= 0xd0 && p[off] <= 0xd3) {
            rc = dq_err_set(err, DQ_EPROTO, "%s: %s uses a signed integer form", what, f->name);
            goto out;
        }
        /* Depth 0: a field is never a container, so msgpack-c allocates nothing. */
        rc = dq_mp_unpack(data, len, &off, 0, &zone, &o, &scan);
        if (rc == DQ_ENOMEM) {
            rc = dq_err_set(err, DQ_ENOMEM, "%s: out of memory", what);
            goto out;
        }
        if (rc != DQ_OK) {
            if (scan.fault == DQ_MP_FAULT_DEEP || scan.fault == DQ_MP_FAULT_CLAIM)
                rc = wrong_type(err, what, f);
            else
                rc = dq_err_set(err, DQ_EPROTO, "%s: %s is truncated", what, f->name);
            goto out;
        }
        if (o.type == MSGPACK_OBJECT_NIL && (f->kind == F_OPT_UINT || f->kind == F_OPT_BYTES))
            continue;
        rc = take_field(&o, p + off, what, f, v, err);
        if (rc != DQ_OK)
            goto out;
    }
    if (end != NULL)
        *end = off;
    else if (off != len)
        rc = dq_err_set(err, DQ_EPROTO, "%s: trailing bytes", what);
out:
    msgpack_zone_destroy(&zone);
    return rc;
}

static int
read_record(const void *data, size_t len, const char *what, const struct field *fields, uint32_t n,
            struct value *out, dq_err *err)
{
    return read_fields(data, len, what, n, fields, n, out, NULL, err);
}

/*
 * The extension map ending a v2 envelope (PROTOCOL.md 4.1): a fixmap of 1..15 entries,
 * each key a fixstr of [a-z0-9_] in strictly increasing byte order, each value a uint
 * below 2^53 or a string. Walked by hand, one field at a time like read_fields, so the
 * forms accepted are exactly those lua/lib.lua's rd_ext accepts. Unknown keys are
 * skipped (a later writer's); known ones are checked and stored in @out.
 */
static int
read_ext(const unsigned char *p, size_t len, size_t off, struct dq_env *out, dq_err *err)
{
    struct dq_mp_scan scan;
    msgpack_zone zone;
    msgpack_object o;
    const unsigned char *prev = NULL;
    size_t prev_len = 0;
    int rc = DQ_OK;

    if (off >= len || p[off] < 0x81 || p[off] > 0x8f)
        return dq_err_set(err, DQ_EPROTO, "envelope: extensions are not a map of 1..15 entries");
    unsigned entries = p[off++] & 0x0f;
    out->ext.ptr = p + off - 1;
    out->ext.len = len - (off - 1);
    if (!msgpack_zone_init(&zone, 64))
        return dq_err_set(err, DQ_ENOMEM, "envelope: out of memory");
    for (unsigned i = 0; i < entries; i++) {
        if (off >= len || p[off] < 0xa1 || p[off] > 0xbf ||
            off + 1 + (size_t)(p[off] & 0x1f) > len) {
            rc = dq_err_set(err, DQ_EPROTO, "envelope: extension key %u is not a short string", i);
            goto out;
        }
        const unsigned char *key = p + off + 1;
        size_t klen = p[off] & 0x1f;
        for (size_t k = 0; k < klen; k++)
            if (!((key[k] >= 'a' && key[k] <= 'z') || (key[k] >= '0' && key[k] <= '9') ||
                  key[k] == '_')) {
                rc = dq_err_set(err, DQ_EPROTO, "envelope: extension key %u is not [a-z0-9_]", i);
                goto out;
            }
        if (prev != NULL) {
            int c = memcmp(prev, key, prev_len < klen ? prev_len : klen);
            if (c > 0 || (c == 0 && prev_len >= klen)) {
                rc = dq_err_set(err, DQ_EPROTO, "envelope: extension keys are not in order");
                goto out;
            }
        }
        prev = key;
        prev_len = klen;
        off += 1 + klen;
        if (off < len && p[off] >= 0xd0 && p[off] <= 0xd3) {
            rc = dq_err_set(err, DQ_EPROTO, "envelope: extension %.*s uses a signed form",
                            (int)klen, (const char *)key);
            goto out;
        }
        rc = dq_mp_unpack(p, len, &off, 0, &zone, &o, &scan);
        if (rc == DQ_ENOMEM) {
            rc = dq_err_set(err, DQ_ENOMEM, "envelope: out of memory");
            goto out;
        }
        bool is_uint =
            rc == DQ_OK && o.type == MSGPACK_OBJECT_POSITIVE_INTEGER && o.via.u64 < (1ULL << 53);
        bool is_str = rc == DQ_OK && (o.type == MSGPACK_OBJECT_STR || o.type == MSGPACK_OBJECT_BIN);
        if (!is_uint && !is_str) {
            rc = dq_err_set(err, DQ_EPROTO,
                            "envelope: extension %.*s is not an unsigned integer or a string",
                            (int)klen, (const char *)key);
            goto out;
        }
        if (klen == 2 && memcmp(key, "tl", 2) == 0) {
            if (!is_uint || o.via.u64 < 1 || o.via.u64 > DQ_TIME_LIMIT_MAX) {
                rc = dq_err_set(err, DQ_EPROTO, "envelope: time limit is not 1..%lld ms",
                                (long long)DQ_TIME_LIMIT_MAX);
                goto out;
            }
            out->time_limit_ms = (int64_t)o.via.u64;
        } else if (klen == 2 && memcmp(key, "uf", 2) == 0) {
            if (!is_uint || o.via.u64 < 1 || o.via.u64 > DQ_UNIQUE_FOR_MAX) {
                rc = dq_err_set(err, DQ_EPROTO, "envelope: unique-for window is not 1..%lld ms",
                                (long long)DQ_UNIQUE_FOR_MAX);
                goto out;
            }
            out->unique_for_ms = (int64_t)o.via.u64;
        }
    }
    if (off != len)
        rc = dq_err_set(err, DQ_EPROTO, "envelope: trailing bytes");
out:
    msgpack_zone_destroy(&zone);
    return rc;
}

int
dq_env_ext_decode(const void *data, size_t len, struct dq_env *out, dq_err *err)
{
    memset(out, 0, sizeof *out);
    out->time_limit_ms = -1;
    out->unique_for_ms = -1;
    return read_ext(data, len, 0, out, err);
}

/* Times and counters must fit the int64/uint32 fields they land in. */
static bool
fits(uint64_t u, uint64_t max)
{
    return u <= max;
}

int
dq_env_decode(const void *data, size_t len, struct dq_env *out, dq_err *err)
{
    static const struct field fields[] = {
        {"version", F_UINT},         {"seq", F_UINT},         {"id", F_OPT_BYTES},
        {"attempt", F_UINT},         {"enqueued_ms", F_UINT}, {"max_attempts", F_UINT},
        {"deadline_ms", F_OPT_UINT}, {"payload", F_BYTES},    {"last_error", F_OPT_BYTES},
    };
    const unsigned char *p = data;
    struct value v[9];
    size_t end = 0;
    int rc;

    memset(out, 0, sizeof *out);
    out->time_limit_ms = -1;
    out->unique_for_ms = -1;
    /* v1: 9 fields; v2: the same 9 (version 2) and a map of extensions */
    bool v2 = len >= 3 && p[0] == 0x9a && p[1] == 2;
    if (len < 3 || p[2] != 0xcf || !(v2 || (p[0] == 0x99 && p[1] == DQ_ENV_VERSION)))
        return dq_err_set(err, DQ_EPROTO, "envelope: does not start with a v1 or v2 header");
    rc = read_fields(data, len, "envelope", v2 ? 10 : 9, fields, 9, v, v2 ? &end : NULL, err);
    if (rc != DQ_OK)
        return rc;
    if (v2 && (rc = read_ext(p, len, end, out, err)) != DQ_OK)
        return rc;
    /* Lua numbers are exact below 2^53: larger values cannot have come from the scripts,
     * and the Lua reader refuses them (lib.lua rd); attempts past DQ_ATTEMPTS_MAX and ids
     * past DQ_ID_MAX are refused by both readers, so claim fails such a member
     * ("undecodable") instead of handing it to a worker that could not settle it */
    if (!fits(v[3].u, DQ_ATTEMPTS_MAX) || !fits(v[5].u, DQ_ATTEMPTS_MAX))
        return dq_err_set(err, DQ_EPROTO, "envelope: attempt or max attempts over %d",
                          DQ_ATTEMPTS_MAX);
    if (!fits(v[1].u, (1ULL << 53) - 1) || !fits(v[4].u, (1ULL << 53) - 1) ||
        !fits(v[6].u, (1ULL << 53) - 1))
        return dq_err_set(err, DQ_EPROTO, "envelope: seq or a time is 2^53 or more");
    if (v[2].present && (v[2].bytes.len == 0 || v[2].bytes.len > DQ_ID_MAX))
        return dq_err_set(err, DQ_EPROTO, "envelope: id is not 1..%d bytes", DQ_ID_MAX);
    out->seq = v[1].u;
    out->id = v[2].bytes;
    out->attempt = (uint32_t)v[3].u;
    out->enqueued_ms = (int64_t)v[4].u;
    out->max_attempts = (uint32_t)v[5].u;
    out->deadline_ms = v[6].present ? (int64_t)v[6].u : -1;
    out->payload = v[7].bytes;
    out->last_error = v[8].bytes;
    return DQ_OK;
}

int
dq_run_rec_decode(const void *data, size_t len, struct dq_run_rec *out, dq_err *err)
{
    static const struct field fields[] = {
        {"envelope", F_BYTES}, {"worker", F_BYTES}, {"claimed_ms", F_UINT}, {"due_ms", F_UINT}};
    struct value v[4];
    int rc;

    memset(out, 0, sizeof *out);
    rc = read_record(data, len, "running record", fields, 4, v, err);
    if (rc != DQ_OK)
        return rc;
    if (!fits(v[2].u, INT64_MAX) || !fits(v[3].u, INT64_MAX))
        return dq_err_set(err, DQ_EPROTO, "running record: a time is out of range");
    out->envelope = v[0].bytes;
    out->worker = v[1].bytes;
    out->claimed_ms = (int64_t)v[2].u;
    out->due_ms = (int64_t)v[3].u;
    return DQ_OK;
}

int
dq_fail_rec_decode(const void *data, size_t len, struct dq_fail_rec *out, dq_err *err)
{
    static const struct field fields[] = {
        {"version", F_UINT}, {"raw", F_BYTES},      {"reason", F_BYTES}, {"error", F_BYTES},
        {"trace", F_BYTES},  {"failed_ms", F_UINT}, {"who", F_BYTES},    {"undecodable", F_BOOL},
    };
    struct value v[8];
    int rc;

    memset(out, 0, sizeof *out);
    rc = read_record(data, len, "failure record", fields, 8, v, err);
    if (rc != DQ_OK)
        return rc;
    if (v[0].u != 1 || !fits(v[5].u, INT64_MAX))
        return dq_err_set(err, DQ_EPROTO, "failure record: bad version or time");
    out->raw = v[1].bytes;
    out->reason = v[2].bytes;
    out->error = v[3].bytes;
    out->trace = v[4].bytes;
    out->failed_ms = (int64_t)v[5].u;
    out->who = v[6].bytes;
    out->undecodable = v[7].b;
    return DQ_OK;
}

size_t
dq_env_tkey(const struct dq_env *e, char *buf, size_t size)
{
    int n;

    if (e->id.ptr == NULL) {
        n = snprintf(buf, size, "%llu", (unsigned long long)e->seq);
        return n < 0 ? 0 : (size_t)n;
    }
    /* memcpy, not "%.*s": an id holding a NUL must not lose its tail (the Lua
     * side builds the key as 'c:' .. id, whatever the bytes). */
    size_t need = 2 + e->id.len;
    if (size > 0) {
        size_t room = size - 1;
        size_t k = room < 2 ? room : 2;
        size_t m = room - k < e->id.len ? room - k : e->id.len;
        memcpy(buf, "c:", k);
        if (m > 0)
            memcpy(buf + k, e->id.ptr, m);
        buf[k + m] = '\0';
    }
    return need;
}

int
dq_hist_rec_decode(const void *data, size_t len, struct dq_hist_rec *out, dq_err *err)
{
    static const struct field fields[] = {
        {"version", F_UINT},  {"attempt", F_UINT},     {"started_ms", F_UINT}, {"worker", F_BYTES},
        {"outcome", F_BYTES}, {"duration_ms", F_UINT}, {"error", F_BYTES},
    };
    struct value v[7];
    int rc;

    memset(out, 0, sizeof *out);
    rc = read_record(data, len, "history record", fields, 7, v, err);
    if (rc != DQ_OK)
        return rc;
    if (v[0].u != 1 || !fits(v[1].u, UINT32_MAX) || !fits(v[2].u, INT64_MAX) ||
        !fits(v[5].u, INT64_MAX))
        return dq_err_set(err, DQ_EPROTO, "history record: bad version, attempt or time");
    out->attempt = (uint32_t)v[1].u;
    out->started_ms = (int64_t)v[2].u;
    out->worker = v[3].bytes;
    out->outcome = v[4].bytes;
    out->duration_ms = (int64_t)v[5].u;
    out->error = v[6].bytes;
    return DQ_OK;
}

int
dq_done_rec_decode(const void *data, size_t len, struct dq_done_rec *out, dq_err *err)
{
    static const struct field fields[] = {
        {"version", F_UINT}, {"done_ms", F_UINT}, {"claimed_ms", F_UINT},
        {"due_ms", F_UINT},  {"attempt", F_UINT}, {"worker", F_BYTES},
    };
    struct value v[6];
    int rc;

    memset(out, 0, sizeof *out);
    rc = read_record(data, len, "done record", fields, 6, v, err);
    if (rc != DQ_OK)
        return rc;
    if (v[0].u != 1 || !fits(v[1].u, INT64_MAX) || !fits(v[2].u, INT64_MAX) ||
        !fits(v[3].u, INT64_MAX) || !fits(v[4].u, UINT32_MAX))
        return dq_err_set(err, DQ_EPROTO, "done record: bad version, time or attempt");
    out->done_ms = (int64_t)v[1].u;
    out->claimed_ms = (int64_t)v[2].u;
    out->due_ms = (int64_t)v[3].u;
    out->attempt = (uint32_t)v[4].u;
    out->worker = v[5].bytes;
    return DQ_OK;
}
