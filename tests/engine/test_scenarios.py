"""find_path against the Moving AI benchmark scenarios (optimal octile lengths).

Reads ``GRIDPATH_BENCH_DATA`` (default ``../shared/benchmarks/movingai``); skips
with the reason when the folder is absent. ``GRIDPATH_SCENARIO_ROWS`` sets the
rows sampled per map (default 24, evenly spread so the longest paths are in);
``0`` checks every row.
"""

import os
from pathlib import Path

import pytest

from service.config import get_settings
from service.engine import (
    GridMap,
    PathQuery,
    PathResult,
    Scratch,
    SearchOptions,
    build_clusters,
    find_path,
    find_paths,
)
from service.engine.movingai import Scenario, parse_scenarios
from tests.support import walk_cost

pytestmark = pytest.mark.movingai

DATA = get_settings().bench_data
MAPS = sorted(DATA.glob("*/*.map")) if DATA.is_dir() else []
ROWS = int(os.environ.get("GRIDPATH_SCENARIO_ROWS", "24"))
#: Rows per map for the cluster heuristic, and its sector size: large sectors build
#: in well under a second per map; admissibility does not depend on the size.
CLUSTER_ROWS = 10
CLUSTER_SIZE = 32


def tolerance(length: float) -> float:
    """Scenario files print about 6 significant digits for long paths."""
    return max(1e-3, 5e-6 * length)


def sample(scenarios: list[Scenario], rows: int) -> list[Scenario]:
    if rows <= 0 or rows >= len(scenarios):
        return scenarios
    step = (len(scenarios) - 1) / (rows - 1)
    return [scenarios[round(i * step)] for i in range(rows)]


@pytest.mark.skipif(not MAPS, reason=f"no Moving AI maps in {DATA} (set GRIDPATH_BENCH_DATA)")
@pytest.mark.parametrize("map_path", MAPS, ids=[f"{p.parent.name}/{p.name}" for p in MAPS])
@pytest.mark.parametrize("algorithm", ["astar", "jps"])
def test_scenario_rows_are_optimal(map_path: Path, algorithm: str) -> None:
    grid = GridMap.from_movingai(map_path.read_text())
    scenarios = parse_scenarios(map_path.with_name(map_path.name + ".scen").read_text())
    assert scenarios, map_path
    for row in sample(scenarios, ROWS):
        assert (row.width, row.height) == (grid.width, grid.height)
        result = find_path(grid, row.start, row.goal, algorithm=algorithm)
        assert result.algorithm_used == algorithm
        assert result.status == "found", row
        assert abs((result.cost or 0) - row.optimal_length) <= tolerance(row.optimal_length), (
            row,
            result.cost,
        )
        assert abs(walk_cost(grid, result.cells, "no_corner_cutting") - (result.cost or 0)) < 1e-6


@pytest.mark.skipif(not MAPS, reason=f"no Moving AI maps in {DATA} (set GRIDPATH_BENCH_DATA)")
@pytest.mark.parametrize("map_path", MAPS, ids=[f"{p.parent.name}/{p.name}" for p in MAPS])
def test_cluster_heuristic_rows_are_optimal(map_path: Path) -> None:
    grid = GridMap.from_movingai(map_path.read_text())
    grid.attach_clusters(
        build_clusters(
            grid, cluster_size=CLUSTER_SIZE, max_table_bytes=get_settings().max_table_bytes
        )
    )
    scenarios = parse_scenarios(map_path.with_name(map_path.name + ".scen").read_text())
    for row in sample(scenarios, CLUSTER_ROWS):
        result = find_path(grid, row.start, row.goal, heuristic="cluster")
        assert result.heuristic_used == "cluster"
        assert result.status == "found", row
        assert abs((result.cost or 0) - row.optimal_length) <= tolerance(row.optimal_length), (
            row,
            result.cost,
        )


#: Every row of these files goes through one ``find_paths`` call on a fresh scratch: the
#: path buffers fill up and grow many times mid batch (the maps where a path that
#: exists was answered ``no_path`` after the buffers grew). A* runs on the quicker
#: ones. These are the seven maps of issue 13's comparison with warthog: every row of
#: each is checked in CI.
WHOLE_FILES = {
    "dao/arena.map": ("jps", "astar"),
    "dao/brc202d.map": ("jps",),
    "dao/den520d.map": ("jps", "astar"),
    "dao/lak303d.map": ("jps", "astar"),
    "dao/orz900d.map": ("jps",),
    "sc1/AcrosstheCape.map": ("jps",),
    "bg512/AR0011SR.map": ("jps",),
}
WHOLE_CASES = [
    pytest.param(name, algorithm, id=f"{name}-{algorithm}")
    for name, algorithms in WHOLE_FILES.items()
    for algorithm in algorithms
]


@pytest.mark.skipif(not MAPS, reason=f"no Moving AI maps in {DATA} (set GRIDPATH_BENCH_DATA)")
@pytest.mark.parametrize(("name", "algorithm"), WHOLE_CASES)
def test_every_row_of_a_scenario_file_in_one_batch_on_a_fresh_scratch(name: str, algorithm: str
                                                                       ) -> None:  # fmt: skip
    map_path = DATA / name
    grid = GridMap.from_movingai(map_path.read_text())
    rows = parse_scenarios(map_path.with_name(map_path.name + ".scen").read_text())
    queries = [
        PathQuery(row.start, row.goal, options=SearchOptions(algorithm=algorithm)) for row in rows
    ]
    results = find_paths(grid, queries, scratch=Scratch(grid.padded.size))
    wrong = []
    for row, result in zip(rows, results, strict=True):
        assert isinstance(result, PathResult), (row, result)
        if result.status != "found" or abs((result.cost or 0) - row.optimal_length) > tolerance(
            row.optimal_length
        ):
            wrong.append((row.start, row.goal, result.status, result.cost, row.optimal_length))
    assert wrong == [], f"{len(wrong)} of {len(rows)} rows wrong, first: {wrong[:3]}"


def test_sample_spreads_over_the_file_and_keeps_the_ends() -> None:
    rows = [Scenario(i, "m", 1, 1, (0, 0), (0, 0), float(i)) for i in range(100)]
    picked = sample(rows, 5)
    assert [r.bucket for r in picked] == [0, 25, 50, 74, 99]
    assert sample(rows, 0) == rows
