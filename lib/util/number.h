/* Number parsing: integers the way PostgREST reads them from requests (Haskell
 * readMaybe :: Maybe Integer): optional '-', digits, nothing else. */
#ifndef PGR_NUMBER_H
#define PGR_NUMBER_H

#include <stdbool.h>

/* With trim, surrounding ASCII whitespace is accepted (readMaybe skips
 * it). False on anything else or on overflow. */
bool pgr_read_integer(const char *s, bool trim, long long *out);

/* The value of one hex digit, -1 if c is none. */
int pgr_hex_value(char c);

#endif
