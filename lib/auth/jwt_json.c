/* The claims' JSON as aeson reads and writes it: one strict JSON object
 * read at any depth, integers of any size kept, and the canonical text of
 * request.jwt.claims (keys sorted, numbers as aeson prints them). */
#include "auth/jwt_internal.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

#include "util/json_strict.h"
#include "util/number.h"

/* jansson's JSON_PARSER_MAX_DEPTH, which libjwt parses tokens with */
#define JWT_JSON_MAX_DEPTH 2048

static void json_put_cb(void *obj)
{
    json_object_put(obj);
}

/* Parses n bytes as one JSON object; the object is released with the
 * arena. NULL if the text is not exactly one JSON object. */
json_object *pgr_jwt_parse_object(pgrest_arena *a, const char *s, size_t n)
{
    /* aeson's RFC 8259, without json-c's leniencies ('key', NaN, 1.) */
    if (n > INT32_MAX || !pgr_json_lexically_strict(s, n))
        return NULL;
    /* aeson (PostgREST) reads claims at any depth; json-c's default is 32
     * levels. Deeper than jansson's 2048 libjwt has refused the token
     * already, so that bound takes nothing PostgREST would accept. */
    json_tokener *tok = json_tokener_new_ex(JWT_JSON_MAX_DEPTH + 1);
    if (tok == NULL)
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *obj = json_tokener_parse_ex(tok, s, (int)n);
    bool ok = json_tokener_get_error(tok) == json_tokener_success;
    size_t end = ok ? json_tokener_get_parse_end(tok) : 0;
    json_tokener_free(tok);
    while (ok && end < n && is_space(s[end]))
        end++;
    ok = ok && end == n;
    if (!ok || !json_object_is_type(obj, json_type_object) ||
        !pgr_arena_on_free(a, json_put_cb, obj)) {
        json_object_put(obj);
        return NULL;
    }
    return obj;
}

/* The string member key of obj, or NULL. */
const char *pgr_jwt_json_str(json_object *obj, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* Whether the integer literal's digits exceed what json-c keeps exactly
 * (uint64 for a positive, int64 for a negative one). */
static bool beyond_json_c(const char *digits, size_t n, bool negative)
{
    const char *limit = negative ? "9223372036854775808" : "18446744073709551615";
    size_t m = strlen(limit);
    while (n > 1 && *digits == '0') {
        digits++;
        n--;
    }
    return n > m || (n == m && memcmp(digits, limit, m) > 0);
}

/* The claims text with every integer literal json-c would saturate
 * written as <digits>e0: json-c then keeps it as a double with its
 * literal, which put_aeson_number prints as the integer Aeson reads. */
static const char *widen_huge_integers(pgrest_arena *a, const char *text, size_t len,
                                       size_t *out_len)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, len + 16);
    bool in_string = false, changed = false;
    for (size_t i = 0; i < len;) {
        char c = text[i];
        if (in_string || c == '"') {
            if (in_string && c == '\\' && i + 1 < len) {
                pgr_sb_putn(&sb, text + i, 2);
                i += 2;
                continue;
            }
            if (c == '"')
                in_string = !in_string;
            pgr_sb_putc(&sb, c);
            i++;
            continue;
        }
        bool negative = c == '-';
        size_t d = negative ? i + 1 : i;
        size_t digits_end = d;
        while (digits_end < len && text[digits_end] >= '0' && text[digits_end] <= '9')
            digits_end++;
        if (digits_end == d) {
            pgr_sb_putc(&sb, c);
            i++;
            continue;
        }
        /* the whole number token: fraction and exponent included */
        size_t end = digits_end;
        while (end < len && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.' ||
                             text[end] == 'e' || text[end] == 'E' || text[end] == '+' ||
                             text[end] == '-'))
            end++;
        pgr_sb_putn(&sb, text + i, end - i);
        if (end == digits_end && beyond_json_c(text + d, digits_end - d, negative)) {
            pgr_sb_puts(&sb, "e0");
            changed = true;
        }
        i = end;
    }
    size_t n = sb.len;
    const char *out = pgr_sb_finish(&sb);
    if (out == NULL || !changed) {
        *out_len = len;
        return out == NULL ? NULL : text;
    }
    *out_len = n;
    return out;
}

/* The payload as claims: one JSON object (Jwt.hs decodeClaims). */
json_object *pgr_jwt_decode_claims(pgrest_arena *a, const char *s, size_t n)
{
    size_t len = 0, wide_len = 0;
    unsigned char *bytes = pgr_jwt_b64_decode(a, s, n, &len);
    const char *wide = bytes == NULL ? NULL
                                     : widen_huge_integers(a, (const char *)bytes, len, &wide_len);
    return wide == NULL ? NULL : pgr_jwt_parse_object(a, wide, wide_len);
}

/* ------------------------------------------------------------ claims JSON */

static int key_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Objects with keys sorted, as Aeson encodes its KeyMap. */
static void put_json_object(pgr_sb *sb, json_object *obj)
{
    size_t n = (size_t)json_object_object_length(obj);
    const char **keys = PGR_NEW_ARRAY(sb->arena, const char *, n + 1);
    if (keys == NULL) {
        sb->failed = true;
        return;
    }
    size_t i = 0;
    json_object_object_foreach(obj, key, val) {
        (void)val;
        keys[i++] = key;
    }
    qsort(keys, n, sizeof keys[0], key_cmp);
    pgr_sb_putc(sb, '{');
    for (i = 0; i < n; i++) {
        if (i > 0)
            pgr_sb_putc(sb, ',');
        pgr_sb_put_json_string(sb, keys[i]);
        pgr_sb_putc(sb, ':');
        pgr_jwt_put_json(sb, json_object_object_get(obj, keys[i]));
    }
    pgr_sb_putc(sb, '}');
}

/* A number as Aeson encodes the Scientific it parses the literal to.
 * json-c keeps a parsed double's literal, so the token's text is read;
 * a text that is no JSON number (none parses so) is written as it is. */
static void put_aeson_number(pgr_sb *sb, const char *lit)
{
    const char *aeson = pgr_aeson_number(sb->arena, lit);
    if (aeson == NULL && pgr_arena_exhausted(sb->arena))
        sb->failed = true;  /* the builder's sticky error, not a wrong number */
    else
        pgr_sb_puts(sb, aeson != NULL ? aeson : lit);
}

void pgr_jwt_put_json(pgr_sb *sb, json_object *v)
{
    if (json_object_is_type(v, json_type_object)) {
        put_json_object(sb, v);
    } else if (json_object_is_type(v, json_type_array)) {
        size_t n = json_object_array_length(v);
        pgr_sb_putc(sb, '[');
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                pgr_sb_putc(sb, ',');
            pgr_jwt_put_json(sb, json_object_array_get_idx(v, i));
        }
        pgr_sb_putc(sb, ']');
    } else if (json_object_is_type(v, json_type_string)) {
        pgr_sb_put_json_stringn(sb, json_object_get_string(v),
                                (size_t)json_object_get_string_len(v));
    } else if (json_object_is_type(v, json_type_double)) {
        put_aeson_number(sb, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    } else {
        pgr_sb_puts(sb, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    }
}

/* The claims with "role" set to the resolved role (Auth.hs parseClaims). */
const char *pgr_jwt_claims_text(pgrest_arena *a, json_object *claims, const char *role)
{
    json_object *r = json_object_new_string(role);
    if (r == NULL || json_object_object_add(claims, "role", r) != 0)
        return NULL;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 256);
    pgr_jwt_put_json(&sb, claims);
    return pgr_sb_finish(&sb);
}
