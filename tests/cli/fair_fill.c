/* SPDX-License-Identifier: MIT */
/*
 * fair_fill.c: enqueues many keyed tasks at once for tests/cli/fair.sh (a shell loop of
 * delayq enqueue would take minutes for 50 000). Usage: fair_fill QUEUE KEY N PREFIX:
 * N tasks due now with key KEY (- for none) and ids PREFIX-0 .. PREFIX-(N-1), through the public
 * API (dq_enqueue_batch) on $DELAYQ_URL. Exit 0 when all were added, else 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delayq.h"

int
main(int argc, char **argv)
{
    dq_client *c = NULL;
    dq_err err = {0};
    const char *url = getenv("DELAYQ_URL");

    if (argc != 5 || url == NULL) {
        fprintf(stderr, "usage: DELAYQ_URL=URL fair_fill QUEUE KEY N PREFIX\n");
        return 2;
    }
    long n = strtol(argv[3], NULL, 10);
    if (n < 1 || n > 1000000)
        return 2;
    dq_enqueue_item *items = calloc((size_t)n, sizeof *items);
    dq_enqueued *out = calloc((size_t)n, sizeof *out);
    char *ids = calloc((size_t)n, 64);
    int rc = 1;
    if (items == NULL || out == NULL || ids == NULL)
        goto done;
    for (long i = 0; i < n; i++) {
        snprintf(ids + 64 * i, 64, "%s-%ld", argv[4], i);
        items[i].opts.id = ids + 64 * i;
        items[i].opts.key = strcmp(argv[2], "-") == 0 ? NULL : argv[2]; /* -: no key */
        items[i].payload = "\x90";                                      /* msgpack [] */
        items[i].payload_len = 1;
    }
    if (dq_client_open(url, NULL, &c, &err) != DQ_OK ||
        dq_enqueue_batch(c, argv[1], items, (size_t)n, out, &err) != DQ_OK) {
        fprintf(stderr, "fair_fill: %s\n", err.msg);
        goto done;
    }
    rc = 0;
done:
    dq_client_free(c);
    free(items);
    free(out);
    free(ids);
    return rc;
}
