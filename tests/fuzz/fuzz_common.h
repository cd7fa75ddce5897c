/* Shared helpers of the libFuzzer targets: the fuzz input is cut into
 * newline-separated fields (binary-safe; a field is copied into its own
 * exact-size heap block so ASan sees any read past its NUL). */
#ifndef PGR_FUZZ_COMMON_H
#define PGR_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#include "pgrest/pgrest.h"
#include "util/arena.h"
#include "util/utf8.h"

#include <json-c/json.h>

#define FUZZ_SECRET "reallyreallyreallyreallyverysafe"

typedef struct fuzz_reader {
    const uint8_t *p;
    size_t left;
} fuzz_reader;

static inline void fuzz_reader_init(fuzz_reader *r, const uint8_t *data,
                                    size_t size)
{
    r->p = data;
    r->left = size;
}

/* An exact-size NUL-terminated copy of n bytes (embedded NULs stay, so
 * the C string simply ends early). Never NULL: aborts on OOM. */
static inline char *fuzz_strndup(const uint8_t *s, size_t n)
{
    char *out = malloc(n + 1);
    if (out == NULL)
        abort();
    if (n > 0)
        memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

/* The next field up to '\n' (consumed, not included); the rest of the
 * input when there is no newline. Free with free(). */
static inline char *fuzz_line(fuzz_reader *r)
{
    const uint8_t *nl = r->left ? memchr(r->p, '\n', r->left) : NULL;
    size_t n = nl ? (size_t)(nl - r->p) : r->left;
    char *out = fuzz_strndup(r->p, n);
    r->p += n;
    r->left -= n;
    if (nl != NULL) {
        r->p++;
        r->left--;
    }
    return out;
}

/* The arena cap of this input: its first two bytes, big-endian, v.
 * v = 0 gives a generous 16 MiB (the seed corpora start with two zero
 * bytes); otherwise v * 16 bytes (16 B .. 1 MiB), so the fuzzer can make
 * any allocation of any stage the one that exhausts the arena. */
static inline size_t fuzz_arena_cap(fuzz_reader *r)
{
    unsigned v = 0;
    for (int i = 0; i < 2 && r->left > 0; i++) {
        v = (v << 8) | *r->p++;
        r->left--;
    }
    return v == 0 ? (size_t)16 << 20 : (size_t)v * 16;
}

/* A failed call on an arena that ran out is the out-of-memory error (the
 * public stages check the sticky flag at their boundary); internal
 * functions called directly may stop with any error then, so only a
 * crash is a finding. */
static inline bool fuzz_exhausted_ok(pgrest_arena *a, const pgrest_error *err);

/* One byte of input as a selector (0 when the input is exhausted). */
static inline unsigned fuzz_byte(fuzz_reader *r)
{
    if (r->left == 0)
        return 0;
    r->left--;
    return *r->p++;
}

/* A failed call must still describe a well-formed PostgREST error: the
 * host builds its HTTP response from it. Anything else is a bug. */
static inline void fuzz_check_error(const pgrest_error *err)
{
    if (err->code == NULL || err->message == NULL || err->http_status < 300 ||
        err->http_status > 599) {
        fprintf(stderr, "malformed error: status %d code %s\n",
                err->http_status, err->code ? err->code : "(null)");
        abort();
    }
}

/* The error response a host sends: its body must be one JSON object in
 * well-formed UTF-8, whatever client bytes the message echoes. */
static inline void fuzz_check_error_body(pgrest_ctx *ctx, pgrest_arena *a,
                                         const pgrest_error *err)
{
    pgrest_response *resp = pgrest_error_response(ctx, a, err);
    if (resp == NULL) {
        if (pgr_arena_exhausted(a))
            return;
        abort();
    }
    size_t len = 0;
    const char *body = pgrest_response_body(resp, &len);
    if (body == NULL || !pgr_utf8_valid(body, len)) {
        fprintf(stderr, "error body is not UTF-8: %.*s\n", (int)len, body ? body : "");
        abort();
    }
    json_object *o = json_tokener_parse(body);
    if (o == NULL || !json_object_is_type(o, json_type_object)) {
        fprintf(stderr, "error body is not a JSON object: %.*s\n", (int)len, body);
        abort();
    }
    json_object_put(o);
}

/* The authentication stage, before parsing as PostgREST does: a failed
 * outcome must be a well-formed error; a successful one is attached so
 * that the statements are emitted. A failed one is not attached, so the
 * parser still sees every request (parsing never reads the token). */
static inline void fuzz_authenticate(pgrest_ctx *ctx, pgrest_arena *a, pgrest_request *req)
{
    pgrest_auth *auth = NULL;
    pgrest_error err = {0};
    if (pgrest_authenticate(ctx, a, req, &auth, &err) == PGREST_OK) {
        pgrest_request_set_auth(req, auth);
        return;
    }
    fuzz_check_error(&err);
    fuzz_check_error_body(ctx, a, &err);
}

static inline bool fuzz_exhausted_ok(pgrest_arena *a, const pgrest_error *err)
{
    (void)err;
    return pgr_arena_exhausted(a);
}

static inline void fuzz_set(pgrest_ctx *ctx, const char *key, const char *value)
{
    pgrest_error err = {0};
    if (pgrest_ctx_set(ctx, key, value, &err) != PGREST_OK) {
        fprintf(stderr, "fuzz setup: %s=%s refused\n", key, value);
        abort();
    }
}

#endif
