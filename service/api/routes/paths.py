"""``/v1/maps/{map_id}/path`` and ``/paths``: single and batch path queries."""

import asyncio
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Hashable
from contextlib import ExitStack
from typing import Any, Final, NamedTuple

import orjson
from fastapi import APIRouter, Request
from pydantic import ValidationError
from pydantic_core import from_json
from starlette.responses import Response

from service.api.answers import Shared, marked_cached
from service.api.deps import body_of, readable_map
from service.api.docs import ref, request_body
from service.api.errors import ApiError, ErrorCode, error_responses, parsed_body, validation_message
from service.api.middleware import CLIENT_CLOSED
from service.api.pathing import (
    CellBatch,
    InlineBound,
    Query,
    answer,
    cell_batch,
    deadline_of,
    resolve,
    resolve_items,
    run,
    run_batch,
    run_cells,
    search,
    simple,
    unstarted,
)
from service.api.resuming import resume, start_resumable, within
from service.api.runtime import DeadlinePassedError, Runtime
from service.api.schemas import BatchRequest, BatchResponse, PathRequest, PathResponse
from service.api.slices import SlicedBatch
from service.api.toolbox_schemas import ResumeRequest

router = APIRouter(prefix="/v1/maps", tags=["paths"])
log = logging.getLogger("gridpath.api")


# The path routes are the hottest in the service and a short search costs tens of
# microseconds, so they parse their bodies with pydantic-core's JSON parser and
# check access with the same helpers the dependencies use, called directly:
# FastAPI's per-parameter dependency solving and its stdlib-JSON body validation
# would otherwise cost more than the search. (A batch is parsed on its search
# thread, not on the event loop.) The schemas are documented all the same.
def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    map_id = {
        "name": "map_id",
        "in": "path",
        "required": True,
        "description": "Map id from the upload answer.",
        "schema": {"type": "string"},
    }
    return {"parameters": [map_id]} | request_body({"application/json": {"schema": schema}})


# A ``/path`` body is a query, or a resumable search's next slice.
_PATH_BODY = _json_body({"oneOf": [ref(PathRequest), ref(ResumeRequest)]})
_BATCH_BODY = _json_body(ref(BatchRequest))

_JSON_NUMPY = orjson.OPT_SERIALIZE_NUMPY


class _Tally(NamedTuple):
    """What answers add to the access log and the metrics (``_note``)."""

    statuses: Counter[str]
    expanded: list[int]


def _tally(answers: list[dict[str, Any]]) -> _Tally:
    answered = [a for a in answers if "status" in a]  # not the error bodies
    return _Tally(Counter([a["status"] for a in answered]), [a["expanded"] for a in answered])


def _note(request: Request, runtime: Runtime, tally: _Tally) -> None:
    """Record expansions for the access log and metrics (on the event loop, which
    owns them)."""
    request.state.expansions = sum(tally.expanded)
    runtime.metrics.searches(tally.statuses, tally.expanded)


class _Answered(NamedTuple):
    """A batch's response body and its ``_tally``, both made on the search thread:
    the event loop, which every request goes through, only sends them."""

    body: bytes
    tally: _Tally


class _Batch(NamedTuple):
    """A batch body, validated, and its items: as one array of cells when they are all
    bare starts and goals (``cell_batch``), else resolved one by one (``resolve_items``,
    a bad item's error in its slot)."""

    body: BatchRequest
    cells: CellBatch | None
    items: list[Query | dict[str, str]]  # empty when ``cells`` holds them


def _of_results(results: list[dict[str, Any]]) -> _Answered:
    return _Answered(orjson.dumps({"results": results}, option=_JSON_NUMPY), _tally(results))


def _try_inline_batch(runtime: Runtime, map_id: str, batch: _Batch, deadline: int
                      ) -> _Answered | None:  # fmt: skip
    """Answer a small batch on the event loop, skipping the hops to a search thread
    and back (each a context switch, and the interpreter lock passed on: the larger
    cost of a batch of short queries). Only a batch on a cached map, at its
    ``min_revision``, whose every query goes from one cell to another with options
    the map has answered before (each query its own, or the batch's defaults), and
    whose queries share one query's ``inline_expansions`` (so the loop spends no
    more on its searches than on one inline query's); None, having answered nothing,
    for any other: it then goes to the search threads."""
    settings = runtime.settings
    body, cells, items = batch
    if body.min_revision is not None and not runtime.holds(map_id, body.min_revision):
        return None
    each = max(1, settings.inline_expansions // max(1, len(body.queries)))
    bound = InlineBound(each, settings.inline_path_cells)
    with runtime.cache.acquire_cached(map_id) as grid, within(deadline):
        if grid is None:
            return None
        if cells is not None:
            results = run_cells(grid, cells, policy=runtime.batch_policy, bound=bound)
        else:
            results = run_batch(grid, items, policy=runtime.batch_policy, bound=bound)
    return None if results is None else _of_results(results)


def _try_inline(runtime: Runtime, map_id: str, query: Query, deadline: int
                ) -> dict[str, Any] | None:  # fmt: skip
    """Answer on the event loop if the map is cached and the search is short.

    The search gets at most ``inline_expansions`` nodes (tens of microseconds), so
    short paths skip the thread hop; one that needs more returns None and is run
    again on the search threads with its full budget.
    """
    cap = runtime.settings.inline_expansions
    if cap <= 0 or not simple(query):
        return None
    with runtime.cache.acquire_cached(map_id) as grid, within(deadline):
        if grid is None:
            return None
        began = time.perf_counter_ns()
        wanted = query.spec.options.max_expansions
        budget = cap if wanted is None else min(cap, wanted)
        result = search(grid, query, budget=budget, policy=runtime.batch_policy)
        cut = result.partial_reason == "budget"  # by the inline cap, maybe (a deadline's stands)
        if cut and (wanted is None or budget < wanted):
            return None
        if len(result.cells) > runtime.settings.inline_path_cells:
            return None  # short to find, long to send: answered off the loop
        return answer(result, query, time.perf_counter_ns() - began)


@router.post(
    "/{map_id}/path",
    response_model=PathResponse,
    summary="Find one path",
    description="Checks run in a fixed order: schema (InvalidQuery), server limits "
    "(InvalidValue), coordinates within the map (InvalidValue), start and goal walkable "
    "(NotWalkable), then the search.",
    openapi_extra=_PATH_BODY,
    responses=error_responses(
        ErrorCode.INVALID_QUERY,
        ErrorCode.INVALID_VALUE,
        ErrorCode.NOT_WALKABLE,
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.TOO_BIG,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.REQUEST_TIMEOUT,
        ErrorCode.NOT_READY,
        ErrorCode.MAP_CORRUPT,
        ErrorCode.RESUME_EXPIRED,
    ),
)
async def find_one(request: Request) -> Response:
    runtime, record = await readable_map(request, request.path_params["map_id"])
    if not runtime.ready:
        await runtime.until_ready()
    raw = await body_of(request)
    if _RESUME_KEY in raw and _resumes(raw):
        resumed = parsed_body(ResumeRequest, raw)
        deadline = deadline_of(resumed.deadline_ms, time.monotonic_ns())
        return _json(request, runtime, await resume(runtime, record.id, resumed, deadline))
    body = parsed_body(PathRequest, raw)
    deadline = deadline_of(body.deadline_ms, time.monotonic_ns())
    query = resolve(body, None, runtime.settings)
    try:
        await runtime.reach(record.id, body.min_revision, deadline)
    except DeadlinePassedError:
        return _unstarted_response(runtime, record.id, query)
    if query.resumable:
        first = await start_resumable(runtime, record.id, query, deadline)
        return _json(request, runtime, first)
    answers = runtime.answers
    key = _current_key(runtime, record.id, query)
    if key is not None:
        kept = answers.get(key)
        if kept is not None:
            runtime.metrics.answers("hits")
            return Response(marked_cached(kept), media_type="application/json")
        leading = answers.in_flight(key)
        if leading is not None:
            shared = await _shared(runtime, leading, deadline)
            if shared is None:  # the deadline came first
                return _unstarted_response(runtime, record.id, query)
            if shared.error is not None:
                raise shared.error
            if shared.body is not None:
                runtime.metrics.answers("coalesced")
                return Response(marked_cached(shared.body), media_type="application/json")
        runtime.metrics.answers("misses")
    payload = _try_inline(runtime, record.id, query, deadline)
    if payload is not None:
        _note(request, runtime, _tally([payload]))
        data = orjson.dumps(payload, option=_JSON_NUMPY)
        if (key is not None and payload["partial_reason"] != "deadline"
                and _current_key(runtime, record.id, query) == key):  # fmt: skip
            answers.put(key, data)  # (the grid searched was the one of ``key``)
        return Response(data, media_type="application/json")
    if key is None or deadline or answers.in_flight(key) is not None:
        # (A query with a deadline leads no others: its answer may be cut short.)
        ran = await runtime.run_by(deadline, _run_cached, runtime, record.id, query, deadline)
        if ran is None:
            return _unstarted_response(runtime, record.id, query)
        answered, searched = ran
    else:
        answered, searched = await _lead(runtime, record.id, query, key)
    _note(request, runtime, answered.tally)
    if searched is not None:
        found_at = answers.key(record.id, searched[0], searched[1], query)
        if found_at is not None:
            answers.put(found_at, answered.body)
    return Response(answered.body, media_type="application/json")


#: A body holding this may be a ``ResumeRequest`` (``_resumes`` tells).
_RESUME_KEY: Final = b'"resume"'


def _resumes(raw: bytes) -> bool:
    """Whether a ``/path`` body is a ``ResumeRequest``: an object with ``resume``."""
    try:
        data = from_json(raw)
    except ValueError:
        return False  # (the query's parse says what is wrong)
    return isinstance(data, dict) and "resume" in data


def _json(request: Request, runtime: Runtime, payload: dict[str, Any]) -> Response:
    """A single answer made off the answer cache's ways (a resumable search's)."""
    _note(request, runtime, _tally([payload]))
    return Response(orjson.dumps(payload, option=_JSON_NUMPY), media_type="application/json")


async def _shared(runtime: Runtime, leading: "asyncio.Future[Shared]", deadline: int
                  ) -> Shared | None:  # fmt: skip
    """What the identical query in flight ends with; None if ``deadline`` comes first."""
    if not deadline:
        return await runtime.answers.wait(leading)
    left = (deadline - time.monotonic_ns()) / 1e9
    try:
        async with asyncio.timeout(max(0.0, left)):
            return await runtime.answers.wait(leading)
    except TimeoutError:
        return None


def _unstarted_response(runtime: Runtime, map_id: str, query: Query) -> Response:
    """The answer of a query its deadline left unstarted, on the map as cached."""
    payload = unstarted(query, _revision(runtime, map_id))
    return Response(orjson.dumps(payload), media_type="application/json")


def _revision(runtime: Runtime, map_id: str) -> int:
    """The revision of the map's copy in memory (0 when none is)."""
    grid = runtime.cache.current(map_id)
    return 0 if grid is None else grid.revision


def _current_key(runtime: Runtime, map_id: str, query: Query) -> Hashable | None:
    """The answer cache's key for ``query`` on the map as it is now; None when the
    cache is off, the query is never kept, or the map is not in memory (its revision
    unknown without a load)."""
    if not runtime.answers.enabled:
        return None
    with runtime.cache.acquire_cached(map_id) as grid:
        if grid is None:
            return None
        return runtime.answers.key(map_id, grid.revision, grid.epoch, query)


async def _lead(runtime: Runtime, map_id: str, query: Query, key: Hashable
                ) -> tuple[_Answered, tuple[int, int] | None]:  # fmt: skip
    """Search for ``query`` while identical queries arriving meanwhile wait for its
    answer (or its error); cancelled (the client hung up), they search themselves."""
    future = runtime.answers.lead(key)
    shared = Shared()
    try:
        answered, searched = await runtime.run(_run_cached, runtime, map_id, query, 0)
        shared.body = answered.body
        return answered, searched
    except Exception as exc:  # (a cancellation is none: the waiters search themselves)
        shared.error = exc
        raise
    finally:
        runtime.answers.finish(key, future, shared)


def _run_cached(runtime: Runtime, map_id: str, query: Query, deadline: int
                ) -> tuple[_Answered, tuple[int, int] | None]:  # fmt: skip
    """One query answered and serialised on a search thread (a path may hold a
    million cells: the event loop only sends it), and the revision and epoch of the
    grid it was answered on (None if its tables changed meanwhile, or the deadline
    cut the search short: an answer not to keep)."""
    with runtime.cache.acquire(map_id) as grid, within(deadline):
        epoch = grid.epoch
        payload = run(grid, query, policy=runtime.batch_policy)
        searched = (grid.revision, epoch) if grid.epoch == epoch else None
    if payload["partial_reason"] == "deadline":
        searched = None
    data = orjson.dumps(payload, option=_JSON_NUMPY)
    return _Answered(data, _tally([payload])), searched


def _batch_request(data: Any, queries: Any) -> BatchRequest:
    """``BatchRequest.model_validate(data)``, ``queries`` being ``data["queries"]``.

    Of the items the schema checks only that each is an object, and pydantic would
    copy every one to check it: when they all are, the rest of the body is validated
    without them and the parsed items are kept as they are."""
    if type(queries) is list and all(type(query) is dict for query in queries):
        body = BatchRequest.model_validate(data | {"queries": []})
        body.queries = queries
        return body
    return BatchRequest.model_validate(data)


def _parsed_batch(runtime: Runtime, raw: bytes) -> _Batch:
    """Parse and validate a batch body, and see whether it is a batch of cells.

    The body is already bounded in bytes (``GRIDPATH_MAX_BATCH_BODY_BYTES``); its
    queries are counted right after the JSON parse, before any is validated. orjson
    parses it (the fastest parser here), but reads an integer past 64 bits as a
    float, which the schema refuses: a batch with a bad item and such a number in it
    is parsed again by pydantic-core, as /path's body is, for the same answer."""
    batch = _validated_batch(runtime, _decoded(raw, orjson.loads))
    if any(type(item) is dict for item in batch.items) and _WIDE_INTEGER.search(raw):
        return _validated_batch(runtime, _decoded(raw, _exact_loads))
    return batch


#: Twenty digits in a row: an integer orjson may have read as a float (2**64 has 20).
_WIDE_INTEGER: Final = re.compile(rb"\d{20}")


def _exact_loads(raw: bytes) -> Any:
    return from_json(raw, allow_inf_nan=False)


def _decoded(raw: bytes, loads: Callable[[bytes], Any]) -> Any:
    try:
        return loads(raw)
    except ValueError as exc:  # orjson.JSONDecodeError is one
        raise ApiError(ErrorCode.INVALID_QUERY, f"body is not valid JSON: {exc}") from None


def _validated_batch(runtime: Runtime, data: Any) -> _Batch:
    queries = data.get("queries") if isinstance(data, dict) else None
    limit = runtime.settings.max_batch
    if isinstance(queries, list) and len(queries) > limit:
        raise ApiError(
            ErrorCode.TOO_BIG,
            f"batch of {len(queries)} queries exceeds the limit of {limit} (GRIDPATH_MAX_BATCH)",
        )
    try:
        body = _batch_request(data, queries)
    except ValidationError as exc:
        raise ApiError(ErrorCode.INVALID_QUERY, validation_message(exc)) from None
    cells = cell_batch(body.queries, body.defaults, runtime.settings)
    if cells is not None:
        return _Batch(body, cells, [])
    return _Batch(body, None, resolve_items(body.queries, body.defaults, runtime.settings))


def _begin(runtime: Runtime, map_id: str, raw: bytes, batch: _Batch | None, read_ns: int
           ) -> tuple[SlicedBatch, _Answered | None]:  # fmt: skip
    """A batch parsed (unless the event loop did: ``batch``), its map pinned at the
    batch's ``min_revision``, and its first slice answered, on a search thread
    (``read_ns``: when the request was read, which its deadline counts from)."""
    body, cells, items = _parsed_batch(runtime, raw) if batch is None else batch
    if body.min_revision is not None:
        runtime.catch_up(map_id, body.min_revision)  # BehindError: waited for on the loop
    pin = ExitStack()
    try:
        grid = pin.enter_context(runtime.cache.acquire(map_id))
        sliced = SlicedBatch(grid, cells, items, pin=pin, policy=runtime.batch_policy,
                             query_ns=runtime.batch_query_ns,
                             expansion_ns=runtime.batch_expansion_ns,
                             most_expanded=runtime.batch_most_expanded,
                             deadline_ns=deadline_of(body.deadline, read_ns))  # fmt: skip
        return sliced, _go_on(runtime, sliced)
    except BaseException:
        pin.close()
        raise


def _go_on(runtime: Runtime, sliced: SlicedBatch) -> _Answered | None:
    """One slice of a batch (on a search thread); its answer once it is done."""
    sliced.run_slice(runtime.settings.batch_slice_ms * 1_000_000)
    if sliced.query_ns:  # the next batch's first guess (threads race: any one will do)
        runtime.batch_query_ns = sliced.query_ns
    if sliced.expansion_ns:  # (a batch of straight lines expands nothing: no figure)
        runtime.batch_expansion_ns = sliced.expansion_ns
    if sliced.done:
        runtime.batch_most_expanded = sliced.most_expanded
    if not sliced.finished:
        return None
    # Unpinned here, not on the event loop: the cache's lock is the search threads' too,
    # and the loop waiting on it (with the interpreter lock passed to and fro) would
    # stall every request.
    sliced.release()
    return _of_results(sliced.take_results())


async def _in_slices(request: Request, runtime: Runtime, map_id: str, raw: bytes,
                     batch: _Batch | None, read_ns: int) -> _Answered | None:  # fmt: skip
    """Answer a batch on the search threads, a slice at a time (``SlicedBatch``):
    between two slices the requests that came meanwhile run, and a batch whose client
    has hung up stops (None). A batch whose deadline comes before a search thread
    takes its next slice (or, parsed here, its first) answers without it."""
    deadline = 0 if batch is None else deadline_of(batch.body.deadline, read_ns)
    begun = await runtime.run_by(deadline, _begin, runtime, map_id, raw, batch, read_ns)
    if begun is None:
        assert batch is not None  # (only a batch parsed here has a deadline known here)
        return _of_results(_unstarted_batch(batch, _revision(runtime, map_id)))
    sliced, answered = begun
    try:
        while answered is None:
            if await request.is_disconnected():
                log.info("client gone: batch on map %s stopped after %d of %d queries",
                         map_id, sliced.done, sliced.queries)  # fmt: skip
                return None
            answered = await runtime.resume_by(sliced.deadline_ns, _go_on, runtime, sliced)
            if answered is None and 0 < sliced.deadline_ns <= time.monotonic_ns():
                sliced.expire()  # the deadline came before its next slice
                answered = _of_results(sliced.take_results())
        return answered
    finally:
        sliced.release()


def _unstarted_batch(batch: _Batch, revision: int) -> list[dict[str, Any]]:
    """The answers of a batch its deadline left unstarted: each query's says so, each
    bad item's error stands."""
    if batch.cells is not None:
        count = batch.cells.cells.shape[0]
        return [unstarted(batch.cells.query, revision) for _ in range(count)]
    return [unstarted(item, revision) if isinstance(item, Query) else item
            for item in batch.items]  # fmt: skip


@router.post(
    "/{map_id}/paths",
    response_model=BatchResponse,
    summary="Find many paths on one map",
    description="One request per game tick: every query is answered in order, from one "
    "map revision, with one map lookup; a long batch takes turns with other requests on "
    "the search threads (GRIDPATH_BATCH_SLICE_MS). A bad query gets an error object "
    "(`code`, `message`) in its slot; the batch still succeeds.",
    openapi_extra=_BATCH_BODY,
    responses=error_responses(
        ErrorCode.INVALID_QUERY,
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.TOO_BIG,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.REQUEST_TIMEOUT,
        ErrorCode.NOT_READY,
        ErrorCode.MAP_CORRUPT,
    ),
)
async def find_many(request: Request) -> Response:
    runtime, record = await readable_map(request, request.path_params["map_id"])
    if not runtime.ready:
        await runtime.until_ready()
    raw = await body_of(request)
    read_ns = time.monotonic_ns()
    batch = answered = None
    if 0 < len(raw) <= runtime.settings.inline_batch_bytes:
        batch = _parsed_batch(runtime, raw)  # small: the parse is short, and not repeated
        if runtime.settings.inline_expansions:
            deadline = deadline_of(batch.body.deadline, read_ns)
            answered = _try_inline_batch(runtime, record.id, batch, deadline)
    if answered is None:
        deadline = 0 if batch is None else deadline_of(batch.body.deadline, read_ns)
        try:
            answered = await runtime.at_revision(
                lambda: _in_slices(request, runtime, record.id, raw, batch, read_ns),
                deadline_ns=deadline,
            )
        except DeadlinePassedError:  # still behind its min_revision: nothing searched
            assert batch is not None
            answered = _of_results(_unstarted_batch(batch, _revision(runtime, record.id)))
        if answered is None:  # nobody to answer: for the access log and the metrics
            return Response(status_code=CLIENT_CLOSED)
    _note(request, runtime, answered.tally)
    return Response(answered.body, media_type="application/json")
