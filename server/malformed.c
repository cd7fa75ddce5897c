#include "malformed.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

/* libmicrohttpd up to 0.9.75 parses the request line and the header
 * fields in place in its read buffer: it writes a NUL over each
 * separator (the spaces of the request line, the colon, CR and LF) and
 * hands on pointers into the buffer as C strings. A NUL the client sent
 * therefore ends a field early, silently. Every byte of the header block
 * that lies in no field must be a separator MHD wrote or whitespace it
 * skipped; any other byte lay behind a NUL the client sent (or on a
 * folded continuation line, which MHD copies elsewhere). Other MHD
 * versions are not relied on. */
#if MHD_VERSION <= 0x00097500
#define PARSES_IN_PLACE 1
#else
#define PARSES_IN_PLACE 0
#endif

static bool is_filler(char c)
{
    return c == '\0' || c == ' ' || c == '\t';
}

/* Moves *pos over separators up to field; false if a byte in between
 * belongs to no field or the field is not ahead in the block. */
static bool skip_to(const char **pos, const char *field, const char *end)
{
    if ((uintptr_t)field < (uintptr_t)*pos || (uintptr_t)field > (uintptr_t)end)
        return false;
    for (const char *p = *pos; p != field; p++)
        if (!is_filler(*p))
            return false;
    *pos = field;
    return true;
}

typedef struct header_walk {
    const char *pos;
    const char *end;
    bool ok;
} header_walk;

static enum MHD_Result walk_header(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
    (void)kind;
    header_walk *w = cls;
    w->ok = w->ok && skip_to(&w->pos, key, w->end);
    if (w->ok)
        w->pos += strlen(key);
    w->ok = w->ok && value != NULL && skip_to(&w->pos, value, w->end);
    if (w->ok)
        w->pos += strlen(value);
    return w->ok ? MHD_YES : MHD_NO;
}

bool request_hides_bytes(struct MHD_Connection *con, const char *method,
                         const char *version, const raw_target *target)
{
    if (!PARSES_IN_PLACE || target->at == NULL)
        return false;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (ci == NULL)
        return false;
    header_walk w = {method + strlen(method), method + ci->header_size, true};
    /* the version follows the target's terminator: the target had no NUL */
    if (!skip_to(&w.pos, target->at, w.end) ||
        (uintptr_t)version != (uintptr_t)(target->at + target->len + 1))
        return true;
    w.pos = version + strlen(version);
    MHD_get_connection_values(con, MHD_HEADER_KIND, walk_header, &w);
    return !w.ok || !skip_to(&w.pos, w.end, w.end);
}

typedef struct length_fields {
    const char *first;
    bool conflict;
} length_fields;

static enum MHD_Result compare_length(void *cls, enum MHD_ValueKind kind,
                                      const char *key, const char *value)
{
    (void)kind;
    length_fields *f = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) != 0 || value == NULL)
        return MHD_YES;
    if (f->first == NULL)
        f->first = value;
    else if (strcmp(f->first, value) != 0)
        f->conflict = true;
    return MHD_YES;
}

bool body_length_unknowable(struct MHD_Connection *con)
{
    const char *coding = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (coding != NULL && strcasecmp(coding, "chunked") != 0)
        return true;
    length_fields f = {NULL, false};
    MHD_get_connection_values(con, MHD_HEADER_KIND, compare_length, &f);
    return f.conflict;
}

bool framing_is_ambiguous(struct MHD_Connection *con)
{
    return MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                       MHD_HTTP_HEADER_CONTENT_LENGTH) != NULL &&
           MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                       MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
}
