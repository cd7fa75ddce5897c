/* One JSON object read in one pass, for the rows of a streamed import
 * (import_rows.c): checked and split into its members without building a
 * document. It takes only the plainest objects -- what the strict reader
 * (json_strict.h, through json-c) surely takes and reads the same -- and
 * leaves every other text to that reader, which gives it its exact
 * answer: the one-pass reader never refuses a row, it only declines. */
#ifndef PGR_JSON_ROW_H
#define PGR_JSON_ROW_H

#include <stdbool.h>
#include <stddef.h>

/* A member of the object: its key's text between the quotes (escaped:
 * it holds a backslash escape) and its value's text. False stops the
 * reading: the object is declined. */
typedef bool (*pgr_json_member_fn)(void *ctx, const char *key, size_t key_len,
                                   bool key_escaped, const char *value, size_t value_len);

/* Whether s[0..n) is one plain JSON object, whitespace around it
 * allowed; calls member for each of its members in order (a repeated key
 * each time). Plain: RFC 8259 JSON in well-formed UTF-8, containers
 * nested at most max_containers deep (the object is one; at most 64),
 * numbers without an exponent and with at most 18 digits before the
 * point, no \u escape of U+0000 nor of a surrogate (PostgreSQL refuses
 * some, json-c reads them its own way), at most INT_MAX bytes. */
bool pgr_json_row_plain(const char *s, size_t n, int max_containers,
                        pgr_json_member_fn member, void *ctx);

typedef enum pgr_json_row_verdict {
    PGR_JSON_ROW_TAKEN,     /* a plain object */
    PGR_JSON_ROW_SHORT,     /* the text ends inside it, all of it plain so far */
    PGR_JSON_ROW_DECLINED
} pgr_json_row_verdict;

/* The same for the object starting at s[0] (its '{'), the text after it
 * not read (a JSON array's element, found and read in one pass): TAKEN
 * with *end after its '}'. On SHORT the members seen were reported
 * already: read it again from s once more text has come. */
pgr_json_row_verdict pgr_json_row_plain_prefix(const char *s, size_t n, int max_containers,
                                               pgr_json_member_fn member, void *ctx,
                                               size_t *end);

#endif
