/* SPDX-License-Identifier: MIT */
/*
 * test_clipboard.c: what y puts on the clipboard (term_osc52). The OSC 52 sequence
 * carries base64; what it decodes to is pasted later into a terminal or a shell, so a
 * hostile stack trace (any handler's stderr) must arrive there escaped as on the screen:
 * no ESC, BEL, CR, BS, C1 or bidi control, newlines and tabs kept.
 */
#include "harness/check.h"

#include <stdlib.h>
#include <string.h>

#include "fmt/b64.h"
#include "lib/buf.h"
#include "tui/term.h"

/* What the clipboard gets from term_osc52(@s): the decoded payload of the sequence. */
static char *
pasted(const char *s, size_t len)
{
    struct dq_buf seq = DQ_BUF_INIT, out = DQ_BUF_INIT;

    term_osc52(&seq, s, len);
    assert_false(seq.failed);
    assert_true(seq.len >= 8);
    assert_memory_equal(seq.data, "\033]52;c;", 7);
    assert_int_equal(seq.data[seq.len - 1], '\a');
    /* the sequence itself: only base64 between its start and its BEL */
    for (size_t i = 7; i < seq.len - 1; i++)
        assert_non_null(memchr(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", seq.data[i], 65));
    assert_int_equal(dq_b64_decode(&out, seq.data + 7, seq.len - 8), 0);
    dq_buf_puts(&out, ""); /* NUL-terminated */
    dq_buf_free(&seq);
    return dq_buf_steal(&out, NULL);
}

static void
hostile_trace(void **state)
{
    /* the probe's trace: a clipboard write, a screen clear, a link, CR and BS tricks (its
     * literal backslashes come out doubled, as on screen: the escaping is injective) */
    static const char trace[] = "trace \033]52;c;ZWNobyBQV05FRAo=\a\033[2J\033]8;;http://evil."
                                "example/\033\\link\033]8;;\033\\\n\tat safe\rEVIL\b\b\n"
                                "\xc2\x9b"
                                "31m \xe2\x80\xae"
                                "cba\n";
    char *got = pasted(trace, sizeof trace - 1);

    (void)state;
    for (const unsigned char *p = (const unsigned char *)got; *p != '\0'; p++)
        assert_true(*p >= 0x20 ? *p != 0x7f : *p == '\n' || *p == '\t');
    assert_null(strstr(got, "\xc2\x9b"));     /* C1 CSI */
    assert_null(strstr(got, "\xe2\x80\xae")); /* U+202E */
    assert_string_equal(got, "trace \\e]52;c;ZWNobyBQV05FRAo=\\x07\\e[2J\\e]8;;http://evil."
                             "example/\\e\\\\link\\e]8;;\\e\\\\\n\tat safe\\rEVIL\\x08\\x08\n"
                             "\\u{9b}31m \\u{202e}cba\n");
    free(got);
}

static void
plain_text_unchanged(void **state)
{
    static const char json[] = "{\n  \"card\": \"4242\",\n\t\"name\": \"Zoë 東京\"\n}";
    char *got = pasted(json, sizeof json - 1);

    (void)state;
    assert_string_equal(got, json);
    free(got);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostile_trace),
        cmocka_unit_test(plain_text_unchanged),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/clipboard", tests, NULL, NULL);
}
