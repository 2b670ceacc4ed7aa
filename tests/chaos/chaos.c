/* SPDX-License-Identifier: MIT */
/* chaos.c: processes, CPU time, run records and tmux for the chaos tests. */
#include "chaos.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/wait.h"

#define MAX_CHILDREN 64
#define MAX_DIRS     8

static pid_t children[MAX_CHILDREN];
static char dirs[MAX_DIRS][256];
static char tmux_sock[64];

bool
chaos_long(void)
{
    const char *v = getenv("DQ_CHAOS_LONG");
    return v != NULL && strcmp(v, "1") == 0;
}

int64_t
chaos_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
rm_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char child[512];
        if (e->d_name[0] == '.')
            continue;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        unlink(child);
    }
    closedir(d);
    rmdir(path);
}

const char *
chaos_dir(const char *name)
{
    for (int i = 0; i < MAX_DIRS; i++) {
        if (dirs[i][0] != '\0')
            continue;
        snprintf(dirs[i], sizeof dirs[i], "/tmp/dq-chaos-%s-XXXXXX", name);
        if (mkdtemp(dirs[i]) == NULL) {
            dirs[i][0] = '\0';
            return NULL;
        }
        return dirs[i];
    }
    return NULL;
}

static void
remember(pid_t pid)
{
    for (int i = 0; i < MAX_CHILDREN; i++) {
        if (children[i] == 0) {
            children[i] = pid;
            return;
        }
    }
    /* more children than slots: never happens with the sizes used here; kill it rather
     * than lose track of it */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void
forget(pid_t pid)
{
    for (int i = 0; i < MAX_CHILDREN; i++) {
        if (children[i] == pid)
            children[i] = 0;
    }
}

pid_t
chaos_spawn(const char *const *argv, const char *out_path)
{
    pid_t parent = getpid();
    pid_t pid = fork();

    if (pid < 0)
        return -1;
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        if (in >= 0)
            dup2(in, STDIN_FILENO);
        if (out >= 0) {
            dup2(out, STDOUT_FILENO);
            dup2(out, STDERR_FILENO);
        }
        /* execv wants char *const *: copy the pointers (no malloc after fork) */
        char *args[64];
        size_t n = 0;
        while (n + 1 < sizeof args / sizeof args[0] && argv[n] != NULL)
            n++;
        memcpy(args, argv, n * sizeof *args);
        args[n] = NULL;
        execv(args[0], args);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    remember(pid);
    return pid;
}

bool
chaos_running(pid_t pid, int *status)
{
    int st = 0;
    pid_t w;

    do {
        w = waitpid(pid, &st, WNOHANG);
    } while (w < 0 && errno == EINTR);
    if (w == 0)
        return true;
    forget(pid);
    if (status != NULL)
        *status = st;
    return false;
}

void
chaos_kill9(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    forget(pid);
}

int
chaos_stop(pid_t pid, int deadline_ms)
{
    int64_t deadline = test_mono_ms() + deadline_ms;
    int st = 0;

    if (pid <= 0)
        return 0;
    kill(pid, SIGTERM);
    while (chaos_running(pid, &st)) {
        if (test_mono_ms() >= deadline) {
            fprintf(stderr, "chaos: pid %ld ignored SIGTERM for %d ms; SIGKILL\n", (long)pid,
                    deadline_ms);
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            forget(pid);
            break;
        }
        test_nap_ms(5);
    }
    return st;
}

int
chaos_run(const char *const *argv, const char *out_path, int deadline_ms, int64_t *elapsed_ms)
{
    int64_t start = test_mono_ms(), deadline = start + deadline_ms;
    pid_t pid = chaos_spawn(argv, out_path);
    int st = 0;

    if (pid < 0)
        return -1;
    while (chaos_running(pid, &st)) {
        if (test_mono_ms() >= deadline) {
            fprintf(stderr, "chaos: %s ran past %d ms; SIGKILL\n", argv[0], deadline_ms);
            chaos_kill9(pid);
            st = SIGKILL;
            break;
        }
        test_nap_ms(2);
    }
    if (elapsed_ms != NULL)
        *elapsed_ms = test_mono_ms() - start;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void
tmux_kill_server(void)
{
    if (tmux_sock[0] == '\0')
        return;
    const char *argv[] = {"/usr/bin/env", "tmux", "-L", tmux_sock, "kill-server", NULL};
    chaos_run(argv, NULL, 5000, NULL);
    tmux_sock[0] = '\0';
}

void
chaos_cleanup(void)
{
    tmux_kill_server();
    for (int i = 0; i < MAX_CHILDREN; i++) {
        if (children[i] > 0)
            chaos_stop(children[i], 3000);
    }
    for (int i = 0; i < MAX_DIRS; i++) {
        if (dirs[i][0] != '\0' && getenv("DQ_CHAOS_KEEP") == NULL)
            rm_tree(dirs[i]);
        dirs[i][0] = '\0';
    }
}

int64_t
chaos_cpu_ms(pid_t pid)
{
    char path[64], buf[1024];
    unsigned long long utime, stime;
    FILE *f;
    size_t n;
    const char *p;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the command name may hold spaces and parentheses: fields count from the last ')' */
    p = strrchr(buf, ')');
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return -1;
    return (int64_t)((utime + stime) * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}

bool
chaos_file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    bool found = false;

    if (f == NULL)
        return false;
    while (!found && fgets(line, sizeof line, f) != NULL)
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

/* ---- run records ------------------------------------------------------------------- */

static int
run_cmp(const void *a, const void *b)
{
    const struct chaos_run *x = a, *y = b;
    int c = strcmp(x->id, y->id);

    if (c != 0)
        return c;
    return x->attempt < y->attempt ? -1 : x->attempt > y->attempt;
}

static struct chaos_run *
run_find(struct chaos_runs *r, const char *id, unsigned attempt, pid_t pid)
{
    struct chaos_run key;
    struct chaos_run *hit;

    snprintf(key.id, sizeof key.id, "%s", id);
    key.attempt = attempt;
    hit = bsearch(&key, r->v, r->n, sizeof *r->v, run_cmp);
    if (hit == NULL)
        return NULL;
    /* equal keys sit together: pick the one from this worker */
    while (hit > r->v && run_cmp(hit - 1, &key) == 0)
        hit--;
    for (; hit < r->v + r->n && run_cmp(hit, &key) == 0; hit++) {
        if (hit->pid == pid)
            return hit;
    }
    return NULL;
}

/* Calls @fn for each complete line of each file in @dir whose name starts @prefix. */
static void
each_line(const char *dir, const char *prefix, void (*fn)(const char *line, pid_t pid, void *),
          void *arg)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t plen = strlen(prefix);

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char path[512], line[4096];
        FILE *f;

        if (strncmp(e->d_name, prefix, plen) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        pid_t pid = (pid_t)strtol(e->d_name + plen, NULL, 10);
        while (fgets(line, sizeof line, f) != NULL) {
            size_t n = strlen(line);
            if (n == 0 || line[n - 1] != '\n')
                continue; /* cut short by SIGKILL */
            line[n - 1] = '\0';
            fn(line, pid, arg);
        }
        fclose(f);
    }
    closedir(d);
}

static void
add_run(const char *line, pid_t pid, void *arg)
{
    struct chaos_runs *r = arg;
    struct chaos_run x = {.end = -1, .done = -1};
    long long claimed, wall;
    long p;

    if (sscanf(line, "run %63s %u %lld %lld %ld", x.id, &x.attempt, &claimed, &wall, &p) != 5 ||
        p != (long)pid)
        return;
    x.claimed = claimed;
    x.wall = wall;
    x.pid = pid;
    if (r->n % 1024 == 0) {
        struct chaos_run *v = realloc(r->v, (r->n + 1024) * sizeof *v);
        if (v == NULL)
            abort();
        r->v = v;
    }
    r->v[r->n++] = x;
}

static void
add_end(const char *line, pid_t pid, void *arg)
{
    char id[64];
    unsigned attempt;
    long long wall;
    struct chaos_run *x;

    if (sscanf(line, "end %63s %u %lld", id, &attempt, &wall) == 3 &&
        (x = run_find(arg, id, attempt, pid)) != NULL)
        x->end = wall;
}

/* Log lines are "WALL_MS logfmt..."; an ack written is event=task.done. */
static void
add_done(const char *line, pid_t pid, void *arg)
{
    char id[64];
    unsigned attempt;
    long long wall;
    const char *t = strstr(line, " task="), *a = strstr(line, " attempt=");
    struct chaos_run *x;

    if (strstr(line, " event=task.done ") == NULL || t == NULL || a == NULL)
        return;
    if (sscanf(line, "%lld", &wall) == 1 && sscanf(t, " task=%63s", id) == 1 &&
        sscanf(a, " attempt=%u", &attempt) == 1 && (x = run_find(arg, id, attempt, pid)) != NULL)
        x->done = wall;
}

void
chaos_runs_read(const char *dir, struct chaos_runs *out)
{
    memset(out, 0, sizeof *out);
    each_line(dir, "runs.", add_run, out);
    qsort(out->v, out->n, sizeof *out->v, run_cmp);
    each_line(dir, "runs.", add_end, out);
    each_line(dir, "log.", add_done, out);
}

void
chaos_runs_free(struct chaos_runs *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

struct count_arg {
    const char *needle;
    size_t n;
};

static void
count_line(const char *line, pid_t pid, void *arg)
{
    struct count_arg *c = arg;
    c->n += strstr(line, c->needle) != NULL;
}

size_t
chaos_log_count(const char *dir, const char *needle)
{
    struct count_arg c = {needle, 0};

    each_line(dir, "log.", count_line, &c);
    return c.n;
}

/* ---- tmux -------------------------------------------------------------------------- */

static char pane_file[300];

static int
tmux(const char *out_path, const char *a1, const char *a2, const char *a3, const char *a4)
{
    const char *argv[] = {"/usr/bin/env", "tmux", "-L", tmux_sock, a1, a2, a3, a4, NULL};
    return chaos_run(argv, out_path, 5000, NULL);
}

pid_t
chaos_tmux_start(int cols, int rows, const char *command)
{
    const char *dir = chaos_dir("tmux");
    char x[16], y[16], pid_file[300];
    FILE *f;
    long pid = -1;

    if (dir == NULL)
        return -1;
    snprintf(tmux_sock, sizeof tmux_sock, "dqchaos%ld", (long)getpid());
    snprintf(pane_file, sizeof pane_file, "%s/pane.txt", dir);
    snprintf(pid_file, sizeof pid_file, "%s/pid.txt", dir);
    snprintf(x, sizeof x, "%d", cols);
    snprintf(y, sizeof y, "%d", rows);
    const char *argv[] = {"/usr/bin/env", "tmux", "-L",    tmux_sock, "-f", "/dev/null",
                          "new-session",  "-d",   "-s",    "s",       "-x", x,
                          "-y",           y,      command, NULL};
    if (chaos_run(argv, NULL, 5000, NULL) != 0)
        return -1;
    unlink(pid_file);
    if (tmux(pid_file, "list-panes", "-t", "s", "-F#{pane_pid}") != 0)
        return -1;
    f = fopen(pid_file, "r");
    if (f != NULL) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = -1;
        fclose(f);
    }
    return (pid_t)pid;
}

bool
chaos_tmux_has(const char *needle)
{
    unlink(pane_file);
    return tmux(pane_file, "capture-pane", "-p", "-t", "s") == 0 &&
           chaos_file_has(pane_file, needle);
}

void
chaos_tmux_dump(void)
{
    char line[1024];
    FILE *f;

    unlink(pane_file);
    if (tmux(pane_file, "capture-pane", "-p", "-t", "s") != 0 ||
        (f = fopen(pane_file, "r")) == NULL) {
        fprintf(stderr, "# (no pane)\n");
        return;
    }
    while (fgets(line, sizeof line, f) != NULL)
        fprintf(stderr, "# %s", line);
    fclose(f);
}

const char *
chaos_worker_bin(void)
{
    const char *b = getenv("DQ_CHAOS_WORKER");
    return b != NULL ? b : "chaos_worker";
}

const char *
chaos_delayq_bin(void)
{
    const char *b = getenv("DELAYQ_BIN");
    return b != NULL ? b : "delayq";
}
