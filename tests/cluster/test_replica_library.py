"""The same through the library API, no server: pgrest_handle (the
blocking loop over the task engine) routes by the plan, a write's
pgrest_response_commit_lsn and a read's pgrest_request_set_min_lsn give
read-your-writes."""
import ctypes
import json
import os
import sys
import time

from cluster_case import ClusterCase
from pair import harness

sys.path.insert(0, os.path.join(harness.REPO, "examples", "python_ffi"))
import pgrest_ctypes  # noqa: E402

LIB = os.environ.get("PGREST_LIB", os.path.join(harness.REPO, "build", "lib", "libpgrest.so"))


class LibraryTest(ClusterCase):
    START_SERVER = False

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        lib = pgrest_ctypes.load(LIB)
        p = ctypes.c_void_p
        for name, res, args in [
                ("pgrest_response_commit_lsn", ctypes.c_char_p, [p]),
                ("pgrest_request_set_min_lsn", None, [p, ctypes.c_char_p]),
                ("pgrest_ctx_metrics", ctypes.c_char_p, [p, p])]:
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        cls.lib = lib
        cls.ctx = pgrest_ctypes.context(lib, {
            "db-uri": cls.pair.primary.db_uri, "db-schemas": "api",
            "db-anon-role": "web_anon", "db-replica-uris": cls.pair.replica.db_uri,
            "db-replica-max-lag": "1"})
        err = pgrest_ctypes.Error()
        if lib.pgrest_ctx_load_schema(cls.ctx, ctypes.byref(err)) != 0:
            raise AssertionError(err.message.decode())

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "ctx", None):
            cls.lib.pgrest_ctx_free(cls.ctx)
        super().tearDownClass()

    def call(self, method, path, query="", body=None, min_lsn=None):
        """status, body, commit LSN of one pgrest_handle."""
        lib = self.lib
        arena = lib.pgrest_arena_new(0)
        try:
            req = lib.pgrest_request_new(arena, method.encode(), path.encode(), query.encode())
            if body is not None:
                data = json.dumps(body).encode()
                lib.pgrest_request_add_header(req, b"Content-Type", b"application/json")
                lib.pgrest_request_add_header(req, b"Prefer", b"return=representation")
                lib.pgrest_request_set_body(req, data, len(data))
            if min_lsn is not None:
                lib.pgrest_request_set_min_lsn(req, min_lsn)
            resp = lib.pgrest_handle(self.ctx, arena, req)
            n = ctypes.c_size_t()
            raw = lib.pgrest_response_body(resp, ctypes.byref(n))
            lsn = lib.pgrest_response_commit_lsn(resp)
            return (lib.pgrest_response_status(resp), json.loads(ctypes.string_at(raw, n.value)),
                    lsn)
        finally:
            lib.pgrest_arena_free(arena)

    def up(self):
        arena = self.lib.pgrest_arena_new(0)
        try:
            text = self.lib.pgrest_ctx_metrics(self.ctx, arena).decode()
        finally:
            self.lib.pgrest_arena_free(arena)
        return 'pgrst_replica_up{replica="0"} 1.0' in text

    def wait_up(self, want=True, timeout=15):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.up() == want:
                return
            time.sleep(0.05)
        self.fail("replica never %s" % ("up" if want else "down"))

    def test_read_your_writes_through_the_library(self):
        self.wait_up()
        status, rows, lsn = self.call("GET", "/items_where", "id=eq.1")
        self.assertEqual((status, rows[0]["on_replica"], lsn), (200, True, None))
        status, rows, _ = self.call("POST", "/rpc/on_replica_volatile", body={})
        self.assertEqual((status, rows), (200, False))
        self.pair.replica.psql("SELECT pg_wal_replay_pause()")
        try:
            status, rows, lsn = self.call("POST", "/items", body={"name": "from the library"})
            self.assertEqual(status, 201)
            self.assertIsNotNone(lsn)
            new_id = rows[0]["id"]
            status, rows, _ = self.call("GET", "/items_where", "id=eq.%d" % new_id,
                                        min_lsn=lsn)
            self.assertEqual(rows, [{"id": new_id, "name": "from the library",
                                     "on_replica": False}])
        finally:
            self.pair.replica.psql("SELECT pg_wal_replay_resume()")
        # once the replica has replayed the write (and a check saw it), the
        # same read runs there
        t0, rows = time.monotonic(), None
        while time.monotonic() - t0 < 15:
            _, rows, _ = self.call("GET", "/items_where", "id=eq.%d" % new_id,
                                   min_lsn=lsn)
            if rows and rows[0]["on_replica"]:
                break
            time.sleep(0.1)
        self.assertEqual(rows, [{"id": new_id, "name": "from the library", "on_replica": True}])
