"""Transactional batches through pgrest-server (pgrest's extension,
docs/batch.md; issue 37 item 1): POST / with
application/vnd.pgrest.batch+json. Each test compares the database
afterwards with the responses. The library's own tests are
tests/integration/test_batch.c."""
import json

from harness import ServerTestCase
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
