"""Pure ASGI middleware: the body-size limit, and the access log with request metrics."""

import logging
import time
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.errors import ErrorCode, render
from service.api.metrics import Metrics

access_log = logging.getLogger("gridpath.access")


class BodyLimit:
    """Reject bodies over ``limit`` bytes with ``TooBig`` before the app reads them.

    A declared ``Content-Length`` is checked as it stands (the HTTP server holds
    the client to it); a body without one (chunked) is read here, counted, and
    replayed to the app in one message.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > self.limit:
                await self._reject(int(declared), scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        chunks, total = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.limit:
                await self._reject(total, scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _reject(self, size: int, scope: Scope, receive: Receive, send: Send) -> None:
        response = render(
            ErrorCode.TOO_BIG,
            f"body of {'at least ' if size else ''}{size} bytes exceeds the limit of "
            f"{self.limit} bytes (GRIDPATH_MAX_BODY_BYTES)",
        )
        await response(scope, receive, send)


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
        status = 500

        async def capture(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, capture)
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
