/* SPDX-License-Identifier: MIT */
/* cmd_schedule.c: delayq schedule add|ls|rm|pause|resume: periodic schedules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "fmt/json.h"
#include "fmt/taskfmt.h"
#include "lib/buf.h"
#include "opts.h"

/* The name, the one positional argument besides "-" (add's stdin). */
static const char *
name_arg(struct cli *g, const struct cli_args *args, bool *use_stdin)
{
    const char *name = NULL;

    for (int i = 0; i < args->npos; i++) {
        if (use_stdin != NULL && strcmp(args->pos[i], "-") == 0 && i > 0) {
            *use_stdin = true;
        } else if (name == NULL) {
            name = args->pos[i];
        } else {
            cli_usage_error(g, "unexpected argument \"%s\"", args->pos[i]);
            return NULL;
        }
    }
    if (name == NULL)
        cli_usage_error(g, "give the schedule's NAME");
    return name;
}

static int
run_add(struct cli *g, const struct cli_args *args)
{
    dq_schedule_def d = {0};
    const char *json = cli_str(args, "json", NULL), *file = cli_str(args, "file", NULL);
    bool use_stdin = false;
    struct dq_buf payload = DQ_BUF_INIT;
    char *raw = NULL;
    dq_err err = {0};
    int rc = DQ_EXIT_OK;
    const char *name = name_arg(g, args, &use_stdin);

    if (name == NULL)
        return DQ_EXIT_USAGE;
    d.cron = cli_str(args, "cron", NULL);
    d.tz = cli_str(args, "tz", NULL);
    d.every_ms = cli_num(args, "every", 0);
    if ((d.cron != NULL) == cli_has(args, "every"))
        return cli_usage_error(g, "give exactly one of --cron SPEC and --every DUR");
    if (d.tz != NULL && d.cron == NULL)
        return cli_usage_error(g, "--tz: only with --cron");
    if (cli_has(args, "max-attempts"))
        d.max_attempts =
            cli_num(args, "max-attempts", 0) == 0 ? -1 : cli_num(args, "max-attempts", 0);
    d.time_limit_ms = cli_num(args, "time-limit", 0);
    if ((json != NULL) + (file != NULL) + use_stdin != 1)
        return cli_usage_error(g, "give the payload exactly once: --json TEXT, --file PATH or -");
    const void *data = NULL;
    size_t len = 0;
    if ((rc = cli_payload_read(g, json, file, use_stdin, &payload, &raw, &data, &len)) !=
        DQ_EXIT_OK)
        goto out;
    d.payload = data;
    d.len = len;
    int64_t next = -1;
    bool replaced = false;
    if (dq_schedule_add(g->client, g->queue, name, &d, &next, &replaced, &err) != DQ_OK) {
        rc = err.code == DQ_EINVAL ? cli_error(g, &err) : cli_action_error(g, &err, NULL);
        goto out;
    }
    char when[64];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the distance only: the time is the server's */
    dq_fmt_time_rel(when, sizeof when, next, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    printf("%s schedule %s; next run %s\n", replaced ? "replaced" : "added", name,
           next >= 0 ? when : "none (paused)");
out:
    dq_buf_free(&payload);
    free(raw);
    return rc;
}

static void
json_row(struct dq_buf *b, const dq_schedule *s)
{
    dq_buf_printf(b, "{\"name\":");
    dq_fmt_json_str(b, s->name, strlen(s->name));
    dq_buf_printf(b, ",\"spec\":");
    dq_fmt_json_str(b, s->spec, strlen(s->spec));
    dq_buf_printf(b, ",\"tz\":");
    dq_fmt_json_str(b, s->tz, strlen(s->tz));
    dq_buf_printf(b,
                  ",\"every_ms\":%lld,\"paused\":%s,\"next_ms\":%lld,\"last_ms\":%lld,"
                  "\"last_id\":",
                  (long long)s->every_ms, s->paused ? "true" : "false", (long long)s->next_ms,
                  (long long)s->last_ms);
    dq_fmt_json_str(b, s->last_id, strlen(s->last_id));
    dq_buf_printf(b,
                  ",\"late_ms\":%lld,\"missed\":%lld,\"runs\":%lld,\"created_ms\":%lld,"
                  "\"listed\":%lld}\n",
                  (long long)s->late_ms, (long long)s->missed, (long long)s->runs,
                  (long long)s->created_ms, (long long)s->fires);
}

static int
run_ls(struct cli *g, const struct cli_args *args)
{
    dq_schedules s;
    dq_err err = {0};
    int rc;

    if (args->npos > 0)
        return cli_usage_error(g, "unexpected argument \"%s\"", args->pos[0]);
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_schedule_ls(g->client, g->queue, &s, &err) != DQ_OK)
        return cli_action_error(g, &err, NULL);
    bool json = cli_has(args, "json");
    struct dq_buf b = DQ_BUF_INIT;
    if (!json && s.n > 0)
        printf("%-20s %-24s %-8s %-34s %s\n", "NAME", "SPEC", "STATE", "NEXT", "LAST");
    for (size_t i = 0; i < s.n; i++) {
        const dq_schedule *d = &s.items[i];
        if (json) {
            json_row(&b, d);
            continue;
        }
        char spec[160], next[64], last[64];
        if (d->every_ms > 0)
            snprintf(spec, sizeof spec, "every %lldms", (long long)d->every_ms);
        else
            snprintf(spec, sizeof spec, "%s%s%s", d->spec, d->tz[0] ? " " : "", d->tz);
        dq_fmt_time_rel(next, sizeof next, d->next_ms, s.now_ms);
        dq_fmt_time_rel(last, sizeof last, d->last_ms, s.now_ms);
        /* names are checked, spec and zone are not: bytes from Redis */
        struct dq_buf row = DQ_BUF_INIT;
        dq_buf_printf(&row, "%-20s %-24s %-8s %-34s %s", d->name, spec,
                      d->paused ? "paused" : "active", d->next_ms >= 0 ? next : "-",
                      d->last_ms >= 0 ? last : "never");
        if (d->last_ms >= 0)
            dq_buf_printf(&row, " %s", d->last_id);
        if (dq_fmt_schedule_late(d))
            dq_buf_printf(&row, " (late by %llds, %lld missed)", (long long)(d->late_ms / 1000),
                          (long long)d->missed);
        if (row.data != NULL)
            cli_put_safe(stdout, row.data, row.len);
        putchar('\n');
        dq_buf_free(&row);
    }
    if (b.data != NULL) /* JSON strings are escaped (dq_fmt_json_str) */
        fwrite(b.data, 1, b.len, stdout);
    if (!json && s.n == 0)
        printf("no schedules\n");
    dq_buf_free(&b);
    dq_schedules_free(&s);
    return DQ_EXIT_OK;
}

static int
run_simple(struct cli *g, const struct cli_args *args, const char *op)
{
    dq_err err = {0};
    bool changed = true;
    int64_t next = -1;
    int rc;
    const char *name = name_arg(g, args, NULL);

    if (name == NULL)
        return DQ_EXIT_USAGE;
    if ((rc = cli_connect_queue(g)) != DQ_EXIT_OK)
        return rc;
    if (strcmp(op, "rm") == 0)
        rc = dq_schedule_rm(g->client, g->queue, name, &err);
    else if (strcmp(op, "pause") == 0)
        rc = dq_schedule_pause(g->client, g->queue, name, &changed, &err);
    else
        rc = dq_schedule_resume(g->client, g->queue, name, &next, &changed, &err);
    if (rc != DQ_OK)
        return err.code == DQ_EINVAL ? cli_error(g, &err) : cli_action_error(g, &err, NULL);
    printf("schedule ");
    cli_put_safe(stdout, name, strlen(name));
    if (strcmp(op, "rm") == 0)
        printf(" removed\n");
    else if (!changed)
        printf(" was already %sd\n", op);
    else
        printf(" %sd\n", op);
    return DQ_EXIT_OK;
}

static int
run_rm(struct cli *g, const struct cli_args *args)
{
    return run_simple(g, args, "rm");
}
static int
run_pause(struct cli *g, const struct cli_args *args)
{
    return run_simple(g, args, "pause");
}
static int
run_resume(struct cli *g, const struct cli_args *args)
{
    return run_simple(g, args, "resume");
}

static const struct cli_opt add_opts[] = {
    {"cron", 0, "SPEC", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "'MIN HOUR DOM MON DOW' (ranges, steps, lists, names, @daily)"},
    {"tz", 0, "ZONE", CLI_STR, .flags = CLI_NONEMPTY,
     .help = "the cron's zone from zoneinfo (default UTC): Europe/Berlin"},
    {"every", 0, "DUR", CLI_DUR, 1, DQ_SCHEDULE_EVERY_MAX, .limit = "1ms..366d",
     .help = "every DUR from now: 1s, 5m, 1h"},
    {"max-attempts", 0, "N", CLI_UINT, 0, 1000000,
     .help = "each task's attempts (0: unlimited; default: the queue's)"},
    {"time-limit", 0, "DUR", CLI_DUR, 1, DQ_TIME_LIMIT_MAX, .limit = "1ms..7d",
     .help = "stop and retry a run of a task still going after DUR"},
    {"json", 0, "TEXT", CLI_STR, .help = "the payload as JSON, converted to msgpack"},
    {"file", 0, "PATH", CLI_STR,
     .help = "the payload's bytes from PATH (- as NAME's "
             "follower: stdin)"},
    {NULL},
};

static const struct cli_opt ls_opts[] = {
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object per schedule and line"},
    {NULL},
};

static const struct cli_opt no_opts[] = {{NULL}};

static const struct cli_cmd sub_add = {
    .name = "add",
    .summary = "add or redefine a periodic schedule",
    .usage = "delayq schedule add [-q QUEUE] NAME\n"
             "                    (--cron SPEC [--tz ZONE] | --every DUR)\n"
             "                    [--max-attempts N] [--time-limit DUR]\n"
             "                    (--json TEXT | --file PATH | -)",
    .about = "Each firing enqueues one task with id NAME@<firing ms>, run by the workers\n"
             "(no scheduler process). A gap in DST fires at its end, an overlap once.\n"
             "Audited. See delayq-schedule(1).",
    .opts = add_opts,
    .max_pos = 2,
    .run = run_add,
};

static const struct cli_cmd sub_ls = {
    .name = "ls",
    .summary = "list the schedules",
    .usage = "delayq schedule ls [-q QUEUE] [--json]",
    .about = "Name, spec and zone, paused or active, next run, last run and its task id, and\n"
             "\"late by N s, M missed\" when the last run was a catch-up.",
    .opts = ls_opts,
    .run = run_ls,
};

static const struct cli_cmd sub_rm = {
    .name = "rm",
    .summary = "remove a schedule",
    .usage = "delayq schedule rm [-q QUEUE] NAME",
    .about = "Removes the schedule; tasks it already made stay. Audited.",
    .opts = no_opts,
    .max_pos = 1,
    .run = run_rm,
};

static const struct cli_cmd sub_pause = {
    .name = "pause",
    .summary = "stop a schedule firing",
    .usage = "delayq schedule pause [-q QUEUE] NAME",
    .about = "The schedule stops firing until resumed. Audited.",
    .opts = no_opts,
    .max_pos = 1,
    .run = run_pause,
};

static const struct cli_cmd sub_resume = {
    .name = "resume",
    .summary = "resume a paused schedule",
    .usage = "delayq schedule resume [-q QUEUE] NAME",
    .about = "Fires again from its next time after now; runs missed while paused are not\n"
             "made up. Audited.",
    .opts = no_opts,
    .max_pos = 1,
    .run = run_resume,
};

static const struct cli_cmd *const subs[] = {&sub_add,   &sub_ls,     &sub_rm,
                                             &sub_pause, &sub_resume, NULL};

static int
run(struct cli *g, const struct cli_args *args)
{
    if (args->npos == 0)
        return cli_usage_error(g, "give a subcommand: add, ls, rm, pause or resume");
    return cli_usage_error(g, "unknown subcommand \"%s\": add, ls, rm, pause or resume",
                           args->pos[0]);
}

const struct cli_cmd cmd_schedule = {
    .name = "schedule",
    .summary = "periodic schedules: add, ls, rm, pause, resume",
    .usage = "delayq schedule add NAME (--cron SPEC [--tz ZONE] | --every DUR) [...]\n"
             "                    (--json TEXT | --file PATH | -)\n"
             "delayq schedule ls [--json]\n"
             "delayq schedule (rm | pause | resume) NAME",
    .about = "Periodic tasks, fired by the workers' own claims: each firing is one task\n"
             "with id NAME@<ms>. Below: add's options; 'delayq schedule SUB --help'.",
    .opts = add_opts,
    .max_pos = -1,
    .subs = subs,
    .run = run,
};
