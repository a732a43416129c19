"""``LinkBounds``: the heuristic on a map with links and layers stays admissible and
consistent, checked against scipy Dijkstra on the explicit graph (grid moves on
each floor plus the links' edges)."""

import itertools
import math

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.engine import GridMap
from service.engine.kernels.links import plane_distances
from service.engine.layers import Layers
from service.engine.links import Link, LinkSet, MapLinks, links_of
from tests.support import layered_links, links_oracle_graph, octile, padded_to_plain

EPSILON = 1e-9


def _stairs(seed: int) -> tuple[Layers, GridMap, LinkSet]:
    """A random layered map whose floors are joined by stairs (local links: both ends
    at one column and row) and one teleport."""
    layers, grid, _ = layered_links(seed)
    rng = np.random.default_rng(seed)
    links = []
    for i in range(6):
        floor = int(rng.integers(layers.count - 1))
        for _ in range(100):
            x, y = int(rng.integers(layers.width)), int(rng.integers(layers.height))
            rows = (layers.row_of(y, floor), layers.row_of(y, floor + 1))
            if all(grid.costs[row, x] > 0 for row in rows):
                cost = float(rng.choice([1.0, 4.0, 9.0]))
                links.append(Link(f"s{i}", (x, y, floor), (x, y, floor + 1), cost))
                break
    return layers, grid, links_of(layers, links, walkable=grid.walkable, max_links=16)


def _checked(grid: GridMap, links: LinkSet, policy: str, seed: int) -> None:
    """Every cell's h is at most its true cost to three goals, and no edge lowers h by
    more than its cost."""
    linked = grid.with_links(links)
    assert isinstance(linked.links, MapLinks)
    edges, bounds = linked.links.edges, linked.links.bounds
    ends = (edges.slot, edges.first, edges.target, edges.cost)
    graph = links_oracle_graph(grid, edges, policy)
    width = grid.width + 2
    rng = np.random.default_rng(seed)
    cells = np.flatnonzero(grid.padded > 0)
    coo = graph.tocoo()
    plain = {padded_to_plain(int(n), width): int(n) for n in cells}
    for goal in rng.choice(cells, 3, replace=False):
        goal = int(goal)
        to_goal = dijkstra(graph.T, directed=True, indices=padded_to_plain(goal, width))
        bound = bounds.goal_bound(ends, goal, width)
        h = {int(n): bounds.estimate(int(n), goal, width, bound) for n in cells}
        assert h[goal] <= EPSILON
        for n in cells:
            true = to_goal[padded_to_plain(int(n), width)]
            assert h[int(n)] <= true + EPSILON, (n, h[int(n)], true)
        for u, v, c in zip(coo.row, coo.col, coo.data, strict=True):
            assert h[plain[u]] <= c + h[plain[v]] + 1e-6, (plain[u], plain[v], c)


@pytest.mark.parametrize(("seed", "policy"), list(itertools.product(range(12),
                         ["no_corner_cutting", "never", "always"])))  # fmt: skip
def test_the_link_heuristic_is_admissible_and_consistent(seed: int, policy: str) -> None:
    _, grid, links = layered_links(seed)
    _checked(grid, links, policy, seed)


@pytest.mark.parametrize("seed", range(8))
def test_the_heuristic_counts_the_stairs_between_floors(seed: int) -> None:
    _, grid, links = _stairs(seed)
    _checked(grid, links, "no_corner_cutting", seed)


def test_stairs_are_local_links_and_add_their_cost_between_floors() -> None:
    layers = Layers(2, 4, 4)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 4, 4), np.float32)))
    stairs = Link("stairs", (0, 0, 0), (0, 0, 1), 3.0)
    linked = grid.with_links(links_of(layers, [stairs], walkable=grid.walkable, max_links=1))
    assert isinstance(linked.links, MapLinks)
    bounds, e = linked.links.bounds, linked.links.edges
    assert not bounds.far.any()
    width = layers.width + 2
    goal = (layers.row_of(3, 1) + 1) * width + 4  # (3, 3) on floor 1
    bound = bounds.goal_bound((e.slot, e.first, e.target, e.cost), goal, width)
    assert bound == math.inf  # no far link
    start = width + 1  # (0, 0) on floor 0
    assert bounds.estimate(start, goal, width, bound) == pytest.approx(3 * math.sqrt(2) + 3)


@pytest.mark.parametrize("seed", range(6))
def test_plane_distances_are_the_octile_distance_to_the_nearest_cell(seed: int) -> None:
    rng = np.random.default_rng(seed)
    xs, ys = rng.integers(8, size=3), rng.integers(6, size=3)
    got = plane_distances(6, 8, xs, ys)
    for y in range(6):
        for x in range(8):
            want = min(octile(abs(x - sx), abs(y - sy)) for sx, sy in zip(xs, ys, strict=True))
            assert got[y, x] == pytest.approx(want, abs=1e-9)
    assert np.isinf(plane_distances(2, 2, xs[:0], ys[:0])).all()
