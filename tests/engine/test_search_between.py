"""find_paths_between: many cell-to-cell queries under one option set, column by column."""

import math
from typing import Any

import numpy as np
import pytest

from service.engine import (
    REFUSED_ROW,
    STATUS_NAMES,
    BatchPolicy,
    EngineError,
    GridMap,
    InvalidQueryError,
    NotWalkableError,
    OutOfBoundsError,
    PathBatch,
    PathQuery,
    PathResult,
    Scratch,
    SearchOptions,
    find_paths,
    find_paths_between,
    shared_goal_rows,
)
from service.engine import search as search_module
from service.engine import sharing as sharing_module
from service.engine.scratch import PathBuffers
from tests.support import close, oracle_distances, random_grid, serpentine, walkable_cells

OPTIONS: list[dict[str, Any]] = [
    {},
    {"algorithm": "astar"},
    {"max_expansions": 4},
    {"diagonal": "always", "heuristic": "zero"},
    {"diagonal": "never", "weight": 1.5, "tie_break": False},
]


def _rows(grid: GridMap, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` random walkable start/goal rows, then a blocked start, a goal off the
    map, a negative start and start == goal."""
    cells = walkable_cells(grid)
    picked = rng.integers(len(cells), size=(count, 2))
    rows = [(*cells[a], *cells[b]) for a, b in picked.tolist()]
    blocked = next((x, y) for y in range(grid.height) for x in range(grid.width)
                   if not grid.walkable(x, y))  # fmt: skip
    rows += [(*blocked, *cells[0]), (*cells[0], grid.width, 0), (0, -1, *cells[1]),
             (*cells[2], *cells[2])]  # fmt: skip
    return np.array(rows, np.int64)


def _queries(rows: np.ndarray, options: dict[str, Any]) -> list[PathQuery]:
    return [
        PathQuery((sx, sy), (gx, gy), options=SearchOptions(**options))
        for sx, sy, gx, gy in rows.tolist()
    ]


def _same(a: PathResult | EngineError, b: PathResult | EngineError) -> None:
    if isinstance(b, EngineError):
        assert (type(a), str(a)) == (type(b), str(b))
        return
    assert isinstance(a, PathResult)
    assert (a.status, a.cost, a.length, a.expanded, a.reopened) == (
        b.status, b.cost, b.length, b.expanded, b.reopened)  # fmt: skip
    assert (a.heuristic_used, a.algorithm_used, a.reached, a.partial_reason) == (
        b.heuristic_used, b.algorithm_used, b.reached, b.partial_reason)  # fmt: skip
    assert (a.grid, a.diagonal_code) == (b.grid, b.diagonal_code)
    assert a.cells.tolist() == b.cells.tolist()
    assert a.waypoints.tolist() == b.waypoints.tolist()


def _refuse_find_paths(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("the lean route was expected, not find_paths")


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "defaults")
@pytest.mark.parametrize("costs", [None, (1, 4)], ids=["uniform", "weighted"])
def test_rows_answer_as_find_paths_would_first_and_once_the_plan_is_known(
    options: dict[str, Any], costs: tuple[int, int] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(13)
    grid = random_grid(rng, 40, 30, 0.3, costs)
    rows = _rows(grid, rng, 60)
    first = find_paths_between(
        grid, rows, options=SearchOptions(**options)
    )  # no plan yet: through find_paths
    expected = find_paths(grid, _queries(rows, options))
    monkeypatch.setattr(search_module, "find_paths", _refuse_find_paths)
    again = find_paths_between(
        grid, rows, options=SearchOptions(**options)
    )  # the plan is known: one kernel call
    for batch in (first, again):
        assert len(batch) == len(rows)
        for got, want in zip(batch.results(), expected, strict=True):
            _same(got, want)


def test_columns_hold_each_rows_answer_and_optimal_costs() -> None:
    rng = np.random.default_rng(21)
    grid = random_grid(rng, 30, 20, 0.25, (1, 5))
    rows = _rows(grid, rng, 40)
    find_paths_between(grid, rows, options=SearchOptions(algorithm="astar"))
    batch = find_paths_between(grid, rows, options=SearchOptions(algorithm="astar"))
    assert batch.status.dtype == np.int8
    assert batch.cells.dtype == batch.waypoints.dtype == np.int32
    assert batch.offsets.shape == batch.waypoint_offsets.shape == (len(rows) + 1,)
    for i, (sx, sy, gx, gy) in enumerate(rows.tolist()):
        if i >= 40:  # the refused rows (but start == goal)
            continue
        cells = batch.cells[batch.offsets[i] : batch.offsets[i + 1]]
        best = oracle_distances(grid, (sx, sy), "no_corner_cutting")[gy, gx]
        if math.isinf(best):
            assert STATUS_NAMES[batch.status[i]] == "no_path"
            assert math.isnan(batch.cost[i])
            assert cells.shape == (0, 2)
            continue
        assert STATUS_NAMES[batch.status[i]] == "found"
        assert close(float(batch.cost[i]), float(best))
        assert cells[0].tolist() == [sx, sy]
        assert cells[-1].tolist() == batch.goals[i].tolist() == [gx, gy]
    assert batch.status[40:43].tolist() == [REFUSED_ROW] * 3
    refused = [type(batch.errors[i]) for i in (40, 41, 42)]
    assert refused == [NotWalkableError, OutOfBoundsError, OutOfBoundsError]
    assert math.isnan(batch.cost[41])
    assert STATUS_NAMES[batch.status[43]] == "found"
    assert batch.cost[43] == 0.0


@pytest.mark.parametrize(("cells", "message"), [
    ([0, 0, 1, 1], "cells must have shape (n, 4), not (4,)"),
    ([[0, 0, 1]], "cells must have shape (n, 4), not (1, 3)"),
    ([[0.0, 0.0, 1.0, 1.0]], "cells must be integers, not float64"),
    ([[True, False, True, True]], "cells must be integers, not bool"),
    (np.array([[2**63, 0, 1, 1]], np.uint64), "cells must be integers below 2**63"),
])  # fmt: skip
def test_cells_not_an_n_by_4_integer_array_are_refused(cells: object, message: str) -> None:
    grid = GridMap.from_rows(["...."])
    with pytest.raises(InvalidQueryError) as error:
        find_paths_between(grid, cells)  # type: ignore[call-overload]
    assert str(error.value) == message


def test_no_rows_answer_an_empty_batch() -> None:
    grid = GridMap.from_rows(["...."])
    for _ in range(2):
        batch = find_paths_between(grid, np.zeros((0, 4), np.int64))
        assert (len(batch), batch.results(), batch.offsets.tolist()) == (0, [], [0])


def test_rows_sharing_a_goal_take_the_field_search() -> None:
    grid = GridMap.from_rows(["........"] * 6)
    rows = np.array([(x, 0, 7, 5) for x in range(4)], np.int64)
    find_paths_between(grid, rows[:1])
    batch = find_paths_between(grid, rows, policy=BatchPolicy(shared_goal_queries=4))
    assert [p.algorithm_used for p in batch.plans] == ["field"]
    assert batch.plans[0].heuristic_used == "zero"
    lean = find_paths_between(grid, rows, policy=BatchPolicy(shared_goal_queries=5))
    assert [p.algorithm_used for p in lean.plans] == ["jps"]
    assert batch.cost.tolist() == lean.cost.tolist()


def _lean_route_only(grid: GridMap, scratch: Scratch, monkeypatch: pytest.MonkeyPatch) -> None:
    """Remember ``grid``'s default plan (the first call on a grid builds its tables,
    which forgets the plans, so two calls), then refuse the general route."""
    for _ in range(2):
        find_paths_between(grid, [[0, 0, 0, 0]], scratch=scratch)
    monkeypatch.setattr(search_module, "find_paths", _refuse_find_paths)


def test_lean_rows_grow_the_path_buffers_mid_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    grid, goal, cost = serpentine(65)
    scratch = Scratch(grid.padded.size)
    _lean_route_only(grid, scratch, monkeypatch)
    scratch.paths = PathBuffers(1, 8)
    rows = np.array([(0, 0, *goal), (0, 0, 2, 0)] * 3, np.int64)
    batch = find_paths_between(grid, rows, scratch=scratch)
    assert batch.cost.tolist() == [cost, 2.0] * 3
    for i, result in enumerate(batch.results()):
        assert isinstance(result, PathResult)
        assert result.cells[-1].tolist() == rows[i, 2:].tolist()


def test_rows_refused_before_and_after_the_path_buffers_grow_keep_their_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The kernel counts refused rows on its first call only, which sets every row:
    # a later call (after growth) sets fewer, and must not hide the earlier ones.
    grid, goal, cost = serpentine(65)
    scratch = Scratch(grid.padded.size)
    _lean_route_only(grid, scratch, monkeypatch)
    scratch.for_queries(3)
    scratch.paths = PathBuffers(3, 8)
    off = grid.width
    for rows in ([(off, 0, 0, 0), (0, 0, *goal), (0, 0, 2, 0)],
                 [(0, 0, 2, 0), (0, 0, *goal), (0, 0, off, 0)]):  # fmt: skip
        batch = find_paths_between(grid, np.array(rows, np.int64), scratch=scratch)
        refused = [i for i, row in enumerate(rows) if off in row]
        assert [i for i, s in enumerate(batch.status.tolist()) if s == REFUSED_ROW] == refused
        assert sorted(batch.errors) == refused
        assert all(isinstance(e, OutOfBoundsError) for e in batch.errors.values())
        assert batch.cost[1] == cost
        scratch.paths = PathBuffers(3, 8)


def test_a_batch_keeps_its_goals_when_the_callers_array_changes() -> None:
    grid = GridMap.from_rows(["........"] * 3)
    rows = np.array([(0, 0, 7, 2), (7, 0, 0, 2)], np.int64)
    find_paths_between(grid, rows)
    batch = find_paths_between(grid, rows)
    rows[:] = 1
    assert batch.goals.tolist() == [[7, 2], [0, 2]]
    assert batch.plan.tolist() == [0, 0]


def test_a_batch_is_a_copy_the_next_batch_does_not_overwrite() -> None:
    grid = GridMap.from_rows(["........"] * 3)
    rows = np.array([(0, 0, 7, 2), (7, 0, 0, 2)], np.int64)
    find_paths_between(grid, rows)
    batch = find_paths_between(grid, rows)
    kept = (batch.cells.copy(), batch.waypoints.copy(), batch.cost.copy())
    find_paths_between(grid, rows[::-1].copy())
    assert batch.cells.tolist() == kept[0].tolist()
    assert batch.waypoints.tolist() == kept[1].tolist()
    assert batch.cost.tolist() == kept[2].tolist()


def test_one_row_of_a_batch_is_its_result() -> None:
    grid = GridMap.from_rows(["....", ".@@.", "...."])
    rows = np.array([(0, 0, 3, 2), (1, 1, 0, 0), (0, 2, 3, 0)], np.int64)
    find_paths_between(grid, rows)
    batch: PathBatch = find_paths_between(grid, rows)
    whole = batch.results()
    for i in range(len(rows)):
        _same(batch.result(i), whole[i])
    assert [type(r) for r in batch.results(1, 3)] == [NotWalkableError, PathResult]


def test_goals_are_shared_when_enough_rows_name_one() -> None:
    rows = np.array([(0, 0, 5, 5), (1, 0, 5, 6), (2, 0, 5, 5), (3, 0, 6, 5), (4, 0, 5, 5)])
    shared = sharing_module.goals_shared
    assert [shared(rows[:, 2:4], least) for least in (0, 1, 2, 3, 4, 6)] == [
        False, True, True, True, False, False]  # fmt: skip
    by_plan = np.array([(0, 5, 5), (1, 5, 5), (0, 5, 5)])  # a goal shared within plan 0 only
    assert (shared(by_plan, 2), shared(by_plan, 3)) == (True, False)
    far = np.array([(1, 0), (0, 2**32)])  # one column past 2**21 apart: not shared
    assert not shared(far, 2)


def test_starts_that_fold_alike_are_still_told_apart() -> None:
    # Distinct starts were counted by their 21-bit folds: on a map 2**21 cells tall,
    # (1, k) and (0, 2**21 + k) folded alike, so 8 starts counted as 4, and a batch
    # answered from one field search the first time was searched query by query when
    # it came again (lean). A two-cost map: A*, whose goals group from 8 starts.
    tall = (1 << 21) + 8
    costs = np.ones((tall, 2), np.float32)
    costs[:, 1] = 2.0
    grid = GridMap.from_costs(costs)
    rows = np.array([(1, k, 0, 0) for k in range(4)] + [(0, (1 << 21) + k, 0, 0)
                                                        for k in range(4)], np.int64)  # fmt: skip
    assert len(set(sharing_module._folded(rows[:, :2]).tolist())) == 4
    first = find_paths_between(
        grid, rows, policy=BatchPolicy(shared_goal_queries=8)
    )  # remembers the plan
    again = find_paths_between(grid, rows, policy=BatchPolicy(shared_goal_queries=8))  # lean
    assert [p.algorithm_used for p in first.plans] == ["field"]
    assert [p.algorithm_used for p in again.plans if p.algorithm_used == "field"] == ["field"]
    assert again.plan.tolist() == [again.plans.index(first.plans[0])] * 8
    assert again.expanded.tolist() == first.expanded.tolist()


# -- find_paths_between_within: bounded work, for the event loop --------------------------


def _batch_fields(batch: PathBatch) -> tuple[object, ...]:
    cost = np.nan_to_num(batch.cost, nan=-1.0)  # NaN (no path) is not equal to itself
    columns = (batch.status, cost, batch.length, batch.expanded, batch.cells,
               batch.offsets, batch.waypoints, batch.waypoint_offsets)  # fmt: skip
    return (*(c.tolist() for c in columns), batch.plans, sorted(batch.errors))


def test_within_answers_nothing_until_the_grid_knows_the_options() -> None:
    grid = GridMap.from_rows(["........"] * 4)
    rows = np.array([(0, 0, 7, 3), (7, 0, 0, 3)], np.int64)
    assert find_paths_between(grid, rows, bound=1000) is None
    assert grid.plans == {}  # nothing remembered, nothing built
    for _ in range(2):  # the first call on a grid builds its tables, which forgets plans
        find_paths_between(grid, rows)
    within = find_paths_between(grid, rows, bound=1000)
    assert within is not None
    assert _batch_fields(within) == _batch_fields(find_paths_between(grid, rows))


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "defaults")
def test_within_agrees_with_find_paths_between_or_answers_none(options: dict[str, Any]) -> None:
    rng = np.random.default_rng(5)
    grid = random_grid(rng, 40, 30, 0.3, None)
    rows = _rows(grid, rng, 40)
    for _ in range(2):
        whole = find_paths_between(grid, rows, options=SearchOptions(**options))
    assert any(s != REFUSED_ROW for s in whole.status.tolist())
    most = int(whole.expanded.max())
    within = find_paths_between(grid, rows, options=SearchOptions(**options), bound=most)
    assert within is not None
    assert _batch_fields(within) == _batch_fields(whole)
    if most > options.get("max_expansions", most):  # the rows' own budget cut them
        return
    # One expansion short for the hungriest row: it would be cut by the bound, not by
    # its own budget, so nothing is answered.
    assert find_paths_between(grid, rows, options=SearchOptions(**options), bound=most - 1) is None


def test_within_keeps_a_rows_own_smaller_budget() -> None:
    grid, goal, _ = serpentine(21)
    rows = np.array([(0, 0, *goal)], np.int64)
    for _ in range(2):
        find_paths_between(grid, rows, options=SearchOptions(max_expansions=5))
    within = find_paths_between(grid, rows, options=SearchOptions(max_expansions=5), bound=1000)
    assert within is not None
    assert within.status.tolist() == [STATUS_NAMES.index("partial")]


def test_within_leaves_shared_goals_to_the_field_search() -> None:
    grid = GridMap.from_rows(["........"] * 4)
    rows = np.array([(0, 0, 7, 3), (1, 0, 7, 3), (2, 0, 7, 3)], np.int64)
    for _ in range(2):
        find_paths_between(grid, rows)
    assert find_paths_between(grid, rows, bound=1000) is not None
    assert (
        find_paths_between(grid, rows, policy=BatchPolicy(shared_goal_queries=3), bound=1000)
        is None
    )


def test_shared_goal_rows_are_the_rows_a_field_search_answers() -> None:
    rng = np.random.default_rng(7)
    grid = random_grid(rng, 30, 30, 0.25, (1, 3))  # two costs: A*, groups from 8 starts
    cells = walkable_cells(grid)
    pick = [cells[int(i)] for i in rng.permutation(len(cells))]
    rows = np.array([(*pick[2 + i % 9], *pick[0]) for i in range(12)]  # 9 starts
                    + [(*pick[20 + i], *pick[1]) for i in range(5)]  # 5 starts
                    + [(*pick[30], *pick[31])], np.int64)  # fmt: skip
    order = rng.permutation(len(rows))
    rows = rows[order]
    assert (
        shared_goal_rows(grid, rows, policy=BatchPolicy(shared_goal_queries=8)) is None
    )  # options unknown
    batch = find_paths_between(grid, rows, policy=BatchPolicy(shared_goal_queries=8))
    groups = shared_goal_rows(grid, rows, policy=BatchPolicy(shared_goal_queries=8))
    assert groups is not None
    fielded = [row for row in range(len(rows))
               if batch.plans[batch.plan[row]].algorithm_used == "field"]  # fmt: skip
    assert [group.tolist() for group in groups] == [fielded]
    assert sorted(fielded) == sorted(np.flatnonzero(order < 12).tolist())
    assert shared_goal_rows(grid, rows, policy=BatchPolicy(shared_goal_queries=10)) == []
    assert shared_goal_rows(grid, rows[:0], policy=BatchPolicy(shared_goal_queries=8)) == []
