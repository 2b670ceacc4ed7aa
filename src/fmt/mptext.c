/* SPDX-License-Identifier: MIT */
/*
 * mptext.c: msgpack to JSON, to an indented tree, to a one-line summary. Pure: no I/O.
 *
 * Both converters walk the value recursively, but the recursion is bounded by
 * DQ_MPTEXT_MAX_DEPTH, and every array or map header is checked against the bytes
 * left before its elements are visited (each element needs at least one byte), so a
 * hostile header costs nothing. The summary gives the JSON walker a stop mark: once
 * the output passes it, the walk unwinds (WALK_CUT) instead of rendering a megabyte
 * that the list pane would cut to 80 columns anyway.
 */
#include "fmt/mptext.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/b64.h"
#include "fmt/esc.h"
#include "fmt/mp.h"
#include "lib/err.h"

/* Internal, positive: the output reached the stop mark; unwind without error. */
#define WALK_CUT 1

/* JSON string runs are flushed at least this often so the stop mark is noticed. */
#define RUN_MAX 1024

/*
 * A non-string map key is rendered as JSON and then quoted as a string, which escapes
 * every quote and backslash in it once more. Keys nested inside such keys would double
 * the text at every level (2^64 at the depth limit), so that nesting is capped.
 */
#define KEY_NEST_MAX 4

struct walk {
    struct dq_mp_reader r;
    const unsigned char *start; /* for byte offsets in messages */
    dq_err *err;
    size_t stop_at; /* stop once the output is this long (SIZE_MAX: never) */
    int key_nest;   /* non-string map keys being rendered around this point */
};

static size_t
offset(const struct walk *w)
{
    return (size_t)(w->r.p - w->start);
}

static bool
reached_stop(const struct walk *w, const struct dq_buf *out)
{
    return out->len >= w->stop_at;
}

/* Reads one item header, checking depth and that a container's count can fit. */
static int
read_item(struct walk *w, struct dq_mp_item *it, int depth)
{
    size_t at = offset(w);

    if (!dq_mp_read(&w->r, it)) {
        if (w->r.p != NULL && w->r.p < w->r.end && *w->r.p == 0xc1)
            return dq_err_set(w->err, DQ_EPROTO, "msgpack: reserved byte 0xc1 at byte %zu", at);
        return dq_err_set(w->err, DQ_EPROTO, "msgpack: truncated at byte %zu", at);
    }
    if (it->type != DQ_MP_ARRAY && it->type != DQ_MP_MAP)
        return DQ_OK;
    bool map = it->type == DQ_MP_MAP;
    if (depth >= DQ_MPTEXT_MAX_DEPTH)
        return dq_err_set(w->err, DQ_EPROTO, "msgpack: nesting deeper than %d at byte %zu",
                          DQ_MPTEXT_MAX_DEPTH, at);
    uint64_t need = map ? (uint64_t)it->len * 2 : it->len;
    size_t left = (size_t)(w->r.end - w->r.p);
    if (need > left)
        return dq_err_set(w->err, DQ_EPROTO,
                          "msgpack: %s at byte %zu claims %" PRIu32 " %s but only %zu bytes follow",
                          map ? "map" : "array", at, it->len, map ? "pairs" : "elements", left);
    return DQ_OK;
}

/*
 * Formats a finite double into @dst: the shortest of 15, 16 or 17 significant digits
 * that reads back as @v, always in the C locale (a TUI that called setlocale() must
 * not turn 1.5 into "1,5"), and always with a '.' or an exponent.
 */
static void
format_double(char *dst, size_t cap, double v)
{
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t old = c != (locale_t)0 ? uselocale(c) : (locale_t)0;

    for (int prec = c != (locale_t)0 ? 15 : 17; prec <= 17; prec++) {
        snprintf(dst, cap, "%.*g", prec, v);
        if (strtod(dst, NULL) == v)
            break;
    }
    if (c != (locale_t)0) {
        uselocale(old);
        freelocale(c);
    }
    /* Without a C locale object (out of memory), fix a one-byte decimal comma. */
    for (char *p = dst; *p != '\0'; p++) {
        if (*p == ',')
            *p = '.';
    }
    if (strpbrk(dst, ".e") == NULL && strlen(dst) + 2 < cap)
        strcat(dst, ".0");
}

/* NULL for a finite @v, else "nan", "inf" or "-inf". */
static const char *
nonfinite_name(double v)
{
    if (isnan(v))
        return "nan";
    if (isinf(v))
        return v < 0 ? "-inf" : "inf";
    return NULL;
}

/* ---- JSON ------------------------------------------------------------------------- */

/* Appends @len bytes of valid UTF-8 as a JSON string literal. Returns WALK_CUT if the
 * stop mark was passed part way. */
static int
json_string(struct walk *w, struct dq_buf *out, const unsigned char *s, size_t len)
{
    uint32_t cp;

    dq_buf_putc(out, '"');
    if (len == 0) { /* @s may be NULL then (a key cut before its first byte) */
        dq_buf_putc(out, '"');
        return DQ_OK;
    }
    const unsigned char *p = s, *end = s + len, *run = s;
    while (p < end) {
        size_t n = dq_utf8_decode(p, (size_t)(end - p), &cp);
        if (n == 0) { /* callers pass valid UTF-8; stay safe anyway */
            n = 1;
            cp = 0xfffd;
        } else if (cp != '"' && cp != '\\' && !dq_esc_is_unsafe(cp) && cp != 0x2028 &&
                   cp != 0x2029) {
            p += n;
            if ((size_t)(p - run) >= RUN_MAX) {
                dq_buf_append(out, run, (size_t)(p - run));
                run = p;
                if (reached_stop(w, out))
                    return WALK_CUT;
            }
            continue;
        }
        dq_buf_append(out, run, (size_t)(p - run));
        p += n;
        run = p;
        switch (cp) {
        case '"':
            dq_buf_append(out, "\\\"", 2);
            break;
        case '\\':
            dq_buf_append(out, "\\\\", 2);
            break;
        case '\b':
            dq_buf_append(out, "\\b", 2);
            break;
        case '\f':
            dq_buf_append(out, "\\f", 2);
            break;
        case '\n':
            dq_buf_append(out, "\\n", 2);
            break;
        case '\r':
            dq_buf_append(out, "\\r", 2);
            break;
        case '\t':
            dq_buf_append(out, "\\t", 2);
            break;
        default:
            dq_buf_printf(out, "\\u%04" PRIx32, cp);
            break;
        }
        if (reached_stop(w, out))
            return WALK_CUT;
    }
    dq_buf_append(out, run, (size_t)(p - run));
    dq_buf_putc(out, '"');
    return DQ_OK;
}

/* Appends base64 of @len bytes inside quotes; only a prefix once near the stop mark. */
static int
json_b64(struct walk *w, struct dq_buf *out, const unsigned char *s, size_t len)
{
    int rc = DQ_OK;

    if (w->stop_at != SIZE_MAX) {
        size_t room = out->len < w->stop_at ? w->stop_at - out->len : 0;
        size_t most = (room / 4 + 1) * 3;
        if (len > most) {
            len = most;
            rc = WALK_CUT;
        }
    }
    dq_buf_putc(out, '"');
    dq_b64_encode(out, s, len);
    dq_buf_putc(out, '"');
    return rc;
}

static int json_value(struct walk *w, struct dq_buf *out, int depth);

/* Counts one more level of non-string key rendering, refusing past KEY_NEST_MAX. */
static int
enter_key(struct walk *w)
{
    if (w->key_nest >= KEY_NEST_MAX)
        return dq_err_set(w->err, DQ_EPROTO,
                          "msgpack: map key at byte %zu nests non-string keys more than %d deep",
                          offset(w), KEY_NEST_MAX);
    w->key_nest++;
    return DQ_OK;
}

/* A map key: a valid UTF-8 str as itself, anything else as its JSON text. */
static int
json_key(struct walk *w, struct dq_buf *out, int depth)
{
    struct dq_mp_reader save = w->r;
    struct dq_mp_item it;

    if (dq_mp_read(&w->r, &it) && it.type == DQ_MP_STR && dq_utf8_valid(it.ptr, it.len))
        return json_string(w, out, it.ptr, it.len);
    w->r = save;
    int rc = enter_key(w);
    if (rc != DQ_OK)
        return rc;

    /* The key's text is at least as long as its JSON, so the stop mark carries over. */
    struct dq_buf key = DQ_BUF_INIT;
    size_t stop = w->stop_at;
    if (stop != SIZE_MAX)
        w->stop_at = out->len < stop ? stop - out->len : 0;
    rc = json_value(w, &key, depth);
    w->stop_at = stop;
    w->key_nest--;
    if (rc == DQ_OK || rc == WALK_CUT) {
        if (key.failed) {
            out->failed = true;
        } else {
            int rc2 = json_string(w, out, (const unsigned char *)key.data, key.len);
            rc = rc == DQ_OK ? rc2 : rc;
        }
    }
    dq_buf_free(&key);
    return rc;
}

static int
json_value(struct walk *w, struct dq_buf *out, int depth)
{
    struct dq_mp_item it;
    const char *name;
    int rc;

    if (reached_stop(w, out))
        return WALK_CUT;
    rc = read_item(w, &it, depth);
    if (rc != DQ_OK)
        return rc;
    switch (it.type) {
    case DQ_MP_NIL:
        dq_buf_puts(out, "null");
        break;
    case DQ_MP_BOOL:
        dq_buf_puts(out, it.v.b ? "true" : "false");
        break;
    case DQ_MP_UINT:
        dq_buf_printf(out, "%" PRIu64, it.v.u);
        break;
    case DQ_MP_INT:
        dq_buf_printf(out, "%" PRId64, it.v.i);
        break;
    case DQ_MP_FLOAT:
        name = nonfinite_name(it.v.f);
        if (name != NULL) {
            dq_buf_printf(out, "{\"$float\":\"%s\"}", name);
        } else {
            char tmp[40];
            format_double(tmp, sizeof tmp, it.v.f);
            dq_buf_puts(out, tmp);
        }
        break;
    case DQ_MP_STR:
        if (dq_utf8_valid(it.ptr, it.len))
            return json_string(w, out, it.ptr, it.len);
        dq_buf_puts(out, "{\"$str_base64\":");
        rc = json_b64(w, out, it.ptr, it.len);
        dq_buf_putc(out, '}');
        return rc;
    case DQ_MP_BIN:
        dq_buf_puts(out, "{\"$base64\":");
        rc = json_b64(w, out, it.ptr, it.len);
        dq_buf_putc(out, '}');
        return rc;
    case DQ_MP_EXT:
        dq_buf_printf(out, "{\"$ext\":%d,\"$base64\":", it.ext_type);
        rc = json_b64(w, out, it.ptr, it.len);
        dq_buf_putc(out, '}');
        return rc;
    case DQ_MP_ARRAY:
        dq_buf_putc(out, '[');
        for (uint32_t i = 0; i < it.len; i++) {
            if (i > 0)
                dq_buf_putc(out, ',');
            rc = json_value(w, out, depth + 1);
            if (rc != DQ_OK)
                return rc;
        }
        dq_buf_putc(out, ']');
        break;
    case DQ_MP_MAP:
        dq_buf_putc(out, '{');
        for (uint32_t i = 0; i < it.len; i++) {
            if (i > 0)
                dq_buf_putc(out, ',');
            rc = json_key(w, out, depth + 1);
            if (rc != DQ_OK)
                return rc;
            dq_buf_putc(out, ':');
            rc = json_value(w, out, depth + 1);
            if (rc != DQ_OK)
                return rc;
        }
        dq_buf_putc(out, '}');
        break;
    }
    return DQ_OK;
}

/* Renders one whole value; WALK_CUT only when @stop_at is not SIZE_MAX. */
static int
json_render(struct dq_buf *out, const void *data, size_t len, size_t stop_at, dq_err *err)
{
    struct walk w;

    dq_mp_reader_init(&w.r, data, len);
    w.start = w.r.p;
    w.err = err;
    w.stop_at = stop_at;
    w.key_nest = 0;
    dq_buf_append(out, "", 0);
    int rc = json_value(&w, out, 0);
    if (rc != DQ_OK)
        return rc;
    if (!dq_mp_at_end(&w.r))
        return dq_err_set(err, DQ_EPROTO,
                          "msgpack: trailing bytes at byte %zu (the value ends there; "
                          "input is %zu bytes)",
                          offset(&w), len);
    if (out->failed)
        return dq_err_set(err, DQ_ENOMEM, "msgpack: out of memory rendering JSON");
    return DQ_OK;
}

int
dq_mp_to_json(struct dq_buf *out, const void *data, size_t len, dq_err *err)
{
    return json_render(out, data, len, SIZE_MAX, err);
}

/* ---- tree ------------------------------------------------------------------------- */

static void
put_indent(struct dq_buf *out, int n)
{
    static const char spaces[] = "                                ";

    while (n > 0) {
        int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;
        dq_buf_append(out, spaces, (size_t)k);
        n -= k;
    }
}

static int
tree_key(struct walk *w, struct dq_buf *out, int depth)
{
    struct dq_mp_reader save = w->r;
    struct dq_mp_item it;

    if (dq_mp_read(&w->r, &it) && it.type == DQ_MP_STR) {
        dq_esc_text(out, it.ptr, it.len, 0);
        return DQ_OK;
    }
    w->r = save;
    int rc = enter_key(w);
    if (rc != DQ_OK)
        return rc;

    struct dq_buf key = DQ_BUF_INIT;
    rc = json_value(w, &key, depth);
    w->key_nest--;
    if (rc == DQ_OK) {
        if (key.failed)
            out->failed = true;
        else
            dq_esc_text(out, key.data, key.len, 0);
    }
    dq_buf_free(&key);
    return rc;
}

/*
 * Writes the value at the reader. A top value starts its own line at @pad; a nested one
 * continues its parent's "key:" or "-" line, whose indentation is @pad.
 */
static int
tree_value(struct walk *w, struct dq_buf *out, int pad, int depth, bool top)
{
    struct dq_mp_item it;
    const char *name;
    int rc = read_item(w, &it, depth);

    if (rc != DQ_OK)
        return rc;
    if ((it.type == DQ_MP_ARRAY || it.type == DQ_MP_MAP) && it.len > 0) {
        int inner = top ? pad : pad + 2;
        if (!top)
            dq_buf_putc(out, '\n');
        for (uint32_t i = 0; i < it.len; i++) {
            put_indent(out, inner);
            if (it.type == DQ_MP_ARRAY) {
                dq_buf_putc(out, '-');
            } else {
                rc = tree_key(w, out, depth + 1);
                if (rc != DQ_OK)
                    return rc;
                dq_buf_putc(out, ':');
            }
            rc = tree_value(w, out, inner, depth + 1, false);
            if (rc != DQ_OK)
                return rc;
        }
        return DQ_OK;
    }
    if (top)
        put_indent(out, pad);
    else
        dq_buf_putc(out, ' ');
    switch (it.type) {
    case DQ_MP_NIL:
        dq_buf_puts(out, "nil");
        break;
    case DQ_MP_BOOL:
        dq_buf_puts(out, it.v.b ? "true" : "false");
        break;
    case DQ_MP_UINT:
        dq_buf_printf(out, "%" PRIu64, it.v.u);
        break;
    case DQ_MP_INT:
        dq_buf_printf(out, "%" PRId64, it.v.i);
        break;
    case DQ_MP_FLOAT:
        name = nonfinite_name(it.v.f);
        if (name != NULL) {
            dq_buf_puts(out, name);
        } else {
            char tmp[40];
            format_double(tmp, sizeof tmp, it.v.f);
            dq_buf_puts(out, tmp);
        }
        break;
    case DQ_MP_STR:
        dq_buf_putc(out, '"');
        dq_esc_text(out, it.ptr, it.len, 0);
        dq_buf_putc(out, '"');
        break;
    case DQ_MP_BIN:
        dq_buf_printf(out, "bin (%" PRIu32 " bytes)\n", it.len);
        dq_hexdump(out, it.ptr, it.len, pad + 2);
        return DQ_OK;
    case DQ_MP_EXT:
        dq_buf_printf(out, "ext type %d (%" PRIu32 " bytes)\n", it.ext_type, it.len);
        dq_hexdump(out, it.ptr, it.len, pad + 2);
        return DQ_OK;
    case DQ_MP_ARRAY:
        dq_buf_puts(out, "[]");
        break;
    case DQ_MP_MAP:
        dq_buf_puts(out, "{}");
        break;
    }
    dq_buf_putc(out, '\n');
    return DQ_OK;
}

int
dq_mp_to_tree(struct dq_buf *out, const void *data, size_t len, int indent, dq_err *err)
{
    struct walk w;

    dq_mp_reader_init(&w.r, data, len);
    w.start = w.r.p;
    w.err = err;
    w.stop_at = SIZE_MAX;
    w.key_nest = 0;
    dq_buf_append(out, "", 0);
    int rc = tree_value(&w, out, indent > 0 ? indent : 0, 0, true);
    if (rc != DQ_OK)
        return rc;
    if (!dq_mp_at_end(&w.r))
        return dq_err_set(err, DQ_EPROTO,
                          "msgpack: trailing bytes at byte %zu (the value ends there; "
                          "input is %zu bytes)",
                          offset(&w), len);
    if (out->failed)
        return dq_err_set(err, DQ_ENOMEM, "msgpack: out of memory rendering a tree");
    return DQ_OK;
}

/* ---- summary and hex dump ----------------------------------------------------------- */

void
dq_mp_summary(struct dq_buf *out, const void *data, size_t len, size_t max_bytes)
{
    struct dq_buf json = DQ_BUF_INIT, text = DQ_BUF_INIT;
    struct dq_mp_reader r;
    /* Rendering a little past max_bytes is enough: escaping never shortens text. */
    size_t slack = max_bytes < SIZE_MAX - 16 ? max_bytes + 16 : SIZE_MAX;

    dq_mp_reader_init(&r, data, len);
    bool ok = dq_mp_skip(&r, DQ_MPTEXT_MAX_DEPTH) && dq_mp_at_end(&r);
    if (ok) {
        int rc = json_render(&json, data, len, slack, NULL);
        ok = rc == DQ_OK || rc == WALK_CUT;
    }
    if (ok) {
        dq_esc_text(&text, json.data, json.len, 0);
    } else {
        dq_buf_puts(&text, "raw: ");
        dq_esc_text(&text, data, len < slack ? len : slack, 0);
    }
    if (!text.failed) {
        size_t keep = text.len;
        bool cut = keep > max_bytes;
        if (cut) {
            keep = max_bytes >= 3 ? max_bytes - 3 : max_bytes;
            while (keep > 0 && ((unsigned char)text.data[keep] & 0xc0u) == 0x80)
                keep--;
        }
        dq_buf_append(out, text.data, keep);
        if (cut && max_bytes >= 3)
            dq_buf_append(out, "\xe2\x80\xa6", 3);
    }
    dq_buf_free(&json);
    dq_buf_free(&text);
}

void
dq_hexdump(struct dq_buf *out, const void *data, size_t len, int indent)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = data;

    dq_buf_append(out, "", 0);
    for (size_t off = 0; off < len; off += 16) {
        /* "00000000  " + 16 * "hh " + 1 + " |" + 16 + "|\n" */
        char line[96];
        size_t n = len - off < 16 ? len - off : 16;
        size_t k = (size_t)snprintf(line, sizeof line, "%08zx  ", off);

        for (size_t i = 0; i < 16; i++) {
            if (i < n) {
                line[k++] = hex[p[off + i] >> 4];
                line[k++] = hex[p[off + i] & 15];
            } else {
                line[k++] = ' ';
                line[k++] = ' ';
            }
            line[k++] = ' ';
            if (i == 7)
                line[k++] = ' ';
        }
        line[k++] = ' ';
        line[k++] = '|';
        for (size_t i = 0; i < n; i++) {
            unsigned char c = p[off + i];
            line[k++] = c >= 0x20 && c < 0x7f ? (char)c : '.';
        }
        line[k++] = '|';
        line[k++] = '\n';
        put_indent(out, indent);
        dq_buf_append(out, line, k);
    }
}
