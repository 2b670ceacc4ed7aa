/* SPDX-License-Identifier: MIT */
/*
 * env.c: decoders for the envelope, running and failure records. Pure. They accept
 * exactly the forms the Lua prelude (lua/lib.lua) writes, so the C and Lua sides
 * agree on what "undecodable" means.
 */
#include "env.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "fmt/mp.h"

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

static int
read_record(const void *data, size_t len, const char *what, const struct field *fields, uint32_t n,
            struct value *out, dq_err *err)
{
    struct dq_mp_reader r;
    struct dq_mp_item it;

    dq_mp_reader_init(&r, data, len);
    if (!dq_mp_read(&r, &it) || it.type != DQ_MP_ARRAY || it.len != n)
        return dq_err_set(err, DQ_EPROTO, "%s: not an array of %u fields", what, (unsigned)n);
    for (uint32_t i = 0; i < n; i++) {
        const struct field *f = &fields[i];
        struct value *v = &out[i];

        memset(v, 0, sizeof *v);
        /* Lua's reader (lua/lib.lua rd) knows only the unsigned forms; the signed ones
         * (0xd0..0xd3) are rejected here too, so both sides agree on "undecodable". */
        if (r.p < r.end && *r.p >= 0xd0 && *r.p <= 0xd3)
            return dq_err_set(err, DQ_EPROTO, "%s: %s uses a signed integer form", what, f->name);
        if (!dq_mp_read(&r, &it))
            return dq_err_set(err, DQ_EPROTO, "%s: %s is truncated", what, f->name);
        if (it.type == DQ_MP_NIL && (f->kind == F_OPT_UINT || f->kind == F_OPT_BYTES))
            continue;
        switch (f->kind) {
        case F_UINT:
        case F_OPT_UINT:
            if (it.type != DQ_MP_UINT)
                return dq_err_set(err, DQ_EPROTO, "%s: %s is not an unsigned integer", what,
                                  f->name);
            v->u = it.v.u;
            break;
        case F_BYTES:
        case F_OPT_BYTES:
            if (it.type != DQ_MP_STR && it.type != DQ_MP_BIN)
                return dq_err_set(err, DQ_EPROTO, "%s: %s is not a string", what, f->name);
            v->bytes.ptr = it.ptr;
            v->bytes.len = it.len;
            break;
        case F_BOOL:
            if (it.type != DQ_MP_BOOL)
                return dq_err_set(err, DQ_EPROTO, "%s: %s is not a boolean", what, f->name);
            v->b = it.v.b;
            break;
        }
        v->present = true;
    }
    if (!dq_mp_at_end(&r))
        return dq_err_set(err, DQ_EPROTO, "%s: trailing bytes", what);
    return DQ_OK;
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
    struct value v[9];
    int rc;

    memset(out, 0, sizeof *out);
    if (len < 3 || ((const unsigned char *)data)[2] != 0xcf)
        return dq_err_set(err, DQ_EPROTO, "envelope: does not start with a v1 header");
    rc = read_record(data, len, "envelope", fields, 9, v, err);
    if (rc != DQ_OK)
        return rc;
    if (v[0].u != DQ_ENV_VERSION)
        return dq_err_set(err, DQ_EPROTO, "envelope: version %llu is not %d",
                          (unsigned long long)v[0].u, DQ_ENV_VERSION);
    /* Lua numbers are exact to 2^53: larger values cannot have come from the scripts */
    if (!fits(v[3].u, UINT32_MAX) || !fits(v[5].u, UINT32_MAX) || !fits(v[1].u, 1ULL << 53) ||
        !fits(v[4].u, 1ULL << 53) || !fits(v[6].u, 1ULL << 53))
        return dq_err_set(err, DQ_EPROTO, "envelope: a counter or time is out of range");
    if (v[2].present && v[2].bytes.len == 0)
        return dq_err_set(err, DQ_EPROTO, "envelope: id is empty");
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
