"""pgrest behind PgBouncer in transaction pooling mode (issue 18 item 4):
the Chinook read scenarios of the shared benchmark kit ($PGREST_SHARED/bench,
skipped when absent) through the cluster's PgBouncer with
db-prepared-statements = false, a few hundred requests each, all 2xx.

Evidence that no path sends a named prepared statement (the engine, the
schema cache loader, in-db config, db-pre-request): the primary logs every
statement of the chinook database (log_min_duration_statement = 0), and
every extended-protocol parse/bind/execute in it must be <unnamed>. The
same run with db-prepared-statements = true shows named ones, so the check
can fail. The listener is on db-channel-uri (direct): a NOTIFY reload works."""
import os
import random
import re
import signal
import socket
import subprocess
import threading
import unittest

from cluster_env import endpoints, psql, request, state_dir, status_of, wait_for

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kit_dir():
    shared = os.environ.get("PGREST_SHARED") or os.path.join(REPO, "..", "shared")
    return os.path.join(shared, "bench")


# The kit's read scenarios (scenarios/*.lua request()), same targets and ranges.
SCENARIOS = {
    "GETSingle": lambda r: "/artist?select=*&artist_id=eq.%d" % r.randint(1, 275),
    "GETSingleEmbed": lambda r: "/album?select=*,track(*,genre(*))&artist_id=eq.%d"
                                % r.randint(1, 347),
    "GETAllEmbed": lambda r: "/album?select=*,track(*,genre(*))",
    "RPCSimple": lambda r: (lambda n: "/rpc/add_them?a=%d&b=%d&c=%d&d=%d&e=%d"
                            % (n, n + 1, n + 2, n + 3, n + 4))(r.randint(1, 347)),
    "RPCGETSingle": lambda r: "/rpc/ret_artists?select=*&artist_id=eq.%d" % r.randint(1, 275),
    "RPCGETSingleEmbed": lambda r: ("/rpc/ret_albums?select=album_id,title,artist_id,"
                                    "track(*,genre(*))&artist_id=eq.%d" % r.randint(1, 347)),
}
REQUESTS = {"GETAllEmbed": 100}   # the big one (every album with its tracks)
DEFAULT_REQUESTS = 300
WORKERS = 4

STATEMENT = re.compile(r"duration: [0-9.]+ ms  (parse|bind|execute) ([^:]*):")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def primary_log():
    return os.path.join(state_dir(), "primary", "postgres.log")


def log_size():
    return os.path.getsize(primary_log())


def statements_since(offset):
    """(named, unnamed) extended-protocol messages the primary logged."""
    with open(primary_log(), errors="replace") as f:
        f.seek(offset)
        text = f.read()
    named = unnamed = 0
    for _, name in STATEMENT.findall(text):
        if name.startswith("<unnamed>"):
            unnamed += 1
        else:
            named += 1
    return named, unnamed


def setUpModule():
    kit = kit_dir()
    if not os.path.isfile(os.path.join(kit, "chinook.sql")):
        raise unittest.SkipTest("no benchmark kit at %s (PGREST_SHARED)" % kit)
    if psql("SELECT count(*) FROM pg_database WHERE datname = 'chinook'", db="postgres") \
            .strip() == "0":
        psql("CREATE DATABASE chinook", db="postgres")
        r = subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p",
                            endpoints()["PRIMARY_PORT"], "-U", "postgres", "-d", "chinook",
                            "-f", os.path.join(kit, "chinook.sql")],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError("loading chinook.sql: " + r.stderr[-500:])
        psql("CREATE FUNCTION public.cluster_pre_request() RETURNS void LANGUAGE sql "
             "AS 'SELECT NULL::void'", db="chinook")
        psql("ALTER DATABASE chinook SET log_min_duration_statement = 0", db="postgres")


class PgBouncerChinookTest(unittest.TestCase):

    def start_server(self, prepared):
        e = endpoints()
        port, admin = free_port(), free_port()
        conf = os.path.join(state_dir(), "chinook-%s.conf" % ("prep" if prepared else "noprep"))
        with open(conf, "w") as f:
            f.write('db-uri = "postgresql://postgres@127.0.0.1:%s/chinook"\n'
                    'db-channel-uri = "postgresql://postgres@127.0.0.1:%s/chinook"\n'
                    'db-prepared-statements = %s\n'
                    'db-schemas = "public"\n'
                    'db-anon-role = "postgres"\n'
                    'db-pre-request = "cluster_pre_request"\n'
                    'db-pool = 10\n'
                    'server-host = "127.0.0.1"\n'
                    'server-port = %d\n'
                    'admin-server-port = %d\n'
                    'log-level = "error"\n'
                    % (e["PGBOUNCER_PORT"], e["PRIMARY_PORT"],
                       "true" if prepared else "false", port, admin))
        log = open(conf[:-5] + ".log", "ab")
        p = subprocess.Popen([e["PGREST_SERVER"], conf], stdout=subprocess.DEVNULL,
                             stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        self.addCleanup(lambda: (p.poll() is None and p.send_signal(signal.SIGTERM), p.wait(30)))
        wait_for(lambda: status_of(admin, "/ready") == 200, 30, "the chinook pgrest-server")
        return port

    def run_scenario(self, port, name, count):
        """Non-2xx answers and transport errors of count requests."""
        bad = []
        lock = threading.Lock()
        per_worker = [count // WORKERS + (i < count % WORKERS) for i in range(WORKERS)]

        def work(i, n):
            rnd = random.Random(i)
            for _ in range(n):
                try:
                    st, body = request(port, SCENARIOS[name](rnd))
                    failure = None if 200 <= st < 300 else "%d %r" % (st, body[:200])
                except OSError as ex:
                    failure = repr(ex)
                if failure:
                    with lock:
                        bad.append(failure)

        threads = [threading.Thread(target=work, args=(i, n)) for i, n in enumerate(per_worker)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        return bad

    def test_read_scenarios_prepared_statements_off(self):
        offset = log_size()
        port = self.start_server(prepared=False)
        for name in SCENARIOS:
            with self.subTest(scenario=name):
                if not os.path.isfile(os.path.join(kit_dir(), "scenarios", name + ".lua")):
                    self.skipTest("no %s in the kit" % name)
                bad = self.run_scenario(port, name, REQUESTS.get(name, DEFAULT_REQUESTS))
                self.assertEqual(bad, [])
        named, unnamed = statements_since(offset)
        self.assertEqual(named, 0, "named prepared statements went through PgBouncer")
        self.assertGreater(unnamed, 1000)

    def test_control_prepared_statements_on_are_named(self):
        """The check above can fail: with prepared statements on, the
        primary's log shows named ones (answers are not looked at: through
        a transaction pooler they fail at random)."""
        offset = log_size()
        port = self.start_server(prepared=True)
        self.run_scenario(port, "GETSingle", 40)
        named, _ = statements_since(offset)
        self.assertGreater(named, 0)

    def test_notify_reload_through_direct_channel(self):
        port = self.start_server(prepared=False)
        self.addCleanup(psql, "DROP TABLE IF EXISTS public.cluster_probe; NOTIFY pgrst",
                        db="chinook")
        psql("CREATE TABLE public.cluster_probe (id int)", db="chinook")
        self.assertEqual(status_of(port, "/cluster_probe"), 404)
        psql("NOTIFY pgrst, 'reload schema'", db="chinook")
        wait_for(lambda: status_of(port, "/cluster_probe") == 200, 10, "the reload")


if __name__ == "__main__":
    unittest.main()
