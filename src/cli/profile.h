/* SPDX-License-Identifier: MIT */
/*
 * profile.h: connection profiles, named sets of connection settings in
 * $XDG_CONFIG_HOME/delayq/config (default ~/.config/delayq/config):
 *
 *   # comment
 *   [prod]
 *   url = rediss://redis.internal:6380/0
 *   user = alice
 *   password-file = ~/.config/delayq/prod.password
 *   tls-ca = /etc/delayq/ca.crt
 *   queue = emails
 *   read-only = yes
 *
 * profile_parse() is pure (bytes in, profiles or "file:line: reason" out), so the fuzz
 * target and the unit tests drive it without files. profile_load() adds the file and
 * its permission checks (ssh's rule for keys: a file that holds a secret must not be
 * readable by others).
 */
#ifndef DQ_CLI_PROFILE_H
#define DQ_CLI_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#define PROFILE_NAME_MAX  63    /* bytes of a profile name: [A-Za-z0-9._-] */
#define PROFILE_VALUE_MAX 1024  /* bytes of one value */
#define PROFILE_FILE_MAX  65536 /* bytes of the whole file */
#define PROFILE_COUNT_MAX 100   /* profiles in one file */

struct profile {
    char name[PROFILE_NAME_MAX + 1];
    int line; /* of its [name] header */
    /* each owned; NULL when the profile does not set it */
    char *url, *user, *password, *password_file, *password_command;
    char *tls_ca, *tls_cert, *tls_key, *tls_server_name, *queue;
    bool url_password; /* url holds a password (or, unparsable, what looks like one) */
    int min_replicas;  /* -1: not set */
    int read_only;     /* -1: not set, else 0 or 1 */
};

struct profiles {
    struct profile *v; /* owned */
    size_t n;
    bool has_password; /* some profile holds a password itself (password = ..., or in url) */
    size_t secret_at;  /* then the first such profile's index in v, for messages */
};

/*
 * Parses @len bytes of @text (need not be NUL-terminated) named @file in messages into
 * @out. Returns 0, or -1 with "FILE:LINE: reason" in @why (nothing allocated then).
 * Unknown keys, lines that are neither a comment, a [name] nor "key = value", keys
 * before the first [name], duplicate names or keys, and bad values are errors.
 */
int profile_parse(const char *text, size_t len, const char *file, struct profiles *out, char *why,
                  size_t size);

/* Frees every profile; wipes the passwords held. */
void profile_free(struct profiles *p);

/* The profile named @name, or NULL. Borrowed from @p. */
const struct profile *profile_find(const struct profiles *p, const char *name);

/* The config file's path into @buf ($XDG_CONFIG_HOME/delayq/config if that is an
 * absolute path, else $HOME/.config/delayq/config). False when neither is known. */
bool profile_path(char *buf, size_t size);

/*
 * Reads and parses @path. Returns 0; 1 when the file does not exist (@out empty); -1
 * with the reason in @why: unreadable, too large, a parse error, or permissions: a file
 * that others may write to, or that holds a password (password = ..., or a url with a
 * password) and others may read, is refused with the chmod that fixes it.
 */
int profile_load(const char *path, struct profiles *out, char *why, size_t size);

/*
 * The password of @p into @buf (NUL-terminated; @size bytes at most with the NUL):
 * password, else the first line of password-file (refused when others may read it),
 * else the first line of password-command's output (run with /bin/sh -c; must exit 0).
 * Returns 1 when one was found, 0 when @p names none, -1 with the reason in @why.
 */
int profile_password(const struct profile *p, char *buf, size_t size, char *why, size_t wsize);

#endif /* DQ_CLI_PROFILE_H */
