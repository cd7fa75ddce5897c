"""jwt-jwks-uri (docs/operations.md): signing keys fetched from a local
HTTPS server whose certificate comes from a CA made here with the openssl
CLI and given to libcurl by jwt-jwks-cafile. The server rotates its keys;
tokens are RS256, signed with `openssl dgst`."""
import base64
import hashlib
import http.server
import json
import os
import re
import shutil
import ssl
import subprocess
import tempfile
import threading
import time

from harness import ServerTestCase, free_tcp_port, hs256_token

JWT_SECRET = "reallyreallyreallyreallyverysafe"


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class SigningKey:
    """An RSA key made by openssl: its public JWK and RS256 tokens."""

    def __init__(self, directory, kid):
        self.kid = kid
        self.path = os.path.join(directory, kid + ".pem")
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                "-out", self.path, cwd=directory)
        out = subprocess.run(["openssl", "rsa", "-in", self.path, "-noout", "-modulus"],
                             check=True, capture_output=True, text=True).stdout
        n = bytes.fromhex(out.strip().split("=", 1)[1])
        self.jwk = {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                    "n": b64url(n), "e": b64url((65537).to_bytes(3, "big"))}

    def token(self, claims, kid=None):
        head = b64url(json.dumps({"alg": "RS256", "typ": "JWT",
                                  "kid": kid or self.kid}).encode())
        body = b64url(json.dumps(claims).encode())
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.path],
                             input=(head + "." + body).encode(), check=True,
                             capture_output=True).stdout
        return head + "." + body + "." + b64url(sig)


def make_pki(directory):
    """A CA and a certificate for 127.0.0.1 signed by it."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=pgrest test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr",
            "-subj", "/CN=127.0.0.1", cwd=directory)
    with open(os.path.join(directory, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "ext.cnf",
            cwd=directory)


class JwksServer:
    """An HTTPS server of one JWK Set; keys, delay and max-age change
    while it runs; stop() takes it down (connections refused)."""

    def __init__(self, directory):
        self.keys = []
        self.delay = 0
        self.max_age = None
        self.hits = 0
        self.stopping = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.hits += 1
                if outer.delay:
                    outer.stopping.wait(outer.delay)
                body = json.dumps({"keys": list(outer.keys)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if outer.max_age is not None:
                    self.send_header("Cache-Control", "public, max-age=%d" % outer.max_age)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.port = free_tcp_port()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(directory, "srv.pem"), os.path.join(directory, "srv.key"))
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.up = True

    @property
    def uri(self):
        return "https://127.0.0.1:%d/.well-known/jwks.json" % self.port

    def stop(self):
        if self.up:
            self.up = False
            self.stopping.set()
            self.httpd.shutdown()
            self.httpd.server_close()


class JwksTestCase(ServerTestCase):
    START_SERVER = False
    KEYS = ("k1", "k2", "k3")

    @classmethod
    def setUpClass(cls):
        cls.pki = tempfile.mkdtemp(prefix="pgrest-jwks-")
        make_pki(cls.pki)
        cls.signing = {kid: SigningKey(cls.pki, kid) for kid in cls.KEYS}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.pki, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.jwks = JwksServer(self.pki)
        self.addCleanup(self.jwks.stop)

    def serve(self, *kids):
        self.jwks.keys = [self.signing[k].jwk for k in kids]

    def start(self, **extra):
        cfg = {"jwt-jwks-uri": self.jwks.uri,
               "jwt-jwks-cafile": os.path.join(self.pki, "ca.pem"),
               "jwt-jwks-min-refresh": "1", "jwt-jwks-timeout": "2"}
        cfg.update(extra)
        return self.start_server(**cfg)

    def get_notes(self, kid, sign_kid=None):
        """GET /private_notes as alice with a token of key kid."""
        token = self.signing[sign_kid or kid].token({"role": "web_user", "sub": "alice"}, kid)
        return self.server.get("/private_notes",
                               headers={"Authorization": "Bearer " + token}, timeout=60)

    def metric(self, name):
        body = self.server.admin("/metrics").body
        m = re.search(r"^%s (\S+)$" % name, body, re.M)
        self.assertIsNotNone(m, body)
        return float(m.group(1))

    def poll(self, predicate, seconds=10):
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            if predicate():
                return True
            time.sleep(0.2)
        return False


class JwksRotationTest(JwksTestCase):
    def test_rotation_old_key_until_it_leaves_new_kid_without_restart(self):
        self.serve("k1")
        self.start(**{"jwt-secret": JWT_SECRET})
        r = self.get_notes("k1")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(len(r.json()), 2, r)
        # jwt-secret verifies next to the fetched keys
        hs = hs256_token({"role": "web_user", "sub": "alice"}, JWT_SECRET)
        r = self.server.get("/private_notes", headers={"Authorization": "Bearer " + hs})
        self.assertEqual(r.status, 200, r)
        # a token signed by a key the server does not publish
        r = self.get_notes("k1", sign_kid="k3")
        self.assertEqual(r.status, 401, r)
        self.assertEqual(r.json()["code"], "PGRST301", r)

        # rotation, step 1: k2 joins; a k2 token is picked up, no restart
        self.serve("k1", "k2")
        self.assertTrue(self.poll(lambda: self.get_notes("k2").status == 200),
                        self.server.log_tail())
        self.assertEqual(self.get_notes("k1").status, 200)

        # step 2: k1 leaves; once the server refetched (an unknown kid asks
        # for it) the k1 token, cached as verified, is refused
        self.serve("k2")
        def k1_refused():
            self.get_notes("k3")          # unknown kid: a refresh
            return self.get_notes("k1").status == 401
        self.assertTrue(self.poll(k1_refused), self.server.log_tail())
        self.assertEqual(self.get_notes("k2").status, 200)
        r = self.get_notes("k1")
        self.assertEqual(r.json()["details"], "No suitable key was found to decode the JWT", r)
        self.assertEqual((r.status, r.json()["code"]), (401, "PGRST301"), r)
        self.assertGreaterEqual(self.metric("pgrst_jwks_fetches_total"), 3)
        self.assertEqual(self.metric("pgrst_jwks_fetch_failures_total"), 0)

    def test_max_age_expiry_refetches(self):
        self.serve("k1")
        self.jwks.max_age = 1
        self.start()
        self.assertEqual(self.get_notes("k1").status, 200)
        hits = self.jwks.hits
        # no request asks: max-age alone brings the refetches
        self.assertTrue(self.poll(lambda: self.jwks.hits >= hits + 2))
        self.serve("k2")
        self.assertTrue(self.poll(lambda: self.get_notes("k1").status == 401))


class JwksServerDownTest(JwksTestCase):
    SPLIT_LOGS = True

    def test_cached_keys_verify_while_the_server_is_down(self):
        self.serve("k1")
        self.jwks.max_age = 1
        # no JWT cache: every request verifies with the keys kept
        self.start(**{"jwt-cache-max-entries": "0"})
        self.assertEqual(self.get_notes("k1").status, 200)
        self.assertEqual(self.metric("pgrst_jwks_fetch_failures_total"), 0)
        self.jwks.stop()
        self.assertTrue(self.poll(lambda: self.metric("pgrst_jwks_fetch_failures_total") >= 2))
        for _ in range(3):
            self.assertEqual(self.get_notes("k1").status, 200)
        t0 = time.monotonic()
        r = self.get_notes("k2")
        self.assertEqual(r.status, 401, r)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertGreater(self.metric("pgrst_jwks_fetches_total"),
                           self.metric("pgrst_jwks_fetch_failures_total"))
        with open(self.server.err_path, encoding="utf-8", errors="replace") as f:
            log = f.read()
        self.assertIn("Failed to fetch the JWKS from " + self.jwks.uri, log)


class JwksSlowServerTest(JwksTestCase):
    def test_a_slow_server_never_delays_a_request_beyond_the_timeout(self):
        self.serve("k1")
        self.start(**{"jwt-jwks-timeout": "1"})
        self.assertEqual(self.get_notes("k1").status, 200)
        self.jwks.delay = 30
        self.serve("k1", "k2")
        time.sleep(1.5)                        # past min-refresh
        for kid, status in (("k2", 401), ("k1", 200), ("k3", 401)):
            t0 = time.monotonic()
            r = self.get_notes(kid)
            self.assertEqual(r.status, status, r)
            self.assertLess(time.monotonic() - t0, 10)
        self.assertTrue(self.poll(lambda: self.metric("pgrst_jwks_fetch_failures_total") >= 1))

    def test_slow_at_start(self):
        self.jwks.delay = 30
        self.serve("k1")
        self.start(**{"jwt-jwks-timeout": "1"})
        t0 = time.monotonic()
        r = self.get_notes("k1")
        self.assertEqual(r.status, 401, r)
        self.assertLess(time.monotonic() - t0, 10)
        self.jwks.delay = 0
        # the fetch after the failed one (min-refresh later) brings k1
        self.assertTrue(self.poll(lambda: self.get_notes("k1").status == 200, 20),
                        self.server.log_tail())
