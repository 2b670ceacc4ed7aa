/* SPDX-License-Identifier: MIT */
/*
 * test_enqueue.c: enqueue: payloads in every form (--json, stdin, --file) byte exact, ids, limits,
 * bad input, --at and the task options; JSON numbers exact or refused.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

#include <time.h>

static void
enqueue_json_round_trips(void **state)
{
    /* Written the way the command prints JSON, so a round trip is textually equal. */
    static const char payload[] =
        "{\"s\":\"h\xc3\xa9llo \\\"q\\\" \\\\ / \\n\\t\",\"n\":-42,\"big\":9007199254740993,"
        "\"u64\":18446744073709551615,\"f\":1.5,\"arr\":[true,false,null,[],{}],"
        "\"u\":\"\xe2\x82\xac\xf0\x9f\x98\x80\",\"nested\":{\"a\":{\"b\":[1,2,3]}}}";
    struct result r = {0};
    char q[96], id[64], got[1024], line[4096];

    (void)state;
    test_queue_name(q, sizeof q, "enq-json");
    RUN(&r, "enqueue", "-q", q, "--json", payload);
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.err_len, 0);
    assert_int_equal(count_lines(r.out), 1);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    assert_true(id[0] != '\0' && strspn(id, "0123456789") == strlen(id)); /* generated */

    RUN(&r, "ls", "due", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    assert_true(nth_line(r.out, 0, line, sizeof line));
    char *jid = json_str(line, "id");
    assert_string_equal(jid, id);
    free(jid);
    json_value(line, "payload", got, sizeof got);
    assert_string_equal(got, payload);

    RUN(&r, "show", id, "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    json_value(r.out, "payload", got, sizeof got);
    assert_string_equal(got, payload);
    ASSERT_HAS(r.out, "\"state\":\"scheduled\"");
    ASSERT_HAS(r.out, "\"custom_id\":false");

    /* invalid JSON is bad input, and nothing is added */
    RUN(&r, "enqueue", "-q", q, "--json", "{\"a\":");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    assert_one_line(&r);
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "enqueued"), 1);
    result_free(&r);
}

/* Bytes that are not msgpack (0xc1 is never used), then every byte value, many times. */
static unsigned char *
binary_payload(size_t n)
{
    unsigned char *p = malloc(n);

    p[0] = 0xc1;
    for (size_t i = 1; i < n; i++)
        p[i] = (unsigned char)((i * 7 + i / 256) & 0xff);
    return p;
}

/* show --json of @id must carry exactly @want as {"$raw_base64": ...}. */
static void
assert_raw_payload(const char *q, const char *id, const unsigned char *want, size_t want_len)
{
    struct result r = {0};
    const char *v;
    unsigned char *got;
    size_t got_len;

    RUN(&r, "show", id, "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    v = json_find(r.out, "payload");
    assert_non_null(v);
    if (strncmp(v, "{\"$raw_base64\":\"", 16) != 0)
        fail_msg("payload is not raw base64: %s", esc(v, strlen(v)));
    got = b64_decode(v + 16, &got_len);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
    free(got);
    result_free(&r);
}

static void
enqueue_stdin_is_byte_exact(void **state)
{
    struct result r = {0};
    char q[96], id[64];
    size_t n = 70000; /* more than a pipe buffer */
    unsigned char *p = binary_payload(n);

    (void)state;
    test_queue_name(q, sizeof q, "enq-stdin");
    RUN_IN(&r, p, n, "enqueue", "-q", q, "-");
    ASSERT_EXIT(&r, 0);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    assert_raw_payload(q, id, p, n);

    /* a NUL in the middle and a trailing newline are payload too */
    RUN_IN(&r, "\xc1\0mid\n", 6, "enqueue", "-q", q, "--id", "with-nul", "-");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "with-nul\n");
    assert_raw_payload(q, "with-nul", (const unsigned char *)"\xc1\0mid\n", 6);
    free(p);
    result_free(&r);
}

static void
enqueue_file_is_byte_exact(void **state)
{
    struct result r = {0};
    char q[96], id[64], dir[] = "/tmp/dq-cli-XXXXXX", path[128], missing[160];
    size_t n = 5000;
    unsigned char *p = binary_payload(n);
    FILE *f;

    (void)state;
    test_queue_name(q, sizeof q, "enq-file");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/payload.bin", dir);
    snprintf(missing, sizeof missing, "%s/missing.bin", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);

    RUN(&r, "enqueue", "-q", q, "--file", path);
    ASSERT_EXIT(&r, 0);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    assert_raw_payload(q, id, p, n);

    RUN(&r, "enqueue", "-q", q, "--file", missing);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "missing.bin");
    assert_one_line(&r);

    unlink(path);
    rmdir(dir);
    free(p);
    result_free(&r);
}

static void
enqueue_duplicate_id(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "enq-dup");
    RUN(&r, "enqueue", "-q", q, "--id", "order-7", "--delay", "1h", "--json", "{\"v\":1}");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "order-7\n");
    assert_int_equal(r.err_len, 0);

    RUN(&r, "enqueue", "-q", q, "--id", "order-7", "--json", "{\"v\":2}");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "order-7\n");
    ASSERT_HAS(r.err, "order-7");
    ASSERT_HAS(r.err, "already exists");
    assert_one_line(&r);

    /* the first one is kept, unchanged and still in the future */
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "future"), 1);
    assert_int_equal(json_int(r.out, "due"), 0);
    RUN(&r, "show", "order-7", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"payload\":{\"v\":1}");
    ASSERT_HAS(r.out, "\"custom_id\":true");
    result_free(&r);
}

static void
enqueue_limits(void **state)
{
    struct result r = {0};
    char q[96];
    size_t max = 1048576;
    unsigned char *p = binary_payload(max + 1);

    (void)state;
    test_queue_name(q, sizeof q, "enq-limits");
    RUN(&r, "enqueue", "-q", q, "--delay", "8d", "--json", "1");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "max_delay_ms");
    assert_one_line(&r);

    RUN(&r, "enqueue", "-q", q, "--at", "2999-01-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_delay_ms");

    RUN_IN(&r, p, max + 1, "enqueue", "-q", q, "-");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "max_payload");
    assert_one_line(&r);

    /* exactly the limit is fine; 7d exactly too */
    RUN_IN(&r, p, max, "enqueue", "-q", q, "--id", "max", "-");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "max\n");
    RUN(&r, "enqueue", "-q", q, "--delay", "7d", "--json", "1");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "enqueued"), 2);
    assert_raw_payload(q, "max", p, max);
    free(p);
    result_free(&r);
}

static void
enqueue_bad_input(void **state)
{
    struct result r = {0};
    char q[96], longid[202];

    (void)state;
    test_queue_name(q, sizeof q, "enq-bad");
    memset(longid, 'x', 201);
    longid[201] = '\0';

    RUN(&r, "enqueue", "-q", q, "--delay", "5x", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--delay");
    ASSERT_HAS(r.err, "5x");
    assert_one_line(&r);

    RUN(&r, "enqueue", "-q", q, "--delay", "5s", "--at", "2020-01-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--delay");
    ASSERT_HAS(r.err, "--at");

    RUN(&r, "enqueue", "-q", q, "--at", "2020-13-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--at");
    RUN(&r, "enqueue", "-q", q, "--at", "tomorrow", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--at");

    RUN(&r, "enqueue", "-q", q); /* no payload */
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--json", "1", "-"); /* two payloads */
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--json"); /* missing value */
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--id", "", "--json", "1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--id", longid, "--json", "1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--id", "a\x1b[2Jb", "--json", "1");
    ASSERT_EXIT(&r, 2);
    assert_false(has_bytes(r.err, r.err_len, "\x1b", 1));
    RUN(&r, "enqueue", "-q", q, "--max-attempts", "many", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--max-attempts");
    RUN(&r, "enqueue", "-q", q, "--deadline", "0", "--json", "1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--bogus", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--bogus");

    /* none of these reached the queue: it was not even made */
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not known");
    assert_int_equal(r.out_len, 0);
    result_free(&r);
}

static void
enqueue_at_and_options(void **state)
{
    struct result r = {0};
    char q[96], at[32];
    struct timespec ts;
    long long at_ms, due;

    (void)state;
    test_queue_name(q, sizeof q, "enq-at");
    /* RFC 3339 in the past: due now */
    RUN(&r, "enqueue", "-q", q, "--id", "past", "--at", "2020-01-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "past ");
    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, "past");

    /* epoch milliseconds, an hour ahead (the server runs on this host's clock) */
    clock_gettime(CLOCK_REALTIME, &ts);
    at_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 3600 * 1000;
    snprintf(at, sizeof at, "%lld", at_ms);
    RUN(&r, "enqueue", "-q", q, "--id", "later", "--at", at, "--max-attempts", "3", "--deadline",
        "1m", "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "show", "later", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    due = json_int(r.out, "due_ms");
    assert_int_equal(due, at_ms);
    assert_int_equal(json_int(r.out, "deadline_ms"), at_ms + 60000);
    assert_int_equal(json_int(r.out, "max_attempts"), 3);
    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "later ");
    ASSERT_HAS(r.out, "0/3");

    /* --max-attempts 0 is unlimited */
    RUN(&r, "enqueue", "-q", q, "--id", "forever", "--delay", "1h", "--max-attempts", "0", "--json",
        "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "show", "forever", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "unlimited");
    result_free(&r);
}

/* Numbers are exact or refused: an integer past 64 bits is not stored as a nearby double
 * (enqueue, and requeue --json / --file), with the path and the limit, exit 2, nothing
 * written; a double that would be inf is refused the same way. */
static void
json_numbers_exact_or_refused(void **state)
{
    struct result r = {0};
    char q[96], path[300];

    (void)state;
    test_queue_name(q, sizeof q, "json-num");
    lib_make_failed(q, "inv", mp_total_old, sizeof mp_total_old - 1, "total does not add up", "");
    RUN(&r, "enqueue", "-q", q, "--json", "{\"n\":18446744073709551615}");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--json", "{\"n\":18446744073709551616}");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "json: $.n: integer 18446744073709551616 is outside "
                      "-9223372036854775808..18446744073709551615");
    RUN(&r, "enqueue", "-q", q, "--json", "[0,{\"x\":-1e400}]");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "json: $[1].x: number -1e400 is too large for a double");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "enqueued"), 2); /* "inv" and the first one */

    RUN(&r, "requeue", "inv", "-q", q, "--json", "{\"total\":99999999999999999999}");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--json: json: $.total: integer 99999999999999999999 is outside ");
    ASSERT_HAS(r.err, "nothing changed");
    snprintf(path, sizeof path, "%s/json-num.json", cli_redis.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"total\": [1, -9223372036854775809]}", f);
    fclose(f);
    RUN(&r, "requeue", "inv", "-q", q, "--file", path);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--file: json: $.total[1]: integer -9223372036854775809 is outside ");
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.50\"}");
    unlink(path);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enqueue_json_round_trips),
        cmocka_unit_test(json_numbers_exact_or_refused),
        cmocka_unit_test(enqueue_stdin_is_byte_exact),
        cmocka_unit_test(enqueue_file_is_byte_exact),
        cmocka_unit_test(enqueue_duplicate_id),
        cmocka_unit_test(enqueue_limits),
        cmocka_unit_test(enqueue_bad_input),
        cmocka_unit_test(enqueue_at_and_options),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/enqueue", tests, cli_group_setup, cli_group_teardown);
}
