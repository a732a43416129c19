"""Search traces: the cells a search expanded, in order, for pictures and debugging.

A traced search gets a caller-owned ``(capacity,) int32`` buffer; every other search
gets an empty one, so recording costs one predictable comparison per expansion.
"""

from numba import njit


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def record(trace, expanded, cell):
    """Note ``cell`` as expansion number ``expanded`` (0-based) while there is room:
    past ``trace.size`` the trace is cut, and the caller says so."""
    if expanded < trace.size:
        trace[expanded] = cell
