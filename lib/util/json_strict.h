/* JSON read as aeson's decodeStrict reads it (PostgREST decodes the
 * response.headers GUC and the RAISE SQLSTATE 'PGRST' MESSAGE and DETAIL
 * that way): exactly one RFC 8259 value, whitespace around it allowed,
 * nothing else -- none of json-c's leniencies (single quotes, trailing
 * commas, comments, text after the value). */
#ifndef PGR_JSON_STRICT_H
#define PGR_JSON_STRICT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Parses s[0..n) into *out (the caller releases it with json_object_put;
 * a JSON null is NULL). Returns false when the text is not one JSON
 * value, nests deeper than json-c can follow here, or is not UTF-8. */
bool pgr_json_parse_strict(const char *s, size_t n, json_object **out);

/* The same with a nesting limit: at most max_levels levels as json-c
 * counts them (the innermost scalar is one); *too_deep (may be NULL) tells
 * whether that limit is what refused the text. */
bool pgr_json_parse_strict_depth(const char *s, size_t n, int max_levels, json_object **out,
                                 bool *too_deep);

/* What json-c's strict mode lets through and aeson does not, looked for
 * in one pass before json-c parses: a single quote or a letter outside
 * strings (NaN, Infinity, 'key'), a '.' without a digit after it, a raw
 * control character inside a string. False when s has any. */
bool pgr_json_lexically_strict(const char *s, size_t n);

#endif
