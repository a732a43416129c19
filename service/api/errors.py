"""The one error vocabulary of the API and its one renderer.

Every error response is ``{"code": str, "message": str}`` (:class:`ErrorBody`, its
schema; ``schemas`` uses it for a batch's failed slots). The codes form a closed set
(:class:`ErrorCode`), each with one HTTP status; messages name the offending value
and the limit it broke.
"""

import logging
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Final, TypeVar

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from service.engine import (
    EngineError,
    MapTooBigError,
    NotWalkableError,
    PathTooLongError,
    UnitGridTooBigError,
)
from service.engine.errors import LinkNotFoundError
from service.store import (
    CacheBudgetError,
    RevisionTakenError,
    StoreError,
    StoreUnavailableError,
    StoreWriteError,
    UnknownMapError,
)
from service.store.editor import (
    EditContentionError,
    RevisionConflictError,
    WouldDisconnectError,
)

log = logging.getLogger("gridpath.api")


class ErrorCode(StrEnum):
    """Every code the API can answer with."""

    INVALID_QUERY = "InvalidQuery"
    INVALID_VALUE = "InvalidValue"
    NOT_WALKABLE = "NotWalkable"
    MAP_NOT_FOUND = "MapNotFound"
    PROFILE_NOT_FOUND = "ProfileNotFound"
    LINK_NOT_FOUND = "LinkNotFound"
    TOO_BIG = "TooBig"
    UNAUTHORIZED = "Unauthorized"
    FORBIDDEN = "Forbidden"
    UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
    NOT_FOUND = "NotFound"
    METHOD_NOT_ALLOWED = "MethodNotAllowed"
    NOT_READY = "NotReady"
    REQUEST_TIMEOUT = "RequestTimeout"
    MAP_CORRUPT = "MapCorrupt"
    REVISION_CONFLICT = "RevisionConflict"
    WOULD_DISCONNECT = "WouldDisconnect"
    RESUME_EXPIRED = "ResumeExpired"
    INSUFFICIENT_STORAGE = "InsufficientStorage"
    INTERNAL = "Internal"


STATUS: Final[dict[ErrorCode, int]] = {
    ErrorCode.INVALID_QUERY: 422,
    ErrorCode.INVALID_VALUE: 400,
    ErrorCode.NOT_WALKABLE: 400,
    ErrorCode.MAP_NOT_FOUND: 404,
    ErrorCode.PROFILE_NOT_FOUND: 404,
    ErrorCode.LINK_NOT_FOUND: 404,
    ErrorCode.TOO_BIG: 413,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: 415,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.NOT_READY: 503,
    ErrorCode.REQUEST_TIMEOUT: 408,
    ErrorCode.MAP_CORRUPT: 500,
    ErrorCode.REVISION_CONFLICT: 409,
    ErrorCode.WOULD_DISCONNECT: 409,
    ErrorCode.RESUME_EXPIRED: 410,
    ErrorCode.INSUFFICIENT_STORAGE: 507,
    ErrorCode.INTERNAL: 500,
}

DESCRIPTIONS: Final[dict[ErrorCode, str]] = {
    ErrorCode.INVALID_QUERY: "The body or parameters do not match the schema.",
    ErrorCode.INVALID_VALUE: "A value is out of range: coordinates outside the map, "
    "weight < 1, a budget above the server cap, a malformed map.",
    ErrorCode.NOT_WALKABLE: "The start or goal is on a blocked cell.",
    ErrorCode.MAP_NOT_FOUND: "No map has this id.",
    ErrorCode.PROFILE_NOT_FOUND: "The map holds no named profile of this name (the message "
    "lists those it holds); `PUT /v1/maps/{map_id}/profiles/{name}` makes one.",
    ErrorCode.LINK_NOT_FOUND: "An edit closes, opens or removes a link the map does not "
    "have (the message names the edit and the id).",
    ErrorCode.TOO_BIG: "Over a server limit: map cells, body bytes (per route), batch size, "
    "a map whose grid and tables would not fit the map cache, a unit size whose grid "
    "would not fit GRIDPATH_MAX_UNIT_GRID_BYTES, or a path holding more than "
    "GRIDPATH_MAX_PATH_CELLS cells (in a batch: in the slot of the query that would take the "
    "batch's paths past it, and of each query after it, not searched).",
    ErrorCode.UNAUTHORIZED: "A valid `Authorization: Bearer <key>` header is required.",
    ErrorCode.FORBIDDEN: "The key is valid but its scope does not open this route: a 'read' "
    "key on an upload, edit or delete.",
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: "The Content-Type is not one this route accepts.",
    ErrorCode.NOT_FOUND: "No such route.",
    ErrorCode.METHOD_NOT_ALLOWED: "The route does not accept this method.",
    ErrorCode.NOT_READY: "The service is starting (kernels compiling) and did not become "
    "ready within GRIDPATH_READY_WAIT_SECONDS, or a map's cluster tables are still building "
    "(`/clusters`), or a Redis store cannot be reached, or GRIDPATH_MAX_WAITING_WORK "
    "requests already wait for the search threads, or uploads under way hold "
    "GRIDPATH_MAX_UPLOAD_BYTES_IN_FLIGHT, or other services sharing the store kept editing "
    "the map for GRIDPATH_EDIT_RETRY_SECONDS (nothing was done). Retry after the "
    "`Retry-After` seconds.",
    ErrorCode.REQUEST_TIMEOUT: "The request body did not arrive within "
    "GRIDPATH_BODY_TIMEOUT_SECONDS; the connection is closed.",
    ErrorCode.MAP_CORRUPT: "The map's stored grid fails its checksum (see its `health`); it "
    "cannot be served: delete it and upload it again.",
    ErrorCode.REVISION_CONFLICT: "An edit's `if_revision` is not the map's current revision "
    "(the message gives both); nothing was applied.",
    ErrorCode.WOULD_DISCONNECT: "After the edit the `keep_connected` points would not all be "
    "in one island (the message names the first cut off); nothing was applied.",
    ErrorCode.RESUME_EXPIRED: "A 'resume' token this worker holds no search for; the message "
    "says why: 'expired' (GRIDPATH_RESUME_SECONDS since its last slice), 'evicted' "
    "(GRIDPATH_RESUME_BYTES), 'map changed' (a new revision), 'used' (each token goes on "
    "once), 'finished', or 'unknown' (never this worker's: another worker or replica "
    "holds it, or this one restarted). Search again from the unit's position.",
    ErrorCode.INSUFFICIENT_STORAGE: "The store refused the write: its disk is full or "
    "read-only, or failing, or a Redis store is out of memory or cannot persist (the message "
    "names the cause). Nothing was stored; reads are still served, and `/readyz` says "
    "`degraded` with the reason until writes work again. Retry once the operator has made "
    "room.",
    ErrorCode.INTERNAL: "An unexpected error; it is logged, details are not returned.",
}


class ErrorBody(BaseModel):
    """Every error, and a failed query's slot in a batch."""

    code: ErrorCode = Field(description="One of a closed set; see the API description.")
    message: str = Field(description="What was wrong: the offending value and the limit.")


class ApiError(Exception):
    """An expected failure, rendered as ``{"code", "message"}`` with the code's status."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def error_body(code: ErrorCode, message: str) -> dict[str, str]:
    return {"code": code.value, "message": message}


def render(code: ErrorCode, message: str, headers: dict[str, str] | None = None) -> Response:
    """The one renderer: every error response in the service is made here, with the
    headers its code carries (``Retry-After``, ``WWW-Authenticate``) and ``headers``."""
    return Response(
        content=orjson.dumps(error_body(code, message)),
        status_code=STATUS[code],
        media_type="application/json",
        headers={**_HEADERS.get(code, {}), **(headers or {})},
    )


def engine_error_code(exc: EngineError) -> ErrorCode:
    """Engine exceptions map onto four API codes."""
    if isinstance(exc, NotWalkableError):
        return ErrorCode.NOT_WALKABLE
    if isinstance(exc, LinkNotFoundError):
        return ErrorCode.LINK_NOT_FOUND
    if isinstance(exc, MapTooBigError | UnitGridTooBigError | PathTooLongError):
        return ErrorCode.TOO_BIG
    return ErrorCode.INVALID_VALUE


def validation_message(exc: RequestValidationError | ValidationError) -> str:
    """One readable line from pydantic's errors: where, what, and the value given."""
    errors = exc.errors()
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        given = error.get("input")
        got = "" if isinstance(given, dict | list) else f" (got {shown(given)})"
        parts.append(f"{where}: {error.get('msg', 'invalid')}{got}")
    more = len(errors) - 3
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


#: Characters of a bad value an error message repeats: the value is named, but a body
#: that fails to parse (the value pydantic names is the whole body) is not sent back,
#: since its answer would be larger than the body itself.
_SHOWN_CHARS: Final = 80


def shown(value: object) -> str:
    text = repr(value)
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"{text[:_SHOWN_CHARS]}... ({len(text)} characters)"


Model = TypeVar("Model", bound=BaseModel)


def parsed_body(model: type[Model], raw: bytes) -> Model:
    """``raw`` JSON validated as ``model``; ``InvalidQuery`` naming what is wrong."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise ApiError(ErrorCode.INVALID_QUERY, validation_message(exc)) from None


#: Headers some codes carry: how to authenticate, when to retry.
_HEADERS: Final[dict[ErrorCode, dict[str, str]]] = {
    ErrorCode.UNAUTHORIZED: {"WWW-Authenticate": "Bearer"},
    ErrorCode.NOT_READY: {"Retry-After": "1"},
}


async def _api_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return render(exc.code, exc.message)


async def _engine_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, EngineError)
    return render(engine_error_code(exc), str(exc))


async def _validation_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    return render(ErrorCode.INVALID_QUERY, validation_message(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 405:  # with ``Allow`` (HTTP requires one)
        return render(
            ErrorCode.METHOD_NOT_ALLOWED,
            f"{request.method} is not allowed on {request.url.path}",
            headers={"Allow": ", ".join(_allowed(request))},
        )
    if exc.status_code == 404:
        return render(ErrorCode.NOT_FOUND, f"no route {request.method} {request.url.path}")
    log.error("unexpected HTTP error %s: %s", exc.status_code, exc.detail)
    return render(ErrorCode.INTERNAL, "internal error")


#: Methods a route may take (what ``Allow`` may name).
_METHODS: Final = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def _allowed(request: Request) -> list[str]:
    """The methods some route takes on the request's path, found by asking the routes
    as they would be asked (Starlette's own 405 names the first route's only: ``POST``
    for ``/v1/maps``, which has ``GET`` too); ``HEAD`` wherever ``GET`` is (see
    ``middleware.HeadAsGet``)."""
    routes = request.app.router.routes
    taken = {method for method in _METHODS if takes(routes, request.scope, method)}
    if "GET" in taken:
        taken.add("HEAD")
    return [method for method in _METHODS if method in taken]


def takes(routes: Sequence[BaseRoute], scope: Scope, method: str) -> bool:
    """Whether one of ``routes`` takes ``method`` on the path of ``scope``."""
    return any(route.matches({**scope, "method": method})[0] == Match.FULL for route in routes)


async def _unknown_map(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, UnknownMapError)
    return render(ErrorCode.MAP_NOT_FOUND, f"{exc} (deleted while the request ran)")


async def _corrupt_map(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, StoreError)
    return render(
        ErrorCode.MAP_CORRUPT, f"{exc}; the map cannot be served: delete it and upload it again"
    )


async def _store_unavailable(_: Request, exc: Exception) -> Response:
    return render(ErrorCode.NOT_READY, f"{exc}; retry")


async def _write_refused(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, StoreWriteError)
    log.error("%s", exc)
    return render(ErrorCode.INSUFFICIENT_STORAGE, str(exc))


async def _over_cache(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, CacheBudgetError)
    return render(ErrorCode.TOO_BIG, str(exc))


async def _revision_conflict(_: Request, exc: Exception) -> Response:
    return render(ErrorCode.REVISION_CONFLICT, str(exc))


async def _edit_contention(_: Request, exc: Exception) -> Response:
    return render(ErrorCode.NOT_READY, str(exc))


async def _would_disconnect(_: Request, exc: Exception) -> Response:
    return render(ErrorCode.WOULD_DISCONNECT, str(exc))


def install_error_handlers(app: FastAPI) -> None:
    """Expected failures, each to its code. Anything else is caught by the
    ``AccessLog`` middleware: a 500 ``Internal``, the connection kept."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(EngineError, _engine_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(UnknownMapError, _unknown_map)
    app.add_exception_handler(StoreError, _corrupt_map)
    app.add_exception_handler(CacheBudgetError, _over_cache)
    app.add_exception_handler(StoreUnavailableError, _store_unavailable)
    app.add_exception_handler(StoreWriteError, _write_refused)
    app.add_exception_handler(RevisionConflictError, _revision_conflict)
    app.add_exception_handler(RevisionTakenError, _revision_conflict)
    app.add_exception_handler(EditContentionError, _edit_contention)
    app.add_exception_handler(WouldDisconnectError, _would_disconnect)


def error_responses(*codes: ErrorCode) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for a route: each status with the codes it may carry."""
    by_status: dict[int, list[ErrorCode]] = {}
    for code in (*codes, ErrorCode.INTERNAL):
        by_status.setdefault(STATUS[code], []).append(code)
    return {
        status: {
            "model": ErrorBody,
            "description": " ".join(f"`{c.value}`: {DESCRIPTIONS[c]}" for c in group),
        }
        for status, group in sorted(by_status.items())
    }
