"""Cluster tables (``service.engine.clusters``) and the ``cluster`` heuristic.

Bounds are checked against exact cluster-to-cluster minima from scipy's Dijkstra
over the explicit graph (``tests.support``); searches against the same oracle.
"""

import itertools
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest
from scipy.sparse.csgraph import dijkstra

from service.config import REPO_ROOT
from service.engine import (
    BuildStoppedError,
    ClusterTable,
    ClusterTables,
    GridMap,
    InvalidClusterSizeError,
    build_clusters,
    find_path,
)
from service.engine.clusters import (
    MAX_CLUSTER_SIZE,
    MIN_CLUSTER_SIZE,
    pack_table,
    table_bytes,
)
from service.engine.kernels.clusters import NO_CLUSTER
from tests.support import (
    assert_optimal,
    close,
    oracle_distances,
    oracle_graph,
    random_grid,
    walkable_cells,
)

UNLIMITED_BYTES = 1 << 40
TABLE_POLICIES = {"never": False, "no_corner_cutting": True}
#: (width, height, blocked share, cost range or None for uniform)
MAPS: list[tuple[int, int, float, tuple[float, float] | None]] = [
    (24, 18, 0.3, None),
    (20, 20, 0.2, (1, 5)),
    (31, 9, 0.35, (0.5, 3.0)),
]


def tables_for(grid: GridMap, size: int = 4) -> ClusterTables:
    tables = build_clusters(grid, cluster_size=size, max_table_bytes=UNLIMITED_BYTES)
    grid.attach_clusters(tables)
    return tables


def exact_cluster_minima(grid: GridMap, labels: npt.NDArray[np.int32], policy: str
                         ) -> npt.NDArray[np.float64]:  # fmt: skip
    """(count, count) exact min cost from any cell of a to any cell of b, as [b, a]."""
    count = int(labels.max()) + 1
    every = dijkstra(oracle_graph(grid, policy), directed=True)
    flat = labels.reshape(-1)
    exact = np.full((count, count), np.inf)
    for a, b in itertools.product(range(count), repeat=2):
        exact[b, a] = every[np.ix_(flat == a, flat == b)].min()
    return exact


@pytest.mark.parametrize(("width", "height", "blocked", "costs"), MAPS)
@pytest.mark.parametrize("policy", sorted(TABLE_POLICIES))
def test_bounds_never_exceed_the_exact_cluster_minima(
    width: int, height: int, blocked: float, costs: tuple[float, float] | None, policy: str
) -> None:
    grid = random_grid(np.random.default_rng(width), width, height, blocked, costs)
    tables = tables_for(grid)
    eight = TABLE_POLICIES[policy]
    labels = tables.labels(width=grid.width, height=grid.height, eight=eight)
    exact = exact_cluster_minima(grid, labels, policy)
    table = tables.table(eight=eight)
    bounds = np.stack([table.bounds_to(b) for b in range(table.count)])
    assert np.array_equal(np.isinf(bounds), np.isinf(exact))  # unreachable exactly
    finite = np.isfinite(exact)
    assert np.all(bounds[finite] <= exact[finite])
    # Tight enough to matter: on average within a few steps of the exact minimum.
    assert float(np.mean(exact[finite] - bounds[finite])) < 2 * 4


def _connected(grid: GridMap, labels: npt.NDArray[np.int32], cluster: int,
               members: list[tuple[int, int]], policy: str) -> bool:  # fmt: skip
    """Whether the members reach each other under the policy without leaving the cluster."""
    sub = GridMap.from_costs(np.where(labels == cluster, grid.costs, 0))
    reach = oracle_distances(sub, members[0], policy)
    return all(np.isfinite(reach[y, x]) for x, y in members)


@pytest.mark.parametrize("size", [4, 7])
def test_clusters_are_connected_pieces_of_one_sector_or_the_pool_of_isolated_islands(
    size: int,
) -> None:
    grid = random_grid(np.random.default_rng(size), 30, 22, 0.3, None)
    tables = tables_for(grid, size)
    pooled = 0
    for policy, eight in TABLE_POLICIES.items():
        labels = tables.labels(width=grid.width, height=grid.height, eight=eight)
        islands = grid.islands(policy)  # type: ignore[arg-type]
        assert np.array_equal(labels == NO_CLUSTER, grid.costs <= 0)
        ys, xs = np.nonzero(labels >= 0)
        sector = (ys // size) * 1000 + xs // size
        for cluster in range(int(labels.max()) + 1):
            inside = labels[ys, xs] == cluster
            members = list(zip(xs[inside].tolist(), ys[inside].tolist(), strict=True))
            if len(set(sector[inside].tolist())) == 1 and _connected(
                grid, labels, cluster, members, policy
            ):
                continue  # a connected piece of one sector
            # Else the pool, label 0: whole islands, each inside one sector.
            assert cluster == 0
            pooled += 1
            for island in set(islands[ys[inside], xs[inside]].tolist()):
                whole = islands == island
                assert np.all(labels[whole] == 0)
                iy, ix = np.nonzero(whole)
                assert len(set(((iy // size) * 1000 + ix // size).tolist())) == 1
    assert pooled > 0  # 30% blocked leaves islands inside sectors


def test_isolated_islands_share_one_cluster_so_cluttered_maps_stay_small() -> None:
    """Regression: doubling the sector size cannot merge islands, so a cluttered map
    had one cluster per island (23,864 on a 4096x4096 map, tables of 1.27 GB)."""
    grid = random_grid(np.random.default_rng(42), 128, 128, 0.42, None)
    islands = grid.island_count("no_corner_cutting")
    tables = build_clusters(grid, cluster_size=128, max_table_bytes=UNLIMITED_BYTES)
    assert islands > 100
    assert tables.four.count < islands // 10


@pytest.mark.parametrize(("width", "height", "blocked", "costs"), MAPS)
def test_cluster_heuristic_is_optimal_against_the_oracle(
    width: int, height: int, blocked: float, costs: tuple[float, float] | None
) -> None:
    rng = np.random.default_rng(width * 7)
    grid = random_grid(rng, width, height, blocked, costs)
    tables_for(grid)
    cells = walkable_cells(grid)
    for policy in ("never", "no_corner_cutting", "one_obstacle", "always"):
        start = cells[int(rng.integers(len(cells)))]
        distances = oracle_distances(grid, start, policy)
        for goal in (cells[int(i)] for i in rng.integers(len(cells), size=10)):
            result = find_path(grid, start, goal, heuristic="cluster", diagonal=policy)
            expected = "cluster" if policy in TABLE_POLICIES else "octile"
            assert result.heuristic_used == expected
            assert_optimal(result, distances[goal[1], goal[0]], grid, policy)


@pytest.mark.parametrize("policy", sorted(TABLE_POLICIES))  # never: the bucket kernel
def test_inconsistent_bound_makes_the_search_reopen_cells(policy: str) -> None:
    # Seeded weighted maps where the cluster bound jumps between neighbours: the
    # search must reopen closed cells to stay optimal (and does: cost == oracle).
    grid = random_grid(np.random.default_rng(0), 40, 40, 0.3, (1, 5))
    tables_for(grid)
    cells = walkable_cells(grid)
    distances = oracle_distances(grid, cells[0], policy)
    reopened = 0
    for goal in cells[::37]:
        result = find_path(grid, cells[0], goal, heuristic="cluster", diagonal=policy)
        reopened += result.reopened
        if result.status == "found":
            assert close(result.cost or 0, distances[goal[1], goal[0]])
    assert reopened > 0


def test_without_tables_cluster_falls_back_to_octile() -> None:
    grid = GridMap.from_rows(["....", ".@@.", "...."])
    result = find_path(grid, (0, 0), (3, 2), heuristic="cluster")
    assert result.heuristic_used == "octile"
    assert find_path(grid, (0, 0), (3, 2)).heuristic_used == "octile"
    assert find_path(grid, (0, 0), (3, 2), heuristic="zero").heuristic_used == "zero"
    tables_for(grid, 4)
    assert find_path(grid, (0, 0), (3, 2), heuristic="cluster").heuristic_used == "cluster"


def test_cluster_size_grows_until_the_tables_fit() -> None:
    grid = random_grid(np.random.default_rng(5), 64, 64, 0.25, None)
    small = build_clusters(grid, cluster_size=4, max_table_bytes=UNLIMITED_BYTES)
    budget = table_bytes(small.four.count, symmetric=True) - 1  # 4 no longer fits
    fitted = build_clusters(grid, cluster_size=4, max_table_bytes=budget)
    assert fitted.cluster_size > 4
    used = table_bytes(fitted.four.count, symmetric=True) + table_bytes(
        fitted.eight.count, symmetric=True
    )
    assert used <= budget
    assert build_clusters(grid, max_table_bytes=UNLIMITED_BYTES).cluster_size == 8  # default


@pytest.mark.parametrize("size", [MIN_CLUSTER_SIZE - 1, MAX_CLUSTER_SIZE + 1, 0])
def test_cluster_size_out_of_range_is_rejected(size: int) -> None:
    grid = GridMap.from_rows(["...."])
    with pytest.raises(InvalidClusterSizeError, match=rf"^cluster_size {size} is out of range"):
        build_clusters(grid, cluster_size=size, max_table_bytes=UNLIMITED_BYTES)


@pytest.mark.parametrize("half", [False, True])
def test_packing_rounds_every_bound_down_and_keeps_unreachable(half: bool) -> None:
    rng = np.random.default_rng(2)
    out = rng.uniform(0, 900, size=(7, 7)).astype(np.float32)  # out[a, b]: from a to b
    if half:
        out = np.triu(out) + np.triu(out, 1).T  # symmetric
    out[2, 5] = np.inf
    out[5, 2] = np.inf
    packed, unit = pack_table(out, half=half)
    assert packed.shape == ((28,) if half else (49,))
    table = ClusterTable(np.zeros(1, np.int32), packed, 7, unit, half)
    for goal in range(7):
        decoded = table.bounds_to(goal)
        expected = out[:, goal]
        finite = np.isfinite(expected)
        assert np.array_equal(np.isinf(decoded), ~finite)
        assert np.all(decoded[finite] <= expected[finite])
        assert np.all(expected[finite] - decoded[finite] <= 2 * 900 / 65534)


def test_uniform_maps_store_half_a_table() -> None:
    grid = random_grid(np.random.default_rng(9), 30, 30, 0.2, None)
    tables = tables_for(grid)
    for table in (tables.four, tables.eight):
        assert table.symmetric
        assert table.packed.size == table.count * (table.count + 1) // 2
    weighted = random_grid(np.random.default_rng(9), 30, 30, 0.2, (1, 9))
    assert not tables_for(weighted).eight.symmetric


def test_attach_rejects_tables_of_another_grid() -> None:
    grid = GridMap.from_rows(["....", "...."])
    other = GridMap.from_rows([".....", "....."])
    tables = build_clusters(other, cluster_size=4, max_table_bytes=UNLIMITED_BYTES)
    with pytest.raises(ValueError, match="cluster labels have shape"):
        grid.attach_clusters(tables)
    assert grid.clusters is None


PEAK_PROGRAM = """
import resource, sys
import numpy as np
import service.engine.clusters as clusters
from service.engine import GridMap, TableBudgetError, build_clusters

side, blocked, bound = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
costs = np.where(np.random.default_rng(1).random((side, side)) < blocked, 0.0, 1.0)
grid = GridMap.from_costs(costs)
build_clusters(GridMap.from_costs(np.ones((20, 20))), max_table_bytes=1 << 30)  # kernels in
budgets = []
class Recorded(clusters._Budget):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        budgets.append(self)
clusters._Budget = Recorded
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
try:
    build_clusters(grid, max_table_bytes=1 << 30, max_build_bytes=bound)
    outcome = "built"
except TableBudgetError:
    outcome = "refused"
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
print(outcome, budgets[0].peak, grew)
"""


def peak_run(side: int, blocked: float, bound: int) -> tuple[str, int, int]:
    """``(built or refused, accounted peak, peak resident growth)`` of one build in a
    fresh interpreter."""
    run = subprocess.run([sys.executable, "-c", PEAK_PROGRAM, str(side), str(blocked),
                          str(bound)], capture_output=True, text=True, check=True,
                         cwd=REPO_ROOT, timeout=300)  # fmt: skip
    outcome, peak, grew = run.stdout.split()
    return outcome, int(peak), int(grew)


def test_the_build_bound_holds_its_accounted_peak() -> None:
    """Every array a build allocates is counted before it is allocated: a build whose
    bound is its accounted peak fits, and its resident memory grows by that much (up
    to what the allocator keeps of freed arrays); one byte less is refused."""
    side, blocked = 512, 0.42  # cluttered: thousands of clusters
    outcome, peak, _ = peak_run(side, blocked, 1 << 40)
    assert outcome == "built"
    outcome, again, grew = peak_run(side, blocked, peak)
    assert (outcome, again) == ("built", peak)
    assert grew <= peak * 1.05 + 8 * 2**20, (grew, peak)
    assert peak_run(side, blocked, peak - 1)[0] == "refused"


def test_a_build_asked_to_stop_gives_up_between_its_row_ranges() -> None:
    grid = GridMap.from_rows(["." * 96] * 96)  # 144 sectors of 8: more ranges than threads
    asked: list[int] = []

    def stop_at(call: int) -> Callable[[], bool]:
        def stop() -> bool:
            asked.append(call)
            return len(asked) >= call

        return stop

    whole = build_clusters(grid, max_table_bytes=1 << 30, stop=lambda: False)
    reference = build_clusters(grid, max_table_bytes=1 << 30)
    assert whole.eight.packed.tobytes() == reference.eight.packed.tobytes()
    for call in (1, 2, 3, 10):  # after the border moves, the graphs, a range, ranges
        asked.clear()
        with pytest.raises(BuildStoppedError, match=r"^the cluster table build was stopped$"):
            build_clusters(grid, max_table_bytes=1 << 30, stop=stop_at(call))
        assert len(asked) == call
