/* SPDX-License-Identifier: MIT */
/*
 * cli.c: running the delayq command in the cli tests (harness/cli.h).
 */
#include "harness/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

/* ---- fixture ------------------------------------------------------------------------ */

struct test_redis cli_redis;
static const char *g_bin;

int
cli_group_setup(void **state)
{
    int rc;

    (void)state;
    g_bin = getenv("DELAYQ_BIN");
    if (g_bin == NULL || g_bin[0] == '\0' || access(g_bin, X_OK) != 0) {
        fprintf(stderr, "cli harness: DELAYQ_BIN must name the delayq binary (got \"%s\")\n",
                g_bin ? g_bin : "");
        return -1;
    }
    rc = test_redis_start(&cli_redis, NULL);
    if (rc == TEST_REDIS_SKIP)
        exit(77);
    if (rc != 0)
        return -1;
    /* The children find the server through the environment unless a test passes --url;
     * nothing else from the developer's environment may leak into them. */
    setenv("DELAYQ_URL", cli_redis.url, 1);
    unsetenv("DELAYQ_QUEUE");
    unsetenv("DELAYQ_PASSWORD");
    return 0;
}

int
cli_group_teardown(void **state)
{
    (void)state;
    test_redis_stop(&cli_redis);
    return 0;
}

/* ---- running the command ------------------------------------------------------------ */

void
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
void
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
const char *
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

/* run_full() with no extra environment and the default deadline. */
void
run(const void *stdin_data, size_t len, const char *const argv[], struct result *out)
{
    run_full(NULL, stdin_data, len, argv, RUN_TIMEOUT_MS, out);
}

/* ---- small parsers ------------------------------------------------------------------ */

size_t
count_lines(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A message on stderr is exactly one non-empty line. */
void
assert_one_line(const struct result *r)
{
    if (r->err_len < 2 || r->err[r->err_len - 1] != '\n' || count_lines(r->err) != 1)
        fail_msg("expected exactly one line on stderr, got:\n%s", esc(r->err, r->err_len));
}

/* The @n-th line (0-based) of @s copied into @dst; false if there is none. */
bool
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

bool
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
const char *
json_find(const char *s, const char *key)
{
    char pat[128];

    snprintf(pat, sizeof pat, "\"%s\":", key);
    s = strstr(s, pat);
    return s ? s + strlen(pat) : NULL;
}

long long
json_int(const char *s, const char *key)
{
    const char *v = json_find(s, key);
    long long x = 0;

    if (v == NULL || sscanf(v, "%lld", &x) != 1)
        fail_msg("no integer \"%s\" in %s", key, esc(s, strlen(s)));
    return x;
}

/* Copies the JSON value of "key" (object, array, string or scalar, as text) into @dst. */
void
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
char *
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
unsigned char *
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
void
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
void
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

dq_client *
lib_open(void)
{
    dq_client_opts o = {.who = WORKER};
    dq_client *c = NULL;
    dq_err e = {0};

    if (dq_client_open(cli_redis.url, &o, &c, &e) != DQ_OK)
        fail_msg("dq_client_open: %s", e.msg);
    return c;
}

/* Enqueues @id due now and claims it for a minute. The queue must have nothing else due
 * earlier, so the claim takes this task. */
void
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
void
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
void
lib_make_inflight(const char *q, const char *id)
{
    dq_client *c = lib_open();
    dq_claimed cl;

    lib_claim(c, q, id, "\xa2ok", 3, &cl);
    dq_claimed_free(&cl);
    dq_client_free(c);
}
