/* The reason phrase of the status line, as PostgREST's Warp writes it:
 * http-types' statusMessage. PostgREST makes every status it answers with
 * from http-types -- its own (status416 ...) and the ones a request picks
 * (response.status GUC, SQLSTATE PTxyz: toEnum) -- and toEnum gives a code
 * outside http-types' list an empty message. Clients show the phrase
 * (fetch's statusText, which postgrest-js returns as statusText).
 *
 * libmicrohttpd 0.9.75 has no way to set the phrase per response: it
 * builds the status line from MHD_get_reason_phrase_for and
 * MHD_get_reason_phrase_len_for, its own RFC 9110 table ("Range Not
 * Satisfiable", "Content Too Large", "Non-Standard Status" for 418 ...).
 * The library calls both through its exported symbols, so the definitions
 * below, linked into the executable, are the ones it uses (ELF symbol
 * interposition); tests/server checks the status lines on the wire.
 * One difference stays: for a code outside the list Warp writes no phrase,
 * while libmicrohttpd replaces an empty one by "Non-Standard Status".
 *
 * A response can carry its own phrase (pgrest_response_reason: Error.hs's
 * mkStatus for SQLSTATE PTxyz and RAISE 'PGRST' status_text). The server
 * hands it over in a thread-local slot just before queueing the response;
 * libmicrohttpd asks for the phrase while building the status line, which
 * it does in the same thread right after the handler returns. The slot is
 * emptied when the next response is queued or the request completes, and
 * serves only its status code. */
#include <microhttpd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "reason_phrase.h"

typedef struct reason {
    unsigned code;
    const char *phrase;
} reason;

/* Network.HTTP.Types.Status: the statuses its Enum instance names */
static const reason reasons[] = {
    {100, "Continue"},
    {101, "Switching Protocols"},
    {200, "OK"},
    {201, "Created"},
    {202, "Accepted"},
    {203, "Non-Authoritative Information"},
    {204, "No Content"},
    {205, "Reset Content"},
    {206, "Partial Content"},
    {300, "Multiple Choices"},
    {301, "Moved Permanently"},
    {302, "Found"},
    {303, "See Other"},
    {304, "Not Modified"},
    {305, "Use Proxy"},
    {307, "Temporary Redirect"},
    {308, "Permanent Redirect"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {402, "Payment Required"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {406, "Not Acceptable"},
    {407, "Proxy Authentication Required"},
    {408, "Request Timeout"},
    {409, "Conflict"},
    {410, "Gone"},
    {411, "Length Required"},
    {412, "Precondition Failed"},
    {413, "Request Entity Too Large"},
    {414, "Request-URI Too Long"},
    {415, "Unsupported Media Type"},
    {416, "Requested Range Not Satisfiable"},
    {417, "Expectation Failed"},
    {418, "I'm a teapot"},
    {422, "Unprocessable Entity"},
    {426, "Upgrade Required"},
    {428, "Precondition Required"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
    {505, "HTTP Version Not Supported"},
    {511, "Network Authentication Required"},
};

/* the executable is built with -fvisibility=hidden: these two must be
 * in its dynamic symbol table (reason_phrase.dynlist) */
#define EXPORTED __attribute__((visibility("default")))

/* the phrase of the status line this thread writes next (libmicrohttpd
 * asks for its length and then for the phrase); kept until the next
 * response is queued or the request completed */
static _Thread_local struct {
    unsigned code;
    char *phrase;
} next_phrase;

static void clear_next_phrase(void)
{
    free(next_phrase.phrase);
    next_phrase.phrase = NULL;
}

void pgrs_reason_phrase_next(unsigned code, const char *phrase)
{
    clear_next_phrase();
    if (phrase == NULL)
        return;
    next_phrase.code = code;
    next_phrase.phrase = strdup(phrase); /* NULL on OOM: the usual phrase */
}

static const char *standard_phrase(unsigned code)
{
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].code == code)
            return reasons[i].phrase;
    return "";
}

EXPORTED const char *MHD_get_reason_phrase_for(unsigned int code)
{
    if (next_phrase.phrase != NULL && next_phrase.code == code)
        return next_phrase.phrase;
    return standard_phrase(code);
}

EXPORTED size_t MHD_get_reason_phrase_len_for(unsigned int code)
{
    return strlen(MHD_get_reason_phrase_for(code));
}
