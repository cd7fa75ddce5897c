"""Headers with an empty value go out as Warp writes them: the trace
header of a request that lacks it (App.hs traceHeaderMiddleware: the
configured name with `fromMaybe mempty`), and an empty value a function
sets in response.headers (Response.hs overrideStatusHeaders).
libmicrohttpd refuses empty values; the server sends one space, which a
reader strips (RFC 9110 5.5)."""
import http.client
import urllib.parse

from harness import ServerTestCase

SETS_EMPTY = """
CREATE FUNCTION api.empty_header() RETURNS int LANGUAGE plpgsql AS $$ BEGIN
  PERFORM set_config('response.headers', '[{"X-Empty": ""}, {"X-Full": "v"}]', true);
  RETURN 1; END $$;
GRANT EXECUTE ON FUNCTION api.empty_header() TO web_anon;
"""


class EmptyHeaderValueTest(ServerTestCase):
    START_SERVER = False
    SERVER_CONFIG = {"server-trace-header": "X-Request-Id"}

    def setUp(self):
        super().setUp()
        self.cluster.psql(SETS_EMPTY)
        self.start_server()

    def headers(self, method, path, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            r.read()
            return r.status, r.getheaders()
        finally:
            c.close()

    def values(self, headers, name):
        return [v for k, v in headers if k.lower() == name.lower()]

    def test_trace_header_without_request_header(self):
        status, headers = self.headers("GET", "/artists?limit=1")
        self.assertEqual(status, 200)
        self.assertEqual(self.values(headers, "X-Request-Id"), [""])

    def test_trace_header_echoed(self):
        status, headers = self.headers("GET", "/artists?limit=1", {"X-Request-Id": "abc-1"})
        self.assertEqual(status, 200)
        self.assertEqual(self.values(headers, "X-Request-Id"), ["abc-1"])
        # errors too: the middleware wraps every answer
        status, headers = self.headers("GET", "/no_such_table", {"X-Request-Id": "abc-2"})
        self.assertEqual(status, 404)
        self.assertEqual(self.values(headers, "X-Request-Id"), ["abc-2"])

    def test_function_sets_an_empty_header(self):
        status, headers = self.headers("GET", "/rpc/empty_header")
        self.assertEqual(status, 200)
        self.assertEqual(self.values(headers, "X-Empty"), [""])
        self.assertEqual(self.values(headers, "X-Full"), ["v"])


SETS_ANY = """
CREATE FUNCTION api.set_header(name text, value text) RETURNS int LANGUAGE plpgsql AS $$ BEGIN
  PERFORM set_config('response.headers', json_build_array(json_build_object(name, value))::text,
                     true);
  RETURN 1; END $$;
CREATE FUNCTION api.big_bad_header() RETURNS SETOF text LANGUAGE plpgsql AS $$ BEGIN
  PERFORM set_config('response.headers', '[{"X-Bad": "a\\r\\nSet-Cookie: s=1"}]', true);
  RETURN QUERY SELECT repeat('x', 1000) FROM generate_series(1, 300);
  END $$;
GRANT EXECUTE ON FUNCTION api.set_header(text, text), api.big_bad_header() TO web_anon;
"""

PGRST111 = ('{"code":"PGRST111","details":null,"hint":null,"message":"response.headers guc '
            'must be a JSON array composed of objects with a single key and a string value"}')


class RefusedHeaderTest(ServerTestCase):
    """Issue 39: a response.headers entry libmicrohttpd cannot write (CR or
    LF in it, a space in or an empty name) is no longer dropped in silence:
    it is logged and the answer is PostgREST's for a response.headers value
    it cannot use, 500 PGRST111 (Response.hs decodeGucHeaders, Error.hs
    GucHeadersError); Warp would have written the bytes and split the
    response. Framing headers the HTTP server owns keep the answer."""
    START_SERVER = False
    SPLIT_LOGS = True

    def setUp(self):
        super().setUp()
        self.cluster.psql(SETS_ANY)
        self.start_server(**{"log-level": "info"})

    def answer(self, method, path):
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=20)
        try:
            c.request(method, path)
            r = c.getresponse()
            return r.status, r.getheaders(), r.read().decode()
        finally:
            c.close()

    def set_header(self, name, value, method="GET"):
        q = urllib.parse.urlencode({"name": name, "value": value})
        return self.answer(method, "/rpc/set_header?" + q)

    def diagnostics(self):
        with open(self.server.err_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def access(self):
        with open(self.server.log_path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()

    def test_unwritable_headers_are_500_pgrst111(self):
        cases = [("X-Bad", "a\r\nSet-Cookie: s=1"), ("X-Bad", "a\nb"), ("X-Bad", "a\rb"),
                 ("X Bad", "v"), ("", "v")]
        for name, value in cases:
            status, headers, body = self.set_header(name, value)
            self.assertEqual((status, body), (500, PGRST111), (name, value))
            names = [k.lower() for k, _ in headers]
            self.assertNotIn("set-cookie", names)
            self.assertEqual(dict((k.lower(), v) for k, v in headers)["content-type"],
                             "application/json; charset=utf-8")
        # HEAD: the same status, the error's Content-Length, no body
        status, headers, body = self.set_header("X-Bad", "a\nb", method="HEAD")
        self.assertEqual((status, body), (500, ""))
        self.assertIn(("Content-Length", str(len(PGRST111))), headers)
        # logged with the header's name, at error level
        self.assertTrue(self.server.wait_for(
            lambda: self.diagnostics().count("Response header X-Bad refused by the HTTP "
                                             "server; answering 500 PGRST111") == 4, 5),
            self.diagnostics())
        self.assertIn("Response header X Bad refused", self.diagnostics())
        # the access log shows what went out
        self.server.wait_for(lambda: len(self.access()) >= 6, 5)
        statuses = [l.split('"')[2].split()[0] for l in self.access()]
        self.assertEqual(statuses, ["500"] * 6, self.access())

    def test_streamed_body_with_an_unwritable_header(self):
        status, headers, body = self.answer("GET", "/rpc/big_bad_header")
        self.assertEqual((status, body), (500, PGRST111))
        # the server goes on answering
        status, _, body = self.set_header("X-Good", "v")
        self.assertEqual((status, body), (200, "1"))

    def test_framing_headers_keep_the_answer(self):
        # libmicrohttpd frames the body itself, as Warp's own
        # Content-Length and keep-alive win: the answer is unchanged
        for name, value in [("Content-Length", "999"), ("Connection", "keep-alive"),
                            ("Transfer-Encoding", "gzip"), ("X-Good", "v")]:
            status, headers, body = self.set_header(name, value)
            self.assertEqual((status, body), (200, "1"), name)
            self.assertIn(("Content-Length", "1"), headers)
        self.assertNotIn("answering 500", self.diagnostics())
