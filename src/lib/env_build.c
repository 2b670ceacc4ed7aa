/* SPDX-License-Identifier: MIT */
/*
 * env_build.c: writes envelope templates for lua/enqueue.lua. The seq and enqueued
 * fields always take the 9-byte uint64 form, which is what the script overwrites in
 * place (and what a real seq must take anyway, so members sort in enqueue order), and
 * so does a deadline: an absolute ms value is over 2^32 and would take it too, so the
 * stored envelope is exactly as large as one the script wrote in full.
 */
#include "env_build.h"

static void
put_be(struct dq_buf *b, unsigned char tag, uint64_t v, int bytes)
{
    unsigned char s[9];

    s[0] = tag;
    for (int i = 0; i < bytes; i++)
        s[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    dq_buf_append(b, s, (size_t)bytes + 1);
}

static void
put_uint(struct dq_buf *b, uint64_t v)
{
    if (v < 128)
        dq_buf_putc(b, (char)v);
    else if (v < 256)
        put_be(b, 0xcc, v, 1);
    else if (v < 65536)
        put_be(b, 0xcd, v, 2);
    else if (v < 4294967296u)
        put_be(b, 0xce, v, 4);
    else
        put_be(b, 0xcf, v, 8);
}

void
dq_env_template(struct dq_buf *b, const char *id, size_t id_len, int64_t max_attempts,
                int64_t deadline_ms, int64_t time_limit_ms, const void *payload, size_t len)
{
    dq_env_template_ext(b, id, id_len, max_attempts, deadline_ms, time_limit_ms, 0, payload, len);
}

void
dq_env_template_ext(struct dq_buf *b, const char *id, size_t id_len, int64_t max_attempts,
                    int64_t deadline_ms, int64_t time_limit_ms, int64_t unique_for_ms,
                    const void *payload, size_t len)
{
    bool ext = time_limit_ms > 0 || unique_for_ms > 0;

    /* v1 unless an extension is set: a task that uses none stays readable by v1 readers */
    dq_buf_append(b, ext ? "\x9a\x02" : "\x99\x01", 2);
    put_be(b, 0xcf, 0, 8); /* seq: the script's */
    if (id == NULL)
        dq_buf_putc(b, (char)0xc0);
    else if (id_len < 32)
        dq_buf_putc(b, (char)(0xa0 | id_len));
    else if (id_len < 256)
        put_be(b, 0xd9, id_len, 1);
    else
        put_be(b, 0xda, id_len, 2);
    if (id != NULL)
        dq_buf_append(b, id, id_len);
    dq_buf_putc(b, 0);     /* attempt */
    put_be(b, 0xcf, 0, 8); /* enqueued: the script's */
    if (max_attempts < 0)
        dq_buf_putc(b, (char)0xc0);
    else
        put_uint(b, (uint64_t)max_attempts);
    if (deadline_ms == 0)
        dq_buf_putc(b, (char)0xc0);
    else
        put_be(b, 0xcf, (uint64_t)deadline_ms, 8);
    if (len < 256)
        put_be(b, 0xc4, len, 1);
    else if (len < 65536)
        put_be(b, 0xc5, len, 2);
    else
        put_be(b, 0xc6, len, 4);
    if (len > 0)
        dq_buf_append(b, payload, len);
    dq_buf_putc(b, (char)0xc0); /* last error */
    dq_env_ext_build(b, time_limit_ms, unique_for_ms);
}

void
dq_env_ext_build(struct dq_buf *b, int64_t time_limit_ms, int64_t unique_for_ms)
{
    if (time_limit_ms <= 0 && unique_for_ms <= 0)
        return;
    /* keys in increasing order: {"tl": ms, "uf": ms} */
    dq_buf_putc(b, (char)(0x80 | ((time_limit_ms > 0) + (unique_for_ms > 0))));
    if (time_limit_ms > 0) {
        dq_buf_append(b, "\xa2tl", 3);
        put_uint(b, (uint64_t)time_limit_ms);
    }
    if (unique_for_ms > 0) {
        dq_buf_append(b, "\xa2uf", 3);
        put_uint(b, (uint64_t)unique_for_ms);
    }
}
