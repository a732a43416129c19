"""The kernels' look at the clock, for searches that must end by a deadline.

A search reads the monotonic clock itself (``clock_gettime``, a vDSO call of tens
of nanoseconds, resolved by name so that the compiled kernels stay cacheable), once
every ``CLOCK_EVERY`` expansions: a search stops within that many expansions of its
deadline, and one without a deadline never reads it.

A *clock* is a caller-owned (``CLOCK_SLOTS``,) int64 array: ``[0]`` the deadline, in
``time.monotonic_ns`` nanoseconds (0: none); ``[1:3]`` room for a reading (``struct
timespec``: seconds, nanoseconds); ``[3:7]`` a search the deadline cut whose path did
not fit its caller's buffers (``KEPT_QUERY``: its query's index, ``NONE_KEPT`` for
none; then its end cell, expansions and reopenings). The caller grows the buffers and
calls again from that query, whose answer is then written without a second search: a
second one would stop somewhere else (or not start, the deadline being past).
"""

import time
from typing import Final

from numba import njit, types

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.codes import STATUS_DEADLINE, STATUS_PARTIAL
from service.engine.kernels.widening import widened

#: Expansions between two looks at the clock: a look costs about as much as one
#: expansion, so this keeps its share under one percent.
CLOCK_EVERY: Final = 256
#: ``time.monotonic_ns``'s clock, whose readings the deadlines are.
_MONOTONIC: Final = time.CLOCK_MONOTONIC
_NANOSECONDS: Final = 1_000_000_000
#: A ``budget`` for ``next_look`` of a search with no budget of its own: never reached.
UNTIMED: Final = 1 << 62
#: ``clock[KEPT_QUERY:]``: a cut search's query, end cell, expansions and reopenings.
KEPT_QUERY: Final = 3
KEPT_END: Final = 4
KEPT_EXPANDED: Final = 5
KEPT_REOPENED: Final = 6
CLOCK_SLOTS: Final = 7
NONE_KEPT: Final = -1
#: ``look_again``'s status when the search goes on.
GO_ON: Final = -1
_clock_gettime = types.ExternalFunction("clock_gettime", types.int32(types.int32, types.voidptr))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def past_deadline(clock):
    """Whether ``clock`` has a deadline and it has passed."""
    if clock[0] == 0:
        return False
    _clock_gettime(_MONOTONIC, clock[1:].ctypes)  # type: ignore[call-overload]
    return clock[1] * _NANOSECONDS + clock[2] >= clock[0]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def keep_cut(clock, i, end, expanded, reopened):
    """Keep query ``i``'s search, cut by the deadline at ``end``, for the call again."""
    clock[KEPT_QUERY] = i
    clock[KEPT_END] = end
    clock[KEPT_EXPANDED] = expanded
    clock[KEPT_REOPENED] = reopened


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def next_look(expanded, budget, clock):
    """The expansion count at which a search looks at its budget and its clock next:
    ``CLOCK_EVERY`` on, or the budget's end if that comes first (or there is no
    deadline)."""
    if clock[0] == 0:
        return budget
    return min(budget, expanded + CLOCK_EVERY)


@widened
@borrowing
def look_again(expanded, budget, clock):
    """A search's look at its budget and clock, once ``expanded`` reached its last
    ``next_look``: ``(stop, look)``, ``stop`` the status to end with
    (``STATUS_PARTIAL``: the budget is spent; ``STATUS_DEADLINE``) or ``GO_ON``, and
    the next look. A call, not inlined: it runs once every ``CLOCK_EVERY`` expansions
    at most, and each search kernel compiles one line for it instead of its body."""
    if expanded >= budget:
        return STATUS_PARTIAL, budget
    if past_deadline(clock):
        return STATUS_DEADLINE, expanded
    return GO_ON, next_look(expanded, budget, clock)
