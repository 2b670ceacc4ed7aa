/* SPDX-License-Identifier: MIT */
/*
 * json.c: JSON to msgpack, on yajl (the lexer and grammar) and msgpack-c (the writer).
 * Pure: no I/O, independent of the process locale.
 *
 * yajl's SAX callbacks keep key order and duplicate keys and hand numbers over as text,
 * so exact 64-bit integers are decided here. msgpack writes a container's count before
 * its elements and the output must use the smallest header, so yajl reads the text
 * twice with the same callbacks: the first pass checks everything and records, for each
 * container in the order it opens, its element count and whether it is a reserved
 * {"$base64": ...}-style object; the second pass writes, reading those records in the
 * same order (8 bytes per container).
 *
 * Checked here because yajl 2.1 does not: a lone surrogate escape (yajl writes '?' for
 * a lone high half and the invalid bytes ED B0 80.. for a lone low half) and UTF-8 that
 * is not shortest-form or encodes a surrogate (yajl checks only the byte pattern), so
 * each string token is scanned in the text once (check_string).
 */
#include "fmt/json.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>
#include <yajl/yajl_parse.h>

#include "fmt/b64.h"
#include "fmt/esc.h"
#include "lib/err.h"
#include "lib/mp.h"

/* What a container turns into. */
enum kind {
    KIND_PLAIN,
    KIND_BIN,   /* {"$base64":S} */
    KIND_STR,   /* {"$str_base64":S} */
    KIND_FLOAT, /* {"$float":S} */
    KIND_EXT,   /* {"$ext":T,"$base64":S} */
};

/* Reserved key names, as bits. */
enum {
    KEY_OTHER = 1,
    KEY_B64 = 2,
    KEY_STR_B64 = 4,
    KEY_FLOAT = 8,
    KEY_EXT = 16,
};

struct slot {
    uint32_t count; /* elements, or pairs for an object */
    uint32_t kind;  /* enum kind */
};

struct frame {
    size_t slot;    /* index into slots */
    uint64_t count; /* first pass: elements (pairs) so far */
    unsigned keys;  /* first pass: KEY_* bits of the keys so far */
    bool map;
    size_t open; /* offset of the brace: one past the depth limit must be reserved */
    /* first pass, for the path in a number's error: the last key's token in the text */
    size_t key_at, key_len;
};

struct num {
    enum { NUM_UINT, NUM_INT, NUM_FLOAT } type;
    uint64_t u;
    int64_t i;
    double f;
};

struct parser {
    const unsigned char *text;
    size_t len;
    yajl_handle h;
    size_t base;     /* offset of the chunk yajl reads: 0, or len in yajl_complete_parse */
    size_t prev_end; /* where the token before the current one ended */
    dq_err *err;
    int rc;             /* our own error, set before a callback cancels the parse */
    struct dq_buf *out; /* NULL during the first pass */
    msgpack_packer pk;  /* second pass: writes to out */
    struct slot *slots; /* one per container, in opening order */
    size_t nslots, cap;
    size_t next; /* second pass: the next slot to use */
    struct frame stack[DQ_JSON_MAX_DEPTH + 1];
    int depth;
    /* second pass, inside a reserved object */
    enum kind reserved; /* KIND_PLAIN when not inside one */
    unsigned key;       /* the reserved key whose value comes next */
    int64_t ext_type;
    double f;
    struct dq_buf bin; /* the decoded base64 */
    struct dq_buf num; /* a number's text, NUL-terminated for strtod */
    locale_t c_locale; /* created on the first fractional number */
};

static int fail_at(struct parser *ps, size_t at, const char *fmt, ...) DQ_PRINTF(3, 4);

/* Fills the error with the line and column (in characters) of offset @at. */
static int
fail_at(struct parser *ps, size_t at, const char *fmt, ...)
{
    char what[224];
    va_list ap;
    size_t line = 1, col = 1;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < at && i < ps->len; i++) {
        if (ps->text[i] == '\n') {
            line++;
            col = 1;
        } else if ((ps->text[i] & 0xc0u) != 0x80) {
            col++;
        }
    }
    ps->rc = dq_err_set(ps->err, DQ_EINVAL, "json: %s at line %zu column %zu", what, line, col);
    return ps->rc;
}

static int
fail_oom(struct parser *ps)
{
    ps->rc = dq_err_set(ps->err, DQ_ENOMEM, "json: out of memory");
    return ps->rc;
}

/* The longest path a number's error shows, in bytes; a deeper one keeps its tail. */
#define JSON_PATH_MAX 64

/*
 * The path of the value being read, JSONPath style: "$", then ".key" for a key of
 * letters, digits, '_', '$' and '-', ["key"] (the key's JSON token as written) for any
 * other key, and [N] for an array element. Only the first pass keeps what this needs
 * (a number's range is checked there). A path over JSON_PATH_MAX bytes becomes "$(...)"
 * and its last whole steps; a key over 24 bytes is cut (at a character): ["key..."].
 * The text was checked as UTF-8 before it got here, so the result is UTF-8.
 */
static void
path_of(const struct parser *ps, char *dst, size_t cap)
{
    char full[(DQ_JSON_MAX_DEPTH + 1) * 40];
    size_t step[DQ_JSON_MAX_DEPTH + 1], n = 0;

    for (int d = 0; d < ps->depth && n + 40 < sizeof full; d++) {
        const struct frame *f = &ps->stack[d];
        step[d] = n;
        if (!f->map) {
            n += (size_t)snprintf(full + n, sizeof full - n, "[%" PRIu64 "]",
                                  f->count > 0 ? f->count - 1 : 0);
            continue;
        }
        if (f->key_len < 2 || ps->text[f->key_at] != '"') { /* not found: say so */
            n += (size_t)snprintf(full + n, sizeof full - n, "[?]");
            continue;
        }
        const unsigned char *k = ps->text + f->key_at + 1; /* inside the quotes */
        size_t klen = f->key_len - 2;
        bool plain = klen > 0;
        for (size_t j = 0; j < klen; j++)
            plain = plain &&
                    ((k[j] >= 'a' && k[j] <= 'z') || (k[j] >= 'A' && k[j] <= 'Z') ||
                     (k[j] >= '0' && k[j] <= '9') || k[j] == '_' || k[j] == '$' || k[j] == '-');
        /* at most 24 bytes of the key, whole characters only; the message reaches
         * terminals, so DEL, C1 controls and bidi overrides are written as \uXXXX (raw
         * control characters cannot be in a JSON string) */
        char shown[40];
        size_t slen = 0, i = 0;
        while (i < klen) {
            uint32_t cp = k[i];
            size_t len = k[i] < 0x80 ? 1 : dq_utf8_decode(k + i, klen - i, &cp);
            char one[12];
            size_t olen;
            if (len == 0)
                len = 1; /* not reached: check_string() let only UTF-8 through */
            if (cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
                (cp >= 0x2066 && cp <= 0x2069))
                olen = (size_t)snprintf(one, sizeof one, "\\u%04" PRIx32, cp);
            else
                memcpy(one, k + i, olen = len);
            if (slen + olen > 24)
                break;
            memcpy(shown + slen, one, olen);
            slen += olen;
            i += len;
        }
        if (i < klen)
            plain = false;
        full[n++] = plain ? '.' : '[';
        if (!plain)
            full[n++] = '"';
        memcpy(full + n, shown, slen);
        n += slen;
        if (i < klen) {
            memcpy(full + n, "...", 3);
            n += 3;
        }
        if (!plain) {
            full[n++] = '"';
            full[n++] = ']';
        }
    }
    full[n] = '\0';
    size_t from = 0;
    for (int d = 0; d < ps->depth && n - from > JSON_PATH_MAX - 6; d++)
        from = d + 1 < ps->depth ? step[d + 1] : n;
    snprintf(dst, cap, "$%s%s", from > 0 ? "(...)" : "", full + from);
}

/* Where yajl stands in the text: just past the token it reported. */
static size_t
here(const struct parser *ps)
{
    size_t at = ps->base + yajl_get_bytes_consumed(ps->h);

    return at < ps->len ? at : ps->len;
}

/* Where the current token starts: only whitespace, ',' and ':' (which have no
 * callbacks) lie between the previous token and this one. */
static size_t
token_start(const struct parser *ps)
{
    size_t i = ps->prev_end;

    /* yajl 2.1 also takes \v and \f for whitespace: skipped too, or a string token
     * after one would not be found (and not checked) */
    while (i < ps->len && strchr(" \t\r\n\v\f,:", ps->text[i]) != NULL && ps->text[i] != '\0')
        i++;
    return i;
}

/* Every callback ends through here: 1 goes on, 0 cancels the parse (ps->rc says why). */
static int
done(struct parser *ps, int rc)
{
    ps->prev_end = here(ps);
    return rc == DQ_OK ? 1 : 0;
}

static int
hex4(const unsigned char *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10u;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10u;
        else
            return -1;
        *v = (*v << 4) | d;
    }
    return 0;
}

/*
 * The string token yajl just accepted, read in the text: every \u escape of a
 * surrogate must be a high half followed by a low half, and every non-ASCII byte must
 * start a shortest-form UTF-8 encoding of a scalar value. yajl has checked the rest
 * (escape letters, hex digits, control characters, the closing quote).
 */
static int
check_string(struct parser *ps, const unsigned char *s, size_t len)
{
    const unsigned char *t = ps->text;
    uint32_t cp, lo;

    /* The second pass reads the text the first one checked. And yajl copies non-ASCII
     * bytes through and writes '?' or a non-ASCII byte for a lone surrogate, so a
     * decoded string of ASCII without '?' came from a clean token. */
    if (ps->out != NULL)
        return DQ_OK;
    size_t k = 0;
    while (k < len && s[k] < 0x80 && s[k] != '?')
        k++;
    if (k == len)
        return DQ_OK;
    size_t i = token_start(ps), end = here(ps);
    if (i >= end || t[i] != '"')
        return DQ_OK; /* not found where expected: yajl decoded it, trust that */
    for (i++; i < end && t[i] != '"';) {
        if (t[i] == '\\') {
            if (i + 1 < end && t[i + 1] == 'u' && end - i >= 6 && hex4(t + i + 2, &cp) == 0) {
                if (cp >= 0xdc00 && cp <= 0xdfff)
                    return fail_at(ps, i, "lone surrogate \\u%04" PRIx32, cp);
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    if (end - i < 12 || t[i + 6] != '\\' || t[i + 7] != 'u' ||
                        hex4(t + i + 8, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
                        return fail_at(ps, i, "lone surrogate \\u%04" PRIx32, cp);
                    i += 6;
                }
                i += 6;
            } else {
                i += 2;
            }
        } else if (t[i] >= 0x80) {
            size_t n = dq_utf8_decode(t + i, end - i, &cp);
            if (n == 0)
                return fail_at(ps, i, "invalid UTF-8 byte 0x%02x in string", t[i]);
            i += n;
        } else {
            i++;
        }
    }
    return DQ_OK;
}

/* A number's text for a message: at most 24 bytes, then "...". */
static int
shown_len(size_t len)
{
    return (int)(len <= 24 ? len : 21);
}

static const char *
shown_more(size_t len)
{
    return len <= 24 ? "" : "...";
}

/*
 * strtod() in the C locale, whatever setlocale() the host program made. A double is
 * what the text says rounded to 53 bits, but never something else entirely: beyond
 * DBL_MAX (it would be inf) or so small that it reads as 0 while a digit is not 0 (an
 * underflow) is refused, with the value's path.
 */
static int
to_double(struct parser *ps, const char *s, size_t len, double *v)
{
    char path[JSON_PATH_MAX + 8];

    dq_buf_reset(&ps->num);
    dq_buf_append(&ps->num, s, len);
    if (ps->num.failed)
        return fail_oom(ps);
    if (ps->c_locale == (locale_t)0) {
        ps->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        if (ps->c_locale == (locale_t)0)
            return fail_oom(ps);
    }
    locale_t old = uselocale(ps->c_locale);
    *v = strtod(ps->num.data, NULL);
    uselocale(old);
    bool nonzero = false;
    for (size_t i = 0; i < len && s[i] != 'e' && s[i] != 'E'; i++)
        nonzero = nonzero || (s[i] >= '1' && s[i] <= '9');
    if (isinf(*v) || (*v == 0 && nonzero)) {
        path_of(ps, path, sizeof path);
        return fail_at(ps, token_start(ps),
                       isinf(*v) ? "%s: number %.*s%s is too large for a double (limit %s)"
                                 : "%s: number %.*s%s is too small for a double (it would be 0; "
                                   "limit %s)",
                       path, shown_len(len), s, shown_more(len),
                       isinf(*v) ? "1.7976931348623157e308" : "4.9406564584124654e-324");
    }
    return DQ_OK;
}

/*
 * A number as yajl lexed it (valid JSON number syntax): an integer (no fraction, no
 * exponent) is exact or refused, so it must fit int64 or uint64; anything else is a
 * double. Refusing keeps a 20-digit id from turning silently into a nearby double;
 * the message says to quote it.
 */
static int
to_num(struct parser *ps, const char *s, size_t len, struct num *n)
{
    size_t i = 0;
    bool neg = false, overflow = false;
    uint64_t mag = 0;
    char path[JSON_PATH_MAX + 8];

    if (i < len && s[i] == '-') {
        neg = true;
        i++;
    }
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (mag > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            mag = mag * 10 + d;
    }
    if (i == len) {
        if (!overflow && !neg) {
            n->type = NUM_UINT;
            n->u = mag;
            return DQ_OK;
        }
        if (!overflow && mag <= (uint64_t)INT64_MAX + 1) {
            n->type = NUM_INT;
            n->i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
            return DQ_OK;
        }
        path_of(ps, path, sizeof path);
        return fail_at(ps, token_start(ps),
                       "%s: integer %.*s%s is outside %" PRId64 "..%" PRIu64
                       " (quote it to keep it exact)",
                       path, shown_len(len), s, shown_more(len), INT64_MIN, UINT64_MAX);
    }
    n->type = NUM_FLOAT;
    return to_double(ps, s, len, &n->f);
}

static unsigned
key_bit(const unsigned char *s, size_t len)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        {"$base64", KEY_B64},
        {"$str_base64", KEY_STR_B64},
        {"$float", KEY_FLOAT},
        {"$ext", KEY_EXT},
    };

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (len == strlen(names[i].name) && memcmp(s, names[i].name, len) == 0)
            return names[i].bit;
    }
    return KEY_OTHER;
}

static enum kind
kind_of(uint64_t count, unsigned keys)
{
    if (count == 1 && keys == KEY_B64)
        return KIND_BIN;
    if (count == 1 && keys == KEY_STR_B64)
        return KIND_STR;
    if (count == 1 && keys == KEY_FLOAT)
        return KIND_FLOAT;
    if (count == 2 && keys == (KEY_EXT | KEY_B64))
        return KIND_EXT;
    return KIND_PLAIN;
}

/* First pass: one more element in the innermost array (a map counts its keys). */
static void
count_value(struct parser *ps)
{
    if (ps->out == NULL && ps->depth > 0 && !ps->stack[ps->depth - 1].map)
        ps->stack[ps->depth - 1].count++;
}

/* The object past the depth limit turned out not to be reserved: refused at its brace. */
static int
too_deep(struct parser *ps)
{
    return fail_at(ps, ps->stack[DQ_JSON_MAX_DEPTH].open, "nesting deeper than %d",
                   DQ_JSON_MAX_DEPTH);
}

/* ---- reserved objects (second pass) ------------------------------------------------ */

static const char *
reserved_name(unsigned key)
{
    return key == KEY_EXT     ? "$ext"
           : key == KEY_FLOAT ? "$float"
           : key == KEY_B64   ? "$base64"
                              : "$str_base64";
}

/* A value inside a reserved object that is not what its key needs. */
static int
reserved_wrong(struct parser *ps, size_t at)
{
    if (ps->key == KEY_EXT)
        return fail_at(ps, at, "\"$ext\" must be an integer -128..127");
    return fail_at(ps, at, "\"%s\" must be a string", reserved_name(ps->key));
}

static int
reserved_number(struct parser *ps, const char *s, size_t len)
{
    size_t at = token_start(ps);
    struct num n;

    if (ps->key != KEY_EXT)
        return reserved_wrong(ps, at);
    int rc = to_num(ps, s, len, &n);
    if (rc != DQ_OK)
        return rc;
    if (n.type == NUM_FLOAT || (n.type == NUM_UINT && n.u > 127) ||
        (n.type == NUM_INT && n.i < -128))
        return reserved_wrong(ps, at);
    ps->ext_type = n.type == NUM_UINT ? (int64_t)n.u : n.i;
    return DQ_OK;
}

static int
reserved_string(struct parser *ps, const unsigned char *s, size_t len)
{
    size_t at = token_start(ps);

    if (ps->key == KEY_EXT)
        return reserved_wrong(ps, at);
    if (ps->key == KEY_FLOAT) {
        if (len == 3 && memcmp(s, "nan", 3) == 0)
            ps->f = NAN;
        else if (len == 3 && memcmp(s, "inf", 3) == 0)
            ps->f = INFINITY;
        else if (len == 4 && memcmp(s, "-inf", 4) == 0)
            ps->f = -INFINITY;
        else
            return fail_at(ps, at, "\"$float\" must be \"nan\", \"inf\" or \"-inf\"");
        return DQ_OK;
    }
    dq_buf_reset(&ps->bin);
    dq_buf_append(&ps->bin, "", 0);
    if (dq_b64_decode(&ps->bin, (const char *)s, len) != 0)
        return fail_at(ps, at, "\"%s\" is not valid base64", reserved_name(ps->key));
    if (ps->bin.failed)
        return fail_oom(ps);
    return DQ_OK;
}

/* The closing brace of a reserved object: writes its one bin/str/ext/float. */
static void
reserved_write(struct parser *ps)
{
    switch (ps->reserved) {
    case KIND_BIN:
        msgpack_pack_bin_with_body(&ps->pk, ps->bin.data, ps->bin.len);
        break;
    case KIND_STR:
        msgpack_pack_str_with_body(&ps->pk, ps->bin.data, ps->bin.len);
        break;
    case KIND_EXT:
        msgpack_pack_ext_with_body(&ps->pk, ps->bin.data, ps->bin.len, (int8_t)ps->ext_type);
        break;
    case KIND_FLOAT:
        msgpack_pack_double(&ps->pk, ps->f);
        break;
    case KIND_PLAIN:
        break;
    }
    ps->reserved = KIND_PLAIN;
}

/* ---- yajl callbacks --------------------------------------------------------------- */

static int
on_null(void *ctx)
{
    struct parser *ps = ctx;

    if (ps->reserved != KIND_PLAIN)
        return done(ps, reserved_wrong(ps, token_start(ps)));
    count_value(ps);
    if (ps->out != NULL)
        msgpack_pack_nil(&ps->pk);
    return done(ps, DQ_OK);
}

static int
on_bool(void *ctx, int v)
{
    struct parser *ps = ctx;

    if (ps->reserved != KIND_PLAIN)
        return done(ps, reserved_wrong(ps, token_start(ps)));
    count_value(ps);
    if (ps->out != NULL) {
        if (v)
            msgpack_pack_true(&ps->pk);
        else
            msgpack_pack_false(&ps->pk);
    }
    return done(ps, DQ_OK);
}

static int
on_number(void *ctx, const char *s, size_t len)
{
    struct parser *ps = ctx;
    struct num n;

    if (ps->reserved != KIND_PLAIN)
        return done(ps, reserved_number(ps, s, len));
    count_value(ps);
    int rc = to_num(ps, s, len, &n);
    if (rc == DQ_OK && ps->out != NULL) {
        if (n.type == NUM_UINT)
            msgpack_pack_uint64(&ps->pk, n.u);
        else if (n.type == NUM_INT)
            msgpack_pack_int64(&ps->pk, n.i);
        else
            msgpack_pack_double(&ps->pk, n.f);
    }
    return done(ps, rc);
}

static int
on_string(void *ctx, const unsigned char *s, size_t len)
{
    struct parser *ps = ctx;

    int rc = check_string(ps, s, len);
    if (rc != DQ_OK)
        return done(ps, rc);
    if (ps->reserved != KIND_PLAIN)
        return done(ps, reserved_string(ps, s, len));
    count_value(ps);
    if (ps->out != NULL)
        msgpack_pack_str_with_body(&ps->pk, s, len);
    return done(ps, DQ_OK);
}

static int
on_key(void *ctx, const unsigned char *s, size_t len)
{
    struct parser *ps = ctx;
    struct frame *f = &ps->stack[ps->depth - 1];

    int rc = check_string(ps, s, len);
    if (rc != DQ_OK)
        return done(ps, rc);
    if (ps->reserved != KIND_PLAIN) {
        ps->key = key_bit(s, len);
    } else if (ps->out != NULL) {
        msgpack_pack_str_with_body(&ps->pk, s, len);
    } else {
        f->count++;
        f->keys |= key_bit(s, len);
        f->key_at = token_start(ps);
        f->key_len = here(ps) - f->key_at;
        if (ps->depth > DQ_JSON_MAX_DEPTH && (f->keys & KEY_OTHER) != 0)
            return done(ps, too_deep(ps));
    }
    return done(ps, DQ_OK);
}

/* '{' or '[': the depth limit, then the container's slot. */
static int
open_container(struct parser *ps, bool map)
{
    size_t at = here(ps) - 1; /* yajl has consumed the bracket */

    if (ps->reserved != KIND_PLAIN)
        return reserved_wrong(ps, at);
    /* A reserved object stands for a scalar, so one may open at the depth limit:
     * dq_mp_to_json() writes a bin inside 64 arrays as 64 arrays around a {"$base64"}. */
    if (ps->depth > DQ_JSON_MAX_DEPTH)
        return too_deep(ps);
    if (ps->depth == DQ_JSON_MAX_DEPTH && !map)
        return fail_at(ps, at, "nesting deeper than %d", DQ_JSON_MAX_DEPTH);
    count_value(ps);
    struct frame *f = &ps->stack[ps->depth++];
    *f = (struct frame){0, 0, 0, map, at, 0, 0};
    if (ps->out != NULL) {
        f->slot = ps->next++;
        const struct slot *s = &ps->slots[f->slot];
        if (map && s->kind != KIND_PLAIN) {
            ps->reserved = s->kind;
            ps->key = 0;
        } else if (map) {
            msgpack_pack_map(&ps->pk, s->count);
        } else {
            msgpack_pack_array(&ps->pk, s->count);
        }
        return DQ_OK;
    }
    if (ps->nslots == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 16;
        struct slot *s = realloc(ps->slots, cap * sizeof *s);
        if (s == NULL)
            return fail_oom(ps);
        ps->slots = s;
        ps->cap = cap;
    }
    f->slot = ps->nslots++;
    ps->slots[f->slot] = (struct slot){0, KIND_PLAIN};
    return DQ_OK;
}

static int
close_container(struct parser *ps)
{
    struct frame *f = &ps->stack[--ps->depth];

    if (ps->out != NULL) {
        if (ps->reserved != KIND_PLAIN)
            reserved_write(ps);
        return DQ_OK;
    }
    if (f->count > UINT32_MAX)
        return fail_at(ps, here(ps) - 1, "container with more than %" PRIu32 " elements",
                       UINT32_MAX);
    ps->slots[f->slot].count = (uint32_t)f->count;
    ps->slots[f->slot].kind = f->map ? kind_of(f->count, f->keys) : KIND_PLAIN;
    if (ps->depth == DQ_JSON_MAX_DEPTH && ps->slots[f->slot].kind == KIND_PLAIN)
        return too_deep(ps);
    return DQ_OK;
}

static int
on_start_map(void *ctx)
{
    return done(ctx, open_container(ctx, true));
}

static int
on_start_array(void *ctx)
{
    return done(ctx, open_container(ctx, false));
}

static int
on_end(void *ctx)
{
    return done(ctx, close_container(ctx));
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_bool,
    .yajl_number = on_number, /* raw text: yajl_integer and yajl_double are never called */
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* yajl's own error, as "json: <what> at line L column C" at the place it stopped. */
static int
fail_yajl(struct parser *ps)
{
    unsigned char *msg = yajl_get_error(ps->h, 0, NULL, 0);
    const char *what = msg != NULL ? (const char *)msg : "syntax error";
    const char *colon = strstr(what, ": ");
    bool lexical = strncmp(what, "lexical", 7) == 0;
    char text[160];

    if (colon != NULL)
        what = colon + 2;
    snprintf(text, sizeof text, "%s", what);
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' ' || text[n - 1] == '.'))
        text[--n] = '\0';
    if (msg != NULL)
        yajl_free_error(ps->h, msg);
    /* yajl stops just past the token it refuses, but on the byte it refuses inside a
     * string; an early end is at the end. */
    size_t at = here(ps);
    if (strcmp(text, "premature EOF") == 0)
        at = ps->len;
    else if (!(lexical && strstr(text, " string") != NULL && strstr(text, "json text") == NULL) &&
             at > 0)
        at--;
    return fail_at(ps, at, "%s", text);
}

/* One yajl pass over the whole text. */
static int
run_pass(struct parser *ps)
{
    ps->h = yajl_alloc(&callbacks, NULL, ps);
    if (ps->h == NULL)
        return fail_oom(ps);
    /* check_string() holds strings to the stricter UTF-8 rule itself */
    yajl_config(ps->h, yajl_dont_validate_strings, 1);
    ps->base = 0;
    ps->prev_end = 0;
    ps->depth = 0;
    ps->next = 0;
    ps->reserved = KIND_PLAIN;
    yajl_status st = yajl_parse(ps->h, ps->len > 0 ? ps->text : (const unsigned char *)"", ps->len);
    if (st == yajl_status_ok) {
        ps->base = ps->len; /* yajl_complete_parse reads a chunk of its own */
        st = yajl_complete_parse(ps->h);
    }
    int rc = DQ_OK;
    if (st == yajl_status_client_canceled)
        rc = ps->rc;
    else if (st != yajl_status_ok)
        rc = fail_yajl(ps);
    yajl_free(ps->h);
    ps->h = NULL;
    return rc;
}

int
dq_json_to_mp(struct dq_buf *out, const char *text, size_t len, dq_err *err)
{
    struct parser ps = {
        .text = (const unsigned char *)text,
        .len = text != NULL ? len : 0,
        .err = err,
        .bin = DQ_BUF_INIT,
        .num = DQ_BUF_INIT,
        .c_locale = (locale_t)0,
    };
    size_t base = out->len;
    bool was_failed = out->failed;

    int rc = run_pass(&ps);
    if (rc == DQ_OK) {
        ps.out = out;
        dq_mp_packer_init(&ps.pk, out);
        rc = run_pass(&ps);
    }
    if (rc == DQ_OK && out->failed)
        rc = fail_oom(&ps);
    if (rc != DQ_OK && out->data != NULL) {
        out->len = base;
        out->data[base] = '\0';
        out->failed = was_failed;
    }
    free(ps.slots);
    dq_buf_free(&ps.bin);
    dq_buf_free(&ps.num);
    if (ps.c_locale != (locale_t)0)
        freelocale(ps.c_locale);
    return rc;
}
