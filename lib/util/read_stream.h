/* A whole stream read into memory (read_stream.c): the configuration
 * file, @file values, schema snapshot files. */
#ifndef PGR_READ_STREAM_H
#define PGR_READ_STREAM_H

#include <stddef.h>
#include <stdio.h>

/* What is left of f, malloc'd and NUL-terminated, its length in *len
 * (when len != NULL); NULL on OOM. The text may hold NULs of its own. */
char *pgr_read_stream(FILE *f, size_t *len);

#endif
