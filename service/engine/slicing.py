"""Sliced searches: one A* search spread over several calls (Detour's
``initSlicedFindPath`` / ``updateSlicedFindPath``), and the two variants the same
kernel runs, dynamic weighting and beam search (``kernels.sliced``).

A ``SlicedSearch`` owns its whole state (``bundles.SlicedState``); each
:meth:`SlicedSearch.advance` runs at most its budget more expansions and answers as a
search that stopped there would (``partial``, the path to the cell nearest the goal
so far). Cut into any slices, it expands the cells of one uninterrupted search, in
the same order, and ends with the same path and cost.
"""

from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.grid import GridMap
from service.engine.kernels.bundles import Schedule, SlicedState, Task, Terrain
from service.engine.kernels.clock import CLOCK_SLOTS
from service.engine.kernels.codes import (
    DIAGONAL_NEVER,
    STATUS_BEAM,
    STATUS_DEADLINE,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.paths import chain_length, write_chain
from service.engine.kernels.sliced import COUNT_SLOTS, EXPANDED, MARK_SLOTS, REOPENED, UNSEEN
from service.engine.kernels.sliced import sliced as sliced_kernel
from service.engine.options import DIAGONALS, HEURISTICS, PartialReason, Status
from service.engine.queries import DEFAULT_BEAM_WIDTH, UNLIMITED, SearchOptions
from service.engine.scratch import current_deadline

#: Bytes a sliced search holds per padded cell: ``g``, ``parent``, ``depth``, the
#: heap's position and (without a beam) its slot of node and key.
CELL_BYTES: Final = 8 + 4 + 4 + 4 + 4 + 16

#: What a kernel status says of an answer: its status and ``partial_reason``.
OUTCOMES: Final[dict[int, tuple[Status, PartialReason | None]]] = {
    STATUS_FOUND: ("found", None),
    STATUS_PARTIAL: ("partial", "budget"),
    STATUS_DEADLINE: ("partial", "deadline"),
    STATUS_BEAM: ("partial", "beam"),
    STATUS_NO_PATH: ("no_path", None),
}


@dataclass(frozen=True, slots=True)
class Slice:
    """What one slice of a sliced search found.

    Attributes:
        status, partial_reason: as a ``PathResult``'s.
        cells: (n, 2) int32 ``(x, y)`` on the searched grid, start first: the path
            to the goal (found), or to the expanded cell nearest it so far; (0, 2)
            for no_path.
        cost: the cost of ``cells`` (None for no_path).
        expanded: this slice's expansions; ``total``: the search's so far.
        reopened: the search's reopenings so far.
        trace: (m,) int32 padded cells this slice expanded first (empty: untraced).
    """

    status: Status
    partial_reason: PartialReason | None
    cells: npt.NDArray[np.int32]
    cost: float | None
    expanded: int
    total: int
    reopened: int
    trace: npt.NDArray[np.int32]


@dataclass(eq=False, slots=True)
class SlicedSearch:
    """One search from ``source`` to ``target`` (padded cells of ``grid``, both
    walkable, different) under ``options`` (a plain heuristic; ``algorithm``
    ``beam`` bounds the open list; ``weight_schedule`` ``dynamic`` weights it), with
    all its state. Not thread-safe: one slice at a time."""

    grid: GridMap
    source: int
    target: int
    options: SearchOptions
    state: SlicedState = field(init=False)
    schedule: Schedule = field(init=False)
    finished: bool = False

    def __post_init__(self) -> None:
        cells = self.grid.padded.size
        beam = 0
        if self.options.algorithm == "beam":
            beam = self.options.beam_width or DEFAULT_BEAM_WIDTH
        capacity = min(cells, beam) if beam else cells
        heap = (np.empty(capacity, np.int32), np.empty((capacity, 2), np.float64),
                np.full(cells, UNSEEN, np.int32))  # fmt: skip
        self.state = SlicedState(np.empty(cells, np.float64), np.empty(cells, np.int32),
                                 np.empty(cells, np.int32), heap,
                                 np.zeros(COUNT_SLOTS, np.int64),
                                 np.zeros(MARK_SLOTS, np.float64))  # fmt: skip
        dynamic = self.options.weight_schedule == "dynamic"
        self.schedule = Schedule(dynamic, self._horizon(), beam)

    def _horizon(self) -> int:
        """The fewest moves from source to target (the depth where a dynamic weight
        reaches 1): Manhattan when 4-connected, Chebyshev otherwise."""
        width = self.grid.padded_width
        dx = abs(self.source % width - self.target % width)
        dy = abs(self.source // width - self.target // width)
        return dx + dy if DIAGONALS[self.options.diagonal] == DIAGONAL_NEVER else max(dx, dy)

    @property
    def nbytes(self) -> int:
        """Bytes the search holds."""
        heap = self.state.heap
        return sum(a.nbytes for a in (self.state.g, self.state.parent, self.state.depth,
                                      heap[0], heap[1], heap[2]))  # fmt: skip

    @property
    def expanded(self) -> int:
        """Expansions of every slice so far."""
        return int(self.state.counts[EXPANDED])

    def advance(self, budget: int | None = None, *, trace: int = 0) -> Slice:
        """Run at most ``budget`` more expansions (None: to the end), within the
        deadline of the ``deadline_scope`` under way; trace the first ``trace``.

        Raises:
            RuntimeError: the search has finished (found, no_path, or a beam that
                emptied): it has nothing more to do.
        """
        if self.finished:
            raise RuntimeError("this sliced search has finished")
        terrain, task = search_task(self.grid, self.source, self.target, self.options, budget)
        traced = np.empty(trace, np.int32)
        code, end, expanded = sliced_kernel(terrain, task, self.schedule, self.state, traced)
        status, reason = OUTCOMES[int(code)]
        self.finished = status != "partial" or reason == "beam"
        counts = self.state.counts
        if status == "no_path":
            cells, cost = np.empty((0, 2), np.int32), None
        else:
            cells = chain_cells(self.state.parent, self.grid.padded_width, int(end))
            cost = float(self.state.g[end])
        return Slice(status, reason, cells, cost, int(expanded), int(counts[EXPANDED]),
                     int(counts[REOPENED]), traced[: min(int(expanded), trace)])  # fmt: skip


def search_task(grid: GridMap, source: int, target: int, options: SearchOptions,
                budget: int | None) -> tuple[Terrain, Task]:  # fmt: skip
    """A search's terrain and task from ``source`` to ``target`` (padded cells) under
    ``options``: at most ``budget`` expansions (None: no bound), within the deadline
    of the ``deadline_scope`` under way."""
    clock = np.zeros(CLOCK_SLOTS, np.int64)
    clock[0] = current_deadline()
    task = Task(source, target, DIAGONALS[options.diagonal], HEURISTICS[options.heuristic],
                options.weight, UNLIMITED if budget is None else budget, options.tie_break,
                False, clock)  # fmt: skip
    return Terrain(grid.padded, grid.padded_width, grid.min_cost), task


def chain_cells(parent: npt.NDArray[np.int32], width: int, end: int) -> npt.NDArray[np.int32]:
    """(n, 2) int32 ``(x, y)`` of the ``parent`` chain from its start to ``end``
    (``width``: the padded width)."""
    count = chain_length(parent, end)
    cells = np.empty((count, 2), np.int32)
    write_chain(parent, width, end, count, cells, 0)
    return cells
