"""A primary and a streaming replica of it (initdb, pg_basebackup -R with
a replication slot), each on a free port with its own socket directory,
run as the postgres user when we are root, with tests/cluster/schema.sql
loaded. The replica's own statistics and pg_is_in_recovery() are the
tests' evidence of where a request ran."""
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))
import harness  # noqa: E402
from harness import run  # noqa: E402


def pg_bindir():
    env = os.environ.get("PG_BINDIR")
    if env:
        return env
    for v in ("17", "16", "15"):
        d = "/usr/lib/postgresql/%s/bin" % v
        if os.path.exists(os.path.join(d, "pg_basebackup")):
            return d
    return None


def as_pg(cmd, **kw):
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", harness.PG_OS_USER, "--"] + cmd
    return run(cmd, **kw)


class Node(harness.Cluster):
    """One server of the pair, started and stopped with pg_ctl directly
    (harness.Cluster's pg.sh knows one cluster layout, not a replica's)."""

    def __init__(self, directory, port):
        super().__init__(directory, port)
        self.data = os.path.join(directory, "data")

    def psql(self, sql, db="pgrest_test", timeout=30):
        return super().psql(sql, db=db, timeout=timeout).strip()

    def pg_ctl(self, *args, timeout=60, check=True):
        return as_pg([os.path.join(pg_bindir(), "pg_ctl"), "-D", self.data,
                      "-l", os.path.join(self.dir, "postgres.log")] + list(args),
                     timeout=timeout, check=check)

    def start(self):
        self.pg_ctl("-w", "-t", "60", "start")

    def stop(self, mode="fast"):
        self.pg_ctl("-w", "-t", "60", "-m", mode, "stop", check=False)

    def conf(self, text):
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n" + text + "\n")

    def reload(self):
        self.pg_ctl("reload")


class Pair:
    def __init__(self):
        self.root = harness._workdir("pgrest-cluster-")
        bindir = pg_bindir()
        self.primary = Node(os.path.join(self.root, "primary"), harness.free_pg_port())
        for d in (self.primary.data, self.primary.sockdir):
            os.makedirs(d)
        harness._chown_tree(self.root)
        os.chmod(self.primary.data, 0o700)
        as_pg([os.path.join(bindir, "initdb"), "-D", self.primary.data, "--no-locale",
               "--encoding=UTF8", "-U", "postgres", "--auth=trust", "--no-sync"], timeout=120)
        self.primary.conf(
            "port = %d\nlisten_addresses = 'localhost'\nunix_socket_directories = '%s'\n"
            "timezone = 'UTC'\nfsync = off\nfull_page_writes = off\nmax_connections = 100\n"
            "wal_level = replica\nmax_wal_senders = 4\nmax_replication_slots = 4\n"
            "hot_standby = on\nhot_standby_feedback = on\nwal_receiver_status_interval = 1\n"
            % (self.primary.port, self.primary.sockdir))
        self.primary.start()
        env = dict(os.environ, PGHOST=self.primary.sockdir, PGPORT=str(self.primary.port),
                   PGUSER="postgres")
        run(["createdb", "pgrest_test"], env=env)
        run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", "pgrest_test", "-f",
             os.path.join(HERE, "schema.sql"), "-o", "/dev/null"], env=env)
        self.replica = Node(os.path.join(self.root, "replica"), harness.free_pg_port())
        os.makedirs(self.replica.sockdir)
        harness._chown_tree(self.root)
        as_pg([os.path.join(bindir, "pg_basebackup"), "-h", self.primary.sockdir,
               "-p", str(self.primary.port), "-U", "postgres", "-D", self.replica.data,
               "-R", "-X", "stream", "-C", "-S", "pgrest_replica", "--no-sync",
               "--checkpoint=fast"], timeout=120)
        self.replica.conf("port = %d\nunix_socket_directories = '%s'\n"
                          % (self.replica.port, self.replica.sockdir))
        self.replica.start()
        self.wait_replica()

    def wait_replica(self, timeout=30):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            try:
                if self.replica.psql("SELECT pg_is_in_recovery()") == "t":
                    return
            except RuntimeError:
                pass
            time.sleep(0.1)
        raise AssertionError("replica did not come up")

    def wait_caught_up(self, timeout=20):
        target = self.primary.psql("SELECT pg_current_wal_flush_lsn()")
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.replica.psql("SELECT pg_last_wal_replay_lsn() >= '%s'" % target) == "t":
                return
            time.sleep(0.05)
        raise AssertionError("replica did not catch up")

    def destroy(self):
        for n in (self.replica, self.primary):
            n.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
