/* SPDX-License-Identifier: MIT */
/*
 * fuzz_b64.c: base64 (src/fmt/b64.c), which carries bin/ext/str bytes through JSON.
 * Invariants: decode(encode(x)) == x for any bytes; text the strict decoder accepts is
 * canonical, so encoding its bytes gives the text back (with the padding it may have
 * left out).
 */
#include <string.h>

#include "fmt/b64.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dq_buf text = DQ_BUF_INIT, bytes = DQ_BUF_INIT, back = DQ_BUF_INIT;

    dq_b64_encode(&text, data, size);
    FUZZ_CHECK(!text.failed && text.len == (size + 2) / 3 * 4);
    FUZZ_CHECK(dq_b64_decode(&bytes, text.data, text.len) == 0);
    FUZZ_CHECK(bytes.len == size && (size == 0 || memcmp(bytes.data, data, size) == 0));

    dq_buf_reset(&bytes);
    if (dq_b64_decode(&bytes, (const char *)data, size) == 0) {
        FUZZ_CHECK(!bytes.failed);
        dq_b64_encode(&back, bytes.data, bytes.len);
        size_t pad = back.len - size;
        FUZZ_CHECK(back.len >= size && pad <= 2);
        FUZZ_CHECK(memcmp(back.data, data, size) == 0);
        FUZZ_CHECK(memcmp(back.data + size, "==", pad) == 0);
    }
    dq_buf_free(&text);
    dq_buf_free(&bytes);
    dq_buf_free(&back);
    return 0;
}
