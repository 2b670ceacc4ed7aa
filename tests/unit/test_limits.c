/* SPDX-License-Identifier: MIT */
/*
 * test_limits.c: the protocol limits are one set of numbers. lua/lib.lua (read from
 * $DQ_SOURCE_ROOT, and as embedded in every script) names them "local DQ_X = N"; each
 * must be the DQ_X of src/delayq.h, and every such Lua constant must have a C twin.
 */
#include "harness/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delayq.h"
#include "dq_scripts.h"

static const struct {
    const char *name;
    long value;
} c_limits[] = {
    {"DQ_ID_MAX", DQ_ID_MAX},
    {"DQ_CALL_MAX", DQ_CALL_MAX},
    {"DQ_STEP_MAX", DQ_STEP_MAX},
    {"DQ_NEEDLE_MAX", DQ_NEEDLE_MAX},
    {"DQ_HISTORY_MAX", DQ_HISTORY_MAX},
    {"DQ_HISTORY_ERROR_MAX", DQ_HISTORY_ERROR_MAX},
    {"DQ_GROUPS_MAX", DQ_GROUPS_MAX},
    {"DQ_SIGNATURE_MAX", DQ_SIGNATURE_MAX},
    {"DQ_ATTEMPTS_MAX", DQ_ATTEMPTS_MAX},
    {"DQ_TIME_LIMIT_MAX", DQ_TIME_LIMIT_MAX},
    {"DQ_UNIQUE_FOR_MAX", DQ_UNIQUE_FOR_MAX},
    {"DQ_KEY_MAX", DQ_KEY_MAX},
};
#define NLIMITS (sizeof c_limits / sizeof c_limits[0])

/* Checks every "local DQ_X = N" line of Lua text @text: returns how many there are and
 * counts in @seen which C limit each one matched. */
static size_t
check_lua(const char *text, const char *where, int seen[NLIMITS])
{
    size_t found = 0;

    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        char name[64];
        long value;
        int used = 0;

        if (sscanf(line, "local %63[A-Z_] = %ld%n", name, &value, &used) == 2 && used > 0 &&
            strncmp(name, "DQ_", 3) == 0) {
            size_t i = 0;
            while (i < NLIMITS && strcmp(c_limits[i].name, name) != 0)
                i++;
            if (i == NLIMITS)
                fail_msg("%s: %s has no constant of that name in delayq.h", where, name);
            if (value != c_limits[i].value)
                fail_msg("%s: %s is %ld in Lua and %ld in delayq.h", where, name, value,
                         c_limits[i].value);
            seen[i]++;
            found++;
        }
        line = end ? end + 1 : NULL;
    }
    return found;
}

static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (f == NULL)
        fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void
lua_prelude_matches_delayq_h(void **state)
{
    const char *root = getenv("DQ_SOURCE_ROOT");
    int seen[NLIMITS] = {0};
    char path[4096];

    if (root == NULL)
        fail_msg("DQ_SOURCE_ROOT is not set (tests/meson.build sets it)");
    snprintf(path, sizeof path, "%s/lua/lib.lua", root);
    char *text = read_file(path);
    assert_int_equal(check_lua(text, "lua/lib.lua", seen), NLIMITS);
    for (size_t i = 0; i < NLIMITS; i++) {
        if (seen[i] != 1)
            fail_msg("lua/lib.lua defines %s %d times; expected once", c_limits[i].name, seen[i]);
    }
    free(text);
}

static void
embedded_scripts_carry_the_same_limits(void **state)
{
    for (int s = 0; s < DQ_SCRIPT_COUNT; s++) {
        int seen[NLIMITS] = {0};
        assert_int_equal(check_lua(dq_script_table[s].text, dq_script_table[s].name, seen),
                         NLIMITS);
    }
}

static void
derived_limits(void **state)
{
    /* the task key is "c:" + id; the enqueue result holds the longest id */
    assert_int_equal(DQ_TASK_KEY_MAX, DQ_ID_MAX + 2);
    assert_int_equal(sizeof(((dq_enqueued *)0)->id), DQ_ID_MAX + 1);
    assert_int_equal(sizeof(((dq_bulk *)0)->cursor_key), DQ_TASK_KEY_MAX + 1);
    assert_int_equal(DQ_ENQUEUE_CHUNK, DQ_CALL_MAX);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lua_prelude_matches_delayq_h),
        cmocka_unit_test(embedded_scripts_carry_the_same_limits),
        cmocka_unit_test(derived_limits),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/limits", tests, NULL, NULL);
}
