/* SPDX-License-Identifier: MIT */
/*
 * jobs.h: the Redis side of the inspector: what runs on its Redis thread (io.h) for a
 * refresh, a search step and an operator's action, through libdelayq's calls (the same
 * scripts as the CLI and the workers). The keyboard thread fills a job's request,
 * submits it, and reads the result back once io_done() says so. No curses here.
 */
#ifndef DQ_TUI_JOBS_H
#define DQ_TUI_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"
#include "delayq.h"
#include "model.h"

/* An operator's action: what the keyboard thread copied for it, and what it found. */
struct job {
    enum action act;
    char queue[DQ_QUEUE_NAME_MAX + 1];
    char id[DQ_ID_MAX + 1];
    char input[DQ_NEEDLE_MAX + 1];
    char pause_for[32];
    char throttle_rate[32], throttle_conc[16]; /* throttle: as typed ("": none) */
    char spread[32];                           /* requeue all: the window typed ("": at once) */
    dq_filter_kind fkind;                      /* r, d, A, X: the group or search shown */
    char fvalue[DQ_SIGNATURE_MAX + 1];         /* its group id or search text */
    char **ids; /* the marked set (owned copies), or NULL for the selected task */
    size_t nids;
    dq_task task; /* run now: the selected task's id and bytes (owned copies) */
    /* fix and requeue */
    dq_task found;          /* edit: the failed task as read; replace: the same, given back */
    char *edit_text;        /* edit: its payload as pretty JSON (owned) */
    unsigned char *payload; /* replace: the new payload (owned) */
    size_t payload_len;
    /* the Schedules view: the rows whose last runs are looked up */
    size_t sched_first, sched_rows;
    int hist_span; /* the History view: the span to read (app_hist_spans) */
    struct action_result result;
};

struct dq_buf; /* lib/buf.h */

/* The Keys view's text for @k, appended to @b: which counts are exact and which
 * sampled, then one row per key (its bytes escaped); with no keys, how keys are given.
 * Pure (unit.jobs checks it). */
void job_keys_text(struct dq_buf *b, const dq_keys *k);

/* One row of the Partitions view: a partition's name, its node and its own stats. */
struct part_row {
    char name[DQ_QUEUE_NAME_MAX + 16];
    char node[300];
    dq_stats st;
};

/* The Partitions view's text for the @n partitions in @rows (those at @routed or after
 * drain), appended to @b; names and nodes escaped. Pure (unit.jobs checks it). */
void job_parts_text(struct dq_buf *b, const struct part_row *rows, size_t n, size_t routed);

/* Frees what @j owns and zeroes it. */
void job_reset(struct job *j);

/* io_fn: performs @arg (a struct job) on @c. */
void job_run(dq_client *c, void *arg);

/* What the status line says while @act runs ("requeueing"). */
const char *job_name(enum action act);

/* One bounded search step; the keyboard thread owns the cursor between steps, and
 * gen tells a step of an older search (ended or replaced meanwhile) apart. */
struct search_step {
    char queue[DQ_QUEUE_NAME_MAX + 1];
    int view;
    char needle[DQ_NEEDLE_MAX + 1];
    unsigned gen;
    dq_search cur;
    dq_page found; /* owned until taken */
    int rc;
    char error[256];
};

/* io_fn: one step of @arg (a struct search_step), up to 100 matches. */
void search_run(dq_client *c, void *arg);

/* One refresh: a page of each pane from the offsets, for the queue named. */
struct fetch {
    char queue[DQ_QUEUE_NAME_MAX + 1];
    int keep;
    size_t offsets[PANE_COUNT], limits[PANE_COUNT];
    bool config;                     /* read the queue's config too (model_wants_config) */
    bool history;                    /* and the header's rollups (model_wants_history) */
    char group[DQ_GROUP_ID_MAX + 1]; /* the Failed pane's error group ("": all) */
    struct snapshot snap;
    char endpoint[300]; /* the server that answered: a Sentinel failover changes it */
};

/* io_fn: fills @arg (a struct fetch)'s snapshot. */
void fetch_run(dq_client *c, void *arg);

#endif /* DQ_TUI_JOBS_H */
