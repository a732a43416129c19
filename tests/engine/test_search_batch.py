"""find_paths: many queries in one kernel call, errors in their slots."""

import numpy as np

from service.engine import (
    GridMap,
    NotWalkableError,
    OutOfBoundsError,
    PathQuery,
    PathResult,
    Scratch,
    UnknownHeuristicError,
    find_path,
    find_paths,
)
from service.engine.scratch import PathBuffers
from tests.support import random_grid, walkable_cells


def _same(a: PathResult, b: PathResult) -> None:
    assert (a.status, a.cost, a.expanded, a.length) == (b.status, b.cost, b.expanded, b.length)
    assert a.cells.tolist() == b.cells.tolist()
    assert a.waypoints.tolist() == b.waypoints.tolist()


def test_batch_answers_equal_single_answers_in_order() -> None:
    rng = np.random.default_rng(4)
    grid = random_grid(rng, 40, 30, 0.3, (1, 4))
    cells = walkable_cells(grid)
    queries = [
        PathQuery(cells[int(rng.integers(len(cells)))], cells[int(rng.integers(len(cells)))],
                  diagonal=policy, heuristic=heuristic, max_expansions=budget)
        for policy in ("never", "no_corner_cutting", "always")
        for heuristic in ("octile", "zero")
        for budget in (None, 5)
    ]  # fmt: skip
    results = find_paths(grid, queries)
    assert len(results) == len(queries)
    for query, result in zip(queries, results, strict=True):
        assert isinstance(result, PathResult)
        single = find_path(
            grid,
            query.start,
            query.goal,
            heuristic=query.heuristic,
            diagonal=query.diagonal,
            max_expansions=query.max_expansions,
        )
        _same(result, single)


def test_bad_queries_get_their_error_in_their_slot() -> None:
    grid = GridMap.from_rows(["....", ".@..", "...."])
    results = find_paths(
        grid,
        [
            PathQuery((0, 0), (3, 2)),
            PathQuery((1, 1), (3, 2)),
            PathQuery((0, 0), (9, 9)),
            PathQuery((0, 0), (3, 2), heuristic="psychic"),
            PathQuery((3, 2), (0, 0)),
        ],
    )
    assert isinstance(results[0], PathResult)
    assert isinstance(results[1], NotWalkableError)
    assert isinstance(results[2], OutOfBoundsError)
    assert isinstance(results[3], UnknownHeuristicError)
    assert isinstance(results[4], PathResult)
    assert results[0].cost == results[4].cost
    assert find_paths(grid, []) == []


def test_path_buffers_grow_mid_batch_and_keep_earlier_paths() -> None:
    grid = GridMap.from_costs(np.ones((1, 300)))
    scratch = Scratch(grid.padded.size)
    scratch.paths = PathBuffers(1, 8)  # room for 8 cells: every long path overflows it
    queries = [PathQuery((0, 0), (x, 0)) for x in (3, 299, 5, 150)]
    results = find_paths(grid, queries, scratch=scratch)
    for query, result in zip(queries, results, strict=True):
        assert isinstance(result, PathResult)
        assert len(result.cells) == query.goal[0] + 1
        assert result.cells[-1].tolist() == [query.goal[0], 0]
    assert scratch.paths.cells.shape[0] >= 300
    # Results are copies: the next batch does not change them.
    before = results[1].cells.copy()  # type: ignore[union-attr]
    find_paths(grid, [PathQuery((299, 0), (0, 0))], scratch=scratch)
    assert results[1].cells.tolist() == before.tolist()  # type: ignore[union-attr]


def test_bucket_queue_only_where_every_f_is_an_integer() -> None:
    from service.engine.search import _check

    uniform = GridMap.from_rows(["....", "...."])
    weighted = GridMap.from_costs([[1, 2, 3], [1, 1, 1]])
    fractional = GridMap.from_costs([[1.0, 2.5, 3.0], [1.0, 1.0, 1.0]])

    def buckets(grid: GridMap, **options: object) -> int:
        return _check(grid, PathQuery((0, 0), (2, 1), **options)).buckets  # type: ignore[arg-type]

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
    from service.engine.scratch import MAX_BUCKETS
    from service.engine.search import _check

    def buckets(grid: GridMap, diagonal: str) -> int:
        query = PathQuery((0, 0), (2, 1), heuristic="cluster", diagonal=diagonal)
        return _check(grid, query).buckets

    weighted = GridMap.from_costs([[1, 2, 3], [1, 1, 1]])
    fractional = GridMap.from_costs([[1.0, 2.5, 3.0], [1.0, 1.0, 1.0]])
    assert buckets(weighted, "never") == 0  # no tables yet: octile, the heap
    for grid in (weighted, fractional):
        grid.attach_clusters(build_clusters(grid, cluster_size=4, max_table_bytes=1 << 20))
    assert buckets(weighted, "never") == MAX_BUCKETS
    assert buckets(weighted, "no_corner_cutting") == 0
    assert buckets(fractional, "never") == 0
