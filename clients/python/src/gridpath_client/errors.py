"""Exceptions: one class per error code of the service, plus the client's own.

The service answers every error as ``{"code": str, "message": str}``; the codes form a
closed set, each with one HTTP status. :func:`error_for` turns such a body into an
instance of the class named like its code (``MapNotFound``, ``NotWalkable``, ...); a
code this client does not know yet becomes a plain :class:`GridpathError`, so a newer
server never breaks an older client.

Failures below HTTP (no connection, no answer in time) are :class:`TransportError`
subclasses, and an answer that is not what the API documents is
:class:`UnexpectedResponse`: every exception this package raises is a
:class:`GridpathError`.
"""

from typing import ClassVar, Final


class GridpathError(Exception):
    """Base of every error the client raises or returns in a batch.

    Attributes:
        code: The service's error code (``"MapNotFound"``...), or for the client's own
            errors the class name (``"ConnectionFailed"``, ``"TimedOut"``...).
        message: What went wrong; the service's messages name the offending value and
            the limit it broke.
        status: The HTTP status of the answer; in a batch, where the request as a whole
            succeeded, the status the code has on its own; ``None`` when no answer came.
    """

    CODE: ClassVar[str] = "GridpathError"
    STATUS: ClassVar[int | None] = None

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None):
        super().__init__(message)
        self.code = code if code is not None else self.CODE
        self.message = message
        self.status = status if status is not None else self.STATUS

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# -- the service's codes (service/api/errors.py: ErrorCode and STATUS) ------------------


class InvalidQuery(GridpathError):
    """The body or parameters do not match the schema (types, unknown fields or names)."""

    CODE = "InvalidQuery"
    STATUS = 422


class InvalidValue(GridpathError):
    """A value is out of range (coordinates outside the map, weight < 1, a budget over
    the server cap) or a map's content is malformed."""

    CODE = "InvalidValue"
    STATUS = 400


class NotWalkable(GridpathError):
    """The start or a goal is on a blocked cell (or has no room for the unit's size)."""

    CODE = "NotWalkable"
    STATUS = 400


class MapNotFound(GridpathError):
    """No map has this id (or it was deleted while the request ran)."""

    CODE = "MapNotFound"
    STATUS = 404


class ProfileNotFound(GridpathError):
    """The map holds no named profile of this name (the message lists those it holds);
    ``put_profile`` makes one."""

    CODE = "ProfileNotFound"
    STATUS = 404


class LinkNotFound(GridpathError):
    """An edit opens, closes or removes a link the map does not have."""

    CODE = "LinkNotFound"
    STATUS = 404


class TooBig(GridpathError):
    """Over a server limit: map cells, body bytes, batch size, cache or table bounds."""

    CODE = "TooBig"
    STATUS = 413


class Unauthorized(GridpathError):
    """The service has API keys and the request's bearer key is missing or wrong."""

    CODE = "Unauthorized"
    STATUS = 401


class Forbidden(GridpathError):
    """The key is valid but its scope does not open the route: a read key on an
    upload, edit or delete."""

    CODE = "Forbidden"
    STATUS = 403


class UnsupportedMediaType(GridpathError):
    """An upload's Content-Type is not one the service accepts."""

    CODE = "UnsupportedMediaType"
    STATUS = 415


class NotFound(GridpathError):
    """No such route (an older server, or a base URL with a wrong path)."""

    CODE = "NotFound"
    STATUS = 404


class MethodNotAllowed(GridpathError):
    """The route does not take this method."""

    CODE = "MethodNotAllowed"
    STATUS = 405


class NotReady(GridpathError):
    """The service is still starting, or a map's tables are building. Retried by the
    client (honouring ``Retry-After``) until its retries or retry deadline run out."""

    CODE = "NotReady"
    STATUS = 503


class RequestTimeout(GridpathError):
    """The service did not receive the whole body in time (its own timeout, not the
    client's: that one is :class:`TimedOut`)."""

    CODE = "RequestTimeout"
    STATUS = 408


class MapCorrupt(GridpathError):
    """The map's stored grid fails its checksum: delete it and upload it again."""

    CODE = "MapCorrupt"
    STATUS = 500


class RevisionConflict(GridpathError):
    """An edit's ``if_revision`` is not the map's current revision; nothing was applied."""

    CODE = "RevisionConflict"
    STATUS = 409


class WouldDisconnect(GridpathError):
    """An edit would cut the ``keep_connected`` points apart; nothing was applied."""

    CODE = "WouldDisconnect"
    STATUS = 409


class ResumeExpired(GridpathError):
    """A ``resume`` token the service holds no search for (expired, evicted, used, the
    map changed, or another worker's); the message says which. Search again."""

    CODE = "ResumeExpired"
    STATUS = 410


class InsufficientStorage(GridpathError):
    """The service's store refused the write (a full or read-only disk); nothing was
    stored, reads still work: retry once there is room."""

    CODE = "InsufficientStorage"
    STATUS = 507


class Internal(GridpathError):
    """Anything unexpected on the server (logged there; no details are returned)."""

    CODE = "Internal"
    STATUS = 500


#: The class of each of the service's error codes.
ERROR_CLASSES: Final[dict[str, type[GridpathError]]] = {
    cls.CODE: cls
    for cls in (
        InvalidQuery,
        InvalidValue,
        NotWalkable,
        MapNotFound,
        ProfileNotFound,
        LinkNotFound,
        TooBig,
        Unauthorized,
        Forbidden,
        UnsupportedMediaType,
        NotFound,
        MethodNotAllowed,
        NotReady,
        RequestTimeout,
        MapCorrupt,
        RevisionConflict,
        WouldDisconnect,
        ResumeExpired,
        InsufficientStorage,
        Internal,
    )
}


def error_for(code: str, message: str, status: int | None = None) -> GridpathError:
    """The exception for an error body: its code's class, or the base class for a code
    this client does not know (``code`` is kept either way)."""
    cls = ERROR_CLASSES.get(code, GridpathError)
    return cls(message, code=code, status=status)


# -- the client's own ---------------------------------------------------------------------


class UnexpectedResponse(GridpathError):
    """An answer that is not what the API documents: a proxy's HTML error page, a body
    that is not JSON, a field missing."""

    CODE = "UnexpectedResponse"


class TransportError(GridpathError):
    """No answer came: the request failed below HTTP. ``attempts`` says how many were
    made (the first one and its retries)."""

    CODE = "TransportError"

    def __init__(self, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.attempts = attempts


class ConnectionFailed(TransportError):
    """The client could not connect, or the connection broke before an answer."""

    CODE = "ConnectionFailed"


class TimedOut(TransportError):
    """Connected, but the answer did not come within the client's timeout (or no pooled
    connection became free in time)."""

    CODE = "TimedOut"
