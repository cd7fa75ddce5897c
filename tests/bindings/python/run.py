#!/usr/bin/env python3
"""Runs the Python binding's tests as a user would meet the package: creates
a venv (--system-site-packages: Debian's python3-starlette, -uvicorn,
-httpx, -setuptools, -wheel), installs bindings/python into it with
`pip install --no-build-isolation --no-index`, then runs test_binding.py
with the venv's python from a directory outside the repository.

Then runs the postgrest-js client suite (tests/client/run.py) against the
ASGI app under uvicorn, with the same venv (skipped there without node/npm).

Ends with "python-binding: P passed, F failed, S skipped", both parts summed
(scripts/test.sh adds it to its totals); exit 77 with a skip line when something it needs
is missing (Debian's python3 with the packages above, build/lib/libpgrest.so,
build/server/pgrest-server, PostgreSQL's server binaries).

Environment: PGREST_PYTHON (the python3 whose Debian packages to use,
default /usr/bin/python3 when present), PGREST_BUILD (default build/)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("PGREST_BUILD", os.path.join(REPO, "build"))
NEEDED_MODULES = ["setuptools", "wheel", "pip", "venv", "starlette", "uvicorn", "httpx"]


def skip(reason):
    print("python-binding: skipped (%s)" % reason)
    print("python-binding: 0 passed, 0 failed, 1 skipped")
    return 77


def system_python():
    given = os.environ.get("PGREST_PYTHON")
    if given:
        return given
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def missing_modules(python):
    probe = "import importlib.util as u, sys; print(' '.join(m for m in sys.argv[1:] " \
            "if u.find_spec(m) is None))"
    out = subprocess.run([python, "-c", probe] + NEEDED_MODULES, capture_output=True,
                         text=True, timeout=60)
    return out.stdout.split() if out.returncode == 0 else ["(%s failed)" % python]


def install(python, work):
    """The venv and the package installed in it, as docs/bindings.md says."""
    venv = os.path.join(work, "venv")
    subprocess.run([python, "-m", "venv", "--system-site-packages", venv], check=True,
                   timeout=300)
    # a copy of the package: pip's setuptools build writes build/ and
    # *.egg-info next to the sources
    src = os.path.join(work, "src")
    shutil.copytree(os.path.join(REPO, "bindings", "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "--no-build-isolation",
                    "--no-index", src], check=True, timeout=600)
    return venv


def run_counting(cmd, prefix, **kw):
    """Runs cmd with its output passed through; (passed, failed, skipped)
    from its last "PREFIX: P passed, F failed, S skipped" line (none: one
    failure)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            **kw)
    counts = None
    for line in proc.stdout:
        print(line, end="", flush=True)
        m = re.match(r"^%s: (\d+) passed, (\d+) failed, (\d+) skipped" % prefix, line)
        if m:
            counts = tuple(int(x) for x in m.groups())
    proc.wait()
    if counts is None:
        print("%s: no summary line (exit %d)" % (prefix, proc.returncode))
        return 0, 1, 0
    return counts


def main():
    lib = os.path.join(BUILD, "lib", "libpgrest.so")
    server = os.path.join(BUILD, "server", "pgrest-server")
    for path in (lib, server):
        if not os.path.exists(path):
            return skip("%s not built" % path)
    if shutil.which("pg_config") is None and not os.path.isdir("/usr/lib/postgresql"):
        return skip("no PostgreSQL server binaries")
    python = system_python()
    missing = missing_modules(python)
    if missing:
        return skip("%s lacks %s (Debian: python3-starlette python3-uvicorn python3-httpx "
                    "python3-setuptools python3-wheel python3-venv)" % (python, " ".join(missing)))
    work = tempfile.mkdtemp(prefix="pgrest-pybind-")
    try:
        try:
            venv = install(python, work)
        except subprocess.SubprocessError as e:
            print("python-binding: installing the package failed: %s" % e)
            print("python-binding: 0 passed, 1 failed, 0 skipped")
            return 1
        env = dict(os.environ, PGREST_LIBRARY=lib, PGREST_TEST_VENV=venv,
                   PGREST_SERVER=os.path.join(BUILD, "server", "pgrest-server"))
        venv_python = os.path.join(venv, "bin", "python")
        own = run_counting([venv_python, os.path.join(HERE, "test_binding.py")],
                           "python-binding", cwd=work, env=env)
        print("== postgrest-js and supabase-js against pgrest.asgi.App under uvicorn")
        client = run_counting([sys.executable, os.path.join(REPO, "tests", "client", "run.py")],
                              "client", cwd=work, env=dict(env, PGREST_CLIENT_ASGI_PYTHON=venv_python))
        total = [a + b for a, b in zip(own, client)]
        print("python-binding: %d passed, %d failed, %d skipped" % tuple(total))
        return 1 if total[1] else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
