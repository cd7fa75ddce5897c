#include "util/strbuf.h"

#include <stdio.h>
#include <string.h>

void pgr_sb_init(pgr_sb *sb, pgrest_arena *arena, size_t initial)
{
    sb->arena = arena;
    sb->len = 0;
    sb->failed = false;
    sb->cap = initial < 16 ? 16 : initial;
    sb->data = pgr_alloc(arena, sb->cap);
    if (sb->data == NULL) {
        sb->failed = true;
        sb->cap = 0;
    }
}

static bool reserve(pgr_sb *sb, size_t extra)
{
    if (sb->failed)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t ncap = sb->cap * 2;
    while (ncap < sb->len + extra + 1)
        ncap *= 2;
    char *n = pgr_realloc(sb->arena, sb->data, sb->cap, ncap);
    if (n == NULL) {
        sb->failed = true;
        return false;
    }
    sb->data = n;
    sb->cap = ncap;
    return true;
}

/* A NULL piece is what a failed arena allocation upstream produced: the
 * buffer fails with it (sticky), so no caller has to check every string
 * it appends and no append ever dereferences NULL. */
static bool piece_ok(pgr_sb *sb, const char *s)
{
    if (s == NULL)
        sb->failed = true;
    return !sb->failed;
}

void pgr_sb_putn_slow(pgr_sb *sb, const char *s, size_t n)
{
    if ((n > 0 && !piece_ok(sb, s)) || !reserve(sb, n))
        return;
    if (n > 0)
        memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

/* Decimal digits by hand: snprintf's format parsing was a visible part of
 * emitting a statement (every LIMIT, OFFSET and $n goes through here). */
void pgr_sb_put_long(pgr_sb *sb, long long v)
{
    char buf[24];
    char *end = buf + sizeof buf, *p = end;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--p = '-';
    pgr_sb_putn(sb, p, (size_t)(end - p));
}

static void put_u_escape(pgr_sb *sb, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
    pgr_sb_putn(sb, u, 6);
}

/* aeson_escapes: aeson's escapeAscii (Data.Aeson.Encoding.Builder) has
 * short escapes for '\n', '\r' and '\t' only, so '\b' and '\f' are
 * \u0008 and \u000c there. */
static void put_json_string(pgr_sb *sb, const char *s, size_t n, bool aeson_escapes)
{
    if (n > 0 && !piece_ok(sb, s))
        return;
    pgr_sb_putc(sb, '"');
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        pgr_sb_putn(sb, s + start, i - start);
        start = i + 1;
        switch (c) {
        case '"': pgr_sb_puts(sb, "\\\""); break;
        case '\\': pgr_sb_puts(sb, "\\\\"); break;
        case '\n': pgr_sb_puts(sb, "\\n"); break;
        case '\r': pgr_sb_puts(sb, "\\r"); break;
        case '\t': pgr_sb_puts(sb, "\\t"); break;
        case '\b':
        case '\f':
            if (aeson_escapes)
                put_u_escape(sb, c);
            else
                pgr_sb_puts(sb, c == '\b' ? "\\b" : "\\f");
            break;
        default: put_u_escape(sb, c);
        }
    }
    pgr_sb_putn(sb, s + start, n - start);
    pgr_sb_putc(sb, '"');
}

void pgr_sb_put_json_stringn(pgr_sb *sb, const char *s, size_t n)
{
    put_json_string(sb, s, n, false);
}

void pgr_sb_put_aeson_stringn(pgr_sb *sb, const char *s, size_t n)
{
    put_json_string(sb, s, n, true);
}

void pgr_sb_put_json_string(pgr_sb *sb, const char *s)
{
    if (piece_ok(sb, s))
        pgr_sb_put_json_stringn(sb, s, strlen(s));
}

static void put_doubled(pgr_sb *sb, const char *s, char quote)
{
    if (!piece_ok(sb, s))
        return;
    pgr_sb_putc(sb, quote);
    size_t n = strlen(s);
    if (memchr(s, quote, n) == NULL) { /* the usual case: nothing to double */
        pgr_sb_putn(sb, s, n);
        pgr_sb_putc(sb, quote);
        return;
    }
    const char *p = s;
    const char *q;
    while ((q = strchr(p, quote)) != NULL) {
        pgr_sb_putn(sb, p, (size_t)(q - p) + 1);
        pgr_sb_putc(sb, quote);
        p = q + 1;
    }
    pgr_sb_puts(sb, p);
    pgr_sb_putc(sb, quote);
}

void pgr_sb_put_ident(pgr_sb *sb, const char *s)
{
    put_doubled(sb, s, '"');
}

/* PostgREST's pgFmtLit (Query/SqlFragment.hs): quotes doubled, and when
 * the text holds a backslash, E'...' with backslashes doubled too, so the
 * literal reads the same whatever standard_conforming_strings says. */
void pgr_sb_put_literal(pgr_sb *sb, const char *s)
{
    if (!piece_ok(sb, s))
        return;
    if (strchr(s, '\\') == NULL) {
        put_doubled(sb, s, '\'');
        return;
    }
    pgr_sb_puts(sb, "E'");
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '\\' || *p == '\'')
            pgr_sb_putc(sb, *p);
        pgr_sb_putc(sb, *p);
    }
    pgr_sb_putc(sb, '\'');
}

char *pgr_sb_finish(pgr_sb *sb)
{
    return sb->failed ? NULL : sb->data;
}
