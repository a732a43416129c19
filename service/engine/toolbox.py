"""The classic A* variants, run only when a query asks for one (``auto`` never picks
them): bidirectional A*, dynamic weighting, beam search and IDA*; and the sliced
(resumable) search they share a kernel with.

============== ============================================================
variant        what it guarantees
============== ============================================================
bidirectional  exact with an admissible heuristic (front-to-end, stopped once
               the best meeting costs no more than either frontier's least
               ``f``); with ``weight`` w at most w times optimal
dynamic        ``weight_schedule: dynamic``: ``f = g + w(n) * h``, ``w`` falling
               from ``weight`` at the start to 1 at the fewest moves from
               start to goal; at most ``weight`` times optimal
beam           not exact: at most ``beam_width`` open cells, the worst dropped;
               may miss a path that exists (``partial_reason: beam``)
ida            exact with an admissible heuristic and weight 1; memory in the
               path's length, but time exponential in the number of
               distinct ``f`` values on a grid (it revisits cells every
               iteration): bound it with ``max_expansions``
============== ============================================================

Every variant takes one goal, the plain heuristics (not the cluster or landmark
tables), every diagonal policy, unit sizes and profiles, and a trace; none runs on a
map with links. Starts and goals on different islands answer ``no_path`` with no
search.
"""

import threading
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.checks import check_query
from service.engine.errors import UnsupportedAlgorithmError
from service.engine.grid import GridMap
from service.engine.kernels.bidirectional import bidirectional, meeting_length, write_meeting_path
from service.engine.kernels.bundles import Nodes
from service.engine.kernels.codes import CLOSED, SQRT2, STATUS_FOUND, STATUS_NO_PATH
from service.engine.kernels.ida import ida, write_cells
from service.engine.kernels.paths import (
    polyline_length,
    turning_points,
)
from service.engine.options import DIAGONALS, VARIANTS, AlgorithmUsed
from service.engine.queries import UNLIMITED, CheckedQuery, PathQuery, SearchOptions
from service.engine.result import PathResult, SearchTrace
from service.engine.scratch import take_path_cells
from service.engine.slicing import OUTCOMES, Slice, SlicedSearch, chain_cells, search_task

#: Bytes a bidirectional search's two sides take per padded cell, and the most a
#: thread keeps between searches; the last generation before the stamps are cleared.
PAIR_CELL_BYTES: Final = 2 * (4 + 8 + 4 + 4 + 4 + 16)
KEPT_PAIR_BYTES: Final = 64 * 1024 * 1024
MAX_GENERATION: Final = 2**31 - 2

#: Heuristics the variants take: the plain distances.
PLAIN_HEURISTICS: Final = frozenset({"octile", "manhattan", "chebyshev", "euclidean", "zero"})


def uses_toolbox(options: SearchOptions) -> bool:
    """Whether a query with ``options`` runs here rather than in the batch kernels."""
    return options.algorithm in VARIANTS or options.weight_schedule == "dynamic"


def check_variant(grid: GridMap, query: PathQuery, max_goals: int = UNLIMITED) -> CheckedQuery:
    """The full check of a variant's query: what the variant needs (one goal, a plain
    heuristic, no links, no ``nearest``), then the checks of every query
    (``check_query``: bounds, walkability, room for the unit), on the grid of its
    unit size and profile.

    Raises:
        UnsupportedAlgorithmError: what the variant needs and the query lacks. And
        what ``check_query`` raises.
    """
    options = query.options
    name = options.algorithm if options.algorithm in VARIANTS else "weight_schedule 'dynamic'"
    needs = []
    if query.goal is None:
        needs.append("a single goal")
    if options.unreachable != "no_path":
        needs.append("unreachable 'no_path'")
    if options.heuristic not in PLAIN_HEURISTICS:
        needs.append(f"a plain heuristic ({', '.join(sorted(PLAIN_HEURISTICS))})")
    if grid.links is not None:
        needs.append("a map without links")
    if options.weight_schedule == "dynamic" and options.algorithm not in ("astar", "auto", "beam"):
        needs.append("algorithm 'astar', 'auto' or 'beam' with weight_schedule 'dynamic'")
    if needs:
        shown = name if name.startswith("weight") else f"algorithm {name!r}"
        raise UnsupportedAlgorithmError(f"{shown} needs {' and '.join(needs)}")
    plain = options._replace(algorithm="astar", weight_schedule="static", beam_width=None)
    return check_query(grid, query._replace(options=plain), max_goals)


def sliced_search(grid: GridMap, query: PathQuery) -> SlicedSearch | PathResult:
    """A resumable search of ``query`` (``algorithm`` ``astar``, ``auto`` or ``beam``,
    any weight schedule), or its answer when none is needed (start is goal, or they
    lie on different islands).

    Raises:
        UnsupportedAlgorithmError: an algorithm that cannot be sliced; what
        ``check_variant`` raises.
    """
    options = query.options
    if options.algorithm not in ("astar", "auto", "beam"):
        raise UnsupportedAlgorithmError(
            f"a resumable search runs algorithm 'astar', 'auto' or 'beam', not "
            f"{options.algorithm!r}"
        )
    checked = check_variant(grid, query)
    trivial = _trivial(checked, options)
    if trivial is not None:
        return trivial
    return SlicedSearch(checked.grid, checked.source, checked.target, options)


def find_variant(grid: GridMap, query: PathQuery, *, max_goals: int = UNLIMITED,
                 trace: int = 0) -> PathResult:  # fmt: skip
    """Answer ``query`` with the variant its options name (``uses_toolbox``); trace
    the first ``trace`` expansions.

    Raises:
        UnsupportedAlgorithmError, PathTooLongError; what ``check_query`` raises.
    """
    options = query.options
    checked = check_variant(grid, query, max_goals)
    trivial = _trivial(checked, options)
    if trivial is not None:
        if trace:
            trivial.trace = _trace(checked.grid, np.empty(0, np.int32), 0)
        return trivial
    if options.algorithm == "bidirectional":
        return _bidirectional(checked, options, trace)
    if options.algorithm == "ida":
        return _ida(checked, options, trace)
    search = SlicedSearch(checked.grid, checked.source, checked.target, options)
    piece = search.advance(options.max_expansions, trace=trace)
    return slice_result(search, piece, traced=trace > 0)


def slice_result(search: SlicedSearch, piece: Slice, *, traced: bool = False) -> PathResult:
    """The ``PathResult`` of one slice of ``search`` (``expanded``: the slice's;
    ``traced``: with the slice's trace)."""
    take_path_cells(piece.cells.shape[0])
    used: AlgorithmUsed = "beam" if search.options.algorithm == "beam" else "astar"
    result = path_result(search.grid, search.options, piece.cells, piece.cost, piece.status,
                     piece.partial_reason, piece.expanded, used)  # fmt: skip
    result.reopened = piece.reopened
    if traced:
        result.trace = _trace(search.grid, piece.trace, piece.expanded)
    return result


def _trivial(checked: CheckedQuery, options: SearchOptions) -> PathResult | None:
    """The answer of a query that needs no search: start is goal (found, cost 0), or
    start and goal on different islands (no_path)."""
    grid, source, target = checked.grid, checked.source, checked.target
    used: AlgorithmUsed = "astar" if options.algorithm == "auto" else options.algorithm
    if source == target:
        width = grid.padded_width
        cells = np.array([[source % width - 1, source // width - 1]], np.int32)
        return path_result(grid, options, cells, 0.0, "found", None, 0, used)
    labels = grid.reach_islands.labels[1 if options.diagonal == "always" else 0]
    if labels[source] != labels[target]:
        nowhere = np.empty((0, 2), np.int32)
        return path_result(grid, options, nowhere, None, "no_path", None, 0, used)
    return None


def _nodes(cells: int) -> Nodes:
    heap = (np.empty(cells, np.int32), np.empty((cells, 2), np.float64),
            np.full(cells, CLOSED, np.int32))  # fmt: skip
    return Nodes(0, np.zeros(cells, np.int32), np.empty(cells, np.float64),
                 np.empty(cells, np.int32), heap, np.empty(0, np.int32))  # fmt: skip


class _Pair(threading.local):
    """Per thread: the two sides' scratch of the last bidirectional search, kept for
    the next on a map of as many cells when small enough (``KEPT_PAIR_BYTES``): a
    fresh pair costs as much as a short search. Stamps make it valid again without
    clearing (as ``scratch`` does for the batch kernels)."""

    cells = 0
    nodes: tuple[Nodes, Nodes] | None = None


_pair = _Pair()


def _node_pair(cells: int) -> tuple[Nodes, Nodes]:
    """Scratch for both sides of a search on a map of ``cells`` padded cells, each
    with a generation no stamp holds yet."""
    kept = _pair.nodes
    if kept is None or _pair.cells != cells or kept[0].gen >= MAX_GENERATION:
        kept = (_nodes(cells), _nodes(cells))
    kept = (kept[0]._replace(gen=kept[0].gen + 1), kept[1]._replace(gen=kept[1].gen + 1))
    if cells * PAIR_CELL_BYTES <= KEPT_PAIR_BYTES:
        _pair.cells, _pair.nodes = cells, kept
    return kept


def _bidirectional(checked: CheckedQuery, options: SearchOptions, trace: int) -> PathResult:
    terrain, task = search_task(checked.grid, checked.source, checked.target, options,
                                options.max_expansions)  # fmt: skip
    cells = checked.grid.padded.size
    forward, backward = _node_pair(cells)
    traced = np.empty(trace, np.int32)
    code, meet, best, expanded = bidirectional(terrain, task, forward, backward, traced)
    status, reason = OUTCOMES[int(code)]
    width = checked.grid.padded_width
    if code == STATUS_FOUND:
        count = meeting_length(forward.parent, backward.parent, meet)
        path = np.empty((count, 2), np.int32)
        write_meeting_path(forward.parent, backward.parent, width, meet, path)
    elif code == STATUS_NO_PATH:
        path = np.empty((0, 2), np.int32)
    else:
        path = chain_cells(forward.parent, width, int(best))
    return _finished(checked, options, path, status, reason, int(expanded), "bidirectional",
                     traced)  # fmt: skip


def _ida(checked: CheckedQuery, options: SearchOptions, trace: int) -> PathResult:
    terrain, task = search_task(checked.grid, checked.source, checked.target, options,
                                options.max_expansions)  # fmt: skip
    cells = checked.grid.padded.size
    stack = (np.empty(cells, np.int32), np.empty(cells, np.int8), np.empty(cells, np.float64),
             np.zeros(cells, np.uint8))  # fmt: skip
    best = np.empty(cells, np.int32)
    traced = np.empty(trace, np.int32)
    code, length, best_length, expanded, _ = ida(terrain, task, stack, best, traced)
    status, reason = OUTCOMES[int(code)]
    padded = stack[0][:length] if code == STATUS_FOUND else best[:best_length]
    if code == STATUS_NO_PATH:
        padded = padded[:0]
    path = np.empty((padded.size, 2), np.int32)
    write_cells(padded, padded.size, checked.grid.padded_width, path)
    return _finished(checked, options, path, status, reason, int(expanded), "ida", traced)


def _finished(checked: CheckedQuery, options: SearchOptions, path: npt.NDArray[np.int32],
              status: str, reason: str | None, expanded: int, used: AlgorithmUsed,
              traced: npt.NDArray[np.int32]) -> PathResult:  # fmt: skip
    take_path_cells(path.shape[0])
    grid = checked.grid
    cost = None if status == "no_path" else walk_cost(grid, path)
    result = path_result(grid, options, path, cost, status, reason, expanded, used)
    if traced.size:  # (a trace asked for has room for one cell at least)
        result.trace = _trace(grid, traced[: min(expanded, traced.size)], expanded)
    return result


def walk_cost(grid: GridMap, cells: npt.NDArray[np.integer]) -> float:
    """The cost of walking ``cells`` ((n, 2) ``(x, y)``) step by step from the first,
    summed in that order, as a search's ``g`` sums it: each step's length times the
    cost of the cell entered."""
    if cells.shape[0] < 2:
        return 0.0
    steps = np.abs(np.diff(cells, axis=0)).sum(axis=1)
    lengths = np.where(steps == 2, SQRT2, 1.0)
    entered = grid.costs[cells[1:, 1], cells[1:, 0]].astype(np.float64)
    return float(np.cumsum(lengths * entered)[-1])


def path_result(grid: GridMap, options: SearchOptions, cells: npt.NDArray[np.int32],
            cost: float | None, status: str, reason: str | None, expanded: int,
            used: AlgorithmUsed) -> PathResult:  # fmt: skip
    """The result of a search that found (n, 2) ``cells`` on ``grid`` (the searched
    grid: the unit's view), their waypoints and length made here."""
    found = status == "found"
    return PathResult(
        status=status,  # type: ignore[arg-type]
        cost=cost,
        cells=cells,
        waypoints=cells[turning_points(cells)] if cells.shape[0] else cells,
        length=float(polyline_length(cells)) if cells.shape[0] > 1 else 0.0,
        expanded=expanded,
        heuristic_used=options.heuristic,
        algorithm_used=used,
        grid=grid,
        diagonal_code=DIAGONALS[options.diagonal],
        reached=(int(cells[-1, 0]), int(cells[-1, 1])) if found else None,
        partial_reason=reason,  # type: ignore[arg-type]
    )


def _trace(grid: GridMap, cells: npt.NDArray[np.int32], expanded: int) -> SearchTrace:
    width = grid.padded_width
    points = np.empty((cells.size, 2), np.int32)
    points[:, 0] = cells % width - 1
    points[:, 1] = cells // width - 1
    return SearchTrace(expanded=points, cut=expanded > cells.size)
