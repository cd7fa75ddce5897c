/* Server logging by log-level (crit, error, warn, info, debug). */
#ifndef PGRS_LOG_H
#define PGRS_LOG_H

typedef enum log_level { LOG_CRIT, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG } log_level;

void log_set_level(const char *name);
int log_enabled(log_level level);
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
