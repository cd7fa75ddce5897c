"""libpgrest through ctypes: finding the shared library and declaring the
signatures the package uses (every pointer typed, so nothing is truncated
to a C int)."""
import ctypes
import ctypes.util
import os
import subprocess

from .errors import LibraryNotFound

# pgrest_status and pgrest_task_wait (include/pgrest/pgrest.h)
OK = 0
AGAIN = 1
ERR_CONFIG = -4
ERR_SCHEMA = -6
TASK_DONE, TASK_WAIT_CONN, TASK_WAIT_READ, TASK_WAIT_WRITE, TASK_BODY = 0, 1, 2, 3, 4
TASK_WANTS_BODY = 5
BODY_END, BODY_FAILED = -1, -2

ENV_VAR = "PGREST_LIBRARY"


class Error(ctypes.Structure):
    _fields_ = [("http_status", ctypes.c_int), ("code", ctypes.c_char_p),
                ("message", ctypes.c_char_p), ("details", ctypes.c_char_p),
                ("hint", ctypes.c_char_p)]


class Header(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


WAKE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_p = ctypes.c_void_p
_s = ctypes.c_char_p
_int = ctypes.c_int
_size = ctypes.c_size_t
_perr = ctypes.POINTER(Error)
_pp = ctypes.POINTER(ctypes.c_void_p)

SIGNATURES = {
    "pgrest_version": (_s, []),
    "pgrest_arena_new": (_p, [_size]),
    "pgrest_arena_free": (None, [_p]),
    "pgrest_ctx_new": (_p, []),
    "pgrest_ctx_free": (None, [_p]),
    "pgrest_ctx_set": (_int, [_p, _s, _s, _perr]),
    "pgrest_ctx_get": (_s, [_p, _s]),
    "pgrest_config_key_known": (_int, [_s]),
    "pgrest_ctx_reload_config": (_int, [_p, ctypes.POINTER(_s), ctypes.POINTER(_s), _size, _perr]),
    "pgrest_ctx_load_schema": (_int, [_p, _perr]),
    "pgrest_ctx_load_schema_file": (_int, [_p, _s, _perr]),
    "pgrest_ctx_save_schema_file": (_int, [_p, _s, _perr]),
    "pgrest_ctx_start_listener": (_int, [_p, _p, _p, _perr]),
    "pgrest_ctx_stop_listener": (None, [_p]),
    "pgrest_ctx_ready": (_int, [_p]),
    "pgrest_request_new": (_p, [_p, _s, _s, _s]),
    "pgrest_request_add_header_n": (None, [_p, _s, _s, _size]),
    "pgrest_request_set_body": (None, [_p, _s, _size]),
    "pgrest_request_allow_streaming": (None, [_p, _size]),
    "pgrest_request_body_follows": (None, [_p]),
    "pgrest_request_allow_streamed_body": (None, [_p, _size]),
    "pgrest_request_set_auth": (None, [_p, _p]),
    "pgrest_auth_supply": (_int, [_p, _p, _s, _s, _pp, _perr]),
    "pgrest_handle": (_p, [_p, _p, _p]),
    "pgrest_error_response": (_p, [_p, _p, _perr]),
    "pgrest_task_start": (_p, [_p, _p, _p, WAKE, _p]),
    "pgrest_task_advance": (_int, [_p]),
    "pgrest_task_wait_state": (_int, [_p]),
    "pgrest_task_socket": (_int, [_p]),
    "pgrest_task_timeout_ms": (ctypes.c_long, [_p]),
    "pgrest_task_response": (_p, [_p]),
    "pgrest_task_read_body": (ctypes.c_long, [_p, ctypes.c_char_p, _size]),
    "pgrest_task_cancel": (_int, [_p]),
    "pgrest_task_write_body": (_int, [_p, _s, _size, _perr]),
    "pgrest_task_end_body": (_int, [_p, _perr]),
    "pgrest_response_status": (_int, [_p]),
    "pgrest_response_reason": (_s, [_p]),
    "pgrest_response_header_count": (_size, [_p]),
    "pgrest_response_header": (ctypes.POINTER(Header), [_p, _size]),
    "pgrest_response_streamed": (_int, [_p]),
    "pgrest_response_role": (_s, [_p]),
    "pgrest_response_body": (ctypes.POINTER(ctypes.c_char), [_p, ctypes.POINTER(_size)]),
}


def _pkg_config_candidates():
    """libpgrest's directory as pkg-config knows it (an installed library)."""
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "pgrest"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    libdir = out.stdout.strip()
    return [os.path.join(libdir, "libpgrest.so")] if out.returncode == 0 and libdir else []


def candidates(path=None):
    """Where to look, first match wins: the path given, $PGREST_LIBRARY,
    pkg-config, then the system's linker search (ctypes.util)."""
    found = []
    if path:
        found.append(path)
    if os.environ.get(ENV_VAR):
        found.append(os.environ[ENV_VAR])
    found += _pkg_config_candidates()
    name = ctypes.util.find_library("pgrest")
    if name:
        found.append(name)
    return found


def _declare(lib):
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


_loaded = {}


def load(path=None):
    """The loaded library (one per path: a process loads it once)."""
    tried = []
    for candidate in candidates(path):
        if os.path.isdir(candidate):
            candidate = os.path.join(candidate, "libpgrest.so")
        if candidate in _loaded:
            return _loaded[candidate]
        try:
            lib = _declare(ctypes.CDLL(candidate))
        except OSError as e:
            tried.append("%s (%s)" % (candidate, e))
            continue
        _loaded[candidate] = lib
        return lib
    raise LibraryNotFound("libpgrest not found; give its path, set %s, or install it "
                          "where pkg-config finds it. Tried: %s"
                          % (ENV_VAR, "; ".join(tried) or "nothing"))


def text(raw):
    """C text as str; bytes that are no UTF-8 survive as surrogates, so
    raw_bytes(text(x)) == x (header values go back out unchanged)."""
    return None if raw is None else raw.decode("utf-8", "surrogateescape")


def raw_bytes(value):
    return value.encode("utf-8", "surrogateescape")
