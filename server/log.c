#include "log.h"

#include "pgrest/pgrest.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int current = LOG_ERROR;

static int level_named(const char *name)
{
    static const char *const names[] = {"crit", "error", "warn", "info", "debug"};
    for (int i = 0; i < 5; i++)
        if (name != NULL && strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

void log_set_level(const char *name)
{
    int level = level_named(name);
    if (level >= 0)
        atomic_store(&current, level);
}

int log_enabled(log_level level)
{
    return (int)level <= atomic_load(&current);
}

int log_enabled_for_status(int status)
{
    return log_enabled(LOG_INFO) || (status >= 500 && log_enabled(LOG_ERROR)) ||
           (status >= 400 && log_enabled(LOG_WARN));
}

/* PostgREST's formatZonedTime: "%d/%b/%Y:%T %z", local time. */
static void timestamp(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(buf, len, "%d/%b/%Y:%H:%M:%S %z", &tm);
}

/* A byte that could end a log line or drive a terminal: C0 controls but
 * TAB, and DEL. PostgREST (fast-logger's toLogStr, hPutStrLn) writes
 * every byte as it is, so a role claim, a path or a User-Agent holding
 * CR/LF could forge lines; here those bytes become \xHH, as Apache's and
 * nginx's access logs write them. Everything else, UTF-8 included, is
 * written unchanged, as PostgREST writes it. */
static bool log_unsafe(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* s to f (locked by the caller), unsafe bytes as \xHH */
static void put_escaped(FILE *f, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (!log_unsafe(*p)) {
            putc_unlocked(*p, f);
            continue;
        }
        putc_unlocked('\\', f);
        putc_unlocked('x', f);
        putc_unlocked(hex[*p >> 4], f);
        putc_unlocked(hex[*p & 0xf], f);
    }
}

static void vlog_line(const char *fmt, va_list ap)
{
    char stamp[64], small[512];
    timestamp(stamp, sizeof stamp);
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    char *text = small;
    if (n >= (int)sizeof small) {
        text = malloc((size_t)n + 1);
        if (text != NULL)
            vsnprintf(text, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    flockfile(stderr);
    fprintf(stderr, "%s: ", stamp);
    put_escaped(stderr, n < 0 ? "" : text != NULL ? text : "(out of memory)");
    putc_unlocked('\n', stderr);
    funlockfile(stderr);
    if (text != small)
        free(text);
}

void log_msg(log_level level, const char *fmt, ...)
{
    if (!log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog_line(fmt, ap);
    va_end(ap);
}

/* PostgREST observationLogger: most observations are written whatever
 * the level; a request without a schema cache from error on; pool
 * housekeeping only at debug. */
static log_level observation_level(pgrest_event event)
{
    switch (event) {
    case PGREST_EVENT_SCHEMA_CACHE_EMPTY:
    case PGREST_EVENT_QUERY_ERROR:
    case PGREST_EVENT_POOL_TIMEOUT:
    case PGREST_EVENT_JWKS_FETCH_FAILED:
        return LOG_ERROR;
    case PGREST_EVENT_JWKS_FETCHED:
        return LOG_INFO;
    case PGREST_EVENT_POOL_FLUSHED:
    case PGREST_EVENT_POOL_CONNECTION:
    case PGREST_EVENT_POOL_REQUEST:
    case PGREST_EVENT_POOL_REQUEST_FULFILLED:
    case PGREST_EVENT_JWT_CACHE_LOOKUP:
    case PGREST_EVENT_JWT_CACHE_EVICTION:
        return LOG_DEBUG;
    default:
        return LOG_CRIT;
    }
}

/* PostgREST's pool timeout message goes through Debounce.hs makeDebouncer
 * with an action that logs, then sleeps 5 s: a trigger while the worker is
 * idle logs at once; triggers during the sleep set one flag, so one more
 * line follows when the sleep ends (and another sleep); a burst of
 * timeouts logs at most twice per 5 s, the last one never lost. */
static pthread_mutex_t debounce_lock = PTHREAD_MUTEX_INITIALIZER;
static bool debounce_busy, debounce_pending;
static char *debounce_message;

static void *debounce_worker(void *arg)
{
    (void)arg;
    for (;;) {
        sleep(5);
        pthread_mutex_lock(&debounce_lock);
        if (!debounce_pending) {
            debounce_busy = false;
            pthread_mutex_unlock(&debounce_lock);
            return NULL;
        }
        debounce_pending = false;
        char *message = debounce_message ? strdup(debounce_message) : NULL;
        pthread_mutex_unlock(&debounce_lock);
        /* the action itself logs whatever the level (logWithZTime) */
        if (message != NULL)
            log_msg(LOG_CRIT, "%s", message);
        free(message);
    }
}

static void pool_timeout(const char *message)
{
    pthread_mutex_lock(&debounce_lock);
    char *copy = strdup(message);
    if (copy != NULL) {
        free(debounce_message);
        debounce_message = copy;
    }
    bool now = !debounce_busy;
    if (now) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        debounce_busy = pthread_create(&t, &attr, debounce_worker, NULL) == 0;
        pthread_attr_destroy(&attr);
    } else
        debounce_pending = true;
    pthread_mutex_unlock(&debounce_lock);
    if (now)
        log_msg(LOG_ERROR, "%s", message);
}

/* a reload's log options, waiting for the library's "Config reloaded"
 * (-1: none) */
static _Atomic int staged_level = -1;
static _Atomic int staged_query = -1;

static bool coerce_bool(const char *value);

void log_stage_reload(const char *level, const char *query)
{
    int named = level_named(level != NULL ? level : "error");
    atomic_store(&staged_level, named >= 0 ? named : atomic_load(&current));
    atomic_store(&staged_query, query != NULL && coerce_bool(query));
}

void log_unstage_reload(void)
{
    atomic_store(&staged_level, -1);
    atomic_store(&staged_query, -1);
}

static atomic_bool query_logging;

/* Reload.hs puts the new config before ConfigSucceededObs: the reloaded
 * log level already decides that line and every one after it */
static void apply_staged_reload(void)
{
    int level = atomic_exchange(&staged_level, -1);
    int query = atomic_exchange(&staged_query, -1);
    if (level >= 0)
        atomic_store(&current, level);
    if (query >= 0)
        atomic_store(&query_logging, query == 1);
}

void log_observation(void *arg, pgrest_event event, const char *message)
{
    (void)arg;
    if (event == PGREST_EVENT_CONFIG_RELOADED)
        apply_staged_reload();
    log_level level = observation_level(event);
    /* an empty message has nothing to say (a fatal event whose reason was
     * logged before it) */
    if (message[0] == '\0' || !log_enabled(level))
        return;
    if (event == PGREST_EVENT_POOL_TIMEOUT)
        pool_timeout(message);
    else
        log_msg(level, "%s", message);
}

/* PostgREST's coerceBool: unreadable text is false (the default). */
static bool coerce_bool(const char *value)
{
    int b = 0;
    return pgrest_config_read_bool(value, &b) && b;
}

void log_set_query(const char *value)
{
    atomic_store(&query_logging, value != NULL && coerce_bool(value));
}

/* showOnSingleLine '\n': the lines of a statement joined by spaces. */
void log_query(void *arg, int status, const char *sql)
{
    (void)arg;
    if (!atomic_load(&query_logging) || !log_enabled_for_status(status) || sql == NULL ||
        sql[0] == '\0')
        return;
    size_t n = strlen(sql);
    char *line = malloc(n + 1);
    if (line == NULL)
        return;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (sql[i] != '\n')
            line[j++] = sql[i];
        else if (i + 1 < n)
            line[j++] = ' ';
    }
    line[j] = '\0';
    log_msg(LOG_CRIT, "%s", line);
    free(line);
}

void log_access(const char *ip, const char *role, const char *method, const char *uri,
                const char *version, int status, long long size, const char *referer,
                const char *agent)
{
    char stamp[64], sizebuf[32];
    timestamp(stamp, sizeof stamp);
    if (size < 0)
        snprintf(sizebuf, sizeof sizebuf, "-");
    else
        snprintf(sizebuf, sizeof sizebuf, "%lld", size);
    /* Logger/Apache.hs apacheLogStr; the client's and the token's text
     * escaped (put_escaped) so one request stays one line */
    flockfile(stdout);
    put_escaped(stdout, ip);
    fputs(" - ", stdout);
    put_escaped(stdout, role ? role : "-");
    printf(" [%s] \"", stamp);
    put_escaped(stdout, method);
    putc_unlocked(' ', stdout);
    put_escaped(stdout, uri);
    putc_unlocked(' ', stdout);
    put_escaped(stdout, version ? version : "HTTP/1.1");
    printf("\" %d %s \"", status, sizebuf);
    put_escaped(stdout, referer);
    fputs("\" \"", stdout);
    put_escaped(stdout, agent);
    fputs("\"\n", stdout);
    fflush(stdout);
    funlockfile(stdout);
}

/* libmicrohttpd's own diagnostics (PostgREST WarpServerObs, debug only). */
void log_http_server(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    if (!log_enabled(LOG_DEBUG))
        return;
    char text[512];
    vsnprintf(text, sizeof text, fmt, ap);
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        text[--n] = '\0';
    log_msg(LOG_DEBUG, "Warp server: %s", text);
}
