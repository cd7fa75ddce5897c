/* The deprecated JSPath DSL of jwt-role-claim-key (PostgREST
 * Config/DeprecatedJSPath.hs): `.key`, `."quoted key"`, `[0]` and one
 * final filter `[?(@ == "x")]` (==, !=, ^==, ==^, *==). Used to validate,
 * to dump (`dumpDeprecatedJSPath`) and to word the configuration error
 * (server start, and the library's reloads); evaluating role claims is
 * auth/role_claim_path's job. */
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
