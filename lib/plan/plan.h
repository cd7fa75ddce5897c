/* The plan: the api request resolved against the schema cache
 * (PostgREST's Plan.hs, Plan/ReadPlan.hs). Pure data in the arena. */
#ifndef PGR_PLAN_H
#define PGR_PLAN_H

#include <stdbool.h>

#include "config/config_types.h"
#include "parse/api_request.h"
#include "schema/schema_cache.h"

/* One output item of a read node. */
typedef struct pgr_plan_field {
    const pgr_select_item *item;   /* FIELD item (alias/cast/aggregate) */
    const pgr_column *column;      /* resolved column, NULL for computed */
    const pgr_routine *computed;   /* computed field function, if any */
    const char *output_name;       /* JSON key */
    const char *out_fn;            /* domain -> json representation */
    struct pgr_plan_field *next;
} pgr_plan_field;

typedef struct pgr_read_node pgr_read_node;

/* An embedded resource under a read node. */
typedef struct pgr_embed {
    const pgr_relationship *rel;
    pgr_read_node *node;
    const char *output_name;       /* alias or relation name */
    pgr_join_type join;
    bool spread;
    bool is_to_one;
    bool hidden;                   /* empty embed rel() only joins */
    /* alias of the LATERAL subquery in the parent's FROM: pgrst_<depth>_<n> */
    const char *agg_alias;
    /* url-use-legacy-target-names: embedded params may also name the
     * relation instead of the alias */
    bool legacy_names;
    struct pgr_embed *next;
} pgr_embed;

struct pgr_read_node {
    const pgr_table *table;        /* NULL for a routine call source */
    const char *sql_alias;         /* alias used in SQL for this relation; NULL: its
                                      qualified name (the root, a many-to-many target) */
    const char *name_in_request;   /* relation name as written */
    const char *alias_in_request;  /* alias as written (embeds) */
    /* a filter, order or limit named it by its relation name although it
     * has an alias (url-use-legacy-target-names: deprecated) */
    bool legacy_match;
    bool select_star;              /* select=* (or default) */
    /* the star comes after this field, NULL: first (`select=name,*`
     * outputs name, then every column, as PostgREST's select list) */
    const pgr_plan_field *star_after;
    pgr_plan_field *fields;
    pgr_embed *embeds;
    pgr_filter **filters;          /* AND-ed */
    size_t n_filters;
    pgr_logic_tree **logic;        /* AND-ed trees */
    size_t n_logic;
    /* having=(...): AND-ed trees over the node's aggregates (plan/
     * aggregate_names.h checks their names) */
    pgr_logic_tree **having;
    size_t n_having;
    pgr_order_term *order;
    /* distinct=* / distinct=a,b (plan/distinct_plan.h): SELECT DISTINCT /
     * DISTINCT ON (a, b); with DISTINCT ON, order starts with a, b */
    bool distinct_all;
    const char **distinct_on;
    size_t n_distinct_on;
    long long offset;              /* 0 = none */
    long long limit;               /* -1 = none */
    int depth;
    /* RPC: the node reads FROM this CTE (the function's result) rather
     * than from table, which (if set) only supplies columns and
     * relationships (plan/call_plan.c). */
    const char *source_cte;
    /* a many-to-many embed over source_cte reads its junction's rows from
     * this CTE too (a nested insert's: plan/nested_insert.h) */
    const char *junction_cte;
    /* reads the rows of a CTE (write RETURNING, function result), which
     * are records rather than rows of table */
    bool rows_are_records;
    /* data representations (casts on domains) are looked up here */
    const pgr_schema_cache *schema;
    /* embedded nodes: the parent and the embed that holds this node */
    const pgr_read_node *parent;
    const pgr_embed *embed;
};

typedef enum pgr_output {
    PGR_OUT_JSON,        /* json array */
    PGR_OUT_OBJECT,      /* vnd.pgrst.object+json */
    PGR_OUT_CSV,
    PGR_OUT_GEOJSON,
    PGR_OUT_CUSTOM,      /* a media handler (plan->handler) */
    PGR_OUT_PLAN,
    PGR_OUT_NONE,        /* return=minimal (HEAD keeps its media: only the response drops the body) */
    PGR_OUT_NDJSON       /* application/x-ndjson: one JSON object per line (pgrest's own) */
} pgr_output;

struct pgr_mutate_plan;   /* plan/mutate_plan.h */
struct pgr_call_plan;     /* plan/call_plan.h */

struct pgrest_query_plan {
    const pgrest_api_request *api;
    pgr_schema_cache *schema;      /* reference held by the arena */
    pgr_action action;
    const pgr_table *table;
    pgr_read_node *read;
    pgr_output output;
    const char *content_type;      /* response Content-Type */
    bool nulls_stripped;
    /* PGR_OUT_CUSTOM: the aggregate (or domain cast) producing the body */
    const pgr_media_handler *handler;
    /* ... applied to a single scalar function result: no aggregate */
    bool handler_on_scalar;
    /* the body column is bytea (hex text): the response carries the bytes */
    bool body_bytes;
    /* Accept: application/vnd.pgrst.plan: EXPLAIN the main statement
     * (PostgREST Statements.hs explainF); output/handler describe the
     * media type the plan is for */
    bool explain;
    bool explain_text;                 /* FORMAT TEXT, else JSON */
    const char *explain_options;       /* ", VERBOSE, SETTINGS" or "" */
    bool read_only;                /* READ ONLY transaction */
    bool commit;                   /* end with COMMIT (else ROLLBACK) */
    bool in_batch;                 /* a batch item (docs/batch.md): always an explicit
                                    * transaction, which the batch owns */
    /* a streamed body (engine/import.c): the rows are in
     * pg_temp.pgrst_import, in columns of these names and types (typed
     * rows: a CSV body whose header names the written columns), or else one
     * json object each; always an explicit transaction, which the COPY's
     * statements open */
    bool streamed_body;
    /* ... whose representation streams too (sql/emit_import.h): the write
     * puts each row's JSON in pg_temp.pgrst_returned, read back row by row */
    bool streamed_representation;
    const struct pgr_column *const *streamed_columns;
    size_t n_streamed_columns;
    bool tx_override_applied;      /* Prefer: tx honoured */
    pgr_pref_count count;          /* count that will be computed */
    bool count_applied;
    long long max_rows;            /* db-max-rows, -1 none */
    const char *isolation_level;   /* BEGIN ISOLATION LEVEL, NULL = read committed */
    struct pgr_mutate_plan *mutate;/* CREATE/UPDATE/UPSERT/DELETE */
    struct pgr_call_plan *call;    /* CALL */
    pgr_openapi_version openapi_version; /* GET /: the document's */
};

/* "`relation` to `alias`, ..." for the embeds a filter, order or limit
 * named by relation name although aliased (Plan.hs legacyWarnings), or
 * NULL when none was. */
const char *pgr_plan_legacy_hint(pgrest_arena *a, const pgrest_query_plan *plan);

/* Builds the read tree for a GET/HEAD on a relation. */
struct pgr_config;
/* Whether a transaction ends with COMMIT: db-tx-end, and Prefer: tx only
 * with its *-allow-override values (*override_applied then true). */
bool pgr_plan_commits(const struct pgr_config *cfg, pgr_pref_tx tx, bool *override_applied);

int pgr_plan_read(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, pgrest_query_plan *plan,
                  pgrest_error *err);

/* POST/PATCH/PUT/DELETE on a relation (plan/mutate_plan.c): the target,
 * the read tree, the written columns and the conflict target. Runs before
 * negotiation, as Plan.hs mutateReadPlan does. */
int pgr_plan_mutation(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api, pgrest_query_plan *plan,
                      pgrest_error *err);

/* The second half, after negotiation: return=..., the singular object and
 * RETURNING; may set plan->output to none. */
int pgr_plan_mutation_output(pgrest_arena *a, const pgrest_api_request *api,
                             pgrest_query_plan *plan, pgrest_error *err);

/* /rpc/fn calls (plan/call_plan.c). Runs after negotiation. */
int pgr_plan_call(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, pgrest_query_plan *plan,
                  pgrest_error *err);

/* GET/HEAD / (plan/openapi_plan.c): openapi-mode and the
 * root's own media types; runs instead of pgr_negotiate. */
int pgr_plan_schema_read(pgrest_ctx *ctx, pgrest_arena *a,
                         const pgrest_api_request *api, pgrest_query_plan *plan,
                         pgrest_error *err);

/* What negotiation looks media handlers up for (PostgREST Plan.hs
 * negotiateContent): the relation, or for a routine its table (SETOF
 * table) or itself; handlers bound to it apply only with the default
 * select (hasDefaultSelect). Raw text/plain, text/xml and
 * application/octet-stream outputs exist only through media type domains
 * (handlers), as in PostgREST 12+. */
typedef struct pgr_negotiation_target {
    const char *schema;
    const char *name;
    bool default_select;
} pgr_negotiation_target;

/* Picks the output format from Accept (PostgREST Plan/Negotiate.hs) for
 * the request's relation. */
int pgr_negotiate(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, pgrest_query_plan *plan,
                  pgrest_error *err);
/* ... for any target (plan/call_plan.c); sets output, content_type,
 * nulls_stripped, handler, body_bytes and the explain fields, or fails
 * with PGRST107 (406). */
/* 406 PGRST107 naming every accepted type as MediaType.toMime does. */
int pgr_not_acceptable(pgrest_arena *a, const pgr_media_type *accept, pgrest_error *err);

int pgr_negotiate_for(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api,
                      const pgr_negotiation_target *target,
                      pgrest_query_plan *plan, pgrest_error *err);
/* True when the read plan's root selects only "*" (Plan.hs
 * hasDefaultSelect): the relation's own media handlers apply. */
bool pgr_default_select(const pgr_read_node *root);

#endif
