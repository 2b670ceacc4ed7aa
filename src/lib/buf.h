/* SPDX-License-Identifier: MIT */
/*
 * buf.h: a growable byte buffer. Pure; never aborts: a failed growth sets a sticky
 * flag that the owner checks once (dq_buf_failed) instead of after every append.
 */
#ifndef DQ_LIB_BUF_H
#define DQ_LIB_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct dq_buf {
    char *data;  /* owned; always NUL-terminated after a successful append */
    size_t len;  /* bytes in use, not counting the NUL */
    size_t cap;  /* bytes allocated */
    bool failed; /* an allocation failed; contents are truncated */
};

#define DQ_BUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0, false                                                                          \
    }

void dq_buf_append(struct dq_buf *b, const void *p, size_t len);
void dq_buf_puts(struct dq_buf *b, const char *s);
void dq_buf_putc(struct dq_buf *b, char c);
void dq_buf_printf(struct dq_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Empties the buffer but keeps its memory. */
void dq_buf_reset(struct dq_buf *b);
/* Releases the memory; the buffer is DQ_BUF_INIT again. */
void dq_buf_free(struct dq_buf *b);
/* Hands the bytes to the caller (free() them); the buffer is DQ_BUF_INIT again.
 * Returns NULL if an append failed. */
char *dq_buf_steal(struct dq_buf *b, size_t *len);
/* Appends @len bytes at @p to the dq_buf @buf, in the shape of msgpack-c's
 * msgpack_packer_write callback. Returns 0, or -1 once the buffer has failed. */
int dq_buf_write(void *buf, const char *p, size_t len);

#endif /* DQ_LIB_BUF_H */
