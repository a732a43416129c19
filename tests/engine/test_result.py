"""PathResult: waypoint compression and any-angle smoothing."""

import itertools
import math

import numpy as np

from service.engine import GridMap, find_path
from service.engine.kernels.lines import segment_clear
from tests.support import POLICIES, art, random_grid, walkable_cells, weighted_art

ROOM = """
S.........
..........
....@@@...
....@@@...
..........
.........G
"""


def test_waypoints_keep_only_turns() -> None:
    grid, start, goal = art("""
        S...@
        @@@.@
        ....G
    """)
    result = find_path(grid, start, goal, diagonal="never")
    assert result.waypoints.tolist() == [[0, 0], [3, 0], [3, 2], [4, 2]]


def test_smoothed_path_skips_waypoints_with_line_of_sight() -> None:
    grid, start, goal = art(ROOM)
    result = find_path(grid, start, goal, diagonal="never")
    smooth = result.smoothed()
    assert smooth.points[0].tolist() == list(start)
    assert smooth.points[-1].tolist() == list(goal)
    assert len(smooth.points) < len(result.waypoints)
    steps = np.diff(smooth.points, axis=0)
    assert math.isclose(smooth.length, float(np.hypot(steps[:, 0], steps[:, 1]).sum()))
    assert smooth.length <= (result.cost or 0) + 1e-9


def _segment_ok(grid: GridMap, a: list[int], b: list[int], policy: str) -> bool:
    return bool(
        segment_clear(
            grid.padded,
            grid.padded_width,
            a[0],
            a[1],
            b[0],
            b[1],
            {"never": 0, "no_corner_cutting": 1, "one_obstacle": 2, "always": 3}[policy],
            np.inf,
        )
    )


def _dense_segment_walkable(grid: GridMap, a: list[int], b: list[int], policy: str) -> bool:
    """Sample the segment finely: every sampled point must lie in a walkable cell.

    Under ``always`` a segment may pass exactly through the corner point between
    two blocked cells, as a diagonal grid move does; such points are excused.
    """
    for t in np.linspace(0.0, 1.0, 2001):
        x = a[0] + t * (b[0] - a[0])
        y = a[1] + t * (b[1] - a[1])
        if policy == "always" and (x - 0.5) % 1 == 0 and (y - 0.5) % 1 == 0:
            continue
        cx, cy = math.floor(x + 0.5), math.floor(y + 0.5)
        # Points exactly on a cell edge belong to both cells; accept either.
        if grid.costs[cy, cx] <= 0:
            ox, oy = math.ceil(x - 0.5), math.ceil(y - 0.5)
            if grid.costs[oy, ox] <= 0:
                return False
    return True


def test_smoothed_segments_never_cross_blocked_cells_on_random_maps() -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        grid = random_grid(rng, 30, 30, 0.25, None)
        cells = walkable_cells(grid)
        for policy in POLICIES:
            a = cells[int(rng.integers(len(cells)))]
            b = cells[int(rng.integers(len(cells)))]
            result = find_path(grid, a, b, diagonal=policy)
            if result.status != "found":
                continue
            points = result.smoothed().points.tolist()
            for p, q in itertools.pairwise(points):
                assert _segment_ok(grid, p, q, policy)
                assert _dense_segment_walkable(grid, p, q, policy), (policy, p, q)


def test_segment_through_a_blocked_corner_follows_the_policy() -> None:
    grid, _, _ = art("""
        .@
        @.
    """)
    assert not _segment_ok(grid, [0, 0], [1, 1], "no_corner_cutting")
    assert not _segment_ok(grid, [0, 0], [1, 1], "one_obstacle")
    assert _segment_ok(grid, [0, 0], [1, 1], "always")


def test_smoothing_on_weighted_maps_avoids_dearer_terrain() -> None:
    grid = weighted_art("""
        1111111
        1119111
        1111111
    """)
    result = find_path(grid, (0, 1), (6, 1), diagonal="never")
    # The grid path goes around the 9; a straight segment would cross it.
    assert [3, 1] not in result.cells.tolist()
    for p in result.smoothed().points.tolist():
        assert p != [3, 1]
    assert len(result.smoothed().points) > 2


def test_no_path_smooths_to_nothing() -> None:
    grid, start, goal = art("S@G")
    smooth = find_path(grid, start, goal).smoothed()
    assert smooth.points.shape == (0, 2)
    assert smooth.length == 0.0


def test_length_counts_straight_and_diagonal_steps_whatever_the_costs() -> None:
    grid = weighted_art("""
        1115
    """)
    result = find_path(grid, (0, 0), (3, 0), diagonal="never")
    assert result.length == 3.0
    assert result.cost == 1 + 1 + 5  # costs are weighted, length is not
    diagonal = find_path(GridMap.from_rows(["...", "...", "..."]), (0, 0), (2, 2))
    assert math.isclose(diagonal.length, 2 * math.sqrt(2))
    assert find_path(GridMap.from_rows([".@."]), (0, 0), (2, 0)).length == 0.0
