/* SPDX-License-Identifier: MIT */
/* taskfmt.c: tasks as text and JSON for the command and the inspector (taskfmt.h). */
#include "taskfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/b64.h"
#include "fmt/esc.h"
#include "fmt/json.h"
#include "fmt/mptext.h"
#include "lib/dur.h"
#include "lib/env.h"
#include "lib/env_build.h"
#include "lib/mp.h"
#include "lib/task.h"
#include "lib/err.h"

static const char *const state_names[] = {"none",   "scheduled", "inflight",
                                          "failed", "done",      "parked"};

size_t
dq_fmt_attempts(char *buf, size_t size, const dq_task *t)
{
    int n;

    if (t->undecodable)
        n = snprintf(buf, size, "-");
    else if (t->max_attempts > 0)
        n = snprintf(buf, size, "%u/%u", t->attempt, t->max_attempts);
    else
        n = snprintf(buf, size, "%u", t->attempt);
    return n < 0 ? 0 : (size_t)n;
}

size_t
dq_fmt_time_rel(char *buf, size_t size, int64_t ms, int64_t now_ms)
{
    char abs[40], rel[32];
    int n;

    if (ms < 0) {
        n = snprintf(buf, size, "-");
    } else {
        dq_time_format(abs, sizeof abs, ms);
        dq_dur_format(rel, sizeof rel, ms >= now_ms ? ms - now_ms : now_ms - ms);
        n = snprintf(buf, size, ms >= now_ms ? "%s (in %s)" : "%s (%s ago)", abs, rel);
    }
    return n < 0 ? 0 : (size_t)n;
}

static bool
is_word(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

void
dq_fmt_audit_detail(struct dq_buf *b, const char *s, int64_t now_ms)
{
    size_t len = strlen(s), i = 0;

    while (i < len) {
        /* a number that starts a word: the scripts write times and durations so */
        if (s[i] < '0' || s[i] > '9' || (i > 0 && is_word(s[i - 1]))) {
            dq_buf_putc(b, s[i++]);
            continue;
        }
        size_t end = i;
        int64_t v = 0;
        bool big = false;
        while (end < len && s[end] >= '0' && s[end] <= '9') {
            big |= v > DQ_TIME_MAX_MS / 10; /* past any time or duration: copied as it is */
            if (!big)
                v = v * 10 + (s[end] - '0');
            end++;
        }
        /* (s[end] and s[end + 2] are in the string or its NUL once "ms" matched) */
        bool ms = strncmp(s + end, "ms", 2) == 0 && !is_word(s[end + 2]);
        bool at = !ms && !is_word(s[end]) &&
                  ((i >= 6 && (strncmp(s + i - 6, "until ", 6) == 0 ||
                               strncmp(s + i - 6, "since ", 6) == 0)) ||
                   (i >= 4 && strncmp(s + i - 4, "due ", 4) == 0)); /* reschedule's */
        char out[80];
        if (!big && ms && v <= DQ_DUR_MAX_MS) {
            dq_dur_format(out, sizeof out, v);
            dq_buf_puts(b, out);
            i = end + 2;
        } else if (!big && at && v <= DQ_TIME_MAX_MS) {
            if (now_ms < 0)
                dq_time_format(out, sizeof out, v);
            else
                dq_fmt_time_rel(out, sizeof out, v, now_ms);
            dq_buf_puts(b, out);
            i = end;
        } else {
            dq_buf_append(b, s + i, end - i);
            i = end;
        }
    }
}

void
dq_fmt_json_str(struct dq_buf *b, const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t i = 0;

    dq_buf_putc(b, '"');
    while (i < len) {
        uint32_t cp;
        size_t n = dq_utf8_decode(p + i, len - i, &cp);

        if (n == 0) {
            /* Invalid UTF-8: keep the byte visible as a Latin-1 code point. */
            dq_buf_printf(b, "\\u%04x", p[i]);
            i++;
            continue;
        }
        if (cp == '"' || cp == '\\') {
            dq_buf_putc(b, '\\');
            dq_buf_putc(b, (char)cp);
        } else if (cp == '\n') {
            dq_buf_puts(b, "\\n");
        } else if (cp == '\t') {
            dq_buf_puts(b, "\\t");
        } else if (cp == '\r') {
            dq_buf_puts(b, "\\r");
        } else if (dq_esc_is_unsafe(cp) || cp == 0x2028 || cp == 0x2029) {
            /* C0, DEL, C1 and the bidi controls: a JSON reader gets the same code point,
             * and a terminal showing the line is not reordered by a U+202E in an id */
            dq_buf_printf(b, "\\u%04x", (unsigned)cp);
        } else {
            dq_buf_append(b, p + i, n);
        }
        i += n;
    }
    dq_buf_putc(b, '"');
}

void
dq_fmt_payload_json(struct dq_buf *b, const void *payload, size_t len)
{
    struct dq_buf tmp = DQ_BUF_INIT;

    if (len > 0 && dq_mp_to_json(&tmp, payload, len, NULL) == DQ_OK && !tmp.failed) {
        dq_buf_append(b, tmp.data, tmp.len);
    } else {
        dq_buf_puts(b, "{\"$raw_base64\":\"");
        dq_b64_encode(b, payload, len);
        dq_buf_puts(b, "\"}");
    }
    dq_buf_free(&tmp);
}

/* How task_json writes: for people and programs (ls, show), or lossless for export. */
struct json_mode {
    bool lossless;     /* strings and the payload read back to the same bytes */
    const char *queue; /* lossless: the queue, written after the id */
};

/* A string value. Lossless: text that is not valid UTF-8 goes through msgpack to JSON,
 * which writes it as {"$str_base64":...} (dq_json_to_mp reads that back to the bytes). */
static void
json_str(struct dq_buf *b, const char *s, size_t len, const struct json_mode *m)
{
    len = dq_slen(s, len); /* every byte, a NUL inside included (\u0000) */

    if (m->lossless && !dq_utf8_valid(s, len)) {
        struct dq_buf mp = DQ_BUF_INIT;
        dq_mp_put_str(&mp, s, len);
        if (mp.failed || dq_mp_to_json(b, mp.data, mp.len, NULL) != DQ_OK)
            b->failed = true;
        dq_buf_free(&mp);
        return;
    }
    dq_fmt_json_str(b, s, len);
}

static void
json_key_str(struct dq_buf *b, const char *key, const char *s, size_t len,
             const struct json_mode *m)
{
    dq_buf_printf(b, ",\"%s\":", key);
    if (s == NULL)
        dq_buf_puts(b, "null");
    else
        json_str(b, s, len, m);
}

static void
json_key_int(struct dq_buf *b, const char *key, int64_t v)
{
    if (v < 0)
        dq_buf_printf(b, ",\"%s\":null", key);
    else
        dq_buf_printf(b, ",\"%s\":%lld", key, (long long)v);
}

/* ,"history":[{...}, ...] (PROTOCOL.md 4.5), oldest first; nothing when it has none. */
static void
json_history(struct dq_buf *b, const dq_task *t, const struct json_mode *m)
{
    if (t->nhistory == 0)
        return;
    dq_buf_puts(b, ",\"history\":[");
    for (size_t i = 0; i < t->nhistory; i++) {
        const dq_attempt *a = &t->history[i];
        dq_buf_printf(b, "%s{\"attempt\":%u", i > 0 ? "," : "", a->attempt);
        json_key_int(b, "started_ms", a->started_ms);
        json_key_int(b, "duration_ms", a->duration_ms);
        json_key_str(b, "worker", a->worker, a->worker_len, m);
        json_key_str(b, "outcome", a->outcome, a->outcome_len, m);
        json_key_str(b, "error", a->error, a->error_len, m);
        dq_buf_putc(b, '}');
    }
    dq_buf_putc(b, ']');
}

/* Lossless: the payload as JSON only when that JSON reads back to exactly its bytes
 * (checked here, by reading it back), else its bytes in base64 under payload_b64. */
static void
json_payload(struct dq_buf *b, const dq_task *t, const struct json_mode *m)
{
    struct dq_buf js = DQ_BUF_INIT, back = DQ_BUF_INIT;

    if (!m->lossless) {
        dq_buf_puts(b, ",\"payload\":");
        dq_fmt_payload_json(b, t->payload, t->payload_len);
        return;
    }
    struct dq_mp_scan sc;

    /* one level is left for the record around it, so that the line reads back */
    if (t->payload_len > 0 &&
        dq_mp_scan(t->payload, t->payload_len, 0, DQ_JSON_MAX_DEPTH - 1, &sc) &&
        sc.end == t->payload_len && dq_mp_to_json(&js, t->payload, t->payload_len, NULL) == DQ_OK &&
        !js.failed && dq_json_to_mp(&back, js.data, js.len, NULL) == DQ_OK && !back.failed &&
        back.len == t->payload_len && memcmp(back.data, t->payload, back.len) == 0) {
        dq_buf_puts(b, ",\"payload\":");
        dq_buf_append(b, js.data, js.len);
    } else {
        dq_buf_puts(b, ",\"payload_b64\":\"");
        dq_b64_encode(b, t->payload, t->payload_len);
        dq_buf_putc(b, '"');
    }
    dq_buf_free(&js);
    dq_buf_free(&back);
}

/* An export's "extensions_b64": the envelope's v2 extension map as stored, only when
 * time_limit_ms and unique_for_ms do not rebuild it byte for byte (keys a later writer
 * added), so import restores the envelope exactly and a record that needs none stays
 * the plain record older readers know. */
static void
json_extensions(struct dq_buf *b, const dq_task *t)
{
    struct dq_env e;
    struct dq_buf known = DQ_BUF_INIT;

    if (t->raw == NULL || dq_env_decode(t->raw, t->raw_len, &e, NULL) != DQ_OK || e.ext.ptr == NULL)
        return;
    dq_env_ext_build(&known, NULL, 0, e.time_limit_ms, e.unique_for_ms);
    if (known.failed || known.len != e.ext.len || memcmp(known.data, e.ext.ptr, e.ext.len) != 0) {
        dq_buf_puts(b, ",\"extensions_b64\":\"");
        dq_b64_encode(b, e.ext.ptr, e.ext.len);
        dq_buf_putc(b, '"');
    }
    dq_buf_free(&known);
}

/* The one list of a task's fields as JSON, for both modes. Lossless leaves out what
 * depends on the moment of reading (lease_expired), so two exports of the same tasks
 * are the same bytes. */
static void
task_json(struct dq_buf *b, const dq_task *t, int64_t now_ms, const struct json_mode *m)
{
    dq_buf_puts(b, "{\"id\":");
    json_str(b, t->id, t->id_len, m);
    if (m->queue != NULL)
        json_key_str(b, "queue", m->queue, 0, m);
    /* an export writes a parked task as the scheduled, due task it is: import puts it
     * back in sched and the next claim parks it again if its key is still full */
    dq_buf_printf(
        b, ",\"state\":\"%s\"",
        state_names[m->lossless && t->state == DQ_STATE_PARKED ? DQ_STATE_SCHEDULED : t->state]);
    if (t->undecodable) {
        dq_buf_puts(b, ",\"undecodable\":true,\"raw_base64\":\"");
        dq_b64_encode(b, t->raw, t->raw_len);
        dq_buf_putc(b, '"');
    } else if (t->state == DQ_STATE_DONE) { /* a record of the run: no envelope fields */
        dq_buf_printf(b, ",\"custom_id\":%s,\"attempt\":%u", t->custom_id ? "true" : "false",
                      t->attempt);
    } else {
        dq_buf_printf(b, ",\"custom_id\":%s,\"seq\":%llu,\"attempt\":%u,\"max_attempts\":%u",
                      t->custom_id ? "true" : "false", (unsigned long long)t->seq, t->attempt,
                      t->max_attempts);
        json_key_int(b, "enqueued_ms", t->enqueued_ms);
        json_key_int(b, "deadline_ms", t->deadline_ms);
        if (t->time_limit_ms > 0) /* only when set: older readers see the records they know */
            json_key_int(b, "time_limit_ms", t->time_limit_ms);
        if (t->unique_for_ms > 0)
            json_key_int(b, "unique_for_ms", t->unique_for_ms);
        if (m->lossless)
            json_extensions(b, t);
        json_key_str(b, "last_error", t->last_error, t->last_error_len, m);
        json_payload(b, t, m);
    }
    json_key_int(b, "due_ms", t->due_ms);
    if (!m->lossless && t->key != NULL) /* (an export carries it in extensions_b64) */
        json_key_str(b, "key", t->key, t->key_len, m);
    if (!m->lossless && t->state == DQ_STATE_PARKED) {
        json_key_int(b, "key_inflight", t->key_inflight);
        json_key_int(b, "key_concurrency", t->key_limit);
    }
    if (t->state == DQ_STATE_INFLIGHT) {
        json_key_int(b, "lease_ms", t->lease_ms);
        json_key_int(b, "claimed_ms", t->claimed_ms);
        json_key_str(b, "worker", t->worker, t->worker_len, m);
        if (!m->lossless)
            dq_buf_printf(b, ",\"lease_expired\":%s",
                          t->lease_ms >= 0 && t->lease_ms < now_ms ? "true" : "false");
    }
    if (t->state == DQ_STATE_DONE) { /* done retention: no envelope, so no payload */
        json_key_int(b, "done_ms", t->done_ms);
        json_key_int(b, "claimed_ms", t->claimed_ms);
        json_key_int(b, "duration_ms",
                     t->claimed_ms >= 0 && t->done_ms >= t->claimed_ms ? t->done_ms - t->claimed_ms
                                                                       : -1);
        json_key_str(b, "worker", t->worker, t->worker_len, m);
        if (t->unique_until_ms > 0)
            json_key_int(b, "unique_until_ms", t->unique_until_ms);
    }
    if (t->state == DQ_STATE_FAILED) {
        json_key_int(b, "failed_ms", t->failed_ms);
        json_key_str(b, "reason", t->reason, t->reason_len, m);
        json_key_str(b, "error", t->error, t->error_len, m);
        json_key_str(b, "trace", t->trace, t->trace_len, m);
        json_key_str(b, "failed_by", t->failed_by, t->failed_by_len, m);
    }
    json_history(b, t, m);
    dq_buf_putc(b, '}');
}

void
dq_fmt_task_json(struct dq_buf *b, const dq_task *t, int64_t now_ms)
{
    const struct json_mode m = {false, NULL};

    task_json(b, t, now_ms, &m);
}

void
dq_fmt_task_export(struct dq_buf *b, const dq_task *t, const char *queue)
{
    const struct json_mode m = {true, queue};

    task_json(b, t, 0, &m);
}

/* "label         value\n", the value (@len bytes, 0: strlen) escaped. */
static void
detail_line_n(struct dq_buf *b, const char *label, const char *s, size_t len)
{
    dq_buf_printf(b, "%-14s", label);
    dq_esc_text(b, s, dq_slen(s, len), 0);
    dq_buf_putc(b, '\n');
}

static void
detail_line(struct dq_buf *b, const char *label, const char *s)
{
    detail_line_n(b, label, s, 0);
}

static void
detail_time(struct dq_buf *b, const char *label, int64_t ms, int64_t now_ms)
{
    char when[96];

    if (ms < 0)
        return;
    dq_fmt_time_rel(when, sizeof when, ms, now_ms);
    dq_buf_printf(b, "%-14s%s\n", label, when);
}

/* Multi-line text under a label, every line escaped and indented by two spaces. */
static void
detail_block(struct dq_buf *b, const char *label, const char *s, size_t len)
{
    struct dq_buf esc = DQ_BUF_INIT;

    len = dq_slen(s, len);
    dq_buf_printf(b, "%s\n", label);
    if (len == 0) {
        dq_buf_puts(b, "  (empty)\n");
        return;
    }
    dq_esc_text(&esc, s, len, DQ_ESC_KEEP_NL | DQ_ESC_KEEP_TAB);
    dq_buf_puts(b, "  ");
    for (size_t i = 0; i < esc.len; i++) {
        dq_buf_putc(b, esc.data[i]);
        if (esc.data[i] == '\n' && i + 1 < esc.len)
            dq_buf_puts(b, "  ");
    }
    if (esc.len > 0 && esc.data[esc.len - 1] != '\n')
        dq_buf_putc(b, '\n');
    dq_buf_free(&esc);
}

/* The payload's size line and its tree, or a hex dump of bytes that are not msgpack. */
static void
detail_payload(struct dq_buf *b, const dq_task *t)
{
    struct dq_buf body = DQ_BUF_INIT;
    char num[64];

    if (t->undecodable) {
        snprintf(num, sizeof num, "UNDECODABLE: %zu raw bytes, not a delayq envelope", t->raw_len);
        detail_line(b, "payload", num);
        dq_hexdump(&body, t->raw, t->raw_len, 2);
    } else {
        snprintf(num, sizeof num, "%zu bytes", t->payload_len);
        detail_line(b, "payload", num);
        if (t->payload_len > 0 &&
            dq_mp_to_tree(&body, t->payload, t->payload_len, 2, NULL) != DQ_OK) {
            dq_buf_reset(&body);
            dq_buf_puts(b, "  (not msgpack; raw bytes)\n");
            dq_hexdump(&body, t->payload, t->payload_len, 2);
        }
    }
    if (body.len > 0) {
        dq_buf_append(b, body.data, body.len);
        if (body.data[body.len - 1] != '\n')
            dq_buf_putc(b, '\n');
    }
    dq_buf_free(&body);
}

/* The attempt history as a timeline, oldest first: one line per attempt (number, start,
 * outcome, duration, worker), its error escaped on the line below. */
static void
detail_history(struct dq_buf *b, const dq_task *t, int64_t now_ms)
{
    if (t->nhistory == 0)
        return;
    dq_buf_printf(b, "%-14s%zu attempt%s, oldest first (at most %d kept)\n", "history", t->nhistory,
                  t->nhistory == 1 ? "" : "s", DQ_HISTORY_MAX);
    for (size_t i = 0; i < t->nhistory; i++) {
        const dq_attempt *a = &t->history[i];
        char when[96], took[32], num[16];
        dq_fmt_time_rel(when, sizeof when, a->started_ms, now_ms);
        if (a->duration_ms >= 0)
            dq_dur_format(took, sizeof took, a->duration_ms);
        else
            snprintf(took, sizeof took, "-");
        snprintf(num, sizeof num, "#%u", a->attempt);
        dq_buf_printf(b, "  %-4s %s  ", num, when);
        dq_esc_text(b, a->outcome, dq_slen(a->outcome, a->outcome_len), 0);
        dq_buf_printf(b, " after %s, ", took);
        dq_esc_text(b, a->worker, dq_slen(a->worker, a->worker_len), 0);
        dq_buf_puts(b, "\n       ");
        if (dq_slen(a->error, a->error_len) > 0)
            dq_esc_text(b, a->error, dq_slen(a->error, a->error_len), 0);
        else
            dq_buf_puts(b, "(no message)");
        dq_buf_putc(b, '\n');
    }
}

bool
dq_fmt_schedule_late(const dq_schedule *s)
{
    return s->missed > 0 || s->late_ms >= 1000;
}

void
dq_fmt_done_run(struct dq_buf *b, const dq_task *t)
{
    char took[DQ_DUR_BUFSZ];

    if (t->claimed_ms < 0 || t->worker == NULL) {
        dq_buf_puts(b, "(done record unreadable)");
        return;
    }
    dq_dur_format(took, sizeof took, t->done_ms > t->claimed_ms ? t->done_ms - t->claimed_ms : 0);
    dq_buf_printf(b, "after %s on worker ", took);
    dq_esc_text(b, t->worker, dq_slen(t->worker, t->worker_len), 0);
    dq_buf_printf(b, " (attempt %u)", t->attempt);
}

/* show of a done task: what the done record keeps (no envelope, so no payload). */
static void
done_details(struct dq_buf *b, const dq_task *t, int64_t now_ms)
{
    char when[DQ_TIME_BUFSZ];

    detail_line(b, "state", "done");
    dq_time_format(when, sizeof when, t->done_ms);
    dq_buf_printf(b, "%-14sdone %s ", "outcome", when);
    dq_fmt_done_run(b, t);
    dq_buf_putc(b, '\n');
    detail_time(b, "finished", t->done_ms, now_ms);
    detail_time(b, "started", t->claimed_ms, now_ms);
    detail_time(b, "due", t->due_ms, now_ms);
    if (t->due_ms >= 0 && t->claimed_ms >= t->due_ms) {
        char late[DQ_DUR_BUFSZ];
        dq_dur_format(late, sizeof late, t->claimed_ms - t->due_ms);
        detail_line(b, "started late", late);
    }
    if (t->unique_until_ms > 0)
        detail_time(b, "unique until", t->unique_until_ms, now_ms); /* enqueue refuses the id */
    detail_line(b, "payload", "not kept (done retention keeps when and how a task ran)");
}

/* The state of a parked task: which key holds it back, and why (PROTOCOL.md 4.10). */
static void
detail_parked(struct dq_buf *b, const dq_task *t)
{
    dq_buf_printf(b, "%-14sparked: key ", "state");
    dq_esc_text(b, t->key ? t->key : "?", t->key ? dq_slen(t->key, t->key_len) : 1, 0);
    if (t->key_limit > 0 && t->key_inflight >= t->key_limit)
        dq_buf_printf(b, " at its limit of %lld in flight\n", (long long)t->key_limit);
    else if (t->key_limit > 0) /* a raised limit: the key's next settle brings it back */
        dq_buf_printf(b,
                      " has %lld of its limit of %lld in flight; it goes back at its next settle\n",
                      (long long)t->key_inflight, (long long)t->key_limit);
    else
        dq_buf_puts(b, ", key_concurrency now off; it goes back at its key's next settle\n");
}

void
dq_fmt_task_details(struct dq_buf *b, const dq_task *t, int64_t now_ms)
{
    char num[64];

    detail_line_n(b, "id", t->id, t->id_len);
    if (t->state == DQ_STATE_DONE) {
        done_details(b, t, now_ms);
        return;
    }
    if (t->state == DQ_STATE_PARKED)
        detail_parked(b, t);
    else
        detail_line(b, "state",
                    t->state == DQ_STATE_INFLIGHT ? "in flight" : state_names[t->state]);
    if (!t->undecodable) {
        detail_line(b, "id kind", t->custom_id ? "chosen by the producer" : "generated");
        snprintf(num, sizeof num, "%llu", (unsigned long long)t->seq);
        detail_line(b, "sequence", num);
        if (t->max_attempts > 0)
            snprintf(num, sizeof num, "%u made, at most %u", t->attempt, t->max_attempts);
        else
            snprintf(num, sizeof num, "%u made, unlimited", t->attempt);
        detail_line(b, "attempts", num);
        detail_time(b, "enqueued", t->enqueued_ms, now_ms);
    }
    detail_time(b, "due", t->due_ms, now_ms);
    if (!t->undecodable) {
        if (t->deadline_ms >= 0)
            detail_time(b, "deadline", t->deadline_ms, now_ms);
        else
            detail_line(b, "deadline", "none");
        if (t->time_limit_ms > 0) {
            char d[DQ_DUR_BUFSZ];
            dq_dur_format(d, sizeof d, t->time_limit_ms);
            detail_line(b, "time limit", d);
        }
        if (t->unique_for_ms > 0) {
            char d[DQ_DUR_BUFSZ], line[DQ_DUR_BUFSZ + 48];
            dq_dur_format(d, sizeof d, t->unique_for_ms);
            snprintf(line, sizeof line, "%s after it finishes (its id is refused)", d);
            detail_line(b, "unique for", line);
        }
        if (t->key != NULL)
            detail_line_n(b, "key", t->key, t->key_len);
    }
    if (t->state == DQ_STATE_INFLIGHT) {
        detail_line_n(b, "worker", t->worker ? t->worker : "?", t->worker ? t->worker_len : 0);
        detail_time(b, "claimed", t->claimed_ms, now_ms);
        detail_time(b, t->lease_ms < now_ms ? "lease EXPIRED" : "lease until", t->lease_ms, now_ms);
    }
    if (t->state == DQ_STATE_FAILED) {
        detail_time(b, "failed", t->failed_ms, now_ms);
        detail_line_n(b, "failed by", t->failed_by ? t->failed_by : "?",
                      t->failed_by ? t->failed_by_len : 0);
        detail_line_n(b, "reason", t->reason ? t->reason : "?", t->reason ? t->reason_len : 0);
    }
    if (t->last_error != NULL)
        detail_line_n(b, "last error", t->last_error, t->last_error_len);
    detail_history(b, t, now_ms);
    detail_payload(b, t);
    if (t->state == DQ_STATE_FAILED) {
        detail_block(b, "error", t->error ? t->error : "", t->error ? t->error_len : 0);
        detail_block(b, "stack trace", t->trace ? t->trace : "", t->trace ? t->trace_len : 0);
    }
}

void
dq_fmt_task_copy(struct dq_buf *b, const dq_task *t, bool prefer_trace)
{
    if (prefer_trace && t->trace != NULL && t->trace[0] != '\0')
        dq_buf_puts(b, t->trace);
    else if (!t->undecodable)
        dq_fmt_payload_json(b, t->payload, t->payload_len);
}

/* fix and requeue */
int
dq_fmt_payload_edit(struct dq_buf *b, const dq_task *t, dq_err *err)
{
    struct dq_buf text = DQ_BUF_INIT, back = DQ_BUF_INIT;
    int rc;

    if (t->undecodable)
        return dq_err_set(err, DQ_EINVAL, "task %s is undecodable bytes, not a task to edit",
                          t->id);
    if (t->payload_len == 0 ||
        dq_mp_to_json_pretty(&text, t->payload, t->payload_len, NULL) != DQ_OK) {
        dq_buf_free(&text);
        return dq_err_set(err, DQ_EINVAL,
                          "payload of %s is %zu bytes that are not msgpack: JSON cannot show it "
                          "faithfully (enqueue a new task instead)",
                          t->id, t->payload_len);
    }
    rc = text.failed ? DQ_ENOMEM : dq_json_to_mp(&back, text.data, text.len, err);
    if (rc == DQ_OK && (back.len != t->payload_len || memcmp(back.data, t->payload, back.len) != 0))
        rc = dq_err_set(err, DQ_EINVAL,
                        "payload of %s is msgpack that JSON cannot show faithfully (a value in "
                        "a longer encoding than the shortest): saving it would change bytes "
                        "nobody edited",
                        t->id);
    else if (rc == DQ_ENOMEM)
        dq_err_set(err, DQ_ENOMEM, "out of memory");
    if (rc == DQ_OK)
        dq_buf_append(b, text.data, text.len);
    dq_buf_free(&text);
    dq_buf_free(&back);
    return rc;
}

/* The lines of @text (pointers into it, without their newline), at most @max. */
static size_t
split_lines(const char *text, size_t len, const char **lines, size_t *lens, size_t max)
{
    size_t n = 0;

    for (size_t i = 0; i < len && n < max;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
        lines[n] = text + i;
        lens[n++] = l;
        i += l + 1;
    }
    return n;
}

enum { CHANGE_LINES_MAX = 4096 }; /* lines compared; past them the rest shows as changed */

void
dq_fmt_payload_change(struct dq_buf *b, const void *old, size_t old_len, const void *new_,
                      size_t new_len, size_t max_lines)
{
    struct dq_buf o = DQ_BUF_INIT, n = DQ_BUF_INIT;
    const char **ol = calloc(2 * CHANGE_LINES_MAX, sizeof *ol), **nl = ol + CHANGE_LINES_MAX;
    size_t *oll = calloc(2 * CHANGE_LINES_MAX, sizeof *oll), *nll = oll + CHANGE_LINES_MAX;
    size_t no, nn, head = 0, tail = 0;

    dq_buf_printf(b, "payload %zu -> %zu bytes\n", old_len, new_len);
    if (ol == NULL || oll == NULL || dq_mp_to_json_pretty(&o, old, old_len, NULL) != DQ_OK ||
        dq_mp_to_json_pretty(&n, new_, new_len, NULL) != DQ_OK || o.failed || n.failed) {
        free(ol);
        free(oll);
        dq_buf_free(&o);
        dq_buf_free(&n);
        return;
    }
    no = split_lines(o.data, o.len, ol, oll, CHANGE_LINES_MAX);
    nn = split_lines(n.data, n.len, nl, nll, CHANGE_LINES_MAX);
    while (head < no && head < nn && oll[head] == nll[head] &&
           memcmp(ol[head], nl[head], oll[head]) == 0)
        head++;
    while (tail < no - head && tail < nn - head && oll[no - 1 - tail] == nll[nn - 1 - tail] &&
           memcmp(ol[no - 1 - tail], nl[nn - 1 - tail], oll[no - 1 - tail]) == 0)
        tail++;
    if (head == no && head == nn)
        dq_buf_puts(b, "  (no change)\n");
    for (int side = 0; side < 2; side++) {
        const char **lines = side == 0 ? ol : nl;
        size_t *lens = side == 0 ? oll : nll, count = (side == 0 ? no : nn) - tail;
        for (size_t i = head; i < count; i++) {
            if (i - head == max_lines) {
                dq_buf_printf(b, "%c ... %zu more lines\n", side == 0 ? '-' : '+', count - i);
                break;
            }
            dq_buf_puts(b, side == 0 ? "- " : "+ ");
            /* JSON lines: their backslashes are JSON's own escapes */
            dq_esc_text(b, lines[i], lens[i], DQ_ESC_KEEP_TAB | DQ_ESC_KEEP_BACKSLASH);
            dq_buf_putc(b, '\n');
        }
    }
    free(ol);
    free(oll);
    dq_buf_free(&o);
    dq_buf_free(&n);
}
