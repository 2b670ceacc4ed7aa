/* SPDX-License-Identifier: MIT */
/*
 * replay.c: runs a fuzz target over files instead of under libFuzzer, so every build
 * (gcc included, and the ASan build) replays the seed corpus and every crash ever
 * found. Arguments are files or directories (not recursive). Fails if it found no
 * input at all, so a wrong corpus path cannot pass silently.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int
by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Feeds one file to the target. Returns 0, or -1 when it cannot be read. */
static int
run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    size_t len = 0, cap = 0;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            unsigned char *grown = realloc(data, cap);
            if (grown == NULL) {
                fprintf(stderr, "%s: out of memory\n", path);
                free(data);
                fclose(f);
                return -1;
            }
            data = grown;
        }
        size_t n = fread(data + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        perror(path);
        free(data);
        return -1;
    }
    /* An exact-size copy, so ASan catches a read one past the input. */
    unsigned char *exact = malloc(len > 0 ? len : 1);
    if (exact == NULL) {
        free(data);
        return -1;
    }
    if (len > 0)
        memcpy(exact, data, len);
    free(data);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

/* Feeds every regular file in @dir, in name order. Returns files fed, or -1. */
static long
run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    long fed = 0;
    struct dirent *de;

    if (d == NULL) {
        perror(dir);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (grown == NULL)
                break;
            names = grown;
        }
        names[n] = strdup(de->d_name);
        if (names[n] != NULL)
            n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;

        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) != 0)
                fed = -1;
            else if (fed >= 0)
                fed++;
        }
        free(names[i]);
    }
    free(names);
    return fed;
}

int
main(int argc, char **argv)
{
    long total = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        long fed;

        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        fed = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) == 0 ? 1 : -1;
        if (fed < 0)
            return 1;
        printf("%s: %ld inputs\n", argv[i], fed);
        total += fed;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs given\n");
        return 1;
    }
    printf("replay: %ld inputs, every invariant held\n", total);
    return 0;
}
