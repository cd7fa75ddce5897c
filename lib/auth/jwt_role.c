/* The role a token names (PostgREST Auth.hs parseClaims with
 * jwt-role-claim-key), and the check of that configuration key. */
#include "auth/jwt_internal.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/jspath_legacy.h"
#include "auth/role_claim_path.h"
#include "util/hs_show.h"

int pgr_jwt_check_role_claim_key(pgrest_arena *a, const char *path,
                                 pgrest_error *err)
{
    bool ok = false;
    pgr_claim_path_parse(a, path, &ok);
    if (ok)
        return PGREST_OK;
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    /* a configuration error (validated when the configuration is built),
     * worded as Config.hs parseRoleClaimKey does: neither JSONPath nor the
     * deprecated syntax, `fail $ show e` of the latter's Parsec error */
    char *dump = NULL, *parsec = NULL;
    bool legacy_ok = jspath_legacy_parse(path, &dump, &parsec);
    char *shown = legacy_ok || parsec == NULL ? NULL : hs_show_string(parsec);
    free(dump);
    free(parsec);
    if (shown != NULL)
        pgr_errorf(err, a, 0, NULL, NULL, NULL, "%s", shown);
    else
        pgr_errorf(err, a, 0, NULL, NULL, NULL, "Invalid jwt-role-claim-key: %s", path);
    free(shown);
    return PGREST_ERR_CONFIG;
}

/* The role at jwt-role-claim-key: a string as is, other JSON encoded
 * (PostgREST's `unquoted`), so a JSON null is the role "null"; NULL when
 * the path selects nothing. */
int pgr_jwt_claims_role(pgrest_arena *a, const char *path, json_object *claims,
                        const char **role, pgrest_error *err)
{
    bool ok = false;
    jsp_seg *segs = pgr_claim_path_parse(a, path, &ok);
    if (!ok && pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    if (!ok) /* a configuration refuses it; a hand-made pgr_config may not */
        return pgr_errorf(err, a, 500, PGR_CODE_INTERNAL, NULL, NULL,
                          "Invalid jwt-role-claim-key: %s", path);
    json_object *v = NULL;
    *role = NULL;
    if (!pgr_claim_path_select(claims, segs, &v))
        return PGREST_OK;
    if (v == NULL) /* json-c's JSON null */
        *role = "null";
    else if (json_object_is_type(v, json_type_string)) {
        size_t n = (size_t)json_object_get_string_len(v);
        /* "\u0000" in the role: PostgREST sends it to set_config('role', $1)
         * and PostgreSQL refuses NUL in text (22021, 400); read as a C
         * string it would be a shorter role than the token names */
        if (memchr(json_object_get_string(v), '\0', n) != NULL)
            return pgr_error(err, 400, "22021",
                             "invalid byte sequence for encoding \"UTF8\": 0x00", NULL, NULL);
        *role = pgr_strndup(a, json_object_get_string(v), n);
    } else {
        pgr_sb sb;
        pgr_sb_init(&sb, a, 64);
        pgr_jwt_put_json(&sb, v); /* Aeson's JSON.encode */
        *role = pgr_sb_finish(&sb);
    }
    return *role == NULL ? pgr_error_oom(err) : PGREST_OK;
}
