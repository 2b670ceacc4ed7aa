/* SPDX-License-Identifier: MIT */
/* cmd_queues.c: delayq queues: the queues of a server with their counts. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "fmt/esc.h"
#include "fmt/taskfmt.h"
#include "lib/registry.h"

/* Queues listed (a screenful for a person; the registry itself is unbounded). */
#define QUEUES_LISTED      1000
#define QUEUES_LISTED_TEXT CLI_STR(QUEUES_LISTED)

/*
 * --forget of an argument that is no valid queue name: the registry member it names,
 * read back from delayq's escaping when it has a backslash (no valid name has one), so
 * bytes that cannot be typed (a NUL, an ESC) can be named the way delayq shows them.
 */
static int
forget_member(struct cli *g, const char *arg, const dq_err *why)
{
    struct dq_buf name = DQ_BUF_INIT, shown = DQ_BUF_INIT;
    dq_err err = {0};
    bool removed = false;
    int rc = DQ_EXIT_OK;

    if (strchr(arg, '\\') != NULL) {
        if (dq_esc_unescape(&name, arg, strlen(arg), &err) != DQ_OK) {
            fprintf(stderr, "%s: --forget: ", g->prog);
            cli_put_safe(stderr, err.msg, strlen(err.msg));
            fputc('\n', stderr);
            rc = DQ_EXIT_USAGE;
            goto out;
        }
    } else {
        dq_buf_append(&name, arg, strlen(arg));
    }
    if (name.failed) {
        rc = cli_error(g, &(dq_err){DQ_ENOMEM, "out of memory"});
        goto out;
    }
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        goto out;
    if (dq_registry_forget(g->client, name.data, name.len, &removed, &err) != DQ_OK) {
        rc = cli_error(g, &err);
        goto out;
    }
    dq_esc_text(&shown, name.data, name.len, 0);
    if (!removed) {
        fprintf(stderr, "%s: %.*s is not in the registry, and ", g->prog, (int)shown.len,
                shown.data ? shown.data : "");
        cli_put_safe(stderr, why->msg, strlen(why->msg));
        fputc('\n', stderr);
        rc = DQ_EXIT_FAILED;
        goto out;
    }
    printf("forgot registry member %.*s (no valid queue name: ", (int)shown.len, shown.data);
    cli_put_safe(stdout, why->msg, strlen(why->msg));
    printf(")\n");
out:
    dq_buf_free(&name);
    dq_buf_free(&shown);
    return rc;
}

/* --invalid: the members no listing shows, escaped so each names its bytes. */
static int
list_invalid(struct cli *g, bool json)
{
    struct dq_member *m = NULL;
    struct dq_buf b = DQ_BUF_INIT;
    size_t n = 0;
    int64_t scanned = 0;
    dq_err err = {0};
    int rc;

    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;
    if (dq_registry_invalid(g->client, QUEUES_LISTED, &m, &n, &scanned, &err) != DQ_OK)
        return cli_error(g, &err);
    for (size_t i = 0; i < n; i++) {
        dq_buf_reset(&b);
        if (json) {
            dq_buf_puts(&b, "{\"member\":");
            dq_fmt_json_str(&b, m[i].bytes, m[i].len);
            dq_buf_printf(&b, ",\"bytes\":%zu}\n", m[i].len);
        } else {
            dq_esc_text(&b, m[i].bytes, m[i].len, 0);
            dq_buf_printf(&b, "  (%zu bytes)\n", m[i].len);
        }
        if (!b.failed)
            fwrite(b.data, 1, b.len, stdout);
    }
    if (!json)
        printf("(%zu of %lld registry members are no valid queue names%s; delayq queues "
               "--forget NAME removes one)\n",
               n, (long long)scanned, n == QUEUES_LISTED ? ", perhaps more" : "");
    dq_buf_free(&b);
    dq_members_free(m, n);
    return DQ_EXIT_OK;
}

static int
run(struct cli *g, const struct cli_args *args)
{
    const char *forget = cli_str(args, "forget", NULL);
    dq_err invalid_name = {0};
    bool json = cli_has(args, "json"), invalid = cli_has(args, "invalid");
    dq_queues q;
    dq_err err = {0};
    int rc;

    if (forget != NULL && forget[0] == '\0')
        return cli_usage_error(g, "--forget needs a queue name, not an empty one");
    if (invalid && forget != NULL)
        return cli_usage_error(g, "--invalid and --forget go one at a time");
    if (invalid)
        return list_invalid(g, json);
    if (forget != NULL && dq_queue_name_check(forget, &invalid_name) != DQ_OK)
        return forget_member(g, forget, &invalid_name);
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        return rc;
    if (forget != NULL) {
        if (dq_queue_forget(g->client, forget, &err) != DQ_OK)
            return cli_error(g, &err);
        if (!json)
            printf("forgot queue %s (its tasks, if any, are untouched)\n", forget);
        return DQ_EXIT_OK;
    }
    if (dq_queues_get(g->client, QUEUES_LISTED, &q, &err) != DQ_OK)
        return cli_error(g, &err);
    if (!json && q.n > 0)
        printf("%-32s %10s %10s %10s %10s\n", "QUEUE", "DUE", "FUTURE", "IN-FLIGHT", "FAILED");
    struct dq_buf b = DQ_BUF_INIT;
    for (size_t i = 0; i < q.n && rc == DQ_EXIT_OK; i++) {
        dq_stats s;
        if (dq_stats_get(g->client, q.names[i], &s, &err) != DQ_OK) {
            rc = cli_error(g, &err);
            break;
        }
        if (json) {
            dq_buf_reset(&b);
            dq_buf_puts(&b, "{\"queue\":");
            dq_fmt_json_str(&b, q.names[i], strlen(q.names[i]));
            dq_buf_printf(&b, ",\"due\":%lld,\"future\":%lld,\"inflight\":%lld,\"failed\":%lld}\n",
                          (long long)s.due, (long long)s.future, (long long)s.inflight,
                          (long long)s.failed);
            fwrite(b.data, 1, b.len, stdout);
        } else {
            cli_put_safe(stdout, q.names[i], strlen(q.names[i]));
            printf("%*s %10lld %10lld %10lld %10lld\n",
                   (int)(strlen(q.names[i]) < 32 ? 32 - strlen(q.names[i]) : 0), "",
                   (long long)s.due, (long long)s.future, (long long)s.inflight,
                   (long long)s.failed);
        }
    }
    if (rc == DQ_EXIT_OK && q.total > (int64_t)q.n && !json)
        printf("(%lld more not listed)\n", (long long)(q.total - (int64_t)q.n));
    if (q.total == 0 && !json)
        printf("(no queues yet: one is listed once something is enqueued to it)\n");
    dq_buf_free(&b);
    dq_queues_free(&q);
    return rc;
}

static const struct cli_opt opts[] = {
    {"json", 0, NULL, CLI_FLAG, .help = "one JSON object per line"},
    {"forget", 0, "QUEUE", CLI_STR, .needs = "a queue name",
     .help = "remove QUEUE from the list (its tasks are not touched; the next producer or "
             "worker of QUEUE lists it again). Also any member of the registry that is no valid "
             "queue name (a foreign write): QUEUE as --invalid shows it, backslash escapes read "
             "back to the bytes"},
    {"invalid", 0, NULL, CLI_FLAG,
     .help = "list the registry members that are no valid queue names (they are not listed "
             "otherwise), escaped, up to " QUEUES_LISTED_TEXT},
    {NULL},
};

const struct cli_cmd cmd_queues = {
    .name = "queues",
    .summary = "the queues of the server, with their counts",
    .usage = "delayq queues [--json] [--forget QUEUE] [--invalid]",
    .about = "The queues of the server, by name, with their due, future, in-flight and failed\n"
             "counts (up to " QUEUES_LISTED_TEXT
             " queues). A queue is listed once a producer, worker or operator\n"
             "has used it; it stays listed when it empties.",
    .opts = opts,
    .run = run,
};
