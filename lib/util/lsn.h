/* PostgreSQL WAL positions (pg_lsn): "X/Y", two hexadecimal numbers of
 * at most 8 digits each, the high and low 32 bits (pg_lsn_in). */
#ifndef PGR_LSN_H
#define PGR_LSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The whole of s (s_len bytes) as a WAL position; false for anything
 * pg_lsn_in refuses, and for surrounding blanks. */
bool pgr_lsn_parse(const char *s, size_t s_len, uint64_t *out);
/* "X/Y" in PostgreSQL's own upper-case form; buf holds PGR_LSN_LEN. */
#define PGR_LSN_LEN 18
void pgr_lsn_format(uint64_t lsn, char buf[PGR_LSN_LEN]);

#endif
