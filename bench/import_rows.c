/* The streamed import's body reader alone (lib/parse/import_rows.c, issue
 * 40): a file fed in 64 KiB chunks, as the server feeds a request body,
 * into COPY lines that are thrown away; no database. A benchmark, not a
 * test: run it by hand (bench/README.md, "The body reader alone").
 *
 *   build/bench/pgrest-bench-import-rows FILE csv|ndjson|json [JSON_COLUMN...]
 *
 * Converts FILE twice, as the engine does for a table whose columns take
 * typed lines: rows as JSON objects (the untyped lines) and rows as typed
 * lines, the JSON_COLUMN fields (say doc) written as a json column's.
 * Prints rows, MB/s and CPU ns per row of each, as
 * clock_gettime(CLOCK_PROCESS_CPUTIME_ID) measures them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse/import_rows.h"

enum { CHUNK = 64 * 1024 };

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return s;
}

/* Feeds body[0..len) to r chunk by chunk; false on an error (printed). */
static bool convert(pgr_import_rows *r, pgrest_arena *a, const char *body, size_t len)
{
    pgr_sb out;
    pgr_sb_init(&out, a, 2 * CHUNK);
    pgrest_error err = {0};
    for (size_t at = 0; at < len; at += CHUNK) {
        size_t n = len - at < CHUNK ? len - at : CHUNK;
        out.len = 0;
        int rc = pgr_import_rows_feed(r, body + at, n, &out, &err);
        if (rc != PGREST_OK) {
            fprintf(stderr, "feed: %d %s %s\n", rc, err.message ? err.message : "",
                    err.details ? err.details : "");
            return false;
        }
    }
    out.len = 0;
    if (pgr_import_rows_finish(r, &out, &err) != PGREST_OK) {
        fprintf(stderr, "finish: %s %s\n", err.message ? err.message : "",
                err.details ? err.details : "");
        return false;
    }
    return true;
}

static void report(const char *what, const pgr_import_rows *r, size_t len, double cpu)
{
    size_t rows = pgr_import_rows_count(r);
    printf("%-8s %10zu rows  %8.1f MB/s  %7.1f ns/row  %.3f s\n", what, rows,
           (double)len / 1e6 / cpu, rows > 0 ? cpu * 1e9 / (double)rows : 0.0, cpu);
}

static bool names_of(const pgr_import_rows *r, pgr_import_format fmt,
                     const char *const **names, size_t *k)
{
    return fmt == PGR_IMPORT_CSV ? pgr_import_rows_csv_names(r, names, k)
                                 : pgr_import_rows_json_names(r, names, k);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FILE csv|ndjson|json [JSON_COLUMN...]\n", argv[0]);
        return 2;
    }
    pgr_import_format fmt = strcmp(argv[2], "csv") == 0      ? PGR_IMPORT_CSV
                            : strcmp(argv[2], "ndjson") == 0 ? PGR_IMPORT_NDJSON
                                                             : PGR_IMPORT_JSON;
    size_t len;
    char *body = read_file(argv[1], &len);
    if (body == NULL) {
        perror(argv[1]);
        return 1;
    }
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_import_rows *objects = pgr_import_rows_new(a, fmt, 128, true);
    double t0 = cpu_seconds();
    if (objects == NULL || !convert(objects, a, body, len))
        return 1;
    report("objects", objects, len, cpu_seconds() - t0);

    const char *const *names;
    size_t k;
    if (!names_of(objects, fmt, &names, &k))
        return 1;
    bool *json = calloc(k > 0 ? k : 1, sizeof *json);
    for (size_t i = 0; i < k; i++)
        for (int j = 3; j < argc; j++)
            json[i] = json[i] || strcmp(names[i], argv[j]) == 0;
    pgr_import_rows *typed = pgr_import_rows_new(a, fmt, 128, true);
    if (typed == NULL || !pgr_import_rows_set_fields(typed, names, json, k))
        return 1;
    t0 = cpu_seconds();
    if (!convert(typed, a, body, len))
        return 1;
    report("typed", typed, len, cpu_seconds() - t0);
    return 0;
}
