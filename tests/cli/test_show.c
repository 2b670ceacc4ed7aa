/* SPDX-License-Identifier: MIT */
/*
 * test_show.c: show: one task in every state, human and JSON, its error and trace.
 *
 * The real delayq binary against this executable's own redis-server
 * (tests/harness/cli.h: RUN, ASSERT_EXIT, the library-made task states).
 */
#include "harness/cli.h"

static const char trace_text[] = "Traceback (most recent call last):\n"
                                 "  File \"worker.py\", line 42, in run\n"
                                 "    send(msg)\n"
                                 "  File \"smtp.py\", line 7, in send\n"
                                 "    raise IOError(\"connection reset\")\n"
                                 "OSError: connection reset";

static void
show_tasks(void **state)
{
    struct result r = {0};
    char q[96], id[64], want[256];
    const char *line;

    (void)state;
    test_queue_name(q, sizeof q, "show");
    lib_make_failed(q, "broken", mp_map_kind, sizeof mp_map_kind - 1, "smtp: connection reset",
                    trace_text);
    lib_make_inflight(q, "running");
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "{\"to\":\"a@b.c\",\"n\":[1,2]}");
    ASSERT_EXIT(&r, 0);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--id", "order-42", "--json", "{\"k\":\"v\"}");
    ASSERT_EXIT(&r, 0);

    /* a generated id of a scheduled task (found by walking the set) */
    RUN(&r, "show", id, "-q", q);
    ASSERT_EXIT(&r, 0);
    snprintf(want, sizeof want, "id            %s\n", id);
    ASSERT_HAS(r.out, want);
    ASSERT_HAS(r.out, "state         scheduled\n");
    ASSERT_HAS(r.out, "id kind       generated\n");
    ASSERT_HAS(r.out, "\ndue           ");
    ASSERT_HAS(r.out, " (in "); /* an hour ahead, give or take the ms since enqueue */
    ASSERT_HAS(r.out, "to: \"a@b.c\"");
    ASSERT_HAS(r.out, "- 2");
    assert_terminal_safe("show generated", r.out, r.out_len);

    /* a custom id */
    RUN(&r, "show", "order-42", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "id            order-42\n");
    ASSERT_HAS(r.out, "chosen by the producer");
    ASSERT_HAS(r.out, "k: \"v\"");
    RUN(&r, "show", "order-42", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"id\":\"order-42\"");
    ASSERT_HAS(r.out, "\"custom_id\":true");
    ASSERT_HAS(r.out, "\"payload\":{\"k\":\"v\"}");

    /* in flight */
    RUN(&r, "show", "running", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "state         in flight\n");
    ASSERT_HAS(r.out, "worker        " WORKER "\n");
    ASSERT_HAS(r.out, "lease until");

    /* failed: the error and every line of the stack trace, indented */
    RUN(&r, "show", "broken", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "state         failed\n");
    ASSERT_HAS(r.out, "reason        error\n");
    ASSERT_HAS(r.out, "kind: \"email\"");
    ASSERT_HAS(r.out, "\nerror\n  smtp: connection reset\n");
    line = trace_text;
    ASSERT_HAS(r.out, "\nstack trace\n  Traceback (most recent call last):\n");
    while (*line) {
        size_t len = strcspn(line, "\n");
        snprintf(want, sizeof want, "\n  %.*s\n", (int)len, line);
        ASSERT_HAS(r.out, want);
        line += len + (line[len] == '\n');
    }
    assert_terminal_safe("show failed", r.out, r.out_len);

    RUN(&r, "show", "broken", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"reason\":\"error\"");
    char *s = json_str(r.out, "error");
    assert_string_equal(s, "smtp: connection reset");
    free(s);
    s = json_str(r.out, "trace");
    assert_string_equal(s, trace_text);
    free(s);
    assert_true(json_int(r.out, "failed_ms") > 0);

    /* unknown id: exit 1 naming it */
    RUN(&r, "show", "no-such-task", "-q", q);
    ASSERT_EXIT(&r, 1);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "no-such-task");
    assert_one_line(&r);
    RUN(&r, "show", "-q", q);
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(show_tasks),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("cli/show", tests, cli_group_setup, cli_group_teardown);
}
