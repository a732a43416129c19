"""find_paths: many queries in one kernel call, errors in their slots."""

import subprocess
import sys
import threading
from collections import Counter
from typing import Any

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.config import REPO_ROOT
from service.engine import (
    BatchPolicy,
    EngineError,
    GridMap,
    InvalidBudgetError,
    NotWalkableError,
    OutOfBoundsError,
    PathQuery,
    PathResult,
    Scratch,
    SearchOptions,
    UnknownHeuristicError,
    build_clusters,
    build_landmarks,
    find_path,
    find_paths,
    find_paths_between,
)
from service.engine import plans as plans_module
from service.engine.scratch import (
    INITIAL_PATH_CELLS,
    PathBuffers,
    path_cell_scope,
    set_path_cell_limit,
)
from tests.support import art, oracle_graph, random_grid, serpentine, walk_cost, walkable_cells


def _same(a: PathResult, b: PathResult) -> None:
    assert (a.status, a.cost, a.expanded, a.length) == (b.status, b.cost, b.expanded, b.length)
    assert a.cells.tolist() == b.cells.tolist()
    assert a.waypoints.tolist() == b.waypoints.tolist()


def test_batch_answers_equal_single_answers_in_order() -> None:
    rng = np.random.default_rng(4)
    grid = random_grid(rng, 40, 30, 0.3, (1, 4))
    cells = walkable_cells(grid)
    queries = [
        PathQuery(
            cells[int(rng.integers(len(cells)))],
            cells[int(rng.integers(len(cells)))],
            options=SearchOptions(diagonal=policy, heuristic=heuristic, max_expansions=budget),
        )
        for policy in ("never", "no_corner_cutting", "always")
        for heuristic in ("octile", "zero")
        for budget in (None, 5)
    ]
    results = find_paths(grid, queries)
    assert len(results) == len(queries)
    for query, result in zip(queries, results, strict=True):
        assert isinstance(result, PathResult)
        single = find_path(grid, query.start, query.goal, options=query.options)
        _same(result, single)


def test_bad_queries_get_their_error_in_their_slot() -> None:
    grid = GridMap.from_rows(["....", ".@..", "...."])
    results = find_paths(
        grid,
        [
            PathQuery((0, 0), (3, 2)),
            PathQuery((1, 1), (3, 2)),
            PathQuery((0, 0), (9, 9)),
            PathQuery((0, 0), None, goals=[(1, 1)]),
            PathQuery((3, 2), (0, 0)),
        ],
    )
    assert isinstance(results[0], PathResult)
    assert isinstance(results[1], NotWalkableError)
    assert isinstance(results[2], OutOfBoundsError)
    assert isinstance(results[3], NotWalkableError)
    assert isinstance(results[4], PathResult)
    assert results[0].cost == results[4].cost
    assert find_paths(grid, []) == []
    # Options are checked when they are made, before any query holds them.
    with pytest.raises(UnknownHeuristicError, match="unknown heuristic 'psychic'"):
        SearchOptions(heuristic="psychic")


def test_path_buffers_grow_mid_batch_and_keep_earlier_paths() -> None:
    grid = GridMap.from_costs(np.ones((1, 300)))
    scratch = Scratch(grid.padded.size)
    scratch.paths = PathBuffers(1, 8)  # room for 8 cells: every long path overflows it
    queries = [PathQuery((0, 0), (x, 0)) for x in (3, 299, 5, 150)]
    results = find_paths(grid, queries, scratch=scratch)
    for query, result in zip(queries, results, strict=True):
        assert isinstance(result, PathResult)
        assert query.goal is not None
        assert len(result.cells) == query.goal[0] + 1
        assert result.cells[-1].tolist() == [query.goal[0], 0]
    assert scratch.paths.cells.shape[0] >= 300
    # Results are copies: the next batch does not change them.
    before = results[1].cells.copy()  # type: ignore[union-attr]
    find_paths(grid, [PathQuery((299, 0), (0, 0))], scratch=scratch)
    assert results[1].cells.tolist() == before.tolist()  # type: ignore[union-attr]


def test_bucket_queue_only_where_every_f_is_an_integer() -> None:
    from service.engine.checks import check_query

    uniform = GridMap.from_rows(["....", "...."])
    weighted = GridMap.from_costs([[1, 2, 3], [1, 1, 1]])
    fractional = GridMap.from_costs([[1.0, 2.5, 3.0], [1.0, 1.0, 1.0]])

    def buckets(grid: GridMap, **options: Any) -> int:
        query = PathQuery((0, 0), (2, 1), options=SearchOptions(**options))
        return int(check_query(grid, query).plan.buckets)

    never = {"diagonal": "never"}
    assert buckets(uniform, heuristic="manhattan", **never) == 1 + 1 + 1  # max + min + 1
    assert buckets(weighted, heuristic="zero", **never) == 3 + 1 + 1
    assert buckets(weighted, heuristic="octile", **never) == 0  # sqrt(2) in octile
    assert buckets(uniform, heuristic="manhattan") == 0  # diagonal steps cost sqrt(2)
    assert buckets(fractional, heuristic="manhattan", **never) == 0
    assert buckets(uniform, heuristic="manhattan", weight=2.0, **never) == 0
    assert buckets(uniform, heuristic="manhattan", tie_break=False, **never) == 0
    # dial keeps g in int32: a map whose dearest path could pass 2**31 uses the heap.
    dear = GridMap.from_costs(np.full((50, 50), 1_000_000.0))
    assert buckets(dear, heuristic="manhattan", **never) == 0


def test_cluster_queries_ride_the_bucket_queue_when_4_connected_on_integer_costs() -> None:
    from service.engine import build_clusters
    from service.engine.checks import check_query
    from service.engine.scratch import MAX_BUCKETS

    def buckets(grid: GridMap, diagonal: str) -> int:
        query = PathQuery(
            (0, 0), (2, 1), options=SearchOptions(heuristic="cluster", diagonal=diagonal)
        )
        return int(check_query(grid, query).plan.buckets)

    weighted = GridMap.from_costs([[1, 2, 3], [1, 1, 1]])
    fractional = GridMap.from_costs([[1.0, 2.5, 3.0], [1.0, 1.0, 1.0]])
    assert buckets(weighted, "never") == 0  # no tables yet: octile, the heap
    for grid in (weighted, fractional):
        grid.attach_clusters(build_clusters(grid, cluster_size=4, max_table_bytes=1 << 20))
    assert buckets(weighted, "never") == MAX_BUCKETS
    assert buckets(weighted, "no_corner_cutting") == 0
    assert buckets(fractional, "never") == 0


# -- regression: a path that exists answered no_path ------------------------------------
# A path longer than the room left in the path buffers stopped the batch; the query
# was re-run after the buffers grew, under the generation of its first try, so it
# found its own stamps and answered no_path after one expansion.

LONG_SIDE = 257  # a 257 x 257 serpentine: its one path has 33,025 cells
LONG_QUERIES = [
    pytest.param({"algorithm": "astar"}, id="astar"),
    pytest.param({"algorithm": "jps"}, id="jps"),
    pytest.param({"diagonal": "never", "heuristic": "manhattan"}, id="dial"),
]


@pytest.mark.parametrize("options", LONG_QUERIES)
def test_a_path_longer_than_the_buffer_is_found(options: dict[str, Any]) -> None:
    """A path longer than the buffer answered no_path."""
    grid, goal, cost = serpentine(LONG_SIDE)
    scratch = Scratch(grid.padded.size)
    assert scratch.paths.cells.shape[0] == INITIAL_PATH_CELLS < cost
    for _ in range(2):  # the first query grows the buffers, the second finds them grown
        result = find_path(grid, (0, 0), goal, scratch=scratch, **options)
        assert result.status == "found"
        assert result.cost == cost
        assert len(result.cells) == cost + 1
        assert walk_cost(grid, result.cells, "never") == cost


def test_a_long_path_on_a_fresh_search_thread_is_found() -> None:
    """The first long path on a new thread answered no_path."""
    grid, goal, cost = serpentine(LONG_SIDE)
    answers: list[PathResult] = []
    for algorithm in ("astar", "jps"):  # each on a new thread: a new thread scratch
        worker = threading.Thread(
            target=lambda a=algorithm: answers.append(find_path(grid, (0, 0), goal, algorithm=a))
        )
        worker.start()
        worker.join()
    assert [(a.status, a.cost) for a in answers] == [("found", cost)] * 2


def test_a_long_path_in_a_fresh_process_is_found() -> None:
    """The first long query of a fresh interpreter (the state a server starts in)."""
    program = (
        "from service.engine import find_path\n"
        "from tests.support import serpentine\n"
        f"grid, goal, cost = serpentine({LONG_SIDE})\n"
        "for algorithm in ('astar', 'jps'):\n"
        "    r = find_path(grid, (0, 0), goal, algorithm=algorithm)\n"
        "    print(algorithm, r.status, r.cost == cost, r.expanded > 1)\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT, timeout=300)  # fmt: skip
    assert out.stdout.split("\n")[:2] == ["astar found True True", "jps found True True"]


def test_a_batch_overflowing_the_buffer_mid_way_keeps_every_answer() -> None:
    """Many searched (not straight-line) paths in one batch: the buffers fill up mid
    batch, several times, on a fresh scratch; every answer equals a single query's."""
    grid, goal, _ = serpentine(65)  # 1,089-cell paths: 16 fill the initial buffers
    cells = walkable_cells(grid)
    rng = np.random.default_rng(8)
    queries = [PathQuery((0, 0), goal)] * 40 + [
        PathQuery(
            cells[int(rng.integers(len(cells)))],
            cells[int(rng.integers(len(cells)))],
            options=SearchOptions(algorithm=algorithm),
        )
        for algorithm in ("astar", "jps")
        for _ in range(30)
    ]
    batch = find_paths(grid, queries, scratch=Scratch(grid.padded.size))
    for query, answer in zip(queries, batch, strict=True):
        assert isinstance(answer, PathResult)
        single = find_path(grid, query.start, query.goal, options=query.options,
                           scratch=Scratch(grid.padded.size))  # fmt: skip
        _same(answer, single)


# -- no state survives between queries ---------------------------------------------------
# Stamps, heap positions, buckets, the decoded cluster row and the active landmarks all
# live in the reused scratch. Any of them leaking from one query into the next would
# make a query's answer depend on what ran before it on that thread.


def _mixed_queries(grid: GridMap, rng: np.random.Generator, count: int) -> list[PathQuery]:
    cells = walkable_cells(grid)
    kinds: list[dict[str, Any]] = [
        {},
        {"algorithm": "astar"},
        {"algorithm": "astar", "heuristic": "cluster"},
        {"algorithm": "astar", "heuristic": "landmarks"},
        {"heuristic": "landmarks"},
        {"diagonal": "never", "heuristic": "manhattan"},
        {"diagonal": "never", "heuristic": "cluster"},
        {"diagonal": "always", "heuristic": "zero"},
        {"weight": 1.5},
        {"max_expansions": 7},
        {"algorithm": "astar", "max_expansions": 50, "heuristic": "cluster"},
    ]
    queries = []
    for _ in range(count):
        options = dict(kinds[int(rng.integers(len(kinds)))])
        if not grid.uniform and options.get("algorithm") is None:
            options["algorithm"] = "astar"
        start = cells[int(rng.integers(len(cells)))]
        goal = cells[int(rng.integers(len(cells)))]
        queries.append(PathQuery(start, goal, options=SearchOptions(**options)))
    return queries


def _with_tables(grid: GridMap) -> GridMap:
    grid.attach_clusters(build_clusters(grid, cluster_size=8, max_table_bytes=1 << 24))
    grid.attach_landmarks(build_landmarks(grid, count=4, max_table_bytes=1 << 24))
    return grid


def test_no_state_survives_between_queries_on_a_reused_scratch() -> None:
    rng = np.random.default_rng(21)
    grids = [
        _with_tables(random_grid(rng, 48, 40, 0.3, None)),
        _with_tables(random_grid(rng, 70, 64, 0.25, (1, 5))),
        _with_tables(serpentine(33)[0]),
    ]
    shared = Scratch(max(g.padded.size for g in grids))
    shared.paths = PathBuffers(1, 64)  # small: the buffers grow again and again
    for round_ in range(6):
        grid = grids[round_ % len(grids)]
        queries = _mixed_queries(grid, rng, 60)
        reused = find_paths(grid, queries, scratch=shared)  # one batch
        singles = [find_paths(grid, [q], scratch=shared)[0] for q in queries]  # one by one
        for query, batched, single in zip(queries, reused, singles, strict=True):
            fresh = find_paths(grid, [query], scratch=Scratch(grid.padded.size))[0]
            assert isinstance(fresh, PathResult), query
            assert isinstance(batched, PathResult)
            assert isinstance(single, PathResult)
            _same(batched, fresh)
            _same(single, fresh)


@pytest.mark.parametrize("policy", ["never", "no_corner_cutting", "one_obstacle", "always"])
@pytest.mark.parametrize("seed", range(4))
def test_a_shared_goal_batch_has_the_costs_of_independent_queries(policy: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 40, 30, 0.3, None if seed % 2 else (1, 6))
    cells = walkable_cells(grid)
    goal = cells[int(rng.integers(len(cells)))]
    starts = [cells[int(i)] for i in rng.integers(len(cells), size=40)] + [goal]
    queries = [
        PathQuery(
            start,
            goal,
            options=SearchOptions(
                diagonal=policy, heuristic="octile" if policy != "never" else "manhattan"
            ),
        )
        for start in starts
    ]
    shared = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    alone = find_paths(grid, queries)
    for a, b, start in zip(shared, alone, starts, strict=True):
        assert isinstance(a, PathResult)
        assert isinstance(b, PathResult)
        assert a.algorithm_used == "field"
        assert a.status == b.status
        if b.status == "no_path":
            assert a.cost is None
            assert a.cells.shape == (0, 2)
            continue
        assert a.cost is not None
        assert b.cost is not None
        assert a.cost == pytest.approx(b.cost, rel=1e-12)
        assert tuple(a.cells[0]) == start
        assert tuple(a.cells[-1]) == goal
        assert walk_cost(grid, a.cells, policy) == pytest.approx(a.cost, rel=1e-12)
        steps = np.diff(a.cells, axis=0)
        turns = [0] + [i for i in range(1, len(steps)) if (steps[i] != steps[i - 1]).any()]
        expected = a.cells[[*turns, len(a.cells) - 1]] if len(a.cells) > 1 else a.cells
        assert a.waypoints.tolist() == expected.tolist()
        diagonal = np.count_nonzero(np.abs(steps).sum(axis=1) == 2)
        assert a.length == pytest.approx(len(steps) - diagonal + diagonal * 2**0.5, rel=1e-12)


def test_shared_goal_batches_leave_small_groups_and_budgeted_queries_alone() -> None:
    rng = np.random.default_rng(2)
    grid = random_grid(rng, 30, 30, 0.2, None)
    cells = walkable_cells(grid)
    goal, other = cells[0], cells[-1]
    queries = ([PathQuery(cells[i], goal) for i in range(5, 15)]
               + [PathQuery(cells[i], other) for i in range(5, 8)]
               + [PathQuery(cells[20], goal, options=SearchOptions(max_expansions=10)),
                  PathQuery(cells[21], goal, options=SearchOptions(weight=2.0))])  # fmt: skip
    results = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    used = [r.algorithm_used for r in results if isinstance(r, PathResult)]
    assert used == ["field"] * 10 + ["jps"] * 3 + ["jps", "jps"]


@pytest.mark.parametrize("general", [False, True], ids=["lean", "general"])
def test_repeats_of_one_query_do_not_make_a_shared_goal_group(general: bool) -> None:
    # bench_http --batch-size 500 cycled through 30 short rows: each goal came 17 times
    # from one start, went to a field search, and the batch ran several times slower.
    rng = np.random.default_rng(3)
    grid = random_grid(rng, 30, 30, 0.2, None)
    cells = walkable_cells(grid)
    goal, other = cells[0], cells[-1]
    repeated = [PathQuery(cells[5], goal)] * 12  # one start: no group
    seven = [PathQuery(cells[10 + i % 7], other) for i in range(14)]  # 7 starts: no group
    eight = [
        PathQuery(cells[30 + i % 8], other, options=SearchOptions(diagonal="always"))
        for i in range(16)
    ]
    # A goal set takes the batch off the lean path: groups are then chosen there.
    extra = [PathQuery(cells[3], None, goals=[goal, other])] if general else []
    results = find_paths(
        grid, [*repeated, *seven, *eight, *extra], policy=BatchPolicy(shared_goal_queries=8)
    )
    used = [r.algorithm_used for r in results if isinstance(r, PathResult)]
    assert used[:26] == ["jps"] * 12 + ["jps"] * 14
    assert used[26:42] == ["field"] * 16
    alone = find_paths(grid, [*repeated, *seven, *eight])
    for a, b in zip(results, alone, strict=False):
        assert isinstance(a, PathResult)
        assert isinstance(b, PathResult)
        assert a.cost == pytest.approx(b.cost, rel=1e-12)


def test_a_goal_only_jps_reaches_is_shared_from_its_own_number_of_starts() -> None:
    grid = random_grid(np.random.default_rng(4), 30, 30, 0.2, None)  # uniform: JPS
    cells = walkable_cells(grid)
    goal = cells[0]
    jps = [PathQuery(cells[5 + i], goal) for i in range(10)]
    astar = [
        PathQuery(cells[20 + i], goal, options=SearchOptions(algorithm="astar")) for i in range(10)
    ]

    def used(queries: list[PathQuery], *, shared_goal_queries: int,
             shared_goal_jps_queries: int | None = None) -> set[str]:  # fmt: skip
        found: set[str] = set()
        for _ in range(2):  # the general path, then the lean one (plans known)
            answers = find_paths(
                grid,
                queries,
                policy=BatchPolicy(
                    shared_goal_queries=shared_goal_queries,
                    shared_goal_jps_queries=shared_goal_jps_queries,
                ),
            )
            found = {r.algorithm_used for r in answers if isinstance(r, PathResult)}
        return found

    assert used(jps, shared_goal_queries=8, shared_goal_jps_queries=11) == {"jps"}
    assert used(jps, shared_goal_queries=8, shared_goal_jps_queries=10) == {"field"}
    assert used(jps, shared_goal_queries=8, shared_goal_jps_queries=0) == {"jps"}
    assert used(jps, shared_goal_queries=8) == {"field"}  # None: the same number
    assert used(jps, shared_goal_queries=0, shared_goal_jps_queries=2) == {"jps"}  # 0: off
    assert used(astar, shared_goal_queries=8, shared_goal_jps_queries=11) == {"field"}
    # One query to the goal that JPS does not answer: the group takes A*'s number.
    mixed = jps[:7] + astar[:1]
    assert used(mixed, shared_goal_queries=8, shared_goal_jps_queries=100) == {"field"}
    assert used(mixed[:7], shared_goal_queries=7, shared_goal_jps_queries=100) == {"jps"}


def _same_answer(a: PathResult | EngineError, b: PathResult | EngineError) -> None:
    """Byte for byte the same answer (or the same error)."""
    if not isinstance(b, PathResult):
        assert type(a) is type(b)
        assert str(a) == str(b)
        return
    assert isinstance(a, PathResult)
    assert (a.status, a.cost, a.length, a.expanded, a.reopened, a.heuristic_used,
            a.algorithm_used, a.reached, a.partial_reason) == (
            b.status, b.cost, b.length, b.expanded, b.reopened, b.heuristic_used,
            b.algorithm_used, b.reached, b.partial_reason)  # fmt: skip
    assert a.cells.tolist() == b.cells.tolist()
    assert a.waypoints.tolist() == b.waypoints.tolist()


def _shared_goal_mix(grid: GridMap, rng: np.random.Generator) -> list[PathQuery]:
    """Queries with every case a shared-goal batch meets: two groups under two policies,
    one group split over two plans of one policy, repeats, a blocked and an off-map
    start in a group, a group's goal under a non-optimal plan, and loose queries."""
    cells = walkable_cells(grid)
    pick = [cells[int(i)] for i in rng.permutation(len(cells))]
    goal, other, third = pick[0], pick[1], pick[2]
    blocked = next((x, y) for y in range(grid.height) for x in range(grid.width)
                   if grid.costs[y, x] <= 0)  # fmt: skip
    queries = [PathQuery(pick[3 + i % 9], goal) for i in range(14)]  # 9 starts
    queries += [
        PathQuery(pick[20 + i], other, options=SearchOptions(diagonal="always")) for i in range(8)
    ]
    queries += [
        PathQuery(pick[30 + i], third, options=SearchOptions(tie_break=i % 2 == 0))
        for i in range(8)
    ]
    queries += [
        PathQuery(blocked, goal),
        PathQuery((grid.width, 0), goal),
        PathQuery(pick[40], goal, options=SearchOptions(weight=2.0)),
        PathQuery(pick[41], goal, options=SearchOptions(max_expansions=3)),
    ]
    queries += [PathQuery(pick[50 + i], pick[60 + i]) for i in range(6)]
    order = rng.permutation(len(queries))
    return [queries[int(i)] for i in order]


@pytest.mark.parametrize("seed", range(6))
def test_a_lean_batch_answers_shared_goals_as_the_first_batch_did(seed: int) -> None:
    # The first batch on a map checks every query (the general path) and remembers
    # their plans; the next runs lean, its shared goals' field searches included.
    rng = np.random.default_rng(500 + seed)
    grid = random_grid(rng, 36, 28, 0.25, (1, 5) if seed % 3 == 2 else None)
    queries = _shared_goal_mix(grid, rng)
    first = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    if plans_module.lean_batch(grid, queries) is None:  # it built tables: no plan kept
        first = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    assert plans_module.lean_batch(grid, queries) is not None  # the next one runs lean
    again = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    used = Counter(r.algorithm_used for r in again if isinstance(r, PathResult))
    assert used["field"] >= 9 + 8 + 8 - 1  # (the blocked start is an error)
    for a, b in zip(again, first, strict=True):
        _same_answer(a, b)
    alone = find_paths(grid, queries)
    for a, b in zip(again, alone, strict=True):
        if isinstance(b, PathResult):
            assert isinstance(a, PathResult)
            assert a.status == b.status
            assert a.cost == pytest.approx(b.cost, rel=1e-12)
        else:
            assert str(a) == str(b)


@pytest.mark.parametrize("seed", range(4))
def test_find_paths_between_answers_shared_goals_as_find_paths_does(seed: int) -> None:
    rng = np.random.default_rng(600 + seed)
    grid = random_grid(rng, 30, 30, 0.3, None)
    cells = walkable_cells(grid)
    pick = [cells[int(i)] for i in rng.permutation(len(cells))]
    rows = np.array([(*pick[i % 12 + 2], *pick[i % 2]) for i in range(40)]
                    + [(0, -1, *pick[0]), (*pick[30], *pick[31])], np.int64)  # fmt: skip
    queries = [PathQuery((int(r[0]), int(r[1])), (int(r[2]), int(r[3]))) for r in rows]
    general = find_paths(
        grid, queries, policy=BatchPolicy(shared_goal_queries=6)
    )  # remembers the plan
    batch = find_paths_between(grid, rows, policy=BatchPolicy(shared_goal_queries=6))
    assert {p.algorithm_used for p in batch.plans} == {"jps", "field"}
    for a, b in zip(batch.results(), general, strict=True):
        _same_answer(a, b)


def test_shared_goals_in_a_lean_batch_grow_the_path_buffers() -> None:
    grid, goal, _ = serpentine(65)  # 1,089-cell paths: 16 fill the initial buffers
    starts = [(0, 2 * i) for i in range(12)]  # 12 distinct starts, long paths
    queries = [PathQuery(start, goal) for start in starts] * 2 + [PathQuery((0, 0), (64, 0))]
    first = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    scratch = Scratch(grid.padded.size)
    again = find_paths(grid, queries, scratch=scratch, policy=BatchPolicy(shared_goal_queries=8))
    assert scratch.paths.cells.shape[0] > INITIAL_PATH_CELLS
    used = [r.algorithm_used for r in again if isinstance(r, PathResult)]
    assert used[:24] == ["field"] * 24
    assert used[24] != "field"
    for a, b in zip(again, first, strict=True):
        _same_answer(a, b)


@pytest.mark.parametrize("policy", ["never", "no_corner_cutting", "one_obstacle", "always"])
@pytest.mark.parametrize("seed", range(4))
def test_a_unit_group_far_from_its_goal_gets_exact_costs(policy: str, seed: int) -> None:
    # A group's starts sit in a small box across the map from the goal: the shared
    # search's heuristic (the distance to that box, scaled by the least cost) is far
    # from zero here, unlike for starts spread over the map.
    rng = np.random.default_rng(100 + seed)
    grid = random_grid(rng, 48, 36, 0.25, (2, 7) if seed % 2 else None)
    cells = walkable_cells(grid)
    goal = min(cells, key=lambda c: c[0] + c[1])
    group = [c for c in cells if c[0] >= 36 and c[1] >= 26][:30]
    queries = [
        PathQuery(
            start,
            goal,
            options=SearchOptions(
                diagonal=policy, heuristic="octile" if policy != "never" else "manhattan"
            ),
        )
        for start in group
    ]
    reverse = dijkstra(oracle_graph(grid, policy).T.tocsr(), directed=True,
                       indices=goal[1] * grid.width + goal[0])  # fmt: skip
    shared = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    settled = {r.expanded for r in shared if isinstance(r, PathResult)}
    assert len(settled) == 1  # one search answered them all
    assert settled.pop() < int((grid.costs > 0).sum())  # and it did not flood the map
    for result, start in zip(shared, group, strict=True):
        assert isinstance(result, PathResult)
        assert result.algorithm_used == "field"
        expected = reverse[start[1] * grid.width + start[0]]
        if not np.isfinite(expected):
            assert result.status == "no_path"
            continue
        assert result.status == "found"
        assert result.cost == pytest.approx(expected, rel=1e-12)
        assert walk_cost(grid, result.cells, policy) == pytest.approx(expected, rel=1e-12)
        assert tuple(result.cells[0]) == start
        assert tuple(result.cells[-1]) == goal


def test_batch_queries_sharing_a_goal_get_the_errors_of_lone_queries() -> None:
    # The batch checks (options, goal) once and then only each start: every error must
    # still be the one the query alone gets, in its slot.
    grid, _, _ = art("""
        ....#
        .#..#
        .....
    """)
    goal = (3, 2)
    queries = [
        PathQuery((0, 0), goal),
        PathQuery((9, 0), goal),  # start outside the map
        PathQuery((1, 1), goal),  # start blocked
        PathQuery((0, 2), goal),
        PathQuery((0, 0), (4, 0)),  # goal blocked: every query to it fails alike
        PathQuery((2, 0), (4, 0)),
        # A float coordinate: not the same key as (3, 2).
        PathQuery((0, 0), (3.0, 2)),  # type: ignore[arg-type]
        PathQuery((0, 0), goal, options=SearchOptions(weight=1.5)),  # other options, one goal
        PathQuery("x", goal),  # type: ignore[arg-type]  # a malformed start
    ]
    batched = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=2))
    for query, answer in zip(queries, batched, strict=True):
        alone = find_paths(grid, [query])[0]
        if isinstance(alone, PathResult):
            assert isinstance(answer, PathResult)
            assert answer.cost == pytest.approx(alone.cost)
        else:
            assert type(answer) is type(alone)
            assert str(answer) == str(alone)
    assert [type(a).__name__ for a in batched] == [
        "PathResult", "OutOfBoundsError", "NotWalkableError", "PathResult",
        "NotWalkableError", "NotWalkableError", "OutOfBoundsError", "PathResult",
        "OutOfBoundsError",
    ]  # fmt: skip


def _lean_plans(grid: GridMap) -> int:
    return sum(isinstance(plan, plans_module.LeanPlan) for plan in grid.plans.values())


def test_lean_batches_answer_as_single_queries_with_errors_in_their_slots() -> None:
    # Every option set already seen on the grid: the batch runs as one search_many
    # call; refused cells get the full check's errors, in their slots.
    rng = np.random.default_rng(9)
    grid = random_grid(rng, 40, 30, 0.3, None)
    cells = walkable_cells(grid)
    blocked = next((x, y) for y in range(grid.height) for x in range(grid.width)
                   if not grid.walkable(x, y))  # fmt: skip
    options = [SearchOptions(), SearchOptions(algorithm="astar"),
               SearchOptions(max_expansions=4), SearchOptions(diagonal="always")]  # fmt: skip
    for option in options:
        for _ in range(2):
            find_paths(grid, [PathQuery(cells[0], cells[1], options=option)])
    assert _lean_plans(grid) == len(options)
    queries = [
        PathQuery(
            cells[int(rng.integers(len(cells)))],
            cells[int(rng.integers(len(cells)))],
            options=options[i % len(options)],
        )
        for i in range(40)
    ]
    queries[3] = PathQuery(blocked, cells[0])
    queries[7] = PathQuery(cells[0], (grid.width, 0))
    queries[11] = PathQuery((0, -1), blocked)
    results = find_paths(grid, queries)
    for query, result in zip(queries, results, strict=True):
        if isinstance(result, EngineError):
            with pytest.raises(type(result)) as single_error:
                find_path(grid, query.start, query.goal, options=query.options)
            assert str(single_error.value) == str(result)
            continue
        assert isinstance(result, PathResult)
        single = find_path(grid, query.start, query.goal, options=query.options)
        _same(result, single)
        assert (result.algorithm_used, result.reached) == (single.algorithm_used, single.reached)
    assert [type(results[i]) for i in (3, 7, 11)] == [NotWalkableError, OutOfBoundsError,
                                                       OutOfBoundsError]  # fmt: skip


def test_lean_batch_grows_the_path_buffers_mid_batch() -> None:
    grid, goal, cost = serpentine(65)
    scratch = Scratch(grid.padded.size)
    for _ in range(2):
        find_paths(grid, [PathQuery((0, 0), (1, 0))], scratch=scratch)
    assert _lean_plans(grid) == 1
    scratch.paths = PathBuffers(1, 8)
    results = find_paths(grid, [PathQuery((0, 0), goal), PathQuery((0, 0), (2, 0))] * 3,
                         scratch=scratch)  # fmt: skip
    for i, result in enumerate(results):
        assert isinstance(result, PathResult)
        assert result.cost == (cost if i % 2 == 0 else 2.0)
        assert walk_cost(grid, result.cells, "never") == result.cost


def test_batches_sharing_a_goal_still_take_the_field_search() -> None:
    grid = GridMap.from_rows(["........"] * 6)
    for _ in range(2):
        find_paths(grid, [PathQuery((0, 0), (7, 5))])
    assert _lean_plans(grid) == 1
    queries = [PathQuery((x, 0), (7, 5)) for x in range(4)]
    results = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=4))
    assert {r.algorithm_used for r in results if isinstance(r, PathResult)} == {"field"}


# -- find_paths_within: bounded work, for the event loop ----------------------------------

WITHIN_OPTIONS: list[dict[str, Any]] = [{}, {"algorithm": "astar"}, {"max_expansions": 4},
                                        {"diagonal": "always", "heuristic": "zero"}]  # fmt: skip


def _within_queries(grid: GridMap, rng: np.random.Generator, count: int) -> list[PathQuery]:
    """``count`` random walkable queries cycling through ``WITHIN_OPTIONS``, then a
    blocked start and a goal off the map (errors in their slots)."""
    cells = walkable_cells(grid)
    picked = rng.integers(len(cells), size=(count, 2)).tolist()
    queries = [
        PathQuery(
            cells[a], cells[b], options=SearchOptions(**WITHIN_OPTIONS[i % len(WITHIN_OPTIONS)])
        )
        for i, (a, b) in enumerate(picked)
    ]
    blocked = next((x, y) for y in range(grid.height) for x in range(grid.width)
                   if not grid.walkable(x, y))  # fmt: skip
    return [*queries, PathQuery(blocked, cells[0]), PathQuery(cells[0], (grid.width, 0))]


def _outcome(answer: PathResult | EngineError) -> tuple[object, ...]:
    if isinstance(answer, EngineError):
        return type(answer), str(answer)
    return (answer.status, answer.cost, answer.expanded, answer.length, answer.algorithm_used,
            answer.cells.tolist(), answer.waypoints.tolist())  # fmt: skip


def test_within_answers_nothing_until_the_grid_knows_every_option_set() -> None:
    rng = np.random.default_rng(21)
    grid = random_grid(rng, 40, 30, 0.3, None)
    queries = _within_queries(grid, rng, 20)
    assert find_paths(grid, queries, bound=10**6) is None
    assert grid.plans == {}  # nothing remembered, nothing built
    for _ in range(2):  # the first call on a grid builds its tables, which forgets plans
        find_paths(grid, queries[:3])
    assert find_paths(grid, queries, bound=10**6) is None  # one set unknown
    whole = find_paths(grid, queries)
    within = find_paths(grid, queries, bound=10**6)
    assert within is not None
    assert [_outcome(a) for a in within.results()] == [_outcome(a) for a in whole]
    assert find_paths(grid, [], bound=1) is None


def test_within_answers_none_when_a_query_needs_more_than_the_bound() -> None:
    rng = np.random.default_rng(22)
    grid = random_grid(rng, 40, 30, 0.3, None)
    queries = _within_queries(grid, rng, 30)
    for _ in range(2):
        whole = find_paths(grid, queries)
    # The most any query took whose own budget (4, or none) is not what stopped it.
    most = max(a.expanded for q, a in zip(queries, whole, strict=True)
               if isinstance(a, PathResult) and q.options.max_expansions is None)  # fmt: skip
    within = find_paths(grid, queries, bound=most)
    assert within is not None
    assert [_outcome(a) for a in within.results()] == [_outcome(a) for a in whole]
    assert find_paths(grid, queries, bound=most - 1) is None


def test_within_answers_none_when_a_cut_search_has_no_room_for_its_path() -> None:
    """A search the bound cut short whose partial path did not fit the path cell
    limit answered TooBig, where the full search may have found a path that fits."""
    grid, goal, _ = serpentine(21)
    queries = [PathQuery((0, 0), goal)]
    for _ in range(2):
        find_paths(grid, queries)
    limit = set_path_cell_limit(1000)
    try:
        with path_cell_scope(earlier=999):  # room for one cell: no path of two fits
            assert find_paths(grid, queries, bound=5) is None
            cells = np.array([[0, 0, *goal]], np.int64)
            assert find_paths_between(grid, cells, bound=5) is None
    finally:
        set_path_cell_limit(limit)


def test_within_keeps_a_querys_own_smaller_budget() -> None:
    grid, goal, _ = serpentine(21)
    own = PathQuery((0, 0), goal, options=SearchOptions(max_expansions=5))
    free = PathQuery((0, 0), (3, 0))
    for _ in range(2):
        find_paths(grid, [own, free])
    within = find_paths(grid, [own, free], bound=100)
    assert within is not None
    assert [a.status for a in within.results() if isinstance(a, PathResult)] == [
        "partial", "found"]  # fmt: skip


@pytest.mark.parametrize(
    "query",
    [
        PathQuery((0, 0), None, goals=((7, 5), (0, 5))),
        PathQuery((0, 0), (6, 4), options=SearchOptions(agent_size=2)),
        PathQuery((0, 0), (7, 5), options=SearchOptions(unreachable="nearest")),
    ],
    ids=["goal set", "agent size", "nearest"],
)
def test_within_leaves_other_than_cell_to_cell_queries_to_find_paths(query: PathQuery) -> None:
    grid = GridMap.from_rows(["........"] * 6)
    for _ in range(2):
        find_paths(grid, [query, PathQuery((0, 0), (7, 5))])
    assert find_paths(grid, [query], bound=10**6) is None


def test_single_jps_queries_after_a_shared_goal_batch_have_bit_rows() -> None:
    # Every query of the batch was answered by a field search, which builds no JPS
    # bit rows; their plan was remembered all the same, and a later single query ran
    # JPS on the placeholder (a read past its one row): no_path, on every such query.
    grid = GridMap.from_rows(["....",
                              ".@@.",
                              "...."])  # fmt: skip
    batch = find_paths(
        grid,
        [PathQuery((0, 0), (3, 2)), PathQuery((3, 0), (3, 2))],
        policy=BatchPolicy(shared_goal_queries=2),
    )
    assert [r.algorithm_used for r in batch if isinstance(r, PathResult)] == ["field", "field"]
    for _ in range(2):  # the plan remembered, then as the grid plans it again
        single = find_path(grid, (0, 0), (3, 2))
        assert (single.status, single.algorithm_used) == ("found", "jps")
        assert single.cost == 5.0  # around the wall: no corner to cut


def test_options_equal_in_python_but_not_as_options_are_told_apart() -> None:
    """Option sets are remembered by the values given: a budget of 2.0 equals 2 but is
    no budget; and a lean batch's query to a goal set shares the others' options."""
    grid = GridMap.from_rows(["........"] * 6)
    for _ in range(2):
        find_paths(grid, [PathQuery((0, 0), (7, 5), options=SearchOptions(max_expansions=2))])
    assert _lean_plans(grid) == 1
    with pytest.raises(InvalidBudgetError) as refused:
        SearchOptions(max_expansions=2.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidBudgetError) as refused_by_keyword:
        find_path(grid, (0, 0), (7, 5), max_expansions=2.0)  # type: ignore[arg-type]
    assert str(refused_by_keyword.value) == str(refused.value)
    queries = [
        PathQuery((0, 0), (7, 5), options=SearchOptions(max_expansions=2)),
        PathQuery((0, 0), None, goals=((7, 5),), options=SearchOptions(max_expansions=2)),
    ]
    answers = find_paths(grid, queries)
    for answer, single in ((answers[0], find_path(grid, (0, 0), (7, 5), max_expansions=2)),
                           (answers[1], find_path(grid, (0, 0), goals=[(7, 5)],
                                                  max_expansions=2))):  # fmt: skip
        assert isinstance(answer, PathResult)
        assert (answer.status, answer.cost, answer.algorithm_used) == (
            single.status, single.cost, single.algorithm_used)  # fmt: skip
