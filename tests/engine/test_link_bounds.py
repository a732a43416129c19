"""``LinkBounds``: the heuristic on a map with links and layers stays admissible and
consistent, checked against scipy Dijkstra on the explicit graph (grid moves on
each floor plus the links' edges)."""

import itertools
import math

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from service.engine import GridMap
from service.engine.kernels.links import source_distances
from service.engine.layers import Layers
from service.engine.links import Link, LinkEdges, LinkSet, link_bounds, links_of
from tests.support import oracle_graph

EPSILON = 1e-9


def _layered(
    seed: int, count: int = 3, height: int = 7, width: int = 9
) -> tuple[Layers, GridMap, LinkSet]:
    """A random layered map, ``Layers``, its stacked grid and random links (some
    one-way, some closed)."""
    rng = np.random.default_rng(seed)
    floors = rng.integers(2, 6, size=(count, height, width)).astype(np.float32)
    floors[rng.random(floors.shape) < 0.25] = 0
    layers = Layers(count, height, width)
    grid = GridMap.from_costs(layers.stack(floors))
    open_cells = [(int(x), int(y), layer) for layer, y, x in np.argwhere(floors > 0)]
    links = []
    for i in range(int(rng.integers(1, 7))):
        a, b = (open_cells[int(j)] for j in rng.choice(len(open_cells), 2, replace=False))
        cost = float(rng.choice([0.5, 1.0, 3.0, 20.0]))
        two_way, enabled = bool(rng.random() < 0.6), bool(rng.random() < 0.85)
        links.append(Link(f"l{i}", a, b, cost, two_way=two_way, enabled=enabled))
    walkable = lambda x, row: bool(grid.costs[row, x] > 0)  # noqa: E731
    return layers, grid, links_of(layers, links, walkable=walkable, max_links=16)


def _octile(dx: int, dy: int) -> float:
    return max(dx, dy) + (math.sqrt(2) - 1) * min(dx, dy)


def _padded_to_plain(cell: int, width: int) -> int:
    return (cell // width - 1) * (width - 2) + cell % width - 1


def _graph(grid: GridMap, edges: LinkEdges, policy: str) -> csr_matrix:
    """The stacked grid's moves under ``policy`` plus the links' edges, over row-major
    cell indices."""
    graph = oracle_graph(grid, policy).tolil()
    width = grid.width + 2
    for cell in np.flatnonzero(edges.slot >= 0):
        s = edges.slot[cell]
        for e in range(edges.first[s], edges.first[s + 1]):
            u, v = _padded_to_plain(int(cell), width), _padded_to_plain(int(edges.target[e]), width)
            old = graph[u, v]
            graph[u, v] = min(old, edges.cost[e]) if old else edges.cost[e]
    return graph.tocsr()


@pytest.mark.parametrize(("seed", "policy"), list(itertools.product(range(12),
                         ["no_corner_cutting", "never", "always"])))  # fmt: skip
def test_the_link_heuristic_is_admissible_and_consistent(seed: int, policy: str) -> None:
    layers, grid, links = _layered(seed)
    edges = links.edges()
    bounds = link_bounds(layers, edges)
    graph = _graph(grid, edges, policy)
    width = grid.width + 2
    h_scale = grid.min_cost
    rng = np.random.default_rng(seed)
    cells = np.flatnonzero(grid.padded > 0)
    for goal in rng.choice(cells, 3, replace=False):
        goal = int(goal)
        to_goal = dijkstra(graph.T, directed=True, indices=_padded_to_plain(goal, width))
        bound = bounds.goal_bound(edges, goal, width, h_scale)
        h = {int(n): bounds.estimate(int(n), goal, width, h_scale, bound) for n in cells}
        for n in cells:
            true = to_goal[_padded_to_plain(int(n), width)]
            assert h[int(n)] <= true + EPSILON, (n, h[int(n)], true)
        coo = graph.tocoo()
        plain = {_padded_to_plain(int(n), width): int(n) for n in cells}
        for u, v, c in zip(coo.row, coo.col, coo.data, strict=True):
            assert h[plain[u]] <= c + h[plain[v]] + 1e-6, (plain[u], plain[v], c)


def test_without_links_another_floor_is_out_of_reach_and_the_own_floor_is_octile() -> None:
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
        want = min((_octile(abs(x - sx), abs(y - sy)) for sx, sy in same), default=math.inf)
        assert got[n] == pytest.approx(want, abs=1e-9) if want < math.inf else got[n] == math.inf
    for row in [0, rows - 1, *(layers.separators() + 1)]:
        assert np.isinf(got[row * width : (row + 1) * width]).all()
