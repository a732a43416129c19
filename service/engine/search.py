"""``find_path`` and ``find_paths``: the engine's facade over the search kernels.

Validation order (as in OSRM): option names and ranges, then coordinates within
bounds, then walkability, then the search. Trivial answers come before any
search, inside the kernel: start == goal, start and goal on different islands
(``no_path`` with zero expansions), and, on uniform-cost maps, a walkable
straight line (optimal). A single query is a batch of one: one code path.
"""

import contextlib
import math
import operator
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import (
    EngineError,
    InvalidBudgetError,
    InvalidQueryError,
    InvalidWeightError,
    OutOfBoundsError,
    UnknownAlgorithmError,
    UnknownDiagonalError,
    UnknownHeuristicError,
    UnsupportedAlgorithmError,
    on_blocked_cell,
    outside_map,
)
from service.engine.goals import GoalSet, Region, cells_goal_set, member_cells
from service.engine.goals import goal_set as make_goal_set
from service.engine.grid import GridMap
from service.engine.kernels.batch import (
    CELLS_REFUSED,
    OPTION_BUDGET,
    REFUSED,
    search_handles,
    search_many,
    search_one,
)
from service.engine.kernels.codes import (
    ALGORITHM_ASTAR,
    ALGORITHM_JPS,
    DIAGONAL_ALWAYS,
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
from service.engine.kernels.fields import settle_starts, write_chain_paths
from service.engine.kernels.goals import goal_on_island, goal_set_search, nearest_cells
from service.engine.kernels.paths import chain_length, write_chain, write_turns_and_length
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
    UNREACHABLE,
    Algorithm,
    AlgorithmUsed,
    Diagonal,
    Heuristic,
    PartialReason,
    Status,
    Unreachable,
    option_code,
)
from service.engine.result import (
    REFUSED_ROW,
    STATUS_NAMES,
    BatchPlan,
    PathBatch,
    PathResult,
    SearchTrace,
)
from service.engine.scratch import (
    MAX_BUCKETS,
    MAX_INTEGER_COST,
    PathBuffers,
    QueryArrays,
    Scratch,
    path_cell_scope,
    scratch_for,
    take_path_cells,
)
from service.engine.sizes import check_room, check_walkable, checked_agent_size

#: Budget used when the caller sets none: more than any grid has cells.
UNLIMITED: Final = 2**62

#: ``target`` of a query to a goal set.
NO_TARGET: Final = -1

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

#: Status names by kernel code.
_STATUS: Final[dict[int, Status]] = dict(enumerate(STATUS_NAMES))

Point = Sequence[int] | npt.NDArray[np.integer]


class PathQuery(NamedTuple):
    """One query for :func:`find_paths`; the fields are :func:`find_path`'s arguments.
    (A named tuple: immutable, and made in a third of a frozen dataclass's time.)"""

    start: Point
    goal: Point | None
    heuristic: Heuristic | str = DEFAULT_HEURISTIC
    diagonal: Diagonal | str = DEFAULT_DIAGONAL
    weight: float = 1.0
    max_expansions: int | None = None
    tie_break: bool = True
    algorithm: Algorithm | str = DEFAULT_ALGORITHM
    goals: Sequence[Point] | None = None
    goal_region: Region | None = None
    unreachable: Unreachable | str = "no_path"
    agent_size: int = 1


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
    grid: GridMap  # the grid of the query's agent size
    goal_set: GoalSet | None  # None: the single goal ``target``
    nearest: bool  # unreachable="nearest"


def find_path(
    grid: GridMap,
    start: Point,
    goal: Point | None = None,
    *,
    heuristic: Heuristic | str = DEFAULT_HEURISTIC,
    diagonal: Diagonal | str = DEFAULT_DIAGONAL,
    weight: float = 1.0,
    max_expansions: int | None = None,
    tie_break: bool = True,
    algorithm: Algorithm | str = DEFAULT_ALGORITHM,
    goals: Sequence[Point] | None = None,
    goal_region: Region | None = None,
    unreachable: Unreachable | str = "no_path",
    agent_size: int = 1,
    max_goals: int = UNLIMITED,
    trace: int = 0,
    scratch: Scratch | None = None,
) -> PathResult:
    """Find a path from ``start`` to ``goal``, both ``(x, y)`` = (column, row).

    Args:
        grid: the map.
        start, goal: cell coordinates.
        goals, goal_region: instead of ``goal`` (exactly one of the three): reach
            the cheapest of these cells, or the cheapest cell of a region (see
            ``goals``); ``reached`` says which. At most ``max_goals`` goals.
        unreachable: ``no_path``, or ``nearest``: when no goal can be reached,
            a ``partial`` path to the reachable cell nearest the goals (see
            ``goals``; ``partial_reason`` ``unreachable``); goals may be blocked.
        agent_size: a ``k x k`` unit whose top-left cell is its position (1 to
            ``MAX_AGENT_SIZE``): it searches ``grid.for_agent_size(k)``.
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
        trace: record the first ``trace`` cells the search expands, in order, as
            the result's ``trace`` (0: none; queries not traced run as fast as ever).
        scratch: caller-owned search buffers; by default this thread's own.

    Raises:
        UnknownHeuristicError, UnknownDiagonalError, InvalidWeightError,
        InvalidBudgetError, OutOfBoundsError, NotWalkableError, UnknownAlgorithmError,
        UnsupportedAlgorithmError, InvalidQueryError.
    """
    # The common query, one cell to one cell, finds its plan by its options' values in
    # a memo of the grid and runs without a batch around it.
    key = None
    if (goal is not None and goals is None and goal_region is None and trace == 0
            and unreachable == "no_path" and type(agent_size) is int
            and agent_size == 1):  # fmt: skip
        # ``_lean_key``, written out: the call would be a noticeable share of the query
        # (``test_find_path_looks_plans_up_under_the_lean_key`` keeps the two equal).
        key = (heuristic, diagonal, algorithm, weight, max_expansions, type(max_expansions),
               tie_break)  # fmt: skip
        try:
            lean = grid.plans.get(key)
        except TypeError:  # an unhashable option: invalid, and reported below
            lean = None
        if isinstance(lean, _Lean):
            answer = _find_one(grid, lean, start, goal, scratch)
            if answer is not None:
                return answer
    query = PathQuery(start, goal, heuristic, diagonal, weight, max_expansions, tie_break,
                      algorithm, goals, goal_region, unreachable, agent_size)  # fmt: skip
    plans = grid.plans
    checked = _check(grid, query, max_goals)
    if trace > 0:
        return _traced(checked, scratch, trace)
    result = _answer_on(checked.grid, [checked], scratch, _NO_SHARING)[0]
    if key is not None:
        _remember_lean(grid, plans, key, checked)
    return result


#: Coordinates the lean single query hands the kernel: below 2**62 and not negative
#: (anything else is off the map, and the full check says so).
_KERNEL_INT_BITS: Final = 62


class _Plans(NamedTuple):
    """What ``search_many`` is handed for a batch's plans, and what answered."""

    options: npt.NDArray[np.int64]  # (plans, OPTIONS)
    weights: npt.NDArray[np.float64]  # (plans,)
    records: bool  # whether one may run ``dial`` (which needs the scratch's records)
    clusters: int  # the most clusters of a table one reads
    jps: bool  # whether one runs JPS (which needs the grid's jump tables)
    used: tuple[BatchPlan, ...]  # ``PathBatch.plans``


class _Lean(NamedTuple):
    """What a single-goal query with given options runs on a grid (``find_path``'s
    memo in ``GridMap.plans``)."""

    options: npt.NDArray[np.int64]  # ``search_one``'s options
    weight: float
    records: bool  # whether it may run ``dial`` (which needs the scratch's records)
    clusters: int  # the most clusters of a table it reads
    heuristic_used: Heuristic
    algorithm: int
    diagonal: int
    alone: _Plans  # a batch's plans when this is its only one, made once


def _plans_of(leans: Sequence[_Lean]) -> _Plans:
    """The plans ``search_many`` runs a batch of ``leans`` on (row ``i``: ``leans[i]``)."""
    if len(leans) == 1:
        return leans[0].alone
    return _Plans(
        np.stack([lean.options for lean in leans]),
        np.array([lean.weight for lean in leans], np.float64),
        any(lean.records for lean in leans),
        max(lean.clusters for lean in leans),
        any(lean.alone.jps for lean in leans),
        tuple(lean.alone.used[0] for lean in leans),
    )


def _lean_key(goal: Point | None, heuristic: object, diagonal: object, weight: object,
              max_expansions: object, tie_break: object, algorithm: object,
              goals: Sequence[Point] | None, region: Region | None, unreachable: str,
              agent_size: int) -> tuple[object, ...] | None:  # fmt: skip
    """The key in ``GridMap.plans`` of a query that can run lean (one goal, a one-cell
    unit, no ``nearest``): its options by value, with the budget's type (2.0 == 2,
    but only 2 is a budget); None for any other query. The arguments are a
    ``PathQuery``'s fields but its start, in order (``_lean_key(*query[1:])``)."""
    if (goal is None or goals is not None or region is not None or unreachable != "no_path"
            or type(agent_size) is not int or agent_size != 1):  # fmt: skip
        return None
    return (heuristic, diagonal, algorithm, weight, max_expansions, type(max_expansions),
            tie_break)  # fmt: skip


def _remember_lean(grid: GridMap, plans: dict[object, object], key: tuple[object, ...],
                   checked: _Checked) -> None:  # fmt: skip
    """Remember the plan of a query answered under ``key`` (``_lean_key``), unless
    the grid's tables changed meanwhile (its ``plans`` is no longer ``plans``): the
    plan may then be another."""
    if grid.plans is not plans:
        return
    if checked.algorithm == ALGORITHM_JPS and grid.jump_bits is None:
        # A batch whose every JPS query a field search answered built no bit rows: the
        # lean ways would run the kernel on the placeholder's one row, read past it and
        # answer no_path. The next query goes the full way, which builds them.
        return
    clusters = _cluster_rows(grid) if checked.table != NO_TABLE else 0
    options = np.array([checked.diagonal, checked.heuristic, checked.budget, checked.tie_break,
                        checked.equal_f_stack, checked.buckets, checked.table,
                        checked.algorithm, checked.landmark], np.int64)  # fmt: skip
    records = checked.buckets > 0
    used = BatchPlan(checked.heuristic_used, _ALGORITHM_NAMES[checked.algorithm],
                     checked.diagonal)  # fmt: skip
    alone = _Plans(options[np.newaxis], np.array([checked.weight]), records, clusters,
                   checked.algorithm == ALGORITHM_JPS, (used,))  # fmt: skip
    lean = _Lean(options, checked.weight, records, clusters, checked.heuristic_used,
                 checked.algorithm, checked.diagonal, alone)  # fmt: skip
    if len(plans) >= _MEMO_ENTRIES:
        plans.clear()
    with contextlib.suppress(TypeError):  # unhashable yet valid: not remembered
        plans[key] = lean


def _cluster_rows(grid: GridMap) -> int:
    """The most clusters of one of ``grid``'s cluster tables (0 without tables): the
    room a decoded row of them takes in the scratch."""
    tables = grid.clusters
    return max(tables.four.count, tables.eight.count) if tables is not None else 0


def _find_one(grid: GridMap, lean: _Lean, start: Point, goal: Point, scratch: Scratch | None
              ) -> PathResult | None:  # fmt: skip
    """``find_path`` of one cell to another, options known valid on this grid, in one
    kernel call, which also checks the cells; None when a cell is not two integers,
    off the map or blocked: the full check then says which, in the usual order."""
    index = operator.index
    try:
        sx, sy = start
        gx, gy = goal
        sx, sy, gx, gy = index(sx), index(sy), index(gx), index(gy)
    except (TypeError, ValueError):
        return None
    if (sx | sy | gx | gy) >> _KERNEL_INT_BITS:  # negative, or too big for the kernel
        return None
    # (A JPS plan is remembered only once the grid has its bit rows: ``_remember_lean``.)
    scratch = scratch_for(grid.padded.size, scratch)
    held = grid.kernel_handle  # holds the grid's arrays while the kernel reads them
    while True:
        kernel, generation = scratch.single_query(lean.records, lean.clusters)
        done, status, cost, length, expanded, reopened, n, turns = search_one(
            held.table, kernel.table, lean.options, lean.weight, generation, sx, sy, gx, gy
        )
        if done == 1:
            break
        if done == CELLS_REFUSED:
            return None
        paths = scratch.paths
        paths.grow_cells(0, 0, needed=int(paths.offsets[1]))
    take_path_cells(n)
    code = _STATUS[status]
    paths = scratch.paths
    cells = paths.cells[:n].copy()
    # As many waypoints as cells: every cell is one (a path of one or two cells, say),
    # so the waypoints are the cells, and one copy serves both (results are read-only).
    waypoints = cells if turns == n else paths.turns[:turns].copy()
    return PathResult(code, None if code == "no_path" else cost, cells, waypoints,
                      length, expanded, reopened,
                      lean.heuristic_used, _ALGORITHM_NAMES[lean.algorithm], grid,
                      lean.diagonal, (gx, gy) if code == "found" else None,
                      "budget" if code == "partial" else None)  # fmt: skip


#: A number of queries no batch reaches.
_NEVER: Final = sys.maxsize


class _Sharing(NamedTuple):
    """From how many distinct starts queries to one goal are answered from one field
    search (``find_paths``'s ``shared_goal_queries`` and ``shared_goal_jps_queries``;
    0: never)."""

    astar: int  # when some query to the goal is not JPS's
    jps: int  # when JPS answers every query to the goal

    @property
    def fewest(self) -> int:
        """The smaller number that is not 0; 0 when both are."""
        return min((n for n in self if n > 0), default=0)

    def needed(self, *, jps: bool) -> int:
        """The number for a goal whose queries JPS answers (``jps``), or not."""
        number = self.jps if jps else self.astar
        return number if number > 0 else _NEVER


def _sharing(queries: int, jps_queries: int | None) -> _Sharing:
    """``find_paths``'s two numbers; ``queries`` 0 turns both off."""
    if queries <= 0:
        return _NO_SHARING
    return _Sharing(queries, queries if jps_queries is None else jps_queries)


_NO_SHARING: Final = _Sharing(0, 0)


def find_paths(
    grid: GridMap,
    queries: Sequence[PathQuery],
    *,
    scratch: Scratch | None = None,
    shared_goal_queries: int = 0,
    shared_goal_jps_queries: int | None = None,
    max_goals: int = UNLIMITED,
) -> list[PathResult | EngineError]:
    """Answer many queries on one map in one kernel call (one release of the GIL).

    ``shared_goal_queries``: when optimal queries (weight 1, an admissible heuristic,
    a budget of at least the map's walkable cells) from at least this many distinct
    starts share a goal and a policy, they are answered from one search outward from
    the goal, stopped once it has settled all their starts (``algorithm_used``
    ``field``); 0 never does; queries sharing a goal set (``goals``, ``goal_region``)
    likewise. ``shared_goal_jps_queries`` (None: ``shared_goal_queries``; ignored when
    that is 0) is that number for a goal every query of which JPS would answer: one
    JPS search a query costs less than the shared search until the group is a few
    hundred strong (``loadtests/bench_fields.py``). Costs are the same as one search
    each; among equally cheap paths another may be returned.

    Returns, in order, each query's result, or the error :func:`find_path` would
    have raised for it: one bad query never fails the others.

    Raises:
        PathTooLongError: the paths hold more cells together than the limit
            (``set_path_cell_limit``).
    """
    with path_cell_scope():  # its groups' kernel runs count together
        sharing = _sharing(shared_goal_queries, shared_goal_jps_queries)
        return _find_paths(grid, queries, scratch, sharing, max_goals)


def _find_paths(grid: GridMap, queries: Sequence[PathQuery], scratch: Scratch | None,
                sharing: _Sharing, max_goals: int) -> list[PathResult | EngineError]:  # fmt: skip
    lean = _lean_batch(grid, queries)
    if lean is not None:
        return _answer_lean(grid, queries, *lean, scratch, sharing)
    plans = grid.plans
    checked: list[_Checked] = []
    answers: list[PathResult | EngineError | None] = []
    # Queries of a batch mostly share options and often a goal: one full check per
    # (options, goal), then only each start is checked (see ``_same_checks``).
    known: dict[tuple[object, ...], _Checked] = {}
    for query in queries:
        try:
            key = _same_checks(query)
            template = known.get(key) if key else None
            if template is None:
                checked.append(_check(grid, query, max_goals))
                if key:
                    known[key] = checked[-1]
            else:
                sx, sy = _checked_cell(grid, query.start, "start")
                if not grid.walkable(sx, sy):
                    raise on_blocked_cell("start", sx, sy)
                checked.append(_Checked(grid.flat_index(sx, sy), *template[1:]))
            answers.append(None)
        except EngineError as exc:
            answers.append(exc)
    if all(q.grid is grid for q in checked):  # one agent size: the common case
        results = _answer_on(grid, checked, scratch, sharing)
    else:
        results = _answer_per_size(checked, scratch, sharing)
    simple = (q for q, a in zip(queries, answers, strict=True) if a is None)
    remembered: dict[tuple[object, ...], None] = {}
    for query, done in zip(simple, checked, strict=True):
        lean_key = _lean_key(*query[1:])
        if lean_key is None:
            continue
        try:  # one plan a key (the map's, not the query's): made once a batch
            if lean_key in remembered:
                continue
            remembered[lean_key] = None
        except TypeError:  # unhashable: _remember_lean does not keep it either
            continue
        _remember_lean(grid, plans, lean_key, done)
    found = iter(results)
    return [next(found) if answer is None else answer for answer in answers]


def find_paths_within(
    grid: GridMap,
    queries: Sequence[PathQuery],
    *,
    expansions: int,
    scratch: Scratch | None = None,
    shared_goal_queries: int = 0,
    shared_goal_jps_queries: int | None = None,
) -> PathBatch | None:
    """:func:`find_paths`, for a caller that must bound its work (an event loop): at
    most ``expansions`` a query, and nothing built or remembered; the answers column
    by column (row ``i``: query ``i``; ``.results()`` is what :func:`find_paths`
    would return).

    Returns them when every query goes from one cell to another with options the
    grid already knows (its plans memo, so no table is built; the options may differ
    from query to query) and every query was answered within ``expansions`` (one cut
    short by its own ``max_expansions`` is an answer); otherwise None, after one
    search of at most ``expansions`` a query, or none. Also None when there are no
    queries, or goals are shared often enough for :func:`find_paths`'s field search
    (``shared_goal_queries``, ``shared_goal_jps_queries``).
    """
    if not queries:
        return None
    lean = _lean_batch(grid, queries)
    if lean is None:
        return None
    leans, rows = lean
    plans = _plans_of(leans)
    if _field_groups(grid, plans, rows, _sharing(shared_goal_queries, shared_goal_jps_queries)):
        return None  # a field search is not bounded by ``expansions``
    own = plans.options[:, OPTION_BUDGET]
    capped = own > expansions  # (plans,): the plans whose budget the bound lowers
    if capped.any():
        options = plans.options.copy()
        options[capped, OPTION_BUDGET] = max(expansions, 0)
        plans = plans._replace(options=options)
    found = _search_lean(grid, plans, rows, scratch, queries.__getitem__)
    cut = (found.status == STATUS_PARTIAL) & capped[rows[:, 0]]
    if cut.any():
        return None  # a query wanted more than ``expansions``
    return found


def find_paths_between(
    grid: GridMap,
    cells: npt.ArrayLike,
    *,
    heuristic: Heuristic | str = DEFAULT_HEURISTIC,
    diagonal: Diagonal | str = DEFAULT_DIAGONAL,
    weight: float = 1.0,
    max_expansions: int | None = None,
    tie_break: bool = True,
    algorithm: Algorithm | str = DEFAULT_ALGORITHM,
    scratch: Scratch | None = None,
    shared_goal_queries: int = 0,
    shared_goal_jps_queries: int | None = None,
) -> PathBatch:
    """Answer many queries from one cell to another under the same options, column
    by column: a game tick's units, with no object made per answer (see ``PathBatch``).

    Args:
        grid: the map.
        cells: (n, 4) integers: each query's start x, start y, goal x, goal y.
        heuristic, diagonal, weight, max_expansions, tie_break, algorithm: as for
            :func:`find_path`, for every row.
        scratch, shared_goal_queries, shared_goal_jps_queries: as for :func:`find_paths`.

    Returns:
        Row ``i`` answers ``find_path(grid, (sx, sy), (gx, gy), **options)`` of row
        ``i``; a row :func:`find_path` would raise for (a cell off the map or
        blocked, or any invalid option) has ``REFUSED_ROW`` and its error in
        ``errors``. ``batch.results()`` gives what :func:`find_paths` would.

    Raises:
        InvalidQueryError: ``cells`` is not an (n, 4) array of integers.
    """
    rows = _cell_rows(cells)
    options = (heuristic, diagonal, weight, max_expansions, tie_break, algorithm)
    sharing = _sharing(shared_goal_queries, shared_goal_jps_queries)
    found = _between_lean(grid, rows, options, scratch, sharing)
    if found is not None:
        return found
    # Options not yet seen on this grid: the general way (``find_paths`` checks and
    # remembers them).
    query_of = _row_queries(rows, *options)
    queries = [query_of(row) for row in range(rows.shape[0])]
    answers = find_paths(grid, queries, scratch=scratch, shared_goal_queries=sharing.astar,
                         shared_goal_jps_queries=sharing.jps)  # fmt: skip
    return _batch_of(grid, rows, answers)


def find_paths_between_within(
    grid: GridMap,
    cells: npt.ArrayLike,
    *,
    expansions: int,
    heuristic: Heuristic | str = DEFAULT_HEURISTIC,
    diagonal: Diagonal | str = DEFAULT_DIAGONAL,
    weight: float = 1.0,
    max_expansions: int | None = None,
    tie_break: bool = True,
    algorithm: Algorithm | str = DEFAULT_ALGORITHM,
    scratch: Scratch | None = None,
    shared_goal_queries: int = 0,
    shared_goal_jps_queries: int | None = None,
) -> PathBatch | None:
    """:func:`find_paths_between`, for a caller that must bound its work (an event
    loop): at most ``expansions`` a row, and nothing built or remembered.

    Returns what :func:`find_paths_between` would, when the grid already knows these
    options (its plans memo: so no table is built) and every row was answered within
    ``expansions`` (a row cut short by its own ``max_expansions`` is an answer);
    otherwise None, after one search of at most ``expansions`` a row, or none. Also
    None when goals are shared often enough for ``find_paths_between``'s field search
    (``shared_goal_queries``, ``shared_goal_jps_queries``), whose paths may differ
    among equally cheap ones.

    Raises:
        InvalidQueryError: ``cells`` is not an (n, 4) array of integers.
    """
    options = (heuristic, diagonal, weight, max_expansions, tie_break, algorithm)
    sharing = _sharing(shared_goal_queries, shared_goal_jps_queries)
    return _between_lean(grid, _cell_rows(cells), options, scratch, sharing, expansions)


def shared_goal_rows(
    grid: GridMap,
    cells: npt.ArrayLike,
    *,
    heuristic: Heuristic | str = DEFAULT_HEURISTIC,
    diagonal: Diagonal | str = DEFAULT_DIAGONAL,
    weight: float = 1.0,
    max_expansions: int | None = None,
    tie_break: bool = True,
    algorithm: Algorithm | str = DEFAULT_ALGORITHM,
    shared_goal_queries: int = 0,
    shared_goal_jps_queries: int | None = None,
) -> list[npt.NDArray[np.int64]] | None:
    """The rows of ``cells`` that :func:`find_paths_between` with these arguments
    answers together, one field search a group: each group's row indices, ascending.
    None when it cannot tell without answering (the grid has not answered these
    options yet): then any goal may be a group. Any subset of the rows that holds a
    group whole is grouped alike, so a caller that answers a batch in parts, each
    group within one part, gets the answers of the whole.

    Raises:
        InvalidQueryError: ``cells`` is not an (n, 4) array of integers.
    """
    rows = _cell_rows(cells)
    lean = _known_plan(grid, heuristic, diagonal, weight, max_expansions, tie_break, algorithm)
    if lean is None:
        return None
    sharing = _sharing(shared_goal_queries, shared_goal_jps_queries)
    return [group.rows for group in _field_groups(grid, lean.alone, _plan_rows(rows), sharing)]


def _between_lean(grid: GridMap, rows: npt.NDArray[np.int64], options: tuple[Any, ...],
                  scratch: Scratch | None, sharing: _Sharing,
                  expansions: int | None = None) -> PathBatch | None:  # fmt: skip
    """``find_paths_between``'s one-kernel route for cell rows (n, 4) under
    ``options`` (its heuristic to algorithm, in order): None when the grid does not
    know the options or there are no rows; with ``expansions``, at most that many a
    row, and None when a row was cut by that bound rather than by its own budget, or
    goals are shared often enough for a field search (``_field_groups``)."""
    lean = _known_plan(grid, *options)
    if lean is None or not rows.shape[0]:
        return None
    plans = lean.alone
    rows = _plan_rows(rows)
    if expansions is not None and _field_groups(grid, plans, rows, sharing):
        return None  # a field search is not bounded by ``expansions``
    own = int(lean.options[OPTION_BUDGET])
    bound = own if expansions is None else expansions
    capped = own > bound
    if capped:
        budgets = plans.options.copy()
        budgets[0, OPTION_BUDGET] = max(bound, 0)
        plans = plans._replace(options=budgets)
    bounded = expansions is not None  # (then no groups: above)
    found = _search_lean(grid, plans, rows, scratch, _row_queries(rows[:, 1:], *options),
                         None if bounded else sharing)  # fmt: skip
    if capped and bool(np.any(found.status == STATUS_PARTIAL)):
        return None  # a row wanted more than ``expansions``
    return found


def _known_plan(grid: GridMap, heuristic: object, diagonal: object, weight: object,
                max_expansions: object, tie_break: object, algorithm: object
                ) -> _Lean | None:  # fmt: skip
    """The plan ``grid`` remembers for cell-to-cell queries with these options (any
    goal will do: it is not part of the key); None when it has none."""
    key = _lean_key((0, 0), heuristic, diagonal, weight, max_expansions, tie_break,
                    algorithm, None, None, "no_path", 1)  # fmt: skip
    try:
        lean = grid.plans.get(key)
    except TypeError:  # an unhashable option: invalid, which the full check reports
        return None
    return lean if isinstance(lean, _Lean) else None


def _row_queries(rows: npt.NDArray[np.int64], heuristic: Heuristic | str,
                 diagonal: Diagonal | str, weight: float, max_expansions: int | None,
                 tie_break: bool, algorithm: Algorithm | str
                 ) -> Callable[[int], PathQuery]:  # fmt: skip
    """Row ``i`` of cell rows (n, 4) as a ``PathQuery`` with these options: what a
    refused row's error, or the general way, needs."""

    def query_of(row: int) -> PathQuery:
        sx, sy, gx, gy = rows[row].tolist()
        return PathQuery((sx, sy), (gx, gy), heuristic, diagonal, weight, max_expansions,
                         tie_break, algorithm)  # fmt: skip

    return query_of


def _plan_rows(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``search_many``'s rows of cell rows (n, 4) that all run plan 0: (n, 5)."""
    table = np.empty((rows.shape[0], 5), np.int64)
    table[:, 0] = 0
    table[:, 1:] = rows
    return table


def _cell_rows(cells: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``cells`` as an (n, 4) int64 array; InvalidQueryError unless it is (n, 4)
    integers."""
    rows = np.asarray(cells)
    if rows.ndim != 2 or rows.shape[1] != 4:
        raise InvalidQueryError(f"cells must have shape (n, 4), not {rows.shape}")
    if rows.dtype.kind not in "iu":
        raise InvalidQueryError(f"cells must be integers, not {rows.dtype}")
    if rows.dtype == np.uint64 and rows.size and rows.max() > np.iinfo(np.int64).max:
        raise InvalidQueryError("cells must be integers below 2**63")
    return rows.astype(np.int64, copy=False)


def _goals_shared(goals: npt.NDArray[np.int64], least: int) -> bool:
    """Whether at least ``least`` (> 0) rows of ``goals`` (n, k) may be equal (the
    goal's two columns, and its policy's): a quick look before the exact count of a
    goal's distinct starts (``_field_groups``), which only such a goal needs.

    Each row is folded into one int64, 21 bits a column, and the folds sorted so that
    equal ones lie side by side. Equal rows always fold alike; the rare unequal rows
    that fold alike (a column past 2**21) only cost the exact count. (A Counter of
    tuples, or a sort of whole rows, costs twice as much on a batch of 100.)"""
    if not 0 < least <= goals.shape[0]:
        return False
    return _repeats(np.sort(_folded(goals)), least)


def _folded(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Each row of ``keys`` (n, k) as one int64, 21 bits a column (see ``_goals_shared``)."""
    folded = keys[:, 0]
    for column in range(1, keys.shape[1]):
        folded = (folded << 21) ^ keys[:, column]
    return folded


def _repeats(ranked: npt.NDArray[np.int64], least: int) -> bool:
    """Whether a value of the sorted ``ranked`` occurs at least ``least`` times."""
    count = ranked.shape[0]
    return least <= count and bool(np.any(ranked[least - 1 :] == ranked[: count - least + 1]))


_STATUS_CODES: Final[dict[Status, int]] = {name: code for code, name in _STATUS.items()}


def _batch_of(grid: GridMap, rows: npt.NDArray[np.int64],
              found: Sequence[PathResult | EngineError]) -> PathBatch:  # fmt: skip
    """The columns of ``find_paths``'s answers to ``rows`` (see ``find_paths_between``)."""
    count = len(found)
    status = np.full(count, REFUSED_ROW, np.int8)
    cost = np.full(count, math.nan)
    length = np.zeros(count)
    expanded = np.zeros(count, np.int64)
    reopened = np.zeros(count, np.int64)
    plan = np.zeros(count, np.int64)
    plans: dict[BatchPlan, int] = {}
    errors: dict[int, EngineError] = {}
    no_cells = np.zeros((0, 2), np.int32)
    cells, turns = [no_cells], [no_cells]
    for row, answer in enumerate(found):
        if isinstance(answer, EngineError):
            errors[row] = answer
            continue
        status[row] = _STATUS_CODES[answer.status]
        if answer.cost is not None:
            cost[row] = answer.cost
        length[row], expanded[row], reopened[row] = (answer.length, answer.expanded,
                                                     answer.reopened)  # fmt: skip
        used = BatchPlan(answer.heuristic_used, answer.algorithm_used, answer.diagonal_code)
        plan[row] = plans.setdefault(used, len(plans))
        cells.append(answer.cells)
        turns.append(answer.waypoints)
    return PathBatch(
        goals=rows[:, 2:4].copy(),
        status=status,
        cost=cost,
        length=length,
        expanded=expanded,
        reopened=reopened,
        plan=plan,
        plans=tuple(plans),
        cells=np.concatenate(cells),
        offsets=_offsets(cells[1:], count, errors),
        waypoints=np.concatenate(turns),
        waypoint_offsets=_offsets(turns[1:], count, errors),
        errors=errors,
        grid=grid,
    )


def _offsets(pieces: list[npt.NDArray[np.int32]], count: int, errors: dict[int, EngineError]
             ) -> npt.NDArray[np.int64]:  # fmt: skip
    """(count + 1,) offsets of rows whose pieces (rows in ``errors`` have none) are
    laid one after the other."""
    sizes = np.zeros(count, np.int64)
    answered = [row for row in range(count) if row not in errors]
    sizes[answered] = [piece.shape[0] for piece in pieces]
    return np.concatenate(([0], np.cumsum(sizes)))


def _lean_batch(grid: GridMap, queries: Sequence[PathQuery]
                ) -> tuple[list[_Lean], npt.NDArray[np.int64]] | None:  # fmt: skip
    """The plans and ``search_many`` rows of a batch whose every query goes from one
    cell to another with options already known valid on this grid (see ``_Lean``);
    None when one does not: the full path then answers."""
    plans = grid.plans
    leans: list[_Lean] = []
    slots: dict[int, int] = {}
    # A batch's queries mostly share a few option sets: each set's plan is looked up
    # once. (Its options but the cells, and the budget's type: 2.0 == 2, but only 2
    # is a budget.)
    seen: dict[tuple[object, ...], int] = {}
    rows = []
    index = operator.index
    try:
        for q in queries:
            options = (q[2:], type(q.max_expansions))
            slot = seen.get(options)
            if slot is None:
                key = _lean_key(*q[1:])
                lean = None if key is None else plans.get(key)
                if not isinstance(lean, _Lean):
                    return None
                slot = slots.get(id(lean))
                if slot is None:
                    slot = slots[id(lean)] = len(leans)
                    leans.append(lean)
                seen[options] = slot
            goal = q.goal
            if goal is None:  # (no lean plan: a goal set, or its options another's)
                return None
            (sx, sy), (gx, gy) = q.start, goal
            rows.append((slot, index(sx), index(sy), index(gx), index(gy)))
    except (TypeError, ValueError):  # an option or a cell unhashable, or not an integer
        return None
    try:
        table = np.array(rows, np.int64).reshape(-1, 5)
    except OverflowError:  # a coordinate too big for the kernel: off the map, surely
        return None
    return leans, table


def _answer_lean(grid: GridMap, queries: Sequence[PathQuery], leans: list[_Lean],
                 rows: npt.NDArray[np.int64], scratch: Scratch | None, sharing: _Sharing
                 ) -> list[PathResult | EngineError]:  # fmt: skip
    """``find_paths`` of a batch ``_lean_batch`` accepted (see ``_search_lean``)."""
    if not queries:
        return []
    return _search_lean(grid, _plans_of(leans), rows, scratch, queries.__getitem__,
                        sharing).results()  # fmt: skip


def _search_lean(grid: GridMap, plans: _Plans, rows: npt.NDArray[np.int64],
                 scratch: Scratch | None, query_of: Callable[[int], PathQuery],
                 sharing: _Sharing | None = None) -> PathBatch:  # fmt: skip
    """Answer ``rows`` (n, 5) int64 (plan index in ``plans``, start x, start y, goal x,
    goal y) in one ``search_many`` call (more when the path buffers must grow), column
    by column; a refused row's error is the full check's of ``query_of(row)``. ``rows``
    is the caller's to give away: the batch's ``goals`` and ``plan`` view it.

    ``sharing`` (None: never): optimal rows from enough distinct starts to one goal
    under one policy are answered from one field search instead (``_field_groups``),
    as ``find_paths`` answers them, the rest still in one ``search_many`` call."""
    count = rows.shape[0]
    groups = _field_groups(grid, plans, rows, sharing or _NO_SHARING)
    order = None
    if groups:  # the groups' rows first, then the others: each part's paths in one run
        fielded = np.concatenate([group.rows for group in groups])
        others = np.ones(count, np.bool_)
        others[fielded] = False
        order = np.concatenate([fielded, np.flatnonzero(others)])
        rows = rows[order]
    if plans.jps:
        grid.prepare_jumps()
    scratch = scratch_for(grid.padded.size, scratch)
    arrays, _ = scratch.for_queries(count)
    field_plans: dict[int, int] = {}
    done = 0
    for group in groups:
        end = done + group.rows.shape[0]
        arrays.source[done:end] = group.starts
        settled = _answer_group(grid, scratch, done, end, np.array([group.goal], np.int64),
                                group.diagonal)  # fmt: skip
        arrays.expanded[done:end] = settled
        arrays.reopened[done:end] = 0
        field_plans.setdefault(group.diagonal, len(plans.used) + len(field_plans))
        done = end
    refused_rows = _search_rows(grid, plans, rows, scratch, done) if done < count else 0
    arrays, paths = scratch.queries, scratch.paths
    status = arrays.status[:count].astype(np.int8)
    refused: list[int] = []
    if refused_rows:
        refused = np.flatnonzero(arrays.source[:count] == REFUSED).tolist()
        status[refused] = REFUSED_ROW
    take_path_cells(int(paths.offsets[count]))
    found = PathBatch(
        goals=rows[:, 3:5],
        status=status,
        cost=arrays.cost[:count].copy(),  # NaN where no path, or refused: the kernel's
        length=arrays.length[:count].copy(),
        expanded=arrays.expanded[:count].copy(),
        reopened=arrays.reopened[:count].copy(),
        plan=rows[:, 0],
        plans=plans.used,
        cells=paths.cells[: paths.offsets[count]].copy(),
        offsets=paths.offsets[: count + 1].copy(),
        waypoints=paths.turns[: paths.turn_offsets[count]].copy(),
        waypoint_offsets=paths.turn_offsets[: count + 1].copy(),
        errors={},
        grid=grid,
    )
    if order is not None:
        found = _fielded(found, groups, field_plans, order)
        refused = order[refused].tolist()
    found.errors = {row: _refusal(grid, query_of(row)) for row in refused}
    return found


def _search_rows(grid: GridMap, plans: _Plans, rows: npt.NDArray[np.int64], scratch: Scratch,
                 first: int) -> int:  # fmt: skip
    """Answer ``rows[first:]`` into ``scratch``'s query arrays and path buffers (the rows
    before answered) through ``search_many``, once more each time the buffers must
    grow; return how many of them it refused."""
    count = rows.shape[0]
    held = grid.kernel_handle  # holds the grid's arrays while the kernel reads them
    first_generation = scratch.take_generations(count - first) - first
    done = first
    refused_rows = -1
    while True:
        kernel = scratch.kernel_handle(records=plans.records, clusters=plans.clusters)
        done, refused_here = search_many(held.table, kernel.table, plans.options,
                                         plans.weights, rows, done, count,
                                         first_generation)  # fmt: skip
        if refused_rows < 0:  # the first call checks every row; a later one, fewer
            refused_rows = refused_here
        if done == count:
            return refused_rows
        first_generation = _grow_paths(scratch, done, count)


class _FieldGroup(NamedTuple):
    """Rows of a lean batch answered from one field search (``_field_groups``)."""

    rows: npt.NDArray[np.int64]  # the rows, ascending
    starts: npt.NDArray[np.int64]  # their padded starts
    goal: int  # the padded goal
    diagonal: int  # the policy's code


def _field_groups(grid: GridMap, plans: _Plans, rows: npt.NDArray[np.int64],
                  sharing: _Sharing) -> list[_FieldGroup]:  # fmt: skip
    """The rows of ``rows`` (as for ``_search_lean``) that ``find_paths`` would answer
    from field searches, by goal and policy: those of a goal on the map whose start is
    on the map and open, under a plan with optimal answers (weight 1, an admissible
    heuristic, a budget no search of this map runs out of), when they come from
    enough distinct starts (``sharing``; ``_shared_goals``, its groups for the same
    queries)."""
    if sharing.fewest <= 0 or rows.shape[0] < sharing.fewest:
        return []
    optimal = np.array([
        plans.weights[i] == 1.0 and plans.options[i, OPTION_BUDGET] >= grid.walkable_cells
        and used.heuristic_used in ADMISSIBLE[_POLICY_NAMES[used.diagonal_code]]
        for i, used in enumerate(plans.used)
    ])  # fmt: skip
    jps = np.array([used.algorithm_used == "jps" for used in plans.used])
    least = min((sharing.needed(jps=bool(j)) for j in jps[optimal]), default=_NEVER)
    if least > rows.shape[0]:
        return []  # (JPS on a uniform map, below its number: nothing more to look at)
    policy = np.array([used.diagonal_code for used in plans.used], np.int64)[rows[:, 0]]
    if not _goals_shared(np.column_stack((policy, rows[:, 3:5])), least):
        return []  # (the common case, answered at the cost of one sort)
    starts = _open_cells(grid, rows[:, 1], rows[:, 2])
    goals = _open_cells(grid, rows[:, 3], rows[:, 4])
    candidates = np.flatnonzero(optimal[rows[:, 0]] & (starts >= 0) & (goals >= 0))
    keys = goals[candidates] * 4 + policy[candidates]  # a goal and its policy (0 to 3)
    ranked = np.lexsort((starts[candidates], keys))
    ranked_keys, ranked_starts = keys[ranked], starts[candidates][ranked]
    distinct = np.ones(ranked.shape[0], np.bool_)
    distinct[1:] = (ranked_keys[1:] != ranked_keys[:-1]) | (ranked_starts[1:] != ranked_starts[:-1])
    values, counts = np.unique(ranked_keys[distinct], return_counts=True)
    not_jps = set(keys[~jps[rows[candidates, 0]]].tolist())  # goals some other search reaches
    groups = []
    for key, count in zip(values.tolist(), counts.tolist(), strict=True):
        if count >= sharing.needed(jps=key not in not_jps):
            members = candidates[keys == key]
            groups.append(_FieldGroup(members, starts[members], key >> 2, key & 3))
    return groups


def _open_cells(grid: GridMap, xs: npt.NDArray[np.int64], ys: npt.NDArray[np.int64]
                ) -> npt.NDArray[np.int64]:  # fmt: skip
    """The padded cells of ``(xs, ys)``; -1 where one is off the map or blocked."""
    inside = (xs >= 0) & (xs < grid.width) & (ys >= 0) & (ys < grid.height)
    cells = (np.where(inside, ys, 0) + 1) * grid.padded_width + np.where(inside, xs, 0) + 1
    return np.where(inside & (grid.padded[cells] > 0), cells, -1)


def _fielded(found: PathBatch, groups: list[_FieldGroup], field_plans: dict[int, int],
             order: npt.NDArray[np.int64]) -> PathBatch:  # fmt: skip
    """``found``, answered in ``order`` (row ``i`` of it answers row ``order[i]``, the
    ``groups``' rows first), back in the rows' order, the groups' rows under a field
    plan of their policy (``field_plans``: its index in the plans)."""
    where = np.empty_like(order)
    where[order] = np.arange(order.shape[0])
    plan = found.plan.copy()
    done = 0
    for group in groups:
        plan[done : done + group.rows.shape[0]] = field_plans[group.diagonal]
        done += group.rows.shape[0]
    fields = tuple(BatchPlan("zero", "field", diagonal) for diagonal in field_plans)
    cells, offsets = _reordered(found.cells, found.offsets, where)
    waypoints, waypoint_offsets = _reordered(found.waypoints, found.waypoint_offsets, where)
    return PathBatch(
        goals=found.goals[where],
        status=found.status[where],
        cost=found.cost[where],
        length=found.length[where],
        expanded=found.expanded[where],
        reopened=found.reopened[where],
        plan=plan[where],
        plans=found.plans + fields,
        cells=cells,
        offsets=offsets,
        waypoints=waypoints,
        waypoint_offsets=waypoint_offsets,
        errors={},
        grid=found.grid,
    )


def _reordered(pieces: npt.NDArray[np.int32], offsets: npt.NDArray[np.int64],
               where: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int32],
                                                      npt.NDArray[np.int64]]:  # fmt: skip
    """Pieces laid out by ``offsets`` (piece ``i``: ``pieces[offsets[i]:offsets[i + 1]]``),
    laid out again so that piece ``j`` is the old piece ``where[j]``."""
    sizes = np.diff(offsets)[where]
    moved = np.zeros(where.shape[0] + 1, np.int64)
    np.cumsum(sizes, out=moved[1:])
    taken = np.repeat(offsets[where] - moved[:-1], sizes) + np.arange(moved[-1])
    return pieces[taken], moved


def _refusal(grid: GridMap, query: PathQuery) -> EngineError:
    """The error the full check gives a query ``search_many`` refused."""
    try:
        _check(grid, query)
    except EngineError as exc:
        return exc
    raise AssertionError(f"a refused query passed the full check: {query!r}")


def _answer_per_size(checked: list[_Checked], scratch: Scratch | None, sharing: _Sharing
                     ) -> list[PathResult]:  # fmt: skip
    """Answers of ``checked`` in order, each agent size's queries on its own grid."""
    answered: dict[int, PathResult] = {}
    by_grid: dict[int, list[int]] = {}
    for i, query in enumerate(checked):
        by_grid.setdefault(id(query.grid), []).append(i)
    for indices in by_grid.values():
        queries = [checked[i] for i in indices]
        answered.update(zip(indices, _answer_on(queries[0].grid, queries, scratch, sharing),
                            strict=True))  # fmt: skip
    return [answered[i] for i in range(len(checked))]


def _answer_on(grid: GridMap, checked: list[_Checked], scratch: Scratch | None, sharing: _Sharing
               ) -> list[PathResult]:  # fmt: skip
    """Answers of ``checked`` (all on ``grid``) in order: groups sharing a goal from
    one field search each, single goals through ``_search`` (all of them at once when
    nothing else is asked: the common case, kept lean), goal sets one by one through
    ``_search_goal_set``."""
    groups = _shared_goals(grid, checked, sharing)
    if not groups and all(query.goal_set is None for query in checked):
        return _search(grid, checked, scratch)
    answered: dict[int, PathResult] = {}
    for members in groups:
        found = _field_search(grid, [checked[i] for i in members], scratch)
        answered.update(zip(members, found, strict=True))
    single = [i for i, q in enumerate(checked) if i not in answered and q.goal_set is None]
    answered.update(zip(single, _search(grid, [checked[i] for i in single], scratch),
                        strict=True))  # fmt: skip
    for i, query in enumerate(checked):
        if i not in answered:
            answered[i] = _search_goal_set(grid, query, scratch)
    return [answered[i] for i in range(len(checked))]


def _shared_goals(grid: GridMap, checked: list[_Checked], sharing: _Sharing
                  ) -> list[list[int]]:  # fmt: skip
    """Indices of ``checked`` grouped by (goal or goal set, policy), for groups of
    queries from enough distinct starts (``sharing``) whose answers are optimal paths:
    weight 1, an admissible heuristic, and a budget no search of this map can run out
    of (and not ``nearest`` to a goal set: those may need another search)."""
    if sharing.fewest <= 0 or len(checked) < sharing.fewest:
        return []
    groups: dict[tuple[object, int], list[int]] = {}
    all_jps: dict[tuple[object, int], bool] = {}
    for i, query in enumerate(checked):
        admissible = ADMISSIBLE[_POLICY_NAMES[query.diagonal]]
        if (query.weight == 1.0 and query.budget >= grid.walkable_cells
                and query.heuristic_used in admissible
                and not (query.nearest and query.goal_set is not None)):  # fmt: skip
            goal = query.target if query.goal_set is None else query.goal_set.key
            key = (goal, query.diagonal)
            groups.setdefault(key, []).append(i)
            jps = query.goal_set is None and query.algorithm == ALGORITHM_JPS
            all_jps[key] = all_jps.get(key, True) and jps
    return [members for key, members in groups.items()
            if len({checked[i].source for i in members})
            >= sharing.needed(jps=all_jps[key])]  # fmt: skip


def _traced(query: _Checked, scratch: Scratch | None, capacity: int) -> PathResult:
    """One query's answer with the first ``capacity`` cells its search expanded."""
    scratch = scratch_for(query.grid.padded.size, scratch)
    if query.goal_set is None:
        result = _search(query.grid, [query], scratch, trace=capacity)[0]
    else:
        result = _search_goal_set(query.grid, query, scratch, trace=capacity)
    recorded = min(result.expanded, capacity)
    cells = scratch.trace[:recorded]
    width = query.grid.padded_width
    expanded = np.empty((recorded, 2), np.int32)
    expanded[:, 0] = cells % width - 1
    expanded[:, 1] = cells // width - 1
    result.trace = SearchTrace(expanded=expanded, cut=result.expanded > capacity)
    return result


def _search_goal_set(grid: GridMap, query: _Checked, scratch: Scratch | None, *,
                     trace: int = 0) -> PathResult:  # fmt: skip
    """One query to a goal set (or ``nearest`` to an unreachable goal): a goal-set
    A* to its goals on the start's island, else to the nearest reachable cells
    (recording its first ``trace`` expansions in ``scratch.trace``)."""
    assert query.goal_set is not None
    labels = grid.island_tables.labels[1 if query.diagonal == DIAGONAL_ALWAYS else 0]
    width = grid.padded_width
    label = labels[query.source]
    target = query.goal_set
    reason: PartialReason | None = None
    if not goal_on_island(labels, width, label, target.kernel):
        if not query.nearest:
            return _no_path(grid, query)
        nearest = _nearest_cells(grid, labels, label, target, query.budget)
        if nearest is None:  # the budget ran out while looking: stay put
            nearest = np.array([query.source], np.int64)
            reason = "budget"
        else:
            reason = "unreachable"
        target = cells_goal_set(grid, nearest)
    scratch = scratch_for(grid.padded.size, scratch)
    generation = scratch.take_generations(1)
    status, end, expanded, reopened = goal_set_search(
        grid.padded, width, query.source, target.kernel, query.diagonal, query.heuristic,
        grid.min_cost, query.weight, query.budget, query.tie_break, generation,
        scratch.stamp, scratch.g, scratch.parent, scratch.heap, scratch.trace_buffer(trace),
    )  # fmt: skip
    if status == STATUS_NO_PATH:  # not on the island after all: cannot happen
        return _no_path(grid, query)
    if status == STATUS_PARTIAL:
        reason = "budget"
    n = chain_length(scratch.parent, end)
    take_path_cells(n)  # before its buffers are allocated
    cells = np.empty((n, 2), np.int32)
    write_chain(scratch.parent, width, end, n, cells, 0)
    turns = np.empty((n, 2), np.int32)
    waypoints, length = write_turns_and_length(cells, 0, n, turns, 0)
    found = status == STATUS_FOUND and reason is None
    return PathResult(
        status="found" if found else "partial",
        cost=float(scratch.g[end]),
        cells=cells,
        waypoints=turns[:waypoints],
        length=float(length),
        expanded=int(expanded),
        reopened=int(reopened),
        heuristic_used=query.heuristic_used,
        algorithm_used="astar",
        grid=grid,
        diagonal_code=query.diagonal,
        reached=(int(cells[-1, 0]), int(cells[-1, 1])) if found else None,
        partial_reason=None if found else (reason or "budget"),
    )


def _nearest_cells(grid: GridMap, labels: npt.NDArray[np.int32], label: int, goal: GoalSet,
                   budget: int) -> npt.NDArray[np.int64] | None:  # fmt: skip
    """The cells of island ``label`` nearest ``goal`` (see ``goals``); None if finding
    them would take more than ``budget`` (cells scanned and goals measured)."""
    out = np.empty(64, np.int64)
    height = grid.height + 2
    count, _ = nearest_cells(labels, grid.padded_width, height, label, goal.kernel, out, budget)
    if count > out.size:
        out = np.empty(count, np.int64)
        nearest_cells(labels, grid.padded_width, height, label, goal.kernel, out, budget)
    return None if count < 0 else out[:count]


def _no_path(grid: GridMap, query: _Checked) -> PathResult:
    empty = np.zeros((0, 2), np.int32)
    return PathResult(status="no_path", cost=None, cells=empty, waypoints=empty, length=0.0,
                      expanded=0, heuristic_used=query.heuristic_used, algorithm_used="astar",
                      grid=grid, diagonal_code=query.diagonal)  # fmt: skip


def _field_search(grid: GridMap, group: list[_Checked], scratch: Scratch | None
                  ) -> list[PathResult]:  # fmt: skip
    """Answers of queries sharing one goal and policy, from one search outward from
    the goal (``_answer_group``)."""
    count = len(group)
    scratch = scratch_for(grid.padded.size, scratch)
    arrays, _ = scratch.for_queries(count)
    arrays.source[:count] = [query.source for query in group]
    first = group[0]
    goal = (np.array([first.target], np.int64) if first.goal_set is None
            else member_cells(grid, first.goal_set))  # fmt: skip
    settled = _answer_group(grid, scratch, 0, count, goal, first.diagonal)
    arrays, paths = scratch.queries, scratch.paths
    return _results(grid, group, arrays, paths, expanded=[settled] * count,
                    reopened=[0] * count, algorithm="field")  # fmt: skip


def _answer_group(grid: GridMap, scratch: Scratch, first: int, end: int,
                  goal: npt.NDArray[np.int64], diagonal: int) -> int:  # fmt: skip
    """Answer queries ``first`` to ``end`` of ``scratch``'s query arrays (their padded
    starts in ``source``, the queries before them answered), which share the padded
    ``goal`` cells and the ``diagonal`` policy, from one search outward from the goal,
    headed for the starts' bounding box and stopped once every start on the goal's
    island is settled (``kernels.fields.settle_starts``); their paths follow those
    before them in the path buffers. Returns the cells the search settled."""
    arrays = scratch.queries
    sources = arrays.source
    group = sources[first:end]
    # A start off the goals' islands has no path; searching for it would flood them.
    labels = grid.island_tables.labels[1 if diagonal == DIAGONAL_ALWAYS else 0]
    island = labels[goal]
    # (One goal: one comparison; isin's own checks cost more than a short path's search.)
    on_island = (labels[group] == island[0] if island.size == 1
                 else np.isin(labels[group], island))  # fmt: skip
    reachable = np.zeros(end, np.bool_)
    reachable[first:] = on_island
    starts = group[on_island]
    width = grid.padded_width
    settled = 0
    if starts.size:
        want = np.zeros(grid.padded.size, np.bool_)  # calloc: pages untouched stay free
        want[starts] = True
        xs, ys = starts % width, starts // width
        box = np.array([xs.min(), ys.min(), xs.max(), ys.max()], np.int64)
        heuristic = HEURISTIC_MANHATTAN if diagonal == DIAGONAL_NEVER else HEURISTIC_OCTILE
        settled = settle_starts(grid.padded, width, diagonal, goal, want,
                                int(np.count_nonzero(want)), box, heuristic, grid.min_cost,
                                scratch.take_generations(1), scratch.stamp, scratch.g,
                                scratch.parent, scratch.heap)  # fmt: skip
    outputs = (arrays.status, arrays.cost, arrays.length)
    done = first
    while True:
        paths = scratch.paths
        done = write_chain_paths(grid.padded, width, scratch.parent, sources, reachable, done,
                                 end, outputs, paths.arrays)  # fmt: skip
        if done == end:
            return int(settled)
        paths.grow_cells(int(paths.offsets[done]), int(paths.turn_offsets[done]),
                         needed=int(paths.offsets[done + 1]))  # fmt: skip


class _Options(NamedTuple):
    """A query's options, validated, in the kernel's codes."""

    heuristic: int
    diagonal: int
    algorithm: int
    nearest: bool
    weight: float
    budget: int
    size: int
    tie_break: bool
    heuristic_name: Heuristic


#: Validated options by the options as given: a game's queries repeat a handful of
#: option sets, and validating them costs more than a short search.
_OPTIONS: dict[tuple[object, ...], _Options] = {}
#: Most option sets (and plans per grid) remembered; past it the memo starts over.
_MEMO_ENTRIES: Final = 256


def _options_key(query: PathQuery) -> tuple[object, ...]:
    """What ``_options`` makes of ``query`` depends on: its options, and the types of
    the integers (2.0 == 2, but only 2 is a valid agent_size)."""
    return (query.heuristic, query.diagonal, query.algorithm, query.unreachable, query.weight,
            query.max_expansions, type(query.max_expansions), query.agent_size,
            type(query.agent_size), query.tie_break)  # fmt: skip


def _same_checks(query: PathQuery) -> tuple[object, ...]:
    """A key under which queries differ only in their start, when everything else
    ``_check`` looks at depends on the options and the goal alone: a single goal, a
    one-cell unit, no ``nearest`` (whose goal set depends on the start's island).
    Empty when there is no such key: the query is checked in full."""
    goal = query.goal
    if (goal is None or query.goals is not None or query.goal_region is not None
            or query.agent_size != 1 or query.unreachable != "no_path"):  # fmt: skip
        return ()
    try:
        gx, gy = goal
    except (TypeError, ValueError):
        return ()
    return (*_options_key(query), gx, type(gx), gy, type(gy))


def _options(query: PathQuery) -> _Options:
    """``query``'s options validated (in a fixed order), or the error for the first
    bad one."""
    key = _options_key(query)
    try:
        known = _OPTIONS.get(key)
    except TypeError:  # an unhashable value: invalid, and validated below
        key, known = (), None
    if known is not None:
        return known
    options = _Options(
        option_code(HEURISTICS, query.heuristic, "heuristic", UnknownHeuristicError),
        option_code(DIAGONALS, query.diagonal, "diagonal", UnknownDiagonalError),
        option_code(ALGORITHMS, query.algorithm, "algorithm", UnknownAlgorithmError),
        option_code(UNREACHABLE, query.unreachable, "unreachable", InvalidQueryError) == 1,
        _checked_weight(query.weight),
        _checked_budget(query.max_expansions),
        checked_agent_size(query.agent_size),
        bool(query.tie_break),
        query.heuristic,  # type: ignore[arg-type]  # checked above
    )
    if key:
        if len(_OPTIONS) >= _MEMO_ENTRIES:
            _OPTIONS.clear()
        _OPTIONS[key] = options
    return options


class _Plan(NamedTuple):
    """What a query with given options runs on a given grid (see ``_plan``)."""

    heuristic: int
    table: int
    landmark: int
    used: Heuristic
    equal_f_stack: bool
    buckets: int
    algorithm: int


def _check(grid: GridMap, query: PathQuery, max_goals: int = UNLIMITED) -> _Checked:
    """Validate in a fixed order: options, bounds, walkability (of the start, then of
    the goals), then what the options ask of the map (an algorithm it supports)."""
    options = _options(query)
    diagonal, nearest, size = options.diagonal, options.nearest, options.size
    if (query.goal is None) + (query.goals is None) + (query.goal_region is None) != 2:
        raise InvalidQueryError("give exactly one of goal, goals and goal_region")
    sx, sy = _checked_cell(grid, query.start, "start")
    target = NO_TARGET
    goal_set: GoalSet | None = None
    if query.goal is not None:
        gx, gy = _checked_cell(grid, query.goal, "goal")
        target = grid.flat_index(gx, gy)
    else:  # their form, count and bounds; walkability below
        goal_set = make_goal_set(grid, goals=query.goals, region=query.goal_region,
                                 max_goals=max_goals)  # fmt: skip
    if not grid.walkable(sx, sy):
        raise on_blocked_cell("start", sx, sy)
    # With nearest, a blocked goal is one more unreachable goal. A single goal is
    # checked as scalars: this is every query's path, and numpy costs microseconds.
    if not nearest and goal_set is None and not grid.walkable(gx, gy):
        raise on_blocked_cell("goal", gx, gy)
    if not nearest and goal_set is not None:
        check_walkable(grid, goal_set.points, "goals")
    sized = grid.for_agent_size(size)  # built only for a query that passed the above
    if size > 1:  # (a one-cell unit has room wherever the cell is walkable)
        check_room(grid, sized, "start", sx, sy, size)
    if size > 1 and not nearest and goal_set is None:
        check_room(grid, sized, "goal", gx, gy, size)
    if not nearest and goal_set is not None:
        check_walkable(sized, goal_set.points, "goals", room=(grid, size))
    elif nearest and query.goal is not None:
        labels = sized.island_tables.labels[1 if diagonal == DIAGONAL_ALWAYS else 0]
        if labels[target] == 0 or labels[target] != labels[grid.flat_index(sx, sy)]:
            goal_set = cells_goal_set(sized, np.array([target], np.int64))
    plan = _plan(sized, options, single_goal=query.goal is not None,
                 goal_set=goal_set is not None)  # fmt: skip
    return _Checked(sized.flat_index(sx, sy), target, diagonal, plan.heuristic,
                    options.weight, options.budget, options.tie_break, plan.equal_f_stack,
                    plan.buckets, plan.table, plan.used, plan.algorithm, plan.landmark, sized,
                    goal_set, nearest)  # fmt: skip


def _plan(grid: GridMap, options: _Options, *, single_goal: bool, goal_set: bool) -> _Plan:
    """The heuristic, tables, queue and algorithm a query with ``options`` runs on
    ``grid`` (remembered per grid until its tables change: see ``GridMap.plans``).

    Raises:
        UnsupportedAlgorithmError: ``jps`` where it does not apply.
    """
    key = (options, single_goal, goal_set)
    plans = grid.plans
    known = plans.get(key)
    if isinstance(known, _Plan):
        return known
    plan = _make_plan(grid, options, single_goal=single_goal, goal_set=goal_set)
    if len(plans) >= _MEMO_ENTRIES:
        plans.clear()
    plans[key] = plan
    return plan


def _make_plan(grid: GridMap, options: _Options, *, single_goal: bool, goal_set: bool
               ) -> _Plan:  # fmt: skip
    heuristic, diagonal, weight = options.heuristic, options.diagonal, options.weight
    tie_break = options.tie_break
    used = options.heuristic_name
    table = landmark = NO_TABLE
    if heuristic == HEURISTIC_CLUSTER:
        heuristic, table, used = _table_heuristic("cluster", grid.clusters, diagonal)
    elif heuristic == HEURISTIC_LANDMARKS:
        heuristic, landmark, used = _table_heuristic("landmarks", grid.landmarks, diagonal)
    if goal_set and (table != NO_TABLE or landmark != NO_TABLE):
        # The tables bound the distance to one cell; a goal set searches with the plain
        # bound of the policy.
        table = landmark = NO_TABLE
        heuristic = HEURISTIC_MANHATTAN if diagonal == DIAGONAL_NEVER else HEURISTIC_OCTILE
        used = "manhattan" if diagonal == DIAGONAL_NEVER else "octile"
    # The equal-f stack is itself a larger-g tie-break, sound only when f is monotone
    # along paths: consistent heuristics, and the cluster bound with pathmax.
    monotone = used in CONSISTENT[_POLICY_NAMES[diagonal]] or table != NO_TABLE
    stack = tie_break and weight == 1.0 and monotone
    buckets = _bucket_count(grid, used, diagonal) if stack else 0
    if stack and table != NO_TABLE and _bucket_count(grid, "manhattan", diagonal):
        # 4-connected integer map: the table's bounds floored to integers ride the
        # bucket queue too, with every bucket (see ``dial``).
        buckets = MAX_BUCKETS
    algorithm = _algorithm(grid, options.algorithm, diagonal, used, single_goal=single_goal)
    if goal_set:
        stack, buckets = False, 0
    if algorithm == ALGORITHM_JPS:
        buckets = 0  # JPS has no bucket queue; it keeps the equal-f stack
    return _Plan(heuristic, table, landmark, used, stack and not buckets, buckets, algorithm)


def _algorithm(grid: GridMap, code: int, diagonal: int, heuristic: str, *,
               single_goal: bool = True) -> int:  # fmt: skip
    """The algorithm a query runs: ``auto`` picks JPS wherever JPS applies, unless
    the map has no JPS+ table and A* was measured faster on it."""
    reasons = []
    if not single_goal:
        reasons.append("a single goal")
    if not grid.uniform:
        reasons.append("a uniform-cost map")
    if diagonal != DIAGONAL_NO_CORNER_CUTTING:
        reasons.append("diagonal 'no_corner_cutting'")
    if heuristic not in CONSISTENT["no_corner_cutting"] - {"manhattan"}:
        reasons.append("a consistent heuristic (octile, chebyshev, euclidean, zero)")
    if code == ALGORITHM_JPS and reasons:
        raise UnsupportedAlgorithmError(f"algorithm 'jps' needs {' and '.join(reasons)}")
    if code == ALGORITHM_AUTO:
        # Without the JPS+ table, JPS scans bit rows: slower than A* on some maps,
        # which a measurement on the map found (``calibration``).
        slower = grid.auto_prefers_astar and not grid.jump_table_ready
        return ALGORITHM_ASTAR if reasons or slower else ALGORITHM_JPS
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


def _search(grid: GridMap, checked: list[_Checked], scratch: Scratch | None, *, trace: int = 0
            ) -> list[PathResult]:  # fmt: skip
    """Run validated queries through ``search_batch`` and copy out their answers
    (a batch of one with ``trace``: its first ``trace`` expansions into
    ``scratch.trace``)."""
    count = len(checked)
    if count == 0:
        return []
    scratch = scratch_for(grid.padded.size, scratch)
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
    clusters = _cluster_rows(grid)
    if any(query.algorithm == ALGORITHM_JPS for query in checked):
        grid.prepare_jumps()
    held = grid.kernel_handle  # holds the grid's arrays while the kernel reads them
    records = any(query.buckets for query in checked)
    first_generation = scratch.take_generations(count)
    done = 0
    while True:
        kernel = scratch.kernel_handle(records=records, clusters=clusters, trace=trace)
        done = search_handles(held.table, done, count, first_generation, kernel.table)
        if done == count:
            break
        first_generation = _grow_paths(scratch, done, count)
    expanded, reopened = (a[:count].tolist() for a in (arrays.expanded, arrays.reopened))
    return _results(grid, checked, arrays, paths, expanded=expanded, reopened=reopened)


def _grow_paths(scratch: Scratch, done: int, count: int) -> int:
    """Make room in the path buffers for query ``done``, whose path did not fit,
    keeping what the queries before it wrote; return the first generation of the
    queries from ``done`` to ``count`` (query ``i`` takes it plus ``i``).

    Query ``done`` was searched, but its path did not fit: its stamps are in the
    scratch now. Re-run under the generation it had, it would take its own cells for
    already seen ones (``no_path`` after one expansion): every query from it on gets
    a fresh generation instead."""
    paths = scratch.paths
    paths.grow_cells(int(paths.offsets[done]), int(paths.turn_offsets[done]),
                     needed=int(paths.offsets[done + 1]))  # fmt: skip
    return scratch.take_generations(count - done) - done


def _results(grid: GridMap, checked: list[_Checked], arrays: QueryArrays, paths: PathBuffers,
             *, expanded: list[int], reopened: list[int], algorithm: AlgorithmUsed | None = None
             ) -> list[PathResult]:  # fmt: skip
    """Copy the answers the kernels left in ``arrays`` and ``paths`` into results.

    ``algorithm``: what answered every query (a field), else each query's own."""
    count = len(checked)
    # One conversion per array for the whole batch, not one per element; one copy of
    # the batch's cells and waypoints (the buffers are the scratch's), which the
    # results view.
    status, cost, length = (a[:count].tolist() for a in (arrays.status, arrays.cost,
                                                          arrays.length))  # fmt: skip
    take_path_cells(int(paths.offsets[count]))
    offsets = paths.offsets[: count + 1].tolist()
    turn_offsets = paths.turn_offsets[: count + 1].tolist()
    all_cells = paths.cells[: offsets[count]].copy()
    all_turns = paths.turns[: turn_offsets[count]].copy()
    width = grid.padded_width
    results = []
    for i, query in enumerate(checked):
        code = _STATUS[status[i]]
        cells = all_cells[offsets[i] : offsets[i + 1]]
        if code != "found":
            reached = None
        elif query.goal_set is None:  # the goal itself, without reading numpy scalars
            y, x = divmod(query.target, width)
            reached = (x - 1, y - 1)
        else:
            reached = (int(cells[-1, 0]), int(cells[-1, 1]))
        results.append(
            PathResult(
                status=code,
                cost=None if code == "no_path" else cost[i],
                cells=cells,
                waypoints=all_turns[turn_offsets[i] : turn_offsets[i + 1]],
                length=length[i],
                expanded=expanded[i],
                reopened=reopened[i],
                heuristic_used="zero" if algorithm == "field" else query.heuristic_used,
                algorithm_used=algorithm or _ALGORITHM_NAMES[query.algorithm],
                grid=grid,
                diagonal_code=query.diagonal,
                reached=reached,
                partial_reason="budget" if code == "partial" else None,
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
