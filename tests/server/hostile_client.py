"""Raw-socket HTTP/1.1 for the hostile-input sweep (test_hostile.py): sends
the exact bytes given (no client-side validation of methods, headers or
framing) and parses what comes back, bounded in time, so a hang, a cut
answer or a garbled one is seen as such."""
import json
import socket
import time


class RawResponse:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers          # list of (lower-case name, value)
        self.body = body                # bytes

    def header(self, name):
        vals = [v for k, v in self.headers if k == name]
        return vals[0] if vals else None

    def __repr__(self):
        return "<%d %r>" % (self.status, self.body[:200])


class ProtocolError(Exception):
    """The server's bytes are not one well-framed HTTP/1.1 answer."""


def _read_until(sock, buf, marker, deadline):
    while marker not in buf:
        if time.monotonic() > deadline:
            raise TimeoutError("no answer in time")
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ProtocolError("closed before %r (have %r)" % (marker, buf[:200]))
        buf += chunk
    return buf


def _read_n(sock, buf, n, deadline):
    while len(buf) < n:
        if time.monotonic() > deadline:
            raise TimeoutError("body cut short: %d of %d bytes" % (len(buf), n))
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ProtocolError("closed after %d of %d body bytes" % (len(buf), n))
        buf += chunk
    return buf


def read_response(sock, buf, deadline, head_request=False):
    """One response from sock (buf: bytes already read); returns
    (RawResponse, leftover bytes)."""
    buf = _read_until(sock, buf, b"\r\n\r\n", deadline)
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError("bad status line %r" % lines[0])
    status = int(parts[1])
    headers = []
    for ln in lines[1:]:
        k, sep, v = ln.partition(b":")
        if not sep:
            raise ProtocolError("bad header line %r" % ln)
        headers.append((k.decode("latin-1").strip().lower(), v.decode("latin-1").strip()))
    hd = dict(headers)
    if head_request or status in (204, 304) or 100 <= status < 200:
        return RawResponse(status, headers, b""), rest
    if "chunked" in hd.get("transfer-encoding", "").lower():
        body = b""
        while True:
            rest = _read_until(sock, rest, b"\r\n", deadline)
            size_line, rest = rest.split(b"\r\n", 1)
            try:
                size = int(size_line.split(b";")[0], 16)
            except ValueError:
                raise ProtocolError("bad chunk size %r" % size_line)
            if size == 0:
                rest = _read_until(sock, rest, b"\r\n", deadline)
                # trailers end with an empty line
                while not rest.startswith(b"\r\n"):
                    rest = _read_until(sock, rest, b"\r\n\r\n", deadline)
                    rest = rest.split(b"\r\n\r\n", 1)[1]
                    return RawResponse(status, headers, body), rest
                return RawResponse(status, headers, body), rest[2:]
            rest = _read_n(sock, rest, size + 2, deadline)
            if rest[size:size + 2] != b"\r\n":
                raise ProtocolError("chunk not followed by CRLF")
            body += rest[:size]
            rest = rest[size + 2:]
    if "content-length" in hd:
        n = int(hd["content-length"])
        rest = _read_n(sock, rest, n, deadline)
        return RawResponse(status, headers, rest[:n]), rest[n:]
    # no framing: body until close
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError("unframed body never ended")
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            return RawResponse(status, headers, rest), b""
        rest += chunk


def build(method, target, headers=(), body=None, add_length=True):
    """Request bytes: headers is a list of (name, value) (bytes or str)."""
    def b(x):
        return x if isinstance(x, bytes) else x.encode("utf-8", "surrogatepass")
    out = [b(method) + b" " + b(target) + b" HTTP/1.1", b"Host: 127.0.0.1"]
    names = set()
    for k, v in headers:
        out.append(b(k) + b": " + b(v))
        names.add(b(k).lower())
    if body is not None and add_length and b"content-length" not in names \
            and b"transfer-encoding" not in names:
        out.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(out) + b"\r\n\r\n" + (b(body) if body is not None else b"")


def exchange(port, raw, count=1, timeout=10.0, head_request=False):
    """Sends raw, reads count responses; returns the list."""
    deadline = time.monotonic() + timeout
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(raw)
        out, buf = [], b""
        while len(out) < count:
            r, buf = read_response(s, buf, deadline, head_request)
            if 100 <= r.status < 200:
                continue        # interim (100 Continue): the answer follows
            out.append(r)
        return out
    finally:
        s.close()


def from_libmicrohttpd(resp):
    """libmicrohttpd's own answers to what it refuses before the server
    sees a request (framing, header bytes, sizes beyond its buffers): an
    HTML page or a bare phrase -- known and left (not PostgREST's JSON)."""
    return resp.status in (400, 413, 414, 431, 505) and (
        resp.body.lstrip().lower().startswith(b"<html") or resp.body == b"Bad Request")


ERROR_KEYS = ["code", "details", "hint", "message"]
# Error.hs mapSQLtoHTTP: the SQLSTATE classes PostgREST itself answers with
# 500/503 (a statement PostgreSQL finds too complex, an object in the wrong
# state, ...): a database error, not a mistake of ours.
PG_5XX_CLASSES = ("08", "09", "25", "2D", "38", "39", "3B", "40", "53", "54", "55", "57",
                  "58", "F0", "HV", "P0", "XX")


def pg_5xx(code):
    return isinstance(code, str) and len(code) == 5 and not code.startswith("PGRST") \
        and (code[:2] in PG_5XX_CLASSES or code == "42P17")


def problems(resp, allow_5xx=()):
    """What in one answer breaks the rule (empty: nothing)."""
    out = []
    ctype = (resp.header("content-type") or "").lower()
    if resp.status >= 500:
        code = None
        try:
            code = json.loads(resp.body).get("code")
        except Exception:
            pass
        if code not in allow_5xx and not pg_5xx(code):
            out.append("status %d (code %r)" % (resp.status, code))
    is_json = ctype.startswith("application/json") or "+json" in ctype.split(";")[0]
    if resp.body and is_json:
        try:
            doc = json.loads(resp.body.decode("utf-8"))
        except Exception as e:
            out.append("Content-Type %s but body is not JSON (%s)" % (ctype, e))
            doc = None
        if resp.status >= 400 and isinstance(doc, dict) and ctype.startswith("application/json") \
                and sorted(doc) != ERROR_KEYS:
            out.append("error body keys %s" % sorted(doc))
    elif resp.status >= 400 and resp.body and not from_libmicrohttpd(resp):
        out.append("error with non-JSON body (Content-Type %r)" % ctype)
    cl = resp.header("content-length")
    if cl is not None and resp.body and int(cl) != len(resp.body):
        out.append("Content-Length %s, body %d" % (cl, len(resp.body)))
    return out
