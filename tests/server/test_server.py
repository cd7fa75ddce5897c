"""Server-level tests for pgrest-server (PostgREST features §1.18-1.24):
schema/config reload, admin endpoints, connection recovery, graceful
shutdown and write durability. Each test runs its own PostgreSQL and its
own server (see harness.py)."""
import re
import signal
import socket
import threading
import time

from harness import ServerTestCase, http, log

RELOAD_TIMEOUT = 5        # NOTIFY/signal → new table served
RECOVERY_TIMEOUT = 20     # database back → service back


def create_table(cluster, name, rows=1):
    cluster.psql("CREATE TABLE api.%s (id int PRIMARY KEY);"
                 "INSERT INTO api.%s SELECT generate_series(1, %d);"
                 "GRANT SELECT ON api.%s TO web_anon;" % (name, name, rows, name))


def metric(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


class Background(threading.Thread):
    """Runs fn in a thread and keeps its result or exception."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None
        self.start()

    def run(self):
        try:
            self.result = self.fn()
        except Exception as e:  # reported by the test
            self.error = e


class ReloadTest(ServerTestCase):
    """SC04, CF04, PL06: NOTIFY pgrst / SIGUSR1 / SIGUSR2."""

    def reload_latency(self, name, trigger):
        create_table(self.cluster, name)
        self.assertEqual(self.server.get("/" + name).status, 404,
                         "a table created after start is not in the cache yet")
        t0 = time.monotonic()
        trigger()
        took = self.server.wait_for(lambda: self.server.get("/" + name).status == 200,
                                    RELOAD_TIMEOUT, step=0.005)
        self.assertIsNotNone(took, "not served %d s after the reload" % RELOAD_TIMEOUT)
        took = time.monotonic() - t0
        self.assertEqual(self.server.get("/" + name).json(), [{"id": 1}])
        return took

    def test_notify_reload_schema(self):
        took = self.reload_latency(
            "t_notify", lambda: self.cluster.psql("NOTIFY pgrst, 'reload schema'"))
        log("reload latency NOTIFY 'reload schema' -> first 200: %.0f ms (incl. psql)" % (took * 1000))

    def test_notify_empty_payload(self):
        took = self.reload_latency("t_empty", lambda: self.cluster.psql("NOTIFY pgrst"))
        log("reload latency NOTIFY '' -> first 200: %.0f ms" % (took * 1000))

    def test_sigusr1(self):
        took = self.reload_latency("t_usr1", lambda: self.server.signal(signal.SIGUSR1))
        log("reload latency SIGUSR1 -> first 200: %.0f ms" % (took * 1000))

    def test_notify_other_payload_does_nothing(self):
        create_table(self.cluster, "t_other")
        loads = metric(self.server.admin("/metrics").body,
                       'pgrst_schema_cache_loads_total{status="SUCCESS"}')
        self.cluster.psql("NOTIFY pgrst, 'reload whatever'; NOTIFY pgrst, 'hello'; "
                          "NOTIFY other_channel, 'reload schema'")
        time.sleep(1.5)
        self.assertEqual(self.server.get("/t_other").status, 404)
        self.assertEqual(metric(self.server.admin("/metrics").body,
                                'pgrst_schema_cache_loads_total{status="SUCCESS"}'), loads)
        # the listener is alive: a real reload still works afterwards
        self.cluster.psql("NOTIFY pgrst, 'reload schema'")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/t_other").status == 200, RELOAD_TIMEOUT))

    def reload_config(self, trigger, rows):
        self.assertEqual(len(self.server.get("/artists").json()), 3)
        self.server.write_config({"db-max-rows": str(rows)})
        time.sleep(0.5)
        self.assertEqual(len(self.server.get("/artists").json()), 3,
                         "the file is only re-read on a reload")
        trigger()
        self.assertIsNotNone(self.server.wait_for(
            lambda: len(self.server.get("/artists").json()) == rows, RELOAD_TIMEOUT),
            "db-max-rows not applied after the config reload")

    def test_notify_reload_config(self):
        self.reload_config(lambda: self.cluster.psql("NOTIFY pgrst, 'reload config'"), 1)

    def test_sigusr2_reload_config(self):
        self.reload_config(lambda: self.server.signal(signal.SIGUSR2), 2)
        self.assertTrue(self.server.alive())

    def test_reload_config_db_schemas(self):
        # a reloaded db-schemas takes effect (the schema cache follows)
        self.server.write_config({"db-schemas": "api, private"})
        self.server.signal(signal.SIGUSR2)
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/labels", headers={"Accept-Profile": "private"}).status == 200,
            RELOAD_TIMEOUT), "private schema not exposed after reloading db-schemas")


SECRET = "reallyreallyreallyreallyverysafe"
# {"role":"web_user"} signed HS256 with SECRET
WEB_USER_TOKEN = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ."
                  "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU")


class ConfigReloadTest(ServerTestCase):
    """PostgREST's readInDbConfig (AppState/Reload.hs): SIGUSR2 and NOTIFY
    pgrst, 'reload config' re-read the file and the in-database settings;
    an invalid value is not applied, the previous configuration stays and
    "Failed reloading config: ..." is logged (Logger.hs)."""

    SERVER_CONFIG = {"jwt-secret": SECRET}

    def log_text(self):
        with open(self.server.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def wait_log(self, text, count=1):
        took = self.server.wait_for(lambda: self.log_text().count(text) >= count,
                                    RELOAD_TIMEOUT)
        self.assertIsNotNone(took, "%r not logged:\n%s" % (text, self.server.log_tail()))

    def rows(self):
        return len(self.server.get("/artists").json())

    def jwt_status(self):
        return self.server.get("/artists?select=id&id=eq.1",
                               headers={"Authorization": "Bearer " + WEB_USER_TOKEN}).status

    def role_set(self, setting, value):
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.%s = '%s'" % (setting, value))

    def in_db_change_applied(self, trigger, rows):
        self.assertEqual(self.rows(), 3)
        self.role_set("db_max_rows", rows)
        time.sleep(0.3)
        self.assertEqual(self.rows(), 3, "in-database settings are read on a reload only")
        reloaded = self.log_text().count("Config reloaded")
        trigger()
        self.assertIsNotNone(self.server.wait_for(lambda: self.rows() == rows, RELOAD_TIMEOUT),
                             "pgrst.db_max_rows not applied:\n" + self.server.log_tail())
        self.wait_log("Config reloaded", reloaded + 1)

    def test_notify_applies_in_db_change(self):
        self.in_db_change_applied(
            lambda: self.cluster.psql("NOTIFY pgrst, 'reload config'"), 1)
        self.assertIn('Received a config reload message on the "pgrst" channel', self.log_text())

    def test_sigusr2_applies_in_db_change(self):
        self.in_db_change_applied(lambda: self.server.signal(signal.SIGUSR2), 2)

    def test_schema_reload_reads_in_db_settings(self):
        # PostgREST's schema cache loader reads the in-database config first
        self.in_db_change_applied(lambda: self.server.signal(signal.SIGUSR1), 1)

    def role_timeout_applied(self, trigger):
        # PostgREST reads the roles' settings with the configuration
        # (readInDbConfig queryRoleSettings), not with the schema cache
        self.cluster.psql("ALTER ROLE web_anon SET statement_timeout = '500ms'")
        self.server.signal(signal.SIGUSR1)
        slow = "/rpc/slow?seconds=1"
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get(slow).status == 500, RELOAD_TIMEOUT), self.server.log_tail())
        body = self.server.get(slow).json()
        self.assertEqual((body["code"], body["message"]),
                         ("57014", "canceling statement due to statement timeout"))
        self.cluster.psql("ALTER ROLE web_anon SET statement_timeout = '5s'")
        reloaded = self.log_text().count("Config reloaded")
        trigger()
        self.wait_log("Config reloaded", reloaded + 1)
        self.assertEqual(self.server.get(slow).status, 200)
        self.assertNotIn("Schema cache loaded", self.log_text().split("Config reloaded")[-1])

    def test_notify_reload_config_applies_role_settings(self):
        self.role_timeout_applied(lambda: self.cluster.psql("NOTIFY pgrst, 'reload config'"))

    def test_sigusr2_applies_role_settings(self):
        self.role_timeout_applied(lambda: self.server.signal(signal.SIGUSR2))

    def invalid_in_db_secret_kept(self, trigger):
        self.assertEqual(self.jwt_status(), 200)
        self.role_set("jwt_secret", "short")
        self.role_set("db_max_rows", "1")
        trigger()
        self.wait_log("Failed reloading config: "
                      "user error (The JWT secret must be at least 32 characters long.)")
        # nothing of the invalid configuration was applied
        self.assertEqual(self.jwt_status(), 200)
        self.assertEqual(self.rows(), 3)
        # fixed in the database: the next reload applies it
        self.cluster.psql("ALTER ROLE authenticator RESET pgrst.jwt_secret")
        trigger()
        self.assertIsNotNone(self.server.wait_for(lambda: self.rows() == 1, RELOAD_TIMEOUT))
        self.assertEqual(self.jwt_status(), 200)

    def test_notify_invalid_in_db_value_keeps_previous(self):
        self.invalid_in_db_secret_kept(
            lambda: self.cluster.psql("NOTIFY pgrst, 'reload config'"))

    def test_sigusr2_invalid_in_db_value_keeps_previous(self):
        self.invalid_in_db_secret_kept(lambda: self.server.signal(signal.SIGUSR2))

    def notify_config(self):
        self.cluster.psql("NOTIFY pgrst, 'reload config'")

    def test_notify_invalid_role_claim_key_is_reported(self):
        # PostgREST's io test: the reload fails with the Parsec error of
        # the deprecated syntax (Config.hs parseRoleClaimKey `fail $ show e`,
        # readAppConfig "Error in config ", ConfigInvalidObs), on one line
        self.role_set("jwt_role_claim_key", "test")
        self.role_set("db_max_rows", "1")
        self.notify_config()
        self.wait_log('Failed reloading config: Error in config '
                      '"\\"failed to parse role-claim-key value (test)\\" (line 1, column 1):'
                      '\\nunexpected \\"t\\"\\nexpecting \\".\\", \\"[?(\\" or \\"[\\""\n')
        self.assertEqual(self.rows(), 3)
        self.assertEqual(self.jwt_status(), 200)
        self.cluster.psql("ALTER ROLE authenticator RESET pgrst.jwt_role_claim_key")
        self.notify_config()
        self.assertIsNotNone(self.server.wait_for(lambda: self.rows() == 1, RELOAD_TIMEOUT))

    def test_notify_unreadable_number_or_boolean_is_the_default(self):
        # Config.hs coerceInt/coerceBool: text that does not read is
        # Nothing, the option's default; no error, and the file's value
        # does not come back either (the database's key wins)
        self.server.write_config({"jwt-secret": SECRET, "db-max-rows": "2",
                                  "server-timing-enabled": "true"})
        self.server.signal(signal.SIGUSR2)
        self.wait_log("Config reloaded", 2)
        self.assertEqual(self.rows(), 2)
        self.assertIn("Server-Timing", self.server.get("/artists").headers)
        self.role_set("db_max_rows", "ten")
        self.role_set("server_timing_enabled", "yes")
        self.notify_config()
        self.wait_log("Config reloaded", 3)
        self.assertEqual(self.rows(), 3)
        self.assertNotIn("Server-Timing", self.server.get("/artists").headers)
        self.assertNotIn("Failed reloading config", self.log_text())
        # what does read: " 1 " is an Int, "t-r-u-e" the letters of True
        self.role_set("db_max_rows", " 1 ")
        self.role_set("server_timing_enabled", "t-r-u-e")
        self.notify_config()
        self.wait_log("Config reloaded", 4)
        self.assertEqual(self.rows(), 1)
        self.assertIn("Server-Timing", self.server.get("/artists").headers)

    def test_notify_malformed_proxy_uri_is_refused(self):
        # Config.hs parseOpenAPIServerProxyURI fails the whole reload
        self.role_set("openapi_server_proxy_uri", "ftp://example.com")
        self.role_set("db_max_rows", "1")
        self.notify_config()
        self.wait_log("Failed reloading config: Error in config Malformed proxy uri, "
                      "a correct example: https://example.com:8443/basePath")
        self.assertEqual(self.rows(), 3)

    def test_invalid_file_value_keeps_previous(self):
        self.server.write_config({"jwt-secret": SECRET, "db-max-rows": "1",
                                  "openapi-mode": "bogus"})
        self.server.signal(signal.SIGUSR2)
        self.wait_log("Failed reloading config: Error in config Invalid openapi-mode. "
                      "Check your configuration.")
        self.assertEqual(self.rows(), 3)
        self.server.write_config({"jwt-secret": SECRET, "db-max-rows": "1"})
        self.server.signal(signal.SIGUSR2)
        self.assertIsNotNone(self.server.wait_for(lambda: self.rows() == 1, RELOAD_TIMEOUT))
        self.assertTrue(self.server.alive())

    def test_unknown_file_key_ignored(self):
        # PostgREST ignores keys it does not know, at start and on reload
        self.server.write_config({"jwt-secret": SECRET, "db-max-rows": "2",
                                  "no-such-option": "x"})
        self.server.signal(signal.SIGUSR2)
        self.assertIsNotNone(self.server.wait_for(lambda: self.rows() == 2, RELOAD_TIMEOUT))

    def test_removed_option_returns_to_default(self):
        self.server.write_config({"jwt-secret": SECRET, "db-max-rows": "1"})
        self.server.signal(signal.SIGUSR2)
        self.assertIsNotNone(self.server.wait_for(lambda: self.rows() == 1, RELOAD_TIMEOUT))
        self.server.write_config({"jwt-secret": SECRET})
        self.server.signal(signal.SIGUSR2)
        self.assertIsNotNone(self.server.wait_for(lambda: self.rows() == 3, RELOAD_TIMEOUT))

    def test_log_level_reloaded(self):
        self.assertEqual(self.server.get("/artists?select=id&id=eq.1").status, 200)
        self.wait_log('"GET /artists?select=id&id=eq.1 HTTP/1.1" 200')
        self.server.write_config({"jwt-secret": SECRET, "log-level": "crit"})
        self.server.signal(signal.SIGUSR2)
        self.wait_log("Config reloaded", 2)
        self.assertEqual(self.server.get("/artists?select=id&id=eq.2").status, 200)
        time.sleep(0.5)
        self.assertNotIn("id=eq.2", self.log_text())

    def test_db_channel_enabled_reloaded(self):
        self.server.write_config({"jwt-secret": SECRET, "db-channel-enabled": "false"})
        self.server.signal(signal.SIGUSR2)
        self.wait_log("Config reloaded", 2)
        time.sleep(0.5)   # the listener leaves the channel
        create_table(self.cluster, "t_nochan")
        self.cluster.psql("NOTIFY pgrst, 'reload schema'")
        time.sleep(1.5)
        self.assertEqual(self.server.get("/t_nochan").status, 404)
        self.server.write_config({"jwt-secret": SECRET, "db-channel": "other"})
        self.server.signal(signal.SIGUSR2)
        # the listener comes back on the new channel; a restarted listener
        # starts from nextDelay 1 and reloads nothing (Reload.hs
        # readInDbConfig, retryingListen)
        self.wait_log('listening for database notifications on the "other" channel')
        self.assertEqual(self.server.get("/t_nochan").status, 404)
        create_table(self.cluster, "t_other_chan")
        self.cluster.psql("NOTIFY other, 'reload schema'")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/t_other_chan").status == 200, RELOAD_TIMEOUT))
        self.assertEqual(self.server.get("/t_nochan").status, 200)


class LogQueryTest(ServerTestCase):
    """OB03 log-query: the SQL of logged requests (warn: 4xx and 5xx),
    never the parameter values."""

    SERVER_CONFIG = {"log-level": "warn", "log-query": "true"}

    def test_sql_of_failed_requests_only(self):
        self.assertEqual(self.server.get("/artists?select=id&name=eq.SECRET_OK").status, 200)
        self.assertEqual(self.server.get("/artists?nope=eq.SECRET_BAD").status, 400)
        time.sleep(0.3)
        with open(self.server.log_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        self.assertIn('"api"."artists"."nope" = $1', text)
        self.assertIn("GET /artists?nope=eq.SECRET_BAD", text)  # the access log line
        self.assertNotIn('"name" = $1', text)                   # the 200 is not logged at warn
        self.assertNotIn("SECRET_OK", text)
        self.assertEqual(text.count("SECRET_BAD"), 1)           # values only in the access log


class AdminTest(ServerTestCase):
    """AD02-AD06 on admin-server-port."""

    def test_live(self):
        r = self.server.admin("/live")
        self.assertEqual((r.status, r.body), (200, ""))

    def test_ready(self):
        r = self.server.admin("/ready")
        self.assertEqual((r.status, r.body), (200, ""))

    def test_metrics(self):
        self.server.get("/artists")
        r = self.server.admin("/metrics")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["Content-Type"], "text/plain; charset=utf-8")
        sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_]+="[^"]*"(,[a-zA-Z_]+="[^"]*")*\})? '
                            r'[-+]?[0-9.]+([eE][-+]?[0-9]+)?$')
        names = set()
        for line in r.body.splitlines():
            if line.startswith("# TYPE "):
                self.assertRegex(line, r"^# TYPE \S+ (counter|gauge|histogram|summary|untyped)$")
            elif line.startswith("#"):
                self.assertRegex(line, r"^# HELP \S+ .+$")
            else:
                self.assertRegex(line, sample)
                names.add(re.split(r"[{ ]", line)[0])
        for n in ("pgrst_db_pool_max", "pgrst_db_pool_available", "pgrst_db_pool_waiting",
                  "pgrst_db_pool_timeouts_total", "pgrst_schema_cache_loads_total",
                  "pgrst_schema_cache_query_time_seconds"):
            self.assertIn(n, names)
        self.assertEqual(metric(r.body, "pgrst_db_pool_max"), 4)
        self.assertGreaterEqual(metric(r.body, 'pgrst_schema_cache_loads_total{status="SUCCESS"}'), 1)
        # the values are Doubles, shown as Haskell's prometheus-client does
        self.assertIn("\npgrst_db_pool_max 4.0\n", r.body)
        # a prometheus-client vector label exists once counted: no FAIL line
        # before a failed load (Metrics.hs withLabel)
        self.assertNotIn('status="FAIL"', r.body)
        self.assertIn("\npgrst_db_pool_timeouts_total 0.0\n", r.body)
        # pgrst_db_pool_available is an Int sample (Metrics.hs dbPoolAvailable)
        self.assertRegex(r.body, r"\npgrst_db_pool_available [0-9]+\n")
        # registration order (Metrics.hs init), then pgrest's own: the
        # request and stream-abort counters
        order = [n for n in re.findall(r"^# TYPE (\S+) ", r.body, re.M)]
        self.assertEqual(order, ["pgrst_db_pool_timeouts_total", "pgrst_db_pool_available",
                                 "pgrst_db_pool_waiting", "pgrst_db_pool_max",
                                 "pgrst_schema_cache_loads_total",
                                 "pgrst_schema_cache_query_time_seconds",
                                 "pgrst_jwt_cache_requests_total", "pgrst_jwt_cache_hits_total",
                                 "pgrst_jwt_cache_evictions_total", "pgrst_requests_total",
                                 "pgrst_stream_aborts_total"])

    def test_not_found(self):
        for path in ("/", "/nope", "/ready/x", "/metricsx"):
            r = self.server.admin(path)
            self.assertEqual((r.status, r.body), (404, ""), path)

    def test_ready_follows_database(self):
        self.cluster.stop()
        took = self.server.wait_for(lambda: self.server.ready_status() == 503, 10)
        self.assertIsNotNone(took, "/ready still 200 with the database down")
        self.assertEqual(self.server.admin("/live").status, 200)
        time.sleep(1)
        self.assertEqual(self.server.ready_status(), 503)
        self.cluster.resume()
        took = self.server.wait_ready(RECOVERY_TIMEOUT)
        self.assertIsNotNone(took, "/ready not back to 200 after the database returned")
        log("/ready back to 200 %.2f s after the database accepted connections" % took)


class RecoveryTest(ServerTestCase):
    """PL04, PL06, SC04, SC07: the database goes away and comes back."""

    def assert_unavailable(self, r, codes):
        body = self.assertError(r, 503, codes)
        retry = r.headers.get("Retry-After")
        self.assertIsNotNone(retry, "503 without Retry-After")
        self.assertRegex(retry, r"^[0-9]+$")
        return body

    def test_database_down_and_back(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        self.cluster.stop()
        seen = set()
        for _ in range(20):
            t0 = time.monotonic()
            r = self.server.get("/artists", timeout=10)
            self.assertLess(time.monotonic() - t0, 5, "a request hung with the database down")
            # the pooled connection was told 57P01 by the shutdown (a
            # ServerError: kept by hasql-pool, its next session PGRST001)
            body = self.assert_unavailable(r, ("PGRST000", "PGRST001", "57P01"))
            seen.add(body["code"])
            if body["code"] == "PGRST000":
                self.assertEqual(body["message"], "Database connection error.")
            elif body["code"] == "57P01":
                self.assertEqual(body["message"],
                                 "terminating connection due to administrator command")
            else:
                self.assertEqual(body["message"], "Database client error. Retrying the connection.")
        self.assertIn("PGRST000", seen)
        self.assertEqual(self.server.ready_status(), 503)
        self.assertTrue(self.server.alive())
        t0 = time.monotonic()
        self.cluster.resume()
        up = time.monotonic()
        took = self.server.wait_for(lambda: self.server.get("/artists").status == 200,
                                    RECOVERY_TIMEOUT)
        self.assertIsNotNone(took, "service did not resume")
        ready = self.server.wait_ready(RECOVERY_TIMEOUT)
        self.assertIsNotNone(ready, "/ready not back to 200")
        log("recovery: database start took %.2f s; first 200 %.2f s and /ready 200 %.2f s "
            "after it accepted connections" % (up - t0, took, took + ready))
        # the LISTEN connection is back
        create_table(self.cluster, "t_after")
        self.cluster.psql("NOTIFY pgrst, 'reload schema'")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/t_after").status == 200, RELOAD_TIMEOUT),
            "NOTIFY after recovery did not reload")

    def test_schema_reloaded_after_recovery(self):
        create_table(self.cluster, "t_stale")          # no NOTIFY: cache is stale
        self.assertEqual(self.server.get("/t_stale").status, 404)
        self.cluster.kill()
        self.assertIsNotNone(self.server.wait_for(lambda: self.server.ready_status() == 503, 10))
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.get("/t_stale").status, 200,
                         "schema cache not reloaded after recovery")

    def test_request_in_flight_when_database_dies(self):
        slow = Background(lambda: self.server.get("/rpc/slow?seconds=20", timeout=30))
        time.sleep(1.0)
        self.cluster.kill()
        slow.join(15)
        self.assertFalse(slow.is_alive(), "request hung after the database died")
        self.assertIsNone(slow.error)
        self.assert_unavailable(slow.result, ("PGRST001", "PGRST000"))
        self.assertTrue(self.server.alive())
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/rpc/slow?seconds=0").status == 200, RECOVERY_TIMEOUT))


class RecoveryWithoutListenerTest(ServerTestCase):
    """PL04 with db-channel-enabled = false: requests detect the loss."""
    SERVER_CONFIG = {"db-channel-enabled": "false"}

    def test_recovers_without_listener(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        self.cluster.stop()
        r = self.server.get("/artists", timeout=10)
        # a fast shutdown tells idle backends why (57P01, which hasql
        # reports as the statement's error: mapSQLtoHTTP 503); a connection
        # lost silently is PGRST001, a refused reconnect PGRST000
        self.assertError(r, 503, ("57P01", "PGRST000", "PGRST001"))
        self.assertIsNotNone(self.server.wait_for(lambda: self.server.ready_status() == 503, 5))
        self.cluster.resume()
        took = self.server.wait_ready(RECOVERY_TIMEOUT)
        self.assertIsNotNone(took, "not ready again without a listener")
        self.assertEqual(self.server.get("/artists").status, 200)
        # no listener: NOTIFY does nothing, SIGUSR1 still reloads
        create_table(self.cluster, "t_nolisten")
        self.cluster.psql("NOTIFY pgrst, 'reload schema'")
        time.sleep(1)
        self.assertEqual(self.server.get("/t_nolisten").status, 404)
        self.server.signal(signal.SIGUSR1)
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/t_nolisten").status == 200, RELOAD_TIMEOUT))


class StartWithoutDatabaseTest(ServerTestCase):
    """SC07, PL04: started while PostgreSQL is down."""
    START_SERVER = False

    def test_start_while_database_down(self):
        self.cluster.stop()
        srv = self.start_server(wait=False)
        self.assertIsNotNone(srv.wait_for(lambda: srv.admin("/live").status == 200, 15),
                             "server did not come up without a database")
        self.assertEqual(srv.ready_status(), 503)
        r = srv.get("/artists")
        body = self.assertError(r, 503, ("PGRST002",))
        self.assertEqual(body, {"code": "PGRST002", "details": None, "hint": None,
                                "message": "Could not query the database for the schema cache. Retrying."})
        self.assertRegex(r.headers.get("Retry-After", ""), r"^[0-9]+$")
        # App.hs postgrestResponse: no schema cache is answered before the
        # request is parsed or planned; only authentication comes first
        for method, path, body in (("GET", "/artists?select=(", None),
                                   ("GET", "/no_such_table?id=zz.1", None),
                                   ("POST", "/rpc/nope", b"{'not json"),
                                   ("OPTIONS", "/artists", None),
                                   ("GET", "/", None)):
            r = http(method, srv.url(path), body=body)
            self.assertEqual((r.status, r.json()["code"]), (503, "PGRST002"), (method, path))
        r = srv.get("/artists?select=(", headers={"Authorization": "Bearer a.b.c"})
        self.assertNotEqual(r.json()["code"], "PGRST002")
        self.assertRegex(r.json()["code"], r"^PGRST30[0-9]$")
        time.sleep(3)             # a few retries with backoff
        self.assertTrue(srv.alive())
        self.assertEqual(srv.get("/artists").status, 503)
        self.cluster.resume()
        took = srv.wait_ready(40)  # backoff is at most 32 s (PostgREST)
        self.assertIsNotNone(took, "not ready after the database came up")
        log("started without database: ready %.2f s after it came up" % took)
        self.assertEqual(srv.get("/artists").status, 200)


class ShutdownTest(ServerTestCase):
    """HS05: SIGTERM finishes requests in flight, refuses new ones, exit 0."""

    def test_sigterm_drains_in_flight_request(self):
        slow = Background(lambda: self.server.get("/rpc/slow?seconds=2", timeout=20))
        time.sleep(0.7)
        t0 = time.monotonic()
        self.server.signal(signal.SIGTERM)
        time.sleep(0.4)
        with self.assertRaises(OSError, msg="new connection accepted during shutdown"):
            socket.create_connection(("127.0.0.1", self.server.port), timeout=3).close()
        slow.join(20)
        self.assertFalse(slow.is_alive())
        self.assertIsNone(slow.error, "request in flight was cut off")
        self.assertEqual((slow.result.status, slow.result.body), (200, "2"))
        self.assertEqual(self.server.proc.wait(timeout=20), 0)
        log("shutdown with a 2 s request in flight took %.2f s" % (time.monotonic() - t0))

    def test_sigterm_idle_exits_quickly(self):
        t0 = time.monotonic()
        self.server.signal(signal.SIGTERM)
        self.assertEqual(self.server.proc.wait(timeout=10), 0)
        self.assertLess(time.monotonic() - t0, 5)

    def test_sigint(self):
        self.server.signal(signal.SIGINT)
        self.assertEqual(self.server.proc.wait(timeout=10), 0)


class DurabilityTest(ServerTestCase):
    """A 2xx write is committed; a write cut off by a crash is not partial."""

    def setUp(self):
        super().setUp()
        self.cluster.psql(
            "CREATE TABLE api.items (id int PRIMARY KEY, batch int NOT NULL);"
            "GRANT SELECT, INSERT ON api.items TO web_anon;"
            "NOTIFY pgrst, 'reload schema'")
        # a crash must not lose acknowledged commits (harness.new_cluster)
        self.assertEqual(self.cluster.psql("SHOW synchronous_commit").strip(), "on")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/items").status == 200, RELOAD_TIMEOUT))

    def count(self, where="true"):
        return int(self.cluster.psql("SELECT count(*) FROM api.items WHERE %s" % where).strip())

    def test_acknowledged_writes_are_committed(self):
        acked, failed = [], 0
        killer = threading.Timer(1.0, self.cluster.kill)
        killer.start()
        t0 = time.monotonic()
        i = 0
        while time.monotonic() - t0 < 3:
            i += 1
            r = self.server.post("/items", {"id": i, "batch": 0}, timeout=10)
            if 200 <= r.status < 300:
                acked.append(i)
            else:
                self.assertEqual(r.status, 503, r)
                failed += 1
        killer.join()
        self.cluster.resume()
        ids = set(int(x) for x in self.cluster.psql("SELECT id FROM api.items").split())
        missing = [x for x in acked if x not in ids]
        log("%d writes acknowledged, %d failed with 503 while the database was down"
            % (len(acked), failed))
        self.assertGreater(len(acked), 0)
        self.assertGreater(failed, 0)
        self.assertEqual(missing, [], "acknowledged writes lost")

    def test_bulk_insert_is_atomic(self):
        # a trigger slows every row so the crash lands mid-statement
        self.cluster.psql(
            "CREATE FUNCTION api.items_slow() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_sleep(0.005); RETURN NEW; END $$;"
            "CREATE TRIGGER items_slow BEFORE INSERT ON api.items "
            "FOR EACH ROW EXECUTE FUNCTION api.items_slow();")
        rows = [{"id": 1000 + k, "batch": 1} for k in range(1000)]
        bulk = Background(lambda: self.server.post("/items", rows, timeout=30))
        time.sleep(1.5)
        self.cluster.kill()
        bulk.join(20)
        self.assertFalse(bulk.is_alive(), "bulk insert hung after the crash")
        self.assertIsNone(bulk.error)
        self.cluster.resume()
        n = self.count("batch = 1")
        if 200 <= bulk.result.status < 300:
            self.assertEqual(n, 1000, "2xx but not all rows committed")
        else:
            self.assertEqual(bulk.result.status, 503, bulk.result)
            self.assertEqual(n, 0, "bulk insert partially applied")
        self.assertEqual(bulk.result.status, 503, "the crash should have hit mid-insert")


class DefaultUrlLimitTest(ServerTestCase):
    """With the default limits, a URL as long as PostgREST (Warp: 50 KiB of
    request line and headers) takes: a postgrest-js .in() of a few thousand
    ids; beyond server-max-url-size, pgrest's own 414."""

    def test_long_in_list_is_answered(self):
        ids = ",".join(str(i) for i in range(1, 6001))   # ~29 KB of URL
        r = self.server.get("/artists?select=id&order=id&id=in.(%s)" % ids)
        self.assertEqual(r.status, 200, r)
        rows = r.json()
        self.assertTrue(rows and rows[0] == {"id": 1}, r)

    def test_beyond_the_default_is_414(self):
        ids = ",".join(str(i) for i in range(1, 12001))  # ~65 KB of URL
        r = self.server.get("/artists?id=in.(%s)" % ids)
        self.assertEqual(r.status, 414, r)
        self.assertEqual(r.json()["code"], "PGRST414", r)
