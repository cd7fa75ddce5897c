/* pgrest-bench-import-paths: which write path for streamed bulk imports
 * (issue 40)? libpq only, no pgrest code: it times the SQL shapes a
 * streaming import could send, so the choice is made by measurement.
 *
 *   pgrest-bench-import-paths --db CONNINFO [--rows N] [--rounds R]
 *                             [--window W] [--only PATH,...] [--no-verify]
 *                             [--temp-buffers SIZE] [--trigger]
 *
 * --window: statements in flight in the pipelined paths (default 16);
 * --temp-buffers: SET at the start of every run's session (the temp table
 * stays in the backend's local buffers up to this size, then goes to disk;
 * PostgreSQL's default is 8MB); --trigger: a BEFORE INSERT OR UPDATE row
 * trigger in PL/pgSQL on the table (per-row work every path pays, COPY
 * included, as PostgREST's users' tables often have).
 *
 * The same N deterministic rows of a 6-column table (bigint key, text,
 * numeric, timestamptz, jsonb, text with a default) are loaded through each
 * path, each in one transaction on a fresh connection, the table truncated
 * and a CHECKPOINT taken before every run; the paths alternate within each of R rounds, and the
 * table shows medians. Inputs (CSV, NDJSON, one JSON array, parameter
 * strings) are built in memory before any timing, so the clock sees only
 * the database work and libpq's sending. Paths:
 *
 *   a-whole   PostgREST's buffered statement (the shape pgrest emits for a
 *             return=minimal POST): the whole body as one json parameter
 *             expanded by json_to_recordset;
 *   a-batch   the same statement, prepared, on 10,000-row slices of the
 *             array, pipelined: what "batched" streaming over today's
 *             statement would do;
 *   b-typed   COPY (CSV) into a TEMP table with the target's column types,
 *             then one INSERT ... SELECT (wrapped as pgrest wraps writes,
 *             so the count comes from the final statement);
 *   b-text    the same with text columns and casts in the INSERT;
 *   b-upsert  b-typed with ON CONFLICT (id) DO UPDATE, over a table that
 *             already holds every key (loaded untimed);
 *   c-json    COPY of one JSON object per line into TEMP (j json), then one
 *             INSERT ... SELECT from json_to_record(j): PostgREST's own
 *             json-to-column conversion, row by row;
 *   c-jsonb   the same with j jsonb;
 *   d-values  prepared multi-row INSERT ... VALUES of 1,000 rows (6,000
 *             parameters) per statement, pipelined;
 *   e-copy    COPY (CSV) straight into the table: what `psql \copy` does,
 *             the floor.
 *
 * Per run: wall seconds, the backend's CPU (utime+stime from
 * /proc/PID/stat, so the server must be on this host), this program's CPU,
 * the backend's peak RSS (VmHWM: fresh connection per run, so the peak is
 * that run's; it includes the shared buffers the backend touched) and its
 * peak private memory (RssAnon sampled every 10 ms by a thread: what grows
 * with the body), WAL bytes (pg_current_wal_insert_lsn before and after),
 * the temp table's size and when the COPY into it ended. With
 * verification on, the first round checks every path left the same table
 * (row count and an md5 over the rows in key order). A benchmark, not a
 * test: bench/README.md, "Bulk import: which write path (issue 40)". */
/* meson's project arguments define _GNU_SOURCE: RUSAGE_THREAD (the client's
 * CPU without the sampler thread) and gmtime_r come from it */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#define COLS "id, name, amount, at, attrs, note"
#define COLDEFS "id bigint, name text, amount numeric(12,2), at timestamptz, attrs jsonb, note text"
#define NCOLS 6
#define JSON_BATCH 10000  /* rows per statement in a-batch */
#define VALUES_BATCH 1000 /* rows per statement in d-values */
#define COPY_CHUNK 65536  /* bytes per PQputCopyData, as a streamed body would arrive */

/* A growable byte buffer; the program exits on allocation failure (a
 * benchmark has nothing to recover). */
typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "import_paths: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void buf_reserve(buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL)
        die("out of memory", NULL);
    b->p = p;
    b->cap = cap;
}

static void buf_put(buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_puts(buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_putc(buf *b, char c) { buf_put(b, &c, 1); }

/* ---- the rows ---------------------------------------------------------- */

/* Row i's six values as text (note NULL every tenth row). No value holds a
 * quote, backslash, tab or newline except attrs' JSON quotes, which the CSV
 * encoder doubles; the JSON encoders write the values as JSON. */
typedef struct row {
    char id[24], name[40], amount[32], at[40], attrs[80], note[40];
    long k;          /* attrs.k, the JSON number */
    bool note_null;
} row;

static void make_row(long i, row *r)
{
    snprintf(r->id, sizeof r->id, "%ld", i + 1);
    snprintf(r->name, sizeof r->name, "customer %ld", (i * 7) % 100003);
    long cents = (i * 7919) % 100000000;
    snprintf(r->amount, sizeof r->amount, "%ld.%02ld", cents / 100, cents % 100);
    time_t t = (time_t)1767225600 + (time_t)i * 37; /* 2026-01-01 UTC + 37 s a row */
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(r->at, sizeof r->at, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
    r->k = i % 1000;
    snprintf(r->attrs, sizeof r->attrs, "{\"k\": %ld, \"tag\": \"t%ld\", \"vip\": %s}", r->k,
             i % 17, i % 5 == 0 ? "true" : "false");
    r->note_null = i % 10 == 0;
    snprintf(r->note, sizeof r->note, "note %ld", i);
}

/* CSV with a header line, as PostgREST's text/csv bodies carry one; an
 * unquoted empty field is NULL (COPY's CSV default). */
static void csv_row(buf *b, const row *r)
{
    buf_puts(b, r->id);
    buf_putc(b, ',');
    buf_puts(b, r->name);
    buf_putc(b, ',');
    buf_puts(b, r->amount);
    buf_putc(b, ',');
    buf_puts(b, r->at);
    buf_puts(b, ",\"");
    for (const char *s = r->attrs; *s; s++) {
        if (*s == '"')
            buf_putc(b, '"');
        buf_putc(b, *s);
    }
    buf_puts(b, "\",");
    if (!r->note_null)
        buf_puts(b, r->note);
    buf_putc(b, '\n');
}

/* One JSON object, keys in column order, as a client would send it. */
static void json_row(buf *b, const row *r)
{
    buf_puts(b, "{\"id\":");
    buf_puts(b, r->id);
    buf_puts(b, ",\"name\":\"");
    buf_puts(b, r->name);
    buf_puts(b, "\",\"amount\":");
    buf_puts(b, r->amount);
    buf_puts(b, ",\"at\":\"");
    buf_puts(b, r->at);
    buf_puts(b, "\",\"attrs\":");
    buf_puts(b, r->attrs);
    buf_puts(b, ",\"note\":");
    if (r->note_null) {
        buf_puts(b, "null");
    } else {
        buf_putc(b, '"');
        buf_puts(b, r->note);
        buf_putc(b, '"');
    }
    buf_putc(b, '}');
}

/* All inputs, built once. ndjson_off[i] is where row i's line starts in
 * ndjson (and, shifted by one for the '[', its object in array). */
typedef struct inputs {
    long rows;
    buf csv, ndjson, array, fields;
    size_t *ndjson_off;  /* rows + 1 */
    const char **values; /* rows * NCOLS parameter strings (NULL = SQL NULL) */
} inputs;

static void build_inputs(inputs *in, long rows)
{
    memset(in, 0, sizeof *in);
    in->rows = rows;
    in->ndjson_off = malloc(sizeof(size_t) * (size_t)(rows + 1));
    size_t *field_off = malloc(sizeof(size_t) * (size_t)rows * NCOLS);
    in->values = malloc(sizeof(char *) * (size_t)rows * NCOLS);
    if (in->ndjson_off == NULL || field_off == NULL || in->values == NULL)
        die("out of memory", NULL);
    buf_puts(&in->csv, COLS "\n");
    row r;
    for (long i = 0; i < rows; i++) {
        make_row(i, &r);
        csv_row(&in->csv, &r);
        in->ndjson_off[i] = in->ndjson.len;
        json_row(&in->ndjson, &r);
        buf_putc(&in->ndjson, '\n');
        const char *f[NCOLS] = {r.id, r.name, r.amount, r.at, r.attrs, r.note_null ? NULL : r.note};
        for (int c = 0; c < NCOLS; c++) {
            /* offsets, not pointers: the buffer moves while it grows */
            field_off[i * NCOLS + c] = f[c] == NULL ? SIZE_MAX : in->fields.len;
            if (f[c] != NULL)
                buf_put(&in->fields, f[c], strlen(f[c]) + 1);
        }
    }
    in->ndjson_off[rows] = in->ndjson.len;
    /* the array is the NDJSON with the newlines turned into commas */
    buf_reserve(&in->array, in->ndjson.len + 2);
    buf_putc(&in->array, '[');
    buf_put(&in->array, in->ndjson.p, in->ndjson.len);
    for (size_t j = 1; j < in->array.len; j++)
        if (in->array.p[j] == '\n')
            in->array.p[j] = ',';
    in->array.p[in->array.len - 1] = ']';
    for (size_t j = 0; j < (size_t)rows * NCOLS; j++)
        in->values[j] = field_off[j] == SIZE_MAX ? NULL : in->fields.p + field_off[j];
    free(field_off);
}

/* ---- libpq helpers ----------------------------------------------------- */

static void check(PGconn *conn, PGresult *res, const char *what)
{
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        fprintf(stderr, "import_paths: %s: %s", what, PQresultErrorMessage(res));
        PQclear(res);
        PQfinish(conn);
        exit(1);
    }
    PQclear(res);
}

static void exec(PGconn *conn, const char *sql) { check(conn, PQexec(conn, sql), sql); }

/* The first column of the first row of a one-row query, copied into out. */
static void query_value(PGconn *conn, const char *sql, char *out, size_t outsz)
{
    PGresult *res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        fprintf(stderr, "import_paths: %s: %s", sql, PQresultErrorMessage(res));
        exit(1);
    }
    snprintf(out, outsz, "%s", PQgetisnull(res, 0, 0) ? "" : PQgetvalue(res, 0, 0));
    PQclear(res);
}

static double query_double(PGconn *conn, const char *sql)
{
    char v[64];
    query_value(conn, sql, v, sizeof v);
    return strtod(v, NULL);
}

/* COPY ... FROM STDIN of data[0..len) in COPY_CHUNK pieces. */
static void copy_in(PGconn *conn, const char *sql, const char *data, size_t len)
{
    PGresult *res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_COPY_IN) {
        fprintf(stderr, "import_paths: %s: %s", sql, PQresultErrorMessage(res));
        exit(1);
    }
    PQclear(res);
    for (size_t off = 0; off < len; off += COPY_CHUNK) {
        size_t n = len - off < COPY_CHUNK ? len - off : COPY_CHUNK;
        if (PQputCopyData(conn, data + off, (int)n) != 1)
            die("PQputCopyData", PQerrorMessage(conn));
    }
    if (PQputCopyEnd(conn, NULL) != 1)
        die("PQputCopyEnd", PQerrorMessage(conn));
    check(conn, PQgetResult(conn), sql);
    res = PQgetResult(conn);
    if (res != NULL)
        die("COPY: unexpected second result", NULL);
}

/* Pipeline mode: one query's results (up to its terminating NULL). */
static void pipe_consume(PGconn *conn, const char *what)
{
    PGresult *res;
    while ((res = PQgetResult(conn)) != NULL)
        check(conn, res, what);
}

static void pipe_consume_sync(PGconn *conn)
{
    PGresult *res = PQgetResult(conn);
    if (PQresultStatus(res) != PGRES_PIPELINE_SYNC)
        die("pipeline: expected a sync", PQresultErrorMessage(res));
    PQclear(res);
}

/* A pipelined transaction of statements: BEGIN, the batches, COMMIT, one
 * Sync. At most `window` statements are in flight: a flush request after
 * each makes the server send its result, and the oldest is read before
 * more are sent, so neither side's socket buffer can fill up and stall
 * (the bounded memory a streaming import needs). send(i) sends batch i. */
typedef void (*send_batch)(PGconn *conn, const inputs *in, long batch, void *scratch);

static void pipelined(PGconn *conn, const inputs *in, long nbatches, int window, send_batch send,
                      void *scratch)
{
    if (PQenterPipelineMode(conn) != 1)
        die("PQenterPipelineMode", PQerrorMessage(conn));
    if (PQsendQueryParams(conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0) != 1)
        die("BEGIN", PQerrorMessage(conn));
    long in_flight = 1;
    for (long b = 0; b < nbatches; b++) {
        send(conn, in, b, scratch);
        if (PQsendFlushRequest(conn) != 1 || PQflush(conn) != 0)
            die("flush", PQerrorMessage(conn));
        if (++in_flight > window) {
            pipe_consume(conn, "batch");
            in_flight--;
        }
    }
    if (PQsendQueryParams(conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0) != 1 ||
        PQpipelineSync(conn) != 1)
        die("COMMIT", PQerrorMessage(conn));
    for (; in_flight > 0; in_flight--)
        pipe_consume(conn, "batch");
    pipe_consume(conn, "COMMIT");
    pipe_consume_sync(conn);
    if (PQexitPipelineMode(conn) != 1)
        die("PQexitPipelineMode", PQerrorMessage(conn));
}

/* ---- the paths --------------------------------------------------------- */

/* pgrest's return=minimal write (tests/unit/golden/write_insert_headers_only
 * .test without the Location part): the count comes from this statement. */
#define WRAP_HEAD "WITH pgrst_source AS ("
#define WRAP_TAIL                                                                        \
    " RETURNING 1) SELECT '' AS total_result_set, pg_catalog.count(_postgrest_t) AS "    \
    "page_total, array[]::text[] AS response_location, ''::text AS body, "               \
    "nullif(current_setting('response.headers', true), '') AS response_headers, "        \
    "nullif(current_setting('response.status', true), '') AS response_status, '' AS "    \
    "response_inserted FROM (SELECT * FROM pgrst_source) _postgrest_t"

#define BODY_COLS                                                                        \
    "pgrst_body.id, pgrst_body.name, pgrst_body.amount, pgrst_body.at, pgrst_body.attrs, " \
    "pgrst_body.note"

/* PostgREST's bulk insert (Query/SqlFragment.hs fromJsonBodyF). */
#define SQL_A                                                                            \
    WRAP_HEAD "INSERT INTO import_t(" COLS ") SELECT " BODY_COLS                         \
    " FROM (SELECT $1::json AS json_data) pgrst_payload, LATERAL (SELECT * FROM "        \
    "json_to_recordset(pgrst_payload.json_data) AS _(" COLDEFS ")) pgrst_body" WRAP_TAIL

#define SQL_C(TYPE)                                                                      \
    WRAP_HEAD "INSERT INTO import_t(" COLS ") SELECT " BODY_COLS                         \
    " FROM pgrst_import, LATERAL " TYPE "_to_record(pgrst_import.j) AS pgrst_body("      \
    COLDEFS ")" WRAP_TAIL

typedef struct run_info {
    double tmp_bytes;   /* the temp table's size before COMMIT, 0 if none */
    double paused;      /* seconds spent measuring it, taken off the wall time */
    double copy_done;   /* when the COPY into the temp table ended (now()), 0 if none */
} run_info;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void measure_tmp(PGconn *conn, run_info *ri)
{
    double t0 = now();
    ri->copy_done = t0;
    ri->tmp_bytes = query_double(conn, "SELECT pg_total_relation_size('pgrst_import')");
    ri->paused = now() - t0;
}

static void path_a_whole(PGconn *conn, const inputs *in, run_info *ri)
{
    (void)ri;
    exec(conn, "BEGIN");
    const char *v[1] = {in->array.p};
    check(conn, PQexecParams(conn, SQL_A, 1, NULL, v, NULL, NULL, 0), "a-whole");
    exec(conn, "COMMIT");
}

static void send_json_batch(PGconn *conn, const inputs *in, long b, void *scratch)
{
    buf *s = scratch;
    long lo = b * JSON_BATCH, hi = lo + JSON_BATCH < in->rows ? lo + JSON_BATCH : in->rows;
    s->len = 0;
    buf_putc(s, '[');
    /* rows lo..hi-1 of the array, commas included, without the last one */
    buf_put(s, in->array.p + 1 + in->ndjson_off[lo], in->ndjson_off[hi] - in->ndjson_off[lo] - 1);
    buf_putc(s, ']');
    const char *v[1] = {s->p};
    if (PQsendQueryPrepared(conn, "a", 1, v, NULL, NULL, 0) != 1)
        die("a-batch", PQerrorMessage(conn));
}

static void path_a_batch(PGconn *conn, const inputs *in, int window, run_info *ri)
{
    (void)ri;
    check(conn, PQprepare(conn, "a", SQL_A, 1, NULL), "prepare a");
    buf scratch = {0};
    pipelined(conn, in, (in->rows + JSON_BATCH - 1) / JSON_BATCH, window, send_json_batch,
              &scratch);
    free(scratch.p);
}

static void path_b(PGconn *conn, const inputs *in, const char *variant, run_info *ri)
{
    bool text = strcmp(variant, "text") == 0, upsert = strcmp(variant, "upsert") == 0;
    exec(conn, "BEGIN");
    exec(conn, text ? "CREATE TEMP TABLE pgrst_import (id text, name text, amount text, "
                      "at text, attrs text, note text) ON COMMIT DROP"
                    : "CREATE TEMP TABLE pgrst_import (" COLDEFS ") ON COMMIT DROP");
    copy_in(conn, "COPY pgrst_import (" COLS ") FROM STDIN (FORMAT csv, HEADER true)",
            in->csv.p, in->csv.len);
    measure_tmp(conn, ri);
    const char *sql =
        text ? WRAP_HEAD "INSERT INTO import_t(" COLS ") SELECT id::bigint, name, "
                         "amount::numeric(12,2), at::timestamptz, attrs::jsonb, note FROM "
                         "pgrst_import" WRAP_TAIL
        : upsert ? WRAP_HEAD "INSERT INTO import_t(" COLS ") SELECT " COLS
                             " FROM pgrst_import ON CONFLICT (id) DO UPDATE SET name = "
                             "EXCLUDED.name, amount = EXCLUDED.amount, at = EXCLUDED.at, "
                             "attrs = EXCLUDED.attrs, note = EXCLUDED.note" WRAP_TAIL
                 : WRAP_HEAD "INSERT INTO import_t(" COLS ") SELECT " COLS
                             " FROM pgrst_import" WRAP_TAIL;
    check(conn, PQexec(conn, sql), "b: INSERT ... SELECT");
    exec(conn, "COMMIT");
}

static void path_c(PGconn *conn, const inputs *in, bool jsonb, run_info *ri)
{
    exec(conn, "BEGIN");
    exec(conn, jsonb ? "CREATE TEMP TABLE pgrst_import (j jsonb) ON COMMIT DROP"
                     : "CREATE TEMP TABLE pgrst_import (j json) ON COMMIT DROP");
    /* text format: the lines hold no backslash or tab (a real import would
     * escape them, or use CSV with quote and delimiter bytes JSON lacks) */
    copy_in(conn, "COPY pgrst_import (j) FROM STDIN", in->ndjson.p, in->ndjson.len);
    measure_tmp(conn, ri);
    check(conn, PQexec(conn, jsonb ? SQL_C("jsonb") : SQL_C("json")), "c: INSERT ... SELECT");
    exec(conn, "COMMIT");
}

/* INSERT INTO import_t(cols) VALUES ($1,..,$6),($7,..) for n rows */
static char *values_sql(long n)
{
    buf b = {0};
    buf_puts(&b, "INSERT INTO import_t(" COLS ") VALUES ");
    char p[32];
    for (long r = 0; r < n; r++) {
        buf_puts(&b, r ? ",(" : "(");
        for (int c = 0; c < NCOLS; c++) {
            snprintf(p, sizeof p, "%s$%ld", c ? "," : "", r * NCOLS + c + 1);
            buf_puts(&b, p);
        }
        buf_putc(&b, ')');
    }
    return b.p;
}

static void send_values_batch(PGconn *conn, const inputs *in, long b, void *scratch)
{
    (void)scratch;
    long lo = b * VALUES_BATCH, n = in->rows - lo < VALUES_BATCH ? in->rows - lo : VALUES_BATCH;
    const char *name = n == VALUES_BATCH ? "d" : "d_rest";
    if (PQsendQueryPrepared(conn, name, (int)(n * NCOLS), in->values + lo * NCOLS, NULL, NULL,
                            0) != 1)
        die("d-values", PQerrorMessage(conn));
}

static void path_d(PGconn *conn, const inputs *in, int window, run_info *ri)
{
    (void)ri;
    long full = in->rows >= VALUES_BATCH ? VALUES_BATCH : 0, rest = in->rows % VALUES_BATCH;
    if (full) {
        char *sql = values_sql(full);
        check(conn, PQprepare(conn, "d", sql, (int)(full * NCOLS), NULL), "prepare d");
        free(sql);
    }
    if (rest) {
        char *sql = values_sql(rest);
        check(conn, PQprepare(conn, "d_rest", sql, (int)(rest * NCOLS), NULL), "prepare d_rest");
        free(sql);
    }
    pipelined(conn, in, (in->rows + VALUES_BATCH - 1) / VALUES_BATCH, window, send_values_batch,
              NULL);
}

static void path_e(PGconn *conn, const inputs *in, run_info *ri)
{
    (void)ri;
    exec(conn, "BEGIN");
    copy_in(conn, "COPY import_t (" COLS ") FROM STDIN (FORMAT csv, HEADER true)", in->csv.p,
            in->csv.len);
    exec(conn, "COMMIT");
}

enum path_id { A_WHOLE, A_BATCH, B_TYPED, B_TEXT, B_UPSERT, C_JSON, C_JSONB, D_VALUES, E_COPY,
               NPATHS };

static const char *const PATH_NAMES[NPATHS] = {"a-whole", "a-batch", "b-typed",
                                               "b-text",  "b-upsert", "c-json",
                                               "c-jsonb", "d-values", "e-copy"};

/* bytes of input the path reads: the body a client would send */
static size_t input_bytes(const inputs *in, int p)
{
    switch (p) {
    case A_WHOLE:
    case A_BATCH:
        return in->array.len;
    case C_JSON:
    case C_JSONB:
        return in->ndjson.len;
    default:
        return in->csv.len;
    }
}

static void run_path(PGconn *conn, const inputs *in, int p, int window, run_info *ri)
{
    switch (p) {
    case A_WHOLE: path_a_whole(conn, in, ri); break;
    case A_BATCH: path_a_batch(conn, in, window, ri); break;
    case B_TYPED: path_b(conn, in, "typed", ri); break;
    case B_TEXT: path_b(conn, in, "text", ri); break;
    case B_UPSERT: path_b(conn, in, "upsert", ri); break;
    case C_JSON: path_c(conn, in, false, ri); break;
    case C_JSONB: path_c(conn, in, true, ri); break;
    case D_VALUES: path_d(conn, in, window, ri); break;
    default: path_e(conn, in, ri); break;
    }
}

/* ---- measuring one run ------------------------------------------------- */

typedef struct sample {
    double wall, backend_cpu, client_cpu, backend_hwm_mb, backend_anon_mb, wal_mb, tmp_mb;
    double copy_s; /* wall seconds up to the end of the COPY into the temp table */
} sample;

/* utime + stime of a process in seconds, from /proc/PID/stat (fields 14
 * and 15, after the parenthesised command name) */
static double proc_cpu(int pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *s = strrchr(line, ')');
    unsigned long ut = 0, st = 0;
    if (s == NULL ||
        sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* a "Name:   1234 kB" line of /proc/PID/status, kB (-1 if unreadable) */
static double proc_status_kb(int pid, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = strlen(name);
    double kb = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, name, n) == 0 && line[n] == ':')
            kb = strtod(line + n + 1, NULL);
    fclose(f);
    return kb;
}

/* Samples the backend's RssAnon while a run goes on: VmHWM alone cannot
 * tell the body's memory from the shared buffers the backend maps. */
typedef struct sampler {
    pthread_t thread;
    int pid;
    atomic_bool stop;
    double peak_kb;
} sampler;

static void *sample_loop(void *arg)
{
    sampler *sm = arg;
    const struct timespec tick = {0, 10 * 1000 * 1000};
    while (!atomic_load(&sm->stop)) {
        double kb = proc_status_kb(sm->pid, "RssAnon");
        if (kb > sm->peak_kb)
            sm->peak_kb = kb;
        nanosleep(&tick, NULL);
    }
    return NULL;
}

static void sampler_start(sampler *sm, int pid)
{
    sm->pid = pid;
    sm->peak_kb = -1;
    atomic_init(&sm->stop, false);
    if (pthread_create(&sm->thread, NULL, sample_loop, sm) != 0)
        die("pthread_create", NULL);
}

static double sampler_stop_mb(sampler *sm)
{
    atomic_store(&sm->stop, true);
    pthread_join(sm->thread, NULL);
    return sm->peak_kb < 0 ? -1 : sm->peak_kb / 1024.0;
}

static double self_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static PGconn *connect_db(const char *conninfo)
{
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK)
        die("connect", PQerrorMessage(conn));
    return conn;
}

/* temp_buffers can only change before the session's first temp table */
static void set_temp_buffers(PGconn *conn, const char *size)
{
    if (size == NULL)
        return;
    const char *v[1] = {size};
    PGresult *res = PQexecParams(conn, "SELECT set_config('temp_buffers', $1, false)", 1, NULL,
                                 v, NULL, NULL, 0);
    check(conn, res, "SET temp_buffers");
}

/* The table before a run: empty, or (upsert) holding every key already. */
static void prepare_table(const char *conninfo, const inputs *in, int p)
{
    PGconn *conn = connect_db(conninfo);
    exec(conn, "TRUNCATE import_t");
    if (p == B_UPSERT)
        path_e(conn, in, NULL);
    /* dirty buffers of the previous run are written now, not during this one */
    exec(conn, "CHECKPOINT");
    PQfinish(conn);
}

static sample measure(const char *conninfo, const inputs *in, int p, int window,
                      const char *temp_buffers)
{
    prepare_table(conninfo, in, p);
    PGconn *conn = connect_db(conninfo);
    set_temp_buffers(conn, temp_buffers);
    int pid = PQbackendPID(conn);
    /* the insert position: pg_current_wal_lsn lags behind unwritten WAL */
    const char *lsn = "SELECT pg_current_wal_insert_lsn() - '0/0'";
    double wal0 = query_double(conn, lsn);
    run_info ri = {0, 0, 0};
    sampler sm;
    sampler_start(&sm, pid);
    double cpu0 = proc_cpu(pid), self0 = self_cpu(), t0 = now();
    run_path(conn, in, p, window, &ri);
    double wall = now() - t0 - ri.paused;
    sample s = {wall, proc_cpu(pid) - cpu0, self_cpu() - self0, 0, sampler_stop_mb(&sm), 0,
                ri.tmp_bytes / 1048576.0, 0};
    s.backend_hwm_mb = proc_status_kb(pid, "VmHWM") / 1024.0;
    s.copy_s = ri.copy_done > 0 ? ri.copy_done - t0 : 0;
    s.wal_mb = (query_double(conn, lsn) - wal0) / 1048576.0;
    PQfinish(conn);
    return s;
}

/* Row count and md5 of the table in key order: every path must load the
 * same table (issue 40: "equal to what psql \copy loads"). */
static void table_digest(const char *conninfo, char *out, size_t outsz)
{
    PGconn *conn = connect_db(conninfo);
    query_value(conn,
                "SELECT count(*) || ' ' || md5(string_agg(t::text, E'\\n' ORDER BY id)) "
                "FROM import_t t",
                out, outsz);
    PQfinish(conn);
}

/* ---- main -------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void setup_schema(const char *conninfo, bool trigger)
{
    PGconn *conn = connect_db(conninfo);
    exec(conn, "DROP TABLE IF EXISTS import_t");
    exec(conn, "CREATE TABLE import_t (id bigint PRIMARY KEY, name text NOT NULL, "
               "amount numeric(12,2), at timestamptz, attrs jsonb, note text DEFAULT 'none')");
    if (trigger) {
        exec(conn, "CREATE OR REPLACE FUNCTION import_t_touch() RETURNS trigger LANGUAGE plpgsql "
                   "AS $$BEGIN NEW.note := coalesce(NEW.note, 'none'); RETURN NEW; END$$");
        exec(conn, "CREATE TRIGGER import_t_touch BEFORE INSERT OR UPDATE ON import_t "
                   "FOR EACH ROW EXECUTE FUNCTION import_t_touch()");
    }
    char tb[64];
    query_value(conn, "SHOW temp_buffers", tb, sizeof tb);
    char ver[64];
    query_value(conn, "SHOW server_version", ver, sizeof ver);
    printf("PostgreSQL %s, temp_buffers %s\n", ver, tb);
    PQfinish(conn);
}

typedef struct options {
    const char *conninfo, *temp_buffers;
    long rows;
    int rounds, window;
    bool enabled[NPATHS], verify, trigger;
} options;

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s --db CONNINFO [--rows N] [--rounds R] [--window W] "
            "[--only PATH,...] [--no-verify] [--temp-buffers SIZE] [--trigger]\npaths:",
            argv0);
    for (int p = 0; p < NPATHS; p++)
        fprintf(stderr, " %s", PATH_NAMES[p]);
    fprintf(stderr, "\n");
    exit(2);
}

static void parse_only(options *o, const char *list, const char *argv0)
{
    memset(o->enabled, 0, sizeof o->enabled);
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        int p = 0;
        while (p < NPATHS && strcmp(PATH_NAMES[p], t) != 0)
            p++;
        if (p == NPATHS)
            usage(argv0);
        o->enabled[p] = true;
    }
    free(copy);
}

static options parse_args(int argc, char **argv)
{
    options o = {NULL, NULL, 1000000, 3, 16, {0}, true, false};
    for (int p = 0; p < NPATHS; p++)
        o.enabled[p] = true;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--db") == 0 && more)
            o.conninfo = argv[++i];
        else if (strcmp(argv[i], "--rows") == 0 && more)
            o.rows = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && more)
            o.rounds = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--window") == 0 && more)
            o.window = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--only") == 0 && more)
            parse_only(&o, argv[++i], argv[0]);
        else if (strcmp(argv[i], "--temp-buffers") == 0 && more)
            o.temp_buffers = argv[++i];
        else if (strcmp(argv[i], "--trigger") == 0)
            o.trigger = true;
        else if (strcmp(argv[i], "--no-verify") == 0)
            o.verify = false;
        else
            usage(argv[0]);
    }
    if (o.conninfo == NULL || o.rows < 1 || o.rounds < 1 || o.window < 1)
        usage(argv[0]);
    return o;
}

static void print_table(const options *o, const inputs *in, sample (*s)[NPATHS])
{
    double floor_wall = 0, floor_cpu = 0; /* e-copy's medians */
    double med[NPATHS][8];
    double *v = malloc(sizeof(double) * (size_t)o->rounds);
    for (int p = 0; p < NPATHS; p++) {
        if (!o->enabled[p])
            continue;
        for (int m = 0; m < 8; m++) {
            for (int r = 0; r < o->rounds; r++) {
                const sample *x = &s[r][p];
                const double f[8] = {x->wall,           x->backend_cpu,     x->client_cpu,
                                     x->backend_hwm_mb, x->backend_anon_mb, x->wal_mb,
                                     x->tmp_mb,         x->copy_s};
                v[r] = f[m];
            }
            med[p][m] = median(v, o->rounds);
        }
        if (p == E_COPY) {
            floor_wall = med[p][0];
            floor_cpu = med[p][1];
        }
    }
    free(v);
    printf("\n%ld rows, median of %d rounds%s%s%s\n\n", o->rows, o->rounds,
           o->temp_buffers ? ", temp_buffers " : "", o->temp_buffers ? o->temp_buffers : "",
           o->trigger ? ", row trigger" : "");
    /* the backend's CPU is the steadier figure on a shared machine */
    printf("| path | input MB | wall s | rows/s | input MB/s | wall ÷ e-copy | backend CPU s | "
           "CPU ÷ e-copy | "
           "client CPU s | backend VmHWM MB | backend peak RssAnon MB | WAL MB | temp table MB | "
           "of which COPY to temp s |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int p = 0; p < NPATHS; p++) {
        if (!o->enabled[p])
            continue;
        double mb = (double)input_bytes(in, p) / 1048576.0, w = med[p][0];
        printf("| %s | %.0f | %.2f | %.0f | %.1f | ", PATH_NAMES[p], mb, w, (double)o->rows / w,
               mb / w);
        if (floor_wall > 0)
            printf("%.2f", w / floor_wall);
        printf(" | %.2f | ", med[p][1]);
        if (floor_cpu > 0)
            printf("%.2f", med[p][1] / floor_cpu);
        printf(" | %.2f | %.0f | %.0f | %.0f | %.0f | ", med[p][2], med[p][3], med[p][4],
               med[p][5], med[p][6]);
        if (med[p][7] > 0)
            printf("%.2f", med[p][7]);
        printf(" |\n");
    }
    printf("\nwall seconds per round (backend CPU seconds):\n");
    for (int p = 0; p < NPATHS; p++) {
        if (!o->enabled[p])
            continue;
        printf("  %-9s", PATH_NAMES[p]);
        for (int r = 0; r < o->rounds; r++)
            printf(" %.2f (%.2f)", s[r][p].wall, s[r][p].backend_cpu);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);
    setup_schema(o.conninfo, o.trigger);
    inputs in;
    double t0 = now();
    build_inputs(&in, o.rows);
    printf("inputs built in %.1f s: CSV %.1f MB, NDJSON %.1f MB, JSON array %.1f MB\n",
           now() - t0, (double)in.csv.len / 1048576.0, (double)in.ndjson.len / 1048576.0,
           (double)in.array.len / 1048576.0);
    sample(*s)[NPATHS] = calloc((size_t)o.rounds, sizeof *s);
    char digest[NPATHS][128];
    for (int r = 0; r < o.rounds; r++) {
        for (int p = 0; p < NPATHS; p++) {
            if (!o.enabled[p])
                continue;
            s[r][p] = measure(o.conninfo, &in, p, o.window, o.temp_buffers);
            fprintf(stderr, "round %d %-9s %.2f s\n", r + 1, PATH_NAMES[p], s[r][p].wall);
            if (r == 0 && o.verify)
                table_digest(o.conninfo, digest[p], sizeof digest[p]);
        }
    }
    int bad = 0;
    if (o.verify) {
        const char *ref = NULL;
        for (int p = 0; p < NPATHS; p++) {
            if (!o.enabled[p])
                continue;
            if (ref == NULL)
                ref = digest[p];
            else if (strcmp(ref, digest[p]) != 0)
                bad = 1;
        }
        printf("tables after each path (count md5): %s%s\n", ref ? ref : "",
               bad ? " -- MISMATCH:" : " (all equal)");
        for (int p = 0; bad && p < NPATHS; p++)
            if (o.enabled[p])
                printf("  %-9s %s\n", PATH_NAMES[p], digest[p]);
    }
    print_table(&o, &in, s);
    free(s);
    return bad;
}
