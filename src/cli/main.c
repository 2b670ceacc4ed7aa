/* SPDX-License-Identifier: MIT */
/*
 * main.c: the delayq command: the table of commands, each the one entry (opts.h) of its
 * own cmd_<name>.c, and the dispatch.
 * Exit statuses come from cli_exit_status() only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "profile.h"

/* Every command, in the order delayq --help lists them. */
static const struct cli_cmd *const commands[] = {
    &cmd_enqueue, &cmd_stats,   &cmd_ls,         &cmd_show,     &cmd_requeue,
    &cmd_drop,    &cmd_cancel,  &cmd_reschedule, &cmd_schedule, &cmd_export,
    &cmd_import,  &cmd_errors,  &cmd_keys,       &cmd_audit,    &cmd_config,
    &cmd_queues,  &cmd_workers, &cmd_pause,      &cmd_resume,   &cmd_throttle,
    &cmd_metrics, &cmd_top,     &cmd_work,       &cmd_demo,     &cmd_profiles,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void
usage(FILE *f)
{
    fprintf(f, "usage: delayq COMMAND [OPTIONS]\n\n"
               "A delayed task queue on Redis.\n\nCommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\nRun 'delayq COMMAND --help' for a command's options.\n\n");
    cli_help_globals(f);
}

/* Runs command @c of @g, with the profile (if any) under the flags and variables. */
static int
run(struct cli *g, const struct cli_cmd *c, int argc, char **argv)
{
    static char prog[64];
    const char *name = g->profile_name != NULL ? g->profile_name : getenv("DELAYQ_PROFILE");
    int rc = DQ_EXIT_OK;

    snprintf(prog, sizeof prog, "delayq %s", c->name);
    g->prog = prog;
    if (name != NULL && name[0] != '\0') {
        g->profile_name = name;
        rc = cli_profile_use(g);
    }
    if (rc == DQ_EXIT_OK)
        rc = cli_run_cmd(g, c, argc, argv);
    dq_client_free(g->client);
    if (g->profiles != NULL) {
        profile_free(g->profiles);
        free(g->profiles);
    }
    memset(g->password, 0, sizeof g->password);
    free(g->url_owned);
    return rc;
}

int
main(int argc, char **argv)
{
    struct cli g = {0};
    int first = 1;

    g.url = getenv("DELAYQ_URL");
    if (g.url != NULL && g.url[0] == '\0')
        g.url = NULL;
    g.queue = getenv("DELAYQ_QUEUE");
    g.queue_chosen = g.queue != NULL && g.queue[0] != '\0';
    if (!g.queue_chosen)
        g.queue = "default";
    g.prog = "delayq";
    g.min_replicas = -1;   /* not given: $DELAYQ_MIN_REPLICAS, else 0 */
    cli_guard_secrets(&g); /* a password in the environment is here from the start */
    /* --profile NAME comes before the command, so it is known before the command's own
     * flags (which override it) are read */
    while (first < argc && strncmp(argv[first], "--profile", 9) == 0) {
        if (argv[first][9] == '=') {
            g.profile_name = argv[first] + 10;
        } else if (argv[first][9] == '\0' && first + 1 < argc) {
            g.profile_name = argv[++first];
        } else {
            fprintf(stderr, "delayq: --profile needs a name (see delayq --help)\n");
            return DQ_EXIT_USAGE;
        }
        if (g.profile_name[0] == '\0') {
            fprintf(stderr, "delayq: --profile needs a name (see delayq --help)\n");
            return DQ_EXIT_USAGE;
        }
        first++;
    }
    argc -= first - 1;
    argv += first - 1;
    if (argc < 2) {
        usage(stderr);
        return DQ_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        /* help --specs: every command's options, for the lint that checks the
         * completions and man pages against them */
        if (argc > 2 && strcmp(argv[1], "help") == 0 && strcmp(argv[2], "--specs") == 0)
            cli_print_specs(stdout, commands, NCOMMANDS);
        else if (argc > 2 && strcmp(argv[1], "help") == 0 && strcmp(argv[2], "options") == 0)
            cli_help_globals(stdout); /* the block every CMD --help points to, alone */
        else
            usage(stdout);
        return DQ_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("delayq %s\n", DQ_VERSION);
        return DQ_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(argv[1], commands[i]->name) == 0)
            return run(&g, commands[i], argc - 2, argv + 2);
    }
    fprintf(stderr, "delayq: unknown command \"");
    cli_put_safe(stderr, argv[1], strlen(argv[1]));
    fprintf(stderr, "\" (see delayq --help)\n");
    return DQ_EXIT_USAGE;
}
