/* SPDX-License-Identifier: MIT */
/*
 * test_cli.c: the delayq command end to end. Every test runs the real binary
 * ($DELAYQ_BIN) as a child process against this executable's private redis-server,
 * feeding stdin through a pipe, capturing stdout and stderr separately and waiting
 * with a deadline, then checks what the command printed and how it exited
 * (0 ok, 1 operation failed, 2 usage or bad input, 3 Redis unreachable).
 *
 * In-flight and failed tasks are made through the C library (dq_claim, dq_fail) on the
 * same server, which gives exact control over the worker, error and trace text. Each
 * test has its own queue.
 */
#include "harness/check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "delayq.h"
#include "harness/redis.h"
#include "harness/wait.h"

/* ---- fixture ------------------------------------------------------------------------ */

static struct test_redis g_redis;
static const char *g_bin;

#define RUN_TIMEOUT_MS 10000
#define WORKER         "cli-test-worker"

static int
group_setup(void **state)
{
    int rc;

    (void)state;
    g_bin = getenv("DELAYQ_BIN");
    if (g_bin == NULL || g_bin[0] == '\0' || access(g_bin, X_OK) != 0) {
        fprintf(stderr, "test_cli: DELAYQ_BIN must name the delayq binary (got \"%s\")\n",
                g_bin ? g_bin : "");
        return -1;
    }
    rc = test_redis_start(&g_redis, NULL);
    if (rc == TEST_REDIS_SKIP)
        exit(77);
    if (rc != 0)
        return -1;
    /* The children find the server through the environment unless a test passes --url;
     * nothing else from the developer's environment may leak into them. */
    setenv("DELAYQ_URL", g_redis.url, 1);
    unsetenv("DELAYQ_QUEUE");
    unsetenv("DELAYQ_PASSWORD");
    return 0;
}

static int
group_teardown(void **state)
{
    (void)state;
    test_redis_stop(&g_redis);
    return 0;
}

/* ---- running the command ------------------------------------------------------------ */

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

static void
result_free(struct result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

struct sink {
    int fd;
    char *data;
    size_t len, cap;
};

/* Reads what is available on @s->fd; returns false at EOF or on error (fd closed). */
static bool
sink_read(struct sink *s)
{
    for (;;) {
        if (s->cap - s->len < 4096) {
            size_t cap = s->cap ? s->cap * 2 : 8192;
            char *p = realloc(s->data, cap);
            if (p == NULL)
                fail_msg("out of memory capturing output");
            s->data = p;
            s->cap = cap;
        }
        ssize_t n = read(s->fd, s->data + s->len, s->cap - s->len - 1);
        if (n > 0) {
            s->len += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        close(s->fd);
        s->fd = -1;
        return false;
    }
}

static void
set_flags(int fd, bool nonblock)
{
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (nonblock)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * Runs $DELAYQ_BIN with @argv (NULL-terminated, without the program name), @env
 * ("NAME=VALUE" strings added to the child's environment; may be NULL) and @in_len
 * bytes of @in on stdin (EOF at once when @in is NULL). stdout and stderr are captured
 * separately. A child still running after @timeout_ms is killed and reported as
 * timed out. *@r must be zeroed or hold an earlier result (which is freed).
 */
static void
run_full(const char *const *env, const void *in, size_t in_len, const char *const argv[],
         int timeout_ms, struct result *r)
{
    int pin[2], pout[2], perr[2];
    char *av[128];
    size_t n = 0, written = 0;
    struct sink out = {.fd = -1}, err = {.fd = -1};
    int64_t start, deadline;
    pid_t pid;
    int st;

    result_free(r);
    av[n++] = strdup(g_bin);
    for (size_t i = 0; argv[i] != NULL; i++) {
        if (n + 1 >= sizeof av / sizeof av[0])
            fail_msg("run: too many arguments");
        av[n++] = strdup(argv[i]);
    }
    av[n] = NULL;
    if (pipe(pin) != 0 || pipe(pout) != 0 || pipe(perr) != 0)
        fail_msg("pipe: %s", strerror(errno));
    set_flags(pin[0], false);
    set_flags(pout[1], false);
    set_flags(perr[1], false);
    set_flags(pin[1], true);
    set_flags(pout[0], true);
    set_flags(perr[0], true);

    fflush(NULL);
    start = test_mono_ms();
    pid = fork();
    if (pid < 0)
        fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        /* dup2 clears FD_CLOEXEC on the copies; the originals close at exec. */
        if (dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0)
            _exit(126);
        /* The harness ignores SIGPIPE in this process; the command must not inherit it. */
        signal(SIGPIPE, SIG_DFL);
        for (size_t i = 0; env != NULL && env[i] != NULL; i++)
            putenv(strdup(env[i]));
        execv(av[0], av);
        _exit(127);
    }
    for (size_t i = 0; i < n; i++)
        free(av[i]);
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    out.fd = pout[0];
    err.fd = perr[0];
    if (in == NULL || in_len == 0) {
        close(pin[1]);
        pin[1] = -1;
    }

    deadline = start + timeout_ms;
    while (out.fd >= 0 || err.fd >= 0) {
        struct pollfd pf[3];
        nfds_t k = 0;
        int64_t left = deadline - test_mono_ms();

        if (left <= 0) {
            r->timed_out = true;
            break;
        }
        if (out.fd >= 0)
            pf[k++] = (struct pollfd){.fd = out.fd, .events = POLLIN};
        if (err.fd >= 0)
            pf[k++] = (struct pollfd){.fd = err.fd, .events = POLLIN};
        if (pin[1] >= 0)
            pf[k++] = (struct pollfd){.fd = pin[1], .events = POLLOUT};
        if (poll(pf, k, (int)left) < 0 && errno != EINTR)
            fail_msg("poll: %s", strerror(errno));
        for (nfds_t i = 0; i < k; i++) {
            if (pf[i].revents == 0)
                continue;
            if (pf[i].fd == out.fd) {
                sink_read(&out);
            } else if (pf[i].fd == err.fd) {
                sink_read(&err);
            } else if (pf[i].fd == pin[1]) {
                ssize_t w = write(pin[1], (const char *)in + written, in_len - written);
                if (w > 0)
                    written += (size_t)w;
                /* EPIPE (the command stopped reading) or everything written: EOF */
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == in_len) {
                    close(pin[1]);
                    pin[1] = -1;
                }
            }
        }
    }
    if (pin[1] >= 0)
        close(pin[1]);

    /* Output closed (or the deadline passed): reap the child by the same deadline. */
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            fail_msg("waitpid: %s", strerror(errno));
        if (r->timed_out || test_mono_ms() >= deadline) {
            r->timed_out = true;
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        test_nap_ms(2);
    }
    if (out.fd >= 0)
        close(out.fd);
    if (err.fd >= 0)
        close(err.fd);
    r->elapsed_ms = test_mono_ms() - start;
    r->status = !r->timed_out && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->out = out.data ? out.data : calloc(1, 1);
    r->out_len = out.len;
    r->out[r->out_len] = '\0';
    r->err = err.data ? err.data : calloc(1, 1);
    r->err_len = err.len;
    r->err[r->err_len] = '\0';
}

/* A printable copy of @len bytes of @s for failure messages (the output under test may
 * hold the very escape sequences the test is about): control and non-ASCII bytes as \xHH,
 * cut at 2000 bytes. Rotates over four static buffers, so one message can use several. */
static const char *
esc(const char *s, size_t len)
{
    static char bufs[4][2000 * 4 + 8];
    static unsigned next;
    char *b = bufs[next++ % 4], *o = b;

    for (size_t i = 0; i < len && i < 2000; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || (c >= 0x20 && c < 0x7f))
            *o++ = (char)c;
        else
            o += sprintf(o, "\\x%02x", c);
    }
    if (len > 2000)
        o += sprintf(o, "...");
    *o = '\0';
    return b;
}

/* The helper the brief asks for: stdin bytes, arguments, result. */
static void
run(const void *stdin_data, size_t len, const char *const argv[], struct result *out)
{
    run_full(NULL, stdin_data, len, argv, RUN_TIMEOUT_MS, out);
}

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

/* ---- small parsers ------------------------------------------------------------------ */

static size_t
count_lines(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A message on stderr is exactly one non-empty line. */
static void
assert_one_line(const struct result *r)
{
    if (r->err_len < 2 || r->err[r->err_len - 1] != '\n' || count_lines(r->err) != 1)
        fail_msg("expected exactly one line on stderr, got:\n%s", esc(r->err, r->err_len));
}

/* The @n-th line (0-based) of @s copied into @dst; false if there is none. */
static bool
nth_line(const char *s, size_t n, char *dst, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        s = strchr(s, '\n');
        if (s == NULL)
            return false;
        s++;
    }
    if (*s == '\0')
        return false;
    size_t len = strcspn(s, "\n");
    if (len >= size)
        len = size - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
    return true;
}

static bool
has_bytes(const void *hay, size_t hay_len, const void *needle, size_t n)
{
    const unsigned char *h = hay;

    for (size_t i = 0; n <= hay_len && i <= hay_len - n; i++) {
        if (memcmp(h + i, needle, n) == 0)
            return true;
    }
    return false;
}

/* Finds "key": in @s and returns a pointer to the value, or NULL. */
static const char *
json_find(const char *s, const char *key)
{
    char pat[128];

    snprintf(pat, sizeof pat, "\"%s\":", key);
    s = strstr(s, pat);
    return s ? s + strlen(pat) : NULL;
}

static long long
json_int(const char *s, const char *key)
{
    const char *v = json_find(s, key);
    long long x = 0;

    if (v == NULL || sscanf(v, "%lld", &x) != 1)
        fail_msg("no integer \"%s\" in %s", key, esc(s, strlen(s)));
    return x;
}

/* Copies the JSON value of "key" (object, array, string or scalar, as text) into @dst. */
static void
json_value(const char *s, const char *key, char *dst, size_t size)
{
    const char *v = json_find(s, key), *p;
    int depth = 0;
    bool str = false;

    if (v == NULL)
        fail_msg("no \"%s\" in %s", key, esc(s, strlen(s)));
    for (p = v; *p; p++) {
        if (str) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            else if (*p == '"')
                str = false;
            if (!str && depth == 0) {
                p++;
                break;
            }
            continue;
        }
        if (*p == '"') {
            str = true;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (depth == 0)
                break;
            if (--depth == 0) {
                p++;
                break;
            }
        } else if (*p == ',' && depth == 0) {
            break;
        }
    }
    if ((size_t)(p - v) >= size)
        fail_msg("value of \"%s\" too long", key);
    memcpy(dst, v, (size_t)(p - v));
    dst[p - v] = '\0';
}

static void
put_utf8(char **o, unsigned cp)
{
    unsigned char *u = (unsigned char *)*o;

    if (cp < 0x80) {
        *u++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *u++ = (unsigned char)(0xc0 | cp >> 6);
        *u++ = (unsigned char)(0x80 | (cp & 0x3f));
    } else {
        *u++ = (unsigned char)(0xe0 | cp >> 12);
        *u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        *u++ = (unsigned char)(0x80 | (cp & 0x3f));
    }
    *o = (char *)u;
}

/* The decoded JSON string value of "key" (\uXXXX in the BMP only) in a malloc'd buffer. */
static char *
json_str(const char *s, const char *key)
{
    const char *v = json_find(s, key);
    char *dst, *o;

    if (v == NULL || *v != '"')
        fail_msg("no string \"%s\" in %s", key, esc(s, strlen(s)));
    dst = o = malloc(strlen(v) + 1);
    for (v++; *v && *v != '"'; v++) {
        if (*v != '\\') {
            *o++ = *v;
            continue;
        }
        switch (*++v) {
        case 'n':
            *o++ = '\n';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'u': {
            unsigned cp;
            if (sscanf(v + 1, "%4x", &cp) != 1)
                fail_msg("bad \\u escape in %s", s);
            put_utf8(&o, cp);
            v += 4;
            break;
        }
        default:
            *o++ = *v;
            break;
        }
    }
    *o = '\0';
    return dst;
}

static int
b64_val(int c)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(tab, c) : NULL;

    return p ? (int)(p - tab) : -1;
}

/* Decodes standard padded base64 @s (up to the closing quote) into a malloc'd buffer. */
static unsigned char *
b64_decode(const char *s, size_t *len)
{
    size_t n = strcspn(s, "\"");
    unsigned char *out = malloc(n / 4 * 3 + 3);
    size_t o = 0;

    if (n % 4 != 0)
        fail_msg("base64 length %zu is not a multiple of 4", n);
    for (size_t i = 0; i < n; i += 4) {
        int a = b64_val(s[i]), b = b64_val(s[i + 1]), c = b64_val(s[i + 2]), d = b64_val(s[i + 3]);
        if (a < 0 || b < 0 || (c < 0 && s[i + 2] != '=') || (d < 0 && s[i + 3] != '='))
            fail_msg("bad base64 at %zu", i);
        out[o++] = (unsigned char)(a << 2 | b >> 4);
        if (c >= 0)
            out[o++] = (unsigned char)((b & 15) << 4 | c >> 2);
        if (d >= 0)
            out[o++] = (unsigned char)((c & 3) << 6 | d);
    }
    *len = o;
    return out;
}

/* Length of the valid UTF-8 sequence at @s, 0 when invalid (overlong, surrogate, ...). */
static size_t
utf8_seq(const unsigned char *s, size_t len, unsigned *cp)
{
    size_t n;
    unsigned c, min;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, c = s[0] & 0x1f, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, c = s[0] & 0x0f, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, c = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/*
 * Output meant for a terminal: valid UTF-8, no control byte but \n and \t (so no ESC,
 * BEL, CR), no C1 control and no bidi override, and no raw 0xff.
 */
static void
assert_terminal_safe(const char *what, const char *buf, size_t len)
{
    const unsigned char *s = (const unsigned char *)buf;

    for (size_t i = 0; i < len;) {
        unsigned cp = 0;
        size_t n = utf8_seq(s + i, len - i, &cp);

        if (n == 0)
            fail_msg("%s: invalid UTF-8 byte 0x%02x at offset %zu in:\n%s", what, s[i], i,
                     esc(buf, len));
        if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) ||
            (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
            fail_msg("%s: unsafe code point U+%04X at offset %zu in:\n%s", what, cp, i,
                     esc(buf, len));
        i += n;
    }
}

/* JSON output: valid UTF-8 and no raw control byte other than the newline ending a line. */
static void
assert_json_safe(const char *what, const char *buf, size_t len)
{
    const unsigned char *s = (const unsigned char *)buf;

    for (size_t i = 0; i < len;) {
        unsigned cp = 0;
        size_t n = utf8_seq(s + i, len - i, &cp);

        if (n == 0)
            fail_msg("%s: invalid UTF-8 byte 0x%02x at offset %zu", what, s[i], i);
        if ((cp < 0x20 && cp != '\n') || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
            fail_msg("%s: raw control U+%04X at offset %zu in:\n%s", what, cp, i, esc(buf, len));
        if (cp == '\n' && i > 0 && s[i - 1] != '}')
            fail_msg("%s: a newline inside a JSON line at offset %zu", what, i);
        i += n;
    }
}

/* ---- library helpers (for states the command cannot make) -------------------------- */

static dq_client *
lib_open(void)
{
    dq_client_opts o = {.who = WORKER};
    dq_client *c = NULL;
    dq_err e = {0};

    if (dq_client_open(g_redis.url, &o, &c, &e) != DQ_OK)
        fail_msg("dq_client_open: %s", e.msg);
    return c;
}

/* Enqueues @id due now and claims it for a minute. The queue must have nothing else due
 * earlier, so the claim takes this task. */
static void
lib_claim(dq_client *c, const char *q, const char *id, const void *payload, size_t len,
          dq_claimed *cl)
{
    dq_enqueue_opts o = {.id = id};
    dq_enqueued en;
    dq_err e = {0};

    if (dq_enqueue(c, q, &o, payload, len, &en, &e) != DQ_OK)
        fail_msg("dq_enqueue %s: %s", id, e.msg);
    assert_false(en.duplicate);
    if (dq_claim(c, q, 1, 60000, WORKER, cl, &e) != DQ_OK)
        fail_msg("dq_claim: %s", e.msg);
    assert_int_equal(cl->n, 1);
    assert_string_equal(cl->tasks[0].id, id);
}

/* A task @id in the failed set of @q with @msg and @trace. */
static void
lib_make_failed(const char *q, const char *id, const void *payload, size_t len, const char *msg,
                const char *trace)
{
    dq_client *c = lib_open();
    dq_claimed cl;
    dq_err e = {0};

    lib_claim(c, q, id, payload, len, &cl);
    if (dq_fail(c, q, &cl.tasks[0], msg, trace, &e) != DQ_OK)
        fail_msg("dq_fail: %s", e.msg);
    dq_claimed_free(&cl);
    dq_client_free(c);
}

/* A task @id held in flight by WORKER for a minute. */
static void
lib_make_inflight(const char *q, const char *id)
{
    dq_client *c = lib_open();
    dq_claimed cl;

    lib_claim(c, q, id, "\xa2ok", 3, &cl);
    dq_claimed_free(&cl);
    dq_client_free(c);
}

/* msgpack {"kind":"email"} */
static const char mp_map_kind[] = "\x81\xa4kind\xa5"
                                  "email";

/* ---- enqueue ------------------------------------------------------------------------ */

static void
enqueue_json_round_trips(void **state)
{
    /* Written the way the command prints JSON, so a round trip is textually equal. */
    static const char payload[] =
        "{\"s\":\"h\xc3\xa9llo \\\"q\\\" \\\\ / \\n\\t\",\"n\":-42,\"big\":9007199254740993,"
        "\"u64\":18446744073709551615,\"f\":1.5,\"arr\":[true,false,null,[],{}],"
        "\"u\":\"\xe2\x82\xac\xf0\x9f\x98\x80\",\"nested\":{\"a\":{\"b\":[1,2,3]}}}";
    struct result r = {0};
    char q[96], id[64], got[1024], line[4096];

    (void)state;
    test_queue_name(q, sizeof q, "enq-json");
    RUN(&r, "enqueue", "-q", q, "--json", payload);
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.err_len, 0);
    assert_int_equal(count_lines(r.out), 1);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    assert_true(id[0] != '\0' && strspn(id, "0123456789") == strlen(id)); /* generated */

    RUN(&r, "ls", "due", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    assert_true(nth_line(r.out, 0, line, sizeof line));
    char *jid = json_str(line, "id");
    assert_string_equal(jid, id);
    free(jid);
    json_value(line, "payload", got, sizeof got);
    assert_string_equal(got, payload);

    RUN(&r, "show", id, "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    json_value(r.out, "payload", got, sizeof got);
    assert_string_equal(got, payload);
    ASSERT_HAS(r.out, "\"state\":\"scheduled\"");
    ASSERT_HAS(r.out, "\"custom_id\":false");

    /* invalid JSON is bad input, and nothing is added */
    RUN(&r, "enqueue", "-q", q, "--json", "{\"a\":");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    assert_one_line(&r);
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "enqueued"), 1);
    result_free(&r);
}

/* Bytes that are not msgpack (0xc1 is never used), then every byte value, many times. */
static unsigned char *
binary_payload(size_t n)
{
    unsigned char *p = malloc(n);

    p[0] = 0xc1;
    for (size_t i = 1; i < n; i++)
        p[i] = (unsigned char)((i * 7 + i / 256) & 0xff);
    return p;
}

/* show --json of @id must carry exactly @want as {"$raw_base64": ...}. */
static void
assert_raw_payload(const char *q, const char *id, const unsigned char *want, size_t want_len)
{
    struct result r = {0};
    const char *v;
    unsigned char *got;
    size_t got_len;

    RUN(&r, "show", id, "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    v = json_find(r.out, "payload");
    assert_non_null(v);
    if (strncmp(v, "{\"$raw_base64\":\"", 16) != 0)
        fail_msg("payload is not raw base64: %s", esc(v, strlen(v)));
    got = b64_decode(v + 16, &got_len);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
    free(got);
    result_free(&r);
}

static void
enqueue_stdin_is_byte_exact(void **state)
{
    struct result r = {0};
    char q[96], id[64];
    size_t n = 70000; /* more than a pipe buffer */
    unsigned char *p = binary_payload(n);

    (void)state;
    test_queue_name(q, sizeof q, "enq-stdin");
    RUN_IN(&r, p, n, "enqueue", "-q", q, "-");
    ASSERT_EXIT(&r, 0);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    assert_raw_payload(q, id, p, n);

    /* a NUL in the middle and a trailing newline are payload too */
    RUN_IN(&r, "\xc1\0mid\n", 6, "enqueue", "-q", q, "--id", "with-nul", "-");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "with-nul\n");
    assert_raw_payload(q, "with-nul", (const unsigned char *)"\xc1\0mid\n", 6);
    free(p);
    result_free(&r);
}

static void
enqueue_file_is_byte_exact(void **state)
{
    struct result r = {0};
    char q[96], id[64], dir[] = "/tmp/dq-cli-XXXXXX", path[128], missing[160];
    size_t n = 5000;
    unsigned char *p = binary_payload(n);
    FILE *f;

    (void)state;
    test_queue_name(q, sizeof q, "enq-file");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/payload.bin", dir);
    snprintf(missing, sizeof missing, "%s/missing.bin", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);

    RUN(&r, "enqueue", "-q", q, "--file", path);
    ASSERT_EXIT(&r, 0);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    assert_raw_payload(q, id, p, n);

    RUN(&r, "enqueue", "-q", q, "--file", missing);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "missing.bin");
    assert_one_line(&r);

    unlink(path);
    rmdir(dir);
    free(p);
    result_free(&r);
}

static void
enqueue_duplicate_id(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "enq-dup");
    RUN(&r, "enqueue", "-q", q, "--id", "order-7", "--delay", "1h", "--json", "{\"v\":1}");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "order-7\n");
    assert_int_equal(r.err_len, 0);

    RUN(&r, "enqueue", "-q", q, "--id", "order-7", "--json", "{\"v\":2}");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "order-7\n");
    ASSERT_HAS(r.err, "order-7");
    ASSERT_HAS(r.err, "already exists");
    assert_one_line(&r);

    /* the first one is kept, unchanged and still in the future */
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "future"), 1);
    assert_int_equal(json_int(r.out, "due"), 0);
    RUN(&r, "show", "order-7", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"payload\":{\"v\":1}");
    ASSERT_HAS(r.out, "\"custom_id\":true");
    result_free(&r);
}

static void
enqueue_limits(void **state)
{
    struct result r = {0};
    char q[96];
    size_t max = 1048576;
    unsigned char *p = binary_payload(max + 1);

    (void)state;
    test_queue_name(q, sizeof q, "enq-limits");
    RUN(&r, "enqueue", "-q", q, "--delay", "8d", "--json", "1");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "max_delay_ms");
    assert_one_line(&r);

    RUN(&r, "enqueue", "-q", q, "--at", "2999-01-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_delay_ms");

    RUN_IN(&r, p, max + 1, "enqueue", "-q", q, "-");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "max_payload");
    assert_one_line(&r);

    /* exactly the limit is fine; 7d exactly too */
    RUN_IN(&r, p, max, "enqueue", "-q", q, "--id", "max", "-");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "max\n");
    RUN(&r, "enqueue", "-q", q, "--delay", "7d", "--json", "1");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "enqueued"), 2);
    assert_raw_payload(q, "max", p, max);
    free(p);
    result_free(&r);
}

static void
enqueue_bad_input(void **state)
{
    struct result r = {0};
    char q[96], longid[202];

    (void)state;
    test_queue_name(q, sizeof q, "enq-bad");
    memset(longid, 'x', 201);
    longid[201] = '\0';

    RUN(&r, "enqueue", "-q", q, "--delay", "5x", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--delay");
    ASSERT_HAS(r.err, "5x");
    assert_one_line(&r);

    RUN(&r, "enqueue", "-q", q, "--delay", "5s", "--at", "2020-01-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--delay");
    ASSERT_HAS(r.err, "--at");

    RUN(&r, "enqueue", "-q", q, "--at", "2020-13-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--at");
    RUN(&r, "enqueue", "-q", q, "--at", "tomorrow", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--at");

    RUN(&r, "enqueue", "-q", q); /* no payload */
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--json", "1", "-"); /* two payloads */
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--json"); /* missing value */
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--id", "", "--json", "1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--id", longid, "--json", "1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--id", "a\x1b[2Jb", "--json", "1");
    ASSERT_EXIT(&r, 2);
    assert_false(has_bytes(r.err, r.err_len, "\x1b", 1));
    RUN(&r, "enqueue", "-q", q, "--max-attempts", "many", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--max-attempts");
    RUN(&r, "enqueue", "-q", q, "--deadline", "0", "--json", "1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "enqueue", "-q", q, "--bogus", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--bogus");

    /* none of these reached the queue: it was not even made */
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not known");
    assert_int_equal(r.out_len, 0);
    result_free(&r);
}

static void
enqueue_at_and_options(void **state)
{
    struct result r = {0};
    char q[96], at[32];
    struct timespec ts;
    long long at_ms, due;

    (void)state;
    test_queue_name(q, sizeof q, "enq-at");
    /* RFC 3339 in the past: due now */
    RUN(&r, "enqueue", "-q", q, "--id", "past", "--at", "2020-01-01T00:00:00Z", "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "past ");
    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, "past");

    /* epoch milliseconds, an hour ahead (the server runs on this host's clock) */
    clock_gettime(CLOCK_REALTIME, &ts);
    at_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 3600 * 1000;
    snprintf(at, sizeof at, "%lld", at_ms);
    RUN(&r, "enqueue", "-q", q, "--id", "later", "--at", at, "--max-attempts", "3", "--deadline",
        "1m", "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "show", "later", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    due = json_int(r.out, "due_ms");
    assert_int_equal(due, at_ms);
    assert_int_equal(json_int(r.out, "deadline_ms"), at_ms + 60000);
    assert_int_equal(json_int(r.out, "max_attempts"), 3);
    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "later ");
    ASSERT_HAS(r.out, "0/3");

    /* --max-attempts 0 is unlimited */
    RUN(&r, "enqueue", "-q", q, "--id", "forever", "--delay", "1h", "--max-attempts", "0", "--json",
        "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "show", "forever", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "unlimited");
    result_free(&r);
}

/* ---- stats -------------------------------------------------------------------------- */

static void
stats_human_and_json(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "stats");
    lib_make_failed(q, "f1", mp_map_kind, sizeof mp_map_kind - 1, "boom", "at x()");
    lib_make_inflight(q, "i1");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--json", "2");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--delay", "10m", "--json", "3");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--json", "4");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    char *jq = json_str(r.out, "queue");
    assert_string_equal(jq, q);
    free(jq);
    assert_int_equal(json_int(r.out, "due"), 2);
    assert_int_equal(json_int(r.out, "future"), 2);
    assert_int_equal(json_int(r.out, "far_future"), 1);
    assert_int_equal(json_int(r.out, "far_future_after_ms"), 3600000);
    assert_int_equal(json_int(r.out, "inflight"), 1);
    assert_int_equal(json_int(r.out, "failed"), 1);
    assert_true(json_int(r.out, "next_due_ms") > json_int(r.out, "now_ms"));
    const char *counters = json_find(r.out, "counters");
    assert_non_null(counters);
    assert_int_equal(json_int(counters, "enqueued"), 6);
    assert_int_equal(json_int(counters, "failed"), 1);

    RUN(&r, "stats", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, q);
    ASSERT_HAS(r.out, "\ndue          2");
    ASSERT_HAS(r.out, "\nfuture       2 ");
    ASSERT_HAS(r.out, "\nfar future   1 ");
    ASSERT_HAS(r.out, "\nin flight    1 ");
    ASSERT_HAS(r.out, "\nfailed       1\n");
    ASSERT_HAS(r.out, "enqueued 6,");
    assert_terminal_safe("stats", r.out, r.out_len);

    RUN(&r, "stats", "-q", q, "--bogus");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

static void
queues_lists_used_queues(void **state)
{
    struct result r = {0};
    char q[96], line[200];

    (void)state;
    test_queue_name(q, sizeof q, "queues");
    lib_make_failed(q, "f1", mp_map_kind, sizeof mp_map_kind - 1, "boom", "at x()");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "2");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "queues");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "QUEUE ");
    snprintf(line, sizeof line, "\n%-32s %10d %10d %10d %10d\n", q, 1, 1, 0, 1);
    ASSERT_HAS(r.out, line);
    assert_terminal_safe("queues", r.out, r.out_len);

    RUN(&r, "queues", "--json");
    ASSERT_EXIT(&r, 0);
    assert_json_safe("queues --json", r.out, r.out_len);
    snprintf(line, sizeof line,
             "{\"queue\":\"%s\",\"due\":1,\"future\":1,\"inflight\":0,\"failed\":1}", q);
    ASSERT_HAS(r.out, line);

    /* stats of a typo is not a use: refused, and the queue list does not grow */
    RUN(&r, "stats", "-q", "no-such-queue-typo");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "queue \"no-such-queue-typo\" is not known on ");
    RUN(&r, "queues");
    ASSERT_LACKS(r.out, "no-such-queue-typo");

    RUN(&r, "queues", "--forget", q);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "queues");
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, q);
    RUN(&r, "queues", "--forget", "");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "queues", "--bogus");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

/* SADD of raw bytes (a foreign write) to the registry. */
static void
registry_add_raw(const char *member, size_t len)
{
    redisContext *c = redisConnect("127.0.0.1", g_redis.port);
    const char *argv[3] = {"SADD", "dq:queues", member};
    size_t lens[3] = {4, 9, len};

    assert_non_null(c);
    assert_int_equal(c->err, 0);
    redisReply *rep = redisCommandArgv(c, 3, argv, lens);
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
    freeReplyObject(rep);
    redisFree(c);
}

/* Members of the registry that are no valid queue names (a foreign write: too long, a
 * space, a NUL) are listed by --invalid, escaped, and --forget removes each, named as
 * shown; a NUL member is no longer listed as the name before its NUL. */
static void
queues_forget_any_member(void **state)
{
    struct result r = {0};
    char q[96], nul[128], longname[151];
    (void)state;

    test_queue_name(q, sizeof q, "regjunk");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    int n = snprintf(nul, sizeof nul, "%s", q);
    memcpy(nul + n, "\0evil", 5);
    registry_add_raw(nul, (size_t)n + 5);
    memset(longname, 'L', 150);
    longname[150] = '\0';
    registry_add_raw(longname, 150);
    registry_add_raw("q x\x1b[2J", 7);

    RUN(&r, "queues");
    ASSERT_EXIT(&r, 0);
    const char *first = strstr(r.out, q);
    assert_non_null(first);
    assert_null(strstr(first + strlen(q), q)); /* listed once, not twice */

    RUN(&r, "queues", "--invalid");
    ASSERT_EXIT(&r, 0);
    assert_terminal_safe("queues --invalid", r.out, r.out_len);
    ASSERT_HAS(r.out, "q x\\e[2J  (7 bytes)\n");
    ASSERT_HAS(r.out, "\\x00evil  (");
    ASSERT_HAS(r.out, longname);
    ASSERT_HAS(r.out, "(3 of ");

    char shown[160];
    snprintf(shown, sizeof shown, "%s\\x00evil", q);
    RUN(&r, "queues", "--forget", shown);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "forgot registry member ");
    RUN(&r, "queues", "--forget", longname);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "queues", "--forget", "q x\\e[2J");
    ASSERT_EXIT(&r, 0);
    /* gone: a second forget says so; a bad escape is a usage error */
    RUN(&r, "queues", "--forget", "q x\\e[2J");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not in the registry");
    RUN(&r, "queues", "--forget", "q\\q");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "queues", "--invalid", "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.out_len, 0);
    /* the valid queue is still there */
    RUN(&r, "queues");
    ASSERT_HAS(r.out, q);
    result_free(&r);
}

/* An operator command on a queue nothing has made is a typo until shown otherwise: exit
 * 1 naming the queue, the server and the close registered name, never an empty answer
 * ("requeued 0", "all well"). Known means registered or having any key. */
static void
unknown_queues_are_named(void **state)
{
    static const char *const cmds[][4] = {
        {"stats"},         {"stats", "--check"}, {"stats", "--json"}, {"ls", "due"},
        {"show", "7"},     {"requeue", "--all"}, {"requeue", "7"},    {"drop", "--all-failed"},
        {"pause"},         {"resume"},           {"config"},          {"errors"},
        {"export", "due"}, {"workers"},          {"audit"},
    };
    struct result r = {0};
    char q[96], typo[96], want[3000], cmd[64], other[96];
    const char *where = g_redis.url + strlen("redis://");

    (void)state;
    test_queue_name(q, sizeof q, "billing");
    test_queue_name(typo, sizeof typo, "billng");
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "1");
    ASSERT_EXIT(&r, 0);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *const *c = cmds[i];
        RUN(&r, c[0], c[1] ? c[1] : "-q", c[1] ? "-q" : typo, c[1] ? typo : NULL);
        snprintf(cmd, sizeof cmd, "%s%s%s", c[0], c[1] ? " " : "", c[1] ? c[1] : "");
        if (r.status != 1)
            fail_msg("%s: exit %d, want 1 (stderr: %s)", cmd, r.status, r.err);
        snprintf(want, sizeof want,
                 "delayq %s: queue \"%s\" is not known on %s (did you mean %s?)\n", c[0], typo,
                 where, q);
        if (strcmp(r.err, want) != 0)
            fail_msg("%s: stderr\n%s\nwant\n%s", cmd, r.err, want);
        assert_int_equal(r.out_len, 0);
    }
    /* nothing close: some registered names instead */
    RUN(&r, "stats", "-q", "zz-nothing-like-it");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "queue \"zz-nothing-like-it\" is not known on ");
    ASSERT_HAS(r.err, " (known: ");
    /* none of it made the typo a queue */
    RUN(&r, "queues");
    ASSERT_LACKS(r.out, typo);

    /* known without the registry: its keys exist (forgotten, or an SADD that failed) */
    RUN(&r, "queues", "--forget", q);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "future"), 1);
    /* and registered without keys (a worker that never got a task) */
    test_queue_name(other, sizeof other, "idle");
    const char *sadd[] = {"SADD", "dq:queues", other};
    assert_int_equal(test_redis_int(&g_redis, 3, sadd), 1);
    RUN(&r, "ls", "due", "-q", other);
    ASSERT_EXIT(&r, 0);
    /* config with FIELD=VALUE prepares a new queue; reading it back then works */
    test_queue_name(other, sizeof other, "prepared");
    RUN(&r, "config", "-q", other, "max_attempts=3");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", other, "--check");
    ASSERT_EXIT(&r, 0);
    result_free(&r);
}

/* Makes @q known but empty the way an operator prepares a queue before its producers
 * run: a config change (max_attempts to its default, 25). */
static void
make_known(const char *q)
{
    struct result r = {0};

    RUN(&r, "config", "-q", q, "max_attempts=25");
    ASSERT_EXIT(&r, 0);
    result_free(&r);
}

static void
stats_check_far_future(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "check-far");
    /* a queue nothing has made fails the check (a typo in a health check must not pass) */
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "is not known on ");
    make_known(q);
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "ok");
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "0");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "0");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, q);
    ASSERT_HAS(r.err, "limit 0");
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check", "--max-far-future", "-1");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

struct age_wait {
    const char *q;
    long long min_age;
};

static bool
oldest_due_older(void *arg)
{
    struct age_wait *w = arg;
    struct result r = {0};
    bool ok;

    RUN(&r, "stats", "-q", w->q, "--json");
    ok = r.status == 0 && json_int(r.out, "oldest_due_age_ms") > w->min_age;
    result_free(&r);
    return ok;
}

static void
stats_check_oldest_due(void **state)
{
    struct result r = {0};
    char q[96];
    struct age_wait w;

    (void)state;
    test_queue_name(q, sizeof q, "check-age");
    make_known(q);
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1ms");
    ASSERT_EXIT(&r, 0); /* nothing due, nothing old */

    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    w = (struct age_wait){.q = q, .min_age = 5};
    assert_true(wait_until(oldest_due_older, &w, 5000, "the due task to be older than 5 ms"));

    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1ms");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, q);
    ASSERT_HAS(r.err, "limit 1ms");
    ASSERT_HAS(r.err, "oldest due has waited");
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1h");
    ASSERT_EXIT(&r, 0);
    /* the verdict, in the inspector's words: a warning passes the check */
    ASSERT_HAS(r.out, "no worker registered while 1 are due");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"verdict\":{\"level\":\"warn\",\"text\":\"no worker registered while 1 "
                      "are due\"}");
    ASSERT_HAS(r.out, "\"workers\":{\"registered\":0,\"live\":0,\"lost\":0}");
    RUN(&r, "stats", "-q", q, "--check"); /* default 5m */
    ASSERT_EXIT(&r, 0);
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "soon");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--max-oldest-due");
    result_free(&r);
}

/* The check's thresholds are the queue's alert_* config fields; the flags override them. */
static void
stats_check_takes_the_queues_thresholds(void **state)
{
    struct result r = {0};
    char q[96];
    struct age_wait w;

    (void)state;
    test_queue_name(q, sizeof q, "check-cfg");
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "config", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "alert_oldest_due_ms 300000 (5m00s)\n");
    ASSERT_HAS(r.out, "alert_far_future  100000\n");
    ASSERT_HAS(r.out, "alert_running_ms  300000 (5m00s)\n");
    ASSERT_HAS(r.out, "alert_memory_pct  90\n");
    w = (struct age_wait){.q = q, .min_age = 5};
    assert_true(wait_until(oldest_due_older, &w, 5000, "the due task to be older than 5 ms"));
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 0); /* the default 5m */

    RUN(&r, "config", "-q", q, "alert_oldest_due_ms=1ms", "--who", "cfg-alert");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "alert_oldest_due_ms 1 (1ms)\n");
    RUN(&r, "stats", "-q", q, "--check");
    ASSERT_EXIT(&r, 1);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "oldest due has waited");
    ASSERT_HAS(r.err, "limit 1ms");
    RUN(&r, "stats", "-q", q, "--check", "--max-oldest-due", "1h"); /* the flag overrides */
    ASSERT_EXIT(&r, 0);
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "alert_oldest_due_ms=1");
    ASSERT_HAS(r.out, "cfg-alert");

    /* validation names the field */
    RUN(&r, "config", "-q", q, "alert_memory_pct=101");
    assert_int_not_equal(r.status, 0);
    ASSERT_HAS(r.err, "alert_memory_pct");
    RUN(&r, "config", "-q", q, "alert_far_future=0");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "alert_far_future");
    RUN(&r, "config", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"alert_oldest_due_ms\":1,\"alert_far_future\":100000,"
                      "\"alert_running_ms\":300000,\"alert_memory_pct\":90,"
                      "\"alert_window_ms\":300000,\"alert_fail_pct\":50,"
                      "\"alert_fail_per_min\":60}");
    result_free(&r);
}

/* ---- ls ----------------------------------------------------------------------------- */

/* Asserts the ids appear in @out in this order. */
static void
assert_order(const char *out, const char *const *ids, size_t n)
{
    const char *prev = out;

    for (size_t i = 0; i < n; i++) {
        char pat[64];
        const char *p;

        snprintf(pat, sizeof pat, "\n%s ", ids[i]);
        p = strstr(out, pat);
        if (p == NULL || p < prev)
            fail_msg("%s missing or out of order in:\n%s", ids[i], esc(out, strlen(out)));
        prev = p;
    }
}

static void
ls_views_and_paging(void **state)
{
    struct result r = {0};
    char q[96], line[4096];
    static const char *const due_ids[] = {"d1", "d2", "d3", "d4", "d5"};

    (void)state;
    test_queue_name(q, sizeof q, "ls");
    lib_make_failed(q, "gone", mp_map_kind, sizeof mp_map_kind - 1, "smtp said no", "at send()");
    lib_make_inflight(q, "busy");
    for (size_t i = 0; i < 5; i++) {
        RUN(&r, "enqueue", "-q", q, "--id", due_ids[i], "--json", "{\"n\":1}");
        ASSERT_EXIT(&r, 0);
    }
    RUN(&r, "enqueue", "-q", q, "--id", "soon", "--delay", "1h", "--json", "{\"n\":2}");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_true(strncmp(r.out, "ID ", 3) == 0);
    ASSERT_HAS(r.out, "OVERDUE");
    assert_int_equal(count_lines(r.out), 6);
    assert_order(r.out, due_ids, 5);
    ASSERT_LACKS(r.out, "soon");
    ASSERT_LACKS(r.out, "busy");
    ASSERT_LACKS(r.out, "gone");

    RUN(&r, "ls", "due", "-q", q, "--limit", "2", "--offset", "1");
    ASSERT_EXIT(&r, 0);
    assert_order(r.out, due_ids + 1, 2);
    ASSERT_LACKS(r.out, "d1 ");
    ASSERT_LACKS(r.out, "d4 ");
    ASSERT_HAS(r.out, "(2 of 5 shown, from offset 1)");

    RUN(&r, "ls", "due", "-q", q, "--json", "--limit=2", "--offset=3");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 2);
    assert_json_safe("ls due --json", r.out, r.out_len);
    for (size_t i = 0; i < 2; i++) {
        assert_true(nth_line(r.out, i, line, sizeof line));
        assert_int_equal(line[0], '{');
        assert_int_equal(line[strlen(line) - 1], '}');
        char *jid = json_str(line, "id");
        assert_string_equal(jid, due_ids[3 + i]);
        free(jid);
        ASSERT_HAS(line, "\"state\":\"scheduled\"");
    }
    RUN(&r, "ls", "due", "-q", q, "--offset", "5");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 2); /* header and "(0 of 5 shown ...)" */

    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "DUE IN");
    ASSERT_HAS(r.out, "\nsoon ");
    ASSERT_LACKS(r.out, "d1");

    RUN(&r, "ls", "inflight", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\nbusy ");
    ASSERT_HAS(r.out, "[" WORKER "]");
    assert_int_equal(count_lines(r.out), 2);
    RUN(&r, "ls", "in-flight", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"state\":\"inflight\"");
    ASSERT_HAS(r.out, "\"worker\":\"" WORKER "\"");
    ASSERT_HAS(r.out, "\"lease_expired\":false");

    RUN(&r, "ls", "failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "REASON: ERROR");
    ASSERT_HAS(r.out, "\ngone ");
    ASSERT_HAS(r.out, "error: smtp said no");
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"id\":\"gone\"");
    ASSERT_HAS(r.out, "\"error\":\"smtp said no\"");
    ASSERT_HAS(r.out, "\"payload\":{\"kind\":\"email\"}");

    /* usage errors */
    RUN(&r, "ls", "pending", "-q", q);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "pending");
    assert_int_equal(r.out_len, 0);
    RUN(&r, "ls", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "ls", "due", "-q", q, "--limit", "0");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--limit");
    RUN(&r, "ls", "due", "-q", q, "--limit", "1001");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "ls", "due", "-q", q, "--offset", "-1");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "ls", "due", "future", "-q", q);
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

/* ---- show --------------------------------------------------------------------------- */

static const char trace_text[] = "Traceback (most recent call last):\n"
                                 "  File \"worker.py\", line 42, in run\n"
                                 "    send(msg)\n"
                                 "  File \"smtp.py\", line 7, in send\n"
                                 "    raise IOError(\"connection reset\")\n"
                                 "OSError: connection reset";

static void
show_tasks(void **state)
{
    struct result r = {0};
    char q[96], id[64], want[256];
    const char *line;

    (void)state;
    test_queue_name(q, sizeof q, "show");
    lib_make_failed(q, "broken", mp_map_kind, sizeof mp_map_kind - 1, "smtp: connection reset",
                    trace_text);
    lib_make_inflight(q, "running");
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "{\"to\":\"a@b.c\",\"n\":[1,2]}");
    ASSERT_EXIT(&r, 0);
    snprintf(id, sizeof id, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--id", "order-42", "--json", "{\"k\":\"v\"}");
    ASSERT_EXIT(&r, 0);

    /* a generated id of a scheduled task (found by walking the set) */
    RUN(&r, "show", id, "-q", q);
    ASSERT_EXIT(&r, 0);
    snprintf(want, sizeof want, "id            %s\n", id);
    ASSERT_HAS(r.out, want);
    ASSERT_HAS(r.out, "state         scheduled\n");
    ASSERT_HAS(r.out, "id kind       generated\n");
    ASSERT_HAS(r.out, "\ndue           ");
    ASSERT_HAS(r.out, " (in "); /* an hour ahead, give or take the ms since enqueue */
    ASSERT_HAS(r.out, "to: \"a@b.c\"");
    ASSERT_HAS(r.out, "- 2");
    assert_terminal_safe("show generated", r.out, r.out_len);

    /* a custom id */
    RUN(&r, "show", "order-42", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "id            order-42\n");
    ASSERT_HAS(r.out, "chosen by the producer");
    ASSERT_HAS(r.out, "k: \"v\"");
    RUN(&r, "show", "order-42", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"id\":\"order-42\"");
    ASSERT_HAS(r.out, "\"custom_id\":true");
    ASSERT_HAS(r.out, "\"payload\":{\"k\":\"v\"}");

    /* in flight */
    RUN(&r, "show", "running", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "state         in flight\n");
    ASSERT_HAS(r.out, "worker        " WORKER "\n");
    ASSERT_HAS(r.out, "lease until");

    /* failed: the error and every line of the stack trace, indented */
    RUN(&r, "show", "broken", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "state         failed\n");
    ASSERT_HAS(r.out, "reason        error\n");
    ASSERT_HAS(r.out, "kind: \"email\"");
    ASSERT_HAS(r.out, "\nerror\n  smtp: connection reset\n");
    line = trace_text;
    ASSERT_HAS(r.out, "\nstack trace\n  Traceback (most recent call last):\n");
    while (*line) {
        size_t len = strcspn(line, "\n");
        snprintf(want, sizeof want, "\n  %.*s\n", (int)len, line);
        ASSERT_HAS(r.out, want);
        line += len + (line[len] == '\n');
    }
    assert_terminal_safe("show failed", r.out, r.out_len);

    RUN(&r, "show", "broken", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"reason\":\"error\"");
    char *s = json_str(r.out, "error");
    assert_string_equal(s, "smtp: connection reset");
    free(s);
    s = json_str(r.out, "trace");
    assert_string_equal(s, trace_text);
    free(s);
    assert_true(json_int(r.out, "failed_ms") > 0);

    /* unknown id: exit 1 naming it */
    RUN(&r, "show", "no-such-task", "-q", q);
    ASSERT_EXIT(&r, 1);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "no-such-task");
    assert_one_line(&r);
    RUN(&r, "show", "-q", q);
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

/* ---- requeue, drop, audit ----------------------------------------------------------- */

static void
requeue_drop_and_audit(void **state)
{
    struct result r = {0};
    char q[96], line[2048];
    static const char *const actions[][3] = {
        /* newest first: who, action, detail */
        {"op5", "drop-all", "failed until"},
        {"op4", "drop", "sched"},
        {"op3", "drop", "f2"},
        {"op1", "requeue", "f1"},
    };

    (void)state;
    test_queue_name(q, sizeof q, "ops");
    lib_make_failed(q, "f1", mp_map_kind, sizeof mp_map_kind - 1, "e1", "t1");
    lib_make_failed(q, "f2", mp_map_kind, sizeof mp_map_kind - 1, "e2", "t2");
    lib_make_failed(q, "f3", mp_map_kind, sizeof mp_map_kind - 1, "e3", "t3");
    RUN(&r, "enqueue", "-q", q, "--id", "sched", "--delay", "1h", "--json", "1");
    ASSERT_EXIT(&r, 0);

    RUN(&r, "requeue", "f1", "-q", q, "--who", "op1");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 1\n");
    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\nf1 ");
    RUN(&r, "show", "f1", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"state\":\"scheduled\"");
    assert_int_equal(json_int(r.out, "attempt"), 0);
    RUN(&r, "ls", "failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, "f1 ");

    /* again: it is no longer failed */
    RUN(&r, "requeue", "f1", "-q", q, "--who", "op2");
    ASSERT_EXIT(&r, 1);
    assert_int_equal(r.out_len, 0);
    ASSERT_HAS(r.err, "f1");
    assert_one_line(&r);

    /* all or nothing: one unknown id and nothing moves */
    RUN(&r, "requeue", "f2", "nope", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "nope");
    RUN(&r, "drop", "f2", "nope", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "nope");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 2);

    RUN(&r, "drop", "f2", "-q", q, "--who", "op3");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 1\n");
    RUN(&r, "drop", "sched", "-q", q, "--who", "op4");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 1\n");
    RUN(&r, "ls", "future", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_LACKS(r.out, "sched");
    RUN(&r, "show", "f2", "-q", q);
    ASSERT_EXIT(&r, 1);

    RUN(&r, "drop", "unknown-id", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "unknown-id");
    assert_one_line(&r);

    RUN(&r, "drop", "--all-failed", "-q", q, "--who", "op5");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 1\n"); /* f3 */
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.out_len, 0);

    /* usage */
    RUN(&r, "requeue", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "drop", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "x", "--all", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "x", "--spread", "1m", "-q", q);
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "x", "--delay", "5x", "-q", q);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--delay");

    /* the successful actions, newest first, each with its operator */
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    {
        const char *prev = r.out;
        for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++) {
            char pat[64];
            const char *p;
            snprintf(pat, sizeof pat, "  %s  %s  ", actions[i][0], actions[i][1]);
            p = strstr(r.out, pat);
            if (p == NULL || p < prev)
                fail_msg("audit entry \"%s\" missing or out of order:\n%s", pat,
                         esc(r.out, r.out_len));
            prev = p;
        }
    }
    ASSERT_HAS(r.out, "  op1  requeue  f1  -> ok");
    ASSERT_HAS(r.out, "  op3  drop  f2  -> ok");
    ASSERT_HAS(r.out, "  op2  requeue  f1  -> refused"); /* refusals are recorded too */
    assert_terminal_safe("audit", r.out, r.out_len);

    RUN(&r, "audit", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_json_safe("audit --json", r.out, r.out_len);
    {
        long long prev_at = LLONG_MAX;
        size_t n = count_lines(r.out), k = 0;

        assert_true(n >= 4);
        for (size_t i = 0; i < n; i++) {
            char *who, *action;
            long long at;

            assert_true(nth_line(r.out, i, line, sizeof line));
            at = json_int(line, "at_ms");
            assert_true(at <= prev_at);
            prev_at = at;
            who = json_str(line, "who");
            action = json_str(line, "action");
            if (k < 4 && strcmp(who, actions[k][0]) == 0) {
                assert_string_equal(action, actions[k][1]);
                k++;
            }
            free(who);
            free(action);
        }
        assert_int_equal(k, 4);
        assert_true(nth_line(r.out, 0, line, sizeof line));
        ASSERT_HAS(line, "\"who\":\"op5\"");
    }
    RUN(&r, "audit", "-q", q, "--json", "--limit", "1");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 1);
    ASSERT_HAS(r.out, "\"who\":\"op5\"");
    RUN(&r, "audit", "-q", q, "--limit", "0");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

static void
requeue_all(void **state)
{
    struct result r = {0};
    char q[96], id[16];

    (void)state;
    test_queue_name(q, sizeof q, "requeue-all");
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "bulk%d", i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, "down", "at x()");
    }
    RUN(&r, "requeue", "--all", "-q", q, "--delay", "1h");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 4\n");
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(r.out_len, 0);
    RUN(&r, "ls", "future", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 4);
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(json_find(r.out, "counters"), "requeued"), 4);
    assert_int_equal(json_int(r.out, "due"), 0);
    /* nothing left: a second --all moves nothing and still succeeds */
    RUN(&r, "requeue", "--all", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 0\n");
    RUN(&r, "drop", "--all-failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 0\n");
    result_free(&r);
}

/* ---- a reply lost on the way back ----------------------------------------------------- */

/*
 * A loopback proxy to the test's redis-server that forwards both ways, except that on
 * the @cut_at-th command holding @needle it forwards the command, waits for the reply,
 * drops it and closes both sides: the step ran, its caller sees a lost connection.
 * Runs on its own thread until @stop (bounded by a deadline either way).
 */
struct proxy {
    int listen_fd, port;
    const char *needle;
    int cut_at, seen;
    bool cut; /* the cut happened */
    volatile bool stop;
    pthread_t thread;
};

enum { PROXY_PAIRS = 8 };

static bool
holds(const char *buf, size_t len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(buf + i, needle, n) == 0)
            return true;
    return false;
}

static int
proxy_upstream(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g_redis.port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void *
proxy_run(void *arg)
{
    struct proxy *p = arg;
    int down[PROXY_PAIRS], up[PROXY_PAIRS];
    bool cutting[PROXY_PAIRS] = {false};
    int64_t deadline = test_mono_ms() + 60000;
    char buf[65536];

    for (int i = 0; i < PROXY_PAIRS; i++)
        down[i] = up[i] = -1;
    while (!p->stop && test_mono_ms() < deadline) {
        struct pollfd fds[1 + 2 * PROXY_PAIRS];
        int n = 0;
        fds[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        for (int i = 0; i < PROXY_PAIRS; i++) {
            fds[n++] = (struct pollfd){.fd = down[i], .events = POLLIN};
            fds[n++] = (struct pollfd){.fd = up[i], .events = POLLIN};
        }
        if (poll(fds, (nfds_t)n, 50) <= 0)
            continue;
        if (fds[0].revents & POLLIN) {
            int c = accept(p->listen_fd, NULL, NULL);
            int slot = -1;
            for (int i = 0; i < PROXY_PAIRS && slot < 0; i++)
                slot = down[i] < 0 ? i : -1;
            if (c >= 0 && slot >= 0 && (up[slot] = proxy_upstream()) >= 0)
                down[slot] = c;
            else if (c >= 0)
                close(c);
        }
        for (int i = 0; i < PROXY_PAIRS; i++) {
            for (int side = 0; side < 2 && down[i] >= 0; side++) {
                struct pollfd *f = &fds[1 + 2 * i + side];
                if (f->fd < 0 || !(f->revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                int from = side == 0 ? down[i] : up[i], to = side == 0 ? up[i] : down[i];
                ssize_t got = read(from, buf, sizeof buf - 1);
                bool drop_pair = got <= 0;
                if (got > 0 && side == 1 && cutting[i]) {
                    drop_pair = true; /* the reply of the cut command: never delivered */
                    p->cut = true;
                } else if (got > 0) {
                    buf[got] = '\0';
                    if (side == 0 && !p->cut && holds(buf, (size_t)got, p->needle) &&
                        ++p->seen == p->cut_at)
                        cutting[i] = true;
                    drop_pair = write(to, buf, (size_t)got) != got;
                }
                if (drop_pair) {
                    close(down[i]);
                    close(up[i]);
                    down[i] = up[i] = -1;
                    cutting[i] = false;
                }
            }
        }
    }
    for (int i = 0; i < PROXY_PAIRS; i++) {
        if (down[i] >= 0) {
            close(down[i]);
            close(up[i]);
        }
    }
    return NULL;
}

static void
proxy_start(struct proxy *p, const char *needle, int cut_at)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof a;

    memset(p, 0, sizeof *p);
    p->needle = needle;
    p->cut_at = cut_at;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(p->listen_fd >= 0);
    assert_int_equal(bind(p->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(p->listen_fd, 8), 0);
    assert_int_equal(getsockname(p->listen_fd, (struct sockaddr *)&a, &len), 0);
    p->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&p->thread, NULL, proxy_run, p), 0);
}

static void
proxy_stop(struct proxy *p)
{
    p->stop = true;
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}

/* @n failed tasks in @q, made through one library client. */
static void
lib_make_failed_many(const char *q, size_t n)
{
    dq_client *c = lib_open();
    dq_err e = {0};

    for (size_t i = 0; i < n; i++) {
        dq_enqueued en;
        if (dq_enqueue(c, q, NULL, "\x01", 1, &en, &e) != DQ_OK)
            fail_msg("dq_enqueue: %s", e.msg);
    }
    for (size_t left = n; left > 0;) {
        dq_claimed cl;
        if (dq_claim(c, q, DQ_CALL_MAX, 60000, WORKER, &cl, &e) != DQ_OK)
            fail_msg("dq_claim: %s", e.msg);
        assert_true(cl.n > 0);
        for (size_t i = 0; i < cl.n; i++)
            if (dq_fail(c, q, &cl.tasks[i], "down", "", &e) != DQ_OK)
                fail_msg("dq_fail: %s", e.msg);
        left -= cl.n;
        dq_claimed_free(&cl);
    }
    dq_client_free(c);
}

/* The reply to the last step of requeue --all / drop --all-failed is lost (the step ran):
 * the command reads the audit log back and reports what moved, not what answered. */
static void
bulk_reply_lost_is_read_back(void **state)
{
    struct result r = {0};
    struct proxy p;
    char q[96], url[64];

    (void)state;
    test_queue_name(q, sizeof q, "lostreply");
    lib_make_failed_many(q, 1500); /* two steps of 1000 */

    proxy_start(&p, "_requeue\r\n", 2);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", p.port);
    RUN(&r, "requeue", "--all", "-q", q, "--delay", "1h", "--url", url);
    proxy_stop(&p);
    assert_true(p.cut);
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 1500\n");
    assert_non_null(strstr(r.err, "the audit log shows it ran"));
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(json_find(r.out, "counters"), "requeued"), 1500);

    /* the same for drop, whose steps each log their own count */
    RUN(&r, "drop", "--all-failed", "-q", q);
    ASSERT_EXIT(&r, 0);
    lib_make_failed_many(q, 1500);
    proxy_start(&p, "_drop\r\n", 2);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", p.port);
    RUN(&r, "drop", "--all-failed", "-q", q, "--url", url);
    proxy_stop(&p);
    ASSERT_EXIT(&r, 0);
    assert_true(p.cut);
    assert_string_equal(r.out, "dropped 1500\n");

    /* a first step lost: nothing names the bulk yet, so the count is "at least" */
    lib_make_failed_many(q, 10);
    proxy_start(&p, "_requeue\r\n", 1);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", p.port);
    RUN(&r, "requeue", "--all", "-q", q, "--url", url);
    proxy_stop(&p);
    ASSERT_EXIT(&r, 3);
    assert_non_null(strstr(r.err, "stopped after requeueing at least 0; the last step's "
                                  "outcome is unknown: see delayq audit -q "));
    result_free(&r);
}

/* delayq errors, and requeue / drop scoped to a group or a search text */
static void
errors_and_filtered_bulk(void **state)
{
    struct result r = {0};
    char q[96], id[16], msg[64];
    char *sig, *gid;

    (void)state;
    test_queue_name(q, sizeof q, "errors");
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "inv%d", i);
        snprintf(msg, sizeof msg, "invoice %d: total does not add up", 1000 + i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, msg, "at x()");
    }
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof id, "smtp%d", i);
        snprintf(msg, sizeof msg, "smtp \x1b[31m%d refused\nline two", i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, msg, "at send()");
    }
    RUN(&r, "errors", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 9);
    sig = json_str(r.out, "signature"); /* the largest group comes first */
    assert_string_equal(sig, "error: invoice #: total does not add up");
    assert_int_equal(json_int(r.out, "count"), 6);
    gid = json_str(r.out, "group");
    assert_int_equal(strlen(gid), 16);
    RUN(&r, "errors", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.out, "9 failed in 2 groups"));
    assert_non_null(strstr(r.out, "66.7%"));
    assert_null(strchr(r.out, '\x1b')); /* escaped, never sent to the terminal */
    /* usage errors name the option */
    RUN(&r, "requeue", "-q", q, "--group");
    ASSERT_EXIT(&r, 2);
    assert_non_null(strstr(r.err, "--group"));
    RUN(&r, "requeue", "-q", q, "--group", gid, "--match", "x");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "drop", "-q", q, "--group", "error: not a group");
    ASSERT_EXIT(&r, 1);
    assert_non_null(strstr(r.err, "no group"));
    /* requeue a group by its id, drop the rest by a search text */
    RUN(&r, "requeue", "-q", q, "--group", gid, "--delay", "1h", "--spread", "10m");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "requeued 6\n");
    RUN(&r, "drop", "-q", q, "--match", "refused");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "dropped 3\n");
    RUN(&r, "errors", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed"), 0);
    assert_non_null(strstr(r.out, "\"groups\":[]"));
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_non_null(strstr(r.out, "match=refused"));
    assert_non_null(strstr(r.out, "group="));
    free(sig);
    free(gid);
    result_free(&r);
}

/* ---- config ------------------------------------------------------------------------- */

static void
config_read_and_write(void **state)
{
    struct result r = {0};
    char q[96], id[16];

    (void)state;
    test_queue_name(q, sizeof q, "config");
    /* reading the config of a queue nothing made is a typo; setting it makes the queue */
    RUN(&r, "config", "-q", q);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not known on ");
    RUN(&r, "enqueue", "-q", q, "--delay", "1h", "--json", "1"); /* never claimed below */
    ASSERT_EXIT(&r, 0);
    RUN(&r, "config", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "failed_retention  100000\n");
    ASSERT_HAS(r.out, "max_payload       1048576\n");
    ASSERT_HAS(r.out, "max_delay_ms      604800000 (7d00h)\n");

    RUN(&r, "config", "-q", q, "failed_retention=3", "--who", "cfg-op");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "failed_retention  3\n");
    RUN(&r, "config", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed_retention"), 3);
    assert_int_equal(json_int(r.out, "max_payload"), 1048576);
    /* a field named *_ms takes a bare number as milliseconds, and a duration */
    RUN(&r, "config", "-q", q, "backoff_base_ms=50");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "backoff_base_ms   50 (50ms)\n");
    RUN(&r, "config", "-q", q, "backoff_base_ms=1s");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "backoff_base_ms   1000 (1s)\n");

    /* bad fields and values are usage errors and change nothing */
    RUN(&r, "config", "-q", q, "no_such_field=1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "no_such_field");
    RUN(&r, "config", "-q", q, "failed_retention=abc");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "failed_retention");
    RUN(&r, "config", "-q", q, "failed_retention=0");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "config", "-q", q, "max_delay_ms=5x");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_delay_ms");
    RUN(&r, "config", "-q", q, "max_payload=1099511627776"); /* past the script's range */
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_payload");
    RUN(&r, "config", "-q", q, "failed_retention=5", "max_payload=1099511627776");
    ASSERT_EXIT(&r, 2); /* all or nothing */
    RUN(&r, "config", "-q", q, "failed_retention");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "config", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "failed_retention"), 3);
    assert_int_equal(json_int(r.out, "max_payload"), 1048576);

    /* the limit is enforced: five failures, three kept, two trimmed */
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "ret%d", i);
        lib_make_failed(q, id, mp_map_kind, sizeof mp_map_kind - 1, "x", "");
    }
    RUN(&r, "ls", "failed", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(count_lines(r.out), 3);
    ASSERT_HAS(r.out, "\"id\":\"ret4\""); /* newest kept */
    ASSERT_LACKS(r.out, "\"id\":\"ret0\"");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(json_find(r.out, "counters"), "trimmed"), 2);

    /* durations take units, and enqueue enforces the queue's own limit */
    RUN(&r, "config", "-q", q, "max_delay_ms=1h");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "max_delay_ms      3600000 (1h00m)\n");
    RUN(&r, "enqueue", "-q", q, "--delay", "2h", "--json", "1");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "max_delay_ms");

    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "  cfg-op  config  failed_retention=3  -> ok");
    result_free(&r);
}

/* ---- terminal safety ---------------------------------------------------------------- */

static void
terminal_safety(void **state)
{
    /* msgpack str8 with ESC sequences, a C1 CSI, a bidi override and invalid UTF-8 */
    static const char mp_str[] = "\xd9\x1e"
                                 "a\x1b[2J\x1b]52;c;AAAA\x07"
                                 "\xc2\x9b"
                                 "1m\xe2\x80\xae"
                                 "x\xff\xfe"
                                 "end";
    static const char raw[] = "\x1b[2J\x1b]52;c;AAAA\x07\xff\xfe\x9b\r\n";
    static const char json[] = "{\"k\\u001b[31m\":\"v\\u001b[2J\\u001b]52;c;AAAA\\u0007"
                               "\\u009b\\u202e\\r\"}";
    static const char error[] = "bad \x1b[2J\x1b]52;c;AAAA\x07 \xff\xfe end\rX";
    static const char trace[] = "at f() \x1b[31mred\x1b[0m\n\xff\xfe\x80\n"
                                "\x1b]52;c;AAAA\x07\n\xe2\x80\xae reversed \x08\x7f";
    static const char *const views[] = {"due", "failed"};
    struct result r = {0};
    char q[96], what[64];

    (void)state;
    assert_int_equal(sizeof mp_str - 1, 2 + 0x1e);
    test_queue_name(q, sizeof q, "escapes");
    lib_make_failed(q, "evil-fail", mp_str, sizeof mp_str - 1, error, trace);
    RUN_IN(&r, mp_str, sizeof mp_str - 1, "enqueue", "-q", q, "--id", "evil-mp", "-");
    ASSERT_EXIT(&r, 0);
    RUN_IN(&r, raw, sizeof raw - 1, "enqueue", "-q", q, "--id", "evil-raw", "-");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--id", "evil-json", "--json", json);
    ASSERT_EXIT(&r, 0);

    for (size_t i = 0; i < 2; i++) {
        RUN(&r, "ls", views[i], "-q", q);
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "ls %s", views[i]);
        assert_terminal_safe(what, r.out, r.out_len);
        assert_true(count_lines(r.out) >= 2);
        RUN(&r, "ls", views[i], "-q", q, "--json");
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "ls %s --json", views[i]);
        assert_json_safe(what, r.out, r.out_len);
    }
    static const char *const ids[] = {"evil-fail", "evil-mp", "evil-raw", "evil-json"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        RUN(&r, "show", ids[i], "-q", q);
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "show %s", ids[i]);
        assert_terminal_safe(what, r.out, r.out_len);
        RUN(&r, "show", ids[i], "-q", q, "--json");
        ASSERT_EXIT(&r, 0);
        snprintf(what, sizeof what, "show %s --json", ids[i]);
        assert_json_safe(what, r.out, r.out_len);
        assert_int_equal(count_lines(r.out), 1);
    }

    /* the escaped text still says what was there */
    RUN(&r, "show", "evil-fail", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "[2J");
    ASSERT_HAS(r.out, "]52;c;AAAA");
    ASSERT_HAS(r.out, "red");
    ASSERT_HAS(r.out, "reversed");
    /* the JSON keeps the control characters, as escapes */
    RUN(&r, "show", "evil-fail", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\\u001b[2J");
    ASSERT_HAS(r.out, "\\u0007");
    RUN(&r, "show", "evil-json", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\"k\\u001b[31m\":\"v\\u001b[2J\\u001b]52;c;AAAA\\u0007");

    /* audit: an operator name with escapes, from --who */
    RUN(&r, "requeue", "evil-fail", "-q", q, "--delay", "1h", "--who", "op\x1b[2J\x07\xff");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "audit", "-q", q);
    ASSERT_EXIT(&r, 0);
    assert_terminal_safe("audit", r.out, r.out_len);
    ASSERT_HAS(r.out, "requeue  evil-fail");
    RUN(&r, "audit", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_json_safe("audit --json", r.out, r.out_len);

    /* error messages that echo an id from the user or Redis are escaped as well */
    RUN(&r, "show", "gone\x1b]52;c;AAAA\x07\xff", "-q", q);
    ASSERT_EXIT(&r, 1);
    assert_terminal_safe("show unknown (stderr)", r.err, r.err_len);
    RUN(&r, "no\x1b[2Jcmd");
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("unknown command (stderr)", r.err, r.err_len);
    result_free(&r);
}

/*
 * Usage errors quote the offending argument. main.c escapes an unknown command name
 * before printing it, and every message built from Redis data goes through
 * cli_put_safe(); arguments quoted by cli_usage_error() must be escaped the same way,
 * since scripts pass ids and names they read from elsewhere.
 */
static void
usage_errors_escape_arguments(void **state)
{
    static const char evil[] = "x\x1b]52;c;AAAA\x07\x1b[2J\xff";
    struct result r = {0};
    char q[96], field[64];

    (void)state;
    test_queue_name(q, sizeof q, "usage-esc");
    snprintf(field, sizeof field, "%s=1", evil);

    RUN(&r, "ls", evil, "-q", q); /* view "..." is not due, ... */
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("ls VIEW (stderr)", r.err, r.err_len);
    RUN(&r, "show", "some-id", evil, "-q", q); /* unexpected argument "..." */
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("show ID EXTRA (stderr)", r.err, r.err_len);
    RUN(&r, "config", field, "-q", q); /* unknown field "..." */
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("config FIELD=1 (stderr)", r.err, r.err_len);
    RUN(&r, "enqueue", "-q", q, "--json", "1", evil);
    ASSERT_EXIT(&r, 2);
    assert_terminal_safe("enqueue EXTRA (stderr)", r.err, r.err_len);
    result_free(&r);
}

/* ---- connection failures ------------------------------------------------------------ */

static void
unreachable_server(void **state)
{
    struct result r = {0};
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "unreach");
    RUN(&r, "stats", "-q", q, "--url", "redis://127.0.0.1:1");
    ASSERT_EXIT(&r, 3);
    assert_true(r.elapsed_ms < 5000);
    assert_int_equal(r.out_len, 0);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "127.0.0.1:1");

    RUN(&r, "enqueue", "-q", q, "--url=redis://127.0.0.1:1", "--json", "1");
    ASSERT_EXIT(&r, 3);
    assert_one_line(&r);

    RUN(&r, "stats", "-q", q, "--url", "bogus://x");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "bogus");
    assert_one_line(&r);
    RUN(&r, "stats", "-q", q, "--timeout", "0");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "stats", "-q", q, "--timeout", "5x");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--timeout");

    /* the environment gives the URL, and --url wins over it */
    RUN(&r, "enqueue", "-q", q, "--json", "1");
    ASSERT_EXIT(&r, 0);
    run_full(ARGV("DELAYQ_URL=redis://127.0.0.1:1"), NULL, 0,
             ARGV("stats", "-q", q, "--url", g_redis.url, "--json"), RUN_TIMEOUT_MS, &r);
    ASSERT_EXIT(&r, 0);
    run_full(ARGV("DELAYQ_URL=redis://127.0.0.1:1"), NULL, 0, ARGV("stats", "-q", q),
             RUN_TIMEOUT_MS, &r);
    ASSERT_EXIT(&r, 3);
    result_free(&r);
}

/* A loopback listener that never accepts: the TCP connect succeeds, nothing answers. */
static void
silent_listener(void **state)
{
    struct result r = {0};
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t alen = sizeof a;
    char url[64], q[96];
    int fd;

    (void)state;
    test_queue_name(q, sizeof q, "silent");
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", ntohs(a.sin_port));

    RUN(&r, "stats", "-q", q, "--url", url, "--timeout", "300ms");
    close(fd);
    ASSERT_EXIT(&r, 3);
    assert_true(r.elapsed_ms < 2000);
    assert_one_line(&r);
    result_free(&r);
}

static bool
server_answers(void *arg)
{
    const char *argv[] = {"PING"};
    redisReply *rep = test_redis_cmd(arg, 1, argv);
    bool ok = rep != NULL && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "PONG") == 0;

    if (rep != NULL)
        freeReplyObject(rep);
    return ok;
}

static void
paused_server_times_out(void **state)
{
    struct result r = {0};
    const char *pause[] = {"CLIENT", "PAUSE", "2000"};
    const char *unpause[] = {"CLIENT", "UNPAUSE"};
    redisReply *rep;
    char q[96];

    (void)state;
    test_queue_name(q, sizeof q, "paused");
    RUN(&r, "enqueue", "-q", q, "--json", "1"); /* "works again" below needs a queue */
    ASSERT_EXIT(&r, 0);
    rep = test_redis_cmd(&g_redis, 3, pause);
    assert_non_null(rep);
    assert_int_equal(rep->type, REDIS_REPLY_STATUS);
    freeReplyObject(rep);

    RUN(&r, "stats", "-q", q, "--timeout", "200ms");

    /* Unpause before asserting, so a failure here cannot stall the other tests. */
    rep = test_redis_cmd(&g_redis, 2, unpause);
    if (rep != NULL)
        freeReplyObject(rep);
    assert_true(wait_until(server_answers, &g_redis, 5000, "redis to answer PING again"));

    ASSERT_EXIT(&r, 3);
    if (r.elapsed_ms >= 1500)
        fail_msg("took %lld ms with --timeout 200ms", (long long)r.elapsed_ms);
    assert_one_line(&r);
    assert_int_equal(r.out_len, 0);

    /* and it works again afterwards */
    RUN(&r, "stats", "-q", q, "--timeout", "2s", "--json");
    ASSERT_EXIT(&r, 0);
    result_free(&r);
}

/* ---- help, version, usage ----------------------------------------------------------- */

static void
help_and_usage(void **state)
{
    static const char *const cmds[] = {"enqueue", "stats", "ls",    "show",
                                       "requeue", "drop",  "audit", "config"};
    struct result r = {0};
    char want[64], q[96];

    (void)state;
    test_queue_name(q, sizeof q, "help");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        /* --help needs no server: point the command at an unreachable one */
        RUN(&r, cmds[i], "--help", "--url", "redis://127.0.0.1:1");
        ASSERT_EXIT(&r, 0);
        snprintf(want, sizeof want, "usage: delayq %s", cmds[i]);
        ASSERT_HAS(r.out, want);
        ASSERT_HAS(r.out, "--url");
        assert_int_equal(r.err_len, 0);
        RUN(&r, cmds[i], "-h");
        ASSERT_EXIT(&r, 0);
        ASSERT_HAS(r.out, "usage:");
    }
    RUN(&r, "--help");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "usage:");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(want, sizeof want, "\n  %s ", cmds[i]);
        ASSERT_HAS(r.out, want);
    }
    RUN(&r, "--version");
    ASSERT_EXIT(&r, 0);
    assert_string_equal(r.out, "delayq " DQ_VERSION "\n");

    RUN(&r, "frobnicate");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "frobnicate");
    assert_int_equal(r.out_len, 0);
    run(NULL, 0, (const char *const[]){NULL}, &r); /* no command at all */
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "usage:");

    /* a bad queue name is bad input */
    RUN(&r, "stats", "-q", "no spaces allowed");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "stats", "-q");
    ASSERT_EXIT(&r, 2);

    /* $DELAYQ_QUEUE picks the queue when -q is absent */
    char env[128];
    snprintf(env, sizeof env, "DELAYQ_QUEUE=%s", q);
    run_full(ARGV(env), NULL, 0, ARGV("enqueue", "--id", "via-env", "--json", "1"), RUN_TIMEOUT_MS,
             &r);
    ASSERT_EXIT(&r, 0);
    RUN(&r, "ls", "due", "-q", q);
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, "\nvia-env ");
    result_free(&r);
}

/* ---- history and fix and requeue ---------------------------------------------------- */

/* msgpack {"total":"12.50"} */
static const char mp_total_old[] = "\x81\xa5total\xa5"
                                   "12.50";

/* Numbers are exact or refused: an integer past 64 bits is not stored as a nearby double
 * (enqueue, and requeue --json / --file), with the path and the limit, exit 2, nothing
 * written; a double that would be inf is refused the same way. */
static void
json_numbers_exact_or_refused(void **state)
{
    struct result r = {0};
    char q[96], path[300];

    (void)state;
    test_queue_name(q, sizeof q, "json-num");
    lib_make_failed(q, "inv", mp_total_old, sizeof mp_total_old - 1, "total does not add up", "");
    RUN(&r, "enqueue", "-q", q, "--json", "{\"n\":18446744073709551615}");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "enqueue", "-q", q, "--json", "{\"n\":18446744073709551616}");
    ASSERT_EXIT(&r, 2);
    assert_int_equal(r.out_len, 0);
    assert_one_line(&r);
    ASSERT_HAS(r.err, "json: $.n: integer 18446744073709551616 is outside "
                      "-9223372036854775808..18446744073709551615");
    RUN(&r, "enqueue", "-q", q, "--json", "[0,{\"x\":-1e400}]");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "json: $[1].x: number -1e400 is too large for a double");
    RUN(&r, "stats", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    assert_int_equal(json_int(r.out, "enqueued"), 2); /* "inv" and the first one */

    RUN(&r, "requeue", "inv", "-q", q, "--json", "{\"total\":99999999999999999999}");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--json: json: $.total: integer 99999999999999999999 is outside ");
    ASSERT_HAS(r.err, "nothing changed");
    snprintf(path, sizeof path, "%s/json-num.json", g_redis.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"total\": [1, -9223372036854775809]}", f);
    fclose(f);
    RUN(&r, "requeue", "inv", "-q", q, "--file", path);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--file: json: $.total[1]: integer -9223372036854775809 is outside ");
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.50\"}");
    unlink(path);
    result_free(&r);
}

static void
requeue_with_a_new_payload(void **state)
{
    struct result r = {0};
    char q[96], path[300];

    (void)state;
    test_queue_name(q, sizeof q, "fix");
    lib_make_failed(q, "inv", mp_total_old, sizeof mp_total_old - 1, "total does not add up", "");
    lib_make_failed(q, "inv2", mp_total_old, sizeof mp_total_old - 1, "total does not add up", "");
    lib_make_failed(q, "blob", "\xc1raw", 4, "bad bytes", "");

    /* show --json carries the history */
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out, ",\"history\":[{\"attempt\":1,\"started_ms\":");
    ASSERT_HAS(r.out, ",\"worker\":\"" WORKER "\",\"outcome\":\"fail\",\"error\":\"total does not "
                      "add up\"}]}");

    /* invalid JSON: exit 2, and nothing changed */
    RUN(&r, "requeue", "inv", "-q", q, "--json", "{\"total\":");
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "nothing changed");
    snprintf(path, sizeof path, "%s/fix-bad.json", g_redis.dir);
    FILE *f = fopen(path, "w");
    fputs("{\"total\": 12.5", f);
    fclose(f);
    RUN(&r, "requeue", "inv", "-q", q, "--file", path);
    ASSERT_EXIT(&r, 2);
    ASSERT_HAS(r.err, "--file: json: ");
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.50\"}");

    /* a payload JSON cannot show faithfully is refused */
    RUN(&r, "requeue", "blob", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "not msgpack: JSON cannot show it faithfully");
    ASSERT_HAS(r.err, "nothing changed");

    /* --json: replaced and requeued in one step; what changed is printed */
    RUN(&r, "requeue", "inv", "-q", q, "--json", "{\"total\":\"12.5\"}");
    ASSERT_EXIT(&r, 0);
    ASSERT_HAS(r.out,
               "payload 13 -> 12 bytes\n-   \"total\": \"12.50\"\n+   \"total\": \"12.5\"\n");
    ASSERT_HAS(r.out, "requeued 1 with the new payload\n");
    RUN(&r, "show", "inv", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"scheduled\"");
    ASSERT_HAS(r.out, "\"attempt\":0,");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.5\"}");
    ASSERT_HAS(r.out, "\"outcome\":\"fail\""); /* the history survives the requeue */
    RUN(&r, "audit", "-q", q, "--limit", "1");
    ASSERT_HAS(r.out, "replace  inv old=sha1:");
    ASSERT_HAS(r.out, " new=sha1:");

    /* --file, the same (pretty JSON as an editor leaves it) */
    snprintf(path, sizeof path, "%s/fix-good.json", g_redis.dir);
    f = fopen(path, "w");
    fputs("{\n  \"total\": \"12.5\"\n}\n", f);
    fclose(f);
    RUN(&r, "requeue", "inv2", "-q", q, "--file", path, "--delay", "1h");
    ASSERT_EXIT(&r, 0);
    RUN(&r, "show", "inv2", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.5\"}");
    RUN(&r, "stats", "-q", q, "--json");
    assert_int_equal(json_int(r.out, "future"), 1);

    /* not failed any more: exit 1 */
    RUN(&r, "requeue", "inv", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "is not failed");
    /* usage */
    RUN(&r, "requeue", "inv", "inv2", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 2);
    RUN(&r, "requeue", "--all", "-q", q, "--json", "{}");
    ASSERT_EXIT(&r, 2);
    result_free(&r);
}

/* The task changes between the moment requeue reads it and the moment it replaces it:
 * --file names a fifo, which the command opens after it read the task; this process
 * fails the task again before it writes the new payload into the fifo. */
static void
requeue_refuses_a_task_changed_meanwhile(void **state)
{
    struct result r = {0};
    char q[96], path[300];

    (void)state;
    test_queue_name(q, sizeof q, "fix-race");
    lib_make_failed(q, "race", mp_total_old, sizeof mp_total_old - 1, "first", "");
    snprintf(path, sizeof path, "%s/fix-race.fifo", g_redis.dir);
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* blocks until the command opens the fifo: it has read the task by then */
        int fd = open(path, O_WRONLY);
        dq_client *c = lib_open();
        const char *ids[] = {"race"};
        size_t moved;
        dq_claimed cl;
        dq_err e = {0};
        int ok = fd >= 0 && dq_requeue(c, q, ids, 1, 0, &moved, &e) == DQ_OK &&
                 dq_claim(c, q, 1, 60000, WORKER, &cl, &e) == DQ_OK && cl.n == 1;
        test_nap_ms(2); /* the next failure falls in another millisecond */
        ok = ok && dq_fail(c, q, &cl.tasks[0], "second", "", &e) == DQ_OK;
        ok = ok && write(fd, "{\"total\":\"1\"}", 13) == 13;
        close(fd);
        _exit(ok ? 0 : 1);
    }
    RUN(&r, "requeue", "race", "-q", q, "--file", path);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ASSERT_EXIT(&r, 1);
    ASSERT_HAS(r.err, "changed since you opened it");
    RUN(&r, "show", "race", "-q", q, "--json");
    ASSERT_HAS(r.out, "\"state\":\"failed\"");
    ASSERT_HAS(r.out, "\"error\":\"second\"");
    ASSERT_HAS(r.out, "\"payload\":{\"total\":\"12.50\"}");
    unlink(path);
    result_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enqueue_json_round_trips),
        cmocka_unit_test(json_numbers_exact_or_refused),
        cmocka_unit_test(enqueue_stdin_is_byte_exact),
        cmocka_unit_test(enqueue_file_is_byte_exact),
        cmocka_unit_test(enqueue_duplicate_id),
        cmocka_unit_test(enqueue_limits),
        cmocka_unit_test(enqueue_bad_input),
        cmocka_unit_test(enqueue_at_and_options),
        cmocka_unit_test(stats_human_and_json),
        cmocka_unit_test(stats_check_far_future),
        cmocka_unit_test(stats_check_oldest_due),
        cmocka_unit_test(stats_check_takes_the_queues_thresholds),
        cmocka_unit_test(ls_views_and_paging),
        cmocka_unit_test(show_tasks),
        cmocka_unit_test(requeue_drop_and_audit),
        cmocka_unit_test(requeue_all),
        cmocka_unit_test(bulk_reply_lost_is_read_back),
        cmocka_unit_test(errors_and_filtered_bulk),
        cmocka_unit_test(config_read_and_write),
        cmocka_unit_test(terminal_safety),
        cmocka_unit_test(usage_errors_escape_arguments),
        cmocka_unit_test(unreachable_server),
        cmocka_unit_test(silent_listener),
        cmocka_unit_test(paused_server_times_out),
        cmocka_unit_test(help_and_usage),
        cmocka_unit_test(queues_lists_used_queues),
        cmocka_unit_test(queues_forget_any_member),
        cmocka_unit_test(unknown_queues_are_named),
        cmocka_unit_test(requeue_with_a_new_payload),
        cmocka_unit_test(requeue_refuses_a_task_changed_meanwhile),
    };

    return cmocka_run_group_tests_name("cli/commands", tests, group_setup, group_teardown);
}
