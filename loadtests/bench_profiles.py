"""Movement profiles: named and inline profiles against the map's default.

    python -m loadtests.bench_profiles [--queries 200] [--repeat 3]

Four tables, on the Moving AI maps (``GRIDPATH_BENCH_DATA``), engine calls only:

1. **A named uniform profile**: ``tank`` excludes ``trees`` (on these maps, which
   have no water, it walks what the default walks, as its own view). The scenarios'
   last ``--queries`` pairs, answered one ``find_path`` at a time with ``auto``: on
   the map (the default profile, the map's JPS+ table), under ``tank`` with the
   table ``prepare_profile`` gives its view, and under ``tank`` without one (JPS
   scanning the view's bit rows); mean microseconds per query, median of
   ``--repeat`` interleaved rounds. Costs are checked equal.
2. **A named weighted profile**: ``convoy`` walks swamp at 3x and roads at 0.5x the
   cost of ground, on the maps made into maps of several classes (their trees
   become swamp, and every 24th row and column of ground a road). Random pairs on
   one island of its view, A* with the octile heuristic (scaled by the view's least
   cost, 0.5) against A* with the view's own landmarks (``prepare_profile``); mean
   expansions and microseconds; costs checked equal.
3. **An inline profile** on a 1024x1024 map: the first query of a profile not seen
   before (its view built: costs, islands, bit rows) against the same query again
   (the view kept); milliseconds, median over ``--repeat`` fresh profiles.
4. **Memory per named profile** on that map: its view, its JPS+ table (uniform) or
   landmark tables (weighted).
"""

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from service.config import get_settings
from service.engine import GridMap, Profile, Terrain, find_path, movingai_terrain, warmup
from service.engine.movingai import parse_map
from service.engine.profile_tables import prepare_profile
from service.engine.views import ViewKey

UNIFORM_MAPS = ("dao/arena.map", "dao/den520d.map", "dao/lak303d.map", "dao/brc202d.map",
                "dao/orz900d.map", "sc1/AcrosstheCape.map", "sc1/IceMountain.map")  # fmt: skip
WEIGHTED_MAPS = ("dao/den520d.map", "dao/lak303d.map", "dao/brc202d.map",
                 "sc1/AcrosstheCape.map")  # fmt: skip
BIG_MAP = "street/Boston_0_1024.map"
TANK = {"exclude": ["trees"]}
CONVOY = {"multipliers": {"swamp": 3.0, "road": 0.5}}
ROAD_EVERY = 24
Pair = tuple[tuple[int, int], tuple[int, int]]


def terrain_grid(path: Path) -> GridMap:
    grid = GridMap.from_terrain(movingai_terrain(parse_map(path.read_text())))
    grid.prepare_jumps(max_table_bytes=1 << 30)
    return grid


def convoy_grid(path: Path) -> GridMap:
    """The map with its trees made swamp and a road on every ``ROAD_EVERY``-th row
    and column of ground."""
    terrain = movingai_terrain(parse_map(path.read_text()))
    classes = terrain.classes.copy()
    classes[classes == 3] = 1  # trees: swamp
    ys, xs = np.indices(classes.shape)
    road = ((ys % ROAD_EVERY == 0) | (xs % ROAD_EVERY == 0)) & (classes == 0)
    classes[road & (terrain.base > 0)] = 4
    names = (*terrain.names, "road")
    return GridMap.from_terrain(Terrain.of(base=terrain.base, classes=classes, names=names,
                                           default=terrain.default))  # fmt: skip


def scenario_pairs(path: Path, count: int) -> list[Pair]:
    lines = [line.split("\t") for line in path.read_text().splitlines()[1:] if line.strip()]
    return [((int(f[4]), int(f[5])), (int(f[6]), int(f[7]))) for f in lines[-count:]]


def island_pairs(grid: GridMap, count: int, rng: np.random.Generator) -> list[Pair]:
    labels = grid.islands()
    biggest = np.bincount(labels[labels > 0]).argmax()
    ys, xs = np.nonzero(labels == biggest)
    picks = rng.integers(xs.size, size=(count, 2))
    return [((int(xs[i]), int(ys[i])), (int(xs[j]), int(ys[j]))) for i, j in picks]


def same(a: list[float], b: list[float]) -> bool:
    """Equal costs (sums of the same steps in another order may differ in the last
    bits)."""
    return all(abs(x - y) <= 1e-9 * max(1.0, abs(x)) for x, y in zip(a, b, strict=True))


def timed(grid: GridMap, pairs: list[Pair], **options: object) -> tuple[float, list[float], float]:
    """Mean microseconds per query, the costs, and the mean expansions (after one pass
    untimed: the search buffers' first touch is not a query's)."""
    for start, goal in pairs[:5]:
        find_path(grid, start, goal, **options)  # type: ignore[arg-type]
    costs, expanded = [], 0
    began = time.perf_counter()
    for start, goal in pairs:
        result = find_path(grid, start, goal, **options)  # type: ignore[arg-type]
        costs.append(float("nan") if result.cost is None else result.cost)
        expanded += result.expanded
    return (time.perf_counter() - began) / len(pairs) * 1e6, costs, expanded / len(pairs)


def prepared(grid: GridMap, profile: Profile) -> GridMap:
    settings = get_settings()  # the server's bounds and counts
    prepare_profile(grid, profile, jump_table_bytes=settings.max_jump_table_bytes,
                    landmarks=settings.profile_landmarks,
                    max_landmark_bytes=settings.max_landmark_bytes)  # fmt: skip
    return grid.view(ViewKey(1, profile))


def uniform_table(data: Path, queries: int, repeat: int) -> None:
    print("| map | cells | default us | tank, own JPS+ table us | tank / default | "
          "tank, bit rows only us | same costs |\n" + "|---" * 7 + "|")  # fmt: skip
    for name in UNIFORM_MAPS:
        grid = terrain_grid(data / name)
        assert grid.terrain is not None
        tank = grid.terrain.profile(TANK)
        bare = terrain_grid(data / name)  # the same profile, its view without a table
        prepared(grid, tank)
        pairs = scenario_pairs(data / (name + ".scen"), queries)
        runs: dict[str, list[float]] = {"default": [], "tank": [], "bits": []}
        equal = True
        for _ in range(repeat):
            took, default_costs, _ = timed(grid, pairs)
            runs["default"].append(took)
            took, costs, _ = timed(grid, pairs, profile=tank)
            runs["tank"].append(took)
            equal &= same(costs, default_costs)
            took, costs, _ = timed(bare, pairs, profile=tank)
            runs["bits"].append(took)
            equal &= same(costs, default_costs)
        us = {key: statistics.median(values) for key, values in runs.items()}
        print(f"| {Path(name).stem} | {grid.width}x{grid.height} | {us['default']:.1f} | "
              f"{us['tank']:.1f} | {us['tank'] / us['default']:.2f}x | {us['bits']:.1f} | "
              f"{'yes' if equal else 'NO'} |", flush=True)  # fmt: skip


def weighted_table(data: Path, queries: int, repeat: int) -> None:
    print("\n| map | convoy landmarks | octile expanded | landmarks expanded | fewer | "
          "octile us | landmarks us | same costs |\n" + "|---" * 8 + "|")  # fmt: skip
    for name in WEIGHTED_MAPS:
        grid = convoy_grid(data / name)
        assert grid.terrain is not None
        convoy = grid.terrain.profile(CONVOY)
        view = prepared(grid, convoy)
        pairs = island_pairs(view, queries, np.random.default_rng(5))
        runs: dict[str, list[float]] = {"octile": [], "landmarks": []}
        expanded: dict[str, float] = {}
        equal = True
        for _ in range(repeat):
            took, octile_costs, expanded["octile"] = timed(grid, pairs, profile=convoy,
                                                           algorithm="astar")  # fmt: skip
            runs["octile"].append(took)
            took, costs, expanded["landmarks"] = timed(
                grid, pairs, profile=convoy, algorithm="astar", heuristic="landmarks")  # fmt: skip
            runs["landmarks"].append(took)
            equal &= same(octile_costs, costs)
        us = {key: statistics.median(values) for key, values in runs.items()}
        count = 0 if view.landmarks is None else view.landmarks.count
        print(f"| {Path(name).stem} | {count} | {expanded['octile']:.0f} | "
              f"{expanded['landmarks']:.0f} | {expanded['octile'] / expanded['landmarks']:.1f}x | "
              f"{us['octile']:.0f} | {us['landmarks']:.0f} | {'yes' if equal else 'NO'} |",
              flush=True)  # fmt: skip


def inline_table(data: Path, repeat: int) -> None:
    grid = terrain_grid(data / BIG_MAP)
    assert grid.terrain is not None
    terrain = grid.terrain
    pair = scenario_pairs(data / (BIG_MAP + ".scen"), 1)[0]
    find_path(grid, *pair)
    firsts, agains = [], []
    for k in range(repeat):
        # A profile not seen before each round (the same costs): its view is built anew.
        profile = terrain.profile({"exclude": ["trees"], "multipliers": {"swamp": 2.0 + k}})
        began = time.perf_counter()
        first = find_path(grid, *pair, profile=profile)
        firsts.append((time.perf_counter() - began) * 1e3)
        began = time.perf_counter()
        again = find_path(grid, *pair, profile=profile)
        agains.append((time.perf_counter() - began) * 1e3)
        assert first.cost == again.cost
    first_ms, again_ms = statistics.median(firsts), statistics.median(agains)
    print(f"\n| map | cells | first query ms | same query again ms | the view's build ms |\n"
          f"|---|---|---|---|---|\n| {Path(BIG_MAP).stem} | {grid.width}x{grid.height} | "
          f"{first_ms:.1f} | {again_ms:.2f} | {first_ms - again_ms:.1f} |", flush=True)  # fmt: skip


def memory_table(grid: GridMap, weighted: GridMap) -> None:
    """MiB of a uniform profile on the 1024x1024 map, and of a weighted one on a map
    of several classes about as big (``weighted``)."""
    mib = 1 << 20
    print("\n| map | what | MiB |\n|---|---|---|")
    print(f"| {Path(BIG_MAP).stem} | the map itself (costs, islands, JPS+ table, bit rows, "
          f"terrain) | {grid.nbytes / mib:.1f} |")  # fmt: skip
    for on, spec, label in ((grid, TANK, "tank (uniform)"),
                            (weighted, CONVOY, "convoy (weighted)")):  # fmt: skip
        assert on.terrain is not None
        profile = on.terrain.profile(spec)
        view = on.view(ViewKey(1, profile))
        bare = view.nbytes
        prepared(on, profile)
        kind = "JPS+ table" if view.jump_table is not None else "landmark tables"
        cells = f"{on.width}x{on.height}"
        print(f"| {cells} | {label}: its view | {bare / mib:.1f} |")
        print(f"| {cells} | {label}: its {kind} | {(view.nbytes - bare) / mib:.1f} |",
              flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    data = get_settings().bench_data
    if not data.is_dir():
        print(f"benchmark data folder {data} not found; set GRIDPATH_BENCH_DATA. Nothing to do.")
        return
    warmup()  # kernels compiled or loaded before any timing
    uniform_table(data, args.queries, args.repeat)
    weighted_table(data, args.queries, args.repeat)
    inline_table(data, args.repeat)
    memory_table(terrain_grid(data / BIG_MAP), convoy_grid(data / "dao/orz900d.map"))


if __name__ == "__main__":
    main()
