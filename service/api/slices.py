"""A batch answered in slices of search-thread time.

A batch runs on one search thread. Without slices, one batch of a thousand long
searches holds its thread for minutes while every other request waits behind it, and
goes on after its client has hung up. :class:`SlicedBatch` answers a batch a chunk of
queries at a time (one engine call each) and stops once a slice's CPU time is spent; the
route then queues the next slice behind the work waiting by then, and drops the batch
if its client is gone (``routes/paths.py``).

What a slice never changes: the answers. The batch keeps its map revision (the map
pinned from the first slice to the last), its queries are answered whole, and the
queries sharing a goal (answered from one search, ``shared_goal_queries``) are run in
one chunk, so each answer is the one an unsliced batch gives; the paths of all slices
count together against ``GRIDPATH_MAX_PATH_CELLS``. Only ``elapsed_us``, each answer's
share of the batch's search time, is measured over every chunk.
"""

import bisect
import time
from collections import Counter
from contextlib import ExitStack
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from service.api.pathing import (
    CellBatch,
    InlineBound,
    Query,
    Tally,
    cell_groups,
    run_batch,
    run_cells,
    unstarted,
)
from service.engine import (
    BatchPolicy,
    GridMap,
    deadline_scope,
    path_cell_scope,
    scope_spent,
    written_path_cells,
)
from service.engine.sharing import sharing_of

#: Queries in a batch's first chunk when nothing tells their cost: few, so a batch of
#: long searches overruns its first slice by little.
FIRST_CHUNK: Final = 16
#: The most queries in a first chunk sized by the batches before (``query_ns``): each
#: engine call costs tens of microseconds of its own, so a game tick's batch of short
#: queries is best answered in one; and one batch of long searches after many short
#: ones overruns its first slice by no more than this many.
FIRST_CHUNK_MAX: Final = 256
#: A chunk holds at most this many times the queries of the one before: a batch whose
#: first queries were short does not bet a whole slice on the rest being as short.
CHUNK_GROWTH: Final = 16
#: A batch's CPU time per expansion is a figure to bound the next one by only when its
#: queries took at least this many expansions each on average: fewer, and the fixed
#: cost of answering a query, worth about as many expansions, makes up most of it.
TIMED_EXPANSIONS: Final = 16
#: No bound on the path cells of a bounded first chunk but the request's own
#: (``GRIDPATH_MAX_PATH_CELLS``, which the engine enforces).
_ANY_CELLS: Final = 1 << 62

Answer = dict[str, Any]


class SlicedBatch:
    """One batch's progress across slices: the map it pinned, the order its queries
    run in, and the answers so far (``answers[i]``: item ``i``'s, None until run).

    ``cells`` is a ``cell_batch`` (then ``items`` is empty), or None and ``items``
    holds the resolved items (an item's error body stands in its own slot).
    ``pin`` holds the map's pin (``MapCache.acquire``); :meth:`release` lets it go.
    ``query_ns``: CPU time a query took in the batches before (:attr:`query_ns` of the
    last), which sizes the first chunk; 0: unknown. ``expansion_ns`` (CPU time an
    expansion took in them, :attr:`expansion_ns`; 0: unknown) and ``most_expanded``
    (the most expansions one query took there, :attr:`most_expanded`) bound that
    chunk's searches (``_bound``). ``deadline_ns``: the batch's deadline.
    """

    def __init__(self, grid: GridMap, cells: CellBatch | None, items: list[Query | Answer],
                 *, pin: ExitStack, policy: BatchPolicy, query_ns: int = 0,
                 expansion_ns: int = 0, most_expanded: int = 0,
                 deadline_ns: int = 0) -> None:  # fmt: skip
        self.grid = grid
        #: When the batch's searches stop (``time.monotonic_ns``; 0: never): see
        #: :meth:`run_slice` and :meth:`expire`.
        self.deadline_ns = deadline_ns
        self.expired = False  # the deadline came: the queries not run answer without
        self._cells = cells
        self._items = items
        self._pin = pin
        self._policy = policy
        #: Queries to answer (an item's error body is its answer already).
        self.queries = (sum(isinstance(item, Query) for item in items) if cells is None
                        else cells.cells.shape[0])  # fmt: skip
        self.answers: list[Answer | None] = (
            [None if isinstance(item, Query) else item for item in items]
            if cells is None else [None] * self.queries
        )  # fmt: skip
        self._order: tuple[npt.NDArray[np.int64], list[int] | None] | None = None
        self.done = 0  # queries answered, in ``run_order``'s order
        self.chunks = 0
        self.path_cells = 0  # written so far, by every slice
        self.spent = False  # whether a path did not fit: the queries after it are not searched
        self.search_ns = 0
        self.cpu_ns = 0  # spent on the searches, by every slice
        self._tally = Tally()  # the expansions of the answers so far
        # Bounded first chunks not answered: a search needed more (``_bound``), or the
        # bounded call cannot answer such a batch (a field group, a goal set, an agent
        # size, options the map has not answered yet).
        self.bounded_misses = 0
        self._last = 0  # queries in the last chunk
        self._each_ns = query_ns  # CPU time per query: the last chunk's, or a guess
        self._expansion_ns = expansion_ns
        self._most_expanded = most_expanded

    @property
    def finished(self) -> bool:
        return self.expired or self.done == self.queries

    @property
    def query_ns(self) -> int:
        """CPU time per query answered so far (0 before any)."""
        return self.cpu_ns // self.done if self.done else 0

    @property
    def expanded(self) -> int:
        """Expansions of the searches so far (those of fields left out)."""
        return self._tally.total

    @property
    def most_expanded(self) -> int:
        """The most expansions one query took so far."""
        return self._tally.most

    @property
    def expansion_ns(self) -> int:
        """CPU time per expansion so far; 0 until the queries answered took at least
        ``TIMED_EXPANSIONS`` each on average."""
        if not self.done or self.expanded < TIMED_EXPANSIONS * self.done:
            return 0
        return self.cpu_ns // self.expanded

    def run_slice(self, quantum_ns: int) -> None:
        """Answer chunks of queries until the batch is done or this thread has spent
        ``quantum_ns`` of CPU time on it in this call (one chunk at least: the batch
        always moves on). CPU time, not wall time: under load a thread waits for the
        interpreter lock, while others work, and a busy server would otherwise cut
        short batches into slices that each wait at the queue's end again.

        Past the batch's deadline the search under way stops, and the batch is over:
        the queries not answered by then are answered ``deadline`` (:meth:`expire`)."""
        if self.deadline_ns:
            with deadline_scope(self.deadline_ns):
                self._run_slice(quantum_ns)
        else:
            self._run_slice(quantum_ns)

    def expire(self) -> None:
        """Finish the batch at its deadline: every query not answered yet answers
        ``partial``, ``deadline``, with an empty path."""
        revision = self.grid.revision
        for i, answer in enumerate(self.answers):
            if answer is None:
                self.answers[i] = unstarted(self._query(i), revision)
        self.expired = True

    def _query(self, i: int) -> Query:
        if self._cells is not None:
            return self._cells.query
        item = self._items[i]
        assert isinstance(item, Query)  # (an error body is its own answer)
        return item

    def _run_slice(self, quantum_ns: int) -> None:
        deadline = time.thread_time_ns() + quantum_ns
        while not self.finished:
            if self.deadline_ns and time.monotonic_ns() >= self.deadline_ns:
                self.expire()
                return
            began, began_cpu = time.perf_counter_ns(), time.thread_time_ns()
            size = self._chunk_size(deadline - began_cpu)
            # A request deadline before the slice's end bounds the chunk itself; a
            # bounded run that missed would have spent its time for nothing.
            due = self.deadline_ns and self.deadline_ns - time.monotonic_ns() <= quantum_ns
            bound = None if due else self._bound(size, deadline - began_cpu)
            if self.done == 0 and self.done + size >= self.queries:
                answered = self._run_whole(bound)  # the common case: as if never sliced
                end = self.queries
            else:
                order, ends = self._run_order()
                end = _chunk_end(ends, min(self.done + size, self.queries))
                answered = self._run_chunk(order[self.done : end], bound)
            now, now_cpu = time.perf_counter_ns(), time.thread_time_ns()
            self.search_ns += now - began
            self.cpu_ns += now_cpu - began_cpu
            self.chunks += 1
            if answered:
                self._last, self.done = end - self.done, end
                self._each_ns = max(1, (now_cpu - began_cpu) // self._last)
            else:  # the batches before misjudged this one: small chunks, measured
                self.bounded_misses += 1
                self._each_ns = 0
            if now_cpu >= deadline:
                return

    def take_results(self) -> list[Answer]:
        """Every item's answer, in order (once :attr:`finished`), handed over: the
        batch lets go of them and of its queries, so that they are freed where the
        caller is done with them (the search thread), not wherever the batch is
        dropped last (the event loop, where freeing thousands of objects held up
        every request)."""
        answers = [answer for answer in self.answers if answer is not None]
        if len(answers) != len(self.answers):
            raise RuntimeError(f"{len(self.answers) - len(answers)} items not answered yet")
        self.answers, self._items, self._cells, self._order = [], [], None, None
        if self.chunks > 1:  # each chunk timed its own mean: give the batch's
            each_us = self.search_ns // max(1, self.queries) // 1000
            for answer in answers:
                if "elapsed_us" in answer:
                    answer["elapsed_us"] = each_us
        return answers

    def release(self) -> None:
        """Unpin the map (idempotent)."""
        self._pin.close()

    def _chunk_size(self, left_ns: int) -> int:
        if not self._each_ns:
            return FIRST_CHUNK
        most = CHUNK_GROWTH * self._last if self._last else FIRST_CHUNK_MAX
        return max(1, min(most, left_ns // self._each_ns))

    def _bound(self, size: int, left_ns: int) -> int | None:
        """The expansions each query of a chunk of ``size`` may take, when the chunk
        was sized by the batches before (the first, of more than ``FIRST_CHUNK``
        queries); else None. What ``left_ns`` pays for at their ``expansion_ns``; when
        they gave none (their queries were short, or answered without a search),
        twice the most one of them took, so that a batch like them runs in one call.

        A batch of long searches after many short ones would otherwise run its first
        ``FIRST_CHUNK_MAX`` queries in one engine call, however long they take. Bounded,
        the call gives up when a query needs more (``run_cells`` with a bound), having
        spent about a slice at most, and the batch goes on in small chunks."""
        if self.done or self._last or size <= FIRST_CHUNK or not self._each_ns:
            return None
        if self._expansion_ns:
            return max(1, left_ns // (size * self._expansion_ns))
        return max(1, 2 * self._most_expanded)

    def _run_order(self) -> tuple[npt.NDArray[np.int64], list[int] | None]:
        if self._order is None:  # only for a batch of more than one chunk
            cells = self._cells
            # The engine's own groups for a batch of cells, when it can tell.
            groups = None if cells is None else cell_groups(self.grid, cells, policy=self._policy)
            if groups is not None:
                self._order = _grouped_rows(self.queries, groups)
            else:
                self._order = run_order(cells, self._items, sharing_of(self._policy).fewest)
        return self._order

    def _run_whole(self, bound: int | None) -> bool:
        """Answer every query; False (nothing answered) when one needs more than
        ``bound`` expansions."""
        answers = self._answered(self._cells, self._items, bound)
        if answers is None:
            return False
        self.answers = list(answers)
        return True

    def _run_chunk(self, positions: npt.NDArray[np.int64], bound: int | None) -> bool:
        """Answer the queries at ``positions``; as :meth:`_run_whole`."""
        if self._cells is not None:
            part = CellBatch(self._cells.cells[positions], self._cells.query)
            answers = self._answered(part, [], bound)
        else:
            answers = self._answered(None, [self._items[i] for i in positions.tolist()], bound)
        if answers is None:
            return False
        for i, answer in zip(positions.tolist(), answers, strict=True):
            self.answers[i] = answer
        return True

    def _answered(self, cells: CellBatch | None, items: list[Query | Answer],
                  bound: int | None) -> list[Answer] | None:  # fmt: skip
        """The answers to ``cells``, or else to ``items``, in one engine call; their
        paths counted with those of the chunks before. With ``bound``, None when a
        query needs more expansions than that (or when the bounded call cannot answer
        the batch at all: see ``run_cells``)."""
        # (A query past the path cell limit answers TooBig in its slot, as in the full
        # run: a bounded run that cut a search short before it answers None.)
        limit = None if bound is None else InlineBound(bound, _ANY_CELLS)
        with path_cell_scope(earlier=self.path_cells, spent=self.spent):
            if cells is not None:
                answers = run_cells(self.grid, cells, policy=self._policy, tally=self._tally,
                                    bound=limit)  # fmt: skip
            else:
                answers = run_batch(self.grid, items, policy=self._policy, tally=self._tally,
                                    bound=limit)  # fmt: skip
            if answers is None:
                return None
            self.path_cells = written_path_cells()
            self.spent = scope_spent()
        return answers


def _chunk_end(ends: list[int] | None, wanted: int) -> int:
    """The first end of a group (``run_order``) at or after ``wanted``."""
    return wanted if ends is None else ends[bisect.bisect_left(ends, wanted)]


def run_order(cells: CellBatch | None, items: list[Query | Answer], least: int
              ) -> tuple[npt.NDArray[np.int64], list[int] | None]:  # fmt: skip
    """The positions of a batch's queries in the order they run, and the ends (in that
    order, ascending, the last one its length) of the groups a chunk may not split;
    None: any end will do.

    The engine answers the queries of a batch that share a goal together when they
    come from ``least`` distinct starts or more: such a goal's queries
    are put side by side, a group, so that a chunk holds all of them or none. The
    other queries run first, and a chunk may end after any of them: one start asked a
    thousand times is no group, and makes no chunk of a thousand. A group's key (the
    goal, its policy and agent size) may be finer than the engine's only where a goal
    set is named two ways; the answers' costs are the same then too."""
    if cells is not None:
        count = cells.cells.shape[0]
        if least <= 0 or count < least:
            return np.arange(count, dtype=np.int64), None
        goals = (cells.cells[:, 2] << 32) ^ cells.cells[:, 3]  # one int64 a cell (x, y < 2**31)
        starts = (cells.cells[:, 0] << 32) ^ cells.cells[:, 1]
        return _grouped(goals.tolist(), starts.tolist(), least)
    queries = [i for i, item in enumerate(items) if isinstance(item, Query)]
    if least <= 0 or len(queries) < least:
        return np.array(queries, dtype=np.int64), None
    keys = [_goal_key(items[i]) for i in queries]
    order, ends = _grouped(keys, [_start_key(items[i]) for i in queries], least)
    return np.array(queries, dtype=np.int64)[order], ends


def _grouped_rows(count: int, groups: list[npt.NDArray[np.int64]]
                  ) -> tuple[npt.NDArray[np.int64], list[int] | None]:  # fmt: skip
    """``run_order`` of ``count`` queries of which ``groups`` (row indices) are answered
    together: the others first, any of them an end, then each group whole."""
    if not groups:
        return np.arange(count, dtype=np.int64), None
    grouped = np.concatenate(groups)
    free = np.ones(count, np.bool_)
    free[grouped] = False
    others = np.flatnonzero(free)
    ends = list(range(1, others.shape[0] + 1))
    ends += (others.shape[0] + np.cumsum([group.shape[0] for group in groups])).tolist()
    return np.concatenate([others, grouped]).astype(np.int64), ends


def _grouped(goals: list[Any], starts: list[Any], least: int
             ) -> tuple[npt.NDArray[np.int64], list[int] | None]:  # fmt: skip
    """``run_order`` of queries to ``goals`` (sortable) from ``starts``, as positions
    among them."""
    starts_of = Counter(goal for goal, _ in set(zip(goals, starts, strict=True)))
    members: dict[Any, list[int]] = {}
    for i, goal in enumerate(goals):
        if starts_of[goal] >= least:
            members.setdefault(goal, []).append(i)
    groups = [np.array(members[goal], np.int64) for goal in sorted(members)]
    return _grouped_rows(len(goals), groups)


def _start_key(item: Query | Answer) -> str:
    """A query's start, hashable (``repr``: it may be a list)."""
    assert isinstance(item, Query)
    return repr(item.spec.start)


def _goal_key(item: Query | Answer) -> tuple[str, ...]:
    """What the engine groups a query's goal by: the goal (or goal set) and the policy,
    on the grid of its agent size (``repr``: goals may be lists, which do not hash)."""
    assert isinstance(item, Query)
    spec = item.spec
    return (repr(spec.goal), repr(spec.goals), repr(spec.goal_region),
            spec.options.diagonal, str(spec.options.agent_size), repr(item.profile))  # fmt: skip
