/* UTF-8 well-formedness (RFC 3629: no overlongs, no surrogates, nothing
 * above U+10FFFF), for text that came from the client as raw bytes. */
#ifndef PGR_UTF8_H
#define PGR_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"

/* Length (1..4) of the well-formed sequence starting s[0] (n > 0 bytes
 * available), or 0 when s[0] does not start one. */
size_t pgr_utf8_seq_len(const unsigned char *s, size_t n);

/* Whether s[0..n) is entirely well-formed UTF-8. */
bool pgr_utf8_valid(const char *s, size_t n);

/* s[0..n) decoded the way Data.Text.Encoding's lenientDecode does: each
 * byte that starts no well-formed sequence becomes U+FFFD. Returns s
 * itself when it is well-formed, else a NUL-terminated copy in a (NULL
 * when the arena is exhausted); *out_len (may be NULL) gets its length. */
const char *pgr_utf8_lenient(pgrest_arena *a, const char *s, size_t n,
                             size_t *out_len);

#endif
