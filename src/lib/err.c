/* SPDX-License-Identifier: MIT */
/* err.c: filling dq_err values, and mapping script error words to codes. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *word;
    int code;
} err_words[] = {
    {"DQ_EINVAL", DQ_EINVAL}, {"DQ_ENOTFOUND", DQ_ENOTFOUND}, {"DQ_EPROTO", DQ_EPROTO},
    {"DQ_EREDIS", DQ_EREDIS}, {"DQ_ECONN", DQ_ECONN},         {"DQ_ETIMEOUT", DQ_ETIMEOUT},
    {"DQ_ENOMEM", DQ_ENOMEM}, {"DQ_ELEASE", DQ_ELEASE},       {"DQ_EREPLICAS", DQ_EREPLICAS},
};

const char *
dq_strerror(int code)
{
    if (code == DQ_OK)
        return "DQ_OK";
    for (size_t i = 0; i < sizeof err_words / sizeof err_words[0]; i++) {
        if (err_words[i].code == code)
            return err_words[i].word;
    }
    return "DQ_E?";
}

int
dq_err_set(dq_err *err, int code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;

        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int
dq_err_from_reply(dq_err *err, const char *script, const char *text, size_t len)
{
    for (size_t i = 0; i < sizeof err_words / sizeof err_words[0]; i++) {
        size_t wl = strlen(err_words[i].word);

        if (len > wl && memcmp(text, err_words[i].word, wl) == 0 && text[wl] == ' ') {
            int code = err_words[i].code;
            return dq_err_set(err, code, "%.*s", (int)(len - wl - 1), text + wl + 1);
        }
    }
    /* A Redis error (WRONGTYPE, OOM, READONLY, ...): keep its words, cut the
     * "script: <sha>, on @user_script:N." tail that only names our internals. */
    const char *tail = NULL;
    for (size_t i = 0; i + 8 <= len; i++) {
        if (memcmp(text + i, " script:", 8) == 0) {
            tail = text + i;
            break;
        }
    }
    size_t keep = tail ? (size_t)(tail - text) : len;
    while (keep > 0 && (text[keep - 1] == ' ' || text[keep - 1] == '.'))
        keep--;
    /* a redis:// URL that names one node of a cluster */
    if ((len > 6 && memcmp(text, "MOVED ", 6) == 0) || (len > 4 && memcmp(text, "ASK ", 4) == 0))
        return dq_err_set(err, DQ_EREDIS,
                          "redis refused %s: %.*s (that is a Redis Cluster node: use "
                          "redis-cluster://)",
                          script, (int)keep, text);
    return dq_err_set(err, DQ_EREDIS, "redis refused %s: %.*s", script, (int)keep, text);
}
