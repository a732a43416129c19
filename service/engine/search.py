"""``find_path`` and ``find_paths``: the engine's facade over the search kernels.

Validation order (as in OSRM): option names and ranges, then coordinates within
bounds, then walkability, then the search. Trivial answers come before any
search, inside the kernel: start == goal, start and goal on different islands
(``no_path`` with zero expansions), and, on uniform-cost maps, a walkable
straight line (optimal). A single query is a batch of one: one code path.
"""

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import (
    EngineError,
    InvalidBudgetError,
    InvalidWeightError,
    OutOfBoundsError,
    UnknownAlgorithmError,
    UnknownDiagonalError,
    UnknownHeuristicError,
    UnsupportedAlgorithmError,
    on_blocked_cell,
    outside_map,
)
from service.engine.fields import field_search
from service.engine.grid import GridMap
from service.engine.kernels.batch import search_batch
from service.engine.kernels.codes import (
    ALGORITHM_ASTAR,
    ALGORITHM_JPS,
    DIAGONAL_NEVER,
    DIAGONAL_NO_CORNER_CUTTING,
    HEURISTIC_CLUSTER,
    HEURISTIC_LANDMARKS,
    HEURISTIC_MANHATTAN,
    HEURISTIC_OCTILE,
    NO_TABLE,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.fields import write_field_paths
from service.engine.options import (
    ADMISSIBLE,
    ALGORITHMS,
    CLUSTER_TABLES,
    CONSISTENT,
    DEFAULT_ALGORITHM,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    DIAGONALS,
    HEURISTICS,
    Algorithm,
    AlgorithmUsed,
    Diagonal,
    Heuristic,
    Status,
    option_code,
)
from service.engine.result import PathResult
from service.engine.scratch import (
    MAX_BUCKETS,
    MAX_INTEGER_COST,
    PathBuffers,
    QueryArrays,
    Scratch,
    thread_scratch,
)

#: Budget used when the caller sets none: more than any grid has cells.
UNLIMITED: Final = 2**62

#: Heuristics whose values are whole numbers of cells (times the integer min cost).
INTEGER_HEURISTICS: Final = frozenset({"manhattan", "chebyshev", "zero"})

_ALGORITHM_NAMES: Final[dict[int, AlgorithmUsed]] = {
    ALGORITHM_ASTAR: "astar",
    ALGORITHM_JPS: "jps",
}
#: Policy names by kernel code.
_POLICY_NAMES: Final[dict[int, str]] = {code: name for name, code in DIAGONALS.items()}
#: The code of ``auto`` in ``ALGORITHMS`` (resolved per query).
ALGORITHM_AUTO: Final = ALGORITHMS["auto"]

_STATUS: Final[dict[int, Status]] = {
    STATUS_FOUND: "found",
    STATUS_PARTIAL: "partial",
    STATUS_NO_PATH: "no_path",
}

Point = Sequence[int] | npt.NDArray[np.integer]


@dataclass(frozen=True, slots=True)
class PathQuery:
    """One query for :func:`find_paths`; the fields are :func:`find_path`'s arguments."""

    start: Point
    goal: Point
    heuristic: Heuristic | str = DEFAULT_HEURISTIC
    diagonal: Diagonal | str = DEFAULT_DIAGONAL
    weight: float = 1.0
    max_expansions: int | None = None
    tie_break: bool = True
    algorithm: Algorithm | str = DEFAULT_ALGORITHM


class _Checked(NamedTuple):
    """A validated query in the kernel's terms."""

    source: int
    target: int
    diagonal: int
    heuristic: int
    weight: float
    budget: int
    tie_break: bool
    equal_f_stack: bool
    buckets: int
    table: int
    heuristic_used: Heuristic
    algorithm: int
    landmark: int


def find_path(
    grid: GridMap,
    start: Point,
    goal: Point,
    *,
    heuristic: Heuristic | str = DEFAULT_HEURISTIC,
    diagonal: Diagonal | str = DEFAULT_DIAGONAL,
    weight: float = 1.0,
    max_expansions: int | None = None,
    tie_break: bool = True,
    algorithm: Algorithm | str = DEFAULT_ALGORITHM,
    scratch: Scratch | None = None,
) -> PathResult:
    """Find a path from ``start`` to ``goal``, both ``(x, y)`` = (column, row).

    Args:
        grid: the map.
        start, goal: cell coordinates.
        heuristic: ``octile``, ``manhattan``, ``chebyshev``, ``euclidean`` or
            ``zero`` (Dijkstra); scaled by the map's minimum cost. See ``options``
            for which are admissible under which policy.
        diagonal: ``never``, ``no_corner_cutting`` (a diagonal needs both
            orthogonal neighbours walkable), ``one_obstacle`` (at least one) or
            ``always``.
        weight: ``f = g + weight * h``, at least 1; with an admissible heuristic
            the cost is at most ``weight`` times optimal.
        max_expansions: node budget; when it runs out the result is ``partial``:
            the path to the node seen nearest the goal. ``None``: unlimited.
        tie_break: on equal ``f`` expand the node with the larger ``g`` first.
        algorithm: ``astar``; ``jps`` (Jump Point Search: uniform-cost maps,
            ``no_corner_cutting``, a consistent heuristic; same costs, far fewer
            expansions, which count jump points); ``auto``: ``jps`` where it
            applies, ``astar`` elsewhere. ``algorithm_used`` says which ran.
        scratch: caller-owned search buffers; by default this thread's own.

    Raises:
        UnknownHeuristicError, UnknownDiagonalError, InvalidWeightError,
        InvalidBudgetError, OutOfBoundsError, NotWalkableError, UnknownAlgorithmError,
        UnsupportedAlgorithmError.
    """
    query = PathQuery(start, goal, heuristic, diagonal, weight, max_expansions, tie_break,
                      algorithm)  # fmt: skip
    return _search(grid, [_check(grid, query)], scratch)[0]


def find_paths(
    grid: GridMap,
    queries: Sequence[PathQuery],
    *,
    scratch: Scratch | None = None,
    shared_goal_queries: int = 0,
) -> list[PathResult | EngineError]:
    """Answer many queries on one map in one kernel call (one release of the GIL).

    ``shared_goal_queries``: when at least this many optimal queries (weight 1, an
    admissible heuristic, a budget of at least the map's walkable cells) share a
    goal and a policy, they are answered from one search outward from the goal,
    stopped once it has settled all their starts (``algorithm_used`` ``field``); 0
    never does. Costs are the same as one search each; among equally cheap paths
    another may be returned.

    Returns, in order, each query's result, or the error :func:`find_path` would
    have raised for it: one bad query never fails the others.
    """
    checked: list[_Checked] = []
    answers: list[PathResult | EngineError | None] = []
    for query in queries:
        try:
            checked.append(_check(grid, query))
            answers.append(None)
        except EngineError as exc:
            answers.append(exc)
    groups = _shared_goals(grid, checked, shared_goal_queries)
    results = (_search(grid, checked, scratch) if not groups
               else _search_sharing_goals(grid, checked, groups, scratch))  # fmt: skip
    found = iter(results)
    return [next(found) if answer is None else answer for answer in answers]


def _search_sharing_goals(grid: GridMap, checked: list[_Checked], groups: list[list[int]],
                          scratch: Scratch | None) -> list[PathResult]:  # fmt: skip
    """Answers of ``checked`` in order: ``groups`` (indices) from one field search each,
    the rest from ``_search``."""
    answered: dict[int, PathResult] = {}
    for members in groups:
        group = [checked[i] for i in members]
        answered.update(zip(members, _field_search(grid, group, scratch), strict=True))
    rest = [i for i in range(len(checked)) if i not in answered]
    answered.update(zip(rest, _search(grid, [checked[i] for i in rest], scratch), strict=True))
    return [answered[i] for i in range(len(checked))]


def _shared_goals(grid: GridMap, checked: list[_Checked], least: int) -> list[list[int]]:
    """Indices of ``checked`` grouped by (goal, policy), for groups of at least
    ``least`` queries whose answers are optimal paths: weight 1, an admissible
    heuristic, and a budget no search of this map can run out of."""
    if least <= 0 or len(checked) < least:
        return []
    groups: dict[tuple[int, int], list[int]] = {}
    for i, query in enumerate(checked):
        admissible = ADMISSIBLE[_POLICY_NAMES[query.diagonal]]
        if (query.weight == 1.0 and query.budget >= grid.walkable_cells
                and query.heuristic_used in admissible):  # fmt: skip
            groups.setdefault((query.target, query.diagonal), []).append(i)
    return [members for members in groups.values() if len(members) >= least]


def _field_search(grid: GridMap, group: list[_Checked], scratch: Scratch | None
                  ) -> list[PathResult]:  # fmt: skip
    """Answers of queries sharing one goal and policy, from one search outward from
    the goal that stops once every start is settled."""
    count = len(group)
    scratch = scratch or thread_scratch(grid.padded.size)
    arrays, paths = scratch.for_queries(count)
    sources = arrays.source[:count]
    sources[:] = [query.source for query in group]
    want = np.zeros(grid.padded.size, np.bool_)
    want[sources] = True
    goal = np.array([group[0].target], np.int64)
    dist, step, settled = field_search(grid, goal, group[0].diagonal, math.inf,
                                       want=want, wanted=int(np.count_nonzero(want)))  # fmt: skip
    outputs = (arrays.status, arrays.cost, arrays.length)
    done = 0
    while True:
        done = write_field_paths(grid.padded, grid.padded_width, step, dist, sources, done,
                                 count, outputs, paths.arrays)  # fmt: skip
        if done == count:
            break
        paths.grow_cells(int(paths.offsets[done]), int(paths.turn_offsets[done]),
                         needed=int(paths.offsets[done + 1]))  # fmt: skip
    return _results(grid, group, arrays, paths, expanded=[settled] * count,
                    reopened=[0] * count, algorithm="field")  # fmt: skip


def _check(grid: GridMap, query: PathQuery) -> _Checked:
    """Validate in a fixed order: options, bounds, walkability."""
    heuristic = option_code(HEURISTICS, query.heuristic, "heuristic", UnknownHeuristicError)
    diagonal = option_code(DIAGONALS, query.diagonal, "diagonal", UnknownDiagonalError)
    algorithm = option_code(ALGORITHMS, query.algorithm, "algorithm", UnknownAlgorithmError)
    weight = _checked_weight(query.weight)
    budget = _checked_budget(query.max_expansions)
    sx, sy = _checked_cell(grid, query.start, "start")
    gx, gy = _checked_cell(grid, query.goal, "goal")
    for name, x, y in (("start", sx, sy), ("goal", gx, gy)):
        if not grid.walkable(x, y):
            raise on_blocked_cell(name, x, y)
    tie_break = bool(query.tie_break)
    used: Heuristic = query.heuristic  # type: ignore[assignment]  # checked by _option
    table = landmark = NO_TABLE
    if heuristic == HEURISTIC_CLUSTER:
        heuristic, table, used = _table_heuristic("cluster", grid.clusters, diagonal)
    elif heuristic == HEURISTIC_LANDMARKS:
        heuristic, landmark, used = _table_heuristic("landmarks", grid.landmarks, diagonal)
    # The equal-f stack is itself a larger-g tie-break, sound only when f is monotone
    # along paths: consistent heuristics, and the cluster bound with pathmax.
    monotone = used in CONSISTENT[str(query.diagonal)] or table != NO_TABLE
    stack = tie_break and weight == 1.0 and monotone
    buckets = _bucket_count(grid, used, diagonal) if stack else 0
    if stack and table != NO_TABLE and _bucket_count(grid, "manhattan", diagonal):
        # 4-connected integer map: the table's bounds floored to integers ride the
        # bucket queue too, with every bucket (see ``dial``).
        buckets = MAX_BUCKETS
    algorithm = _algorithm(grid, algorithm, diagonal, used)
    if algorithm == ALGORITHM_JPS:
        stack = False
        buckets = 0
    return _Checked(grid.flat_index(sx, sy), grid.flat_index(gx, gy), diagonal, heuristic,
                    weight, budget, tie_break, stack and not buckets, buckets, table,
                    used, algorithm, landmark)  # fmt: skip


def _algorithm(grid: GridMap, code: int, diagonal: int, heuristic: str) -> int:
    """The algorithm a query runs: ``auto`` picks JPS wherever JPS applies."""
    reasons = []
    if not grid.uniform:
        reasons.append("a uniform-cost map")
    if diagonal != DIAGONAL_NO_CORNER_CUTTING:
        reasons.append("diagonal 'no_corner_cutting'")
    if heuristic not in CONSISTENT["no_corner_cutting"] - {"manhattan"}:
        reasons.append("a consistent heuristic (octile, chebyshev, euclidean, zero)")
    if code == ALGORITHM_JPS and reasons:
        raise UnsupportedAlgorithmError(f"algorithm 'jps' needs {' and '.join(reasons)}")
    if code == ALGORITHM_AUTO:
        return ALGORITHM_ASTAR if reasons else ALGORITHM_JPS
    return code


def _table_heuristic(name: Heuristic, tables: object, diagonal: int
                     ) -> tuple[int, int, Heuristic]:  # fmt: skip
    """Kernel heuristic, table index and reported name of a ``cluster`` or
    ``landmarks`` query (``tables``: the grid's, or None while not built).

    With the policy's table attached: the table over the best plain bound of the
    policy (Manhattan when 4-connected, octile otherwise). Without: octile.
    """
    table = CLUSTER_TABLES.get(diagonal, NO_TABLE)
    if tables is None or table == NO_TABLE:
        return HEURISTIC_OCTILE, NO_TABLE, "octile"
    base = HEURISTIC_MANHATTAN if diagonal == DIAGONAL_NEVER else HEURISTIC_OCTILE
    return base, table, name


def _bucket_count(grid: GridMap, heuristic: object, diagonal: int) -> int:
    """Buckets for the bucket-queue kernel ``dial``, or 0 for the heap: f must be an
    integer, which needs 4-connected moves, integer costs and an integer heuristic,
    and fit in int32 (a path's cost is at most max cost x walkable cells)."""
    if diagonal != DIAGONAL_NEVER or heuristic not in INTEGER_HEURISTICS:
        return 0
    if not grid.integer_costs:
        return 0
    largest_f = grid.max_cost * grid.walkable_cells + grid.min_cost * (grid.width + grid.height)
    if largest_f >= MAX_INTEGER_COST:
        return 0
    count = int(grid.max_cost + grid.min_cost) + 1
    return count if count <= MAX_BUCKETS else 0


def _search(grid: GridMap, checked: list[_Checked], scratch: Scratch | None
            ) -> list[PathResult]:  # fmt: skip
    """Run validated queries through ``search_batch`` and copy out their answers."""
    count = len(checked)
    if count == 0:
        return []
    scratch = scratch or thread_scratch(grid.padded.size)
    arrays, paths = scratch.for_queries(count)
    for i, query in enumerate(checked):
        arrays.source[i], arrays.target[i] = query.source, query.target
        arrays.diagonal[i], arrays.heuristic[i] = query.diagonal, query.heuristic
        arrays.weight[i], arrays.budget[i] = query.weight, query.budget
        arrays.tie_break[i], arrays.equal_f_stack[i] = query.tie_break, query.equal_f_stack
        arrays.buckets[i] = query.buckets
        arrays.table[i] = query.table
        arrays.algorithm[i] = query.algorithm
        arrays.landmark[i] = query.landmark
    tables = grid.clusters
    clusters = max(tables.four.count, tables.eight.count) if tables is not None else 0
    kernel_args = scratch.kernel_args(records=any(query.buckets for query in checked),
                                      clusters=clusters)  # fmt: skip
    if any(query.algorithm == ALGORITHM_JPS for query in checked):
        grid.prepare_jumps()
    first_generation = scratch.take_generations(count)
    done = 0
    while True:
        done = search_batch(grid.kernel_view, arrays.inputs, done, count, first_generation,
                            kernel_args, arrays.outputs, paths.arrays)  # fmt: skip
        if done == count:
            break
        paths.grow_cells(int(paths.offsets[done]), int(paths.turn_offsets[done]),
                         needed=int(paths.offsets[done + 1]))  # fmt: skip
        # Query ``done`` was searched, but its path did not fit: its stamps are in the
        # scratch now. Re-run under the generation it had, it would take its own cells
        # for already seen ones (``no_path`` after one expansion): every query from it
        # on gets a fresh generation instead.
        first_generation = scratch.take_generations(count - done) - done
    expanded, reopened = (a[:count].tolist() for a in (arrays.expanded, arrays.reopened))
    return _results(grid, checked, arrays, paths, expanded=expanded, reopened=reopened)


def _results(grid: GridMap, checked: list[_Checked], arrays: QueryArrays, paths: PathBuffers,
             *, expanded: list[int], reopened: list[int], algorithm: AlgorithmUsed | None = None
             ) -> list[PathResult]:  # fmt: skip
    """Copy the answers the kernels left in ``arrays`` and ``paths`` into results.

    ``algorithm``: what answered every query (a field), else each query's own."""
    count = len(checked)
    # One conversion per array for the whole batch, not one per element.
    status, cost, length = (a[:count].tolist() for a in (arrays.status, arrays.cost,
                                                          arrays.length))  # fmt: skip
    offsets = paths.offsets[: count + 1].tolist()
    turn_offsets = paths.turn_offsets[: count + 1].tolist()
    results = []
    for i, query in enumerate(checked):
        code = _STATUS[status[i]]
        results.append(
            PathResult(
                status=code,
                cost=None if code == "no_path" else cost[i],
                cells=paths.cells[offsets[i] : offsets[i + 1]].copy(),
                waypoints=paths.turns[turn_offsets[i] : turn_offsets[i + 1]].copy(),
                length=length[i],
                expanded=expanded[i],
                reopened=reopened[i],
                heuristic_used="zero" if algorithm == "field" else query.heuristic_used,
                algorithm_used=algorithm or _ALGORITHM_NAMES[query.algorithm],
                grid=grid,
                diagonal_code=query.diagonal,
            )
        )
    return results


def _checked_weight(weight: float) -> float:
    try:
        value = float(weight)
    except (TypeError, ValueError):
        raise InvalidWeightError(f"weight must be a number >= 1, got {weight!r}") from None
    if not (math.isfinite(value) and value >= 1.0):
        raise InvalidWeightError(f"weight {weight!r} is out of range: must be finite and >= 1")
    return value


def _checked_budget(max_expansions: int | None) -> int:
    if max_expansions is None:
        return UNLIMITED
    try:
        budget = operator.index(max_expansions)
    except TypeError:
        raise InvalidBudgetError(
            f"max_expansions must be an integer >= 1, got {max_expansions!r}"
        ) from None
    if budget < 1:
        raise InvalidBudgetError(f"max_expansions {budget} is out of range: must be >= 1")
    return min(budget, UNLIMITED)


def _checked_cell(grid: GridMap, point: Point, name: str) -> tuple[int, int]:
    try:
        px, py = point
        x, y = operator.index(px), operator.index(py)
    except (TypeError, ValueError):
        raise OutOfBoundsError(f"{name} must be two integers [x, y], got {point!r}") from None
    if not (0 <= x < grid.width and 0 <= y < grid.height):
        raise outside_map(name, x, y, width=grid.width, height=grid.height)
    return x, y
