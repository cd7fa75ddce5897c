/* Server logging as PostgREST's Logger.hs does it: diagnostics on stderr
 * as "dd/Mon/yyyy:HH:MM:SS +zzzz: message", the access log on stdout in
 * Apache combined format; log-level (crit, error, warn, info, debug)
 * decides which requests and which diagnostics are written. */
#ifndef PGRS_LOG_H
#define PGRS_LOG_H

#include <stdarg.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef enum log_level { LOG_CRIT, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG } log_level;

/* Sets the level by name; unknown names leave it unchanged. Thread-safe
 * (log-level is reloadable). */
void log_set_level(const char *name);
/* The log options a configuration reload brings: they apply when the
 * library reports "Config reloaded" (log_observation), so that line and
 * everything after it follow them; unstaged when the reload failed. */
void log_stage_reload(const char *level, const char *query);
void log_unstage_reload(void);
int log_enabled(log_level level);
/* PostgREST shouldLogResponse: crit logs no request, error 5xx, warn 4xx
 * and 5xx, info and debug every request. */
int log_enabled_for_status(int status);
/* One access-log line on stdout (PostgREST Logger/Apache.hs):
 * ip - role [date] "METHOD uri HTTP/x.y" status size "referer" "agent";
 * role NULL and size < 0 print as "-". Control bytes but TAB, and DEL,
 * in any field print as \xHH so a line is always one request; the same
 * holds for every diagnostic line. */
void log_access(const char *ip, const char *role, const char *method, const char *uri,
                const char *version, int status, long long size, const char *referer,
                const char *agent);
/* log-query (PostgREST QueryObs): each statement of a request on one line,
 * when log-query is "true" and the request's status is logged at the
 * current level. log_set_query takes the option's value (reloadable). */
void log_set_query(const char *value);
void log_query(void *arg, int status, const char *sql);
/* libmicrohttpd's error logger: its messages at debug, as PostgREST logs
 * Warp's ("Warp server: ..."). */
void log_http_server(void *cls, const char *fmt, va_list ap);
/* The library's observations (pgrest_observer), at the level PostgREST's
 * observationLogger writes each. */
void log_observation(void *arg, pgrest_event event, const char *message);
/* A diagnostic line on stderr when level is enabled. Startup, shutdown and
 * recovery messages use LOG_CRIT: PostgREST writes them at every level. */
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
