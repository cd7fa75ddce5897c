/* The plan of an /rpc/fn call (PostgREST Plan/CallPlan.hs): the routine
 * chosen among its overloads, how its arguments reach it, and the shape of
 * its result. The read tree over the result is plan->read, whose node reads
 * from the call's CTE (pgr_read_node.source_cte). */
#ifndef PGR_CALL_PLAN_H
#define PGR_CALL_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "plan/plan.h"

/* CTE holding the function's result rows; the read node selects from it
 * (PostgREST SqlFragment.hs sourceCTE). */
#define PGR_CALL_SOURCE "pgrst_source"

typedef enum pgr_call_args {
    PGR_CALL_ARGS_NONE,    /* f() */
    PGR_CALL_ARGS_JSON,    /* named args read from a JSON object (json_to_recordset) */
    PGR_CALL_ARGS_DIRECT,  /* GET / form args: "a" := $n::type, text values */
    PGR_CALL_ARGS_SINGLE   /* the single unnamed param receives the raw body */
} pgr_call_args;

/* The function's result as PostgREST's callPlanToQuery distinguishes it. */
typedef enum pgr_call_result {
    PGR_CALL_RESULT_ROWS,          /* SETOF table/composite, TABLE, OUT params */
    PGR_CALL_RESULT_ROW,           /* a single composite: one object */
    PGR_CALL_RESULT_SCALAR,        /* a single scalar: the bare JSON value */
    PGR_CALL_RESULT_SETOF_SCALAR,  /* SETOF scalar: an array of values */
    PGR_CALL_RESULT_VOID           /* 204 No Content */
} pgr_call_result;

typedef struct pgr_call_plan {
    const pgr_routine *routine;
    pgr_call_args args;
    /* The params given arguments, in the routine's order (JSON args). */
    const pgr_routine_param **params;
    size_t n_params;
    /* $1: the JSON object of named args, or the raw body (single param,
     * bytea as \x hex text so it survives a text-format parameter). */
    const char *arg_value;
    /* DIRECT: the text value of each of params; the VARIADIC param takes
     * all the values given for it */
    const char **arg_values;
    const char **variadic_values;
    size_t n_variadic_values;
    bool args_array;               /* POST body is an array: first object */
    pgr_call_result result;
    bool composite_alias;          /* domain over a composite: (f()).* */
    /* Prefer max-affected under handling=strict (PGRST124 when the result
     * has more rows); any Int64, negative too */
    bool check_max_affected;
    long long max_affected;
} pgr_call_plan;

#endif
