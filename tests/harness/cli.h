/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the cli tests (tests/cli/test_*.c) share. Each test executable starts its
 * own redis-server (cli_group_setup) and runs the real binary ($DELAYQ_BIN) as a child
 * process: stdin through a pipe, stdout and stderr captured separately, a deadline, then
 * the exit status (0 ok, 1 operation failed, 2 usage or bad input, 3 Redis unreachable).
 *
 * In-flight and failed tasks are made through the C library (dq_claim, dq_fail) on the
 * same server, which gives exact control over the worker, error and trace text. Each
 * test has its own queue (test_queue_name).
 */
#ifndef DQ_HARNESS_CLI_H
#define DQ_HARNESS_CLI_H

#include "harness/check.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "harness/redis.h"
#include "harness/wait.h"

/* The deadline of RUN and RUN_IN, and the worker name of the library-made tasks. */
#define RUN_TIMEOUT_MS 10000
#define WORKER         "cli-test-worker"

/* The executable's private server; DELAYQ_URL points the children at it. */
extern struct test_redis cli_redis;

/* cmocka group setup and teardown: checks $DELAYQ_BIN, starts the server (exit 77 when
 * it is missing and skips are allowed), sets DELAYQ_URL, unsets DELAYQ_QUEUE and
 * DELAYQ_PASSWORD; the teardown stops the server. */
int cli_group_setup(void **state);
int cli_group_teardown(void **state);

struct result {
    int status;     /* exit status; -1 when killed by a signal or timed out */
    int sig;        /* the terminating signal, 0 if none */
    bool timed_out; /* killed at the deadline */
    int64_t elapsed_ms;
    char *out; /* stdout, NUL-terminated (may hold NULs: use out_len) */
    size_t out_len;
    char *err; /* stderr, NUL-terminated */
    size_t err_len;
};

void result_free(struct result *r);

/*
 * Runs $DELAYQ_BIN with @argv (NULL-terminated, without the program name), @env
 * ("NAME=VALUE" strings added to the child's environment; may be NULL) and @in_len
 * bytes of @in on stdin (EOF at once when @in is NULL). A child still running after
 * @timeout_ms is killed and reported as timed out. *@r must be zeroed or hold an
 * earlier result (which is freed).
 */
void run_full(const char *const *env, const void *in, size_t in_len, const char *const argv[],
              int timeout_ms, struct result *r);
void run(const void *stdin_data, size_t len, const char *const argv[], struct result *out);

/* A printable copy of @len bytes of @s for failure messages (\xHH for control and
 * non-ASCII bytes, cut at 2000); four rotating static buffers. */
const char *esc(const char *s, size_t len);

#define ARGV(...)               ((const char *const[]){__VA_ARGS__, NULL})
#define RUN(r, ...)             run(NULL, 0, ARGV(__VA_ARGS__), (r))
#define RUN_IN(r, in, len, ...) run((in), (len), ARGV(__VA_ARGS__), (r))

/* Fails with the command's output when it did not exit with @code. */
#define ASSERT_EXIT(r, code)                                                                       \
    do {                                                                                           \
        if ((r)->timed_out || (r)->status != (code))                                               \
            fail_msg("line %d: exit %d (signal %d%s), want %d\n--- stdout:\n%s\n"                  \
                     "--- stderr:\n%s",                                                            \
                     __LINE__, (r)->status, (r)->sig, (r)->timed_out ? ", timed out" : "", (code), \
                     esc((r)->out, (r)->out_len), esc((r)->err, (r)->err_len));                    \
    } while (0)

#define ASSERT_HAS(buf, needle)                                                                    \
    do {                                                                                           \
        if (strstr((buf), (needle)) == NULL)                                                       \
            fail_msg("line %d: expected \"%s\" in:\n%s", __LINE__, esc((needle), strlen(needle)),  \
                     esc((buf), strlen(buf)));                                                     \
    } while (0)

#define ASSERT_LACKS(buf, needle)                                                                  \
    do {                                                                                           \
        if (strstr((buf), (needle)) != NULL)                                                       \
            fail_msg("line %d: did not expect \"%s\" in:\n%s", __LINE__,                           \
                     esc((needle), strlen(needle)), esc((buf), strlen(buf)));                      \
    } while (0)

/* ---- small parsers of the command's output --------------------------------------- */

size_t count_lines(const char *s);
/* A message on stderr is exactly one non-empty line. */
void assert_one_line(const struct result *r);
/* The @n-th line (0-based) of @s copied into @dst; false if there is none. */
bool nth_line(const char *s, size_t n, char *dst, size_t size);
bool has_bytes(const void *hay, size_t hay_len, const void *needle, size_t n);
/* "key": in @s: a pointer to the value, or NULL. */
const char *json_find(const char *s, const char *key);
long long json_int(const char *s, const char *key);
/* The JSON value of "key" (object, array, string or scalar) as text into @dst. */
void json_value(const char *s, const char *key, char *dst, size_t size);
/* The decoded string value of "key" (\uXXXX in the BMP only), malloc'd. */
char *json_str(const char *s, const char *key);
/* Standard padded base64 @s (up to the closing quote), malloc'd. */
unsigned char *b64_decode(const char *s, size_t *len);
/* For a terminal: valid UTF-8, no control byte but \n and \t, no C1, no bidi override. */
void assert_terminal_safe(const char *what, const char *buf, size_t len);
/* JSON lines: valid UTF-8, no raw control byte but the newline ending a line. */
void assert_json_safe(const char *what, const char *buf, size_t len);

/* ---- task states the command cannot make, through the library --------------------- */

/* A client on cli_redis named WORKER. */
dq_client *lib_open(void);
/* Enqueues @id due now and claims it for a minute; nothing else may be due earlier. */
void lib_claim(dq_client *c, const char *q, const char *id, const void *payload, size_t len,
               dq_claimed *cl);
/* A task @id in the failed set of @q with @msg and @trace. */
void lib_make_failed(const char *q, const char *id, const void *payload, size_t len,
                     const char *msg, const char *trace);
/* A task @id held in flight by WORKER for a minute. */
void lib_make_inflight(const char *q, const char *id);

/* msgpack {"kind":"email"} */
static const char mp_map_kind[] = "\x81\xa4kind\xa5"
                                  "email";
/* msgpack {"total":"12.50"} */
static const char mp_total_old[] = "\x81\xa5total\xa5"
                                   "12.50";

#endif /* DQ_HARNESS_CLI_H */
