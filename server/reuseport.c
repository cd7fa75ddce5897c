#include "reuseport.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Members of one group this handover looks for (the group's own limit is
 * far higher; more than a handful of processes per port is unusual). */
#define MAX_PROBED_MEMBERS 16
/* The queue counts as drained after this long without a new connection:
 * enough for handshakes begun before the steering to complete. */
#define QUIET_MS 200
#define DRAIN_MAX_MS 5000

bool reuseport_enable(int fd)
{
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) == 0;
}

/* Every new connection of the group goes to the member at index. */
static bool steer_to(int fd, unsigned index)
{
    struct sock_filter code[] = {{BPF_RET | BPF_K, 0, 0, index}};
    struct sock_fprog prog = {.len = 1, .filter = code};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
                      sizeof prog) == 0;
}

static void unsteer(int fd)
{
    int zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &zero, sizeof zero);
}

/* Where a probe connects: the socket's own address, loopback for a
 * wildcard one. */
static socklen_t probe_address(int fd, struct sockaddr_storage *ss)
{
    socklen_t len = sizeof *ss;
    if (getsockname(fd, (struct sockaddr *)ss, &len) != 0)
        return 0;
    if (ss->ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        if (in->sin_addr.s_addr == htonl(INADDR_ANY))
            in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else if (ss->ss_family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        if (memcmp(&in6->sin6_addr, &in6addr_any, sizeof in6addr_any) == 0)
            in6->sin6_addr = in6addr_loopback;
    } else
        return 0;
    return len;
}

static bool same_port(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_port ==
               ((const struct sockaddr_in *)b)->sin_port;
    return ((const struct sockaddr_in6 *)a)->sin6_port ==
           ((const struct sockaddr_in6 *)b)->sin6_port;
}

/* Accepts what is queued on fd; true when the probe (peer = probe_local)
 * was among it. Other connections go to take. */
static bool accept_queued(int fd, const struct sockaddr_storage *probe_local,
                          reuseport_take_fn take, void *arg)
{
    bool probe_seen = false;
    for (;;) {
        struct sockaddr_storage peer;
        socklen_t len = sizeof peer;
        int c = accept4(fd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
            return probe_seen;
        if (probe_local != NULL && same_port(&peer, probe_local)) {
            probe_seen = true;
            close(c);
        } else
            take(arg, c, (struct sockaddr *)&peer, len);
    }
}

/* Connects to the group while it is steered to one index and tells
 * whether the connection arrived on fd. Loopback handshakes complete
 * inside connect(), so the connection is queued when it returns. */
static bool probe_lands_here(int fd, const struct sockaddr_storage *to, socklen_t tolen,
                             reuseport_take_fn take, void *arg)
{
    int p = socket(to->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p < 0)
        return false;
    struct sockaddr_storage local;
    socklen_t llen = sizeof local;
    bool here = false;
    if (connect(p, (const struct sockaddr *)to, tolen) == 0 &&
        getsockname(p, (struct sockaddr *)&local, &llen) == 0)
        here = accept_queued(fd, &local, take, arg);
    close(p);
    return here;
}

/* This socket's index in its reuseport group, or -1. */
static int own_index(int fd, reuseport_take_fn take, void *arg)
{
    struct sockaddr_storage to;
    socklen_t tolen = probe_address(fd, &to);
    if (tolen == 0)
        return -1;
    for (unsigned i = 0; i < MAX_PROBED_MEMBERS; i++) {
        if (!steer_to(fd, i))
            return -1;
        if (probe_lands_here(fd, &to, tolen, take, arg))
            return (int)i;
    }
    return -1;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Serves the queue until it stays empty for QUIET_MS. */
static void drain(int fd, reuseport_take_fn take, void *arg)
{
    long start = now_ms(), last = start;
    while (now_ms() - last < QUIET_MS && now_ms() - start < DRAIN_MAX_MS) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 20) > 0) {
            accept_queued(fd, NULL, take, arg);
            last = now_ms();
        }
    }
}

/* Steered away from this socket, does a probe still land here? Then no
 * other process shares the port (the index is past the group's end and
 * the kernel falls back to its hash over this one socket). */
static bool alone(int fd, reuseport_take_fn take, void *arg)
{
    struct sockaddr_storage to;
    socklen_t tolen = probe_address(fd, &to);
    return tolen == 0 || probe_lands_here(fd, &to, tolen, take, arg);
}

void reuseport_handover(int listen_fd, reuseport_take_fn take, void *arg)
{
    int fl = fcntl(listen_fd, F_GETFL);
    if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return;
    int k = own_index(listen_fd, take, arg);
    if (k < 0 || !steer_to(listen_fd, k == 0 ? 1u : 0u) ||
        alone(listen_fd, take, arg)) {
        unsteer(listen_fd);
        accept_queued(listen_fd, NULL, take, arg);
        return;
    }
    drain(listen_fd, take, arg);
    unsteer(listen_fd);
    accept_queued(listen_fd, NULL, take, arg);
}
