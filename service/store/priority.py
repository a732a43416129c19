"""CPU priority of background threads: repairs and builds yield to queries.

Table builds, repairs and compactions are worth doing but never urgent: until they
finish, queries fall back (octile instead of a table's bounds, JPS over bit rows)
with the same costs. Run at the priority of the threads answering queries, a
background job on a busy machine takes a core from them and shows up in their tail
latency; at a lower priority the kernel runs it on cycles queries leave free.

Linux schedules threads one by one, so the threads of a pool lower themselves as
they start (:func:`background_pool`); threads they start inherit it.
Elsewhere this does nothing.
"""

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Final, Literal

BackgroundPriority = Literal["idle", "low", "normal"]

#: The nice value of ``low``: the least CFS weight (about 1.5% of a contended core).
LOW_NICE: Final = 19


def lower_this_thread(priority: BackgroundPriority) -> None:
    """Lower the calling thread's CPU priority.

    ``idle``: ``SCHED_IDLE``, runs only on a core nothing else wants (on a machine
    busy with queries a build may wait indefinitely); ``low``: nice 19, still makes
    progress under full load; ``normal``: unchanged.
    """
    if priority == "normal" or not hasattr(os, "sched_setscheduler"):
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):  # not permitted here: keep the default
        if priority == "idle":
            os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
        else:
            os.setpriority(os.PRIO_PROCESS, tid, LOW_NICE)


def background_pool(workers: int, name: str, priority: BackgroundPriority) -> ThreadPoolExecutor:
    """A pool whose threads run at ``priority`` (see :func:`lower_this_thread`)."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name,
                              initializer=lower_this_thread, initargs=(priority,))  # fmt: skip
