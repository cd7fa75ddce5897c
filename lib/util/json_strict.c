#include "util/json_strict.h"

#include <limits.h>
#include <string.h>

#include "util/utf8.h"

/* aeson has no depth limit; json-c keeps one frame per level. Texts that
 * reach this decode into nothing PostgREST accepts anyway (an array of
 * one-key objects, an object of strings), so a generous bound loses
 * nothing but lets a deep extra key through as aeson would. */
#define JSON_STRICT_MAX_DEPTH 512

static bool is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* What json-c's strict mode still lets through, refused before it
 * parses: outside strings a single quote (json-c takes 'key' as an
 * object key), NaN, Infinity and any other letter but those of true,
 * false, null and exponents, and a '.' without a digit after it (1.);
 * inside strings an unescaped control character (RFC 8259 7, which
 * aeson enforces). */
bool pgr_json_lexically_strict(const char *s, size_t n)
{
    static const char outside[] = " \t\r\n{}[]:,0123456789+-.eEtrufalsn";
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (in_string) {
            if (c < 0x20)
                return false;
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '\0' || strchr(outside, c) == NULL)
            return false;
        else if (c == '.' && !(i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9'))
            return false;
    }
    return true;
}

bool pgr_json_parse_strict(const char *s, size_t n, json_object **out)
{
    return pgr_json_parse_strict_depth(s, n, JSON_STRICT_MAX_DEPTH, out, NULL);
}

bool pgr_json_parse_strict_depth(const char *s, size_t n, int max_levels, json_object **out,
                                 bool *too_deep)
{
    *out = NULL;
    if (too_deep != NULL)
        *too_deep = false;
    /* strict UTF-8 as Data.Text decodes it (aeson reads strings into
     * Text); json-c's own check lets CESU-8 surrogates through */
    if (s == NULL || n > INT_MAX || !pgr_utf8_valid(s, n) || !pgr_json_lexically_strict(s, n))
        return false;
    json_tokener *tok = json_tokener_new_ex(max_levels);
    if (tok == NULL)
        return false;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, s, (int)n);
    size_t used = json_tokener_get_parse_end(tok);
    /* json-c waits for a delimiter after a bare scalar (5, true, null):
     * a NUL tells it the text ended there */
    if (doc == NULL && json_tokener_get_error(tok) == json_tokener_continue) {
        doc = json_tokener_parse_ex(tok, "", 1);
        used = n;
    }
    if (too_deep != NULL)
        *too_deep = json_tokener_get_error(tok) == json_tokener_error_depth;
    bool ok = json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    for (size_t i = used; ok && i < n; i++)
        ok = is_json_space(s[i]);
    if (!ok) {
        json_object_put(doc);
        return false;
    }
    *out = doc;
    return true;
}
