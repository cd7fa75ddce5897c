#include "ready.h"
#include "ready_url.h"

#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READY_TIMEOUT_MS 10000

/* Network.hs isSpecialHostName */
static bool special_host(const char *h)
{
    static const char *const names[] = {"*", "*4", "!4", "*6", "!6"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(h, names[i]) == 0)
            return true;
    return false;
}

static int fail(const char *fmt, const char *arg)
{
    fputs("ERROR: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fflush(stderr);
    return 1;
}

static int connect_to(const char *host, const char *port)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static bool wait_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, READY_TIMEOUT_MS) == 1;
}

/* The status code of the response, or -1 when the exchange failed. */
static int get_status(int fd, const ready_url *u)
{
    char req[3 * READY_URL_MAX + 64];
    int n = snprintf(req, sizeof req,
                     "GET %s%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
                     u->path, u->query, u->host);
    if (n < 0 || (size_t)n >= sizeof req || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
        return -1;
    char buf[64];
    size_t got = 0;
    while (got < sizeof buf - 1 && memchr(buf, '\n', got) == NULL && wait_readable(fd)) {
        ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    int status;
    if (sscanf(buf, "HTTP/%*d.%*d %3d", &status) != 1)
        return -1;
    return status;
}

/* httpLbs: the status, or -1 for any HttpExceptionRequest (refused,
 * unresolvable host, no answer). http-client connects to the host
 * without the IPv6 brackets, and the port goes to the socket as a
 * 16-bit PortNumber (fromIntegral). */
static int request(const ready_url *u)
{
    char host[READY_URL_MAX], port[16];
    size_t len = strlen(u->host);
    if (len >= 2 && u->host[0] == '[') {
        memcpy(host, u->host + 1, len - 2);
        host[len - 2] = '\0';
    } else {
        memcpy(host, u->host, len + 1);
    }
    snprintf(port, sizeof port, "%u", (unsigned)(u->port & 0xffff));
    int fd = connect_to(host, port);
    if (fd < 0)
        return -1;
    int status = get_status(fd, u);
    close(fd);
    return status;
}

/* makeReadyUrl: "http://" host (IPv6 in brackets) ":" port "/ready" */
static void make_ready_url(const char *host, const char *port, char *url, size_t cap)
{
    snprintf(url, cap, strchr(host, ':') ? "http://[%s]:%s/ready" : "http://%s:%s/ready",
             host, port);
}

int ready_check(const pgrest_config_sources *cfg)
{
    /* the resolved port is in decimal, present only when configured */
    const char *port = pgrest_config_sources_get(cfg, "admin-server-port");
    if (port == NULL)
        return fail("Admin server is not running. Please check admin-server-port config.%s",
                    "");
    const char *host = pgrest_config_sources_get(cfg, "admin-server-host");
    if (host == NULL)
        host = "!4";
    if (special_host(host)) {
        char msg[512];
        snprintf(msg, sizeof msg,
                 "The `--ready` flag cannot be used when server-host is configured as \"%s\". "
                 "Please update your server-host config to \"localhost\".", host);
        return fail("%s", msg);
    }
    char url[READY_URL_MAX], escaped[READY_URL_MAX], shown[3 * READY_URL_MAX];
    ready_url u;
    make_ready_url(host, port, url, sizeof url);
    /* Client.hs handleHttpException InvalidUrlException: parseURI's
     * failure reports the text as given, setUri's bad port the URI */
    switch (ready_url_parse(url, escaped, &u)) {
    case READY_URL_UNPARSABLE:
        return fail("invalid url - %s", url);
    case READY_URL_BAD_PORT:
        return fail("invalid url - %s", escaped);
    case READY_URL_OK:
        break;
    }
    int status = request(&u);
    if (status < 0) {
        /* HttpExceptionRequest: show (getUri req), not the URL built */
        ready_url_show(&u, shown, sizeof shown);
        return fail("connection refused to %s", shown);
    }
    if (status < 200 || status >= 300)
        return fail("%s", url);
    printf("OK: %s\n", url);
    fflush(stdout);
    return 0;
}
