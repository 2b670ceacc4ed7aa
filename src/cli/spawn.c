/* SPDX-License-Identifier: MIT */
/* spawn.c: start and stop a private redis-server by PID (see spawn.h). */
#include "spawn.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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
