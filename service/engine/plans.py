"""Plans: what a query with given options runs on a grid (heuristic, tables, queue,
algorithm), remembered per grid (``GridMap.plans``) until its tables change; and the
lean plans of cell-to-cell queries, which skip the full check."""

import contextlib
import operator
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import UnsupportedAlgorithmError
from service.engine.goals import Region
from service.engine.grid import GridMap
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
)
from service.engine.options import CLUSTER_TABLES, CONSISTENT, Heuristic
from service.engine.queries import (
    ALGORITHM_AUTO,
    ALGORITHM_NAMES,
    INTEGER_HEURISTICS,
    MEMO_ENTRIES,
    POLICY_NAMES,
    CheckedQuery,
    PathQuery,
    Point,
    ValidOptions,
)
from service.engine.result import BatchPlan
from service.engine.scratch import MAX_BUCKETS, MAX_INTEGER_COST


class BatchPlans(NamedTuple):
    """What ``search_many`` is handed for a batch's plans, and what answered."""

    options: npt.NDArray[np.int64]  # (plans, OPTIONS)
    weights: npt.NDArray[np.float64]  # (plans,)
    records: bool  # whether one may run ``dial`` (which needs the scratch's records)
    clusters: int  # the most clusters of a table one reads
    jps: bool  # whether one runs JPS (which needs the grid's jump tables)
    used: tuple[BatchPlan, ...]  # ``PathBatch.plans``


class LeanPlan(NamedTuple):
    """What a single-goal query with given options runs on a grid (``find_path``'s
    memo in ``GridMap.plans``)."""

    options: npt.NDArray[np.int64]  # ``search_one``'s options
    weight: float
    records: bool  # whether it may run ``dial`` (which needs the scratch's records)
    clusters: int  # the most clusters of a table it reads
    heuristic_used: Heuristic
    algorithm: int
    diagonal: int
    alone: BatchPlans  # a batch's plans when this is its only one, made once (2-3 us)


def plans_of(leans: Sequence[LeanPlan]) -> BatchPlans:
    """The plans ``search_many`` runs a batch of ``leans`` on (row ``i``: ``leans[i]``)."""
    if len(leans) == 1:
        return leans[0].alone
    return BatchPlans(
        np.stack([lean.options for lean in leans]),
        np.array([lean.weight for lean in leans], np.float64),
        any(lean.records for lean in leans),
        max(lean.clusters for lean in leans),
        any(lean.alone.jps for lean in leans),
        tuple(lean.alone.used[0] for lean in leans),
    )


def lean_key(goal: Point | None, heuristic: object, diagonal: object, weight: object,
             max_expansions: object, tie_break: object, algorithm: object,
             goals: Sequence[Point] | None, region: Region | None, unreachable: str,
             agent_size: int) -> tuple[object, ...] | None:  # fmt: skip
    """The key in ``GridMap.plans`` of a query that can run lean (one goal, a one-cell
    unit, no ``nearest``): its options by value, with the budget's type (2.0 == 2,
    but only 2 is a budget); None for any other query. The arguments are a
    ``PathQuery``'s fields but its start, in order (``lean_key(*query[1:])``)."""
    if (goal is None or goals is not None or region is not None or unreachable != "no_path"
            or type(agent_size) is not int or agent_size != 1):  # fmt: skip
        return None
    return (heuristic, diagonal, algorithm, weight, max_expansions, type(max_expansions),
            tie_break)  # fmt: skip


def remember_lean(grid: GridMap, plans: dict[object, object], key: tuple[object, ...],
                  checked: CheckedQuery) -> None:  # fmt: skip
    """Remember the plan of a query answered under ``key`` (``lean_key``), unless
    the grid's tables changed meanwhile (its ``plans`` is no longer ``plans``): the
    plan may then be another."""
    if grid.plans is not plans:
        return
    if checked.algorithm == ALGORITHM_JPS and grid.jump_bits is None:
        # A batch whose every JPS query a field search answered built no bit rows: the
        # lean ways would run the kernel on the placeholder's one row, read past it and
        # answer no_path. The next query goes the full way, which builds them.
        return
    clusters = cluster_rows(grid) if checked.table != NO_TABLE else 0
    options = np.array([checked.diagonal, checked.heuristic, checked.budget, checked.tie_break,
                        checked.equal_f_stack, checked.buckets, checked.table,
                        checked.algorithm, checked.landmark], np.int64)  # fmt: skip
    records = checked.buckets > 0
    used = BatchPlan(checked.heuristic_used, ALGORITHM_NAMES[checked.algorithm],
                     checked.diagonal)  # fmt: skip
    alone = BatchPlans(options[np.newaxis], np.array([checked.weight]), records, clusters,
                       checked.algorithm == ALGORITHM_JPS, (used,))  # fmt: skip
    lean = LeanPlan(options, checked.weight, records, clusters, checked.heuristic_used,
                    checked.algorithm, checked.diagonal, alone)  # fmt: skip
    if len(plans) >= MEMO_ENTRIES:
        plans.clear()
    with contextlib.suppress(TypeError):  # unhashable yet valid: not remembered
        plans[key] = lean


def cluster_rows(grid: GridMap) -> int:
    """The most clusters of one of ``grid``'s cluster tables (0 without tables): the
    room a decoded row of them takes in the scratch."""
    tables = grid.clusters
    return max(tables.four.count, tables.eight.count) if tables is not None else 0


def known_plan(grid: GridMap, heuristic: object, diagonal: object, weight: object,
               max_expansions: object, tie_break: object, algorithm: object
               ) -> LeanPlan | None:  # fmt: skip
    """The plan ``grid`` remembers for cell-to-cell queries with these options (any
    goal will do: it is not part of the key); None when it has none."""
    key = lean_key((0, 0), heuristic, diagonal, weight, max_expansions, tie_break,
                   algorithm, None, None, "no_path", 1)  # fmt: skip
    try:
        lean = grid.plans.get(key)
    except TypeError:  # an unhashable option: invalid, which the full check reports
        return None
    return lean if isinstance(lean, LeanPlan) else None


def lean_batch(grid: GridMap, queries: Sequence[PathQuery]
               ) -> tuple[list[LeanPlan], npt.NDArray[np.int64]] | None:  # fmt: skip
    """The plans and ``search_many`` rows of a batch whose every query goes from one
    cell to another with options already known valid on this grid (see ``LeanPlan``);
    None when one does not: the full path then answers."""
    plans = grid.plans
    leans: list[LeanPlan] = []
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
                key = lean_key(*q[1:])
                lean = None if key is None else plans.get(key)
                if not isinstance(lean, LeanPlan):
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


class Plan(NamedTuple):
    """What a query with given options runs on a given grid (see ``plan_for``)."""

    heuristic: int
    table: int
    landmark: int
    used: Heuristic
    equal_f_stack: bool
    buckets: int
    algorithm: int


def plan_for(grid: GridMap, options: ValidOptions, *, single_goal: bool, goal_set: bool) -> Plan:
    """The heuristic, tables, queue and algorithm a query with ``options`` runs on
    ``grid`` (remembered per grid until its tables change: see ``GridMap.plans``).

    Raises:
        UnsupportedAlgorithmError: ``jps`` where it does not apply.
    """
    key = (options, single_goal, goal_set)
    plans = grid.plans
    known = plans.get(key)
    if isinstance(known, Plan):
        return known
    plan = _make_plan(grid, options, single_goal=single_goal, goal_set=goal_set)
    if len(plans) >= MEMO_ENTRIES:
        plans.clear()
    plans[key] = plan
    return plan


def _make_plan(grid: GridMap, options: ValidOptions, *, single_goal: bool, goal_set: bool
               ) -> Plan:  # fmt: skip
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
    monotone = used in CONSISTENT[POLICY_NAMES[diagonal]] or table != NO_TABLE
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
    return Plan(heuristic, table, landmark, used, stack and not buckets, buckets, algorithm)


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
