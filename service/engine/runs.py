"""Kernel runs and their results: the drivers that hand validated queries to the
search kernels (one call a batch, once more each time the path buffers grow), stop
at the path cell limit, and copy the answers out (``PathResult``, ``PathBatch``)."""

import math
import operator
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.checks import refusal
from service.engine.errors import EngineError, InvalidQueryError, PathTooLongError
from service.engine.goals import member_cells
from service.engine.goalsets import search_goal_set
from service.engine.grid import GridMap
from service.engine.kernels.batch import (
    CELLS_REFUSED,
    REFUSED,
    search_many,
    search_one,
)
from service.engine.kernels.bundles import Nodes, Terrain
from service.engine.kernels.codes import (
    DIAGONAL_ALWAYS,
    DIAGONAL_NEVER,
    HEURISTIC_MANHATTAN,
    HEURISTIC_OCTILE,
    HEURISTIC_ZERO,
    NO_TABLE,
    STATUS_DEADLINE,
)
from service.engine.kernels.fields import settle_starts, write_chain_paths
from service.engine.links import NO_EDGES
from service.engine.plans import BatchPlans, LeanPlan, batch_plans, cluster_rows, plans_of
from service.engine.queries import (
    ALGORITHM_NAMES,
    STATUS_BY_CODE,
    CheckedQuery,
    PathQuery,
    Plan,
    Point,
    SearchOptions,
)
from service.engine.result import (
    REASON_NAMES,
    REFUSED_ROW,
    BatchPlan,
    PathBatch,
    PathResult,
    SearchTrace,
    status_code,
    with_links_taken,
)
from service.engine.scratch import (
    PathBuffers,
    Scratch,
    path_room,
    scope_spent,
    scratch_for,
    spent_answers,
    stopped_at,
    take_path_cells,
)
from service.engine.sharing import (
    NO_SHARING,
    Sharing,
    field_groups,
    fielded,
    shared_goal_sets,
)

#: Coordinates the lean single query hands the kernel: below 2**62 and not negative
#: (anything else is off the map, and the full check says so).
_KERNEL_INT_BITS: Final = 62


def find_one(grid: GridMap, lean: LeanPlan, start: Point, goal: Point, scratch: Scratch | None
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
    # (A JPS plan is remembered only once the grid has its bit rows: ``remember_lean``.)
    plan = lean.plan
    scratch = scratch_for(grid.padded.size, scratch)
    held = grid.kernel_handle  # holds the grid's arrays while the kernel reads them
    while True:
        kernel, generation = scratch.single_query(lean.records, lean.clusters)
        done, status, cost, length, expanded, reopened, n, turns = search_one(
            held.table, kernel.table, lean.kernel_plan, generation, sx, sy, gx, gy
        )
        if done == 1:
            break
        if done == CELLS_REFUSED:
            return None
        paths = scratch.paths
        try:
            paths.grow_cells(0, 0, needed=int(paths.offsets[1]))
        except PathTooLongError:
            scratch.drop_cut()
            raise
    take_path_cells(n)
    code = STATUS_BY_CODE[status]
    paths = scratch.paths
    cells = paths.cells[:n].copy()
    # As many waypoints as cells: every cell is one (a path of one or two cells, say),
    # so the waypoints are the cells, and one copy serves both (results are read-only).
    waypoints = cells if turns == n else paths.turns[:turns].copy()
    return PathResult(code, None if code == "no_path" else cost, cells, waypoints,
                      length, expanded, reopened,
                      plan.heuristic_used, ALGORITHM_NAMES[plan.algorithm], grid,
                      plan.diagonal, (gx, gy) if code == "found" else None,
                      REASON_NAMES[status])  # fmt: skip


def row_queries(rows: npt.NDArray[np.int64], options: SearchOptions
                ) -> Callable[[int], PathQuery]:  # fmt: skip
    """Row ``i`` of cell rows (n, 4) as a ``PathQuery`` under ``options``: what a
    refused row's error, or the general way, needs."""

    def query_of(row: int) -> PathQuery:
        sx, sy, gx, gy = rows[row].tolist()
        return PathQuery((sx, sy), (gx, gy), options)

    return query_of


def plan_rows(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``search_many``'s rows of cell rows (n, 4) that all run plan 0: (n, 5)."""
    table = np.empty((rows.shape[0], 5), np.int64)
    table[:, 0] = 0
    table[:, 1:] = rows
    return table


def cell_rows(cells: npt.ArrayLike) -> npt.NDArray[np.int64]:
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


def batch_of(grid: GridMap, rows: npt.NDArray[np.int64],
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
        status[row] = status_code(answer.status, answer.partial_reason)
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


def answer_lean(grid: GridMap, queries: Sequence[PathQuery], leans: list[LeanPlan],
                rows: npt.NDArray[np.int64], scratch: Scratch | None, sharing: Sharing
                ) -> list[PathResult | EngineError]:  # fmt: skip
    """``find_paths`` of a batch ``lean_batch`` accepted (see ``search_rows``)."""
    if not queries:
        return []
    return search_rows(grid, plans_of(leans), rows, scratch, queries.__getitem__,
                       sharing).results()  # fmt: skip


def search_rows(grid: GridMap, plans: BatchPlans, rows: npt.NDArray[np.int64],
                scratch: Scratch | None, query_of: Callable[[int], PathQuery],
                sharing: Sharing | None = None, *, trace: int = 0) -> PathBatch:  # fmt: skip
    """Answer ``rows`` (n, 5) int64 (plan index in ``plans``, start x, start y, goal x,
    goal y) in one ``search_many`` call (more when the path buffers must grow), column
    by column; a refused row's error is the full check's of ``query_of(row)``. ``rows``
    is the caller's to give away: the batch's ``goals`` and ``plan`` view it. Every
    query to one goal runs here: the lean ones, and those the full check passed.

    ``sharing`` (None: never): optimal rows from enough distinct starts to one goal
    under one policy are answered from one field search instead (``field_groups``),
    the rest still in one ``search_many`` call. ``trace``: record the first ``trace``
    expansions of a batch of one row in ``scratch.trace``."""
    count = rows.shape[0]
    if scope_spent():  # an earlier part of the request filled the answer: no search
        return batch_of(grid, rows[:, 1:], spent_answers(count))
    groups = field_groups(grid, plans, rows, sharing or NO_SHARING)
    order = None
    if groups:  # the groups' rows first, then the others: each part's paths in one run
        grouped = np.concatenate([group.rows for group in groups])
        others = np.ones(count, np.bool_)
        others[grouped] = False
        order = np.concatenate([grouped, np.flatnonzero(others)])
        rows = rows[order]
    if plans.jps:
        grid.prepare_jumps()
    scratch = scratch_for(grid.padded.size, scratch)
    arrays, _ = scratch.for_queries(count)
    field_plans: dict[int, int] = {}
    for group in groups:
        field_plans.setdefault(group.diagonal, len(plans.used) + len(field_plans))
    done = 0
    answered = count  # rows answered, in the order run: a path did not fit in the next
    for group in groups:
        end = done + group.rows.shape[0]
        arrays.source[done:end] = group.starts
        goal = np.array([group.goal], np.int64)
        settled, reached = _answer_group(grid, scratch, done, end, goal, group.diagonal)
        arrays.expanded[done:end] = settled
        arrays.reopened[done:end] = 0
        if reached < end:
            answered = reached
            break
        done = end
    refused_rows = 0
    if answered == count and done < count:
        refused_rows, answered = _search_rows(grid, plans, rows, scratch, done, trace)
    arrays, paths = scratch.queries, scratch.paths
    status = arrays.status[:count].astype(np.int8)
    refused: list[int] = []
    if refused_rows:
        refused = np.flatnonzero(arrays.source[:count] == REFUSED).tolist()
        status[refused] = REFUSED_ROW
    over, overs = _stop_rows(paths, answered, count, set(refused))
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
    if over:
        _left_rows(found, over)
    if order is not None:
        found = fielded(found, groups, field_plans, order)
        refused = order[refused].tolist()
        over = order[over].tolist()
    found.errors = {row: refusal(grid, query_of(row)) for row in refused}
    found.errors.update(zip(over, overs, strict=True))
    return found


def _stop_rows(paths: PathBuffers, answered: int, count: int, refused: set[int]
               ) -> tuple[list[int], list[PathTooLongError]]:  # fmt: skip
    """The rows from ``answered`` on that a batch did not answer because the path of
    row ``answered`` did not fit the limit (none when ``answered`` is ``count``),
    but the ``refused`` ones (their own error stands), and their errors. Their paths
    are dropped from ``paths``' offsets, and the scope is spent."""
    if answered >= count:
        return [], []
    start = int(paths.offsets[answered])
    needed = int(paths.offsets[answered + 1]) - start
    paths.offsets[answered + 1 : count + 1] = start
    paths.turn_offsets[answered + 1 : count + 1] = paths.turn_offsets[answered]
    over = [row for row in range(answered, count) if row not in refused]
    return over, stopped_at(needed, len(over), before=start)


def _left_rows(found: PathBatch, rows: list[int]) -> None:
    """Mark ``rows`` of ``found`` (in the order run) as answered by an error, with
    nothing of a search."""
    found.status[rows] = REFUSED_ROW
    found.cost[rows] = math.nan
    found.length[rows] = 0.0
    found.expanded[rows] = 0
    found.reopened[rows] = 0


def _search_rows(grid: GridMap, plans: BatchPlans, rows: npt.NDArray[np.int64], scratch: Scratch,
                 first: int, trace: int) -> tuple[int, int]:  # fmt: skip
    """Answer ``rows[first:]`` into ``scratch``'s query arrays and path buffers (the rows
    before answered) through ``search_many``, once more each time the buffers must
    grow; return how many of them it refused, and how many rows were answered: fewer
    than all when the path of the next would pass the limit (``path_room``)."""
    count = rows.shape[0]
    held = grid.kernel_handle  # holds the grid's arrays while the kernel reads them
    first_generation = scratch.take_generations(count - first) - first
    done = first
    refused_rows = -1
    while True:
        kernel = scratch.kernel_handle(records=plans.records, clusters=plans.clusters,
                                       trace=trace)  # fmt: skip
        done, refused_here = search_many(held.table, kernel.table, plans.options,
                                         plans.weights, rows, done, count,
                                         first_generation)  # fmt: skip
        if refused_rows < 0:  # the first call checks every row; a later one, fewer
            refused_rows = refused_here
        if done == count:
            return refused_rows, count
        try:
            first_generation = _grow_paths(scratch, done, count)
        except PathTooLongError:
            scratch.drop_cut()
            return refused_rows, done


def answer_per_size(checked: list[CheckedQuery], scratch: Scratch | None, sharing: Sharing
                    ) -> list[PathResult | EngineError]:  # fmt: skip
    """Answers of ``checked`` in order, each agent size's queries on its own grid."""
    answered: dict[int, PathResult | EngineError] = {}
    by_grid: dict[int, list[int]] = {}
    for i, query in enumerate(checked):
        by_grid.setdefault(id(query.grid), []).append(i)
    for indices in by_grid.values():
        queries = [checked[i] for i in indices]
        answered.update(zip(indices, answer_on(queries[0].grid, queries, scratch, sharing),
                            strict=True))  # fmt: skip
    return [answered[i] for i in range(len(checked))]


def answer_on(grid: GridMap, checked: list[CheckedQuery], scratch: Scratch | None, sharing: Sharing
              ) -> list[PathResult | EngineError]:  # fmt: skip
    """Answers of ``checked`` (all on ``grid``) in order: single goals all at once
    through ``search_checked`` (groups sharing a goal from one field search each),
    goal sets sharing one from one field search each, the other goal sets one by one
    through ``search_goal_set``. Once a path does not fit the limit, it and every
    query run after it answer a ``PathTooLongError``."""
    single = [i for i, query in enumerate(checked) if query.goal_set is None]
    if len(single) == len(checked):  # the common case
        return search_checked(grid, checked, scratch, sharing=sharing)
    answered: dict[int, PathResult | EngineError] = dict(zip(
        single, search_checked(grid, [checked[i] for i in single], scratch, sharing=sharing),
        strict=True))  # fmt: skip
    for members in shared_goal_sets(grid, checked, sharing):
        found = _field_search(grid, [checked[i] for i in members], scratch)
        answered.update(zip(members, found, strict=True))
    for i, query in enumerate(checked):
        if i not in answered:
            spent = scope_spent()
            answered[i] = spent_answers(1)[0] if spent else search_goal_set(grid, query, scratch)
    return [answered[i] for i in range(len(checked))]


def traced(query: CheckedQuery, scratch: Scratch | None, capacity: int) -> PathResult:
    """One query's answer with the first ``capacity`` cells its search expanded."""
    scratch = scratch_for(query.grid.padded.size, scratch)
    if query.goal_set is None:
        result = search_checked(query.grid, [query], scratch, trace=capacity)[0]
    else:
        result = search_goal_set(query.grid, query, scratch, trace=capacity)
    if isinstance(result, EngineError):  # its path alone is past the limit
        raise result
    recorded = min(result.expanded, capacity)
    cells = scratch.trace[:recorded]
    width = query.grid.padded_width
    expanded = np.empty((recorded, 2), np.int32)
    expanded[:, 0] = cells % width - 1
    expanded[:, 1] = cells // width - 1
    result.trace = SearchTrace(expanded=expanded, cut=result.expanded > capacity)
    return result


def _field_search(grid: GridMap, group: list[CheckedQuery], scratch: Scratch | None
                  ) -> list[PathResult | EngineError]:  # fmt: skip
    """Answers of queries sharing one goal set and policy, from one search outward
    from the goal set (``_answer_group``)."""
    count = len(group)
    if scope_spent():
        return list(spent_answers(count))
    scratch = scratch_for(grid.padded.size, scratch)
    arrays, _ = scratch.for_queries(count)
    arrays.source[:count] = [query.source for query in group]
    first = group[0]
    assert first.goal_set is not None
    goal = member_cells(grid, first.goal_set)
    settled, answered = _answer_group(grid, scratch, 0, count, goal, first.plan.diagonal)
    return _field_results(grid, group, scratch, settled=settled, answered=answered)


def _answer_group(grid: GridMap, scratch: Scratch, first: int, end: int,
                  goal: npt.NDArray[np.int64], diagonal: int) -> tuple[int, int]:  # fmt: skip
    """Answer queries ``first`` to ``end`` of ``scratch``'s query arrays (their padded
    starts in ``source``, the queries before them answered), which share the padded
    ``goal`` cells and the ``diagonal`` policy, from one search outward from the goal,
    headed for the starts' bounding box and stopped once every start on the goal's
    island is settled (``kernels.fields.settle_starts``), or the deadline comes (the
    queries whose start it left unsettled answer ``partial``, ``deadline``, with no
    path); their paths follow those before them in the path buffers. Returns the
    cells the search settled, and the queries answered: fewer than ``end`` when the
    next one's path would pass the limit (``path_room``)."""
    arrays = scratch.queries
    sources = arrays.source
    group = sources[first:end]
    # A start off the goals' islands has no path; searching for it would flood them.
    labels = grid.reach_islands.labels[1 if diagonal == DIAGONAL_ALWAYS else 0]
    island = labels[goal]
    # (One goal: one comparison; isin's own checks cost more than a short path's search.)
    on_island = (labels[group] == island[0] if island.size == 1
                 else np.isin(labels[group], island))  # fmt: skip
    reachable = np.zeros(end, np.bool_)
    reachable[first:] = on_island
    starts = group[on_island]
    width = grid.padded_width
    settled = 0
    late = np.zeros(end - first, np.bool_)  # rows whose start the deadline left unsettled
    if starts.size:
        want = np.zeros(grid.padded.size, np.bool_)  # calloc: pages untouched stay free
        want[starts] = True
        xs, ys = starts % width, starts // width
        box = np.array([xs.min(), ys.min(), xs.max(), ys.max()], np.int64)
        heuristic = HEURISTIC_MANHATTAN if diagonal == DIAGONAL_NEVER else HEURISTIC_OCTILE
        into = NO_EDGES if grid.links is None else grid.links.into
        if grid.links is not None:  # a link may lead nearer the starts than the box says
            heuristic = HEURISTIC_ZERO
        terrain = Terrain(grid.padded, width, grid.min_cost)
        nodes = Nodes(scratch.take_generations(1), scratch.stamp, scratch.g, scratch.parent,
                      scratch.heap, scratch.stack[:0])  # fmt: skip
        wanted = (want, int(np.count_nonzero(want)), box)
        links = (into.slot, into.first, into.target, into.cost)
        settled, exhausted = settle_starts(terrain, diagonal, heuristic, goal, wanted, nodes,
                                           scratch.timed_clock(), links)  # fmt: skip
        late = want[group] & on_island  # not settled: the deadline came first, or
        reachable[first:] &= ~late  # (all cells settled) only a one-way link leads on
        if exhausted:
            late[:] = False
    outputs = (arrays.status, arrays.cost, arrays.length)
    done = first
    while True:
        paths = scratch.paths
        done = write_chain_paths((grid.padded, width), scratch.parent, (sources, reachable),
                                 (done, end), outputs, _room_arrays(paths))  # fmt: skip
        if done == end:
            break
        try:
            paths.grow_cells(int(paths.offsets[done]), int(paths.turn_offsets[done]),
                             needed=int(paths.offsets[done + 1]))  # fmt: skip
        except PathTooLongError:
            break
    cut = first + np.flatnonzero(late[: done - first])
    arrays.status[cut] = STATUS_DEADLINE  # no path written for them: partial, empty
    arrays.cost[cut] = 0.0
    return int(settled), done


def _room_arrays(paths: PathBuffers) -> tuple[npt.NDArray[np.generic], ...]:
    """``paths.arrays`` showing a kernel no more room than the call may still write
    (``path_room``)."""
    room = path_room()
    if room >= paths.cells.shape[0]:
        return paths.arrays
    return (paths.cells[:room], paths.offsets, paths.turns[:room], paths.turn_offsets)


def search_checked(grid: GridMap, checked: list[CheckedQuery], scratch: Scratch | None, *,
                   sharing: Sharing = NO_SHARING, trace: int = 0
                   ) -> list[PathResult | EngineError]:  # fmt: skip
    """Validated single-goal queries (on ``grid``, their unit size's) through
    ``search_rows``, each under its plan; ``trace``: record the first ``trace``
    expansions of a batch of one in ``scratch.trace``. From the first whose path
    would pass the limit on, errors."""
    if not checked:
        return []
    slots: dict[Plan, int] = {}
    plans: list[Plan] = []
    for query in checked:
        if query.plan not in slots:
            slots[query.plan] = len(plans)
            plans.append(query.plan)
    width = grid.padded_width
    cells = np.array([(slots[q.plan], q.source, q.target) for q in checked], np.int64)
    rows = np.empty((len(checked), 5), np.int64)
    rows[:, 0] = cells[:, 0]
    rows[:, 2], rows[:, 1] = np.divmod(cells[:, 1], width)
    rows[:, 4], rows[:, 3] = np.divmod(cells[:, 2], width)
    rows[:, 1:] -= 1  # padded to the map's coordinates
    reads_table = any(plan.table != NO_TABLE for plan in plans)
    found = search_rows(grid, batch_plans(plans, cluster_rows(grid) if reads_table else 0),
                        rows, scratch, _never_refused, sharing, trace=trace)  # fmt: skip
    return found.results()


def _never_refused(row: int) -> PathQuery:
    raise AssertionError(f"row {row}, checked in full, was refused by the kernel")


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


def _field_results(grid: GridMap, group: list[CheckedQuery], scratch: Scratch, *,
                   settled: int, answered: int) -> list[PathResult | EngineError]:  # fmt: skip
    """Copy the answers a field search left in ``scratch`` for the first ``answered`` of
    ``group`` into results (``settled``: the cells it settled); the path of the next
    did not fit the limit: it and those after it answer errors."""
    arrays, paths = scratch.queries, scratch.paths
    _, stopped = _stop_rows(paths, answered, len(group), set())
    # One conversion per array for the whole batch, not one per element; one copy of
    # the batch's cells and waypoints (the buffers are the scratch's), which the
    # results view.
    status, cost, length = (a[:answered].tolist() for a in (arrays.status, arrays.cost,
                                                             arrays.length))  # fmt: skip
    take_path_cells(int(paths.offsets[answered]))
    offsets = paths.offsets[: answered + 1].tolist()
    turn_offsets = paths.turn_offsets[: answered + 1].tolist()
    all_cells = paths.cells[: offsets[answered]].copy()
    all_turns = paths.turns[: turn_offsets[answered]].copy()
    results: list[PathResult | EngineError] = []
    for i, query in enumerate(group[:answered]):
        code = STATUS_BY_CODE[status[i]]
        cells = all_cells[offsets[i] : offsets[i + 1]]
        results.append(PathResult(
            status=code,
            cost=None if code == "no_path" else cost[i],
            cells=cells,
            waypoints=all_turns[turn_offsets[i] : turn_offsets[i + 1]],
            length=length[i],
            expanded=settled,
            reopened=0,
            heuristic_used="zero",
            algorithm_used="field",
            grid=grid,
            diagonal_code=query.plan.diagonal,
            reached=(int(cells[-1, 0]), int(cells[-1, 1])) if code == "found" else None,
            partial_reason=REASON_NAMES[status[i]],
        ))  # fmt: skip
        if grid.links is not None:
            with_links_taken(results[-1])  # type: ignore[arg-type]
    return results + stopped
