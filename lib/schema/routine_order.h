/* PostgREST's Ord instance of Routine (SchemaCache/Routine.hs): the order
 * decodeFuncs sorts each name's overloads in. */
#ifndef PGR_ROUTINE_ORDER_H
#define PGR_ROUTINE_ORDER_H

#include "schema/schema_cache.h"

/* Overloads of one name: fewer parameters first, then the fields in
 * order (description, parameters, return type, volatility). <0, 0, >0. */
int pgr_routine_cmp(const pgr_routine *x, const pgr_routine *y);

#endif
