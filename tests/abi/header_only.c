/* Includes nothing but the public header: it must compile on its own, as
 * C11 and as C++, with warnings as errors (tests/abi/check_header.sh).
 * The uses below make sure the declarations are usable, not just parsed;
 * with HEADER_ONLY_MAIN it is also linked to libpgrest (C linkage from
 * C++ included) and prints the library's version. */
#include <pgrest/pgrest.h>

typedef const char *(*version_fn)(void);
typedef pgrest_response *(*handle_fn)(pgrest_ctx *, pgrest_arena *,
                                      const pgrest_request *);

int pgrest_header_only_check(void);
int pgrest_header_only_check(void)
{
    version_fn v = pgrest_version;
    handle_fn h = pgrest_handle;
    pgrest_error err = {0, 0, 0, 0, 0};
    pgrest_header hdr = {0, 0};
    int status = PGREST_OK + PGREST_AGAIN + PGREST_ERR_SCHEMA;
    return (v != 0) + (h != 0) + err.http_status + (hdr.name != 0) + status +
           PGREST_VERSION_MAJOR;
}

#ifdef HEADER_ONLY_MAIN
#include <stdio.h>

int main(void)
{
    puts(pgrest_version());
    return pgrest_header_only_check() == 0;
}
#endif
