/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h: what every fuzz target shares. A target defines LLVMFuzzerTestOneInput; it is
 * linked either with libFuzzer (clang, -Dfuzz=true) or with replay.c, which feeds it the
 * seed corpus as an ordinary test. Targets check invariants with FUZZ_CHECK, which
 * aborts, so libFuzzer saves the input and the replay test fails.
 */
#ifndef DQ_FUZZ_H
#define DQ_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_fail(__FILE__, __LINE__, #cond);                                                  \
    } while (0)

/* Prints where an invariant broke and aborts. */
void fuzz_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/* A NUL-terminated copy of @size bytes (cut at the first NUL, as a C string would be).
 * Aborts when out of memory: a fuzz input that cannot be copied tests nothing. */
char *fuzz_cstr(const uint8_t *data, size_t size);

/*
 * UTF-8 checks written apart from src/fmt/esc.c on purpose: an oracle that reused the
 * code under test would agree with its bugs.
 *
 * fuzz_utf8_next: the length (1..4) of the shortest-form encoding of a Unicode scalar
 * value at @s, storing it in *@cp; 0 if the bytes there are not one (or @len is 0).
 */
size_t fuzz_utf8_next(const void *s, size_t len, uint32_t *cp);

/* True when all @len bytes at @s are valid UTF-8. */
bool fuzz_utf8_valid(const void *s, size_t len);

/*
 * True when @len bytes at @s are valid UTF-8 holding nothing a terminal acts on: no C0
 * control except those @allowed names ("\n\t"), no DEL, no C1 control, no bidi control.
 */
bool fuzz_text_safe(const void *s, size_t len, const char *allowed);

#endif /* DQ_FUZZ_H */
