"""One server a data dir: the advisory lock on ``<data_dir>/.lock``.

The file store (``file_store.MapStore``) holds it from open to close, or takes it
from a caller that took it first, and a second store on the same dir is refused
(:class:`DataDirInUseError`) instead of serving a map list that the first one changes
under it. With worker processes (``GRIDPATH_WORKERS``) their supervisor holds it for
them all.
"""

import errno
import fcntl
import os
from pathlib import Path
from typing import Final


class DataDirInUseError(RuntimeError):
    """Another process (or another open store) holds the data dir's lock."""


LOCK_FILE: Final = ".lock"


class DataDirLock:
    """The advisory lock (``flock``) on ``<data_dir>/.lock``, from construction to
    :meth:`release`. The lock file names the holder's process id, for the message a
    second process gets; the kernel drops the lock when the holder exits, however it
    exits.

    Raises:
        DataDirInUseError: another holder has it.
    """

    def __init__(self, data_dir: Path) -> None:
        self._fd: int | None = _lock_data_dir(data_dir / LOCK_FILE)

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def _lock_data_dir(path: Path) -> int:
    """Take the data dir's advisory lock; return the descriptor that holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
            raise
        raise DataDirInUseError(
            f"data dir {path.parent} is in use by another gridpath process (pid {holder}); "
            "a data dir is served by one process at a time"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return fd
