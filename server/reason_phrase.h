/* The reason phrase of the next status line this thread writes
 * (server/reason_phrase.c). */
#ifndef PGRS_REASON_PHRASE_H
#define PGRS_REASON_PHRASE_H

/* The phrase for the response about to be queued with status `code` on
 * this thread; NULL for the status's usual phrase. libmicrohttpd builds
 * the status line right after the handler queued the response, in the
 * same thread; the phrase is used once, for that code. */
void pgrs_reason_phrase_next(unsigned code, const char *phrase);

#endif
