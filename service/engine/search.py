"""``find_path`` and ``find_paths``: the engine's facade over the search kernels.

Validation order (as in OSRM): option names and ranges (``SearchOptions``), then
coordinates within bounds, then walkability, then the search. Trivial answers come
before any search, inside the kernel: start == goal, start and goal on different
islands (``no_path`` with zero expansions), and, on uniform-cost maps, a walkable
straight line (optimal). Every query to one goal runs through one driver
(``runs.search_rows``); a single query whose options the grid has seen runs as one
kernel call (``runs.find_one``).
"""

from collections.abc import Sequence
from typing import NamedTuple, overload

import numpy as np
import numpy.typing as npt

from service.engine.checks import check_query
from service.engine.errors import (
    EngineError,
    InvalidQueryError,
    NotWalkableError,
    PathTooLongError,
    on_blocked_cell,
)
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
from service.engine.plans import (
    LeanPlan,
    known_plan,
    lean_batch,
    leanable,
    plans_of,
    remember_lean,
)
from service.engine.policy import NO_POLICY, BatchPolicy
from service.engine.queries import (
    DEFAULT_OPTIONS,
    UNLIMITED,
    CheckedQuery,
    PathQuery,
    Point,
    SearchOptions,
    checked_cell,
    options_of,
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
    search_rows,
    traced,
)
from service.engine.scratch import Scratch, path_cell_scope
from service.engine.sharing import NO_SHARING, Sharing, field_groups, sharing_of
from service.engine.sizes import blocking
from service.engine.snapping import Snapped, snapped_query
from service.engine.terrain import Profile
from service.engine.toolbox import find_variant, uses_toolbox
from service.engine.views import ViewKey

#: The option keywords of ``find_path`` as left out.
_DEFAULT_KEYWORDS = (DEFAULT_HEURISTIC, DEFAULT_DIAGONAL, 1.0, None, True, DEFAULT_ALGORITHM,
                     "no_path", 1, None)  # fmt: skip


def find_path(
    grid: GridMap,
    start: Point,
    goal: Point | None = None,
    *,
    options: SearchOptions | None = None,
    heuristic: Heuristic | str = DEFAULT_HEURISTIC,
    diagonal: Diagonal | str = DEFAULT_DIAGONAL,
    weight: float = 1.0,
    max_expansions: int | None = None,
    tie_break: bool = True,
    algorithm: Algorithm | str = DEFAULT_ALGORITHM,
    unreachable: Unreachable | str = "no_path",
    agent_size: int = 1,
    profile: Profile | None = None,
    goals: Sequence[Point] | None = None,
    goal_region: Region | None = None,
    max_goals: int = UNLIMITED,
    trace: int = 0,
    scratch: Scratch | None = None,
    snap: bool = False,
) -> PathResult:
    """Find a path from ``start`` to ``goal``, both ``(x, y)`` = (column, row).

    Args:
        grid: the map.
        start, goal: cell coordinates.
        goals, goal_region: instead of ``goal`` (exactly one of the three): reach
            the cheapest of these cells, or the cheapest cell of a region (see
            ``goals``); ``reached`` says which. At most ``max_goals`` goals.
        options: every search option at once (see ``SearchOptions``: heuristic,
            diagonal policy, weight, budget, tie-break, algorithm, ``unreachable``,
            agent size), made once by the caller. Or, instead, the option keywords:
        heuristic, diagonal, weight, max_expansions, tie_break, algorithm,
            unreachable, agent_size, profile: as in ``SearchOptions``. With a weight above 1
            and an admissible heuristic the cost is at most ``weight`` times optimal;
            when the budget runs out the result is ``partial``: the path to the node
            seen nearest the goal. ``jps`` (Jump Point Search) needs a uniform-cost
            map, ``no_corner_cutting`` and a consistent heuristic (same costs, far
            fewer expansions, which count jump points); ``auto`` runs ``jps`` where
            it applies, ``astar`` elsewhere; ``algorithm_used`` says which ran.
            ``nearest``: when no goal can be reached, a ``partial`` path to the
            reachable cell nearest the goals (``partial_reason`` ``unreachable``);
            goals may then be blocked. A ``k x k`` unit (``agent_size``) has its
            top-left cell at its position and searches ``grid.for_agent_size(k)``.
        trace: record the first ``trace`` cells the search expands, in order, as
            the result's ``trace`` (0: none; queries not traced run as fast as ever).
        scratch: caller-owned search buffers; by default this thread's own.
        snap: move a start or (single) goal the unit cannot stand on to the nearest
            cell it can (``snapping``); the result's ``snapped`` says where.

    Raises:
        UnknownHeuristicError, UnknownDiagonalError, InvalidWeightError,
        InvalidBudgetError, OutOfBoundsError, NotWalkableError, UnknownAlgorithmError,
        UnsupportedAlgorithmError, InvalidQueryError (``options`` and option keywords
        both given, among others).
    """
    # The common query, one cell to one cell, finds its plan under its options in a
    # memo of the grid and runs without a batch around it.
    single = (goal is not None and goals is None and goal_region is None and trace == 0
              and not snap)  # fmt: skip
    if options is None:
        if (single and unreachable == "no_path" and type(agent_size) is int
                and agent_size == 1 and profile is None
                and (max_expansions is None or type(max_expansions) is int)):  # fmt: skip
            # These keywords' options as a plain tuple (the fields find_path has no
            # keyword for at their defaults), which equals the SearchOptions and hashes
            # the same: the plan is found without making the options, a
            # tenth of a trivial query's cost. (The types that equality would blur are
            # checked first: a budget of 2.0 is invalid where 2 is not.)
            try:
                known = grid.plans.get((heuristic, diagonal, weight, max_expansions,
                                        tie_break, algorithm, "no_path", 1, None, "static",
                                        None))  # fmt: skip
            except TypeError:  # an unhashable option: invalid, and found so below
                known = None
            if isinstance(known, LeanPlan):
                answer = find_one(grid, known, start, goal, scratch)  # type: ignore[arg-type]
                if answer is not None:
                    return answer
        options = options_of(heuristic, diagonal, weight, max_expansions, tie_break, algorithm,
                             unreachable, agent_size, profile)  # fmt: skip
    elif (heuristic, diagonal, weight, max_expansions, tie_break, algorithm, unreachable,
          agent_size, profile) != _DEFAULT_KEYWORDS:  # fmt: skip
        raise InvalidQueryError("give the search options as options= or as keywords, not both")
    else:
        known = grid.plans.get(options) if single else None
        if isinstance(known, LeanPlan):
            answer = find_one(grid, known, start, goal, scratch)  # type: ignore[arg-type]
            if answer is not None:
                return answer
    if snap:
        return _snapped(grid, PathQuery(start, goal, options, goals, goal_region), max_goals,
                        trace, scratch)  # fmt: skip
    if uses_toolbox(options):
        return find_variant(grid, PathQuery(start, goal, options, goals, goal_region),
                            max_goals=max_goals, trace=trace)  # fmt: skip
    viewed = options.agent_size != 1 or options.profile is not None
    if single and goal is not None and options.unreachable == "no_path" and viewed:
        answer = _on_view(grid, options, start, goal, scratch)
        if answer is not None:
            return answer
    lean = (single and options.unreachable == "no_path" and options.agent_size == 1
            and options.profile is None)  # fmt: skip
    plans = grid.plans
    checked = check_query(grid, PathQuery(start, goal, options, goals, goal_region), max_goals)
    if trace > 0:
        return traced(checked, scratch, trace)
    result = answer_on(checked.grid, [checked], scratch, NO_SHARING)[0]
    if isinstance(result, EngineError):  # its path alone is past the limit
        raise result
    if lean:
        remember_lean(grid, plans, options, checked)
    return result


def _snapped(grid: GridMap, query: PathQuery, max_goals: int, trace: int,
             scratch: Scratch | None) -> PathResult:  # fmt: skip
    """``find_path`` of a query that asked to snap, from and to the cells it moved to."""
    query, moved = snapped_query(grid, query)
    result = find_path(grid, query.start, query.goal, options=query.options, goals=query.goals,
                       goal_region=query.goal_region, max_goals=max_goals, trace=trace,
                       scratch=scratch)  # fmt: skip
    result.snapped = moved or None
    return result


class ViewedPlan(NamedTuple):
    """A one-goal query's plan for a unit that walks a view of the grid (``GridMap.view``:
    a bigger unit, a profile): the view, its memo when the plan was made, and the lean
    plan the same query finds there for a one-cell unit on the view's own costs."""

    view: GridMap
    plans: dict[object, object]
    lean: LeanPlan


def _on_view(grid: GridMap, options: SearchOptions, start: Point, goal: Point,
             scratch: Scratch | None) -> PathResult | None:  # fmt: skip
    """``find_path`` of one cell to another for a unit that walks a view of ``grid``,
    as the lean query it is on the view, which is the same search: its plan in the
    grid's memo (``ViewedPlan``), made by the first such query. None when a cell is
    not the view's to walk: the full check then says why, in the map's own terms (the
    class a profile excludes, the room a unit lacks)."""
    known = grid.plans.get(options)
    if isinstance(known, ViewedPlan) and known.view.plans is known.plans:
        return find_one(known.view, known.lean, start, goal, scratch)
    view = grid.view(ViewKey(options.agent_size, options.profile))
    plain = options._replace(agent_size=1, profile=None)
    plans = view.plans
    try:
        answer = find_path(view, start, goal, options=plain, scratch=scratch)
    except NotWalkableError:
        return None
    lean = plans.get(plain)
    if isinstance(lean, LeanPlan) and view.plans is plans:
        grid.plans[options] = ViewedPlan(view, plans, lean)
    return answer


@overload
def find_paths(grid: GridMap, queries: Sequence[PathQuery], *, policy: BatchPolicy = ...,
               scratch: Scratch | None = ..., bound: None = ...
               ) -> list[PathResult | EngineError]: ...  # fmt: skip
@overload
def find_paths(grid: GridMap, queries: Sequence[PathQuery], *, policy: BatchPolicy = ...,
               scratch: Scratch | None = ..., bound: int) -> PathBatch | None: ...  # fmt: skip
def find_paths(
    grid: GridMap,
    queries: Sequence[PathQuery],
    *,
    policy: BatchPolicy = NO_POLICY,
    scratch: Scratch | None = None,
    bound: int | None = None,
) -> list[PathResult | EngineError] | PathBatch | None:
    """Answer many queries on one map in one kernel call (one release of the GIL).

    ``policy``: which queries share one search outward from their goal, stopped once
    it has settled all their starts (``algorithm_used`` ``field``; costs are the same
    as one search each, among equally cheap paths another may be returned), and how
    many goals a query may name (see ``BatchPolicy``).

    Returns, in order, each query's result, or the error :func:`find_path` would
    have raised for it: one bad query never fails the others. The paths hold at most
    the limit's cells together (``set_path_cell_limit``): from the query whose path
    would pass it on (in the order searched: shared goals first), each answers a
    ``PathTooLongError``, and those after it are not searched.

    With ``bound``, for a caller that must bound its work (an event loop): at most
    ``bound`` expansions a query, and nothing built or remembered; the answers column
    by column (row ``i``: query ``i``; ``.results()`` is what the unbounded call would
    return), when every query goes from one cell to another with options the grid
    already knows (its plans memo, so no table is built; the options may differ from
    query to query) and every query was answered within ``bound`` (one cut short by
    its own budget is an answer); otherwise None, after one search of at most
    ``bound`` a query, or none. Also None when there are no queries, or goals are
    shared often enough for a field search (which the bound does not bound).
    """
    if bound is not None:
        return _find_paths_within(grid, queries, policy, scratch, bound)
    with path_cell_scope():  # its groups' kernel runs count together
        return _find_paths(grid, queries, scratch, sharing_of(policy), policy.max_goals)


def _find_paths(grid: GridMap, queries: Sequence[PathQuery], scratch: Scratch | None,
                sharing: Sharing, max_goals: int) -> list[PathResult | EngineError]:  # fmt: skip
    lean = lean_batch(grid, queries)
    if lean is not None:
        return answer_lean(grid, queries, *lean, scratch, sharing)
    if any(query.snap for query in queries):
        return _snapping(grid, queries, scratch, sharing, max_goals)
    if any(uses_toolbox(query.options) for query in queries):
        return _with_variants(grid, queries, scratch, sharing, max_goals)
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
            else:  # on the grid the template searches: the map, or its profile's view
                view = template.grid
                sx, sy = checked_cell(view, query.start, "start")
                if not view.walkable(sx, sy):
                    why = blocking(grid, query.options.profile, sx, sy)
                    raise on_blocked_cell("start", sx, sy, why)
                checked.append(template._replace(source=view.flat_index(sx, sy)))
            answers.append(None)
        except EngineError as exc:
            answers.append(exc)
    if all(q.grid is grid for q in checked):  # one agent size: the common case
        results = answer_on(grid, checked, scratch, sharing)
    else:
        results = answer_per_size(checked, scratch, sharing)
    simple = (q for q, a in zip(queries, answers, strict=True) if a is None)
    remembered: set[SearchOptions] = set()
    for query, done in zip(simple, checked, strict=True):
        if leanable(query) and query.options not in remembered:  # one plan an option set
            remembered.add(query.options)
            remember_lean(grid, plans, query.options, done)
    found = iter(results)
    return [next(found) if answer is None else answer for answer in answers]


def _snapping(grid: GridMap, queries: Sequence[PathQuery], scratch: Scratch | None,
              sharing: Sharing, max_goals: int) -> list[PathResult | EngineError]:  # fmt: skip
    """``_find_paths`` of a batch some of whose queries ask to snap: each such query
    moved first (``snapping``), the batch answered, and its results told where."""
    moved: dict[int, Snapped] = {}
    unsnapped = []
    for i, query in enumerate(queries):
        if query.snap:
            query, moved[i] = snapped_query(grid, query)
            query = query._replace(snap=False)
        unsnapped.append(query)
    answers = _find_paths(grid, unsnapped, scratch, sharing, max_goals)
    for i, snapped in moved.items():
        answer = answers[i]
        if snapped and isinstance(answer, PathResult):
            answer.snapped = snapped
    return answers


def _with_variants(grid: GridMap, queries: Sequence[PathQuery], scratch: Scratch | None,
                   sharing: Sharing, max_goals: int) -> list[PathResult | EngineError]:  # fmt: skip
    """``_find_paths`` of a batch some of whose queries ask for a variant (``toolbox``):
    those answered one by one, in order, the others together."""
    rest = [query for query in queries if not uses_toolbox(query.options)]
    others = iter(_find_paths(grid, rest, scratch, sharing, max_goals) if rest else [])
    answers: list[PathResult | EngineError] = []
    for query in queries:
        if not uses_toolbox(query.options):
            answers.append(next(others))
            continue
        try:
            answers.append(find_variant(grid, query, max_goals=max_goals))
        except EngineError as exc:
            answers.append(exc)
    return answers


def _find_paths_within(grid: GridMap, queries: Sequence[PathQuery], policy: BatchPolicy,
                       scratch: Scratch | None, bound: int) -> PathBatch | None:  # fmt: skip
    """``find_paths`` with ``bound`` (see there)."""
    if not queries:
        return None
    lean = lean_batch(grid, queries)
    if lean is None:
        return None
    leans, rows = lean
    plans = plans_of(leans)
    if field_groups(grid, plans, rows, sharing_of(policy)):
        return None  # a field search is not bounded by ``bound``
    own = plans.options[:, OPTION_BUDGET]
    capped = own > bound  # (plans,): the plans whose budget the bound lowers
    if capped.any():
        options = plans.options.copy()
        options[capped, OPTION_BUDGET] = max(bound, 0)
        plans = plans._replace(options=options)
    found = search_rows(grid, plans, rows, scratch, queries.__getitem__)
    if (cut_short(found) & capped[rows[:, 0]]).any():
        return None  # a query wanted more than ``bound``
    return found


@overload
def find_paths_between(grid: GridMap, cells: npt.ArrayLike, *, options: SearchOptions = ...,
                       policy: BatchPolicy = ..., scratch: Scratch | None = ...,
                       bound: None = ...) -> PathBatch: ...  # fmt: skip
@overload
def find_paths_between(grid: GridMap, cells: npt.ArrayLike, *, options: SearchOptions = ...,
                       policy: BatchPolicy = ..., scratch: Scratch | None = ...,
                       bound: int) -> PathBatch | None: ...  # fmt: skip
def find_paths_between(
    grid: GridMap,
    cells: npt.ArrayLike,
    *,
    options: SearchOptions = DEFAULT_OPTIONS,
    policy: BatchPolicy = NO_POLICY,
    scratch: Scratch | None = None,
    bound: int | None = None,
) -> PathBatch | None:
    """Answer many queries from one cell to another under the same options, column
    by column: a game tick's units, with no object made per answer (see ``PathBatch``).

    Args:
        grid: the map.
        cells: (n, 4) integers: each query's start x, start y, goal x, goal y.
        options: every row's (``SearchOptions``).
        policy, scratch: as for :func:`find_paths`.
        bound: for a caller that must bound its work (an event loop): at most this
            many expansions a row, and nothing built or remembered; None (and no
            answer) when the grid does not know these options yet (its plans memo: so
            no table is built), when a row needed more than ``bound`` (a row cut short
            by its own budget is an answer), or when goals are shared often enough
            for a field search, whose paths may differ among equally cheap ones.

    Returns:
        Row ``i`` answers ``find_path(grid, (sx, sy), (gx, gy), options=options)`` of
        row ``i``; a row :func:`find_path` would raise for (a cell off the map or
        blocked) has ``REFUSED_ROW`` and its error in ``errors``. ``batch.results()``
        gives what :func:`find_paths` would.

    Raises:
        InvalidQueryError: ``cells`` is not an (n, 4) array of integers.
    """
    rows = cell_rows(cells)
    sharing = sharing_of(policy)
    found = _between_lean(grid, rows, options, scratch, sharing, bound)
    if found is not None or bound is not None:
        return found
    # Options not yet seen on this grid: the general way (``find_paths`` checks and
    # remembers them).
    query_of = row_queries(rows, options)
    queries = [query_of(row) for row in range(rows.shape[0])]
    return batch_of(grid, rows, find_paths(grid, queries, policy=policy, scratch=scratch))


def shared_goal_rows(
    grid: GridMap,
    cells: npt.ArrayLike,
    *,
    options: SearchOptions = DEFAULT_OPTIONS,
    policy: BatchPolicy = NO_POLICY,
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
    lean = known_plan(grid, options)
    if lean is None:
        return None
    groups = field_groups(grid, lean.alone, plan_rows(rows), sharing_of(policy))
    return [group.rows for group in groups]


def _between_lean(grid: GridMap, rows: npt.NDArray[np.int64], options: SearchOptions,
                  scratch: Scratch | None, sharing: Sharing,
                  expansions: int | None = None) -> PathBatch | None:  # fmt: skip
    """``find_paths_between``'s one-kernel route for cell rows (n, 4) under
    ``options``: None when the grid does not know the options or there are no rows;
    with ``expansions``, at most that many a row, and None when a row was cut by that
    bound rather than by its own budget, or goals are shared often enough for a field
    search (``field_groups``)."""
    lean = known_plan(grid, options)
    if lean is None or not rows.shape[0]:
        return None
    plans = lean.alone
    rows = plan_rows(rows)
    if expansions is not None and field_groups(grid, plans, rows, sharing):
        return None  # a field search is not bounded by ``expansions``
    own = int(lean.row[OPTION_BUDGET])
    bound = own if expansions is None else expansions
    capped = own > bound
    if capped:
        budgets = plans.options.copy()
        budgets[0, OPTION_BUDGET] = max(bound, 0)
        plans = plans._replace(options=budgets)
    bounded = expansions is not None  # (then no groups: above)
    found = search_rows(grid, plans, rows, scratch, row_queries(rows[:, 1:], options),
                        None if bounded else sharing)  # fmt: skip
    if capped and bool(cut_short(found).any()):
        return None  # a row wanted more than ``expansions``
    return found


def cut_short(found: PathBatch) -> npt.NDArray[np.bool_]:
    """(rows,): the rows a bounded run may have answered otherwise than a full one:
    partial, or refused for the path cell limit (a partial path that did not fit,
    where the full search's path might have)."""
    cut: npt.NDArray[np.bool_] = found.status == STATUS_PARTIAL
    for row, error in found.errors.items():
        if isinstance(error, PathTooLongError):
            cut[row] = True
    return cut
