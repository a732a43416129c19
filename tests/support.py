"""Test helpers: ASCII-art maps, an independent path checker and a Dijkstra oracle, and
``wait_until``, the one bounded poll the tests wait with.

The checker and the oracle share no code with the engine: they rebuild the move
rules from the policy names, so an engine bug cannot hide in both.
"""

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt
import pytest
from prometheus_client.parser import text_string_to_metric_families
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from service.engine import GridMap
from service.engine.layers import Layers
from service.engine.links import Link, LinkEdges, LinkSet, links_of

SQRT2: Final = math.sqrt(2.0)
POLICIES: Final = ("never", "no_corner_cutting", "one_obstacle", "always")
ORTHOGONAL: Final = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAGONAL_STEPS: Final = ((1, 1), (1, -1), (-1, 1), (-1, -1))

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T | None],
    *,
    seconds: float,
    interval: float = 0.01,
    message: str | Callable[[], object] = "the awaited condition never held",
) -> T:
    """Call ``predicate`` until it returns something true, and return that.

    Between calls it sleeps ``interval`` seconds (0: none). Once ``seconds`` have passed
    since the first call and the latest call still returned something false, the test
    fails with an ``AssertionError`` carrying ``message`` (if callable, what it returns
    then, e.g. the state that was awaited). Exceptions from ``predicate`` propagate.
    """
    deadline = time.monotonic() + seconds
    while not (value := predicate()):
        if time.monotonic() >= deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(interval)
    return value


def art(drawing: str) -> tuple[GridMap, tuple[int, int], tuple[int, int]]:
    """A map drawn in Moving AI characters; ``S`` marks the start and ``G`` the goal.

    Leading/trailing blank lines and common indentation are ignored. A drawing
    without S or G gets (0, 0) for the missing one.
    """
    rows = [line.strip() for line in drawing.splitlines() if line.strip()]
    start = goal = (0, 0)
    for y, row in enumerate(rows):
        if "S" in row:
            start = (row.index("S"), y)
        if "G" in row:
            goal = (row.index("G"), y)
    return GridMap.from_rows(rows), start, goal


def serpentine(side: int) -> tuple[GridMap, tuple[int, int], float]:
    """A ``side`` x ``side`` maze of one corridor (``side`` odd): even rows open, odd
    rows walled but for one gap at alternating ends. Returns the map, the far end of
    the corridor from (0, 0), and the cost of the only path there, which walks every
    open row: about ``side**2 / 2`` cells (4-connected moves, the only ones there)."""
    assert side % 2 == 1, side
    rows = []
    for y in range(side):
        if y % 2 == 0:
            rows.append("." * side)
        else:
            gap = side - 1 if (y // 2) % 2 == 0 else 0
            rows.append("".join("." if x == gap else "@" for x in range(side)))
    open_rows = (side + 1) // 2
    far_end = (side - 1 if open_rows % 2 else 0, side - 1)
    return GridMap.from_rows(rows), far_end, float(open_rows * (side - 1) + (open_rows - 1) * 2)


def weighted_art(drawing: str) -> GridMap:
    """A weighted map drawn with digits: ``0`` or ``@`` blocked, ``1``-``9`` the cost."""
    rows = [line.strip() for line in drawing.splitlines() if line.strip()]
    return GridMap.from_costs([[0 if c == "@" else int(c) for c in row] for row in rows])


def corner_allowed(
    costs: npt.NDArray[np.float32], x: int, y: int, dx: int, dy: int, policy: str
) -> bool:
    """The diagonal rule of ``policy`` for the move (x, y) -> (x+dx, y+dy)."""
    side_a = bool(costs[y, x + dx] > 0)
    side_b = bool(costs[y + dy, x] > 0)
    if policy == "never":
        return False
    if policy == "no_corner_cutting":
        return side_a and side_b
    if policy == "one_obstacle":
        return side_a or side_b
    return True


def walk_cost(grid: GridMap, cells: npt.NDArray[np.int32], policy: str) -> float:
    """Re-walk a path cell by cell and return its cost; fail on any illegal step."""
    costs = grid.costs
    assert cells.ndim == 2, cells.shape
    assert cells.shape[1] == 2, cells.shape
    total = 0.0
    for (x0, y0), (x1, y1) in zip(cells[:-1].tolist(), cells[1:].tolist(), strict=True):
        dx, dy = x1 - x0, y1 - y0
        assert max(abs(dx), abs(dy)) == 1, f"not adjacent: {(x0, y0)} -> {(x1, y1)}"
        assert 0 <= x1 < grid.width, (x1, y1)
        assert 0 <= y1 < grid.height, (x1, y1)
        assert costs[y1, x1] > 0, f"enters blocked cell {(x1, y1)}"
        if dx and dy:
            assert corner_allowed(costs, x0, y0, dx, dy, policy), (
                f"{policy} forbids {(x0, y0)} -> {(x1, y1)}"
            )
            total += SQRT2 * float(costs[y1, x1])
        else:
            total += float(costs[y1, x1])
    return total


def _moves(policy: str) -> Iterator[tuple[int, int, bool]]:
    for dx, dy in ORTHOGONAL:
        yield dx, dy, False
    if policy != "never":
        for dx, dy in DIAGONAL_STEPS:
            yield dx, dy, True


def oracle_graph(grid: GridMap, policy: str) -> csr_matrix:
    """The grid as an explicit weighted digraph over row-major cell indices."""
    costs = grid.costs.astype(np.float64)
    height, width = costs.shape
    index = np.arange(height * width).reshape(height, width)
    sources, targets, weights = [], [], []
    for y in range(height):
        for x in range(width):
            if costs[y, x] <= 0:
                continue
            for dx, dy, diagonal in _moves(policy):
                tx, ty = x + dx, y + dy
                if not (0 <= tx < width and 0 <= ty < height) or costs[ty, tx] <= 0:
                    continue
                if diagonal and not corner_allowed(grid.costs, x, y, dx, dy, policy):
                    continue
                sources.append(index[y, x])
                targets.append(index[ty, tx])
                weights.append(costs[ty, tx] * (SQRT2 if diagonal else 1.0))
    size = height * width
    return csr_matrix((weights, (sources, targets)), shape=(size, size))


def oracle_distances(grid: GridMap, start: tuple[int, int], policy: str) -> npt.NDArray[np.float64]:
    """(height, width) exact costs from ``start`` (inf where unreachable)."""
    graph = oracle_graph(grid, policy)
    source = start[1] * grid.width + start[0]
    distances = dijkstra(graph, directed=True, indices=source)
    return np.asarray(distances, dtype=np.float64).reshape(grid.height, grid.width)


def random_grid(
    rng: np.random.Generator,
    width: int,
    height: int,
    blocked: float,
    costs: tuple[float, float] | None,
) -> GridMap:
    """A random map: ``blocked`` share of cells blocked, costs uniform in ``costs``
    (integers when both bounds are integers) or all 1 when ``costs`` is None."""
    if costs is None:
        values = np.ones((height, width))
    elif float(costs[0]).is_integer() and float(costs[1]).is_integer():
        values = rng.integers(int(costs[0]), int(costs[1]) + 1, size=(height, width)).astype(float)
    else:
        values = rng.uniform(costs[0], costs[1], size=(height, width))
    values[rng.random((height, width)) < blocked] = 0
    return GridMap.from_costs(values)


#: A random map of the oracle tests: ``(width, height)``, the blocked share, the cost
#: range (``random_grid``'s) and the diagonal policy.
MapCase = tuple[tuple[int, int], float, tuple[float, float] | None, str]
#: The oracle tests' random maps: every shape, density, cost range and policy.
MAP_CASES: Final[list[MapCase]] = [
    (shape, density, costs, policy)
    for shape in ((9, 1), (1, 9), (8, 8), (23, 17), (40, 40))
    for density in (0.0, 0.2, 0.4)
    for costs in (None, (1, 5), (0.5, 3.0))
    for policy in POLICIES
]


def map_case_id(case: MapCase) -> str:
    """A test id naming a ``MapCase``."""
    (w, h), density, costs, policy = case
    return f"{w}x{h}-blocked{density}-costs{costs}-{policy}".replace(" ", "")


def start_and_goals(grid: GridMap, seed: int, count: int
                    ) -> tuple[tuple[int, int], list[tuple[int, int]]]:  # fmt: skip
    """A random walkable start and up to ``count`` goals other than it, drawn with
    ``seed``; the test is skipped on a map of fewer than two walkable cells."""
    cells = walkable_cells(grid)
    if len(cells) < 2:
        pytest.skip("random map has fewer than two walkable cells")
    rng = np.random.default_rng(seed)
    start = cells[int(rng.integers(len(cells)))]
    goals = [cells[int(i)] for i in rng.integers(len(cells), size=count)]
    return start, [goal for goal in goals if goal != start]


#: A map case drawn: its map, policy, start, goals, and the oracle's costs from the start
#: ((height, width), inf = unreachable).
OracleMap = tuple[GridMap, str, tuple[int, int], list[tuple[int, int]], npt.NDArray[np.float64]]


def oracle_map(case: MapCase, *, seed: int, goals: int) -> OracleMap:
    """``case``'s random map drawn with ``seed``, a start and up to ``goals`` goals on
    it, and Dijkstra's costs from the start (``start_and_goals``: a start may equal no
    goal; a map of fewer than two walkable cells skips the test)."""
    (width, height), density, costs, policy = case
    grid = random_grid(np.random.default_rng(seed), width, height, density, costs)
    start, targets = start_and_goals(grid, seed, goals)
    return grid, policy, start, targets, oracle_distances(grid, start, policy)


def walkable_cells(grid: GridMap) -> list[tuple[int, int]]:
    ys, xs = np.nonzero(grid.costs > 0)
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


def close(a: float, b: float) -> bool:
    """Equal up to float rounding of a sum of many steps."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def assert_optimal(result: Any, optimal: float, grid: GridMap, policy: str) -> None:
    """``result`` (a ``PathResult``) is ``no_path`` where the oracle's ``optimal`` is
    inf, else ``found`` at that cost, its cells re-walked on ``grid`` at that cost."""
    if np.isinf(optimal):
        assert result.status == "no_path"
        return
    assert result.status == "found"
    assert close(result.cost or 0.0, optimal), (result.cost, optimal)
    assert close(walk_cost(grid, result.cells, policy), optimal)


class Gate:
    """Holds every call of ``module.name`` until ``release`` is set; ``started`` is set
    when one reaches the gate."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        real = getattr(module, name)

        def gated(*args: Any, **kwargs: Any) -> Any:
            self.started.set()
            assert self.release.wait(30), "test never released the gate"
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, gated)


class BuildGate(Gate):
    """Holds every cluster table build (``TableBuilder``'s) until ``release`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import service.store.builder as builder

        super().__init__(monkeypatch, builder, "build_clusters")


def metric(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name`` with ``labels`` (a subset of its labels) in a
    ``/metrics`` text, parsed as Prometheus parses it; None when there is none. Several
    matching samples are summed."""
    found = [sample.value for family in text_string_to_metric_families(text)
             for sample in family.samples
             if sample.name == name and labels.items() <= sample.labels.items()]  # fmt: skip
    return sum(found) if found else None


def layered_links(
    seed: int, count: int = 3, height: int = 7, width: int = 9
) -> tuple[Layers, GridMap, LinkSet]:
    """A random layered map, ``Layers``, its stacked grid and random links (some
    one-way, some closed)."""
    rng = np.random.default_rng(seed)
    floors = rng.integers(2, 6, size=(count, height, width)).astype(np.float32)
    floors[rng.random(floors.shape) < 0.25] = 0
    layers = Layers(count, height, width)
    grid = GridMap.from_costs(layers.stack(floors))
    open_cells = [(int(x), int(y), int(layer)) for layer, y, x in np.argwhere(floors > 0)]
    links = []
    for i in range(int(rng.integers(1, 7))):
        a, b = (open_cells[int(j)] for j in rng.choice(len(open_cells), 2, replace=False))
        cost = float(rng.choice([0.5, 1.0, 3.0, 20.0]))
        two_way, enabled = bool(rng.random() < 0.6), bool(rng.random() < 0.85)
        links.append(Link(f"l{i}", a, b, cost, two_way=two_way, enabled=enabled))
    walkable = lambda x, row: bool(grid.costs[row, x] > 0)  # noqa: E731
    return layers, grid, links_of(layers, links, walkable=walkable, max_links=16)


def octile(dx: int, dy: int) -> float:
    return max(dx, dy) + (math.sqrt(2) - 1) * min(dx, dy)


def padded_to_plain(cell: int, width: int) -> int:
    return (cell // width - 1) * (width - 2) + cell % width - 1


def links_oracle_graph(grid: GridMap, edges: LinkEdges, policy: str) -> csr_matrix:
    """The stacked grid's moves under ``policy`` plus the links' edges, over row-major
    cell indices."""
    graph = oracle_graph(grid, policy).tolil()
    width = grid.width + 2
    for cell in np.flatnonzero(edges.slot >= 0):
        s = edges.slot[cell]
        for e in range(edges.first[s], edges.first[s + 1]):
            u, v = padded_to_plain(int(cell), width), padded_to_plain(int(edges.target[e]), width)
            old = graph[u, v]
            graph[u, v] = min(old, edges.cost[e]) if old else edges.cost[e]
    return graph.tocsr()
