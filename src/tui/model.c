/* SPDX-License-Identifier: MIT */
/* model.c: fetching a snapshot through libdelayq (no curses, no drawing). */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/health.h"
#include "lib/retry.h"

/* Worker records a refresh reads for the last beat (the counts cover every worker). */
#define WORKERS_LOOKED 100

/* Registered names read for the suggestion when the queue is not known. */
#define UNKNOWN_SUGGEST_FROM 1000

void
model_init(struct model *m, const char *queue, const char *endpoint)
{
    memset(m, 0, sizeof *m);
    m->keep = -1;
    m->workers = (struct worker_summary){-1, 0, 0, -1, 0, ""}; /* not known before a fetch */
    /* the thresholds' defaults (lua/lib.lua CFG_DEFAULT) until the config is read */
    m->config = (dq_config){.alert_oldest_due_ms = 5 * 60 * 1000,
                            .alert_far_future = 100000,
                            .alert_running_ms = 5 * 60 * 1000,
                            .alert_memory_pct = 90,
                            .alert_window_ms = 300000,
                            .alert_fail_pct = 50,
                            .alert_fail_per_min = 60};
    m->config_ms = -1;
    m->hspark_ms = -1;
    snprintf(m->queue, sizeof m->queue, "%s", queue);
    snprintf(m->endpoint, sizeof m->endpoint, "%s", endpoint);
}

void
model_free(struct model *m)
{
    for (int i = 0; i < PANE_COUNT; i++)
        dq_page_free(&m->pages[i]);
}

int64_t
model_pane_total(const struct model *m, int pane)
{
    return m->pages[pane].total;
}

bool
model_wants_done(const struct model *m, int focus)
{
    return focus == PANE_DONE || (m->config.done_retention > 0 || m->config.done_retention_ms > 0);
}

bool
model_wants_history(const struct model *m)
{
    return m->hspark_ms < 0 || m->stats.now_ms / 60000 != m->hspark_ms / 60000;
}

/* The header's backlog from the rollups into @out; nhspark stays 0 when history is off
 * or the call fails (an older server's scripts have no reader). A partitioned queue's is
 * the sum per minute over its partitions (dq_history_get: one read each, once a minute). */
static void
snapshot_history(dq_client *c, const char *queue, struct snapshot *out)
{
    dq_history h = {0};
    dq_err err = {0};

    out->asked_history = true;
    if (dq_history_get(c, queue, SPARK_MINUTES * 60000LL, 60000, &h, &err) != DQ_OK)
        return;
    /* the newest SPARK_MINUTES rows: the reply has one per minute of the span */
    size_t from = h.n > SPARK_MINUTES ? h.n - SPARK_MINUTES : 0;
    for (size_t i = from; h.history_minutes > 0 && i < h.n; i++)
        out->hspark[out->nhspark++] = h.rows[i].backlog >= 0 ? h.rows[i].backlog : -1;
    dq_history_free(&h);
}

bool
model_wants_config(const struct model *m)
{
    return m->config_ms < 0 || m->stats.now_ms - m->config_ms >= MODEL_CONFIG_EVERY_MS ||
           m->stats.now_ms < m->config_ms;
}

size_t
model_parts_nodes(dq_client *c, const char *queue, size_t all, bool *cluster)
{
    char nodes[MODEL_PARTS_NODES_MAX][300];
    char name[DQ_QUEUE_NAME_MAX + 16];
    size_t n = 0;
    dq_err err;

    *cluster = false;
    for (size_t i = 0; i < all; i++) {
        const char *node;
        size_t j;
        if (dq_partition_name(c, queue, i, name, sizeof name, &err) != DQ_OK)
            break;
        node = dq_client_node(c, name);
        /* a single server's node is its endpoint; a cluster client's endpoint is its seeds */
        if (strcmp(node, dq_client_endpoint(c)) != 0)
            *cluster = true;
        for (j = 0; j < n && strcmp(nodes[j], node) != 0; j++)
            ;
        if (j == n && n < MODEL_PARTS_NODES_MAX)
            snprintf(nodes[n++], sizeof nodes[0], "%s", node);
    }
    return n;
}

int
model_snapshot(dq_client *c, const char *queue, int keep, const char *group,
               const size_t offsets[PANE_COUNT], const size_t limits[PANE_COUNT], bool config,
               bool history, struct snapshot *out)
{
    dq_err err = {0};
    int rc;

    memset(out, 0, sizeof *out);
    out->held_back = dq_conn_retry_in_ms(c) > 0;
    rc = dq_stats_get(c, queue, &out->stats, &err);
    /* in a cluster, the node of the queue's slot; INFO right after goes to it too */
    if (strcmp(dq_client_node(c, queue), dq_client_endpoint(c)) != 0)
        snprintf(out->node, sizeof out->node, "%s", dq_client_node(c, queue));
    if (rc == DQ_OK) {
        size_t routed, all;
        dq_err perr; /* the map was read by the stats call just made: cached, no call */
        if (dq_partitions_get(c, queue, &routed, &all, &perr) == DQ_OK && all > 1) {
            out->parts = routed;
            out->parts_all = all;
            out->parts_nodes = model_parts_nodes(c, queue, all, &out->parts_cluster);
        }
    }
    if (rc == DQ_OK)
        rc = dq_server_info_get(c, &out->info, &err);
    bool known = true;
    const dq_stats *st = &out->stats;
    /* counts or counters mean the queue is in use: no call needed to know it exists */
    if (rc == DQ_OK && st->due + st->future + st->inflight + st->failed + st->enqueued == 0 &&
        !st->paused)
        rc = dq_queue_known(c, queue, &known, &err);
    if (rc == DQ_OK) {
        dq_queues q;
        /* the names only for the suggestion of a queue that is not known */
        rc = dq_queues_get(c, known ? 0 : UNKNOWN_SUGGEST_FROM, &q, &err);
        out->nqueues = q.total;
        if (rc == DQ_OK && !known)
            dq_health_unknown_queue(out->unknown, sizeof out->unknown, queue, dq_client_endpoint(c),
                                    &q);
        dq_queues_free(&q);
    }
    if (rc == DQ_OK) {
        /* counts and beats only: the Workers view (W) reads the records */
        dq_workers w;
        rc = dq_workers_summary(c, queue, WORKERS_LOOKED, &w, &err);
        if (rc == DQ_OK) {
            const char *worst = NULL;
            out->workers = (struct worker_summary){w.registered,
                                                   w.live,
                                                   w.lost,
                                                   dq_health_last_beat(&w),
                                                   dq_health_hung(&w, &worst),
                                                   ""};
            if (worst != NULL)
                snprintf(out->workers.hung_worker, sizeof out->workers.hung_worker, "%s", worst);
            dq_workers_free(&w);
        }
    }
    if (rc == DQ_OK && config) {
        dq_err cerr = {0}; /* the thresholds keep their last values if this fails */
        out->got_config = dq_config_get(c, queue, &out->config, &cerr) == DQ_OK;
    }
    if (rc == DQ_OK && history)
        snapshot_history(c, queue, out);
    for (int i = 0; i < PANE_COUNT && rc == DQ_OK; i++) {
        if (i == keep)
            continue;
        if (i == PANE_DONE && limits[i] == 0) { /* not kept, not shown: empty, no call */
            out->got[i] = true;
            out->offsets[i] = 0;
            continue;
        }
        if (i == PANE_FAILED && group != NULL && group[0] != '\0') /* paged on the server */
            rc = dq_page_group_get(c, queue, group, offsets[i], limits[i] ? limits[i] : 1,
                                   &out->pages[i], &err);
        else
            rc = dq_page_get(c, queue, (dq_view)i, offsets[i], limits[i] ? limits[i] : 1,
                             &out->pages[i], &err);
        out->got[i] = rc == DQ_OK;
        out->offsets[i] = offsets[i];
    }
    if (rc != DQ_OK) {
        snapshot_free(out);
        snprintf(out->error, sizeof out->error, "%s", err.msg);
    }
    out->rc = rc;
    return rc;
}

static enum link
link_of(int rc)
{
    switch (rc) {
    case DQ_OK:
        return LINK_UP;
    case DQ_ETIMEOUT:
        return LINK_SLOW;
    case DQ_ECONN:
        return LINK_DOWN;
    default: /* an error reply, a reply delayq cannot read, or out of memory here */
        return LINK_REFUSED;
    }
}

/* m->error for a failed fetch: @raw, and for a server that is there, what that means,
 * so the status line (and the view before any data) says it in one place. */
static void
link_text(struct model *m, const char *raw)
{
    const char *when = m->have_data ? "; showing the last data" : "";

    switch (m->link) {
    case LINK_REFUSED:
        /* Redis does not say which key: name the queue's keys, where TYPE tells */
        if (strstr(raw, "WRONGTYPE") != NULL)
            snprintf(m->error, sizeof m->error,
                     "%s: a key of queue %s (dq:{%s}:*) is not of the type delayq writes "
                     "(redis answered: not disconnected%s)",
                     raw, m->queue, m->queue, when);
        else
            snprintf(m->error, sizeof m->error, "%s (redis answered: not disconnected%s)", raw,
                     when);
        break;
    case LINK_SLOW:
        snprintf(m->error, sizeof m->error,
                 "%s: redis is busy or paused (CLIENT PAUSE, a long script), not "
                 "disconnected%s",
                 raw, when);
        break;
    default:
        snprintf(m->error, sizeof m->error, "%s", raw);
        break;
    }
}

size_t
model_link_status(const struct model *m, char *buf, size_t size)
{
    bool there = m->link == LINK_REFUSED || m->link == LINK_SLOW;

    return (size_t)snprintf(buf, size, "%s", there ? m->error : "");
}

void
snapshot_free(struct snapshot *s)
{
    for (int i = 0; i < PANE_COUNT; i++) {
        dq_page_free(&s->pages[i]);
        s->got[i] = false;
    }
}

bool
model_apply(struct model *m, struct snapshot *snap)
{
    const dq_stats *s = &snap->stats;
    bool missing = false;

    if (snap->rc != DQ_OK) {
        enum link was = m->link;
        m->link = link_of(snap->rc);
        /* a fetch refused by the client's own reconnect backoff (after a timeout, as
         * during CLIENT PAUSE) learned nothing new: it keeps what the last try found */
        if (snap->held_back && m->link == LINK_DOWN && (was == LINK_SLOW || was == LINK_REFUSED))
            m->link = was;
        else
            link_text(m, snap->error);
        m->connected = m->link != LINK_DOWN;
        snapshot_free(snap);
        return false;
    }
    for (int i = 0; i < PANE_COUNT; i++) {
        if (i == m->keep)
            continue;
        if (!snap->got[i]) {
            missing = true;
            continue;
        }
        dq_page_free(&m->pages[i]);
        m->pages[i] = snap->pages[i];
        memset(&snap->pages[i], 0, sizeof snap->pages[i]);
        m->offsets[i] = snap->offsets[i];
    }
    snapshot_free(snap); /* the kept pane's page, if it was fetched before the search */
    if (m->have_data && s->now_ms > m->prev_ms) {
        double dt = (double)(s->now_ms - m->prev_ms) / 1000.0;
        m->enq_rate = (double)(s->enqueued - m->prev.enqueued) / dt;
        m->done_rate = (double)(s->done - m->prev.done) / dt;
        m->fail_rate =
            (double)(s->failed_total + s->expired - m->prev.failed_total - m->prev.expired) / dt;
        m->retry_rate = (double)(s->retried - m->prev.retried) / dt;
    }
    m->prev = *s;
    m->prev_ms = s->now_ms;
    m->stats = *s;
    m->info = snap->info;
    m->nqueues = snap->nqueues;
    memcpy(m->node, snap->node, sizeof m->node);
    m->workers = snap->workers;
    memcpy(m->unknown, snap->unknown, sizeof m->unknown);
    m->parts = snap->parts;
    m->parts_all = snap->parts_all;
    m->parts_nodes = snap->parts_nodes;
    m->parts_cluster = snap->parts_cluster;
    if (snap->got_config) {
        m->config = snap->config;
        m->config_ms = s->now_ms;
    }
    if (snap->asked_history) { /* asked once a minute, whatever the answer */
        memcpy(m->hspark, snap->hspark, sizeof m->hspark);
        m->nhspark = snap->nhspark;
        m->hspark_ms = s->now_ms;
    }
    if (m->nspark == SPARK_LEN) {
        memmove(m->spark, m->spark + 1, (SPARK_LEN - 1) * sizeof m->spark[0]);
        m->nspark--;
    }
    m->spark[m->nspark++] = s->due; /* a partitioned queue's: the sum (dq_stats_get) */
    m->have_data = true;
    m->connected = true;
    m->link = LINK_UP;
    m->error[0] = '\0';
    return missing;
}

int
model_fetch(struct model *m, dq_client *c, const size_t offsets[PANE_COUNT],
            const size_t limits[PANE_COUNT])
{
    struct snapshot s;
    int rc = model_snapshot(c, m->queue, m->keep, NULL, offsets, limits, model_wants_config(m),
                            model_wants_history(m), &s);

    model_apply(m, &s);
    return rc;
}

bool
model_add_found(struct model *m, int pane, dq_page *found)
{
    dq_page *p = &m->pages[pane];
    dq_task *grown;

    if (found->n == 0)
        return true;
    grown = realloc(p->tasks, (p->n + found->n) * sizeof *grown);
    if (grown == NULL) {
        dq_page_free(found);
        return false;
    }
    memcpy(grown + p->n, found->tasks, found->n * sizeof *grown);
    p->tasks = grown;
    p->n += found->n;
    p->total = (int64_t)p->n;
    p->now_ms = found->now_ms;
    free(found->tasks); /* the tasks' fields now belong to the model */
    memset(found, 0, sizeof *found);
    return true;
}

void
model_keep(struct model *m, int pane)
{
    int was = m->keep;

    m->keep = pane;
    for (int i = 0; i < PANE_COUNT; i++) {
        if (i == pane || i == was) {
            dq_page_free(&m->pages[i]);
            m->offsets[i] = 0;
        }
    }
}
