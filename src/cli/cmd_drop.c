/* SPDX-License-Identifier: MIT */
/* cmd_drop.c: delayq drop: delete failed or scheduled tasks for good, by id, all the failed
 * ones, an error group, a text match or a task key, and a task key's parked tasks. */
#include <stdio.h>

#include "cli.h"
#include "ops.h"
#include "opts.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    struct ops_sel o;
    dq_err err = {0};
    int rc;

    if ((rc = ops_select(g, args, "all-failed", &o)) != DQ_EXIT_OK)
        return rc;
    bool parked = cli_has(args, "parked");
    if (parked && o.filter.kind != DQ_FILTER_KEY)
        return cli_usage_error(g, "--parked needs --key KEY (the key whose parked tasks go)");
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (parked) {
        dq_bulk cur = {0};
        while (!cur.done) {
            if (dq_drop_parked_step(g->client, g->queue, o.filter.value, 0, &cur, &err) != DQ_OK)
                return ops_bulk_stopped(g, "drop-parked", "dropping", &cur, false, &err);
        }
        printf("dropped %zu parked\n", cur.done_n);
        return DQ_EXIT_OK;
    }
    if (o.n > 0) {
        size_t dropped;
        if (dq_drop(g->client, g->queue, o.ids, o.n, &dropped, &err) != DQ_OK)
            return cli_action_error(g, &err, NULL);
        printf("dropped %zu\n", dropped);
        return DQ_EXIT_OK;
    }
    dq_bulk cur = {0};
    while (!cur.done) {
        if (dq_drop_filter_step(g->client, g->queue, &o.filter, 0, &cur, &err) != DQ_OK) {
            return ops_bulk_stopped(g, "drop-all", "dropping", &cur,
                                    o.filter.kind == DQ_FILTER_NONE, &err);
        }
    }
    printf("dropped %zu\n", cur.done_n);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"all-failed", 0, NULL, CLI_FLAG,
     .help = "every task that failed before now, in steps of " CLI_STEP_MAX_TEXT},
    {"group", 0, "SIG", CLI_STR,
     .help = "every task of one error group that failed before now (the group id or the "
             "signature 'delayq errors' shows); one audit entry"},
    {"match", 0, "TEXT", CLI_STR,
     .help = "every task that failed before now whose id, error, stack trace or payload bytes "
             "contain TEXT (1..200 bytes; smart case: any case unless TEXT has a capital letter)"},
    {"key", 0, "KEY", CLI_STR,
     .help = "every task that failed before now whose task key (enqueue --key) is KEY "
             "(1..64 bytes, exact); one audit entry"},
    {"parked", 0, NULL, CLI_FLAG,
     .help = "with --key: that key's parked tasks (held back by key_concurrency) instead"},
    {NULL},
};

const struct cli_cmd cmd_drop = {
    .name = "drop",
    .summary = "delete failed or scheduled tasks",
    .usage = "delayq drop [-q QUEUE]\n"
             "                   (--all-failed | --group SIG | --match TEXT | --key KEY\n"
             "                    | [--] ID...)\n"
             "delayq drop [-q QUEUE] --key KEY --parked",
    .about = "Deletes failed or scheduled tasks for good, and prints how many. All or nothing:\n"
             "an unknown id is exit 1, names the id, and nothing is dropped. A task in flight\n"
             "cannot be dropped while it runs.",
    .opts = opts,
    .max_pos = -1,
    .run = run,
};
