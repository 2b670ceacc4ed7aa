/* SPDX-License-Identifier: MIT */
/*
 * producer.c: the smallest program a user writes against an installed libdelayq.
 * tests/eco/install.sh compiles it with the installed delayq.pc (shared and static),
 * never meson, so it sees only what `meson install` put in the DESTDIR.
 * Usage: producer URL QUEUE ID: enqueues one task with that id, due in an hour.
 */
#include <stdio.h>
#include <string.h>

#include <delayq.h>

int
main(int argc, char **argv)
{
    static const char payload[] = "hello from an installed libdelayq";
    dq_enqueue_opts o = {.delay_ms = 3600 * 1000};
    dq_client *c;
    dq_enqueued e;
    dq_err err = {0};

    if (argc != 4) {
        fprintf(stderr, "usage: producer URL QUEUE ID\n");
        return 2;
    }
    if (dq_client_open(argv[1], NULL, &c, &err) != DQ_OK) {
        fprintf(stderr, "producer: %s\n", err.msg);
        return 3;
    }
    o.id = argv[3];
    if (dq_enqueue(c, argv[2], &o, payload, strlen(payload), &e, &err) != DQ_OK) {
        fprintf(stderr, "producer: %s: %s\n", dq_strerror(err.code), err.msg);
        dq_client_free(c);
        return 1;
    }
    printf("%s %s\n", e.id, e.duplicate ? "duplicate" : "added");
    dq_client_free(c);
    return 0;
}
