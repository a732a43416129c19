"""A map's changes as Server-Sent Events (``GET /v1/maps/{map_id}/events``): one event
per revision, read from the map's edit log, for game servers that hold paths.

Each stream watches its map's revision in its own worker: the worker's copy follows
the store (every edit made through any worker or replica reaches it), so a stream
needs no channel of its own. When the revision moves, the log records since the last
event sent become events. A stream that cannot read them (a compaction took them into
a snapshot) sends ``reset``: the changes before are unknown, check held paths again.
A deleted map's stream ends with ``deleted``.

Nothing is queued per client: the next event is made when the last one was taken, and
a reader that takes none for ``GRIDPATH_EVENTS_SEND_SECONDS`` is dropped
(``EventStream``); it reconnects with ``Last-Event-ID`` and misses nothing the log
still holds.
"""

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable
from typing import Any

import numpy as np
import orjson
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from service.api.runtime import Runtime
from service.engine import GridMap
from service.engine.layers import Layers
from service.store.editlog import LogRecord

#: Written first: how long a client waits before reconnecting (milliseconds).
RETRY_MS = 1000

#: Set when the server begins to shut down: open streams end (their readers reconnect,
#: to another worker or the restarted one), else they would hold the shutdown forever.
_closing = threading.Event()


def end_event_streams() -> None:
    """End every event stream of this process at its next look (a shutdown's)."""
    _closing.set()


def event(kind: str, data: dict[str, Any], revision: int | None = None) -> bytes:
    """One event's bytes: its ``id`` (the revision, for ``Last-Event-ID``), name, data."""
    head = b"" if revision is None else b"id: %d\n" % revision
    return head + b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def changes(record: LogRecord, width: int, layers: Layers) -> dict[str, Any]:
    """What revision ``record`` changed: the bounding rectangle of its cells (costs or
    classes) on each floor (``[x, y, w, h]``; ``[x, y, w, h, layer]`` on a map of
    several), the links it put, switched or removed, and the profiles it put or
    deleted."""
    rects: list[list[int]] = []
    if record.cells.size:
        xs, ys = record.cells % width, record.cells // width
        rows = layers.height + 1
        floors = ys // rows if layers.count > 1 else np.zeros_like(ys)
        for floor in np.unique(floors).tolist():
            on = floors == floor
            x0, x1 = int(xs[on].min()), int(xs[on].max())
            y0, y1 = int(ys[on].min()) - floor * rows, int(ys[on].max()) - floor * rows
            rect = [x0, y0, x1 - x0 + 1, y1 - y0 + 1]
            rects.append([*rect, floor] if layers.count > 1 else rect)
    links = sorted({op["unlink"] if "unlink" in op else op["link"]["id"]
                    for op in record.links or ()})  # fmt: skip
    profiles = sorted(record.profiles or ())
    return {"revision": record.revision, "rects": rects, "links": links, "profiles": profiles}


async def map_events(runtime: Runtime, map_id: str, since: int | None
                     ) -> AsyncGenerator[bytes, None]:  # fmt: skip
    """The event stream of ``map_id`` after revision ``since`` (None: from now)."""
    settings = runtime.settings
    grid = await runtime.run(_held, runtime, map_id)
    last = grid.revision if since is None else min(since, grid.revision)
    yield b"retry: %d\n\n" % RETRY_MS
    quiet = 0.0
    while not _closing.is_set():
        revision = await _revision(runtime, map_id)
        if revision is None:
            yield event("deleted", {"map_id": map_id})
            return
        if revision <= last:
            await asyncio.sleep(settings.events_poll_seconds)
            quiet += settings.events_poll_seconds
            if quiet >= settings.events_heartbeat_seconds:
                quiet = 0.0
                yield b": heartbeat\n\n"
            continue
        quiet = 0.0
        records = await runtime.run(runtime.store.edits_since, map_id, last)
        records = [r for r in records if r.revision <= revision]
        if not records or records[0].revision != last + 1:
            yield event("reset", {"revision": revision}, revision)
            last = revision
            continue
        shape = runtime.cache.current(map_id) or grid
        for record in records:
            yield event("revision", changes(record, shape.width, shape.layers), record.revision)
            last = record.revision


def _held(runtime: Runtime, map_id: str) -> GridMap:
    """The map, loaded into this worker's cache (whose copy then follows the store).

    Raises:
        UnknownMapError: no such map.
    """
    with runtime.cache.acquire(map_id) as grid:
        return grid


async def _revision(runtime: Runtime, map_id: str) -> int | None:
    """The map's revision here: its cached copy's, or the store's when the cache let it
    go; None once it is deleted."""
    grid = runtime.cache.current(map_id)
    if grid is not None:
        return grid.revision
    state = await runtime.run(runtime.store.log_state, map_id)
    return None if state is None else state.revision


class EventStream(Response):
    """A response sending ``events`` as ``text/event-stream``, each within
    ``send_seconds`` (a reader slower than that is dropped: the stream ends), until they
    end or the client goes; then ``on_close``."""

    media_type = "text/event-stream"

    def __init__(self, events: AsyncGenerator[bytes, None], send_seconds: float,
                 on_close: Callable[[], None] = lambda: None) -> None:  # fmt: skip
        super().__init__(headers={"cache-control": "no-cache", "x-accel-buffering": "no"})
        # No length: the body is open-ended (Starlette counts the empty one as 0).
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.events = events
        self.send_seconds = send_seconds
        self.on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:  # noqa: ARG002
        try:
            await send({"type": "http.response.start", "status": 200,
                        "headers": self.raw_headers})  # fmt: skip
            sending = asyncio.ensure_future(self._send_all(send))
            leaving = asyncio.ensure_future(_disconnect(receive))
            try:
                await asyncio.wait((sending, leaving), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (sending, leaving):
                    task.cancel()
                await asyncio.gather(sending, leaving, return_exceptions=True)
                await self.events.aclose()
        finally:
            self.on_close()

    async def _send_all(self, send: Send) -> None:
        try:
            async for chunk in self.events:
                async with asyncio.timeout(self.send_seconds):
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except TimeoutError:  # a slow reader: dropped, not buffered for
            return


async def _disconnect(receive: Receive) -> None:
    """Return when the client goes."""
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return
