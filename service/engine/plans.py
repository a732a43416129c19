"""Plans: what a query with given options runs on a grid (heuristic, tables, queue,
algorithm), remembered per grid (``GridMap.plans``, keyed by the ``SearchOptions``)
until its tables change; and the lean plans of cell-to-cell queries, which skip the
full check."""

import operator
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import UnsupportedAlgorithmError
from service.engine.grid import GridMap
from service.engine.kernels.batch import OPTIONS
from service.engine.kernels.codes import (
    ALGORITHM_ASTAR,
    ALGORITHM_JPS,
    DIAGONAL_NEVER,
    DIAGONAL_NO_CORNER_CUTTING,
    HEURISTIC_CLUSTER,
    HEURISTIC_LANDMARKS,
    HEURISTIC_MANHATTAN,
    HEURISTIC_OCTILE,
    HEURISTIC_ZERO,
    NO_TABLE,
)
from service.engine.options import (
    ALGORITHMS,
    CLUSTER_TABLES,
    CONSISTENT,
    DIAGONALS,
    HEURISTICS,
    Heuristic,
)
from service.engine.queries import (
    ALGORITHM_NAMES,
    MEMO_ENTRIES,
    POLICY_NAMES,
    UNLIMITED,
    CheckedQuery,
    PathQuery,
    Plan,
    SearchOptions,
)
from service.engine.result import BatchPlan
from service.engine.scratch import MAX_BUCKETS, MAX_INTEGER_COST

#: The code of ``auto`` in ``ALGORITHMS`` (resolved per query).
ALGORITHM_AUTO = ALGORITHMS["auto"]
#: Heuristics whose values are whole numbers of cells (times the integer min cost).
INTEGER_HEURISTICS = frozenset({"manhattan", "chebyshev", "zero"})


class BatchPlans(NamedTuple):
    """What ``search_many`` is handed for a batch's plans, and what answered."""

    options: npt.NDArray[np.int64]  # (plans, OPTIONS): each plan's ``option_row``
    weights: npt.NDArray[np.float64]  # (plans,)
    records: bool  # whether one may run ``dial`` (which needs the scratch's records)
    clusters: int  # the most clusters of a table one reads
    jps: bool  # whether one runs JPS (which needs the grid's jump tables)
    used: tuple[BatchPlan, ...]  # ``PathBatch.plans``


class LeanPlan(NamedTuple):
    """What a single-goal query with given options runs on a grid (``find_path``'s
    memo in ``GridMap.plans``, under its ``SearchOptions``)."""

    plan: Plan
    row: npt.NDArray[np.int64]  # ``option_row(plan)``
    kernel_plan: tuple[npt.NDArray[np.int64], float]  # ``search_one``'s: (row, weight)
    records: bool  # whether it may run ``dial`` (which needs the scratch's records)
    clusters: int  # the most clusters of a table it reads
    alone: BatchPlans  # a batch's plans when this is its only one, made once, not per call


def option_row(plan: Plan) -> npt.NDArray[np.int64]:
    """The kernel's option row of ``plan`` (``kernels.batch.OPTIONS``, in the order of
    its ``OPTION_*`` columns); the weight goes beside it, as a float."""
    row = np.array([plan.diagonal, plan.heuristic, plan.budget, plan.tie_break,
                    plan.equal_f_stack, plan.buckets, plan.table, plan.algorithm,
                    plan.landmark], np.int64)  # fmt: skip
    assert row.shape == (OPTIONS,)
    return row


def batch_plans(plans: Sequence[Plan], clusters: int) -> BatchPlans:
    """``search_many``'s plans of ``plans`` (row ``i``: ``plans[i]``); ``clusters``:
    the most clusters of a table they read."""
    return BatchPlans(
        np.stack([option_row(plan) for plan in plans]),
        np.array([plan.weight for plan in plans], np.float64),
        any(plan.buckets > 0 for plan in plans),
        clusters,
        any(plan.algorithm == ALGORITHM_JPS for plan in plans),
        tuple(BatchPlan(plan.heuristic_used, ALGORITHM_NAMES[plan.algorithm], plan.diagonal)
              for plan in plans),
    )  # fmt: skip


def plans_of(leans: Sequence[LeanPlan]) -> BatchPlans:
    """The plans ``search_many`` runs a batch of ``leans`` on (row ``i``: ``leans[i]``)."""
    if len(leans) == 1:
        return leans[0].alone
    return BatchPlans(
        np.stack([lean.row for lean in leans]),
        np.array([lean.plan.weight for lean in leans], np.float64),
        any(lean.records for lean in leans),
        max(lean.clusters for lean in leans),
        any(lean.alone.jps for lean in leans),
        tuple(lean.alone.used[0] for lean in leans),
    )


def leanable(query: PathQuery) -> bool:
    """Whether ``query`` may run lean: one goal, a one-cell unit on the map's own
    costs, no ``nearest``, nothing to snap."""
    options = query.options
    return (query.goal is not None and query.goals is None and query.goal_region is None
            and options.agent_size == 1 and options.profile is None
            and options.unreachable == "no_path" and not query.snap)  # fmt: skip


def remember_lean(grid: GridMap, plans: dict[object, object], options: SearchOptions,
                  checked: CheckedQuery) -> None:  # fmt: skip
    """Remember the plan of a lean query answered under ``options``, unless the grid's
    tables changed meanwhile (its ``plans`` is no longer ``plans``): the plan may then
    be another."""
    if grid.plans is not plans or grid.links is not None:
        return  # (a map with links goes the full way, which lists the links taken)
    plan = checked.plan
    if plan.algorithm == ALGORITHM_JPS and grid.jump_bits is None:
        # A batch whose every JPS query a field search answered built no bit rows: the
        # lean ways would run the kernel on the placeholder's one row, read past it and
        # answer no_path. The next query goes the full way, which builds them.
        return
    clusters = cluster_rows(grid) if plan.table != NO_TABLE else 0
    alone = batch_plans([plan], clusters)
    row = alone.options[0]
    lean = LeanPlan(plan, row, (row, plan.weight), alone.records, clusters, alone)
    if len(plans) >= MEMO_ENTRIES:
        plans.clear()
    plans[options] = lean


def cluster_rows(grid: GridMap) -> int:
    """The most clusters of one of ``grid``'s cluster tables (0 without tables): the
    room a decoded row of them takes in the scratch."""
    tables = grid.clusters
    return max(tables.four.count, tables.eight.count) if tables is not None else 0


def known_plan(grid: GridMap, options: SearchOptions) -> LeanPlan | None:
    """The plan ``grid`` remembers for cell-to-cell queries under ``options``; None
    when it has none."""
    lean = grid.plans.get(options)
    return lean if isinstance(lean, LeanPlan) else None


def lean_batch(grid: GridMap, queries: Sequence[PathQuery]
               ) -> tuple[list[LeanPlan], npt.NDArray[np.int64]] | None:  # fmt: skip
    """The plans and ``search_many`` rows of a batch whose every query goes from one
    cell to another with options already known valid on this grid (see ``LeanPlan``);
    None when one does not: the full path then answers."""
    plans = grid.plans
    leans: list[LeanPlan] = []
    # A batch's queries mostly share a few option sets: each set's plan is looked up
    # once.
    slots: dict[SearchOptions, int] = {}
    rows = []
    index = operator.index
    try:
        for q in queries:
            options = q.options
            slot = slots.get(options)
            if slot is None:
                lean = plans.get(options) if leanable(q) else None
                if not isinstance(lean, LeanPlan):
                    return None
                slot = slots[options] = len(leans)
                leans.append(lean)
            goal = q.goal
            if goal is None or q.goals is not None or q.goal_region is not None:
                return None  # a goal set, under options another query ran lean
            (sx, sy), (gx, gy) = q.start, goal
            rows.append((slot, index(sx), index(sy), index(gx), index(gy)))
    except (TypeError, ValueError):  # a cell not two integers
        return None
    try:
        table = np.array(rows, np.int64).reshape(-1, 5)
    except OverflowError:  # a coordinate too big for the kernel: off the map, surely
        return None
    return leans, table


def plan_for(grid: GridMap, options: SearchOptions, *, single_goal: bool, goal_set: bool
             ) -> Plan:  # fmt: skip
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


def _make_plan(grid: GridMap, options: SearchOptions, *, single_goal: bool, goal_set: bool
               ) -> Plan:  # fmt: skip
    diagonal = DIAGONALS[options.diagonal]
    heuristic = HEURISTICS[options.heuristic]
    weight, tie_break = options.weight, options.tie_break
    used: Heuristic = options.heuristic
    table = landmark = NO_TABLE
    if heuristic == HEURISTIC_CLUSTER:
        heuristic, table, used = _table_heuristic("cluster", grid.clusters, diagonal)
    elif heuristic == HEURISTIC_LANDMARKS:
        heuristic, landmark, used = _table_heuristic("landmarks", grid.landmarks, diagonal)
    if (goal_set or grid.links is not None) and (table != NO_TABLE or landmark != NO_TABLE):
        # The tables bound the distance to one cell over the grid's own moves; a goal
        # set, or a map with links, searches with the plain bound of the policy.
        table = landmark = NO_TABLE
        heuristic = HEURISTIC_MANHATTAN if diagonal == DIAGONAL_NEVER else HEURISTIC_OCTILE
        used = "manhattan" if diagonal == DIAGONAL_NEVER else "octile"
    if goal_set and grid.links is not None:
        # A link may lead nearer a goal than the goal boxes' distance says (a teleport,
        # or stairs to a floor whose rows lie far in the stacked grid): no bound holds
        # but zero's, which keeps the search exact.
        heuristic, used = HEURISTIC_ZERO, "zero"
    # The equal-f stack is itself a larger-g tie-break, sound only when f is monotone
    # along paths: consistent heuristics, and the cluster bound with pathmax.
    monotone = used in CONSISTENT[POLICY_NAMES[diagonal]] or table != NO_TABLE
    stack = tie_break and weight == 1.0 and monotone
    buckets = _bucket_count(grid, used, diagonal) if stack else 0
    if stack and table != NO_TABLE and _bucket_count(grid, "manhattan", diagonal):
        # 4-connected integer map: the table's bounds floored to integers ride the
        # bucket queue too, with every bucket (see ``dial``).
        buckets = MAX_BUCKETS
    algorithm = _algorithm(grid, ALGORITHMS[options.algorithm], diagonal, used,
                           single_goal=single_goal)  # fmt: skip
    if goal_set:
        stack, buckets = False, 0
    if grid.links is not None:
        buckets = 0  # the bucket queue has no links' edges: the heap's A* has
    if algorithm == ALGORITHM_JPS:
        buckets = 0  # JPS has no bucket queue; it keeps the equal-f stack
    budget = UNLIMITED if options.max_expansions is None else options.max_expansions
    return Plan(diagonal, heuristic, weight, budget, tie_break, stack and not buckets, buckets,
                table, algorithm, landmark, used, options.unreachable == "nearest")  # fmt: skip


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
    if grid.links is not None:
        reasons.append("a map without links")
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
