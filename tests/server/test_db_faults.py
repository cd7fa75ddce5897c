"""More database faults under a running server (test_faults.py has the
lost connections, shutdowns, pool exhaustion, read-only database and
renamed database): conflicts between concurrent writes, timeouts and
limits set on roles, a login taken away, a schema cache reload that
fails, a transaction whose COMMIT never completes, restarts under load.
Each is answered as PostgREST answers it (Error.hs pgErrorStatus and
mapSQLtoHTTP, AppState/Pool.hs usePool, AppState/Reload.hs), nothing
hangs, no write is reported done that was not committed, and the server
recovers without a restart."""
import collections
import os
import signal
import subprocess
import threading
import time

from test_admin_logs import JWT_SECRET, LogReader, jwt, wait_until
from test_faults import NO_CONNECTION, RECOVERY_TIMEOUT, Background, FaultTestCase, loads_ok, \
    metric, terminate


def user_headers():
    return {"Authorization": "Bearer " + jwt({"role": "web_user"})}


def loads_failed(server):
    """pgrst_schema_cache_loads_total{status="FAIL"}: a label of the vector
    appears with its first count."""
    try:
        return metric(server, 'pgrst_schema_cache_loads_total{status="FAIL"}')
    except AssertionError:
        return 0.0


def reload_schema(test):
    before = loads_ok(test.server)
    test.cluster.psql("NOTIFY pgrst, 'reload schema'")
    test.assertIsNotNone(test.server.wait_for(lambda: loads_ok(test.server) > before, 10))


def open_fds(server):
    return len(os.listdir("/proc/%d/fd" % server.proc.pid))


def thread_count(server):
    return len(os.listdir("/proc/%d/task" % server.proc.pid))


def authenticator_backends(cluster):
    return int(cluster.psql("SELECT count(*) FROM pg_stat_activity "
                            "WHERE usename = 'authenticator'").strip())


class WriteConflictTest(FaultTestCase):
    """Concurrent writes that PostgreSQL rolls back: mapSQLtoHTTP '4':'0'
    -> 500 with PostgreSQL's message, details and hint; the loser's
    writes are gone, the winner's are kept."""
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET}

    def race(self, path, bodies):
        reqs = [Background(lambda b=b: self.server.post(path, b, headers=user_headers(),
                                                         timeout=20)) for b in bodies]
        return sorted((self.finished(r) for r in reqs), key=lambda r: r.status)

    def test_deadlock(self):
        # each marks its row, then waits for the other's row: one of the
        # two is chosen as the deadlock's victim
        self.cluster.psql(
            "INSERT INTO api.ledger VALUES (1, 0, 'a'), (2, 0, 'b');"
            "CREATE FUNCTION api.cross_update(mine int, other int) RETURNS int "
            "LANGUAGE sql AS $$ INSERT INTO api.ledger VALUES (100 + mine, mine, 'mark');"
            " UPDATE api.ledger SET note = 'mine' WHERE id = mine; SELECT pg_sleep(1);"
            " UPDATE api.ledger SET note = 'theirs' WHERE id = other; SELECT mine $$;"
            "GRANT EXECUTE ON FUNCTION api.cross_update(int, int) TO web_user")
        reload_schema(self)
        won, lost = self.race("/rpc/cross_update", [{"mine": 1, "other": 2},
                                                    {"mine": 2, "other": 1}])
        self.assertEqual(won.status, 200, won)
        self.assertEqual(lost.status, 500, lost)
        body = lost.json()
        self.assertEqual((body["code"], body["message"], body["hint"]),
                         ("40P01", "deadlock detected", "See server log for query details."))
        self.assertRegex(body["details"], r"^Process \d+ waits for ShareLock on transaction")
        self.assertIsNone(lost.headers.get("Retry-After"))
        self.assertEqual(self.cluster.psql("SELECT string_agg(id::text, ',') FROM api.ledger "
                                           "WHERE id > 100").strip(), str(100 + int(won.body)))

    def test_serialization_failure(self):
        # the role's default_transaction_isolation (PostgREST's role
        # isolation level, read with the role settings) makes both
        # transactions serializable: read-then-insert twice is a conflict
        self.cluster.psql(
            "ALTER ROLE web_user SET default_transaction_isolation = 'serializable';"
            "CREATE FUNCTION api.count_then_insert(n int) RETURNS int LANGUAGE sql AS $$"
            " SELECT count(*) FROM api.ledger; SELECT pg_sleep(1);"
            " INSERT INTO api.ledger VALUES (n, n, 'x'); SELECT n $$;"
            "GRANT EXECUTE ON FUNCTION api.count_then_insert(int) TO web_user")
        reload_schema(self)
        won, lost = self.race("/rpc/count_then_insert", [{"n": 1}, {"n": 2}])
        self.assertEqual(won.status, 200, won)
        self.assertEqual(lost.status, 500, lost)
        body = lost.json()
        self.assertEqual(body["code"], "40001", body)
        self.assertEqual(body["message"], "could not serialize access due to read/write "
                                          "dependencies among transactions")
        self.assertEqual(body["hint"], "The transaction might succeed if retried.")
        self.assertEqual(self.cluster.psql("SELECT string_agg(id::text, ',') FROM api.ledger"
                                           ).strip(), won.body)


class RoleLimitsTest(FaultTestCase):
    """Limits on the roles: a lock_timeout on the request's role (55P03,
    '5':'5' -> 500); an idle_session_timeout on the authenticator, which
    ends an idle pooled connection with FATAL 57P05 ('5':'7' -> 500, not
    57P01's 503), then the connection's client error (PGRST001)."""
    SERVER_CONFIG = {"db-pool": "1", "jwt-secret": JWT_SECRET}

    def test_lock_timeout(self):
        self.cluster.psql("ALTER ROLE web_user SET lock_timeout = '200ms'")
        reload_schema(self)         # role settings are read with the cache
        env = dict(os.environ, PGHOST=self.cluster.sockdir, PGPORT=str(self.cluster.port),
                   PGUSER="postgres")
        holder = subprocess.Popen(["psql", "-X", "-d", "pgrest_test", "-c",
                                   "BEGIN; LOCK TABLE api.ledger; SELECT pg_sleep(4); COMMIT;"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.assertIsNotNone(self.server.wait_for(lambda: self.cluster.psql(
                "SELECT count(*) FROM pg_locks WHERE granted AND mode = 'AccessExclusiveLock' "
                "AND relation = 'api.ledger'::regclass").strip() == "1", 5))
            r = self.server.post("/ledger", {"id": 1, "request": 1, "note": "x"},
                                 headers=user_headers())
            self.assertEqual(r.status, 500, r)
            self.assertEqual(r.json(), {"code": "55P03", "details": None, "hint": None,
                                        "message": "canceling statement due to lock timeout"})
        finally:
            holder.kill()
            holder.wait(10)
        self.assertEqual(self.cluster.psql("SELECT count(*) FROM api.ledger").strip(), "0")
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)

    def test_idle_session_timeout(self):
        # the listener's connection idles too: without it, only the pool's
        self.server.stop()
        self.start_server(**{"db-channel-enabled": "false"})
        self.cluster.psql("ALTER ROLE authenticator SET idle_session_timeout = '300ms'")
        terminate(self.cluster, "true")
        r = self.server.get("/artists?id=eq.1")
        self.assertEqual(r.json()["code"], "57P01", r)
        self.assertEqual(self.server.get("/artists?id=eq.1").json(), NO_CONNECTION)
        # a connection opened with the timeout serves, then idles out
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertIsNotNone(self.server.wait_for(
            lambda: authenticator_backends(self.cluster) == 0, 5))
        r = self.server.get("/artists?id=eq.1")
        self.assertEqual(r.status, 500, r)
        self.assertEqual(r.json(), {"code": "57P05", "details": None, "hint": None,
                                    "message": "terminating connection due to idle-session timeout"})
        self.assertIsNone(r.headers.get("Retry-After"))
        r = self.server.get("/artists?id=eq.1")
        self.assertEqual((r.status, r.json()), (503, NO_CONNECTION))
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        LogReader(self.server).wait_message(
            r'^\{"code":"57P05","details":null,"hint":null,'
            r'"message":"terminating connection due to idle-session timeout"\}$')


class LoginRevokedTest(FaultTestCase):
    """The authenticator losing LOGIN: new connections are refused with
    FATAL 28000, a ConnectionUsageError (503 PGRST000) that usePool does
    not deem fatal (only a password failure is); the listener retries,
    /ready is 503; LOGIN given back, the server serves again."""

    def test_nologin_then_login(self):
        self.cluster.psql("ALTER ROLE authenticator NOLOGIN")
        terminate(self.cluster, "true")
        r = self.past_lost_connections("/artists?id=eq.1")
        body = self.assertError(r, 503, ("PGRST000",))
        self.assertEqual(body["message"], "Database connection error.")
        self.assertRegex(body["details"],
                         r'failed: FATAL:  role "authenticator" is not permitted to log in$')
        self.assertEqual(r.headers.get("Retry-After"), "0")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.ready_status() == 503, 5))
        self.assertEqual(self.server.admin("/live").status, 200)
        LogReader(self.server).wait_message(
            r'^Failed listening for database notifications on the "pgrst" channel\. '
            r'connection to server at .*role "authenticator" is not permitted to log in$')
        self.assertTrue(self.server.alive())
        self.assertFalse([m for m in LogReader(self.server).messages()
                          if m.startswith("Failed to establish a connection.")])
        self.cluster.psql("ALTER ROLE authenticator LOGIN")
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assert_pool_whole()


class SchemaReloadFailureTest(FaultTestCase):
    """A schema cache reload that fails while the database serves
    (Reload.hs qSchemaCache Left: markSchemaCachePending, SchemaCacheErrorObs,
    retried with backoff): the schema cache in force stays and serves,
    /ready is 503 meanwhile (isPending), and the retry that succeeds
    replaces it."""
    # the loader's own test hook: a pg_sleep after the catalog queries,
    # which the authenticator's statement_timeout below cuts short
    # The load runs on the pool (Reload.hs usePool): the role's
    # statement_timeout reaches only connections opened after it is set,
    # so the reaper closes idle ones quickly (db-pool-max-idletime).
    SERVER_CONFIG = {"internal-schema-cache-query-sleep": "1500", "db-pool": "1",
                     "db-pool-max-idletime": "1"}

    def test_old_cache_kept_until_a_retry_succeeds(self):
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        failed_before = loads_failed(self.server)
        ok_before = loads_ok(self.server)
        logs = LogReader(self.server)
        self.cluster.psql("ALTER ROLE authenticator SET statement_timeout = '300ms';"
                          "CREATE TABLE api.added_meanwhile (id int);"
                          "GRANT SELECT ON api.added_meanwhile TO web_anon")
        # the request's connection, from before the setting, closed
        self.assertTrue(wait_until(lambda: int(self.cluster.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'authenticator' "
            "AND query NOT LIKE 'LISTEN%'").strip()) == 0, 20))
        self.server.signal(signal.SIGUSR1)
        logs.wait_message(r'^Failed to load the schema cache using db-schemas=api and '
                          r'db-extra-search-path=public\. \{"code":"57014"')
        self.assertEqual(self.server.ready_status(), 503)
        self.assertEqual(self.server.admin("/live").status, 200)
        # the previous cache: artists served, the new table unknown
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertEqual(self.server.get("/added_meanwhile").json()["code"], "PGRST205")
        logs.wait_message(r"^Attempting to reconnect to the database in 1 seconds\.\.\.$")
        self.cluster.psql("ALTER ROLE authenticator RESET statement_timeout")
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(loads_ok(self.server), ok_before + 1)
        self.assertGreater(loads_failed(self.server), failed_before)
        self.assertEqual(self.server.get("/added_meanwhile").status, 200)


class CommitLostTest(FaultTestCase):
    """The connection lost while COMMIT runs (a deferred trigger ends the
    backend, or the database crashes during it): the client is told of an
    error, never 2xx, and the row is not there."""
    SERVER_CONFIG = {"db-pool": "1"}

    def setUp(self):
        super().setUp()
        self.cluster.psql(
            "CREATE FUNCTION api.at_commit() RETURNS trigger LANGUAGE plpgsql "
            "SECURITY DEFINER SET search_path = pg_catalog AS $$ BEGIN"
            " IF NEW.note = 'end' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;"
            " IF NEW.note = 'wait' THEN PERFORM pg_sleep(5); END IF;"
            " RETURN NULL; END $$;"
            "CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON api.ledger "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION api.at_commit();"
            "GRANT INSERT ON api.ledger TO web_anon")

    def rows(self):
        return self.cluster.psql("SELECT count(*) FROM api.ledger").strip()

    def test_backend_ends_during_commit(self):
        for prefer in ("return=minimal", "return=representation"):
            r = self.past_lost_connections_post(prefer)
            self.assertEqual(r.status, 503, r)
            self.assertEqual(r.json(), {"code": "57P01", "details": None, "hint": None,
                                        "message": "terminating connection due to "
                                                   "administrator command"})
            self.assertEqual(self.rows(), "0")
        self.assertEqual(self.server.get("/ledger").json(), NO_CONNECTION)
        r = self.server.post("/ledger", {"id": 2, "request": 1, "note": "kept"})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(self.rows(), "1")

    def past_lost_connections_post(self, prefer):
        # the previous request's connection, lost, answers PGRST001 first
        for _ in range(2):
            r = self.server.post("/ledger", {"id": 1, "request": 1, "note": "end"},
                                 headers={"Prefer": prefer})
            if r.json() != NO_CONNECTION:
                return r
        self.fail("the lost connection was kept")

    def test_database_crashes_during_commit(self):
        req = Background(lambda: self.server.post("/ledger", {"id": 1, "request": 1,
                                                              "note": "wait"}, timeout=20))
        self.assertIsNotNone(self.server.wait_for(lambda: self.cluster.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
            ).strip() == "1", 10))
        self.cluster.kill()
        r = self.finished(req)
        body = self.assertError(r, 503, ("PGRST001",))
        self.assertTrue(body["details"].startswith("server closed the connection unexpectedly"),
                        body)
        self.cluster.resume()
        self.assertEqual(self.rows(), "0")
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.post("/ledger", {"id": 2, "request": 1, "note": "x"}
                                          ).status, 201)


class RestartUnderLoadTest(FaultTestCase):
    """PostgreSQL crashed, then restarted cleanly, while clients keep
    sending: every answer comes in time and is a success or one of the
    outage's errors; afterwards the schema cache is reloaded (the listener
    came back after a retry), the pool is whole and no connection leaked."""
    SERVER_CONFIG = {"db-pool": "2"}
    OUTAGE_CODES = {"PGRST000", "PGRST001", "57P01"}

    def hammer(self, path, stop, results):
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = self.server.get(path, timeout=15)
                code = r.json().get("code") if r.status != 200 else None
                results.append((r.status, code, time.monotonic() - t0))
            except Exception as e:     # a hang or a dropped connection
                results.append(("exception", repr(e), time.monotonic() - t0))

    def test_crash_and_restart_under_load(self):
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        fds, tasks = open_fds(self.server), thread_count(self.server)
        stop, results = threading.Event(), []
        threads = [threading.Thread(target=self.hammer, args=(p, stop, results), daemon=True)
                   for p in ("/artists?id=eq.1", "/rpc/slow?seconds=0.2", "/albums",
                             "/rpc/slow?seconds=0.05")]
        for t in threads:
            t.start()
        try:
            time.sleep(0.5)
            # a table the running schema cache does not know, no NOTIFY
            self.cluster.psql("CREATE TABLE api.made_before_restart (id int);"
                              "GRANT SELECT ON api.made_before_restart TO web_anon")
            self.cluster.kill()
            time.sleep(1)
            self.cluster.resume()
            self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
            self.cluster.stop()
            time.sleep(0.5)
            self.cluster.resume()
            self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        finally:
            stop.set()
            for t in threads:
                t.join(20)
        self.assertFalse([t for t in threads if t.is_alive()], "a request hung")
        kinds = collections.Counter((s, c) for s, c, _ in results)
        unexpected = {k: n for k, n in kinds.items()
                      if k[0] != 200 and not (k[0] == 503 and k[1] in self.OUTAGE_CODES)}
        self.assertEqual(unexpected, {}, kinds)
        self.assertLess(max(d for _, _, d in results), 10, kinds)
        self.assertIn((200, None), kinds)
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/made_before_restart").status == 200, 10))
        self.assert_pool_whole()
        # the pool's connections and the listener's, nothing more; no
        # socket or thread left from the failed attempts (the cancel
        # threads are short-lived)
        pool_max = int(metric(self.server, "pgrst_db_pool_max"))
        self.assertLessEqual(authenticator_backends(self.cluster), pool_max + 1)
        self.assertLessEqual(open_fds(self.server), fds + pool_max)
        self.assertIsNotNone(self.server.wait_for(lambda: thread_count(self.server) <= tasks, 5),
                             (tasks, thread_count(self.server)))



class PoolWaitersTest(FaultTestCase):
    """Requests queued for a pooled connection when the database dies get
    the outage's error (no connection to wait for, none to open), none
    waits on; the pool is whole after the restart."""
    SERVER_CONFIG = {"db-pool": "2"}

    def test_waiters_for_the_pool_when_the_database_dies(self):
        # db-pool 2: four requests, two of them queued for a connection
        reqs = [Background(lambda: self.server.get("/rpc/slow?seconds=3", timeout=20))
                for _ in range(4)]
        self.assertIsNotNone(self.server.wait_for(
            lambda: metric(self.server, "pgrst_db_pool_waiting") == 4.0, 10))
        self.cluster.kill()
        for req in reqs:
            r = self.finished(req)
            self.assertError(r, 503, ("PGRST000", "PGRST001"))
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assert_pool_whole()


class ConfigQueryErrorLogTest(FaultTestCase):
    """readInDbConfig runs its queries through usePool, which logs a
    failure whose status would be 5xx (QueryErrorCodeHighObs: the error's
    JSON) before readInDbConfig's own ConfigReadErrorObs; a 4xx one only
    has the latter. The db-pre-config function runs in that query."""
    SERVER_CONFIG = {"db-pre-config": "public.failing_pre_config"}
    START_SERVER = False

    def test_pre_config_failures(self):
        self.cluster.psql(
            "CREATE FUNCTION public.failing_pre_config() RETURNS void LANGUAGE plpgsql AS $$"
            " BEGIN RAISE EXCEPTION 'pre-config broke' USING ERRCODE = 'XX000'; END $$")
        self.start_server()
        logs = LogReader(self.server)
        high = '{"code":"XX000","details":null,"hint":null,"message":"pre-config broke"}'
        logs.wait_message(r"^Failed to query database settings for the config parameters\.")
        msgs = logs.messages()
        at = msgs.index("Failed to query database settings for the config parameters." + high)
        self.assertEqual(msgs[at - 1], high, msgs)
        # P0001, a raise's default: 400, no QueryErrorCodeHighObs
        self.cluster.psql(
            "CREATE OR REPLACE FUNCTION public.failing_pre_config() RETURNS void LANGUAGE plpgsql"
            " AS $$ BEGIN RAISE EXCEPTION 'pre-config refused'; END $$;"
            "NOTIFY pgrst, 'reload config'")
        low = '{"code":"P0001","details":null,"hint":null,"message":"pre-config refused"}'
        logs.wait_message(r"^Failed to query database settings for the config parameters\."
                          r'\{"code":"P0001"')
        self.assertNotIn(low, logs.messages())
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
