#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"

static bool code_is(const char *code, const char *want)
{
    return code != NULL && strcmp(code, want) == 0;
}

int pgr_error_status(int http_status, const char *code)
{
    /* PostgREST Error.hs: PGRST000 ConnectionUsageError, PGRST001
     * ClientError, PGRST003 AcquisitionTimeoutUsageError (504) */
    if (code_is(code, "PGRST000") || code_is(code, "PGRST001") ||
        code_is(code, "PGRST003"))
        return PGREST_ERR_CONNECTION;
    if (code_is(code, "PGRST002"))
        return PGREST_ERR_SCHEMA;
    /* JwtSecretMissing: the server is misconfigured, not the client */
    if (code_is(code, "PGRST300"))
        return PGREST_ERR_CONFIG;
    /* GucHeadersError, GucStatusError, PGRSTParseError: what the database
     * function set or raised is unusable */
    if (code_is(code, "PGRST111") || code_is(code, "PGRST112") ||
        code_is(code, "PGRST121"))
        return PGREST_ERR_DATABASE;
    /* 300: AmbiguousRelBetween / AmbiguousRpc, the client must choose */
    return http_status >= 300 && http_status < 500 ? PGREST_ERR_REQUEST
                                                   : PGREST_ERR_INTERNAL;
}

int pgr_error(pgrest_error *err, int http_status, const char *code,
              const char *message, const char *details, const char *hint)
{
    if (err != NULL) {
        err->http_status = http_status;
        err->code = code;
        err->message = message;
        err->details = details;
        err->hint = hint;
    }
    return pgr_error_status(http_status, code);
}

static char *vformat(pgrest_arena *a, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = pgr_alloc(a, (size_t)n + 1);
    if (s != NULL)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *pgr_asprintf(pgrest_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(a, fmt, ap);
    va_end(ap);
    return s;
}

int pgr_errorf(pgrest_error *err, pgrest_arena *a, int http_status,
               const char *code, const char *details, const char *hint,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = vformat(a, fmt, ap);
    va_end(ap);
    return pgr_error(err, http_status, code, msg ? msg : "out of memory",
                     details, hint);
}

int pgr_error_oom(pgrest_error *err)
{
    pgr_error(err, 500, PGR_CODE_INTERNAL, PGR_OOM_MESSAGE, NULL, NULL);
    return PGREST_ERR_INTERNAL;
}

int pgr_error_misuse(pgrest_error *err, const char *function)
{
    pgr_error(err, 500, PGR_CODE_INTERNAL, "Invalid arguments", function, NULL);
    return PGREST_ERR_INTERNAL;
}

int pgr_error_connection(pgrest_error *err, const char *details)
{
    pgr_error(err, 503, "PGRST000", "Database connection error.", details, NULL);
    return PGREST_ERR_CONNECTION;
}

int pgr_error_no_schema_cache(pgrest_error *err, const char *details)
{
    return pgr_error(err, 503, "PGRST002",
                     "Could not query the database for the schema cache. Retrying.", details,
                     NULL);
}

int pgr_error_pool_timeout(pgrest_error *err)
{
    return pgr_error(err, 504, "PGRST003", "Timed out acquiring connection from connection pool.",
                     NULL, NULL);
}

int pgr_error_internal(pgrest_error *err, const char *what)
{
    pgr_error(err, 500, PGR_CODE_INTERNAL, "Internal error", what, NULL);
    return PGREST_ERR_INTERNAL;
}

int pgr_stage_end(pgrest_arena *a, int rc, pgrest_error *err)
{
    return a != NULL && pgr_arena_exhausted(a) ? pgr_error_oom(err) : rc;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Exact codes before prefixes, as in PostgREST's Error.hs. */
int pgr_sqlstate_http_status(const char *c, const char *message,
                             bool authenticated)
{
    if (c == NULL || strlen(c) != 5)
        return 500;
    if (message == NULL)
        message = "";
    if (strcmp(c, "21000") == 0)
        return ends_with(message, "requires a WHERE clause") ? 400 : 500;
    if (strcmp(c, "22023") == 0)
        return starts(message, "role") && ends_with(message, "does not exist")
                   ? 401 : 400;
    if (strcmp(c, "57P01") == 0)
        return 503;
    if (strcmp(c, "42883") == 0)
        return starts(message, "function xmlagg(") ? 406 : 404;
    if (starts(c, "PT")) {
        int st = 0;
        for (int i = 2; i < 5; i++) {
            if (c[i] < '0' || c[i] > '9')
                return 500;
            st = st * 10 + (c[i] - '0');
        }
        /* mkStatus of any number: a three-digit code passes (PT720 too) */
        return st >= 100 ? st : 500;
    }
    static const struct { const char *code; int status; } exact[] = {
        {"23503", 409}, {"23505", 409}, {"25006", 405}, {"53400", 500},
        {"P0001", 400}, {"42P01", 404}, {"42P17", 500},
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(c, exact[i].code) == 0)
            return exact[i].status;
    if (strcmp(c, "42501") == 0)
        return authenticated ? 403 : 401;
    static const struct { const char *prefix; int status; } classes[] = {
        {"08", 503}, {"09", 500}, {"0L", 403}, {"0P", 403}, {"25", 500},
        {"28", 403}, {"2D", 500}, {"38", 500}, {"39", 500}, {"3B", 500},
        {"40", 500}, {"53", 503}, {"54", 500}, {"55", 500}, {"57", 500},
        {"58", 500}, {"F0", 500}, {"HV", 500}, {"P0", 500}, {"XX", 500},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strncmp(c, classes[i].prefix, 2) == 0)
            return classes[i].status;
    return 400;
}

/* Client bytes echoed in an error body may not be UTF-8; PostgREST
 * decodes such text leniently (Data.Text.Encoding lenientDecode), one
 * U+FFFD per byte that starts no well-formed sequence, so the body stays
 * valid JSON.  It lives here, not in util/strbuf.c, because strbuf sits
 * below utf8 (utf8.c builds its output with a strbuf). */
static void put_json_string_lenient(pgr_sb *sb, const char *s)
{
    if (sb->failed)
        return;
    size_t n;
    const char *clean = pgr_utf8_lenient(sb->arena, s, strlen(s), &n);
    if (clean == NULL) {
        sb->failed = true;
        return;
    }
    pgr_sb_put_json_stringn(sb, clean, n);
}

static void put_nullable(pgr_sb *sb, const char *s)
{
    if (s == NULL)
        pgr_sb_puts(sb, "null");
    else
        put_json_string_lenient(sb, s);
}

/* PGRST201's details is the JSON array of candidate relationships
 * (PostgREST Error.hs AmbiguousRelBetween); plan/embed.c builds it. */
static bool details_is_json(const pgrest_error *err)
{
    return err->code != NULL && strcmp(err->code, "PGRST201") == 0 &&
           err->details != NULL && err->details[0] == '[';
}

char *pgr_error_json(pgrest_arena *a, const pgrest_error *err, bool minimal)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 128);
    pgr_sb_puts(&sb, "{\"code\":");
    put_nullable(&sb, err->code);
    if (!minimal) {
        pgr_sb_puts(&sb, ",\"details\":");
        if (details_is_json(err))
            pgr_sb_puts(&sb, err->details);
        else
            put_nullable(&sb, err->details);
        pgr_sb_puts(&sb, ",\"hint\":");
        put_nullable(&sb, err->hint);
    }
    pgr_sb_puts(&sb, ",\"message\":");
    put_nullable(&sb, err->message);
    pgr_sb_putc(&sb, '}');
    return pgr_sb_finish(&sb);
}
