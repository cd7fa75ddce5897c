#include "http.h"
#include "version.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine_loop.h"
#include "listen_socket.h"
#include "log.h"
#include "malformed.h"
#include "origin_form.h"
#include "reason_phrase.h"
#include "reuseport.h"

/* How long a graceful shutdown waits for requests in flight. */
#define DRAIN_SECONDS 60
/* How much of an oversized chunked body is read (and dropped) beyond the
 * limit so that the client can still be told 413. */
#define DISCARD_SLACK ((size_t)1 << 20)

/* One libmicrohttpd daemon in external-polling mode and the engine loop
 * that runs it together with its requests' PostgreSQL sockets. */
typedef struct http_worker {
    struct MHD_Daemon *daemon;
    engine_loop *loop;
} http_worker;

struct http_server {
    http_worker *workers;
    unsigned n_workers;
    atomic_uint next_worker;  /* for connections handed over by reuseport */
    pgrest_ctx *ctx;
    size_t max_body_size;
    size_t streamed_body_threshold; /* 0: bodies never stream */
    size_t max_streamed_body_size;  /* 0: unbounded (the library enforces it) */
    size_t max_url_size;
    size_t max_header_size;
    int listen_fd;
    bool reuseport;
    bool cancel_on_disconnect;
    char *unix_path;
    atomic_int active;        /* requests between first handler call and completion */
    atomic_bool closing;      /* shutting down: answer with Connection: close */
};

static int connection_fd(struct MHD_Connection *con)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci != NULL ? ci->connect_fd : -1;
}

/* The client closed its side and nothing it sent is left unread: a body
 * still expected will never come. (MHD can miss a close that came while
 * the connection was suspended; it would wait for server-timeout.) */
static bool client_left(struct MHD_Connection *con)
{
    int fd = connection_fd(con), unread = 0;
    struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};
    return fd >= 0 && poll(&pfd, 1, 0) == 1 &&
           (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0 &&
           ioctl(fd, FIONREAD, &unread) == 0 && unread == 0;
}

/* Requests whose body streams into PostgreSQL while MHD still reads it
 * (docs/bulk-import.md), watched for a client that vanished each time the
 * daemon runs (at least once a second): MHD 0.9.75 can miss a client's
 * close after the connection was suspended and resumed (PGREST_AGAIN),
 * and would hold the COPY's transaction until server-timeout. One list
 * per loop: MHD calls back on the thread that runs its daemon. */
struct request_state;
static _Thread_local struct request_state *streaming_bodies;

/* Per-request state, created by the URI callback (which sees the raw
 * request target, query string included). */
typedef struct request_state {
    http_server *server;
    char *uri;
    raw_target raw;   /* the target as it lay in MHD's buffer */
    bool started;
    bool in_flight;   /* counted in server->active: graceful shutdown waits */
    /* A request body goes to the task as MHD hands it over
     * (pgrest_task_write_body); the server only counts it, for its own
     * 413 and for how much of a refused body it reads and drops. */
    size_t received;  /* body bytes up to server-max-body-size */
    bool too_large;
    size_t discarded; /* body bytes past server-max-body-size */
    bool body_follows;  /* the task was started on the headers alone */
    bool body_ended;    /* ... and pgrest_task_end_body has taken the end */
    bool body_waiting;  /* suspended: the task did not take a chunk
                         * (PGREST_AGAIN) until it wants its body again */
    struct request_state *next_streaming; /* in streaming_bodies */
    bool streaming;     /* ... its body goes into PostgreSQL as it comes */
    /* the request in the engine: suspended from the body's end until done */
    struct MHD_Connection *con;
    pgrest_arena *arena;
    engine_job job;
    bool adopted;            /* the loop drives the task (engine_adopt) */
    pgrest_response *resp;   /* set by the loop thread before resuming */
    /* a streamed response (docs/streaming.md) */
    bool head_resumed;       /* its head is ready: resumed to queue it */
    bool stream_queued;      /* queued: MHD reads the body from the task */
    bool reader_waiting;     /* the body reader suspended the connection */
    bool orphaned;           /* MHD is done with it, the task not yet */
} request_state;

/* MHD's buffer for a streamed body: the engine's threshold, so one read
 * can take what the task holds when it pauses. */
#define STREAM_BLOCK_SIZE (64 * 1024)

/* The server reads the query from its own copy of the target (rs->uri),
 * never from MHD's arguments, so MHD need not split it: ending the query
 * string where it starts in MHD's buffer leaves MHD nothing to record.
 * MHD 0.9.75 records every argument (even the empty ones of "&&&...") in
 * the connection's pool, from the same buffer, right after this callback:
 * a query of many arguments would exhaust the pool before the headers
 * are read (no room even for an error answer: the connection would hang
 * until it times out), and a pool sized for them would be zeroed whole
 * after every request. */
static void keep_mhd_from_splitting(char *uri)
{
    char *query = strchr(uri, '?');
    if (query != NULL)
        query[1] = '\0';
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *con)
{
    (void)con;
    request_state *rs = calloc(1, sizeof *rs);
    if (rs != NULL)
        rs->server = cls;
    if (rs != NULL && uri != NULL)
        rs->raw = (raw_target){uri, strlen(uri)};
    if (rs != NULL)
        rs->uri = origin_form(uri ? uri : "/");
    if (rs != NULL && rs->uri != NULL && uri != NULL)
        keep_mhd_from_splitting((char *)uri);
    return rs;
}

static void stop_watching_body(request_state *rs)
{
    if (!rs->streaming)
        return;
    rs->streaming = false;
    for (request_state **p = &streaming_bodies; *p != NULL; p = &(*p)->next_streaming)
        if (*p == rs) {
            *p = rs->next_streaming;
            return;
        }
}

static void watch_body(request_state *rs)
{
    if (rs->streaming || !pgrest_task_body_streams(rs->job.task))
        return;
    rs->streaming = true;
    rs->next_streaming = streaming_bodies;
    streaming_bodies = rs;
}

static void count_in_flight(request_state *rs)
{
    rs->in_flight = true;
    atomic_fetch_add(&rs->server->active, 1);
}

/* Once per request: by its completion, or earlier once it answers nobody */
static void stop_counting(request_state *rs)
{
    if (!rs->in_flight)
        return;
    rs->in_flight = false;
    atomic_fetch_sub(&rs->server->active, 1);
}

/* A request whose client left mid-body answers nobody: a graceful
 * shutdown need not wait for it (http_stop), as it would until MHD's
 * server-timeout. Its socket is shut down on our side as well: the
 * hang-up is a new event, on which MHD drops the connection at once (the
 * client's own close may have gone unseen: client_left). */
static void abandon_request(request_state *rs)
{
    stop_counting(rs);
    shutdown(connection_fd(rs->con), SHUT_RDWR);
}

/* A streamed body's client gone (client_left): its task is cancelled,
 * nothing written, the connection back in the pool, the request
 * abandoned. */
static void sweep_streaming_bodies(void)
{
    request_state **p = &streaming_bodies;
    while (*p != NULL) {
        request_state *rs = *p;
        bool gone = !rs->adopted && !rs->job.finished && client_left(rs->con);
        if (gone && pgrest_task_cancel(rs->job.task) == PGREST_TASK_DONE)
            rs->job.finished = true;
        if (gone)
            abandon_request(rs);
        if (rs->job.finished) {
            *p = rs->next_streaming;
            rs->streaming = false;
        } else {
            p = &rs->next_streaming;
        }
    }
}

static void free_state(request_state *rs)
{
    pgrest_arena_free(rs->arena);
    free(rs->uri);
    free(rs);
}

static void on_completed(void *cls, struct MHD_Connection *con, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)con;
    /* its status line is long written */
    pgrs_reason_phrase_next(0, NULL);
    request_state *rs = *con_cls;
    if (rs == NULL)
        return;
    /* counted once the access handler saw it: MHD reports completion
     * for every request its handler was called for */
    stop_counting(rs);
    *con_cls = NULL;
    stop_watching_body(rs);
    /* a task the HTTP side holds, waiting for the rest of its body: the
     * client went away or stalled past server-timeout, or the server
     * answered its own 413. Cancelled: a task waiting for its body is DONE
     * at once; one that is not (it holds a connection) is finished by the
     * loop, which frees it then (task_done) -- unless the loop is gone. */
    if (rs->arena != NULL && !rs->job.finished && !rs->adopted) {
        if (pgrest_task_cancel(rs->job.task) == PGREST_TASK_DONE)
            rs->job.finished = true;
        else if (toe != MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN) {
            rs->orphaned = true;
            rs->job.client_fd = -1;  /* MHD closes it now */
            rs->adopted = true;
            engine_adopt(&rs->job);
            return;
        }
    }
    /* a streamed body the client stopped reading (gone, timed out, or the
     * body failed): the task is cancelled and freed once done */
    if (rs->arena != NULL && !rs->job.finished && rs->head_resumed) {
        rs->orphaned = true;
        engine_cancel(&rs->job);
        return;
    }
    /* a task still in flight (the daemon stopping under it) keeps its
     * memory: its loop may yet touch it */
    if (rs->arena != NULL && !rs->job.finished)
        return;
    free_state(rs);
}

/* With its length: a value holding a NUL byte reaches the library whole,
 * which refuses it (400 22021) instead of acting on the part before it. */
static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind,
                                  const char *key, size_t key_size,
                                  const char *value, size_t value_size)
{
    (void)kind;
    (void)key_size;
    pgrest_request_add_header_n(cls, key, value ? value : "", value ? value_size : 0);
    return MHD_YES;
}

static ssize_t no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)pos, (void)buf, (void)max;
    return MHD_CONTENT_READER_END_OF_STREAM;
}

/* A HEAD answer without Content-Length (head_without_length). Only a
 * response of unknown size keeps MHD 0.9.75 from adding one, and such a
 * response is sent chunked -- with the chunked terminator "0\r\n\r\n"
 * written after the headers even for HEAD, a body that a keep-alive client
 * reads as the start of its next answer. Strict HTTP/1.0 compatibility
 * turns chunking off: the headers end the answer and MHD closes the
 * connection after it (announced by "Connection: close"). That close is
 * the one difference from Warp, which keeps the connection open. A status
 * that never has a body (1xx, 204) has no length headers at all and keeps
 * the connection. */
static struct MHD_Response *head_response(int status)
{
    if (status < 200 || status == 204)
        return MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64, no_body, NULL, NULL);
    if (r != NULL &&
        MHD_set_response_options(r, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(r);
        return NULL;
    }
    return r;
}

/* MHD asks for more of a streamed body whenever it can send: what the
 * task holds, or, when it holds nothing yet, the connection is suspended
 * until the loop has more (request_progress). The task fetches on after
 * every read: the loop steps it. A failed body ends the transfer without
 * the terminating chunk, so the client sees it cut short. */
static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    request_state *rs = cls;
    long n = pgrest_task_read_body(rs->job.task, buf, max);
    if (n == PGREST_BODY_END)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n < 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (!rs->job.finished)
        engine_wake(&rs->job);
    if (n > 0)
        return (ssize_t)n;
    rs->reader_waiting = true;
    MHD_suspend_connection(rs->con);
    return 0;
}

/* Framing headers libmicrohttpd owns: it refuses Content-Length and
 * Connection: keep-alive (and a Transfer-Encoding but chunked) from the
 * application and frames the body itself, as Warp's own Content-Length
 * and keep-alive win over PostgREST's. Such a refusal leaves the answer
 * as it was. */
static bool framing_header(const char *name)
{
    return strcasecmp(name, "Content-Length") == 0 || strcasecmp(name, "Connection") == 0 ||
           strcasecmp(name, "Transfer-Encoding") == 0;
}

/* The response's headers onto r; false when libmicrohttpd refuses one it
 * cannot write (CR or LF in it, a space in or an empty name: what
 * response.headers can set), logged with its name. */
static bool add_headers(struct MHD_Response *r, const pgrest_response *resp)
{
    size_t n = pgrest_response_header_count(resp);
    for (size_t i = 0; i < n; i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        /* Warp writes a header with an empty value (the trace header of
         * a request without it, App.hs traceHeaderMiddleware; one that
         * response.headers sets); libmicrohttpd refuses an empty value,
         * so it goes out as one space, which every reader strips (RFC
         * 9110 5.5: the value excludes surrounding whitespace) */
        if (MHD_add_response_header(r, h->name, h->value[0] != '\0' ? h->value : " ") == MHD_YES)
            continue;
        bool framing = framing_header(h->name);
        log_msg(framing ? LOG_DEBUG : LOG_ERROR,
                "Response header %s refused by the HTTP server%s", h->name,
                framing ? ": it frames the body itself" : "; answering 500 PGRST111");
        if (!framing)
            return false;
    }
    return true;
}

/* The answer when a header cannot be written: PostgREST's for a
 * response.headers value it cannot use (Response.hs decodeGucHeaders,
 * Error.hs GucHeadersError), where Warp would have written the bytes as
 * they are and split or broken the response. In arena a. */
static const pgrest_response *header_refused(http_server *s, pgrest_arena **a)
{
    if (*a == NULL)
        *a = pgrest_arena_new(0);
    pgrest_error err = {500, "PGRST111",
                        "response.headers guc must be a JSON array composed of objects "
                        "with a single key and a string value",
                        NULL, NULL};
    return *a != NULL ? pgrest_error_response(s->ctx, *a, &err) : NULL;
}

/* stream: the request whose task streams the body (resp streamed), else
 * NULL. *sent: the response that went out (resp, or the 500 when one of
 * its headers could not be written, made in *fallback, created if NULL;
 * fallback NULL: no 500 to fall back on). *fallback outlives *sent. */
static enum MHD_Result send_response(http_server *s, struct MHD_Connection *con,
                                     const pgrest_response *resp, bool head,
                                     request_state *stream, pgrest_arena **fallback,
                                     const pgrest_response **sent)
{
    *sent = resp;
    size_t len;
    const char *body = pgrest_response_body(resp, &len);
    request_state *rs = pgrest_response_streamed(resp) && !head ? stream : NULL;
    struct MHD_Response *r =
        head ? head_response(pgrest_response_status(resp))
        : rs != NULL ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK_SIZE,
                                                         read_stream, rs, NULL)
             : MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO;
    if (!add_headers(r, resp)) {
        MHD_destroy_response(r);
        /* fallback NULL: this is the 500 already, whose headers are the
         * library's and always go; nothing further to fall back on */
        const pgrest_response *err = fallback != NULL ? header_refused(s, fallback) : NULL;
        if (err == NULL)
            return MHD_NO;
        /* an error answer keeps its Content-Length for HEAD too
         * (head_without_length) */
        return send_response(s, con, err, false, NULL, NULL, sent);
    }
    /* PostgREST's Warp setServerName (App.hs), see version.h */
    MHD_add_response_header(r, "Server", PGRS_SERVER_HEADER);
    /* a keep-alive client learns the server is going away; a request
     * framed both ways leaves the connection in doubt */
    if (atomic_load(&s->closing) || framing_is_ambiguous(con))
        MHD_add_response_header(r, "Connection", "close");
    unsigned status = (unsigned)pgrest_response_status(resp);
    pgrs_reason_phrase_next(status, pgrest_response_reason(resp));
    enum MHD_Result ret = MHD_queue_response(con, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A limit refusal as PostgREST's JSON error body, built by the library.
 * Queued before the request is complete, so MHD closes the connection
 * afterwards and never reads the rest of an oversized request. */
static enum MHD_Result send_limit_error(http_server *s, struct MHD_Connection *con,
                                        int status, const char *message,
                                        const char *option, size_t limit)
{
    pgrest_arena *arena = pgrest_arena_new(0);
    if (arena == NULL)
        return MHD_NO;
    char code[16], details[128];
    snprintf(code, sizeof code, "PGRST%d", status);
    snprintf(details, sizeof details, "The limit is %zu bytes (%s)", limit, option);
    pgrest_error err = {status, code, message, details, NULL};
    pgrest_response *resp = pgrest_error_response(s->ctx, arena, &err);
    const pgrest_response *sent;
    enum MHD_Result ret = resp ? send_response(s, con, resp, false, NULL, &arena, &sent) : MHD_NO;
    pgrest_arena_free(arena);
    return ret;
}

/* Warp's answer to a request it cannot parse (defaultOnExceptionResponse
 * for InvalidRequest). Queued before the body is read, so MHD closes the
 * connection after it. */
static enum MHD_Result send_bad_request(struct MHD_Connection *con)
{
    static const char body[] = "Bad Request";
    struct MHD_Response *r = MHD_create_response_from_buffer(
        sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    MHD_add_response_header(r, "Server", PGRS_SERVER_HEADER);
    MHD_add_response_header(r, "Connection", "close");
    pgrs_reason_phrase_next(MHD_HTTP_BAD_REQUEST, NULL);
    enum MHD_Result ret = MHD_queue_response(con, MHD_HTTP_BAD_REQUEST, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result add_header_size(void *cls, enum MHD_ValueKind kind,
                                       const char *key, const char *value)
{
    (void)kind;
    size_t *total = cls;
    *total += strlen(key) + (value ? strlen(value) : 0) + 4; /* ": " CRLF */
    return MHD_YES;
}

/* URL and header sizes, checked once the headers are in (the declared
 * body size once the request is built: start_task). */
static enum MHD_Result check_limits(http_server *s, struct MHD_Connection *con,
                                    const request_state *rs, bool *refused)
{
    *refused = true;
    if (strlen(rs->uri) > s->max_url_size)
        return send_limit_error(s, con, 414, "URI too long",
                                "server-max-url-size", s->max_url_size);
    size_t headers = 0;
    MHD_get_connection_values(con, MHD_HEADER_KIND, add_header_size, &headers);
    if (headers > s->max_header_size)
        return send_limit_error(s, con, 431, "Request header fields too large",
                                "server-max-header-size", s->max_header_size);
    *refused = false;
    return MHD_YES;
}

/* A declared body past the limits is refused before it is read: past
 * server-max-body-size, unless it may stream into PostgreSQL
 * (docs/bulk-import.md), whose bound is server-max-streamed-body-size
 * (none by default, as PostgREST has none). */
static enum MHD_Result refuse_declared(http_server *s, struct MHD_Connection *con,
                                       const pgrest_request *req, bool *refused)
{
    *refused = false;
    const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Length");
    unsigned long long declared = cl != NULL ? strtoull(cl, NULL, 10) : 0;
    if (declared <= s->max_body_size)
        return MHD_YES;
    if (!pgrest_request_body_may_stream(req)) {
        *refused = true;
        return send_limit_error(s, con, 413, "Request body too large",
                                "server-max-body-size", s->max_body_size);
    }
    if (s->max_streamed_body_size > 0 && declared > s->max_streamed_body_size) {
        *refused = true;
        return send_limit_error(s, con, 413, "Request body too large",
                                "server-max-streamed-body-size", s->max_streamed_body_size);
    }
    return MHD_YES;
}

/* Response.hs leaves Content-Length out of every answer to HEAD it
 * builds (a 416 range answer too) but an execution plan's (DbPlanResult
 * always sets it); Error.hs errorResponseFor, whose answers carry
 * Proxy-Status, always sets it too. */
static bool head_without_length(const char *method, const pgrest_response *resp)
{
    if (strcmp(method, "HEAD") != 0)
        return false;
    size_t n = pgrest_response_header_count(resp);
    for (size_t i = 0; i < n; i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        if (strcasecmp(h->name, "Proxy-Status") == 0)
            return false;
        if (strcasecmp(h->name, "Content-Type") == 0 &&
            strncmp(h->value, "application/vnd.pgrst.plan+", 27) == 0)
            return false;
    }
    return true;
}

/* The size PostgREST logs is its Content-Length header ("-" without). */
static long long logged_size(const char *method, const pgrest_response *resp)
{
    size_t len;
    pgrest_response_body(resp, &len);
    if (head_without_length(method, resp) || pgrest_response_streamed(resp))
        return -1;
    return (long long)len;
}

/* A CORS preflight is answered by PostgREST's CORS middleware before its
 * application (and its access log) sees the request. */
static bool is_preflight(struct MHD_Connection *con, const char *method,
                         const pgrest_response *resp)
{
    if (strcmp(method, "OPTIONS") != 0 ||
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Access-Control-Request-Method") == NULL)
        return false;
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++)
        if (strcasecmp(pgrest_response_header(resp, i)->name, "Access-Control-Allow-Methods") == 0)
            return true;
    return false;
}

/* role: the request's (the answer sent may be the server's own 500) */
static void access_log(struct MHD_Connection *con, const char *method, const char *version,
                       const char *uri, const pgrest_response *resp, const char *role)
{
    int status = pgrest_response_status(resp);
    if (!log_enabled_for_status(status) || is_preflight(con, method, resp))
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    char ip[INET6_ADDRSTRLEN + 16];
    peer_address(ci != NULL ? ci->client_addr : NULL, ip, sizeof ip);
    const char *ua = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "User-Agent");
    const char *ref = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Referer");
    log_access(ip, role, method, uri, version, status,
               logged_size(method, resp), ref ? ref : "", ua ? ua : "");
}

static enum MHD_Result respond(http_server *s, struct MHD_Connection *con,
                               const char *method, const char *version,
                               request_state *rs)
{
    pgrest_response *resp = rs->resp;
    /* apart from the request's arena (a streamed one is the task's):
     * made only for a refused header */
    pgrest_arena *fallback = NULL;
    const pgrest_response *sent = resp;
    enum MHD_Result ret =
        resp ? send_response(s, con, resp, head_without_length(method, resp), rs, &fallback,
                             &sent)
             : MHD_NO;
    if (resp != NULL)
        access_log(con, method, version, rs->uri, sent, pgrest_response_role(resp));
    pgrest_arena_free(fallback);
    /* a streamed body is read from the task's arena until MHD is done */
    if (resp != NULL && pgrest_response_streamed(resp)) {
        rs->stream_queued = ret == MHD_YES;
        rs->resp = NULL;
        return ret;
    }
    pgrest_arena_free(rs->arena);
    rs->arena = NULL;
    rs->resp = NULL;
    return ret;
}

static request_state *job_request(engine_job *job)
{
    return (request_state *)((char *)job - offsetof(request_state, job));
}

/* A body reader waiting for the task goes on (it may find nothing yet
 * and wait again). */
static bool wake_reader(request_state *rs)
{
    if (!rs->reader_waiting)
        return false;
    rs->reader_waiting = false;
    MHD_resume_connection(rs->con);
    return true;
}

/* From the loop thread: the task is done, the connection goes on. */
static void task_done(engine_job *job)
{
    request_state *rs = job_request(job);
    if (rs->orphaned) {
        free_state(rs);
        return;
    }
    /* a streamed head already went to MHD, or is on its way */
    if (rs->head_resumed) {
        wake_reader(rs);
        return;
    }
    /* done before it took the chunk it refused with PGREST_AGAIN: MHD
     * hands that chunk over again, and the rest of the body is dropped */
    rs->body_waiting = false;
    rs->resp = pgrest_task_response(job->task);
    MHD_resume_connection(rs->con);
}

/* From the loop thread, while the task runs: a streamed response's head
 * is ready (the suspended request goes on to queue it), or more of its
 * body is. */
static bool request_progress(engine_job *job)
{
    request_state *rs = job_request(job);
    if (rs->orphaned)
        return false;
    /* it takes its body again: MHD hands over the chunk it refused (a
     * client gone meanwhile is found by sweep_streaming_bodies, right
     * after the daemon runs) */
    if (rs->body_waiting && pgrest_task_wait_state(job->task) == PGREST_TASK_WANTS_BODY) {
        rs->body_waiting = false;
        rs->adopted = false;
        MHD_resume_connection(rs->con);
        return true;
    }
    if (!rs->head_resumed && pgrest_task_wait_state(job->task) == PGREST_TASK_BODY) {
        rs->head_resumed = true;
        rs->resp = pgrest_task_response(job->task);
        MHD_resume_connection(rs->con);
        return true;
    }
    return wake_reader(rs);
}

/* The request becomes a task, with its body to follow in chunks or
 * without one, once its declared size passed (refuse_declared). MHD_NO
 * when there is no memory for it. */
static enum MHD_Result start_task(http_server *s, struct MHD_Connection *con,
                                  const char *method, request_state *rs, bool body_follows)
{
    rs->arena = pgrest_arena_new(0);
    if (rs->arena == NULL)
        return MHD_NO;
    char *q = strchr(rs->uri, '?');
    if (q != NULL)
        *q = '\0';
    pgrest_request *req = pgrest_request_new(rs->arena, method, rs->uri, q ? q + 1 : "");
    if (q != NULL)
        *q = '?';
    MHD_get_connection_values_n(con, MHD_HEADER_KIND, add_header, req);
    if (body_follows)
        pgrest_request_body_follows(req);
    else
        pgrest_request_set_body(req, NULL, 0);
    pgrest_request_allow_streaming(req, 0);
    if (body_follows && s->streamed_body_threshold > 0)
        pgrest_request_allow_streamed_body(req, s->streamed_body_threshold);
    bool refused = false;
    enum MHD_Result ret = body_follows ? refuse_declared(s, con, req, &refused) : MHD_YES;
    if (refused) {
        pgrest_arena_free(rs->arena);
        rs->arena = NULL;
        return ret;
    }
    rs->body_follows = body_follows;
    rs->con = con;
    rs->job.done = task_done;
    rs->job.progress = request_progress;
    /* Like Warp, which pauses its timeout while the application runs,
     * server-timeout does not cut off a response being computed. MHD
     * watches no suspended connection: with server-cancel-on-disconnect
     * the loop watches for the client going away; without it (PostgREST's
     * behaviour) nothing does, and the request runs to its end. */
    rs->job.client_fd = s->cancel_on_disconnect ? connection_fd(con) : -1;
    rs->job.loop = engine_loop_current();
    rs->job.task = pgrest_task_start(s->ctx, rs->arena, req, engine_wake, &rs->job);
    if (rs->job.task == NULL)
        return MHD_NO;
    /* answered before its body (a CORS preflight, a bad JWT, no schema
     * cache): the answer waits for the body's end, the body is dropped */
    rs->job.finished = pgrest_task_wait_state(rs->job.task) == PGREST_TASK_DONE;
    return MHD_YES;
}

/* The loop takes the task on: the connection waits, suspended (the
 * daemon goes on with the others), until the loop resumes it. */
static enum MHD_Result hand_to_loop(struct MHD_Connection *con, request_state *rs)
{
    rs->adopted = true;
    MHD_suspend_connection(con);
    engine_adopt(&rs->job);
    return MHD_YES;
}

/* The request is complete: a task that is done answers now; one that
 * needs the database goes to the loop that runs this daemon, which
 * drives it on its PostgreSQL socket and resumes the connection when the
 * response is ready. */
static enum MHD_Result run_task(http_server *s, struct MHD_Connection *con,
                                const char *method, const char *version,
                                request_state *rs)
{
    if (pgrest_task_wait_state(rs->job.task) != PGREST_TASK_DONE)
        return hand_to_loop(con, rs);
    rs->job.finished = true;
    rs->resp = pgrest_task_response(rs->job.task);
    return respond(s, con, method, version, rs);
}

/* Whether MHD reads a body: chunked (the only coding left after
 * body_length_unknowable) or a Content-Length above 0. */
static bool has_body(struct MHD_Connection *con)
{
    if (MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                    MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL)
        return true;
    const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    return cl != NULL && strtoull(cl, NULL, 10) > 0;
}

/* A chunk of the body, as MHD hands it over. The server counts it
 * against server-max-body-size itself, so a chunked body too large gets
 * the 413 a declared Content-Length gets (send_limit_error), whatever the
 * task said before; the excess is read and dropped, and past a bounded
 * amount the connection is dropped: MHD accepts a response only once the
 * body is complete. A task that finished (it refused the body, or
 * answered before it) has the rest of the body dropped the same way. */
static enum MHD_Result take_chunk(http_server *s, request_state *rs, const char *data,
                                  size_t *size)
{
    size_t n = *size;
    /* cancelled while it waited (server-cancel-on-disconnect) */
    if (rs->job.cancelled)
        return MHD_NO;
    /* a body that streams into PostgreSQL is the library's to bound */
    if (!rs->too_large && n > s->max_body_size - rs->received &&
        !pgrest_task_body_streams(rs->job.task)) {
        rs->too_large = true;
        /* nobody needs the task's answer now */
        if (!rs->job.finished && pgrest_task_cancel(rs->job.task) == PGREST_TASK_DONE)
            rs->job.finished = true;
    }
    if (rs->too_large) {
        *size = 0;
        rs->discarded += n;
        return rs->discarded > s->max_body_size + DISCARD_SLACK ? MHD_NO : MHD_YES;
    }
    if (!rs->job.finished) {
        int rc = pgrest_task_write_body(rs->job.task, data, n, NULL);
        /* Backpressure: the chunk was not taken, the task waits on its
         * PostgreSQL socket. *size stays as it is, so MHD keeps the bytes
         * and hands them over again once the loop has resumed the
         * connection (request_progress: WANTS_BODY again; task_done). */
        if (rc == PGREST_AGAIN) {
            rs->body_waiting = true;
            return hand_to_loop(rs->con, rs);
        }
        /* refused (413 past the library's limit, out of memory): DONE */
        if (rc != PGREST_OK)
            rs->job.finished = pgrest_task_wait_state(rs->job.task) == PGREST_TASK_DONE;
    }
    rs->received += n;
    *size = 0;
    if (!rs->job.finished)
        watch_body(rs);
    return MHD_YES;
}

/* The body is complete: the task takes its end and goes on. */
static enum MHD_Result end_body(http_server *s, struct MHD_Connection *con,
                                const char *method, const char *version,
                                request_state *rs)
{
    /* PGREST_AGAIN never comes today; taken as a chunk's: MHD calls with
     * the end again once the connection is resumed */
    if (!rs->job.finished && pgrest_task_end_body(rs->job.task, NULL) == PGREST_AGAIN) {
        rs->body_waiting = true;
        return hand_to_loop(con, rs);
    }
    rs->body_ended = true;
    stop_watching_body(rs);
    return run_task(s, con, method, version, rs);
}

/* libmicrohttpd calls this several times per request; the response is
 * queued only after the body is complete (queuing on the first call makes
 * MHD close the connection, see docs/ARCHITECTURE.md "Pitfalls"). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *con,
                                  const char *url, const char *method,
                                  const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)url;
    http_server *s = cls;
    request_state *rs = *con_cls;
    if (rs == NULL)
        return MHD_NO;
    if (!rs->started) {
        rs->started = true;
        count_in_flight(rs);
        if (request_hides_bytes(con, method, version, &rs->raw) ||
            body_length_unknowable(con))
            return send_bad_request(con);
        bool refused;
        enum MHD_Result ret = check_limits(s, con, rs, &refused);
        if (refused)
            return ret;
        /* a body goes to the task as it comes; the answer is queued only
         * once the body is complete (take_chunk, end_body) */
        if (has_body(con))
            return start_task(s, con, method, rs, true);
        return MHD_YES;
    }
    if (*upload_data_size > 0)
        return take_chunk(s, rs, upload_data, upload_data_size);
    if (rs->too_large)
        return send_limit_error(s, con, 413, "Request body too large",
                                "server-max-body-size", s->max_body_size);
    /* resumed: the task is done; a cancelled one answers nobody */
    if (rs->arena != NULL && rs->job.cancelled)
        return MHD_NO;
    if (rs->body_follows && !rs->body_ended)
        return end_body(s, con, method, version, rs);
    if (rs->arena != NULL)
        return respond(s, con, method, version, rs);
    if (start_task(s, con, method, rs, false) != MHD_YES)
        return MHD_NO;
    return run_task(s, con, method, version, rs);
}

/* MHD keeps the request line, the headers and the response header in a
 * per-connection pool, and zeroes all of it after every request: room for
 * twice the limits, so the server's own 414/431 (JSON) answer anything up
 * to twice them; MHD refuses a longer request line itself. Query
 * arguments take no room (keep_mhd_from_splitting). */
static size_t memory_limit(const http_listen *lc)
{
    size_t n = 2 * (lc->max_url_size + lc->max_header_size) + 16384;
    return n < 32768 ? 32768 : n;
}

static void worker_run(void *arg)
{
    MHD_run(((http_worker *)arg)->daemon);
    sweep_streaming_bodies();
}

static long worker_timeout(void *arg)
{
    MHD_UNSIGNED_LONG_LONG ms;
    if (MHD_get_timeout(((http_worker *)arg)->daemon, &ms) != MHD_YES)
        return -1;
    return ms > 1000 ? 1000 : (long)ms;
}

static void worker_add_connection(void *arg, int fd, const struct sockaddr *addr,
                                  socklen_t len)
{
    MHD_add_connection(((http_worker *)arg)->daemon, fd, addr, len);
}

/* The connection limit is shared out among the daemons as libmicrohttpd's
 * own thread pool does. */
static struct MHD_Daemon *start_daemon(http_server *s, const http_listen *lc, unsigned i)
{
    unsigned limit = lc->max_connections / s->n_workers +
                     (i < lc->max_connections % s->n_workers);
    return MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME,
        0, NULL, NULL, on_request, s,
        /* first, or MHD prints its own complaint about the order */
        MHD_OPTION_EXTERNAL_LOGGER, log_http_server, NULL,
        MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_CONNECTION_TIMEOUT, lc->timeout,
        MHD_OPTION_CONNECTION_LIMIT, limit > 0 ? limit : 1,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, lc->max_connections_per_ip,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit(lc),
        MHD_OPTION_END);
}

static bool start_worker(http_server *s, const http_listen *lc, unsigned i)
{
    http_worker *w = &s->workers[i];
    w->daemon = start_daemon(s, lc, i);
    const union MHD_DaemonInfo *info =
        w->daemon ? MHD_get_daemon_info(w->daemon, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (info == NULL)
        return false;
    engine_http http = {info->epoll_fd, worker_run, worker_timeout,
                        worker_add_connection, w};
    w->loop = engine_loop_start(&http);
    return w->loop != NULL;
}

static void stop_workers(http_server *s)
{
    for (unsigned i = 0; i < s->n_workers; i++)
        engine_loop_stop(s->workers[i].loop);
    for (unsigned i = 0; i < s->n_workers; i++)
        if (s->workers[i].daemon != NULL)
            MHD_stop_daemon(s->workers[i].daemon);
    free(s->workers);
}

http_server *http_start(pgrest_ctx *ctx, const http_listen *lc, char *errbuf,
                        size_t errlen)
{
    http_server *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->ctx = ctx;
    s->max_body_size = lc->max_body_size;
    s->streamed_body_threshold = lc->streamed_body_threshold;
    s->max_streamed_body_size = lc->max_streamed_body_size;
    s->max_url_size = lc->max_url_size;
    s->max_header_size = lc->max_header_size;
    s->cancel_on_disconnect = lc->cancel_on_disconnect;
    if (lc->unix_socket != NULL) {
        s->listen_fd = listen_unix(lc->unix_socket, lc->unix_mode, errbuf, errlen);
        s->unix_path = strdup(lc->unix_socket);
    } else
        s->listen_fd = listen_tcp(lc->host, lc->port, lc->reuseport, errbuf, errlen);
    /* the option does not apply to unix sockets (PostgREST docs) */
    s->reuseport = lc->reuseport && lc->unix_socket == NULL;
    if (s->listen_fd < 0) {
        free(s->unix_path);
        free(s);
        return NULL;
    }
    /* every loop's daemon accepts on it: the losers of a race must not block */
    fcntl(s->listen_fd, F_SETFL, fcntl(s->listen_fd, F_GETFL) | O_NONBLOCK);
    s->n_workers = lc->threads > 0 ? lc->threads : 1;
    s->workers = calloc(s->n_workers, sizeof *s->workers);
    bool ok = s->workers != NULL;
    for (unsigned i = 0; ok && i < s->n_workers; i++)
        ok = start_worker(s, lc, i);
    if (!ok) {
        snprintf(errbuf, errlen, "cannot start the HTTP server");
        if (s->workers != NULL)
            stop_workers(s);
        close(s->listen_fd);
        free(s->unix_path);
        free(s);
        return NULL;
    }
    return s;
}

int http_port(const http_server *s)
{
    return socket_port(s->listen_fd);
}

void http_address(const http_server *s, char *buf, size_t len)
{
    socket_address(s->listen_fd, buf, len);
}

/* PostgREST App.checkMainAppLive: the main socket is open and, for a
 * Unix socket, its file still exists. */
bool http_is_live(const http_server *s)
{
    if (s == NULL || atomic_load(&s->closing) || s->listen_fd < 0)
        return false;
    return s->unix_path == NULL || access(s->unix_path, F_OK) == 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A connection accepted during a reuseport handover: served like any
 * other (MHD owns and closes the socket, also on failure). */
static void serve_handed_over(void *arg, int fd, const struct sockaddr *addr,
                              socklen_t addrlen)
{
    http_server *s = arg;
    unsigned i = atomic_fetch_add(&s->next_worker, 1) % s->n_workers;
    engine_add_connection(s->workers[i].loop, fd, addr, addrlen);
}

/* Graceful shutdown (PostgREST ref/http_server, warp's graceful close):
 * the listening socket is closed first so new connections are refused,
 * requests in flight run to completion (bounded by DRAIN_SECONDS), then
 * idle keep-alive connections are closed with the daemon. */
void http_stop(http_server *s)
{
    if (s == NULL)
        return;
    atomic_store(&s->closing, true);
    /* every daemon stops accepting; the socket they shared is closed once */
    MHD_socket fd = MHD_INVALID_SOCKET;
    for (unsigned i = 0; i < s->n_workers; i++) {
        MHD_socket q = MHD_quiesce_daemon(s->workers[i].daemon);
        if (q != MHD_INVALID_SOCKET)
            fd = q;
    }
    if (fd != MHD_INVALID_SOCKET && s->reuseport)
        reuseport_handover(fd, serve_handed_over, s);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    s->listen_fd = -1;
    for (int i = 0; i < DRAIN_SECONDS * 100 && atomic_load(&s->active) > 0; i++)
        sleep_ms(10);
    if (atomic_load(&s->active) > 0)
        log_msg(LOG_WARN, "Shutting down with %d requests still in flight",
                atomic_load(&s->active));
    stop_workers(s);
    if (s->unix_path != NULL)
        unlink(s->unix_path);
    free(s->unix_path);
    free(s);
}
