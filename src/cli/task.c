/* SPDX-License-Identifier: MIT */
/* task.c: listing rows for ls (the task text itself lives in fmt/taskfmt.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lib/task.h"
#include "fmt/esc.h"
#include "fmt/mptext.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

void
cli_task_row_header(FILE *f, dq_view view)
{
    static const char *const when[] = {"OVERDUE", "DUE IN", "LEASE LEFT",
                                       "FAILED",  "DONE",   "OVERDUE"};

    fprintf(f, "%-24s %-10s %-7s %s\n", "ID", when[view], "ATTEMPT",
            view == DQ_VIEW_FAILED ? "REASON: ERROR"
            : view == DQ_VIEW_DONE ? "RUN"
                                   : "PAYLOAD");
}

/* First line of @s (@len bytes, 0: strlen), escaped, at most @max bytes of output. */
static void
first_line(struct dq_buf *b, const char *s, size_t len, size_t max)
{
    len = dq_slen(s, len);
    const char *nl = memchr(s, '\n', len);
    size_t n = nl != NULL ? (size_t)(nl - s) : len;
    struct dq_buf tmp = DQ_BUF_INIT;

    dq_esc_text(&tmp, s, n, 0);
    if (tmp.len > max) {
        /* cut on a UTF-8 boundary */
        size_t cut = max;
        while (cut > 0 && ((unsigned char)tmp.data[cut] & 0xc0) == 0x80)
            cut--;
        dq_buf_append(b, tmp.data, cut);
        dq_buf_puts(b, "…");
    } else if (tmp.len > 0) {
        dq_buf_append(b, tmp.data, tmp.len);
    }
    dq_buf_free(&tmp);
}

void
cli_task_row(FILE *f, const dq_task *t, dq_view view, int64_t now_ms)
{
    struct dq_buf id = DQ_BUF_INIT, rest = DQ_BUF_INIT;
    char when[32] = "-", att[24];
    int64_t d = -1;

    dq_esc_text(&id, t->id, dq_slen(t->id, t->id_len), 0);
    switch (view) {
    case DQ_VIEW_DUE:
    case DQ_VIEW_PARKED:
        d = now_ms - t->due_ms;
        break;
    case DQ_VIEW_FUTURE:
        d = t->due_ms - now_ms;
        break;
    case DQ_VIEW_INFLIGHT:
        d = t->lease_ms - now_ms;
        break;
    case DQ_VIEW_FAILED:
        d = now_ms - t->failed_ms;
        break;
    case DQ_VIEW_DONE:
        d = t->done_ms < 0 ? -1 : now_ms - t->done_ms;
        break;
    }
    if (view == DQ_VIEW_INFLIGHT && d < 0) {
        snprintf(when, sizeof when, "expired");
    } else if (d >= 0) {
        dq_dur_format(when, sizeof when, d);
        if (view == DQ_VIEW_FAILED || view == DQ_VIEW_DONE)
            strncat(when, " ago", sizeof when - strlen(when) - 1);
    }
    dq_fmt_attempts(att, sizeof att, t);
    if (view == DQ_VIEW_DONE) {
        dq_fmt_done_run(&rest, t);
    } else if (view == DQ_VIEW_FAILED) {
        first_line(&rest, t->reason ? t->reason : "?", t->reason ? t->reason_len : 0, 40);
        dq_buf_puts(&rest, ": ");
        first_line(&rest, t->error ? t->error : "", t->error ? t->error_len : 0, 80);
    } else if (t->undecodable) {
        dq_buf_puts(&rest, "undecodable ");
        dq_mp_summary(&rest, t->raw, t->raw_len, 60);
    } else {
        if (view == DQ_VIEW_INFLIGHT && t->worker) {
            dq_buf_puts(&rest, "[");
            first_line(&rest, t->worker, t->worker_len, 40);
            dq_buf_puts(&rest, "] ");
        }
        if (view == DQ_VIEW_PARKED && t->key) {
            dq_buf_puts(&rest, "[key ");
            first_line(&rest, t->key, t->key_len, 40);
            dq_buf_puts(&rest, "] ");
        }
        dq_mp_summary(&rest, t->payload, t->payload_len, 80);
    }
    fprintf(f, "%-24s %-10s %-7s %s\n", id.data ? id.data : "", when, att,
            rest.data ? rest.data : "");
    dq_buf_free(&id);
    dq_buf_free(&rest);
}
