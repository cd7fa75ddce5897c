/* Growable string in an arena with a sticky error (PgBouncer's pktbuf,
 * PostgreSQL's StringInfo): appends return void, pgr_sb_ok/finish report. */
#ifndef PGR_STRBUF_H
#define PGR_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "util/arena.h"

typedef struct pgr_sb {
    pgrest_arena *arena;
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} pgr_sb;

void pgr_sb_init(pgr_sb *sb, pgrest_arena *arena, size_t initial);
/* The slow path of the appends below: growth, NULL pieces, failure. */
void pgr_sb_putn_slow(pgr_sb *sb, const char *s, size_t n);

/* The appends are inline because the SQL emitter makes thousands per
 * request, most of them of string literals whose strlen the compiler then
 * folds; only a piece that does not fit goes out of line. */
static inline void pgr_sb_putn(pgr_sb *sb, const char *s, size_t n)
{
    if (!sb->failed && s != NULL && sb->len + n < sb->cap) {
        memcpy(sb->data + sb->len, s, n);
        sb->len += n;
        sb->data[sb->len] = '\0';
        return;
    }
    pgr_sb_putn_slow(sb, s, n);
}

/* A NULL s fails the buffer (see pgr_sb_putn_slow). */
static inline void pgr_sb_puts(pgr_sb *sb, const char *s)
{
    if (s == NULL) {
        sb->failed = true;
        return;
    }
    pgr_sb_putn(sb, s, strlen(s));
}

static inline void pgr_sb_putc(pgr_sb *sb, char c)
{
    if (!sb->failed && sb->len + 1 < sb->cap) {
        sb->data[sb->len++] = c;
        sb->data[sb->len] = '\0';
        return;
    }
    pgr_sb_putn_slow(sb, &c, 1);
}
void pgr_sb_put_long(pgr_sb *sb, long long v);
/* Appends s as a JSON string literal (quotes and escapes). */
void pgr_sb_put_json_string(pgr_sb *sb, const char *s);
void pgr_sb_put_json_stringn(pgr_sb *sb, const char *s, size_t n);
/* Like pgr_sb_put_json_stringn, escaped as aeson encodes a Text: '\b'
 * and '\f' as \u0008 and \u000c (the other escapes are the same). */
void pgr_sb_put_aeson_stringn(pgr_sb *sb, const char *s, size_t n);
/* Appends s as a SQL identifier: always quoted, '"' doubled. */
void pgr_sb_put_ident(pgr_sb *sb, const char *s);
/* Appends s as a SQL string literal as PostgREST's pgFmtLit writes it:
 * '...' with quotes doubled, E'...' with backslashes doubled as well when
 * s holds one (right under standard_conforming_strings on or off); only
 * for library-controlled text, never user values. */
void pgr_sb_put_literal(pgr_sb *sb, const char *s);
static inline bool pgr_sb_ok(const pgr_sb *sb) { return !sb->failed; }
/* NUL-terminated result or NULL if any append failed. */
char *pgr_sb_finish(pgr_sb *sb);

#endif
