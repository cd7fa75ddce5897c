"""Request bodies fed to the task as they arrive (server/http.c: the task
starts on the headers, pgrest_task_write_body takes each piece MHD hands
over, pgrest_task_end_body the end; docs/embedding.md "Request bodies in
chunks"). A body sent slowly in pieces, with Content-Length or chunked,
gets the answer the same body sent at once gets, and writes the same
rows; a client that leaves or stalls mid-body writes nothing and leaves
the server serving; the limits and the answers given before the body
(a bad JWT) are those of a whole body."""
import http.client
import json
import socket
import time

from harness import ServerTestCase
from test_admin_logs import JWT_SECRET, jwt

USER = "Bearer " + jwt({"role": "web_user"})
# headers a comparison leaves out: they differ from one request to the next
VOLATILE = {"date", "connection", "transfer-encoding", "content-length", "server-timing"}


def pieces_of(body, n):
    step = max(1, -(-len(body) // n))
    return [body[i:i + step] for i in range(0, len(body), step)]


class BodyClient:
    """Sends a request whose body goes out at once ("whole"), or in pieces
    with a pause between them, framed by Content-Length ("length") or
    chunked ("chunked")."""

    def __init__(self, port):
        self.port = port

    def send(self, method, path, body, headers, mode, pieces=5, pause=0.05):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        conn.connect()
        # every piece its own segment
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        hdrs = dict(headers)
        try:
            if mode == "whole":
                conn.request(method, path, body=body, headers=hdrs)
            else:
                parts = pieces_of(body, pieces)

                def slowly():
                    for i, p in enumerate(parts):
                        if i:
                            time.sleep(pause)
                        yield p
                if mode == "length":
                    hdrs["Content-Length"] = str(len(body))
                else:
                    hdrs["Transfer-Encoding"] = "chunked"
                conn.request(method, path, body=slowly(), headers=hdrs,
                             encode_chunked=mode == "chunked")
            r = conn.getresponse()
            data = r.read()
            kept = sorted((k.lower(), v) for k, v in r.getheaders()
                          if k.lower() not in VOLATILE)
            return r.status, kept, data
        finally:
            conn.close()


class RequestBodyChunksTest(ServerTestCase):
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET}

    def setUp(self):
        super().setUp()
        self.client = BodyClient(self.server.port)

    def rows(self, where):
        return json.loads(self.cluster.psql(
            "SELECT coalesce(json_agg(a ORDER BY id), '[]') FROM "
            "(SELECT id, name, country FROM api.artists WHERE %s) a" % where))

    def same_in_every_mode(self, method, path, body, headers, where, reset):
        """The answer and the rows read back for each way of sending."""
        seen = {}
        for mode in ("whole", "length", "chunked"):
            reset()
            answer = self.client.send(method, path, body, headers, mode)
            seen[mode] = (answer, self.rows(where))
        self.assertEqual(seen["length"], seen["whole"])
        self.assertEqual(seen["chunked"], seen["whole"])
        return seen["whole"]

    def delete(self, where):
        return lambda: self.cluster.psql("DELETE FROM api.artists WHERE %s" % where)

    def test_json_insert_in_pieces(self):
        body = json.dumps([{"id": 7001 + i, "name": "Piece %d \u00e9" % i, "country": "FR"}
                           for i in range(40)]).encode()
        (status, _, data), rows = self.same_in_every_mode(
            "POST", "/artists?select=id,name", body,
            {"Authorization": USER, "Content-Type": "application/json",
             "Prefer": "return=representation"},
            "id BETWEEN 7001 AND 7100", self.delete("id BETWEEN 7001 AND 7100"))
        self.assertEqual(status, 201, data)
        self.assertEqual(len(json.loads(data)), 40)
        self.assertEqual(len(rows), 40)

    def test_csv_insert_in_pieces(self):
        body = ("id,name,country\n" + "".join("%d,Csv %d,DE\n" % (7101 + i, i)
                                             for i in range(30))).encode()
        (status, _, data), rows = self.same_in_every_mode(
            "POST", "/artists", body,
            {"Authorization": USER, "Content-Type": "text/csv"},
            "id BETWEEN 7101 AND 7200", self.delete("id BETWEEN 7101 AND 7200"))
        self.assertEqual((status, data), (201, b""))
        self.assertEqual(rows[0], {"id": 7101, "name": "Csv 0", "country": "DE"})
        self.assertEqual(len(rows), 30)

    def test_patch_in_pieces(self):
        def reset():
            self.cluster.psql("DELETE FROM api.artists WHERE id = 7201; "
                              "INSERT INTO api.artists (id, name) VALUES (7201, 'before')")
        body = json.dumps({"name": "after " + "x" * 300, "country": "IT"}).encode()
        (status, _, data), rows = self.same_in_every_mode(
            "PATCH", "/artists?id=eq.7201", body,
            {"Authorization": USER, "Content-Type": "application/json",
             "Prefer": "return=representation"}, "id = 7201", reset)
        self.assertEqual(status, 200, data)
        self.assertEqual(rows, [{"id": 7201, "name": "after " + "x" * 300, "country": "IT"}])

    def test_rpc_in_pieces(self):
        doc = {"list": list(range(200)), "text": "caf\u00e9 " * 50}
        body = json.dumps({"doc": doc}).encode()
        (status, _, data), _ = self.same_in_every_mode(
            "POST", "/rpc/echo_json", body, {"Content-Type": "application/json"},
            "false", lambda: None)
        self.assertEqual(status, 200, data)
        self.assertEqual(json.loads(data), doc)

    def test_invalid_body_in_pieces(self):
        (status, _, data), _ = self.same_in_every_mode(
            "POST", "/artists", b'[{"id": 7301, "name": "x"}, {"id": ', 
            {"Authorization": USER, "Content-Type": "application/json"},
            "id = 7301", lambda: None)
        self.assertEqual(status, 400, data)
        self.assertEqual(json.loads(data)["code"], "PGRST102")

    def test_bad_jwt_with_a_body(self):
        """Answered at the task's start, queued once the body is in: the
        answer a request without a body gets."""
        bad = {"Authorization": "Bearer " + jwt({"role": "web_user"})[:-3] + "AAA",
               "Content-Type": "application/json"}
        body = json.dumps([{"id": 7401, "name": "no"}] * 20).encode()
        (status, headers, data), rows = self.same_in_every_mode(
            "POST", "/artists", body, bad, "id = 7401", lambda: None)
        self.assertEqual(rows, [])
        self.assertEqual(status, 401, data)
        self.assertEqual(json.loads(data), {
            "code": "PGRST301", "details": "None of the keys was able to decode the JWT",
            "hint": None, "message": "No suitable key or wrong key type"})
        without = self.client.send("GET", "/artists", b"", bad, "whole")
        self.assertEqual((status, headers, data), without)

    def leave_mid_body(self, head, half):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        s.sendall(head)
        time.sleep(0.1)
        s.sendall(half)
        time.sleep(0.2)
        s.close()

    def test_client_leaves_mid_body(self):
        body = json.dumps([{"id": 7501 + i, "name": "gone"} for i in range(10)]).encode()
        head = ("POST /artists HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n"
                "Content-Type: application/json\r\n" % USER).encode()
        self.leave_mid_body(head + b"Content-Length: %d\r\n\r\n" % len(body),
                            body[:len(body) // 2])
        half = body[:len(body) // 2]
        self.leave_mid_body(head + b"Transfer-Encoding: chunked\r\n\r\n",
                            b"%x\r\n%s\r\n" % (len(half), half))
        self.assertTrue(self.server.alive(), self.server.log_tail())
        r = self.server.get("/artists?id=eq.1&select=id")
        self.assertEqual((r.status, r.json()), (200, [{"id": 1}]))
        self.assertEqual(self.rows("id BETWEEN 7501 AND 7600"), [])
        # the same request whole still goes through
        answer = self.client.send("POST", "/artists", body, {
            "Authorization": USER, "Content-Type": "application/json"}, "chunked")
        self.assertEqual(answer[0], 201, answer)
        self.assertEqual(len(self.rows("id BETWEEN 7501 AND 7600")), 10)


class RequestBodyStallTest(ServerTestCase):
    """server-timeout strikes while the body is read."""
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "server-timeout": "2"}

    def closed_by_server(self, s, deadline=30):
        """Whether the server closes s (EOF or reset) before the deadline."""
        s.settimeout(1)
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            try:
                data = s.recv(4096)
            except socket.timeout:
                continue
            except ConnectionError:
                return True
            if data == b"":
                return True
        return False

    def test_stalled_body_is_dropped(self):
        body = json.dumps([{"id": 7601 + i, "name": "stalled"} for i in range(10)]).encode()
        half = body[:len(body) // 2]
        head = ("POST /artists HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n"
                "Content-Type: application/json\r\n" % USER).encode()
        for framing, piece in ((b"Content-Length: %d\r\n\r\n" % len(body), half),
                               (b"Transfer-Encoding: chunked\r\n\r\n",
                                b"%x\r\n%s\r\n" % (len(half), half))):
            s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
            try:
                s.sendall(head + framing)
                s.sendall(piece)
                self.assertTrue(self.closed_by_server(s), framing)
            finally:
                s.close()
        self.assertTrue(self.server.alive(), self.server.log_tail())
        self.assertEqual(self.server.get("/artists?id=eq.1&select=id").status, 200)
        self.assertEqual(self.cluster.psql(
            "SELECT count(*) FROM api.artists WHERE id BETWEEN 7601 AND 7700").strip(), "0")


class RequestBodyLimitTest(ServerTestCase):
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "server-max-body-size": "1000"}
    TOO_LARGE = {"code": "PGRST413", "hint": None, "message": "Request body too large",
                 "details": "The limit is 1000 bytes (server-max-body-size)"}

    def test_chunked_body_over_the_limit(self):
        client = BodyClient(self.server.port)
        body = json.dumps([{"id": 7701 + i, "name": "big"} for i in range(100)]).encode()
        self.assertGreater(len(body), 1000)
        headers = {"Authorization": USER, "Content-Type": "application/json"}
        declared = client.send("POST", "/artists", body, headers, "whole")
        self.assertEqual((declared[0], json.loads(declared[2])), (413, self.TOO_LARGE))
        chunked = client.send("POST", "/artists", body, headers, "chunked", pieces=8)
        self.assertEqual(chunked, declared)
        # the size is the HTTP layer's refusal, before the token's
        bad = dict(headers, Authorization="Bearer nope")
        self.assertEqual(client.send("POST", "/artists", body, bad, "chunked"), declared)
        self.assertEqual(self.cluster.psql(
            "SELECT count(*) FROM api.artists WHERE id BETWEEN 7701 AND 7900").strip(), "0")
        # just under the limit goes through
        small = json.dumps([{"id": 7801, "name": "s" * 900}]).encode()
        self.assertEqual(client.send("POST", "/artists", small, headers, "chunked")[0], 201)
