"""Jump Point Search (``kernels.jps``) through ``find_path``, A* as the reference.

JPS must return A*'s costs on uniform-cost maps (8-connected, no corner cutting),
full contiguous cell paths, and valid partial paths under a node budget. Maps wider
and taller than 64 cells cross the 64-bit words of the block scans.
"""

import itertools

import numpy as np
import pytest

from service.engine import (
    GridMap,
    PathQuery,
    PathResult,
    SearchOptions,
    UnknownAlgorithmError,
    UnsupportedAlgorithmError,
    build_clusters,
    find_path,
    find_paths,
)
from service.engine.kernels.bundles import JumpTables, Nodes, Task, Terrain
from service.engine.kernels.codes import HEURISTIC_OCTILE, STATUS_FOUND
from service.engine.kernels.jps import (
    NOT_FOUND,
    jps,
    jump_bits,
    jump_diagonal,
    jump_distances,
    jump_straight,
    successor_directions,
    two_legs,
)
from service.engine.kernels.moves import DX, DY
from service.engine.scratch import PathBuffers, Scratch
from tests.support import art, close, random_grid, walk_cost, walkable_cells

SHAPES = [(9, 9), (70, 20), (20, 70), (150, 130)]
DENSITIES = [0.0, 0.1, 0.25, 0.4]


#: JPS+ (every jump a table lookup) and the block scans used when the table is
#: over its memory bound.
MODES = {"table": 1 << 30, "scan": 0}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize(("shape", "density"), list(itertools.product(SHAPES, DENSITIES)))
def test_jps_costs_equal_astar_on_random_uniform_maps(
    shape: tuple[int, int], density: float, mode: str
) -> None:
    width, height = shape
    rng = np.random.default_rng(width * 1000 + int(density * 100))
    grid = random_grid(rng, width, height, density, None)
    grid.prepare_jumps(max_table_bytes=MODES[mode])
    assert grid.jump_table_ready == (mode == "table")
    cells = walkable_cells(grid)
    if len(cells) < 2:
        pytest.skip("no room for a query")
    for _ in range(12):
        start, goal = (cells[int(i)] for i in rng.integers(len(cells), size=2))
        reference = find_path(grid, start, goal, algorithm="astar")  # auto would be JPS
        result = find_path(grid, start, goal, algorithm="jps")
        assert result.algorithm_used == "jps"
        assert result.status == reference.status, (start, goal)
        if reference.status != "found":
            continue
        assert close(result.cost or 0, reference.cost or 0), (start, goal)
        assert result.cells[0].tolist() == list(start)
        assert result.cells[-1].tolist() == list(goal)
        assert close(walk_cost(grid, result.cells, "no_corner_cutting"), result.cost or 0)


def test_a_corridor_with_a_corner_is_walked_cell_by_cell() -> None:
    grid, start, goal = art(
        """
        S.........@
        @@@@@@@@@.@
        .........G@
        """
    )
    result = find_path(grid, start, goal, algorithm="jps")
    assert result.status == "found"
    assert result.cells.tolist() == [[x, 0] for x in range(10)] + [[9, 1], [9, 2]]
    assert result.waypoints.tolist() == [[0, 0], [9, 0], [9, 2]]
    assert result.cost == 9 + 2


@pytest.mark.parametrize("mode", sorted(MODES))
def test_budget_gives_a_walkable_partial_path(mode: str) -> None:
    grid = random_grid(np.random.default_rng(11), 80, 80, 0.3, None)
    grid.prepare_jumps(max_table_bytes=MODES[mode])
    cells = walkable_cells(grid)
    start, goal = cells[0], cells[-1]
    full = find_path(grid, start, goal, algorithm="jps")
    assert full.status == "found"
    assert full.expanded > 3
    partial = find_path(grid, start, goal, algorithm="jps", max_expansions=3)
    assert partial.status == "partial"
    assert partial.expanded == 3
    assert partial.cells[0].tolist() == list(start)
    assert close(walk_cost(grid, partial.cells, "no_corner_cutting"), partial.cost or 0)


def test_auto_picks_jps_only_where_it_applies() -> None:
    uniform = GridMap.from_rows(["....", ".@@.", "...."])
    weighted = GridMap.from_costs([[1, 2, 1], [1, 1, 1]])

    def used(grid: GridMap, **options: object) -> str:
        end = (3, 2) if grid is uniform else (2, 1)
        return find_path(grid, (0, 0), end, algorithm="auto", **options).algorithm_used  # type: ignore[arg-type]

    assert used(uniform) == "jps"
    assert used(uniform, heuristic="zero") == "jps"
    assert used(weighted) == "astar"
    assert used(uniform, diagonal="never") == "astar"
    assert used(uniform, diagonal="always") == "astar"
    assert used(uniform, heuristic="manhattan") == "astar"  # inconsistent with diagonals
    uniform.attach_clusters(build_clusters(uniform, cluster_size=4, max_table_bytes=1 << 20))
    assert used(uniform, heuristic="cluster") == "astar"
    assert find_path(uniform, (0, 0), (3, 2)).algorithm_used == "jps"  # auto is the default


def test_jps_where_it_does_not_apply_is_refused_with_the_reasons() -> None:
    weighted = GridMap.from_costs([[1, 2, 1], [1, 1, 1]])
    with pytest.raises(UnsupportedAlgorithmError, match=r"^algorithm 'jps' needs a uniform-cost "
                       r"map and diagonal 'no_corner_cutting'"):  # fmt: skip
        find_path(weighted, (0, 0), (2, 1), algorithm="jps", diagonal="never")
    with pytest.raises(UnknownAlgorithmError, match=r"^unknown algorithm 'dijkstra'; expected one "
                       r"of: astar, jps, auto, bidirectional, beam, ida$"):  # fmt: skip
        find_path(weighted, (0, 0), (2, 1), algorithm="dijkstra")


def test_jump_table_entries_match_the_scans() -> None:
    # Every table entry agrees with a direct scan: d > 0 is a jump point d steps on,
    # d <= 0 a wall after -d steps.
    grid = random_grid(np.random.default_rng(8), 40, 30, 0.3, None)
    cost, width = grid.padded, grid.padded_width
    table = jump_distances(cost, width)
    bits = jump_bits(cost, width)
    far_goal = 0  # the padded corner: blocked, never on the way
    for n in np.flatnonzero(cost > 0)[::7]:
        for k in range(8):
            dx, dy = int(DX[k]), int(DY[k])
            if k < 4:
                end = jump_straight(bits, width, int(n), dx, dy, far_goal)
            else:
                end = jump_diagonal(cost, bits, width, int(n), dx, dy, far_goal)
            d = int(table[n, k])
            if d > 0:
                assert end == n + d * (dy * width + dx), (n, k, d)
            else:
                assert end == NOT_FOUND, (n, k, d)


def _reference_entry(open_at: np.ndarray, x: int, y: int, k: int) -> int:
    """A JPS+ table entry walked cell by cell (``open_at[y, x]``: padded walkable)."""
    dx, dy = int(DX[k]), int(DY[k])
    steps = 0
    while True:
        if k >= 4 and not (open_at[y, x + dx] and open_at[y + dy, x]):
            return -steps  # no corner cutting
        x, y = x + dx, y + dy
        if not open_at[y, x]:
            return -steps
        steps += 1
        if k < 4:
            sx, sy = dy, dx  # a side of the line
            for s in (1, -1):
                if open_at[y + s * sy, x + s * sx] and not open_at[y + s * sy - dy,
                                                                   x + s * sx - dx]:  # fmt: skip
                    return steps
        elif any(_reference_entry(open_at, x, y, j) > 0 for j in
                 (0 if dx > 0 else 1, 2 if dy > 0 else 3)):  # fmt: skip
            return steps


@pytest.mark.parametrize(("seed", "density"), [(1, 0.1), (2, 0.3), (3, 0.45)])
def test_jump_table_equals_entries_walked_cell_by_cell(seed: int, density: float) -> None:
    grid = random_grid(np.random.default_rng(seed), 23, 17, density, None)
    table = jump_distances(grid.padded, grid.padded_width)
    open_at = (grid.padded > 0).reshape(grid.height + 2, grid.width + 2)
    for y, x in zip(*np.nonzero(open_at), strict=True):
        n = y * grid.padded_width + x
        expected = [_reference_entry(open_at, int(x), int(y), k) for k in range(8)]
        assert table[n].tolist() == expected, (x, y)
    assert not table[~open_at.ravel()].any()  # blocked cells have no entries


def test_jump_bits_mirror_the_walkable_cells() -> None:
    grid = random_grid(np.random.default_rng(4), 100, 67, 0.3, None)
    east, west, south, north = jump_bits(grid.padded, grid.padded_width)
    open_cells = (grid.padded > 0).reshape(grid.height + 2, grid.width + 2)

    def unpack(lines: np.ndarray, length: int) -> np.ndarray:
        bits = np.unpackbits(lines.view(np.uint8), axis=1, bitorder="little")
        return bits[:, :length].astype(bool)

    assert np.array_equal(unpack(east, grid.width + 2), open_cells)
    assert np.array_equal(unpack(west, grid.width + 2), open_cells[:, ::-1])
    assert np.array_equal(unpack(south, grid.height + 2), open_cells.T)
    assert np.array_equal(unpack(north, grid.height + 2), open_cells.T[:, ::-1])


def _successors(rows: list[str], cell: tuple[int, int], parent: tuple[int, int]) -> set[str]:
    """``successor_directions`` of ``cell`` reached from ``parent``, as compass names;
    the same with the JPS+ table (whose blocked first steps, entries 0, are dropped
    as the jumps drop them) and without."""
    grid = GridMap.from_rows(rows)
    width = grid.padded_width
    (x, y), (px, py) = ((c[0] + 1, c[1] + 1) for c in (cell, parent))
    n = y * width + x
    names = {(1, 0): "E", (-1, 0): "W", (0, 1): "S", (0, -1): "N", (1, 1): "SE", (1, -1): "NE",
             (-1, 1): "SW", (-1, -1): "NW"}  # fmt: skip
    found = []
    for table in (np.zeros((0, 8), np.int16), jump_distances(grid.padded, width)):
        directions = successor_directions(grid.padded, table, width, n, px, py, x, y)
        kept = [k for k in range(8) if (directions >> k) & 1
                and (table.shape[0] == 0 or table[n, k] != 0)]  # fmt: skip
        found.append({names[int(DX[k]), int(DY[k])] for k in kept})
    assert found[0] == found[1]
    return found[0]


def test_jps_prunes_unforced_side_jumps() -> None:
    # Regression: after a straight move JPS jumped to both sides and both forward
    # diagonals whatever the walls, which expanded several times the jump points
    # canonical JPS does on the Moving AI maps.
    rows = [
        ".....",
        ".....",
        ".....",
    ]
    assert _successors(rows, (2, 1), (0, 1)) == {"E"}
    assert _successors(rows, (2, 1), (2, 2)) == {"N"}
    assert _successors(rows, (2, 1), (1, 2)) == {"E", "N", "NE"}
    assert _successors(rows, (2, 1), (1, 1)) == {"E"}


def test_jps_keeps_forced_side_jumps() -> None:
    # Moving east into (2, 1): (1, 0) blocked makes (2, 0) forced (north and
    # north-east); (1, 2) blocked makes (2, 2) forced, but (3, 2) is blocked, so the
    # south-east diagonal cuts a corner and only south stays.
    rows = [
        ".#...",
        ".....",
        ".#.#.",
    ]
    assert _successors(rows, (2, 1), (0, 1)) == {"E", "N", "NE", "S"}
    # Moving south into (1, 1) by a column: (0, 0) blocked forces (0, 1) to the west.
    rows = [
        "#....",
        ".....",
        ".....",
    ]
    assert _successors(rows, (1, 1), (1, 0)) == {"S", "W", "SW"}


def _legs_walked(open_at: np.ndarray, start: tuple[int, int], goal: tuple[int, int]
                 ) -> list[tuple[int, int]]:  # fmt: skip
    """The turning cells (unpadded) of the walkable two-leg paths from ``start`` to
    ``goal``, diagonal leg first, walked cell by cell on ``open_at`` (padded (h, w)
    bools) without corner cutting; what ``two_legs`` must find from its table."""
    (sx, sy), (gx, gy) = start, goal
    dx, dy = int(np.sign(gx - sx)), int(np.sign(gy - sy))
    turns, run = min(abs(gx - sx), abs(gy - sy)), abs(abs(gx - sx) - abs(gy - sy))
    ux, uy = (dx, 0) if abs(gx - sx) > abs(gy - sy) else (0, dy)

    def walk(x: int, y: int, mx: int, my: int, steps: int) -> tuple[int, int] | None:
        for _ in range(steps):
            legal = open_at[y + 1 + my, x + 1 + mx] and (
                not (mx and my) or (open_at[y + 1, x + 1 + mx] and open_at[y + 1 + my, x + 1])
            )
            if not legal:
                return None
            x, y = x + mx, y + my
        return x, y

    found = []
    for first, second in (((dx, dy, turns), (ux, uy, run)), ((ux, uy, run), (dx, dy, turns))):
        turn = walk(sx, sy, *first)
        if turn is not None and walk(*turn, *second) is not None:
            found.append(turn)
    return found


@pytest.mark.parametrize("seed", range(4))
def test_two_legs_finds_exactly_the_walkable_two_leg_paths(seed: int) -> None:
    rng = np.random.default_rng(seed)
    width, height = (70, 20) if seed % 2 else (20, 70)  # past a 64-bit word either way
    grid = random_grid(rng, width, height, 0.1 * (seed + 1), None)
    w = grid.padded_width
    table = jump_distances(grid.padded, w)
    open_at = grid.padded.reshape(-1, w) > 0
    cells = walkable_cells(grid)
    checked = 0
    for _ in range(3000):
        start, goal = (cells[int(i)] for i in rng.integers(len(cells), size=2))
        s, t = ((c[1] + 1) * w + c[0] + 1 for c in (start, goal))
        turn = two_legs(table, w, s, t)
        walked = _legs_walked(open_at, start, goal)
        collinear = (
            start[0] == goal[0]
            or start[1] == goal[1]
            or (abs(goal[0] - start[0]) == abs(goal[1] - start[1]))
        )
        if collinear:
            assert turn == NOT_FOUND, (start, goal)
            continue
        expected = walked[0] if walked else None
        got = None if turn == NOT_FOUND else (turn % w - 1, turn // w - 1)
        assert got == expected, (start, goal)
        checked += got is not None
    assert checked > 5  # the random maps gave two-leg paths to check


def test_a_two_leg_path_is_answered_without_a_search() -> None:
    drawing = """
        S.....
        .@....
        ......
        .....G
        """
    grid, start, goal = art(drawing)
    # No straight grid line (Bresenham's meets the wall at (1, 1)), and the diagonal
    # leg first meets it too: the straight leg goes first.
    result = find_path(grid, start, goal)
    assert (result.status, result.algorithm_used, result.expanded) == ("found", "jps", 0)
    assert result.waypoints.tolist() == [[0, 0], [2, 0], [5, 3]]
    assert close(result.cost or 0, 2 + 3 * 2**0.5)
    assert close(walk_cost(grid, result.cells, "no_corner_cutting"), result.cost or 0)
    searched = art(drawing)[0]  # no JPS+ table: the search answers
    searched.prepare_jumps(max_table_bytes=0)
    found = find_path(searched, start, goal, algorithm="jps")
    assert found.expanded > 0
    assert close(found.cost or 0, result.cost or 0)


def test_a_two_leg_path_cut_by_a_corner_is_searched() -> None:
    grid, start, goal = art(
        """
        S.@...
        .@....
        ......
        .....G
        """
    )
    # Both two-leg paths would cut a corner at the start: (1, 0) and (0, 1) are open
    # but (1, 1) is a wall, and the straight leg east meets (2, 0).
    result = find_path(grid, start, goal)
    assert result.status == "found"
    assert result.expanded > 0
    assert close(walk_cost(grid, result.cells, "no_corner_cutting"), result.cost or 0)


def test_two_legs_reads_past_jump_points_on_a_leg() -> None:
    # The straight leg along row 1 passes cells with forced neighbours (the notches
    # in row 0), where the table's entries stop; the count goes on from each. (The
    # wall in row 2 stops the straight grid line and the other two-leg path.)
    grid, start, goal = art(
        """
        .@.@.@.@....
        ..........G.
        S..@........
        """
    )
    result = find_path(grid, start, goal)
    assert (result.status, result.expanded) == ("found", 0)
    assert result.waypoints.tolist() == [[0, 2], [1, 1], [10, 1]]


def test_a_two_leg_path_grows_the_path_buffers() -> None:
    # A two-leg path past the path buffers: the batch stops (its length is the
    # straight line's, whose room is checked first), grows them and resumes there.
    rows = ["." * 300 for _ in range(40)]
    rows[20] = "." * 150 + "@" + "." * 149  # no straight grid line from (0, 0)
    grid = GridMap.from_rows(rows)
    grid.prepare_jumps()
    scratch = Scratch(grid.padded.size)
    scratch.paths = PathBuffers(1, 8)
    ends = [((0, 0), (1, 0)), ((0, 0), (299, 39)), ((299, 0), (0, 39))]
    answers = find_paths(grid, [PathQuery(*pair) for pair in ends], scratch=scratch)
    for (start, goal), answer in zip(ends[1:], answers[1:], strict=True):
        assert not isinstance(answer, Exception)
        assert (answer.status, answer.expanded) == ("found", 0)
        assert answer.cells[0].tolist() == list(start)
        assert answer.cells[-1].tolist() == list(goal)
        assert len(answer.cells) == 300
        assert close(walk_cost(grid, answer.cells, "no_corner_cutting"), answer.cost or 0)
        assert close(answer.cost or 0, 260 + 39 * 2**0.5)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_jps_queues_jump_points_of_equal_f_on_the_stack(mode: str) -> None:
    # Jump points queued with the f being expanded skip the heap (the equal-f stack);
    # the costs are those of the plain heap (tie_break=False: no stack), and a
    # weighted search (f not monotone) leaves the stack alone.
    grid = random_grid(np.random.default_rng(5), 90, 70, 0.25, None)
    grid.prepare_jumps(max_table_bytes=MODES[mode])
    cells = walkable_cells(grid)
    rng = np.random.default_rng(6)
    pairs = [tuple(cells[int(i)] for i in rng.integers(len(cells), size=2)) for _ in range(40)]
    scratch = Scratch(grid.padded.size)

    def answers(**options: object) -> list[PathResult]:
        scratch.stack[:] = -1
        found = find_paths(grid, [PathQuery(s, g, options=SearchOptions(algorithm="jps", **options))  # type: ignore[arg-type]
                                  for s, g in pairs], scratch=scratch)  # fmt: skip
        assert all(isinstance(answer, PathResult) for answer in found)
        return found  # type: ignore[return-value]

    stacked = answers()
    assert (scratch.stack != -1).sum() > 0
    plain = answers(tie_break=False)
    assert (scratch.stack == -1).all()
    for one, other in zip(stacked, plain, strict=True):
        assert one.status == other.status
        if one.status == "found":
            assert close(one.cost or 0, other.cost or 0)
            assert close(walk_cost(grid, one.cells, "no_corner_cutting"), one.cost or 0)
    answers(weight=1.5)
    assert (scratch.stack == -1).all()


def _jps_costs(grid: GridMap, pairs: list[tuple[tuple[int, int], tuple[int, int]]], *,
               walk: bool) -> tuple[list[float | None], int]:  # fmt: skip
    """``jps`` itself (octile, weight 1, no budget) from each start to its goal with
    ``walk`` as given: each cost (None: no path), and the expansions in all."""
    scratch = Scratch(grid.padded.size)
    no_rows = np.zeros((1, 1), np.float32)
    no_row = np.zeros(1, np.float32)
    landmarks = (no_rows, no_rows, no_row, no_row, scratch.active, 0, 0.0)  # none
    costs: list[float | None] = []
    expanded = 0
    for i, (start, goal) in enumerate(pairs):
        goal_cell = grid.flat_index(*goal)
        status, _, count, _ = jps(
            Terrain(grid.padded, grid.padded_width, 1.0),
            JumpTables(grid.jump_bits, grid.jump_table),
            Task(grid.flat_index(*start), goal_cell, 0, HEURISTIC_OCTILE, 1.0, 1 << 62, True,
                 True, scratch.clock),
            Nodes(i + 1, scratch.stamp, scratch.g, scratch.parent, scratch.heap, scratch.stack),
            landmarks, np.zeros(0, np.int32), walk,
        )  # fmt: skip
        costs.append(float(scratch.g[goal_cell]) if status == STATUS_FOUND else None)
        expanded += count
    return costs, expanded


@pytest.mark.parametrize(("shape", "density"), [((70, 20), 0.1), ((150, 130), 0.25)])
def test_jps_plus_queueing_turning_cells_finds_the_default_costs(
    shape: tuple[int, int], density: float
) -> None:
    # ``walk=False`` (JPS+: a diagonal's turning cells queued, as warthog's JPS+ does;
    # the comparison benchmark runs it) and the default JPS2+ walk find A*'s costs; the
    # walk expands fewer jump points, each doing the work of several.
    width, height = shape
    rng = np.random.default_rng(width + height)
    grid = random_grid(rng, width, height, density, None)
    grid.prepare_jumps(max_table_bytes=MODES["table"])
    cells = walkable_cells(grid)
    pairs = [(cells[int(a)], cells[int(b)]) for a, b in rng.integers(len(cells), size=(30, 2))]
    walked, walked_expanded = _jps_costs(grid, pairs, walk=True)
    queued, queued_expanded = _jps_costs(grid, pairs, walk=False)
    for (start, goal), one, other in zip(pairs, walked, queued, strict=True):
        reference = find_path(grid, start, goal, algorithm="astar").cost
        if reference is None:
            assert (one, other) == (None, None), (start, goal)
            continue
        for found in (one, other):
            assert found is not None, (start, goal)
            assert close(found, reference), (start, goal)
    assert queued_expanded > walked_expanded
