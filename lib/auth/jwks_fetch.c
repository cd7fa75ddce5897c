/* One JWKS fetch with libcurl's easy interface (no HTTP client of our
 * own), and the Cache-Control max-age that says when to fetch again. Runs
 * on the JWKS thread (jwks.c), never on a request. */
#include "auth/jwks.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <curl/curl.h>

/* a key set is a few kilobytes; more is not a key set */
#define BODY_CAP ((size_t)1 << 20)

typedef struct transfer {
    pgr_jwks_fetched *out;
    size_t cap;
    bool too_big;
    const atomic_bool *stop;
} transfer;

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    transfer *t = arg;
    pgr_jwks_fetched *out = t->out;
    size_t n = size * nmemb;
    if (n > BODY_CAP - out->len) {
        t->too_big = true;
        return 0; /* libcurl: a short count aborts the transfer */
    }
    if (out->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < out->len + n + 1)
            cap *= 2;
        char *body = realloc(out->body, cap);
        if (body == NULL)
            return 0;
        out->body = body;
        t->cap = cap;
    }
    memcpy(out->body + out->len, data, n);
    out->len += n;
    out->body[out->len] = '\0';
    return n;
}

static bool skip_token(const char **p, const char *end, const char *token)
{
    size_t n = strlen(token);
    if ((size_t)(end - *p) < n || strncasecmp(*p, token, n) != 0)
        return false;
    *p += n;
    return true;
}

long pgr_jwks_max_age(const char *value, size_t len)
{
    const char *p = value, *end = value + len;
    long max_age = -1;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
            p++;
        if (skip_token(&p, end, "no-store") || skip_token(&p, end, "no-cache"))
            return 0;
        if (skip_token(&p, end, "max-age=")) {
            if (p < end && *p == '"')
                p++;
            long n = 0;
            bool digits = false;
            for (; p < end && isdigit((unsigned char)*p); p++) {
                digits = true;
                n = n > 100000000L ? n : n * 10 + (*p - '0');
            }
            if (digits)
                max_age = n;
        }
        while (p < end && *p != ',')
            p++;
    }
    return max_age;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
    transfer *t = arg;
    size_t n = size * nmemb;
    static const char name[] = "cache-control:";
    if (n > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0)
        t->out->max_age = pgr_jwks_max_age(data + sizeof name - 1, n - (sizeof name - 1));
    else if (n >= 5 && strncasecmp(data, "HTTP/", 5) == 0)
        t->out->max_age = -1; /* a new response (after a 100 Continue) */
    return n;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const transfer *t = arg;
    return t->stop != NULL && atomic_load(t->stop) ? 1 : 0;
}

static void setup(CURL *h, const char *uri, const char *cafile, int timeout_seconds,
                  transfer *t, char *errbuf)
{
    curl_easy_setopt(h, CURLOPT_URL, uri);
    /* a redirect could lead to plain http elsewhere: none are followed */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* a thread of a host's process */
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_seconds * 1000L);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)BODY_CAP);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pgrest");
    if (cafile != NULL)
        curl_easy_setopt(h, CURLOPT_CAINFO, cafile);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, t);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
}

/* Why the fetch failed: "<what>[: <detail>]"; the body is dropped. */
static bool failed(pgr_jwks_fetched *out, const char *what, const char *detail)
{
    snprintf(out->error, sizeof out->error, "%s%s%s", what,
             detail != NULL && detail[0] != '\0' ? ": " : "", detail != NULL ? detail : "");
    free(out->body);
    out->body = NULL;
    out->len = 0;
    return false;
}

bool pgr_jwks_fetch(const char *uri, const char *cafile, int timeout_seconds,
                    const atomic_bool *stop, pgr_jwks_fetched *out)
{
    memset(out, 0, sizeof *out);
    out->max_age = -1;
    CURL *h = curl_easy_init();
    if (h == NULL)
        return failed(out, "out of memory", NULL);
    transfer t = {.out = out, .stop = stop};
    char errbuf[CURL_ERROR_SIZE] = "";
    setup(h, uri, cafile, timeout_seconds, &t, errbuf);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    if (t.too_big)
        return failed(out, "the response is larger than 1 MiB", NULL);
    /* libcurl's own words, then its details (the TLS error, say) */
    if (rc != CURLE_OK)
        return failed(out, curl_easy_strerror(rc), errbuf);
    if (status != 200) {
        char text[32];
        snprintf(text, sizeof text, "%ld", status);
        return failed(out, "HTTP status", text);
    }
    if (out->body == NULL)
        return failed(out, "empty response", NULL);
    return true;
}
