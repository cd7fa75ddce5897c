#!/usr/bin/env python3
"""Resource limits of pgrest-server, over loopback HTTP (stdlib only).

Usage: limits_test.py PORT   (the server runs with the limits in run.sh:
server-max-body-size=65536, server-max-url-size=4096,
server-max-header-size=8192, server-timeout=2, server-max-connections=40,
request-max-depth=8, request-max-filters=50, request-max-json-depth=16).
Prints "ok NAME" / "FAIL NAME: why" per test and ends with
"N passed, N failed". Every socket has a timeout: the run is bounded."""
import json
import select
import socket
import sys
import time

HOST = "127.0.0.1"
PORT = int(sys.argv[1])
results = []


def connect(timeout=5.0):
    s = socket.create_connection((HOST, PORT), timeout=timeout)
    s.settimeout(timeout)
    return s


def read_response(s):
    """(status, headers dict, body bytes) of one response on s."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the response head")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(body) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def request(raw, timeout=10.0):
    s = connect(timeout)
    try:
        s.sendall(raw)
        return read_response(s)
    finally:
        s.close()


def get(target, extra=b""):
    return request(b"GET " + target.encode() + b" HTTP/1.1\r\nHost: x\r\n" + extra +
                   b"Connection: close\r\n\r\n")


def post(target, body, ctype=b"application/json"):
    return request(b"POST " + target.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                   b"Content-Type: " + ctype + b"\r\nContent-Length: " +
                   str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)


def test(fn):
    t0 = time.monotonic()
    try:
        fn()
        results.append((fn.__name__, None))
        print("ok %s (%.1fs)" % (fn.__name__, time.monotonic() - t0), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        results.append((fn.__name__, repr(e)))
        print("FAIL %s: %r" % (fn.__name__, e), flush=True)
    return fn


def expect_error(resp, status, code, message=None):
    st, hdr, body = resp
    assert st == status, "status %d, want %d: %r" % (st, status, body[:200])
    assert hdr.get("content-type", "").startswith("application/json"), hdr
    doc = json.loads(body)
    assert doc["code"] == code, doc
    assert set(doc) >= {"code", "message", "details", "hint"}, doc
    if message is not None:
        assert doc["message"] == message, doc
    return doc


@test
def normal_request():
    st, _, body = get("/artists?select=name&limit=1")
    assert st == 200, (st, body)


@test
def body_at_limit_is_read():
    body = b'{"name":"' + b"x" * (65536 - 11) + b'"}'
    assert len(body) == 65536
    st, _, rbody = post("/artists", body)
    assert st != 413, rbody


@test
def body_over_limit_413():
    body = b'{"name":"' + b"x" * 70000 + b'"}'
    expect_error(post("/artists", body), 413, "PGRST413", "Request body too large")


@test
def chunked_body_over_limit_413():
    s = connect()
    try:
        s.sendall(b"POST /artists HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 16384
        try:
            for _ in range(8):  # 128 KiB, twice the limit
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            s.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed early: fine
        expect_error(read_response(s), 413, "PGRST413")
    finally:
        s.close()


@test
def huge_declared_body_refused_without_reading():
    """A write whose body cannot stream into PostgreSQL (a PATCH; a bulk
    POST may, docs/bulk-import.md) is bounded by server-max-body-size."""
    s = connect()
    try:
        s.sendall(b"PATCH /artists?id=eq.1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 10000000000\r\n\r\n")
        t0 = time.monotonic()
        expect_error(read_response(s), 413, "PGRST413")
        assert time.monotonic() - t0 < 1.5
    finally:
        s.close()


@test
def url_over_limit_414():
    expect_error(get("/artists?select=" + "a" * 5000), 414, "PGRST414")


@test
def url_under_limit_ok():
    st, _, body = get("/artists?select=name&name=neq." + "a" * 3000)
    assert st == 200, (st, body[:200])


@test
def many_query_arguments_under_limit_ok():
    # MHD records every argument, even the empty ones of "&&&", in the
    # connection's pool: a URL within the limit never exhausts it
    st, _, body = get("/artists?select=name&" + "&" * 4000)
    assert st == 200, (st, body[:200])


@test
def many_query_arguments_over_limit_414():
    # beyond the limit, many arguments are answered at once, not left
    # hanging: up to twice the limit by the server (JSON), beyond the
    # connection memory limit by MHD itself (its own 414)
    expect_error(get("/artists?" + "a=1&" * (8000 // 4)), 414, "PGRST414")
    for size in (60000, 400000):
        try:
            st, _, _ = get("/artists?" + "a=1&" * (size // 4))
            assert st == 414, st
        except (ConnectionError, socket.timeout, BrokenPipeError):
            pass  # a closed connection is a refusal too
    st, _, _ = get("/artists?limit=1")
    assert st == 200


@test
def headers_over_limit_431():
    expect_error(get("/artists", b"X-Big: " + b"h" * 9000 + b"\r\n"), 431, "PGRST431")


@test
def many_headers_over_limit_431():
    extra = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(100))
    expect_error(get("/artists", extra), 431, "PGRST431")


@test
def giant_header_refused_by_mhd():
    # beyond the connection memory limit MHD answers itself (4xx, not JSON)
    try:
        st, _, _ = get("/artists", b"X-Huge: " + b"h" * 200000 + b"\r\n")
        assert 400 <= st < 500, st
    except (ConnectionError, socket.timeout, BrokenPipeError):
        pass  # a closed connection is a refusal too
    st, _, _ = get("/artists?limit=1")
    assert st == 200


@test
def select_depth_400():
    sel = "".join("a%d(" % i for i in range(20)) + "id" + ")" * 20
    doc = expect_error(get("/artists?select=" + sel), 400, "PGRST100")
    assert "nesting too deep" in doc["message"], doc


@test
def logic_depth_400():
    tree = "(" + "or(" * 20 + "id.eq.1" + ")" * 20 + ")"
    doc = expect_error(get("/artists?or=" + tree), 400, "PGRST100")
    assert "nesting too deep" in doc["message"], doc


@test
def filter_count_400():
    q = "&".join("id=gt.%d" % i for i in range(60))
    doc = expect_error(get("/artists?" + q), 400, "PGRST100", "Too many filters")
    q = "&".join("id=gt.%d" % i for i in range(40))
    st, _, body = get("/artists?" + q)
    assert st == 200, (st, body[:200])


@test
def json_depth_400():
    body = b"[" * 40 + b"]" * 40
    doc = expect_error(post("/artists", body), 400, "PGRST102")
    assert "request-max-json-depth" in (doc["details"] or ""), doc


def open_idle(n):
    socks = []
    for _ in range(n):
        socks.append(connect())
    return socks


def closed_by_server(s, wait):
    """True when the server closes s (EOF or reset) within wait seconds."""
    r, _, _ = select.select([s], [], [], wait)
    if not r:
        return False
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, socket.timeout):
        return True


@test
def slow_clients_do_not_block_normal_requests():
    idle = open_idle(12)  # connected, never send a byte
    slow = open_idle(12)  # trickle a request head, one byte at a time
    try:
        for s in slow:
            s.sendall(b"GET /artists HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        t_end = time.monotonic() + 1.5
        worst = 0.0
        while time.monotonic() < t_end:
            for s in slow:
                try:
                    s.sendall(b"a")
                except OSError:
                    pass
            t0 = time.monotonic()
            st, _, _ = get("/artists?limit=1")
            worst = max(worst, time.monotonic() - t0)
            assert st == 200, st
            time.sleep(0.2)
        assert worst < 0.5, "a normal request took %.3fs" % worst
        # idle connections are dropped after server-timeout (2 s)
        t0 = time.monotonic()
        assert all(closed_by_server(s, 5.0) for s in idle), "idle connection kept"
        assert time.monotonic() - t0 < 5.0
    finally:
        for s in idle + slow:
            s.close()


@test
def slow_query_outlives_idle_timeout():
    t0 = time.monotonic()
    st, _, body = get("/rpc/slow?seconds=3")
    assert st == 200, (st, body[:200])
    assert json.loads(body) == 3, body
    assert time.monotonic() - t0 >= 3.0


@test
def connection_cap():
    # 100 keep-alive clients each send one request: at most 40 (the cap) are
    # served at once; the rest wait in the listen backlog until served
    # clients idle out (server-timeout 2 s), and then all are answered.
    socks = [connect(10.0) for _ in range(100)]
    try:
        for s in socks:
            s.sendall(b"GET /artists?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        pending = list(socks)
        answered_early = 0
        t0 = time.monotonic()
        while pending and time.monotonic() - t0 < 10.0:
            r, _, _ = select.select(pending, [], [], 0.2)
            for s in r:
                st, _, _ = read_response(s)
                assert st == 200, st
                pending.remove(s)
                if time.monotonic() - t0 < 1.0:
                    answered_early += 1
        assert 1 <= answered_early <= 40, "%d served in the first second" % answered_early
        assert not pending, "%d requests never answered" % len(pending)
    finally:
        for s in socks:
            s.close()


# Malformed framing: Warp answers what it cannot parse 400 "Bad Request"
# and closes; libmicrohttpd, which parses in place into C strings, would
# cut a field at a NUL byte or read a body of unknowable length forever.

def answered_then_closed(raw, wait=3.0):
    """(status, headers, body) of the one answer to raw, asserting the
    server closes the connection after it."""
    s = connect(wait)
    try:
        s.sendall(raw)
        st, hdr, body = read_response(s)
        assert closed_by_server(s, wait), "connection left open after %d" % st
        return st, hdr, body
    finally:
        s.close()


def expect_bad_request(raw):
    st, hdr, body = answered_then_closed(raw)
    assert st == 400, (st, body[:200])
    assert body == b"Bad Request", body[:200]
    assert hdr.get("content-type") == "text/plain; charset=utf-8", hdr


@test
def nul_in_request_target_400():
    expect_bad_request(b"GET /art\x00ists HTTP/1.1\r\nHost: x\r\n\r\n")
    expect_bad_request(b"GET /artists?select=name\x00&id=eq.1 HTTP/1.1\r\nHost: x\r\n\r\n")
    expect_bad_request(b"GE\x00T /artists HTTP/1.1\r\nHost: x\r\n\r\n")


@test
def nul_in_header_value_400():
    expect_bad_request(b"GET /artists HTTP/1.1\r\nHost: x\r\n"
                       b"Prefer: count=exact\x00junk\r\nAccept: */*\r\n\r\n")
    expect_bad_request(b"GET /artists HTTP/1.1\r\nHost: x\r\nX-Last: a\x00b\r\n\r\n")


@test
def folded_header_line_400():
    # RFC 9112 5.2: obs-fold is refused or unfolded; MHD 0.9.75 mangles it
    expect_bad_request(b"GET /artists HTTP/1.1\r\nHost: x\r\nPrefer: count=exact,\r\n"
                       b"  return=minimal\r\n\r\n")


@test
def conflicting_content_lengths_400():
    expect_bad_request(b"POST /artists HTTP/1.1\r\nHost: x\r\n"
                       b"Content-Type: application/json\r\nContent-Length: 2\r\n"
                       b"Content-Length: 30\r\n\r\n{}")


@test
def unsupported_transfer_coding_400():
    # without this, MHD reads the body until the client closes
    expect_bad_request(b"POST /artists HTTP/1.1\r\nHost: x\r\n"
                       b"Content-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n{}")


@test
def length_and_chunked_read_chunked_then_close():
    # RFC 9112 6.1: Transfer-Encoding wins, the connection closes after
    st, hdr, body = answered_then_closed(
        b"POST /rpc/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"d\r\n{\"a\":1,\"b\":2}\r\n0\r\n\r\n")
    assert st == 200 and body == b"3", (st, body[:200])
    assert hdr.get("connection") == "close", hdr


@test
def absolute_form_target_served_as_its_path():
    # Warp's extractPath drops the scheme and authority
    want = get("/artists?select=name&order=id&limit=2")
    for target in ("http://localhost:3000/artists?select=name&order=id&limit=2",
                   "https://example.com/artists?select=name&order=id&limit=2"):
        st, _, body = get(target)
        assert (st, body) == (want[0], want[2]), (target, st, body[:200])
    assert get("http://localhost")[0] == get("/")[0]


failed = sum(1 for _, e in results if e)
print("%d passed, %d failed" % (len(results) - failed, failed))
sys.exit(1 if failed else 0)
