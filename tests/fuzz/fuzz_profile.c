/* SPDX-License-Identifier: MIT */
/*
 * fuzz_profile.c: the connection profiles file (src/cli/profile.c), bytes from a file in
 * the user's config directory. Invariants: a refused file gives one line that names the
 * file ("fuzz:LINE: ..." or "fuzz: ...") and leaves nothing allocated; an accepted one
 * has at most PROFILE_COUNT_MAX profiles with distinct legal names, values without NUL
 * or newline of at most PROFILE_VALUE_MAX bytes, legal queue names and settings in
 * range, and written back as a file it parses to the same profiles.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/profile.h"
#include "delayq.h"
#include "fuzz.h"
#include "lib/buf.h"

static const char *
field(const struct profile *p, int k, const char **name)
{
    static const char *const names[] = {
        "url",    "user",     "password", "password-file",   "password-command",
        "tls-ca", "tls-cert", "tls-key",  "tls-server-name", "queue"};
    const char *v[] = {p->url,    p->user,     p->password, p->password_file,   p->password_command,
                       p->tls_ca, p->tls_cert, p->tls_key,  p->tls_server_name, p->queue};
    *name = names[k];
    return v[k];
}

static bool
same(const struct profiles *a, const struct profiles *b)
{
    if (a->n != b->n || a->has_password != b->has_password)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct profile *x = &a->v[i], *y = &b->v[i];
        if (strcmp(x->name, y->name) != 0 || x->min_replicas != y->min_replicas ||
            x->read_only != y->read_only)
            return false;
        for (int k = 0; k < 10; k++) {
            const char *n, *vx = field(x, k, &n), *vy = field(y, k, &n);
            if ((vx == NULL) != (vy == NULL) || (vx != NULL && strcmp(vx, vy) != 0))
                return false;
        }
    }
    return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profiles p, again;
    struct dq_buf b = DQ_BUF_INIT;
    char why[600];

    unsetenv("HOME"); /* "~/" stays as written, so the file written back is the same */
    if (profile_parse((const char *)data, size, "fuzz", &p, why, sizeof why) != 0) {
        FUZZ_CHECK(p.n == 0 && p.v == NULL);
        FUZZ_CHECK(strncmp(why, "fuzz:", 5) == 0 && strchr(why, '\n') == NULL);
        return 0;
    }
    FUZZ_CHECK(p.n <= PROFILE_COUNT_MAX);
    for (size_t i = 0; i < p.n; i++) {
        const struct profile *x = &p.v[i];
        size_t nl = strlen(x->name);
        FUZZ_CHECK(nl >= 1 && nl <= PROFILE_NAME_MAX && profile_find(&p, x->name) == x);
        FUZZ_CHECK(strspn(x->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                   "._-") == nl);
        FUZZ_CHECK(x->min_replicas >= -1 && x->min_replicas <= 100);
        FUZZ_CHECK(x->read_only >= -1 && x->read_only <= 1);
        dq_buf_printf(&b, "[%s]\n", x->name);
        for (int k = 0; k < 10; k++) {
            const char *n, *v = field(x, k, &n);
            if (v == NULL)
                continue;
            FUZZ_CHECK(strlen(v) >= 1 && strlen(v) <= PROFILE_VALUE_MAX);
            FUZZ_CHECK(strchr(v, '\n') == NULL);
            FUZZ_CHECK(k != 9 || dq_queue_name_check(v, NULL) == DQ_OK);
            dq_buf_printf(&b, "%s = %s\n", n, v);
        }
        if (x->min_replicas >= 0)
            dq_buf_printf(&b, "min-replicas = %d\n", x->min_replicas);
        if (x->read_only >= 0)
            dq_buf_printf(&b, "read-only = %s\n", x->read_only ? "yes" : "no");
    }
    FUZZ_CHECK(!b.failed);
    /* written back it may exceed the size limit (a file of short keys): skip those */
    if (b.len <= PROFILE_FILE_MAX) {
        FUZZ_CHECK(profile_parse(b.data ? b.data : "", b.len, "fuzz", &again, why, sizeof why) ==
                   0);
        FUZZ_CHECK(same(&p, &again));
        profile_free(&again);
    }
    profile_free(&p);
    dq_buf_free(&b);
    return 0;
}
