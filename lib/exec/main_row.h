/* What the main statement returns, as the executor reads it from its
 * row and the response code turns it into a response. */
#ifndef PGR_MAIN_ROW_H
#define PGR_MAIN_ROW_H

#include <stdbool.h>
#include <stddef.h>

/* The main statement's row: body, counts and GUC overrides. */
typedef struct pgr_main_row {
    bool has_total;
    long long total;
    long long page_total;
    const char *body;
    size_t body_len;
    const char *guc_headers;  /* response.headers JSON or NULL */
    const char *guc_status;   /* response.status or NULL */
    const char *location;     /* response_location column (POST) or NULL */
    bool has_inserted;
    long long inserted;       /* response_inserted column (upserts) */
} pgr_main_row;

#endif
