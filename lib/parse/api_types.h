/* The api request's types: what parse_request makes of the HTTP pieces
 * (PostgREST's ApiRequest + ApiRequest/Types.hs). Pure data in the arena;
 * lists are singly linked through `next` in the order they were written.
 * Types only (no api_types.c): the sub-parsers fill them without
 * depending on the request parser itself (api_request.h). */
#ifndef PGR_API_TYPES_H
#define PGR_API_TYPES_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/hs_integer.h"
#include "parse/request.h"
#include "pgrest/pgrest.h"

/* ------------------------------------------------------------ fields */

typedef struct pgr_json_op {
    bool as_text;  /* ->> rather than -> */
    bool is_index; /* integer key: array index */
    const char *key;
    struct pgr_json_op *next;
} pgr_json_op;

/* A column, optionally followed by a JSON path: data->a->>b */
typedef struct pgr_field {
    const char *name;
    pgr_json_op *json_path; /* NULL when plain column */
} pgr_field;

/* Dotted embed path of a parameter: `clients.projects.id=eq.1` has the
 * path {"clients","projects"}; root parameters have n == 0. */
typedef struct pgr_embed_path {
    const char **names;
    size_t n;
} pgr_embed_path;

/* ------------------------------------------------------------ select */

typedef enum pgr_select_kind {
    PGR_SELECT_FIELD,  /* col, alias:col, col::type, data->x, col.sum() */
    PGR_SELECT_STAR,   /* * */
    PGR_SELECT_EMBED,  /* [alias:]rel[!hint][!inner](...) */
    PGR_SELECT_SPREAD  /* ...rel[!hint](...) */
} pgr_select_kind;

typedef enum pgr_join_type {
    PGR_JOIN_DEFAULT = 0,
    PGR_JOIN_LEFT,
    PGR_JOIN_INNER
} pgr_join_type;

typedef struct pgr_select_item {
    pgr_select_kind kind;
    const char *alias;       /* NULL if none */
    /* FIELD */
    pgr_field field;
    const char *cast;        /* col::cast, NULL if none */
    const char *aggregate;   /* "sum","avg","min","max","count" or NULL */
    const char *agg_cast;    /* col.sum()::cast */
    /* EMBED / SPREAD */
    const char *relation;
    const char *hint;        /* !hint, NULL if none */
    pgr_join_type join;
    struct pgr_select_item *children;
    struct pgr_select_item *next;
} pgr_select_item;

/* ------------------------------------------------------------ filters */

typedef enum pgr_operator {
    PGR_OP_EQ, PGR_OP_NEQ, PGR_OP_GT, PGR_OP_GTE, PGR_OP_LT, PGR_OP_LTE,
    PGR_OP_LIKE, PGR_OP_ILIKE, PGR_OP_MATCH, PGR_OP_IMATCH,
    PGR_OP_IN, PGR_OP_IS, PGR_OP_ISDISTINCT,
    PGR_OP_FTS, PGR_OP_PLFTS, PGR_OP_PHFTS, PGR_OP_WFTS,
    PGR_OP_CS, PGR_OP_CD, PGR_OP_OV, PGR_OP_SL, PGR_OP_SR, PGR_OP_NXR,
    PGR_OP_NXL, PGR_OP_ADJ
} pgr_operator;

typedef enum pgr_quantifier {
    PGR_QUANT_NONE = 0,
    PGR_QUANT_ANY,
    PGR_QUANT_ALL
} pgr_quantifier;

typedef enum pgr_is_value {
    PGR_IS_NULL, PGR_IS_NOT_NULL, PGR_IS_TRUE, PGR_IS_FALSE, PGR_IS_UNKNOWN
} pgr_is_value;

typedef struct pgr_op_expr {
    bool negated;          /* not. prefix */
    pgr_operator op;
    pgr_quantifier quant;  /* eq(any) */
    const char *language;  /* fts(english) */
    const char *value;     /* the value text, unquoted/unescaped */
    /* in.(a,b) and quantified {a,b}: elements already unquoted */
    const char **list;
    size_t n_list;
    pgr_is_value is_value;
} pgr_op_expr;

typedef struct pgr_filter {
    pgr_field field;
    pgr_op_expr expr;
} pgr_filter;

typedef struct pgr_logic_tree {
    bool is_leaf;
    pgr_filter filter;                 /* leaf */
    /* leaf `rel.col.op.value`: the embedded resource rel (alias or
     * relation name) has a related row matching filter (pgrest's
     * extension, docs/embed-or.md); NULL for PostgREST's leaves */
    const char *relation;
    bool negated;                      /* node: not.or(...) */
    bool is_or;                        /* node: or / and */
    struct pgr_logic_tree *children;   /* node */
    struct pgr_logic_tree *next;
} pgr_logic_tree;

/* ------------------------------------------------------------ order */

typedef enum pgr_order_dir { PGR_ORDER_DEFAULT = 0, PGR_ORDER_ASC, PGR_ORDER_DESC } pgr_order_dir;
typedef enum pgr_nulls_order { PGR_NULLS_DEFAULT = 0, PGR_NULLS_FIRST, PGR_NULLS_LAST } pgr_nulls_order;

typedef struct pgr_order_term {
    const char *relation;  /* order=rel(col).desc, NULL for plain columns */
    pgr_field field;
    pgr_order_dir dir;
    pgr_nulls_order nulls;
    /* set by the plan (plan/aggregate_names.h): the term names an
     * aggregate of the select by its output name, which PostgREST cannot
     * read (pgrest's extension, docs/aggregates.md) */
    bool by_aggregate;
    struct pgr_order_term *next;
} pgr_order_term;

/* ------------------------------------------------------------ per-path params */

typedef struct pgr_path_filter {
    pgr_embed_path path;
    pgr_filter filter;
    struct pgr_path_filter *next;
} pgr_path_filter;

typedef struct pgr_path_logic {
    pgr_embed_path path;
    pgr_logic_tree *tree;  /* the or=/and= node itself */
    struct pgr_path_logic *next;
} pgr_path_logic;

typedef struct pgr_path_order {
    pgr_embed_path path;
    pgr_order_term *terms;
    struct pgr_path_order *next;
} pgr_path_order;

/* distinct=* or distinct=a,b (pgrest's own, docs/distinct.md): only
 * where PostgREST's filter grammar rejects the value */
typedef struct pgr_path_distinct {
    pgr_embed_path path;
    bool all;                      /* distinct=*: SELECT DISTINCT */
    const char **columns;          /* distinct=a,b: DISTINCT ON (a, b) */
    size_t n_columns;
    struct pgr_path_distinct *next;
} pgr_path_distinct;

/* limit/offset; -1 means "not given" */
typedef struct pgr_path_range {
    pgr_embed_path path;
    long long offset;
    long long limit;
    struct pgr_path_range *next;
    /* the values as read (Haskell Integers, any size) */
    bool has_limit, has_offset;
    pgr_hs_int limit_n, offset_n;
} pgr_path_range;

/* ------------------------------------------------------------ query params */

typedef struct pgr_query_params {
    bool has_select;
    pgr_select_item *select;      /* NULL when absent -> "*" */
    pgr_path_filter *filters;     /* root and embedded filters */
    pgr_path_logic *logic;
    /* having=(...), rel.having=(...): pgrest's extension (docs/
     * aggregates.md), a logic tree over the select's aggregates */
    pgr_path_logic *havings;
    pgr_path_order *orders;
    pgr_path_range *ranges;
    pgr_path_distinct *distincts; /* reads only */
    const char **columns;         /* ?columns=a,b */
    size_t n_columns;
    bool has_columns;
    const char **on_conflict;     /* ?on_conflict=a,b */
    size_t n_on_conflict;
    pgr_kv *rpc_params;           /* params without operator syntax */
    const char *canonical;        /* sorted query string */
} pgr_query_params;

/* ------------------------------------------------------------ preferences */

typedef enum { PGR_PREF_RETURN_NONE = 0, PGR_PREF_RETURN_MINIMAL,
               PGR_PREF_RETURN_HEADERS_ONLY, PGR_PREF_RETURN_REPRESENTATION } pgr_pref_return;
typedef enum { PGR_PREF_COUNT_NONE = 0, PGR_PREF_COUNT_EXACT,
               PGR_PREF_COUNT_PLANNED, PGR_PREF_COUNT_ESTIMATED } pgr_pref_count;
typedef enum { PGR_PREF_RESOLUTION_NONE = 0, PGR_PREF_RESOLUTION_MERGE,
               PGR_PREF_RESOLUTION_IGNORE } pgr_pref_resolution;
typedef enum { PGR_PREF_MISSING_NONE = 0, PGR_PREF_MISSING_DEFAULT,
               PGR_PREF_MISSING_NULL } pgr_pref_missing;
typedef enum { PGR_PREF_TX_NONE = 0, PGR_PREF_TX_COMMIT,
               PGR_PREF_TX_ROLLBACK } pgr_pref_tx;
typedef enum { PGR_PREF_HANDLING_NONE = 0, PGR_PREF_HANDLING_LENIENT,
               PGR_PREF_HANDLING_STRICT } pgr_pref_handling;

typedef struct pgr_preferences {
    pgr_pref_return ret;
    pgr_pref_count count;
    pgr_pref_resolution resolution;
    pgr_pref_missing missing;
    pgr_pref_tx tx;
    pgr_pref_handling handling;
    const char *timezone;     /* NULL if not given */
    long long max_affected;   /* -1 if not given */
    bool has_max_affected;    /* given, as any Int64 (negative too) */
    const char **invalid;     /* unrecognised preference tokens */
    size_t n_invalid;
} pgr_preferences;

/* ------------------------------------------------------------ media types */

typedef enum pgr_media_kind {
    PGR_MEDIA_ANY,              /* * / * */
    PGR_MEDIA_JSON,             /* application/json */
    PGR_MEDIA_OBJECT,           /* application/vnd.pgrst.object+json */
    PGR_MEDIA_ARRAY,            /* application/vnd.pgrst.array+json */
    PGR_MEDIA_CSV,              /* text/csv */
    PGR_MEDIA_TEXT,             /* text/plain */
    PGR_MEDIA_XML,              /* text/xml */
    PGR_MEDIA_OCTET,            /* application/octet-stream */
    PGR_MEDIA_GEOJSON,          /* application/geo+json */
    PGR_MEDIA_OPENAPI,          /* application/openapi+json */
    PGR_MEDIA_PLAN,             /* application/vnd.pgrst.plan[+json|+text] */
    PGR_MEDIA_URLENCODED,       /* application/x-www-form-urlencoded */
    PGR_MEDIA_NDJSON,           /* application/x-ndjson (pgrest's own output type) */
    PGR_MEDIA_OTHER             /* anything else, kept as text */
} pgr_media_kind;

typedef struct pgr_media_type {
    pgr_media_kind kind;
    const char *text;           /* "type/subtype" as written, lower-cased */
    bool nulls_stripped;        /* ;nulls=stripped */
    const char *plan_for;       /* vnd.pgrst.plan;for="..." */
    const char *plan_options;   /* vnd.pgrst.plan;options=... */
    const char *openapi_version;/* openapi+json;version=3.1 (pgrest's, docs/openapi.md) */
    bool plan_text;             /* vnd.pgrst.plan+text (or bare plan) */
    double q;
    struct pgr_media_type *next;
} pgr_media_type;

/* ------------------------------------------------------------ api request */

typedef enum pgr_target_kind {
    PGR_TARGET_RELATION,
    PGR_TARGET_ROUTINE,
    PGR_TARGET_ROOT
} pgr_target_kind;

typedef enum pgr_action {
    PGR_ACTION_READ,        /* GET/HEAD relation */
    PGR_ACTION_CREATE,      /* POST relation */
    PGR_ACTION_UPDATE,      /* PATCH */
    PGR_ACTION_UPSERT,      /* PUT (single-row upsert) */
    PGR_ACTION_DELETE,      /* DELETE */
    PGR_ACTION_CALL,        /* GET/HEAD/POST /rpc/fn */
    PGR_ACTION_INFO,        /* OPTIONS */
    PGR_ACTION_SCHEMA_READ  /* GET/HEAD / */
} pgr_action;

struct pgrest_api_request {
    const pgrest_request *raw;
    const char *method;
    bool is_head;
    pgr_action action;
    pgr_target_kind target;
    const char *schema;           /* selected schema */
    bool negotiated_by_profile;   /* Accept-/Content-Profile was given */
    const char *name;             /* relation or routine name; NULL for root */
    const char *path;             /* request.path: the decoded path */

    pgr_query_params qp;
    pgr_preferences prefs;

    /* range: Range header intersected with root limit/offset */
    long long range_offset;       /* >= 0 */
    long long range_limit;        /* -1 = unbounded */
    bool range_from_header;

    pgr_media_type *accept;       /* parsed Accept, q-ordered; NULL = any */
    pgr_media_type *content_type; /* parsed Content-Type, NULL if absent */

    /* payload (POST/PATCH/PUT): raw body and its parsed form */
    const char *body;
    size_t body_len;
    bool has_body;
    const char *payload_json;     /* body normalized to a JSON text */
    const char **payload_keys;    /* keys of the object(s), if JSON */
    size_t n_payload_keys;
    bool payload_is_array;
    /* ?columns= with a JSON body: payload_json is the body unparsed
     * (Payload.hs RawJSON), PostgreSQL reads it (see pgr_plan's NUL check) */
    bool payload_raw;

    pgr_kv *cookies;              /* parsed Cookie header */

    /* authentication result (filled by the auth step) */
    const char *role;             /* role to SET for the transaction */
    const char *jwt_claims;       /* JSON text, "{}" if anonymous... */
    bool authenticated;
};

#endif
