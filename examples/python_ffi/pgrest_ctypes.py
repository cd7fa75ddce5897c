#!/usr/bin/env python3
"""libpgrest from Python through the standard library's ctypes only.

  pgrest_ctypes.py LIBPATH handle DB_URI      answer requests in-process
                                              (DB_URI '-': $PGREST_TEST_DB_URI)
  pgrest_ctypes.py LIBPATH explain SNAPSHOT   SQL for a URL, no database

LIBPATH is the shared library (e.g. build/lib/libpgrest.so). Exits non-zero
when a response is not what PostgREST would answer.
"""
import ctypes
import os
import sys


class Error(ctypes.Structure):
    _fields_ = [("http_status", ctypes.c_int), ("code", ctypes.c_char_p),
                ("message", ctypes.c_char_p), ("details", ctypes.c_char_p),
                ("hint", ctypes.c_char_p)]


class Header(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


def load(path):
    lib = ctypes.CDLL(path)
    p = ctypes.c_void_p
    sigs = {
        "pgrest_ctx_new": (p, []),
        "pgrest_ctx_free": (None, [p]),
        "pgrest_ctx_set": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(Error)]),
        "pgrest_ctx_load_schema": (ctypes.c_int, [p, ctypes.POINTER(Error)]),
        "pgrest_ctx_load_schema_file": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.POINTER(Error)]),
        "pgrest_arena_new": (p, [ctypes.c_size_t]),
        "pgrest_arena_free": (None, [p]),
        "pgrest_request_new": (p, [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
        "pgrest_request_add_header": (None, [p, ctypes.c_char_p, ctypes.c_char_p]),
        "pgrest_request_set_body": (None, [p, ctypes.c_char_p, ctypes.c_size_t]),
        "pgrest_handle": (p, [p, p, p]),
        "pgrest_authenticate": (ctypes.c_int, [p, p, p, ctypes.POINTER(p), ctypes.POINTER(Error)]),
        "pgrest_request_set_auth": (None, [p, p]),
        "pgrest_parse_request": (ctypes.c_int, [p, p, p, ctypes.POINTER(p), ctypes.POINTER(Error)]),
        "pgrest_plan": (ctypes.c_int, [p, p, p, ctypes.POINTER(p), ctypes.POINTER(Error)]),
        "pgrest_emit_sql": (ctypes.c_int, [p, p, p, ctypes.POINTER(p), ctypes.POINTER(Error)]),
        "pgrest_statements_count": (ctypes.c_size_t, [p]),
        "pgrest_statements_sql": (ctypes.c_char_p, [p, ctypes.c_size_t]),
        "pgrest_statements_param_count": (ctypes.c_size_t, [p, ctypes.c_size_t]),
        "pgrest_statements_param": (ctypes.c_char_p, [p, ctypes.c_size_t, ctypes.c_size_t]),
        "pgrest_response_status": (ctypes.c_int, [p]),
        "pgrest_response_header_count": (ctypes.c_size_t, [p]),
        "pgrest_response_header": (ctypes.POINTER(Header), [p, ctypes.c_size_t]),
        "pgrest_response_body": (ctypes.POINTER(ctypes.c_char), [p, ctypes.POINTER(ctypes.c_size_t)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def context(lib, options):
    ctx = lib.pgrest_ctx_new()
    err = Error()
    for key, value in options.items():
        if lib.pgrest_ctx_set(ctx, key.encode(), value.encode(), ctypes.byref(err)) != 0:
            raise RuntimeError(err.message.decode())
    return ctx


def handle(lib, ctx, method, path, query="", headers=(), body=None):
    arena = lib.pgrest_arena_new(0)
    try:
        req = lib.pgrest_request_new(arena, method.encode(), path.encode(), query.encode())
        for name, value in headers:
            lib.pgrest_request_add_header(req, name.encode(), value.encode())
        if body is not None:
            data = body.encode()
            lib.pgrest_request_set_body(req, data, len(data))
        resp = lib.pgrest_handle(ctx, arena, req)
        n = ctypes.c_size_t()
        raw = lib.pgrest_response_body(resp, ctypes.byref(n))
        hdrs = {}
        for i in range(lib.pgrest_response_header_count(resp)):
            h = lib.pgrest_response_header(resp, i).contents
            hdrs[h.name.decode()] = h.value.decode()
        return lib.pgrest_response_status(resp), hdrs, ctypes.string_at(raw, n.value).decode()
    finally:
        lib.pgrest_arena_free(arena)


def explain(lib, ctx, method, path, query=""):
    arena = lib.pgrest_arena_new(0)
    try:
        err = Error()
        req = lib.pgrest_request_new(arena, method.encode(), path.encode(), query.encode())
        auth, api, plan, st = (ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(),
                               ctypes.c_void_p())
        # authentication is a stage of its own, before parsing (PostgREST's order)
        if lib.pgrest_authenticate(ctx, arena, req, ctypes.byref(auth), ctypes.byref(err)) != 0:
            return err.http_status, err.code.decode(), []
        lib.pgrest_request_set_auth(req, auth)
        if (lib.pgrest_parse_request(ctx, arena, req, ctypes.byref(api), ctypes.byref(err)) != 0 or
                lib.pgrest_plan(ctx, arena, api, ctypes.byref(plan), ctypes.byref(err)) != 0 or
                lib.pgrest_emit_sql(ctx, arena, plan, ctypes.byref(st), ctypes.byref(err)) != 0):
            return err.http_status, err.code.decode(), []
        out = []
        for i in range(lib.pgrest_statements_count(st)):
            params = [lib.pgrest_statements_param(st, i, j)
                      for j in range(lib.pgrest_statements_param_count(st, i))]
            out.append((lib.pgrest_statements_sql(st, i).decode(),
                        [p.decode() if p is not None else None for p in params]))
        return 200, None, out
    finally:
        lib.pgrest_arena_free(arena)


def run_handle(lib, db_uri):
    ctx = context(lib, {"db-uri": db_uri, "db-schemas": "api", "db-anon-role": "web_anon"})
    err = Error()
    if lib.pgrest_ctx_load_schema(ctx, ctypes.byref(err)) != 0:
        raise RuntimeError(err.message.decode())
    failures = 0
    status, hdrs, body = handle(lib, ctx, "GET", "/artists", "select=id,name&id=eq.2")
    print(status, hdrs.get("Content-Range"), body)
    failures += (status, body) != (200, '[{"id":2,"name":"Blue Note Trio"}]')
    status, _, body = handle(lib, ctx, "GET", "/artists", "id=zz.2")
    print(status, body)
    failures += status != 400 or '"PGRST100"' not in body
    lib.pgrest_ctx_free(ctx)
    return failures


def run_explain(lib, snapshot):
    ctx = context(lib, {"db-schemas": "api", "db-anon-role": "web_anon"})
    err = Error()
    if lib.pgrest_ctx_load_schema_file(ctx, snapshot.encode(), ctypes.byref(err)) != 0:
        raise RuntimeError(err.message.decode())
    status, _, stmts = explain(lib, ctx, "GET", "/tracks", "select=title&seconds=gt.300")
    main = [s for s in stmts if s[0].startswith("WITH")]
    for sql, params in stmts:
        print(sql, params)
    failures = int(status != 200 or len(main) != 1 or main[0][1] != ["300"]
                   or "300" in main[0][0])
    status, code, _ = explain(lib, ctx, "GET", "/nope")
    failures += (status, code) != (404, "PGRST205")
    lib.pgrest_ctx_free(ctx)
    return failures


def main(argv):
    if len(argv) != 4 or argv[2] not in ("handle", "explain"):
        print(__doc__, file=sys.stderr)
        return 2
    target = argv[3]
    if target == "-":  # from the test harness's environment
        target = os.environ.get("PGREST_TEST_DB_URI", "")
        if not target:
            print("PGREST_TEST_DB_URI not set: skipped")
            return 77
    argv = argv[:3] + [target]
    lib = load(argv[1])
    failures = run_handle(lib, argv[3]) if argv[2] == "handle" else run_explain(lib, argv[3])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
