/* Which jwt-jwks-uri values are accepted: keys that sign tokens must not
 * travel in clear over a network, so https, and plain http only to this
 * host. libcurl's URL parser reads the URI, so the host checked is the
 * host libcurl connects to (a userinfo "127.0.0.1@" does not fool it). */
#include "auth/jwks.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <curl/curl.h>

static bool loopback(const char *host)
{
    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
        strcmp(host, "::1") == 0)
        return true;
    /* 127.0.0.0/8: libcurl has normalised the dotted quad */
    return strncmp(host, "127.", 4) == 0 && strspn(host, "0123456789.") == strlen(host);
}

const char *pgr_jwks_uri_problem(const char *uri)
{
    CURLU *u = curl_url();
    if (u == NULL)
        return "out of memory";
    char *scheme = NULL, *host = NULL;
    const char *problem = NULL;
    if (curl_url_set(u, CURLUPART_URL, uri, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        problem = "jwt-jwks-uri is not a valid URI";
    else if (strcmp(scheme, "http") == 0 ? !loopback(host) : strcmp(scheme, "https") != 0)
        problem = "jwt-jwks-uri must be https (http only to localhost)";
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return problem;
}
