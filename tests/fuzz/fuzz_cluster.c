/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cluster.c: what a Redis Cluster node sends the router (src/lib/cluster.c): the
 * CLUSTER SLOTS reply, read into a slot map, and the text of MOVED / ASK errors. The
 * input is RESP bytes, read by hiredis's reader as the client reads them.
 *
 * Invariants: reading a map either succeeds or fails with DQ_EPROTO (DQ_ENOMEM aside),
 * and a failure leaves the previous map as it was; every slot of a map names either no
 * node or a "host:port" made only of name and address bytes, with a port 1..65535; a
 * redirection that parses has a slot 0..16383, a port 1..65535 and a non-empty host with
 * no NUL; the leak checker runs after every input.
 */
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "fuzz.h"
#include "lib/client.h"
#include "lib/cluster.h"

static bool
addr_ok(const char *a)
{
    const char *colon = strrchr(a, ':');
    long port;

    if (a[0] == '\0')
        return true;
    if (colon == NULL || colon == a)
        return false;
    for (const char *p = a; p < colon; p++) {
        char ch = *p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '-' || ch == '_' || ch == ':' || ch == '[' || ch == ']'))
            return false;
    }
    port = strtol(colon + 1, NULL, 10);
    return port >= 1 && port <= 65535;
}

static void
try_map(struct dq_cluster *cl, const redisReply *r)
{
    static const char *before[DQ_CLUSTER_SLOTS];
    dq_err err = {0};
    int rc;

    for (unsigned s = 0; s < DQ_CLUSTER_SLOTS; s += 97)
        before[s] = dq_cluster_slot_addr(cl, s);
    rc = dq_cluster_apply_slots(cl, r, "10.0.0.1", &err);
    FUZZ_CHECK(rc == DQ_OK || rc == DQ_EPROTO || rc == DQ_ENOMEM);
    FUZZ_CHECK(rc == err.code);
    for (unsigned s = 0; s < DQ_CLUSTER_SLOTS; s++) {
        const char *a = dq_cluster_slot_addr(cl, s);
        FUZZ_CHECK(addr_ok(a));
        if (rc != DQ_OK && s % 97 == 0)
            FUZZ_CHECK(a == before[s]);
    }
}

static void
try_redirect(const redisReply *r)
{
    char host[256];
    int slot = -1, port = -1;

    if (r->type != REDIS_REPLY_ERROR && r->type != REDIS_REPLY_STRING)
        return;
    if (dq_cluster_parse_redirect(r->str, r->len, &slot, host, sizeof host, &port) != 0)
        return;
    FUZZ_CHECK(slot >= 0 && slot < DQ_CLUSTER_SLOTS);
    FUZZ_CHECK(port >= 1 && port <= 65535);
    FUZZ_CHECK(host[0] != '\0' && strlen(host) < sizeof host);
}

/* hiredis allocates an array's elements before reading them: refuse inputs that
 * declare a huge one (as fuzz_reply.c does), which cost memory, not coverage. */
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
    redisReader *rd;
    struct dq_cluster *cl;
    void *reply = NULL;

    if (huge_array_header(data, size))
        return 0;
    rd = redisReaderCreate();
    cl = dq_cluster_alloc();
    if (rd == NULL || cl == NULL || redisReaderFeed(rd, (const char *)data, size) != REDIS_OK)
        goto out;
    for (int k = 0; k < 8 && redisReaderGetReply(rd, &reply) == REDIS_OK && reply != NULL; k++) {
        try_map(cl, reply);
        try_redirect(reply);
        freeReplyObject(reply);
        reply = NULL;
    }
out:
    dq_cluster_free(cl);
    if (rd != NULL)
        redisReaderFree(rd);
    return 0;
}
