"""Turning validated path requests into engine calls and answers (no HTTP here).

Order of checks (as in OSRM): schema (pydantic, before this module), server
limits (:func:`resolve`), then bounds and walkability (the engine), then search.
"""

import time
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from service.api.errors import (
    ApiError,
    ErrorCode,
    engine_error_code,
    error_body,
    validation_message,
)
from service.api.schemas import PathFormat, PathOptions, PathRequest
from service.config import Settings
from service.engine import (
    DEFAULT_ALGORITHM,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    EngineError,
    GridMap,
    PathQuery,
    PathResult,
    find_path,
    find_paths,
)

_NO_DEFAULTS = PathOptions()


@dataclass(frozen=True, slots=True)
class Query:
    """A path query with every option resolved: the engine's query and the answer format."""

    spec: PathQuery
    format: PathFormat


def resolve(request: PathOptions, start: tuple[int, int], goal: tuple[int, int],
            defaults: PathOptions | None, settings: Settings) -> Query:  # fmt: skip
    """Fill options from ``defaults`` then server defaults; check the node budget cap.

    Values the engine validates itself (weight, budget >= 1, coordinates) pass through.
    """

    d = defaults or _NO_DEFAULTS
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
    spec = PathQuery(
        start=start,
        goal=goal,
        heuristic=request.heuristic or d.heuristic or DEFAULT_HEURISTIC,
        diagonal=request.diagonal or d.diagonal or DEFAULT_DIAGONAL,
        weight=1.0 if weight is None else weight,
        max_expansions=budget,
        algorithm=request.algorithm or d.algorithm or DEFAULT_ALGORITHM,
    )
    return Query(spec=spec, format=request.format or d.format or "waypoints")


def resolve_item(item: Any, defaults: PathOptions | None, settings: Settings
                 ) -> Query | dict[str, str]:  # fmt: skip
    """Validate one raw batch item; a bad item becomes its error body."""
    try:
        request = PathRequest.model_validate(item)
        return resolve(request, request.start, request.goal, defaults, settings)
    except ValidationError as exc:
        return error_body(ErrorCode.INVALID_QUERY, validation_message(exc))
    except ApiError as exc:
        return error_body(exc.code, exc.message)


def search(grid: GridMap, query: Query, *, budget: int | None = None) -> PathResult:
    """Run the engine; ``budget`` lowers the query's own (for bounded inline attempts)."""
    spec = query.spec
    return find_path(
        grid,
        spec.start,
        spec.goal,
        heuristic=spec.heuristic,
        diagonal=spec.diagonal,
        weight=spec.weight,
        max_expansions=spec.max_expansions if budget is None else budget,
        algorithm=spec.algorithm,
    )


def answer(result: PathResult, query: Query, elapsed_ns: int) -> dict[str, Any]:
    """The JSON answer of one search (numpy arrays are serialised by orjson)."""
    if query.format == "smoothed":
        smooth = result.smoothed()
        points, length = smooth.points, smooth.length
    else:
        points = result.cells if query.format == "cells" else result.waypoints
        length = result.length  # waypoint segments run along grid directions: same length
    return {
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
    }


def run(grid: GridMap, query: Query) -> dict[str, Any]:
    """Search and answer; engine errors propagate (rendered by the error handlers)."""
    began = time.perf_counter_ns()
    result = search(grid, query)
    return answer(result, query, time.perf_counter_ns() - began)


def run_batch(grid: GridMap, items: list[Query | dict[str, str]], *, shared_goal_queries: int = 0
              ) -> list[dict[str, Any]]:  # fmt: skip
    """Answer every query in order, all searches in one engine call; a failing query
    yields its error body in its slot. ``elapsed_us`` is the batch's mean per query.
    ``shared_goal_queries``: see ``find_paths``."""
    queries = [item for item in items if isinstance(item, Query)]
    began = time.perf_counter_ns()
    specs = [q.spec for q in queries]
    outcomes = iter(find_paths(grid, specs, shared_goal_queries=shared_goal_queries))
    each = (time.perf_counter_ns() - began) // max(1, len(queries))
    results: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, Query):
            results.append(item)
            continue
        outcome = next(outcomes)
        if isinstance(outcome, EngineError):
            results.append(error_body(engine_error_code(outcome), str(outcome)))
        else:
            results.append(answer(outcome, item, each))
    return results
