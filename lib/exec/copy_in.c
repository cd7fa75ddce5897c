/* COPY ... FROM STDIN without blocking (copy_in.h). */
#include "exec/copy_in.h"

bool pgr_copy_in_send(pgr_copy_in *c, PGconn *pg, const char *sql)
{
    *c = (pgr_copy_in){.pg = pg, .was_nonblocking = PQisnonblocking(pg) == 1};
    return PQsetnonblocking(pg, 1) == 0 && PQsendQuery(pg, sql) == 1;
}

static void keep_error(pgr_copy_in *c, PGresult *r)
{
    if (c->error == NULL)
        c->error = r;
    else
        PQclear(r);
}

/* Takes the results that are in: *copy_in when the COPY waits for data,
 * *ended when the last one came. false: the connection failed. */
static bool take_results(pgr_copy_in *c, bool *copy_in, bool *ended)
{
    *copy_in = *ended = false;
    if (PQconsumeInput(c->pg) == 0)
        return false;
    while (!PQisBusy(c->pg)) {
        PGresult *r = PQgetResult(c->pg);
        if (r == NULL) {
            *ended = true;
            return true;
        }
        ExecStatusType s = PQresultStatus(r);
        if (s == PGRES_COPY_IN) {
            PQclear(r);
            *copy_in = true;
            return true;
        }
        if (s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE || s == PGRES_NONFATAL_ERROR)
            keep_error(c, r);
        else
            PQclear(r);
    }
    return true;
}

static pgr_copy_step flush_step(pgr_copy_in *c)
{
    int f = PQflush(c->pg);
    return f == 0 ? PGR_COPY_READY : f == 1 ? PGR_COPY_WAIT_WRITE : PGR_COPY_FAILED;
}

pgr_copy_step pgr_copy_in_opening(pgr_copy_in *c)
{
    pgr_copy_step s = flush_step(c);
    if (s != PGR_COPY_READY)
        return s;
    bool copy_in, ended;
    if (!take_results(c, &copy_in, &ended))
        return PGR_COPY_FAILED;
    if (copy_in)
        /* an error before the COPY ends the query: no COPY then */
        return c->error == NULL ? PGR_COPY_READY : PGR_COPY_FAILED;
    return ended ? PGR_COPY_FAILED : PGR_COPY_WAIT_READ;
}

pgr_copy_step pgr_copy_in_put(pgr_copy_in *c, const char *data, size_t len)
{
    /* PQputCopyData takes an int: a longer piece goes in parts */
    while (len > 0) {
        int n = len > (1u << 30) ? 1 << 30 : (int)len;
        if (PQputCopyData(c->pg, data, n) != 1)
            return PGR_COPY_FAILED;
        data += n;
        len -= (size_t)n;
    }
    return pgr_copy_in_flush(c);
}

/* PostgreSQL answers nothing during the COPY unless it failed (or the
 * server is going away): reading what came tells that early. */
pgr_copy_step pgr_copy_in_flush(pgr_copy_in *c)
{
    pgr_copy_step s = flush_step(c);
    if (s == PGR_COPY_FAILED || PQconsumeInput(c->pg) == 0)
        return PGR_COPY_FAILED;
    if (!PQisBusy(c->pg)) {
        bool copy_in, ended;
        if (!take_results(c, &copy_in, &ended) || c->error != NULL)
            return PGR_COPY_FAILED;
    }
    return s;
}

bool pgr_copy_in_end(pgr_copy_in *c, const char *failure)
{
    return PQputCopyEnd(c->pg, failure) == 1;
}

pgr_copy_step pgr_copy_in_closing(pgr_copy_in *c)
{
    pgr_copy_step s = flush_step(c);
    if (s != PGR_COPY_READY)
        return s;
    bool copy_in, ended;
    if (!take_results(c, &copy_in, &ended) || copy_in)
        return PGR_COPY_FAILED;
    if (!ended)
        return PGR_COPY_WAIT_READ;
    if (!c->was_nonblocking)
        PQsetnonblocking(c->pg, 0);
    return c->error == NULL ? PGR_COPY_READY : PGR_COPY_FAILED;
}

void pgr_copy_in_clear(pgr_copy_in *c)
{
    PQclear(c->error);
    c->error = NULL;
}
