/* SPDX-License-Identifier: MIT */
/*
 * names.c: the client's cache of queue names it has registered (dq:queues) on the server
 * it is connected to, a sorted array: a producer registers each queue once per
 * connection, not once per enqueue (client.h).
 */
#include "client.h"

#include <stdlib.h>
#include <string.h>

/* Where @name is in @set, or where it would go; *found says which. */
static size_t
names_find(const struct dq_names *set, const char *name, bool *found)
{
    size_t lo = 0, hi = set->n;

    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(set->v[mid], name);
        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool
dq_names_has(const struct dq_names *set, const char *name)
{
    bool found;

    names_find(set, name, &found);
    return found;
}

bool
dq_names_add(struct dq_names *set, const char *name)
{
    bool found;
    size_t at = names_find(set, name, &found);
    char *copy;

    if (found)
        return true;
    if (set->n == DQ_NAMES_MAX)
        return false;
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        char **v = realloc(set->v, cap * sizeof *v);
        if (v == NULL)
            return false;
        set->v = v;
        set->cap = cap;
    }
    if ((copy = strdup(name)) == NULL)
        return false;
    memmove(set->v + at + 1, set->v + at, (set->n - at) * sizeof *set->v);
    set->v[at] = copy;
    set->n++;
    return true;
}

void
dq_names_remove(struct dq_names *set, const char *name)
{
    bool found;
    size_t at = names_find(set, name, &found);

    if (!found)
        return;
    free(set->v[at]);
    memmove(set->v + at, set->v + at + 1, (set->n - at - 1) * sizeof *set->v);
    set->n--;
}

void
dq_names_free(struct dq_names *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->v[i]);
    free(set->v);
    memset(set, 0, sizeof *set);
}
