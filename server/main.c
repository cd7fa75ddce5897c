/* pgrest-server: a drop-in for the PostgREST executable, built only on
 * libpgrest's public API. Usage: pgrest-server [CONFIG_FILE] */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "config_file.h"
#include "db_watch.h"
#include "http.h"
#include "log.h"
#include "reload.h"
#include "pgrest/pgrest.h"

extern char **environ;

static int apply_options(pgrest_ctx *ctx, const server_options *opts)
{
    for (size_t i = 0; i < opts->n; i++) {
        pgrest_error err = {0};
        if (pgrest_ctx_set(ctx, opts->items[i].key, opts->items[i].value, &err) != PGREST_OK) {
            fprintf(stderr, "pgrest-server: %s\n", err.message ? err.message : "invalid configuration");
            return -1;
        }
    }
    return 0;
}

static int load_schema_once(pgrest_ctx *ctx)
{
    pgrest_error err = {0};
    if (pgrest_ctx_load_schema(ctx, &err) == PGREST_OK) {
        log_msg(LOG_INFO, "Schema cache loaded");
        return 0;
    }
    /* the failure was logged by db_watch, as PostgREST's observer does */
    return -1;
}

/* A numeric server-* option in [min, max], or def when unset. Invalid
 * values stop the server at startup (like PostgREST's config errors). */
static bool option_number(const server_options *opts, const char *key,
                          unsigned long long def, unsigned long long min,
                          unsigned long long max, unsigned long long *out)
{
    const char *v = server_options_get(opts, key);
    *out = def;
    if (v == NULL)
        return true;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || n < min || n > max) {
        fprintf(stderr, "pgrest-server: invalid %s: %s (expected %llu..%llu)\n",
                key, v, min, max);
        return false;
    }
    *out = n;
    return true;
}

/* Safe defaults: a 10 MiB body (the library's own default, see
 * pgr_parse_limits), an 8 KiB URL and 16 KiB of headers (what common
 * proxies allow), 30 s idle timeout (Warp's slowloris timeout, which
 * PostgREST uses), 1024 connections. */
static bool limit_options(const server_options *opts, http_listen *lc)
{
    unsigned long long body, url, hdr, timeout, conns, per_ip;
    if (!option_number(opts, "server-max-body-size", 10ULL << 20, 1, 1ULL << 40, &body) ||
        !option_number(opts, "server-max-url-size", 8192, 256, 1 << 20, &url) ||
        !option_number(opts, "server-max-header-size", 16384, 1024, 1 << 20, &hdr) ||
        !option_number(opts, "server-timeout", 30, 1, 86400, &timeout) ||
        !option_number(opts, "server-max-connections", 1024, 1, 1000000, &conns) ||
        !option_number(opts, "server-max-connections-per-ip", 0, 0, 1000000, &per_ip))
        return false;
    lc->max_body_size = (size_t)body;
    lc->max_url_size = (size_t)url;
    lc->max_header_size = (size_t)hdr;
    lc->timeout = (unsigned)timeout;
    lc->max_connections = (unsigned)conns;
    lc->max_connections_per_ip = (unsigned)per_ip;
    return true;
}

static bool option_true(const server_options *opts, const char *key)
{
    const char *v = server_options_get(opts, key);
    return v != NULL && (strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0 ||
                         strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0);
}

/* server-reuseport: PostgREST binds the shared port only once the schema
 * cache is loaded (App.hs waitForSchemaCacheLoaded), so a replacement
 * process takes no traffic it cannot serve. False when told to stop (or
 * a fatal connection error) first. */
static bool wait_until_ready(pgrest_ctx *ctx, const sigset_t *set)
{
    const struct timespec tick = {0, 100 * 1000000L};
    while (!pgrest_ctx_ready(ctx)) {
        int sig = sigtimedwait(set, NULL, &tick);
        if (db_watch_fatal() || sig == SIGTERM || sig == SIGINT)
            return false;
        if (sig == SIGUSR1)
            load_schema_once(ctx);
    }
    return true;
}

static void usage(void)
{
    fprintf(stderr, "Usage: pgrest-server [CONFIG_FILE]\n"
                    "  Serves PostgREST's API. Options come from the config file\n"
                    "  (PostgREST format) and PGRST_* environment variables.\n");
}

/* Blocks until SIGTERM/SIGINT; SIGUSR1 reloads the schema cache,
 * SIGUSR2 the configuration (PostgREST ref/schema_cache, ref/configuration). */
static void wait_signals(const sigset_t *set, server_config *cfg)
{
    for (;;) {
        int sig = 0;
        sigwait(set, &sig);
        if (sig == SIGUSR1)
            load_schema_once(cfg->ctx);
        else if (sig == SIGUSR2)
            server_config_reload(cfg);
        else {
            if (!db_watch_fatal())
                log_msg(LOG_INFO, "Received %s, shutting down",
                        sig == SIGTERM ? "SIGTERM" : "SIGINT");
            return;
        }
    }
}

static int serve(server_config *cfg)
{
    pgrest_ctx *ctx = cfg->ctx;
    const server_options *opts = &cfg->opts;
    const char *port = server_options_get(opts, "server-port");
    const char *pool = server_options_get(opts, "db-pool");
    const char *mode = server_options_get(opts, "server-unix-socket-mode");
    http_listen lc = {
        .host = server_options_get(opts, "server-host"),
        .port = port ? atoi(port) : 3000,
        .unix_socket = server_options_get(opts, "server-unix-socket"),
        .unix_mode = mode ? (unsigned)strtoul(mode, NULL, 8) : 0660,
        .threads = pool ? (unsigned)atoi(pool) : 10,
    };
    /* pgrest's own option: HTTP worker threads (default: one per pool
     * connection, since a worker waits for the database) */
    const char *threads = server_options_get(opts, "server-threads");
    if (threads != NULL)
        lc.threads = (unsigned)atoi(threads);
    if (!limit_options(opts, &lc))
        return 1;
    if (lc.host == NULL)
        lc.host = "!4";
    if (lc.threads < 2)
        lc.threads = 2;
    lc.reuseport = option_true(opts, "server-reuseport");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    /* when the database is down, the library's worker keeps retrying with
     * backoff and requests get 503 PGRST002 meanwhile */
    db_watch_install(ctx);
    load_schema_once(ctx);
    if (db_watch_fatal())
        return 1;
    pgrest_error lerr = {0};
    if (pgrest_ctx_start_listener(ctx, server_config_reload, cfg, &lerr) != PGREST_OK)
        log_msg(LOG_ERROR, "listener: %s", lerr.message ? lerr.message : "");
    if (lc.reuseport && !wait_until_ready(ctx, &set)) {
        pgrest_ctx_stop_listener(ctx);
        return db_watch_fatal() ? 1 : 0;
    }
    char errbuf[256];
    http_server *srv = http_start(ctx, &lc, errbuf, sizeof errbuf);
    if (srv == NULL) {
        fprintf(stderr, "pgrest-server: %s\n", errbuf);
        return 1;
    }
    log_msg(LOG_INFO, "Listening on port %d", http_port(srv));
    admin_server *admin = NULL;
    const char *admin_port = server_options_get(opts, "admin-server-port");
    if (admin_port != NULL) {
        const char *admin_host = server_options_get(opts, "admin-server-host");
        admin = admin_start(ctx, admin_host ? admin_host : lc.host, atoi(admin_port),
                            errbuf, sizeof errbuf);
        if (admin == NULL) {
            fprintf(stderr, "pgrest-server: %s\n", errbuf);
            http_stop(srv);
            return 1;
        }
    }
    wait_signals(&set, cfg);
    /* graceful (PostgREST ref/http_server): stop accepting, let requests in
     * flight finish, then stop the admin server and the workers */
    http_stop(srv);
    admin_stop(admin);
    pgrest_ctx_stop_listener(ctx);
    return db_watch_fatal() ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
        usage();
        return argc > 2 ? 1 : 0;
    }
    if (argc == 2 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
        printf("pgrest %s\n", pgrest_version());
        return 0;
    }
    server_config cfg = {.path = argc == 2 ? argv[1] : NULL, .environ_ = environ};
    char errbuf[256];
    if (!server_config_load(&cfg, errbuf, sizeof errbuf)) {
        fprintf(stderr, "pgrest-server: %s\n", errbuf);
        return 1;
    }
    log_set_level(server_options_get(&cfg.opts, "log-level"));
    const char *log_query_opt = server_options_get(&cfg.opts, "log-query");
    cfg.ctx = pgrest_ctx_new();
    if (cfg.ctx == NULL || apply_options(cfg.ctx, &cfg.opts) != 0) {
        pgrest_ctx_free(cfg.ctx);
        server_config_free(&cfg);
        return 1;
    }
    /* log-query: the SQL of every request the access log shows */
    if (log_query_opt != NULL && strcmp(log_query_opt, "true") == 0)
        pgrest_ctx_set_query_logger(cfg.ctx, log_query, NULL);
    int rc = serve(&cfg);
    pgrest_ctx_free(cfg.ctx);
    server_config_free(&cfg);
    return rc;
}
