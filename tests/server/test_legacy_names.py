"""url-use-legacy-target-names (App.hs, Plan.hs legacyWarnings): a filter,
order or limit that names an aliased embed by its relation name still
works, answered with PostgREST's deprecation Warning header and logged as
LegacyTargetNameWarningObs (at every log level)."""
import json
import re

from harness import ServerTestCase
from test_admin_logs import LogReader

MSG = ("Embedded resource was referenced by relation name even though it has an alias. "
       "This is deprecated and will stop working in a future release.")
# warningHeaders: 299, "PostgRESTv" and the version without spaces
WARNING = re.compile(r'^299 PostgRESTv\S+ "(.*)"$')


class LegacyTargetNamesTest(ServerTestCase):
    SPLIT_LOGS = True
    SERVER_CONFIG = {"log-level": "crit"}

    def test_warning_header_and_log(self):
        path = "/artists?select=id,a:albums(id)&albums.id=eq.1&limit=1"
        r = self.server.get(path)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json(), [{"id": 1, "a": [{"id": 1}]}])
        m = WARNING.match(r.headers.get("Warning") or "")
        self.assertIsNotNone(m, r.headers.get("Warning"))
        self.assertEqual(m.group(1), MSG + " Update `albums` to `a` in query string filters, "
                                           "orders or limits.")
        logs = LogReader(self.server)
        logs.wait_message("^WARNING: " + re.escape(MSG) + "$")
        logs.wait_message("^" + re.escape("Update filters, orders or limits that use `albums` "
                                          "to `a` in `GET " + path + "`") + "$")

    def test_nested_embeds_listed_in_tree_order(self):
        r = self.server.get("/artists?select=id,a:albums(id,t:tracks(id))"
                            "&albums.tracks.order=id&albums.limit=1&limit=1")
        self.assertEqual(r.status, 200, r)
        m = WARNING.match(r.headers.get("Warning") or "")
        self.assertIsNotNone(m, r.headers.get("Warning"))
        self.assertIn("Update `albums` to `a`, `tracks` to `t` in query", m.group(1))

    def test_a_batch_item_gets_its_warning(self):
        """The item's own answer carries the header a single request
        would get; the batch's answer does not."""
        path, query = "/artists", "select=id,a:albums(id)&albums.id=eq.1&limit=1"
        r = self.server.post("/", json.dumps([
            {"method": "GET", "path": "/artists", "query": "select=id&limit=1"},
            {"method": "GET", "path": path, "query": query}]).encode(),
            headers={"Content-Type": "application/vnd.pgrest.batch+json"})
        self.assertEqual(r.status, 200, r)
        self.assertIsNone(r.headers.get("Warning"))
        first, second = r.json()
        self.assertNotIn("Warning", first["headers"])
        m = WARNING.match(second["headers"].get("Warning") or "")
        self.assertIsNotNone(m, second)
        self.assertEqual(m.group(1), MSG + " Update `albums` to `a` in query string filters, "
                                           "orders or limits.")
        LogReader(self.server).wait_message(
            "^" + re.escape("Update filters, orders or limits that use `albums` to `a` in `GET "
                            + path + "?" + query + "`") + "$")

    def test_no_warning_by_alias_or_without_alias(self):
        for path in ("/artists?select=id,a:albums(id)&a.id=eq.1",
                     "/artists?select=id,albums(id)&albums.id=eq.1"):
            r = self.server.get(path)
            self.assertEqual(r.status, 200, r)
            self.assertIsNone(r.headers.get("Warning"), path)

    def test_no_header_on_an_error(self):
        # App.hs adds the header in toWaiResponse, which errors skip
        r = self.server.get("/artists?select=id,a:albums(id)&albums.nope=eq.1")
        self.assertEqual(r.status, 400, r)
        self.assertIsNone(r.headers.get("Warning"))


class LegacyTargetNamesOffTest(ServerTestCase):
    SERVER_CONFIG = {"url-use-legacy-target-names": "false"}

    def test_relation_name_refused(self):
        r = self.server.get("/artists?select=id,a:albums(id)&albums.id=eq.1")
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["code"], "PGRST108")
        self.assertIsNone(r.headers.get("Warning"))
