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
/* Number of statements registered. */
size_t pgr_stmt_cache_count(const pgr_stmt_cache *c);
/* The schema generation the statements were prepared under: after a
 * schema reload they are deallocated (a changed result type would fail
 * them with 0A000). */
unsigned pgr_stmt_cache_generation(const pgr_stmt_cache *c);
void pgr_stmt_cache_set_generation(pgr_stmt_cache *c, unsigned generation);

struct pg_conn;
/* The statement cache of a connection, created on first use and freed
 * with it (libpq instance data: PQfinish frees it, PQreset clears it), so
 * connections the host owns get prepared statements too. NULL on OOM. */
pgr_stmt_cache *pgr_conn_stmt_cache(struct pg_conn *pg);

#endif
