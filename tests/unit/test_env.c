/* SPDX-License-Identifier: MIT */
/* test_env.c: the envelope, running and failure record decoders on good, truncated
 * and hostile input. Records are built with the msgpack writer in the layout
 * docs/PROTOCOL.md gives (the integration tests check the Lua side writes it). */
#include "harness/check.h"

#include <stdlib.h>
#include <string.h>

#include "lib/env.h"
#include "lib/env_build.h"
#include "lib/mp.h"

static void
put_env(struct dq_buf *b, uint64_t seq, const char *id, uint32_t attempt, int64_t deadline,
        const char *payload, const char *last_error)
{
    dq_mp_put_array(b, 9);
    dq_mp_put_uint(b, 1);
    dq_mp_put_u64fix(b, seq);
    if (id)
        dq_mp_put_str(b, id, strlen(id));
    else
        dq_mp_put_nil(b);
    dq_mp_put_uint(b, attempt);
    dq_mp_put_uint(b, 1795942260360ULL);
    dq_mp_put_uint(b, 25);
    if (deadline >= 0)
        dq_mp_put_uint(b, (uint64_t)deadline);
    else
        dq_mp_put_nil(b);
    dq_mp_put_bin(b, payload, strlen(payload));
    if (last_error)
        dq_mp_put_str(b, last_error, strlen(last_error));
    else
        dq_mp_put_nil(b);
}

static void
decodes_generated_id(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_env e;
    char tk[64];

    put_env(&b, 42, NULL, 3, -1, "hello", NULL);
    assert_int_equal(dq_env_decode(b.data, b.len, &e, NULL), DQ_OK);
    assert_int_equal(e.seq, 42);
    assert_null(e.id.ptr);
    assert_int_equal(e.attempt, 3);
    assert_int_equal(e.max_attempts, 25);
    assert_int_equal(e.enqueued_ms, 1795942260360LL);
    assert_int_equal(e.deadline_ms, -1);
    assert_int_equal(e.payload.len, 5);
    assert_memory_equal(e.payload.ptr, "hello", 5);
    assert_null(e.last_error.ptr);
    dq_env_tkey(&e, tk, sizeof tk);
    assert_string_equal(tk, "42");
    dq_buf_free(&b);
}

static void
decodes_custom_id_deadline_error(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_env e;
    char tk[64];

    put_env(&b, 7, "order-9", 0, 1795942270000LL, "", "timeout talking to bank");
    assert_int_equal(dq_env_decode(b.data, b.len, &e, NULL), DQ_OK);
    assert_int_equal(e.id.len, 7);
    assert_memory_equal(e.id.ptr, "order-9", 7);
    assert_int_equal(e.deadline_ms, 1795942270000LL);
    assert_int_equal(e.payload.len, 0);
    assert_int_equal(e.last_error.len, strlen("timeout talking to bank"));
    dq_env_tkey(&e, tk, sizeof tk);
    assert_string_equal(tk, "c:order-9");
    dq_buf_free(&b);
}

static void
every_truncation_is_rejected(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_env e;
    dq_err err;

    put_env(&b, 1, "x", 0, 5, "payload bytes", "err");
    for (size_t n = 0; n < b.len; n++) {
        /* a private copy of exactly n bytes, so ASan catches any read past it */
        unsigned char *p = malloc(n ? n : 1);
        memcpy(p, b.data, n);
        assert_int_equal(dq_env_decode(p, n, &e, &err), DQ_EPROTO);
        assert_int_equal(err.code, DQ_EPROTO);
        free(p);
    }
    dq_buf_free(&b);
}

static void
trailing_bytes_and_bad_types_are_rejected(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_env e;
    dq_err err;

    put_env(&b, 1, NULL, 0, -1, "p", NULL);
    dq_buf_putc(&b, 0);
    assert_int_equal(dq_env_decode(b.data, b.len, &e, &err), DQ_EPROTO);
    assert_non_null(strstr(err.msg, "trailing"));

    /* attempt as a string */
    dq_buf_reset(&b);
    dq_mp_put_array(&b, 9);
    dq_mp_put_uint(&b, 1);
    dq_mp_put_u64fix(&b, 1);
    dq_mp_put_nil(&b);
    dq_mp_put_str(&b, "3", 1);
    assert_int_equal(dq_env_decode(b.data, b.len, &e, &err), DQ_EPROTO);

    /* version 2 */
    dq_buf_reset(&b);
    dq_mp_put_array(&b, 9);
    dq_mp_put_uint(&b, 2);
    dq_mp_put_u64fix(&b, 1);
    for (int i = 0; i < 7; i++)
        dq_mp_put_nil(&b);
    assert_int_equal(dq_env_decode(b.data, b.len, &e, &err), DQ_EPROTO);
    dq_buf_free(&b);
}

static void
hostile_headers_are_rejected(void **state)
{
    static const unsigned char big_array[] = {0x99, 0x01, 0xcf, 0,    0,    0,    0,    0,
                                              0,    0,    1,    0xdd, 0xff, 0xff, 0xff, 0xff};
    static const unsigned char huge_bin[] = {0x99, 0x01, 0xcf, 0,    0,    0,    0,    0,
                                             0,    0,    1,    0xc0, 0,    0x00, 0x05, 0x19,
                                             0xc0, 0xc6, 0xff, 0xff, 0xff, 0xff, 'a'};
    static const unsigned char garbage[] = "garbage";
    struct dq_env e;
    struct dq_run_rec r;
    struct dq_fail_rec f;

    assert_int_equal(dq_env_decode(big_array, sizeof big_array, &e, NULL), DQ_EPROTO);
    assert_int_equal(dq_env_decode(huge_bin, sizeof huge_bin, &e, NULL), DQ_EPROTO);
    assert_int_equal(dq_env_decode(garbage, 7, &e, NULL), DQ_EPROTO);
    assert_int_equal(dq_env_decode(garbage, 0, &e, NULL), DQ_EPROTO);
    assert_int_equal(dq_run_rec_decode(garbage, 7, &r, NULL), DQ_EPROTO);
    assert_int_equal(dq_fail_rec_decode(garbage, 7, &f, NULL), DQ_EPROTO);
    assert_int_equal(dq_fail_rec_decode(big_array, sizeof big_array, &f, NULL), DQ_EPROTO);
}

/* The done record of done retention (PROTOCOL.md 4.7), as lua/lib.lua done_encode writes
 * it: fixarray(6) [1, done ms, claimed ms, due ms, attempt, worker]. */
static void
put_done(struct dq_buf *b, uint64_t version, uint64_t done, uint64_t attempt, const char *worker)
{
    dq_mp_put_array(b, 6);
    dq_mp_put_uint(b, version);
    dq_mp_put_u64fix(b, done);
    dq_mp_put_u64fix(b, done - 120);
    dq_mp_put_u64fix(b, done - 125);
    dq_mp_put_uint(b, attempt);
    dq_mp_put_str(b, worker, strlen(worker));
}

static void
done_records(void **state)
{
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_done_rec d;
    dq_err err = {0};

    put_done(&b, 1, 1700000000120, 2, "w1");
    assert_int_equal(dq_done_rec_decode(b.data, b.len, &d, &err), DQ_OK);
    assert_int_equal(d.done_ms, 1700000000120);
    assert_int_equal(d.claimed_ms, 1700000000000);
    assert_int_equal(d.due_ms, 1699999999995);
    assert_int_equal(d.attempt, 2);
    assert_int_equal(d.worker.len, 2);
    assert_memory_equal(d.worker.ptr, "w1", 2);
    /* one byte short, one byte more, another version, an attempt past 32 bits */
    assert_int_equal(dq_done_rec_decode(b.data, b.len - 1, &d, &err), DQ_EPROTO);
    assert_non_null(strstr(err.msg, "done record"));
    dq_mp_put_nil(&b);
    assert_int_equal(dq_done_rec_decode(b.data, b.len, &d, NULL), DQ_EPROTO);
    dq_buf_reset(&b);
    put_done(&b, 2, 1700000000120, 2, "w1");
    assert_int_equal(dq_done_rec_decode(b.data, b.len, &d, &err), DQ_EPROTO);
    dq_buf_reset(&b);
    put_done(&b, 1, 1700000000120, 1ULL << 32, "w1");
    assert_int_equal(dq_done_rec_decode(b.data, b.len, &d, NULL), DQ_EPROTO);
    /* a running record is not a done record */
    assert_int_equal(dq_done_rec_decode("garbage", 7, &d, NULL), DQ_EPROTO);
    dq_buf_free(&b);
}

static void
running_and_failure_records(void **state)
{
    struct dq_buf env = DQ_BUF_INIT, b = DQ_BUF_INIT;
    struct dq_run_rec r;
    struct dq_fail_rec f;

    put_env(&env, 5, NULL, 1, -1, "x", NULL);
    dq_mp_put_array(&b, 4);
    dq_mp_put_bin(&b, env.data, env.len);
    dq_mp_put_str(&b, "w1", 2);
    dq_mp_put_uint(&b, 100);
    dq_mp_put_uint(&b, 90);
    assert_int_equal(dq_run_rec_decode(b.data, b.len, &r, NULL), DQ_OK);
    assert_int_equal(r.envelope.len, env.len);
    assert_int_equal(r.claimed_ms, 100);
    assert_int_equal(r.due_ms, 90);

    dq_buf_reset(&b);
    dq_mp_put_array(&b, 8);
    dq_mp_put_uint(&b, 1);
    dq_mp_put_bin(&b, env.data, env.len);
    dq_mp_put_str(&b, "error", 5);
    dq_mp_put_str(&b, "boom", 4);
    dq_mp_put_str(&b, "at f()\nat g()", 13);
    dq_mp_put_uint(&b, 123);
    dq_mp_put_str(&b, "w1", 2);
    dq_mp_put_bool(&b, false);
    assert_int_equal(dq_fail_rec_decode(b.data, b.len, &f, NULL), DQ_OK);
    assert_int_equal(f.trace.len, 13);
    assert_int_equal(f.failed_ms, 123);
    assert_false(f.undecodable);
    for (size_t n = 0; n < b.len; n++)
        assert_int_equal(dq_fail_rec_decode(b.data, n, &f, NULL), DQ_EPROTO);
    dq_buf_free(&env);
    dq_buf_free(&b);
}

/* Found by tests/fuzz/fuzz_env.c: the key was cut at a NUL in the id ("%.*s"), while the
 * scripts build it from every byte ('c:' .. id). */
static void
tkey_keeps_every_id_byte(void **state)
{
    static const char id[] = {'a', '\0', 'b'};
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_env e;
    char tk[16], small[4];

    dq_mp_put_array(&b, 9);
    dq_mp_put_uint(&b, 1);
    dq_mp_put_u64fix(&b, 7);
    dq_mp_put_bin(&b, id, sizeof id);
    dq_mp_put_uint(&b, 0);
    dq_mp_put_uint(&b, 1795942260360ULL);
    dq_mp_put_uint(&b, 25);
    dq_mp_put_nil(&b);
    dq_mp_put_bin(&b, "", 0);
    dq_mp_put_nil(&b);
    assert_int_equal(dq_env_decode(b.data, b.len, &e, NULL), DQ_OK);
    assert_int_equal(dq_env_tkey(&e, NULL, 0), 5);
    assert_int_equal(dq_env_tkey(&e, tk, sizeof tk), 5);
    assert_memory_equal(tk, "c:a\0b\0", 6);
    assert_int_equal(dq_env_tkey(&e, small, sizeof small), 5);
    assert_memory_equal(small, "c:a\0", 4);
    assert_int_equal(dq_env_tkey(&e, small, 2), 5);
    assert_memory_equal(small, "c\0", 2);
    dq_buf_free(&b);
}

/* A record whose field is a 5-byte header claiming 2^30 elements or 1 GiB of bytes is
 * refused at once (msgpack-c alone would first try to allocate for the claim). */
static void
gib_headers_fail_fast(void **state)
{
    static const unsigned char heads[][5] = {
        {0xdd, 0x40, 0x00, 0x00, 0x00}, /* array32 of 2^30 */
        {0xdf, 0x40, 0x00, 0x00, 0x00}, /* map32 of 2^30 */
        {0xdb, 0x40, 0x00, 0x00, 0x00}, /* str32 of 1 GiB */
        {0xc6, 0x40, 0x00, 0x00, 0x00}, /* bin32 of 1 GiB */
    };
    struct dq_run_rec r;
    struct dq_fail_rec f;
    struct dq_env e;
    dq_err err;

    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        unsigned char rec[6] = {0x94};
        memcpy(rec + 1, heads[i], 5);
        assert_int_equal(dq_run_rec_decode(rec, sizeof rec, &r, &err), DQ_EPROTO);
        assert_non_null(strstr(err.msg, "envelope"));
        assert_int_equal(dq_run_rec_decode(heads[i], 5, &r, NULL), DQ_EPROTO);
        assert_int_equal(dq_fail_rec_decode(heads[i], 5, &f, NULL), DQ_EPROTO);
        assert_int_equal(dq_env_decode(heads[i], 5, &e, NULL), DQ_EPROTO);
    }
}

/* The extension map on its own (import's side of export, PROTOCOL.md 5.23): built from
 * tl and uf in key order, read back with a later writer's key kept, refused malformed. */
static void
extension_map_alone(void **state)
{
    (void)state;
    struct dq_buf b = DQ_BUF_INIT;
    struct dq_env e;
    dq_err err;

    dq_env_ext_build(&b, -1, -1);
    assert_int_equal(b.len, 0); /* neither: no map, a v1 envelope */
    dq_env_ext_build(&b, 5000, 10000);
    assert_int_equal(b.len, 13);
    assert_memory_equal(b.data, "\x82\xa2tl\xcd\x13\x88\xa2uf\xcd\x27\x10", 13);
    assert_int_equal(dq_env_ext_decode(b.data, b.len, &e, &err), DQ_OK);
    assert_int_equal(e.time_limit_ms, 5000);
    assert_int_equal(e.unique_for_ms, 10000);
    dq_buf_reset(&b);
    dq_env_ext_build(&b, -1, 60000);
    assert_memory_equal(b.data, "\x81\xa2uf\xcd\xea\x60", 6);
    dq_buf_free(&b);

    static const unsigned char later[] = "\x82\xa2tl\x05\xa2zz\xa5later";
    assert_int_equal(dq_env_ext_decode(later, sizeof later - 1, &e, &err), DQ_OK);
    assert_int_equal(e.time_limit_ms, 5);
    assert_int_equal(e.unique_for_ms, -1);
    assert_int_equal(e.ext.len, sizeof later - 1);
    static const unsigned char unordered[] = "\x82\xa2uf\x05\xa2tl\x05";
    assert_int_equal(dq_env_ext_decode(unordered, sizeof unordered - 1, &e, &err), DQ_EPROTO);
    assert_non_null(strstr(err.msg, "not in order"));
    static const unsigned char trailing[] = "\x81\xa2tl\x05\x00";
    assert_int_equal(dq_env_ext_decode(trailing, sizeof trailing - 1, &e, &err), DQ_EPROTO);
    assert_int_equal(dq_env_ext_decode("", 0, &e, &err), DQ_EPROTO);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decodes_generated_id),
        cmocka_unit_test(decodes_custom_id_deadline_error),
        cmocka_unit_test(every_truncation_is_rejected),
        cmocka_unit_test(trailing_bytes_and_bad_types_are_rejected),
        cmocka_unit_test(hostile_headers_are_rejected),
        cmocka_unit_test(gib_headers_fail_fast),
        cmocka_unit_test(running_and_failure_records),
        cmocka_unit_test(done_records),
        cmocka_unit_test(tkey_keeps_every_id_byte),
        cmocka_unit_test(extension_map_alone),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("unit/env", tests, NULL, NULL);
}
