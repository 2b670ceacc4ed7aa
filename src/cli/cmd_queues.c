/* SPDX-License-Identifier: MIT */
/*
 * cmd_queues.c: delayq queues: the queues of a server, worst first, one overview row each
 * (fmt/overview.h: the same rows as the inspector's Overview), or today's counts
 * (--counts), or bare names (--names); --check for cron.
 */
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "fmt/esc.h"
#include "fmt/overview.h"
#include "fmt/taskfmt.h"
#include "lib/overview.h"
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

/* Today's table (--counts): due, future, in flight and failed of each queue, by name. */
static int
print_counts(struct cli *g, const dq_queues *q, bool json)
{
    struct dq_buf b = DQ_BUF_INIT;
    dq_err err = {0};
    int rc = DQ_EXIT_OK;

    if (!json && q->n > 0)
        printf("%-32s %10s %10s %10s %10s\n", "QUEUE", "DUE", "FUTURE", "IN-FLIGHT", "FAILED");
    for (size_t i = 0; i < q->n && rc == DQ_EXIT_OK; i++) {
        dq_stats s;
        if (dq_stats_get(g->client, q->names[i], &s, &err) != DQ_OK) {
            rc = cli_error(g, &err);
            break;
        }
        if (json) {
            dq_buf_reset(&b);
            dq_buf_puts(&b, "{\"queue\":");
            dq_fmt_json_str(&b, q->names[i], strlen(q->names[i]));
            dq_buf_printf(&b, ",\"due\":%lld,\"future\":%lld,\"inflight\":%lld,\"failed\":%lld}\n",
                          (long long)s.due, (long long)s.future, (long long)s.inflight,
                          (long long)s.failed);
            fwrite(b.data, 1, b.len, stdout);
        } else {
            cli_put_safe(stdout, q->names[i], strlen(q->names[i]));
            printf("%*s %10lld %10lld %10lld %10lld\n",
                   (int)(strlen(q->names[i]) < 32 ? 32 - strlen(q->names[i]) : 0), "",
                   (long long)s.due, (long long)s.future, (long long)s.inflight,
                   (long long)s.failed);
        }
    }
    dq_buf_free(&b);
    return rc;
}

/* Whether the terminal's locale takes UTF-8 (else the sparklines are ASCII). */
static bool
locale_utf8(void)
{
    const char *set = setlocale(LC_CTYPE, "");
    bool utf8 = set != NULL && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

    setlocale(LC_CTYPE, "C");
    return utf8;
}

/* Columns of the terminal on stdout; 0 when it is no terminal (nothing is cut). */
static int
term_cols(void)
{
    struct winsize ws;

    if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0)
        return 0;
    return ws.ws_col;
}

/* The verdict's words, escaped, cut to @cols display columns with a mark at the cut
 * (@cols <= 0: whole). */
static void
put_words(const char *words, int cols, bool utf8)
{
    struct dq_buf b = DQ_BUF_INIT;

    dq_esc_text(&b, words, strlen(words), 0);
    if (b.failed) {
        dq_buf_free(&b);
        return;
    }
    size_t keep = b.len;
    if (cols > 0 && dq_esc_width(b.data, b.len) > (size_t)cols) {
        keep = 0;
        for (size_t i = 1; i <= b.len; i++) {
            if (i < b.len && ((unsigned char)b.data[i] & 0xc0) == 0x80)
                continue; /* inside a UTF-8 sequence */
            if (dq_esc_width(b.data, i) > (size_t)cols - 1)
                break;
            keep = i;
        }
    }
    fwrite(b.data, 1, keep, stdout);
    if (keep < b.len)
        fputs(utf8 ? "\u2026" : "~", stdout);
    dq_buf_free(&b);
}

static void
json_minutes(struct dq_buf *b, const char *name, const int64_t *v)
{
    dq_buf_printf(b, ",\"%s\":[", name);
    for (int i = 0; i < DQ_OVERVIEW_MINUTES; i++)
        dq_buf_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
    dq_buf_puts(b, "]");
}

/* One overview row as JSON: today's four counts first (what --json always had), then
 * the verdict and the rest of the row. */
static void
print_json_row(const struct dq_ov_line *l)
{
    const struct dq_overview_row *r = l->row;
    const dq_stats *s = &r->stats;
    struct dq_buf b = DQ_BUF_INIT;

    dq_buf_puts(&b, "{\"queue\":");
    dq_fmt_json_str(&b, r->queue, strlen(r->queue));
    if (r->rc == DQ_OK) {
        dq_buf_printf(&b,
                      ",\"due\":%lld,\"future\":%lld,\"inflight\":%lld,\"failed\":%lld,"
                      "\"oldest_due_age_ms\":%lld,\"expired_leases\":%lld,\"paused\":%s,"
                      "\"throttled\":%s,\"workers\":{\"registered\":%lld,\"live\":%lld,"
                      "\"lost\":%lld}",
                      (long long)s->due, (long long)s->future, (long long)s->inflight,
                      (long long)s->failed, (long long)s->oldest_due_age_ms,
                      (long long)s->expired_leases, s->paused ? "true" : "false",
                      r->throttled < 0 ? "null"
                      : r->throttled   ? "true"
                                       : "false",
                      (long long)r->workers_registered, (long long)r->workers_live,
                      (long long)r->workers_lost);
        json_minutes(&b, "done_per_min", r->done_per_min);
        json_minutes(&b, "failed_per_min", r->failed_per_min);
    }
    dq_buf_printf(&b, ",\"verdict\":{\"level\":\"%s\",\"text\":", dq_health_level_name(l->level));
    dq_fmt_json_str(&b, l->words, strlen(l->words));
    dq_buf_puts(&b, "}}\n");
    if (!b.failed)
        fwrite(b.data, 1, b.len, stdout);
    dq_buf_free(&b);
}

/* The overview: one call per queue, pipelined, and one INFO; worst first. */
static int
print_overview(struct cli *g, const dq_queues *q, bool json, bool check)
{
    struct dq_overview_row *rows = calloc(q->n ? q->n : 1, sizeof *rows);
    struct dq_ov_line *lines = calloc(q->n ? q->n : 1, sizeof *lines);
    dq_server_info info = {0};
    dq_err err = {0};
    int rc = DQ_EXIT_OK, bad = 0, warn = 0, name_cols = 5;
    bool utf8 = locale_utf8();

    if (rows == NULL || lines == NULL) {
        rc = cli_error(g, &(dq_err){DQ_ENOMEM, "out of memory"});
        goto out;
    }
    for (size_t i = 0; i < q->n; i++)
        snprintf(rows[i].queue, sizeof rows[i].queue, "%s", q->names[i]);
    if (dq_overview_get(g->client, rows, q->n, &err) != DQ_OK ||
        dq_server_info_get(g->client, &info, &err) != DQ_OK) {
        rc = cli_error(g, &err);
        goto out;
    }
    for (size_t i = 0; i < q->n; i++) {
        dq_ov_judge(&lines[i], &rows[i], info.used_memory, info.maxmemory);
        int len = (int)strlen(rows[i].queue);
        name_cols = len > name_cols ? len : name_cols;
    }
    name_cols = name_cols > 32 ? 32 : name_cols;
    dq_ov_sort(lines, q->n);
    int cols = term_cols(), room = cols - dq_ov_fixed_cols(name_cols) - 1;
    char cell[512];
    if (!json && !check && q->n > 0) {
        dq_ov_header(cell, sizeof cell, name_cols);
        printf("%s VERDICT\n", cell);
    }
    for (size_t i = 0; i < q->n; i++) {
        const struct dq_ov_line *l = &lines[i];
        bad += l->level == DQ_HEALTH_BAD;
        warn += l->level == DQ_HEALTH_WARN;
        if (json) {
            print_json_row(l);
        } else if (!check) {
            dq_ov_cells(cell, sizeof cell, l, name_cols, utf8);
            fputs(cell, stdout);
            fputc(' ', stdout);
            /* cut to the terminal when enough of it is left; else whole, wrapping */
            put_words(l->words, cols > 0 && room >= 20 ? room : 0, utf8);
            fputc('\n', stdout);
        }
        if (check && l->level == DQ_HEALTH_BAD) {
            fprintf(stderr, "%s: check failed: queue %s: ", g->prog, l->row->queue);
            cli_put_safe(stderr, l->words, strlen(l->words));
            fputc('\n', stderr);
        }
    }
    if (check && bad > 0)
        rc = DQ_EXIT_FAILED;
    else if (check && !json)
        printf("ok: %zu queues, none bad (%d warn)\n", q->n, warn);
out:
    free(rows);
    free(lines);
    return rc;
}

static int
run(struct cli *g, const struct cli_args *args)
{
    const char *forget = cli_str(args, "forget", NULL);
    dq_err invalid_name = {0};
    bool json = cli_has(args, "json"), invalid = cli_has(args, "invalid");
    bool counts = cli_has(args, "counts"), names = cli_has(args, "names");
    bool check = cli_has(args, "check");
    dq_queues q;
    dq_err err = {0};
    int rc;

    if (forget != NULL && forget[0] == '\0')
        return cli_usage_error(g, "--forget needs a queue name, not an empty one");
    if ((int)invalid + (forget != NULL) + counts + names + check > 1)
        return cli_usage_error(
            g, "--invalid, --forget, --counts, --names and --check go one at a time");
    if (names && json)
        return cli_usage_error(g, "--names prints bare names; --json goes with the others");
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
    if (names) {
        for (size_t i = 0; i < q.n; i++)
            printf("%s\n", q.names[i]); /* valid queue names only: safe as they are */
    } else if (counts) {
        rc = print_counts(g, &q, json);
    } else {
        rc = print_overview(g, &q, json, check);
    }
    if (rc == DQ_EXIT_OK && q.total > (int64_t)q.n && !json && !names)
        printf("(%lld more not listed)\n", (long long)(q.total - (int64_t)q.n));
    if (q.total == 0 && !json && !names && !check)
        printf("(no queues yet: one is listed once something is enqueued to it)\n");
    dq_queues_free(&q);
    return rc;
}

static const struct cli_opt opts[] = {
    {"json", 0, NULL, CLI_FLAG,
     .help = "one JSON object per queue and line, worst first (with --counts: the counts only)"},
    {"check", 0, NULL, CLI_FLAG,
     .help = "for cron: exit 1 when any queue's verdict is bad, naming each on stderr; 0 "
             "otherwise"},
    {"counts", 0, NULL, CLI_FLAG,
     .help = "due, future, in-flight and failed counts by name (the older table)"},
    {"names", 0, NULL, CLI_FLAG, .help = "the queues' names only, one per line, sorted"},
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
    .summary = "the queues of the server, worst first, with their verdicts",
    .usage = "delayq queues [--json] [--check|--counts|--names|--invalid|--forget Q]",
    .about = "The queues of the server (up to " QUEUES_LISTED_TEXT
             "), worst first: each one's verdict (as delayq stats\n"
             "says it), due and oldest due age, in flight, failed, done and failed per minute\n"
             "over 10 minutes, live workers, P paused, T throttled. A queue is listed once it\n"
             "is used, and stays listed when it empties.",
    .opts = opts,
    .run = run,
};
