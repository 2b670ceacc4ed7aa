/* SPDX-License-Identifier: MIT */
/* model.c: fetching a snapshot through libdelayq (no curses, no drawing). */
#include "model.h"

#include <stdio.h>
#include <string.h>

void
model_init(struct model *m, const char *queue, const char *endpoint)
{
    memset(m, 0, sizeof *m);
    m->keep = -1;
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

int
model_fetch(struct model *m, dq_client *c, const size_t offsets[PANE_COUNT],
            const size_t limits[PANE_COUNT])
{
    dq_page pages[PANE_COUNT] = {0};
    dq_stats s;
    dq_server_info info;
    dq_err err = {0};
    int rc;

    rc = dq_stats_get(c, m->queue, &s, &err);
    if (rc == DQ_OK)
        rc = dq_server_info_get(c, &info, &err);
    for (int i = 0; i < PANE_COUNT && rc == DQ_OK; i++) {
        if (i == m->keep)
            continue;
        rc = dq_page_get(c, m->queue, (dq_view)i, offsets[i], limits[i] ? limits[i] : 1, &pages[i],
                         &err);
    }
    if (rc != DQ_OK) {
        for (int i = 0; i < PANE_COUNT; i++)
            dq_page_free(&pages[i]);
        m->connected = false;
        snprintf(m->error, sizeof m->error, "%s", err.msg);
        return rc;
    }
    for (int i = 0; i < PANE_COUNT; i++) {
        if (i == m->keep)
            continue;
        dq_page_free(&m->pages[i]);
        m->pages[i] = pages[i];
        m->offsets[i] = offsets[i];
    }
    if (m->have_data && s.now_ms > m->prev_ms) {
        double dt = (double)(s.now_ms - m->prev_ms) / 1000.0;
        m->enq_rate = (double)(s.enqueued - m->prev.enqueued) / dt;
        m->done_rate = (double)(s.done - m->prev.done) / dt;
        m->fail_rate =
            (double)(s.failed_total + s.expired - m->prev.failed_total - m->prev.expired) / dt;
    }
    m->prev = s;
    m->prev_ms = s.now_ms;
    m->stats = s;
    m->info = info;
    if (m->nspark == SPARK_LEN) {
        memmove(m->spark, m->spark + 1, (SPARK_LEN - 1) * sizeof m->spark[0]);
        m->nspark--;
    }
    m->spark[m->nspark++] = s.due;
    m->have_data = true;
    m->connected = true;
    m->error[0] = '\0';
    return DQ_OK;
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
