/* SPDX-License-Identifier: MIT */
/*
 * esc.c: terminal-safe text and display width. Pure: no I/O, no locale.
 *
 * The decoder accepts only shortest-form UTF-8 for U+0000..U+10FFFF minus the
 * surrogates (RFC 3629); anything else is escaped one byte at a time, so the output
 * is always valid UTF-8 with no control character a terminal would act on. Safe runs
 * are copied with one append each, so clean text costs little more than a memcpy.
 */
#include "fmt/esc.h"

#include "lib/err.h"

size_t
dq_utf8_decode(const void *s, size_t len, uint32_t *cp)
{
    const unsigned char *p = s;

    if (len == 0)
        return 0;
    unsigned char c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        v = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        v = c & 0x0fu;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        v = c & 0x07u;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0; /* continuation byte, overlong 0xc0/0xc1, or 0xf5..0xff */
    }
    if (len < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0u) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3fu);
    }
    *cp = v;
    return n;
}

bool
dq_utf8_valid(const void *s, size_t len)
{
    const unsigned char *p = s;
    uint32_t cp;

    while (len > 0) {
        if (p[0] < 0x80) {
            p++;
            len--;
            continue;
        }
        size_t n = dq_utf8_decode(p, len, &cp);
        if (n == 0)
            return false;
        p += n;
        len -= n;
    }
    return true;
}

bool
dq_esc_is_unsafe(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

static void
esc_byte(struct dq_buf *b, unsigned char c, unsigned flags)
{
    static const char hex[] = "0123456789abcdef";

    switch (c) {
    case '\n':
        if (flags & DQ_ESC_KEEP_NL)
            dq_buf_putc(b, '\n');
        else
            dq_buf_append(b, "\\n", 2);
        return;
    case '\t':
        if (flags & DQ_ESC_KEEP_TAB)
            dq_buf_putc(b, '\t');
        else
            dq_buf_append(b, "\\t", 2);
        return;
    case '\r':
        dq_buf_append(b, "\\r", 2);
        return;
    case 0x1b:
        dq_buf_append(b, "\\e", 2);
        return;
    case '\\':
        if (flags & DQ_ESC_KEEP_BACKSLASH)
            dq_buf_putc(b, '\\');
        else
            dq_buf_append(b, "\\\\", 2);
        return;
    default: {
        char tmp[4] = {'\\', 'x', hex[c >> 4], hex[c & 0x0f]};
        dq_buf_append(b, tmp, sizeof tmp);
        return;
    }
    }
}

void
dq_esc_text(struct dq_buf *b, const void *s, size_t len, unsigned flags)
{
    const unsigned char *p = s;
    const unsigned char *end = p + len;
    const unsigned char *run = p; /* start of the pending safe run */
    uint32_t cp;

    if (len == 0) {
        dq_buf_append(b, "", 0);
        return;
    }
    while (p < end) {
        unsigned char c = *p;
        if (c >= 0x20 && c < 0x7f && (c != '\\' || (flags & DQ_ESC_KEEP_BACKSLASH))) {
            p++;
            continue;
        }
        size_t n = c < 0x80 ? 1 : dq_utf8_decode(p, (size_t)(end - p), &cp);
        if (n > 1 && !dq_esc_is_unsafe(cp)) {
            p += n;
            continue;
        }
        dq_buf_append(b, run, (size_t)(p - run));
        if (n <= 1) {
            esc_byte(b, c, flags);
            p++;
        } else {
            dq_buf_printf(b, "\\u{%x}", (unsigned)cp);
            p += n;
        }
        run = p;
    }
    dq_buf_append(b, run, (size_t)(p - run));
}

static int
hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
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

int
dq_esc_unescape(struct dq_buf *b, const char *s, size_t len, dq_err *err)
{
    dq_buf_append(b, "", 0);
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\\') {
            dq_buf_putc(b, s[i]);
            continue;
        }
        size_t at = i + 1; /* 1-based position of the backslash, for the message */
        char c = i + 1 < len ? s[++i] : '\0';
        switch (c) {
        case '\\':
            dq_buf_putc(b, '\\');
            break;
        case 'e':
            dq_buf_putc(b, 0x1b);
            break;
        case 'n':
            dq_buf_putc(b, '\n');
            break;
        case 't':
            dq_buf_putc(b, '\t');
            break;
        case 'r':
            dq_buf_putc(b, '\r');
            break;
        case 'x': {
            int hi = i + 1 < len ? hex_digit(s[i + 1]) : -1;
            int lo = i + 2 < len ? hex_digit(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return dq_err_set(err, DQ_EINVAL,
                                  "byte %zu: a backslash and x need two hex digits after them", at);
            dq_buf_putc(b, (char)(hi << 4 | lo));
            i += 2;
            break;
        }
        case 'u': {
            uint32_t cp = 0;
            size_t j = i + 2, digits = 0;
            if (i + 1 >= len || s[i + 1] != '{')
                return dq_err_set(err, DQ_EINVAL,
                                  "byte %zu: a backslash and u need {hex digits} after them", at);
            for (; j < len && hex_digit(s[j]) >= 0 && digits < 6; j++, digits++)
                cp = cp << 4 | (uint32_t)hex_digit(s[j]);
            if (digits == 0 || j >= len || s[j] != '}' || cp > 0x10ffff ||
                (cp >= 0xd800 && cp <= 0xdfff))
                return dq_err_set(
                    err, DQ_EINVAL,
                    "byte %zu: a backslash and u{...} need 1..6 hex digits of a code point", at);
            put_utf8(b, cp);
            i = j;
            break;
        }
        default:
            return dq_err_set(err, DQ_EINVAL,
                              "byte %zu: after a backslash comes another, e, n, t, r, xHH or u{H}, "
                              "as delayq shows bytes",
                              at);
        }
    }
    return b->failed ? dq_err_set(err, DQ_ENOMEM, "out of memory") : DQ_OK;
}

/* ---- width ------------------------------------------------------------------------ */

struct range {
    uint32_t lo, hi;
};

/* Zero-width: combining marks, zero-width spaces and joiners, variation selectors. */
static const struct range zero_width[] = {
    {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd}, {0x0610, 0x061a},   {0x064b, 0x065f},
    {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x200b, 0x200f}, {0x2060, 0x2064},   {0x20d0, 0x20ff},
    {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0xfeff, 0xfeff}, {0xe0100, 0xe01ef},
};

/* Wide: CJK, Hangul, kana, fullwidth forms, emoji. */
static const struct range wide[] = {
    {0x1100, 0x115f},   {0x231a, 0x231b},   {0x2329, 0x232a},   {0x23e9, 0x23ec},
    {0x23f0, 0x23f0},   {0x23f3, 0x23f3},   {0x25fd, 0x25fe},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267f, 0x267f},   {0x2693, 0x2693},   {0x26a1, 0x26a1},
    {0x26aa, 0x26ab},   {0x26bd, 0x26be},   {0x26c4, 0x26c5},   {0x26ce, 0x26ce},
    {0x26d4, 0x26d4},   {0x26ea, 0x26ea},   {0x26f2, 0x26f3},   {0x26f5, 0x26f5},
    {0x26fa, 0x26fa},   {0x26fd, 0x26fd},   {0x2705, 0x2705},   {0x270a, 0x270b},
    {0x2728, 0x2728},   {0x274c, 0x274c},   {0x274e, 0x274e},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27b0, 0x27b0},   {0x27bf, 0x27bf},
    {0x2b1b, 0x2b1c},   {0x2b50, 0x2b50},   {0x2b55, 0x2b55},   {0x2e80, 0x303e},
    {0x3041, 0x33ff},   {0x3400, 0x4dbf},   {0x4e00, 0x9fff},   {0xa000, 0xa4cf},
    {0xa960, 0xa97f},   {0xac00, 0xd7a3},   {0xf900, 0xfaff},   {0xfe10, 0xfe19},
    {0xfe30, 0xfe6f},   {0xff00, 0xff60},   {0xffe0, 0xffe6},   {0x16fe0, 0x16fe4},
    {0x17000, 0x18cff}, {0x1b000, 0x1b2ff}, {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf},
    {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f2ff}, {0x1f300, 0x1f64f},
    {0x1f680, 0x1f6ff}, {0x1f7e0, 0x1f7eb}, {0x1f900, 0x1faff}, {0x20000, 0x2fffd},
    {0x30000, 0x3fffd},
};

static bool
in_table(uint32_t cp, const struct range *t, size_t n)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < t[mid].lo)
            hi = mid;
        else if (cp > t[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

size_t
dq_esc_width(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t cols = 0;
    uint32_t cp;

    while (len > 0) {
        size_t n = dq_utf8_decode(p, len, &cp);
        if (n == 0) {
            cols++;
            n = 1;
        } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
            /* controls take no column of their own */
        } else if (cp < 0x300) {
            cols++;
        } else if (in_table(cp, zero_width, sizeof zero_width / sizeof zero_width[0])) {
            /* combining or zero width */
        } else if (in_table(cp, wide, sizeof wide / sizeof wide[0])) {
            cols += 2;
        } else {
            cols++;
        }
        p += n;
        len -= n;
    }
    return cols;
}
