"""application/x-ndjson request bodies through pgrest-server
(docs/bulk-import.md): one JSON object per line, taken as the JSON array
of those objects. The database is read back after each request."""
import json

from harness import ServerTestCase
from test_admin_logs import JWT_SECRET, jwt

USER = {"Authorization": "Bearer " + jwt({"role": "web_user"})}


class NdjsonBodyTest(ServerTestCase):
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET}

    def rows(self, sql):
        out = self.cluster.psql("SELECT coalesce(json_agg(q), '[]') FROM (%s) q" % sql)
        return json.loads(out)

    def test_post_inserts_every_line(self):
        body = (b'{"id": 901, "name": "Nd \\u00e9 one", "country": "FR"}\r\n'
                b'\r\n'
                b'{"country": null, "name": "Nd two", "id": 902}\n'
                b'{"id": 903, "name": "Nd three", "country": "DE"}')
        r = self.server.post("/artists?select=id,name,country", body, headers=dict(
            USER, **{"Content-Type": "application/x-ndjson; charset=utf-8",
                     "Prefer": "return=representation,count=exact"}))
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.headers["Content-Range"], "*/3")
        want = [{"id": 901, "name": "Nd \u00e9 one", "country": "FR"},
                {"id": 902, "name": "Nd two", "country": None},
                {"id": 903, "name": "Nd three", "country": "DE"}]
        self.assertEqual(r.json(), want)
        self.assertEqual(self.rows("SELECT id, name, country FROM api.artists "
                                   "WHERE id > 900 ORDER BY id"), want)

    def test_bad_line_is_named_and_nothing_written(self):
        before = self.rows("SELECT count(*) AS n FROM api.artists")
        r = self.server.post("/artists", b'{"name": "ok"}\n{"name": "bad"\n', headers=dict(
            USER, **{"Content-Type": "application/x-ndjson"}))
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json(), {"code": "PGRST102", "message": "Empty or invalid json",
                                    "details": "line 2: invalid JSON", "hint": None})
        self.assertEqual(self.rows("SELECT count(*) AS n FROM api.artists"), before)
