/* server-reuseport (PostgREST App.hs bindPortTCPWithReusePort): several
 * processes share one TCP port, so a replacement can start before the old
 * process stops. The kernel spreads new connections over the group's
 * listening sockets; a socket that simply closes resets the connections
 * already queued on it. The handover here avoids that: the leaving
 * process steers new connections to another member of the group (a
 * classic BPF reuseport program), serves what is already queued on its
 * socket, and only then closes it. */
#ifndef PGRS_REUSEPORT_H
#define PGRS_REUSEPORT_H

#include <stdbool.h>
#include <sys/socket.h>

/* Sets SO_REUSEPORT on a socket before bind; false when unsupported. */
bool reuseport_enable(int fd);

/* Receives a connection accepted from the leaving socket (ownership
 * passes to it). */
typedef void (*reuseport_take_fn)(void *arg, int fd, const struct sockaddr *addr,
                                  socklen_t addrlen);

/* Hands over listen_fd (no longer polled by the HTTP server): new
 * connections go to another process of the group, queued ones are
 * accepted and given to take until none arrives for a short while; then
 * the steering is removed so the remaining processes share the port
 * evenly again. The caller closes listen_fd afterwards. Best effort: a
 * kernel without reuseport BPF gets a plain close. */
void reuseport_handover(int listen_fd, reuseport_take_fn take, void *arg);

#endif
