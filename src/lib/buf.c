/* SPDX-License-Identifier: MIT */
/* buf.c: growable byte buffer with a sticky allocation-failure flag. Pure. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
buf_reserve(struct dq_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > (size_t)-1 / 2 - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void
dq_buf_append(struct dq_buf *b, const void *p, size_t len)
{
    if (!buf_reserve(b, len))
        return;
    if (len > 0)
        memcpy(b->data + b->len, p, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void
dq_buf_puts(struct dq_buf *b, const char *s)
{
    dq_buf_append(b, s, strlen(s));
}

void
dq_buf_putc(struct dq_buf *b, char c)
{
    dq_buf_append(b, &c, 1);
}

void
dq_buf_printf(struct dq_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];

    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        dq_buf_append(b, small, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void
dq_buf_reset(struct dq_buf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->data != NULL)
        b->data[0] = '\0';
}

void
dq_buf_free(struct dq_buf *b)
{
    free(b->data);
    *b = (struct dq_buf)DQ_BUF_INIT;
}

char *
dq_buf_steal(struct dq_buf *b, size_t *len)
{
    char *p = b->failed ? NULL : b->data;

    if (p == NULL && !b->failed)
        p = calloc(1, 1);
    if (len != NULL)
        *len = p ? b->len : 0;
    if (p != b->data)
        free(b->data);
    *b = (struct dq_buf)DQ_BUF_INIT;
    return p;
}

int
dq_buf_write(void *buf, const char *p, size_t len)
{
    struct dq_buf *b = buf;

    dq_buf_append(b, p, len);
    return b->failed ? -1 : 0;
}
