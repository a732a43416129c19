"""Shared goals: which queries of a batch one search outward from their goal answers
(a field search), and laying their answers back in the batch's order."""

import sys
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.grid import GridMap
from service.engine.kernels.batch import OPTION_BUDGET
from service.engine.options import ADMISSIBLE
from service.engine.plans import BatchPlans
from service.engine.policy import BatchPolicy
from service.engine.queries import POLICY_NAMES, CheckedQuery
from service.engine.result import BatchPlan, PathBatch

#: A number of queries no batch reaches.
_NEVER: Final = sys.maxsize


class Sharing(NamedTuple):
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


def sharing_of(policy: BatchPolicy) -> Sharing:
    """A batch policy's two numbers; ``shared_goal_queries`` 0 turns both off."""
    queries, jps_queries = policy.shared_goal_queries, policy.shared_goal_jps_queries
    if queries <= 0:
        return NO_SHARING
    return Sharing(queries, queries if jps_queries is None else jps_queries)


NO_SHARING: Final = Sharing(0, 0)


def goals_shared(goals: npt.NDArray[np.int64], least: int) -> bool:
    """Whether at least ``least`` (> 0) rows of ``goals`` (n, k) may be equal (the
    goal's two columns, and its policy's): a quick look before the exact count of a
    goal's distinct starts (``field_groups``), which only such a goal needs.

    Each row is folded into one int64, 21 bits a column, and the folds sorted so that
    equal ones lie side by side. Equal rows always fold alike; the rare unequal rows
    that fold alike (a column past 2**21) only cost the exact count. (A Counter of
    tuples, or a sort of whole rows, costs twice as much on a batch of 100.)"""
    if not 0 < least <= goals.shape[0]:
        return False
    return _repeats(np.sort(_folded(goals)), least)


def _folded(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Each row of ``keys`` (n, k) as one int64, 21 bits a column (see ``goals_shared``)."""
    folded = keys[:, 0]
    for column in range(1, keys.shape[1]):
        folded = (folded << 21) ^ keys[:, column]
    return folded


def _repeats(ranked: npt.NDArray[np.int64], least: int) -> bool:
    """Whether a value of the sorted ``ranked`` occurs at least ``least`` times."""
    count = ranked.shape[0]
    return least <= count and bool(np.any(ranked[least - 1 :] == ranked[: count - least + 1]))


class FieldGroup(NamedTuple):
    """Rows of a lean batch answered from one field search (``field_groups``)."""

    rows: npt.NDArray[np.int64]  # the rows, ascending
    starts: npt.NDArray[np.int64]  # their padded starts
    goal: int  # the padded goal
    diagonal: int  # the policy's code


def field_groups(grid: GridMap, plans: BatchPlans, rows: npt.NDArray[np.int64],
                 sharing: Sharing) -> list[FieldGroup]:  # fmt: skip
    """The rows of ``rows`` (as for ``search_lean``) that ``find_paths`` would answer
    from field searches, by goal and policy: those of a goal on the map whose start is
    on the map and open, under a plan with optimal answers (weight 1, an admissible
    heuristic, a budget no search of this map runs out of), when they come from
    enough distinct starts (``sharing``; ``shared_goals``, its groups for the same
    queries)."""
    if sharing.fewest <= 0 or rows.shape[0] < sharing.fewest:
        return []
    optimal = np.array([
        plans.weights[i] == 1.0 and plans.options[i, OPTION_BUDGET] >= grid.walkable_cells
        and used.heuristic_used in ADMISSIBLE[POLICY_NAMES[used.diagonal_code]]
        for i, used in enumerate(plans.used)
    ])  # fmt: skip
    jps = np.array([used.algorithm_used == "jps" for used in plans.used])
    least = min((sharing.needed(jps=bool(j)) for j in jps[optimal]), default=_NEVER)
    if least > rows.shape[0]:
        return []  # (JPS on a uniform map, below its number: nothing more to look at)
    policy = np.array([used.diagonal_code for used in plans.used], np.int64)[rows[:, 0]]
    if not goals_shared(np.column_stack((policy, rows[:, 3:5])), least):
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
            groups.append(FieldGroup(members, starts[members], key >> 2, key & 3))
    return groups


def _open_cells(grid: GridMap, xs: npt.NDArray[np.int64], ys: npt.NDArray[np.int64]
                ) -> npt.NDArray[np.int64]:  # fmt: skip
    """The padded cells of ``(xs, ys)``; -1 where one is off the map or blocked."""
    inside = (xs >= 0) & (xs < grid.width) & (ys >= 0) & (ys < grid.height)
    cells = (np.where(inside, ys, 0) + 1) * grid.padded_width + np.where(inside, xs, 0) + 1
    return np.where(inside & (grid.padded[cells] > 0), cells, -1)


def fielded(found: PathBatch, groups: list[FieldGroup], field_plans: dict[int, int],
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


def shared_goal_sets(grid: GridMap, checked: list[CheckedQuery], sharing: Sharing
                     ) -> list[list[int]]:  # fmt: skip
    """Indices of ``checked``'s queries to a goal set grouped by (goal set, policy),
    for groups from enough distinct starts (``sharing``) whose answers are optimal
    paths: weight 1, an admissible heuristic, and a budget no search of this map can
    run out of (and not ``nearest``: those may need another search). (Queries to one
    goal group in ``field_groups``.)"""
    if sharing.fewest <= 0 or len(checked) < sharing.fewest:
        return []
    groups: dict[tuple[object, int], list[int]] = {}
    for i, query in enumerate(checked):
        plan = query.plan
        if query.goal_set is None or plan.nearest:
            continue
        if (plan.weight == 1.0 and plan.budget >= grid.walkable_cells
                and plan.heuristic_used in ADMISSIBLE[POLICY_NAMES[plan.diagonal]]):  # fmt: skip
            groups.setdefault((query.goal_set.key, plan.diagonal), []).append(i)
    return [members for members in groups.values()
            if len({checked[i].source for i in members}) >= sharing.needed(jps=False)]  # fmt: skip
