"""The reason phrase of the status line is http-types' statusMessage, as
PostgREST's Warp writes it (server/reason_phrase.c), not libmicrohttpd's
RFC 9110 table: clients show it (fetch's statusText)."""
import socket

from harness import ServerTestCase

RAISING = """
CREATE FUNCTION api.raise_code(code text) RETURNS void LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION USING ERRCODE = code, MESSAGE = 'raised'; END $$;
CREATE FUNCTION api.set_status(code text) RETURNS void LANGUAGE sql AS
  $$ SELECT set_config('response.status', code, true) $$;
GRANT EXECUTE ON FUNCTION api.raise_code(text), api.set_status(text) TO web_anon;
"""


class ReasonPhraseTest(ServerTestCase):
    START_SERVER = False

    def setUp(self):
        super().setUp()
        self.cluster.psql(RAISING)
        self.start_server()

    def status_line(self, request, body=b""):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        try:
            s.sendall(request + b"\r\nHost: x\r\nConnection: close\r\n" +
                      (b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
                       if body else b"") + b"\r\n" + body)
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data.split(b"\r\n", 1)[0].decode("latin-1")
        finally:
            s.close()

    def test_statuses_postgrest_builds(self):
        cases = [
            (b"GET /artists HTTP/1.1", "HTTP/1.1 200 OK"),
            (b"GET /artists?limit=1 HTTP/1.1\r\nPrefer: count=exact", "HTTP/1.1 206 Partial Content"),
            (b"GET /artists?offset=1000 HTTP/1.1\r\nPrefer: count=exact",
             "HTTP/1.1 416 Requested Range Not Satisfiable"),
            (b"GET /artists HTTP/1.1\r\nAccept: application/vnd.pgrst.object+json",
             "HTTP/1.1 406 Not Acceptable"),
            (b"GET /nope HTTP/1.1", "HTTP/1.1 404 Not Found"),
            (b"GET /artists?" + b"a" * 60000 + b" HTTP/1.1", "HTTP/1.1 414 Request-URI Too Long"),
        ]
        for request, line in cases:
            self.assertEqual(self.status_line(request), line, request[:60])

    def test_statuses_a_request_picks(self):
        # SQLSTATE PTxyz (Error.hs) and response.status (Response.hs) go
        # through http-types' toEnum
        for code, line in (("PT418", "HTTP/1.1 418 I'm a teapot"),
                           ("PT422", "HTTP/1.1 422 Unprocessable Entity"),
                           ("PT413", "HTTP/1.1 413 Request Entity Too Large")):
            self.assertEqual(self.status_line(b"POST /rpc/raise_code HTTP/1.1",
                                              b'{"code": "%s"}' % code.encode()), line)
        self.assertEqual(self.status_line(b"POST /rpc/set_status HTTP/1.1", b'{"code": "418"}'),
                         "HTTP/1.1 418 I'm a teapot")
