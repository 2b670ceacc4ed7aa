/* SPDX-License-Identifier: MIT */
/* cmd_reschedule.c: delayq reschedule: move a scheduled task to another due time. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ops.h"
#include "opts.h"
#include "lib/dur.h"

static int
run(struct cli *g, const struct cli_args *args)
{
    const char *at = cli_str(args, "at", NULL);
    int64_t at_ms = 0, due = -1;
    char when[DQ_TIME_BUFSZ];
    dq_err err = {0};
    int rc;

    if (args->npos != 1)
        return cli_usage_error(g, "give the id of one scheduled task");
    const char *id = args->pos[0];
    if (id[0] == '\0' || strlen(id) > DQ_ID_MAX)
        return cli_usage_error(g, "ID: must be 1..%d bytes (got %zu)", DQ_ID_MAX, strlen(id));
    if ((at != NULL) == cli_has(args, "delay"))
        return cli_usage_error(g, "give the new time exactly once: --at TIME or --delay DUR");
    if (at != NULL) {
        if (dq_time_parse(at, "--at", &at_ms, &err) != DQ_OK)
            return cli_error(g, &err);
        if (at_ms == 0)
            at_ms = 1; /* the epoch itself: "long ago", due now */
    }
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_reschedule(g->client, g->queue, id, at_ms, cli_num(args, "delay", 0), &due, &err) !=
        DQ_OK) {
        if (err.code == DQ_ENOTFOUND && ops_say_parked(g, &id, 1, "scheduled"))
            return DQ_EXIT_FAILED;
        return cli_action_error(g, &err, NULL);
    }
    dq_time_format(when, sizeof when, due);
    printf("rescheduled ");
    cli_put_safe(stdout, id, strlen(id));
    printf(": due %s\n", when);
    return DQ_EXIT_OK;
}

static const struct cli_opt opts[] = {
    {"at", 0, "TIME", CLI_STR,
     .help = "the new due time: epoch milliseconds or RFC 3339; a past time means now"},
    {"delay", 0, "DUR", CLI_DUR, .help = "the new due time: DUR from now (250ms, 30s, 5m, 2h)"},
    {NULL},
};

const struct cli_cmd cmd_reschedule = {
    .name = "reschedule",
    .summary = "move a scheduled task to another time",
    .usage = "delayq reschedule [-q QUEUE] (--at TIME | --delay DUR) [--] ID",
    .about = "Moves a scheduled task to a new due time; its payload, attempts and deadline\n"
             "stay as they are. A task in flight or failed is refused (exit 1). Audited.",
    .opts = opts,
    .max_pos = 1,
    .run = run,
};
