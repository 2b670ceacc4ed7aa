/* SPDX-License-Identifier: MIT */
/*
 * json.c: JSON to msgpack. Pure: no I/O, independent of the process locale.
 *
 * msgpack writes a container's element count before its elements, and the output must
 * use the smallest header, so the text is parsed twice by the same code. The first
 * pass (out == NULL) checks everything and records, for each container in the order
 * it opens, its element count and whether it is a reserved {"$base64": ...}-style
 * object. The second pass writes, reading those records in the same order. Both passes
 * are O(n) and the records cost 8 bytes per container. Recursion is bounded by
 * DQ_JSON_MAX_DEPTH.
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

#include "fmt/b64.h"
#include "fmt/esc.h"
#include "lib/mp.h"
#include "lib/err.h"

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

struct num {
    enum { NUM_UINT, NUM_INT, NUM_FLOAT } type;
    uint64_t u;
    int64_t i;
    double f;
};

struct parser {
    const unsigned char *text, *p, *end;
    struct dq_buf *out; /* NULL during the first pass */
    dq_err *err;
    struct slot *slots; /* one per container, in opening order */
    size_t nslots, cap;
    size_t next;       /* second pass: the next slot to use */
    struct dq_buf str; /* the last string decoded */
    struct dq_buf bin; /* the last base64 decoded */
    struct dq_buf num; /* a number's text, NUL-terminated for strtod */
    locale_t c_locale; /* created on the first fractional number */
};

static int parse_value(struct parser *ps, int depth);
static int fail_at(struct parser *ps, const unsigned char *at, const char *fmt, ...)
    DQ_PRINTF(3, 4);

/* Fills the error with the line and column (in characters) of @at. */
static int
fail_at(struct parser *ps, const unsigned char *at, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    size_t line = 1, col = 1;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    for (const unsigned char *q = ps->text; q < at; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else if ((*q & 0xc0u) != 0x80) {
            col++;
        }
    }
    return dq_err_set(ps->err, DQ_EINVAL, "json: %s at line %zu column %zu", what, line, col);
}

static int
fail_oom(struct parser *ps)
{
    return dq_err_set(ps->err, DQ_ENOMEM, "json: out of memory");
}

/* Names the byte at @at for an error message. */
static int
fail_unexpected(struct parser *ps, const unsigned char *at)
{
    if (at >= ps->end)
        return fail_at(ps, at, "unexpected end of input");
    if (*at >= 0x21 && *at < 0x7f)
        return fail_at(ps, at, "unexpected character '%c'", *at);
    return fail_at(ps, at, "unexpected byte 0x%02x", *at);
}

static void
skip_ws(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
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

static void
put_utf8(struct dq_buf *b, uint32_t cp)
{
    unsigned char u[4];
    size_t n;

    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xc0 | (cp >> 6));
        u[1] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xe0 | (cp >> 12));
        u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (unsigned char)(0xf0 | (cp >> 18));
        u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (unsigned char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    dq_buf_append(b, u, n);
}

/* One \uXXXX escape (and its low half when it is a high surrogate); @p at the 'u'. */
static int
parse_u_escape(struct parser *ps, const unsigned char *bs)
{
    uint32_t cp, lo;

    if (ps->end - ps->p < 5 || hex4(ps->p + 1, &cp) != 0)
        return fail_at(ps, bs, "bad \\u escape (want 4 hex digits)");
    ps->p += 5;
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return fail_at(ps, bs, "lone surrogate \\u%04" PRIx32, cp);
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
            hex4(ps->p + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
            return fail_at(ps, bs, "lone surrogate \\u%04" PRIx32, cp);
        ps->p += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    put_utf8(&ps->str, cp);
    return DQ_OK;
}

/* Decodes the string at ps->p (on its opening quote) into ps->str. */
static int
parse_string(struct parser *ps)
{
    const unsigned char *open = ps->p;
    uint32_t cp;

    dq_buf_reset(&ps->str);
    dq_buf_append(&ps->str, "", 0);
    ps->p++;
    for (;;) {
        const unsigned char *run = ps->p;
        while (ps->p < ps->end && *ps->p >= 0x20 && *ps->p < 0x80 && *ps->p != '"' &&
               *ps->p != '\\')
            ps->p++;
        dq_buf_append(&ps->str, run, (size_t)(ps->p - run));
        if (ps->p >= ps->end)
            return fail_at(ps, open, "unterminated string");
        unsigned char c = *ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20)
            return fail_at(ps, ps->p, "control character 0x%02x in string (write it as \\u%04x)", c,
                           c);
        if (c >= 0x80) {
            size_t n = dq_utf8_decode(ps->p, (size_t)(ps->end - ps->p), &cp);
            if (n == 0)
                return fail_at(ps, ps->p, "invalid UTF-8 byte 0x%02x in string", c);
            dq_buf_append(&ps->str, ps->p, n);
            ps->p += n;
            continue;
        }
        /* A backslash. */
        const unsigned char *bs = ps->p++;
        if (ps->p >= ps->end)
            return fail_at(ps, open, "unterminated string");
        char e;
        switch (*ps->p) {
        case '"':
        case '\\':
        case '/':
            e = (char)*ps->p;
            break;
        case 'b':
            e = '\b';
            break;
        case 'f':
            e = '\f';
            break;
        case 'n':
            e = '\n';
            break;
        case 'r':
            e = '\r';
            break;
        case 't':
            e = '\t';
            break;
        case 'u': {
            int rc = parse_u_escape(ps, bs);
            if (rc != DQ_OK)
                return rc;
            continue;
        }
        default:
            return fail_at(ps, bs, "bad escape \\%c",
                           *ps->p >= 0x21 && *ps->p < 0x7f ? *ps->p : '?');
        }
        dq_buf_putc(&ps->str, e);
        ps->p++;
    }
    if (ps->str.failed)
        return fail_oom(ps);
    return DQ_OK;
}

/* strtod() in the C locale, whatever setlocale() the host program made. */
static int
to_double(struct parser *ps, const unsigned char *start, double *v)
{
    dq_buf_reset(&ps->num);
    dq_buf_append(&ps->num, start, (size_t)(ps->p - start));
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
    if (isinf(*v))
        return fail_at(ps, start, "number %.*s is too large for a double",
                       (int)(ps->p - start < 40 ? ps->p - start : 40), (const char *)start);
    return DQ_OK;
}

static bool
is_digit(const struct parser *ps)
{
    return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

static int
parse_number(struct parser *ps, struct num *n)
{
    const unsigned char *start = ps->p;
    bool neg = false, integral = true;
    uint64_t mag = 0;
    bool overflow = false;

    if (*ps->p == '-') {
        neg = true;
        ps->p++;
    }
    if (!is_digit(ps))
        return fail_at(ps, start, "bad number (a digit must follow '-')");
    if (*ps->p == '0') {
        ps->p++;
        if (is_digit(ps))
            return fail_at(ps, start, "bad number (leading zero)");
    } else {
        while (is_digit(ps)) {
            unsigned d = (unsigned)(*ps->p - '0');
            if (mag > (UINT64_MAX - d) / 10)
                overflow = true;
            else
                mag = mag * 10 + d;
            ps->p++;
        }
    }
    if (ps->p < ps->end && *ps->p == '.') {
        integral = false;
        ps->p++;
        if (!is_digit(ps))
            return fail_at(ps, start, "bad number (a digit must follow '.')");
        while (is_digit(ps))
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        integral = false;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!is_digit(ps))
            return fail_at(ps, start, "bad number (a digit must follow the exponent)");
        while (is_digit(ps))
            ps->p++;
    }
    if (integral && !overflow) {
        if (!neg) {
            n->type = NUM_UINT;
            n->u = mag;
            return DQ_OK;
        }
        if (mag <= (uint64_t)INT64_MAX) {
            n->type = NUM_INT;
            n->i = -(int64_t)mag;
            return DQ_OK;
        }
        if (mag == (uint64_t)INT64_MAX + 1) {
            n->type = NUM_INT;
            n->i = INT64_MIN;
            return DQ_OK;
        }
    }
    n->type = NUM_FLOAT;
    return to_double(ps, start, &n->f);
}

static void
put_num(struct dq_buf *out, const struct num *n)
{
    if (n->type == NUM_UINT)
        dq_mp_put_uint(out, n->u);
    else if (n->type == NUM_INT)
        dq_mp_put_int(out, n->i);
    else
        dq_mp_put_double(out, n->f);
}

static int
parse_literal(struct parser *ps, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail_unexpected(ps, ps->p);
    ps->p += n;
    return DQ_OK;
}

static unsigned
key_bit(const struct dq_buf *key)
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
        if (key->len == strlen(names[i].name) && memcmp(key->data, names[i].name, key->len) == 0)
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

/* First pass: reserves the next slot. Second pass: takes it. Returns its index. */
static int
open_slot(struct parser *ps, size_t *idx)
{
    if (ps->out != NULL) {
        *idx = ps->next++;
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
    *idx = ps->nslots++;
    ps->slots[*idx] = (struct slot){0, KIND_PLAIN};
    return DQ_OK;
}

static int
close_slot(struct parser *ps, size_t idx, uint64_t count, const unsigned char *open, unsigned keys)
{
    if (ps->out != NULL)
        return DQ_OK;
    if (count > UINT32_MAX)
        return fail_at(ps, open, "container with more than %" PRIu32 " elements", UINT32_MAX);
    ps->slots[idx].count = (uint32_t)count;
    ps->slots[idx].kind = keys != 0 ? kind_of(count, keys) : KIND_PLAIN;
    return DQ_OK;
}

/* Second pass over a reserved object: checks the values and writes one bin/str/ext/float. */
static int
write_reserved(struct parser *ps, enum kind kind)
{
    int64_t ext_type = 0;
    double f = 0;

    ps->p++; /* '{' */
    dq_buf_reset(&ps->bin);
    dq_buf_append(&ps->bin, "", 0);
    for (;;) {
        skip_ws(ps);
        int rc = parse_string(ps);
        if (rc != DQ_OK)
            return rc;
        unsigned key = key_bit(&ps->str);
        skip_ws(ps);
        ps->p++; /* ':' */
        skip_ws(ps);
        const unsigned char *at = ps->p;
        if (key == KEY_EXT) {
            struct num n;
            if (*at != '-' && !(*at >= '0' && *at <= '9'))
                return fail_at(ps, at, "\"$ext\" must be an integer -128..127");
            rc = parse_number(ps, &n);
            if (rc != DQ_OK)
                return rc;
            if (n.type == NUM_FLOAT || (n.type == NUM_UINT && n.u > 127) ||
                (n.type == NUM_INT && n.i < -128))
                return fail_at(ps, at, "\"$ext\" must be an integer -128..127");
            ext_type = n.type == NUM_UINT ? (int64_t)n.u : n.i;
        } else {
            const char *name = key == KEY_FLOAT ? "$float"
                               : key == KEY_B64 ? "$base64"
                                                : "$str_base64";
            if (*at != '"')
                return fail_at(ps, at, "\"%s\" must be a string", name);
            rc = parse_string(ps);
            if (rc != DQ_OK)
                return rc;
            if (key == KEY_FLOAT) {
                if (ps->str.len == 3 && memcmp(ps->str.data, "nan", 3) == 0)
                    f = NAN;
                else if (ps->str.len == 3 && memcmp(ps->str.data, "inf", 3) == 0)
                    f = INFINITY;
                else if (ps->str.len == 4 && memcmp(ps->str.data, "-inf", 4) == 0)
                    f = -INFINITY;
                else
                    return fail_at(ps, at, "\"$float\" must be \"nan\", \"inf\" or \"-inf\"");
            } else if (dq_b64_decode(&ps->bin, ps->str.data, ps->str.len) != 0) {
                return fail_at(ps, at, "\"%s\" is not valid base64", name);
            }
        }
        skip_ws(ps);
        if (*ps->p++ == '}')
            break;
    }
    if (ps->bin.failed)
        return fail_oom(ps);
    switch (kind) {
    case KIND_BIN:
        dq_mp_put_bin(ps->out, ps->bin.data, ps->bin.len);
        break;
    case KIND_STR:
        dq_mp_put_str(ps->out, ps->bin.data, ps->bin.len);
        break;
    case KIND_EXT:
        dq_mp_put_ext(ps->out, (int8_t)ext_type, ps->bin.data, ps->bin.len);
        break;
    case KIND_FLOAT:
        dq_mp_put_double(ps->out, f);
        break;
    case KIND_PLAIN:
        break;
    }
    return DQ_OK;
}

static int
parse_array(struct parser *ps, int depth)
{
    const unsigned char *open = ps->p;
    uint64_t count = 0;
    size_t idx = 0;
    int rc;

    if (depth >= DQ_JSON_MAX_DEPTH)
        return fail_at(ps, open, "nesting deeper than %d", DQ_JSON_MAX_DEPTH);
    rc = open_slot(ps, &idx);
    if (rc != DQ_OK)
        return rc;
    if (ps->out != NULL)
        dq_mp_put_array(ps->out, ps->slots[idx].count);
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        return close_slot(ps, idx, 0, open, 0);
    }
    for (;;) {
        rc = parse_value(ps, depth + 1);
        if (rc != DQ_OK)
            return rc;
        count++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            break;
        }
        if (ps->p >= ps->end)
            return fail_at(ps, open, "unterminated array");
        return fail_at(ps, ps->p, "expected ',' or ']' after an array element");
    }
    return close_slot(ps, idx, count, open, 0);
}

static int
parse_object(struct parser *ps, int depth)
{
    const unsigned char *open = ps->p;
    uint64_t count = 0;
    unsigned keys = 0;
    size_t idx = 0;
    int rc;

    if (depth >= DQ_JSON_MAX_DEPTH)
        return fail_at(ps, open, "nesting deeper than %d", DQ_JSON_MAX_DEPTH);
    rc = open_slot(ps, &idx);
    if (rc != DQ_OK)
        return rc;
    if (ps->out != NULL) {
        if (ps->slots[idx].kind != KIND_PLAIN)
            return write_reserved(ps, ps->slots[idx].kind);
        dq_mp_put_map(ps->out, ps->slots[idx].count);
    }
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        return close_slot(ps, idx, 0, open, 0);
    }
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end)
            return fail_at(ps, open, "unterminated object");
        if (*ps->p != '"')
            return fail_at(ps, ps->p, "expected a string key");
        rc = parse_string(ps);
        if (rc != DQ_OK)
            return rc;
        if (ps->out != NULL)
            dq_mp_put_str(ps->out, ps->str.data, ps->str.len);
        else
            keys |= key_bit(&ps->str);
        skip_ws(ps);
        if (ps->p >= ps->end)
            return fail_at(ps, open, "unterminated object");
        if (*ps->p != ':')
            return fail_at(ps, ps->p, "expected ':' after an object key");
        ps->p++;
        rc = parse_value(ps, depth + 1);
        if (rc != DQ_OK)
            return rc;
        count++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            break;
        }
        if (ps->p >= ps->end)
            return fail_at(ps, open, "unterminated object");
        return fail_at(ps, ps->p, "expected ',' or '}' after an object member");
    }
    return close_slot(ps, idx, count, open, keys);
}

static int
parse_value(struct parser *ps, int depth)
{
    struct num n;
    int rc;

    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail_unexpected(ps, ps->p);
    switch (*ps->p) {
    case '{':
        return parse_object(ps, depth);
    case '[':
        return parse_array(ps, depth);
    case '"':
        rc = parse_string(ps);
        if (rc == DQ_OK && ps->out != NULL)
            dq_mp_put_str(ps->out, ps->str.data, ps->str.len);
        return rc;
    case 't':
        rc = parse_literal(ps, "true");
        if (rc == DQ_OK && ps->out != NULL)
            dq_mp_put_bool(ps->out, true);
        return rc;
    case 'f':
        rc = parse_literal(ps, "false");
        if (rc == DQ_OK && ps->out != NULL)
            dq_mp_put_bool(ps->out, false);
        return rc;
    case 'n':
        rc = parse_literal(ps, "null");
        if (rc == DQ_OK && ps->out != NULL)
            dq_mp_put_nil(ps->out);
        return rc;
    default:
        if (*ps->p != '-' && !(*ps->p >= '0' && *ps->p <= '9'))
            return fail_unexpected(ps, ps->p);
        rc = parse_number(ps, &n);
        if (rc == DQ_OK && ps->out != NULL)
            put_num(ps->out, &n);
        return rc;
    }
}

static int
parse_document(struct parser *ps)
{
    ps->p = ps->text;
    ps->next = 0;
    int rc = parse_value(ps, 0);
    if (rc != DQ_OK)
        return rc;
    skip_ws(ps);
    if (ps->p < ps->end)
        return fail_at(ps, ps->p, "trailing characters after the value");
    return DQ_OK;
}

int
dq_json_to_mp(struct dq_buf *out, const char *text, size_t len, dq_err *err)
{
    struct parser ps = {
        .text = (const unsigned char *)text,
        .end = (const unsigned char *)text + (text != NULL ? len : 0),
        .err = err,
        .str = DQ_BUF_INIT,
        .bin = DQ_BUF_INIT,
        .num = DQ_BUF_INIT,
        .c_locale = (locale_t)0,
    };
    size_t base = out->len;
    bool was_failed = out->failed;

    int rc = parse_document(&ps);
    if (rc == DQ_OK) {
        ps.out = out;
        rc = parse_document(&ps);
    }
    if (rc == DQ_OK && out->failed)
        rc = fail_oom(&ps);
    if (rc != DQ_OK && out->data != NULL) {
        out->len = base;
        out->data[base] = '\0';
        out->failed = was_failed;
    }
    free(ps.slots);
    dq_buf_free(&ps.str);
    dq_buf_free(&ps.bin);
    dq_buf_free(&ps.num);
    if (ps.c_locale != (locale_t)0)
        freelocale(ps.c_locale);
    return rc;
}
