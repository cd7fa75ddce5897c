/* Readiness, PostgREST's admin /ready: the schema cache is loaded and not
 * pending (pgrest_ctx_ready), and the database connection is established
 * (pgrest_ctx_connection_established, AppState.isConnEstablished). */
#include <libpq-fe.h>
#include <stdatomic.h>

#include "engine/context.h"
#include "engine/observe.h"
#include "exec/pool.h"

bool pgr_ctx_schema_loaded(pgrest_ctx *ctx)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    if (sc == NULL)
        return false;
    pgr_schema_cache_release(sc);
    return true;
}

/* PostgREST admin /ready: 503 while the schema cache is pending. */
int pgrest_ctx_ready(pgrest_ctx *ctx)
{
    return pgr_ctx_schema_loaded(ctx) && !atomic_load(&ctx->schema_pending);
}

/* AppState.isConnEstablished: with a listener its state is the answer;
 * otherwise one pooled round trip decides. */
int pgrest_ctx_connection_established(pgrest_ctx *ctx)
{
    pgr_listener *l = ctx->listener;
    if (l != NULL && pgr_listener_has_channel(l))
        return atomic_load(&ctx->listener_on);
    pgr_pool *pool = pgr_ctx_pool(ctx);
    pgrest_arena *a = pool != NULL ? pgrest_arena_new(0) : NULL;
    if (a == NULL)
        return 0;
    pgrest_error err = {0};
    /* a SELECT 1 through usePool */
    pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST, "Trying to borrow a connection from pool");
    pgr_conn *c = pgr_pool_acquire(pool, a, &err);
    bool ok = false;
    if (c != NULL) {
        PGresult *r = PQexec(c->pg, "SELECT 1");
        ok = PQresultStatus(r) == PGRES_TUPLES_OK;
        bool server_error = r != NULL && PQresultErrorField(r, PG_DIAG_SQLSTATE) != NULL;
        PQclear(r);
        pgr_pool_release_after(pool, c, ok             ? PGR_SESSION_OK
                                        : server_error ? PGR_SESSION_FAILED
                                                       : PGR_SESSION_CLIENT_ERROR);
    }
    pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    pgrest_arena_free(a);
    return ok;
}
