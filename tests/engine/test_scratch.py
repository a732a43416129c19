"""Per-thread scratch buffers: generations and thread safety."""

import re
import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from service.engine import (
    BatchPolicy,
    GridMap,
    InvalidQueryError,
    PathQuery,
    PathTooLongError,
    Scratch,
    SearchOptions,
    find_path,
    find_paths,
    find_paths_between,
    path_cell_scope,
    scope_spent,
    set_path_cell_limit,
    set_scratch_keep_bytes,
    written_path_cells,
)
from service.engine.scratch import thread_scratch
from tests.support import close, oracle_distances, random_grid


def test_generation_wraps_without_stale_cells() -> None:
    grid = random_grid(np.random.default_rng(1), 20, 20, 0.2, (1, 4))
    scratch = Scratch(grid.padded.size)
    expected = find_path(grid, (0, 0), (19, 19), scratch=scratch) if grid.walkable(0, 0) else None
    scratch.generation = np.iinfo(np.int32).max - 1
    for _ in range(4):  # crosses the wrap-around
        if expected is not None and grid.walkable(19, 19):
            again = find_path(grid, (0, 0), (19, 19), scratch=scratch)
            assert again.cost == expected.cost
    assert 1 <= scratch.generation <= 3


def test_thread_scratch_grows_for_bigger_maps_and_is_per_thread() -> None:
    small = thread_scratch(10)
    assert thread_scratch(5) is small
    big = thread_scratch(small.capacity + 1)
    assert big.capacity > small.capacity
    seen: list[Scratch] = []
    worker = threading.Thread(target=lambda: seen.append(thread_scratch(10)))
    worker.start()
    worker.join()
    assert seen[0] is not thread_scratch(10)


def in_new_thread(work: Callable[[], None]) -> None:
    """Run ``work`` on a thread of its own (so it starts with no scratch)."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # reported on the caller's thread
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]


@pytest.fixture
def scratch_keep_bytes() -> Iterator[Callable[[int], int]]:
    """Set the process-wide bound of a thread's kept scratch; put back after the test."""
    before = set_scratch_keep_bytes(1 << 62)
    yield set_scratch_keep_bytes
    set_scratch_keep_bytes(before)


def test_a_thread_keeps_no_scratch_past_the_keep_bound(
    scratch_keep_bytes: Callable[[int], int],
) -> None:
    """Guards against every thread keeping search memory for the largest map it served."""
    scratch_keep_bytes(Scratch.most_bytes(100))

    def work() -> None:
        kept = thread_scratch(100)
        assert thread_scratch(60) is kept
        big = thread_scratch(101)  # past the bound: this call's own
        assert big.capacity == 101
        again = thread_scratch(101)
        assert again is not big
        assert thread_scratch(100) is kept  # the kept one stays

    in_new_thread(work)


def test_searches_past_the_keep_bound_answer_as_with_a_kept_scratch(
    scratch_keep_bytes: Callable[[int], int],
) -> None:
    rng = np.random.default_rng(7)
    grid = random_grid(rng, 40, 40, 0.25, (1, 4))
    ys, xs = np.nonzero(grid.costs > 0)
    start = (int(xs[0]), int(ys[0]))
    expected = {policy: oracle_distances(grid, start, policy)
                for policy in ("never", "no_corner_cutting")}  # fmt: skip
    scratch_keep_bytes(0)

    def work() -> None:
        for i in range(1, 40):  # a fresh scratch every call, no stamps carried over
            goal = (int(xs[i * 7]), int(ys[i * 7]))
            for policy, heuristic in (("never", "manhattan"), ("no_corner_cutting", "octile")):
                result = find_path(grid, start, goal, diagonal=policy, heuristic=heuristic)
                optimal = expected[policy][goal[1], goal[0]]
                if np.isinf(optimal):
                    assert result.status == "no_path"
                else:
                    assert close(result.cost or 0, optimal), (goal, policy)

    in_new_thread(work)


def test_concurrent_queries_in_threads_are_correct() -> None:
    rng = np.random.default_rng(5)
    start = (0, 0)
    grids = []
    for _ in range(2):
        costs = random_grid(rng, 60, 60, 0.25, (1, 3)).costs.copy()
        costs[0, 0] = 1
        grids.append(GridMap.from_costs(costs))
    expected = [oracle_distances(grid, start, "no_corner_cutting") for grid in grids]
    errors: list[str] = []

    def work(seed: int) -> None:
        local = np.random.default_rng(seed)
        for _ in range(40):
            which = int(local.integers(2))
            grid = grids[which]  # the same map objects are shared by every thread
            ys, xs = np.nonzero(grid.costs > 0)
            i = int(local.integers(len(xs)))
            goal = (int(xs[i]), int(ys[i]))
            result = find_path(grid, start, goal)
            optimal = expected[which][goal[1], goal[0]]
            if np.isinf(optimal):
                ok = result.status == "no_path"
            else:
                ok = close(result.cost or 0, optimal)
            if not ok:
                errors.append(f"map {which} goal {goal}: {result.cost} != {optimal}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_single_query_takes_a_fresh_generation_and_the_current_buffers() -> None:
    scratch = Scratch(100)
    first, generation = scratch.single_query(False, 0)
    again, following = scratch.single_query(False, 0)
    assert (again, following) == (first, generation + 1)
    scratch.paths.grow_cells(0, 0, needed=10_000)  # a long path grew the path buffers
    grown, later = scratch.single_query(False, 0)
    assert grown is not first
    assert grown.arrays[-4] is scratch.paths.cells
    assert later == following + 1
    scratch.generation = np.iinfo(np.int32).max  # the stamps wrap: cleared, from 1 again
    assert scratch.single_query(False, 0)[1] == 1
    assert not scratch.stamp.any()


def test_a_caller_scratch_smaller_than_the_map_is_refused() -> None:
    # The kernels do not check their indices: a search of a 60 x 60 map in buffers for
    # 15 cells wrote past them (found, then the process aborted on a corrupt heap).
    small = Scratch(GridMap.from_rows(["..."]).padded.size)
    big = GridMap.from_rows(["." * 60] * 60)
    message = re.escape("scratch holds 15 padded cells; this map needs 3844 "
                        "(Scratch(grid.padded.size))")  # fmt: skip
    cells = np.array([(59, 0, 0, 59)], np.int64)
    for _ in range(2):  # options new to the map, then remembered (the lean ways)
        with pytest.raises(InvalidQueryError, match=message):
            find_path(big, (59, 0), (0, 59), scratch=small)
        with pytest.raises(InvalidQueryError, match=message):
            find_paths(big, [PathQuery((59, 0), (0, 59))], scratch=small)
        with pytest.raises(InvalidQueryError, match=message):
            find_paths_between(big, cells, scratch=small)
        find_path(big, (59, 0), (0, 59))  # remembers the plan
    fitting = Scratch(big.padded.size)
    assert find_path(big, (59, 0), (0, 59), scratch=fitting).status == "found"


@pytest.fixture
def path_cell_limit() -> Iterator[Callable[[int], int]]:
    """Set the process-wide path cell limit for a test; put back after it."""
    before = set_path_cell_limit(1 << 62)
    yield set_path_cell_limit
    set_path_cell_limit(before)


def test_one_calls_paths_are_bounded_however_they_are_asked_for(
    path_cell_limit: Callable[[int], int],
) -> None:
    grid = GridMap.from_rows(["." * 30, "." * 30])
    scratch = Scratch(grid.padded.size)
    path_cell_limit(50)
    assert len(find_path(grid, (0, 0), (29, 0), scratch=scratch).cells) == 30
    rows = np.array([[0, 0, 29, 0], [0, 1, 29, 1]])  # 60 cells together
    queries = [
        PathQuery((0, 0), (29, 0)),
        PathQuery((0, 1), (29, 1), options=SearchOptions(algorithm="astar")),
    ]
    for call in (lambda: find_paths_between(grid, rows, scratch=scratch).results(),
                 lambda: find_paths(grid, queries, scratch=scratch)):  # fmt: skip
        first, second = call()  # the first fits; the second answers why it does not
        assert len(first.cells) == 30  # type: ignore[union-attr]
        assert isinstance(second, PathTooLongError)
        assert re.match(r"^the paths asked for hold at least 60 cells, more than the 50 an "
                        "answer may hold", str(second))  # fmt: skip
    path_cell_limit(20)  # buffers grown before (or large from the start) do not let more by
    with pytest.raises(PathTooLongError):
        find_path(grid, (0, 0), (29, 0), scratch=scratch)
    big = GridMap.from_rows(["." * 20_000])
    path_cell_limit(18_000)  # past the buffers' first size (2**14): they are not grown
    with pytest.raises(PathTooLongError, match="at least 20000 cells"):
        find_path(big, (0, 0), (19_999, 0), scratch=Scratch(big.padded.size))


def test_queries_run_apart_by_one_call_are_counted_together(
    path_cell_limit: Callable[[int], int],
) -> None:
    # find_paths runs goal sets (and agent sizes, shared goals) as kernel runs of their
    # own: each was bounded alone, so a batch of them could hold the limit many times.
    grid = GridMap.from_rows(["." * 30, "." * 30])
    path_cell_limit(50)
    one = [PathQuery((0, 0), None, goals=[(29, 0), (29, 1)])]  # 30 cells
    assert len(find_paths(grid, one)[0].cells) == 30  # type: ignore[union-attr]
    kept, refused = find_paths(grid, one * 2)
    assert len(kept.cells) == 30  # type: ignore[union-attr]
    assert isinstance(refused, PathTooLongError)
    assert "at least 60 cells" in str(refused)
    assert len(find_paths(grid, one)[0].cells) == 30  # type: ignore[union-attr]


def test_a_scope_counts_what_earlier_calls_of_its_request_wrote(
    path_cell_limit: Callable[[int], int],
) -> None:
    grid = GridMap.from_rows(["." * 30, "." * 30])
    path_cell_limit(50)
    one = [PathQuery((0, 0), (29, 0))]  # 30 cells
    assert written_path_cells() == 0  # outside a scope
    with path_cell_scope(earlier=15):
        find_paths(grid, one)
        assert written_path_cells() == 45
    with path_cell_scope(earlier=25):
        (refused,) = find_paths(grid, one)
        assert isinstance(refused, PathTooLongError)
        assert "at least 55" in str(refused)
    assert written_path_cells() == 0


def test_a_finished_scopes_cells_do_not_count_against_a_later_call(
    path_cell_limit: Callable[[int], int],
) -> None:
    # A scope left its count behind on the thread: a later call outside any scope (a
    # single ``find_path``, on a server's search thread after a batch) added it to its
    # own path and was refused one it may hold.
    grid = GridMap.from_rows(["." * 30, "." * 30])
    path_cell_limit(50)
    with path_cell_scope():
        find_paths(grid, [PathQuery((0, 0), (29, 0))])  # 30 cells
    for _ in range(2):  # options new to the map, then remembered (the lean way)
        assert len(find_path(grid, (0, 1), (29, 1), algorithm="astar").cells) == 30
        assert len(find_path(grid, (0, 1), (29, 1)).cells) == 30


@pytest.mark.parametrize("shared", [0, 2])
def test_a_batch_keeps_the_paths_that_fit_and_stops_at_the_first_that_does_not(
    path_cell_limit: Callable[[int], int], shared: int
) -> None:
    """A batch past the limit searched on and then threw every answer away (a batch of
    long queries searched for a minute, then answered 413): it keeps the paths that
    fit, in the order searched, and searches nothing after the first that does not."""
    grid = GridMap.from_rows(["." * 30] * 4)
    path_cell_limit(100)
    # 30 cells each, to one goal (with ``shared``: one field search answers them)
    rows = np.array([[0, y, 29, 0] for y in (0, 1, 2, 3)] + [[0, 0, 1, 0]])
    for batch in (
        lambda: find_paths_between(grid, rows, policy=BatchPolicy(shared_goal_queries=shared)),
        lambda: find_paths_between(
            grid,
            rows,
            options=SearchOptions(algorithm="astar"),
            policy=BatchPolicy(shared_goal_queries=shared),
        ),
    ):
        found = batch()
        answers = found.results()
        fielded = {found.plans[p].algorithm_used for p in found.plan[:3].tolist()}
        assert fielded == ({"field"} if shared else {"jps", "astar"} & fielded)
        assert [len(a.cells) for a in answers[:3]] == [30, 30, 30]  # type: ignore[union-attr]
        first, rest = answers[3], answers[4]
        assert isinstance(first, PathTooLongError)
        assert str(first).startswith("the paths asked for hold at least 120 cells, more than "
                                     "the 100 an answer may hold")  # fmt: skip
        assert isinstance(rest, PathTooLongError)  # two cells, but after the first
        assert str(rest).startswith("not searched: the paths answered before it in this "
                                    "request hold 90 cells")  # fmt: skip
        assert found.expanded[3:].tolist() == [0, 0]
        assert found.offsets[-1] == 90  # no cells of the rows left out
    queries = [PathQuery((0, y), (29, y)) for y in (0, 1, 2, 3)]
    answers = find_paths(grid, [*queries, PathQuery((0, 0), None, goals=[(1, 0)])])
    assert [type(a).__name__ for a in answers] == ["PathResult"] * 3 + ["PathTooLongError"] * 2


def test_a_spent_scope_answers_later_calls_without_a_search(
    path_cell_limit: Callable[[int], int],
) -> None:
    """A batch answered in slices: once one slice met a path past the limit, the next
    ones are not searched (their scope carries ``spent``)."""
    grid = GridMap.from_rows(["." * 30] * 2)
    path_cell_limit(50)
    rows = np.array([[0, 0, 29, 0], [0, 1, 29, 1]])
    with path_cell_scope():
        first = find_paths_between(grid, rows)
        assert scope_spent()
        assert written_path_cells() == 30
    with path_cell_scope(earlier=30, spent=True):
        later = find_paths_between(grid, rows[:1]).results()[0]
        assert isinstance(later, PathTooLongError)
        assert str(later).startswith("not searched")
    assert isinstance(first.results()[1], PathTooLongError)
    with path_cell_scope(earlier=30):  # not spent: a short path still fits
        assert find_paths(grid, [PathQuery((0, 0), (5, 0))])[0].status == "found"  # type: ignore[union-attr]
