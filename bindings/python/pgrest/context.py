"""The context (configuration, schema cache) and the blocking request API."""
import ctypes
import json

from . import _native
from ._native import text
from .errors import ConfigError, PgrestError, SchemaError


class Identity:
    """An identity the host verified itself (its own auth middleware, a
    gateway): the request runs as role (None: db-anon-role) with
    request.jwt.claims = claims (a dict or JSON text; None: {"role": role}),
    without any JWT being read (pgrest_auth_supply)."""

    def __init__(self, role=None, claims=None):
        self.role = role
        self.claims = claims

    def claims_json(self):
        if self.claims is None or isinstance(self.claims, str):
            return self.claims
        return json.dumps(self.claims)


class Response:
    """An HTTP answer: PostgREST's errors are responses too (status >= 400,
    its JSON error body), never exceptions."""

    def __init__(self, status, reason, headers, body, role=None):
        self.status = status
        self.reason = reason        # PostgREST's custom reason phrase, or None
        self.headers = headers      # [(name, value)] in the library's order
        self.body = body            # bytes
        self.role = role            # the database role it ran as (access logs)

    def header(self, name):
        """The first value of header name (case-insensitive), or None."""
        lname = name.lower()
        return next((v for n, v in self.headers if n.lower() == lname), None)

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return "<pgrest.Response %d %r>" % (self.status, self.body[:80])


def _raise(cls, err, status):
    raise cls(text(err.message) or "pgrest error %d" % status, code=text(err.code),
              details=text(err.details), hint=text(err.hint),
              http_status=err.http_status, status=status)


def _bytes(value):
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def response_head(lib, resp):
    """Status, reason and headers of a pgrest_response (copied out of the arena)."""
    headers = []
    for i in range(lib.pgrest_response_header_count(resp)):
        h = lib.pgrest_response_header(resp, i).contents
        headers.append((text(h.name), text(h.value)))
    return lib.pgrest_response_status(resp), text(lib.pgrest_response_reason(resp)), headers


def response_body(lib, resp):
    n = ctypes.c_size_t()
    raw = lib.pgrest_response_body(resp, ctypes.byref(n))
    return ctypes.string_at(raw, n.value) if n.value else b""


def copy_response(lib, resp):
    status, reason, headers = response_head(lib, resp)
    return Response(status, reason, headers, response_body(lib, resp),
                    text(lib.pgrest_response_role(resp)))


class Context:
    """A libpgrest context: configuration by PostgREST's option names
    ("db-uri", "db-schemas", "db-anon-role", "jwt-secret", ...), the schema
    cache, the connection pool. Thread-safe like the C context."""

    def __init__(self, options=None, library=None):
        self.lib = _native.load(library)
        self._ptr = self.lib.pgrest_ctx_new()
        if not self._ptr:
            raise MemoryError("pgrest_ctx_new")
        for key, value in (options or {}).items():
            self.set(key, value)

    @property
    def ptr(self):
        if not self._ptr:
            raise PgrestError("the context is closed")
        return self._ptr

    def set(self, key, value):
        """Sets one option; ConfigError with PostgREST's text when refused."""
        err = _native.Error()
        rc = self.lib.pgrest_ctx_set(self.ptr, _bytes(key), _bytes(value), ctypes.byref(err))
        if rc != _native.OK:
            _raise(ConfigError, err, rc)

    def get(self, key):
        return text(self.lib.pgrest_ctx_get(self.ptr, _bytes(key)))

    def reload_config(self, options=None):
        """PostgREST's config reload: options (a dict) replace every option
        set before (None keeps them), then in-database settings are re-read.
        Blocks on the pool: call it from a thread (loop.run_in_executor)."""
        err = _native.Error()
        if options is None:
            rc = self.lib.pgrest_ctx_reload_config(self.ptr, None, None, 0, ctypes.byref(err))
        else:
            keys = (ctypes.c_char_p * len(options))(*[_bytes(k) for k in options])
            values = (ctypes.c_char_p * len(options))(*[_bytes(v) for v in options.values()])
            rc = self.lib.pgrest_ctx_reload_config(self.ptr, keys, values, len(options),
                                                   ctypes.byref(err))
        if rc != _native.OK:
            _raise(ConfigError, err, rc)

    def load_schema(self):
        """Loads (or reloads) the schema cache by introspection. Blocks on
        PostgreSQL: from asyncio, use `await aio.load_schema(ctx)`."""
        err = _native.Error()
        rc = self.lib.pgrest_ctx_load_schema(self.ptr, ctypes.byref(err))
        if rc != _native.OK:
            _raise(SchemaError, err, rc)

    def load_schema_file(self, path):
        err = _native.Error()
        rc = self.lib.pgrest_ctx_load_schema_file(self.ptr, _bytes(path), ctypes.byref(err))
        if rc != _native.OK:
            _raise(SchemaError, err, rc)

    def save_schema_file(self, path):
        err = _native.Error()
        rc = self.lib.pgrest_ctx_save_schema_file(self.ptr, _bytes(path), ctypes.byref(err))
        if rc != _native.OK:
            _raise(SchemaError, err, rc)

    def start_listener(self):
        """Reloads the schema cache on NOTIFY (db-channel) from the
        library's own worker thread; "reload config" reloads the options
        set before."""
        err = _native.Error()
        rc = self.lib.pgrest_ctx_start_listener(self.ptr, None, None, ctypes.byref(err))
        if rc != _native.OK:
            _raise(PgrestError, err, rc)

    @property
    def ready(self):
        return bool(self.lib.pgrest_ctx_ready(self.ptr))

    def build_request(self, arena, method, path, query="", headers=(), body=b"",
                      identity=None):
        """A pgrest_request in arena (the caller frees the arena)."""
        lib = self.lib
        req = lib.pgrest_request_new(arena, _bytes(method), _bytes(path), _bytes(query or ""))
        if not req:
            raise MemoryError("pgrest_request_new")
        for name, value in headers:
            value = _bytes(value)
            lib.pgrest_request_add_header_n(req, _bytes(name), value, len(value))
        if body:
            body = _bytes(body)
            lib.pgrest_request_set_body(req, body, len(body))
        if identity is not None:
            self._supply_identity(arena, req, identity)
        return req

    def _supply_identity(self, arena, req, identity):
        """The host's verified identity instead of the Authorization header;
        a refused one (claims no JSON object) fails the request with its
        error response, as a bad token would."""
        auth = ctypes.c_void_p()
        err = _native.Error()
        claims = identity.claims_json()
        self.lib.pgrest_auth_supply(self.ptr, arena,
                                    None if identity.role is None else _bytes(identity.role),
                                    None if claims is None else _bytes(claims),
                                    ctypes.byref(auth), ctypes.byref(err))
        if not auth:
            raise MemoryError("pgrest_auth_supply")
        self.lib.pgrest_request_set_auth(req, auth)

    def handle(self, method, path, query="", headers=(), body=b"", identity=None):
        """Answers one request, blocking this thread until PostgreSQL has
        answered (pgrest_handle). From asyncio use pgrest.aio.request."""
        lib = self.lib
        arena = lib.pgrest_arena_new(0)
        if not arena:
            raise MemoryError("pgrest_arena_new")
        try:
            req = self.build_request(arena, method, path, query, headers, body, identity)
            resp = lib.pgrest_handle(self.ptr, arena, req)
            if not resp:
                raise MemoryError("pgrest_handle")
            return copy_response(lib, resp)
        finally:
            lib.pgrest_arena_free(arena)

    def close(self):
        """Frees the context (stops the listener, closes the pool). No
        request may be running on it."""
        if self._ptr:
            self.lib.pgrest_ctx_free(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
