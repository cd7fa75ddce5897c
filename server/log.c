#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static log_level current = LOG_ERROR;

void log_set_level(const char *name)
{
    static const char *names[] = {"crit", "error", "warn", "info", "debug"};
    for (int i = 0; i < 5; i++)
        if (name != NULL && strcmp(name, names[i]) == 0)
            current = (log_level)i;
}

int log_enabled(log_level level)
{
    return level <= current;
}

void log_msg(log_level level, const char *fmt, ...)
{
    if (!log_enabled(level))
        return;
    char stamp[64];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%d/%b/%Y:%H:%M:%S %z", &tm);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", stamp);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int log_enabled_for_status(int status)
{
    return log_enabled(LOG_INFO) || (status >= 500 && log_enabled(LOG_ERROR)) ||
           (status >= 400 && log_enabled(LOG_WARN));
}

void log_query(void *arg, int status, const char *sql)
{
    (void)arg;
    if (log_enabled_for_status(status))
        log_msg(LOG_CRIT, "%s", sql);
}

void log_observation(void *arg, pgrest_observation kind, const char *message)
{
    (void)arg;
    (void)kind;
    log_msg(LOG_CRIT, "%s", message);
}

void log_access(const char *ip, const char *method, const char *uri, int status,
                size_t bytes, const char *referer, const char *agent)
{
    char stamp[64];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%d/%b/%Y:%H:%M:%S %z", &tm);
    printf("%s - - [%s] \"%s %s HTTP/1.1\" %d %zu \"%s\" \"%s\"\n", ip, stamp, method,
           uri, status, bytes, referer, agent);
    fflush(stdout);
}
