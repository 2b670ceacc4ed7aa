/* SPDX-License-Identifier: MIT */
/*
 * schedule.c: periodic schedules (docs/PROTOCOL.md 5.30). The firing itself happens in
 * lua/claim.lua; this file defines schedules and works out cron firings, which need
 * time zones (tz.h) that Lua cannot evaluate.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cron.h"
#include "delayq.h"
#include "env_build.h"
#include "err.h"
#include "registry.h"
#include "reply.h"
#include "schedule.h"
#include "scripts.h"
#include "tz.h"

static int
name_check(const char *name, dq_err *err)
{
    size_t n = name ? strlen(name) : 0;

    if (n < 1 || n > DQ_SCHEDULE_NAME_MAX ||
        strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "abcdefghijklmnopqrstuvwxyz"
                     "0123456789_.:-") != n)
        return dq_err_set(err, DQ_EINVAL,
                          "schedule name: must be 1..%d bytes of A-Z a-z 0-9 _ . : - (got %zu)",
                          DQ_SCHEDULE_NAME_MAX, n);
    return DQ_OK;
}

/* The wall clock in ms: only to start a cron list; the script keeps the firings that
 * are still ahead by server time. */
static int64_t
wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
dq_schedule_fires(const char *spec, const char *zone, int64_t after_ms, int n, int64_t *out_ms,
                  dq_err *err)
{
    struct dq_cron c;
    struct dq_tz *z = NULL;
    int rc;

    if ((rc = dq_cron_parse(spec, &c, err)) != DQ_OK)
        return rc;
    if ((rc = dq_tz_load(zone && zone[0] ? zone : "UTC", &z, err)) != DQ_OK)
        return rc;
    if (n > DQ_SCHEDULE_FIRES)
        n = DQ_SCHEDULE_FIRES;
    int got = dq_cron_next_n(&c, z, after_ms, n, out_ms, err);
    dq_tz_free(z);
    return got;
}

/* The same, comma-joined into @b (the form the schedule script takes). */
static int
cron_fires(const char *spec, const char *zone, int64_t after_ms, int n, struct dq_buf *b,
           dq_err *err)
{
    int64_t t[DQ_SCHEDULE_FIRES];
    int got = dq_schedule_fires(spec, zone, after_ms, n, t, err);

    for (int i = 0; i < got; i++)
        dq_buf_printf(b, "%s%lld", i ? "," : "", (long long)t[i]);
    return got;
}

int
dq_schedule_add(dq_client *c, const char *queue, const char *name, const dq_schedule_def *def,
                int64_t *next_ms, bool *replaced, dq_err *err)
{
    struct dq_buf fires = DQ_BUF_INIT, tpl = DQ_BUF_INIT;
    struct dq_args a;
    int64_t v[2] = {-1, 0};
    int rc;

    if ((rc = name_check(name, err)) != DQ_OK)
        return rc;
    if (def == NULL || (def->cron == NULL) == (def->every_ms <= 0))
        return dq_err_set(err, DQ_EINVAL, "schedule: give exactly one of cron and every");
    if (def->every_ms > DQ_SCHEDULE_EVERY_MAX)
        return dq_err_set(err, DQ_EINVAL, "every: %lld ms is over the limit of %lld (366 days)",
                          (long long)def->every_ms, (long long)DQ_SCHEDULE_EVERY_MAX);
    if (def->every_ms > 0 && def->tz != NULL && def->tz[0] != '\0')
        return dq_err_set(err, DQ_EINVAL, "tz: only a cron schedule has a zone");
    if (def->time_limit_ms < 0 || def->time_limit_ms > DQ_TIME_LIMIT_MAX)
        return dq_err_set(err, DQ_EINVAL, "time_limit: %lld ms is not in 0..%lld (7 days)",
                          (long long)def->time_limit_ms, (long long)DQ_TIME_LIMIT_MAX);
    if (def->max_attempts > DQ_ATTEMPTS_MAX)
        return dq_err_set(err, DQ_EINVAL, "max_attempts: %lld is over the limit of %d",
                          (long long)def->max_attempts, DQ_ATTEMPTS_MAX);
    if (def->len > UINT32_MAX)
        return dq_err_set(err, DQ_EINVAL, "payload: %zu bytes is over 4 GiB", def->len);
    if (def->cron != NULL) {
        /* a minute back: a client clock behind the server's still lists the next one */
        int got = cron_fires(def->cron, def->tz, wall_ms() - 60000, DQ_SCHEDULE_FIRES, &fires, err);
        if (got < 0) {
            dq_buf_free(&fires);
            return got;
        }
        if (got == 0) {
            dq_buf_free(&fires);
            return dq_err_set(err, DQ_EINVAL, "cron: \"%s\" never fires in the next %d years",
                              def->cron, DQ_CRON_HORIZON_YEARS);
        }
    }
    int64_t maxa = def->max_attempts == 0 ? -1 : def->max_attempts < 0 ? 0 : def->max_attempts;
    dq_env_template(&tpl, NULL, 0, maxa, 0, def->time_limit_ms, def->payload, def->len);
    dq_args_init(&a);
    dq_args_str(&a, "add");
    dq_args_str(&a, dq_client_who(c));
    dq_args_str(&a, name);
    dq_args_str(&a, def->cron ? def->cron : "");
    dq_args_str(&a, def->cron && def->tz ? def->tz : "");
    dq_args_i64(&a, def->cron ? 0 : def->every_ms);
    dq_args_bytes(&a, fires.data ? fires.data : "", fires.len);
    dq_args_bytes(&a, tpl.data ? tpl.data : "", tpl.len);
    if (fires.failed || tpl.failed)
        rc = dq_err_set(err, DQ_ENOMEM, "out of memory");
    else
        rc = dq_scripts_run(c, DQ_SCRIPT_SCHEDULE, queue, &a, dq_reply_schedule, v, err);
    dq_args_free(&a);
    dq_buf_free(&fires);
    dq_buf_free(&tpl);
    if (rc == DQ_OK) {
        dq_registry_note(c, queue); /* a schedule makes a queue, as an enqueue does */
        if (next_ms)
            *next_ms = v[0];
        if (replaced)
            *replaced = v[1] != 0;
    }
    return rc;
}

static int
simple(dq_client *c, const char *queue, const char *op, const char *name, int64_t v[2], dq_err *err)
{
    struct dq_args a;
    int rc;

    if ((rc = name_check(name, err)) != DQ_OK)
        return rc;
    dq_args_init(&a);
    dq_args_str(&a, op);
    dq_args_str(&a, dq_client_who(c));
    dq_args_str(&a, name);
    rc = dq_scripts_run(c, DQ_SCRIPT_SCHEDULE, queue, &a, dq_reply_schedule, v, err);
    dq_args_free(&a);
    return rc;
}

int
dq_schedule_rm(dq_client *c, const char *queue, const char *name, dq_err *err)
{
    int64_t v[2];

    return simple(c, queue, "rm", name, v, err);
}

int
dq_schedule_pause(dq_client *c, const char *queue, const char *name, bool *changed, dq_err *err)
{
    int64_t v[2] = {-1, 0};
    int rc = simple(c, queue, "pause", name, v, err);

    if (rc == DQ_OK && changed)
        *changed = v[1] != 0;
    return rc;
}

int
dq_schedule_resume(dq_client *c, const char *queue, const char *name, int64_t *next_ms,
                   bool *changed, dq_err *err)
{
    int64_t v[2] = {-1, 0};
    int rc = simple(c, queue, "resume", name, v, err);

    if (rc == DQ_OK) {
        if (changed)
            *changed = v[1] != 0;
        if (next_ms)
            *next_ms = v[0];
    }
    return rc;
}

int
dq_schedule_ls(dq_client *c, const char *queue, dq_schedules *out, dq_err *err)
{
    struct dq_args a;
    int rc;

    memset(out, 0, sizeof *out);
    dq_args_init(&a);
    rc = dq_scripts_run(c, DQ_SCRIPT_SCHEDULE_GET, queue, &a, dq_reply_schedule_get, out, err);
    dq_args_free(&a);
    if (rc != DQ_OK)
        dq_schedules_free(out);
    return rc;
}

void
dq_schedules_free(dq_schedules *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->items[i].name);
        free(s->items[i].spec);
        free(s->items[i].tz);
        free(s->items[i].last_id);
        free(s->items[i].by);
    }
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* The list of a low cron schedule is topped up from its last listed firing (or from
 * now, when none is left): what fell between is the catch-up rule's to skip. */
static int
refill_one(dq_client *c, const char *queue, const dq_schedule *s, int64_t now_ms, dq_err *err)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_args a;
    int64_t v[2];
    int64_t after = s->fires_last > now_ms ? s->fires_last : now_ms;
    int want = DQ_SCHEDULE_FIRES - (int)(s->fires > 0 ? s->fires : 0);
    int rc;

    if (want <= 0)
        return DQ_OK;
    int got = cron_fires(s->spec, s->tz, after, want, &b, err);
    if (got <= 0) {
        dq_buf_free(&b);
        return got < 0 ? got : DQ_OK;
    }
    dq_args_init(&a);
    dq_args_str(&a, s->name);
    dq_args_i64(&a, s->updated_ms);
    /* one argument per firing: split the comma-joined list */
    const char *p = b.data;
    for (int i = 0; i < got; i++) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        dq_args_bytes(&a, p, n);
        p += n + (e != NULL);
    }
    rc = b.failed
             ? dq_err_set(err, DQ_ENOMEM, "out of memory")
             : dq_scripts_run(c, DQ_SCRIPT_SCHEDULE_FILL, queue, &a, dq_reply_schedule, v, err);
    dq_args_free(&a);
    dq_buf_free(&b);
    return rc;
}

int
dq_schedule_refill(dq_client *c, const char *queue, size_t *filled, dq_err *err)
{
    dq_schedules s;
    size_t n = 0;
    int rc = dq_schedule_ls(c, queue, &s, err);

    if (rc != DQ_OK)
        return rc;
    for (size_t i = 0; i < s.n && rc == DQ_OK; i++) {
        const dq_schedule *d = &s.items[i];
        if (d->every_ms > 0 || d->paused || d->fires > 8 || strcmp(d->spec, "?") == 0)
            continue;
        dq_err e1 = {0};
        int r1 = refill_one(c, queue, d, s.now_ms, &e1);
        if (r1 == DQ_ECONN || r1 == DQ_ETIMEOUT || r1 == DQ_ENOMEM) {
            rc = r1;
            *err = e1;
        } else if (r1 == DQ_OK) {
            n++;
        }
    }
    dq_schedules_free(&s);
    if (filled)
        *filled = n;
    return rc;
}
