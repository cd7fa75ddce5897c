/* Config.hs coerceInt and coerceBool on a text value (configurator's
 * C.String): how PostgREST reads a number or a boolean given as text --
 * every PGRST_* variable, every in-database setting and a quoted value of
 * the config file. Unreadable text is Nothing there: the option keeps
 * its default, no error. */
#ifndef PGR_CONFIG_COERCE_H
#define PGR_CONFIG_COERCE_H

#include <stdbool.h>

/* `readMaybe` for an integral type: white space, balanced parentheses, an
 * optional '-' lexeme, decimal, 0x hexadecimal or 0o octal digits; false
 * for anything else (and beyond long long). */
bool pgr_coerce_int_text(const char *s, long long *out);

/* The letters of s read as True/False in any case ("TRUE", "t-r-u-e"),
 * else s read as an integer (> 0 is true); false for anything else. */
bool pgr_coerce_bool_text(const char *s, bool *out);

#endif
