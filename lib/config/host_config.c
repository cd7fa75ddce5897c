/* What a host that reads PostgREST's configuration sources itself (a
 * config file, PGRST_* variables: pgrest-server, a binding) needs beyond
 * the option table (config.c): Config.hs's readings of text, and the
 * checks and --dump-config forms of the options whose values PostgREST
 * parses further. Messages are PostgREST's, without its "Error in config "
 * prefix. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pgrest/pgrest.h"

#include "auth/jspath_legacy.h"
#include "auth/jwks.h"
#include "auth/jwt.h"
#include "config/config.h"
#include "config/config_coerce.h"
#include "config/config_uri.h"
#include "util/base64.h"
#include "util/hs_show.h"

int pgrest_config_read_int(const char *text, long long *out)
{
    return text != NULL && out != NULL && pgr_coerce_int_text(text, out);
}

int pgrest_config_read_bool(const char *text, int *out)
{
    bool b;
    if (text == NULL || out == NULL || !pgr_coerce_bool_text(text, &b))
        return 0;
    *out = b;
    return 1;
}

char *pgrest_config_show(const char *text)
{
    return hs_show_string(text != NULL ? text : "");
}

static int refuse(char **message, const char *text)
{
    if (message != NULL)
        *message = strdup(text);
    return PGREST_ERR_CONFIG;
}

/* dumpJSPath: `$` doubled so the dump reads back through configurator */
static char *dollar_escaped(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '$' ? 2 : 1;
    char *out = malloc(n + 1), *o = out;
    for (const char *p = s; out != NULL && *p; p++) {
        *o++ = *p;
        if (*p == '$')
            *o++ = '$';
    }
    if (out != NULL)
        *o = '\0';
    return out;
}

/* RFC 9535 JSONPath first, then the deprecated JSPath DSL; the error is
 * the second's Parsec error, shown once more (fail $ show e). */
static int check_role_claim_key(const char *v, char **dump, int *legacy, char **message)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error e = {0};
    bool rfc9535 = a != NULL && v[0] == '$' && pgr_jwt_check_role_claim_key(a, v, &e) == PGREST_OK;
    pgrest_arena_free(a);
    *legacy = 0;
    if (rfc9535) {
        *dump = dollar_escaped(v);
        return *dump != NULL ? PGREST_OK : PGREST_ERR_INTERNAL;
    }
    char *error = NULL;
    if (jspath_legacy_parse(v, dump, &error)) {
        *legacy = 1;
        return PGREST_OK;
    }
    char *shown = hs_show_string(error ? error : "");
    free(error);
    if (message != NULL)
        *message = shown;
    else
        free(shown);
    return shown != NULL ? PGREST_ERR_CONFIG : PGREST_ERR_INTERNAL;
}

/* A choice option (db-tx-end, log-level, ...): one of its names, by the
 * library's own reader of it. */
static int check_choice(const char *key, const char *value, char **message)
{
    const pgrest_option_info *o = pgrest_option_find(key);
    if (o == NULL || o->type != PGREST_OPTION_CHOICE)
        return PGREST_OK;
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error e = {0};
    int rc = a != NULL ? pgr_option_check_choice(o, value, a, &e) : PGREST_ERR_INTERNAL;
    if (rc == PGREST_ERR_CONFIG)
        rc = refuse(message, e.message != NULL ? e.message : "");
    pgrest_arena_free(a);
    return rc;
}

int pgrest_option_check(const char *key, const char *value, char **dump, int *legacy,
                        char **message)
{
    char *ignored = NULL;
    int no_legacy;
    if (dump == NULL)
        dump = &ignored;
    *dump = NULL;
    if (message != NULL)
        *message = NULL;
    if (key == NULL || value == NULL)
        return PGREST_ERR_INTERNAL;
    int rc = PGREST_OK;
    if (strcmp(key, "jwt-role-claim-key") == 0 || strcmp(key, "role-claim-key") == 0)
        rc = check_role_claim_key(value, dump, legacy ? legacy : &no_legacy, message);
    else if (strcmp(key, "jwt-aud") == 0 && strchr(value, ':') != NULL &&
             !config_uri_is_uri(value))
        rc = refuse(message, "jwt-aud should be a string or a valid URI");
    else if (strcmp(key, "openapi-server-proxy-uri") == 0 && config_uri_is_malformed_proxy(value))
        rc = refuse(message, "Malformed proxy uri, a correct example: "
                             "https://example.com:8443/basePath");
    else if (strcmp(key, "jwt-jwks-uri") == 0 && pgr_jwks_uri_problem(value) != NULL)
        rc = refuse(message, pgr_jwks_uri_problem(value));
    else if ((rc = check_choice(key, value, message)) == PGREST_OK &&
             (*dump = strdup(value)) == NULL)
        rc = PGREST_ERR_INTERNAL;
    free(ignored);
    return rc;
}

/* decodeSecret: stripped, '.' read as the '=' padding (the URL-safe "-_"
 * the decoder reads itself), strict padded base64. */
static unsigned char *decode_base64(const char *s, size_t *len)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    char *text = malloc(n + 1);
    unsigned char *out = malloc(pgr_base64_decoded_size(n));
    bool ok = text != NULL && out != NULL;
    for (size_t i = 0; ok && i < n; i++)
        text[i] = s[i] == '.' ? '=' : s[i];
    ok = ok && pgr_base64_decode(text, n, PGR_BASE64_PADDING_REQUIRED, out, len);
    free(text);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

static bool is_jwk(const unsigned char *bytes, size_t len)
{
    pgrest_arena *a = pgrest_arena_new(0);
    bool jwk = a != NULL && pgr_jwt_secret_is_jwk(a, bytes, len);
    pgrest_arena_free(a);
    return jwk;
}

int pgrest_jwt_secret_check(const char *secret, int is_base64, char **dump, char **message)
{
    *dump = NULL;
    if (message != NULL)
        *message = NULL;
    if (secret == NULL)
        return PGREST_ERR_INTERNAL;
    size_t len = strlen(secret);
    unsigned char *decoded = NULL;
    if (is_base64 && (decoded = decode_base64(secret, &len)) == NULL)
        return refuse(message, "user error (invalid base64 encoding of the JWT secret)");
    const unsigned char *bytes = decoded ? decoded : (const unsigned char *)secret;
    int rc = PGREST_OK;
    if (!is_jwk(bytes, len) && len < 32)
        rc = refuse(message, "user error (The JWT secret must be at least 32 characters long.)");
    else if ((*dump = decoded ? pgr_base64_encode(bytes, len) : strdup(secret)) == NULL)
        rc = PGREST_ERR_INTERNAL;
    free(decoded);
    return rc;
}
