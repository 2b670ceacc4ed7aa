/* SPDX-License-Identifier: MIT */
/*
 * test_esc.c: terminal-safe text. Every hostile sequence a payload could carry (CSI,
 * OSC 52, C1 in both forms, invalid UTF-8, bidi overrides) comes out escaped, and a
 * scan of the output proves no byte a terminal would act on survives.
 */
#include "harness/check.h"

#include <string.h>

#include "fmt/esc.h"
#include "lib/buf.h"

/*
 * Fails if @s holds a raw C0 control (other than those @flags keeps), DEL, a C1
 * control in UTF-8 form, a bidi control, or any invalid UTF-8.
 */
static void
assert_terminal_safe(const char *s, size_t len, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;

    assert_true(dq_utf8_valid(s, len));
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = dq_utf8_decode(p + i, len - i, &cp);
        assert_true(n > 0);
        if (cp == '\n' && (flags & DQ_ESC_KEEP_NL)) {
            i += n;
            continue;
        }
        if (cp == '\t' && (flags & DQ_ESC_KEEP_TAB)) {
            i += n;
            continue;
        }
        assert_false(cp < 0x20);
        assert_false(cp >= 0x7f && cp <= 0x9f);
        assert_false(cp >= 0x202a && cp <= 0x202e);
        assert_false(cp >= 0x2066 && cp <= 0x2069);
        i += n;
    }
}

/* Escapes @in and compares with @want; also checks the output is safe. */
static void
check(const char *in, size_t len, unsigned flags, const char *want)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_esc_text(&b, in, len, flags);
    assert_false(b.failed);
    assert_non_null(b.data);
    assert_string_equal(b.data, want);
    assert_int_equal(b.len, strlen(want));
    assert_terminal_safe(b.data, b.len, flags);
    dq_buf_free(&b);
}

#define CHECK(lit, flags, want) check(lit, sizeof(lit) - 1, flags, want)

static void
test_plain_text_copied(void **state)
{
    (void)state;
    CHECK("", 0, "");
    CHECK("hello, world", 0, "hello, world");
    /* a backslash is doubled, so the text "\x41" cannot pass for an escaped byte */
    CHECK("C:\\Users\\job\\x41", 0, "C:\\\\Users\\\\job\\\\x41");
    CHECK("C:\\x41", DQ_ESC_KEEP_BACKSLASH, "C:\\x41");
    CHECK("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", 0,
          "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
    CHECK("\xc2\xa0nbsp", 0, "\xc2\xa0nbsp"); /* U+00A0: first code point after C1 */
}

static void
test_csi_and_osc(void **state)
{
    (void)state;
    CHECK("\x1b[2J\x1b[H", 0, "\\e[2J\\e[H");
    /* OSC 52: set the clipboard, terminated by BEL and by ST */
    CHECK("\x1b]52;c;cm0gLXJmIH4=\x07", 0, "\\e]52;c;cm0gLXJmIH4=\\x07");
    CHECK("\x1b]52;c;eA==\x1b\\", 0, "\\e]52;c;eA==\\e\\\\");
    CHECK("a\x7f"
          "b",
          0, "a\\x7fb");
    CHECK("nul\0byte", 0, "nul\\x00byte");
}

static void
test_c1_controls(void **state)
{
    (void)state;
    /* U+009B (CSI) in UTF-8 form, and U+0085 (NEL) */
    CHECK("\xc2\x9b"
          "2J",
          0, "\\u{9b}2J");
    CHECK("\xc2\x85", 0, "\\u{85}");
    CHECK("\xc2\x80\xc2\x9f", 0, "\\u{80}\\u{9f}");
    /* a raw 8-bit C1 byte is invalid UTF-8 */
    CHECK("\x9b"
          "2J",
          0, "\\x9b2J");
}

static void
test_newline_tab_flags(void **state)
{
    (void)state;
    CHECK("a\nb\tc\rd", 0, "a\\nb\\tc\\rd");
    CHECK("a\nb\tc\rd", DQ_ESC_KEEP_NL, "a\nb\\tc\\rd");
    CHECK("a\nb\tc\rd", DQ_ESC_KEEP_TAB, "a\\nb\tc\\rd");
    CHECK("a\nb\tc\rd", DQ_ESC_KEEP_NL | DQ_ESC_KEEP_TAB, "a\nb\tc\\rd");
}

static void
test_invalid_utf8(void **state)
{
    (void)state;
    CHECK("\xff\xc0\x80", 0, "\\xff\\xc0\\x80");
    CHECK("\xc0\xaf", 0, "\\xc0\\xaf");                   /* overlong '/' */
    CHECK("\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
    CHECK("\xf0\x80\x80\xaf", 0, "\\xf0\\x80\\x80\\xaf"); /* overlong, 4 bytes */
    CHECK("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");          /* surrogate U+D800 */
    CHECK("\xed\xbf\xbf", 0, "\\xed\\xbf\\xbf");          /* surrogate U+DFFF */
    CHECK("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"); /* U+110000 */
    CHECK("\xf5\x80\x80\x80", 0, "\\xf5\\x80\\x80\\x80");
    CHECK("ab\xe2\x82", 0, "ab\\xe2\\x82"); /* truncated at the end */
    CHECK("\xe2\x82z", 0, "\\xe2\\x82z");   /* truncated in the middle */
    CHECK("\x80", 0, "\\x80");              /* lone continuation */
    /* the largest valid scalars on each side of the checks */
    CHECK("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf", 0,
          "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf");
}

static void
test_bidi_controls(void **state)
{
    (void)state;
    /* RLO, the Trojan Source override */
    CHECK("user\xe2\x80\xaegnp.exe", 0, "user\\u{202e}gnp.exe");
    CHECK("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0,
          "\\u{202a}\\u{202b}\\u{202c}\\u{202d}");
    CHECK("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 0,
          "\\u{2066}\\u{2067}\\u{2068}\\u{2069}");
    /* neighbours that are not controls stay */
    CHECK("\xe2\x80\xa9\xe2\x80\xaf", 0, "\xe2\x80\xa9\xe2\x80\xaf");
}

/* Every byte value, alone and after each lead byte, comes out safe. */
static void
test_all_bytes_safe(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    unsigned char in[512];
    (void)state;

    for (int i = 0; i < 256; i++) {
        in[2 * i] = (unsigned char)i;
        in[2 * i + 1] = (unsigned char)(255 - i);
    }
    dq_esc_text(&b, in, sizeof in, 0);
    assert_false(b.failed);
    assert_terminal_safe(b.data, b.len, 0);
    for (int lead = 0xc0; lead < 0x100; lead++) {
        for (int next = 0; next < 0x100; next++) {
            unsigned char two[3] = {(unsigned char)lead, (unsigned char)next, 0x80};
            dq_buf_reset(&b);
            dq_esc_text(&b, two, sizeof two, DQ_ESC_KEEP_NL);
            assert_terminal_safe(b.data, b.len, DQ_ESC_KEEP_NL);
        }
    }
    dq_buf_free(&b);
}

/* Every string of up to 3 symbols from an alphabet of the bytes that escapes are made
 * of, and of the bytes they stand for, escapes to a different text: what is shown names
 * one byte string. (Before backslashes were escaped, "\\e" and ESC both showed \e.) */
static void
test_injective(void **state)
{
    static const char alphabet[] = {'\\', 'e', 'x', '0', 'n', 'u', '{', 0x1b, '\0', '\n'};
    enum { SYMS = sizeof alphabet, MAXLEN = 3 };
    struct dq_buf out[1 + SYMS + SYMS * SYMS + SYMS * SYMS * SYMS];
    size_t n = 0;
    (void)state;

    CHECK("\\e[2J", 0, "\\\\e[2J");
    CHECK("\x1b[2J", 0, "\\e[2J");
    for (size_t len = 0; len <= MAXLEN; len++) {
        size_t count = 1;
        for (size_t k = 0; k < len; k++)
            count *= SYMS;
        for (size_t code = 0; code < count; code++) {
            char in[MAXLEN];
            size_t c = code;
            for (size_t k = 0; k < len; k++, c /= SYMS)
                in[k] = alphabet[c % SYMS];
            out[n] = (struct dq_buf)DQ_BUF_INIT;
            dq_esc_text(&out[n], in, len, 0);
            assert_false(out[n].failed);
            /* and what is shown reads back to the bytes (delayq queues --forget) */
            struct dq_buf back = DQ_BUF_INIT;
            assert_int_equal(dq_esc_unescape(&back, out[n].data, out[n].len, NULL), DQ_OK);
            assert_int_equal(back.len, len);
            assert_memory_equal(back.data, in, len);
            dq_buf_free(&back);
            n++;
        }
    }
    assert_int_equal(n, sizeof out / sizeof out[0]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            assert_false(out[i].len == out[j].len &&
                         memcmp(out[i].data, out[j].data, out[i].len) == 0);
    for (size_t i = 0; i < n; i++)
        dq_buf_free(&out[i]);
}

static void
test_unescape(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    dq_err err = {0};
    (void)state;

    assert_int_equal(dq_esc_unescape(&b, "a\\x00b\\u{202e}\\\\\\e", 18, &err), DQ_OK);
    assert_int_equal(b.len, 8);
    assert_memory_equal(b.data, "a\0b\xe2\x80\xae\\\x1b", 8);
    dq_buf_reset(&b);
    /* every byte, escaped, reads back */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    struct dq_buf e = DQ_BUF_INIT;
    dq_esc_text(&e, all, sizeof all, 0);
    assert_int_equal(dq_esc_unescape(&b, e.data, e.len, &err), DQ_OK);
    assert_int_equal(b.len, sizeof all);
    assert_memory_equal(b.data, all, sizeof all);
    dq_buf_free(&e);
    /* what delayq never writes is refused, naming the byte */
    const char *bad[] = {"ab\\q", "\\x4", "\\u{}", "\\u{d800}", "\\u{110000}", "x\\"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dq_buf_reset(&b);
        assert_int_equal(dq_esc_unescape(&b, bad[i], strlen(bad[i]), &err), DQ_EINVAL);
        assert_non_null(strstr(err.msg, "byte "));
    }
    dq_buf_free(&b);
}

static void
test_appends(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    (void)state;

    dq_buf_puts(&b, "id=");
    dq_esc_text(&b, "\x1b", 1, 0);
    dq_esc_text(&b, "x", 1, 0);
    assert_string_equal(b.data, "id=\\ex");
    dq_buf_free(&b);
}

static void
test_utf8_decode(void **state)
{
    uint32_t cp = 0;
    (void)state;

    assert_int_equal(dq_utf8_decode("A", 1, &cp), 1);
    assert_int_equal(cp, 'A');
    assert_int_equal(dq_utf8_decode("\xc3\xa9", 2, &cp), 2);
    assert_int_equal(cp, 0xe9);
    assert_int_equal(dq_utf8_decode("\xe2\x80\xae", 3, &cp), 3);
    assert_int_equal(cp, 0x202e);
    assert_int_equal(dq_utf8_decode("\xf4\x8f\xbf\xbf", 4, &cp), 4);
    assert_int_equal(cp, 0x10ffff);
    assert_int_equal(dq_utf8_decode("\xe2\x80\xae", 2, &cp), 0);
    assert_int_equal(dq_utf8_decode("", 0, &cp), 0);
    assert_true(dq_utf8_valid("plain \xc3\xa9", 8));
    assert_false(dq_utf8_valid("\xed\xa0\x80", 3));
}

static void
test_width(void **state)
{
    (void)state;
    assert_int_equal(dq_esc_width("", 0), 0);
    assert_int_equal(dq_esc_width("abc", 3), 3);
    assert_int_equal(dq_esc_width("caf\xc3\xa9", 5), 4);
    assert_int_equal(dq_esc_width("e\xcc\x81", 3), 1);                /* e + U+0301 */
    assert_int_equal(dq_esc_width("\xe6\x97\xa5\xe6\x9c\xac", 6), 4); /* 日本 */
    assert_int_equal(dq_esc_width("\xed\x95\x9c", 3), 2);             /* 한 */
    assert_int_equal(dq_esc_width("\xef\xbc\xa1", 3), 2);             /* fullwidth A */
    assert_int_equal(dq_esc_width("\xf0\x9f\x98\x80", 4), 2);         /* U+1F600 */
    assert_int_equal(dq_esc_width("\xf0\x9f\xa5\xb0", 4), 2);         /* U+1F970 */
    assert_int_equal(dq_esc_width("a\xe2\x80\x8b"
                                  "b",
                                  5),
                     2);                                      /* ZWSP */
    assert_int_equal(dq_esc_width("\xef\xbd\xa1", 3), 1);     /* halfwidth 。 */
    assert_int_equal(dq_esc_width("\xff", 1), 1);             /* stray byte */
    assert_int_equal(dq_esc_width("\xf0\xa0\x80\x80", 4), 2); /* U+20000 */

    /* the width of escaped text counts the escape */
    struct dq_buf b = DQ_BUF_INIT;
    dq_esc_text(&b, "\x1b[1m\xe6\x97\xa5", 7, 0);
    assert_string_equal(b.data, "\\e[1m\xe6\x97\xa5");
    assert_int_equal(dq_esc_width(b.data, b.len), 7);
    dq_buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text_copied), cmocka_unit_test(test_csi_and_osc),
        cmocka_unit_test(test_c1_controls),       cmocka_unit_test(test_newline_tab_flags),
        cmocka_unit_test(test_invalid_utf8),      cmocka_unit_test(test_bidi_controls),
        cmocka_unit_test(test_all_bytes_safe),    cmocka_unit_test(test_appends),
        cmocka_unit_test(test_injective),         cmocka_unit_test(test_unescape),
        cmocka_unit_test(test_utf8_decode),       cmocka_unit_test(test_width),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/esc", tests, NULL, NULL);
}
