/* Per-connection prepared statements keyed by SQL text: the same URL
 * shape gives the same SQL, so it is parsed and planned once. */
#ifndef PGR_STMT_CACHE_H
#define PGR_STMT_CACHE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pgr_stmt_cache pgr_stmt_cache;

pgr_stmt_cache *pgr_stmt_cache_new(void);
void pgr_stmt_cache_free(pgr_stmt_cache *c);
void pgr_stmt_cache_clear(pgr_stmt_cache *c);
/* Name of the statement prepared for sql, or NULL. */
const char *pgr_stmt_cache_lookup(const pgr_stmt_cache *c, const char *sql);
/* Registers sql under a fresh name (copied); returns the name or NULL. The
 * entry is provisional until confirmed: a failed PREPARE must be forgotten. */
const char *pgr_stmt_cache_add(pgr_stmt_cache *c, const char *sql);
void pgr_stmt_cache_forget(pgr_stmt_cache *c, const char *sql);

#endif
