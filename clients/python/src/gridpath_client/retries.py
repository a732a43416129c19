"""When to try a request again, and how long to wait first.

Two things are retried:

- **connection failures** where the request surely did not reach the service (it
  could not connect): for every call, uploads and edits included. A connection that
  broke later (a read or write error, the server hanging up) is retried only for
  calls that change nothing on the server (reads and path, batch, field and check
  queries): an upload or an edit might have been applied, and a second one would
  apply twice. Read, write and pool timeouts are not retried: a slow server is not
  helped by more load (a connect timeout is a connection that could not be made).
- **503** answers, after the ``Retry-After`` sent: for calls that change nothing,
  any 503; for uploads, edits and deletes only the service's own ``NotReady`` (it
  is starting, nothing was done), since a proxy's 503 cannot promise that.

Waits grow exponentially with jitter (each retry waits between half and all of
``backoff * 2**retry``, at most ``max_backoff``), so clients that failed together do
not retry together; ``retries`` bounds the attempts and ``deadline`` the total time.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx

from gridpath_client.errors import ConnectionFailed, TimedOut, TransportError

log = logging.getLogger("gridpath_client")

#: Transport errors raised before the request left: safe to retry for any call.
NOT_SENT: tuple[type[Exception], ...] = (httpx.ConnectError, httpx.ConnectTimeout)
#: Transport errors after which a request may or may not have been processed.
BROKEN: tuple[type[Exception], ...] = (
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
)


@dataclass(frozen=True)
class RetryPolicy:
    """How a client retries (see the module's docstring for what).

    Attributes:
        retries: Retries after the first attempt (0: never retry).
        backoff: Nominal wait before the first retry, in seconds; doubles per retry.
        max_backoff: Cap of one wait, in seconds (``Retry-After`` included).
        deadline: Seconds from the first attempt after which no retry starts; a wait
            that would end later is not begun, the last error is raised instead.
    """

    retries: int = 3
    backoff: float = 0.1
    max_backoff: float = 5.0
    deadline: float = 30.0

    def __post_init__(self) -> None:
        if self.retries < 0 or self.backoff < 0 or self.max_backoff < 0 or self.deadline < 0:
            raise ValueError(f"retry settings must not be negative: {self}")

    def wait(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based): uniform in
        [nominal / 2, nominal], nominal = min(max_backoff, backoff * 2**retry)."""
        nominal = min(self.max_backoff, self.backoff * 2.0**retry)
        return nominal / 2 + random.uniform(0.0, nominal / 2)


@dataclass
class Attempts:
    """One call's attempts so far: decides, after each failure, whether and how long
    to wait before the next one.

    Attributes:
        policy: The client's retry policy.
        safe: Whether the call changes nothing on the server (retried after any
            broken connection, not only after failing to connect).
        made: Attempts made so far.
    """

    policy: RetryPolicy
    safe: bool
    made: int = 1
    began: float = field(default_factory=time.monotonic)

    def after_transport_error(self, exc: httpx.TransportError, what: str) -> float:
        """The wait before retrying after ``exc``.

        Raises:
            TransportError: ``ConnectionFailed`` or ``TimedOut`` when this error is not
                retried, or the retries or the deadline ran out.
        """
        retried = isinstance(exc, NOT_SENT) or (self.safe and isinstance(exc, BROKEN))
        delay = self._next_wait(None) if retried else None
        if delay is None:
            raise self._give_up(exc, what) from exc
        log.info("%s: %s; retry %d in %.3f s", what, _describe(exc), self.made, delay)
        return self._count(delay)

    def after_response(self, response: httpx.Response, what: str) -> float | None:
        """The wait before retrying after ``response``, or None to keep it (any answer
        but a 503; a 503 other than ``NotReady`` for a call that changes the server; a
        503 when the retries or the deadline ran out)."""
        if response.status_code != 503:
            return None
        if not self.safe and not _is_not_ready(response):
            return None
        delay = self._next_wait(retry_after(response))
        if delay is None:
            return None
        log.info("%s: 503 from the service; retry %d in %.3f s", what, self.made, delay)
        return self._count(delay)

    def _next_wait(self, asked: float | None) -> float | None:
        """The next wait (``asked``: the server's ``Retry-After``, else the backoff),
        or None when no retry is left or the wait would end past the deadline."""
        if self.made > self.policy.retries:
            return None
        wait = self.policy.wait(self.made - 1) if asked is None else asked
        wait = min(wait, self.policy.max_backoff)
        if time.monotonic() - self.began + wait > self.policy.deadline:
            return None
        return wait

    def _count(self, delay: float) -> float:
        self.made += 1
        return delay

    def _give_up(self, exc: httpx.TransportError, what: str) -> TransportError:
        tries = f"{self.made} attempt{'s' if self.made > 1 else ''}"
        message = f"{what}: {_describe(exc)} ({tries})"
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
            return TimedOut(message, attempts=self.made)
        return ConnectionFailed(message, attempts=self.made)


def retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds (delta-seconds or an HTTP date; fractions
    are accepted), or None when absent or unreadable."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _is_not_ready(response: httpx.Response) -> bool:
    """Whether a 503 is the service's ``NotReady`` (nothing was done), not a proxy's."""
    try:
        body = response.json()
    except ValueError:  # not JSON (a proxy's page), or not UTF-8
        return False
    return isinstance(body, dict) and body.get("code") == "NotReady"


def _describe(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
