/* SPDX-License-Identifier: MIT */
/*
 * fair_rec.c: the handler of tests/cli/fair.sh's fairness case, as near to instant as
 * a command can be (a shell handler forks date(1) twice: it, not the queue, would set
 * the pace). Appends "S <task id> <us>" at its start and "E <task id> <us>" at its end
 * to $LOG, each in one write(2) to an O_APPEND file, the time CLOCK_REALTIME in
 * microseconds (on the test's host this is the clock Redis' TIME reads). Exit 0, or 1
 * when it cannot write.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int
record(int fd, char what, const char *id)
{
    struct timespec ts;
    char line[320];

    clock_gettime(CLOCK_REALTIME, &ts);
    int n = snprintf(line, sizeof line, "%c %s %lld\n", what, id,
                     (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
    return n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) == n ? 0 : -1;
}

int
main(void)
{
    const char *log = getenv("LOG"), *id = getenv("DELAYQ_TASK_ID");

    if (log == NULL || id == NULL)
        return 1;
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return 1;
    int rc = record(fd, 'S', id) == 0 && record(fd, 'E', id) == 0 ? 0 : 1;
    close(fd);
    return rc;
}
