"""Writes the storage refuses: a full, read-only or failing data dir (or a Redis that
refuses writes), told apart from bugs, answered with their cause, and remembered so
that health tells the truth while it lasts.

A refused write stores nothing (every write is atomic: a temporary renamed into
place, an append cut back on failure), so the request that met it can be answered
``InsufficientStorage`` and retried once the operator freed space; reads go on.
"""

import errno
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, Literal

Cause = Literal["no_space", "read_only", "denied", "io_error"]

#: The causes, each with the errno values that mean it.
CAUSES: Final[dict[Cause, frozenset[int]]] = {
    "no_space": frozenset({errno.ENOSPC, errno.EDQUOT}),
    "read_only": frozenset({errno.EROFS}),
    "denied": frozenset({errno.EACCES, errno.EPERM}),
    "io_error": frozenset({errno.EIO}),
}
#: Seconds between probes of a store whose writes failed (``WriteHealth.probe_due``).
PROBE_INTERVAL_SECONDS: Final = 1.0


class StoreWriteError(OSError):
    """The storage refused a write (``cause``; ``errno`` as the system said): nothing
    was stored; reads still work. An ``OSError`` still, for the code that undoes a
    failed write whatever failed."""

    def __init__(self, cause: Cause, number: int | None, message: str) -> None:
        super().__init__(number, message)
        self.cause: Cause = cause
        self.message = message

    def __str__(self) -> str:
        return self.message


def cause_of(exc: OSError) -> Cause | None:
    """Why the storage refused a write, or None for an error that is not the
    storage's (a missing file: a map deleted meanwhile, say)."""
    for cause, numbers in CAUSES.items():
        if exc.errno in numbers:
            return cause
    return None


class WriteHealth:
    """Whether a store's writes fail now: the last refused write's reason until a
    write (or a probe) succeeds; and how many were refused, per cause."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._problem: str | None = None
        self._probed_at = 0.0
        self.refused: dict[Cause, int] = dict.fromkeys(CAUSES, 0)

    def problem(self) -> str | None:
        """``writes failing: <reason>`` while the last write was refused, else None."""
        with self._lock:
            return self._problem

    def refuse(self, cause: Cause, number: int | None, reason: str) -> StoreWriteError:
        """Remember a write the storage refused (``reason``: what was written and why
        it failed); the error to raise for it."""
        with self._lock:
            self._problem = f"writes failing: {reason}"
            self.refused[cause] += 1
        return StoreWriteError(cause, number, f"the store cannot take writes: {reason}; "
                               "nothing was stored (reads are still served)")  # fmt: skip

    def succeeded(self) -> None:
        if self._problem is not None:  # (read without the lock: the common case)
            with self._lock:
                self._problem = None

    def probe_due(self) -> bool:
        """Whether a probe write should be tried now: writes fail, and none was tried
        within ``PROBE_INTERVAL_SECONDS`` (a health check polled often costs one write
        a second at most). A probe that succeeds calls :meth:`succeeded`."""
        now = time.monotonic()
        with self._lock:
            if self._problem is None or now - self._probed_at < PROBE_INTERVAL_SECONDS:
                return False
            self._probed_at = now
            return True

    @contextmanager
    def guarded(self, what: str) -> Iterator[None]:
        """Run a write: an ``OSError`` the storage caused becomes
        :class:`StoreWriteError` naming ``what`` was written and why it failed, and is
        remembered; a write that completes clears the problem."""
        try:
            yield
        except StoreWriteError:  # (a guarded write inside another)
            raise
        except OSError as exc:
            cause = cause_of(exc)
            if cause is None:
                raise
            name = errno.errorcode.get(exc.errno or 0, "?")
            raise self.refuse(cause, exc.errno, f"{exc.strerror or exc} ({name}) {what}") from exc
        self.succeeded()
