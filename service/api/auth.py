"""Who may call what: the API keys, their scopes, and the check every route makes.

A service with no key configured is open. With one, every ``/v1`` route needs a key
of its scope: ``read`` (queries, fields, pictures, listing, grid) or ``write``
(everything); ``GRIDPATH_API_KEY_READS=false`` opens the reads explicitly. The probes
(``/healthz``, ``/readyz``) are always open; ``/metrics`` needs
``GRIDPATH_METRICS_KEY`` when that is set. Several keys may hold one scope, so a key
is rotated by adding the new one, moving the clients, then removing the old one.
"""

import secrets
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from service.api.errors import ApiError, ErrorCode
from service.config import Settings, parse_api_keys


class Scope(IntEnum):
    """What a key opens; a write key opens the reads too."""

    READ = 1
    WRITE = 2


#: The message of a request without a key it needs (never the key itself).
NO_KEY: Final = (
    "missing or wrong API key: send 'Authorization: Bearer <key>' "
    "(GRIDPATH_API_KEYS, GRIDPATH_API_KEY)"
)
#: The message of a read key on a write route.
READ_ONLY_KEY: Final = (
    "this key has the 'read' scope; uploads, edits and deletes need a 'write' key "
    "(GRIDPATH_API_KEYS)"
)
#: The message of a scrape of ``/metrics`` without its key.
NO_METRICS_KEY: Final = (
    "missing or wrong metrics key: send 'Authorization: Bearer <key>' (GRIDPATH_METRICS_KEY)"
)


def _bearer(authorization: str) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header, as bytes: a header is
    latin-1 text, and ``compare_digest`` refuses a str holding other characters."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip().encode("latin-1", "replace")


def _matches(given: bytes | None, expected: bytes) -> bool:
    return given is not None and secrets.compare_digest(given, expected)


@dataclass(frozen=True, slots=True)
class KeyRing:
    """The configured keys, built once from the settings.

    Attributes:
        keys: (key as UTF-8 bytes, scope) pairs; empty when the service is open.
        reads_open: whether reads need no key even when keys are configured.
        metrics_key: the key ``/metrics`` needs, or None when it is open.
    """

    keys: tuple[tuple[bytes, Scope], ...]
    reads_open: bool
    metrics_key: bytes | None

    @classmethod
    def of(cls, settings: Settings) -> "KeyRing":
        """The keys of ``settings``: ``GRIDPATH_API_KEYS``, and ``GRIDPATH_API_KEY`` as
        one more write key."""
        text = "" if settings.api_keys is None else settings.api_keys.get_secret_value()
        pairs = [(Scope[scope.upper()], key) for scope, key in parse_api_keys(text)]
        if settings.api_key is not None:
            pairs.append((Scope.WRITE, settings.api_key.get_secret_value()))
        metrics = None if settings.metrics_key is None else settings.metrics_key.get_secret_value()
        return cls(keys=tuple((key.encode(), scope) for scope, key in pairs),
                   reads_open=not settings.api_key_reads,
                   metrics_key=None if metrics is None else metrics.encode())  # fmt: skip

    @property
    def locked(self) -> bool:
        """Whether any key is configured."""
        return bool(self.keys)

    def scope_of(self, authorization: str) -> Scope | None:
        """The scope of the header's key, None for no key or a wrong one. Every
        configured key is compared, in constant time each, whichever matches."""
        given = _bearer(authorization)
        found: Scope | None = None
        for key, scope in self.keys:
            if _matches(given, key) and (found is None or scope > found):
                found = scope
        return found

    def refusal(self, authorization: str, needed: Scope) -> ApiError | None:
        """Why a request with this ``Authorization`` header may not call a route of
        scope ``needed`` (``Unauthorized`` or ``Forbidden``), None when it may."""
        if not self.keys or (needed is Scope.READ and self.reads_open):
            return None
        scope = self.scope_of(authorization)
        if scope is None:
            return ApiError(ErrorCode.UNAUTHORIZED, NO_KEY)
        if scope < needed:
            return ApiError(ErrorCode.FORBIDDEN, READ_ONLY_KEY)
        return None

    def check(self, authorization: str, needed: Scope) -> None:
        """Raises the :meth:`refusal`, if any."""
        refused = self.refusal(authorization, needed)
        if refused is not None:
            raise refused

    def check_metrics(self, authorization: str) -> None:
        """Raises ``Unauthorized`` when ``/metrics`` has a key and the header lacks it."""
        if self.metrics_key is not None and not _matches(_bearer(authorization),
                                                         self.metrics_key):  # fmt: skip
            raise ApiError(ErrorCode.UNAUTHORIZED, NO_METRICS_KEY)
