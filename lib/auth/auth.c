#include "auth/auth.h"

#include <json-c/json.h>
#include <string.h>
#include <strings.h>

#include "auth/jwt.h"
#include "util/error.h"
#include "util/strbuf.h"

static const char *anon_claims(pgrest_arena *a, const char *role)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_puts(&sb, "{\"role\":");
    pgr_sb_put_json_string(&sb, role);
    pgr_sb_putc(&sb, '}');
    return pgr_sb_finish(&sb);
}

/* The token of "Authorization: Bearer <token>", or NULL. */
static const char *bearer_token(const pgrest_request *req)
{
    const char *h = pgr_request_header(req, "Authorization");
    h = h == NULL ? NULL : pgr_jwt_bearer_token(h);
    return h;
}

/* The JWT verifier fills an api request; only its identity fields are
 * read back. */
static int verify_bearer(pgrest_ctx *ctx, const pgr_config *cfg, pgrest_arena *a,
                         const char *token, pgrest_auth *auth, pgrest_error *err)
{
    pgrest_api_request api;
    memset(&api, 0, sizeof api);
    int rc = pgr_jwt_authenticate(ctx, cfg, a, token, &api, err);
    auth->role = api.role;
    auth->claims = api.jwt_claims;
    auth->authenticated = api.authenticated;
    return rc;
}

static int identify(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                    pgrest_auth *auth, pgrest_error *err)
{
    const pgr_config *cfg = pgr_cfg(ctx, a);
    const char *token = bearer_token(req);
    if (token != NULL)
        return verify_bearer(ctx, cfg, a, token, auth, err);
    if (cfg->db_anon_role == NULL)
        return pgr_error(err, 401, "PGRST302", "Anonymous access is disabled",
                         NULL, NULL);
    auth->role = cfg->db_anon_role;
    auth->claims = anon_claims(a, cfg->db_anon_role);
    auth->authenticated = false;
    return auth->claims != NULL ? PGREST_OK : pgr_error_oom(err);
}

int pgr_authenticate(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                     pgrest_auth **out, pgrest_error *err)
{
    *out = NULL;
    pgrest_auth *auth = PGR_NEW(a, pgrest_auth);
    if (auth == NULL)
        return pgr_error_oom(err);
    pgrest_error local = {0};
    int rc = pgr_stage_end(a, identify(ctx, a, req, auth, &local), &local);
    if (rc != PGREST_OK) {
        auth->failed = true;
        auth->error = local;
        auth->role = NULL;
        auth->claims = NULL;
        auth->authenticated = false;
    }
    if (err != NULL && rc != PGREST_OK)
        *err = local;
    *out = pgr_arena_exhausted(a) ? NULL : auth;
    return rc;
}

int pgr_auth_outcome(const pgrest_auth *auth, pgrest_error *err)
{
    if (!auth->failed)
        return PGREST_OK;
    if (err != NULL)
        *err = auth->error;
    return pgr_error_status(auth->error.http_status, auth->error.code);
}

int pgr_auth_apply(const pgrest_auth *auth, pgrest_api_request *api, pgrest_error *err)
{
    if (auth->failed)
        return pgr_auth_outcome(auth, err);
    api->role = auth->role;
    api->jwt_claims = auth->claims;
    api->authenticated = auth->authenticated;
    return PGREST_OK;
}

/* ------------------------------------------------------------ public API */

int pgrest_authenticate(pgrest_ctx *ctx, pgrest_arena *arena,
                        const pgrest_request *req, pgrest_auth **out,
                        pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || req == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_authenticate");
    *out = NULL;
    int rc = pgr_stage_end(arena, PGREST_OK, err);
    return rc == PGREST_OK ? pgr_authenticate(ctx, arena, req, out, err) : rc;
}

/* The host's claims as a JSON object with "role" set to the role the
 * transaction runs as (Auth.hs parseClaims does the same for a JWT). */
static const char *supplied_claims(pgrest_arena *a, const char *claims_json,
                                   const char *role, pgrest_error *err)
{
    if (claims_json == NULL)
        return anon_claims(a, role);
    json_object *claims = json_tokener_parse(claims_json);
    if (claims == NULL || !json_object_is_type(claims, json_type_object)) {
        json_object_put(claims);
        pgr_error_misuse(err, "pgrest_auth_supply: claims are not a JSON object");
        return NULL;
    }
    json_object_object_add(claims, "role", json_object_new_string(role));
    const char *text = pgr_strdup(a, json_object_to_json_string_ext(
        claims, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(claims);
    if (text == NULL)
        pgr_error_oom(err);
    return text;
}

int pgrest_auth_supply(pgrest_ctx *ctx, pgrest_arena *arena, const char *role,
                       const char *claims_json, pgrest_auth **out,
                       pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_auth_supply");
    *out = NULL;
    const pgr_config *cfg = pgr_cfg(ctx, arena);
    const char *anon = cfg->db_anon_role;
    if (role == NULL && anon == NULL)
        return pgr_error(err, 401, "PGRST302", "Anonymous access is disabled", NULL, NULL);
    pgrest_auth *auth = PGR_NEW(arena, pgrest_auth);
    if (auth == NULL)
        return pgr_error_oom(err);
    auth->role = pgr_strdup(arena, role != NULL ? role : anon);
    if (auth->role == NULL)
        return pgr_error_oom(err);
    auth->claims = supplied_claims(arena, claims_json, auth->role, err);
    if (auth->claims == NULL)
        return pgr_arena_exhausted(arena) ? pgr_error_oom(err) : PGREST_ERR_INTERNAL;
    auth->authenticated = anon == NULL || strcmp(auth->role, anon) != 0;
    *out = auth;
    return PGREST_OK;
}

const char *pgrest_auth_role(const pgrest_auth *auth)
{
    return auth != NULL && !auth->failed ? auth->role : NULL;
}

const char *pgrest_auth_claims(const pgrest_auth *auth)
{
    return auth != NULL && !auth->failed ? auth->claims : NULL;
}

int pgrest_auth_authenticated(const pgrest_auth *auth)
{
    return auth != NULL && !auth->failed && auth->authenticated;
}

const pgrest_error *pgrest_auth_error(const pgrest_auth *auth)
{
    return auth != NULL && auth->failed ? &auth->error : NULL;
}

void pgrest_request_set_auth(pgrest_request *req, const pgrest_auth *auth)
{
    if (req != NULL)
        req->auth = auth;
}
