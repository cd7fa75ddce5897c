/* Fuzz target: the request grammars called directly (select=, order=,
 * or=/and= logic trees, filter keys and values, the whole query string).
 * Two bytes of arena cap (fuzz_arena_cap), then a byte selecting the
 * grammar, the rest is its text. */
#include "fuzz_common.h"

#include "parse/filter_parser.h"
#include "parse/order_parser.h"
#include "parse/query_string.h"
#include "parse/select_parser.h"

/* Grammar errors are PostgREST's PGRST100 (400); a negative limit may also
 * give PGRST103 / 2201W. On an exhausted arena only a crash counts: the
 * public stage boundary turns the failure into 500 PGRST500. */
static pgrest_arena *current_arena;

static void check(int rc, const pgrest_error *err)
{
    if (rc != PGREST_OK && !fuzz_exhausted_ok(current_arena, err))
        fuzz_check_error(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader r;
    fuzz_reader_init(&r, data, size);
    size_t cap = fuzz_arena_cap(&r);
    unsigned sel = fuzz_byte(&r);
    char *text = fuzz_strndup(r.p, r.left);
    pgrest_arena *a = pgrest_arena_new(cap);
    if (a == NULL)
        abort();
    current_arena = a;
    pgrest_error err = {0};
    switch (sel % 6) {
    case 0: {
        pgr_select_item *items = NULL;
        check(pgr_parse_select(a, text, &items, &err), &err);
        break;
    }
    case 1: {
        pgr_order_term *terms = NULL;
        check(pgr_parse_order(a, text, &terms, &err), &err);
        break;
    }
    case 2: {
        pgr_logic_tree *tree = NULL;
        check(pgr_parse_logic_tree(a, sel & 8, sel & 16, text, &tree, &err), &err);
        /* pgrest's related leaves (docs/embed-or.md) on the same text */
        err = (pgrest_error){0};
        check(pgr_parse_logic_tree_ext(a, sel & 8 ? "or" : "and", text, strlen(text), 16,
                                       true, &tree, &err), &err);
        break;
    }
    case 3: {
        pgr_field field;
        check(pgr_parse_field(a, text, &field, &err), &err);
        break;
    }
    case 4: {
        pgr_op_expr expr;
        memset(&expr, 0, sizeof expr);
        check(pgr_parse_op_expr(a, text, &expr, &err), &err);
        break;
    }
    default: {
        pgr_query_params qp;
        pgr_kv *params = pgr_query_string_decode(a, text);
        /* small limits so the fuzzer reaches them */
        pgr_parse_limits lim = *pgr_parse_limits_default();
        lim.max_depth = 6;
        lim.max_filters = 12;
        /* pgrest's extensions as a relation read takes them (a call's
         * is_rpc read never takes distinct) */
        pgr_params_extensions ext = {.related_leaves = sel & 16,
                                     .distinct = (sel & 16) && !(sel & 8)};
        check(pgr_query_params_parse_ext(a, params, sel & 8, &ext, &lim, &qp, &err), &err);
        break;
    }
    }
    pgrest_arena_free(a);
    free(text);
    return 0;
}
