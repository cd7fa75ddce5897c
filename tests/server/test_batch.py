"""Transactional batches through pgrest-server (pgrest's extension,
docs/batch.md; issue 37 item 1): POST / with
application/vnd.pgrest.batch+json. Each test compares the database
afterwards with the responses. The library's own tests are
tests/integration/test_batch.c."""
import json
import random
import socket
import threading
import time

from harness import ServerTestCase, http, log
from test_admin_logs import JWT_SECRET, jwt

BATCH = "application/vnd.pgrest.batch+json"
USER = {"Authorization": "Bearer " + jwt({"role": "web_user"}), "Content-Type": BATCH}


class BatchServerTest(ServerTestCase):
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "server-max-batch-items": "3",
                     "server-max-body-size": "600"}

    def batch(self, items, headers=USER):
        return self.server.post("/", json.dumps(items).encode(), headers=headers)

    def count(self, where):
        return int(self.cluster.psql("SELECT count(*) FROM api.artists WHERE %s" % where))

    def test_writes_and_a_read_that_sees_them(self):
        r = self.batch([
            {"method": "POST", "path": "/artists", "body": {"id": 9001, "name": "A"}},
            {"method": "PATCH", "path": "/artists", "query": "id=eq.9001", "body": {"name": "B"}},
            {"method": "GET", "path": "/artists", "query": "id=eq.9001&select=id,name"}])
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"), r)
        answer = r.json()
        self.assertEqual([i["status"] for i in answer], [201, 204, 200])
        self.assertEqual(answer[2]["body"], [{"id": 9001, "name": "B"}])
        self.assertEqual(self.cluster.psql("SELECT name FROM api.artists WHERE id = 9001").strip(), "B")

    def test_failure_rolls_back_and_names_the_item(self):
        r = self.batch([
            {"method": "POST", "path": "/artists", "body": {"id": 9002, "name": "A"}},
            {"method": "POST", "path": "/artists", "body": {"id": 9002, "name": "again"}}])
        self.assertEqual(r.status, 409, r)
        body = r.json()
        self.assertEqual(body["code"], "23505")
        self.assertTrue(body["details"].startswith("batch item 1: Key (id)=(9002)"), body)
        self.assertEqual(self.count("id >= 9000"), 0)

    def test_the_cap_from_the_config_file(self):
        item = {"method": "GET", "path": "/artists", "query": "select=id&limit=1"}
        r = self.batch([item] * 4)
        self.assertEqual(r.status, 413, r)
        self.assertEqual(r.json()["code"], "PGRST102")
        self.assertEqual(self.batch([item] * 3).status, 200)

    def test_the_body_limit_is_the_whole_batch(self):
        """Each item is small; together they pass server-max-body-size."""
        items = [{"method": "POST", "path": "/artists",
                  "body": {"id": 9003 + i, "name": "x" * 150}} for i in range(3)]
        r = self.batch(items)
        self.assertEqual(r.status, 413, r)
        self.assertEqual(self.count("id >= 9000"), 0)

    def test_openapi_lists_the_batch(self):
        doc = self.server.get("/").json()
        post = doc["paths"]["/"]["post"]
        self.assertEqual(post["consumes"], [BATCH])
        self.assertIn("get", doc["paths"]["/"])

    def test_other_content_types_keep_postgrest_answer(self):
        plain = self.server.post("/", b"[]", headers={"Content-Type": "application/json"})
        self.assertNotEqual(plain.status, 200)


class TurnCountingProxy:
    """A TCP proxy in front of PostgreSQL that counts, per connection,
    the client's turns: each time the client sends after PostgreSQL has
    answered since its last send. A pipeline is one turn, however many
    statements it carries."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.turns = 0
        self.answered = {}
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            with self.lock:
                self.answered[client] = True
            threading.Thread(target=self.pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self.pump, args=(server, client, False), daemon=True).start()

    def pump(self, src, dst, from_client):
        key = src if from_client else dst
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                for sock in (src, dst):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            with self.lock:
                if from_client and self.answered.get(key):
                    self.turns += 1
                self.answered[key] = not from_client
            dst.sendall(data)

    def close(self):
        self.listener.close()


class BatchPipelineTest(ServerTestCase):
    """All of a batch's items go to PostgreSQL in one pipeline; its end
    follows once every item's answer is known, so that an item whose
    post-check fails still rolls back the items after it."""

    START_SERVER = False
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "db-pool": "1", "db-channel-enabled": "false",
                     "server-max-batch-items": "20"}

    def setUp(self):
        super().setUp()
        self.proxy = TurnCountingProxy(self.cluster.port)
        self.addCleanup(self.proxy.close)
        uri = "postgresql://authenticator@127.0.0.1:%d/pgrest_test" % self.proxy.port
        self.start_server(**{"db-uri": uri})

    batch = BatchServerTest.batch
    count = BatchServerTest.count

    def turns_of(self, send):
        send()   # the connection is open and its statements prepared
        with self.proxy.lock:
            before = self.proxy.turns
        r = send()
        with self.proxy.lock:
            return r, self.proxy.turns - before

    def test_ten_items_take_one_pipeline_and_the_commit(self):
        items = [{"method": "POST", "path": "/artists", "body": {"id": 9100 + i, "name": "p"}}
                 for i in range(5)]
        items += [{"method": "GET", "path": "/artists", "query": "id=gte.9100&select=id"}] * 4
        items += [{"method": "DELETE", "path": "/artists", "query": "id=gte.9100"}]
        r, turns = self.turns_of(lambda: self.batch(items))
        self.assertEqual(r.status, 200, r)
        self.assertEqual([len(i["body"]) for i in r.json()[5:9]], [5] * 4)
        # the items in one pipeline, then the COMMIT: 2 turns, more only
        # when the pipeline's bytes leave in several writes and an answer
        # slips in between (the client still waits for none of them);
        # one round trip per item would be 10 or more
        self.assertLessEqual(turns, 4)
        self.assertGreaterEqual(turns, 2)
        # what the same requests alone take: one round trip each
        singles = [lambda i=i: http(i["method"], self.server.url(i["path"] + "?" + i.get("query", "")),
                                    body=i.get("body"), headers=dict(USER, **{"Content-Type": "application/json"}))
                   for i in items]
        _, alone = self.turns_of(lambda: [send() for send in singles])
        self.assertGreaterEqual(alone, len(items))

    def test_a_post_check_failure_rolls_back_the_items_after_it(self):
        self.assertEqual(self.batch([{"method": "POST", "path": "/artists",
                                      "body": [{"id": 9200, "name": "x"},
                                               {"id": 9201, "name": "x"}]}]).status, 200)
        items = [
            {"method": "POST", "path": "/artists", "body": {"id": 9202, "name": "before"}},
            {"method": "PATCH", "path": "/artists", "query": "name=eq.x",
             "headers": {"Prefer": "handling=strict, max-affected=1"}, "body": {"name": "y"}},
            {"method": "POST", "path": "/artists", "body": {"id": 9203, "name": "after"}}]
        # the items after the failing one ran (same pipeline) and succeeded;
        # with a later item failing too, the first failure is the answer
        for tail in ([], [{"method": "POST", "path": "/artists",
                           "body": {"id": 9202, "name": "dup"}}]):
            r = self.batch(items + tail)
            self.assertEqual(r.status, 400, r)
            body = r.json()
            self.assertEqual(body["code"], "PGRST124", body)
            self.assertTrue(body["details"].startswith("batch item 1"), body)
            self.assertEqual(self.count("id >= 9202"), 0)
            self.assertEqual(self.count("id >= 9200 AND name = 'x'"), 2)


SLOTS = 20
SLOTS_SQL = """
CREATE TABLE api.slots (id int PRIMARY KEY, v text NOT NULL CHECK (v <> 'bad'));
INSERT INTO api.slots SELECT g, 'init' FROM generate_series(1, %d) g;
CREATE TABLE api.slot_log (n bigserial PRIMARY KEY, slot int NOT NULL, v text NOT NULL);
CREATE FUNCTION api.log_slot() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN INSERT INTO api.slot_log (slot, v) VALUES (NEW.id, NEW.v); RETURN NEW; END $$;
CREATE TRIGGER slot_log AFTER UPDATE ON api.slots FOR EACH ROW EXECUTE FUNCTION api.log_slot();
CREATE TABLE api.slot_notes (tag text PRIMARY KEY);
GRANT SELECT, UPDATE ON api.slots TO web_user;
GRANT SELECT, INSERT ON api.slot_notes TO web_user;
""" % SLOTS


class ConcurrentBatchTest(ServerTestCase):
    """Eight clients for 20 s, half their requests batches (a note, a bulk
    PATCH of some slots, a read) and half bulk PATCHes alone, on the same
    20 rows; every 10th fails on purpose (a batch's duplicate note, a
    PATCH's 'bad' value). Afterwards the database holds exactly what the
    2xx responses describe: the notes of the 2xx batches, an audit row for
    each (slot, value) a 2xx response wrote and no other, and each slot
    holding the value its last audited write gave it."""

    START_SERVER = False
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET, "db-pool": "8"}
    THREADS = 8
    SECONDS = 20

    def setUp(self):
        super().setUp()
        self.cluster.psql(SLOTS_SQL)
        self.start_server()

    def request(self, n, i, rng):
        tag = "c%d-%d" % (n, i)
        bad = i % 10 == 0
        ids = sorted(rng.sample(range(1, SLOTS + 1), rng.randint(2, 5)))
        rows = [{"id": s, "v": tag} for s in ids]
        if i % 2 == 0:
            # on purpose: another slot given a value its CHECK refuses
            other = next(s for s in range(1, SLOTS + 1) if s not in ids)
            body = rows + ([{"id": other, "v": "bad"}] if bad else [])
            r = http("PATCH", self.server.url("/slots?select=id,v"), body=body,
                     headers=dict(USER, **{"Content-Type": "application/json",
                                            "Prefer": "return=representation"}))
            wrote = [(row["id"], row["v"]) for row in r.json()] if r.status == 200 else []
            return bad, r, wrote, None
        items = [{"method": "POST", "path": "/slot_notes", "body": {"tag": tag}},
                 {"method": "PATCH", "path": "/slots", "query": "select=id,v",
                  "headers": {"Prefer": "return=representation"}, "body": rows},
                 {"method": "GET", "path": "/slots",
                  "query": "select=id,v&id=in.(%s)" % ",".join(map(str, ids))}]
        if bad:
            items.append({"method": "POST", "path": "/slot_notes", "body": {"tag": tag}})
        r = self.batch(items)
        if r.status != 200:
            return bad, r, [], None
        answer = r.json()
        by_id = lambda rows: sorted(rows, key=lambda row: row["id"])
        self.assertEqual(by_id(answer[1]["body"]), by_id(answer[2]["body"]), r)  # read sees write
        return bad, r, [(row["id"], row["v"]) for row in answer[1]["body"]], tag

    batch = BatchServerTest.batch

    def test_the_database_holds_exactly_what_the_2xx_responses_describe(self):
        results, errors = [], []
        lock = threading.Lock()
        deadline = time.monotonic() + self.SECONDS

        def client(n):
            rng = random.Random(n)
            i = 0
            while time.monotonic() < deadline:
                i += 1
                try:
                    out = self.request(n, i, rng)
                except Exception as e:   # reported below
                    with lock:
                        errors.append(repr(e))
                    continue
                with lock:
                    results.append(out)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(self.THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        ok = [res for res in results if res[1].status < 300]
        failed = [res for res in results if res[1].status >= 300]
        self.assertTrue(all(not bad for bad, *_ in ok))
        # besides those failing on purpose, only PostgreSQL's deadlock
        # victims may fail (rows locked in different orders)
        unexpected = [r for bad, r, *_ in failed if not bad and r.json().get("code") != "40P01"]
        self.assertEqual(unexpected, [])
        self.assertGreater(len(ok), 0)
        self.assertGreater(sum(1 for bad, *_ in failed if bad), 0)
        said_notes = sorted(tag for *_, tag in ok if tag is not None)
        in_db_notes = sorted(self.cluster.psql(
            "SELECT tag FROM api.slot_notes ORDER BY tag").split())
        self.assertEqual(in_db_notes, said_notes)
        said_writes = sorted(w for _, _, wrote, _ in ok for w in wrote)
        log_rows = [line.split("|") for line in self.cluster.psql(
            "SELECT slot || '|' || v FROM api.slot_log").split()]
        self.assertEqual(sorted((int(s), v) for s, v in log_rows), said_writes)
        mismatched = self.cluster.psql(
            "SELECT count(*) FROM api.slots s WHERE s.v IS DISTINCT FROM coalesce("
            "(SELECT l.v FROM api.slot_log l WHERE l.slot = s.id ORDER BY l.n DESC LIMIT 1),"
            " 'init')")
        self.assertEqual(int(mismatched), 0)
        log("%d batches and bulk PATCHes acknowledged (%d row writes), %d failed "
            "(%d on purpose)" % (len(ok), len(said_writes), len(failed),
                                 sum(1 for bad, *_ in failed if bad)))
