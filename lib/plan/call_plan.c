/* RPC calls (PostgREST Plan/CallPlan.hs and SchemaCache findProc): pick
 * the overload whose parameter names match the arguments, collect the
 * arguments (query string, JSON body, form body or the raw body for a
 * single unnamed parameter), negotiate the output for the function's
 * result, and build the read tree applied to the result rows. */
#include "plan/call_plan.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stage_view.h"
#include "parse/media_type.h"
#include "parse/query_string.h"
#include "plan/embed.h"
#include "plan/fuzzyset.h"
#include "plan/strict_preferences.h"
#include "schema/routine_order.h"
#include "util/error.h"
#include "util/strbuf.h"

/* What the request offers the function: argument names (sorted, unique,
 * as PostgREST's Set) and where the values come from. */
typedef struct call_input {
    bool is_post;                  /* PostgREST's isInvPost */
    pgr_media_kind ctype;          /* POST body type (JSON when absent) */
    const char **keys;
    size_t n_keys;
    const pgr_kv *pairs;           /* GET query args or form fields */
    const char *json_body;         /* POST JSON text ("{}" when empty) */
    bool json_array;               /* ... and it is an array */
} call_input;

/* ------------------------------------------------------------ arguments */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts and deduplicates keys[0..n) in place; returns the new count. */
static size_t sort_unique(const char **keys, size_t n)
{
    if (n == 0)
        return 0;
    qsort(keys, n, sizeof *keys, cmp_str);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (strcmp(keys[i], keys[k - 1]) != 0)
            keys[k++] = keys[i];
    return k;
}

static int keys_from_pairs(pgrest_arena *a, call_input *in, pgrest_error *err)
{
    size_t n = 0;
    for (const pgr_kv *p = in->pairs; p; p = p->next)
        n++;
    in->keys = PGR_NEW_ARRAY(a, const char *, n + 1);
    if (in->keys == NULL)
        return pgr_error_oom(err);
    n = 0;
    for (const pgr_kv *p = in->pairs; p; p = p->next)
        in->keys[n++] = p->name;
    in->n_keys = sort_unique(in->keys, n);
    return PGREST_OK;
}

static void free_json(void *o)
{
    json_object_put(o);
}

static size_t count_keys(json_object *o)
{
    size_t n = 0;
    if (json_object_is_type(o, json_type_object))
        return (size_t)json_object_object_length(o);
    if (json_object_is_type(o, json_type_array))
        for (size_t i = 0; i < json_object_array_length(o); i++)
            n += count_keys(json_object_array_get_idx(o, i));
    return n;
}

/* Keys of the object, or of every object of an array (PostgREST's
 * payload keys); the call itself reads only the first object. */
static void add_keys(pgrest_arena *a, json_object *o, call_input *in)
{
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            add_keys(a, json_object_array_get_idx(o, i), in);
        return;
    }
    if (!json_object_is_type(o, json_type_object))
        return;
    json_object_object_foreach(o, k, v) {
        (void)v;
        const char *key = pgr_strdup(a, k);
        if (key != NULL)
            in->keys[in->n_keys++] = key;
    }
}

static int invalid_json(pgrest_error *err)
{
    return pgr_error(err, 400, "PGRST102", "Empty or invalid json", NULL, NULL);
}

/* ?columns=: the body goes to PostgreSQL unparsed (Payload.hs RawJSON),
 * which validates it (an invalid body is its 22P02, a NUL byte is refused
 * once planned, pgr_plan); the arguments are the columns named, and the
 * body counts as one object when it starts with '{' (SqlFragment.hs
 * fromJsonBodyF isJsonObject), else as an array. */
static int raw_json_input(pgrest_arena *a, const pgrest_api_request *api,
                          call_input *in, pgrest_error *err)
{
    size_t i = 0;
    while (i < api->body_len && strchr(" \t\n\r", api->body[i]) != NULL && api->body[i] != '\0')
        i++;
    in->json_array = !(i < api->body_len && api->body[i] == '{');
    in->keys = PGR_NEW_ARRAY(a, const char *, api->qp.n_columns + 1);
    if (in->keys == NULL)
        return pgr_error_oom(err);
    for (size_t k = 0; k < api->qp.n_columns; k++)
        in->keys[in->n_keys++] = api->qp.columns[k];
    in->n_keys = sort_unique(in->keys, in->n_keys);
    return PGREST_OK;
}

static int json_input(pgrest_arena *a, const pgrest_api_request *api,
                      call_input *in, pgrest_error *err)
{
    /* the parse stage has validated and normalised the body (a scalar
     * is the empty array, CSV its rows as JSON) */
    bool empty = api->body == NULL || api->body_len == 0;
    in->json_body = api->payload_json ? api->payload_json
                  : empty ? "{}" : pgr_strndup(a, api->body, api->body_len);
    if (in->json_body == NULL)
        return pgr_error_oom(err);
    if (api->payload_json == NULL && strlen(in->json_body) != (empty ? 2 : api->body_len))
        return invalid_json(err);
    /* the parse stage read the keys already (payloadAttributes: every
     * object of an array has the same): parsing the body again would hold
     * its whole json-c document, and with json-c's default depth (32)
     * rather than request-max-json-depth */
    if (api->payload_raw)
        return raw_json_input(a, api, in, err);
    if (api->payload_json != NULL && !api->qp.has_columns) {
        in->json_array = api->payload_is_array;
        in->keys = PGR_NEW_ARRAY(a, const char *, api->n_payload_keys + 1);
        if (in->keys == NULL)
            return pgr_error_oom(err);
        for (size_t i = 0; i < api->n_payload_keys; i++)
            in->keys[in->n_keys++] = api->payload_keys[i];
        return PGREST_OK;
    }
    json_tokener *tok = json_tokener_new();
    if (tok == NULL)
        return pgr_error_oom(err);
    json_object *o = json_tokener_parse_ex(tok, in->json_body,
                                           (int)strlen(in->json_body));
    bool ok = o != NULL && json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    if (o != NULL && !pgr_arena_on_free(a, free_json, o)) {
        json_object_put(o);
        return pgr_error_oom(err);
    }
    if (!ok)
        return invalid_json(err);
    /* Payload.hs payloadAttributes: a JSON scalar counts as an empty
     * array, no arguments (add_keys finds none) */
    in->json_array = json_object_is_type(o, json_type_array);
    if (api->qp.has_columns) {
        /* Payload.hs getPayload: with ?columns the arguments are the
         * columns named (RawJSON), the body's other keys are not read */
        in->keys = PGR_NEW_ARRAY(a, const char *, api->qp.n_columns + 1);
        if (in->keys == NULL)
            return pgr_error_oom(err);
        for (size_t i = 0; i < api->qp.n_columns; i++)
            in->keys[in->n_keys++] = api->qp.columns[i];
    } else {
        in->keys = PGR_NEW_ARRAY(a, const char *, count_keys(o) + 1);
        if (in->keys == NULL)
            return pgr_error_oom(err);
        add_keys(a, o, in);
    }
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    in->n_keys = sort_unique(in->keys, in->n_keys);
    return PGREST_OK;
}

/* ApiRequest payload for POST /rpc: JSON (also without Content-Type),
 * form fields as arguments, or a raw body for a single unnamed param. */
static int post_input(pgrest_arena *a, const pgrest_api_request *api,
                      call_input *in, pgrest_error *err)
{
    const pgr_media_type *ct = api->content_type;
    in->ctype = ct ? ct->kind : PGR_MEDIA_JSON;
    switch (in->ctype) {
    case PGR_MEDIA_JSON:
    case PGR_MEDIA_CSV:
        return json_input(a, api, in, err);
    case PGR_MEDIA_URLENCODED:
        /* the body's bytes, a raw NUL included (parseSimpleQuery) */
        in->pairs = pgr_query_string_decode_n(a, api->body ? api->body : "", api->body_len);
        return keys_from_pairs(a, in, err);
    case PGR_MEDIA_TEXT:
    case PGR_MEDIA_XML:
    case PGR_MEDIA_OCTET:
        return PGREST_OK;
    default:
        return pgr_errorf(err, a, 400, "PGRST102", NULL, NULL,
                          "Content-Type not acceptable: %s", pgr_media_type_mime(a, ct));
    }
}

static int read_input(pgrest_arena *a, const pgrest_api_request *api,
                      call_input *in, pgrest_error *err)
{
    memset(in, 0, sizeof *in);
    in->ctype = PGR_MEDIA_JSON;
    if (strcmp(api->method, "POST") == 0) {
        in->is_post = true;
        return post_input(a, api, in, err);
    }
    in->pairs = api->qp.rpc_params;
    return keys_from_pairs(a, in, err);
}

/* ------------------------------------------------------------ overloads */

static bool has_key(const call_input *in, const char *name)
{
    if (in->n_keys == 0)
        return false;
    return bsearch(&name, in->keys, in->n_keys, sizeof *in->keys, cmp_str) != NULL;
}

static bool is_raw_body(const call_input *in)
{
    return in->is_post && (in->ctype == PGR_MEDIA_TEXT ||
                           in->ctype == PGR_MEDIA_XML ||
                           in->ctype == PGR_MEDIA_OCTET);
}

/* findProc matchesParams: every required param given, every argument a
 * param; a function without params only for no arguments (and not for a
 * raw POST body). */
static bool matches_params(const pgr_routine *r, const call_input *in)
{
    if (r->n_params == 0)
        return in->n_keys == 0 && !is_raw_body(in);
    size_t given = 0;
    for (size_t i = 0; i < r->n_params; i++) {
        bool has = has_key(in, r->params[i].name);
        if (r->params[i].required && !has)
            return false;
        given += has;
    }
    return given == in->n_keys;
}

/* findProc hasSingleUnnamedParam: the fallback for a POST body. */
static bool single_unnamed_param(const pgr_routine *r, const call_input *in)
{
    if (!in->is_post || r->n_params != 1 || r->params[0].name[0] != '\0')
        return false;
    const char *t = r->params[0].type;
    switch (in->ctype) {
    case PGR_MEDIA_JSON:
        return strcmp(t, "json") == 0 || strcmp(t, "jsonb") == 0;
    case PGR_MEDIA_TEXT:
        return strcmp(t, "text") == 0;
    case PGR_MEDIA_XML:
        return strcmp(t, "xml") == 0;
    case PGR_MEDIA_OCTET:
        return strcmp(t, "bytea") == 0;
    default:
        return false;
    }
}

static const char *joined_keys(pgrest_arena *a, const call_input *in)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    for (size_t i = 0; i < in->n_keys; i++) {
        if (i > 0)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, in->keys[i]);
    }
    return pgr_sb_finish(&sb);
}

/* Error.hs listToText: "(a, b)" of the names in sorted order. */
static const char *param_list(pgrest_arena *a, const pgr_routine *r)
{
    const char **names = PGR_NEW_ARRAY(a, const char *, r->n_params + 1);
    if (names == NULL)
        return NULL;
    for (size_t i = 0; i < r->n_params; i++)
        names[i] = r->params[i].name;
    qsort(names, r->n_params, sizeof *names, cmp_str);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_putc(&sb, '(');
    for (size_t i = 0; i < r->n_params; i++) {
        if (i > 0)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, names[i]);
    }
    pgr_sb_putc(&sb, ')');
    return pgr_sb_finish(&sb);
}

/* Error.hs getFuzzyHint: Fuzzy.getOne (0.33) for parameter lists,
 * getOneWithMinScore 0.75 for function names. */
#define PARAMS_MIN_SCORE 0.33
#define PROCEDURE_MIN_SCORE 0.75

/* Error.hs noRpcHint: with overloads, the closest parameter list; else the
 * closest function name in the schema. */
static const char *no_rpc_hint(pgrest_arena *a, const pgr_schema_cache *sc,
                               const pgrest_api_request *api,
                               const pgr_routine *const *ovs, size_t n_ovs,
                               const call_input *in)
{
    size_t n = n_ovs > 0 ? n_ovs : sc->n_routines;
    const char **cands = PGR_NEW_ARRAY(a, const char *, n + 1);
    if (cands == NULL)
        return NULL;
    if (n_ovs > 0) {
        for (size_t i = 0; i < n_ovs; i++)
            cands[i] = param_list(a, ovs[i]);
        const char *want = pgr_asprintf(a, "(%s)", joined_keys(a, in));
        double score;
        const char *best = want ? pgr_fuzzyset_best(a, want, cands, n_ovs, PARAMS_MIN_SCORE, &score)
                                : NULL;
        return best ? pgr_asprintf(a, "Perhaps you meant to call the function %s.%s%s",
                                   api->schema, api->name, best)
                    : NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < sc->n_routines; i++)
        if (strcmp(sc->routines[i].schema, api->schema) == 0)
            cands[k++] = sc->routines[i].name;
    double score;
    const char *best = pgr_fuzzyset_best(a, api->name, cands, k, PROCEDURE_MIN_SCORE, &score);
    return best ? pgr_asprintf(a, "Perhaps you meant to call the function %s.%s",
                               api->schema, best)
                : NULL;
}

/* Error.hs NoRpc (PGRST202). */
static int no_rpc(pgrest_arena *a, const pgr_schema_cache *sc,
                  const pgrest_api_request *api, const pgr_routine *const *ovs,
                  size_t n_ovs, const call_input *in, pgrest_error *err)
{
    const char *keys = joined_keys(a, in);
    const char *with = in->n_keys == 0
                           ? " without parameters"
                           : pgr_asprintf(a, " with parameter%s %s",
                                          in->n_keys > 1 ? "s" : "", keys);
    const char *searched = with;
    const char *msg_args = in->n_keys == 0 ? " without parameters"
                                           : pgr_asprintf(a, "(%s)", keys);
    const char *hint = NULL;
    if (is_raw_body(in)) {
        searched = in->ctype == PGR_MEDIA_TEXT  ? " with a single unnamed text parameter"
                   : in->ctype == PGR_MEDIA_XML ? " with a single unnamed xml parameter"
                                                : " with a single unnamed bytea parameter";
        msg_args = "";
    } else {
        if (in->is_post && in->ctype == PGR_MEDIA_JSON)
            searched = pgr_asprintf(a, "%s or with a single unnamed json/jsonb parameter",
                                    with);
        hint = no_rpc_hint(a, sc, api, ovs, n_ovs, in);
    }
    pgrest_error e = {0};
    pgr_errorf(&e, a, 404, "PGRST202", NULL, hint,
               "Could not find the function %s.%s%s in the schema cache",
               api->schema, api->name, msg_args);
    e.details = pgr_asprintf(a, "Searched for the function %s.%s%s, but no matches were found in the schema cache.",
                             api->schema, api->name, searched);
    *err = e;
    return PGREST_ERR_REQUEST;
}

/* Error.hs AmbiguousRpc (PGRST203): "s.f(a => int, b => int), ...". */
static int ambiguous_rpc(pgrest_arena *a, const pgr_routine *const *cands,
                         size_t n, pgrest_error *err)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 128);
    pgr_sb_puts(&sb, "Could not choose the best candidate function between: ");
    for (size_t i = 0; i < n; i++) {
        const pgr_routine *r = cands[i];
        if (i > 0)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, r->schema);
        pgr_sb_putc(&sb, '.');
        pgr_sb_puts(&sb, r->name);
        pgr_sb_putc(&sb, '(');
        for (size_t j = 0; j < r->n_params; j++) {
            if (j > 0)
                pgr_sb_puts(&sb, ", ");
            pgr_sb_puts(&sb, r->params[j].name);
            pgr_sb_puts(&sb, " => ");
            pgr_sb_puts(&sb, r->params[j].type);
        }
        pgr_sb_putc(&sb, ')');
    }
    return pgr_error(err, 300, "PGRST203", pgr_sb_finish(&sb), NULL,
                     "Try renaming the parameters or the function itself in the database so function overloading can be resolved");
}

/* decodeFuncs keeps each name's overloads sorted (Routine's Ord), which
 * orders PGRST203's candidates. */
static int cmp_routine(const void *xp, const void *yp)
{
    return pgr_routine_cmp(*(const pgr_routine *const *)xp, *(const pgr_routine *const *)yp);
}

/* findProc: named matches first; the single-unnamed-param fallback only
 * when nothing matches by name. */
static int find_routine(pgrest_arena *a, const pgr_schema_cache *sc,
                        const pgrest_api_request *api, const call_input *in,
                        const pgr_routine **out, pgrest_error *err)
{
    size_t n = pgr_find_routines(sc, api->schema, api->name, NULL, 0);
    const pgr_routine **ovs = PGR_NEW_ARRAY(a, const pgr_routine *, n + 1);
    const pgr_routine **named = PGR_NEW_ARRAY(a, const pgr_routine *, n + 1);
    const pgr_routine **unnamed = PGR_NEW_ARRAY(a, const pgr_routine *, n + 1);
    if (ovs == NULL || named == NULL || unnamed == NULL)
        return pgr_error_oom(err);
    n = pgr_find_routines(sc, api->schema, api->name, ovs, n);
    qsort(ovs, n, sizeof *ovs, cmp_routine);
    size_t nn = 0, nu = 0;
    for (size_t i = 0; i < n; i++) {
        if (matches_params(ovs[i], in))
            named[nn++] = ovs[i];
        else if (single_unnamed_param(ovs[i], in))
            unnamed[nu++] = ovs[i];
    }
    if (nn == 1 || (nn == 0 && nu == 1)) {
        *out = nn == 1 ? named[0] : unnamed[0];
        return PGREST_OK;
    }
    if (nn > 1)
        return ambiguous_rpc(a, named, nn, err);
    if (nu > 1)
        return ambiguous_rpc(a, unnamed, nu, err);
    return no_rpc(a, sc, api, ovs, n, in, err);
}

/* ------------------------------------------------------------ call args */

static const char *bytea_hex(pgrest_arena *a, const char *body, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *s = pgr_alloc(a, 2 * n + 3);
    if (s == NULL)
        return NULL;
    s[0] = '\\';
    s[1] = 'x';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)body[i];
        s[2 + 2 * i] = digits[c >> 4];
        s[3 + 2 * i] = digits[c & 15];
    }
    return s;
}

/* GET / form arguments (CallPlan.hs toRpcParams): the last value of a
 * repeated name. */
static const char *last_value(const pgr_kv *pairs, const char *name)
{
    const char *last = "";
    for (const pgr_kv *kv = pairs; kv; kv = kv->next)
        if (strcmp(kv->name, name) == 0)
            last = kv->value ? kv->value : "";
    return last;
}

/* ... and all the values, in order, of the VARIADIC param. */
static int variadic_values(pgrest_arena *a, const pgr_kv *pairs,
                           const char *name, pgr_call_plan *cp, pgrest_error *err)
{
    size_t n = 0;
    for (const pgr_kv *kv = pairs; kv; kv = kv->next)
        n += strcmp(kv->name, name) == 0;
    cp->variadic_values = PGR_NEW_ARRAY(a, const char *, n + 1);
    if (cp->variadic_values == NULL)
        return pgr_error_oom(err);
    for (const pgr_kv *kv = pairs; kv; kv = kv->next)
        if (strcmp(kv->name, name) == 0)
            cp->variadic_values[cp->n_variadic_values++] = kv->value ? kv->value : "";
    return PGREST_OK;
}

/* An argument holding a NUL byte: PostgREST sends every argument as a
 * text-like parameter (QueryBuilder.hs fmtArgs: HE.unknown, HE.text for
 * VARIADIC; singleParameter for a raw body), and PostgreSQL refuses NUL in
 * text (22021). Checked once the function is found: a call that matches
 * none is PGRST202 first. */
static int nul_argument_error(pgrest_error *err)
{
    return pgr_error(err, 400, "22021",
                     "invalid byte sequence for encoding \"UTF8\": 0x00", NULL, NULL);
}

static bool holds_nul(const char *value, size_t len)
{
    return value != NULL && len > 0 && memchr(value, '\0', len) != NULL;
}

/* Whether the value the call passes for name holds a NUL: the last one
 * (last_value), or any of them for the VARIADIC param. */
static bool argument_holds_nul(const pgr_kv *pairs, const char *name, bool variadic)
{
    const pgr_kv *last = NULL;
    for (const pgr_kv *kv = pairs; kv; kv = kv->next) {
        if (strcmp(kv->name, name) != 0)
            continue;
        if (variadic && holds_nul(kv->value, kv->value_len))
            return true;
        last = kv;
    }
    return last != NULL && holds_nul(last->value, last->value_len);
}

static int plan_args(pgrest_arena *a, const pgrest_api_request *api,
                     const call_input *in, pgr_call_plan *cp,
                     pgrest_error *err)
{
    const pgr_routine *r = cp->routine;
    if (r->n_params == 1 && r->params[0].name[0] == '\0') {
        cp->args = PGR_CALL_ARGS_SINGLE;
        if ((in->ctype == PGR_MEDIA_TEXT || in->ctype == PGR_MEDIA_XML) &&
            holds_nul(api->body, api->body_len))
            return nul_argument_error(err);
        if (in->ctype == PGR_MEDIA_OCTET)
            cp->arg_value = bytea_hex(a, api->body ? api->body : "", api->body_len);
        else if (in->ctype == PGR_MEDIA_JSON)
            cp->arg_value = in->json_body;
        else
            cp->arg_value = pgr_strndup(a, api->body ? api->body : "", api->body_len);
        return cp->arg_value ? PGREST_OK : pgr_error_oom(err);
    }
    cp->params = PGR_NEW_ARRAY(a, const pgr_routine_param *, r->n_params + 1);
    if (cp->params == NULL)
        return pgr_error_oom(err);
    for (size_t i = 0; i < r->n_params; i++)
        if (has_key(in, r->params[i].name))
            cp->params[cp->n_params++] = &r->params[i];
    if (cp->n_params == 0) {
        cp->args = PGR_CALL_ARGS_NONE;
        return PGREST_OK;
    }
    if (in->json_body != NULL) {
        cp->args = PGR_CALL_ARGS_JSON;
        cp->args_array = in->json_array;
        cp->arg_value = in->json_body;
        return PGREST_OK;
    }
    /* Plan.hs callReadPlan DirectArgs: GET and form arguments reach the
     * function as text cast to each parameter's type, as literals would
     * (a json parameter gets the JSON the text spells, not a string) */
    cp->args = PGR_CALL_ARGS_DIRECT;
    cp->arg_values = PGR_NEW_ARRAY(a, const char *, cp->n_params + 1);
    if (cp->arg_values == NULL)
        return pgr_error_oom(err);
    for (size_t i = 0; i < cp->n_params; i++) {
        const pgr_routine_param *p = cp->params[i];
        if (argument_holds_nul(in->pairs, p->name, p->variadic))
            return nul_argument_error(err);
        cp->arg_values[i] = last_value(in->pairs, p->name);
        int rc = p->variadic ? variadic_values(a, in->pairs, p->name, cp, err) : PGREST_OK;
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

/* ------------------------------------------------------------ output */

static pgr_call_result result_shape(const pgr_routine *r)
{
    switch (r->return_kind) {
    case PGR_RETURN_VOID:
        return PGR_CALL_RESULT_VOID;
    case PGR_RETURN_COMPOSITE:
        return r->returns_set ? PGR_CALL_RESULT_ROWS : PGR_CALL_RESULT_ROW;
    default:
        return r->returns_set ? PGR_CALL_RESULT_SETOF_SCALAR
                              : PGR_CALL_RESULT_SCALAR;
    }
}

/* Plan.hs callReadPlan: handlers are looked up for the function's table
 * (SETOF table) or the function itself; raw text/plain, text/xml and
 * octet-stream results need a media type domain (a handler). */
static int negotiate_call(pgrest_ctx *ctx, pgrest_arena *a,
                          const pgrest_api_request *api, pgr_call_plan *cp,
                          pgrest_query_plan *plan, pgrest_error *err)
{
    const pgr_routine *r = cp->routine;
    pgr_negotiation_target t = {
        .schema = r->schema,
        .name = r->return_kind == PGR_RETURN_COMPOSITE && r->return_type != NULL
                    ? r->return_type : r->name,
        .default_select = pgr_default_select(plan->read),
    };
    int rc = pgr_negotiate_for(ctx, a, api, &t, plan, err);
    if (rc != PGREST_OK)
        return rc;
    plan->handler_on_scalar = plan->output == PGR_OUT_CUSTOM &&
                              (cp->result == PGR_CALL_RESULT_SCALAR ||
                               cp->result == PGR_CALL_RESULT_VOID);
    return PGREST_OK;
}

/* ------------------------------------------------------------ read tree */

/* The read grammar applies to the rows of a table-valued function
 * (PostgREST api/functions "Table-Valued Functions"); relationships are
 * those of the table the function returns. */
static int plan_read_tree(pgrest_ctx *ctx, pgrest_arena *a,
                          const pgrest_api_request *api, pgr_call_plan *cp,
                          pgrest_query_plan *plan, pgrest_error *err)
{
    const pgr_routine *r = cp->routine;
    pgr_read_node *root = PGR_NEW(a, pgr_read_node);
    if (root == NULL)
        return pgr_error_oom(err);
    bool rows = cp->result == PGR_CALL_RESULT_ROWS ||
                cp->result == PGR_CALL_RESULT_ROW;
    if (rows && r->return_schema != NULL && r->return_type != NULL)
        root->table = pgr_find_table(plan->schema, r->return_schema, r->return_type);
    root->source_cte = PGR_CALL_SOURCE;
    root->rows_are_records = true;
    /* the rows are named as the relation negotiation looked up: the
     * function's table, or the function (Plan.hs callReadPlan
     * relIdentifier), as PostgREST's FROM "pgrst_source" AS "<name>" */
    root->sql_alias = rows && r->return_type != NULL ? r->return_type : r->name;
    root->name_in_request = api->name;
    /* the select applies whatever the result: a scalar's single column is
     * pgrst_scalar (any other name fails in PostgreSQL, as in PostgREST);
     * an embed fails in findRel with the relIdentifier's name as origin
     * (plan/embed.c find_rel), after the parameters' paths are checked */
    const pgr_select_item *select = api->qp.select;
    plan->table = root->table;
    /* RETURNS TABLE(...) / OUT columns name the rows' columns; their types
     * stay unknown to the filters and selects (pgr_find_typed_column), as
     * PostgREST resolves fields against tables and views only */
    if (root->table == NULL && rows)
        root->table = r->out_table;
    int rc = pgr_plan_tree(ctx, a, api, plan->schema, root, select, err);
    if (rc != PGREST_OK)
        return rc;
    plan->read = root;
    return PGREST_OK;
}

int pgr_plan_call(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, pgrest_query_plan *plan,
                  pgrest_error *err)
{
    call_input in;
    pgr_call_plan *cp = PGR_NEW(a, pgr_call_plan);
    if (cp == NULL)
        return pgr_error_oom(err);
    int rc;
    if ((rc = read_input(a, api, &in, err)) != PGREST_OK ||
        (rc = find_routine(a, plan->schema, api, &in, &cp->routine, err)) != PGREST_OK)
        return rc;
    cp->result = result_shape(cp->routine);
    cp->check_max_affected = api->prefs.handling == PGR_PREF_HANDLING_STRICT &&
                             api->prefs.has_max_affected;
    cp->max_affected = api->prefs.max_affected;
    cp->composite_alias = cp->routine->return_composite_alias;
    /* Plan.hs callReadPlan: findProc, readPlan, then negotiation, the
     * strict preferences and max-affected */
    if ((rc = plan_read_tree(ctx, a, api, cp, plan, err)) != PGREST_OK ||
        (rc = plan_args(a, api, &in, cp, err)) != PGREST_OK ||
        (rc = negotiate_call(ctx, a, api, cp, plan, err)) != PGREST_OK ||
        (rc = pgr_check_strict_preferences(a, api, err)) != PGREST_OK)
        return rc;
    /* Plan.hs failMaxAffectedRpcReturnsSingle: PostgREST counts the rows
     * a function returns for max-affected, so under handling=strict it
     * must return a set */
    if (cp->check_max_affected && !cp->routine->returns_set)
        return pgr_error(err, 400, "PGRST128",
                         "Function must return SETOF or TABLE when max-affected preference is used with handling=strict",
                         NULL, NULL);
    /* ref/transactions "Access Mode": GET/HEAD always read only, POST
     * read only unless the function is VOLATILE. */
    plan->read_only = !in.is_post || cp->routine->volatility != 'v';
    plan->isolation_level = cp->routine->isolation_level;
    plan->call = cp;
    plan->count = api->prefs.count;
    return PGREST_OK;
}
