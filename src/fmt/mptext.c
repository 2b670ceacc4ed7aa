/* SPDX-License-Identifier: MIT */
/*
 * mptext.c: msgpack to JSON, to an indented tree, to a one-line summary. Pure: no I/O.
 *
 * msgpack-c decodes the value (dq_mp_unpack: the bounds and depth pre-check first, so a
 * hostile header costs nothing), and both converters walk the msgpack_object tree
 * recursively, which the depth limit bounds. The summary gives the JSON walker a stop
 * mark: once the output passes it, the walk unwinds (WALK_CUT) instead of rendering a
 * megabyte that the list pane would cut to 80 columns anyway.
 *
 * The JSON text is written here, not with yajl_gen (yajl is the JSON parser, json.c),
 * because yajl_gen cannot keep mptext.h's guarantees: yajl_gen_string leaves DEL, C1
 * controls (U+009B is a terminal's CSI), U+2028/U+2029 and bidi controls unescaped,
 * yajl_gen_double prints "%.20g" (0.1 becomes 0.10000000000000000555, not the shortest
 * form that reads back), and yajl_gen_integer takes a long long, so no uint64 above
 * INT64_MAX. What would be left to it is the punctuation.
 */
#include "fmt/mptext.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "fmt/b64.h"
#include "fmt/esc.h"
#include "lib/err.h"
#include "lib/mp.h"

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
    const unsigned char *data; /* the input, for byte offsets in messages */
    size_t len;
    dq_err *err;
    size_t stop_at; /* stop once the output is this long (SIZE_MAX: never) */
    int key_nest;   /* non-string map keys being rendered around this point */
    size_t index;   /* pre-order number of the next object visited, keys included */
};

static bool
reached_stop(const struct walk *w, const struct dq_buf *out)
{
    return out->len >= w->stop_at;
}

/* Decodes exactly one value with msgpack-c into @o (allocated from @z). */
static int
decode(struct walk *w, msgpack_zone *z, msgpack_object *o)
{
    struct dq_mp_scan s;
    size_t off = 0;

    int rc = dq_mp_unpack(w->data, w->len, &off, DQ_MPTEXT_MAX_DEPTH, z, o, &s);
    if (rc == DQ_ENOMEM)
        return dq_err_set(w->err, DQ_ENOMEM, "msgpack: out of memory decoding");
    switch (rc == DQ_OK ? DQ_MP_FAULT_NONE : s.fault) {
    case DQ_MP_FAULT_NONE:
        break;
    case DQ_MP_FAULT_RESERVED:
        return dq_err_set(w->err, DQ_EPROTO, "msgpack: reserved byte 0xc1 at byte %zu", s.at);
    case DQ_MP_FAULT_DEEP:
        return dq_err_set(w->err, DQ_EPROTO, "msgpack: nesting deeper than %d at byte %zu",
                          DQ_MPTEXT_MAX_DEPTH, s.at);
    case DQ_MP_FAULT_CLAIM:
        return dq_err_set(w->err, DQ_EPROTO,
                          "msgpack: %s at byte %zu claims %" PRIu32 " %s but only %zu bytes follow",
                          s.map ? "map" : "array", s.at, s.n, s.map ? "pairs" : "elements", s.left);
    case DQ_MP_FAULT_TRUNCATED:
    default:
        return dq_err_set(w->err, DQ_EPROTO, "msgpack: truncated at byte %zu", s.at);
    }
    if (rc != DQ_OK)
        return dq_err_set(w->err, DQ_EPROTO, "msgpack: undecodable at byte 0");
    if (off != w->len)
        return dq_err_set(w->err, DQ_EPROTO,
                          "msgpack: trailing bytes at byte %zu (the value ends there; "
                          "input is %zu bytes)",
                          off, w->len);
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

/* msgpack-c leaves the pointer of an empty str/bin/ext body NULL; the text helpers do
 * pointer arithmetic on it, so they get a real (empty) one. */
static const unsigned char *
body(const char *p)
{
    return (const unsigned char *)(p != NULL ? p : "");
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

static int json_value(struct walk *w, struct dq_buf *out, const msgpack_object *o);

/* Counts one more level of non-string key rendering, refusing past KEY_NEST_MAX. */
static int
enter_key(struct walk *w)
{
    if (w->key_nest >= KEY_NEST_MAX) {
        /* Rare: only then is the key's byte offset worth a second walk to find. */
        size_t at = dq_mp_item_offset(w->data, w->len, 0, w->index);
        return dq_err_set(w->err, DQ_EPROTO,
                          "msgpack: map key at byte %zu nests non-string keys more than %d deep",
                          at, KEY_NEST_MAX);
    }
    w->key_nest++;
    return DQ_OK;
}

/* A map key: a valid UTF-8 str as itself, anything else as its JSON text. */
static int
json_key(struct walk *w, struct dq_buf *out, const msgpack_object *k)
{
    if (k->type == MSGPACK_OBJECT_STR && dq_utf8_valid(body(k->via.str.ptr), k->via.str.size)) {
        w->index++;
        return json_string(w, out, body(k->via.str.ptr), k->via.str.size);
    }
    int rc = enter_key(w);
    if (rc != DQ_OK)
        return rc;

    /* The key's text is at least as long as its JSON, so the stop mark carries over. */
    struct dq_buf key = DQ_BUF_INIT;
    size_t stop = w->stop_at;
    if (stop != SIZE_MAX)
        w->stop_at = out->len < stop ? stop - out->len : 0;
    rc = json_value(w, &key, k);
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

/* {"<name>":"<base64>"} and the ext form, the reserved objects of json.h. */
static int
json_wrapped(struct walk *w, struct dq_buf *out, const char *head, const void *s, size_t len)
{
    dq_buf_puts(out, head);
    int rc = json_b64(w, out, s, len);
    dq_buf_putc(out, '}');
    return rc;
}

static int
json_value(struct walk *w, struct dq_buf *out, const msgpack_object *o)
{
    const char *name;
    int rc;

    if (reached_stop(w, out))
        return WALK_CUT;
    w->index++;
    switch (o->type) {
    case MSGPACK_OBJECT_NIL:
        dq_buf_puts(out, "null");
        break;
    case MSGPACK_OBJECT_BOOLEAN:
        dq_buf_puts(out, o->via.boolean ? "true" : "false");
        break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        dq_buf_printf(out, "%" PRIu64, o->via.u64);
        break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        dq_buf_printf(out, "%" PRId64, o->via.i64);
        break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        name = nonfinite_name(o->via.f64);
        if (name != NULL) {
            dq_buf_printf(out, "{\"$float\":\"%s\"}", name);
        } else {
            char tmp[40];
            format_double(tmp, sizeof tmp, o->via.f64);
            dq_buf_puts(out, tmp);
        }
        break;
    case MSGPACK_OBJECT_STR:
        if (dq_utf8_valid(body(o->via.str.ptr), o->via.str.size))
            return json_string(w, out, body(o->via.str.ptr), o->via.str.size);
        return json_wrapped(w, out, "{\"$str_base64\":", body(o->via.str.ptr), o->via.str.size);
    case MSGPACK_OBJECT_BIN:
        return json_wrapped(w, out, "{\"$base64\":", body(o->via.bin.ptr), o->via.bin.size);
    case MSGPACK_OBJECT_EXT: {
        char head[32];
        snprintf(head, sizeof head, "{\"$ext\":%d,\"$base64\":", o->via.ext.type);
        return json_wrapped(w, out, head, body(o->via.ext.ptr), o->via.ext.size);
    }
    case MSGPACK_OBJECT_ARRAY:
        dq_buf_putc(out, '[');
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            if (i > 0)
                dq_buf_putc(out, ',');
            rc = json_value(w, out, &o->via.array.ptr[i]);
            if (rc != DQ_OK)
                return rc;
        }
        dq_buf_putc(out, ']');
        break;
    case MSGPACK_OBJECT_MAP:
        dq_buf_putc(out, '{');
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            if (i > 0)
                dq_buf_putc(out, ',');
            rc = json_key(w, out, &o->via.map.ptr[i].key);
            if (rc != DQ_OK)
                return rc;
            dq_buf_putc(out, ':');
            rc = json_value(w, out, &o->via.map.ptr[i].val);
            if (rc != DQ_OK)
                return rc;
        }
        dq_buf_putc(out, '}');
        break;
    }
    return DQ_OK;
}

static void
walk_init(struct walk *w, const void *data, size_t len, size_t stop_at, dq_err *err)
{
    w->data = data;
    w->len = data != NULL ? len : 0;
    w->err = err;
    w->stop_at = stop_at;
    w->key_nest = 0;
    w->index = 0;
}

/* Renders one whole value; WALK_CUT only when @stop_at is not SIZE_MAX. */
static int
json_render(struct dq_buf *out, const void *data, size_t len, size_t stop_at, dq_err *err)
{
    struct walk w;
    msgpack_zone zone;
    msgpack_object o;

    walk_init(&w, data, len, stop_at, err);
    dq_buf_append(out, "", 0);
    if (!msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE))
        return dq_err_set(err, DQ_ENOMEM, "msgpack: out of memory decoding");
    int rc = decode(&w, &zone, &o);
    if (rc == DQ_OK)
        rc = json_value(&w, out, &o);
    msgpack_zone_destroy(&zone);
    if (rc == DQ_OK && out->failed)
        rc = dq_err_set(err, DQ_ENOMEM, "msgpack: out of memory rendering JSON");
    return rc;
}

int
dq_mp_to_json(struct dq_buf *out, const void *data, size_t len, dq_err *err)
{
    return json_render(out, data, len, SIZE_MAX, err);
}

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

/* fix and requeue */
int
dq_mp_to_json_pretty(struct dq_buf *out, const void *data, size_t len, dq_err *err)
{
    struct dq_buf flat = DQ_BUF_INIT;
    int rc = dq_mp_to_json(&flat, data, len, err);
    int depth = 0;
    bool in_str = false;

    /* Re-indents the compact text: it is our own output, valid JSON, so only quotes and
     * backslashes inside strings need tracking (one pass, no second parser). */
    for (size_t i = 0; rc == DQ_OK && i < flat.len; i++) {
        char ch = flat.data[i];
        if (in_str) {
            dq_buf_putc(out, ch);
            if (ch == '\\' && i + 1 < flat.len)
                dq_buf_putc(out, flat.data[++i]);
            else if (ch == '"')
                in_str = false;
            continue;
        }
        switch (ch) {
        case '"':
            in_str = true;
            dq_buf_putc(out, ch);
            break;
        case '{':
        case '[':
            if (i + 1 < flat.len && (flat.data[i + 1] == '}' || flat.data[i + 1] == ']')) {
                dq_buf_putc(out, ch); /* {} and [] stay on one line */
                dq_buf_putc(out, flat.data[++i]);
                break;
            }
            dq_buf_putc(out, ch);
            dq_buf_putc(out, '\n');
            put_indent(out, 2 * ++depth);
            break;
        case '}':
        case ']':
            dq_buf_putc(out, '\n');
            put_indent(out, 2 * --depth);
            dq_buf_putc(out, ch);
            break;
        case ',':
            dq_buf_puts(out, ",\n");
            put_indent(out, 2 * depth);
            break;
        case ':':
            dq_buf_puts(out, ": ");
            break;
        default:
            dq_buf_putc(out, ch);
        }
    }
    if (rc == DQ_OK)
        dq_buf_putc(out, '\n');
    if (rc == DQ_OK && out->failed)
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
    dq_buf_free(&flat);
    return rc;
}

/* ---- tree ------------------------------------------------------------------------- */

static int
tree_key(struct walk *w, struct dq_buf *out, const msgpack_object *k)
{
    if (k->type == MSGPACK_OBJECT_STR) {
        w->index++;
        dq_esc_text(out, body(k->via.str.ptr), k->via.str.size, 0);
        return DQ_OK;
    }
    int rc = enter_key(w);
    if (rc != DQ_OK)
        return rc;

    struct dq_buf key = DQ_BUF_INIT;
    rc = json_value(w, &key, k);
    w->key_nest--;
    if (rc == DQ_OK) {
        if (key.failed)
            out->failed = true;
        else
            dq_esc_text(out, key.data, key.len, DQ_ESC_KEEP_BACKSLASH); /* JSON text */
    }
    dq_buf_free(&key);
    return rc;
}

/* bin and ext: a heading line, then the bytes as a hex dump. */
static void
tree_bytes(struct dq_buf *out, const char *head, const void *s, size_t len, int pad)
{
    dq_buf_puts(out, head);
    dq_hexdump(out, s, len, pad + 2);
}

/*
 * Writes @o. A top value starts its own line at @pad; a nested one continues its
 * parent's "key:" or "-" line, whose indentation is @pad.
 */
static int
tree_value(struct walk *w, struct dq_buf *out, const msgpack_object *o, int pad, bool top)
{
    const char *name;
    char head[64];
    int rc;

    w->index++;
    bool array = o->type == MSGPACK_OBJECT_ARRAY;
    uint32_t n = array ? o->via.array.size : o->type == MSGPACK_OBJECT_MAP ? o->via.map.size : 0;
    if (n > 0) {
        int inner = top ? pad : pad + 2;
        if (!top)
            dq_buf_putc(out, '\n');
        for (uint32_t i = 0; i < n; i++) {
            put_indent(out, inner);
            if (array) {
                dq_buf_putc(out, '-');
                rc = tree_value(w, out, &o->via.array.ptr[i], inner, false);
            } else {
                rc = tree_key(w, out, &o->via.map.ptr[i].key);
                if (rc != DQ_OK)
                    return rc;
                dq_buf_putc(out, ':');
                rc = tree_value(w, out, &o->via.map.ptr[i].val, inner, false);
            }
            if (rc != DQ_OK)
                return rc;
        }
        return DQ_OK;
    }
    if (top)
        put_indent(out, pad);
    else
        dq_buf_putc(out, ' ');
    switch (o->type) {
    case MSGPACK_OBJECT_NIL:
        dq_buf_puts(out, "nil");
        break;
    case MSGPACK_OBJECT_BOOLEAN:
        dq_buf_puts(out, o->via.boolean ? "true" : "false");
        break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        dq_buf_printf(out, "%" PRIu64, o->via.u64);
        break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        dq_buf_printf(out, "%" PRId64, o->via.i64);
        break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        name = nonfinite_name(o->via.f64);
        if (name != NULL) {
            dq_buf_puts(out, name);
        } else {
            char tmp[40];
            format_double(tmp, sizeof tmp, o->via.f64);
            dq_buf_puts(out, tmp);
        }
        break;
    case MSGPACK_OBJECT_STR:
        dq_buf_putc(out, '"');
        dq_esc_text(out, body(o->via.str.ptr), o->via.str.size, 0);
        dq_buf_putc(out, '"');
        break;
    case MSGPACK_OBJECT_BIN:
        snprintf(head, sizeof head, "bin (%" PRIu32 " bytes)\n", o->via.bin.size);
        tree_bytes(out, head, body(o->via.bin.ptr), o->via.bin.size, pad);
        return DQ_OK;
    case MSGPACK_OBJECT_EXT:
        snprintf(head, sizeof head, "ext type %d (%" PRIu32 " bytes)\n", o->via.ext.type,
                 o->via.ext.size);
        tree_bytes(out, head, body(o->via.ext.ptr), o->via.ext.size, pad);
        return DQ_OK;
    case MSGPACK_OBJECT_ARRAY:
        dq_buf_puts(out, "[]");
        break;
    case MSGPACK_OBJECT_MAP:
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
    msgpack_zone zone;
    msgpack_object o;

    walk_init(&w, data, len, SIZE_MAX, err);
    dq_buf_append(out, "", 0);
    if (!msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE))
        return dq_err_set(err, DQ_ENOMEM, "msgpack: out of memory decoding");
    int rc = decode(&w, &zone, &o);
    if (rc == DQ_OK)
        rc = tree_value(&w, out, &o, indent > 0 ? indent : 0, true);
    msgpack_zone_destroy(&zone);
    if (rc == DQ_OK && out->failed)
        rc = dq_err_set(err, DQ_ENOMEM, "msgpack: out of memory rendering a tree");
    return rc;
}

/* ---- summary and hex dump ----------------------------------------------------------- */

void
dq_mp_summary(struct dq_buf *out, const void *data, size_t len, size_t max_bytes)
{
    struct dq_buf json = DQ_BUF_INIT, text = DQ_BUF_INIT;
    /* Rendering a little past max_bytes is enough: escaping never shortens text. */
    size_t slack = max_bytes < SIZE_MAX - 16 ? max_bytes + 16 : SIZE_MAX;

    int rc = json_render(&json, data, len, slack, NULL);
    if (rc == DQ_OK || rc == WALK_CUT) {
        /* JSON: its backslashes are its own escapes, doubling them would mislead */
        dq_esc_text(&text, json.data, json.len, DQ_ESC_KEEP_BACKSLASH);
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
