/* SPDX-License-Identifier: MIT */
/* monitor.c: a test's Redis commands through MONITOR (monitor.h). */
#include "harness/check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "harness/monitor.h"

#define END_MARKER "dq-test-monitor-end"

redisContext *
test_monitor_open(struct test_redis *srv)
{
    struct timeval tv = {10, 0};
    redisContext *mon = redisConnect("127.0.0.1", srv->port);
    redisReply *r;

    assert_non_null(mon);
    assert_int_equal(mon->err, 0);
    redisSetTimeout(mon, tv);
    r = redisCommand(mon, "MONITOR");
    assert_true(r != NULL && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    return mon;
}

void
test_monitor_collect(struct test_redis *srv, redisContext *mon, char *log, size_t size)
{
    const char *argv[] = {"ECHO", END_MARKER};
    redisReply *r = test_redis_cmd(srv, 2, argv);
    size_t used = 0;

    freeReplyObject(r);
    log[0] = '\0';
    for (;;) {
        if (redisGetReply(mon, (void **)&r) != REDIS_OK || r == NULL)
            fail_msg("MONITOR: no end marker before the deadline");
        bool end = r->type == REDIS_REPLY_STATUS && strstr(r->str, END_MARKER) != NULL;
        if (r->type == REDIS_REPLY_STATUS && used + r->len + 2 < size) {
            memcpy(log + used, r->str, r->len);
            used += r->len;
            log[used++] = '\n';
            log[used] = '\0';
        }
        freeReplyObject(r);
        if (end)
            break;
    }
    redisFree(mon);
}

size_t
test_monitor_fcalls(const char *log, const char *script, const char *must_end)
{
    size_t n = 0;
    char want[64];

    snprintf(want, sizeof want, "_%s\" \"11\"", script); /* delayq_v<N>_<hash>_<script> */
    for (const char *l = log; *l != '\0';) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        if (strstr(line, "\"FCALL") != NULL && strstr(line, want) != NULL) {
            size_t ll = strlen(line), wl = must_end ? strlen(must_end) : 0;
            if (must_end != NULL && (ll < wl || strcmp(line + ll - wl, must_end) != 0))
                fail_msg("a %s call on one partition ends otherwise: %s", script, line);
            n++;
        }
        l += len + (e != NULL);
    }
    return n;
}
