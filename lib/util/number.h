/* Number parsing: integers the way PostgREST reads them from requests (Haskell
 * readMaybe :: Maybe Integer): optional '-', digits, nothing else. */
#ifndef PGR_NUMBER_H
#define PGR_NUMBER_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
