"""``find_path`` and ``find_paths``: the engine's facade over the search kernels.

Validation order (as in OSRM): option names and ranges, then coordinates within
bounds, then walkability, then the search. Trivial answers come before any
search, inside the kernel: start == goal, start and goal on different islands
(``no_path`` with zero expansions), and, on uniform-cost maps, a walkable
straight line (optimal). A single query is a batch of one: one code path.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from service.engine.checks import check_query
from service.engine.errors import EngineError, on_blocked_cell
from service.engine.goals import Region
from service.engine.grid import GridMap
from service.engine.kernels.batch import OPTION_BUDGET
from service.engine.kernels.codes import STATUS_PARTIAL
from service.engine.options import (
    DEFAULT_ALGORITHM,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    Algorithm,
    Diagonal,
    Heuristic,
    Unreachable,
)
from service.engine.plans import LeanPlan, known_plan, lean_batch, lean_key, plans_of, remember_lean
from service.engine.queries import (
    UNLIMITED,
    CheckedQuery,
    PathQuery,
    Point,
    checked_cell,
    same_checks,
)
from service.engine.result import PathBatch, PathResult
from service.engine.runs import (
    answer_lean,
    answer_on,
    answer_per_size,
    batch_of,
    cell_rows,
    find_one,
    plan_rows,
    row_queries,
    search_lean,
    traced,
)
from service.engine.scratch import Scratch, path_cell_scope
from service.engine.sharing import NO_SHARING, Sharing, field_groups, sharing_of


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
        # ``lean_key``, written out: the call would cost 0.3 us, a tenth of the query
        # (``test_find_path_looks_plans_up_under_the_lean_key`` keeps the two equal).
        key = (heuristic, diagonal, algorithm, weight, max_expansions, type(max_expansions),
               tie_break)  # fmt: skip
        try:
            lean = grid.plans.get(key)
        except TypeError:  # an unhashable option: invalid, and reported below
            lean = None
        if isinstance(lean, LeanPlan):
            answer = find_one(grid, lean, start, goal, scratch)
            if answer is not None:
                return answer
    query = PathQuery(start, goal, heuristic, diagonal, weight, max_expansions, tie_break,
                      algorithm, goals, goal_region, unreachable, agent_size)  # fmt: skip
    plans = grid.plans
    checked = check_query(grid, query, max_goals)
    if trace > 0:
        return traced(checked, scratch, trace)
    result = answer_on(checked.grid, [checked], scratch, NO_SHARING)[0]
    if isinstance(result, EngineError):  # its path alone is past the limit
        raise result
    if key is not None:
        remember_lean(grid, plans, key, checked)
    return result


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
    have raised for it: one bad query never fails the others. The paths hold at most
    the limit's cells together (``set_path_cell_limit``): from the query whose path
    would pass it on (in the order searched: shared goals first), each answers a
    ``PathTooLongError``, and those after it are not searched.
    """
    with path_cell_scope():  # its groups' kernel runs count together
        sharing = sharing_of(shared_goal_queries, shared_goal_jps_queries)
        return _find_paths(grid, queries, scratch, sharing, max_goals)


def _find_paths(grid: GridMap, queries: Sequence[PathQuery], scratch: Scratch | None,
                sharing: Sharing, max_goals: int) -> list[PathResult | EngineError]:  # fmt: skip
    lean = lean_batch(grid, queries)
    if lean is not None:
        return answer_lean(grid, queries, *lean, scratch, sharing)
    plans = grid.plans
    checked: list[CheckedQuery] = []
    answers: list[PathResult | EngineError | None] = []
    # Queries of a batch mostly share options and often a goal: one full check per
    # (options, goal), then only each start is checked (see ``same_checks``).
    known: dict[tuple[object, ...], CheckedQuery] = {}
    for query in queries:
        try:
            key = same_checks(query)
            template = known.get(key) if key else None
            if template is None:
                checked.append(check_query(grid, query, max_goals))
                if key:
                    known[key] = checked[-1]
            else:
                sx, sy = checked_cell(grid, query.start, "start")
                if not grid.walkable(sx, sy):
                    raise on_blocked_cell("start", sx, sy)
                checked.append(CheckedQuery(grid.flat_index(sx, sy), *template[1:]))
            answers.append(None)
        except EngineError as exc:
            answers.append(exc)
    if all(q.grid is grid for q in checked):  # one agent size: the common case
        results = answer_on(grid, checked, scratch, sharing)
    else:
        results = answer_per_size(checked, scratch, sharing)
    simple = (q for q, a in zip(queries, answers, strict=True) if a is None)
    remembered: dict[tuple[object, ...], None] = {}
    for query, done in zip(simple, checked, strict=True):
        memo_key = lean_key(*query[1:])
        if memo_key is None:
            continue
        try:  # one plan a key (the map's, not the query's): made once a batch
            if memo_key in remembered:
                continue
            remembered[memo_key] = None
        except TypeError:  # unhashable: remember_lean does not keep it either
            continue
        remember_lean(grid, plans, memo_key, done)
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
    lean = lean_batch(grid, queries)
    if lean is None:
        return None
    leans, rows = lean
    plans = plans_of(leans)
    if field_groups(grid, plans, rows, sharing_of(shared_goal_queries, shared_goal_jps_queries)):
        return None  # a field search is not bounded by ``expansions``
    own = plans.options[:, OPTION_BUDGET]
    capped = own > expansions  # (plans,): the plans whose budget the bound lowers
    if capped.any():
        options = plans.options.copy()
        options[capped, OPTION_BUDGET] = max(expansions, 0)
        plans = plans._replace(options=options)
    found = search_lean(grid, plans, rows, scratch, queries.__getitem__)
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
    rows = cell_rows(cells)
    options = (heuristic, diagonal, weight, max_expansions, tie_break, algorithm)
    sharing = sharing_of(shared_goal_queries, shared_goal_jps_queries)
    found = _between_lean(grid, rows, options, scratch, sharing)
    if found is not None:
        return found
    # Options not yet seen on this grid: the general way (``find_paths`` checks and
    # remembers them).
    query_of = row_queries(rows, *options)
    queries = [query_of(row) for row in range(rows.shape[0])]
    answers = find_paths(grid, queries, scratch=scratch, shared_goal_queries=sharing.astar,
                         shared_goal_jps_queries=sharing.jps)  # fmt: skip
    return batch_of(grid, rows, answers)


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
    sharing = sharing_of(shared_goal_queries, shared_goal_jps_queries)
    return _between_lean(grid, cell_rows(cells), options, scratch, sharing, expansions)


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
    rows = cell_rows(cells)
    lean = known_plan(grid, heuristic, diagonal, weight, max_expansions, tie_break, algorithm)
    if lean is None:
        return None
    sharing = sharing_of(shared_goal_queries, shared_goal_jps_queries)
    return [group.rows for group in field_groups(grid, lean.alone, plan_rows(rows), sharing)]


def _between_lean(grid: GridMap, rows: npt.NDArray[np.int64], options: tuple[Any, ...],
                  scratch: Scratch | None, sharing: Sharing,
                  expansions: int | None = None) -> PathBatch | None:  # fmt: skip
    """``find_paths_between``'s one-kernel route for cell rows (n, 4) under
    ``options`` (its heuristic to algorithm, in order): None when the grid does not
    know the options or there are no rows; with ``expansions``, at most that many a
    row, and None when a row was cut by that bound rather than by its own budget, or
    goals are shared often enough for a field search (``field_groups``)."""
    lean = known_plan(grid, *options)
    if lean is None or not rows.shape[0]:
        return None
    plans = lean.alone
    rows = plan_rows(rows)
    if expansions is not None and field_groups(grid, plans, rows, sharing):
        return None  # a field search is not bounded by ``expansions``
    own = int(lean.options[OPTION_BUDGET])
    bound = own if expansions is None else expansions
    capped = own > bound
    if capped:
        budgets = plans.options.copy()
        budgets[0, OPTION_BUDGET] = max(bound, 0)
        plans = plans._replace(options=budgets)
    bounded = expansions is not None  # (then no groups: above)
    found = search_lean(grid, plans, rows, scratch, row_queries(rows[:, 1:], *options),
                        None if bounded else sharing)  # fmt: skip
    if capped and bool(np.any(found.status == STATUS_PARTIAL)):
        return None  # a row wanted more than ``expansions``
    return found
