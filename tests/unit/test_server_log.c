/* The reference server's logging and listening helpers, against
 * PostgREST's Logger.hs (shouldLogResponse, coerceBool for log-query),
 * wai-logger's showSockAddr and Network.hs's address rendering. */
#include <check.h>

#include "check_run.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listen_socket.h"
#include "log.h"

START_TEST(response_logging_per_level)
{
    /* Logger.shouldLogResponse */
    static const struct {
        const char *level;
        int s200, s404, s500;
    } cases[] = {
        {"crit", 0, 0, 0}, {"error", 0, 0, 1}, {"warn", 0, 1, 1},
        {"info", 1, 1, 1}, {"debug", 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        log_set_level(cases[i].level);
        ck_assert_int_eq(!!log_enabled_for_status(200), cases[i].s200);
        ck_assert_int_eq(!!log_enabled_for_status(404), cases[i].s404);
        ck_assert_int_eq(!!log_enabled_for_status(500), cases[i].s500);
    }
    log_set_level("nonsense");   /* unknown names keep the level */
    ck_assert(log_enabled(LOG_DEBUG));
    log_set_level("error");
}
END_TEST

START_TEST(peer_addresses_as_wai_logger)
{
    char buf[64];
    struct sockaddr_in in = {.sin_family = AF_INET};
    inet_pton(AF_INET, "10.1.2.3", &in.sin_addr);
    peer_address((struct sockaddr *)&in, buf, sizeof buf);
    ck_assert_str_eq(buf, "10.1.2.3");
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr);
    peer_address((struct sockaddr *)&in6, buf, sizeof buf);
    ck_assert_str_eq(buf, "127.0.0.1");
    inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
    peer_address((struct sockaddr *)&in6, buf, sizeof buf);
    ck_assert_str_eq(buf, "2001:db8:0:0:0:0:0:1");
    inet_pton(AF_INET6, "::1", &in6.sin6_addr);
    peer_address((struct sockaddr *)&in6, buf, sizeof buf);
    ck_assert_str_eq(buf, "::1");
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    peer_address((struct sockaddr *)&un, buf, sizeof buf);
    ck_assert_str_eq(buf, "-");
}
END_TEST

static void expect_address(const char *host, const char *prefix)
{
    char err[256], addr[128], want[128];
    int fd = listen_tcp(host, 0, false, err, sizeof err);
    ck_assert_msg(fd >= 0, "%s: %s", host, err);
    snprintf(want, sizeof want, "%s%d", prefix, socket_port(fd));
    socket_address(fd, addr, sizeof addr);
    ck_assert_str_eq(addr, want);
    close(fd);
}

START_TEST(host_preferences_and_addresses)
{
    /* Network.resolveSocketToAddress: "127.0.0.1:80", "[::1]:80" */
    expect_address("127.0.0.1", "127.0.0.1:");
    expect_address("::1", "[::1]:");
    expect_address("!4", "0.0.0.0:");
    expect_address("*4", "0.0.0.0:");
    expect_address("*6", "[::]:");
    expect_address("*", "[::]:");
    expect_address("!6", "[::]:");
    expect_address(NULL, "0.0.0.0:");    /* PostgREST's default server-host "!4" */
    char err[256];
    ck_assert_int_lt(listen_tcp("no.such.host.invalid", 0, false, err, sizeof err), 0);
    ck_assert_int_lt(listen_tcp("256.1.1.1", 0, false, err, sizeof err), 0);
}
END_TEST

START_TEST(unix_socket_mode_and_address)
{
    char dir[] = "/tmp/pgrest-unit-XXXXXX", path[128], err[256], addr[160];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.sock", dir);
    FILE *f = fopen(path, "w");  /* an existing file is replaced (Unix.hs) */
    ck_assert_ptr_nonnull(f);
    fclose(f);
    int fd = listen_unix(path, 0600, err, sizeof err);
    ck_assert_msg(fd >= 0, "%s", err);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISSOCK(st.st_mode));
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    socket_address(fd, addr, sizeof addr);
    ck_assert_str_eq(addr, path);
    ck_assert_int_eq(socket_port(fd), -1);
    close(fd);
    unlink(path);
    rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("server_log");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, response_logging_per_level);
    tcase_add_test(tc, peer_addresses_as_wai_logger);
    tcase_add_test(tc, host_preferences_and_addresses);
    tcase_add_test(tc, unix_socket_mode_and_address);
    suite_add_tcase(s, tc);
    return check_run(s);
}
