/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpjson.c: msgpack to JSON (dq_mp_to_json in src/fmt/mptext.c), which renders
 * untrusted payloads for `delayq show --json`, `ls --json` and the stdin of `delayq
 * work` handlers. Invariants: a refused value gives DQ_EPROTO and a "msgpack: "
 * message, and is exactly what the tree renderer refuses too; accepted output is one
 * line of terminal-safe UTF-8 that dq_json_to_mp() reads back to msgpack whose JSON is
 * the same text. The one exception is a plain map shaped like a reserved object
 * ({"$base64": ...} and friends): JSON has no way to tell the two apart, so for those
 * only the absence of crashes is checked.
 */
#include <string.h>

#include "fmt/json.h"
#include "fmt/mp.h"
#include "fmt/mptext.h"
#include "fuzz.h"

enum { K_B64 = 1, K_STR_B64 = 2, K_FLOAT = 4, K_EXT = 8, K_OTHER = 16 };

static unsigned
key_bit(const struct dq_mp_item *k)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        {"$base64", K_B64}, {"$str_base64", K_STR_B64}, {"$float", K_FLOAT}, {"$ext", K_EXT}};

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (k->len == strlen(names[i].name) && memcmp(k->ptr, names[i].name, k->len) == 0)
            return names[i].bit;
    }
    return K_OTHER;
}

/* Sets *@found if the (well-formed) value at @r holds a map shaped like a reserved
 * JSON object anywhere, keys included. */
static void
scan_reserved(struct dq_mp_reader *r, bool *found)
{
    struct dq_mp_item it;

    if (!dq_mp_read(r, &it))
        return;
    if (it.type == DQ_MP_ARRAY) {
        for (uint32_t i = 0; i < it.len; i++)
            scan_reserved(r, found);
    } else if (it.type == DQ_MP_MAP) {
        unsigned keys = 0;
        for (uint32_t i = 0; i < it.len; i++) {
            struct dq_mp_reader save = *r;
            struct dq_mp_item k;
            if (dq_mp_read(r, &k) && k.type == DQ_MP_STR) {
                keys |= key_bit(&k);
            } else {
                *r = save;
                scan_reserved(r, found);
                keys |= K_OTHER;
            }
            scan_reserved(r, found);
        }
        if ((it.len == 1 && (keys == K_B64 || keys == K_STR_B64 || keys == K_FLOAT)) ||
            (it.len == 2 && keys == (K_EXT | K_B64)))
            *found = true;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dq_buf json = DQ_BUF_INIT, tree = DQ_BUF_INIT, mp = DQ_BUF_INIT, json2 = DQ_BUF_INIT;
    dq_err err = {0};

    int rc = dq_mp_to_json(&json, data, size, &err);
    FUZZ_CHECK(dq_mp_to_tree(&tree, data, size, 0, NULL) == rc);
    if (rc != DQ_OK) {
        FUZZ_CHECK(rc == DQ_EPROTO && err.code == DQ_EPROTO);
        FUZZ_CHECK(strncmp(err.msg, "msgpack: ", 9) == 0);
        goto out;
    }
    FUZZ_CHECK(!json.failed && json.len > 0);
    FUZZ_CHECK(fuzz_text_safe(json.data, json.len, ""));
    struct dq_mp_reader r;
    dq_mp_reader_init(&r, data, size);
    FUZZ_CHECK(dq_mp_skip(&r, DQ_MPTEXT_MAX_DEPTH) && dq_mp_at_end(&r));

    bool reserved = false;
    dq_mp_reader_init(&r, data, size);
    scan_reserved(&r, &reserved);
    rc = dq_json_to_mp(&mp, json.data, json.len, NULL);
    if (!reserved) {
        FUZZ_CHECK(rc == DQ_OK);
        FUZZ_CHECK(dq_mp_to_json(&json2, mp.data, mp.len, NULL) == DQ_OK);
        FUZZ_CHECK(json2.len == json.len && memcmp(json2.data, json.data, json.len) == 0);
    }
out:
    dq_buf_free(&json);
    dq_buf_free(&tree);
    dq_buf_free(&mp);
    dq_buf_free(&json2);
    return 0;
}
