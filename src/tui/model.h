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

enum { PANE_DUE = 0, PANE_FUTURE, PANE_INFLIGHT, PANE_FAILED, PANE_COUNT };

#define SPARK_LEN 60

struct model {
    bool have_data;  /* at least one fetch succeeded */
    bool connected;  /* the last fetch succeeded */
    char error[256]; /* why the last fetch failed */
    char endpoint[300];
    char queue[101];
    dq_server_info info;
    dq_stats stats;
    dq_page pages[PANE_COUNT]; /* owned; each starts at offsets[i] */
    size_t offsets[PANE_COUNT];
    /* rates from the counter deltas of the last two fetches, per second */
    double enq_rate, done_rate, fail_rate;
    int64_t prev_ms;
    dq_stats prev;
    /* due backlog at each of the last SPARK_LEN fetches, oldest first */
    int64_t spark[SPARK_LEN];
    int nspark;
    int keep; /* the pane whose page holds search matches, or -1 */
};

void model_init(struct model *m, const char *queue, const char *endpoint);
void model_free(struct model *m);

/*
 * Refreshes @m: stats, server info and a page of each pane (from @offsets, @limits rows)
 * in 6 Redis calls, whatever the queue's size. On failure the previous data is kept,
 * connected is false and error says why; returns the DQ_E* code.
 */
int model_fetch(struct model *m, dq_client *c, const size_t offsets[PANE_COUNT],
                const size_t limits[PANE_COUNT]);

/* While a search runs, pane @pane (-1: none) holds its matches: model_fetch leaves it
 * alone. Empties that pane either way. */
void model_keep(struct model *m, int pane);

/* Count of items in a pane according to the last fetch. */
int64_t model_pane_total(const struct model *m, int pane);

#endif /* DQ_TUI_MODEL_H */
