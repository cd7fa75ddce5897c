/* CSV records (see csv_body.h). */
#include "parse/csv_body.h"

#include <stdlib.h>
#include <string.h>

void pgr_csv_record_init(pgr_csv_record *rec, pgrest_arena *a)
{
    *rec = (pgr_csv_record){0};
    pgr_sb_init(&rec->bytes, a, 256);
}

static bool grow_fields(pgr_csv_record *rec)
{
    pgrest_arena *a = rec->bytes.arena;
    size_t cap = rec->cap ? rec->cap * 2 : 16;
    size_t *s = pgr_realloc(a, rec->start, rec->cap * sizeof *s, cap * sizeof *s);
    size_t *l = pgr_realloc(a, rec->len, rec->cap * sizeof *l, cap * sizeof *l);
    if (s == NULL || l == NULL)
        return false;
    rec->start = s;
    rec->len = l;
    rec->cap = cap;
    return true;
}

static bool csv_special(char c)
{
    return c == ',' || c == '\n' || c == '\r';
}

bool pgr_csv_read_record(pgr_csv_record *rec, const char **pp, const char *end,
                         bool *ended_line)
{
    const char *p = *pp;
    pgr_sb *sb = &rec->bytes;
    sb->len = 0;
    rec->n = 0;
    bool more = true;
    *ended_line = false;
    while (more) {
        if (rec->n == rec->cap && !grow_fields(rec))
            return false;
        size_t start = sb->len;
        if (p < end && *p == '"') {
            p++;
            while (p < end) {
                const char *q = memchr(p, '"', (size_t)(end - p));
                const char *stop = q != NULL ? q : end;
                pgr_sb_putn(sb, p, (size_t)(stop - p));
                p = stop;
                if (p >= end)
                    break;
                if (p + 1 < end && p[1] == '"') {
                    pgr_sb_putc(sb, '"');
                    p += 2;
                    continue;
                }
                p++;
                break;
            }
        }
        const char *q = p;
        while (q < end && !csv_special(*q))
            q++;
        pgr_sb_putn(sb, p, (size_t)(q - p));
        p = q;
        rec->start[rec->n] = start;
        rec->len[rec->n] = sb->len - start;
        rec->n++;
        pgr_sb_putc(sb, '\0');
        if (p >= end) {
            more = false;
        } else if (*p == ',') {
            p++;
        } else {
            more = false;
            *ended_line = true;
            if (*p++ == '\r' && p < end && *p == '\n')
                p++;
        }
    }
    *pp = p;
    return pgr_sb_ok(sb);
}

void pgr_csv_rows_init(pgr_csv_rows *c, pgrest_arena *a)
{
    *c = (pgr_csv_rows){.a = a};
    pgr_csv_record_init(&c->rec, a);
}

int pgr_cmp_name_at(const void *x, const void *y)
{
    const pgr_name_at *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c != 0 ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* A record maps the header's names to its first k fields (cassava
 * toNamedRecord: HM.fromList of the zip), so of repeated names the last
 * within the prefix wins: field i is kept when next_same[i] >= k. Sorting
 * keeps a header of many names O(n log n). */
bool pgr_csv_rows_set_header(pgr_csv_rows *c)
{
    pgrest_arena *a = c->a;
    size_t nh = c->rec.n;
    c->nh = nh;
    c->header = PGR_NEW_ARRAY(a, const char *, nh + 1);
    c->hlen = PGR_NEW_ARRAY(a, size_t, nh + 1);
    pgr_name_at *sorted = PGR_NEW_ARRAY(a, pgr_name_at, nh + 1);
    bool *first = PGR_NEW_ARRAY(a, bool, nh + 1);
    c->next_same = PGR_NEW_ARRAY(a, size_t, nh + 1);
    c->distinct = PGR_NEW_ARRAY(a, size_t, nh + 1);
    if (c->header == NULL || c->hlen == NULL || sorted == NULL || first == NULL ||
        c->next_same == NULL || c->distinct == NULL)
        return false;
    for (size_t i = 0; i < nh; i++) {
        c->hlen[i] = c->rec.len[i];
        /* the copy keeps a NUL byte in the name: pgr_csv_header_nul */
        char *name = pgr_alloc(a, c->hlen[i] + 1);
        if (name == NULL)
            return false;
        memcpy(name, pgr_csv_field(&c->rec, i), c->hlen[i]);
        c->header[i] = name;
        sorted[i] = (pgr_name_at){name, i};
    }
    qsort(sorted, nh, sizeof *sorted, pgr_cmp_name_at);
    for (size_t i = 0; i < nh; i++) {
        bool same_next = i + 1 < nh && strcmp(sorted[i].name, sorted[i + 1].name) == 0;
        c->next_same[sorted[i].pos] = same_next ? sorted[i + 1].pos : nh;
        first[sorted[i].pos] = i == 0 || strcmp(sorted[i - 1].name, sorted[i].name) != 0;
    }
    c->distinct[0] = 0;
    for (size_t k = 0; k < nh; k++)
        c->distinct[k + 1] = c->distinct[k] + first[k];
    return true;
}

size_t pgr_csv_header_nul(const pgr_csv_rows *c)
{
    for (size_t i = 0; i < c->nh; i++)
        if (memchr(c->header[i], '\0', c->hlen[i]) != NULL)
            return i;
    return c->nh;
}

pgr_csv_verdict pgr_csv_rows_take(pgr_csv_rows *c, size_t *k)
{
    const pgr_csv_record *rec = &c->rec;
    if (rec->n == 1 && rec->len[0] == 0)
        return PGR_CSV_BLANK;
    *k = rec->n < c->nh ? rec->n : c->nh;
    size_t distinct = c->distinct[*k];
    if (c->rows == 0) {
        c->names = distinct;
        c->first_k = *k;
    } else if (distinct != c->names) {
        return PGR_CSV_MISMATCH;
    }
    c->rows++;
    return PGR_CSV_ROW;
}

pgr_csv_verdict pgr_csv_rows_write(pgr_csv_rows *c, pgr_sb *sb, bool comma)
{
    const pgr_csv_record *rec = &c->rec;
    size_t k;
    pgr_csv_verdict v = pgr_csv_rows_take(c, &k);
    if (v != PGR_CSV_ROW)
        return v;
    if (comma && c->rows > 1)
        pgr_sb_putc(sb, ',');
    pgr_sb_putc(sb, '{');
    bool first = true;
    for (size_t i = 0; i < k; i++) {
        if (c->next_same[i] < k)
            continue;
        if (!first)
            pgr_sb_putc(sb, ',');
        first = false;
        pgr_sb_put_json_string(sb, c->header[i]);
        pgr_sb_putc(sb, ':');
        if (rec->len[i] == 4 && memcmp(pgr_csv_field(rec, i), "NULL", 4) == 0)
            pgr_sb_puts(sb, "null");
        else
            pgr_sb_put_json_stringn(sb, pgr_csv_field(rec, i), rec->len[i]);
    }
    pgr_sb_putc(sb, '}');
    return PGR_CSV_ROW;
}
