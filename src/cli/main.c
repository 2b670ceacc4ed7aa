/* SPDX-License-Identifier: MIT */
/*
 * main.c: the delayq command: a table of subcommands, each in its own cmd_*.c file.
 * Exit statuses come from cli_exit_status() only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile.h"

static const struct cmd commands[] = {
    {"enqueue", "schedule a task", cmd_enqueue},
    {"stats", "counts, counters and health checks of a queue", cmd_stats},
    {"ls", "list due, future, in-flight or failed tasks", cmd_ls},
    {"show", "every field of one task, with its error and stack trace", cmd_show},
    {"requeue", "move failed tasks back to scheduled", cmd_requeue},
    {"drop", "delete failed or scheduled tasks", cmd_drop},
    {"export", "write a view's tasks as JSON lines, every field, payloads lossless", cmd_export},
    {"import", "put exported tasks into a queue (idempotent on ids)", cmd_import},
    {"errors", "the failed tasks grouped by error signature, with counts", cmd_errors},
    {"audit", "the log of operator actions", cmd_audit},
    {"config", "read or change a queue's limits", cmd_config},
    {"queues", "the queues of the server, with their counts", cmd_queues},
    {"workers", "the workers of a queue: live, lost, busy, the tasks they hold", cmd_workers},
    {"pause", "stop workers claiming from a queue (for a time, or until resumed)", cmd_pause},
    {"resume", "end a queue's pause; idle workers start at once", cmd_resume},
    {"metrics", "serve the queues' metrics to Prometheus, or write them to a file", cmd_metrics},
    {"top", "the queue inspector (ncurses)", cmd_top},
    {"work", "run a command once per due task", cmd_work},
    {"demo", "a private Redis with a realistic queue to look at", cmd_demo},
    {"profiles", "the connection profiles (never their secrets)", cmd_profiles},
};

void
cli_list_commands(FILE *f)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
}

static void
usage(FILE *f)
{
    fprintf(f, "usage: delayq COMMAND [OPTIONS]\n\n"
               "A delayed task queue on Redis.\n\nCommands:\n");
    cli_list_commands(f);
    fprintf(f, "\nRun 'delayq COMMAND --help' for a command's options.\n\n%s", cli_global_help);
}

/* Runs command @c of @g, with the profile (if any) under the flags and variables. */
static int
run(struct cli *g, const struct cmd *c, int argc, char **argv)
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
        rc = c->run(g, argc, argv);
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
        usage(stdout);
        return DQ_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("delayq %s\n", DQ_VERSION);
        return DQ_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return run(&g, &commands[i], argc - 2, argv + 2);
    }
    fprintf(stderr, "delayq: unknown command \"");
    cli_put_safe(stderr, argv[1], strlen(argv[1]));
    fprintf(stderr, "\" (see delayq --help)\n");
    return DQ_EXIT_USAGE;
}
