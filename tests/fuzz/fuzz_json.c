/* SPDX-License-Identifier: MIT */
/*
 * fuzz_json.c: JSON to msgpack (src/fmt/json.c), the parser behind `delayq enqueue
 * --json`. Invariants: a refused text leaves the output buffer exactly as it was and
 * gives a "json: ... at line L column C" message; an accepted text gives exactly one
 * msgpack value, which renders back to JSON (dq_mp_to_json) that parses to the same
 * bytes, so the smallest-encoding msgpack is a fixed point of the round trip.
 */
#include <string.h>

#include "fmt/json.h"
#include "fmt/mptext.h"
#include "fuzz.h"
#include "lib/mp.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char prefix[] = "kept";
    struct dq_buf mp = DQ_BUF_INIT, text = DQ_BUF_INIT, mp2 = DQ_BUF_INIT;
    dq_err err = {0};

    dq_buf_puts(&mp, prefix);
    int rc = dq_json_to_mp(&mp, (const char *)data, size, &err);
    if (rc != DQ_OK) {
        FUZZ_CHECK(mp.len == strlen(prefix) && memcmp(mp.data, prefix, mp.len) == 0);
        FUZZ_CHECK(rc == err.code && (rc == DQ_EINVAL || rc == DQ_ENOMEM));
        FUZZ_CHECK(strncmp(err.msg, "json: ", 6) == 0);
        FUZZ_CHECK(rc != DQ_EINVAL || strstr(err.msg, " at line ") != NULL);
        FUZZ_CHECK(fuzz_text_safe(err.msg, strlen(err.msg), ""));
        dq_buf_free(&mp);
        return 0;
    }
    FUZZ_CHECK(!mp.failed && mp.len > strlen(prefix));
    const char *v = mp.data + strlen(prefix);
    size_t vlen = mp.len - strlen(prefix);

    struct dq_mp_scan scan;
    FUZZ_CHECK(dq_mp_scan(v, vlen, 0, DQ_JSON_MAX_DEPTH, &scan) && scan.end == vlen);

    FUZZ_CHECK(dq_mp_to_json(&text, v, vlen, NULL) == DQ_OK);
    FUZZ_CHECK(fuzz_text_safe(text.data, text.len, ""));
    FUZZ_CHECK(dq_json_to_mp(&mp2, text.data, text.len, NULL) == DQ_OK);
    FUZZ_CHECK(mp2.len == vlen && memcmp(mp2.data, v, vlen) == 0);

    dq_buf_free(&mp);
    dq_buf_free(&text);
    dq_buf_free(&mp2);
    return 0;
}
