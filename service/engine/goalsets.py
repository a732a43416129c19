"""Queries to a goal set, or to the reachable cells nearest an unreachable goal
(``unreachable: nearest``): one goal-set A* each."""

import numpy as np
import numpy.typing as npt

from service.engine.errors import PathTooLongError
from service.engine.goals import GoalSet, cells_goal_set
from service.engine.grid import GridMap
from service.engine.kernels.bundles import Nodes, Task, Terrain
from service.engine.kernels.codes import (
    CLOSED,
    DIAGONAL_ALWAYS,
    STATUS_DEADLINE,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.goals import (
    GOAL_CELLS,
    goal_on_island,
    goal_set_search,
    nearest_cells,
    nearest_of,
)
from service.engine.kernels.paths import chain_length, write_chain, write_turns_and_length
from service.engine.links import NO_LINKS_VIEW
from service.engine.options import PartialReason
from service.engine.queries import CheckedQuery
from service.engine.result import PathResult, with_links_taken
from service.engine.scratch import (
    Scratch,
    deadline_passed,
    path_room,
    scratch_for,
    stopped_at,
    take_path_cells,
)


def search_goal_set(grid: GridMap, query: CheckedQuery, scratch: Scratch | None, *,
                    trace: int = 0) -> PathResult | PathTooLongError:  # fmt: skip
    """One query to a goal set (or ``nearest`` to an unreachable goal): a goal-set
    A* to its goals on the start's island, else to the nearest reachable cells
    (recording its first ``trace`` expansions in ``scratch.trace``); an error when its
    path does not fit the limit."""
    assert query.goal_set is not None
    labels = grid.reach_islands.labels[1 if query.plan.diagonal == DIAGONAL_ALWAYS else 0]
    width = grid.padded_width
    label = labels[query.source]
    target = query.goal_set
    reason: PartialReason | None = None
    # With links (one-way ones: an island is not all reachable) or floors (distances
    # are a floor's), the nearest cells are found among those the search settles.
    stacked = grid.links is not None or grid.layers.count > 1
    on_island = goal_on_island(labels, width, label, target.kernel)
    if not on_island and not query.plan.nearest:
        return no_path(grid, query)
    if not on_island and not stacked:
        nearest = _nearest_cells(grid, labels, label, target, query.plan.budget)
        if nearest is None:  # the budget ran out while looking: stay put
            nearest = np.array([query.source], np.int64)
            reason = "budget"
        else:
            reason = "unreachable"
        target = cells_goal_set(grid, nearest)
    if deadline_passed():  # not started: nothing to show for it
        no_cells = np.zeros((0, 2), np.int32)
        return PathResult("partial", 0.0, no_cells, no_cells, 0.0, 0, 0,
                          query.plan.heuristic_used, "astar", grid, query.plan.diagonal,
                          None, "deadline")  # fmt: skip
    scratch = scratch_for(grid.padded.size, scratch)
    generation = scratch.take_generations(1)
    plan = query.plan
    task = Task(query.source, target.kernel, plan.diagonal, plan.heuristic, plan.weight,
                plan.budget, plan.tie_break, False, scratch.timed_clock())  # fmt: skip
    nodes = Nodes(generation, scratch.stamp, scratch.g, scratch.parent, scratch.heap,
                  scratch.stack[:0])  # fmt: skip
    links = NO_LINKS_VIEW if grid.links is None else grid.links.kernel_view
    status, end, expanded, reopened = goal_set_search(
        Terrain(grid.padded, width, grid.min_cost),
        task,
        nodes,
        scratch.trace_buffer(trace),
        links,
    )
    if stacked and query.plan.nearest and status in (STATUS_NO_PATH, STATUS_PARTIAL):
        reason = "unreachable" if status == STATUS_NO_PATH else "budget"
        end = nearest_settled(grid, scratch, generation, query.source, target)
        status = STATUS_PARTIAL
    if status == STATUS_NO_PATH:  # (unreachable through a one-way link, on a map of links)
        return no_path(grid, query)
    if status == STATUS_PARTIAL:
        reason = reason or "budget"
    elif status == STATUS_DEADLINE:
        reason = "deadline"
    n = chain_length(scratch.parent, end)
    if n > path_room():  # checked before its buffers are allocated
        return stopped_at(n, 1)[0]
    take_path_cells(n)
    cells = np.empty((n, 2), np.int32)
    write_chain(scratch.parent, width, end, n, cells, 0)
    turns = np.empty((n, 2), np.int32)
    waypoints, length = write_turns_and_length(cells, 0, n, turns, 0)
    found = status == STATUS_FOUND and reason is None
    return with_links_taken(
        PathResult(
            status="found" if found else "partial",
            cost=float(scratch.g[end]),
            cells=cells,
            waypoints=turns[:waypoints],
            length=float(length),
            expanded=int(expanded),
            reopened=int(reopened),
            heuristic_used=query.plan.heuristic_used,
            algorithm_used="astar",
            grid=grid,
            diagonal_code=query.plan.diagonal,
            reached=(int(cells[-1, 0]), int(cells[-1, 1])) if found else None,
            partial_reason=None if found else (reason or "budget"),
        )
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


def nearest_settled(grid: GridMap, scratch: Scratch, generation: int, source: int,
                    goal: GoalSet) -> int:  # fmt: skip
    """The cell, of those the search of ``generation`` settled, nearest ``goal`` in
    the plane of a floor holding a goal (Euclidean, as ``goals`` measures; ties: the
    cheaper, then the first in row order); ``source`` when it settled no cell of such a
    floor (the unit cannot get nearer there)."""
    width, cells = grid.padded_width, grid.padded.size
    reached = scratch.stamp[:cells] == generation
    settled = np.flatnonzero(reached & (scratch.heap[2][:cells] == CLOSED))
    rows = grid.layers.height + 1
    floors = (settled // width - 1) // rows
    best, best_d, best_g = source, np.inf, np.inf
    for floor, floor_goal in _goals_by_floor(grid, goal, rows):
        cells = settled[floors == floor]
        i, d, g = nearest_of(cells, scratch.g, floor_goal.kernel, width)
        if i >= 0 and (d < best_d or (d == best_d and g < best_g)):
            best, best_d, best_g = int(cells[i]), d, g
    return best


def _goals_by_floor(grid: GridMap, goal: GoalSet, rows: int) -> list[tuple[int, GoalSet]]:
    """``goal`` split by floor: each floor holding goals, with those goals."""
    width = grid.padded_width
    if goal.kind != GOAL_CELLS:  # a region lies on one floor (``goals``)
        return [(int(goal.boxes[0, 1] - 1) // rows, goal)]
    floors = (goal.members // width - 1) // rows
    return [(int(f), cells_goal_set(grid, goal.members[floors == f]))
            for f in np.unique(floors).tolist()]  # fmt: skip


def no_path(grid: GridMap, query: CheckedQuery) -> PathResult:
    empty = np.zeros((0, 2), np.int32)
    return PathResult(status="no_path", cost=None, cells=empty, waypoints=empty, length=0.0,
                      expanded=0, heuristic_used=query.plan.heuristic_used, algorithm_used="astar",
                      grid=grid, diagonal_code=query.plan.diagonal)  # fmt: skip
