/* The request target as PostgREST sees it: Warp's extractPath turns an
 * absolute-form target ("http://host:1/p?q", RFC 9112 3.2.2) into its
 * path, "/" when it has none; the query stays. */
#ifndef PGRS_ORIGIN_FORM_H
#define PGRS_ORIGIN_FORM_H

/* A new string (free()), NULL when out of memory. */
char *origin_form(const char *target);

#endif
