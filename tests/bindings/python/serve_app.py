"""The host application the binding tests serve with uvicorn: Starlette with
pgrest.asgi.App mounted under /api (/api-stream and /api-whole: request
bodies streamed past 64 KiB, and never streamed), and a stand-in for the host's auth
middleware that hands a verified identity to the app through the scope.

Configuration: PGREST_TEST_OPTIONS (JSON object of PostgREST options)."""
import asyncio
import json
import os

from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route

import pgrest
import pgrest.asgi

IDENTITY_KEY = "pgrest.identity"


class HostAuth:
    """The host's middleware: a request carrying X-Host-User (which the
    host would have verified: a session, mTLS, its own OAuth) runs as
    web_user with the claims the host chose; others keep PostgREST's JWT
    authentication."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            user = dict(scope.get("headers", [])).get(b"x-host-user")
            if user is not None:
                scope = dict(scope)
                scope[IDENTITY_KEY] = pgrest.Identity(
                    "web_user", {"role": "web_user", "sub": user.decode()})
        await self.app(scope, receive, send)


async def hello(request):
    return PlainTextResponse("the host's own route")


class Ticker:
    """A 10 ms timer on the server's loop, recording how late it fires: the
    loop must stay free while requests wait on PostgreSQL."""
    late = 0.0

    @classmethod
    async def run(cls):
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + 0.010
            await asyncio.sleep(0.010)
            cls.late = max(cls.late, loop.time() - due)

    @classmethod
    async def start(cls):
        cls.task = asyncio.ensure_future(cls.run())


async def ticker(request):
    """The timer's worst lateness since the last call (then reset)."""
    late, Ticker.late = Ticker.late, 0.0
    return JSONResponse({"late_ms": late * 1000})


OPTIONS = json.loads(os.environ["PGREST_TEST_OPTIONS"])
pgrest_app = pgrest.asgi.App(OPTIONS, identity_scope_key=IDENTITY_KEY)
# request bodies: streamed into PostgreSQL past 64 KiB, and never streamed
# (the library collects them whole), for the tests that compare the two
SMALL_POOL = dict(OPTIONS, **{"db-pool": "4"})
stream_app = pgrest.asgi.App(SMALL_POOL, stream_body_threshold=64 * 1024)
whole_app = pgrest.asgi.App(SMALL_POOL, stream_body_threshold=None)
app = HostAuth(Starlette(routes=[Route("/hello", hello), Route("/ticker", ticker),
                                 Mount("/api", app=pgrest_app),
                                 Mount("/api-stream", app=stream_app),
                                 Mount("/api-whole", app=whole_app)],
                         on_startup=[pgrest_app.startup, Ticker.start]))
