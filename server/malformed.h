/* Client mistakes in the HTTP framing that libmicrohttpd lets through
 * and Warp's parser (or RFC 9112) refuses: the server answers them 400
 * and closes, as Warp answers what it cannot parse. */
#ifndef PGRS_MALFORMED_H
#define PGRS_MALFORMED_H

#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>

/* Where the request target lay in MHD's read buffer when the URI
 * callback saw it (before MHD splits and unescapes it in place). */
typedef struct raw_target {
    const char *at;
    size_t len;   /* strlen at that time: up to the first NUL */
} raw_target;

/* A NUL byte inside the request line or a header field, or a folded
 * (obs-fold) header line: MHD ends its C strings there and would hand
 * on a truncated field. */
bool request_hides_bytes(struct MHD_Connection *con, const char *method,
                         const char *version, const raw_target *target);

/* A body whose length cannot be told (RFC 9112 6.3): Content-Length
 * fields that disagree, or a Transfer-Encoding other than chunked alone
 * (MHD would read such a body until the client closes). */
bool body_length_unknowable(struct MHD_Connection *con);

/* Content-Length together with Transfer-Encoding: MHD reads the body by
 * the Transfer-Encoding, and RFC 9112 6.1 requires the connection to be
 * closed after the answer (the two framings may disagree). */
bool framing_is_ambiguous(struct MHD_Connection *con);

#endif
