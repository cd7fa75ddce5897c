/* Request bodies as rows for COPY, chunk by chunk (see import_rows.h).
 * The body is read through a window: each chunk is appended (at most
 * SLICE bytes at a time) after the incomplete row left by the previous
 * one, the rows it completes are checked by the same code as the buffered
 * readers' (ndjson_body.c's line check, csv_body.c's record reader and
 * writer, payload.c's element parse and NUL-key check) and written out,
 * and the incomplete tail moves to the front. The scanners keep their
 * state between calls, so no byte is scanned twice. A JSON row after the
 * first is read in one pass (json_row.h) when it is plain, as bulk rows
 * are: json-c, eight times slower, reads the first row and any other. */
#include "parse/import_rows.h"

#include <json-c/json.h>
#include <stdint.h>
#include <string.h>

#include "parse/csv_body.h"
#include "parse/json_row.h"
#include "parse/json_value.h"
#include "parse/ndjson_body.h"
#include "parse/payload.h"
#include "util/error.h"

enum { SLICE = 64 * 1024 };

typedef enum json_state {
    J_START,   /* before the '[' */
    J_OPEN,    /* before an element (after '[' or ',') */
    J_ELEM,    /* in an element */
    J_AFTER,   /* after an element: ',' or ']' */
    J_DONE     /* after the ']': whitespace only */
} json_state;

typedef enum csv_state { C_START, C_UNQUOTED, C_QUOTED, C_QUOTE, C_CR } csv_state;

/* An error payload.c reports only once the whole body proved valid: a
 * key mismatch in a JSON array, then a key holding \u0000. */
typedef enum deferred_kind { D_NONE, D_NUL_KEY, D_MISMATCH } deferred_kind;

struct pgr_import_rows {
    pgrest_arena *a;
    pgr_import_format fmt;
    int max_depth;
    bool match_keys;
    const char *target;
    bool is_call;

    char *buf;            /* the window: the incomplete row and what follows */
    size_t len, cap;
    size_t row_start;     /* what precedes it is done with */
    size_t pos;           /* where scanning resumes */

    int rc;               /* sticky: an error or PGR_IMPORT_NOT_ROWS */
    pgrest_error err;
    bool finished;
    deferred_kind deferred;
    int deferred_rc;
    pgrest_error deferred_err;

    size_t count;
    char *first;
    size_t first_len;

    /* JSON */
    json_state js;
    bool after_comma;
    bool scalar, in_string, escaped;
    size_t depth;
    size_t index;         /* of the element being read */
    /* JSON and NDJSON: the first row's keys, rows checked */
    pgr_ndjson_array keys;

    /* NDJSON */
    size_t line_no;

    /* CSV */
    pgr_csv_rows csv;
    bool have_header;
    csv_state cs;
    bool prev_cr;
    size_t lines;         /* line ends before pos */
    size_t rec_line;      /* the line the record at row_start starts on */
    char *header_raw;
    size_t header_raw_len;
    pgr_sb scratch;       /* a CSV record's JSON object before escaping; a json
                           * column's string value quoted again */
    const bool *json_field; /* typed lines (set_fields): per field, written
                             * as a JSON string; NULL: one JSON object */
    size_t n_fields;
    const char *const *field_names; /* JSON and NDJSON typed lines: the
                                     * columns, the keys of every row */
    struct span { size_t at, len; } *spans; /* a row's value of each column */
    pgr_sb value;         /* a JSON string value decoded */
    size_t *seen;         /* plain rows: per first key, the last row holding it */
    size_t row_stamp;     /* plain rows: the row being read, from 1 */
    bool element_waited;  /* the element at pos ran past the window once */
    bool element_declined; /* the one pass declined the element at pos */

    /* where the rows are (pgr_import_rows_where): row i of a stretch
     * starting at breaks[b].row is at breaks[b].at + (i - breaks[b].row) */
    struct row_break { size_t row, at; } *breaks;
    size_t n_breaks, breaks_cap;
    bool breaks_full;     /* rows from breaks_full_row on are not placed */
    size_t breaks_full_row;
};

pgr_import_rows *pgr_import_rows_new(pgrest_arena *a, pgr_import_format fmt, int max_depth,
                                     bool match_keys)
{
    pgr_import_rows *r = PGR_NEW(a, pgr_import_rows);
    if (r == NULL)
        return NULL;
    r->a = a;
    r->fmt = fmt;
    r->max_depth = max_depth;
    r->match_keys = match_keys;
    r->target = "";
    r->rec_line = 1;
    r->cap = 4096;
    r->buf = pgr_alloc(a, r->cap);
    pgr_csv_rows_init(&r->csv, a);
    pgr_sb_init(&r->scratch, a, 256);
    pgr_sb_init(&r->value, a, 256);
    return r->buf != NULL && !pgr_arena_exhausted(a) ? r : NULL;
}

void pgr_import_rows_set_target(pgr_import_rows *r, const char *name, bool is_call)
{
    r->target = name != NULL ? name : "";
    r->is_call = is_call;
}

size_t pgr_import_rows_count(const pgr_import_rows *r)
{
    return r->count;
}

bool pgr_import_rows_csv_names(const pgr_import_rows *r, const char *const **names,
                               size_t *n)
{
    if (r->fmt != PGR_IMPORT_CSV || r->count == 0)
        return false;
    size_t k = r->csv.first_k;
    for (size_t i = 0; i < k; i++)
        if (r->csv.next_same[i] < k)
            return false;
    *names = r->csv.header;
    *n = k;
    return true;
}

bool pgr_import_rows_json_names(const pgr_import_rows *r, const char *const **names,
                                size_t *n)
{
    if (r->fmt == PGR_IMPORT_CSV || !r->match_keys || r->count == 0)
        return false;
    *names = r->keys.keys;
    *n = r->keys.n_keys;
    return true;
}

bool pgr_import_rows_set_fields(pgr_import_rows *r, const char *const *names,
                                const bool *json_field, size_t n)
{
    r->json_field = json_field;
    r->n_fields = n;
    r->field_names = names;
    if (r->fmt == PGR_IMPORT_CSV)
        return true;
    if (n > SIZE_MAX / sizeof *r->spans)
        return false;
    r->spans = PGR_NEW_ARRAY(r->a, struct span, n > 0 ? n : 1);
    return r->spans != NULL;
}

const char *pgr_import_rows_first(const pgr_import_rows *r, size_t *len)
{
    *len = r->first != NULL ? r->first_len : 0;
    return r->first;
}

/* One COPY text-format line (PostgreSQL's COPY "Text Format"): the
 * backslash doubled, LF, CR and TAB as \n \r \t, then the line end. */
static const char copy_escape[256] = {['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};

static void put_copy_field(pgr_sb *out, const char *s, size_t n)
{
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < n && copy_escape[(unsigned char)s[j]] == 0)
            j++;
        pgr_sb_putn(out, s + i, j - i);
        if (j == n)
            break;
        char esc[2] = {'\\', copy_escape[(unsigned char)s[j]]};
        pgr_sb_putn(out, esc, 2);
        i = j + 1;
    }
}

static void put_copy_line(pgr_sb *out, const char *s, size_t n)
{
    put_copy_field(out, s, n);
    pgr_sb_putc(out, '\n');
}

/* The rows' places kept: a new stretch where a row is not at the place
 * after the previous row's (a blank line, a record over several lines).
 * Bounded: past MAX_BREAKS stretches, the later rows are not placed. */
enum { MAX_BREAKS = 64 * 1024 };

static void place_row(pgr_import_rows *r, size_t at)
{
    if (r->breaks_full)
        return;
    if (r->n_breaks > 0) {
        const struct row_break *last = &r->breaks[r->n_breaks - 1];
        if (last->at + (r->count - last->row) == at)
            return;
    }
    if (r->n_breaks == r->breaks_cap) {
        size_t cap = r->breaks_cap == 0 ? 16 : r->breaks_cap * 2;
        struct row_break *b = cap <= MAX_BREAKS
            ? pgr_realloc(r->a, r->breaks, r->breaks_cap * sizeof *b, cap * sizeof *b)
            : NULL;
        if (b == NULL) {
            r->breaks_full = true;
            r->breaks_full_row = r->count;
            return;
        }
        r->breaks = b;
        r->breaks_cap = cap;
    }
    r->breaks[r->n_breaks++] = (struct row_break){r->count, at};
}

/* Counts a row written, at its place (a line, or a JSON array's index). */
static int counted(pgr_import_rows *r, pgr_sb *out, size_t at, pgrest_error *err)
{
    if (!pgr_sb_ok(out))
        return pgr_error_oom(err);
    place_row(r, at);
    r->count++;
    return PGREST_OK;
}

static int put_row(pgr_import_rows *r, pgr_sb *out, const char *s, size_t n, size_t at,
                   pgrest_error *err)
{
    put_copy_line(out, s, n);
    return counted(r, out, at, err);
}

bool pgr_import_rows_where(const pgr_import_rows *r, size_t row, size_t *at)
{
    if (row >= r->count || r->n_breaks == 0 || (r->breaks_full && row >= r->breaks_full_row))
        return false;
    size_t lo = 0, hi = r->n_breaks;   /* the last break at or before row */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->breaks[mid].row <= row)
            lo = mid;
        else
            hi = mid;
    }
    *at = r->breaks[lo].at + (row - r->breaks[lo].row);
    return true;
}

const char *pgr_import_rows_place(const pgr_import_rows *r)
{
    return r->fmt == PGR_IMPORT_JSON ? "index" : "line";
}

/* The first row as a body of its own: prefix, the row, suffix. */
static int keep_first(pgr_import_rows *r, const char *prefix, size_t np, const char *s,
                      size_t n, const char *suffix, pgrest_error *err)
{
    size_t ns = strlen(suffix);
    r->first = pgr_alloc(r->a, np + n + ns + 1);
    if (r->first == NULL)
        return pgr_error_oom(err);
    memcpy(r->first, prefix, np);
    memcpy(r->first + np, s, n);
    memcpy(r->first + np + n, suffix, ns);
    r->first_len = np + n + ns;
    return PGREST_OK;
}

static void defer(pgr_import_rows *r, deferred_kind kind, int rc, const pgrest_error *e)
{
    if (kind <= r->deferred)
        return;
    r->deferred = kind;
    r->deferred_rc = rc;
    r->deferred_err = *e;
}

/* payload.c's check of a key holding \u0000 (only with matched keys: a
 * ?columns= body goes unchecked); a row without a backslash has none. */
static void check_nul_key(pgr_import_rows *r, const char *s, size_t n)
{
    if (!r->match_keys || r->deferred != D_NONE || memchr(s, '\\', n) == NULL)
        return;
    const char *bad = pgr_json_key_with_nul(r->a, s, n);
    if (bad == NULL)
        return;
    pgrest_error e = {0};
    int rc = pgr_payload_key_nul_error(r->a, r->is_call, r->target, bad, &e);
    defer(r, D_NUL_KEY, rc, &e);
}

static int invalid_json(pgr_import_rows *r, const char *what, pgrest_error *err)
{
    return pgr_error(err, 400, "PGRST102", "Empty or invalid json",
                     pgr_asprintf(r->a, "index %zu: %s", r->index, what), NULL);
}

/* ------------------------------------------------------------ JSON */

static bool json_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* ------------------------------------------------------------ typed JSON rows */

/* A JSON or NDJSON row as a typed line (pgr_import_rows_set_fields): per
 * column, the text json_to_record hands the column's input function
 * (PostgreSQL's populate_scalar): a JSON null as \N; a string decoded,
 * or for a json/jsonb column decoded and quoted again as escape_json
 * does; any other value (number, true, false, object, array) as its text
 * in the row, verbatim, as PostgreSQL takes it from the row's text. The
 * row is an object json-c accepted (valid JSON): the scanners below need
 * not check its syntax. */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n && json_ws(s[i]))
        i++;
    return i;
}

/* After the closing quote of the string whose opening quote is at i. */
static size_t string_end(const char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return n;
}

/* After the value starting at i. */
static size_t value_end(const char *s, size_t n, size_t i)
{
    if (i < n && s[i] == '"')
        return string_end(s, n, i);
    if (i < n && s[i] != '{' && s[i] != '[') {
        while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && !json_ws(s[i]))
            i++;
        return i;
    }
    size_t depth = 0;
    while (i < n) {
        char c = s[i];
        if (c == '"') {
            i = string_end(s, n, i);
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return n;
}

static unsigned hex4(const char *s)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

static bool high_surrogate(unsigned c)
{
    return c >= 0xD800 && c <= 0xDBFF;
}

static bool low_surrogate(unsigned c)
{
    return c >= 0xDC00 && c <= 0xDFFF;
}

/* What PostgreSQL's JSON lexer refuses in a string's escapes while it
 * de-escapes them (json_lex_string), as json_to_record does for every
 * string of the row, nested ones and keys too: an escaped NUL, and a
 * surrogate escape not in a pair. */
typedef enum bad_escape { E_NONE, E_NUL, E_HIGH_AFTER_HIGH, E_LONE_SURROGATE } bad_escape;

static bad_escape string_escapes(const char *s, size_t n)
{
    bool high = false;   /* the escape before was a high surrogate */
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            if (high)
                return E_LONE_SURROGATE;
            continue;
        }
        if (i + 1 >= n || s[i + 1] != 'u' || n - i < 6) {
            if (high)
                return E_LONE_SURROGATE;
            i++;
            continue;
        }
        unsigned c = hex4(s + i + 2);
        i += 5;
        if (high_surrogate(c)) {
            if (high)
                return E_HIGH_AFTER_HIGH;
            high = true;
            continue;
        }
        if (low_surrogate(c) != high)
            return E_LONE_SURROGATE;
        if (!high && c == 0)
            return E_NUL;
        high = false;
    }
    return high ? E_LONE_SURROGATE : E_NONE;
}

/* The first bad escape of the row's strings, in the row's order. */
static bad_escape row_escapes(const char *s, size_t n)
{
    if (memchr(s, '\\', n) == NULL)
        return E_NONE;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '"')
            continue;
        size_t end = string_end(s, n, i);
        if (end - i < 2)   /* unterminated: not in a valid row */
            break;
        bad_escape e = string_escapes(s + i + 1, end - i - 2);
        if (e != E_NONE)
            return e;
        i = end - 1;
    }
    return E_NONE;
}

/* PostgreSQL's error for the escape, the row named as the INSERT's are. */
static int bad_escape_error(pgr_import_rows *r, bad_escape e, size_t at, pgrest_error *err)
{
    const char *place = pgr_import_rows_place(r);
    if (e == E_NUL)
        return pgr_error(err, 400, "22P05", "unsupported Unicode escape sequence",
                         pgr_asprintf(r->a, "%s %zu: \\u0000 cannot be converted to text.",
                                      place, at),
                         NULL);
    return pgr_error(err, 400, "22P02", "invalid input syntax for type json",
                     pgr_asprintf(r->a, "%s %zu: %s", place, at,
                                  e == E_HIGH_AFTER_HIGH
                                      ? "Unicode high surrogate must not follow a high surrogate."
                                      : "Unicode low surrogate must follow a high surrogate."),
                     NULL);
}

static void put_utf8(pgr_sb *to, unsigned c)
{
    char u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xC0 | c >> 6);
        u[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xE0 | c >> 12);
        u[1] = (char)(0x80 | (c >> 6 & 0x3F));
        u[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | c >> 18);
        u[1] = (char)(0x80 | (c >> 12 & 0x3F));
        u[2] = (char)(0x80 | (c >> 6 & 0x3F));
        u[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    pgr_sb_putn(to, u, n);
}

/* A string's text s[0..n) (between its quotes) decoded into to; its
 * escapes passed row_escapes. */
static void decode_string(const char *s, size_t n, pgr_sb *to)
{
    static const char simple[256] = {['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
                                     ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t'};
    size_t i = 0;
    while (i < n) {
        const char *bs = memchr(s + i, '\\', n - i);
        size_t j = bs != NULL ? (size_t)(bs - s) : n;
        pgr_sb_putn(to, s + i, j - i);
        if (j + 1 >= n)
            return;
        if (s[j + 1] != 'u' || n - j < 6) {
            pgr_sb_putc(to, simple[(unsigned char)s[j + 1]]);
            i = j + 2;
            continue;
        }
        unsigned c = hex4(s + j + 2);
        i = j + 6;
        if (high_surrogate(c) && n - i >= 6) {
            c = 0x10000 + ((c - 0xD800) << 10) + (hex4(s + i + 2) - 0xDC00);
            i += 6;
        }
        put_utf8(to, c);
    }
}

/* The names a JSON row's keys are matched against, *n of them: the
 * typed columns, or the first row's keys. */
static const char *const *row_names(const pgr_import_rows *r, size_t *n)
{
    if (r->json_field != NULL) {
        *n = r->n_fields;
        return r->field_names;
    }
    *n = r->keys.n_keys;
    return (const char *const *)r->keys.keys;
}

/* The name the key s[0..n) (between its quotes; escaped: holding an
 * escape) names, or the number of names when none: the usual place
 * first, rows' keys coming in one order. */
static size_t key_index(pgr_import_rows *r, const char *s, size_t n, bool escaped,
                        size_t guess)
{
    size_t count;
    const char *const *names = row_names(r, &count);
    if (escaped) {
        r->value.len = 0;
        decode_string(s, n, &r->value);
        if (!pgr_sb_ok(&r->value))
            return count;
        s = r->value.data;
        n = r->value.len;
    }
    for (size_t k = 0; k < count; k++) {
        size_t f = (guess + k) % count;
        const char *name = names[f];
        if (strncmp(name, s, n) == 0 && name[n] == '\0')
            return f;
    }
    return count;
}

/* One column's value s[0..n) as a COPY field. */
static void put_typed_value(pgr_import_rows *r, const char *s, size_t n, bool json,
                            pgr_sb *out)
{
    if (n == 4 && memcmp(s, "null", 4) == 0) {
        pgr_sb_putn(out, "\\N", 2);
        return;
    }
    if (s[0] != '"' || n < 2 || (json && memchr(s, '\\', n) == NULL)) {
        /* escape_json of a string without escapes is its JSON text */
        put_copy_field(out, s, n);
        return;
    }
    if (!json && memchr(s, '\\', n) == NULL) {
        put_copy_field(out, s + 1, n - 2);
        return;
    }
    r->value.len = 0;
    decode_string(s + 1, n - 2, &r->value);
    if (!json) {
        put_copy_field(out, r->value.data, r->value.len);
        return;
    }
    r->scratch.len = 0;
    pgr_sb_put_json_stringn(&r->scratch, r->value.data, r->value.len);
    put_copy_field(out, r->scratch.data, r->scratch.len);
}

/* A row as a typed line, its values at r->spans. */
static int put_typed_spans(pgr_import_rows *r, const char *s, size_t at, pgr_sb *out,
                           pgrest_error *err)
{
    for (size_t f = 0; f < r->n_fields; f++) {
        if (r->spans[f].len == 0)
            return pgr_error_internal(err, "a JSON row lacks a typed column");
        put_typed_value(r, s + r->spans[f].at, r->spans[f].len, r->json_field[f], out);
        pgr_sb_putc(out, f + 1 < r->n_fields ? '\t' : '\n');
    }
    if (!pgr_sb_ok(&r->value) || !pgr_sb_ok(&r->scratch))
        return pgr_error_oom(err);
    return counted(r, out, at, err);
}

static int json_typed_line(pgr_import_rows *r, const char *s, size_t n, size_t at,
                           pgr_sb *out, pgrest_error *err)
{
    bad_escape bad = row_escapes(s, n);
    if (bad != E_NONE)
        return bad_escape_error(r, bad, at, err);
    for (size_t f = 0; f < r->n_fields; f++)
        r->spans[f] = (struct span){0, 0};
    size_t i = skip_ws(s, n, 0) + 1, member = 0;
    for (;;) {
        i = skip_ws(s, n, i);
        if (i >= n || s[i] == '}')
            break;
        size_t key = i;
        i = string_end(s, n, i);
        if (i - key < 2)   /* unterminated: not in a valid row */
            break;
        size_t f = key_index(r, s + key + 1, i - key - 2,
                             memchr(s + key + 1, '\\', i - key - 2) != NULL, member++);
        i = skip_ws(s, n, skip_ws(s, n, i) + 1);
        size_t value = i;
        i = value_end(s, n, i);
        if (f < r->n_fields)   /* a key repeated: the last value, as PostgreSQL's */
            r->spans[f] = (struct span){value, i - value};
        i = skip_ws(s, n, i);
        i += i < n && s[i] == ',';
    }
    if (!pgr_sb_ok(&r->value))
        return pgr_error_oom(err);
    return put_typed_spans(r, s, at, out, err);
}

/* A row written: as one JSON object, or a typed line. */
static int put_json_row(pgr_import_rows *r, pgr_sb *out, const char *s, size_t n, size_t at,
                        pgrest_error *err)
{
    if (r->json_field != NULL)
        return json_typed_line(r, s, n, at, out, err);
    return put_row(r, out, s, n, at, err);
}

/* ------------------------------------------------------------ plain rows */

/* A row after the first read in one pass (json_row.h) instead of through
 * json-c: what the checks below would find of it, found on the way. */
typedef struct plain_reading {
    pgr_import_rows *r;
    const char *row;
    size_t names;     /* the keys are matched against (row_names) */
    size_t members;   /* read so far */
    size_t matched;   /* of the names, each once */
} plain_reading;

static bool plain_member(void *ctx, const char *key, size_t key_len, bool key_escaped,
                         const char *value, size_t value_len)
{
    plain_reading *p = ctx;
    pgr_import_rows *r = p->r;
    if (!r->match_keys)
        return true;
    size_t f = key_index(r, key, key_len, key_escaped, p->members++);
    if (f == p->names)   /* a key the first row lacks: the keys differ */
        return false;
    if (r->seen[f] != r->row_stamp) {
        r->seen[f] = r->row_stamp;
        p->matched++;
    }
    if (r->spans != NULL)   /* a key repeated: the last value, as PostgreSQL's */
        r->spans[f] = (struct span){(size_t)(value - p->row), value_len};
    return true;
}

/* Ready to read the row at s in one pass; false when rows go the first
 * row's way (an error is deferred: json-c finds what follows it). */
static bool plain_ready(pgr_import_rows *r, plain_reading *p, const char *s)
{
    if (r->deferred != D_NONE)
        return false;
    size_t count;
    row_names(r, &count);
    if (r->match_keys && r->seen == NULL &&
        (r->seen = PGR_NEW_ARRAY(r->a, size_t, count > 0 ? count : 1)) == NULL)
        return false;
    r->row_stamp++;
    *p = (plain_reading){.r = r, .row = s, .names = count};
    return true;
}

/* The row read had the first row's key set (when keys are matched). */
static bool plain_keys_match(const pgr_import_rows *r, const plain_reading *p)
{
    return !r->match_keys || p->matched == p->names;
}

/* The one pass's container limit for the strict reader's max_depth
 * (pgr_json_parse_body_value): one container short, as json-c counts
 * its levels its own way. */
static int plain_containers(int max_depth)
{
    return max_depth - 1;
}

/* Whether the row s[0..n) after the first is plain (json_row.h) and, when
 * keys are matched, has the first row's key set: then it is valid, an
 * object, has no key holding \u0000 and no escape PostgreSQL refuses,
 * and its values are at r->spans (typed lines). max_depth as the strict
 * reader's. False: the row goes the first row's way, which gives every
 * answer exactly. */
static bool plain_row(pgr_import_rows *r, const char *s, size_t n, int max_depth)
{
    plain_reading p;
    return plain_ready(r, &p, s) &&
           pgr_json_row_plain(s, n, plain_containers(max_depth), plain_member, &p) &&
           plain_keys_match(r, &p);
}

/* A plain row written (plain_row said so). */
static int put_plain_row(pgr_import_rows *r, pgr_sb *out, const char *s, size_t n, size_t at,
                         pgrest_error *err)
{
    if (r->json_field != NULL)
        return put_typed_spans(r, s, at, out, err);
    return put_row(r, out, s, n, at, err);
}

/* An element of the array, as payload.c's json_array_scan checks it. */
static int json_element(pgr_import_rows *r, const char *s, size_t n, pgr_sb *out,
                        pgrest_error *err)
{
    bool declined = r->element_declined;
    r->element_declined = false;
    if (r->index > 0 && !declined && plain_row(r, s, n, r->max_depth - 1)) {
        r->index++;
        return put_plain_row(r, out, s, n, r->index - 1, err);
    }
    bool deep = false;
    json_object *el = pgr_json_parse_body_value(s, n, r->max_depth - 1, &deep);
    if (el == NULL && deep)
        return invalid_json(r, pgr_asprintf(r->a, "JSON nesting deeper than %d levels "
                                            "(request-max-json-depth)", r->max_depth),
                            err);
    if (el == NULL)
        return invalid_json(r, "invalid JSON", err);
    int rc = PGREST_OK;
    if (r->index == 0) {
        /* an object: it starts with '{' (json_scan) */
        if (r->match_keys && !pgr_json_object_keys(r->a, el, &r->keys.keys, &r->keys.n_keys))
            rc = pgr_error_oom(err);
        if (rc == PGREST_OK)
            rc = keep_first(r, "[", 1, s, n, "]", err);
    } else if (r->deferred < D_MISMATCH &&
               (!json_object_is_type(el, json_type_object) ||
                (r->match_keys && !pgr_json_same_key_set(el, r->keys.keys, r->keys.n_keys)))) {
        pgrest_error e = {0};
        int erc = pgr_error(&e, 400, "PGRST102", "All object keys must match",
                            pgr_asprintf(r->a, "index %zu: %s", r->index,
                                         json_object_is_type(el, json_type_object)
                                             ? "the keys differ from those of the first object"
                                             : "not a JSON object"),
                            NULL);
        defer(r, D_MISMATCH, erc, &e);
    }
    json_object_put(el);
    if (rc != PGREST_OK)
        return rc;
    check_nul_key(r, s, n);
    r->index++;
    return r->deferred == D_NONE ? put_json_row(r, out, s, n, r->index - 1, err) : PGREST_OK;
}

typedef enum element_way { ELEMENT_READ, ELEMENT_WAIT, ELEMENT_ELSEWHERE } element_way;

/* The element at pos (its '{', after the first element) found and read
 * in one pass, instead of json_element_end's scan and then the pass:
 * ELEMENT_READ when taken and written (*rc the writing's), pos after it;
 * ELEMENT_WAIT when the window ends inside it, once per element (a longer
 * one is left to json_element_end, which resumes); ELEMENT_ELSEWHERE when
 * json_element reads it. */
static element_way plain_element(pgr_import_rows *r, bool at_end, pgr_sb *out, int *rc,
                                 pgrest_error *err)
{
    const char *s = r->buf + r->pos;
    plain_reading p;
    if (!plain_ready(r, &p, s))
        return ELEMENT_ELSEWHERE;
    size_t end;
    pgr_json_row_verdict v = pgr_json_row_plain_prefix(
        s, r->len - r->pos, plain_containers(r->max_depth - 1), plain_member, &p, &end);
    if (v == PGR_JSON_ROW_SHORT && !at_end && !r->element_waited) {
        r->element_waited = true;
        return ELEMENT_WAIT;
    }
    r->element_waited = false;
    if (v != PGR_JSON_ROW_TAKEN || !plain_keys_match(r, &p)) {
        r->element_declined = v != PGR_JSON_ROW_SHORT;
        return ELEMENT_ELSEWHERE;
    }
    r->index++;
    *rc = put_plain_row(r, out, s, end, r->index - 1, err);
    r->pos += end;
    r->js = J_AFTER;
    return ELEMENT_READ;
}

/* Where the element starting at row_start ends (payload.c's element_end,
 * resumable): false when the window ends first. */
static bool json_element_end(pgr_import_rows *r)
{
    const char *s = r->buf;
    size_t i = r->pos, n = r->len;
    if (r->scalar) {
        while (i < n && s[i] != ',' && s[i] != ']' && s[i] != '}' && !json_ws(s[i]))
            i++;
        r->pos = i;
        return i < n;
    }
    for (; i < n; i++) {
        char c = s[i];
        if (r->escaped) {
            r->escaped = false;
        } else if (r->in_string) {
            if (c == '\\') {
                r->escaped = true;
            } else if (c == '"') {
                r->in_string = false;
                if (r->depth == 0) {
                    r->pos = i + 1;
                    return true;
                }
            }
        } else if (c == '"') {
            r->in_string = true;
        } else if (c == '{' || c == '[') {
            r->depth++;
        } else if ((c == '}' || c == ']') && --r->depth == 0) {
            r->pos = i + 1;
            return true;
        }
    }
    r->pos = n;
    return false;
}

static int json_scan(pgr_import_rows *r, bool at_end, pgr_sb *out, pgrest_error *err)
{
    for (;;) {
        if (r->js != J_ELEM) {
            while (r->pos < r->len && json_ws(r->buf[r->pos]))
                r->pos++;
            r->row_start = r->pos;
            if (r->pos == r->len) {
                if (!at_end || r->js == J_DONE)
                    return PGREST_OK;
                if (r->js == J_START)
                    return PGR_IMPORT_NOT_ROWS;
                return invalid_json(r, "invalid JSON", err);
            }
        }
        char c = r->buf[r->pos];
        switch (r->js) {
        case J_START:
            if (c != '[')
                return PGR_IMPORT_NOT_ROWS;
            r->pos++;
            r->js = J_OPEN;
            break;
        case J_OPEN:
            if (c == ']' && !r->after_comma) {
                r->pos++;
                r->js = J_DONE;
                break;
            }
            if (r->index == 0 && c != '{')
                return PGR_IMPORT_NOT_ROWS;
            if (c == '{' && r->index > 0) {
                int rc = PGREST_OK;
                element_way way = plain_element(r, at_end, out, &rc, err);
                if (way == ELEMENT_WAIT)
                    return PGREST_OK;
                if (way == ELEMENT_READ) {
                    if (rc != PGREST_OK)
                        return rc;
                    break;
                }
            }
            r->scalar = c != '{' && c != '[' && c != '"';
            r->in_string = r->escaped = false;
            r->depth = 0;
            r->js = J_ELEM;
            break;
        case J_ELEM:
            if (!json_element_end(r) && !at_end)
                return PGREST_OK;
            {
                int rc = json_element(r, r->buf + r->row_start, r->pos - r->row_start, out,
                                      err);
                if (rc != PGREST_OK)
                    return rc;
            }
            r->js = J_AFTER;
            break;
        case J_AFTER:
            if (c != ',' && c != ']')
                return invalid_json(r, "invalid JSON", err);
            r->pos++;
            r->after_comma = c == ',';
            r->js = c == ',' ? J_OPEN : J_DONE;
            break;
        case J_DONE:
            return invalid_json(r, "invalid JSON", err);
        }
    }
}

/* ------------------------------------------------------------ NDJSON */

static int ndjson_line(pgr_import_rows *r, const char *line, size_t n, pgr_sb *out,
                       pgrest_error *err)
{
    r->line_no++;
    if (n > 0 && line[n - 1] == '\r')
        n--;
    if (pgr_ndjson_blank(line, n))
        return PGREST_OK;
    if (r->keys.n_rows > 0 && plain_row(r, line, n, r->max_depth)) {
        r->keys.n_rows++;
        return put_plain_row(r, out, line, n, r->line_no, err);
    }
    int rc = pgr_ndjson_check_line(r->a, r->line_no, line, n, r->max_depth, r->match_keys,
                                   &r->keys, err);
    if (rc != PGREST_OK)
        return rc;
    if (r->keys.n_rows == 0)
        rc = keep_first(r, "", 0, line, n, "", err);
    if (rc != PGREST_OK)
        return rc;
    r->keys.n_rows++;
    check_nul_key(r, line, n);
    return r->deferred == D_NONE ? put_json_row(r, out, line, n, r->line_no, err) : PGREST_OK;
}

static int ndjson_scan(pgr_import_rows *r, bool at_end, pgr_sb *out, pgrest_error *err)
{
    for (;;) {
        const char *lf = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        if (lf == NULL) {
            r->pos = r->len;
            if (!at_end || r->row_start == r->len)
                return PGREST_OK;
            int rc = ndjson_line(r, r->buf + r->row_start, r->len - r->row_start, out, err);
            r->row_start = r->len;
            return rc;
        }
        size_t end = (size_t)(lf - r->buf);
        int rc = ndjson_line(r, r->buf + r->row_start, end - r->row_start, out, err);
        if (rc != PGREST_OK)
            return rc;
        r->row_start = r->pos = end + 1;
    }
}

/* ------------------------------------------------------------ CSV */

static int csv_error(pgr_import_rows *r, const char *message, const char *what,
                     pgrest_error *err)
{
    return pgr_error(err, 400, "PGRST102", message,
                     pgr_asprintf(r->a, "line %zu: %s", r->rec_line, what), NULL);
}

/* A field PostgreSQL cannot hold: payload.c writes it into the row's JSON
 * as \u0000, which json_to_record refuses with this error. */
static int csv_nul_field(pgr_import_rows *r, pgrest_error *err)
{
    return pgr_error(err, 400, "22P05", "unsupported Unicode escape sequence",
                     pgr_asprintf(r->a, "line %zu: \\u0000 cannot be converted to text.",
                                  r->rec_line),
                     NULL);
}

/* The record in csv.rec as a typed line (pgr_import_rows_set_fields):
 * its fields in COPY text format, tab-separated, the literal NULL as \N,
 * a json field as the JSON string payload.c makes of it. */
static int csv_typed_line(pgr_import_rows *r, size_t k, pgr_sb *out, pgrest_error *err)
{
    const pgr_csv_record *rec = &r->csv.rec;
    if (k != r->n_fields)
        return pgr_error_internal(err, "a CSV record's fields differ from the typed columns");
    for (size_t i = 0; i < k; i++) {
        const char *f = pgr_csv_field(rec, i);
        size_t n = rec->len[i];
        if (memchr(f, '\0', n) != NULL)
            return csv_nul_field(r, err);
        if (n == 4 && memcmp(f, "NULL", 4) == 0) {
            pgr_sb_putn(out, "\\N", 2);
        } else if (r->json_field[i]) {
            r->scratch.len = 0;
            pgr_sb_put_json_stringn(&r->scratch, f, n);
            put_copy_field(out, r->scratch.data, r->scratch.len);
        } else {
            put_copy_field(out, f, n);
        }
        pgr_sb_putc(out, i + 1 < k ? '\t' : '\n');
    }
    return counted(r, out, r->rec_line, err);
}

/* The record buf[row_start..end), read as csv_payload reads it. */
static int csv_record(pgr_import_rows *r, size_t end, pgr_sb *out, pgrest_error *err)
{
    const char *p = r->buf + r->row_start;
    bool ended_line;
    if (!pgr_csv_read_record(&r->csv.rec, &p, r->buf + end, &ended_line))
        return pgr_error_oom(err);
    if (!r->have_header) {
        if (!ended_line)
            return csv_error(r, PGR_CSV_HEADER_ERROR, "the header has no line end", err);
        if (!pgr_csv_rows_set_header(&r->csv))
            return pgr_error_oom(err);
        size_t bad = pgr_csv_header_nul(&r->csv);
        if (bad < r->csv.nh)
            return pgr_payload_key_nul_error(
                r->a, r->is_call, r->target,
                pgr_payload_show_key(r->a, r->csv.header[bad], r->csv.hlen[bad]), err);
        r->header_raw_len = end - r->row_start;
        r->header_raw = pgr_strndup(r->a, r->buf + r->row_start, r->header_raw_len);
        r->have_header = true;
        return r->header_raw != NULL ? PGREST_OK : pgr_error_oom(err);
    }
    r->scratch.len = 0;
    size_t k = 0;
    pgr_csv_verdict v = r->json_field != NULL ? pgr_csv_rows_take(&r->csv, &k)
                                              : pgr_csv_rows_write(&r->csv, &r->scratch, false);
    switch (v) {
    case PGR_CSV_BLANK:
        return PGREST_OK;
    case PGR_CSV_MISMATCH:
        return csv_error(r, PGR_CSV_FIELDS_ERROR,
                         "the record's fields differ from those of the first record", err);
    case PGR_CSV_ROW:
        break;
    }
    if (!pgr_sb_ok(&r->scratch))
        return pgr_error_oom(err);
    if (r->count == 0) {
        int rc = keep_first(r, r->header_raw, r->header_raw_len, r->buf + r->row_start,
                            end - r->row_start, "", err);
        if (rc != PGREST_OK)
            return rc;
    }
    if (r->json_field != NULL)
        return csv_typed_line(r, k, out, err);
    return put_row(r, out, r->scratch.data, r->scratch.len, r->rec_line, err);
}

/* Finds where the record at row_start ends, as pgr_csv_read_record would
 * read it (resumable): the position after its line end, or 0 when the
 * window ends first. Counts line ends (\r\n, \r, \n) for the details. */
static size_t csv_record_end(pgr_import_rows *r)
{
    const char *s = r->buf;
    size_t i = r->pos, n = r->len;
    csv_state st = r->cs;
    size_t found = 0;
    while (i < n && found == 0) {
        char c = s[i];
        switch (st) {
        case C_START:
            if (c == '"') {
                st = C_QUOTED;
                i++;
                continue;
            }
            st = C_UNQUOTED;
            continue;
        case C_UNQUOTED: {
            size_t from = i;
            while (i < n && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
                i++;
            if (i > from)
                r->prev_cr = false;
            if (i == n)
                continue;
            c = s[i];
            if (c == ',')
                st = C_START;
            else if (c == '\r')
                st = C_CR;
            else
                found = i + 1;
            break;
        }
        case C_QUOTED:
            if (c == '"')
                st = C_QUOTE;
            break;
        case C_QUOTE:
            if (c != '"') {
                st = C_UNQUOTED;
                continue;
            }
            st = C_QUOTED;
            break;
        case C_CR:
            if (c != '\n') {
                found = i;   /* a lone \r ended the record */
                continue;
            }
            found = i + 1;
            break;
        }
        r->lines += (c == '\r') || (c == '\n' && !r->prev_cr);
        r->prev_cr = c == '\r';
        i++;
    }
    r->pos = i;
    r->cs = found != 0 ? C_START : st;
    return found;
}

static int csv_scan(pgr_import_rows *r, bool at_end, pgr_sb *out, pgrest_error *err)
{
    for (;;) {
        size_t end = csv_record_end(r);
        if (end == 0) {
            if (!at_end || r->row_start == r->len)
                return PGREST_OK;
            end = r->len;
            r->cs = C_START;
        }
        int rc = csv_record(r, end, out, err);
        if (rc != PGREST_OK)
            return rc;
        r->row_start = end;
        r->rec_line = r->lines + 1;
    }
}

/* ------------------------------------------------------------ driver */

static int scan(pgr_import_rows *r, bool at_end, pgr_sb *out, pgrest_error *err)
{
    switch (r->fmt) {
    case PGR_IMPORT_JSON: return json_scan(r, at_end, out, err);
    case PGR_IMPORT_NDJSON: return ndjson_scan(r, at_end, out, err);
    case PGR_IMPORT_CSV: break;
    }
    return csv_scan(r, at_end, out, err);
}

static int replay(const pgr_import_rows *r, pgrest_error *err)
{
    if (r->rc != PGR_IMPORT_NOT_ROWS && err != NULL)
        *err = r->err;
    return r->rc;
}

static int stick(pgr_import_rows *r, int rc, const pgrest_error *e, pgrest_error *err)
{
    r->rc = rc;
    if (rc != PGR_IMPORT_NOT_ROWS)
        r->err = *e;
    return replay(r, err);
}

/* Drops what is done with: the incomplete row moves to the front. */
static void compact(pgr_import_rows *r)
{
    size_t done = r->row_start;
    if (done == 0)
        return;
    memmove(r->buf, r->buf + done, r->len - done);
    r->len -= done;
    r->pos -= done;
    r->row_start = 0;
}

static bool reserve(pgr_import_rows *r, size_t n)
{
    if (r->len + n <= r->cap)
        return true;
    size_t cap = r->cap;
    while (cap < r->len + n)
        cap *= 2;
    char *buf = pgr_realloc(r->a, r->buf, r->cap, cap);
    if (buf == NULL)
        return false;
    r->buf = buf;
    r->cap = cap;
    return true;
}

int pgr_import_rows_feed(pgr_import_rows *r, const char *data, size_t len, pgr_sb *out,
                         pgrest_error *err)
{
    if (r->rc != PGREST_OK)
        return replay(r, err);
    pgrest_error e = {0};
    while (len > 0) {
        size_t n = len < SLICE ? len : SLICE;
        if (!reserve(r, n))
            return stick(r, pgr_error_oom(&e), &e, err);
        memcpy(r->buf + r->len, data, n);
        r->len += n;
        data += n;
        len -= n;
        int rc = scan(r, false, out, &e);
        if (rc != PGREST_OK)
            return stick(r, rc, &e, err);
        compact(r);
    }
    return PGREST_OK;
}

int pgr_import_rows_finish(pgr_import_rows *r, pgr_sb *out, pgrest_error *err)
{
    if (r->rc != PGREST_OK || r->finished)
        return replay(r, err);
    pgrest_error e = {0};
    int rc = scan(r, true, out, &e);
    if (rc == PGREST_OK && r->fmt == PGR_IMPORT_CSV && !r->have_header)
        rc = csv_error(r, PGR_CSV_HEADER_ERROR, "the header has no line end", &e);
    if (rc == PGREST_OK && r->deferred != D_NONE) {
        rc = r->deferred_rc;
        e = r->deferred_err;
    }
    r->finished = true;
    return rc != PGREST_OK ? stick(r, rc, &e, err) : PGREST_OK;
}
