"""Compile (or load from numba's cache) every kernel before the first real query.

``python -m service.engine.warmup`` does the same in a process of its own: a
starting service runs it when the cache is cold, so that compiling (seconds of
LLVM work holding the interpreter lock) never stalls the service's event loop,
then loads the compiled kernels from the cache.
"""

from service.engine.clusters import build_clusters
from service.engine.edits import (
    CellsEdit,
    RectEdit,
    apply_changes,
    build_jump_table,
    changes_of,
    check_paths,
    lowered_cells,
    repair_clusters,
    repair_jump_table,
    repair_landmarks,
)
from service.engine.fields import distance_field
from service.engine.goals import CircleRegion, RectRegion
from service.engine.grid import GridMap
from service.engine.kernels.cache import is_warm, mark_warm
from service.engine.landmarks import build_landmarks
from service.engine.queries import PathQuery
from service.engine.search import find_path, find_paths

#: Enough for any warm-up grid's tables.
_WARMUP_TABLE_BYTES = 1 << 20

_WARMUP_ROWS = (
    "....@",
    ".@@.@",
    "...G.",
)


def kernels_warm() -> bool:
    """Whether :func:`warmup` will only load the kernels from numba's on-disk cache
    (a second or so) rather than compile them (many seconds)."""
    return is_warm()


def warmup() -> None:
    """Run one query through every kernel so the first caller pays no JIT cost."""
    grid = GridMap.from_rows(_WARMUP_ROWS)  # islands
    weighted = GridMap.from_costs([[1, 2, 1], [1, 0, 1], [1, 1, 3]])
    find_path(grid, (0, 0), (3, 1)).smoothed()  # straight line, string pulling
    for _ in range(2):  # the same options again: the lean single query, and batch
        find_path(grid, (0, 0), (3, 1))
    find_paths(grid, [PathQuery((0, 0), (3, 1))])
    find_path(weighted, (0, 0), (2, 2), max_expansions=1)  # A*, reconstruction
    find_path(weighted, (0, 0), (2, 2)).smoothed()  # waypoints, weighted string pulling
    find_path(weighted, (0, 0), (2, 2), diagonal="never", heuristic="manhattan")  # dial
    # Cluster tables (built in the background for served maps) and their heuristic.
    tables = build_clusters(grid, cluster_size=4, max_table_bytes=_WARMUP_TABLE_BYTES)
    grid.attach_clusters(tables)
    find_path(grid, (0, 0), (3, 2), heuristic="cluster")
    grid.attach_landmarks(build_landmarks(grid, count=2, max_table_bytes=_WARMUP_TABLE_BYTES))
    find_path(grid, (0, 0), (3, 2), heuristic="landmarks")
    _warm_goals(grid)
    _warm_edits(grid)  # after _warm_goals: the edits carry its clearance table forward
    _warm_fields(grid)
    mark_warm()


def _warm_goals(grid: GridMap) -> None:
    """Goal sets, regions, the nearest reachable cell, unit sizes (clearance)."""
    find_path(grid, (0, 0), goals=[(3, 2), (0, 2)])
    find_path(grid, (0, 0), goal_region=RectRegion(2, 2, 2, 1))
    find_path(grid, (0, 0), goal_region=CircleRegion((3, 2), 1.0), unreachable="nearest")
    find_path(grid, (0, 0), (4, 0), unreachable="nearest")  # a blocked goal
    open_ground = GridMap.from_rows(["...", "...", "..."])
    find_path(open_ground, (0, 0), (1, 1), agent_size=2)
    distance_field(open_ground, [(0, 0)], max_goals=1, agent_size=2)
    _ = grid.clearance  # computed now: the edits in _warm_edits update it


def _warm_fields(grid: GridMap) -> None:
    """Fields, and a batch answered from one (its path writer)."""
    distance_field(grid, [(3, 2)], max_goals=1)
    find_paths(grid, [PathQuery((0, 0), (3, 2)), PathQuery((1, 0), (3, 2))], shared_goal_queries=2)


def _warm_edits(grid: GridMap) -> None:
    """Edits: islands split and joined, bit rows, table repairs, path checks."""
    grid.prepare_jumps()
    closing = changes_of(grid, [CellsEdit([[3, 0]], 0.0)], max_cells=8)
    closed = apply_changes(grid, closing)
    opened = changes_of(closed, [RectEdit(1, 1, 2, 1, cost=1.0)], max_cells=8)
    reopened = apply_changes(closed, opened)
    lowered = lowered_cells(opened)
    if grid.clusters is not None and grid.landmarks is not None:
        repair_clusters(grid.clusters, reopened, lowered)
        repair_landmarks(grid.landmarks, reopened, lowered)
    reopened.attach_jump_table(build_jump_table(reopened))
    if grid.jump_table is not None:
        table = repair_jump_table(grid.jump_table, flipped=closing.cells, grid=closed)
        closed.attach_jump_table(table)
    check_paths(reopened, [[(0, 0), (2, 2), (3, 2)]])


if __name__ == "__main__":
    warmup()
