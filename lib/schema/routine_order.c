/* PostgREST's Ord Routine (SchemaCache/Routine.hs). */
#include "schema/routine_order.h"

#include <string.h>

static int cmp_text(const char *x, const char *y)
{
    return strcmp(x ? x : "", y ? y : "");
}

/* Maybe Text: Nothing before any Just */
static int cmp_maybe_text(const char *x, const char *y)
{
    if (x == NULL || y == NULL)
        return (x != NULL) - (y != NULL);
    return strcmp(x, y);
}

static int cmp_param(const pgr_routine_param *x, const pgr_routine_param *y)
{
    int c;
    if ((c = cmp_text(x->name, y->name)) != 0 || (c = cmp_text(x->type, y->type)) != 0 ||
        (c = cmp_text(x->cast_type ? x->cast_type : x->type,
                      y->cast_type ? y->cast_type : y->type)) != 0)
        return c;
    if (x->required != y->required)
        return x->required ? 1 : -1;
    return (x->variadic > y->variadic) - (x->variadic < y->variadic);
}

/* Routine.hs: FuncVolatility derives Ord as Volatile < Stable < Immutable */
static int volatility_rank(char v)
{
    return v == 'v' ? 0 : v == 's' ? 1 : 2;
}

/* Routine.hs instance Ord Routine: fewer params first, then the derived
 * order of the fields (RetType: Single < SetOf, Scalar < Composite). */
int pgr_routine_cmp(const pgr_routine *x, const pgr_routine *y)
{
    if (x->n_params != y->n_params)
        return x->n_params < y->n_params ? -1 : 1;
    int c = cmp_maybe_text(x->description, y->description);
    for (size_t i = 0; c == 0 && i < x->n_params; i++)
        c = cmp_param(&x->params[i], &y->params[i]);
    if (c != 0)
        return c;
    if (x->returns_set != y->returns_set)
        return x->returns_set ? 1 : -1;
    bool xc = x->return_kind == PGR_RETURN_COMPOSITE, yc = y->return_kind == PGR_RETURN_COMPOSITE;
    if (xc != yc)
        return xc ? 1 : -1;
    if ((c = cmp_text(x->return_schema, y->return_schema)) != 0 ||
        (c = cmp_text(x->return_type, y->return_type)) != 0)
        return c;
    return volatility_rank(x->volatility) - volatility_rank(y->volatility);
}
