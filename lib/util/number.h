/* Numbers read and written as PostgREST's Haskell does: integers the way it
 * reads them from requests (readMaybe :: Maybe Integer), Doubles as show
 * prints them, JSON numbers as aeson re-encodes them. */
#ifndef PGR_NUMBER_H
#define PGR_NUMBER_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

/* With trim, surrounding ASCII whitespace is accepted (readMaybe skips
 * it). False on anything else or on overflow. */
bool pgr_read_integer(const char *s, bool trim, long long *out);

/* The value of one hex digit, -1 if c is none. */
int pgr_hex_value(char c);

/* x as Haskell's `show :: Double -> String` writes it: the shortest digits
 * that read back as x, fixed notation with at least one decimal for
 * 0.1 <= |x| < 10^7 ("0.0", "10.0", "0.223109"), else scientific
 * ("5.0e-2", "1.0e7"). buf of PGR_SHOW_DOUBLE_LEN bytes holds any. */
#define PGR_SHOW_DOUBLE_LEN 40
void pgr_show_double(double x, char *buf, size_t len);

/* A JSON number literal as aeson re-encodes the Scientific it decodes
 * (Data.Aeson.Encoding.Builder.scientific): a non-negative exponent up to
 * 1024 prints the integer (42, 1e2 -> 100, digits of any length);
 * otherwise the Generic format of pgr_show_double on the normalised
 * digits (42.20 -> 42.2, 0.050 -> 5.0e-2, 1e1025 -> 1.0e1025). The
 * text may have surrounding JSON whitespace. Allocated in a; NULL when
 * text is not a JSON number or the arena is out of memory. */
const char *pgr_aeson_number(pgrest_arena *a, const char *text);

#endif
