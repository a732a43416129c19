"""Pure ASGI middleware: request bodies (size per route, deadline), ``HEAD`` as
``GET``, and the access log with request metrics, which is also the last resort for
unexpected errors.

Order, outermost first: ``AccessLog`` (sees every request, whatever happens inside,
and turns an exception no handler knows into a 500 without dropping the
connection), then ``HeadAsGet``, then ``RequestBody`` (reads the body before any
route does).
"""

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.auth import KeyRing
from service.api.auth import Scope as KeyScope
from service.api.deps import BODY_KEY
from service.api.errors import ApiError, ErrorCode, render, takes
from service.api.metrics import Metrics
from service.config import Settings

access_log = logging.getLogger("gridpath.access")
log = logging.getLogger("gridpath.api")

#: Status recorded for a request whose client went away before it was answered (as
#: nginx logs it): not a server error.
CLIENT_CLOSED: Final = 499
_NO_BODY: Final = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})
_JSON: Final = "application/json"


def is_upload(method: str, path: str) -> bool:
    """Whether a request uploads a map (``POST /v1/maps``): the one body past the
    batch limit, and one that needs the API key when one is configured."""
    return method == "POST" and path.rstrip("/") == "/v1/maps"


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
        if is_upload(method, path):
            if content_type == _JSON:
                return self.json_upload, "GRIDPATH_MAX_JSON_BODY_BYTES"
            return self.upload, "GRIDPATH_MAX_BODY_BYTES"
        if path.endswith(("/paths", "/edits", "/paths/check", "/paths/repair")):
            return self.batch, "GRIDPATH_MAX_BATCH_BODY_BYTES"
        return self.query, "GRIDPATH_MAX_QUERY_BODY_BYTES"


class RequestBody:
    """Read every request body before the app does: at most its route's limit of
    bytes (``TooBig``, from the ``Content-Length`` alone when one is declared), within
    ``timeout`` seconds for the whole body (``RequestTimeout`` and the connection
    closed: a client that never finishes its body cannot hold a connection). A client
    that disconnects while sending is dropped quietly. The app then reads the body
    from memory, in one message.

    The deadline costs a dictionary entry per request, not a timer: a timer per
    request (``asyncio.timeout``) would be a noticeable share of a short path query's
    cost. A sweep,
    scheduled only while bodies are being read and at most every ``timeout / 4``
    (1 s at most), cancels the reads past their deadline.
    """

    def __init__(self, app: ASGIApp, *, limits: BodyLimits, timeout: float,
                 settings: Settings | None = None) -> None:  # fmt: skip
        self.app = app
        self.limits = limits
        self.timeout = timeout
        self.settings = settings
        # (an upload without a write key is refused before its body is read)
        self.keys = None if settings is None else KeyRing.of(settings)
        self._deadlines: dict[asyncio.Task[Any], float] = {}  # reads under way
        self._expired: set[asyncio.Task[Any]] = set()  # cancelled by the sweep
        self._sweep_every = min(1.0, timeout / 4)
        self._sweep: asyncio.TimerHandle | None = None
        self._sweep_loop: asyncio.AbstractEventLoop | None = None
        self._upload_bytes = 0  # bodies of the uploads being read or handled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared, chunked, content_type = _body_headers(scope)
        if scope["method"] in _NO_BODY and not chunked and declared in (None, "0"):
            await self.app(scope, receive, send)  # nothing to read
            return
        limit, setting = self.limits.for_request(scope["method"], scope["path"], content_type)
        refused = self._refused_upload(scope)
        if refused is not None:
            # Its 401 or 403 comes before its body (up to GRIDPATH_MAX_BODY_BYTES, which
            # anyone who can connect could make the service hold until it was sent).
            await _close_with(refused.code, refused.message, scope, receive, send)
            return
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_big(int(declared), limit, setting, scope, receive, send)
            return
        if not is_upload(scope["method"], scope["path"]):
            await self._read_and_call(limit, setting, scope, receive, send)
            return
        # Each upload holds its body and the grid built from it (some ten times a .npy
        # body): their bodies' bytes in flight are bounded before a byte more is read,
        # as declared (or the route's limit, for a body sent in chunks). One upload is
        # always let in: a budget below the limit cannot starve the largest.
        size = int(declared) if declared is not None and declared.isdigit() else limit
        budget = None if self.settings is None else self.settings.max_upload_bytes_in_flight
        if budget is not None and self._upload_bytes and self._upload_bytes + size > budget:
            await _close_with(ErrorCode.NOT_READY,
                              f"uploads of {self._upload_bytes} bytes are under way; this one's "
                              f"{size} more would pass the {budget} allowed "
                              "(GRIDPATH_MAX_UPLOAD_BYTES_IN_FLIGHT); retry",
                              scope, receive, send)  # fmt: skip
            return
        self._upload_bytes += size  # (the event loop's alone: no lock)
        try:
            await self._read_and_call(limit, setting, scope, receive, send)
        finally:
            self._upload_bytes -= size

    async def _read_and_call(self, limit: int, setting: str, scope: Scope, receive: Receive,
                             send: Send) -> None:  # fmt: skip
        """Read the body (within its limit and the deadline), then call the app."""
        try:
            body = await self._read_in_time(limit, receive)
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
        scope[BODY_KEY] = body  # the routes take it from here (``deps.body_of``)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _refused_upload(self, scope: Scope) -> ApiError | None:
        """Why ``scope``, an upload (the one body past the batch limit), may not be
        read: it lacks the write key every upload needs when keys are configured."""
        if self.keys is None or not is_upload(scope["method"], scope["path"]):
            return None
        authorization = next((value.decode("latin-1") for key, value in scope["headers"]
                              if key == b"authorization"), "")  # fmt: skip
        return self.keys.refusal(authorization, KeyScope.WRITE)

    async def _read_in_time(self, limit: int, receive: Receive) -> bytes | int | None:
        """:meth:`_read` within the deadline.

        Raises:
            TimeoutError: the sweep found it past its deadline.
        """
        task = asyncio.current_task()
        assert task is not None  # every ASGI request runs in a task
        loop = asyncio.get_running_loop()
        self._deadlines[task] = loop.time() + self.timeout
        if self._sweep is None or self._sweep_loop is not loop:  # (a new loop: a new sweep)
            self._sweep_loop = loop
            self._sweep = loop.call_later(self._sweep_every, self._sweep_expired)
        try:
            return await self._read(limit, receive)
        except asyncio.CancelledError:
            if task not in self._expired:
                raise  # cancelled by someone else: pass it on
            self._expired.discard(task)
            task.uncancel()
            raise TimeoutError from None
        finally:
            del self._deadlines[task]

    def _sweep_expired(self) -> None:
        """Cancel the reads past their deadline; come back while any is under way."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for task, deadline in list(self._deadlines.items()):
            if deadline <= now and task not in self._expired and task.get_loop() is loop:
                self._expired.add(task)
                task.cancel()
        self._sweep = None
        if any(task.get_loop() is self._sweep_loop for task in self._deadlines):
            assert self._sweep_loop is not None
            self._sweep = self._sweep_loop.call_later(self._sweep_every, self._sweep_expired)

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


class HeadAsGet:
    """``HEAD`` answered as ``GET`` would be, without the body: the same status and
    headers (``Content-Length`` included). FastAPI's routes take only the methods they
    are declared with, and declaring ``HEAD`` beside each ``GET`` would double every
    operation of the OpenAPI document. A ``HEAD`` on a path no route takes ``GET`` on
    is passed on as it is (``NotFound``, or ``MethodNotAllowed`` naming ``HEAD``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        # (A copy: the access log and metrics outside still see HEAD.)
        routes = scope["app"].router.routes
        inner = {**scope, "method": "GET"} if takes(routes, scope, "GET") else scope

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app(inner, receive, without_body)


class AccessLog:
    """One structured log line and one metrics sample per request, and the last resort
    for unexpected errors: an exception no handler knows becomes a 500 ``Internal``,
    logged once with its traceback. Unlike Starlette's own last resort (which
    re-raises to the server), the connection stays open for the client's next request.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Sequence[BaseRoute] = ()) -> None:
        """``routes``: the API's, to name the route of a request answered before
        routing (a body over its limit, a keyless upload, a body timeout)."""
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = CLIENT_CLOSED  # no exception and no answer: the client went away
        answered = False

        async def capture(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status = message["status"]
                answered = True
            await send(message)

        try:
            await self.app(scope, receive, capture)
        except Exception:
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            status = 500
            if answered:
                raise  # half an answer is out: nothing left but to drop the connection
            await render(ErrorCode.INTERNAL, "internal error")(scope, receive, send)
        finally:
            self._record(scope, status, time.perf_counter() - began)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        template, path_params = _route_of(scope, self.routes)
        self.metrics.request(template, scope["method"], status, seconds)
        if not access_log.isEnabledFor(logging.INFO):
            return
        state: dict[str, Any] = scope.get("state") or {}
        line = {
            "route": template,
            "method": scope["method"],
            "status": status,
            "latency_ms": round(seconds * 1000, 3),
            "map_id": path_params.get("map_id"),
            "expansions": state.get("expansions"),
        }
        access_log.info(orjson.dumps(line).decode())


def _route_of(scope: Scope, routes: Sequence[BaseRoute]) -> tuple[str, dict[str, Any]]:
    """The template of the route a request went to, and its path parameters. A
    request answered before routing is matched against ``routes`` here (in the order
    the router tries them); "(unmatched)" when none has its path."""
    route = scope.get("route")
    if route is not None:
        return route.path, scope.get("path_params") or {}
    for candidate in routes:
        match, child = candidate.matches(scope)
        if match != Match.NONE:
            return getattr(candidate, "path", "(unmatched)"), child.get("path_params") or {}
    return "(unmatched)", {}


def _body_headers(scope: Scope) -> tuple[str | None, bool, str]:
    """``(Content-Length, whether the body is chunked, bare media type)``, in one pass
    over the headers (the server gives them lower-cased). The media type is the first
    Content-Type's, the one the routes read (``Request.headers.get``): the limit must
    be the one of the parser the body meets (with the last one, a second header
    ``text/plain`` gave a JSON body the 128 MiB limit of text)."""
    declared: str | None = None
    chunked = False
    content_type: str | None = None
    for key, value in scope["headers"]:
        if key == b"content-length":
            declared = value.decode("latin-1")
        elif key == b"transfer-encoding":
            chunked = True
        elif key == b"content-type" and content_type is None:
            content_type = value.decode("latin-1").split(";", 1)[0].strip().lower()
    return declared, chunked, content_type or ""
