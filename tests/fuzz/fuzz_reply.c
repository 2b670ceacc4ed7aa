/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reply.c: the reply parsers of src/lib/reply.c for the claim (with and without
 * results settled in it, paused or not), page, find, search, audit, stats (with its
 * run-time totals), history, heartbeat, workers and pause scripts, which turn whatever
 * Redis answers into tasks. The input is RESP bytes, read by hiredis's own reader as the
 * client would read them; each reply is handed to every parser. The parsers are linked
 * from the library (reply.h), as the queue operations call them.
 *
 * Invariants: a parser either succeeds or fails with DQ_EPROTO (DQ_ENOMEM aside); what
 * it returns is freed by the result's own free function with nothing left over (the
 * leak checker runs after every input); every task returned has an id and the state of
 * its view; task counts follow the reply's length, and so do history rows (in time
 * order, no negative count, a backlog sample whole or absent); every worker listed has
 * its strings and no more tasks than the reply could hold; a paused claim holds no task.
 * The same reply also goes to the Sentinel readers (src/lib/sentinel.c): a master
 * address is taken only whole (a host of no NUL byte, a port 1..65535), and a ROLE reply
 * is "master" or an error.
 */
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "fuzz.h"
#include "lib/buf.h"
#include "lib/overview.h"
#include "lib/reply.h"
#include "lib/sentinel.h"

static void
check_rc(int rc, const dq_err *err)
{
    FUZZ_CHECK(rc == DQ_OK || rc == DQ_EPROTO || rc == DQ_ENOMEM);
    FUZZ_CHECK(rc == err->code);
}

static void
check_tasks(const dq_task *t, size_t n, dq_state state)
{
    for (size_t i = 0; i < n; i++) {
        /* a done task (done retention) is a record of a run, with no envelope */
        FUZZ_CHECK(t[i].id != NULL && (t[i].raw != NULL || state == DQ_STATE_DONE));
        FUZZ_CHECK(t[i].state == state);
        FUZZ_CHECK(t[i].undecodable || t[i].payload != NULL);
    }
}

static void
try_sentinel(const redisReply *r)
{
    struct dq_url u;
    struct dq_url_node n = {"127.0.0.1", 26379};
    struct dq_sentinel s = {.first = 0};
    dq_err err = {0};
    int rc;

    memset(&u, 0, sizeof u);
    snprintf(u.master, sizeof u.master, "mymaster");
    u.nsentinels = 3;
    rc = dq_sentinel_addr(&u, &n, r, &err);
    FUZZ_CHECK(rc == DQ_OK || rc == DQ_ECONN || rc == DQ_EPROTO);
    FUZZ_CHECK(rc == err.code);
    if (rc == DQ_OK)
        FUZZ_CHECK(u.host[0] != '\0' && strlen(u.host) < sizeof u.host && u.port >= 1 &&
                   u.port <= 65535);
    else
        FUZZ_CHECK(u.host[0] == '\0' && u.port == 0);
    memset(&err, 0, sizeof err);
    rc = dq_sentinel_role_ok(&s, &u, "127.0.0.1:6379", r, &err);
    FUZZ_CHECK(rc == DQ_OK || rc == DQ_ECONN || rc == DQ_EPROTO);
    FUZZ_CHECK(rc == err.code && (rc == DQ_OK || err.msg[0] != '\0'));
    FUZZ_CHECK(s.first >= 0 && s.first < 3);
    (void)dq_sentinel_readonly(r);
}

static void
try_claim(const redisReply *r)
{
    dq_claimed cl;
    dq_err err = {0};

    memset(&cl, 0, sizeof cl);
    int rc = dq_reply_claim(r, &cl, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        /* paused: the mark and the pause's end after the head, and never a task */
        /* (then now us and the done flag) */
        FUZZ_CHECK(cl.paused ? cl.n == 0 && r->elements == 7 : cl.n == (r->elements - 5) / 2);
        for (size_t i = 0; i < cl.n; i++)
            FUZZ_CHECK(cl.tasks[i].keep_done == cl.keep_done);
        check_tasks(cl.tasks, cl.n, DQ_STATE_INFLIGHT);
    }
    dq_claimed_free(&cl);
}

/* A claim that settled @n results (then the microseconds of its TIME and the done flag):
 * their outcomes cycle through ack, retry, fail and release, so each result shape is read
 * where the parser expects it. */
static void
try_claim_settle(const redisReply *r, size_t n)
{
    dq_settle res[4];
    dq_claimed cl;
    struct dq_claim_settle_reply cs = {&cl, res, n};
    dq_err err = {0};

    memset(&cl, 0, sizeof cl);
    memset(res, 0, sizeof res);
    for (size_t i = 0; i < n; i++)
        res[i].outcome = (dq_outcome)(i % 4);
    int rc = dq_reply_claim_settle(r, &cs, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        FUZZ_CHECK(cl.paused ? cl.n == 0 && r->elements == 5 + n + 2
                             : cl.n == (r->elements - 5 - n) / 2);
        FUZZ_CHECK(cl.now_us >= 0 && cl.now_us <= 999);
        check_tasks(cl.tasks, cl.n, DQ_STATE_INFLIGHT);
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(res[i].rc == DQ_OK || res[i].rc == res[i].err.code);
            FUZZ_CHECK(res[i].outcome == DQ_RETRY || res[i].retry_due_ms == -1);
        }
    }
    dq_claimed_free(&cl);
}

static void
try_page(const redisReply *r, dq_view view)
{
    static const dq_state states[] = {DQ_STATE_SCHEDULED, DQ_STATE_SCHEDULED, DQ_STATE_INFLIGHT,
                                      DQ_STATE_FAILED, DQ_STATE_DONE};
    dq_page p;
    struct dq_page_reply ps = {&p, view};
    dq_err err = {0};

    memset(&p, 0, sizeof p);
    int rc = dq_reply_page(r, &ps, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        FUZZ_CHECK(p.n == (r->elements - 2) / 3);
        check_tasks(p.tasks, p.n, states[view]);
    }
    dq_page_free(&p);
}

static void
try_search(const redisReply *r, dq_view view)
{
    dq_search cur = {0};
    dq_page found;
    struct dq_search_reply ss = {&cur, &found, view};
    dq_err err = {0};

    memset(&found, 0, sizeof found);
    int rc = dq_reply_search(r, &ss, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK)
        FUZZ_CHECK(cur.scanned >= 0 && (cur.done || cur.cursor >= 0));
    dq_page_free(&found);
}

static void
try_find(const redisReply *r)
{
    dq_task t;
    struct dq_find_reply fs = {.out = &t, .cursor = DQ_BUF_INIT};
    dq_err err = {0};

    memset(&t, 0, sizeof t);
    int rc = dq_reply_find(r, &fs, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK && fs.found)
        FUZZ_CHECK(t.id != NULL && (t.raw != NULL || t.state == DQ_STATE_DONE));
    if (rc == DQ_OK && fs.more)
        FUZZ_CHECK(strlen(fs.cursor_score) < sizeof fs.cursor_score);
    dq_task_clear(&t);
    dq_buf_free(&fs.cursor);
}

static void
try_audit(const redisReply *r)
{
    dq_audit au;
    dq_err err = {0};

    memset(&au, 0, sizeof au);
    int rc = dq_reply_audit(r, &au, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        FUZZ_CHECK(au.n == r->elements);
        for (size_t i = 0; i < au.n; i++) {
            const dq_audit_entry *e = &au.entries[i];
            FUZZ_CHECK(e->who && e->action && e->detail && e->result);
        }
    }
    dq_audit_free(&au);
}

static void
try_stats(const redisReply *r)
{
    dq_stats s;
    dq_err err = {0};

    memset(&s, 0, sizeof s);
    int rc = dq_reply_stats(r, &s, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        for (size_t b = 0; b < DQ_RUN_BUCKETS; b++)
            FUZZ_CHECK(s.run[b] >= 0);
        FUZZ_CHECK(s.run_sum_ms >= 0);
    }
}

/* The history reply (PROTOCOL.md 5.33): rows as long as the reply says, in
 * time order, with no negative count and a sample whole or absent. */
static void
try_history(const redisReply *r)
{
    dq_history h;
    dq_err err = {0};

    memset(&h, 0, sizeof h);
    int rc = dq_reply_history(r, &h, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        FUZZ_CHECK(h.n == (r->elements - 5) / 25 && (h.n == 0 || h.rows != NULL));
        FUZZ_CHECK(h.step_ms >= 60000 && h.step_ms % 60000 == 0);
        for (size_t i = 0; i < h.n; i++) {
            const dq_history_row *w = &h.rows[i];
            FUZZ_CHECK(w->at_ms >= 0 && (i == 0 || w->at_ms > h.rows[i - 1].at_ms));
            FUZZ_CHECK(w->enqueued >= 0 && w->started >= 0 && w->done >= 0 && w->retried >= 0 &&
                       w->failed >= 0 && w->expired >= 0 && w->requeued >= 0 && w->dropped >= 0 &&
                       w->lost >= 0 && w->run_sum_ms >= 0);
            for (size_t b = 0; b < DQ_RUN_BUCKETS; b++)
                FUZZ_CHECK(w->run[b] >= 0);
            FUZZ_CHECK((w->backlog == -1) == (w->oldest_due_ms == -1));
            int64_t p = dq_run_quantile(w->run, 0.99);
            FUZZ_CHECK(p >= -1 && p <= 10000);
        }
    }
    dq_history_free(&h);
}

static void
try_overview(const redisReply *r)
{
    struct dq_overview_row row;
    dq_err err = {0};

    memset(&row, 0, sizeof row);
    check_rc(dq_reply_overview(r, &row, &err), &err);
}

static void
try_workers(const redisReply *r)
{
    dq_workers ws;
    dq_err err = {0};

    memset(&ws, 0, sizeof ws);
    int rc = dq_reply_workers(r, &ws, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        FUZZ_CHECK(ws.n <= r->elements);
        for (size_t i = 0; i < ws.n; i++) {
            const dq_worker_info *w = &ws.workers[i];
            FUZZ_CHECK(w->name && w->host && w->version && w->command);
            FUZZ_CHECK(w->ntasks <= 100 && (w->ntasks == 0 || w->tasks != NULL));
        }
    }
    dq_workers_free(&ws);
}

static void
try_errors(const redisReply *r)
{
    dq_errors e;
    dq_err err = {0};

    memset(&e, 0, sizeof e);
    int rc = dq_reply_errors(r, &e, &err);
    check_rc(rc, &err);
    if (rc == DQ_OK) {
        FUZZ_CHECK(e.n <= DQ_GROUPS_MAX + 1);
        for (size_t i = 0; i < e.n; i++) {
            const dq_error_group *g = &e.groups[i];
            FUZZ_CHECK(g->signature && g->sample_id && g->sample_error);
            FUZZ_CHECK(strlen(g->id) >= 1 && strlen(g->id) <= DQ_GROUP_ID_MAX);
        }
    }
    dq_errors_free(&e); /* also after a failure part way */
}

static void
try_beat_and_pause(const redisReply *r)
{
    dq_beat_reply b;
    struct dq_pause_reply p;
    dq_claimed cl;
    dq_err err = {0};

    check_rc(dq_reply_heartbeat(r, &b, &err), &err);
    memset(&err, 0, sizeof err);
    check_rc(dq_reply_pause(r, &p, &err), &err);
    memset(&cl, 0, sizeof cl);
    if (dq_reply_claim_paused(r, &cl))
        FUZZ_CHECK(cl.paused && cl.n == 0 && cl.tasks == NULL && cl.paused_until_ms >= 0);
}

/*
 * hiredis 0.14 allocates an array's element vector from its header, before any element
 * arrives, so "*400000000" asks for 3 GB whatever follows. That is the reader's limit,
 * not the parsers', so inputs with such a header are skipped. Any '*' counts, not only
 * one at the start of a line: the reader skips the two bytes after a bulk string
 * without checking that they are "\r\n".
 */
static bool
huge_array_header(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (data[i] != '*')
            continue;
        uint64_t v = 0;
        for (size_t j = i + 1; j < size && data[j] >= '0' && data[j] <= '9' && v < 65536; j++)
            v = v * 10 + (uint64_t)(data[j] - '0');
        if (v >= 65536)
            return true;
    }
    return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReader *rd = redisReaderCreate();
    void *reply = NULL;

    if (rd == NULL)
        return 0;
    if (huge_array_header(data, size)) {
        redisReaderFree(rd);
        return 0;
    }
    if (redisReaderFeed(rd, (const char *)data, size) != REDIS_OK) {
        redisReaderFree(rd);
        return 0;
    }
    /* A few replies per input is plenty; a stream of tiny ones only costs time. */
    for (int k = 0; k < 8 && redisReaderGetReply(rd, &reply) == REDIS_OK && reply != NULL; k++) {
        const redisReply *r = reply;

        try_claim(r);
        try_sentinel(r);
        for (size_t n = 1; n <= 4; n++)
            try_claim_settle(r, n);
        for (int v = DQ_VIEW_DUE; v <= DQ_VIEW_DONE; v++) {
            try_page(r, (dq_view)v);
            try_search(r, (dq_view)v);
        }
        try_find(r);
        try_audit(r);
        try_stats(r);
        try_history(r);
        try_overview(r);
        try_workers(r);
        try_errors(r);
        try_beat_and_pause(r);
        freeReplyObject(reply);
        reply = NULL;
    }
    redisReaderFree(rd);
    return 0;
}
