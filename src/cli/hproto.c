/* SPDX-License-Identifier: MIT */
/*
 * hproto.c: the persistent handler's line protocol (see hproto.h). Pure: no I/O.
 *
 * A result line is parsed in two steps: dq_json_to_mp() does all of JSON (strictness,
 * escapes, surrogates, depth) and yields msgpack; a small reader here walks that one
 * map. The reader is ours because fmt/mp.h's is private to fmt/ (and being replaced),
 * and the CLI reaches msgpack only through the library. It knows every msgpack type,
 * not only those dq_json_to_mp emits today, and checks every length against the end.
 */
#include "hproto.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/json.h"
#include "fmt/taskfmt.h"

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

/* ---- a bounds-checked msgpack reader, enough to walk one map ---------------------- */

struct rd {
    const unsigned char *p, *end;
};

static bool
rd_take(struct rd *r, uint64_t n, const unsigned char **out)
{
    if ((uint64_t)(r->end - r->p) < n)
        return false;
    if (out != NULL)
        *out = r->p;
    r->p += n;
    return true;
}

/* A big-endian unsigned integer of @width bytes (1, 2, 4 or 8). */
static bool
rd_be(struct rd *r, unsigned width, uint64_t *v)
{
    const unsigned char *b;

    if (!rd_take(r, width, &b))
        return false;
    *v = 0;
    for (unsigned i = 0; i < width; i++)
        *v = *v << 8 | b[i];
    return true;
}

/* A str value: its bytes (a view into the buffer). False, consuming nothing, if the
 * next value is not a str. */
static bool
rd_str(struct rd *r, const char **s, size_t *n)
{
    struct rd save = *r;
    const unsigned char *b;
    uint64_t len;

    if (!rd_take(r, 1, &b))
        return false;
    if (b[0] >= 0xa0 && b[0] <= 0xbf)
        len = b[0] & 0x1f;
    else if (b[0] < 0xd9 || b[0] > 0xdb || !rd_be(r, 1u << (b[0] - 0xd9), &len))
        len = UINT64_MAX;
    if (len == UINT64_MAX || !rd_take(r, len, &b)) {
        *r = save;
        return false;
    }
    *s = (const char *)b;
    *n = (size_t)len;
    return true;
}

static bool
rd_is_nil(struct rd *r)
{
    if (r->p < r->end && r->p[0] == 0xc0) {
        r->p++;
        return true;
    }
    return false;
}

/* Skips one value of any type, nested at most @depth deep. */
static bool
rd_skip(struct rd *r, int depth)
{
    const unsigned char *b;
    uint64_t n = 0, items = 0;

    if (depth <= 0 || !rd_take(r, 1, &b))
        return false;
    unsigned char c = b[0];
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        return true; /* fixint, nil, bool */
    if (c >= 0x80 && c <= 0x8f)
        items = 2 * (uint64_t)(c & 0x0f);
    else if (c >= 0x90 && c <= 0x9f)
        items = c & 0x0f;
    else if (c >= 0xa0 && c <= 0xbf)
        return rd_take(r, c & 0x1f, NULL);
    else if (c >= 0xc4 && c <= 0xc6) /* bin 8/16/32 */
        return rd_be(r, 1u << (c - 0xc4), &n) && rd_take(r, n, NULL);
    else if (c >= 0xc7 && c <= 0xc9) /* ext 8/16/32: length, type, data */
        return rd_be(r, 1u << (c - 0xc7), &n) && rd_take(r, n + 1, NULL);
    else if (c == 0xca || c == 0xcb)
        return rd_take(r, c == 0xca ? 4 : 8, NULL);
    else if (c >= 0xcc && c <= 0xcf)
        return rd_take(r, 1u << (c - 0xcc), NULL);
    else if (c >= 0xd0 && c <= 0xd3)
        return rd_take(r, 1u << (c - 0xd0), NULL);
    else if (c >= 0xd4 && c <= 0xd8) /* fixext 1..16: type, data */
        return rd_take(r, 1 + (1u << (c - 0xd4)), NULL);
    else if (c >= 0xd9 && c <= 0xdb)
        return rd_be(r, 1u << (c - 0xd9), &n) && rd_take(r, n, NULL);
    else if (c == 0xdc || c == 0xdd) {
        if (!rd_be(r, c == 0xdc ? 2 : 4, &items))
            return false;
    } else if (c == 0xde || c == 0xdf) {
        if (!rd_be(r, c == 0xde ? 2 : 4, &items))
            return false;
        items *= 2;
    } else {
        return false; /* 0xc1: never used */
    }
    /* each item takes at least a byte, so a huge count fails at the end of the input */
    for (uint64_t i = 0; i < items; i++) {
        if (!rd_skip(r, depth - 1))
            return false;
    }
    return true;
}

static bool
rd_map(struct rd *r, uint64_t *n)
{
    const unsigned char *b;

    if (!rd_take(r, 1, &b))
        return false;
    if (b[0] >= 0x80 && b[0] <= 0x8f) {
        *n = b[0] & 0x0f;
        return true;
    }
    return (b[0] == 0xde || b[0] == 0xdf) && rd_be(r, b[0] == 0xde ? 2 : 4, n);
}

/* ---- result lines --------------------------------------------------------------- */

void
hproto_wire_id(struct dq_buf *out, const char *id)
{
    struct dq_buf js = DQ_BUF_INIT, mp = DQ_BUF_INIT;
    const char *s;
    size_t n;

    dq_fmt_json_str(&js, id, strlen(id));
    if (!js.failed && dq_json_to_mp(&mp, js.data, js.len, NULL) == DQ_OK) {
        struct rd r = {(const unsigned char *)mp.data, (const unsigned char *)mp.data + mp.len};
        if (rd_str(&r, &s, &n))
            dq_buf_append(out, s, n);
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
opt_string(struct rd *r, char **out)
{
    const char *s;
    size_t n;

    if (rd_is_nil(r))
        return true;
    if (!rd_str(r, &s, &n))
        return false;
    *out = malloc(n + 1);
    if (*out != NULL) {
        memcpy(*out, s, n);
        (*out)[n] = '\0';
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
    uint64_t n;
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
    struct rd r = {(const unsigned char *)mp.data, (const unsigned char *)mp.data + mp.len};
    if (!rd_map(&r, &n)) {
        rc = refuse(out, why, why_size, "not a JSON object");
        goto out;
    }
    for (uint64_t i = 0; i < n; i++) {
        const char *key, *s;
        size_t klen, slen;
        if (!rd_str(&r, &key, &klen)) {
            /* JSON keys are strings; this is only a defence against the converter */
            rc = refuse(out, why, why_size, "a member name is not a string");
            goto out;
        }
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
            if (!rd_str(&r, &s, &slen)) {
                rc = refuse(out, why, why_size, "\"%s\" is not a string", ex);
                goto out;
            }
            if (is_id) {
                out->id = malloc(slen + 1);
                if (out->id == NULL) {
                    rc = refuse(out, why, why_size, "out of memory");
                    goto out;
                }
                memcpy(out->id, s, slen);
                out->id[slen] = '\0';
                out->id_len = slen;
                continue;
            }
            size_t v = 0;
            while (v < 3 && !(strlen(verdicts[v]) == slen && memcmp(verdicts[v], s, slen) == 0))
                v++;
            if (v == 3) {
                excerpt(ex, sizeof ex, s, slen);
                rc = refuse(out, why, why_size,
                            "unknown result \"%s\" (done, retry or fail expected)", ex);
                goto out;
            }
            out->verdict = (enum hproto_verdict)v;
        } else if (is_error || is_trace) {
            if (!opt_string(&r, is_error ? &out->error : &out->trace)) {
                rc = refuse(out, why, why_size, "\"%s\" is not a string or null", ex);
                goto out;
            }
        } else if (!rd_skip(&r, DQ_JSON_MAX_DEPTH + 1)) {
            rc = refuse(out, why, why_size, "malformed value of \"%s\"", ex);
            goto out;
        }
    }
    if (!have_id || !have_result) {
        rc = refuse(out, why, why_size, "no \"%s\" member", have_id ? "result" : "id");
        goto out;
    }
    rc = 0;
out:
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
