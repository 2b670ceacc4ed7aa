/* SPDX-License-Identifier: MIT */
/*
 * b64.c: standard base64 with padding. Pure: no I/O. The decoder is strict so that
 * every accepted text has exactly one meaning: decode(encode(x)) == x and
 * encode(decode(t)) == t for padded t.
 */
#include "fmt/b64.h"

#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
dq_b64_encode(struct dq_buf *b, const void *data, size_t len)
{
    const unsigned char *p = data;
    char out[4];

    dq_buf_append(b, "", 0);
    for (; len >= 3; p += 3, len -= 3) {
        uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        out[0] = alphabet[v >> 18];
        out[1] = alphabet[(v >> 12) & 63];
        out[2] = alphabet[(v >> 6) & 63];
        out[3] = alphabet[v & 63];
        dq_buf_append(b, out, 4);
    }
    if (len > 0) {
        uint32_t v = (uint32_t)p[0] << 16 | (len > 1 ? (uint32_t)p[1] << 8 : 0);
        out[0] = alphabet[v >> 18];
        out[1] = alphabet[(v >> 12) & 63];
        out[2] = len > 1 ? alphabet[(v >> 6) & 63] : '=';
        out[3] = '=';
        dq_buf_append(b, out, 4);
    }
}

static int
b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int
dq_b64_decode(struct dq_buf *b, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;

    dq_buf_append(b, "", 0);
    /* Strip the padding: at most two '=', and only if they make a full quantum. */
    if (len % 4 == 0 && len > 0 && p[len - 1] == '=') {
        len -= p[len - 2] == '=' ? 2 : 1;
    }
    if (len % 4 == 1)
        return -1;
    uint32_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value(p[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            dq_buf_putc(b, (char)(acc >> bits));
            acc &= (UINT32_C(1) << bits) - 1;
        }
    }
    return acc == 0 ? 0 : -1; /* leftover bits must be zero */
}
