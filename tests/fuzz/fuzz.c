/* SPDX-License-Identifier: MIT */
/* fuzz.c: helpers shared by the fuzz targets (see fuzz.h). */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
    abort();
}

char *
fuzz_cstr(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t n = nul != NULL ? (size_t)(nul - data) : size;
    char *s = malloc(n + 1);

    if (s == NULL)
        fuzz_fail(__FILE__, __LINE__, "malloc");
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

size_t
fuzz_utf8_next(const void *s, size_t len, uint32_t *cp)
{
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    const unsigned char *p = s;
    uint32_t v;
    size_t n;

    if (len == 0)
        return 0;
    /* Table 3-7 of the Unicode standard, one lead-byte class at a time. */
    if (p[0] <= 0x7f) {
        v = p[0];
        n = 1;
    } else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        v = p[0] & 0x1fu;
        n = 2;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        v = p[0] & 0x0fu;
        n = 3;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        v = p[0] & 0x07u;
        n = 4;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0u) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3fu);
    }
    if (v < least[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

bool
fuzz_utf8_valid(const void *s, size_t len)
{
    const unsigned char *p = s;
    uint32_t cp;

    while (len > 0) {
        size_t n = fuzz_utf8_next(p, len, &cp);
        if (n == 0)
            return false;
        p += n;
        len -= n;
    }
    return true;
}

bool
fuzz_text_safe(const void *s, size_t len, const char *allowed)
{
    const unsigned char *p = s;
    uint32_t cp;

    while (len > 0) {
        size_t n = fuzz_utf8_next(p, len, &cp);
        if (n == 0)
            return false;
        if ((cp < 0x20 && (cp == 0 || strchr(allowed, (int)cp) == NULL)) ||
            (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
            (cp >= 0x2066 && cp <= 0x2069))
            return false;
        p += n;
        len -= n;
    }
    return true;
}
