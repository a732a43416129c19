"""Turning validated path requests into engine calls and answers (no HTTP here).

Order of checks (as in OSRM): schema (pydantic, before this module), server
limits (:func:`resolve`), then bounds and walkability (the engine), then search.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, overload

import numpy as np
import numpy.typing as npt
from pydantic import TypeAdapter, ValidationError

from service.api.directions import moves_of, runs
from service.api.errors import (
    ApiError,
    ErrorCode,
    engine_error_code,
    error_body,
    validation_message,
)
from service.api.layered import floor_point, floor_points, grid_spec
from service.api.profiles import ProfileRef, bind, profile_ref, profile_used
from service.api.schemas import GoalRegion, PathFormat, PathOptions, PathRequest
from service.config import Settings
from service.engine import (
    ADMISSIBLE,
    DEFAULT_ALGORITHM,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    NO_POLICY,
    REASON_NAMES,
    REFUSED_ROW,
    STATUS_NAMES,
    BatchPolicy,
    CircleRegion,
    EngineError,
    GridMap,
    PathBatch,
    PathQuery,
    PathResult,
    Profile,
    RectRegion,
    Region,
    SearchOptions,
    find_path,
    find_paths,
    find_paths_between,
    shared_goal_rows,
)
from service.engine.layers import Layers
from service.engine.toolbox import uses_toolbox

_NO_DEFAULTS = PathOptions()
#: ``PathBatch.status`` codes (indexes of ``STATUS_NAMES``).
_FOUND: Final = STATUS_NAMES.index("found")
_NO_PATH: Final = STATUS_NAMES.index("no_path")


class Query(NamedTuple):
    """A path query with every option resolved: the engine's query, the answer format
    and how many expansions to trace (0: no trace)."""

    spec: PathQuery
    format: PathFormat
    trace: int = 0
    profile: ProfileRef = None  # bound to the map when searched (``bound_spec``)
    resumable: bool = False


def resolve(request: PathRequest, defaults: PathOptions | None, settings: Settings, *,
            trace: bool = False, batch: bool = False) -> Query:  # fmt: skip
    """Fill options from ``defaults`` then server defaults; check the server's caps
    (node budget, agent size) and the goal region's form. ``trace``: whether to trace
    when the request does not say; ``batch``: a batch item (which cannot be traced).

    The options are made into the query's ``SearchOptions`` here, once, and carried
    whole to the kernel; what they break raises the engine's error (a bad weight, a
    budget below 1: ``InvalidValue``). Coordinates and goals are the engine's to check.
    """

    d = defaults or _NO_DEFAULTS
    traced = trace if request.trace is None else request.trace
    if traced and batch:
        raise ApiError(ErrorCode.INVALID_QUERY, "trace is for single queries (POST "
                       "/v1/maps/{map_id}/path or path.png), not batch items")  # fmt: skip
    if batch and request.min_revision is not None:
        raise ApiError(ErrorCode.INVALID_QUERY, "a batch's min_revision is given once, "
                       "beside 'queries', not in its items")  # fmt: skip
    if batch and request.resumable:
        raise ApiError(ErrorCode.INVALID_QUERY, "resumable is for single queries (POST "
                       "/v1/maps/{map_id}/path), not batch items")  # fmt: skip
    if batch and request.deadline_ms is not None:
        raise ApiError(ErrorCode.INVALID_QUERY, "a batch's deadline_ms is given once, beside "
                       "'queries' or in 'defaults', not in its items")  # fmt: skip
    budget = request.max_expansions if request.max_expansions is not None else d.max_expansions
    if budget is None:
        budget = settings.max_expansions
    elif budget > settings.max_expansions:  # budgets below 1 are the engine's to reject
        raise ApiError(
            ErrorCode.INVALID_VALUE,
            f"max_expansions {budget} exceeds the server cap {settings.max_expansions} "
            "(GRIDPATH_MAX_EXPANSIONS); a request may lower the cap, not raise it",
        )
    weight = request.weight if request.weight is not None else d.weight
    size = capped_agent_size(
        request.agent_size if request.agent_size is not None else d.agent_size, settings
    )
    options = SearchOptions(
        heuristic=request.heuristic or d.heuristic or DEFAULT_HEURISTIC,
        diagonal=request.diagonal or d.diagonal or DEFAULT_DIAGONAL,
        weight=1.0 if weight is None else weight,
        max_expansions=budget,
        algorithm=request.algorithm or d.algorithm or DEFAULT_ALGORITHM,
        unreachable=request.unreachable or d.unreachable or "no_path",
        agent_size=size,
        weight_schedule=request.weight_schedule or d.weight_schedule or "static",
        beam_width=request.beam_width if request.beam_width is not None else d.beam_width,
    )
    spec = PathQuery(
        start=request.start,
        goal=request.goal,
        options=options,
        goals=request.goals,
        goal_region=None if request.goal_region is None else _region(request.goal_region),
        snap=bool(request.snap if request.snap is not None else d.snap),
    )
    # A search expands at most its budget: a longer trace buffer would never fill.
    capacity = min(settings.max_trace_expansions, max(1, budget)) if traced else 0
    profile = profile_ref(request.profile if request.profile is not None else d.profile)
    return Query(spec=spec, format=request.format or d.format or "waypoints", trace=capacity,
                 profile=profile, resumable=bool(request.resumable))  # fmt: skip


def capped_agent_size(size: int | None, settings: Settings) -> int:
    """``agent_size`` (default 1) within the server cap; sizes below 1 are the engine's
    to reject."""
    if size is not None and size > settings.max_agent_size:
        raise ApiError(
            ErrorCode.INVALID_VALUE,
            f"agent_size {size} exceeds the server cap {settings.max_agent_size} "
            "(GRIDPATH_MAX_AGENT_SIZE)",
        )
    return 1 if size is None else size


def _region(region: GoalRegion) -> Region:
    """The engine's region of a ``goal_region`` (its schema checked it has one form)."""
    if region.rect is not None:
        return RectRegion(*region.rect, layer=region.layer or 0)
    if region.center is None or region.radius is None:  # the schema rules this out
        raise ApiError(ErrorCode.INVALID_QUERY, "goal_region needs 'center' and 'radius'")
    return CircleRegion(region.center, region.radius)


def simple(query: Query) -> bool:
    """Whether a query is one goal for a one-cell unit, with no nearest-cell fallback:
    the only kind short enough to try on the event loop (others may build a sized
    grid or scan for the nearest cell first, or a profile's view)."""
    spec = query.spec
    return (spec.goal is not None and spec.options.agent_size == 1 and query.profile is None
            and spec.options.unreachable == "no_path" and not query.trace
            and not query.resumable and not spec.snap
            and not uses_toolbox(spec.options))  # fmt: skip


#: All of a batch's items at once: one call into pydantic-core instead of one per item.
_REQUESTS: TypeAdapter[list[PathRequest]] = TypeAdapter(list[PathRequest])


def resolve_items(items: list[Any], defaults: PathOptions | None, settings: Settings
                  ) -> list[Query | dict[str, str]]:  # fmt: skip
    """Validate a batch's raw items; a bad item becomes its error body in its slot.

    An item of just ``start`` and ``goal``, each two integers (a game's common
    query), takes the batch's options resolved once (``_cell_to_cell``), which is
    what pydantic and :func:`resolve` would make of it, at a tenth of their cost.
    So does an item of a start and a goal of integers and options of plain values
    (``_option_set``): its option set is resolved once per batch, with the cells
    left out (``_without_cells``; nothing resolved depends on them). The others
    are validated together; only if one of them is bad are they validated again
    one by one, to tell which."""
    common = _cell_to_cell(defaults, settings)
    resolved: list[Query | dict[str, str] | None] = [None] * len(items)
    others = []
    sets: dict[tuple[object, ...], Query | dict[str, str]] = {}
    for i, item in enumerate(items):
        cells = _start_and_goal(item)
        if cells is None:
            cells = _cells_of(item)
            key = None if cells is None else _option_set(item)
            if cells is None or key is None:
                others.append(i)
                continue
            template = sets.get(key)
            if template is None:
                template = sets[key] = _without_cells(item, defaults, settings)
            resolved[i] = _at_cells(template, cells)
        else:
            resolved[i] = _at_cells(common, cells)
    if others:
        rest = [items[i] for i in others]
        try:
            answers = [_resolved(r, defaults, settings) for r in _REQUESTS.validate_python(rest)]
        except ValidationError:
            answers = [resolve_item(item, defaults, settings) for item in rest]
        for i, answer in zip(others, answers, strict=True):
            resolved[i] = answer
    return [r for r in resolved if r is not None]


def _at_cells(template: Query | dict[str, str], cells: tuple[int, int, int, int]
              ) -> Query | dict[str, str]:  # fmt: skip
    """``template`` (a query resolved without its cells, or its error) from ``(sx, sy)``
    to ``(gx, gy)``. (``_replace`` would cost twice as much.)"""
    if not isinstance(template, Query):
        return template
    sx, sy, gx, gy = cells
    return Query(PathQuery((sx, sy), (gx, gy), *template.spec[2:]), template.format,
                 template.trace, template.profile)  # fmt: skip


#: JSON values an option set may hold to be resolved once per batch: plain scalars
#: (lists and objects, such as ``goals``, are not hashable; each item is resolved).
_PLAIN: Final = frozenset({str, int, float, bool, type(None)})


def _cells_of(item: object) -> tuple[int, int, int, int] | None:
    """``(sx, sy, gx, gy)`` of an item with a ``start`` and a ``goal`` of two integers
    each (``_integer_cells``) and other members; None for any other."""
    if type(item) is not dict or len(item) < 3:
        return None
    return _integer_cells(item.get("start"), item.get("goal"))


def _option_set(item: dict[str, Any]) -> tuple[object, ...] | None:
    """The key of an item's members other than ``start`` and ``goal``, when all their
    values are plain: each member's name, type (``1``, ``1.0`` and ``True`` are equal
    keys, and the schema tells them apart) and value, in order; None otherwise."""
    key: list[object] = []
    for name, value in item.items():
        if name in ("start", "goal"):
            continue
        kind = type(value)
        if kind not in _PLAIN:
            return None
        key += (name, kind, value)
    return tuple(key)


def _without_cells(item: dict[str, Any], defaults: PathOptions | None, settings: Settings
                   ) -> Query | dict[str, str]:  # fmt: skip
    """What ``resolve_item`` makes of ``item`` with its start and goal at ``(0, 0)``: the
    query of every item of its option set, cells aside, or their error (the cells are
    two integers each, which the schema takes as they are and nothing checks)."""
    return resolve_item(item | {"start": [0, 0], "goal": [0, 0]}, defaults, settings)


def _cell_to_cell(defaults: PathOptions | None, settings: Settings) -> Query | dict[str, str]:
    """What an item of only ``start`` and ``goal`` resolves to under ``defaults``, its
    cells aside (``resolve`` reads nothing else of it): its query, or its error."""
    return _resolved(PathRequest(start=(0, 0), goal=(0, 0)), defaults, settings)


def _start_and_goal(item: object) -> tuple[int, int, int, int] | None:
    """``(sx, sy, gx, gy)`` of an item that is exactly ``{"start": [x, y], "goal": [x, y]}``
    with integer coordinates (``_integer_cells``); None for any other item."""
    if type(item) is not dict or len(item) != 2:
        return None
    return _integer_cells(item.get("start"), item.get("goal"))


def _integer_cells(start: object, goal: object) -> tuple[int, int, int, int] | None:
    """``(sx, sy, gx, gy)`` when ``start`` and ``goal`` are each a list of two integers
    (as the schema's strict integers: no bools, floats or strings); None otherwise."""
    if not (type(start) is list and type(goal) is list and len(start) == 2 and len(goal) == 2):
        return None
    sx, sy = start
    gx, gy = goal
    if not (type(sx) is int and type(sy) is int and type(gx) is int and type(gy) is int):
        return None
    return sx, sy, gx, gy


class CellBatch(NamedTuple):
    """A batch whose every item is just a start and a goal (``cell_batch``)."""

    cells: npt.NDArray[np.int64]  # (n, 4): sx, sy, gx, gy per item
    query: Query  # what every item resolves to, its start and goal aside


def cell_batch(items: list[Any], defaults: PathOptions | None, settings: Settings
               ) -> CellBatch | None:  # fmt: skip
    """The batch as one array of cells, when every item is exactly a start and a goal
    of integers (``_start_and_goal``) and the batch's options resolve to a query from
    one cell to another (``run_cells`` answers it); None otherwise: the items are then
    resolved one by one (``resolve_items``), which gives each its error."""
    if not items:
        return None
    common = _cell_to_cell(defaults, settings)
    if not isinstance(common, Query) or not simple(common):
        return None
    rows = []
    for item in items:
        cells = _start_and_goal(item)
        if cells is None:
            return None
        rows.append(cells)
    try:
        return CellBatch(np.array(rows, np.int64), common)
    except OverflowError:  # a coordinate past int64: off the map, which the long way says
        return None


def resolve_item(item: Any, defaults: PathOptions | None, settings: Settings
                 ) -> Query | dict[str, str]:  # fmt: skip
    """Validate one raw batch item; a bad item becomes its error body."""
    try:
        request = PathRequest.model_validate(item)
    except ValidationError as exc:
        return error_body(ErrorCode.INVALID_QUERY, validation_message(exc))
    return _resolved(request, defaults, settings)


def _resolved(request: PathRequest, defaults: PathOptions | None, settings: Settings
              ) -> Query | dict[str, str]:  # fmt: skip
    try:
        return resolve(request, defaults, settings, batch=True)
    except ApiError as exc:
        return error_body(exc.code, exc.message)
    except EngineError as exc:  # an option the engine refuses
        return error_body(engine_error_code(exc), str(exc))


def search(grid: GridMap, query: Query, *, policy: BatchPolicy, budget: int | None = None
           ) -> PathResult:  # fmt: skip
    """Run the engine (``policy``: its goal limit); ``budget`` lowers the query's own
    (for bounded inline attempts)."""
    spec = bound_spec(grid, query)
    options = spec.options if budget is None else spec.options.with_budget(budget)
    return find_path(grid, spec.start, spec.goal, options=options, goals=spec.goals,
                     goal_region=spec.goal_region, max_goals=policy.max_goals,
                     trace=query.trace, snap=spec.snap)  # fmt: skip


def answer(result: PathResult, query: Query, elapsed_ns: int) -> dict[str, Any]:
    """The JSON answer of one search (numpy arrays are serialised by orjson)."""
    points, length, links_at = path_points(result, query.format)
    optimal = result.status == "found" and exact(query.spec.options, result.heuristic_used,
                                                 result.algorithm_used)  # fmt: skip
    payload: dict[str, Any] = {
        "status": result.status,
        "cost": result.cost,
        "length": length,
        "path": points,
        "format": query.format,
        "expanded": result.expanded,
        "heuristic_used": result.heuristic_used,
        "algorithm_used": result.algorithm_used,
        "elapsed_us": elapsed_ns // 1000,
        "revision": 0 if result.grid is None else result.grid.revision,
        "reached": result.reached,
        "partial_reason": result.partial_reason,
        "profile_used": profile_used(query.profile),
        "optimal": optimal,
    }
    if result.trace is not None:
        trace = result.trace
        payload["trace"] = {"expanded": trace.expanded, "reopened": result.reopened,
                            "cut": trace.cut}  # fmt: skip
    if query.format == "directions" and result.grid is not None:
        payload["path"] = points[:1]
        payload["moves"], links_at = moves_of(points, links_at, result.grid.layers)
    if result.snapped:
        payload["snapped"] = dict(result.snapped)
    if result.grid is not None and result.grid.layers.count > 1:
        _on_layers(payload, result.grid.layers)
    if result.grid is not None and result.grid.links is not None:
        used = zip(result.links_used, links_at, strict=True)
        payload["links_used"] = [{"id": use.id, "at": at} for use, at in used]
    return payload


def path_points(result: PathResult, path_format: PathFormat
                ) -> tuple[npt.NDArray[np.int32], float, tuple[int, ...]]:  # fmt: skip
    """A result's (n, 2) ``(x, row)`` path points in ``path_format``, its length, and
    the index in those points where each link it takes is entered."""
    if path_format == "smoothed":
        smooth = result.smoothed()
        return smooth.points, smooth.length, smooth.links_at
    if path_format == "cells":
        return result.cells, result.length, tuple(use.at for use in result.links_used)
    # Waypoint segments run along grid directions: the same length. (``directions``
    # are the waypoints' segments.)
    return result.waypoints, result.length, tuple(use.waypoint for use in result.links_used)


def _on_layers(payload: dict[str, Any], layers: Layers) -> None:
    """An answer's cells as ``[x, y, layer]`` (``layered``)."""
    payload["path"] = floor_points(layers, payload["path"])
    payload["reached"] = floor_point(layers, payload["reached"])
    if "snapped" in payload:
        payload["snapped"] = {k: floor_point(layers, v) for k, v in payload["snapped"].items()}
    if "trace" in payload:
        payload["trace"]["expanded"] = floor_points(layers, payload["trace"]["expanded"])


def deadline_of(deadline_ms: float | None, read_ns: int) -> int:
    """The ``time.monotonic_ns`` reading ``deadline_ms`` after ``read_ns`` (when the
    request was read); 0 for no deadline."""
    return 0 if deadline_ms is None else read_ns + max(1, round(deadline_ms * 1_000_000))


def unstarted(query: Query, revision: int) -> dict[str, Any]:
    """The answer of a query its deadline left unstarted (it never reached the engine):
    ``partial``, ``deadline``, an empty path, nothing planned."""
    return {"status": "partial", "cost": 0.0, "length": 0.0, "path": [],
            "format": query.format, "expanded": 0, "heuristic_used": None,
            "algorithm_used": None, "elapsed_us": 0, "revision": revision, "reached": None,
            "partial_reason": "deadline", "profile_used": profile_used(query.profile),
            "optimal": False}  # fmt: skip


def exact(options: SearchOptions, heuristic_used: str | None, algorithm_used: str | None
          ) -> bool:  # fmt: skip
    """Whether a ``found`` answer searched so is guaranteed least-cost: weight 1, a
    heuristic admissible under the policy (``ADMISSIBLE``: what ran, which a table
    still building may have made ``octile``), an exact algorithm (not ``beam``)."""
    return (options.weight == 1.0 and algorithm_used != "beam"
            and heuristic_used in ADMISSIBLE[options.diagonal])  # fmt: skip


def run(grid: GridMap, query: Query, *, policy: BatchPolicy) -> dict[str, Any]:
    """Search and answer; engine errors propagate (rendered by the error handlers)."""
    began = time.perf_counter_ns()
    result = search(grid, query, policy=policy)
    return answer(result, query, time.perf_counter_ns() - began)


@dataclass(slots=True)
class Tally:
    """The expansions of the searches behind some answers: their sum and the most one
    took. A field's answers are left out: each gives its one search's count."""

    total: int = 0
    most: int = 0

    def add_batch(self, found: PathBatch) -> None:
        """Count every answered row of ``found``, from its columns."""
        counted = found.status != REFUSED_ROW
        fields = [i for i, plan in enumerate(found.plans) if plan.algorithm_used == "field"]
        if fields:
            counted &= ~np.isin(found.plan, fields)
        self._add(found.expanded[counted])

    def add_results(self, outcomes: Sequence[PathResult | EngineError]) -> None:
        """Count every result of ``outcomes``."""
        self._add(np.array([r.expanded for r in outcomes
                            if isinstance(r, PathResult) and r.algorithm_used != "field"],
                           np.int64))  # fmt: skip

    def _add(self, counts: npt.NDArray[np.int64]) -> None:
        if counts.size:
            self.total += int(counts.sum())
            self.most = max(self.most, int(counts.max()))


class InlineBound(NamedTuple):
    """What an answer made on the event loop may cost: expansions a query, and path
    cells all of a batch's answers together (short to find, long to send)."""

    expansions: int
    cells: int


@overload
def run_batch(grid: GridMap, items: list[Query | dict[str, str]], *,
              policy: BatchPolicy = NO_POLICY,
              tally: Tally | None = ..., bound: None = ...
              ) -> list[dict[str, Any]]: ...  # fmt: skip
@overload
def run_batch(grid: GridMap, items: list[Query | dict[str, str]], *,
              policy: BatchPolicy = NO_POLICY,
              tally: Tally | None = ..., bound: InlineBound
              ) -> list[dict[str, Any]] | None: ...  # fmt: skip
def run_batch(grid: GridMap, items: list[Query | dict[str, str]], *,
              policy: BatchPolicy = NO_POLICY,
              tally: Tally | None = None, bound: InlineBound | None = None
              ) -> list[dict[str, Any]] | None:  # fmt: skip
    """Answer every query in order, all searches in one engine call; a failing query
    yields its error body in its slot. ``elapsed_us`` is the batch's mean per query.
    ``policy``: see ``find_paths``; ``tally``: counts the searches' expansions.

    With ``bound``, at most ``bound.expansions`` a query, building nothing (for the
    event loop: see ``find_paths``); None when it cannot answer so, when its paths
    hold more than ``bound.cells`` together, or when a query is traced (a trace is
    kept for the search threads, like every query that is not ``simple``)."""
    items = bound_items(grid, items)
    queries = [item for item in items if isinstance(item, Query)]
    specs = [q.spec for q in queries]
    if bound is None:
        began = time.perf_counter_ns()
        outcomes = find_paths(grid, specs, policy=policy)
        each = (time.perf_counter_ns() - began) // max(1, len(queries))
        if tally is not None:
            tally.add_results(outcomes)
        found = iter(outcomes)
        return [_answer_or_error(next(found), item, each) if isinstance(item, Query) else item
                for item in items]  # fmt: skip
    if not queries:  # every item an error (or none): nothing to search
        return [item for item in items if not isinstance(item, Query)]
    if any(query.trace for query in queries):
        return None
    began = time.perf_counter_ns()
    batch = find_paths(grid, specs, policy=policy, bound=bound.expansions)
    if batch is None or batch.offsets[-1] > bound.cells:
        return None
    each = (time.perf_counter_ns() - began) // max(1, len(queries))
    if tally is not None:
        tally.add_batch(batch)
    answers = iter(_answers(batch, queries, each))
    return [next(answers) if isinstance(item, Query) else item for item in items]


@overload
def run_cells(grid: GridMap, batch: CellBatch, *, policy: BatchPolicy = NO_POLICY,
              tally: Tally | None = ..., bound: None = ...
              ) -> list[dict[str, Any]]: ...  # fmt: skip
@overload
def run_cells(grid: GridMap, batch: CellBatch, *, policy: BatchPolicy = NO_POLICY,
              tally: Tally | None = ..., bound: InlineBound
              ) -> list[dict[str, Any]] | None: ...  # fmt: skip
def run_cells(grid: GridMap, batch: CellBatch, *, policy: BatchPolicy = NO_POLICY,
              tally: Tally | None = None, bound: InlineBound | None = None
              ) -> list[dict[str, Any]] | None:  # fmt: skip
    """``run_batch`` of a ``cell_batch``: one engine call, answers built from its
    columns (the same JSON as ``answer``'s, tested); with ``bound``, as there. (On a
    layered map its cells are on layer 0: each is read as ``resolve`` reads it.)"""
    if grid.layers.count > 1:
        return run_batch(grid, cell_items(batch), policy=policy, tally=tally, bound=bound)
    began = time.perf_counter_ns()
    options = bound_spec(grid, batch.query).options
    found = find_paths_between(grid, batch.cells, options=options,
                               policy=policy,
                               bound=None if bound is None else bound.expansions)  # fmt: skip
    if found is None or (bound is not None and found.offsets[-1] > bound.cells):
        return None
    if tally is not None:
        tally.add_batch(found)
    return _cell_answers(found, batch, time.perf_counter_ns() - began)


def cell_groups(grid: GridMap, batch: CellBatch, *, policy: BatchPolicy = NO_POLICY
                ) -> list[npt.NDArray[np.int64]] | None:  # fmt: skip
    """The rows of a ``cell_batch`` that ``run_cells`` answers together (see
    ``shared_goal_rows``); None when the map cannot tell yet."""
    if grid.layers.count > 1:
        return None
    options = bound_spec(grid, batch.query).options
    return shared_goal_rows(grid, batch.cells, options=options, policy=policy)


def cell_items(batch: CellBatch) -> list[Query | dict[str, str]]:
    """A ``cell_batch``'s rows as the items ``resolve_items`` makes of them."""
    return [_at_cells(batch.query, (sx, sy, gx, gy)) for sx, sy, gx, gy in batch.cells.tolist()]


def _cell_answers(found: PathBatch, batch: CellBatch, elapsed_ns: int) -> list[dict[str, Any]]:
    return _answers(found, [batch.query] * len(found), elapsed_ns // max(1, len(found)))


def _answer_or_error(result: PathResult | EngineError, query: Query, elapsed_ns: int
                     ) -> dict[str, Any]:  # fmt: skip
    if isinstance(result, EngineError):
        return error_body(engine_error_code(result), str(result))
    return answer(result, query, elapsed_ns)


def _answers(found: PathBatch, queries: Sequence[Query], elapsed_ns: int
             ) -> list[dict[str, Any]]:  # fmt: skip
    """``answer`` of every row of ``found`` (row ``i``: ``queries[i]``, in its format),
    read from its columns: one conversion per column, no result object per row but
    for a ``smoothed`` one (its path is string-pulled through its result) and on a
    map with links (a result lists the links taken)."""
    formats = [query.format for query in queries]
    # The points stay numpy: each answer's path is a view of them, which orjson writes
    # straight from the array (a list of a list a cell would cost more than the rest).
    none: tuple[Any, list[int]] = (found.cells[:0], [])  # a format no row is answered in
    cells = (found.cells, found.offsets.tolist()) if "cells" in formats else none
    waypoints = ((found.waypoints, found.waypoint_offsets.tolist())
                 if "waypoints" in formats or "directions" in formats else none)  # fmt: skip
    moves = runs(*waypoints) if "directions" in formats else []
    columns = (found.status, found.cost, found.length, found.expanded)
    status, cost, length, expanded = (column.tolist() for column in columns)
    plans, elapsed_us, revision = found.plans, elapsed_ns // 1000, found.grid.revision
    plan = found.plan.tolist() if len(plans) > 1 else None
    linked = found.grid.links is not None or found.grid.layers.count > 1
    exacts: dict[tuple[SearchOptions, int], bool] = {}  # by options and plan
    answers: list[dict[str, Any]] = []
    for i, code in enumerate(status):
        if code == REFUSED_ROW:
            error = found.errors[i]
            answers.append(error_body(engine_error_code(error), str(error)))
            continue
        answer_format = formats[i]
        if answer_format == "smoothed" or linked:  # (read from a result)
            answers.append(_answer_or_error(found.result(i), queries[i], elapsed_ns))
            continue
        points, offsets = cells if answer_format == "cells" else waypoints
        which = 0 if plan is None else plan[i]
        used = plans[which]
        options = queries[i].spec.options
        optimal = exacts.get((options, which))
        if optimal is None:
            optimal = exacts[options, which] = exact(options, used.heuristic_used,
                                                     used.algorithm_used)  # fmt: skip
        answers.append(
            {  # ``answer``'s keys, in its order
                "status": STATUS_NAMES[code],
                "cost": None if code == _NO_PATH else cost[i],
                "length": length[i],
                "path": points[
                    offsets[i] : offsets[i + 1]
                    if answer_format != "directions"
                    else min(offsets[i] + 1, offsets[i + 1])
                ],
                "format": answer_format,
                "expanded": expanded[i],
                "heuristic_used": used.heuristic_used,
                "algorithm_used": used.algorithm_used,
                "elapsed_us": elapsed_us,
                "revision": revision,
                # A found path ends at its goal, and so do its waypoints.
                "reached": points[offsets[i + 1] - 1].tolist() if code == _FOUND else None,
                "partial_reason": REASON_NAMES[code],
                "profile_used": profile_used(queries[i].profile),
                "optimal": code == _FOUND and optimal,
            }
        )
        if answer_format == "directions":
            answers[-1]["moves"] = moves[i]
    return answers


def bound_spec(grid: GridMap, query: Query) -> PathQuery:
    """``query``'s engine query with its profile bound to ``grid`` (``profiles.bind``).

    Raises:
        ApiError: ProfileNotFound. EngineError: a profile the map refuses.
    """
    spec = grid_spec(grid.layers, query.spec)
    if query.profile is None:
        return spec
    return _with_profile(spec, bind(grid, query.profile))


def _with_profile(spec: PathQuery, profile: Profile | None) -> PathQuery:
    return spec._replace(options=spec.options._replace(profile=profile))


def bound_items(grid: GridMap, items: list[Query | dict[str, str]]
                ) -> list[Query | dict[str, str]]:  # fmt: skip
    """A batch's items with their profiles bound (``bound_spec``), each profile once;
    an item whose profile the map refuses becomes its error body."""
    layers = grid.layers
    items = [_on_floors(layers, item) if isinstance(item, Query) else item for item in items]
    if all(not isinstance(item, Query) or item.profile is None for item in items):
        return items
    known: dict[ProfileRef, Profile | dict[str, str] | None] = {}
    out: list[Query | dict[str, str]] = []
    for item in items:
        if not isinstance(item, Query) or item.profile is None:
            out.append(item)
            continue
        if item.profile not in known:
            known[item.profile] = _bound_or_error(grid, item.profile)
        profile = known[item.profile]
        out.append(profile if isinstance(profile, dict)
                   else item._replace(spec=_with_profile(item.spec, profile)))  # fmt: skip
    return out


def _on_floors(layers: Layers, query: Query) -> Query | dict[str, str]:
    """``query`` with its cells on the stacked grid (``grid_spec``: the query itself
    where they are already), or its error body."""
    try:
        spec = grid_spec(layers, query.spec)
    except EngineError as exc:
        return error_body(engine_error_code(exc), str(exc))
    return query if spec is query.spec else query._replace(spec=spec)


def _bound_or_error(grid: GridMap, ref: ProfileRef) -> Profile | dict[str, str] | None:
    try:
        return bind(grid, ref)
    except ApiError as exc:
        return error_body(exc.code, exc.message)
    except EngineError as exc:
        return error_body(engine_error_code(exc), str(exc))
