/* The URL check http-client's parseRequest makes on `--ready`'s URL
 * (PostgREST Client.hs), so an address that cannot form a URL is told
 * apart from one nobody answers on. */
#ifndef PGRS_READY_URL_H
#define PGRS_READY_URL_H

#include <stddef.h>

#define READY_URL_MAX 1024

/* What http-client's Request keeps of a URL that parsed (setUri). */
typedef struct {
    char host[READY_URL_MAX];   /* uriRegName: brackets kept, still escaped */
    long long port;             /* 80 when the URL names none */
    char path[READY_URL_MAX];   /* "/" when the URL's path is empty */
    char query[READY_URL_MAX];  /* with its '?', or "" */
} ready_url;

typedef enum {
    READY_URL_OK,
    READY_URL_UNPARSABLE,   /* parseURI failed: the raw text is reported */
    READY_URL_BAD_PORT      /* setUri's "Invalid port": the escaped text is */
} ready_url_status;

/* Escapes `raw` as escapeURIString isAllowedInURI into `escaped` (of
 * READY_URL_MAX bytes) and parses it as network-uri's parseURI, then
 * http-client's setUri, would. Fills `out` on READY_URL_OK. */
ready_url_status ready_url_parse(const char *raw, char *escaped, ready_url *out);

/* show (getUri req): the URL as http-client reports a failed request,
 * the default port left out. */
void ready_url_show(const ready_url *u, char *buf, size_t cap);

#endif
