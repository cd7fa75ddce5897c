/* Strict JSON documents for request bodies (see json_value.h). */
#include "parse/json_value.h"

#include <json-c/json.h>

#include "util/json_strict.h"

/* json-c keeps object keys as C strings; the NUL-key check stays with
 * the payload readers, which see the raw text */
json_object *pgr_json_parse_body_value(const char *body, size_t len, int max_depth,
                                       bool *too_deep)
{
    /* json-c counts the innermost scalar as a level too: max_depth
     * containers (objects/arrays) need one more */
    json_object *doc;
    if (!pgr_json_parse_strict_depth(body, len, max_depth + 1, &doc, too_deep))
        return NULL;
    /* a JSON null is json-c's NULL; as a payload it is the empty array
     * every other scalar becomes (Payload.hs payloadAttributes) */
    return doc != NULL ? doc : json_object_new_array();
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
