"""``/path`` with ``"resumable": true``, and ``{"resume": token}``: a search spread
over several requests (see ``resumes``). No HTTP here: the route hands over the
parsed body and sends what these return.

A slice runs on a search thread with the search taken out of the worker's store;
the event loop puts it back under a new token when the slice stopped short
(``partial`` for the budget or the deadline), and drops it otherwise.
"""

import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from service.api.errors import ApiError, ErrorCode
from service.api.pathing import Query, answer, bound_spec
from service.api.resumes import Held
from service.api.runtime import Runtime
from service.api.toolbox_schemas import ResumeRequest
from service.engine import PathResult, deadline_scope
from service.engine.slicing import SlicedSearch
from service.engine.toolbox import slice_result, sliced_search


def within(deadline: int) -> AbstractContextManager[None]:
    """The engine's ``deadline_scope`` of a request's deadline (0: none)."""
    return deadline_scope(deadline) if deadline else nullcontext()


async def start_resumable(runtime: Runtime, map_id: str, query: Query, deadline: int
                          ) -> dict[str, Any]:  # fmt: skip
    """The first slice's answer of a resumable ``query`` (its budget: the query's)."""
    payload, held = await runtime.run(_first_slice, runtime, map_id, query, deadline)
    return _kept(runtime, payload, held)


async def resume(runtime: Runtime, map_id: str, body: ResumeRequest, deadline: int
                 ) -> dict[str, Any]:  # fmt: skip
    """The next slice's answer of the search ``body.resume`` names.

    Raises:
        ApiError: ResumeExpired (the worker holds no such search, or the map changed);
            InvalidValue (a budget past the server cap).
    """
    budget = _budget(runtime, body.max_expansions)
    store = runtime.resumes
    held = store.take(body.resume)
    if held.map_id != map_id:
        store.forget(body.resume, f"is a search of map {held.map_id!r}")
        raise ApiError(ErrorCode.RESUME_EXPIRED, f"resume token {body.resume!r} is a search "
                       f"of map {held.map_id!r}, not {map_id!r}")  # fmt: skip
    if body.format is not None:
        held.query = held.query._replace(format=body.format)
    trace = min(runtime.settings.max_trace_expansions, budget) if body.trace else 0
    payload = await runtime.run(_next_slice, runtime, held, budget, trace, deadline)
    if payload is None:
        reason = f"map changed: the search ran on revision {held.revision}, a newer is served"
        store.forget(body.resume, reason)
        raise ApiError(ErrorCode.RESUME_EXPIRED, f"resume token {body.resume!r}: {reason}; "
                       "search again")  # fmt: skip
    return _kept(runtime, payload, held)


def _budget(runtime: Runtime, wanted: int | None) -> int:
    cap = runtime.settings.max_expansions
    if wanted is None:
        return cap
    if wanted > cap:
        raise ApiError(ErrorCode.INVALID_VALUE, f"max_expansions {wanted} exceeds the server "
                       f"cap {cap} (GRIDPATH_MAX_EXPANSIONS)")  # fmt: skip
    if wanted < 1:
        raise ApiError(ErrorCode.INVALID_VALUE, f"max_expansions {wanted} is out of range: "
                       "must be >= 1")  # fmt: skip
    return wanted


def _kept(runtime: Runtime, payload: dict[str, Any], held: Held | None) -> dict[str, Any]:
    """``payload`` with the token of ``held`` when its search goes on."""
    if held is not None and not held.search.finished:
        payload["resume"] = runtime.resumes.hold(held)
    return payload


def _first_slice(runtime: Runtime, map_id: str, query: Query, deadline: int
                 ) -> tuple[dict[str, Any], Held | None]:  # fmt: skip
    began = time.perf_counter_ns()
    with runtime.cache.acquire(map_id) as grid, within(deadline):
        made = sliced_search(grid, bound_spec(grid, query))
        if isinstance(made, PathResult):  # start is goal, or no path between islands
            return answer(made, query, time.perf_counter_ns() - began), None
        runtime.resumes.check_room(made)
        held = Held(made, map_id, grid.revision, query)
        payload = _slice(held, made.options.max_expansions, query.trace, began)
    return payload, held


def _next_slice(runtime: Runtime, held: Held, budget: int, trace: int, deadline: int
                ) -> dict[str, Any] | None:  # fmt: skip
    """The next slice's answer; None when the map changed since (the search is then
    dropped: its costs are the old revision's)."""
    began = time.perf_counter_ns()
    with runtime.cache.acquire(held.map_id) as grid, within(deadline):
        if grid.revision != held.revision:
            return None
        return _slice(held, budget, trace, began)


def _slice(held: Held, budget: int | None, trace: int, began: int) -> dict[str, Any]:
    search: SlicedSearch = held.search
    piece = search.advance(budget, trace=trace)
    result = slice_result(search, piece, traced=trace > 0)
    return answer(result, held.query, time.perf_counter_ns() - began)
