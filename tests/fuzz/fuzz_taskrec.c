/* SPDX-License-Identifier: MIT */
/*
 * fuzz_taskrec.c: the reader of `delayq export` records (src/fmt/taskrec.c), which
 * `delayq import` runs on every line of its input. Invariants: any bytes are refused
 * with a message or read into a task whose fields are in range; a task read is written
 * again by dq_fmt_task_export and read back to the same fields (the round trip the
 * export / import test makes on real servers), unless one of its strings holds a NUL
 * (dq_task strings are C strings).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/taskfmt.h"
#include "fmt/taskrec.h"
#include "fuzz.h"

static bool
same(const void *a, size_t alen, const void *b, size_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static bool
has_nul(const char *s, size_t len)
{
    return s != NULL && memchr(s, '\0', len) != NULL;
}

static char *
cstr(const char *s, size_t len)
{
    if (s == NULL)
        return NULL;
    char *c = malloc(len + 1);
    FUZZ_CHECK(c != NULL);
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dq_task_rec r = DQ_TASK_REC_INIT, back = DQ_TASK_REC_INIT;
    struct dq_buf line = DQ_BUF_INIT;
    dq_err err = {0};

    if (dq_task_rec_parse(&r, (const char *)data, size, &err) != DQ_OK) {
        FUZZ_CHECK(err.code != DQ_OK && err.msg[0] != '\0');
        dq_task_rec_free(&r);
        return 0;
    }
    const struct dq_import_task *t = &r.task;
    FUZZ_CHECK(t->kind == DQ_IMPORT_SCHEDULED || t->kind == DQ_IMPORT_FAILED ||
               t->kind == DQ_IMPORT_RAW);
    FUZZ_CHECK(r.state == DQ_STATE_SCHEDULED || r.state == DQ_STATE_INFLIGHT ||
               r.state == DQ_STATE_FAILED);
    FUZZ_CHECK(t->kind == DQ_IMPORT_SCHEDULED ? t->due_ms >= 0 : t->failed_ms >= 0);
    FUZZ_CHECK(t->kind != DQ_IMPORT_RAW || t->raw_len > 0);
    FUZZ_CHECK(t->kind == DQ_IMPORT_RAW || t->seq >= 1);

    if (!has_nul(t->id, t->id_len) && !has_nul(t->last_error, t->last_error_len) &&
        !has_nul(t->reason, t->reason_len) && !has_nul(t->error, t->error_len) &&
        !has_nul(t->trace, t->trace_len) && !has_nul(t->failed_by, t->failed_by_len)) {
        char seq[24];
        dq_task x;
        memset(&x, 0, sizeof x);
        snprintf(seq, sizeof seq, "%llu", (unsigned long long)t->seq);
        x.state = r.state;
        x.undecodable = t->kind == DQ_IMPORT_RAW;
        x.id = t->kind == DQ_IMPORT_RAW ? cstr("undecodable:x", 13)
               : t->id                  ? cstr(t->id, t->id_len)
                                        : cstr(seq, strlen(seq));
        x.custom_id = t->id != NULL;
        x.seq = t->seq;
        x.attempt = t->attempt;
        x.max_attempts = t->max_attempts;
        x.enqueued_ms = t->enqueued_ms;
        x.deadline_ms = t->deadline_ms;
        x.payload = (unsigned char *)cstr(t->payload, t->payload_len);
        x.payload_len = t->payload_len;
        x.last_error = cstr(t->last_error, t->last_error_len);
        x.due_ms = t->due_ms;
        x.lease_ms = x.claimed_ms = -1;
        x.failed_ms = t->failed_ms;
        x.reason = cstr(t->reason, t->reason_len);
        x.error = cstr(t->error, t->error_len);
        x.trace = cstr(t->trace, t->trace_len);
        x.failed_by = cstr(t->failed_by, t->failed_by_len);
        x.raw = (unsigned char *)cstr(t->raw, t->raw_len);
        x.raw_len = t->kind == DQ_IMPORT_RAW ? t->raw_len : 0;
        dq_fmt_task_export(&line, &x, "q");
        FUZZ_CHECK(!line.failed);
        FUZZ_CHECK(dq_task_rec_parse(&back, line.data, line.len, &err) == DQ_OK);
        const struct dq_import_task *u = &back.task;
        FUZZ_CHECK(u->kind == t->kind && back.state == r.state);
        FUZZ_CHECK(same(u->id, u->id_len, t->id, t->id_len));
        FUZZ_CHECK(u->seq == t->seq && u->attempt == t->attempt &&
                   u->max_attempts == t->max_attempts && u->enqueued_ms == t->enqueued_ms &&
                   u->deadline_ms == t->deadline_ms);
        FUZZ_CHECK(same(u->payload, u->payload_len, t->payload, t->payload_len));
        FUZZ_CHECK((u->last_error == NULL) == (t->last_error == NULL) &&
                   same(u->last_error, u->last_error_len, t->last_error, t->last_error_len));
        FUZZ_CHECK(t->kind != DQ_IMPORT_SCHEDULED || u->due_ms == t->due_ms);
        if (t->kind != DQ_IMPORT_SCHEDULED) {
            FUZZ_CHECK(u->failed_ms == t->failed_ms);
            FUZZ_CHECK(same(u->reason, u->reason_len, t->reason, t->reason_len));
            FUZZ_CHECK(same(u->error, u->error_len, t->error, t->error_len));
            FUZZ_CHECK(same(u->trace, u->trace_len, t->trace, t->trace_len));
            FUZZ_CHECK(same(u->failed_by, u->failed_by_len, t->failed_by, t->failed_by_len));
        }
        FUZZ_CHECK(same(u->raw, u->raw_len, t->raw, t->raw_len));
        dq_task_clear(&x);
    }
    dq_buf_free(&line);
    dq_task_rec_free(&back);
    dq_task_rec_free(&r);
    return 0;
}
