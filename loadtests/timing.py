"""``collector_off``: time Python calls the way a server runs them, between
collections."""

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_off() -> Iterator[None]:
    """Keep the garbage collector off for the block (on again after), without a full
    collection first.

    A full collection walks every object the process holds and leaves the CPU's
    caches cold, which the calls after it pay for, a batch's first call most. A
    server does not collect before each call (its threshold is
    ``GRIDPATH_GC_THRESHOLD``), nor does a C++ planner's loop; a timed run should
    not either. Time after one untimed call of the kind timed, so that compilation
    and buffer growth are not counted either.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
