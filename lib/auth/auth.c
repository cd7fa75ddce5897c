#include "auth/auth.h"

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

int pgr_authenticate(pgrest_ctx *ctx, pgrest_arena *a, pgrest_api_request *api,
                     pgrest_error *err)
{
    const pgr_config *cfg = pgr_cfg(ctx, a);
    const char *token = bearer_token(api->raw);
    if (token != NULL)
        return pgr_jwt_authenticate(ctx, cfg, a, token, api, err);
    if (cfg->db_anon_role == NULL)
        return pgr_error(err, 401, "PGRST302", "Anonymous access is disabled",
                         NULL, NULL);
    api->role = cfg->db_anon_role;
    api->jwt_claims = anon_claims(a, cfg->db_anon_role);
    api->authenticated = false;
    return PGREST_OK;
}
