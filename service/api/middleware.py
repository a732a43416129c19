"""Pure ASGI middleware: request bodies (size per route, deadline), the access log
with request metrics, and the last resort for unexpected errors.

Order, outermost first: ``AccessLog`` (sees every request, whatever happens
inside), ``RequestBody`` (reads the body before any route does), ``Unexpected``
(turns an exception no handler knows into a 500 without dropping the connection).
"""

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Final

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.errors import ErrorCode, render
from service.api.metrics import Metrics
from service.config import Settings

access_log = logging.getLogger("gridpath.access")
log = logging.getLogger("gridpath.api")

#: Status recorded for a request whose client went away before it was answered (as
#: nginx logs it): not a server error.
CLIENT_CLOSED: Final = 499
_NO_BODY: Final = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})
_JSON: Final = "application/json"


@dataclass(frozen=True, slots=True)
class BodyLimits:
    """The largest body each kind of request may send, and the setting that says so.

    Every body is bounded before it is parsed: a batch is far smaller than a map,
    and JSON (parsed holding the interpreter lock) smaller than a binary map.
    """

    upload: int
    json_upload: int
    batch: int
    query: int

    @classmethod
    def of(cls, settings: Settings) -> "BodyLimits":
        return cls(settings.max_body_bytes, settings.max_json_body_bytes,
                   settings.max_batch_body_bytes, settings.max_query_body_bytes)  # fmt: skip

    def for_request(self, method: str, path: str, content_type: str) -> tuple[int, str]:
        """``(limit in bytes, its setting)`` for a request's body."""
        if method == "POST" and path.rstrip("/") == "/v1/maps":
            if content_type == _JSON:
                return self.json_upload, "GRIDPATH_MAX_JSON_BODY_BYTES"
            return self.upload, "GRIDPATH_MAX_BODY_BYTES"
        if path.endswith("/paths"):
            return self.batch, "GRIDPATH_MAX_BATCH_BODY_BYTES"
        return self.query, "GRIDPATH_MAX_QUERY_BODY_BYTES"


class RequestBody:
    """Read every request body before the app does: at most its route's limit of
    bytes (``TooBig``, from the ``Content-Length`` alone when one is declared), within
    ``timeout`` seconds for the whole body (``RequestTimeout`` and the connection
    closed: a client that never finishes its body cannot hold a connection). A client
    that disconnects while sending is dropped quietly. The app then reads the body
    from memory, in one message.
    """

    def __init__(self, app: ASGIApp, *, limits: BodyLimits, timeout: float) -> None:
        self.app = app
        self.limits = limits
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        chunked = _header(scope, b"transfer-encoding") is not None
        if scope["method"] in _NO_BODY and not chunked and declared in (None, "0"):
            await self.app(scope, receive, send)  # nothing to read
            return
        content_type = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
        limit, setting = self.limits.for_request(scope["method"], scope["path"], content_type)
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_big(int(declared), limit, setting, scope, receive, send)
            return
        try:
            async with asyncio.timeout(self.timeout):
                body = await self._read(limit, receive)
        except TimeoutError:
            await _close_with(ErrorCode.REQUEST_TIMEOUT,
                              f"the request body did not arrive within {self.timeout:g} s "
                              "(GRIDPATH_BODY_TIMEOUT_SECONDS)", scope, receive, send)  # fmt: skip
            return
        if body is None:  # the client went away
            log.info("client disconnected while sending %s %s", scope["method"], scope["path"])
            return
        if isinstance(body, int):
            await self._too_big(body, limit, setting, scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    @staticmethod
    async def _read(limit: int, receive: Receive) -> bytes | int | None:
        """The whole body; its size so far once it passes ``limit``; None on a
        disconnect."""
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > limit:
                return total
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    @staticmethod
    async def _too_big(size: int, limit: int, setting: str, scope: Scope, receive: Receive,
                       send: Send) -> None:  # fmt: skip
        await _close_with(ErrorCode.TOO_BIG,
                          f"body of at least {size} bytes exceeds the limit of {limit} bytes "
                          f"for this route ({setting})", scope, receive, send)  # fmt: skip


async def _close_with(code: ErrorCode, message: str, scope: Scope, receive: Receive, send: Send
                      ) -> None:  # fmt: skip
    """Answer with an error and close the connection: the rest of the body is unread."""
    response = render(code, message, {"Connection": "close"})
    await response(scope, receive, send)


class Unexpected:
    """The last resort: an exception no handler knows becomes a 500 ``Internal``,
    logged once with its traceback. Unlike Starlette's own (which re-raises to the
    server), the connection stays open for the client's next request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            if started:
                raise  # half an answer is out: nothing left but to drop the connection
            await render(ErrorCode.INTERNAL, "internal error")(scope, receive, send)


class AccessLog:
    """One structured log line and one metrics sample per request."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = 500  # an exception escapes: the server will answer 500 or drop it
        answered = False

        async def capture(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status = message["status"]
                answered = True
            await send(message)

        try:
            await self.app(scope, receive, capture)
            if not answered:  # no exception and no answer: the client went away
                status = CLIENT_CLOSED
        finally:
            self._record(scope, status, time.perf_counter() - began)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path", None) or "(unmatched)"
        self.metrics.request(template, scope["method"], status, seconds)
        if not access_log.isEnabledFor(logging.INFO):
            return
        state: dict[str, Any] = scope.get("state") or {}
        line = {
            "route": template,
            "method": scope["method"],
            "status": status,
            "latency_ms": round(seconds * 1000, 3),
            "map_id": (scope.get("path_params") or {}).get("map_id"),
            "expansions": state.get("expansions"),
        }
        access_log.info(orjson.dumps(line).decode())


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None
