/* The HTTP layer alone on Debian's libh2o-evloop (h2o 2.2.5): one evloop
 * thread, HTTP/1.1, answering every request with the same small JSON body
 * as mhd_hello.c. bench/http_layer.sh compares the two. With "defer", every
 * request is answered on the loop's next turn (a zero timeout), as an
 * engine would once PostgreSQL has answered.
 *
 *   h2o_hello PORT [defer] */
#include <arpa/inet.h>
#include <h2o.h>
#include <h2o/http1.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hello_body.h"

static h2o_globalconf_t config;
static h2o_context_t ctx;
static h2o_accept_ctx_t accept_ctx;
static h2o_timeout_t next_turn;
static int use_defer;

typedef struct {
    h2o_timeout_entry_t entry; /* first: the callback gets its address */
    h2o_req_t *req;
} deferred_answer;

static void answer(h2o_req_t *req)
{
    static h2o_generator_t generator = {NULL, NULL};
    req->res.status = 200;
    req->res.reason = "OK";
    req->res.content_length = strlen(HELLO_BODY);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                   H2O_STRLIT(HELLO_CONTENT_TYPE));
    h2o_start_response(req, &generator);
    h2o_iovec_t body = h2o_strdup(&req->pool, HELLO_BODY, SIZE_MAX);
    h2o_send(req, &body, 1, H2O_SEND_STATE_FINAL);
}

static void on_next_turn(h2o_timeout_entry_t *entry)
{
    answer(((deferred_answer *)entry)->req);
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    (void)self;
    if (!use_defer) {
        answer(req);
        return 0;
    }
    deferred_answer *d = h2o_mem_alloc_pool(&req->pool, sizeof *d);
    *d = (deferred_answer){.entry = {.cb = on_next_turn}, .req = req};
    h2o_timeout_link(ctx.loop, &next_turn, &d->entry);
    return 0;
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    h2o_socket_t *sock;
    if (err != NULL || (sock = h2o_evloop_socket_accept(listener)) == NULL)
        return;
    h2o_accept(&accept_ctx, sock);
}

static int listen_on(int port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, SOMAXCONN) != 0)
        return -1;
    h2o_socket_t *sock = h2o_evloop_socket_create(ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    h2o_socket_read_start(sock, on_accept);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: h2o_hello PORT [defer]\n");
        return 2;
    }
    use_defer = argc == 3 && strcmp(argv[2], "defer") == 0;
    h2o_config_init(&config);
    h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    h2o_handler_t *handler = h2o_create_handler(path, sizeof *handler);
    handler->on_req = on_req;
    h2o_context_init(&ctx, h2o_evloop_create(), &config);
    h2o_timeout_init(ctx.loop, &next_turn, 0);
    accept_ctx.ctx = &ctx;
    accept_ctx.hosts = config.hosts;
    if (listen_on(atoi(argv[1])) != 0) {
        perror("h2o_hello: listen");
        return 1;
    }
    while (h2o_evloop_run(ctx.loop, INT32_MAX) == 0)
        ;
    return 0;
}
