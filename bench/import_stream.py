#!/usr/bin/env python3
"""Streamed bulk imports end to end (issue 40): the same rows as one CSV,
as NDJSON and as one JSON array, each POSTed to pgrest-server, next to the
buffered path (the same server with server-streamed-body-threshold = 0 and
server-max-body-size raised above the body) and to `psql \\copy` of the CSV
into the same table; then 8 concurrent imports of 1/8 of the rows each.

Not a test (no assertions): it prints tables for bench/README.md, "Bulk
import end to end: streamed bodies through pgrest-server (issue 40)".

  bench/import_stream.py [--rows 1000000] [--rounds 3] [--concurrent 8]
                         [--formats csv,ndjson,json] [--modes streamed,buffered]
                         [--db URI] [--build DIR] [--data-dir DIR] [--no-verify]
                         [--bad-line N] [--repeated-key N] [--representation SELECT]

--bad-line N then POSTs a copy of the CSV (a timestamp in month 13) and of
the NDJSON (a line that is not JSON) broken at body line N, and prints the
answer and the rows left in the table. --repeated-key N does the same with
body line N repeating the first row's key (PostgreSQL's 23505 from the
INSERT, after the COPY). --representation SELECT posts with
Prefer: return=representation and ?select=SELECT.

Without --db a throwaway PostgreSQL comes from tests/harness/pg.sh (port
from PGREST_TEST_PG_PORTS, default 6750-6799) and is removed at the end;
with --db the URI must be able to create a schema and roles (a superuser),
and the server connects with it too. Data files are written once per --rows
into --data-dir (default /tmp/pgrest-import-bench-N, kept for the next run).

Per run (a format and a path, or \\copy): the table truncated and a
CHECKPOINT taken, a fresh pgrest-server (so its peak RSS is this import's),
`curl -sS -T FILE -X POST` (curl -T streams from the file; --data-binary
would load it into curl's memory), then: wall seconds, HTTP status, the
server's peak RSS (VmHWM) and CPU seconds (utime+stime) read from /proc
before it is stopped, the database's CPU seconds (all of the postmaster's
processes, own cluster only), the client's CPU and peak RSS (curl or psql),
and a check of the table against the \\copy reference: row count and an md5
over the rows in key order, with doc compared as `(doc #>> '{}')::jsonb`
(PostgREST's CSV makes every value a string, so a CSV POST stores doc as a
JSON *string* holding the text; \\copy, NDJSON and JSON store the object).
The paths alternate within each round; the tables show medians.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "server"))
os.environ.setdefault("PGREST_TEST_PG_PORTS", "6750-6799")
import harness  # noqa: E402  (tests/server/harness.py: pg.sh, Server)

COLS = "id,name,amount,at,doc"
CTYPE = {"csv": "text/csv", "ndjson": "application/x-ndjson", "json": "application/json"}
SETUP_SQL = """
DROP SCHEMA IF EXISTS imp CASCADE;
CREATE SCHEMA imp;
CREATE TABLE imp.rows (id bigint PRIMARY KEY, name text, amount numeric,
                       at timestamptz, doc jsonb, note text DEFAULT 'n');
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'imp_anon') THEN
    CREATE ROLE imp_anon NOLOGIN; END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'imp_auth') THEN
    CREATE ROLE imp_auth LOGIN NOINHERIT; END IF;
END $$;
GRANT imp_anon TO imp_auth;
GRANT USAGE ON SCHEMA imp TO imp_anon;
GRANT SELECT, INSERT ON imp.rows TO imp_anon;
"""
# doc normalised so that a CSV POST (doc a JSON string) and \\copy (doc the
# object) compare equal; md5 of the per-row md5s keeps the aggregate under
# PostgreSQL's 1 GB string limit at 10,000,000 rows
CHECK_SQL = ("SELECT count(*), md5(string_agg(md5(concat_ws('|', id, name, amount, "
             "extract(epoch FROM at), (doc #>> '{}')::jsonb, note)), '' ORDER BY id)), "
             "string_agg(DISTINCT jsonb_typeof(doc), ',') FROM imp.rows")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- the rows ------------------------------------------------------------

def row_values(i):
    """Row i's values (id i+1). Names sometimes hold a comma, double quotes
    or non-ASCII text, so CSV quoting and JSON escaping are exercised; no
    value is null (\\copy's CSV and PostgREST's CSV spell null differently)."""
    rid = i + 1
    m = i % 50
    if m == 7:
        name = 'customer %d, "vip"' % ((i * 7) % 100003)
    elif m == 13:
        name = "Zoë Ørsted %d" % (i % 997)
    else:
        name = "customer %d" % ((i * 7) % 100003)
    cents = (i * 7919) % 100000000
    amount = "%d.%02d" % (cents // 100, cents % 100)
    t = 1767225600 + i * 37     # 2026-01-01 UTC + 37 s a row
    at = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(t))
    doc = '{"k": %d, "tag": "t%d", "vip": %s}' % (i % 1000, i % 17,
                                                  "true" if i % 5 == 0 else "false")
    return rid, name, amount, at, doc


def csv_field(s):
    if any(c in s for c in ',"\n\r'):
        return '"' + s.replace('"', '""') + '"'
    return s


def encode(fmt, i):
    rid, name, amount, at, doc = row_values(i)
    if fmt == "csv":
        return "%d,%s,%s,%s,%s\n" % (rid, csv_field(name), amount, at, csv_field(doc))
    obj = '{"id": %d, "name": %s, "amount": %s, "at": "%s", "doc": %s}' % (
        rid, json.dumps(name, ensure_ascii=False), amount, at, doc)
    return obj


class Writer:
    """One data file of a format: CSV with a header, NDJSON, or one JSON
    array with a row per line."""

    def __init__(self, path, fmt):
        self.f = open(path, "w", encoding="utf-8", newline="")
        self.fmt = fmt
        self.first = True
        self.f.write({"csv": COLS + "\n", "ndjson": "", "json": "["}[fmt])

    def put(self, i):
        s = encode(self.fmt, i)
        if self.fmt == "ndjson":
            self.f.write(s + "\n")
        elif self.fmt == "json":
            self.f.write(("\n" if self.first else ",\n") + s)
        else:
            self.f.write(s)
        self.first = False

    def close(self):
        if self.fmt == "json":
            self.f.write("\n]\n")
        self.f.close()


def data_files(ddir, fmt, rows, parts):
    """(whole file, [part files]) of the format; the parts split the same
    rows into `parts` id ranges. Written once (a .done marker)."""
    whole = os.path.join(ddir, "rows.%s" % fmt)
    partfiles = [os.path.join(ddir, "part%d-of-%d.%s" % (k, parts, fmt)) for k in range(parts)]
    marker = os.path.join(ddir, ".done-%s-%d" % (fmt, parts))
    if os.path.exists(marker):
        return whole, partfiles
    t0 = time.monotonic()
    w = Writer(whole, fmt)
    ws = [Writer(p, fmt) for p in partfiles]
    per = -(-rows // parts) if parts else rows + 1
    for i in range(rows):
        w.put(i)
        if parts:
            ws[i // per].put(i)
    w.close()
    for x in ws:
        x.close()
    open(marker, "w").close()
    log("  wrote %s (%.0f MB) and %d parts in %.0f s"
        % (whole, os.path.getsize(whole) / 1e6, parts, time.monotonic() - t0))
    return whole, partfiles


def bad_line_file(ddir, whole, fmt, line, repeated_key=False):
    """A copy of the whole file whose body line `line` (from 1) is broken:
    CSV, a timestamp the column refuses (month 13: PostgreSQL's 22008 from
    the COPY of typed rows); NDJSON, a line that is not JSON (the reader's
    PGRST102). repeated_key: the line repeats the first row's key, 1."""
    path = os.path.join(ddir, "%s-%d.%s" % ("repeated-key" if repeated_key else "bad-line",
                                            line, fmt))
    if os.path.exists(path):
        return path
    with open(whole, encoding="utf-8", newline="") as src, \
            open(path + ".tmp", "w", encoding="utf-8", newline="") as dst:
        for n, text in enumerate(src, 1):
            if n == line and repeated_key:
                text = (re.sub(r"^\d+,", "1,", text) if fmt == "csv"
                        else re.sub(r'"id": \d+', '"id": 1', text, count=1))
            elif n == line:
                text = (re.sub(r"(\d{4})-\d\d-(\d\dT)", r"\1-13-\2", text, count=1)
                        if fmt == "csv" else text.replace('"name":', '"name"', 1))
            dst.write(text)
    os.rename(path + ".tmp", path)
    return path


# ---- /proc ---------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def proc_stat(pid):
    """(utime+stime, cutime+cstime) in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime is field 14
    return ((int(fields[11]) + int(fields[12])) / TICK,
            (int(fields[13]) + int(fields[14])) / TICK)


def peak_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def db_cpu(postmaster):
    """CPU seconds of the cluster so far: its live processes plus the
    children the postmaster has reaped (None without an own cluster)."""
    if postmaster is None:
        return None
    total = sum(proc_stat(postmaster))
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
            if int(s.rsplit(")", 1)[1].split()[1]) == postmaster:
                total += sum(proc_stat(int(d)))
        except (OSError, ValueError, IndexError):
            pass
    return total


def run_client(cmd, timeout):
    """Runs a client (curl, psql): (exit code, stdout, cpu s, peak RSS MB)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stdout.close()
    return p.returncode, out.decode("utf-8", "replace"), ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


# ---- the bench -----------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="pgrest-import-bench-", dir="/tmp")
        os.chmod(self.work, 0o755)
        self.cluster = None
        self.postmaster = None
        if args.db:
            self.db = args.db
            self.server_db = args.db
        else:
            port = harness.free_pg_port()
            d = os.path.join(self.work, "pg")
            harness.run(["bash", harness.PG_SH, "start", d, str(port)], timeout=300)
            self.cluster = harness.Cluster(d, port)
            with open(os.path.join(d, "data", "postmaster.pid")) as f:
                self.postmaster = int(f.readline())
            self.db = "postgresql://postgres@localhost:%d/postgres" % port
            self.server_db = "postgresql://imp_auth@localhost:%d/postgres" % port
        self.psql(SETUP_SQL)
        self.reference = None

    def psql(self, sql, timeout=3600):
        env = dict(os.environ, PGTZ="UTC", PGOPTIONS="-c client_min_messages=warning")
        return harness.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-d", self.db, "-c", sql], timeout=timeout, env=env).strip()

    def fresh_table(self):
        self.psql("TRUNCATE imp.rows; CHECKPOINT")

    def check(self):
        count, md5, types = self.psql(CHECK_SQL).split("|")
        return int(count), md5, types

    def close(self):
        if self.cluster is not None:
            self.cluster.destroy()
        shutil.rmtree(self.work, ignore_errors=True)

    def start_server(self, mode, biggest):
        opts = {"db-uri": self.server_db, "db-schemas": "imp", "db-anon-role": "imp_anon",
                "db-pool": str(max(10, self.args.concurrent + 2)),
                "log-level": "error", "server-timeout": "300"}
        if mode == "buffered":
            opts["server-streamed-body-threshold"] = "0"
            opts["server-max-body-size"] = str(biggest + (1 << 20))
        else:
            opts["server-max-streamed-body-size"] = "0"
        # harness.Server reads the cluster only for its default db-uri
        srv = harness.Server(self.cluster or harness.Cluster(self.work, 0), self.work, opts)
        if srv.wait_ready(60) is None:
            raise RuntimeError("pgrest-server not ready:\n" + srv.log_tail())
        return srv

    def curl(self, srv, path, fmt):
        out = os.path.join(self.work, "resp-%d" % threading.get_ident())
        shown = self.args.representation
        cmd = ["curl", "-sS", "-o", out, "-w", "%{http_code}", "-T", path, "-X", "POST",
               "-H", "Content-Type: " + CTYPE[fmt],
               "-H", "Prefer: return=" + ("representation" if shown else "minimal"),
               srv.url("/rows" + ("?select=" + shown if shown else ""))]
        rc, text, cpu, rss = run_client(cmd, self.args.timeout)
        try:
            with open(out, encoding="utf-8", errors="replace") as f:
                body = f.read(300)
            os.unlink(out)
        except OSError:
            body = ""
        if rc != 0:
            return "curl%d" % rc, text.strip()[:300], cpu, rss
        return text.strip(), body, cpu, rss

    def http_run(self, fmt, mode, files):
        """files: one (a single import) or several posted at once."""
        biggest = max(os.path.getsize(p) for p in files)
        self.fresh_table()
        srv = self.start_server(mode, biggest)
        try:
            cpu0 = proc_stat(srv.proc.pid)[0]
            db0 = db_cpu(self.postmaster)
            load = os.getloadavg()[0]
            results = [None] * len(files)

            def one(k):
                results[k] = self.curl(srv, files[k], fmt)
            threads = [threading.Thread(target=one, args=(k,)) for k in range(len(files))]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.monotonic() - t0
            db1 = db_cpu(self.postmaster)
            if not srv.alive():     # e.g. killed by the OOM killer: that is the result
                return {"wall": wall, "rss": None, "cpu": None, "db": None, "load": load,
                        "status": "server died (%s)" % srv.proc.returncode,
                        "body": srv.log_tail(3), "ccpu": None, "crss": None}
            r = {"wall": wall, "rss": peak_rss_mb(srv.proc.pid),
                 "cpu": proc_stat(srv.proc.pid)[0] - cpu0,
                 "db": None if db0 is None else db1 - db0, "load": load,
                 "status": ",".join(sorted(set(x[0] for x in results))),
                 "body": next((x[1] for x in results if x[0] not in ("201", "204")), ""),
                 "ccpu": sum(x[2] for x in results), "crss": max(x[3] for x in results)}
        finally:
            srv.stop()
        return r

    def copy_run(self, files):
        self.fresh_table()
        db0 = db_cpu(self.postmaster)
        load = os.getloadavg()[0]
        results = [None] * len(files)

        def one(k):
            cmd = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.db, "-c",
                   "\\copy imp.rows (%s) FROM '%s' CSV HEADER" % (COLS, files[k])]
            results[k] = run_client(cmd, self.args.timeout)
        threads = [threading.Thread(target=one, args=(k,)) for k in range(len(files))]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        time.sleep(0.2)     # the backends' CPU counts once the postmaster reaped them
        db1 = db_cpu(self.postmaster)
        bad = [x[1] for x in results if x[0] != 0]
        return {"wall": wall, "rss": None, "cpu": None, "db": None if db0 is None else db1 - db0,
                "load": load, "status": "ok" if not bad else "psql failed",
                "body": bad[0][:300] if bad else "",
                "ccpu": sum(x[2] for x in results), "crss": max(x[3] for x in results)}

    def verify(self, r):
        if self.args.no_verify or self.reference is None:
            r["verified"] = "-"
            return
        count, md5, types = self.check()
        r["doc"] = types
        if (count, md5) == self.reference[:2]:
            r["verified"] = "same"
        else:
            r["verified"] = "DIFFERS (%d rows)" % count


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_num(x, spec):
    return "–" if x is None else format(x, spec)


def refusal(body):
    """An error body as "CODE message (the limit's option)"."""
    try:
        e = json.loads(body)
        opt = (e.get("details") or "").rsplit("(", 1)
        return "%s %s%s" % (e.get("code"), e.get("message"),
                            " (" + opt[1] if len(opt) == 2 else "")
    except (ValueError, AttributeError):
        return body.replace("|", "/").replace("\n", " ")[:80]


def summarize(results, sizes, rows, concurrent):
    """results: {(kind, fmt, path): [run dicts]}; prints markdown tables."""
    out = []
    for kind, title in (("one", "One import of %d rows" % rows),
                        ("conc", "%d concurrent imports of %d rows each (wall: until the last ends)"
                         % (concurrent, -(-rows // max(concurrent, 1))))):
        keys = [k for k in results if k[0] == kind]
        if not keys:
            continue
        out.append("\n%s (medians of %d rounds):\n" % (title, max(len(results[k]) for k in keys)))
        out.append("| body | path | HTTP | wall s | body MB/s | rows/s | server peak RSS MB "
                   "| server CPU s | DB CPU s | client CPU s | table |")
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        med = {}
        for k in keys:
            runs = results[k]
            ok = [r for r in runs if r["status"] in ("201", "204", "ok")]
            use = ok or runs
            m = {f: median([r[f] for r in use]) for f in ("wall", "rss", "cpu", "db", "ccpu")}
            med[k] = m if ok else None
            mb = sizes[(kind, k[1])] / 1e6
            status = ",".join(sorted(set(r["status"] for r in runs)))
            verified = ",".join(sorted(set(r.get("verified", "-") + (" (doc %s)" % r["doc"] if r.get("doc") else "") for r in runs)))
            if ok:
                out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    k[1], k[2], status, fmt_num(m["wall"], ".2f"), fmt_num(mb / m["wall"], ".1f"),
                    fmt_num(rows / m["wall"], ",.0f"), fmt_num(m["rss"], ".0f"),
                    fmt_num(m["cpu"], ".2f"), fmt_num(m["db"], ".2f"), fmt_num(m["ccpu"], ".2f"),
                    verified))
            else:
                out.append("| %s | %s | %s %s | (%s s) | | | %s | | | | |" % (
                    k[1], k[2], status, refusal(runs[0]["body"]), fmt_num(m["wall"], ".2f"),
                    fmt_num(m["rss"], ".0f")))
        cp = med.get((kind, "csv", "\\copy"))
        lines = []
        for k in keys:
            if k[2] == "\\copy" or med.get(k) is None:
                continue
            x = med[k]
            parts = []
            b = med.get((kind, k[1], "buffered"))
            if k[2] == "streamed" and b is not None:
                parts.append("buffered/streamed %.2f× wall%s" % (
                    b["wall"] / x["wall"], "" if x["db"] is None or b["db"] is None else
                    " (%.2f× server+DB CPU)" % ((b["db"] + b["cpu"]) / (x["db"] + x["cpu"]))))
            if cp is not None:
                parts.append("%s/\\copy %.2f× wall%s" % (
                    k[2], x["wall"] / cp["wall"], "" if x["db"] is None or cp["db"] is None else
                    " (%.2f× server+DB CPU)" % ((x["db"] + x["cpu"]) / cp["db"])))
            lines.append("* %s %s: %s" % (k[1], k[2], "; ".join(parts)))
        if lines:
            out.append("\nRatios of the medians:\n")
            out.extend(lines)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--concurrent", type=int, default=8, help="0: no concurrency run")
    ap.add_argument("--formats", default="csv,ndjson,json")
    ap.add_argument("--modes", default="streamed,buffered")
    ap.add_argument("--db", help="an existing PostgreSQL (superuser URI); default: own cluster")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--data-dir")
    ap.add_argument("--timeout", type=float, default=3600, help="per client, seconds")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--bad-line", type=int, help="then POST a copy of each CSV/NDJSON file "
                    "broken at this line (from 1): the answer and the rows left")
    ap.add_argument("--repeated-key", type=int, help="then POST a copy of each CSV/NDJSON "
                    "file whose line N (from 1) repeats the first row's key")
    ap.add_argument("--representation", metavar="SELECT",
                    help="POST with Prefer: return=representation and ?select=SELECT "
                    "(the response goes to a file)")
    args = ap.parse_args()
    harness.SERVER = os.path.join(args.build, "server", "pgrest-server")
    formats = args.formats.split(",")
    modes = args.modes.split(",")
    ddir = args.data_dir or "/tmp/pgrest-import-bench-%d" % args.rows
    os.makedirs(ddir, exist_ok=True)
    os.chmod(ddir, 0o755)   # \copy reads as the client; the server never does

    log("load before: %.2f %.2f %.2f" % os.getloadavg())
    files = {}
    sizes = {}
    for fmt in sorted(set(formats) | {"csv"}):
        whole, parts = data_files(ddir, fmt, args.rows, args.concurrent)
        files[fmt] = (whole, parts)
        sizes[("one", fmt)] = os.path.getsize(whole)
        sizes[("conc", fmt)] = sum(os.path.getsize(p) for p in parts)

    b = Bench(args)
    results = {}
    t_start = time.monotonic()
    try:
        # the reference: \copy of the CSV (also the first \copy timing)
        for rnd in range(args.rounds):
            for kind in (("one", "conc") if args.concurrent else ("one",)):
                def pick(fmt):
                    return [files[fmt][0]] if kind == "one" else files[fmt][1]
                r = b.copy_run(pick("csv"))
                if b.reference is None and kind == "one" and not args.no_verify:
                    b.reference = b.check()
                    log("reference (\\copy): %d rows, md5 %s, doc %s" % b.reference)
                b.verify(r)
                results.setdefault((kind, "csv", "\\copy"), []).append(r)
                log("round %d %s csv \\copy: %s %.2f s, load %.1f, %s"
                    % (rnd + 1, kind, r["status"], r["wall"], r["load"], r["verified"]))
                for fmt in formats:
                    # alternate which path goes first from round to round
                    order = modes if rnd % 2 == 0 else list(reversed(modes))
                    for mode in order:
                        r = b.http_run(fmt, mode, pick(fmt))
                        if r["status"] in ("201", "204"):
                            b.verify(r)
                        else:
                            r["verified"] = "-"
                        results.setdefault((kind, fmt, mode), []).append(r)
                        log("round %d %s %s %s: HTTP %s %.2f s, RSS %s MB, server CPU %s s, "
                            "DB CPU %s s, load %.1f, %s%s"
                            % (rnd + 1, kind, fmt, mode, r["status"], r["wall"], fmt_num(r["rss"], ".0f"),
                               fmt_num(r["cpu"], ".2f"),
                               fmt_num(r["db"], ".2f"), r["load"], r["verified"],
                               "" if r["status"] in ("201", "204") else " " + r["body"][:200]))
        broken = [(line, kind) for line, kind in ((args.bad_line, False),
                                                  (args.repeated_key, True)) if line]
        for line, repeated_key in broken:
            for fmt in (f for f in formats if f in ("csv", "ndjson")):
                path = bad_line_file(ddir, files[fmt][0], fmt, line, repeated_key)
                r = b.http_run(fmt, "streamed", [path])
                rows_left = int(b.psql("SELECT count(*) FROM imp.rows"))
                print("%s line %d of %s: HTTP %s after %.2f s, server peak RSS %s MB, "
                      "server CPU %s s, DB CPU %s s, rows in the table after: %d\n  %s"
                      % ("repeated key at" if repeated_key else "bad", line, fmt, r["status"],
                         r["wall"], fmt_num(r["rss"], ".0f"), fmt_num(r["cpu"], ".2f"),
                         fmt_num(r["db"], ".2f"), rows_left, r["body"][:300]))
    finally:
        b.close()
    print("pgrest-server %s, %d rows (%s), %d rounds, %.0f s in all; load average at the end "
          "%.2f %.2f %.2f" % (harness.SERVER, args.rows,
                              ", ".join("%s %.0f MB" % (f, sizes[("one", f)] / 1e6)
                                        for f in sorted(set(formats) | {"csv"})),
                              args.rounds, time.monotonic() - t_start, *os.getloadavg()))
    print("per-run loads: " + " ".join("%.1f" % r["load"] for k in results for r in results[k]))
    print(summarize(results, sizes, args.rows, args.concurrent))


if __name__ == "__main__":
    main()
