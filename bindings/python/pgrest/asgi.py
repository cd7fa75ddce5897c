"""pgrest.asgi.App: PostgREST's API as an ASGI application, mountable under
a prefix in Starlette / FastAPI (Mount("/api", app=App(...))) or served by
uvicorn on its own."""
import asyncio
from urllib.parse import unquote_to_bytes

from . import aio
from ._native import raw_bytes
from .context import Context, Identity
from .errors import PgrestError


def _relative_path(scope):
    """The path below the mount point, as bytes (percent-decoded, as
    pgrest-server hands the library its path). Starlette before 0.33 hands
    a mounted app the remaining path with the prefix in root_path; later
    versions keep the full path in "path". raw_path (the bytes on the
    wire) is full in both, so the prefix is cut from it when it starts
    with root_path; a proxy that already stripped the prefix (uvicorn
    --root-path) leaves raw_path without it."""
    root = scope.get("root_path", "").encode("utf-8")
    raw = scope.get("raw_path")
    if raw is not None:
        path = unquote_to_bytes(raw)
    else:
        path = scope.get("path", "/").encode("utf-8")
        if scope.get("app_root_path") is not None:   # Starlette < 0.33: relative already
            root = b""
    if root and path.startswith(root):
        path = path[len(root):]
    return path or b"/"


def _as_identity(value):
    if value is None or isinstance(value, Identity):
        return value
    if isinstance(value, dict):
        return Identity(value.get("role"), value.get("claims"))
    raise TypeError("the identity in the scope must be a pgrest.Identity or a dict")


# What the app reads and drops of a body the task answered before its end
# (a bad row, 413, a refused token), so that the client, still sending,
# reads the answer instead of a reset connection; past it, the server
# closes the connection after the answer.
DRAIN_LIMIT = 16 * 1024 * 1024


async def _feed_body(task, receive):
    """Feeds the request body to the task as the server hands it over
    (pgrest_task_write_body; PGREST_AGAIN waits for the task, docs/embedding.md
    "Request bodies in chunks"), then ends it. False when the client went
    away before the body's end."""
    drained = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return False
        chunk = message.get("body", b"")
        more = message.get("more_body", False)
        if task.done:
            drained += len(chunk)
        elif chunk:
            await task.write_body(chunk)
        if not more:
            await task.end_body()
            return True
        if task.done and drained > DRAIN_LIMIT:
            return True


def _has_body(status, method):
    """HEAD answers and the statuses that never carry a body (1xx, 204,
    304: RFC 9110 6.4.1) go without one, as pgrest-server sends them, even
    when the library's response holds one (an error raised with PT204)."""
    return method != "HEAD" and status >= 200 and status not in (204, 304)


def _length_header(resp, method):
    """Content-Length as pgrest-server sends it: none where no body goes
    (Response.hs leaves it out of HEAD answers too)."""
    if not _has_body(resp.status, method):
        return []
    return [(b"content-length", str(len(resp.body)).encode())]


def _asgi_headers(headers, extra=()):
    return [(raw_bytes(n.lower()), raw_bytes(v)) for n, v in headers] + list(extra)


class App:
    """ctx: a pgrest.Context, or options (a dict of PostgREST's options) to
    create one. The schema cache is loaded at lifespan startup when not yet
    loaded (load_schema=True); listen=True also reloads it on NOTIFY.

    identity_scope_key: when the host's middleware has put a verified
    identity (pgrest.Identity, or {"role": ..., "claims": {...}}) in the
    scope under this key, the request runs as it (pgrest_auth_supply) and
    no JWT is read; a request without the key is authenticated as
    PostgREST does (Authorization: Bearer). None (the default): never.

    The request body goes to the library as it arrives. stream_body_threshold:
    a bulk POST of rows (JSON array, NDJSON, CSV) to a table whose body
    grows past this many bytes is written to PostgreSQL while it comes, in
    bounded memory (docs/bulk-import.md); 0 (the default): the library's
    threshold, 1 MiB; None: never (the library collects the body whole)."""

    def __init__(self, ctx, *, library=None, load_schema=True, listen=False,
                 identity_scope_key=None, stream_body_threshold=0):
        self.ctx = ctx if isinstance(ctx, Context) else Context(ctx, library=library)
        self.stream_body_threshold = stream_body_threshold
        self.load_schema = load_schema
        self.listen = listen
        self.identity_scope_key = identity_scope_key
        self._startup = None

    async def startup(self):
        """Loads the schema cache (on a worker thread) and starts the
        listener, once; requests arriving meanwhile wait for it."""
        if self._startup is None:
            self._startup = asyncio.ensure_future(self._start())
        if not self._startup.done():
            await asyncio.shield(self._startup)
        self._startup.result()      # a failed start raises again

    async def _start(self):
        if self.load_schema and not self.ctx.ready:
            await aio.load_schema(self.ctx)
        if self.listen:
            self.ctx.start_listener()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            try:
                await self.startup()     # mounted apps get no lifespan of their own
            except PgrestError:
                pass    # no schema cache: the library answers 503 PGRST002, as PostgREST
            await self._http(scope, receive, send)
        else:
            raise NotImplementedError("pgrest.asgi.App serves HTTP only")

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as e:   # a schema that cannot load fails the start
                    await send({"type": "lifespan.startup.failed", "message": str(e)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _identity(self, scope):
        if self.identity_scope_key is None:
            return None
        return _as_identity(scope.get(self.identity_scope_key))

    async def _http(self, scope, receive, send):
        # bytes as the client sent them: the library reads them as PostgREST
        # does; the task starts on the headers and takes the body as it comes
        task = aio.Task(self.ctx, scope["method"], _relative_path(scope),
                        scope.get("query_string", b""), scope.get("headers", []),
                        b"", self._identity(scope), streaming=True, body_follows=True,
                        stream_body_threshold=self.stream_body_threshold)
        try:
            if not await _feed_body(task, receive):
                return      # the client left: close() cancels the task
            await task.run()
            if task.streamed and scope["method"] != "HEAD":
                await self._send_streamed(task, send)
            else:
                await self._send_buffered(task, scope["method"], send)
        finally:
            task.close()

    async def _send_buffered(self, task, method, send):
        resp = task.response()
        await send({"type": "http.response.start", "status": resp.status,
                    "headers": _asgi_headers(resp.headers, _length_header(resp, method))})
        await send({"type": "http.response.body",
                    "body": resp.body if _has_body(resp.status, method) else b""})

    async def _send_streamed(self, task, send):
        """A large result as it comes (no Content-Length: the server sends
        it chunked). A failure after the head raises, so the server ends the
        transfer abnormally and the client sees the body incomplete."""
        status, _, headers = task.head()
        await send({"type": "http.response.start", "status": status,
                    "headers": _asgi_headers(headers)})
        async for chunk in task.body_chunks():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


__all__ = ["App", "Identity"]
