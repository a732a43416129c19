"""Landmark (ALT) tables (``service.engine.landmarks``) and the ``landmarks`` heuristic.

Distances are checked against scipy's Dijkstra over the explicit graph (and its
transpose for distances *to* a landmark); searches against the same oracle.
"""

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.engine import (
    GridMap,
    InvalidLandmarkCountError,
    TableBudgetError,
    build_landmarks,
    find_path,
)
from service.engine.landmarks import WORKING_BYTES_PER_CELL
from tests.support import close, oracle_distances, oracle_graph, random_grid, walkable_cells

UNLIMITED = 1 << 40
TABLE_POLICIES = {"never": False, "no_corner_cutting": True}
MAPS: list[tuple[int, float, tuple[float, float] | None]] = [
    (1, 0.25, (1, 9)),
    (2, 0.25, None),
    (3, 0.2, (0.5, 3.0)),
]


def padded_index(grid: GridMap, cell: int) -> int:
    """Row-major unpadded index -> padded flat index."""
    y, x = divmod(cell, grid.width)
    return (y + 1) * grid.padded_width + x + 1


@pytest.mark.parametrize("policy", sorted(TABLE_POLICIES))
@pytest.mark.parametrize(("seed", "blocked", "costs"), MAPS)
def test_tables_hold_exact_distances_from_and_to_each_landmark(
    seed: int, blocked: float, costs: tuple[float, float] | None, policy: str
) -> None:
    grid = random_grid(np.random.default_rng(seed), 18, 14, blocked, costs)
    table = build_landmarks(grid, count=4, max_table_bytes=UNLIMITED).table(
        eight=TABLE_POLICIES[policy]
    )
    graph = oracle_graph(grid, policy)
    padded = [padded_index(grid, c) for c in range(grid.width * grid.height)]
    for i, landmark in enumerate(table.landmarks.tolist()):
        y, x = divmod(landmark, grid.padded_width)
        source = (y - 1) * grid.width + (x - 1)
        forward = dijkstra(graph, directed=True, indices=source)
        backward = dijkstra(graph.T, directed=True, indices=source)
        np.testing.assert_allclose(table.from_table[padded, i], forward, rtol=1e-6)
        np.testing.assert_allclose(table.to_table[padded, i], backward, rtol=1e-6)
    assert table.symmetric == (costs is None)


@pytest.mark.parametrize(("seed", "blocked", "costs"), MAPS)
def test_landmarks_are_optimal_and_cut_expansions(
    seed: int, blocked: float, costs: tuple[float, float] | None
) -> None:
    grid = random_grid(np.random.default_rng(seed), 60, 60, blocked, costs)
    grid.attach_landmarks(build_landmarks(grid, count=8, max_table_bytes=UNLIMITED))
    cells = walkable_cells(grid)
    for policy in ("never", "no_corner_cutting", "one_obstacle", "always"):
        distances = oracle_distances(grid, cells[0], policy)
        plain = landmark = 0
        for goal in cells[::97]:
            result = find_path(grid, cells[0], goal, heuristic="landmarks", diagonal=policy,
                               algorithm="astar")  # fmt: skip
            expected = "landmarks" if policy in TABLE_POLICIES else "octile"
            assert result.heuristic_used == expected
            optimal = distances[goal[1], goal[0]]
            if np.isinf(optimal):
                assert result.status == "no_path"
                continue
            assert close(result.cost or 0, optimal), (policy, goal)
            landmark += result.expanded
            plain += find_path(grid, cells[0], goal, heuristic="octile", diagonal=policy,
                               algorithm="astar").expanded  # fmt: skip
        if policy in TABLE_POLICIES and costs is not None:
            assert landmark * 3 < plain, (policy, landmark, plain)  # measured: 5-6x


def test_landmarks_combine_with_jump_point_search() -> None:
    grid = random_grid(np.random.default_rng(5), 90, 70, 0.25, None)
    grid.attach_landmarks(build_landmarks(grid, count=6, max_table_bytes=UNLIMITED))
    cells = walkable_cells(grid)
    for goal in cells[::211]:
        jumped = find_path(grid, cells[0], goal, heuristic="landmarks")
        reference = find_path(grid, cells[0], goal, algorithm="astar")
        assert jumped.algorithm_used == "jps"
        assert jumped.heuristic_used == "landmarks"
        assert jumped.status == reference.status
        if reference.status == "found":
            assert close(jumped.cost or 0, reference.cost or 0)


def test_count_shrinks_to_fit_the_memory_bound() -> None:
    grid = random_grid(np.random.default_rng(6), 30, 30, 0.2, (1, 4))
    per_landmark = 2 * grid.padded.size * 4 * 2  # two connectivities, from and to
    tables = build_landmarks(grid, count=8, max_table_bytes=3 * per_landmark)
    assert tables.count == 3
    with pytest.raises(
        TableBudgetError,
        match=r"^the landmark tables of one landmark would "
        r"take \d+ bytes, over the limit of \d+ bytes \(max_table_bytes\)$",
    ):
        build_landmarks(grid, count=8, max_table_bytes=per_landmark - 1)
    with pytest.raises(InvalidLandmarkCountError, match=r"^landmark count 0 is out of range"):
        build_landmarks(grid, count=0, max_table_bytes=UNLIMITED)


def test_the_build_counts_its_working_memory_too() -> None:
    grid = random_grid(np.random.default_rng(6), 30, 30, 0.2, (1, 4))
    per_landmark = 2 * grid.padded.size * 4 * 2
    working = WORKING_BYTES_PER_CELL * grid.padded.size
    tables = build_landmarks(grid, count=8, max_table_bytes=UNLIMITED,
                             max_build_bytes=working + 2 * per_landmark)  # fmt: skip
    assert tables.count == 2
    with pytest.raises(
        TableBudgetError,
        match=r"^building the landmark tables .* would take "
        rf"{working + per_landmark} bytes, .* \(max_build_bytes\)$",
    ):
        build_landmarks(grid, count=8, max_table_bytes=UNLIMITED,
                        max_build_bytes=working + per_landmark - 1)  # fmt: skip


def test_without_tables_landmarks_fall_back_to_octile() -> None:
    grid = GridMap.from_rows(["....", ".@@.", "...."])
    assert find_path(grid, (0, 0), (3, 2), heuristic="landmarks").heuristic_used == "octile"
    grid.attach_landmarks(build_landmarks(grid, count=2, max_table_bytes=UNLIMITED))
    assert find_path(grid, (0, 0), (3, 2), heuristic="landmarks").heuristic_used == "landmarks"
