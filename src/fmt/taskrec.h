/* SPDX-License-Identifier: MIT */
/*
 * taskrec.h: reads one record of `delayq export` (written by dq_fmt_task_export; see
 * docs/PROTOCOL.md 5.23) back into a task to import. The line is untrusted
 * text (tests/fuzz/fuzz_taskrec.c). Pure: no I/O.
 */
#ifndef DQ_FMT_TASKREC_H
#define DQ_FMT_TASKREC_H

#include <stdbool.h>
#include <stddef.h>

#include "delayq.h"
#include "lib/buf.h"
#include "lib/import.h"

/* One parsed record. task's pointers point into the buffers, which it owns. */
struct dq_task_rec {
    struct dq_import_task task;
    dq_state state;        /* as the record says (in flight is imported as scheduled) */
    struct dq_buf mp;      /* the line as msgpack (dq_json_to_mp) */
    struct dq_buf payload; /* payload_b64 decoded */
    struct dq_buf raw;     /* raw_base64 decoded */
    struct dq_buf ext;     /* the extension map: extensions_b64 decoded, or built */
    struct dq_import_attempt history[DQ_HISTORY_MAX]; /* task.history points here */
};

#define DQ_TASK_REC_INIT                                                                           \
    {                                                                                              \
        .mp = DQ_BUF_INIT, .payload = DQ_BUF_INIT, .raw = DQ_BUF_INIT, .ext = DQ_BUF_INIT          \
    }

/*
 * Parses the JSON object of @len bytes at @line into @r (emptied first; free it with
 * dq_task_rec_free whatever this returns). DQ_EINVAL names the field and what it must
 * be ("seq: must be a whole number 1..2^53-1", "history[3].error: longer than 1024
 * bytes": history entries are counted from 1, oldest first, and checked against the
 * history's own limits), or is dq_json_to_mp's syntax error;
 * DQ_ENOMEM. Only the shape and types are checked here; the import script checks the
 * limits of the target queue (max_payload, ...).
 */
int dq_task_rec_parse(struct dq_task_rec *r, const char *line, size_t len, dq_err *err);

void dq_task_rec_free(struct dq_task_rec *r);

#endif /* DQ_FMT_TASKREC_H */
