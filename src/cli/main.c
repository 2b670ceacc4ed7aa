/* SPDX-License-Identifier: MIT */
/*
 * main.c: the delayq command: a table of subcommands, each in its own cmd_*.c file.
 * Exit statuses come from cli_exit_status() only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cmd commands[] = {
    {"enqueue", "schedule a task", cmd_enqueue},
    {"stats", "counts, counters and health checks of a queue", cmd_stats},
    {"ls", "list due, future, in-flight or failed tasks", cmd_ls},
    {"show", "every field of one task, with its error and stack trace", cmd_show},
    {"requeue", "move failed tasks back to scheduled", cmd_requeue},
    {"drop", "delete failed or scheduled tasks", cmd_drop},
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

int
main(int argc, char **argv)
{
    struct cli g = {0};
    char prog[64];
    int rc;

    g.url = getenv("DELAYQ_URL");
    if (g.url != NULL && g.url[0] == '\0')
        g.url = NULL;
    g.queue = getenv("DELAYQ_QUEUE");
    g.queue_chosen = g.queue != NULL && g.queue[0] != '\0';
    if (!g.queue_chosen)
        g.queue = "default";
    g.prog = "delayq";
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
        if (strcmp(argv[1], commands[i].name) == 0) {
            snprintf(prog, sizeof prog, "delayq %s", commands[i].name);
            g.prog = prog;
            rc = commands[i].run(&g, argc - 2, argv + 2);
            dq_client_free(g.client);
            return rc;
        }
    }
    fprintf(stderr, "delayq: unknown command \"");
    cli_put_safe(stderr, argv[1], strlen(argv[1]));
    fprintf(stderr, "\" (see delayq --help)\n");
    return DQ_EXIT_USAGE;
}
