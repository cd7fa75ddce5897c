/* Listening sockets as PostgREST binds them (App.hs initSocket, Unix.hs,
 * Network.hs): TCP on a host preference (server-host, admin-server-host)
 * or a Unix domain socket with a file mode. */
#ifndef PGRS_LISTEN_SOCKET_H
#define PGRS_LISTEN_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Binds and listens on host:port. host follows streaming-commons'
 * HostPreference: "*" any address (IPv6 first, dual stack), "*4" IPv4
 * preferred, "!4" IPv4 only, "*6" IPv6 preferred (dual stack), "!6" IPv6
 * only; anything else is a name or address literal ("::1", "localhost").
 * reuseport sets SO_REUSEPORT (server-reuseport); failing that is an error.
 * Returns the fd, or -1 with a message in errbuf. */
int listen_tcp(const char *host, int port, bool reuseport, char *errbuf, size_t errlen);

/* Binds a Unix domain socket at path (an existing file there is removed
 * first) and sets its mode. Returns the fd, or -1 with a message. */
int listen_unix(const char *path, unsigned mode, char *errbuf, size_t errlen);

/* The bound address as PostgREST prints it (Network.resolveSocketToAddress):
 * "127.0.0.1:3000", "[::1]:3000" or the socket path. */
void socket_address(int fd, char *buf, size_t len);

/* The port a TCP socket is bound to, -1 for other sockets. */
int socket_port(int fd);

/* A client address as wai-logger shows it in access logs: IPv4 dotted,
 * IPv4-mapped IPv6 as IPv4, "::1", other IPv6 as eight uncompressed hex
 * groups, "-" otherwise (a Unix socket peer: wai-logger's showSockAddr). */
void peer_address(const struct sockaddr *sa, char *buf, size_t len);

#endif
