#!/usr/bin/env python3
"""The Node binding (bindings/node) installed as a user installs it -- npm
install of the folder into a temporary directory, the npm registry used for
node-addon-api only, compiled against the build tree's libpgrest through
pkg-config -- and then:
  parity       each request of REQUESTS sent to pgrest-server and to a
               node:http server using the addon (same cluster, same
               configuration): status, PostgREST's headers and body bytes equal
  empty header a header pgrest returns empty has the same raw bytes as
               pgrest-server's (one space)
  identity     the host's identity handed over (handler identity option)
               answers as pgrest-server does for a JWT of the same claims
  streaming    a body over the threshold comes streamed, bytes equal
  slow reader  a streamed body read slowly (the task waits for 'drain')
               arrives whole and equal to the one read at full speed
  bulk bodies  request bodies fed to the task as they arrive: NDJSON and CSV
               bulk POSTs of ~3 MB sent in 4 KiB pieces under a 64 KiB
               threshold (/bulk-stream) answer 201 and leave the rows the
               whole body leaves with streaming off (/bulk-whole), a COPY
               seen in pg_stat_activity at the body's middle; a bad line:
               400 PGRST102 naming it, nothing written; a client leaving
               mid-body: nothing written, the next request answers; small
               bodies through both mounts answer as pgrest-server's
  reload       NOTIFY pgrst reloads the schema cache inside the node process
  cancel       a client that leaves cancels its statement in PostgreSQL
  errors       the library's own failures are PgrestError exceptions
  client       the postgrest-js / supabase-js suite (tests/client/*.test.mjs,
               installed as tests/client/run.py does) against the node:http
               server (skipped, with the reason, when it cannot be installed)
  frameworks   parity, identity, streaming, the empty header and the bare
               mount (/rest: the root) again with the handler mounted in
               Express (app.use('/rest', ...)) and in Fastify (prefix
               option, body parsers off), both installed by
               npm ci from this directory's package-lock.json; and
               index.d.ts checked by tsc --noEmit --strict over typecheck.ts
               (skipped, with the reason, when the registry cannot be reached)
  concurrency  200 requests on pg_sleep(0.5) at once on the one event loop,
               a 10 ms setInterval's lateness measured meanwhile
  rss          RSS after warm-up flat within 10% over 100,000 requests
               (PGREST_NODE_RSS_REQUESTS to change the count)
Skipped, with the reason, without node/npm, Node's headers or the registry.
Ends with
    node: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Environment: PGREST_SERVER (default build/server/pgrest-server), PGREST_BUILD
(default build/: its meson-uninstalled/pgrest-uninstalled.pc is used)."""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(REPO, "tests", "server"))
import harness  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "client"))
import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location("client_run", os.path.join(REPO, "tests", "client", "run.py"))
client_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(client_run)

JWT_SECRET = "reallyreallyreallyreallyverysafe"
BUILD = os.environ.get("PGREST_BUILD", os.path.join(REPO, "build"))
# Headers a server adds of its own (not PostgREST's): not compared.
TRANSPORT_HEADERS = {"date", "server", "connection", "keep-alive", "transfer-encoding"}
WORK = None
SCRIPTS = ["serve.mjs", "errors.mjs", "concurrency.mjs", "rss.mjs"]
# Mounted under /rest by serve.mjs (see there how).
FRAMEWORKS = ["express", "fastify"]
FRAMEWORK_FILES = ["package.json", "package-lock.json", "serve.mjs", "typecheck.ts"]

passed = failed = skipped_count = 0


def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (name, (": " + detail) if detail else ""))


def skipped(reason):
    print("node: skipped (%s)" % reason)
    print("node: 0 passed, 0 failed, 1 skipped")
    return 0


def token(claims):
    return "Bearer " + harness.hs256_token(claims, JWT_SECRET)


USER = {"Authorization": token({"role": "web_user"})}
ROLLBACK = {"Prefer": "tx=rollback,return=representation", **USER}
JSON_BODY = {"Content-Type": "application/json"}


def w(extra=None):
    return {**ROLLBACK, **JSON_BODY, **(extra or {})}


# (method, path, headers, body): each answered by both servers.
REQUESTS = [
    # reads
    ("GET", "/artists", {}, None),
    ("GET", "/artists?select=id,name&order=name.desc", {}, None),
    ("GET", "/artists?id=eq.1", {}, None),
    ("GET", "/artists?id=in.(1,2,3)&select=name", {}, None),
    ("GET", "/artists?name=like.*Trio*", {}, None),
    ("GET", "/artists?or=(id.eq.1,id.eq.2)", {}, None),
    ("GET", "/artists?limit=2&offset=1", {}, None),
    ("GET", "/artists", {"Range": "0-1"}, None),
    ("GET", "/artists", {"Prefer": "count=exact"}, None),
    ("GET", "/artists?id=eq.1", {"Accept": "application/vnd.pgrst.object+json"}, None),
    ("GET", "/artists", {"Accept": "text/csv"}, None),
    ("GET", "/artists?select=name&formed=gt.1960", {}, None),
    ("GET", "/artists?order=formed.asc.nullslast", {}, None),
    ("GET", "/tracks?limit=3", {}, None),
    ("GET", "/tracks?select=title,duration&limit=3", {}, None),
    ("GET", "/employees", {}, None),
    ("HEAD", "/artists", {}, None),
    ("HEAD", "/artists?id=eq.1", {"Prefer": "count=exact"}, None),
    ("GET", "/", {}, None),
    ("GET", "/artists?select=name&limit=1", {"Accept-Profile": "api"}, None),
    # embeds
    ("GET", "/albums?select=title,artists(name)", {}, None),
    ("GET", "/artists?select=name,albums(title,tracks(title))&limit=2", {}, None),
    ("GET", "/albums?select=title,artists!inner(name)&artists.country=eq.US", {}, None),
    ("GET", "/artists?select=name,albums(count)", {}, None),
    ("GET", "/playlists?select=name,tracks(title)", {}, None),
    ("GET", "/albums?select=title,artist:artists(name)&limit=2", {}, None),
    ("GET", "/artists?select=name,albums(title)&albums.order=title.desc&limit=2", {}, None),
    # writes (rolled back; explicit ids: sequences are not rolled back)
    ("POST", "/artists", w(), {"id": 900, "name": "Node One", "formed": 2001}),
    ("POST", "/artists", w(), [{"id": 901, "name": "A"}, {"id": 902, "name": "B"}]),
    ("POST", "/artists?columns=id,name", w(), [{"id": 903, "name": "C", "ignored": 1}]),
    ("POST", "/artists?select=id,name", w(), {"id": 904, "name": "D"}),
    ("POST", "/artists", {**USER, **JSON_BODY, "Prefer": "tx=rollback,return=headers-only"},
     {"id": 905, "name": "E"}),
    ("POST", "/artists", {**USER, **JSON_BODY, "Prefer": "tx=rollback,return=minimal"},
     {"id": 906, "name": "F"}),
    ("POST", "/artists", w({"Prefer": "tx=rollback,return=representation,resolution=merge-duplicates"}),
     {"id": 1, "name": "Renamed"}),
    ("POST", "/artists", {**ROLLBACK, "Content-Type": "text/csv"}, b"id,name\n907,G\n908,H"),
    ("PATCH", "/artists?id=eq.1", w(), {"genre": "jazz"}),
    ("PATCH", "/artists?id=eq.99999", w(), {"genre": "jazz"}),
    ("PUT", "/artists?id=eq.909", w(), {"id": 909, "name": "I"}),
    ("DELETE", "/artists?id=eq.2", w(), None),
    ("POST", "/artists", w(), {"id": 1, "name": "duplicate"}),
    ("POST", "/artists", w(), {"nope": 1}),
    ("POST", "/artists", {**USER, **JSON_BODY}, b"{not json"),
    ("PATCH", "/artists", w(), {"name": "everyone"}),
    # RPC
    ("GET", "/rpc/add?a=1&b=2", {}, None),
    ("POST", "/rpc/add", JSON_BODY, {"a": 3}),
    ("GET", "/rpc/three_numbers", {}, None),
    ("GET", "/rpc/album_tracks?album=1", {}, None),
    ("POST", "/rpc/echo_json", JSON_BODY, {"doc": {"x": [1, 2]}}),
    ("GET", "/rpc/sum_all?v={1,2,3}", {}, None),
    ("GET", "/rpc/track_meta", {}, None),
    ("GET", "/rpc/artist_summary?id=1", {}, None),
    ("GET", "/rpc/boxes", {}, None),
    ("GET", "/rpc/pick?x=1", {}, None),
    ("POST", "/rpc/touch", {**USER, "Prefer": "tx=rollback"}, None),
    ("GET", "/rpc/three_numbers?select=x&limit=1", {}, None),
    # errors
    ("GET", "/nope", {}, None),
    ("GET", "/artists?select=nope", {}, None),
    ("GET", "/artists?id=eq.abc", {}, None),
    ("GET", "/artists?order=nope.wat", {}, None),
    ("GET", "/artists?select=name,", {}, None),
    ("GET", "/artists", {"Accept": "application/xml"}, None),
    ("GET", "/artists", {"Accept": "application/vnd.pgrst.object+json"}, None),
    ("GET", "/rpc/nope", {}, None),
    ("GET", "/rpc/add?x=1", {}, None),
    ("POST", "/artists", JSON_BODY, {"id": 910, "name": "anon may not"}),
    ("GET", "/artists", {"Range": "50-60"}, None),
    ("GET", "/artists?select=name,nope(id)", {}, None),
    # auth
    ("GET", "/artists?limit=1", USER, None),
    ("GET", "/artists", {"Authorization": "Bearer not.a.token"}, None),
    ("GET", "/artists", {"Authorization": token({"role": "web_user", "exp": 1})}, None),
    ("GET", "/artists", {"Authorization": token({"role": "not_granted"})}, None),
    ("GET", "/artists", {"Authorization": "Bearer " + harness.hs256_token(
        {"role": "web_user"}, "another-secret-another-secret-another")}, None),
    ("GET", "/artists", {"Authorization": "Basic abc"}, None),
    # OPTIONS and CORS
    ("OPTIONS", "/artists", {}, None),
    ("OPTIONS", "/rpc/add", {}, None),
    ("OPTIONS", "/", {}, None),
    ("OPTIONS", "/artists", {"Origin": "http://example.com",
                             "Access-Control-Request-Method": "POST",
                             "Access-Control-Request-Headers": "content-type"}, None),
    ("GET", "/artists?limit=1", {"Origin": "http://example.com"}, None),
]


def send(port, method, path, headers, body):
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        heads = sorted((k.lower(), v) for k, v in r.getheaders()
                       if k.lower() not in TRANSPORT_HEADERS)
        return r.status, r.reason, heads, data
    finally:
        conn.close()


class Target:
    """A server using the addon: its port and the prefix it is mounted at."""

    def __init__(self, label, port, mount=""):
        self.label, self.port, self.mount = label, port, mount

    def send(self, method, path, headers, body):
        return send(self.port, method, self.mount + path, headers, body)


def compare(name, a, b):
    ok = a == b
    detail = ""
    if not ok:
        detail = "\n  pgrest-server: %r\n  node:          %r" % (
            (a[0], a[1], a[2], a[3][:400]), (b[0], b[1], b[2], b[3][:400]))
    report(ok, name, detail)


def parity(server_port, node):
    for method, path, headers, body in REQUESTS:
        compare("%s parity %s %s %s" % (node.label, method, path, sorted(headers)),
                send(server_port, method, path, headers, body),
                node.send(method, path, headers, body))
    print("node: %s parity: %d requests compared" % (node.label, len(REQUESTS)))


def identity(server_port, node):
    claims = {"role": "web_user", "sub": "node-host"}
    for method, path, body in [("GET", "/artists?limit=1", None),
                               ("POST", "/rpc/echo_json", {"doc": 1}),
                               ("PATCH", "/artists?id=eq.1", {"genre": "jazz"})]:
        hdrs = {**JSON_BODY, "Prefer": "tx=rollback,return=representation"}
        compare("%s identity %s %s" % (node.label, method, path),
                send(server_port, method, path, {**hdrs, "Authorization": token(claims)}, body),
                node.send(method, "/as-user" + path, hdrs, body))


def streaming(server_port, node):
    path = "/rpc/node_big?n=60000"
    a = send(server_port, "GET", path, {}, None)
    b = node.send("GET", path, {}, None)
    report(len(b[3]) > 65536 and a == b, "%s streaming %s (%d bytes)" % (node.label, path, len(b[3])),
           "" if a == b else "status %s/%s lengths %d/%d" % (a[0], b[0], len(a[3]), len(b[3])))


def raw_head(port, path):
    """The response head's header lines as sent, transport headers left out:
    http.client strips the values, which would hide a difference."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                     % path.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            part = sock.recv(65536)
            if not part:
                break
            data += part
    lines = data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    return [lines[0]] + sorted(l for l in lines[1:]
                               if l.split(b":", 1)[0].decode().lower() not in TRANSPORT_HEADERS)


def empty_header(server_port, node):
    path = "/rpc/node_empty_header"
    a = raw_head(server_port, path)
    b = raw_head(node.port, node.mount + path)
    report(a == b and b"X-Empty:  " in b, "%s empty header value" % node.label,
           "\n  pgrest-server: %r\n  node:          %r" % (a, b))


def read_slowly(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        parts = []
        while True:
            part = r.read(16384)
            if not part:
                break
            parts.append(part)
            time.sleep(0.005)
        return r.status, b"".join(parts)
    finally:
        conn.close()


def slow_reader(node_port):
    path = "/rpc/node_big?n=300000"
    fast = send(node_port, "GET", path, {}, None)
    t0 = time.monotonic()
    status, body = read_slowly(node_port, path)
    report(status == 200 and body == fast[3] and len(body) > 1000000, "slow reader",
           "status %s, %d bytes vs %d" % (status, len(body), len(fast[3])))
    print("node: slow reader: %d bytes in %.2f s" % (len(body), time.monotonic() - t0))


def wait_until(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def reload_on_notify(cluster, node_port):
    before = send(node_port, "GET", "/rpc/node_added", {}, None)[0]
    cluster.psql("CREATE FUNCTION api.node_added() RETURNS int LANGUAGE sql AS 'SELECT 7'; "
                 "NOTIFY pgrst, 'reload schema'")
    def answered():
        status, _, _, body = send(node_port, "GET", "/rpc/node_added", {}, None)
        return status == 200 and body == b"7"
    ok = wait_until(answered, 10)
    report(before == 404 and ok, "reload on NOTIFY", "before %s, after: %r" % (
        before, send(node_port, "GET", "/rpc/node_added", {}, None)))


def cancel_on_disconnect(cluster, node_port):
    running = ("SELECT count(*) FROM pg_stat_activity "
               "WHERE query LIKE '%slow%' AND state = 'active' AND pid <> pg_backend_pid()")
    conn = http.client.HTTPConnection("127.0.0.1", node_port, timeout=0.5)
    conn.request("GET", "/rpc/slow?seconds=20")
    started = wait_until(lambda: cluster.psql(running).strip() == "1", 5)
    conn.close()        # the client leaves
    t0 = time.monotonic()
    gone = wait_until(lambda: cluster.psql(running).strip() == "0", 5)
    still = send(node_port, "GET", "/rpc/add?a=1&b=1", {}, None)
    report(started and gone and still[0] == 200, "cancel on disconnect",
           "started %s, cancelled %s after %.2f s, next answer %s" % (
               started, gone, time.monotonic() - t0, still[0]))
    print("node: cancel on disconnect: statement gone after %.2f s" % (time.monotonic() - t0))


BULK_ROWS = 40000
COPYING = ("SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
           "AND query LIKE 'COPY %FROM STDIN'")  # into the rows' table or the table
BULK_TABLE_STATE = ("SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY id), '')) "
                    "FROM api.bulk_rows t")


def ndjson_rows(n, bad_at=None):
    lines = []
    for i in range(1, n + 1):
        if i == bad_at:
            lines.append('{"id" %d, "name": "broken"}' % i)
        else:
            lines.append(json.dumps({"id": i, "name": "row %d, \"q\"" % i,
                                     "score": i * 1.5, "note": "x" * (i % 40)}))
    return ("\n".join(lines) + "\n").encode()


def csv_rows(n):
    out = ["id,name,score,note"]
    for i in range(1, n + 1):
        out.append('%d,"row %d, ""q""",%s,%s' % (i, i, "NULL" if i % 7 == 0 else i * 1.5,
                                                "y" * (i % 30)))
    return ("\n".join(out) + "\n").encode()


class Upload:
    """A POST whose body is sent by hand in 4 KiB pieces, so that a check
    can act in its middle."""

    def __init__(self, port, path, headers, length):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = "POST %s HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\nConnection: close\r\n" \
            % (path, length)
        head += "".join("%s: %s\r\n" % h for h in headers.items()) + "\r\n"
        self.sock.sendall(head.encode())

    def send(self, data):
        for i in range(0, len(data), 4096):
            self.sock.sendall(data[i:i + 4096])

    def answer(self):
        """(status, PostgREST's headers, body) once the server has answered."""
        chunks = []
        while True:
            part = self.sock.recv(65536)
            if not part:
                break
            chunks.append(part)
        self.sock.close()
        head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = sorted((k.strip().lower(), v.strip()) for k, v in
                         (l.split(":", 1) for l in lines[1:])
                         if k.strip().lower() not in TRANSPORT_HEADERS | {"content-length"})
        if ("transfer-encoding", "chunked") in [(k.strip().lower(), v.strip()) for k, v in
                                                (l.split(":", 1) for l in lines[1:])]:
            body = dechunk(body)
        return int(lines[0].split()[1]), headers, body


def dechunk(data):
    out = b""
    while data:
        size, _, rest = data.partition(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if n == 0:
            break
        out += rest[:n]
        data = rest[n + 2:]
    return out


def bulk_bodies(cluster, server_port, node_port):
    """Request bodies fed to the task as they arrive (/bulk-stream: past
    64 KiB into PostgreSQL; /bulk-whole: never streamed)."""
    def state():
        return cluster.psql(BULK_TABLE_STATE).strip()

    def copying():
        return cluster.psql(COPYING).strip()

    def as_sent(r):
        return r[0], sorted(h for h in r[2] if h[0] != "content-length"), r[3]

    for kind, content_type, body in [("NDJSON", "application/x-ndjson", ndjson_rows(BULK_ROWS)),
                                     ("CSV", "text/csv", csv_rows(BULK_ROWS))]:
        headers = {**USER, "Content-Type": content_type}
        cluster.psql("TRUNCATE api.bulk_rows")
        up = Upload(node_port, "/bulk-stream/bulk_rows", headers, len(body))
        up.send(body[:len(body) // 2])
        seen = wait_until(lambda: copying() == "1", 60)
        up.send(body[len(body) // 2:])
        streamed = up.answer()
        streamed_state = state()
        cluster.psql("TRUNCATE api.bulk_rows")
        whole = send(node_port, "POST", "/bulk-whole/bulk_rows", headers, body)
        whole = (whole[0], sorted(h for h in whole[2] if h[0] != "content-length"), whole[3])
        report(seen, "bulk %s: a COPY runs while the body comes" % kind)
        report(streamed[0] == 201 and streamed == whole, "bulk %s: streamed answer" % kind,
               "streamed %r, whole %r" % (streamed, whole))
        report(streamed_state == state() and streamed_state.startswith("%d|" % BULK_ROWS),
               "bulk %s: the same rows as the whole body" % kind,
               "streamed %s, whole %s" % (streamed_state, state()))

    cluster.psql("TRUNCATE api.bulk_rows")
    bad = ndjson_rows(BULK_ROWS, bad_at=BULK_ROWS // 2)
    up = Upload(node_port, "/bulk-stream/bulk_rows",
                {**USER, "Content-Type": "application/x-ndjson"}, len(bad))
    up.send(bad)
    status, _, answer = up.answer()
    try:
        error = json.loads(answer)
    except ValueError:
        error = {}
    report(status == 400 and error.get("code") == "PGRST102" and
           error.get("details") == "line %d: invalid JSON" % (BULK_ROWS // 2) and
           state().startswith("0|"), "bulk: a bad line writes nothing", "%s %r" % (status, answer))

    body = ndjson_rows(BULK_ROWS)
    up = Upload(node_port, "/bulk-stream/bulk_rows",
                {**USER, "Content-Type": "application/x-ndjson"}, len(body))
    up.send(body[:len(body) // 2])
    seen = wait_until(lambda: copying() == "1", 60)
    up.sock.close()     # the client leaves in the middle of its body
    gone = wait_until(lambda: copying() == "0", 60)
    after = send(node_port, "POST", "/bulk-stream/bulk_rows",
                 {**USER, **JSON_BODY, "Prefer": "return=representation"},
                 {"id": 1, "name": "after"})
    report(seen and gone and after[0] == 201 and state().startswith("1|"),
           "bulk: a client leaving mid-body writes nothing",
           "COPY seen %s, gone %s, next %r, table %s" % (seen, gone, after, state()))

    for method, path, headers, rbody in REQUESTS:
        if rbody is None:
            continue
        want = send(server_port, method, path, headers, rbody)
        for mount in ("/bulk-stream", "/bulk-whole"):
            compare("bulk: small body through %s %s %s" % (mount, method, path), want,
                    send(node_port, method, mount + path, headers, rbody))


def node_script(work, name, config, timeout=600):
    """Runs one of the .mjs checks; its last line is a JSON report."""
    r = subprocess.run(["node", "--expose-gc", name, json.dumps(config)], cwd=work, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    lines = r.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1])
    except (IndexError, ValueError):
        result = {"ok": False, "output": r.stdout[-2000:]}
    if r.returncode != 0:
        result["ok"] = False
    return result


def npm(args, cwd, env=None):
    """Runs npm: (output, None), (output, ("skip", why)) or (output, ("fail", why))."""
    try:
        r = subprocess.run(["npm"] + args + ["--no-audit", "--no-fund", "--loglevel=error"],
                           cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "", ("skip", "npm %s timed out" % args[0])
    out = r.stdout
    if r.returncode == 0:
        return out, None
    if "ENOTFOUND" in out or "EAI_AGAIN" in out or "ECONNREFUSED" in out or "ETIMEDOUT" in out:
        return out, ("skip", "the npm registry cannot be reached")
    return out, ("fail", "npm %s failed:\n%s" % (args[0], out[-3000:]))


def install(work):
    """npm install of bindings/node into work: None, ("skip", why) or ("fail", why)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return ("skip", "node or npm not found")
    pc_dir = os.path.join(BUILD, "meson-uninstalled")
    if not os.path.exists(os.path.join(pc_dir, "pgrest-uninstalled.pc")):
        return ("fail", "no %s: build the library first" % pc_dir)
    with open(os.path.join(work, "package.json"), "w") as f:
        f.write('{"name": "pgrest-node-test", "private": true}\n')
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir + os.pathsep + os.environ.get("PKG_CONFIG_PATH", ""))
    out, outcome = npm(["install", "--install-links", "--foreground-scripts",
                        os.path.join(REPO, "bindings", "node")], work, env)
    if outcome is None:
        warnings = [l for l in out.splitlines() if "warning:" in l and "node-addon-api" not in l]
        if warnings:
            return ("fail", "compiler warnings:\n" + "\n".join(warnings[:20]))
        return None
    if "no Node headers" in out or "node-gyp not found" in out:
        return ("skip", out.strip().splitlines()[-1])
    return outcome


def start_node(work, config, framework="http"):
    proc = subprocess.Popen(["node", "serve.mjs", json.dumps(config), framework], cwd=work,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening "):
        proc.kill()
        raise AssertionError("node server did not start: " + line + proc.stdout.read())
    return proc, int(line.split()[1])


class NodeServer:
    """What tests/client/run.py's run_files needs of a server."""

    def __init__(self, port, proc):
        self.port, self.proc = port, proc

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def log_tail(self, n=25):
        return "(the node server's output is not kept)"


def client_suite(config):
    """tests/client's postgrest-js files against a node:http server using the addon."""
    global passed, failed, skipped_count
    clients = tempfile.mkdtemp(prefix="pgrest-node-client-")
    proc = None
    try:
        why = client_run.install(clients)
        if why is not None:
            print("node: client suite skipped (%s)" % why)
            skipped_count += 1
            return
        shutil.copy(os.path.join(HERE, "serve.mjs"), clients)
        # serve.mjs requires 'pgrest' from its working directory: link the
        # package installed in the other directory
        os.symlink(os.path.join(WORK, "node_modules", "pgrest"),
                   os.path.join(clients, "node_modules", "pgrest"))
        for name in os.listdir(client_run.HERE):
            if name.endswith(".mjs"):
                shutil.copy(os.path.join(client_run.HERE, name), clients)
        proc, port = start_node(clients, {**config, "db-schemas": "api, personal",
                                          "db-plan-enabled": "true"})
        import io
        import contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            client_run.run_files(clients, NodeServer(port, proc))
        text = out.getvalue()
        for line in text.splitlines():
            if line.startswith("not ok") or "no summary line" in line:
                print("FAIL client " + line)
        m = re.search(r"^client: (\d+) passed, (\d+) failed", text, re.M)
        if m is None:
            failed += 1
            print(text[-2000:])
            return
        passed += int(m.group(1))
        failed += int(m.group(2))
        print("node: client suite: " + m.group(0))
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        shutil.rmtree(clients, ignore_errors=True)


def frameworks(server_port, config):
    """The handler in Express and Fastify (see serve.mjs), and index.d.ts
    through tsc: the packages pinned in package-lock.json, installed into a
    directory of their own so that the binding's install stays as a user's."""
    global skipped_count
    fw = os.path.join(WORK, "frameworks")
    os.mkdir(fw)
    for name in FRAMEWORK_FILES:
        shutil.copy(os.path.join(HERE, name), fw)
    _, outcome = npm(["ci"], fw)
    if outcome is not None:
        if outcome[0] == "fail":
            report(False, "frameworks install", outcome[1])
        else:
            print("node: Express, Fastify and tsc skipped (%s)" % outcome[1])
            skipped_count += 1
        return
    # serve.mjs and typecheck.ts require 'pgrest' from this directory
    os.symlink(os.path.join(WORK, "node_modules", "pgrest"), os.path.join(fw, "node_modules", "pgrest"))
    for framework in FRAMEWORKS:
        proc, port = start_node(fw, config, framework)
        try:
            node = Target(framework, port, "/rest")
            parity(server_port, node)
            identity(server_port, node)
            streaming(server_port, node)
            empty_header(server_port, node)
            # the mount itself, without a slash after it, is the root ('/')
            compare("%s bare mount %s" % (framework, node.mount),
                    send(server_port, "GET", "/", {}, None),
                    send(port, "GET", node.mount, {}, None))
        finally:
            proc.kill()
            proc.wait()
    r = subprocess.run([os.path.join(fw, "node_modules", ".bin", "tsc"), "--noEmit", "--strict",
                        "--module", "nodenext", "--target", "es2022", "--types", "node",
                        "typecheck.ts"], cwd=fw, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    report(r.returncode == 0, "tsc --noEmit --strict typecheck.ts (index.d.ts)", r.stdout[-3000:])


def prepare_cluster():
    cluster = harness.new_cluster()
    # 200 requests at once need 200 connections besides pgrest-server's.
    with open(os.path.join(cluster.dir, "data", "postgresql.conf"), "a") as f:
        f.write("\nmax_connections = 300\n")
    cluster.stop()
    cluster.resume()
    with open(os.path.join(REPO, "tests", "client", client_run.SCHEMA_FILE)) as f:
        cluster.psql(f.read())
    cluster.psql("CREATE FUNCTION api.node_big(n int) RETURNS SETOF int "
                 "LANGUAGE sql AS 'SELECT generate_series(1, n)'; "
                 "GRANT EXECUTE ON FUNCTION api.node_big(int) TO web_anon; "
                 # a header pgrest answers with an empty value
                 "CREATE FUNCTION api.node_empty_header() RETURNS int LANGUAGE plpgsql AS $$BEGIN "
                 "PERFORM set_config('response.headers', '[{\"X-Empty\": \"\"}]', true); "
                 "RETURN 1; END$$; "
                 "GRANT EXECUTE ON FUNCTION api.node_empty_header() TO web_anon; "
                 # the bulk imports' table (bulk_bodies)
                 "CREATE TABLE api.bulk_rows (id integer PRIMARY KEY, name text NOT NULL, "
                 "score numeric, note text DEFAULT 'none'); "
                 "GRANT ALL ON api.bulk_rows TO web_user")
    return cluster


def main():
    if not os.access(harness.SERVER, os.X_OK):
        print("node: %s not built" % harness.SERVER)
        print("node: 0 passed, 1 failed, 0 skipped")
        return 1
    global WORK
    work = WORK = tempfile.mkdtemp(prefix="pgrest-node-")
    cluster = server = node = None
    try:
        outcome = install(work)
        if outcome is not None:
            if outcome[0] == "skip":
                return skipped(outcome[1])
            report(False, "install", outcome[1])
            return summary()
        report(True, "install")
        for name in SCRIPTS:
            shutil.copy(os.path.join(HERE, name), work)
        cluster = prepare_cluster()
        options = {"jwt-secret": JWT_SECRET, "db-tx-end": "commit-allow-override",
                   "db-aggregates-enabled": "true"}
        server = harness.Server(cluster, cluster.dir, options)
        if server.wait_ready(30) is None:
            report(False, "pgrest-server ready", server.log_tail())
            return summary()
        config = {"db-uri": cluster.db_uri, "db-schemas": "api", "db-anon-role": "web_anon",
                  "db-pool": "4", "db-pool-acquisition-timeout": "5", **options}
        # the OpenAPI document names the host and port it is served on
        node, node_port = start_node(work, {**config, "server-host": "127.0.0.1",
                                            "server-port": str(server.port)})
        target = Target("node:http", node_port)
        parity(server.port, target)
        identity(server.port, target)
        streaming(server.port, target)
        empty_header(server.port, target)
        slow_reader(node_port)
        bulk_bodies(cluster, server.port, node_port)
        reload_on_notify(cluster, node_port)
        cancel_on_disconnect(cluster, node_port)
        node.terminate()
        node.wait(10)
        node = None
        client_suite(config)
        frameworks(server.port, {**config, "server-host": "127.0.0.1", "server-port": str(server.port)})
        for name, extra in [("errors.mjs", {}),
                            ("concurrency.mjs", {"db-pool": "200", "db-pool-acquisition-timeout": "20"}),
                            ("rss.mjs", {"db-pool": "10"})]:
            result = node_script(work, name, {**config, **extra})
            print("node: %s %s" % (name, json.dumps(result)))
            report(result.get("ok") is True, name, json.dumps(result))
        return summary()
    finally:
        if node is not None:
            node.kill()
        if server is not None:
            server.stop()
        if cluster is not None:
            cluster.destroy()
        harness.destroy_template()
        shutil.rmtree(work, ignore_errors=True)


def summary():
    print("node: %d passed, %d failed, %d skipped" % (passed, failed, skipped_count))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
