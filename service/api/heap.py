"""``HeapTrimmer``: hands the free memory of the process's heap back to the system.

glibc serves a large allocation from memory mapped for it alone, handed back when
it is freed, until it frees such a block: then it raises the size from which it does
so (up to 32 MiB), and the arrays of big maps (grids, unit grids, fields: megabytes
each) come from its heap from then on. What they leave free there stays with the
process: reused when a later allocation fits a hole, otherwise resident for good,
and the holes grow with the traffic, beyond anything the settings bound.

Mapping every large allocation on its own (a fixed ``M_MMAP_THRESHOLD``) would bound
that too, but then every one pays for fresh pages, faulted in and zeroed, which costs
the requests that make big arrays a good share of their CPU time (docs/benchmarks.md,
Memory under a soak). Instead, every ``period`` seconds in which the service did
work, a thread asks glibc (``malloc_trim``) to hand back the free pages of every
arena of its heap: a hole reused within a period costs nothing, and one left free
goes back to the system within a period.
"""

import ctypes
import logging
import sys
import threading
from collections.abc import Callable

log = logging.getLogger("gridpath")


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where there is none (another C library, or
    not Linux)."""
    if sys.platform != "linux":
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except AttributeError:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    call: Callable[[int], int] = trim
    return call


class HeapTrimmer:
    """A thread handing the heap's free memory back every ``period`` seconds after
    work (:meth:`note_work`); none for a ``period`` of 0, or without glibc.

    ``trim``: what hands it back, called with 0 (by default glibc's ``malloc_trim``)."""

    def __init__(self, period: float, trim: Callable[[int], int] | None = None) -> None:
        self._period = period
        self._worked = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if period > 0 and trim is None:
            trim = _malloc_trim()
            if trim is None:
                log.warning("freed memory may stay with the process: no malloc_trim here")
        if period > 0 and trim is not None:
            self._thread = threading.Thread(target=self._run, args=(trim,),
                                            name="gridpath-heap-trim", daemon=True)  # fmt: skip
            self._thread.start()

    @property
    def running(self) -> bool:
        """Whether a thread trims (a period, and a ``malloc_trim`` to call)."""
        return self._thread is not None

    def note_work(self) -> None:
        """Work was done (memory may have been freed): trim at the end of the period."""
        self._worked = True

    def _run(self, trim: Callable[[int], int]) -> None:
        while not self._stop.wait(self._period):
            if self._worked:
                self._worked = False
                trim(0)  # ctypes lets the interpreter lock go meanwhile

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
