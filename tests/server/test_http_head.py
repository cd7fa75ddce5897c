"""HEAD over HTTP as PostgREST answers it: Response.hs sends no
Content-Length for any HEAD answer it builds -- a relation, a function, a
416 range answer (Warp then sends no body) -- but an execution plan's
(Response.hs DbPlanResult), while the error responses of Error.hs
errorResponseFor keep their Content-Length."""
import http.client
import socket

from harness import ServerTestCase


class HeadTest(ServerTestCase):

    def head(self, path, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            c.request("HEAD", path, headers=headers or {})
            r = c.getresponse()
            r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()

    def test_relation_and_function_have_no_content_length(self):
        for path in ("/artists", "/rpc/add?a=1"):
            status, headers = self.head(path)
            self.assertEqual(status, 200, path)
            self.assertNotIn("content-length", headers, path)
            self.assertEqual(headers["content-type"], "application/json; charset=utf-8", path)

    def test_errors_keep_content_length(self):
        status, headers = self.head("/no_such_table")
        self.assertEqual(status, 404)
        self.assertIn("content-length", headers)

    def test_range_not_satisfiable_has_no_content_length(self):
        status, headers = self.head("/artists?offset=100000", {"Prefer": "count=exact"})
        self.assertEqual(status, 416)
        self.assertNotIn("content-length", headers)
        self.assertRegex(headers["content-range"], r"^\*/[0-9]+$")
        self.assertNotIn("proxy-status", headers)


class HeadPlanTest(HeadTest):
    SERVER_CONFIG = {"db-plan-enabled": "true"}

    def test_plan_keeps_content_length(self):
        status, headers = self.head("/artists", {"Accept": "application/vnd.pgrst.plan+json"})
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"],
                         'application/vnd.pgrst.plan+json; for="application/json"; charset=utf-8')
        self.assertGreater(int(headers["content-length"]), 0)


def read_all(sock):
    """Every byte the server sends until it closes (or the timeout)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return data, False
        if not chunk:
            return data, True
        data += chunk


class HeadFramingTest(ServerTestCase):
    """A HEAD answer ends with its header block (RFC 9112 6.3): nothing
    the server writes after it may be read by a keep-alive client as the
    start of the next answer. libmicrohttpd 0.9.75 sends an answer of
    unknown length chunked, terminator included even for HEAD; the server
    sends the answers without Content-Length unchunked and closes after
    them (Warp keeps the connection, see bench/README.md)."""

    def pipeline(self, *requests, timeout=3):
        """requests: request line and any headers but Host, no final CRLF."""
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=timeout)
        try:
            s.sendall(b"".join(b"%s\r\nHost: x\r\n\r\n" % r for r in requests))
            return read_all(s)
        finally:
            s.close()

    def split_head(self, data):
        head, sep, rest = data.partition(b"\r\n\r\n")
        self.assertEqual(sep, b"\r\n\r\n", data)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip()
                   for k, _, v in (line.partition(":") for line in lines[1:])}
        return int(lines[0].split()[1]), headers, rest

    def assert_head_ends_connection(self, head, status):
        data, closed = self.pipeline(head, b"GET /artists?limit=1 HTTP/1.1")
        got, headers, rest = self.split_head(data)
        self.assertEqual(got, status, data)
        self.assertNotIn("transfer-encoding", headers)
        self.assertNotIn("content-length", headers)
        self.assertEqual(headers.get("connection"), "close")
        self.assertEqual(rest, b"", "bytes after a HEAD answer")
        self.assertTrue(closed, "the connection stays open after Connection: close")

    def test_successful_head_is_not_chunked(self):
        self.assert_head_ends_connection(b"HEAD /artists?limit=1&offset=1 HTTP/1.1", 200)
        self.assert_head_ends_connection(b"HEAD /rpc/add?a=1&b=2 HTTP/1.1", 200)
        self.assert_head_ends_connection(b"HEAD /artists HTTP/1.0", 200)

    def test_range_not_satisfiable_head_is_not_chunked(self):
        self.assert_head_ends_connection(
            b"HEAD /artists?offset=100000 HTTP/1.1\r\nPrefer: count=exact", 416)

    def assert_keeps_connection(self, first, status):
        data, _ = self.pipeline(first + b" HTTP/1.1", b"GET /artists?select=id&limit=1 HTTP/1.1")
        got, headers, rest = self.split_head(data)
        self.assertEqual(got, status, data)
        self.assertNotIn("transfer-encoding", headers)
        if not first.startswith(b"HEAD "):
            rest = rest[int(headers["content-length"]):]
        self.assertTrue(rest.startswith(b"HTTP/1.1 200 OK\r\n"), data)
        return headers

    def test_error_head_keeps_length_and_connection(self):
        headers = self.assert_keeps_connection(b"HEAD /no_such_table", 404)
        self.assertGreater(int(headers["content-length"]), 0)

    def test_bodiless_status_head_keeps_connection(self):
        headers = self.assert_keeps_connection(b"HEAD /rpc/touch", 204)
        self.assertNotIn("content-length", headers)

    def test_get_and_options_pipelining_unaffected(self):
        self.assert_keeps_connection(b"GET /artists?limit=1", 200)
        self.assert_keeps_connection(b"OPTIONS /artists", 200)
