#include "admin.h"
#include "version.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct admin_server {
    struct MHD_Daemon *daemon;
    pgrest_ctx *ctx;
};

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

static enum MHD_Result metrics(struct MHD_Connection *con, pgrest_ctx *ctx)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *text = a ? pgrest_ctx_metrics(ctx, a) : NULL;
    enum MHD_Result ret = reply(con, text ? 200 : 500,
                                "text/plain; charset=utf-8", text ? text : "");
    pgrest_arena_free(a);
    return ret;
}

/* /live: the process answers; /ready: the schema cache is loaded (503
 * while it is not, as PostgREST does during recovery). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *con,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)method;
    admin_server *s = cls;
    if (*con_cls == NULL) {
        *con_cls = s;
        return MHD_YES;
    }
    if (strcmp(url, "/live") == 0)
        return reply(con, 200, NULL, "");
    if (strcmp(url, "/ready") == 0)
        return reply(con, pgrest_ctx_ready(s->ctx) ? 200 : 503, NULL, "");
    if (strcmp(url, "/metrics") == 0)
        return metrics(con, s->ctx);
    return reply(con, 404, NULL, "");
}

admin_server *admin_start(pgrest_ctx *ctx, const char *host, int port,
                          char *errbuf, size_t errlen)
{
    admin_server *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->ctx = ctx;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    const char *ip = host == NULL || host[0] == '*' || host[0] == '!' ||
                             strcmp(host, "localhost") == 0
                         ? (host && strcmp(host, "localhost") == 0 ? "127.0.0.1" : "0.0.0.0")
                         : host;
    if (inet_pton(AF_INET, ip, &addr.sin_addr) != 1) {
        snprintf(errbuf, errlen, "admin-server-host must be an IPv4 address: %s", ip);
        free(s);
        return NULL;
    }
    s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (unsigned short)port,
                                 NULL, NULL, on_request, s,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                                 MHD_OPTION_END);
    if (s->daemon == NULL) {
        snprintf(errbuf, errlen, "cannot listen on admin port %d", port);
        free(s);
        return NULL;
    }
    return s;
}

void admin_stop(admin_server *s)
{
    if (s == NULL)
        return;
    MHD_stop_daemon(s->daemon);
    free(s);
}
