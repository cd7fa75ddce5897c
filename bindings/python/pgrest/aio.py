"""asyncio on libpgrest's request engine (pgrest_task_*): the task's
database socket is watched with loop.add_reader / add_writer, its timeout
with loop.call_later, and the pool's wake-up comes back to the loop with
call_soon_threadsafe. No thread ever waits on PostgreSQL."""
import asyncio
import ctypes
import itertools

from . import _native
from .context import Response, copy_response, response_head
from .errors import PgrestError

CHUNK = 64 * 1024


class StreamFailed(PgrestError):
    """A streamed body failed after its head was sent (an error mid-stream,
    a cancel): the host must end the transfer abnormally."""


# The wake callback may come from any thread (whichever released a pooled
# connection, with the pool's lock held): it only looks its task up and
# posts to that task's loop. One C callback for the process, an integer key
# as its argument, so no Python object's address goes to C.
_tasks = {}
_keys = itertools.count(1)


@_native.WAKE
def _wake(arg):
    task = _tasks.get(arg or 0)
    if task is None:
        return
    try:
        task.loop.call_soon_threadsafe(task.woken)
    except RuntimeError:    # the loop is closed: nobody waits any more
        pass


# Tasks cancelled half-way finish in the background (their arena must live
# until DONE); kept here so they are not garbage-collected.
_draining = set()


class Task:
    """One request in the engine, driven from the running loop. Owns its
    arena, which close() frees (always call it: `try: ... finally:`)."""

    def __init__(self, ctx, method, path, query="", headers=(), body=b"", identity=None,
                 streaming=False, body_follows=False, stream_body_threshold=None):
        """body_follows: the body comes in chunks after the start
        (write_body, end_body) instead of body; stream_body_threshold (with
        body_follows; None: never) lets a large bulk POST stream into
        PostgreSQL past that many bytes (0: the library's default, 1 MiB;
        pgrest_request_allow_streamed_body, docs/bulk-import.md)."""
        self.ctx = ctx
        self.lib = ctx.lib
        self.loop = asyncio.get_running_loop()
        self._waiter = None
        self._buf = None
        self.arena = self.lib.pgrest_arena_new(0)
        if not self.arena:
            raise MemoryError("pgrest_arena_new")
        try:
            req = ctx.build_request(self.arena, method, path, query, headers, body, identity)
            if streaming:
                self.lib.pgrest_request_allow_streaming(req, 0)
            if body_follows:
                self.lib.pgrest_request_body_follows(req)
                if stream_body_threshold is not None:
                    self.lib.pgrest_request_allow_streamed_body(req, stream_body_threshold)
            self.key = next(_keys)
            _tasks[self.key] = self
            self.ptr = self.lib.pgrest_task_start(ctx.ptr, self.arena, req, _wake, self.key)
            if not self.ptr:
                raise MemoryError("pgrest_task_start")
        except BaseException:
            self._free()
            raise
        self.state = self.lib.pgrest_task_wait_state(self.ptr)

    # ---- waiting ----------------------------------------------------------

    def woken(self):
        """On the loop: a watched event happened (socket, timer, pool)."""
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait(self):
        """Waits for what the last advance asked for, or its timeout."""
        timeout = self.lib.pgrest_task_timeout_ms(self.ptr)
        if timeout == 0:
            return
        loop = self.loop
        self._waiter = loop.create_future()
        fd = self.lib.pgrest_task_socket(self.ptr)
        timer = loop.call_later(timeout / 1000.0, self.woken) if timeout > 0 else None
        watching = fd >= 0 and self.state in (_native.TASK_WAIT_READ, _native.TASK_WAIT_WRITE)
        if watching:
            loop.add_reader(fd, self.woken)    # WAIT_WRITE: writable or readable
            if self.state == _native.TASK_WAIT_WRITE:
                loop.add_writer(fd, self.woken)
        try:
            await self._waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()
            if watching:
                loop.remove_reader(fd)
                loop.remove_writer(fd)

    async def run(self):
        """Advances until the response (or a streamed response's head) is
        ready; returns the task's wait state (DONE or BODY)."""
        while self.state not in (_native.TASK_DONE, _native.TASK_BODY):
            await self._wait()
            self.state = self.lib.pgrest_task_advance(self.ptr)
        return self.state

    # ---- a body in chunks (body_follows) ------------------------------------

    @property
    def done(self):
        return self.state == _native.TASK_DONE

    async def _until_wants_body(self):
        """Backpressure: advances as the wait state says until the task
        wants its body again (or is DONE)."""
        while self.state not in (_native.TASK_DONE, _native.TASK_WANTS_BODY):
            await self._wait()
            self.state = self.lib.pgrest_task_advance(self.ptr)

    async def write_body(self, data):
        """Feeds the next bytes of the body. PGREST_AGAIN (the chunk was not
        taken) waits for the task and offers the same bytes again. Returns
        False once the task is DONE: answered before the whole body (a bad
        row, 413, ...); the host then stops feeding and sends the answer."""
        data = bytes(data)
        while True:
            await self._until_wants_body()
            if self.state == _native.TASK_DONE:
                return False
            rc = self.lib.pgrest_task_write_body(self.ptr, data, len(data), None)
            self.state = self.lib.pgrest_task_wait_state(self.ptr)
            if rc != _native.AGAIN:
                return self.state != _native.TASK_DONE
            await self._after_again()

    async def end_body(self):
        """The body is complete; then run() as usual."""
        while True:
            await self._until_wants_body()
            if self.state == _native.TASK_DONE:
                return
            rc = self.lib.pgrest_task_end_body(self.ptr, None)
            self.state = self.lib.pgrest_task_wait_state(self.ptr)
            if rc != _native.AGAIN:
                return
            await self._after_again()

    async def _after_again(self):
        """After PGREST_AGAIN the task waits for its socket or the pool; one
        that still shows WANTS_BODY is advanced once, never spun on."""
        if self.state == _native.TASK_WANTS_BODY:
            await asyncio.sleep(0)
            self.state = self.lib.pgrest_task_advance(self.ptr)

    # ---- the answer ---------------------------------------------------------

    @property
    def streamed(self):
        resp = self.lib.pgrest_task_response(self.ptr)
        return bool(resp) and bool(self.lib.pgrest_response_streamed(resp))

    def head(self):
        """(status, reason, headers) once run() returned."""
        resp = self.lib.pgrest_task_response(self.ptr)
        if not resp:
            raise MemoryError("pgrest_task_response")
        return response_head(self.lib, resp)

    def response(self):
        """The whole buffered response once DONE."""
        resp = self.lib.pgrest_task_response(self.ptr)
        if not resp:
            raise MemoryError("pgrest_task_response")
        return copy_response(self.lib, resp)

    async def body_chunks(self):
        """The body of a streamed response, chunk by chunk, fetching more
        rows only as chunks are taken (the engine's backpressure)."""
        if self._buf is None:
            self._buf = ctypes.create_string_buffer(CHUNK)
        while True:
            n = self.lib.pgrest_task_read_body(self.ptr, self._buf, CHUNK)
            if n == _native.BODY_END:
                return
            if n == _native.BODY_FAILED:
                raise StreamFailed("the streamed response failed after its head was sent")
            if n > 0:
                yield ctypes.string_at(self._buf, n)
            self.state = self.lib.pgrest_task_advance(self.ptr)
            if n == 0:
                await self.run()

    # ---- the end ------------------------------------------------------------

    def close(self):
        """Frees the task. One not yet DONE (the client went away, the
        coroutine was cancelled) is cancelled and finishes in the
        background, where its connection goes back to the pool clean."""
        if not self.arena:
            return
        if self.state == _native.TASK_DONE:
            self._free()
            return
        self.state = self.lib.pgrest_task_cancel(self.ptr)
        if self.state == _native.TASK_DONE:
            self._free()
            return
        drain = self.loop.create_task(self._drain())
        _draining.add(drain)
        drain.add_done_callback(_draining.discard)

    async def _drain(self):
        try:
            buf = ctypes.create_string_buffer(CHUNK)
            while self.state != _native.TASK_DONE:
                if self.state == _native.TASK_BODY:   # a cancelled stream's leftovers
                    self.lib.pgrest_task_read_body(self.ptr, buf, CHUNK)
                else:
                    await self._wait()
                self.state = self.lib.pgrest_task_advance(self.ptr)
        finally:
            self._free()

    def _free(self):
        _tasks.pop(getattr(self, "key", None), None)
        if self.arena:
            self.lib.pgrest_arena_free(self.arena)
            self.arena = None


def _is_chunks(body):
    return body is not None and hasattr(body, "__aiter__")


async def request(ctx, method, path, query="", headers=(), body=b"", identity=None,
                  stream_body_threshold=0):
    """Answers one request on the running loop without blocking it: the
    whole response, buffered (pgrest.Response). body: bytes (or str), or an
    async iterable of bytes fed to the task as it yields them (a large bulk
    POST then streams into PostgreSQL past stream_body_threshold bytes; 0:
    the library's default, None: never)."""
    chunks = _is_chunks(body)
    task = Task(ctx, method, path, query, headers, b"" if chunks else body, identity,
                body_follows=chunks, stream_body_threshold=stream_body_threshold)
    try:
        if chunks:
            async for chunk in body:
                if chunk and not await task.write_body(chunk):
                    break
            await task.end_body()
        await task.run()
        return task.response()
    finally:
        task.close()


async def load_schema(ctx):
    """ctx.load_schema() on a worker thread: the load waits on the pool and
    PostgreSQL, which must not happen on the loop."""
    await asyncio.get_running_loop().run_in_executor(None, ctx.load_schema)


__all__ = ["Task", "request", "load_schema", "StreamFailed", "Response"]
