"""Fields on maps with links and layers: the cost to the nearest goal through links
is scipy Dijkstra's on the explicit graph, and following ``next`` (a link where its
code is 8) walks a path of exactly that cost to a goal."""

import math

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.engine.fields import DIRECTIONS, Field, FieldLink, distance_field
from service.engine.grid import GridMap
from service.engine.kernels.fields import LINK_STEP
from service.engine.layers import Layers
from service.engine.links import Link, anywhere, links_of
from tests.support import layered_links, links_oracle_graph


def _walk(grid: GridMap, field: Field, x: int, y: int) -> float:
    """The cost of following the field's steps from ``(x, y)`` until a goal."""
    links = {link.at: link.to for link in field.links}
    total = 0.0
    for _ in range(grid.width * grid.height):
        code = int(field.next[y, x])
        if code < 0:
            return total
        if code == LINK_STEP:
            x2, y2 = links[x, y]
            assert grid.links is not None
            total += grid.links.edge_of[(y + 1) * grid.padded_width + x + 1,
                                        (y2 + 1) * grid.padded_width + x2 + 1][0]  # fmt: skip
        else:
            dx, dy = DIRECTIONS[code]
            x2, y2 = x + dx, y + dy
            total += (math.sqrt(2) if dx and dy else 1.0) * float(grid.costs[y2, x2])
        x, y = x2, y2
    raise AssertionError("the field's steps go round in circles")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("policy", ["no_corner_cutting", "never"])
def test_a_field_flows_through_links_as_dijkstra_says(seed: int, policy: str) -> None:
    _layers, grid, links = layered_links(seed)
    grid = grid.with_links(links)
    rng = np.random.default_rng(900 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    chosen = rng.choice(xs.size, 2, replace=False)
    goals = [(int(xs[i]), int(ys[i])) for i in chosen]
    field = distance_field(grid, goals, diagonal=policy, max_goals=4)
    graph = links_oracle_graph(grid, links.edges(), policy)
    to_goals = dijkstra(graph.T.tocsr(), indices=[y * grid.width + x for x, y in goals])
    expected = to_goals.min(axis=0).reshape(grid.height, grid.width)
    expected[grid.costs <= 0] = np.inf
    np.testing.assert_allclose(field.distance, expected, rtol=1e-9)
    for y, x in zip(*np.nonzero(np.isfinite(expected)), strict=True):
        assert _walk(grid, field, int(x), int(y)) == pytest.approx(expected[y, x], rel=1e-9)


def test_the_foot_of_the_stairs_steps_onto_them() -> None:
    layers = Layers(2, 1, 4)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 1, 4), np.float32)))
    stairs = Link("stairs", (3, 0, 0), (3, 0, 1), 2.0, two_way=False)
    grid = grid.with_links(links_of(layers, [stairs], walkable=anywhere, max_links=1))
    field = distance_field(grid, [(0, 2)], max_goals=1)  # floor 1's first cell
    assert field.next[0].tolist() == [0, 0, 0, LINK_STEP]  # east, to the stairs, up
    assert field.links == (FieldLink((3, 0), "stairs", (3, 2)),)
    assert field.distance[0].tolist() == [8.0, 7.0, 6.0, 5.0]
    assert np.isinf(field.distance[2]).sum() == 0  # floor 1 flows west to its goal
