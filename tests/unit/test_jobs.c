/* SPDX-License-Identifier: MIT */
/*
 * test_jobs.c: the inspector's table of actions (tui/jobs.c): every action has its row,
 * and an action the loop performs itself (copy, search, a queue switch, a prompt's step)
 * runs nothing on the Redis thread. Pure; no terminal, no Redis (the client passed is
 * NULL: a row that called the library would crash here).
 */
#include "harness/check.h"

#include <string.h>

#include "tui/jobs.h"

/* A row left out in the middle of the table (the build's assert sees only its size) has
 * no name: the status line would print NULL. */
static void
every_action_has_a_row(void **state)
{
    for (int a = 0; a < ACT_COUNT; a++) {
        const char *name = job_name((enum action)a);
        if (name == NULL || name[0] == '\0')
            fail_msg("action %d has no row in jobs.c's table", a);
    }
    assert_string_equal(job_name(ACT_REQUEUE), "requeueing");
    assert_string_equal(job_name(ACT_REQUEUE_DELAY), "requeueing");
    assert_string_equal(job_name(ACT_DROP_FILTER), "dropping failed tasks");
    assert_string_equal(job_name(ACT_REPLACE), "requeueing with the new payload");
    assert_string_equal(job_name(ACT_COPY), "working");
    /* the Schedules view: its load and P's two actions */
    assert_string_equal(job_name(ACT_SCHEDULES), "loading the schedules");
    assert_string_equal(job_name(ACT_SCHED_PAUSE), "pausing the schedule");
    assert_string_equal(job_name(ACT_SCHED_RESUME), "resuming the schedule");
    assert_string_equal(job_name(ACT_COUNT), "working");
}

static void
loop_actions_run_nothing_on_the_redis_thread(void **state)
{
    const enum action loop[] = {ACT_NONE,         ACT_COPY,   ACT_SEARCH,
                                ACT_UNFILTER,     ACT_SWITCH, ACT_PAUSE_FOR,
                                ACT_PAUSE_REASON, ACT_SPREAD, ACT_COUNT};

    for (size_t i = 0; i < sizeof loop / sizeof loop[0]; i++) {
        struct job j;
        memset(&j, 0, sizeof j);
        j.act = loop[i];
        job_run(NULL, &j);
        assert_int_equal(j.result.status[0], '\0');
        assert_false(j.result.error);
        job_reset(&j);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_action_has_a_row),
        cmocka_unit_test(loop_actions_run_nothing_on_the_redis_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
