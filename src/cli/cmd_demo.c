/* SPDX-License-Identifier: MIT */
/*
 * cmd_demo.c: delayq demo: a private redis-server with a realistic queue in it, made
 * through the same library calls a producer and a worker use: tasks due now, soon
 * and days ahead, transient failures waiting to retry, permanent failures with
 * multi-line stack traces, payloads that are not msgpack, and one payload full of
 * terminal escape sequences. It prints what `delayq stats` and `delayq ls` show, then
 * stops the server; with --keep it leaves it running until Ctrl-C.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "fmt/json.h"
#include "spawn.h"

static const char *const traces[] = {
    "Traceback (most recent call last):\n"
    "  File \"/srv/billing/worker.py\", line 88, in handle\n"
    "    receipt = gateway.charge(card, amount)\n"
    "  File \"/srv/billing/gateway.py\", line 141, in charge\n"
    "    raise CardDeclined(resp.code)\n"
    "billing.gateway.CardDeclined: 05 do not honour",
    "panic: runtime error: index out of range [3] with length 3\n\n"
    "goroutine 1 [running]:\n"
    "main.renderInvoice(...)\n"
    "\t/src/invoice/render.go:57 +0x1d\n"
    "main.handle(0xc000012345)\n"
    "\t/src/invoice/main.go:31 +0x65",
    "java.lang.IllegalStateException: webhook target returned 410 Gone\n"
    "\tat com.acme.hooks.Sender.deliver(Sender.java:212)\n"
    "\tat com.acme.hooks.Worker.run(Worker.java:64)\n"
    "\tat java.base/java.lang.Thread.run(Thread.java:833)",
};

/* The live part: a producer and a worker, so the inspector has something to watch. */
struct live {
    const char *url, *queue;
    dq_worker *worker;
    pthread_t producer, runner;
    atomic_int stop; /* read by the producer thread, set by the main thread */
    bool started;
};

static unsigned
next_rand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) & 0x7fff;
}

static void
demo_handler(const dq_task *t, dq_result *res, void *arg)
{
    static _Thread_local unsigned seed;
    struct timespec ts;
    (void)arg;

    if (seed == 0)
        seed = (unsigned)t->seq * 2654435761u | 1;
    unsigned r = next_rand(&seed) % 100;
    ts.tv_sec = 0;
    ts.tv_nsec = (long)(50 + next_rand(&seed) % 400) * 1000000L; /* 50..450 ms of "work" */
    nanosleep(&ts, NULL);
    if (r < 12) {
        res->outcome = DQ_RETRY;
        snprintf(res->message, sizeof res->message, "upstream returned 503; retrying");
    } else if (r < 18) {
        res->outcome = DQ_FAILED;
        snprintf(res->message, sizeof res->message, "invoice %llu: total does not add up",
                 (unsigned long long)t->seq);
        /* what a Python, Go or Java handler would report */
        res->trace = strdup(traces[t->seq % 3]);
    }
}

static void *
run_worker(void *arg)
{
    struct live *lv = arg;
    dq_err err;

    dq_worker_run(lv->worker, &err);
    return NULL;
}

static void *
run_producer(void *arg)
{
    struct live *lv = arg;
    unsigned seed = 7;
    dq_client *c = NULL;
    dq_err err;

    if (dq_client_open(lv->url, NULL, &c, &err) != DQ_OK)
        return NULL;
    for (unsigned n = 0; !lv->stop; n++) {
        char json[160];
        dq_enqueue_opts o = {.delay_ms = (int64_t)(next_rand(&seed) % 20000)};
        dq_enqueued e;
        struct dq_buf b = DQ_BUF_INIT;
        struct timespec ts = {0, 300 * 1000000L};

        snprintf(json, sizeof json, "{\"type\":\"email.send\",\"to\":\"user%u@example.com\"}",
                 2000 + n);
        if (dq_json_to_mp(&b, json, strlen(json), NULL) == DQ_OK)
            dq_enqueue(c, lv->queue, &o, b.data, b.len, &e, NULL);
        dq_buf_free(&b);
        nanosleep(&ts, NULL);
    }
    dq_client_free(c);
    return NULL;
}

static void
live_start(struct live *lv)
{
    dq_worker_opts o = {
        .concurrency = 2, .lease_ms = 10000, .grace_ms = 1000, .name = "demo-worker"};
    dq_err err;

    if (dq_worker_new(lv->url, NULL, lv->queue, &o, demo_handler, NULL, &lv->worker, &err) != DQ_OK)
        return;
    if (pthread_create(&lv->runner, NULL, run_worker, lv) != 0) {
        dq_worker_free(lv->worker);
        return;
    }
    if (pthread_create(&lv->producer, NULL, run_producer, lv) != 0) {
        dq_worker_stop(lv->worker, true);
        pthread_join(lv->runner, NULL);
        dq_worker_free(lv->worker);
        return;
    }
    lv->started = true;
}

static void
live_stop(struct live *lv)
{
    if (!lv->started)
        return;
    lv->stop = 1;
    dq_worker_stop(lv->worker, false);
    pthread_join(lv->producer, NULL);
    pthread_join(lv->runner, NULL);
    dq_worker_free(lv->worker);
    lv->started = false;
}

static volatile sig_atomic_t stop_requested;

static void
on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int
enqueue_json(struct cli *g, const char *json, int64_t delay_ms, const char *id, dq_err *err)
{
    struct dq_buf b = DQ_BUF_INIT;
    dq_enqueue_opts o = {.delay_ms = delay_ms, .id = id};
    dq_enqueued e;
    int rc = dq_json_to_mp(&b, json, strlen(json), err);

    if (rc == DQ_OK)
        rc = dq_enqueue(g->client, g->queue, &o, b.data, b.len, &e, err);
    dq_buf_free(&b);
    return rc;
}

static int
fill(struct cli *g, dq_err *err)
{
    static const char *const kinds[] = {"email.send", "invoice.render", "webhook.deliver",
                                        "card.charge", "report.build"};
    char json[512], id[64];
    int rc;

    for (int i = 0; i < 60; i++) {
        snprintf(json, sizeof json,
                 "{\"type\":\"%s\",\"user\":%d,\"to\":\"user%d@example.com\","
                 "\"attempt_budget\":%d,\"tags\":[\"demo\",\"batch-%d\"]}",
                 kinds[i % 5], 1000 + i, 1000 + i, 3 + i % 4, i / 10);
        /* a third due now, the rest over the next 20 minutes */
        if ((rc = enqueue_json(g, json, i < 20 ? 0 : (int64_t)(i - 19) * 29000, NULL, err)) != 0)
            return rc;
    }
    for (int i = 0; i < 12; i++) {
        snprintf(json, sizeof json,
                 "{\"type\":\"subscription.renew\",\"plan\":\"pro\",\"cents\":%d}", 1900 + i * 100);
        snprintf(id, sizeof id, "renew-2026-%04d", 100 + i);
        if ((rc = enqueue_json(g, json, (int64_t)(1 + i % 6) * 86400000 + i * 3600000, id, err)) !=
            0)
            return rc;
    }
    /* payloads that are not msgpack: shown as hex dumps, marked */
    static const unsigned char raw1[] = {0x00, 0x01, 0x02, 'b', 'i', 'n', 0xff, 0xfe, 0x7f, 0x80};
    dq_enqueue_opts now = {0}, later = {.delay_ms = 600000};
    dq_enqueued e;
    if ((rc = dq_enqueue(g->client, g->queue, &now, raw1, sizeof raw1, &e, err)) != 0)
        return rc;
    if ((rc = dq_enqueue(g->client, g->queue, &later, "plain text, not msgpack", 23, &e, err)) != 0)
        return rc;
    /* a hostile payload: escape sequences must reach no terminal raw */
    if ((rc = enqueue_json(g, "{\"note\":\"\\u001b[2J\\u001b]52;c;cHduZWQ=\\u0007 hostile\"}", 0,
                           "hostile-escapes", err)) != 0)
        return rc;

    /* one worker pass: some succeed, some fail for now, some fail for good */
    dq_claimed cl;
    if ((rc = dq_claim(g->client, g->queue, 16, 60000, "demo-worker@localhost", &cl, err)) != 0)
        return rc;
    for (size_t i = 0; i < cl.n && rc == DQ_OK; i++) {
        const dq_task *t = &cl.tasks[i];
        if (i % 4 == 0)
            rc = dq_retry(g->client, g->queue, t, "upstream returned 503; retrying", NULL, err);
        else if (i % 4 == 1)
            rc = dq_fail(g->client, g->queue, t,
                         i % 8 == 1 ? "card declined (05 do not honour)"
                                    : "webhook target gone (410)",
                         traces[i % 3], err);
        else if (i % 4 == 2)
            rc = dq_ack(g->client, g->queue, t, err);
        /* i % 4 == 3: left in flight, as if a worker were still running it */
    }
    dq_claimed_free(&cl);
    return rc;
}

static int
run(struct cli *g, const struct cli_args *args)
{
    struct spawned_redis r = {0};
    struct live lv = {0};
    bool keep = cli_has(args, "keep"), own_server = !g->url_given, live = !cli_has(args, "static");
    bool print = keep || cli_has(args, "print") || !isatty(STDOUT_FILENO);
    dq_err err = {0};
    int rc;

    if (!g->queue_flag)
        g->queue = "demo";
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    if (own_server) {
        if (spawn_redis(&r) != 0)
            return DQ_EXIT_REDIS;
        g->url = r.url;
    }
    if ((rc = cli_connect(g)) != DQ_EXIT_OK)
        goto out;
    if (fill(g, &err) != DQ_OK) {
        rc = cli_error(g, &err);
        goto out;
    }
    lv.url = g->url;
    lv.queue = g->queue;
    if (!print) {
        if (live)
            live_start(&lv);
        char a_ro[] = "--refresh", a_1s[] = "1s";
        char *top_argv[] = {a_ro, a_1s, NULL};
        rc = cli_run_cmd(g, &cmd_top, 2, top_argv);
        goto out;
    }
    if (keep && live)
        live_start(&lv);
    printf("delayq demo: queue \"%s\" on %s\n\n$ delayq stats -q %s\n", g->queue, g->url, g->queue);
    fflush(stdout);
    char *stats_argv[] = {NULL};
    cli_run_cmd(g, &cmd_stats, 0, stats_argv);
    printf("\n$ delayq ls due -q %s --limit 8\n", g->queue);
    fflush(stdout);
    char a_due[] = "due", a_limit[] = "--limit", a_8[] = "8", a_failed[] = "failed";
    char *ls_due[] = {a_due, a_limit, a_8, NULL};
    cli_run_cmd(g, &cmd_ls, 3, ls_due);
    printf("\n$ delayq ls failed -q %s\n", g->queue);
    fflush(stdout);
    char *ls_failed[] = {a_failed, NULL};
    cli_run_cmd(g, &cmd_ls, 1, ls_failed);
    if (keep) {
        printf("\nThe demo server keeps running until Ctrl-C. Try:\n"
               "  export DELAYQ_URL=%s DELAYQ_QUEUE=%s\n"
               "  delayq show hostile-escapes; delayq ls future; delayq requeue --all\n",
               g->url, g->queue);
        fflush(stdout);
        while (!stop_requested)
            pause();
    }
    rc = DQ_EXIT_OK;
out:
    live_stop(&lv);
    dq_client_free(g->client);
    g->client = NULL;
    if (own_server)
        spawn_redis_stop(&r);
    return rc;
}

static const struct cli_opt opts[] = {
    {"print", 0, NULL, CLI_FLAG,
     .help = "print stats and listings instead of opening the inspector (the default when "
             "stdout is not a terminal)"},
    {"keep", 0, NULL, CLI_FLAG,
     .help = "print, then keep everything running (prints the URL) until Ctrl-C"},
    {"static", 0, NULL, CLI_FLAG,
     .help = "no producer or worker after the initial fill (for tests)"},
    {NULL},
};

const struct cli_cmd cmd_demo = {
    .name = "demo",
    .summary = "a private Redis with a realistic queue to look at",
    .usage = "delayq demo [--url URL] [-q QUEUE] [--print | --keep] [--static]",
    .about = "Starts a private redis-server (temp dir, free loopback port) unless --url is given,\n"
             "fills queue \"demo\" with a realistic mix of tasks through the delayq library (due,\n"
             "future, retrying, failed with stack traces, undecodable payloads), keeps a producer\n"
             "and a worker running on it, and opens delayq top. Stops everything it started on\n"
             "exit.",
    .opts = opts,
    .run = run,
};
