/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hproto.c: the result lines of `delayq work --persistent` handlers
 * (src/cli/hproto.c), bytes a handler process writes. Invariants: a refused line gives
 * a one-line, terminal-safe reason and an empty result; an accepted line was one JSON
 * object, its verdict is one of the three, its strings are valid UTF-8 (error and trace
 * NUL-terminated), and a line written back from what was accepted parses to the same
 * fields. hproto_wire_id of any C string is valid UTF-8.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/hproto.h"
#include "fmt/taskfmt.h"
#include "fuzz.h"

static void
put_opt(struct dq_buf *b, const char *key, const char *s)
{
    if (s == NULL)
        return;
    dq_buf_printf(b, ",\"%s\":", key);
    dq_fmt_json_str(b, s, strlen(s));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const verdicts[] = {"done", "retry", "fail"};
    struct hproto_result r, again;
    struct dq_buf line = DQ_BUF_INIT, wire = DQ_BUF_INIT;
    char why[300];

    if (hproto_parse_result((const char *)data, size, &r, why, sizeof why) != 0) {
        FUZZ_CHECK(r.id == NULL && r.error == NULL && r.trace == NULL);
        FUZZ_CHECK(strlen(why) > 0 && fuzz_text_safe(why, strlen(why), ""));
        FUZZ_CHECK(strchr(why, '\n') == NULL);
    } else {
        FUZZ_CHECK(r.verdict <= HPROTO_FAIL && r.id != NULL);
        FUZZ_CHECK(fuzz_utf8_valid(r.id, r.id_len));
        FUZZ_CHECK(r.error == NULL || fuzz_utf8_valid(r.error, strlen(r.error)));
        FUZZ_CHECK(r.trace == NULL || fuzz_utf8_valid(r.trace, strlen(r.trace)));
        dq_buf_puts(&line, "{\"id\":");
        dq_fmt_json_str(&line, r.id, r.id_len);
        dq_buf_printf(&line, ",\"result\":\"%s\"", verdicts[r.verdict]);
        put_opt(&line, "error", r.error);
        put_opt(&line, "trace", r.trace);
        dq_buf_putc(&line, '}');
        FUZZ_CHECK(!line.failed);
        FUZZ_CHECK(hproto_parse_result(line.data, line.len, &again, why, sizeof why) == 0);
        FUZZ_CHECK(again.verdict == r.verdict && again.id_len == r.id_len &&
                   memcmp(again.id, r.id, r.id_len) == 0);
        FUZZ_CHECK((again.error == NULL) == (r.error == NULL) &&
                   (r.error == NULL || strcmp(again.error, r.error) == 0));
        FUZZ_CHECK((again.trace == NULL) == (r.trace == NULL) &&
                   (r.trace == NULL || strcmp(again.trace, r.trace) == 0));
        hproto_result_free(&again);
    }
    hproto_result_free(&r);

    char *id = fuzz_cstr(data, size);
    hproto_wire_id(&wire, id);
    FUZZ_CHECK(fuzz_utf8_valid(wire.data, wire.len));
    free(id);
    dq_buf_free(&wire);
    dq_buf_free(&line);
    return 0;
}
