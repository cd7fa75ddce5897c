#include "listen_socket.h"
#include "reuseport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* PostgREST's listen backlog: max 2048 SOMAXCONN. */
#define BACKLOG 2048

typedef enum host_pref { HOST_ANY, HOST_V4, HOST_V4_ONLY, HOST_V6, HOST_V6_ONLY, HOST_NAME } host_pref;

static host_pref host_preference(const char *host)
{
    if (host == NULL || strcmp(host, "!4") == 0)
        return HOST_V4_ONLY;
    if (strcmp(host, "*") == 0)
        return HOST_ANY;
    if (strcmp(host, "*4") == 0)
        return HOST_V4;
    if (strcmp(host, "*6") == 0)
        return HOST_V6;
    if (strcmp(host, "!6") == 0)
        return HOST_V6_ONLY;
    return HOST_NAME;
}

/* Whether an address takes part, and in which round (streaming-commons
 * bindPortGenEx: preferred family first, "only" drops the other; otherwise
 * an IPv6 address first, whose socket also takes IPv4 when it is the
 * wildcard). */
static bool in_round(host_pref pref, int family, int round)
{
    bool v6 = family == AF_INET6;
    switch (pref) {
    case HOST_V4:      return round == 0 ? !v6 : v6;
    case HOST_V4_ONLY: return round == 0 && !v6;
    case HOST_V6_ONLY: return round == 0 && v6;
    default:           return round == 0 ? v6 : !v6;
    }
}

static int bind_one(const struct addrinfo *ai, bool v6only, bool reuseport)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1, v6 = v6only ? 1 : 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* PostgREST: server-reuseport on a system without SO_REUSEPORT is a
     * configuration error, not a silent fallback */
    if (reuseport && !reuseport_enable(fd)) {
        close(fd);
        errno = ENOPROTOOPT;
        return -1;
    }
    if (ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6, sizeof v6);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, BACKLOG) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int listen_tcp(const char *host, int port, bool reuseport, char *errbuf, size_t errlen)
{
    host_pref pref = host_preference(host);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int rc = getaddrinfo(pref == HOST_NAME ? host : NULL, portstr, &hints, &res);
    if (rc != 0) {
        snprintf(errbuf, errlen, "cannot resolve host %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = EADDRNOTAVAIL;
    for (int round = 0; round < 2 && fd < 0; round++)
        for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
            if (in_round(pref, ai->ai_family, round)) {
                fd = bind_one(ai, pref == HOST_V6_ONLY, reuseport);
                err = fd < 0 ? errno : err;
            }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(errbuf, errlen, "cannot listen on %s port %d: %s",
                 host ? host : "!4", port, strerror(err));
    return fd;
}

int listen_unix(const char *path, unsigned mode, char *errbuf, size_t errlen)
{
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sun.sun_path) {
        snprintf(errbuf, errlen, "unix socket path too long: %s", path);
        return -1;
    }
    memcpy(sun.sun_path, path, strlen(path) + 1);
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0 ||
        listen(fd, BACKLOG) != 0 || chmod(path, (mode_t)mode) != 0) {
        snprintf(errbuf, errlen, "cannot listen on %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

void socket_address(int fd, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "";
    snprintf(buf, len, "?");
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        snprintf(buf, len, "%s:%d", ip, ntohs(in->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        snprintf(buf, len, "[%s]:%d", ip, ntohs(in6->sin6_port));
    } else if (ss.ss_family == AF_UNIX) {
        snprintf(buf, len, "%s", ((const struct sockaddr_un *)&ss)->sun_path);
    }
}

int socket_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

/* wai-logger showIPv6: the eight groups in lower-case hex, uncompressed
 * (only the loopback is written "::1"). */
static void show_ipv6(const struct in6_addr *a6, char *buf, size_t len)
{
    static const unsigned char loopback[16] = {[15] = 1};
    if (memcmp(a6->s6_addr, loopback, 16) == 0) {
        snprintf(buf, len, "::1");
        return;
    }
    const unsigned char *b = a6->s6_addr;
    snprintf(buf, len, "%x:%x:%x:%x:%x:%x:%x:%x", b[0] << 8 | b[1], b[2] << 8 | b[3],
             b[4] << 8 | b[5], b[6] << 8 | b[7], b[8] << 8 | b[9], b[10] << 8 | b[11],
             b[12] << 8 | b[13], b[14] << 8 | b[15]);
}

void peer_address(const struct sockaddr *sa, char *buf, size_t len)
{
    /* wai-logger's showSockAddr since "Make unix sockets known" (2022):
     * a SockAddrUnix peer is "-" (was "unknownSocket") */
    snprintf(buf, len, "-");
    if (sa == NULL)
        return;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf,
                  (socklen_t)len);
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6))
            inet_ntop(AF_INET, &a6->s6_addr[12], buf, (socklen_t)len);
        else
            show_ipv6(a6, buf, len);
    }
}
