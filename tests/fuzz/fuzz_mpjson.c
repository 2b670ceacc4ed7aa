/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mpjson.c: msgpack to JSON (dq_mp_to_json in src/fmt/mptext.c), which renders
 * untrusted payloads for `delayq show --json`, `ls --json` and the stdin of `delayq
 * work` handlers. Invariants: a refused value gives DQ_EPROTO and a "msgpack: "
 * message, and is exactly what the tree renderer refuses too; accepted output is one
 * line of terminal-safe UTF-8 that dq_json_to_mp() reads back to msgpack whose JSON is
 * the same text. The one exception is a plain map shaped like a reserved object
 * ({"$base64": ...} and friends): JSON has no way to tell the two apart, so for those
 * only the absence of crashes is checked. The pretty form (dq_mp_to_json_pretty, what
 * fix and requeue puts in an editor) accepts and refuses the same values, and reads back
 * to the same msgpack as the compact one.
 */
#include <string.h>

#include "fmt/json.h"
#include "fmt/mptext.h"
#include "fuzz.h"
#include "lib/mp.h"

enum { K_B64 = 1, K_STR_B64 = 2, K_FLOAT = 4, K_EXT = 8, K_OTHER = 16 };

static unsigned
key_bit(const msgpack_object *k)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        {"$base64", K_B64}, {"$str_base64", K_STR_B64}, {"$float", K_FLOAT}, {"$ext", K_EXT}};

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (k->via.str.size == strlen(names[i].name) &&
            memcmp(k->via.str.ptr, names[i].name, k->via.str.size) == 0)
            return names[i].bit;
    }
    return K_OTHER;
}

/* Sets *@found if @o holds a map shaped like a reserved JSON object anywhere, keys
 * included. */
static void
scan_reserved(const msgpack_object *o, bool *found)
{
    if (o->type == MSGPACK_OBJECT_ARRAY) {
        for (uint32_t i = 0; i < o->via.array.size; i++)
            scan_reserved(&o->via.array.ptr[i], found);
    } else if (o->type == MSGPACK_OBJECT_MAP) {
        unsigned keys = 0;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object *k = &o->via.map.ptr[i].key;
            if (k->type == MSGPACK_OBJECT_STR) {
                keys |= key_bit(k);
            } else {
                scan_reserved(k, found);
                keys |= K_OTHER;
            }
            scan_reserved(&o->via.map.ptr[i].val, found);
        }
        uint32_t n = o->via.map.size;
        if ((n == 1 && (keys == K_B64 || keys == K_STR_B64 || keys == K_FLOAT)) ||
            (n == 2 && keys == (K_EXT | K_B64)))
            *found = true;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dq_buf json = DQ_BUF_INIT, tree = DQ_BUF_INIT, mp = DQ_BUF_INIT, json2 = DQ_BUF_INIT;
    struct dq_buf pretty = DQ_BUF_INIT, mp2 = DQ_BUF_INIT;
    dq_err err = {0};

    int rc = dq_mp_to_json(&json, data, size, &err);
    FUZZ_CHECK(dq_mp_to_tree(&tree, data, size, 0, NULL) == rc);
    FUZZ_CHECK(dq_mp_to_json_pretty(&pretty, data, size, NULL) == rc);
    if (rc != DQ_OK) {
        FUZZ_CHECK(rc == DQ_EPROTO && err.code == DQ_EPROTO);
        FUZZ_CHECK(strncmp(err.msg, "msgpack: ", 9) == 0);
        goto out;
    }
    FUZZ_CHECK(!json.failed && json.len > 0);
    FUZZ_CHECK(fuzz_text_safe(json.data, json.len, ""));
    struct dq_mp_scan scan;
    FUZZ_CHECK(dq_mp_scan(data, size, 0, DQ_MPTEXT_MAX_DEPTH, &scan) && scan.end == size);

    bool reserved = false;
    msgpack_zone zone;
    msgpack_object o;
    size_t off = 0;
    FUZZ_CHECK(msgpack_zone_init(&zone, MSGPACK_ZONE_CHUNK_SIZE));
    FUZZ_CHECK(dq_mp_unpack(data, size, &off, DQ_MPTEXT_MAX_DEPTH, &zone, &o, &scan) == DQ_OK);
    scan_reserved(&o, &reserved);
    msgpack_zone_destroy(&zone);
    rc = dq_json_to_mp(&mp, json.data, json.len, NULL);
    if (!reserved) {
        FUZZ_CHECK(rc == DQ_OK);
        FUZZ_CHECK(dq_mp_to_json(&json2, mp.data, mp.len, NULL) == DQ_OK);
        FUZZ_CHECK(json2.len == json.len && memcmp(json2.data, json.data, json.len) == 0);
        FUZZ_CHECK(fuzz_text_safe(pretty.data, pretty.len, "\n"));
        FUZZ_CHECK(dq_json_to_mp(&mp2, pretty.data, pretty.len, NULL) == DQ_OK);
        FUZZ_CHECK(mp2.len == mp.len && memcmp(mp2.data, mp.data, mp.len) == 0);
    }
out:
    dq_buf_free(&pretty);
    dq_buf_free(&mp2);
    dq_buf_free(&json);
    dq_buf_free(&tree);
    dq_buf_free(&mp);
    dq_buf_free(&json2);
    return 0;
}
