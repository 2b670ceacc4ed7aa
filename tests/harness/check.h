/* SPDX-License-Identifier: MIT */
/*
 * check.h: the one way tests include cmocka. cmocka.h needs these headers first
 * and does not include them itself.
 */
#ifndef DQ_HARNESS_CHECK_H
#define DQ_HARNESS_CHECK_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#endif /* DQ_HARNESS_CHECK_H */
