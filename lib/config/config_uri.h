/* URI checks PostgREST's config makes with Haskell's network-uri:
 * jwt-aud containing ':' must be an RFC 3986 URI (isURI), and
 * openapi-server-proxy-uri must be an absolute http(s) URI with a host,
 * no user info, no query and a port in 1..65535 (Config/Proxy.hs
 * isMalformedProxyUri). */
#ifndef PGRS_CONFIG_URI_H
#define PGRS_CONFIG_URI_H

#include <stdbool.h>

bool config_uri_is_uri(const char *s);
bool config_uri_is_malformed_proxy(const char *s);

#endif
