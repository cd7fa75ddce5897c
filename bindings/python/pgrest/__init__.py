"""pgrest: PostgREST's HTTP semantics in-process, over libpgrest.

    ctx = pgrest.Context({"db-uri": ..., "db-schemas": "api", "db-anon-role": "web_anon"})
    ctx.load_schema()
    ctx.handle("GET", "/artists", "select=name")          # blocking
    await pgrest.aio.request(ctx, "GET", "/artists")      # asyncio, non-blocking
    app = pgrest.asgi.App(ctx)                            # ASGI
"""
from . import aio, asgi
from .context import Context, Identity, Response
from .errors import ConfigError, LibraryNotFound, PgrestError, SchemaError

__version__ = "0.1.0"
__all__ = ["Context", "Identity", "Response", "PgrestError", "ConfigError", "SchemaError",
           "LibraryNotFound", "aio", "asgi"]
