/* Strict JSON documents for request bodies (see json_value.h). */
#include "parse/json_value.h"

#include <json-c/json.h>
#include <limits.h>

#include "util/json_strict.h"
#include "util/utf8.h"

/* json-c keeps object keys as C strings; the NUL-key check stays with
 * the payload readers, which see the raw text */
json_object *pgr_json_parse_body_value(const char *body, size_t len, int max_depth,
                                       bool *too_deep)
{
    *too_deep = false;
    /* strict UTF-8 as Data.Text decodes it (aeson reads strings into
     * Text); json-c's own check lets CESU-8 surrogates through */
    if (len > INT_MAX || !pgr_utf8_valid(body, len))
        return NULL;
    /* aeson's decode (Payload.hs): what json-c's strict mode still takes
     * ({'a':1}, NaN, 1., raw control characters in strings) is invalid */
    if (!pgr_json_lexically_strict(body, len))
        return NULL;
    /* json-c counts the innermost scalar as a level too: max_depth
     * containers (objects/arrays) need one more */
    json_tokener *tok = json_tokener_new_ex(max_depth + 1);
    if (tok == NULL)
        return NULL;
    /* RFC 8259 as aeson reads it: no single quotes, trailing commas, ...
     * and strings of valid UTF-8 only (aeson decodes them to Text) */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, body, (int)len);
    size_t used = json_tokener_get_parse_end(tok);
    /* json-c waits for a delimiter after a bare scalar (5, true, null):
     * a NUL tells it the body ended there */
    if (doc == NULL && json_tokener_get_error(tok) == json_tokener_continue) {
        doc = json_tokener_parse_ex(tok, "", 1);
        used = len;
    }
    *too_deep = json_tokener_get_error(tok) == json_tokener_error_depth;
    bool ok = json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    /* a JSON null is json-c's NULL; as a payload it is the empty array
     * every other scalar becomes (Payload.hs payloadAttributes) */
    if (ok && doc == NULL)
        doc = json_object_new_array();
    ok = ok && doc != NULL;
    for (size_t i = used; ok && i < len; i++)
        ok = body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n';
    if (!ok) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

bool pgr_json_object_keys(pgrest_arena *a, json_object *o, const char ***keys, size_t *n)
{
    size_t cap = (size_t)json_object_object_length(o);
    const char **out = PGR_NEW_ARRAY(a, const char *, cap + 1);
    if (out == NULL)
        return false;
    *n = 0;
    json_object_object_foreach(o, k, v) {
        (void)v;
        if ((out[(*n)++] = pgr_strdup(a, k)) == NULL)
            return false;
    }
    out[*n] = NULL;
    *keys = out;
    return true;
}

bool pgr_json_same_key_set(json_object *o, const char *const *keys, size_t n)
{
    if (!json_object_is_type(o, json_type_object) ||
        (size_t)json_object_object_length(o) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!json_object_object_get_ex(o, keys[i], NULL))
            return false;
    return true;
}
