/* SPDX-License-Identifier: MIT */
/*
 * spawn.c: handler commands of delayq work, and a private redis-server by PID (see
 * spawn.h).
 *
 * spawn_cmd starts a command with vfork(): the child borrows the parent's memory until
 * its execve, so nothing is copied, where fork() copies the page tables of a process
 * with a dozen threads for a child that execs at once. What the child may do is
 * therefore narrow: raw system calls on its own stack only (no allocation, no writes
 * to the parent's variables; errno is the one exception and is restored), and no
 * signal handler of the parent may run in it: all signals are blocked across vfork and
 * the child resets the dispositions it inherited before unblocking.
 *
 * Measured against fork() and posix_spawn() (commit 970b62e has the switch): vfork ran
 * `delayq work --concurrency 8 -- true` 1.9x as fast as fork, and a little faster than
 * posix_spawn, which cannot set PR_SET_PDEATHSIG either.
 *
 * A command's group dies with the worker, kill -9 included (PROTOCOL 10.8), through the
 * guardian: a process forked once at start that blocks reading a pipe only the worker
 * can write to; when the worker is gone, however it went, the read sees EOF and the
 * guardian kills every group in the registry. The registry is a shared anonymous
 * mapping, so a spawn costs one getpid more and no message: the child stores its own
 * pid in the slot spawn_cmd picked, after its setpgid and before its execve (so no group exists
 * unregistered, even for the microseconds before vfork returns), and spawn_forget
 * clears it. The alternatives fall short: PR_SET_PDEATHSIG reaches the direct child
 * only (a shell's `sleep` lives on), and so does a chain of it (a command's own
 * children do not set it); PR_SET_CHILD_SUBREAPER only re-parents the orphans to the
 * worker, which a kill -9 takes away too; a cgroup needs a delegation the worker
 * seldom has; and telling the guardian of each group over the pipe would cost two
 * writes per command. PR_SET_PDEATHSIG stays, for the child, should the guardian itself
 * have been killed.
 */
#include "spawn.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "delayq.h"
#include "lib/clock.h"

static int
free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static void
nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool
answers(const struct spawned_redis *r)
{
    dq_client_opts o = {.connect_timeout_ms = 200, .command_timeout_ms = 200};
    dq_client *c = NULL;
    dq_err err;

    if (dq_client_open(r->url, &o, &c, &err) != DQ_OK)
        return false;
    dq_client_free(c);
    return true;
}

int
spawn_redis(struct spawned_redis *r)
{
    const char *bin = getenv("DQ_REDIS_SERVER");
    const char *tmp = getenv("TMPDIR");

    memset(r, 0, sizeof *r);
    if (bin == NULL || bin[0] == '\0')
        bin = "redis-server";
    snprintf(r->dir, sizeof r->dir, "%s/delayq-demo-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(r->dir) == NULL) {
        fprintf(stderr, "delayq: cannot create a temp dir: %s\n", strerror(errno));
        return -1;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        char port[16], log[300];
        int status;

        r->port = free_port();
        if (r->port < 0)
            break;
        snprintf(port, sizeof port, "%d", r->port);
        snprintf(log, sizeof log, "%s/redis.log", r->dir);
        snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%d", r->port);
        r->pid = fork();
        if (r->pid < 0)
            break;
        if (r->pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            setpgid(0, 0); /* a Ctrl-C meant for the inspector must not stop its Redis */
            execlp(bin, bin, "--port", port, "--bind", "127.0.0.1", "--dir", r->dir, "--save", "",
                   "--appendonly", "no", "--logfile", log, (char *)NULL);
            fprintf(stderr,
                    "delayq: cannot run %s: %s (install redis-server or set "
                    "DQ_REDIS_SERVER)\n",
                    bin, strerror(errno));
            _exit(127);
        }
        int64_t deadline = dq_mono_ms() + 5000;
        while (dq_mono_ms() < deadline) {
            if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
                r->pid = 0;
                if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
                    goto fail;
                break; /* lost the port race: try another port */
            }
            if (answers(r))
                return 0;
            nap_ms(10);
        }
        if (r->pid > 0) {
            fprintf(stderr, "delayq: redis-server did not answer within 5 s (log: %s)\n", log);
            goto fail;
        }
    }
    fprintf(stderr, "delayq: could not start redis-server on a free port\n");
fail:
    spawn_redis_stop(r);
    return -1;
}

static void
remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[600];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

void
spawn_redis_stop(struct spawned_redis *r)
{
    if (r->pid > 0) {
        int status;
        int64_t deadline = dq_mono_ms() + 5000;

        kill(r->pid, SIGTERM);
        while (waitpid(r->pid, &status, WNOHANG) == 0) {
            if (dq_mono_ms() > deadline) {
                kill(r->pid, SIGKILL);
                waitpid(r->pid, &status, 0);
                break;
            }
            nap_ms(10);
        }
        r->pid = 0;
    }
    if (r->dir[0] != '\0') {
        remove_dir(r->dir);
        r->dir[0] = '\0';
    }
}

/* ---- handler commands ------------------------------------------------------------ */

bool
spawn_resolve(const char *name, char *out, size_t size)
{
    const char *path = getenv("PATH");
    struct stat st;

    if (name[0] == '\0')
        return false;
    if (strchr(name, '/') != NULL) {
        snprintf(out, size, "%s", name);
        return access(out, X_OK) == 0;
    }
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* an empty entry is the current directory, as for execvp */
        int n = snprintf(out, size, "%.*s%s%s", (int)len, p, len ? "/" : "", name);
        if (n > 0 && (size_t)n < size && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
            access(out, X_OK) == 0)
            return true;
        if (end == NULL)
            return false;
        p = end;
    }
}

/* ---- the registry of process groups, and the guardian ------------------------------ */

#define GROUPS_MAX DQ_CALL_MAX /* one per handler; concurrency is at most DQ_CALL_MAX */

/* Group ids (0: a free slot). Here until spawn_guard_start moves the registry to memory
 * it shares with the guardian. Slots are taken under spawn_lock and cleared without it:
 * an aligned int store, read as one by the signal handler and the guardian. */
static atomic_int local_groups[GROUPS_MAX];
static atomic_int *groups = local_groups;

void
spawn_forget(pid_t pgid)
{
    for (size_t i = 0; pgid > 0 && i < GROUPS_MAX; i++) {
        if (atomic_load_explicit(&groups[i], memory_order_relaxed) == pgid) {
            atomic_store_explicit(&groups[i], 0, memory_order_relaxed);
            break;
        }
    }
}

static void
kill_groups(atomic_int *g)
{
    for (size_t i = 0; i < GROUPS_MAX; i++) {
        pid_t pgid = atomic_load_explicit(&g[i], memory_order_relaxed);
        if (pgid > 0)
            kill(-pgid, SIGKILL);
    }
}

static volatile sig_atomic_t killing;

void
spawn_kill_all(void)
{
    killing = 1;
    kill_groups(groups);
}

bool
spawn_killing(void)
{
    return killing != 0;
}

/* A free slot, under spawn_lock; NULL when all are taken. */
static atomic_int *
free_slot(void)
{
    for (size_t i = 0; i < GROUPS_MAX; i++) {
        if (atomic_load_explicit(&groups[i], memory_order_relaxed) == 0)
            return &groups[i];
    }
    return NULL;
}

/* The guardian's whole life, on system calls only: nothing of the worker's (stdio, the
 * allocator, its Redis connections) is touched in the copy fork made. */
static void __attribute__((noreturn)) guard_main(int rfd, atomic_int *g)
{
    /* Its own group, so that a signal to the worker's group (Ctrl-C, kill -9 -PGID)
     * does not take it along with the worker; deaf to the signals a terminal or a
     * supervisor sends the worker's way: it ends when the worker has. */
    static const int deaf[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                               SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
    sigset_t none;
    char b;

    setpgid(0, 0);
    prctl(PR_SET_NAME, "delayq-guard"); /* what ps and top show for it */
    for (size_t i = 0; i < sizeof deaf / sizeof deaf[0]; i++)
        signal(deaf[i], SIG_IGN);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* every descriptor but the pipe's read end: the write end above all (else the
     * guardian would wait for itself), and the worker's stdio (a pipe reading the
     * worker's output must not wait for the guardian) */
    for (int fd = 0; fd < rfd; fd++)
        close(fd);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)rfd + 1, ~0u, 0u) != 0)
#endif
    {
        for (int fd = rfd + 1; fd < 65536; fd++)
            close(fd);
    }
    /* nothing is meant to be written: the read returns 0 at EOF, when the worker's end
     * closed (a stray byte is no cue) */
    for (;;) {
        ssize_t n = read(rfd, &b, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    kill_groups(g);
    _exit(0);
}

int
spawn_guard_start(void)
{
    int p[2];
    atomic_int *g = mmap(NULL, GROUPS_MAX * sizeof *g, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (g == MAP_FAILED)
        return -1;
    if (!spawn_pipe(p)) {
        int saved = errno;
        munmap(g, GROUPS_MAX * sizeof *g);
        errno = saved;
        return -1;
    }
    /* the worker's end above stdio: a worker started with stdout closed must not have
     * its output (or a command's, which inherits stdout) land in the guardian's pipe */
    if (p[1] <= 2) {
        int hi = fcntl(p[1], F_DUPFD_CLOEXEC, 3);
        if (hi >= 0) {
            close(p[1]);
            p[1] = hi;
        }
    }
    pid_t pid = fork();
    if (pid == 0)
        guard_main(p[0], g);
    int saved = errno;
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        munmap(g, GROUPS_MAX * sizeof *g);
        errno = saved;
        return -1;
    }
    /* p[1] stays open, close-on-exec, for the life of the process: its close is the
     * guardian's cue. The mapping stays too: it is the registry both processes see. */
    groups = g;
    return 0;
}

static pthread_mutex_t spawn_mu = PTHREAD_MUTEX_INITIALIZER;

void
spawn_lock(void)
{
    pthread_mutex_lock(&spawn_mu);
}

void
spawn_unlock(void)
{
    pthread_mutex_unlock(&spawn_mu);
}

bool
spawn_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return false;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return true;
}

/* The signals cmd_work.c catches or ignores; the child gets them back at their defaults
 * (exec would reset the caught ones, but not before the child unblocks them). */
static const int reset_signals[] = {SIGPIPE, SIGINT, SIGTERM, SIGALRM};

/* What the child needs, all prepared before vfork: the child only reads it. */
struct child_args {
    const char *path;
    char *const *argv, *const *envp;
    const int *fds;
    char *const *sh_argv; /* "/bin/sh path args...": a file that is not an executable
                             format runs as a shell script, as execvp would; may be NULL */
    atomic_int *slot;     /* the registry's slot for the child's group id */
    pid_t parent;
    long maxfd;
    sigset_t mask; /* the caller's signal mask, restored just before execve */
};

static char sh_path[] = "/bin/sh";

/* In the child, between vfork and execve: system calls only. */
static void __attribute__((noreturn)) child_start(const struct child_args *a)
{
    setpgid(0, 0);
    /* registered before anything runs in the group (the guardian kills it from here on) */
    atomic_store_explicit(a->slot, getpid(), memory_order_relaxed);
    /* a worker killed with SIGKILL takes its command with it: the task comes back after
     * its lease and must not also finish here (and if it died before this line, go) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != a->parent)
        _exit(1);
    for (int i = 0; i < 3; i++) {
        if (a->fds[i] >= 0 && a->fds[i] != i)
            dup2(a->fds[i], i);
    }
    /* nothing else of the worker's (Redis sockets opened by other threads) goes along:
     * close_range is one call where the loop is one per possible fd (20 000 here, a
     * millisecond or more per command) */
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
    {
        for (int fd = 3; fd < a->maxfd; fd++)
            close(fd);
    }
    for (size_t i = 0; i < sizeof reset_signals / sizeof reset_signals[0]; i++)
        signal(reset_signals[i], SIG_DFL);
    sigprocmask(SIG_SETMASK, &a->mask, NULL);
    execve(a->path, a->argv, a->envp);
    if (errno == ENOEXEC && a->sh_argv != NULL)
        execve(sh_path, a->sh_argv, a->envp);
    /* write(2) rather than stdio: the child must not take stdio's locks */
    static const char what[] = "delayq work: cannot run ";
    if (write(2, what, sizeof what - 1) < 0 || write(2, a->path, strlen(a->path)) < 0 ||
        write(2, "\n", 1) < 0) {
        /* nothing more to say */
    }
    _exit(127);
}

/* Nothing here may live in a register across vfork (-Wclobbered): only @a, read-only. */
static pid_t
start_child(const struct child_args *a)
{
    pid_t pid = vfork();

    if (pid == 0)
        child_start(a);
    return pid;
}

pid_t
spawn_cmd(const char *path, char *const argv[], char *const envp[], const int fds[3])
{
    struct child_args a = {.path = path, .argv = argv, .envp = envp, .fds = fds};
    sigset_t all;
    pid_t pid;
    int saved;
    size_t argc = 0;

    while (argv[argc] != NULL)
        argc++;
    /* built here: the child must not allocate */
    char **sh_argv = malloc((argc + 2) * sizeof *sh_argv), *path_copy = strdup(path);
    if (sh_argv != NULL && path_copy != NULL) {
        sh_argv[0] = sh_path;
        sh_argv[1] = path_copy;
        for (size_t i = 1; i <= argc; i++)
            sh_argv[i + 1] = argv[i];
        a.sh_argv = sh_argv;
    }
    a.slot = free_slot();
    if (a.slot == NULL) {
        free(sh_argv);
        free(path_copy);
        errno = EAGAIN;
        return -1;
    }
    a.parent = getpid();
    a.maxfd = sysconf(_SC_OPEN_MAX);
    if (a.maxfd < 0 || a.maxfd > 65536)
        a.maxfd = 65536;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &a.mask);
    pid = start_child(&a);
    saved = errno;
    pthread_sigmask(SIG_SETMASK, &a.mask, NULL);
    free(sh_argv);
    free(path_copy);
    errno = saved;
    return pid; /* vfork returns once the child has exec'd: its setpgid is done */
}
