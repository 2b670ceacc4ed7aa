/* SPDX-License-Identifier: MIT */
/*
 * hproto.c: the persistent handler's line protocol (see hproto.h). Pure: no I/O.
 *
 * A result line is parsed in two steps: dq_json_to_mp() does all of JSON (strictness,
 * escapes, surrogates, depth) and yields msgpack; msgpack-c (through lib/mp.h, which
 * bounds every length first) turns that into one msgpack_object map walked here.
 */
#include "hproto.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "fmt/json.h"
#include "fmt/taskfmt.h"
#include "lib/mp.h"

void
hproto_request(struct dq_buf *out, const dq_task *t, const char *queue)
{
    dq_buf_puts(out, "{\"id\":");
    dq_fmt_json_str(out, t->id, strlen(t->id));
    dq_buf_puts(out, ",\"queue\":");
    dq_fmt_json_str(out, queue, strlen(queue));
    dq_buf_printf(out, ",\"attempt\":%u,\"due_ms\":%lld,\"enqueued_ms\":%lld,\"payload\":",
                  t->attempt + 1, (long long)t->due_ms, (long long)t->enqueued_ms);
    dq_fmt_payload_json(out, t->payload, t->payload_len);
    dq_buf_puts(out, "}\n");
}

/* ---- result lines --------------------------------------------------------------- */

void
hproto_wire_id(struct dq_buf *out, const char *id)
{
    struct dq_buf js = DQ_BUF_INIT, mp = DQ_BUF_INIT;

    dq_fmt_json_str(&js, id, strlen(id));
    if (!js.failed && dq_json_to_mp(&mp, js.data, js.len, NULL) == DQ_OK) {
        msgpack_zone z;
        msgpack_object o;
        struct dq_mp_scan sc;
        size_t off = 0;
        msgpack_zone_init(&z, 256);
        if (dq_mp_unpack(mp.data, mp.len, &off, 1, &z, &o, &sc) == DQ_OK &&
            o.type == MSGPACK_OBJECT_STR && o.via.str.size > 0)
            dq_buf_append(out, o.via.str.ptr, o.via.str.size);
        msgpack_zone_destroy(&z);
    }
    dq_buf_free(&js);
    dq_buf_free(&mp);
}

/* Up to 40 bytes of @s for a reason line: printable ASCII kept, anything else '?'. */
static void
excerpt(char *buf, size_t size, const char *s, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < n && i < 40 && k + 1 < size; i++)
        buf[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (size > 0)
        buf[k] = '\0';
}

/* A str value as a new C string (cut at a NUL inside), or NULL for nil. */
static bool
opt_string(const msgpack_object *o, char **out)
{
    if (o->type == MSGPACK_OBJECT_NIL)
        return true;
    if (o->type != MSGPACK_OBJECT_STR)
        return false;
    *out = malloc(o->via.str.size + 1);
    if (*out != NULL) {
        if (o->via.str.size > 0) /* msgpack-c gives an empty str a NULL pointer */
            memcpy(*out, o->via.str.ptr, o->via.str.size);
        (*out)[o->via.str.size] = '\0';
    }
    return true;
}

static int refuse(struct hproto_result *out, char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Empties @out and says why the line was refused. */
static int
refuse(struct hproto_result *out, char *why, size_t why_size, const char *fmt, ...)
{
    va_list ap;

    hproto_result_free(out);
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return -1;
}

int
hproto_parse_result(const char *line, size_t len, struct hproto_result *out, char *why,
                    size_t why_size)
{
    static const char *const verdicts[] = {"done", "retry", "fail"};
    struct dq_buf mp = DQ_BUF_INIT;
    dq_err err = {0};
    bool have_result = false, have_id = false, have_error = false, have_trace = false;
    char ex[48];
    msgpack_zone zone;
    bool zoned = false;
    int rc = -1;

    memset(out, 0, sizeof *out);
    if (len > HPROTO_LINE_MAX) {
        snprintf(why, why_size, "result line of %zu bytes is over the limit of %d bytes", len,
                 HPROTO_LINE_MAX);
        return -1;
    }
    if (dq_json_to_mp(&mp, line, len, &err) != DQ_OK) {
        rc = refuse(out, why, why_size, "not JSON (%s)", err.msg);
        goto out;
    }
    msgpack_zone_init(&zone, 1024);
    zoned = true;
    size_t off = 0;
    struct dq_mp_scan sc;
    msgpack_object top;
    if (dq_mp_unpack(mp.data, mp.len, &off, DQ_JSON_MAX_DEPTH + 1, &zone, &top, &sc) != DQ_OK) {
        /* only a defence: the converter above writes well-formed msgpack */
        rc = refuse(out, why, why_size, "malformed result line");
        goto out;
    }
    if (top.type != MSGPACK_OBJECT_MAP) {
        rc = refuse(out, why, why_size, "not a JSON object");
        goto out;
    }
    for (uint32_t i = 0; i < top.via.map.size; i++) {
        const msgpack_object *k = &top.via.map.ptr[i].key, *val = &top.via.map.ptr[i].val;
        if (k->type != MSGPACK_OBJECT_STR) {
            /* JSON keys are strings; this is only a defence against the converter */
            rc = refuse(out, why, why_size, "a member name is not a string");
            goto out;
        }
        const char *key = k->via.str.ptr;
        size_t klen = k->via.str.size;
        excerpt(ex, sizeof ex, key, klen);
        bool is_id = klen == 2 && memcmp(key, "id", 2) == 0;
        bool is_result = klen == 6 && memcmp(key, "result", 6) == 0;
        bool is_error = klen == 5 && memcmp(key, "error", 5) == 0;
        bool is_trace = klen == 5 && memcmp(key, "trace", 5) == 0;
        bool *seen = is_id       ? &have_id
                     : is_result ? &have_result
                     : is_error  ? &have_error
                     : is_trace  ? &have_trace
                                 : NULL;
        if (seen != NULL && *seen) {
            rc = refuse(out, why, why_size, "\"%s\" given twice", ex);
            goto out;
        }
        if (seen != NULL)
            *seen = true;
        if (is_id || is_result) {
            if (val->type != MSGPACK_OBJECT_STR) {
                rc = refuse(out, why, why_size, "\"%s\" is not a string", ex);
                goto out;
            }
            const char *sv = val->via.str.ptr;
            size_t slen = val->via.str.size;
            if (is_id) {
                out->id = malloc(slen + 1);
                if (out->id == NULL) {
                    rc = refuse(out, why, why_size, "out of memory");
                    goto out;
                }
                if (slen > 0)
                    memcpy(out->id, sv, slen);
                out->id[slen] = '\0';
                out->id_len = slen;
                continue;
            }
            size_t v = 0;
            while (v < 3 && !(strlen(verdicts[v]) == slen && memcmp(verdicts[v], sv, slen) == 0))
                v++;
            if (v == 3) {
                excerpt(ex, sizeof ex, sv, slen);
                rc = refuse(out, why, why_size,
                            "unknown result \"%s\" (done, retry or fail expected)", ex);
                goto out;
            }
            out->verdict = (enum hproto_verdict)v;
        } else if (is_error || is_trace) {
            if (!opt_string(val, is_error ? &out->error : &out->trace)) {
                rc = refuse(out, why, why_size, "\"%s\" is not a string or null", ex);
                goto out;
            }
        }
    }
    if (!have_id || !have_result) {
        rc = refuse(out, why, why_size, "no \"%s\" member", have_id ? "result" : "id");
        goto out;
    }
    rc = 0;
out:
    if (zoned)
        msgpack_zone_destroy(&zone);
    dq_buf_free(&mp);
    return rc;
}

void
hproto_result_free(struct hproto_result *r)
{
    free(r->id);
    free(r->error);
    free(r->trace);
    memset(r, 0, sizeof *r);
}
