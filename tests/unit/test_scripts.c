/* SPDX-License-Identifier: MIT */
/* test_scripts.c: the embedded script table: every script is there, carries its
 * contract header, and has a well-formed SHA1 (the integration tests check that
 * SCRIPT LOAD returns exactly that SHA1). */
#include "harness/check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "dq_scripts.h"
#include "env.h"
#include "env_build.h"

static void
every_script_has_its_header(void **state)
{
    static const char *const words[] = {"KEYS:", "ARGV:", "Reply:", "Complexity:"};

    for (int i = 0; i < DQ_SCRIPT_COUNT; i++) {
        const struct dq_script_src *s = &dq_script_table[i];
        char first[64];

        assert_int_equal(strlen(s->text), s->len);
        /* the script's own part starts after the prelude with "-- <name>:" */
        snprintf(first, sizeof first, "\n-- %s: ", s->name);
        const char *own = strstr(s->text, first);
        if (own == NULL)
            fail_msg("script %s does not start with \"-- %s: \"", s->name, s->name);
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
            const char *at = strstr(own, words[w]);
            if (at == NULL)
                fail_msg("script %s has no %s line in its header", s->name, words[w]);
        }
    }
}

static void
sha1s_are_hex_and_distinct(void **state)
{
    for (int i = 0; i < DQ_SCRIPT_COUNT; i++) {
        const char *h = dq_script_table[i].sha1;
        assert_int_equal(strlen(h), 40);
        assert_int_equal(strspn(h, "0123456789abcdef"), 40);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(h, dq_script_table[j].sha1);
    }
}

static void
names_match_ids(void **state)
{
    assert_string_equal(dq_script_table[DQ_SCRIPT_ENQUEUE].name, "enqueue");
    assert_string_equal(dq_script_table[DQ_SCRIPT_CLAIM].name, "claim");
    assert_string_equal(dq_script_table[DQ_SCRIPT_AUDIT].name, "audit");
}

/* The function library (lua/embed.py): named with the protocol version, one
 * registration per script under the table's name, no-writes exactly on the readers,
 * allow-oom exactly on the scripts that drain a queue (docs/OPERATIONS.md, "Redis out
 * of memory"), and those call lib.lua's allow_oom() for the EVALSHA path. */
static void
library_registers_every_script(void **state)
{
    static const char *const readers[] = {"stats",        "page",     "find",       "search",
                                          "audit",        "workers",  "config_get", "errors",
                                          "schedule_get", "overview", "keys",       "history"};
    static const char *const drainers[] = {
        "ack",   "fail", "retry", "release", "extend",        "reap",    "heartbeat",
        "claim", "drop", "pause", "cancel",  "schedule_fill", "throttle"};
    char want[200];

    assert_int_equal(strlen(dq_library_text), dq_library_len);
    assert_int_equal(strncmp(dq_library_name, "delayq_v1_", 10), 0);
    snprintf(want, sizeof want, "#!lua name=%s\n", dq_library_name);
    assert_int_equal(strncmp(dq_library_text, want, strlen(want)), 0);
    for (int i = 0; i < DQ_SCRIPT_COUNT; i++) {
        const struct dq_script_src *s = &dq_script_table[i];
        bool reader = false;
        for (size_t r = 0; r < sizeof readers / sizeof readers[0]; r++)
            reader |= strcmp(s->name, readers[r]) == 0;
        bool drainer = false;
        for (size_t r = 0; r < sizeof drainers / sizeof drainers[0]; r++)
            drainer |= strcmp(s->name, drainers[r]) == 0;
        if (reader != s->no_writes)
            fail_msg("script %s: no_writes is %d", s->name, s->no_writes);
        if (drainer != s->allow_oom)
            fail_msg("script %s: allow_oom is %d", s->name, s->allow_oom);
        snprintf(want, sizeof want, "function_name = '%s'%s,\ncallback = function(KEYS, ARGV)\n",
                 s->function,
                 s->no_writes   ? ", flags = {'no-writes'}"
                 : s->allow_oom ? ", flags = {'allow-oom'}"
                                : "");
        if (strstr(dq_library_text, want) == NULL)
            fail_msg("library does not register %s as: %s", s->name, want);
        /* the same permission on the EVALSHA path, where flags need a shebang */
        if (s->allow_oom != (strstr(s->text, "\nallow_oom()\n") != NULL))
            fail_msg("script %s: allow_oom() call does not match its flag", s->name);
    }
    /* the prelude is defined once at library scope, not per function */
    const char *first = strstr(dq_library_text, "local function now_ms()");
    assert_non_null(first);
    assert_null(strstr(first + 1, "local function now_ms()"));
}

/* An envelope template (env_build.c) with its placeholders filled the way enqueue.lua
 * fills them decodes as the envelope of PROTOCOL.md 4.1, for every width of id, max
 * attempts and payload. */
static void
template_filled_in_place_decodes(void **state)
{
    static const size_t id_lens[] = {0, 1, 31, 32, 200};
    static const size_t pay_lens[] = {0, 255, 256, 65535, 65536};
    static const int64_t maxes[] = {0, 127, 128, 65536, 1000000};
    static const int64_t limits[] = {0, 1, 128, 65536, DQ_TIME_LIMIT_MAX};
    static char id[201], pay[65536];

    memset(id, 'i', sizeof id - 1);
    for (size_t k = 0; k < 5; k++) {
        struct dq_buf b = DQ_BUF_INIT;
        struct dq_env e;
        dq_err err;
        size_t il = id_lens[k], idf = il == 0 ? 1 : il < 32 ? 1 + il : 2 + il;

        dq_env_template(&b, il ? id : NULL, il, maxes[k], 0, limits[k], pay, pay_lens[k]);
        assert_false(b.failed);
        unsigned char *m = (unsigned char *)b.data;
        m[10] = 7;                  /* seq 7 */
        m[11 + idf + 1 + 8] = 0x42; /* enqueued: low byte */
        m[11 + idf + 1 + 3] = 0x01; /* enqueued: over 2^32 */
        assert_int_equal(dq_env_decode(m, b.len, &e, &err), DQ_OK);
        assert_int_equal(e.seq, 7);
        assert_int_equal(e.id.len, il);
        assert_int_equal(e.attempt, 0);
        assert_int_equal(e.enqueued_ms, (1LL << 40) + 0x42);
        assert_int_equal(e.max_attempts, maxes[k]);
        assert_int_equal(e.deadline_ms, -1);
        assert_int_equal(e.payload.len, pay_lens[k]);
        /* v2 only with a time limit, so a task without one stays a v1 envelope */
        assert_int_equal(m[0], limits[k] > 0 ? 0x9a : 0x99);
        assert_int_equal(e.time_limit_ms, limits[k] > 0 ? limits[k] : -1);
        assert_int_equal(e.ext.ptr == NULL, limits[k] == 0);
        dq_buf_free(&b);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_script_has_its_header),
        cmocka_unit_test(sha1s_are_hex_and_distinct),
        cmocka_unit_test(names_match_ids),
        cmocka_unit_test(library_registers_every_script),
        cmocka_unit_test(template_filled_in_place_decodes),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/scripts", tests, NULL, NULL);
}
