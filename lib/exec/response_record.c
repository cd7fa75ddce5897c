/* The response record (struct pgrest_response): building it (status,
 * headers, reason) and the public accessors a host reads it with. Every
 * part of the response code fills it, so it sits below all of them. */
#include "exec/response_record.h"

#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

pgrest_response *pgr_response_new(pgrest_arena *a, int status)
{
    pgrest_response *r = PGR_NEW(a, pgrest_response);
    if (r != NULL) {
        r->status = status;
        r->body = "";
    }
    return r;
}

void pgr_response_add_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value)
{
    /* a NULL is a copy that failed: the arena is exhausted and the stage
     * fails at its boundary; never hand the host a NULL header */
    if (name == NULL || value == NULL)
        return;
    if (r->n_headers == r->cap_headers) {
        size_t ncap = r->cap_headers ? r->cap_headers * 2 : 8;
        pgrest_header *n = pgr_realloc(a, r->headers,
                                       r->cap_headers * sizeof(pgrest_header),
                                       ncap * sizeof(pgrest_header));
        if (n == NULL)
            return;
        r->headers = n;
        r->cap_headers = ncap;
    }
    r->headers[r->n_headers].name = name;
    r->headers[r->n_headers].value = value;
    r->n_headers++;
}

void pgr_response_set_reason(pgrest_arena *a, pgrest_response *r, const char *text)
{
    char *phrase = pgr_strdup(a, text);
    if (phrase == NULL)
        return;
    for (char *p = phrase; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    r->reason = phrase;
}

void pgr_response_set_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value)
{
    if (name == NULL || value == NULL)
        return;
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) == 0) {
            r->headers[i].value = value;
            return;
        }
    pgr_response_add_header(a, r, name, value);
}

const char *pgr_response_get_header(const pgrest_response *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) == 0)
            return r->headers[i].value;
    return NULL;
}

/* Content-Range "lower-upper/total" (PostgREST RangeQuery contentRangeH). */
const char *pgr_content_range(pgrest_arena *a, long long lower, long long upper,
                              bool has_total, long long total)
{
    bool total_nonzero = !has_total || total != 0;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 48);
    if (total_nonzero && lower <= upper) {
        pgr_sb_put_long(&sb, lower);
        pgr_sb_putc(&sb, '-');
        pgr_sb_put_long(&sb, upper);
    } else {
        pgr_sb_putc(&sb, '*');
    }
    pgr_sb_putc(&sb, '/');
    if (has_total)
        pgr_sb_put_long(&sb, total);
    else
        pgr_sb_putc(&sb, '*');
    return pgr_sb_finish(&sb);
}

void pgr_response_remove_header(pgrest_response *r, const char *name)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) != 0)
            r->headers[k++] = r->headers[i];
    r->n_headers = k;
}

int pgrest_response_status(const pgrest_response *resp)
{
    return resp ? resp->status : 500;
}

const char *pgrest_response_reason(const pgrest_response *resp)
{
    return resp ? resp->reason : NULL;
}

size_t pgrest_response_header_count(const pgrest_response *resp)
{
    return resp ? resp->n_headers : 0;
}

const pgrest_header *pgrest_response_header(const pgrest_response *resp,
                                            size_t i)
{
    return resp && i < resp->n_headers ? &resp->headers[i] : NULL;
}

const char *pgrest_response_role(const pgrest_response *resp)
{
    return resp ? resp->role : NULL;
}

const char *pgrest_response_body(const pgrest_response *resp, size_t *len)
{
    if (len != NULL)
        *len = resp ? resp->body_len : 0;
    return resp ? resp->body : NULL;
}

const char *pgrest_response_commit_lsn(const pgrest_response *resp)
{
    return resp ? pgr_response_get_header(resp, PGREST_COMMIT_LSN_HEADER) : NULL;
}
