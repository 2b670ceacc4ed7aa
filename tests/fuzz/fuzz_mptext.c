/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mptext.c: msgpack to text for people (src/fmt/mptext.c): the indented tree of
 * `delayq show` and the TUI details pane, the one-line summary of list panes, and the
 * hex dump. Invariants: the tree is terminal-safe UTF-8 whose every line ends in '\n'
 * and starts at the requested indent; a summary is terminal-safe, never longer than
 * asked, and (for a value that renders) a prefix of the uncut summary, which is the
 * escaped JSON; the hex dump has one safe line per 16 bytes.
 */
#include <string.h>

#include "fmt/esc.h"
#include "fmt/mptext.h"
#include "fuzz.h"

#define INDENT 3

static void
check_tree(const uint8_t *data, size_t size)
{
    struct dq_buf tree = DQ_BUF_INIT;

    if (dq_mp_to_tree(&tree, data, size, INDENT, NULL) == DQ_OK) {
        FUZZ_CHECK(!tree.failed && tree.len > 0 && tree.data[tree.len - 1] == '\n');
        FUZZ_CHECK(fuzz_text_safe(tree.data, tree.len, "\n"));
        for (const char *line = tree.data; line < tree.data + tree.len;
             line = strchr(line, '\n') + 1) {
            FUZZ_CHECK(strspn(line, " ") >= INDENT);
        }
    }
    dq_buf_free(&tree);
}

static void
check_summaries(const uint8_t *data, size_t size)
{
    static const size_t widths[] = {0, 1, 2, 3, 4, 9, 40, 80, 300};
    struct dq_buf full = DQ_BUF_INIT, json = DQ_BUF_INIT, want = DQ_BUF_INIT;

    bool renders = dq_mp_to_json(&json, data, size, NULL) == DQ_OK;
    if (renders) {
        dq_esc_text(&want, json.data, json.len, DQ_ESC_KEEP_BACKSLASH); /* JSON's own */
    } else {
        dq_buf_puts(&want, "raw: ");
        dq_esc_text(&want, data, size, 0);
    }
    dq_mp_summary(&full, data, size, SIZE_MAX);
    FUZZ_CHECK(!full.failed && full.len == want.len && memcmp(full.data, want.data, want.len) == 0);

    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        struct dq_buf cut = DQ_BUF_INIT;
        size_t w = widths[i];

        dq_mp_summary(&cut, data, size, w);
        FUZZ_CHECK(!cut.failed && cut.len <= w);
        FUZZ_CHECK(fuzz_text_safe(cut.data, cut.len, ""));
        size_t keep = cut.len;
        if (keep >= 3 && memcmp(cut.data + keep - 3, "\xe2\x80\xa6", 3) == 0 && full.len > w)
            keep -= 3;
        if (renders)
            FUZZ_CHECK(keep <= full.len && memcmp(cut.data, full.data, keep) == 0);
        if (full.len <= w)
            FUZZ_CHECK(cut.len == full.len);
        dq_buf_free(&cut);
    }
    dq_buf_free(&full);
    dq_buf_free(&json);
    dq_buf_free(&want);
}

static void
check_hexdump(const uint8_t *data, size_t size)
{
    struct dq_buf hex = DQ_BUF_INIT;
    size_t lines = 0;

    dq_hexdump(&hex, data, size, 2);
    FUZZ_CHECK(!hex.failed && fuzz_text_safe(hex.data, hex.len, "\n"));
    for (size_t i = 0; i < hex.len; i++)
        lines += hex.data[i] == '\n';
    FUZZ_CHECK(lines == (size + 15) / 16);
    dq_buf_free(&hex);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_tree(data, size);
    check_summaries(data, size);
    check_hexdump(data, size);
    return 0;
}
