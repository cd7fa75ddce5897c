/* pgrest-server: a drop-in for the PostgREST executable, built only on
 * libpgrest's public API. Command line: see cli.h (PostgREST's CLI.hs). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "cli.h"
#include "commands.h"
#include "config_load.h"
#include "conn_string.h"
#include "db_watch.h"
#include "http.h"
#include "log.h"
#include "ready.h"
#include "reload.h"
#include "version.h"
#include "pgrest/pgrest.h"

extern char **environ;

static int apply_options(pgrest_ctx *ctx, const pgrest_config_sources *opts)
{
    const char *key, *value;
    for (size_t i = 0; pgrest_config_sources_option(opts, i, &key, &value); i++) {
        pgrest_error err = {0};
        /* PostgREST ignores keys it does not know */
        if (!pgrest_config_key_known(key))
            continue;
        /* what the library connects with (Config.hs toConnectionSettings);
         * a reload keeps the running db-uri */
        bool connects = strcmp(key, "db-uri") == 0 || strcmp(key, "db-channel-uri") == 0;
        char *uri = connects ? conn_string_with_app_name(value) : NULL;
        int rc = pgrest_ctx_set(ctx, key, uri ? uri : value, &err);
        free(uri);
        if (rc != PGREST_OK) {
            fprintf(stderr, "pgrest-server: %s\n", err.message ? err.message : "invalid configuration");
            return -1;
        }
    }
    return 0;
}

/* Success and failure are logged by the library's observations. */
static int load_schema_once(pgrest_ctx *ctx)
{
    pgrest_error err = {0};
    return pgrest_ctx_load_schema(ctx, &err) == PGREST_OK ? 0 : -1;
}

/* A numeric server-* option in [min, max], or def when unset. Invalid
 * values stop the server at startup (like PostgREST's config errors). */
static bool option_number(const pgrest_config_sources *opts, const char *key,
                          unsigned long long def, unsigned long long min,
                          unsigned long long max, unsigned long long *out)
{
    const char *v = pgrest_config_sources_get(opts, key);
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
 * pgr_parse_limits); a 48 KiB URL and 16 KiB of headers: Warp, under
 * PostgREST, takes 50 KiB of request line and headers together, and clients
 * put long id lists in the URL (postgrest-js .in()); 30 s idle timeout
 * (Warp's slowloris timeout, which PostgREST uses), 1024 connections.
 * The URL limit sizes libmicrohttpd's per-connection pool, which it zeroes
 * after every request: 8 KiB -> 48 KiB cost ~1.6 µs per request
 * (bench/README.md). */
static bool limit_options(const pgrest_config_sources *opts, http_listen *lc)
{
    unsigned long long body, streamed, max_streamed, url, hdr, timeout, conns, per_ip;
    if (!option_number(opts, "server-max-body-size", 10ULL << 20, 1, 1ULL << 40, &body) ||
        !option_number(opts, "server-streamed-body-threshold", 1ULL << 20, 0, 1ULL << 40,
                       &streamed) ||
        !option_number(opts, "server-max-streamed-body-size", 0, 0, 1ULL << 50, &max_streamed) ||
        !option_number(opts, "server-max-url-size", 49152, 256, 1 << 20, &url) ||
        !option_number(opts, "server-max-header-size", 16384, 1024, 1 << 20, &hdr) ||
        !option_number(opts, "server-timeout", 30, 1, 86400, &timeout) ||
        !option_number(opts, "server-max-connections", 1024, 1, 1000000, &conns) ||
        !option_number(opts, "server-max-connections-per-ip", 0, 0, 1000000, &per_ip))
        return false;
    lc->max_body_size = (size_t)body;
    lc->streamed_body_threshold = (size_t)streamed;
    lc->max_streamed_body_size = (size_t)max_streamed;
    lc->max_url_size = (size_t)url;
    lc->max_header_size = (size_t)hdr;
    lc->timeout = (unsigned)timeout;
    lc->max_connections = (unsigned)conns;
    lc->max_connections_per_ip = (unsigned)per_ip;
    return true;
}

static bool option_true(const pgrest_config_sources *opts, const char *key)
{
    const char *v = pgrest_config_sources_get(opts, key);
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
                log_msg(LOG_CRIT, "Received termination unix signal %s",
                        sig == SIGTERM ? "SIGTERM" : "SIGINT");
            return;
        }
    }
}

/* The API server the admin server checks for /live and /ready; set once
 * it is listening, cleared before it stops. */
static _Atomic(http_server *) api_server;

static bool api_live(void *arg)
{
    (void)arg;
    return http_is_live(atomic_load(&api_server));
}

/* A socket mode: the library resolved and checked it (parseSocketFileMode)
 * and gives it in octal. */
static unsigned socket_mode(const pgrest_config_sources *opts, const char *key)
{
    const char *text = pgrest_config_sources_get(opts, key);
    return text != NULL ? (unsigned)strtoul(text, NULL, 8) : 0660;
}

/* A port: the library resolved it to a decimal number (0: unset). */
static int port_number(const pgrest_config_sources *opts, const char *key)
{
    long long n = 0;
    const char *text = pgrest_config_sources_get(opts, key);
    return text != NULL && pgrest_config_read_int(text, &n) ? (int)n : 0;
}

/* admin-server-unix-socket, else admin-server-port on admin-server-host
 * (default: server-host); *enabled is false without either. */
static void admin_options(const pgrest_config_sources *opts, const http_listen *lc,
                          admin_listen *al, bool *enabled)
{
    const char *host = pgrest_config_sources_get(opts, "admin-server-host");
    al->unix_socket = pgrest_config_sources_get(opts, "admin-server-unix-socket");
    al->host = host ? host : lc->host;
    /* the library refused a port equal to server-port (parseAdminServerPort) */
    al->port = port_number(opts, "admin-server-port");
    *enabled = al->unix_socket != NULL || pgrest_config_sources_get(opts, "admin-server-port");
    al->unix_mode = socket_mode(opts, "admin-server-unix-socket-mode");
}

/* Logger.hs DeprecatedJSPathSyntaxObs: logged at every level, by App.run
 * right after AppState.init logged AppStartObs. */
static void warn_deprecations(const pgrest_config_sources *opts)
{
    char *line1, *line2;
    if (pgrest_config_role_claim_deprecation(pgrest_config_sources_get(opts, "jwt-role-claim-key"),
                                             &line1, &line2) != 1)
        return;
    log_msg(LOG_CRIT, "%s", line1);
    log_msg(LOG_CRIT, "%s", line2);
    free(line1);
    free(line2);
}

static int serve(server_config *cfg)
{
    pgrest_ctx *ctx = cfg->ctx;
    const pgrest_config_sources *opts = cfg->sources;
    http_listen lc = {
        .host = pgrest_config_sources_get(opts, "server-host"),
        .port = port_number(opts, "server-port"),
        .unix_socket = pgrest_config_sources_get(opts, "server-unix-socket"),
        .unix_mode = socket_mode(opts, "server-unix-socket-mode"),
    };
    /* Event loops (HTTP and PostgreSQL sockets together), one per core by
     * default: no thread waits for the database, so the pool size does not
     * matter here. pgrest's own option server-threads sets their number. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long long threads;
    if (!option_number(opts, "server-threads", cores > 0 ? (unsigned long long)cores : 2, 1,
                       1024, &threads) ||
        !limit_options(opts, &lc))
        return 1;
    lc.threads = (unsigned)threads;
    if (lc.host == NULL)
        lc.host = "!4";
    if (lc.threads < 2)
        lc.threads = 2;
    lc.reuseport = option_true(opts, "server-reuseport");
    lc.cancel_on_disconnect = option_true(opts, "server-cancel-on-disconnect");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    char errbuf[256];
    /* PostgREST App.run: the admin server first (it answers /live 500 and
     * /ready 503 while the rest starts), then the schema cache and the
     * listener, then the API socket */
    admin_server *admin = NULL;
    admin_listen al;
    bool with_admin;
    admin_options(opts, &lc, &al, &with_admin);
    /* PostgREST AppStartObs, once the configuration is known to be valid */
    log_msg(LOG_CRIT, "Starting PostgREST %s...", PGRS_PRETTY_VERSION);
    warn_deprecations(opts);
    if (with_admin) {
        admin = admin_start(ctx, &al, api_live, NULL, errbuf, sizeof errbuf);
        if (admin == NULL) {
            fprintf(stderr, "pgrest-server: %s\n", errbuf);
            return 1;
        }
    }
    /* when the database is down, the library's worker keeps retrying with
     * backoff and requests get 503 PGRST002 meanwhile */
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
    http_server *srv = http_start(ctx, &lc, errbuf, sizeof errbuf);
    if (srv == NULL) {
        fprintf(stderr, "pgrest-server: %s\n", errbuf);
        admin_stop(admin);
        pgrest_ctx_stop_listener(ctx);
        return 1;
    }
    char address[256];
    http_address(srv, address, sizeof address);
    atomic_store(&api_server, srv);
    log_msg(LOG_CRIT, "API server listening on %s", address);
    wait_signals(&set, cfg);
    /* graceful (PostgREST ref/http_server): stop accepting, let requests in
     * flight finish, close idle keep-alive connections, stop the workers.
     * PostgREST closes the admin socket with the API socket; pgrest keeps
     * it open through the drain with /ready 503 (docs/deployment.md), so a
     * load balancer sees "not ready" rather than a refused check, and
     * closes it last. */
    admin_set_draining(admin);
    atomic_store(&api_server, NULL);
    http_stop(srv);
    pgrest_ctx_stop_listener(ctx);
    admin_stop(admin);
    return db_watch_fatal() ? 1 : 0;
}


static int run(server_config *cfg)
{
    log_set_level(pgrest_config_sources_get(cfg->sources, "log-level"));
    /* log-query: the SQL of every request the access log shows; the
     * logger stays installed so that a reload can turn it on */
    log_set_query(pgrest_config_sources_get(cfg->sources, "log-query"));
    pgrest_ctx_set_query_logger(cfg->ctx, log_query, NULL);
    return serve(cfg);
}

static int run_command(const cli_args *args, server_config *cfg)
{
    switch (args->command) {
    case CLI_READY:
        return ready_check(cfg->sources);
    case CLI_DUMP_CONFIG:
        return command_dump_config(cfg, args->prog);
    case CLI_DUMP_SCHEMA:
        return command_dump_schema(cfg, args->prog);
    case CLI_RUN:
        break;
    }
    return run(cfg);
}

int main(int argc, char **argv)
{
    cli_args args;
    int rc = cli_parse(argc, argv, &args);
    if (rc >= 0)
        return rc;
    server_config cfg = {.path = args.config_path, .environ_ = environ};
    char errbuf[2048];
    if (!server_config_load(&cfg, errbuf, sizeof errbuf)) {
        config_fatal(args.prog, errbuf);
        return 1;
    }
    cfg.ctx = pgrest_ctx_new();
    if (cfg.ctx != NULL)
        db_watch_install(cfg.ctx);
    if (cfg.ctx == NULL || apply_options(cfg.ctx, cfg.sources) != 0)
        rc = 1;
    else
        rc = run_command(&args, &cfg);
    pgrest_ctx_free(cfg.ctx);
    server_config_free(&cfg);
    return rc;
}
