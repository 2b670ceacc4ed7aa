/* SPDX-License-Identifier: MIT */
/*
 * model.h: one refresh's snapshot of a queue, as fetched through libdelayq: server
 * facts, counts and counters, and one page of each pane. The model owns everything
 * it holds; the view only borrows it for one render. No curses here.
 */
#ifndef DQ_TUI_MODEL_H
#define DQ_TUI_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "delayq.h"

/* The panes, in the order of dq_view (a pane's page is that view's): Done holds the
 * finished tasks done retention keeps (PROTOCOL.md 4.7). */
enum { PANE_DUE = 0, PANE_FUTURE, PANE_INFLIGHT, PANE_FAILED, PANE_DONE, PANE_COUNT };

#define SPARK_LEN 60
/* The header's due backlog from the rollups: the last this many minutes, one bar each. */
#define SPARK_MINUTES 30

/* The worker registry as the header and the verdict need it. */
struct worker_summary {
    int64_t registered, live, lost;
    int64_t last_beat_ms;            /* the latest beat of any worker, server time; -1: none */
    int64_t hung;                    /* handlers hung past their time limit (dq_health_hung) */
    char hung_worker[DQ_ID_MAX + 1]; /* the worker with the most; "" when none */
};

/*
 * How the last fetch ended. Only LINK_DOWN is "disconnected": a server that answers with
 * an error (a key of the wrong type, NOPERM) or does not answer in time (a long script,
 * CLIENT PAUSE) is there, and saying DISCONNECTED would send the on-call to the network.
 */
enum link {
    LINK_UP,      /* the fetch succeeded */
    LINK_REFUSED, /* Redis answered with an error: error says which */
    LINK_SLOW,    /* Redis did not answer within the timeout: busy or paused */
    LINK_DOWN,    /* Redis could not be reached or the connection dropped */
};

struct model {
    bool have_data;  /* at least one fetch succeeded */
    bool connected;  /* Redis was reached at the last fetch: link != LINK_DOWN */
    enum link link;  /* how the last fetch ended */
    char error[640]; /* why the last fetch failed, for the status line */
    char endpoint[300];
    char node[300]; /* cluster: the node that serves the queue (dq_client_node); else "" */
    char queue[DQ_QUEUE_NAME_MAX + 1];
    dq_server_info info;
    dq_stats stats;
    dq_page pages[PANE_COUNT]; /* owned; each starts at offsets[i] */
    size_t offsets[PANE_COUNT];
    /* rates from the counter deltas of the last two fetches, per second */
    double enq_rate, done_rate, fail_rate, retry_rate;
    int64_t prev_ms;
    dq_stats prev;
    /* due backlog at each of the last SPARK_LEN fetches, oldest first */
    int64_t spark[SPARK_LEN];
    int nspark;
    /* the due backlog sampled once a minute by the scripts (the rollups, PROTOCOL.md
     * "History: per-minute rollups"), the last SPARK_MINUTES minutes oldest first (-1: no
     * sample that minute; a partitioned queue's: the sum over its partitions); read once a
     * minute (model_wants_history). nhspark 0: history is off, the server's scripts are
     * older (in every partition), or not read yet: the header draws spark */
    int64_t hspark[SPARK_MINUTES];
    int nhspark;
    int64_t hspark_ms; /* server time of the refresh that last asked; -1: never */
    int keep;          /* the pane whose page holds search matches, or -1 */
    int64_t nqueues;   /* queues registered on the server (dq_queues_get) */
    struct worker_summary workers;
    /* the queue's configuration, for the verdict's alert_* thresholds: the defaults
     * until read, then read again every MODEL_CONFIG_EVERY_MS (model_wants_config) */
    dq_config config;
    int64_t config_ms; /* server time of the refresh that read it; -1: not read yet */
    /* the queue is not known on the server (dq_queue_known): why, in the words of
     * dq_health_unknown_queue, for the header's badge and the verdict; "" when known */
    char unknown[400];
    /* a partitioned queue (PROTOCOL.md 14): its partitions (routed, and all including the
     * draining ones; 0: not partitioned) and the nodes they are on (model_parts_nodes) */
    size_t parts, parts_all, parts_nodes;
    bool parts_cluster; /* the nodes are cluster masters, not one server */
};

/* How often a refresh also reads the queue's config (one more Redis call): the
 * thresholds change rarely, and a change shows within this long. */
#define MODEL_CONFIG_EVERY_MS 60000

void model_init(struct model *m, const char *queue, const char *endpoint);
void model_free(struct model *m);

/*
 * What one refresh fetched, before it is applied to a model. Filled on the inspector's
 * Redis thread (io.c) while the keyboard thread keeps drawing the model.
 */
struct snapshot {
    int rc;          /* DQ_OK or the DQ_E* code of the call that failed */
    char error[256]; /* why it failed */
    dq_stats stats;
    dq_server_info info;
    dq_page pages[PANE_COUNT]; /* owned until applied */
    bool got[PANE_COUNT];      /* pages[i] was fetched (the kept pane is not) */
    size_t offsets[PANE_COUNT];
    int64_t nqueues;
    char node[300]; /* as model.node */
    struct worker_summary workers;
    bool got_config; /* config was read (asked for, and the read succeeded) */
    dq_config config;
    bool asked_history;            /* the rollups' backlog was asked for (model_wants_history) */
    int64_t hspark[SPARK_MINUTES]; /* as model.hspark; nhspark 0: off, older, or failed */
    int nhspark;
    char unknown[400]; /* as model.unknown */
    bool held_back;    /* the client was still waiting to reconnect: nothing was sent */
    size_t parts, parts_all, parts_nodes; /* as model's */
    bool parts_cluster;
};

/* Distinct nodes model_parts_nodes counts at most: past it the header says "or more". */
#define MODEL_PARTS_NODES_MAX 64

/* Distinct nodes the @all partitions of @queue are on, by the client's map and slot map
 * (no Redis call); *@cluster: they are cluster masters (else one server, and 1). */
size_t model_parts_nodes(dq_client *c, const char *queue, size_t all, bool *cluster);

/*
 * Fetches stats, server info, the number of queues, the worker registry's counts and a
 * page of each pane but @keep (Failed: of error group @group when not NULL or "") (from @offsets,
 * @limits rows) in 8 Redis calls, whatever the queue's size, plus one for the Done pane
 * unless its limit is 0 (model_wants_done: then it is empty); with @config, one more reads the
 * queue's config (a failure of that one only leaves got_config false); with @history, one more
 * reads the last SPARK_MINUTES minutes of rollups for the header's backlog (a failure, an
 * older server's, leaves nhspark 0). A queue whose stats show no
 * use at all is asked about (dq_queue_known, 1 or 2 calls more), and when it is not known the
 * registry's names are read for the suggestion. A partitioned queue's stats are one call
 * per partition, pipelined (dq_stats_get), so N - 1 calls more, and so is its backlog from
 * the rollups (one call per partition, summed per minute). Touches nothing but @out, so it may
 * run on another thread than the one that draws. Returns out->rc.
 */
int model_snapshot(dq_client *c, const char *queue, int keep, const char *group,
                   const size_t offsets[PANE_COUNT], const size_t limits[PANE_COUNT], bool config,
                   bool history, struct snapshot *out);

/* The next refresh should read the Done pane's page: the queue keeps done tasks
 * (done_retention in its config, as last read), or the pane is focused (@focus). A queue
 * that keeps none has none (setting 0 trims them), so it costs no call. */
bool model_wants_done(const struct model *m, int focus);

/* The next refresh should read the rollups for the header's backlog too: never asked, or
 * the server's minute changed since (one call a minute, not one a refresh). */
bool model_wants_history(const struct model *m);

/* The next refresh should read the queue's config too: never read (at start, after a
 * queue switch) or last read MODEL_CONFIG_EVERY_MS ago. */
bool model_wants_config(const struct model *m);

/*
 * Applies @s to @m (taking its pages, freeing the rest): rates, the sparkline, and the
 * pages of every pane @m does not keep. On failure the previous data stays, connected
 * is false and error says why. Returns true when a pane @m shows was not in @s (the
 * search ended while it was fetched): fetch again.
 */
bool model_apply(struct model *m, struct snapshot *s);

/*
 * The status line's words for a fetch that failed while Redis is there (LINK_REFUSED,
 * LINK_SLOW), into @buf (snprintf semantics); "" otherwise: LINK_DOWN has the view's
 * DISCONNECTED banner, LINK_UP nothing to say.
 */
size_t model_link_status(const struct model *m, char *buf, size_t size);

/* Frees what a snapshot still owns (when it is dropped instead of applied). */
void snapshot_free(struct snapshot *s);

/* model_snapshot() then model_apply() on the calling thread; returns the DQ_E* code. */
int model_fetch(struct model *m, dq_client *c, const size_t offsets[PANE_COUNT],
                const size_t limits[PANE_COUNT]);

/* Appends the search matches in @found to pane @pane (which the model keeps), taking
 * them; @found is left empty. Returns false (and frees them) when out of memory. */
bool model_add_found(struct model *m, int pane, dq_page *found);

/* While a search runs, pane @pane (-1: none) holds its matches: model_fetch leaves it
 * alone. Empties that pane either way. */
void model_keep(struct model *m, int pane);

/* Count of items in a pane according to the last fetch. */
int64_t model_pane_total(const struct model *m, int pane);

#endif /* DQ_TUI_MODEL_H */
