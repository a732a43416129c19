"""Searches on maps with layers and links: exact against scipy Dijkstra on the
explicit graph (grid moves on each floor plus the links' edges), every path
re-walked step by step, each step a grid move or a link it lists."""

import itertools
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.engine import BatchPolicy, GridMap, RectRegion, find_path, find_paths
from service.engine.edits import CellsEdit, apply_changes, changes_of
from service.engine.errors import InvalidEditError, InvalidQueryError
from service.engine.held_paths import check_paths
from service.engine.layers import Layers
from service.engine.links import Link, LinkEdges, LinkSet, anywhere, links_of
from service.engine.queries import PathQuery
from service.engine.result import PathResult
from service.engine.terrain import UNIFORM, Profile, Terrain
from service.engine.views import ViewKey
from tests.support import (
    corner_allowed,
    layered_links,
    links_oracle_graph,
    oracle_graph,
    padded_to_plain,
)

POLICIES = ["no_corner_cutting", "never", "always", "one_obstacle"]


def _linked(seed: int) -> tuple[Layers, GridMap, LinkSet]:
    layers, grid, links = layered_links(seed)
    return layers, grid.with_links(links), links


def _rewalk(grid: GridMap, links: LinkSet, result: PathResult, policy: str) -> float:
    """The cost of ``result.cells`` taken step by step: a grid move of the policy, or
    the link ``links_used`` lists at that step."""
    costs = grid.costs
    used = {use.at: links.links[use.id] for use in result.links_used}
    layers = links.layers
    total = 0.0
    cells = result.cells.tolist()
    for i, ((x0, y0), (x1, y1)) in enumerate(itertools.pairwise(cells)):
        if i in used:
            link = used[i]
            ends = {layers.to_grid("a", link.source), layers.to_grid("b", link.target)}
            assert {(x0, y0), (x1, y1)} <= ends
            if not link.two_way:
                assert (x0, y0) == layers.to_grid("a", link.source)
            assert link.enabled
            total += link.cost
            continue
        dx, dy = x1 - x0, y1 - y0
        assert max(abs(dx), abs(dy)) == 1, f"step {i} jumps without a link"
        assert costs[y1, x1] > 0
        if dx and dy:
            assert corner_allowed(costs, x0, y0, dx, dy, policy)
            total += math.sqrt(2) * float(costs[y1, x1])
        else:
            total += float(costs[y1, x1])
    return total


@pytest.mark.parametrize(("seed", "policy"), list(itertools.product(range(10), POLICIES)))
def test_paths_across_floors_and_links_are_optimal(seed: int, policy: str) -> None:
    _layers, grid, links = _linked(seed)
    graph = links_oracle_graph(grid, links.edges(), policy)
    rng = np.random.default_rng(seed)
    ys, xs = np.nonzero(grid.costs > 0)
    width = grid.width + 2
    for _ in range(6):
        a, b = rng.choice(xs.size, 2, replace=False)
        start, goal = (int(xs[a]), int(ys[a])), (int(xs[b]), int(ys[b]))
        plain = (start[1] * grid.width + start[0], goal[1] * grid.width + goal[0])
        optimal = dijkstra(graph, directed=True, indices=plain[0])[plain[1]]
        result = find_path(grid, start, goal, diagonal=policy)
        if math.isinf(optimal):
            assert result.status == "no_path"
            continue
        assert result.status == "found"
        assert result.cost == pytest.approx(optimal, rel=1e-9)
        assert _rewalk(grid, links, result, policy) == pytest.approx(optimal, rel=1e-9)
        assert padded_to_plain((start[1] + 1) * width + start[0] + 1, width) == plain[0]


@pytest.mark.parametrize("seed", range(6))
def test_a_batch_on_a_map_with_links_answers_as_single_queries(seed: int) -> None:
    _, grid, _ = _linked(seed)
    rng = np.random.default_rng(100 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    pairs = [tuple(rng.choice(xs.size, 2, replace=False)) for _ in range(12)]
    queries = [PathQuery((int(xs[a]), int(ys[a])), (int(xs[b]), int(ys[b]))) for a, b in pairs]
    batch = find_paths(grid, queries)
    for query, result in zip(queries, batch, strict=True):
        alone = find_path(grid, query.start, query.goal)
        assert isinstance(result, PathResult)
        assert (result.status, result.cost) == (alone.status, alone.cost)
        assert result.links_used == alone.links_used


def test_a_teleport_is_taken_and_listed_with_both_ends_as_waypoints() -> None:
    layers = Layers(2, 1, 9)
    floors = np.ones((2, 1, 9), np.float32)
    grid = GridMap.from_costs(layers.stack(floors))
    tp = Link("tp", (1, 0, 0), (7, 0, 1), 1.0, two_way=False)
    links = links_of(layers, [tp], walkable=lambda x, row: True, max_links=4)
    linked = grid.with_links(links)
    result = find_path(linked, (0, 0), (8, 2))  # floor 1's row 0 is row 2 of the grid
    assert result.status == "found"
    assert result.cost == pytest.approx(1 + 1 + 1)
    assert [tuple(use) for use in result.links_used] == [("tp", 1, 1)]
    assert result.waypoints.tolist() == [[0, 0], [1, 0], [7, 2], [8, 2]]
    assert result.length == pytest.approx(2.0)
    assert find_path(linked, (8, 2), (0, 0)).status == "no_path"  # one way
    assert find_path(grid, (0, 0), (8, 2)).status == "no_path"  # no links: two islands


def test_a_closed_link_or_an_edit_walling_its_end_is_not_taken() -> None:
    layers = Layers(2, 2, 3)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 2, 3), np.float32)))
    links = links_of(layers, [Link("stairs", (2, 1, 0), (0, 0, 1), 2.0)],
                     walkable=lambda x, row: True, max_links=4)  # fmt: skip
    linked = grid.with_links(links)
    assert find_path(linked, (0, 0), (2, 4)).status == "found"
    assert find_path(grid.with_links(links.set_enabled("stairs", False)), (0, 0),
                     (2, 4)).status == "no_path"  # fmt: skip
    walled = apply_changes(linked, changes_of(linked, [CellsEdit([[0, 3]], 0.0)], max_cells=8))
    assert walled.links is not None
    assert find_path(walled, (0, 0), (2, 4)).status == "no_path"


def test_what_does_not_take_links_yet_says_so() -> None:
    _, grid, _ = _linked(1)
    ys, xs = np.nonzero(grid.costs > 0)
    start, goal = (int(xs[0]), int(ys[0])), (int(xs[-1]), int(ys[-1]))
    with pytest.raises(InvalidQueryError, match="jps"):
        find_path(grid, start, goal, algorithm="jps")


#: Terrain of the profile tests: cells are ground or mud; links are doors (red ones
#: for the red key), teleports, or of no class.
CLASSES = ["ground", "mud", "door_red", "teleport"]
PROFILES = {
    "default": None,
    "no_key": Profile.of({"exclude": ["door_red"], "multipliers": {"mud": 3}}, CLASSES),
    "mage": Profile.of({"multipliers": {"teleport": 0.25, "mud": 1.5}}, CLASSES),
}
#: What each profile makes of a link's cost, by its class (0: not taken).
LINK_FACTORS: dict[str, dict[str | None, float]] = {
    "default": {},
    "no_key": {"door_red": 0.0},
    "mage": {"teleport": 0.25},
}


def _classed(seed: int) -> tuple[GridMap, LinkSet]:
    """A random layered map of ground and mud, its links of random classes."""
    layers, grid, links = layered_links(seed)
    rng = np.random.default_rng(seed)
    classes = (rng.random(grid.costs.shape) < 0.3).astype(np.uint8)  # mud
    terrain = Terrain.of(base=grid.costs, classes=classes, names=CLASSES, default=UNIFORM)
    kinds = [None, "door_red", "teleport"]
    classed = links_of(layers, [replace(link, class_name=kinds[i % 3])
                                for i, link in enumerate(links.links.values())],
                       walkable=anywhere, max_links=16)  # fmt: skip
    return GridMap.from_terrain(terrain).with_links(classed), classed


def _view_oracle(view: GridMap, edges: LinkEdges, policy: str) -> Any:
    """A view's grid moves plus the link edges whose both ends it can stand on."""
    graph = oracle_graph(view, policy).tolil()
    width = view.width + 2
    open_cells = view.padded > 0
    for cell in np.flatnonzero(edges.slot >= 0):
        s = edges.slot[cell]
        for e in range(edges.first[s], edges.first[s + 1]):
            target = int(edges.target[e])
            if open_cells[cell] and open_cells[target]:
                u, v = padded_to_plain(int(cell), width), padded_to_plain(target, width)
                graph[u, v] = min(graph[u, v] or math.inf, edges.cost[e])
    return graph.tocsr()


@pytest.mark.parametrize(("seed", "name", "size"),
                         list(itertools.product(range(6), PROFILES, (1, 2))))  # fmt: skip
def test_profiles_and_unit_sizes_take_the_links_their_classes_and_room_allow(
    seed: int, name: str, size: int
) -> None:
    grid, links = _classed(seed)
    profile = PROFILES[name]
    assert grid.terrain is not None
    view = grid.view(ViewKey(size, profile))
    factors = LINK_FACTORS[name]
    edges = links.edges(factor=lambda kind: factors.get(kind, 1.0))
    graph = _view_oracle(view, edges, "no_corner_cutting")
    rng = np.random.default_rng(seed)
    ys, xs = np.nonzero(view.costs > 0)
    for _ in range(8):
        a, b = rng.choice(xs.size, 2, replace=False)
        start, goal = (int(xs[a]), int(ys[a])), (int(xs[b]), int(ys[b]))
        optimal = dijkstra(graph, indices=start[1] * grid.width + start[0])[goal[1] * grid.width
                                                                             + goal[0]]  # fmt: skip
        result = find_path(grid, start, goal, profile=profile, agent_size=size)
        if math.isinf(optimal):
            assert result.status == "no_path"
            continue
        assert result.cost == pytest.approx(optimal, rel=1e-6)
        for use in result.links_used:  # each link taken is one the profile admits
            kind = links.links[use.id].class_name
            assert not (name == "no_key" and kind == "door_red")


@pytest.mark.parametrize(("seed", "policy"), list(itertools.product(range(8), POLICIES[:3])))
def test_goal_sets_and_regions_reach_the_nearest_goal_through_links(seed: int, policy: str
                                                                    ) -> None:  # fmt: skip
    _layers, grid, links = _linked(seed)
    distances = dijkstra(links_oracle_graph(grid, links.edges(), policy))
    rng = np.random.default_rng(300 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    for _ in range(5):
        chosen = rng.choice(xs.size, 4, replace=False)
        start = (int(xs[chosen[0]]), int(ys[chosen[0]]))
        goals = [(int(xs[i]), int(ys[i])) for i in chosen[1:]]
        index = [y * grid.width + x for x, y in [start, *goals]]
        optimal = min(distances[index[0], i] for i in index[1:])
        result = find_path(grid, start, goals=goals, diagonal=policy)
        assert result.heuristic_used == "zero"
        if math.isinf(optimal):
            assert result.status == "no_path"
            continue
        assert result.status == "found"
        assert result.cost == pytest.approx(optimal, rel=1e-9)
        assert result.reached in goals
        assert _rewalk(grid, links, result, policy) == pytest.approx(optimal, rel=1e-9)
    x, y = start
    region = RectRegion(0, 0, grid.width, 2)  # floor 0's first two rows
    targets = [r * grid.width + c for r in range(2) for c in range(grid.width)
               if grid.costs[r, c] > 0]  # fmt: skip
    optimal = min(distances[y * grid.width + x, t] for t in targets) if targets else math.inf
    result = find_path(grid, start, goal_region=region, diagonal=policy)
    if math.isinf(optimal):
        assert result.status == "no_path"
    else:
        assert result.cost == pytest.approx(optimal, rel=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_held_paths_through_links_check_as_found_and_break_at_a_closed_one(seed: int) -> None:
    _layers, grid, links = _linked(seed)
    rng = np.random.default_rng(500 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    held = []
    for _ in range(40):
        a, b = rng.choice(xs.size, 2, replace=False)
        result = find_path(grid, (int(xs[a]), int(ys[a])), (int(xs[b]), int(ys[b])))
        if result.status == "found" and result.links_used:
            held.append(result)
    for result in held:
        for points in (result.cells, result.waypoints):
            checked = check_paths(grid, [points])
            assert checked.walkable[0]
            assert checked.cost[0] == pytest.approx(result.cost, rel=1e-9)
    if not held:
        return
    first = held[0]
    use = first.links_used[0]
    closed = grid.with_links(links.set_enabled(use.id, False))
    checked = check_paths(closed, [first.waypoints])
    assert not checked.walkable[0]
    assert checked.blocked_at[0].tolist() == first.cells[use.at + 1].tolist()


def test_a_held_step_between_cells_no_link_joins_is_refused() -> None:
    layers = Layers(2, 1, 3)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 1, 3), np.float32)))
    links = links_of(layers, [Link("up", (0, 0, 0), (2, 0, 1), 1.0, two_way=False)],
                     walkable=anywhere, max_links=2)  # fmt: skip
    linked = grid.with_links(links)
    assert check_paths(linked, [[(0, 0), (2, 2)]]).walkable[0]
    assert not check_paths(linked, [[(2, 2), (0, 0)]]).walkable[0]  # against a one-way link
    with pytest.raises(InvalidEditError, match=r"paths\[0\]\[1\] \[1, 2\] is not on a row"):
        check_paths(linked, [[(0, 0), (1, 2)]])


@pytest.mark.parametrize("seed", range(6))
def test_smoothed_paths_keep_both_ends_of_every_link_and_pull_each_stretch(seed: int) -> None:
    _layers, grid, _links = _linked(seed)
    rng = np.random.default_rng(1300 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    for _ in range(30):
        a, b = rng.choice(xs.size, 2, replace=False)
        result = find_path(grid, (int(xs[a]), int(ys[a])), (int(xs[b]), int(ys[b])))
        if result.status != "found" or not result.links_used:
            continue
        smooth = result.smoothed()
        points = smooth.points.tolist()
        assert points[0] == result.cells[0].tolist()
        assert points[-1] == result.cells[-1].tolist()
        assert len(smooth.links_at) == len(result.links_used)
        for use, at in zip(result.links_used, smooth.links_at, strict=True):
            assert points[at] == result.cells[use.at].tolist()
            assert points[at + 1] == result.cells[use.at + 1].tolist()
        assert smooth.length <= result.length + 1e-9
        # Each stretch between links is on the grid: its segments cross open cells.
        stretches = np.split(smooth.points, [at + 1 for at in smooth.links_at])
        for stretch in stretches:
            for (x0, y0), (x1, y1) in itertools.pairwise(stretch.tolist()):
                for t in np.linspace(0.0, 1.0, 25):
                    x, y = round(x0 + t * (x1 - x0)), round(y0 + t * (y1 - y0))
                    assert grid.costs[y, x] > 0


@pytest.mark.parametrize("seed", range(6))
def test_a_shared_goal_batch_flows_through_links_as_single_queries_do(seed: int) -> None:
    _layers, grid, _links = _linked(seed)
    rng = np.random.default_rng(1500 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    g = int(rng.integers(xs.size))
    goal = (int(xs[g]), int(ys[g]))
    starts = [(int(xs[i]), int(ys[i])) for i in rng.choice(xs.size, 12, replace=False)]
    queries = [PathQuery(start, goal) for start in starts]
    shared = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=2))
    assert any(isinstance(r, PathResult) and r.algorithm_used == "field" for r in shared)
    for query, result in zip(queries, shared, strict=True):
        alone = find_path(grid, query.start, goal)
        assert isinstance(result, PathResult)
        assert result.status == alone.status
        if alone.status == "found":
            assert result.cost == alone.cost  # the same float64: summed the same way
            assert [u.id for u in result.links_used] or not alone.links_used


def test_a_shared_goal_batch_answers_no_path_past_a_one_way_link() -> None:
    """Joined islands join a one-way link's two ends: a start that only the link's
    wrong way joins to the goal was left unsettled, and answered as cut by a deadline."""
    layers = Layers(2, 1, 3)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 1, 3), np.float32)))
    down = Link("down", (0, 0, 1), (0, 0, 0), 1.0, two_way=False)
    grid = grid.with_links(links_of(layers, [down], walkable=anywhere, max_links=1))
    queries = [PathQuery((x, 0), (2, 2)) for x in range(3)]  # floor 0 to floor 1
    results = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=2))
    assert [r.status for r in results if isinstance(r, PathResult)] == ["no_path"] * 3
