"""Streamed responses (issue 17, docs/streaming.md): a read whose body
passes 64 KiB goes out with chunked transfer encoding while PostgreSQL
still sends rows, byte-identical to the buffered body of the same request,
with the server's memory bounded whatever the size; an error after the
head cuts the transfer short; a client that leaves mid-stream frees its
connection; a slow reader stops the fetching (backpressure). Responses
under the threshold keep their buffered form (Content-Length,
Content-Range), which the conformance suite checks case by case.

The expected bodies come from the buffered path itself: the same request
with Prefer: count=exact, which the engine never streams (the total must
precede the body), so PostgreSQL's own aggregate (json_agg, string_agg)
builds them."""
import hashlib
import json
import http.client
import re
import socket
import struct
import subprocess
import threading
import time

from harness import SERVER, ServerTestCase

BIG = ("CREATE TABLE api.big AS SELECT g AS id, md5(g::text) a, md5((g+1)::text) b "
       "FROM generate_series(1, 1000000) g; "
       # values record_out quotes or escapes, NULLs, arrays, non-ASCII: the
       # CSV and JSON encodings of the streamed rows must match PostgreSQL's
       "CREATE TABLE api.odd AS SELECT g AS id, CASE g % 9 WHEN 0 THEN '' WHEN 1 THEN NULL "
       "WHEN 2 THEN 'a\"b\\c' WHEN 3 THEN 'x,y (z)' WHEN 4 THEN E'tab\\there\\nnl' "
       "WHEN 5 THEN 'é ü ☃' WHEN 6 THEN 'v' || chr(11) || 'f' || chr(12) "
       "WHEN 7 THEN ' lead' ELSE 'plain' END AS t, g % 3 = 0 AS flag, "
       "CASE WHEN g % 2 = 0 THEN NULL ELSE ARRAY[g, g + 1] END AS arr, "
       "jsonb_build_object('k', g, 'n', NULL) AS doc "
       "FROM generate_series(1, 6000) g; "
       # a row whose value fails late: the error comes after the head
       "CREATE VIEW api.big_late_error AS SELECT id, a, "
       "CASE WHEN id < 900000 THEN b ELSE (1 / (id - id))::text END AS b FROM api.big; "
       "GRANT SELECT ON api.big, api.odd, api.big_late_error TO web_anon; "
       # function results: a read-only set streams, a volatile one is buffered
       # (its transaction ends after the body)
       "CREATE FUNCTION api.big_rows(lim int) RETURNS SETOF api.big STABLE "
       "LANGUAGE sql AS 'SELECT * FROM api.big WHERE id <= lim'; "
       "CREATE FUNCTION api.big_rows_volatile(lim int) RETURNS SETOF api.big VOLATILE "
       "LANGUAGE sql AS 'SELECT * FROM api.big WHERE id <= lim'; "
       # concurrent sequential scans of one table start where another one
       # is (synchronized scans): the row order, buffered or streamed, would
       # differ from one request to the next
       "ALTER DATABASE pgrest_test SET synchronize_seqscans = off")

MEDIA = ["application/json", "application/x-ndjson", "text/csv"]
RSS_LIMIT_KB = 64 * 1024


def fetch(port, path, headers=None, timeout=120):
    """(status, headers, sha256, length) of a complete response."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        h = hashlib.sha256()
        n = 0
        while True:
            chunk = r.read(1 << 16)
            if not chunk:
                break
            h.update(chunk)
            n += len(chunk)
        return r.status, {k.lower(): v for k, v in r.getheaders()}, h.hexdigest(), n
    finally:
        c.close()


def sanitized():
    """An ASan build's memory (shadow, quarantine) says nothing about the
    server's own: its RSS bound is not checked there."""
    out = subprocess.run(["ldd", SERVER], capture_output=True, text=True).stdout
    return "libasan" in out


def peak_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))


class StreamingTest(ServerTestCase):
    START_SERVER = False
    SERVER_CONFIG = {"db-pool": "8"}

    def setUp(self):
        super().setUp()
        self.cluster.psql(BIG, timeout=120)
        self.start_server()

    def buffered(self, path, accept):
        status, h, digest, n = fetch(self.server.port, path,
                                     {"Accept": accept, "Prefer": "count=exact"})
        # 206 for a page of a counted total
        self.assertIn(status, (200, 206))
        self.assertEqual(h.get("content-length"), str(n))
        return digest, n

    def assert_streamed(self, result, accept):
        status, h, digest, n = result
        self.assertEqual(status, 200)
        self.assertEqual(h.get("transfer-encoding"), "chunked")
        self.assertNotIn("content-length", h)
        self.assertNotIn("content-range", h)
        self.assertTrue(h.get("content-type", "").startswith(accept), h)
        return digest, n

    def eight_concurrent_reads(self, accept):
        """8 concurrent GET /big: the same streamed body each, the
        buffered path's, with the server's peak RSS under 64 MB."""
        results = [None] * 8

        def get(i):
            results[i] = fetch(self.server.port, "/big", {"Accept": accept})
        threads = [threading.Thread(target=get, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        bodies = {self.assert_streamed(r, accept) for r in results}
        self.assertEqual(len(bodies), 1, "the 8 bodies differ")
        # before the buffered request, which needs the body in memory
        rss = peak_rss_kb(self.server.proc.pid)
        if not sanitized():
            self.assertLess(rss, RSS_LIMIT_KB, "peak RSS %d kB" % rss)
        self.assertEqual(bodies.pop(), self.buffered("/big", accept))

    def test_eight_concurrent_json_reads(self):
        self.eight_concurrent_reads("application/json")

    def test_eight_concurrent_ndjson_reads(self):
        self.eight_concurrent_reads("application/x-ndjson")

    def test_eight_concurrent_csv_reads(self):
        self.eight_concurrent_reads("text/csv")

    def test_streamed_encodings_match_postgresql(self):
        for accept in MEDIA + ["application/vnd.pgrst.array+json;nulls=stripped"]:
            for path in ["/odd", "/odd?select=t,arr,doc&order=id.desc",
                         "/odd?select=id,t,arr,k:doc->k&limit=5500&offset=7"]:
                got = fetch(self.server.port, path, {"Accept": accept})
                # every one of these bodies is well past the threshold
                self.assertGreater(got[3], 100 * 1024, (accept, path))
                self.assertEqual(self.assert_streamed(got, accept.split(";")[0]),
                                 self.buffered(path, accept), (accept, path))

    def test_function_results_stream(self):
        for accept in ["application/json", "application/x-ndjson"]:
            for path in ["/rpc/big_rows?lim=100000",
                         "/rpc/big_rows?lim=100000&select=b,id&id=gt.5&order=id.desc"]:
                got = fetch(self.server.port, path, {"Accept": accept})
                self.assertEqual(self.assert_streamed(got, accept),
                                 self.buffered(path, accept), (accept, path))
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        c.request("POST", "/rpc/big_rows", body='{"lim": 100000}',
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        self.assertEqual((r.status, r.getheader("Transfer-Encoding")), (200, "chunked"))
        c.close()
        self.assertEqual(hashlib.sha256(body).hexdigest(),
                         self.buffered("/rpc/big_rows?lim=100000", "application/json")[0])
        # POSTed, a volatile function's transaction may write, and ends
        # after its body: buffered (a GET runs READ ONLY, and streams)
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        c.request("POST", "/rpc/big_rows_volatile", body='{"lim": 100000}',
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        self.assertEqual((r.status, r.getheader("Content-Length"), r.getheader("Content-Range")),
                         (200, str(len(body)), "0-99999/*"))
        c.close()

    def test_geojson_streams_as_postgis_features(self):
        self.cluster.psql(
            "CREATE EXTENSION postgis; "
            "CREATE TABLE api.places AS SELECT g AS id, 'p' || g AS name, "
            "ST_SetSRID(ST_MakePoint(g / 1000.0, g / 7.0), 4326) AS geom "
            "FROM generate_series(1, 3000) g; "
            "GRANT SELECT ON api.places TO web_anon; NOTIFY pgrst", timeout=120)
        accept = "application/geo+json"
        self.assertIsNotNone(self.server.wait_for(
            lambda: fetch(self.server.port, "/places?limit=1", {"Accept": accept})[0] == 200,
            20), self.server.log_tail())
        for path in ["/places", "/places?select=name,geom&order=id.desc"]:
            got = fetch(self.server.port, path, {"Accept": accept})
            self.assertEqual(self.assert_streamed(got, accept), self.buffered(path, accept), path)

    def test_small_responses_stay_buffered(self):
        status, h, _, n = fetch(self.server.port, "/odd?limit=10")
        self.assertEqual(status, 200)
        self.assertEqual(h.get("content-length"), str(n))
        self.assertEqual(h.get("content-range"), "0-9/*")
        self.assertNotIn("transfer-encoding", h)
        # an early error keeps its status: the head is not out yet
        status, h, _, _ = fetch(self.server.port, "/big_late_error?id=gt.899990")
        self.assertEqual(status, 400)


class StreamFailureTest(ServerTestCase):
    START_SERVER = False
    SERVER_CONFIG = {"db-pool": "1"}

    def setUp(self):
        super().setUp()
        self.cluster.psql(BIG, timeout=120)
        self.start_server()

    def backend(self):
        """pid|state|wait_event of the pool's one backend."""
        return self.cluster.psql(
            "SELECT pid, state, coalesce(wait_event, '') FROM pg_stat_activity "
            "WHERE usename = 'authenticator' AND backend_type = 'client backend' "
            "AND application_name NOT LIKE '%listen%' AND query NOT LIKE '%LISTEN%'").strip()

    def wait_backend(self, pred, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = [r.split("|") for r in self.backend().splitlines()]
            match = [r for r in rows if pred(r)]
            if match:
                return match[0]
            time.sleep(0.02)
        self.fail("backend never matched: %r\n%s" % (self.backend(), self.server.log_tail()))

    def assert_pool_serves(self):
        r = self.server.get("/big?id=eq.7", timeout=10)
        self.assertEqual(r.status, 200)
        self.assertIn('"id":7', r.body)

    def test_error_mid_stream_ends_the_transfer_abnormally(self):
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        c.request("GET", "/big_late_error")
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
        with self.assertRaises(http.client.IncompleteRead) as cm:
            r.read()
        self.assertGreater(len(cm.exception.partial), 1 << 20)
        c.close()
        self.assert_pool_serves()
        metrics = self.server.admin("/metrics").body
        self.assertIn("pgrst_stream_aborts_total 1", metrics)
        self.assertIn("Streamed response aborted: ", self.server.log_tail(200))
        self.assertIn("division by zero", self.server.log_tail(200))

    def test_slow_reader_pauses_and_gone_reader_frees_the_connection(self):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=30)
        s.sendall(b"GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n")
        got = 0
        while got < 1 << 20:
            data = s.recv(1 << 16)
            self.assertTrue(data, "the stream ended early")
            got += len(data)
        # the client stops reading: PostgreSQL waits to send (ClientWrite)
        # instead of the server buffering the rest
        pid = self.wait_backend(lambda r: r[1] == "active" and r[2] == "ClientWrite")[0]
        rss = peak_rss_kb(self.server.proc.pid)
        if not sanitized():
            self.assertLess(rss, RSS_LIMIT_KB, "peak RSS %d kB" % rss)
        closed = time.time()
        s.close()
        row = self.wait_backend(lambda r: r[0] == pid and r[1] == "idle")
        since = float(self.cluster.psql(
            "SELECT extract(epoch FROM state_change) FROM pg_stat_activity "
            "WHERE pid = %s" % row[0]).strip())
        self.assertLess(since - closed, 1.0)
        self.assert_pool_serves()
        # the same backend, kept clean rather than replaced -- when the
        # drain fits the task's 2 s grace, which an ASan server on a loaded
        # machine need not (the plain server's run checks it)
        if not sanitized():
            self.assertEqual(self.wait_backend(lambda r: r[1] == "idle")[0], pid)


class ReadersLeavingTogetherTest(ServerTestCase):
    """Many streamed responses whose clients leave at once, as wrk's do at
    the end of a run: a request the server gave up on is freed when its
    task ends, and an event of its database socket still waiting in the
    same loop batch must not reach it (a use after free: libmicrohttpd's
    "Cannot resume connections" panic, or ASan's report)."""
    START_SERVER = False
    SERVER_CONFIG = {"db-pool": "10"}

    def setUp(self):
        super().setUp()
        self.cluster.psql(BIG, timeout=120)
        self.start_server()

    def leave_together(self, n, reading_s):
        """n clients read streamed bodies for reading_s, then all reset."""
        socks, stop = [], threading.Event()

        def read(s):
            try:
                while not stop.is_set() and s.recv(1 << 16):
                    pass
            except OSError:
                pass

        for i in range(n):
            s = socket.create_connection(("127.0.0.1", self.server.port), timeout=30)
            s.sendall(b"GET /big?id=lt.%d HTTP/1.1\r\nHost: localhost\r\n\r\n"
                      % (200000 + 5000 * i))
            socks.append(s)
        readers = [threading.Thread(target=read, args=(s,)) for s in socks]
        for t in readers:
            t.start()
        time.sleep(reading_s)
        stop.set()
        for s in socks:
            # a reset, not a FIN: the server's next write fails at once
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.shutdown(socket.SHUT_RDWR)
            s.close()
        for t in readers:
            t.join(30)

    def test_many_readers_leave_mid_stream(self):
        for i in range(10):
            self.leave_together(40, 0.2 + 0.1 * i)
            self.assertTrue(self.server.alive(), self.server.log_tail())
        r = self.server.get("/big?id=eq.7", timeout=30)
        self.assertEqual(r.status, 200)
        self.assertIn('"id":7', r.body)
        self.assertNotIn("Fatal error", self.server.log_tail(400))


class StreamingMaxRowsTest(ServerTestCase):
    """db-max-rows bounds a streamed read as it bounds a buffered one: it
    is part of the statement (docs/streaming.md)."""
    START_SERVER = False
    SERVER_CONFIG = {"db-max-rows": "5000"}

    def setUp(self):
        super().setUp()
        self.cluster.psql("CREATE TABLE api.wide AS SELECT g AS id, repeat(md5(g::text), 2) AS t "
                          "FROM generate_series(1, 8000) g; "
                          "GRANT SELECT ON api.wide TO web_anon")
        self.start_server()

    def test_max_rows_cut_a_streamed_read(self):
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        try:
            c.request("GET", "/wide?order=id")
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
            rows = json.loads(r.read())
        finally:
            c.close()
        self.assertEqual([row["id"] for row in rows], list(range(1, 5001)))
        # the buffered path of the same request agrees
        status, h, digest, n = fetch(self.server.port, "/wide?order=id",
                                     {"Prefer": "count=exact"})
        self.assertEqual((status, h.get("content-range")), (206, "0-4999/8000"))
        self.assertEqual(fetch(self.server.port, "/wide?order=id")[2], digest)
