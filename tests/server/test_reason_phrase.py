"""The reason phrase of the status line is http-types' statusMessage, as
PostgREST's Warp writes it (server/reason_phrase.c), not libmicrohttpd's
RFC 9110 table: clients show it (fetch's statusText)."""
import re
import socket

from harness import ServerTestCase

RAISING = """
CREATE FUNCTION api.raise_code(code text) RETURNS void LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION USING ERRCODE = code, MESSAGE = 'raised'; END $$;
CREATE FUNCTION api.set_status(code text) RETURNS void LANGUAGE sql AS
  $$ SELECT set_config('response.status', code, true) $$;
CREATE FUNCTION api.raise_pgrst(detail text) RETURNS void LANGUAGE plpgsql AS
  $$ BEGIN RAISE SQLSTATE 'PGRST' USING MESSAGE = '{"code":"PT418","message":"m"}',
                                        DETAIL = detail; END $$;
CREATE FUNCTION api.raise_message(code text, message text) RETURNS void LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message; END $$;
GRANT EXECUTE ON FUNCTION api.raise_code(text), api.set_status(text), api.raise_pgrst(text),
  api.raise_message(text, text) TO web_anon;
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
        # response.status (Response.hs) goes through http-types' toEnum
        self.assertEqual(self.status_line(b"POST /rpc/set_status HTTP/1.1", b'{"code": "418"}'),
                         "HTTP/1.1 418 I'm a teapot")
        self.assertEqual(self.status_line(b"POST /rpc/set_status HTTP/1.1", b'{"code": "422"}'),
                         "HTTP/1.1 422 Unprocessable Entity")

    def test_raised_status_carries_the_message(self):
        # Error.hs: SQLSTATE PTxyz is HTTP.mkStatus xyz message
        for code, line in (("PT418", "HTTP/1.1 418 raised"),
                           ("PT422", "HTTP/1.1 422 raised"),
                           ("PT332", "HTTP/1.1 332 raised")):
            self.assertEqual(self.status_line(b"POST /rpc/raise_code HTTP/1.1",
                                              b'{"code": "%s"}' % code.encode()), line)
        # a line feed in the message cannot end the status line
        self.assertEqual(self.status_line(b"POST /rpc/raise_message HTTP/1.1",
                                          b'{"code": "PT409", "message": "a\\r\\nX-Injected: 1"}'),
                         "HTTP/1.1 409 a  X-Injected: 1")
        # not a status: SQLSTATE PT0xx and letters are 500 with its phrase
        self.assertEqual(self.status_line(b"POST /rpc/raise_code HTTP/1.1", b'{"code": "PT0AB"}'),
                         "HTTP/1.1 500 Internal Server Error")

    def test_raise_pgrst_status_text(self):
        # Error.hs: mkStatus status status_text; toEnum status without one
        # (the MESSAGE's code names no phrase)
        self.assertEqual(self.status_line(
            b"POST /rpc/raise_pgrst HTTP/1.1",
            b'{"detail": "{\\"status\\": 332, \\"status_text\\": \\"My Custom Status\\", '
            b'\\"headers\\": {}}"}'), "HTTP/1.1 332 My Custom Status")
        self.assertEqual(self.status_line(
            b"POST /rpc/raise_pgrst HTTP/1.1",
            b'{"detail": "{\\"status\\": 404, \\"headers\\": {}}"}'), "HTTP/1.1 404 Not Found")

    def test_phrase_belongs_to_its_response_only(self):
        # keep-alive: a custom phrase is not left for the next answer of
        # the same code on the connection's thread
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        try:
            body = b'{"code": "PT404"}'
            s.sendall(b"POST /rpc/raise_code HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                      % (len(body), body) +
                      b"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            s.close()
        lines = re.findall(r"HTTP/1\.1 \d{3} [^\r]*", data.decode("latin-1"))
        self.assertEqual(lines, ["HTTP/1.1 404 raised", "HTTP/1.1 404 Not Found"])
