/* SPDX-License-Identifier: MIT */
/*
 * health.h: the one-line verdict on a queue ("oldest due has waited 5m (limit 1m)"),
 * computed from what one refresh already knows, in the same words wherever it shows:
 * the inspector's verdict line and `delayq stats`. Pure: no I/O.
 */
#ifndef DQ_FMT_HEALTH_H
#define DQ_FMT_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "delayq.h"

enum dq_health_level { DQ_HEALTH_OK = 0, DQ_HEALTH_WARN, DQ_HEALTH_BAD };

/* What the verdict is made of. Zero thresholds turn their check off. */
struct dq_health_facts {
    const dq_stats *stats;
    int64_t max_oldest_due_ms;      /* a due task waiting longer is a problem */
    int64_t max_far_future;         /* more tasks due past the far-future horizon is a problem */
    int64_t used_memory, maxmemory; /* Redis memory; maxmemory 0: no limit */
    int memory_warn_pct;            /* used over this share of maxmemory is a problem */
    double fail_rate;               /* failures per second lately; < 0: not known */
};

/*
 * Writes the verdict into @buf (snprintf semantics): every problem found, worst first,
 * joined by "; ", or one short phrase when all is well. Returns the worst level.
 */
enum dq_health_level dq_health_verdict(const struct dq_health_facts *f, char *buf, size_t size);

#endif /* DQ_FMT_HEALTH_H */
