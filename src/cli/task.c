/* SPDX-License-Identifier: MIT */
/* task.c: printing tasks for ls and show, as text (escaped) or JSON. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fmt/b64.h"
#include "fmt/esc.h"
#include "fmt/mptext.h"
#include "fmt/taskfmt.h"
#include "lib/dur.h"

static const char *const state_names[] = {"none", "scheduled", "inflight", "failed"};

static void
json_key_str(struct dq_buf *b, const char *key, const char *s)
{
    dq_buf_printf(b, ",\"%s\":", key);
    if (s == NULL)
        dq_buf_puts(b, "null");
    else
        cli_json_str(b, s, strlen(s));
}

static void
json_key_int(struct dq_buf *b, const char *key, int64_t v)
{
    if (v < 0)
        dq_buf_printf(b, ",\"%s\":null", key);
    else
        dq_buf_printf(b, ",\"%s\":%lld", key, (long long)v);
}

void
cli_task_json(struct dq_buf *b, const dq_task *t, int64_t now_ms)
{
    dq_buf_puts(b, "{\"id\":");
    cli_json_str(b, t->id, strlen(t->id));
    dq_buf_printf(b, ",\"state\":\"%s\"", state_names[t->state]);
    if (t->undecodable) {
        dq_buf_puts(b, ",\"undecodable\":true,\"raw_base64\":\"");
        dq_b64_encode(b, t->raw, t->raw_len);
        dq_buf_putc(b, '"');
    } else {
        dq_buf_printf(b, ",\"custom_id\":%s,\"seq\":%llu,\"attempt\":%u,\"max_attempts\":%u",
                      t->custom_id ? "true" : "false", (unsigned long long)t->seq, t->attempt,
                      t->max_attempts);
        json_key_int(b, "enqueued_ms", t->enqueued_ms);
        json_key_int(b, "deadline_ms", t->deadline_ms);
        json_key_str(b, "last_error", t->last_error);
        dq_buf_puts(b, ",\"payload\":");
        cli_json_payload(b, t->payload, t->payload_len);
    }
    json_key_int(b, "due_ms", t->due_ms);
    if (t->state == DQ_STATE_INFLIGHT) {
        json_key_int(b, "lease_ms", t->lease_ms);
        json_key_int(b, "claimed_ms", t->claimed_ms);
        json_key_str(b, "worker", t->worker);
        dq_buf_printf(b, ",\"lease_expired\":%s",
                      t->lease_ms >= 0 && t->lease_ms < now_ms ? "true" : "false");
    }
    if (t->state == DQ_STATE_FAILED) {
        json_key_int(b, "failed_ms", t->failed_ms);
        json_key_str(b, "reason", t->reason);
        json_key_str(b, "error", t->error);
        json_key_str(b, "trace", t->trace);
        json_key_str(b, "failed_by", t->failed_by);
    }
    dq_buf_putc(b, '}');
}

void
cli_task_row_header(FILE *f, dq_view view)
{
    static const char *const when[] = {"OVERDUE", "DUE IN", "LEASE LEFT", "FAILED"};

    fprintf(f, "%-24s %-10s %-7s %s\n", "ID", when[view], "ATTEMPT",
            view == DQ_VIEW_FAILED ? "REASON: ERROR" : "PAYLOAD");
}

/* First line of @s, escaped, at most @max bytes of output. */
static void
first_line(struct dq_buf *b, const char *s, size_t max)
{
    size_t n = strcspn(s, "\n");
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

    dq_esc_text(&id, t->id, strlen(t->id), 0);
    switch (view) {
    case DQ_VIEW_DUE:
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
    }
    if (view == DQ_VIEW_INFLIGHT && d < 0) {
        snprintf(when, sizeof when, "expired");
    } else if (d >= 0) {
        dq_dur_format(when, sizeof when, d);
        if (view == DQ_VIEW_FAILED)
            strncat(when, " ago", sizeof when - strlen(when) - 1);
    }
    dq_fmt_attempts(att, sizeof att, t);
    if (view == DQ_VIEW_FAILED) {
        first_line(&rest, t->reason ? t->reason : "?", 40);
        dq_buf_puts(&rest, ": ");
        first_line(&rest, t->error ? t->error : "", 80);
    } else if (t->undecodable) {
        dq_buf_puts(&rest, "undecodable ");
        dq_mp_summary(&rest, t->raw, t->raw_len, 60);
    } else {
        if (view == DQ_VIEW_INFLIGHT && t->worker) {
            dq_buf_puts(&rest, "[");
            first_line(&rest, t->worker, 40);
            dq_buf_puts(&rest, "] ");
        }
        dq_mp_summary(&rest, t->payload, t->payload_len, 80);
    }
    fprintf(f, "%-24s %-10s %-7s %s\n", id.data ? id.data : "", when, att,
            rest.data ? rest.data : "");
    dq_buf_free(&id);
    dq_buf_free(&rest);
}

static void
show_line(FILE *f, const char *label, const char *s)
{
    fprintf(f, "%-14s", label);
    cli_put_safe(f, s, strlen(s));
    fputc('\n', f);
}

static void
show_time(FILE *f, const char *label, int64_t ms, int64_t now_ms)
{
    char buf[96];

    if (ms < 0)
        return;
    cli_time_rel(buf, sizeof buf, ms, now_ms);
    fprintf(f, "%-14s%s\n", label, buf);
}

/* Multi-line text, every line escaped and indented. */
static void
show_block(FILE *f, const char *label, const char *s)
{
    struct dq_buf b = DQ_BUF_INIT;

    fprintf(f, "%s\n", label);
    if (s[0] == '\0') {
        fprintf(f, "  (empty)\n");
        return;
    }
    dq_esc_text(&b, s, strlen(s), DQ_ESC_KEEP_NL | DQ_ESC_KEEP_TAB);
    fputs("  ", f);
    for (size_t i = 0; i < b.len; i++) {
        fputc(b.data[i], f);
        if (b.data[i] == '\n' && i + 1 < b.len)
            fputs("  ", f);
    }
    if (b.len > 0 && b.data[b.len - 1] != '\n')
        fputc('\n', f);
    dq_buf_free(&b);
}

void
cli_task_show(FILE *f, const dq_task *t, int64_t now_ms)
{
    struct dq_buf b = DQ_BUF_INIT;
    char num[64];

    show_line(f, "id", t->id);
    show_line(f, "state", t->state == DQ_STATE_INFLIGHT ? "in flight" : state_names[t->state]);
    if (!t->undecodable) {
        show_line(f, "id kind", t->custom_id ? "chosen by the producer" : "generated");
        snprintf(num, sizeof num, "%llu", (unsigned long long)t->seq);
        show_line(f, "sequence", num);
        if (t->max_attempts > 0)
            snprintf(num, sizeof num, "%u made, at most %u", t->attempt, t->max_attempts);
        else
            snprintf(num, sizeof num, "%u made, unlimited", t->attempt);
        show_line(f, "attempts", num);
        show_time(f, "enqueued", t->enqueued_ms, now_ms);
    }
    show_time(f, "due", t->due_ms, now_ms);
    if (!t->undecodable) {
        if (t->deadline_ms >= 0)
            show_time(f, "deadline", t->deadline_ms, now_ms);
        else
            show_line(f, "deadline", "none");
    }
    if (t->state == DQ_STATE_INFLIGHT) {
        show_line(f, "worker", t->worker ? t->worker : "?");
        show_time(f, "claimed", t->claimed_ms, now_ms);
        show_time(f, t->lease_ms < now_ms ? "lease EXPIRED" : "lease until", t->lease_ms, now_ms);
    }
    if (t->state == DQ_STATE_FAILED) {
        show_time(f, "failed", t->failed_ms, now_ms);
        show_line(f, "failed by", t->failed_by ? t->failed_by : "?");
        show_line(f, "reason", t->reason ? t->reason : "?");
    }
    if (t->last_error != NULL)
        show_line(f, "last error", t->last_error);
    if (t->undecodable) {
        snprintf(num, sizeof num, "UNDECODABLE: %zu raw bytes, not a delayq envelope", t->raw_len);
        show_line(f, "payload", num);
        dq_hexdump(&b, t->raw, t->raw_len, 2);
    } else {
        snprintf(num, sizeof num, "%zu bytes", t->payload_len);
        show_line(f, "payload", num);
        if (t->payload_len > 0 && dq_mp_to_tree(&b, t->payload, t->payload_len, 2, NULL) != DQ_OK) {
            dq_buf_reset(&b);
            fprintf(f, "  (not msgpack; raw bytes)\n");
            dq_hexdump(&b, t->payload, t->payload_len, 2);
        }
    }
    if (b.len > 0) {
        fwrite(b.data, 1, b.len, f);
        if (b.data[b.len - 1] != '\n')
            fputc('\n', f);
    }
    dq_buf_free(&b);
    if (t->state == DQ_STATE_FAILED) {
        show_block(f, "error", t->error ? t->error : "");
        show_block(f, "stack trace", t->trace ? t->trace : "");
    }
}
