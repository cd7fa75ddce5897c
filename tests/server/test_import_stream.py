"""Streamed bulk imports through pgrest-server (docs/bulk-import.md,
"Streamed bodies"): a POST of rows whose body passes
server-streamed-body-threshold goes into PostgreSQL through a COPY while
the client still sends it (seen in pg_stat_activity halfway), is not
bounded by server-max-body-size, and writes exactly the rows the same body
writes whole; a bad row mid-body, a client leaving mid-body and
server-max-streamed-body-size leave the table untouched and the server
serving. A write that cannot stream (a call) keeps server-max-body-size's
413 up front."""
import http.client
import json
import signal
import socket
import subprocess
import time

from harness import ServerTestCase
from test_admin_logs import JWT_SECRET, jwt

USER = "Bearer " + jwt({"role": "web_user"})

# a streamed body's COPY: into the rows' temporary table, or into the table
COPYING = ("SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
           " AND query LIKE 'COPY %FROM STDIN' AND pid <> pg_backend_pid()")


def ndjson(first, n):
    return "".join('{"id":%d,"name":"Streamed %d","country":"SE"}\n' % (i, i)
                   for i in range(first, first + n)).encode()


class ImportStreamTest(ServerTestCase):
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "server-streamed-body-threshold": "65536",
                     "server-max-body-size": "200000"}

    def setUp(self):
        super().setUp()
        self.cluster.psql("DELETE FROM api.artists WHERE id >= 100000")

    def count(self):
        return int(self.cluster.psql("SELECT count(*) FROM api.artists WHERE id >= 100000"))

    def copying(self):
        return int(self.cluster.psql(COPYING))

    def open(self, path, headers, length=None):
        """A connection with the request line and headers sent; the body
        follows (Content-Length, or chunked without one)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.putrequest("POST", path)
        conn.putheader("Authorization", USER)
        for k, v in headers.items():
            conn.putheader(k, v)
        if length is None:
            conn.putheader("Transfer-Encoding", "chunked")
        else:
            conn.putheader("Content-Length", str(length))
        conn.endheaders()
        return conn

    @staticmethod
    def send(conn, data, chunked):
        if chunked:
            conn.send(b"%x\r\n%s\r\n" % (len(data), data))
        else:
            conn.send(data)

    def wait_for(self, what, expected, deadline=20.0):
        """Polls what() until it gives expected, up to the deadline."""
        end = time.monotonic() + deadline
        seen = what()
        while seen != expected and time.monotonic() < end:
            time.sleep(0.05)
            seen = what()
        return seen

    def import_halfway(self, body, headers, chunked):
        """Sends the first half, checks a COPY runs, sends the rest: the
        answer."""
        conn = self.open("/artists", headers, None if chunked else len(body))
        half = len(body) // 2
        for at in range(0, half, 16384):
            self.send(conn, body[at:min(at + 16384, half)], chunked)
        self.assertEqual(self.wait_for(self.copying, 1), 1, "no COPY while the body comes")
        self.assertEqual(self.count(), 0)
        for at in range(half, len(body), 16384):
            self.send(conn, body[at:at + 16384], chunked)
        if chunked:
            conn.send(b"0\r\n\r\n")
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, data

    def test_ndjson_past_max_body_size(self):
        body = ndjson(100000, 20000)
        self.assertGreater(len(body), 200000)
        status, data = self.import_halfway(
            body, {"Content-Type": "application/x-ndjson", "Prefer": "count=exact"}, False)
        self.assertEqual((status, data), (201, b""))
        self.assertEqual(self.count(), 20000)
        self.assertEqual(self.cluster.psql(
            "SELECT name FROM api.artists WHERE id = 119999").strip(), "Streamed 119999")

    def test_csv_chunked(self):
        body = ("id,name,country\r\n" + "".join(
            '%d,"Csv, %d",NO\r\n' % (i, i) for i in range(100000, 115000))).encode()
        status, data = self.import_halfway(body, {"Content-Type": "text/csv"}, True)
        self.assertEqual((status, data), (201, b""))
        self.assertEqual(self.count(), 15000)
        self.assertEqual(self.cluster.psql(
            "SELECT name FROM api.artists WHERE id = 100007").strip(), "Csv, 100007")

    def test_bad_row_writes_nothing(self):
        lines = ndjson(100000, 20000).split(b"\n")
        lines[14999] = b'{"id":114999,"name":"broken"'
        body = b"\n".join(lines)
        status, data = self.import_halfway(body, {"Content-Type": "application/x-ndjson"},
                                           False)
        self.assertEqual(status, 400, data)
        err = json.loads(data)
        self.assertEqual((err["code"], err["details"]), ("PGRST102", "line 15000: invalid JSON"))
        self.assertEqual(self.count(), 0)
        self.assertEqual(self.wait_for(self.copying, 0), 0)

    def test_refused_csv_value_names_its_line(self):
        """Typed CSV rows: a value its column refuses fails the COPY, and
        the answer is PostgreSQL's error with the line and column."""
        rows = ['%d,"Csv, %d",NO\r\n' % (i, i) for i in range(100000, 115000)]
        rows[12000] = '112000x,"Csv",NO\r\n'
        body = ("id,name,country\r\n" + "".join(rows)).encode()
        status, data = self.import_halfway(body, {"Content-Type": "text/csv"}, False)
        self.assertEqual(status, 400, data)
        err = json.loads(data)
        self.assertEqual((err["code"], err["details"]), ("22P02", "line 12002, column id"))
        self.assertIn('"112000x"', err["message"])
        self.assertEqual(self.count(), 0)
        self.assertEqual(self.wait_for(self.copying, 0), 0)

    def test_representation_streams_both_ways(self):
        """return=representation: the body streams in, the representation
        streams out (chunked, the count in Content-Range up front), and
        it is what the table holds."""
        body = ndjson(100000, 20000)
        conn = self.open("/artists?select=id,name", {"Content-Type": "application/x-ndjson",
                                                     "Prefer": "return=representation,"
                                                               "count=exact"}, len(body))
        for at in range(0, len(body), 16384):
            conn.send(body[at:at + 16384])
        r = conn.getresponse()
        data = r.read()
        conn.close()
        self.assertEqual(r.status, 201, data[:300])
        self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
        self.assertEqual(r.getheader("Content-Range"), "*/20000")
        rows = json.loads(data)
        self.assertEqual(rows[0], {"id": 100000, "name": "Streamed 100000"})
        self.assertEqual(rows, json.loads(self.cluster.psql(
            "SELECT json_agg(json_build_object('id', id, 'name', name) ORDER BY id)"
            " FROM api.artists WHERE id >= 100000")))

    def leave_mid_body(self, body):
        """Sends half the body, leaves once its COPY runs, and waits until
        the COPY is gone (its connection closed)."""
        conn = self.open("/artists", {"Content-Type": "application/x-ndjson"}, len(body))
        conn.send(body[:len(body) // 2])
        self.assertEqual(self.wait_for(self.copying, 1), 1)
        conn.close()
        self.assertEqual(self.wait_for(self.copying, 0), 0)

    def test_client_leaving_mid_body(self):
        body = ndjson(100000, 20000)
        self.leave_mid_body(body)
        # nothing written
        self.assertEqual(self.count(), 0)
        status, _ = self.import_halfway(body, {"Content-Type": "application/x-ndjson"}, False)
        self.assertEqual(status, 201)
        self.assertEqual(self.count(), 20000)

    def test_sigterm_after_client_left_mid_body(self):
        # A request whose client left mid-body answers nobody: graceful
        # shutdown does not wait for it (MHD would drop it only at
        # server-timeout, 30 s). It needs well under a second; 10 s is
        # the deadline, far below server-timeout.
        self.leave_mid_body(ndjson(100000, 20000))
        self.server.signal(signal.SIGTERM)
        try:
            status = self.server.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.fail("SIGTERM still waits for the request whose client left")
        self.assertEqual(status, 0)
        self.assertEqual(self.count(), 0)

    def test_not_streamable_keeps_max_body_size(self):
        body = ndjson(100000, 20000)
        # a call's body does not stream (only a POST of rows to a table or view)
        conn = self.open("/rpc/add", {"Content-Type": "application/x-ndjson"}, len(body))
        conn.send(body)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        self.assertEqual(r.status, 413)
        self.assertEqual(json.loads(data)["code"], "PGRST413")
        self.assertEqual(self.count(), 0)


class ImportStreamBoundTest(ServerTestCase):
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "server-streamed-body-threshold": "65536",
                     "server-max-streamed-body-size": "500000"}

    def test_streamed_body_bound(self):
        self.cluster.psql("DELETE FROM api.artists WHERE id >= 100000")
        body = ndjson(100000, 20000)
        self.assertGreater(len(body), 500000)
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        conn.request("POST", "/artists", body=body,
                     headers={"Content-Type": "application/x-ndjson",
                              "Authorization": USER})
        r = conn.getresponse()
        data = json.loads(r.read())
        conn.close()
        self.assertEqual((r.status, data["code"]), (413, "PGRST413"))
        self.assertEqual(data["details"],
                         "The limit is 500000 bytes (server-max-streamed-body-size)")
        self.assertEqual(int(self.cluster.psql(
            "SELECT count(*) FROM api.artists WHERE id >= 100000")), 0)

    def test_declared_past_the_bound_refused_before_reading(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=20)
        conn.connect()
        conn.putrequest("POST", "/artists")
        for k, v in (("Authorization", USER), ("Content-Type", "application/x-ndjson"),
                     ("Content-Length", str(10 ** 10))):
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        data = json.loads(r.read())
        conn.close()
        self.assertEqual((r.status, data["details"]),
                         (413, "The limit is 500000 bytes (server-max-streamed-body-size)"))
