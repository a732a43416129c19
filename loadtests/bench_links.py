"""Links: long queries across floors joined by stairs and teleports, and door edits.

    python -m loadtests.bench_links [--queries 20] [--repeat 3] [--markdown]

Engine calls only, on a map of four 1024x1024 floors stacked into one grid
(``engine.layers``): floor 0 is Moving AI's ``street/Boston_0_1024``, floors 1 to 3
are 2x2 tilings of the 512x512 maps of ``random512``, ``maze512`` and ``bg512``
(``GRIDPATH_BENCH_DATA``). 1,000 two-way stairs (cost 5) join each floor to the next
at cells open on both, and 50 one-way teleports (cost 10) join random open cells of
random floors; the seed is fixed.

1. **Queries across floors**: ``--queries`` pairs from floor 0 to floor 3, on one
   island, answered by A* with the octile heuristic bounded through the links
   (``links.LinkBounds``) and by A* with the zero heuristic (Dijkstra: what a
   search must fall back to when it has no bound that holds with teleports); mean
   expansions and milliseconds, median of ``--repeat`` interleaved rounds. Costs
   are checked equal.
2. **Closing and opening a door** (one link): the edit (its check and the new
   revision, the links' tables repaired: ``links.map_links``'s ``before``) against
   building the same revision's grid and link tables afresh, then the next query
   through the door's floor; milliseconds, median of ``--repeat``.
"""

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from loadtests.report import Table, cpu_model, nproc, positive, report
from service.config import get_settings
from service.engine import GridMap, find_path, warmup
from service.engine.edits import apply_changes, changes_of
from service.engine.layers import Layers
from service.engine.link_edits import LinkSwitch
from service.engine.links import Link, links_of
from service.engine.movingai import parse_map
from service.engine.terrain import movingai_terrain

SIDE = 1024
#: Each floor: one 1024x1024 map, or a 512x512 one mirrored into four (so that its
#: quarters meet along matching edges).
FLOORS = ("street/Boston_0_1024.map", "random512/random512-10-0.map",
          "maze512/maze512-1-0.map", "bg512/AR0011SR.map")  # fmt: skip
STAIRS = 1000
STAIR_COST = 5.0
TELEPORTS = 50
TELEPORT_COST = 10.0
HEURISTICS = (("octile, link-bounded", "octile"), ("zero (Dijkstra)", "zero"))
Pair = tuple[tuple[int, int], tuple[int, int]]


def floor_costs(path: Path) -> npt.NDArray[np.float32]:
    """One floor's 1024x1024 costs (walls where a map is smaller)."""
    costs = GridMap.from_terrain(movingai_terrain(parse_map(path.read_text()))).costs
    side = SIDE if costs.shape[0] > SIDE // 2 else SIDE // 2
    tile = np.zeros((side, side), np.float32)
    tile[: min(side, costs.shape[0]), : min(side, costs.shape[1])] = costs[:side, :side]
    if side == SIDE:
        return tile
    return np.block([[tile, tile[:, ::-1]], [tile[::-1], tile[::-1, ::-1]]]).astype(np.float32)


def layered_map(data: Path, rng: np.random.Generator) -> tuple[GridMap, Layers, list[Link]]:
    floors = np.stack([floor_costs(data / name) for name in FLOORS])
    layers = Layers(len(FLOORS), SIDE, SIDE)
    grid = GridMap.from_costs(layers.stack(floors))
    links = []
    for i in range(STAIRS):
        lower = i % (len(FLOORS) - 1)
        both = np.argwhere((floors[lower] > 0) & (floors[lower + 1] > 0))
        y, x = (int(v) for v in both[rng.integers(len(both))])
        links.append(Link(f"stairs{i}", (x, y, lower), (x, y, lower + 1), STAIR_COST))
    for i in range(TELEPORTS):
        ends = []
        for _ in range(2):
            floor = int(rng.integers(len(FLOORS)))
            open_cells = np.argwhere(floors[floor] > 0)
            y, x = (int(v) for v in open_cells[rng.integers(len(open_cells))])
            ends.append((x, y, floor))
        links.append(Link(f"tp{i}", ends[0], ends[1], TELEPORT_COST, two_way=False))
    linked = grid.with_links(links_of(layers, links, walkable=grid.walkable, max_links=1 << 20))
    return linked, layers, links


def cross_floor_pairs(grid: GridMap, layers: Layers, rng: np.random.Generator,
                      count: int) -> list[Pair]:  # fmt: skip
    """Pairs from floor 0 to floor 3 on one (joined) island."""
    labels = grid.islands()
    pairs: list[Pair] = []
    while len(pairs) < count:
        sx, sy = (int(v) for v in rng.integers(SIDE, size=2))
        gx, gy = (int(v) for v in rng.integers(SIDE, size=2))
        grow = layers.row_of(gy, layers.count - 1)
        if labels[sy, sx] and labels[sy, sx] == labels[grow, gx]:
            pairs.append(((sx, sy), (gx, grow)))
    return pairs


def query_table(grid: GridMap, pairs: list[Pair], repeat: int) -> Table:
    expanded: dict[str, list[float]] = {name: [] for name, _ in HEURISTICS}
    took: dict[str, list[float]] = {name: [] for name, _ in HEURISTICS}
    costs: dict[str, list[float | None]] = {}
    for _ in range(repeat):
        for name, heuristic in HEURISTICS:
            began = time.perf_counter()
            results = [find_path(grid, start, goal, heuristic=heuristic) for start, goal in pairs]
            took[name].append((time.perf_counter() - began) * 1000 / len(pairs))
            count = sum(result.expanded for result in results)
            expanded[name].append(count / len(pairs))
            costs[name] = [result.cost for result in results]
    ours, dijkstra = (costs[name] for name, _ in HEURISTICS)
    assert all(a is not None and b is not None and abs(a - b) <= 1e-9 * b
               for a, b in zip(ours, dijkstra, strict=True)), "costs differ"  # fmt: skip
    base = statistics.median(took["zero (Dijkstra)"])
    rows = [(name, f"{statistics.median(expanded[name]):,.0f}",
             f"{statistics.median(took[name]):.1f}",
             f"{base / statistics.median(took[name]):.1f}x") for name, _ in HEURISTICS]  # fmt: skip
    title = (f"A* across floors: 4 floors of {SIDE}x{SIDE}, {STAIRS} stairs, {TELEPORTS} "
             f"teleports, {len(pairs)} queries floor 0 -> 3 "
             f"({cpu_model()}, {nproc()} CPUs)")  # fmt: skip
    return Table(title, ("heuristic", "mean expanded", "mean ms", "speed-up"), rows)


def door_table(grid: GridMap, door: Link, pair: Pair, repeat: int) -> Table:
    names = ("close", "open")
    edit_ms: dict[str, list[float]] = {name: [] for name in names}
    build_ms: dict[str, list[float]] = {name: [] for name in names}
    query_ms: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(repeat):
        for name, enabled in zip(names, (False, True), strict=True):
            began = time.perf_counter()
            grid = apply_changes(grid, changes_of(grid, [LinkSwitch(door.id, enabled)],
                                                  max_cells=1))  # fmt: skip
            edited = time.perf_counter()
            find_path(grid, *pair)
            done = time.perf_counter()
            assert grid.links is not None
            GridMap(grid.costs, islands=grid.island_tables).with_links(grid.links.links)
            built = time.perf_counter()
            edit_ms[name].append((edited - began) * 1000)
            query_ms[name].append((done - edited) * 1000)
            build_ms[name].append((built - done) * 1000)
    rows = []
    for name in names:
        edit, build = statistics.median(edit_ms[name]), statistics.median(build_ms[name])
        rows.append((name, f"{edit:.1f}", f"{build:.1f}", f"{build / edit:.1f}x",
                     f"{statistics.median(query_ms[name]):.1f}"))  # fmt: skip
    title = f"one door (a stairs link) closed and opened again ({cpu_model()}, {nproc()} CPUs)"
    return Table(title, ("edit", "edit ms (tables repaired)", "built afresh ms", "ratio",
                         "next query ms"), rows)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=positive, default=20)
    parser.add_argument("--repeat", type=positive, default=3)
    parser.add_argument("--markdown", action="store_true", help="also print markdown")
    args = parser.parse_args(argv)
    data = get_settings().bench_data
    warmup()
    rng = np.random.default_rng(40)
    grid, layers, links = layered_map(data, rng)
    pairs = cross_floor_pairs(grid, layers, rng, args.queries)
    tables = [query_table(grid, pairs, args.repeat),
              door_table(grid, links[0], pairs[0], args.repeat)]  # fmt: skip
    report(tables, None, args.markdown)


if __name__ == "__main__":
    main()
