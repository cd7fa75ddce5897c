#include "admin.h"
#include "version.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listen_socket.h"
#include "log.h"

struct admin_server {
    struct MHD_Daemon *daemon;
    pgrest_ctx *ctx;
    admin_live_fn live;
    void *live_arg;
    char *unix_path;
    /* draining (admin_set_draining) is read and live is called under the
     * lock: once set, live is never called again */
    pthread_mutex_t lock;
    bool draining;
};

/* The API server is up and not draining. */
static bool api_live(admin_server *s)
{
    pthread_mutex_lock(&s->lock);
    bool up = !s->draining && s->live(s->live_arg);
    pthread_mutex_unlock(&s->lock);
    return up;
}

void admin_set_draining(admin_server *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    s->draining = true;
    pthread_mutex_unlock(&s->lock);
}

static bool is_draining(admin_server *s)
{
    pthread_mutex_lock(&s->lock);
    bool d = s->draining;
    pthread_mutex_unlock(&s->lock);
    return d;
}

static enum MHD_Result reply(struct MHD_Connection *con, unsigned status,
                             const char *content_type, const char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO;
    if (content_type != NULL)
        MHD_add_response_header(r, "Content-Type", content_type);
    /* the admin server runs with the main server's Warp settings (App.hs) */
    MHD_add_response_header(r, "Server", PGRS_SERVER_HEADER);
    enum MHD_Result ret = MHD_queue_response(con, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* /metrics is always 200: Prometheus scrapes a server in any state. */
static enum MHD_Result metrics(struct MHD_Connection *con, pgrest_ctx *ctx)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *text = a ? pgrest_ctx_metrics(ctx, a) : NULL;
    enum MHD_Result ret = reply(con, text ? 200 : 500, "text/plain; charset=utf-8",
                                text ? text : "");
    pgrest_arena_free(a);
    return ret;
}

/* 200 with the schema cache as JSON, or an empty body before one loaded. */
static enum MHD_Result schema_cache(struct MHD_Connection *con, pgrest_ctx *ctx)
{
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return reply(con, 500, NULL, "");
    const char *json = pgrest_ctx_schema_cache_json(ctx, a);
    enum MHD_Result ret = reply(con, 200, NULL, json ? json : "");
    pgrest_arena_free(a);
    return ret;
}

/* PostgREST Admin.hs: pending (schema cache not loaded or no database
 * connection) is 503, an API server that is not up 500, else 200. */
static unsigned ready_status(admin_server *s)
{
    /* draining after SIGTERM: not ready, at once, so that a load balancer
     * checking /ready takes this instance out while it finishes its
     * requests (pgrest's addition: PostgREST closes the admin socket) */
    if (is_draining(s) || !pgrest_ctx_ready(s->ctx) ||
        !pgrest_ctx_connection_established(s->ctx))
        return 503;
    return api_live(s) ? 200 : 500;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    (void)method;
    admin_server *s = cls;
    if (*con_cls == NULL) {
        *con_cls = s;
        return MHD_YES;
    }
    if (*upload_size > 0) {     /* any body is read and ignored */
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/live") == 0)
        return reply(con, api_live(s) ? 200 : 500, NULL, "");
    if (strcmp(url, "/ready") == 0)
        return reply(con, ready_status(s), NULL, "");
    if (strcmp(url, "/schema_cache") == 0)
        return schema_cache(con, s->ctx);
    if (strcmp(url, "/metrics") == 0)
        return metrics(con, s->ctx);
    return reply(con, 404, NULL, "");
}

static void free_admin(admin_server *s)
{
    pthread_mutex_destroy(&s->lock);
    free(s->unix_path);
    free(s);
}

admin_server *admin_start(pgrest_ctx *ctx, const admin_listen *cfg, admin_live_fn live,
                          void *live_arg, char *errbuf, size_t errlen)
{
    admin_server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->ctx = ctx;
    s->live = live;
    s->live_arg = live_arg;
    int fd;
    if (cfg->unix_socket != NULL) {
        s->unix_path = strdup(cfg->unix_socket);
        fd = listen_unix(cfg->unix_socket, cfg->unix_mode, errbuf, errlen);
    } else
        fd = listen_tcp(cfg->host, cfg->port, false, errbuf, errlen);
    if (fd < 0) {
        free_admin(s);
        return NULL;
    }
    char address[256];
    socket_address(fd, address, sizeof address);
    s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                 on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                                 MHD_OPTION_END);
    if (s->daemon == NULL) {
        snprintf(errbuf, errlen, "cannot start the admin server");
        close(fd);
        free_admin(s);
        return NULL;
    }
    log_msg(LOG_CRIT, "Admin server listening on %s", address);
    return s;
}

void admin_stop(admin_server *s)
{
    if (s == NULL)
        return;
    MHD_stop_daemon(s->daemon);
    if (s->unix_path != NULL)
        unlink(s->unix_path);
    free_admin(s);
}
