/* Claims validation (PostgREST Auth/Jwt.hs checkForErrors): exp, nbf
 * and iat within a 30 s skew, aud against jwt-aud. */
#include "auth/jwt_internal.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* PostgREST's allowedSkewSeconds (Auth.hs). */
#define JWT_SKEW_SECONDS 30

/* PostgREST reads a time claim with Scientific's toBoundedInteger and
 * falls back to 0: a fraction or a value outside Int64 counts as the epoch
 * (so such an exp has expired, such an nbf or iat is in the past). */
static int64_t claim_seconds(json_object *v)
{
    if (json_object_is_type(v, json_type_int)) {
        int64_t n = json_object_get_int64(v);
        if (n == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
            return 0;
        return n;
    }
    double d = json_object_get_double(v);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != (double)(int64_t)d)
        return 0;
    return (int64_t)d;
}

/* A time claim (Jwt.hs checkForErrors, `.:?`): absent or null is fine,
 * other non-numbers are refused. */
static int time_claim(pgrest_arena *a, json_object *claims, const char *name,
                      bool *present, double *value, pgrest_error *err)
{
    json_object *v = NULL;
    *present = json_object_object_get_ex(claims, name, &v) && v != NULL;
    if (!*present)
        return PGREST_OK;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return pgr_errorf(err, a, 401, "PGRST303", NULL, NULL,
                          "The JWT '%s' claim must be a number", name);
    *value = (double)claim_seconds(v);
    return PGREST_OK;
}

int pgr_jwt_check_times(pgrest_arena *a, json_object *claims, double now,
                        pgrest_error *err)
{
    bool present;
    double t = 0;
    int rc = time_claim(a, claims, "exp", &present, &t, err);
    if (rc != PGREST_OK)
        return rc;
    if (present && now > t + JWT_SKEW_SECONDS)
        return claims_error(err, "JWT expired");
    rc = time_claim(a, claims, "nbf", &present, &t, err);
    if (rc != PGREST_OK)
        return rc;
    if (present && now < t - JWT_SKEW_SECONDS)
        return claims_error(err, "JWT not yet valid");
    rc = time_claim(a, claims, "iat", &present, &t, err);
    if (rc != PGREST_OK)
        return rc;
    if (present && now < t - JWT_SKEW_SECONDS)
        return claims_error(err, "JWT issued at future");
    return PGREST_OK;
}

static int aud_type_error(pgrest_error *err)
{
    return claims_error(err, "The JWT 'aud' claim must be a string or an array of strings");
}

/* aud (Auth.hs): absent, null or [] is accepted; a string or an array of
 * strings must contain jwt-aud when it is set; other types are refused
 * whether or not jwt-aud is set. */
int pgr_jwt_check_aud(json_object *claims, const char *want, pgrest_error *err)
{
    json_object *aud = NULL;
    if (!json_object_object_get_ex(claims, "aud", &aud) || aud == NULL)
        return PGREST_OK;
    if (json_object_is_type(aud, json_type_string)) {
        if (want != NULL && strcmp(json_object_get_string(aud), want) != 0)
            return claims_error(err, "JWT not in audience");
        return PGREST_OK;
    }
    if (!json_object_is_type(aud, json_type_array))
        return aud_type_error(err);
    size_t n = json_object_array_length(aud);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(aud, i);
        if (!json_object_is_type(e, json_type_string))
            return aud_type_error(err);
        if (want != NULL && strcmp(json_object_get_string(e), want) == 0)
            found = true;
    }
    if (n > 0 && want != NULL && !found)
        return claims_error(err, "JWT not in audience");
    return PGREST_OK;
}
