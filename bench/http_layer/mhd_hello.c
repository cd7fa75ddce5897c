/* The HTTP layer alone, as pgrest-server drives it: one libmicrohttpd
 * daemon in external-epoll mode (MHD_USE_EPOLL, its epoll fd waited on by
 * this thread, MHD_run on each wake-up) with the server's default
 * per-connection memory limit, answering every request with the same small
 * JSON body. bench/http_layer.sh compares it with h2o_hello.c.
 * With "suspend", every request is suspended and resumed on the loop's next
 * turn before it is answered, as the server does while PostgreSQL works.
 *
 *   mhd_hello PORT [suspend] */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "hello_body.h"

enum { MAX_SUSPENDED = 4096 };
static struct MHD_Connection *suspended[MAX_SUSPENDED];
static size_t n_suspended;
static int use_suspend;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **state)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload_data;
    if (*state == NULL) { /* the headers are in; answer on the next call */
        *state = con;
        return MHD_YES;
    }
    *upload_size = 0;
    if (use_suspend && *state == con && n_suspended < MAX_SUSPENDED) {
        *state = (void *)1; /* answered once resumed */
        suspended[n_suspended++] = con;
        MHD_suspend_connection(con);
        return MHD_YES;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(
        strlen(HELLO_BODY), (void *)HELLO_BODY, MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", HELLO_CONTENT_TYPE);
    enum MHD_Result ok = MHD_queue_response(con, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: mhd_hello PORT [suspend]\n");
        return 2;
    }
    use_suspend = argc == 3 && strcmp(argv[2], "suspend") == 0;
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)atoi(argv[1]), NULL, NULL, on_request, NULL,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(2 * (8192 + 8192) + 16384),
        MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (info == NULL) {
        fprintf(stderr, "mhd_hello: cannot start\n");
        return 1;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, info->epoll_fd, &ev) != 0)
        return 1;
    size_t resumed = 0; /* MHD answers them on its next run: no waiting */
    for (;;) {
        MHD_UNSIGNED_LONG_LONG ms;
        int timeout = MHD_get_timeout(d, &ms) == MHD_YES ? (ms > 1000 ? 1000 : (int)ms) : 1000;
        struct epoll_event out;
        epoll_wait(ep, &out, 1, resumed || n_suspended ? 0 : timeout);
        MHD_run(d);
        resumed = n_suspended;
        n_suspended = 0;
        for (size_t i = 0; i < resumed; i++)
            MHD_resume_connection(suspended[i]);
    }
}
