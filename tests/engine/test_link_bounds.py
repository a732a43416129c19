"""``LinkBounds``: the heuristic on a map with links and layers stays admissible and
consistent, checked against scipy Dijkstra on the explicit graph (grid moves on
each floor plus the links' edges)."""

import itertools
import math

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.engine import GridMap
from service.engine.kernels.links import source_distances
from service.engine.layers import Layers
from service.engine.links import link_bounds, links_of
from tests.support import layered_links, links_oracle_graph, octile, padded_to_plain

EPSILON = 1e-9


@pytest.mark.parametrize(("seed", "policy"), list(itertools.product(range(12),
                         ["no_corner_cutting", "never", "always"])))  # fmt: skip
def test_the_link_heuristic_is_admissible_and_consistent(seed: int, policy: str) -> None:
    layers, grid, links = layered_links(seed)
    edges = links.edges()
    bounds = link_bounds(layers, edges)
    graph = links_oracle_graph(grid, edges, policy)
    width = grid.width + 2
    h_scale = grid.min_cost
    rng = np.random.default_rng(seed)
    cells = np.flatnonzero(grid.padded > 0)
    for goal in rng.choice(cells, 3, replace=False):
        goal = int(goal)
        to_goal = dijkstra(graph.T, directed=True, indices=padded_to_plain(goal, width))
        bound = bounds.goal_bound(edges, goal, width, h_scale)
        h = {int(n): bounds.estimate(int(n), goal, width, h_scale, bound) for n in cells}
        for n in cells:
            true = to_goal[padded_to_plain(int(n), width)]
            assert h[int(n)] <= true + EPSILON, (n, h[int(n)], true)
        coo = graph.tocoo()
        plain = {padded_to_plain(int(n), width): int(n) for n in cells}
        for u, v, c in zip(coo.row, coo.col, coo.data, strict=True):
            assert h[plain[u]] <= c + h[plain[v]] + 1e-6, (plain[u], plain[v], c)


def test_without_links_another_floor_is_out_of_reach_and_the_own_floor_isoctile() -> None:
    layers = Layers(2, 4, 4)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 4, 4), np.float32)))
    edges = links_of(layers, [], walkable=lambda x, row: True, max_links=1).edges()
    bounds = link_bounds(layers, edges)
    width = layers.width + 2
    goal = (layers.to_grid("goal", (3, 3, 0))[1] + 1) * width + 4
    bound = bounds.goal_bound(edges, goal, width, grid.min_cost)
    assert bound == math.inf
    other_floor = (layers.to_grid("n", (3, 3, 1))[1] + 1) * width + 4
    assert bounds.estimate(other_floor, goal, width, 1.0, bound) == math.inf
    assert bounds.estimate(width + 1, goal, width, 1.0, bound) == pytest.approx(3 * math.sqrt(2))


@pytest.mark.parametrize("seed", range(6))
def test_source_distances_are_the_octile_distance_to_the_nearest_source_on_the_floor(
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    layers = Layers(3, 6, 8)
    width, rows = layers.width + 2, layers.rows + 2
    floor_cells = [(x, y, layer) for layer in range(3) for y in range(6) for x in range(8)]
    picked = [floor_cells[int(i)] for i in rng.choice(len(floor_cells), 4, replace=False)]
    sources = np.array([(layers.to_grid("s", c)[1] + 1) * width + c[0] + 1 for c in picked])
    got = source_distances(width, rows, layers.height, sources)
    for x, y, layer in floor_cells:
        n = (layers.to_grid("c", (x, y, layer))[1] + 1) * width + x + 1
        same = [(sx, sy) for sx, sy, sl in picked if sl == layer]
        want = min((octile(abs(x - sx), abs(y - sy)) for sx, sy in same), default=math.inf)
        assert got[n] == pytest.approx(want, abs=1e-9) if want < math.inf else got[n] == math.inf
    for row in [0, rows - 1, *(layers.separators() + 1)]:
        assert np.isinf(got[row * width : (row + 1) * width]).all()
