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
 */
#include "spawn.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    pid_t parent;
    long maxfd;
    sigset_t mask; /* the caller's signal mask, restored just before execve */
};

static char sh_path[] = "/bin/sh";

/* In the child, between vfork and execve: system calls only. */
static void __attribute__((noreturn)) child_start(const struct child_args *a)
{
    setpgid(0, 0);
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
