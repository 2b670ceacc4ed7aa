/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dur.c: duration and time parsing and formatting (src/lib/dur.c), which read
 * --delay, --at and friends from the command line. Invariants: accepted values are in
 * range and read back exactly from their plain millisecond form; a formatted duration
 * reads back to the value truncated to the unit it shows; a formatted time reads back
 * exactly; a refused input leaves 0 and a message that starts with the field name and
 * holds no control byte; formatting any int64 fits the documented buffer sizes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lib/dur.h"

static void
check_refusal(int rc, int64_t v, const dq_err *err, const char *field)
{
    FUZZ_CHECK(rc == DQ_EINVAL && err->code == DQ_EINVAL && v == 0);
    FUZZ_CHECK(strncmp(err->msg, field, strlen(field)) == 0);
    FUZZ_CHECK(fuzz_text_safe(err->msg, strlen(err->msg), ""));
}

/* The step dq_dur_format() truncates @ms to (see its comment in dur.h). */
static int64_t
shown_step(int64_t ms)
{
    if (ms < 1000)
        return 1;
    if (ms < 60000)
        return 100;
    if (ms < 3600000)
        return 1000;
    if (ms < 86400000)
        return 60000;
    return 3600000;
}

static void
check_dur(const char *s)
{
    dq_err err = {0};
    int64_t v = -1, back = -1;
    char buf[DQ_DUR_BUFSZ];

    int rc = dq_dur_parse(s, "--delay", &v, &err);
    if (rc != DQ_OK) {
        check_refusal(rc, v, &err, "--delay");
        return;
    }
    FUZZ_CHECK(v >= 0 && v <= DQ_DUR_MAX_MS);
    snprintf(buf, sizeof buf, "%" PRId64 "ms", v);
    FUZZ_CHECK(dq_dur_parse(buf, NULL, &back, NULL) == DQ_OK && back == v);

    size_t n = dq_dur_format(buf, sizeof buf, v);
    FUZZ_CHECK(n < sizeof buf && strlen(buf) == n);
    FUZZ_CHECK(dq_dur_parse(buf, NULL, &back, NULL) == DQ_OK);
    FUZZ_CHECK(back <= v && v - back < shown_step(v));
}

static void
check_time(const char *s)
{
    dq_err err = {0};
    int64_t v = -1, back = -1;
    char buf[DQ_TIME_BUFSZ];

    int rc = dq_time_parse(s, "--at", &v, &err);
    if (rc != DQ_OK) {
        check_refusal(rc, v, &err, "--at");
        return;
    }
    FUZZ_CHECK(v >= 0 && v <= DQ_TIME_MAX_MS);
    size_t n = dq_time_format(buf, sizeof buf, v);
    FUZZ_CHECK(n < sizeof buf && strlen(buf) == n);
    FUZZ_CHECK(dq_time_parse(buf, NULL, &back, NULL) == DQ_OK && back == v);
    snprintf(buf, sizeof buf, "%" PRId64, v);
    FUZZ_CHECK(dq_time_parse(buf, NULL, &back, NULL) == DQ_OK && back == v);
}

/* Any int64, including INT64_MIN, formats within the documented sizes. */
static void
check_format(const uint8_t *data, size_t size)
{
    uint64_t u = 0;
    char buf[64];

    memcpy(&u, data, size < sizeof u ? size : sizeof u);
    int64_t ms = (int64_t)u;
    size_t n = dq_dur_format(buf, sizeof buf, ms);
    FUZZ_CHECK(n < DQ_DUR_BUFSZ && strlen(buf) == n);
    FUZZ_CHECK(dq_dur_format(NULL, 0, ms) == n);
    n = dq_time_format(buf, sizeof buf, ms);
    FUZZ_CHECK(n < DQ_TIME_BUFSZ && strlen(buf) == n);
    FUZZ_CHECK(dq_time_format(NULL, 0, ms) == n);
    char small[5];
    FUZZ_CHECK(dq_time_format(small, sizeof small, ms) == n && strlen(small) == (n < 4 ? n : 4));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);

    check_dur(s);
    check_time(s);
    check_format(data, size);
    free(s);
    return 0;
}
