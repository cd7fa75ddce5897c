/* UTF-8 well-formedness (RFC 3629: no overlongs, no surrogates, nothing
 * above U+10FFFF), for text that came from the client as raw bytes. */
#ifndef PGR_UTF8_H
#define PGR_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length (1..4) of the well-formed sequence starting s[0] (n > 0 bytes
 * available), or 0 when s[0] does not start one. */
size_t pgr_utf8_seq_len(const unsigned char *s, size_t n);

/* Whether s[0..n) is entirely well-formed UTF-8. */
bool pgr_utf8_valid(const char *s, size_t n);

#endif
