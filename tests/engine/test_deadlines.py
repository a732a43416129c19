"""deadline_scope: every search of an engine call stops at its deadline, answers
``partial`` (``deadline``) with the path so far, and leaves later queries unstarted."""

import time
from typing import Any

import numpy as np
import pytest

from service.engine import (
    BatchPolicy,
    GridMap,
    PathQuery,
    PathResult,
    SearchOptions,
    deadline_scope,
    find_path,
    find_paths,
    find_paths_between,
)
from service.engine.fields import distance_field
from service.engine.kernels.clock import CLOCK_EVERY
from service.engine.scratch import INITIAL_PATH_CELLS, PathBuffers, thread_scratch
from tests.support import serpentine, walk_cost

#: A corridor maze whose one path walks about half a million cells: any search to its
#: far end expands them all, for tens to hundreds of milliseconds.
SIDE = 1001
#: How late past its deadline a search may answer here: it looks at the clock every
#: ``CLOCK_EVERY`` expansions, then writes its path out (a machine shared with other
#: work may stall the thread for longer than either).
MARGIN_S = 0.25


Maze = tuple[GridMap, tuple[int, int], float]


@pytest.fixture(scope="module")
def maze() -> Maze:
    return serpentine(SIDE)


def weighted(grid: GridMap) -> GridMap:
    """``grid`` with integer costs of 1 and 2: searched by ``dial``, not JPS."""
    costs = grid.costs.copy()
    costs[::4, ::3] *= 2
    return GridMap(costs)


def passed() -> int:
    return time.monotonic_ns() - 1


def soon(ms: float) -> int:
    return time.monotonic_ns() + int(ms * 1e6)


def assert_unstarted(result: PathResult | Exception) -> None:
    assert isinstance(result, PathResult), result
    assert (result.status, result.partial_reason) == ("partial", "deadline")
    assert result.cells.shape == (0, 2)
    assert (result.cost, result.length, result.expanded, result.reached) == (0.0, 0.0, 0, None)


@pytest.mark.parametrize("options", [
    SearchOptions(algorithm="astar"),
    SearchOptions(algorithm="jps"),
    SearchOptions(heuristic="zero", diagonal="never"),
    SearchOptions(weight=2.0),
])  # fmt: skip
def test_a_query_after_its_deadline_is_not_started(maze: Maze, options: Any) -> None:
    grid, far, _ = maze
    find_path(grid, (0, 0), far, options=options, max_goals=1)  # its plan, now known
    with deadline_scope(passed()):
        assert_unstarted(find_path(grid, (0, 0), far, options=options))


def test_a_goal_set_query_after_its_deadline_is_not_started(maze: Maze) -> None:
    grid, far, _ = maze
    with deadline_scope(passed()):
        assert_unstarted(find_path(grid, (0, 0), goals=[far, (SIDE - 1, 0)]))


@pytest.mark.parametrize("diagonal", ["no_corner_cutting", "never"])
def test_a_search_stops_at_its_deadline_with_a_valid_path_so_far(maze: Maze, diagonal: Any) -> None:
    grid, far, _ = maze
    for searched in (grid, weighted(grid)):  # astar or jps, and dial
        whole = find_path(searched, (0, 0), far, algorithm="astar", diagonal=diagonal)
        assert whole.status == "found"
        began = time.monotonic()
        with deadline_scope(soon(2)):
            cut = find_path(searched, (0, 0), far, algorithm="astar", diagonal=diagonal)
        assert time.monotonic() - began < 0.002 + MARGIN_S
        assert (cut.status, cut.partial_reason) == ("partial", "deadline")
        assert CLOCK_EVERY <= cut.expanded < whole.expanded
        assert tuple(cut.cells[0]) == (0, 0)
        assert cut.cost == pytest.approx(walk_cost(searched, cut.cells, diagonal))


def test_a_cut_path_longer_than_the_buffers_is_the_search_s_own(maze: Maze) -> None:
    """A cut search whose path did not fit the path buffers was searched again after
    they grew, past its deadline: it answered an empty path, as if never started."""
    grid, far, _ = maze
    began = time.perf_counter()
    find_path(grid, (0, 0), far, algorithm="astar")
    whole_ms = (time.perf_counter() - began) * 1e3
    # Cut late enough that the path so far outgrows the buffers: a share of the
    # whole search's own time, on this machine as loaded as it is now.
    for share in (0.6, 0.8, 0.9):
        thread_scratch(grid.padded.size).paths = PathBuffers(1, INITIAL_PATH_CELLS)
        with deadline_scope(soon(share * whole_ms)):
            cut = find_path(grid, (0, 0), far, algorithm="astar")
        if cut.partial_reason == "deadline" and cut.cells.shape[0] > INITIAL_PATH_CELLS:
            break
    assert cut.partial_reason == "deadline"
    assert cut.cells.shape[0] > INITIAL_PATH_CELLS
    assert cut.cost == pytest.approx(walk_cost(grid, cut.cells, "no_corner_cutting"))


def test_a_search_without_a_deadline_is_not_cut_by_an_earlier_one(maze: Maze) -> None:
    """The deadline lives in the thread's scratch: a scope left must leave none."""
    grid, far, cost = maze
    with deadline_scope(passed()):
        assert find_path(grid, (0, 0), far).partial_reason == "deadline"
    with deadline_scope(soon(60_000)), deadline_scope(0):  # the inner scope: no deadline
        found = find_path(grid, (0, 0), far)
    assert found.status == "found"
    assert found.cost == pytest.approx(cost)
    assert find_path(grid, (0, 0), far).status == "found"


def test_a_batch_answers_what_it_finished_and_leaves_the_rest_unstarted(maze: Maze) -> None:
    grid, far, _ = maze
    near = (5, 0)
    rows = np.array([[0, 0, *near], [0, 0, *far], [0, 0, *near], [0, 0, *far]])
    options = SearchOptions(algorithm="astar")
    whole = find_paths_between(grid, rows, options=options)
    # Time for the near query however busy the machine, none for half a million
    # expansions towards the far end.
    with deadline_scope(soon(10)):
        cut = find_paths_between(grid, rows, options=options)
    first, second, third, fourth = cut.results()
    expected = whole.result(0)
    assert isinstance(first, PathResult)
    assert isinstance(expected, PathResult)
    assert (first.status, first.cost) == (expected.status, expected.cost)
    assert np.array_equal(first.cells, expected.cells)
    assert isinstance(second, PathResult)
    assert (second.status, second.partial_reason) == ("partial", "deadline")
    assert second.expanded >= CLOCK_EVERY
    assert_unstarted(third)
    assert_unstarted(fourth)


def test_a_shared_goal_search_leaves_the_starts_it_did_not_settle_unstarted(maze: Maze) -> None:
    grid, far, _ = maze
    # The last start is beside the goal: settled before the search looks at the clock.
    starts = [(0, 0), (2, 0), (4, 0), (far[0] - 1, far[1])]
    queries = [PathQuery(start, far, SearchOptions()) for start in starts]
    policy = BatchPolicy(shared_goal_queries=2)
    whole = find_paths(grid, queries, policy=policy)
    assert {r.algorithm_used for r in whole if isinstance(r, PathResult)} == {"field"}
    with deadline_scope(soon(2)):
        cut = find_paths(grid, queries, policy=policy)
    near = cut[3]
    assert isinstance(near, PathResult)
    assert (near.status, near.cost) == ("found", whole[3].cost)  # type: ignore[union-attr]
    for result in cut[:3]:  # (``expanded``: the shared search's, as for every field answer)
        assert isinstance(result, PathResult)
        assert (result.status, result.partial_reason, result.cost) == ("partial", "deadline", 0.0)
        assert result.cells.shape == (0, 2)
        assert result.algorithm_used == "field"


def test_a_field_cut_by_its_deadline_is_exact_where_it_reached(maze: Maze) -> None:
    grid, far, _ = maze
    whole = distance_field(grid, [far], max_goals=1)
    assert whole.partial_reason is None
    with deadline_scope(soon(2)):
        cut = distance_field(grid, [far], max_goals=1)
    assert cut.partial_reason == "deadline"
    reached = np.isfinite(cut.distance)
    assert CLOCK_EVERY <= np.count_nonzero(reached) < np.count_nonzero(np.isfinite(whole.distance))
    assert np.array_equal(cut.distance[reached], whole.distance[reached])
    assert np.array_equal(cut.next[reached], whole.next[reached])
    assert (cut.next[~reached] == -1).all()
