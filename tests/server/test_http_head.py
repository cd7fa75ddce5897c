"""HEAD over HTTP as PostgREST answers it: Response.hs sends no
Content-Length for any HEAD answer it builds -- a relation, a function, a
416 range answer (Warp then sends no body) -- but an execution plan's
(Response.hs DbPlanResult), while the error responses of Error.hs
errorResponseFor keep their Content-Length."""
import http.client

from harness import ServerTestCase


class HeadTest(ServerTestCase):

    def head(self, path, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            c.request("HEAD", path, headers=headers or {})
            r = c.getresponse()
            r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()

    def test_relation_and_function_have_no_content_length(self):
        for path in ("/artists", "/rpc/add?a=1"):
            status, headers = self.head(path)
            self.assertEqual(status, 200, path)
            self.assertNotIn("content-length", headers, path)
            self.assertEqual(headers["content-type"], "application/json; charset=utf-8", path)

    def test_errors_keep_content_length(self):
        status, headers = self.head("/no_such_table")
        self.assertEqual(status, 404)
        self.assertIn("content-length", headers)

    def test_range_not_satisfiable_has_no_content_length(self):
        status, headers = self.head("/artists?offset=100000", {"Prefer": "count=exact"})
        self.assertEqual(status, 416)
        self.assertNotIn("content-length", headers)
        self.assertRegex(headers["content-range"], r"^\*/[0-9]+$")
        self.assertNotIn("proxy-status", headers)


class HeadPlanTest(HeadTest):
    SERVER_CONFIG = {"db-plan-enabled": "true"}

    def test_plan_keeps_content_length(self):
        status, headers = self.head("/artists", {"Accept": "application/vnd.pgrst.plan+json"})
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"],
                         'application/vnd.pgrst.plan+json; for="application/json"; charset=utf-8')
        self.assertGreater(int(headers["content-length"]), 0)
