/* SPDX-License-Identifier: MIT */
/*
 * import.h: one chunk of exported tasks into a queue through lua/import.lua (delayq
 * import; docs/PROTOCOL.md 5.23). The records are read from text by fmt/taskrec.c; this
 * file only sends them. Internal to the library and the delayq command.
 */
#ifndef DQ_LIB_IMPORT_H
#define DQ_LIB_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

/* Where an imported task goes. */
enum dq_import_kind {
    DQ_IMPORT_SCHEDULED = 's', /* to the scheduled set at due_ms */
    DQ_IMPORT_FAILED = 'f',    /* to the failed set (scheduled, due now, when requeued) */
    DQ_IMPORT_RAW = 'u',       /* an undecodable failed entry: raw bytes and failure fields */
};

/* One attempt of an imported task's history (PROTOCOL.md 4.5); strings borrowed. */
struct dq_import_attempt {
    uint32_t attempt; /* 1.. */
    int64_t started_ms, duration_ms;
    const char *worker, *outcome, *error;
    size_t worker_len, outcome_len, error_len;
};

/* One task to import. Pointers are borrowed for the call; lengths count bytes. */
struct dq_import_task {
    enum dq_import_kind kind;
    const char *id; /* caller-chosen id; NULL for a generated one (the seq) */
    size_t id_len;
    uint64_t seq;
    uint32_t attempt, max_attempts;
    int64_t enqueued_ms;
    int64_t deadline_ms; /* -1: none */
    const void *ext;     /* the envelope's v2 extension map (tl, uf, ...; PROTOCOL.md 4.1) */
    size_t ext_len;      /* 0: none, a v1 envelope */
    const void *payload;
    size_t payload_len;
    const char *last_error; /* NULL: none */
    size_t last_error_len;
    int64_t due_ms;    /* DQ_IMPORT_SCHEDULED */
    int64_t failed_ms; /* failed and raw */
    const char *reason, *error, *trace, *failed_by;
    size_t reason_len, error_len, trace_len, failed_by_len;
    const void *raw; /* DQ_IMPORT_RAW */
    size_t raw_len;
    const struct dq_import_attempt *history; /* oldest first; none for DQ_IMPORT_RAW */
    size_t nhistory;                         /* 0..DQ_HISTORY_MAX */
};

/* Tasks of one import call at most (its unit of atomicity) */
#define DQ_IMPORT_CHUNK DQ_CALL_MAX

/*
 * Imports @n (1..DQ_IMPORT_CHUNK) tasks into @queue in one script call: all are checked
 * and looked up first, then the new ones written (all or nothing). out[i] says, for task
 * i, its id and whether it was already there (duplicate, where). DQ_EINVAL from the
 * script names the task as "task K: " (K = 1..n). A partitioned queue's tasks go to their
 * partitions (a caller id by its hash, a generated id by its sequence's span), one call
 * each: all or nothing per partition, and a failed call ends it.
 */
int dq_import(dq_client *c, const char *queue, const struct dq_import_task *tasks, size_t n,
              bool requeue, dq_enqueued *out, dq_err *err);

#endif /* DQ_LIB_IMPORT_H */
