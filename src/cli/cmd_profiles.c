/* SPDX-License-Identifier: MIT */
/*
 * cmd_profiles.c: `delayq profiles`, the list of connection profiles (never their
 * secrets), and cli_profile_use(), which puts the chosen profile under the flags and
 * variables (the file's format and checks are in profile.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "lib/url.h"
#include "profile.h"

/* Loads the profiles file into g->profiles (once). */
static int
load(struct cli *g, char *path, size_t size, bool *missing)
{
    char why[600];
    int rc;

    *missing = false;
    if (!profile_path(path, size)) {
        fprintf(stderr, "%s: profiles: neither $XDG_CONFIG_HOME nor $HOME is set\n", g->prog);
        return DQ_EXIT_USAGE;
    }
    if (g->profiles != NULL)
        return DQ_EXIT_OK;
    if ((g->profiles = calloc(1, sizeof *g->profiles)) == NULL) {
        fprintf(stderr, "%s: out of memory\n", g->prog);
        return DQ_EXIT_FAILED;
    }
    rc = profile_load(path, g->profiles, why, sizeof why);
    if (rc < 0) {
        fprintf(stderr, "%s: ", g->prog);
        cli_put_safe(stderr, why, strlen(why));
        fputc('\n', stderr);
        return DQ_EXIT_USAGE;
    }
    *missing = rc == 1;
    cli_guard_secrets(g); /* a password = or a url with one is in memory now */
    return DQ_EXIT_OK;
}

int
cli_profile_use(struct cli *g)
{
    char path[4096];
    bool missing;
    int rc = load(g, path, sizeof path, &missing);
    const struct profile *p;

    if (rc != DQ_EXIT_OK)
        return rc;
    p = profile_find(g->profiles, g->profile_name);
    if (p == NULL) {
        fprintf(stderr, "%s: profile \"", g->prog);
        cli_put_safe(stderr, g->profile_name, strlen(g->profile_name));
        fprintf(stderr, "\" is not in %s%s (see delayq profiles)\n", path,
                missing ? ", which does not exist" : "");
        return DQ_EXIT_USAGE;
    }
    g->profile = p;
    /* what a variable sets wins over the profile; flags, parsed later, over both */
    if (g->url == NULL)
        g->url = p->url;
    if (!g->queue_chosen && p->queue != NULL) {
        g->queue = p->queue;
        g->queue_chosen = true;
    }
    if (p->min_replicas >= 0 && getenv("DELAYQ_MIN_REPLICAS") == NULL)
        g->min_replicas = p->min_replicas;
    return DQ_EXIT_OK;
}

/* The url of @p without its user info (never print a password). */
static void
put_server(const struct profile *p)
{
    struct dq_url u;
    char ep[300];

    if (p->url == NULL) {
        printf("-");
        return;
    }
    if (dq_url_parse(p->url, &u, NULL) != DQ_OK) {
        printf("(bad url)");
        return;
    }
    dq_url_endpoint(&u, ep, sizeof ep);
    memset(u.password, 0, sizeof u.password);
    printf("%s://", u.kind == DQ_URL_UNIX ? "unix" : u.tls ? "rediss" : "redis");
    cli_put_safe(stdout, ep, strlen(ep));
    if (u.db != 0)
        printf("/%d", u.db);
}

static int
run(struct cli *g, const struct cli_args *args)
{
    char path[4096];
    bool missing;
    int rc;

    if ((rc = load(g, path, sizeof path, &missing)) != DQ_EXIT_OK)
        return rc;
    if (missing || g->profiles->n == 0) {
        printf("no profiles: %s %s\n", path, missing ? "does not exist" : "defines none");
        return DQ_EXIT_OK;
    }
    printf("profiles in %s:\n", path);
    for (size_t i = 0; i < g->profiles->n; i++) {
        const struct profile *p = &g->profiles->v[i];
        bool used = g->profile == p;

        printf("%s ", used ? "*" : " ");
        cli_put_safe(stdout, p->name, strlen(p->name));
        printf("  ");
        put_server(p);
        if (p->user != NULL) {
            printf("  user ");
            cli_put_safe(stdout, p->user, strlen(p->user));
        }
        /* in the order cli_client_opts takes them: a url's own password first */
        printf("  password %s", p->url_password       ? "in the url"
                                : p->password         ? "in the file"
                                : p->password_file    ? "from password-file"
                                : p->password_command ? "from password-command"
                                                      : "none");
        if (p->queue != NULL)
            printf("  queue %s", p->queue);
        if (p->tls_ca || p->tls_cert || p->tls_server_name)
            printf("  tls%s%s%s", p->tls_ca ? " ca" : "", p->tls_cert ? " cert" : "",
                   p->tls_server_name ? " server-name" : "");
        if (p->min_replicas >= 0)
            printf("  min-replicas %d", p->min_replicas);
        if (p->read_only == 1)
            printf("  read-only");
        printf("\n");
    }
    if (g->profile != NULL)
        printf("(* in use: --profile or $DELAYQ_PROFILE)\n");
    return DQ_EXIT_OK;
}

const struct cli_cmd cmd_profiles = {
    .name = "profiles",
    .summary = "the connection profiles (never their secrets)",
    .usage = "delayq profiles",
    .about = "Lists the connection profiles of $XDG_CONFIG_HOME/delayq/config (default\n"
             "~/.config/delayq/config): name, server (never the user info of its url), user,\n"
             "where the password comes from (never the password), queue and the other settings.\n"
             "Use one with 'delayq --profile NAME COMMAND' or DELAYQ_PROFILE=NAME; flags and\n"
             "variables override what it says. The file:\n\n"
             "  [prod]\n"
             "  url = rediss://redis.internal.example:6380/0\n"
             "  user = alice\n"
             "  password-file = ~/.config/delayq/prod.password   # or password-command = CMD\n"
             "  tls-ca = /etc/delayq/redis-ca.crt                # tls-cert, tls-key,\n"
             "  queue = emails                                   # tls-server-name,\n"
             "  read-only = yes                                  # min-replicas\n\n"
             "A file that others may change, or that holds a password (password = ..., or a\n"
             "url with one) and others may read, is refused, as is a password-file others may\n"
             "read (chmod 600).",
    .run = run,
};
