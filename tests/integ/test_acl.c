/* SPDX-License-Identifier: MIT */
/*
 * test_acl.c: what the library does for ACL roles and connection names, on a real
 * server: the connection name (the default delayq:lib:HOST:PID, a given one with
 * illegal bytes made legal), the user option, a user refused CLIENT SETNAME still
 * connecting, the role gates of the scripts refusing before any write, and the
 * side-effect-free probes (lib/scripts.c) for each kind of user, and the gate asking
 * Redis on every call (an ACL changed between two calls). The roles of
 * docs/SECURITY.md themselves are tested by tests/prod/roles.sh.
 */
#include "harness/fixture.h"

#include <unistd.h>

#include "lib/scripts.h"

static void
acl(struct fixture *f, const char *line)
{
    char buf[1024];
    const char *argv[80];
    int argc = 0;

    snprintf(buf, sizeof buf, "%s", line);
    for (char *t = strtok(buf, " "); t != NULL && argc < 80; t = strtok(NULL, " "))
        argv[argc++] = t;
    redisReply *r = test_redis_cmd(f->redis, argc, argv);
    if (r == NULL || r->type != REDIS_REPLY_STATUS)
        fail_msg("%s: %s", line, r != NULL && r->str != NULL ? r->str : "no reply");
    freeReplyObject(r);
}

/* The CLIENT LIST line of the connection named @name ("" when none). */
static bool
client_listed(struct fixture *f, const char *name, char *user, size_t size)
{
    const char *argv[2] = {"CLIENT", "LIST"};
    redisReply *r = test_redis_cmd(f->redis, 2, argv);
    char want[200];
    bool found = false;

    snprintf(want, sizeof want, " name=%s ", name);
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
        const char *at = strstr(r->str, want);
        if (at != NULL) {
            const char *u = strstr(at, " user=");
            found = true;
            if (u != NULL && user != NULL)
                snprintf(user, size, "%.*s", (int)strcspn(u + 6, " \n"), u + 6);
        }
    }
    freeReplyObject(r);
    return found;
}

static dq_client *
open_as(struct fixture *f, const char *user, const char *name)
{
    dq_client_opts o = {.user = user, .password = "pw-1", .client_name = name};
    dq_client *c = NULL;

    if (dq_client_open(f->redis->url, &o, &c, &f->err) != DQ_OK)
        fail_msg("open as %s: %s", user, f->err.msg);
    return c;
}

static void
names_and_users(void **state)
{
    struct fixture f;
    char host[64] = "", want[160], user[64] = "";
    dq_client *c;

    fixture_open(&f, state, "names");
    gethostname(host, sizeof host - 1);
    snprintf(want, sizeof want, "delayq:lib:%s:%ld", host, (long)getpid());
    assert_true(client_listed(&f, want, NULL, 0)); /* the fixture's client, no name given */

    acl(&f, "ACL SETUSER nm-user reset on >pw-1 ~* &* +@all");
    c = open_as(&f, "nm-user", "my app\tv2\n\xc3\xa9");
    assert_true(client_listed(&f, "my_app_v2___", user, sizeof user));
    assert_string_equal(user, "nm-user");
    dq_client_free(c);

    /* refused CLIENT SETNAME: connected all the same, just unnamed */
    acl(&f, "ACL SETUSER nm-plain reset on >pw-1 ~* &* +@all -client");
    c = open_as(&f, "nm-plain", "unseen-name");
    assert_false(client_listed(&f, "unseen-name", NULL, 0));
    dq_stats s;
    ASSERT_OK(&f, dq_stats_get(c, f.queue, &s, &f.err));
    dq_client_free(c);

    /* a user in the URL wins over the option */
    dq_client_opts o = {.user = "nobody", .password = "pw-1"};
    char url[400];
    snprintf(url, sizeof url, "redis://nm-user@127.0.0.1:%d", f.redis->port);
    ASSERT_OK(&f, dq_client_open(url, &o, &c, &f.err));
    dq_client_free(c);
    fixture_close(&f);
}

/* @c's probes: want_work / want_operate "" (may) or a substring of the reason. */
static void
probes(struct fixture *f, dq_client *c, const char *want_work, const char *want_operate)
{
    char why[400];

    ASSERT_OK(f, dq_scripts_may_work(c, f->queue, why, sizeof why, &f->err));
    if (want_work[0] == '\0' ? why[0] != '\0' : strstr(why, want_work) == NULL)
        fail_msg("may work: \"%s\", wanted \"%s\"", why, want_work);
    ASSERT_OK(f, dq_scripts_may_operate(c, f->queue, why, sizeof why, &f->err));
    if (want_operate[0] == '\0' ? why[0] != '\0' : strstr(why, want_operate) == NULL)
        fail_msg("may operate: \"%s\", wanted \"%s\"", why, want_operate);
}

static void
gates_and_probes(void **state)
{
    static const char *const common =
        "+ping +client|setname +info +fcall_ro +evalsha_ro +fcall "
        "+evalsha +script|load +function|load +time +zcard +zcount "
        "+zrange +zrangebyscore +zrevrange +zrank +zscore +hget "
        "+hmget +hexists +lrange +xrevrange +zadd +zrem +zpopmin +hset "
        "+hdel +hincrby +pexpireat +incrby +publish +sadd +scard +sscan";
    struct fixture f;
    char line[1024], sched[200], workers[200];
    const char *ids[1] = {"t1"};
    dq_client *c;
    size_t n = 0;

    fixture_open(&f, state, "gates");
    snprintf(sched, sizeof sched, "dq:{%s}:sched", f.queue);
    snprintf(workers, sizeof workers, "dq:{%s}:workers", f.queue);
    enqueue_str(&f, "{}", 0, "t1", NULL);

    /* read only: no FCALL, no write */
    acl(&f, "ACL SETUSER g-ro reset on >pw-1 %R~dq:* +ping +client|setname +fcall_ro +evalsha_ro "
            "+time +zcard +zcount +hmget +hget +zrange");
    c = open_as(&f, "g-ro", NULL);
    probes(&f, c, "this user may not write to queue", "this user may not write to queue");
    dq_client_free(c);

    /* the queue's keys but not the worker registry, no XADD */
    snprintf(line, sizeof line,
             "ACL SETUSER g-prod reset on >pw-1 %%R~dq:* ~dq:{*}:sched "
             "~dq:{*}:ids ~dq:{*}:inflight ~dq:{*}:running ~dq:{*}:failed "
             "~dq:{*}:failidx ~dq:{*}:stats ~dq:{*}:seq ~dq:{*}:config "
             "~dq:{*}:audit ~dq:{*}:wake ~dq:{*}:roll:* ~dq:queues &* %s",
             common);
    acl(&f, line);
    c = open_as(&f, "g-prod", NULL);
    probes(&f, c, "may not run a worker", "may not run operator actions");
    dq_claimed cl = {0};
    int rc = dq_claim(c, f.queue, 10, 30000, "w1", &cl, &f.err);
    dq_claimed_free(&cl);
    assert_int_equal(rc, DQ_EREDIS);
    if (strstr(f.err.msg, "NOPERM this user may not run a worker") == NULL)
        fail_msg("claim refused with: %s", f.err.msg);
    assert_int_equal(test_redis_int(f.redis, 2, (const char *[]){"ZCARD", sched}), 1);
    dq_client_free(c);

    /* everything but XADD: a worker */
    snprintf(line, sizeof line, "ACL SETUSER g-work reset on >pw-1 ~dq:* &* +subscribe %s", common);
    acl(&f, line);
    c = open_as(&f, "g-work", NULL);
    probes(&f, c, "", "may not run operator actions");
    rc = dq_drop(c, f.queue, ids, 1, &n, &f.err);
    assert_int_equal(rc, DQ_EREDIS);
    if (strstr(f.err.msg, "NOPERM this user may not run operator actions") == NULL)
        fail_msg("drop refused with: %s", f.err.msg);
    assert_int_equal(test_redis_int(f.redis, 2, (const char *[]){"ZCARD", sched}), 1);
    dq_client_free(c);

    /* the probes changed nothing: no worker registered, no audit entry */
    assert_int_equal(test_redis_int(f.redis, 2, (const char *[]){"EXISTS", workers}), 0);
    ASSERT_OK(&f, dq_drop(f.c, f.queue, ids, 1, &n, &f.err)); /* the fixture is default */
    assert_int_equal(n, 1);
    probes(&f, f.c, "", "");
    fixture_close(&f);
}

/* The count of @key's members (ZCARD or HLEN by @cmd) in queue @q. */
static long long
count(struct fixture *f, const char *cmd, const char *q, const char *key)
{
    char k[200];

    snprintf(k, sizeof k, "dq:{%s}:%s", q, key);
    return test_redis_int(f->redis, 2, (const char *[]){cmd, k});
}

static void
claim_refused(struct fixture *f, dq_client *c, const char *q)
{
    dq_claimed cl = {0};
    int rc = dq_claim(c, q, 1, 30000, "w1", &cl, &f->err);

    dq_claimed_free(&cl);
    assert_int_equal(rc, DQ_EREDIS);
    if (strstr(f->err.msg, "NOPERM this user may not run a worker") == NULL)
        fail_msg("claim on %s refused with: %s", q, f->err.msg);
}

static void
claim_one(struct fixture *f, dq_client *c, const char *q)
{
    dq_claimed cl = {0};

    ASSERT_OK(f, dq_claim(c, q, 1, 30000, "w1", &cl, &f->err));
    assert_int_equal(cl.n, 1);
    dq_claimed_free(&cl);
}

/*
 * The gate keeps each script's list with its keys across calls (the function library's
 * state lives on; PROTOCOL 5.16a), never a verdict: the same script on the same server,
 * the ACL changed between two calls, must be refused the second time, and a call on
 * another queue must be checked on that queue's keys. Each refusal here would otherwise
 * be half-applied: the script's first writes are allowed and a later one is not.
 */
static void
gate_asks_every_call(void **state)
{
    struct fixture f;
    char other[120], line[1024];
    dq_client *c;

    fixture_open(&f, state, "gatecall");
    snprintf(other, sizeof other, "%s-b", f.queue);
    for (int i = 0; i < 2; i++) {
        enqueue_str(&f, "{}", 0, NULL, NULL);
        ASSERT_OK(
            &f, dq_enqueue(f.c, other, &(dq_enqueue_opts){0}, "{}", 2, &(dq_enqueued){0}, &f.err));
    }
    acl(&f, "ACL SETUSER g-live reset on >pw-1 ~dq:* &* +@all");
    c = open_as(&f, "g-live", NULL);
    claim_one(&f, c, f.queue);

    /* the ACL changes between two calls of claim: the second is refused, whole */
    acl(&f, "ACL SETUSER g-live -zadd");
    claim_refused(&f, c, f.queue);
    assert_int_equal(count(&f, "ZCARD", f.queue, "sched"), 1);
    assert_int_equal(count(&f, "HLEN", f.queue, "running"), 1);
    assert_int_equal(count(&f, "ZCARD", f.queue, "inflight"), 1);

    /* allowed again: the next call is let through */
    acl(&f, "ACL SETUSER g-live +zadd");
    claim_one(&f, c, f.queue);
    assert_int_equal(count(&f, "HLEN", f.queue, "running"), 2);

    /* the other queue's eleven keys (FCALL itself checks those) but its tally read only:
     * ack there is refused, on that queue's keys, right after an ack here (each would
     * otherwise end its lease and then fail at the tally) */
    dq_claimed mine = {0}, theirs = {0};
    enqueue_str(&f, "{}", 0, NULL, NULL);
    ASSERT_OK(&f, dq_claim(c, f.queue, 1, 30000, "w1", &mine, &f.err));
    ASSERT_OK(&f, dq_claim(c, other, 1, 30000, "w1", &theirs, &f.err));
    assert_int_equal(mine.n + theirs.n, 2);
    snprintf(line, sizeof line, "ACL SETUSER g-live reset on >pw-1 &* +@all %%R~dq:* ~dq:{%s}:*",
             f.queue);
    for (int i = 0; i < DQ_QUEUE_KEYS; i++) {
        char k[200];
        dq_queue_key(other, i, k, sizeof k);
        snprintf(line + strlen(line), sizeof line - strlen(line), " ~%s", k);
    }
    acl(&f, line);
    ASSERT_OK(&f, dq_ack(c, f.queue, &mine.tasks[0], &f.err));
    assert_int_equal(dq_ack(c, other, &theirs.tasks[0], &f.err), DQ_EREDIS);
    if (strstr(f.err.msg, "NOPERM this user may not run a worker (ack runs ") == NULL ||
        strstr(f.err.msg, other) == NULL || strstr(f.err.msg, ":tally,") == NULL)
        fail_msg("ack on %s refused with: %s", other, f.err.msg);
    assert_int_equal(count(&f, "ZCARD", other, "inflight"), 1);
    assert_int_equal(count(&f, "HLEN", other, "running"), 1);
    dq_claimed_free(&mine);
    dq_claimed_free(&theirs);
    dq_client_free(c);
    fixture_close(&f);
}

/* The number of keys matching dq:{@q}:roll:* (the queue's per-minute history hashes). */
static long long
rolls(struct fixture *f, const char *q)
{
    char pat[200];
    const char *argv[2] = {"KEYS", pat};

    snprintf(pat, sizeof pat, "dq:{%s}:roll:*", q);
    redisReply *r = test_redis_cmd(f->redis, 2, argv);
    long long n = r != NULL && r->type == REDIS_REPLY_ARRAY ? (long long)r->elements : -1;
    freeReplyObject(r);
    return n;
}

/*
 * A role line from before the per-minute rollups (PROTOCOL.md 13): no PEXPIREAT, and a
 * producer without ~dq:{*}:roll:*. Upgrading delayq must not stop such a queue: enqueue,
 * claim and ack run as before and only the history is not written (nothing at all in
 * the roll keys, not a count without its expiry); with today's lines it is.
 */
static void
old_role_lines_run_without_history(void **state)
{
    /* SECURITY.md's producer and worker lines as they were before the rollups */
    static const char *const prod =
        "%R~dq:* ~dq:queues ~dq:{*}:sched ~dq:{*}:ids ~dq:{*}:inflight ~dq:{*}:running "
        "~dq:{*}:failed ~dq:{*}:failidx ~dq:{*}:stats ~dq:{*}:seq ~dq:{*}:config "
        "~dq:{*}:audit ~dq:{*}:wake &dq:{*}:wake +ping +client|setname +cluster|slots "
        "+asking +select +info +fcall_ro +evalsha_ro +scard +sscan +time +zcard "
        "+zcount +zrange +zrangebyscore +zrevrange +zrank +zscore +hget +hmget "
        "+hexists +xrevrange +lrange +hgetall +hlen +exists +role +fcall +evalsha "
        "+script|load +zadd +zrem +zpopmin +hset +hdel +hincrby +incrby +publish "
        "+spublish +sadd";
    static const char *const work =
        "~dq:* &dq:{*}:wake +ping +client|setname +cluster|slots +asking +select +info "
        "+fcall_ro +evalsha_ro +scard +sscan +time +zcard +zcount +zrange "
        "+zrangebyscore +zrevrange +zrank +zscore +hget +hmget +hexists +xrevrange "
        "+lrange +hgetall +hlen +exists +role +fcall +evalsha +script|load +zadd +zrem "
        "+zpopmin +hset +hdel +hincrby +rpush +ltrim +incrby +publish +spublish +sadd "
        "+subscribe +ssubscribe";
    struct fixture f;
    char line[1024];
    dq_client *p, *w;

    fixture_open(&f, state, "oldacl");
    snprintf(line, sizeof line, "ACL SETUSER o-prod reset on >pw-1 %s", prod);
    acl(&f, line);
    snprintf(line, sizeof line, "ACL SETUSER o-work reset on >pw-1 %s", work);
    acl(&f, line);
    p = open_as(&f, "o-prod", NULL);
    w = open_as(&f, "o-work", NULL);

    for (int i = 0; i < 3; i++)
        ASSERT_OK(
            &f, dq_enqueue(p, f.queue, &(dq_enqueue_opts){0}, "{}", 2, &(dq_enqueued){0}, &f.err));
    assert_int_equal(count(&f, "ZCARD", f.queue, "sched"), 3);
    dq_claimed cl = {0};
    ASSERT_OK(&f, dq_claim(w, f.queue, 3, 30000, "w1", &cl, &f.err));
    assert_int_equal(cl.n, 3);
    for (size_t i = 0; i < cl.n; i++)
        ASSERT_OK(&f, dq_ack(w, f.queue, &cl.tasks[i], &f.err));
    dq_claimed_free(&cl);
    assert_int_equal(count(&f, "ZCARD", f.queue, "inflight"), 0);
    assert_int_equal(rolls(&f, f.queue), 0);

    /* today's lines (SECURITY.md): the same calls write the minute's hash */
    acl(&f, "ACL SETUSER o-prod ~dq:{*}:roll:* +pexpireat");
    acl(&f, "ACL SETUSER o-work +pexpireat");
    ASSERT_OK(&f,
              dq_enqueue(p, f.queue, &(dq_enqueue_opts){0}, "{}", 2, &(dq_enqueued){0}, &f.err));
    assert_int_equal(rolls(&f, f.queue), 1);
    dq_client_free(p);
    dq_client_free(w);
    fixture_close(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_users),
        cmocka_unit_test(gates_and_probes),
        cmocka_unit_test(gate_asks_every_call),
        cmocka_unit_test(old_role_lines_run_without_history),
    };

    test_filter_from_env();
    return cmocka_run_group_tests_name("integ/acl", tests, fixture_group_setup,
                                       fixture_group_teardown);
}
