/* SPDX-License-Identifier: MIT */
/* io.c: the inspector's Redis thread (see io.h). */
#include "io.h"

#include <pthread.h>
#include <stdlib.h>

enum slot_state { SLOT_IDLE, SLOT_PENDING, SLOT_RUNNING, SLOT_FINISHED };

struct slot {
    enum slot_state state;
    io_fn fn;
    void *arg;
};

struct io {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool quit;
    dq_client *client;
    struct slot slots[IO_SLOTS];
};

static void *
io_main(void *p)
{
    struct io *io = p;

    pthread_mutex_lock(&io->mu);
    for (;;) {
        struct slot *s = NULL;

        for (int i = 0; i < IO_SLOTS && s == NULL; i++)
            if (io->slots[i].state == SLOT_PENDING)
                s = &io->slots[i];
        if (io->quit)
            break;
        if (s == NULL) {
            pthread_cond_wait(&io->cv, &io->mu);
            continue;
        }
        s->state = SLOT_RUNNING;
        pthread_mutex_unlock(&io->mu);
        s->fn(io->client, s->arg); /* the slot's fields are not changed while RUNNING */
        pthread_mutex_lock(&io->mu);
        s->state = SLOT_FINISHED;
    }
    pthread_mutex_unlock(&io->mu);
    return NULL;
}

struct io *
io_start(dq_client *c)
{
    struct io *io = calloc(1, sizeof *io);

    if (io == NULL)
        return NULL;
    io->client = c;
    if (pthread_mutex_init(&io->mu, NULL) != 0) {
        free(io);
        return NULL;
    }
    if (pthread_cond_init(&io->cv, NULL) != 0) {
        pthread_mutex_destroy(&io->mu);
        free(io);
        return NULL;
    }
    if (pthread_create(&io->thread, NULL, io_main, io) != 0) {
        pthread_cond_destroy(&io->cv);
        pthread_mutex_destroy(&io->mu);
        free(io);
        return NULL;
    }
    return io;
}

void
io_stop(struct io *io)
{
    if (io == NULL)
        return;
    pthread_mutex_lock(&io->mu);
    io->quit = true;
    pthread_cond_signal(&io->cv);
    pthread_mutex_unlock(&io->mu);
    pthread_join(io->thread, NULL);
    pthread_cond_destroy(&io->cv);
    pthread_mutex_destroy(&io->mu);
    dq_client_free(io->client);
    free(io);
}

bool
io_submit(struct io *io, int slot, io_fn fn, void *arg)
{
    bool ok;

    pthread_mutex_lock(&io->mu);
    ok = io->slots[slot].state == SLOT_IDLE;
    if (ok) {
        io->slots[slot] = (struct slot){SLOT_PENDING, fn, arg};
        pthread_cond_signal(&io->cv);
    }
    pthread_mutex_unlock(&io->mu);
    return ok;
}

bool
io_done(struct io *io, int slot)
{
    bool done;

    pthread_mutex_lock(&io->mu);
    done = io->slots[slot].state == SLOT_FINISHED;
    if (done)
        io->slots[slot].state = SLOT_IDLE;
    pthread_mutex_unlock(&io->mu);
    return done;
}

bool
io_busy(struct io *io, int slot)
{
    bool busy;

    pthread_mutex_lock(&io->mu);
    busy = io->slots[slot].state == SLOT_PENDING || io->slots[slot].state == SLOT_RUNNING;
    pthread_mutex_unlock(&io->mu);
    return busy;
}

bool
io_any_busy(struct io *io)
{
    for (int i = 0; i < IO_SLOTS; i++)
        if (io_busy(io, i))
            return true;
    return false;
}
