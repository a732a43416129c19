"""Compile (or load from numba's cache) every kernel before the first real query.

``python -m service.engine`` does the same in processes of its own: a
starting service runs it when the cache is cold, so that compiling (seconds of
LLVM work holding the interpreter lock) never stalls the service's event loop,
then loads the compiled kernels from the cache. With two cores or more it compiles
the search kernels and the table kernels (tables, edits, fields) in two processes
at once, which share nothing but the cache, then loads both.
"""

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Final

import numpy as np

from service.engine.clusters import build_clusters
from service.engine.edits import (
    CellsEdit,
    RectEdit,
    apply_changes,
    build_jump_table,
    changes_of,
    lowered_cells,
    repair_clusters,
    repair_jump_table,
    repair_landmarks,
)
from service.engine.fields import distance_field
from service.engine.goals import CircleRegion, RectRegion
from service.engine.grid import GridMap
from service.engine.held_paths import check_paths
from service.engine.kernels.cache import is_warm, mark_warm
from service.engine.landmarks import build_landmarks
from service.engine.layers import Layers
from service.engine.links import Link, anywhere, empty_links, links_of
from service.engine.policy import BatchPolicy
from service.engine.queries import PathQuery, SearchOptions
from service.engine.result import PathResult
from service.engine.search import find_path, find_paths
from service.engine.toolbox import find_variant

#: Set (to 1) in the environment of a process compiling for a starting service: each
#: step of the warm-up is then written to stderr, after ``PROGRESS_PREFIX``, for the
#: service to show what is compiling and how far it is (``_progress``).
PROGRESS_ENV: Final = "GRIDPATH_COMPILE_PROGRESS"
PROGRESS_PREFIX: Final = "gridpath-compile: "

#: Enough for any warm-up grid's tables.
_WARMUP_TABLE_BYTES = 1 << 20

_WARMUP_ROWS = (
    "....@",
    ".@@.@",
    "...G.",
)


def _progress(part: str, total: int) -> Callable[[str], None]:
    """A step counter of ``part`` of the warm-up: each call says which of its
    ``total`` steps starts, when a starting service asked (``PROGRESS_ENV``)."""
    done = 0
    shown = os.environ.get(PROGRESS_ENV) == "1"

    def step(what: str) -> None:
        nonlocal done
        done += 1
        if shown:
            print(f"{PROGRESS_PREFIX}{part}, step {done} of {total}: {what}", file=sys.stderr,
                  flush=True)  # fmt: skip

    return step


def kernels_warm() -> bool:
    """Whether :func:`warmup` will only load the kernels from numba's on-disk cache
    (a second or so) rather than compile them (many seconds)."""
    return is_warm()


def warmup() -> None:
    """Run one query through every kernel so the first caller pays no JIT cost."""
    warm_searches()
    warm_tables()
    grid = GridMap.from_rows(_WARMUP_ROWS)
    grid.attach_clusters(build_clusters(grid, cluster_size=4,
                                        max_table_bytes=_WARMUP_TABLE_BYTES))  # fmt: skip
    grid.attach_landmarks(build_landmarks(grid, count=2, max_table_bytes=_WARMUP_TABLE_BYTES))
    find_path(grid, (0, 0), (3, 2), heuristic="cluster")  # the heuristics read tables
    find_path(grid, (0, 0), (3, 2), heuristic="landmarks")
    mark_warm()


def warm_searches() -> None:
    """The search kernels: single queries and batches, every queue, unit sizes."""
    step = _progress("search kernels", 4)
    step("single queries and batches (JPS)")
    grid = GridMap.from_rows(_WARMUP_ROWS)  # islands
    # No JPS+ table: its builder compiles in the tables part, and the search kernels
    # take the table's placeholder as they take a table (the same types).
    grid.prepare_jumps(max_table_bytes=0)
    weighted = GridMap.from_costs([[1, 2, 1], [1, 0, 1], [1, 1, 3]])
    find_path(grid, (0, 0), (3, 1))
    for _ in range(2):  # the same options again: the lean single query, and batch
        find_path(grid, (0, 0), (3, 1))
    find_paths(grid, [PathQuery((0, 0), (3, 1))])
    step("A* on weighted costs, partial answers")
    find_path(weighted, (0, 0), (2, 2), max_expansions=1)  # A*, reconstruction
    find_path(weighted, (0, 0), (2, 2))  # waypoints
    step("the bucket queue")
    find_path(weighted, (0, 0), (2, 2), diagonal="never", heuristic="manhattan")  # dial
    step("unit sizes")
    open_ground = GridMap.from_rows(["...", "...", "..."])
    find_path(open_ground, (0, 0), (1, 1), agent_size=2)  # clearance, a unit's view


def warm_tables() -> None:
    """The kernels of the derived tables (clusters, landmarks, JPS+), of goal sets,
    of edits, of fields, of string pulling and of links: none of them compiles the search
    kernels that ``warm_searches`` compiles in a process of its own."""
    step = _progress("table kernels", 7)
    step("cluster and landmark tables")
    grid = GridMap.from_rows(_WARMUP_ROWS)
    # Cluster tables (built in the background for served maps) and their heuristic.
    tables = build_clusters(grid, cluster_size=4, max_table_bytes=_WARMUP_TABLE_BYTES)
    grid.attach_clusters(tables)
    grid.attach_landmarks(build_landmarks(grid, count=2, max_table_bytes=_WARMUP_TABLE_BYTES))
    _ = grid.clearance  # computed now: the edits in _warm_edits update it
    steps: tuple[tuple[str, Callable[[], None]], ...] = (
        ("goal sets and regions", lambda: _warm_goals(grid)),
        ("edits and table repairs", lambda: _warm_edits(grid)),
        ("fields", lambda: _warm_fields(grid)),
        ("string pulling", _warm_smoothing),
        ("links", _warm_links),
        ("the A* variants", lambda: _warm_variants(grid)),
    )
    for what, warm in steps:
        step(what)
        warm()


def _warm_goals(grid: GridMap) -> None:
    """Goal sets, regions, the nearest reachable cell: their own search kernel."""
    find_path(grid, (0, 0), goals=[(3, 2), (0, 2)])
    find_path(grid, (0, 0), goal_region=RectRegion(2, 2, 2, 1))
    find_path(grid, (0, 0), goal_region=CircleRegion((3, 2), 1.0), unreachable="nearest")
    find_path(grid, (0, 0), (4, 0), unreachable="nearest")  # a blocked goal
    # Two floors: the nearest cell among those a search settles, per floor.
    layers = Layers(2, 1, 3)
    floors = np.ones((2, 1, 3), np.float32)
    floors[1, 0, 2] = 0.0
    stacked = GridMap.from_costs(layers.stack(floors)).with_links(empty_links(layers))
    find_path(stacked, (0, 0), (2, 2), unreachable="nearest")


def _warm_variants(grid: GridMap) -> None:
    """The variants' kernels (``toolbox``: sliced A*, bidirectional A*, IDA*), traced,
    as a query asking for one runs them (no search kernel of ``warm_searches``)."""
    for options in (SearchOptions(algorithm="bidirectional"), SearchOptions(algorithm="ida"),
                    SearchOptions(algorithm="beam", beam_width=2),
                    SearchOptions(weight=2.0, weight_schedule="dynamic")):  # fmt: skip
        find_variant(grid, PathQuery((0, 0), (3, 2), options), trace=4)


def _warm_smoothing() -> None:
    """String pulling, uniform and weighted, on paths made here rather than searched
    (a search would compile the search kernels in this part too)."""
    open_ground = GridMap.from_rows(["....", "....", "...."])
    weighted = GridMap.from_costs([[1, 2, 1], [1, 0, 1], [1, 1, 3]])
    for grid, cells in ((open_ground, [[0, 0], [1, 1], [2, 1], [3, 1]]),
                        (weighted, [[0, 0], [0, 1], [0, 2], [1, 2], [2, 2]])):  # fmt: skip
        path = np.array(cells, dtype=np.int32)
        PathResult(status="found", cost=None, cells=path, waypoints=path, length=0.0,
                   expanded=0, grid=grid).smoothed()  # fmt: skip


def _warm_links() -> None:
    """Two floors joined by stairs: the links' heuristic table, joined islands and a
    goal's bound (no search: the search kernels read links in the other part)."""
    layers = Layers(2, 2, 2)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 2, 2), np.float32)))
    stairs = Link("stairs", (0, 0, 0), (1, 1, 1), 0.5)  # (a far link: cheaper than the walk)
    linked = grid.with_links(links_of(layers, [stairs], walkable=anywhere, max_links=1))
    if linked.links is not None:
        e = linked.links.edges
        linked.links.bounds.goal_bound((e.slot, e.first, e.target, e.cost),
                                       linked.padded_width + 1, linked.padded_width)  # fmt: skip


def _warm_fields(grid: GridMap) -> None:
    """Fields, and a batch answered from one (its path writer: every query of the
    batch in the group, so no search kernel runs)."""
    distance_field(grid, [(3, 2)], max_goals=1)
    open_ground = GridMap.from_rows(["...", "...", "..."])
    distance_field(open_ground, [(0, 0)], max_goals=1, agent_size=2)
    queries = [PathQuery((0, 0), (3, 2)), PathQuery((1, 0), (3, 2))]
    find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=2))


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


#: What ``--part`` runs, each in a process of its own.
PARTS: Final[dict[str, Callable[[], None]]] = {"searches": warm_searches, "tables": warm_tables}


def compile_all(processes: int | None = None) -> None:
    """:func:`warmup`, compiling a cold cache's kernels in ``PARTS`` processes at once
    first when there are ``processes`` cores for them (default: this machine's, up
    to two); a part that fails leaves its kernels to the warm-up here."""
    processes = min(2, os.cpu_count() or 1) if processes is None else processes
    if processes >= 2 and not kernels_warm():
        children = [subprocess.Popen([sys.executable, "-m", "service.engine", "--part", part])
                    for part in PARTS]  # fmt: skip
        try:
            for child in children:
                child.wait()
        finally:  # interrupted: the parts stop with this process
            for child in children:
                child.kill()
                child.wait()
        # Then loaded from the cache the parts filled: one step, not each part's again.
        _progress("every kernel", 1)("loading what the parts compiled")
        os.environ.pop(PROGRESS_ENV, None)
    warmup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Compile every kernel into numba's cache.")
    parser.add_argument("--part", choices=sorted(PARTS), help="compile one part only")
    args = parser.parse_args(argv)
    if args.part is None:
        compile_all()
    else:
        PARTS[args.part]()
