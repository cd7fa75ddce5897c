/* The deprecated JSPath DSL of jwt-role-claim-key (PostgREST
 * Config/DeprecatedJSPath.hs): `.key`, `."quoted key"`, `[0]` and one
 * final filter `[?(@ == "x")]` (==, !=, ^==, ==^, *==). The server only
 * needs it to validate, to dump (`dumpDeprecatedJSPath`) and to word
 * errors; evaluating role claims is the library's job. */
#ifndef PGRS_JSPATH_LEGACY_H
#define PGRS_JSPATH_LEGACY_H

#include <stdbool.h>

/* Parses s. On success returns true and *dump is the malloc'd
 * dumpDeprecatedJSPath text (keys and literals shown Haskell-style:
 * `."role"`); on failure returns false and *error is the malloc'd Parsec
 * error text, `"failed to parse role-claim-key value (<s>)" (line 1,
 * column N):` followed by the unexpected/expecting lines. */
bool jspath_legacy_parse(const char *s, char **dump, char **error);

#endif
