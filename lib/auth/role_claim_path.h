/* jwt-role-claim-key paths (PostgREST Config.hs parseRoleClaimKey): the
 * RFC 9535 subset of Config/JSPath.hs when the key starts with '$', else
 * the deprecated syntax of Config/DeprecatedJSPath.hs. */
#ifndef PGR_ROLE_CLAIM_PATH_H
#define PGR_ROLE_CLAIM_PATH_H

#include <json-c/json.h>
#include <regex.h>
#include <stdbool.h>

#include "util/arena.h"

typedef enum jsp_kind { JSP_KEY, JSP_INDEX, JSP_WILDCARD, JSP_FILTER } jsp_kind;

typedef enum jsp_op {
    JSP_EQ, JSP_NE, JSP_PREFIX, JSP_SUFFIX, JSP_CONTAINS, JSP_SEARCH, JSP_MATCH
} jsp_op;

typedef struct jsp_seg {
    jsp_kind kind;
    const char *key;
    long long index;
    jsp_op op;
    const char *lit;
    regex_t *re;              /* search / match */
    bool arrays_only;         /* a deprecated-syntax filter: arrays only */
    struct jsp_seg *next;
} jsp_seg;

/* The path's segments, allocated in a; *ok is false (and the result
 * meaningless) when PostgREST's parser would refuse the path or a runs out
 * of memory (pgr_arena_exhausted tells which). */
jsp_seg *pgr_claim_path_parse(pgrest_arena *a, const char *path, bool *ok);

/* Whether the path selects a value in node; *out is that value (NULL for a
 * JSON null). */
bool pgr_claim_path_select(json_object *node, const jsp_seg *s, json_object **out);

#endif
