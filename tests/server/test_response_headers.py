"""Headers with an empty value go out as Warp writes them: the trace
header of a request that lacks it (App.hs traceHeaderMiddleware: the
configured name with `fromMaybe mempty`), and an empty value a function
sets in response.headers (Response.hs overrideStatusHeaders).
libmicrohttpd refuses empty values; the server sends one space, which a
reader strips (RFC 9110 5.5)."""
import http.client

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
