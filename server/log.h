/* Server logging by log-level (crit, error, warn, info, debug). */
#ifndef PGRS_LOG_H
#define PGRS_LOG_H

#include <stddef.h>

#include "pgrest/pgrest.h"

typedef enum log_level { LOG_CRIT, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG } log_level;

void log_set_level(const char *name);
int log_enabled(log_level level);
/* Whether a response with this status is logged at the current level
 * (PostgREST: error logs 5xx, warn 4xx and 5xx, info everything). */
int log_enabled_for_status(int status);
/* One access-log line on stdout, Apache combined style as PostgREST
 * writes it: ip - user [date] "METHOD uri HTTP/1.1" status bytes "referer"
 * "user-agent" (the user is "-": the role stays inside the library). */
void log_access(const char *ip, const char *method, const char *uri, int status,
                size_t bytes, const char *referer, const char *agent);
/* log-query: the SQL of a logged request (pgrest_query_logger). */
void log_query(void *arg, int status, const char *sql);
/* pgrest_observer: the library's observations (config reloads, listener
 * messages), logged whatever the log-level as PostgREST does. */
void log_observation(void *arg, pgrest_observation kind, const char *message);
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
