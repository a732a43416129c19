"""``unreachable: nearest`` on maps with links and layers: the path ends at the cell,
of those the unit can reach through links, nearest the goal in the plane of the
goal's floor (then the cheapest): checked against scipy Dijkstra from the start."""

import math

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.engine import find_path
from service.engine.grid import GridMap
from service.engine.layers import Layers
from tests.support import layered_links, links_oracle_graph


def _expected(grid: GridMap, layers: Layers, dist: np.ndarray, goal: tuple[int, int]
              ) -> tuple[float, float]:  # fmt: skip
    """(least distance, least cost at it) over the reachable cells of the goal's floor;
    (inf, 0) when none: the unit stays at its start."""
    gx, grow = goal
    floor = grow // (layers.height + 1)
    best = (math.inf, 0.0)
    for cell in np.flatnonzero(np.isfinite(dist)).tolist():
        x, row = cell % grid.width, cell // grid.width
        if row // (layers.height + 1) != floor:
            continue
        d = math.hypot(x - gx, row - grow)
        best = min(best, (d, float(dist[cell]))) if best[0] < math.inf else (d, float(dist[cell]))
    return best


@pytest.mark.parametrize("seed", range(10))
def test_nearest_ends_at_the_reachable_cell_nearest_the_goal_on_its_floor(seed: int) -> None:
    layers, grid, links = layered_links(seed)
    grid = grid.with_links(links)
    graph = links_oracle_graph(grid, links.edges(), "no_corner_cutting")
    rng = np.random.default_rng(1100 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    blocked = np.argwhere(grid.costs <= 0)
    checked = 0
    for _ in range(12):
        s = int(rng.integers(xs.size))
        start = (int(xs[s]), int(ys[s]))
        row, x = (int(v) for v in blocked[rng.integers(len(blocked))])  # a blocked goal
        if row % (layers.height + 1) == layers.height:
            continue  # a row between floors is no cell of a floor
        dist = dijkstra(graph, indices=start[1] * grid.width + start[0])
        result = find_path(grid, start, (x, row), unreachable="nearest")
        assert result.status == "partial"
        assert result.partial_reason == "unreachable"
        end = result.cells[-1].tolist()
        best_d, best_cost = _expected(grid, layers, dist, (x, row))
        if math.isinf(best_d):
            assert end == list(start)
            continue
        assert math.hypot(end[0] - x, end[1] - row) == pytest.approx(best_d)
        assert result.cost == pytest.approx(best_cost, rel=1e-9)
        checked += 1
    assert checked
