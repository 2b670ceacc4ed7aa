/* SPDX-License-Identifier: MIT */
/*
 * fuzz_esc.c: terminal escaping (src/fmt/esc.c). The first byte picks the flags, the
 * rest is the untrusted text. Invariants: the output is valid UTF-8 with no control a
 * terminal acts on (\n and \t only when kept); text that is already safe and has no
 * backslash comes out unchanged; escaping the output again keeping backslashes changes
 * nothing; the output reads back (dq_esc_unescape) to exactly the input, so escaping is
 * injective; the UTF-8 validator agrees with an independent one; width never exceeds the
 * byte count.
 */
#include <string.h>

#include "fmt/esc.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dq_buf out = DQ_BUF_INIT, again = DQ_BUF_INIT;

    if (size == 0)
        return 0;
    unsigned flags = data[0] & (DQ_ESC_KEEP_NL | DQ_ESC_KEEP_TAB | DQ_ESC_KEEP_BACKSLASH);
    const uint8_t *s = data + 1;
    size_t len = size - 1;
    char allowed[3] = {0}, *a = allowed;
    if (flags & DQ_ESC_KEEP_NL)
        *a++ = '\n';
    if (flags & DQ_ESC_KEEP_TAB)
        *a++ = '\t';

    dq_esc_text(&out, s, len, flags);
    FUZZ_CHECK(!out.failed && out.data != NULL);
    FUZZ_CHECK(out.len >= len); /* escaping never drops a byte */
    FUZZ_CHECK(fuzz_text_safe(out.data, out.len, allowed));

    FUZZ_CHECK(dq_utf8_valid(s, len) == fuzz_utf8_valid(s, len));
    bool backslash = memchr(s, '\\', len) != NULL && !(flags & DQ_ESC_KEEP_BACKSLASH);
    if (fuzz_text_safe(s, len, allowed) && !backslash)
        FUZZ_CHECK(out.len == len && memcmp(out.data, s, len) == 0);

    dq_esc_text(&again, out.data, out.len, flags | DQ_ESC_KEEP_BACKSLASH);
    FUZZ_CHECK(again.len == out.len && memcmp(again.data, out.data, out.len) == 0);
    if (!(flags & DQ_ESC_KEEP_BACKSLASH)) {
        struct dq_buf back = DQ_BUF_INIT;
        FUZZ_CHECK(dq_esc_unescape(&back, out.data, out.len, NULL) == DQ_OK);
        FUZZ_CHECK(back.len == len && (len == 0 || memcmp(back.data, s, len) == 0));
        dq_buf_free(&back);
    }
    FUZZ_CHECK(dq_esc_width(out.data, out.len) <= out.len);

    /* The decoder takes exactly the shortest forms of scalar values, nothing else. */
    uint32_t cp = 0, want = 0;
    size_t n = dq_utf8_decode(s, len, &cp);
    FUZZ_CHECK(n == fuzz_utf8_next(s, len, &want));
    FUZZ_CHECK(n == 0 || cp == want);
    FUZZ_CHECK(n == 0 || dq_esc_is_unsafe(cp) == !fuzz_text_safe(s, n, ""));
    dq_buf_free(&out);
    dq_buf_free(&again);
    return 0;
}
