/* COPY ... FROM STDIN without blocking (copy_in.h). */
#include "exec/copy_in.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

bool pgr_copy_in_send(pgr_copy_in *c, PGconn *pg, const pgr_stmt *before, size_t n,
                      const char *copy_sql)
{
    *c = (pgr_copy_in){.pg = pg, .was_nonblocking = PQisnonblocking(pg) == 1,
                       .before = true, .n_before = n, .copy_sql = copy_sql};
    if (PQsetnonblocking(pg, 1) != 0 || PQenterPipelineMode(pg) != 1)
        return false;
    for (size_t i = 0; i < n; i++)
        if (PQsendQueryParams(pg, before[i].sql, (int)before[i].n_params, NULL,
                              before[i].params, NULL, NULL, 0) != 1)
            return false;
    return PQpipelineSync(pg) == 1;
}

static void keep_error(pgr_copy_in *c, PGresult *r)
{
    if (c->error == NULL) {
        c->error = r;
        c->failed_at = c->before ? c->answered : c->n_before;
    } else {
        PQclear(r);
    }
}

/* The pipeline's results: a NULL ends each statement's, the Sync's ends
 * them all; then the COPY goes, when nothing failed. false: the
 * connection failed, or a statement did (c->error). */
static bool take_results_before(pgr_copy_in *c)
{
    while (c->before && !PQisBusy(c->pg)) {
        PGresult *r = PQgetResult(c->pg);
        if (r == NULL) {
            c->answered++;
            continue;
        }
        ExecStatusType s = PQresultStatus(r);
        if (s == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            c->before = false;
            if (PQexitPipelineMode(c->pg) != 1 || c->error != NULL)
                return false;
            return PQsendQuery(c->pg, c->copy_sql) == 1;
        }
        if (s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE)
            keep_error(c, r);
        else
            PQclear(r);
    }
    return true;
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
        if (s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE || s == PGRES_NONFATAL_ERROR) {
            keep_error(c, r);
            continue;
        }
        if (s == PGRES_COMMAND_OK)
            snprintf(c->copied, sizeof c->copied, "%s", PQcmdTuples(r));
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
    if (c->before) {
        if (PQconsumeInput(c->pg) == 0 || !take_results_before(c))
            return PGR_COPY_FAILED;
        if (c->before)
            return PGR_COPY_WAIT_READ;
        if ((s = flush_step(c)) != PGR_COPY_READY)
            return s;
    }
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

/* What waits on the socket while a COPY takes data. PostgreSQL says
 * nothing then unless it failed: an ErrorResponse ('E') is the first byte
 * waiting. libpq would not tell before the COPY's end (it parses no error
 * in COPY IN state), so the socket is peeked, and read (by libpq) only when
 * something else came (a notice) or the server went away; an error libpq
 * has already read comes at the end. */
typedef enum waiting { NOTHING, AN_ERROR, SOMETHING, GONE } waiting;

static waiting socket_waiting(const pgr_copy_in *c)
{
    char first;
    ssize_t n = recv(PQsocket(c->pg), &first, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 1)
        return first == 'E' ? AN_ERROR : SOMETHING;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return NOTHING;
    return GONE;
}

pgr_copy_step pgr_copy_in_flush(pgr_copy_in *c)
{
    pgr_copy_step s = flush_step(c);
    if (s == PGR_COPY_FAILED)
        return s;
    switch (socket_waiting(c)) {
    case NOTHING:
        return s;
    case AN_ERROR:
        /* CopyFail can only roll back: the COPY's results bring the error */
        return PQputCopyEnd(c->pg, "abandoned after an error") == 1 ? PGR_COPY_REFUSED
                                                                     : PGR_COPY_FAILED;
    case SOMETHING:
    case GONE:
        break;
    }
    if (PQconsumeInput(c->pg) == 0)
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
