"""The bidirectional A* kernel ``bidirectional``, called directly, against the oracle.

The oracle is scipy's Dijkstra over an explicitly built graph (``tests.support``);
every path is rebuilt from the two directions' parents (``write_meeting_path``)
and re-walked cell by cell. One pair of scratch sets serves every query of a map,
each query under a new generation, as the service reuses its scratch.
"""

import itertools
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pytest

from service.engine import DIAGONALS, HEURISTICS, GridMap
from service.engine.kernels.bidirectional import (
    bidirectional,
    meeting_length,
    write_meeting_path,
)
from service.engine.kernels.bundles import Nodes, Task, Terrain
from service.engine.kernels.clock import CLOCK_EVERY, CLOCK_SLOTS
from service.engine.kernels.codes import (
    CLOSED,
    STATUS_DEADLINE,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.moves import closeness
from tests.support import (
    MAP_CASES,
    art,
    close,
    map_case_id,
    oracle_distances,
    oracle_map,
    random_grid,
    walk_cost,
    walkable_cells,
)

CASES = MAP_CASES
GOALS_PER_MAP = 6
UNLIMITED = 1 << 62
NO_TRACE = np.zeros(0, np.int32)


def admissible(policy: str) -> list[str]:
    """The plain heuristics that never overestimate under ``policy``."""
    names = ["octile", "chebyshev", "euclidean", "zero"]
    return [*names, "manhattan"] if policy == "never" else names


class Answer(NamedTuple):
    status: int
    meet: int
    best: int
    expanded: int


class Search:
    """A map's terrain and two scratch sets for the kernel, reused query after query."""

    def __init__(self, grid: GridMap) -> None:
        self.grid = grid
        self.terrain = Terrain(grid.padded, grid.padded_width, grid.min_cost)
        self.forward = self._nodes(grid.padded.size)
        self.backward = self._nodes(grid.padded.size)
        self.clock = np.zeros(CLOCK_SLOTS, np.int64)

    @staticmethod
    def _nodes(cells: int) -> Nodes:
        heap = (np.empty(cells, np.int32), np.empty((cells, 2), np.float64),
                np.full(cells, CLOSED, np.int32))  # fmt: skip
        return Nodes(0, np.zeros(cells, np.int32), np.zeros(cells, np.float64),
                     np.zeros(cells, np.int32), heap, np.zeros(0, np.int32))  # fmt: skip

    def run(self, start: tuple[int, int], goal: tuple[int, int], policy: str, *,
            heuristic: str = "octile", weight: float = 1.0, budget: int = UNLIMITED,
            trace: npt.NDArray[np.int32] = NO_TRACE) -> Answer:  # fmt: skip
        """Search under the next generation of both scratch sets."""
        self.forward = self.forward._replace(gen=self.forward.gen + 1)
        self.backward = self.backward._replace(gen=self.backward.gen + 1)
        task = Task(self.grid.flat_index(*start), self.grid.flat_index(*goal), DIAGONALS[policy],
                    HEURISTICS[heuristic], weight, budget, True, False, self.clock)  # fmt: skip
        status, meet, best, expanded = bidirectional(self.terrain, task, self.forward,
                                                     self.backward, trace)  # fmt: skip
        return Answer(int(status), int(meet), int(best), int(expanded))

    def cost(self, answer: Answer) -> float:
        return float(self.forward.g[answer.meet] + self.backward.g[answer.meet])

    def cells(self, answer: Answer) -> npt.NDArray[np.int32]:
        """(n, 2) int32: the found path's cells, start first."""
        parents = (self.forward.parent, self.backward.parent)
        out = np.empty((meeting_length(*parents, answer.meet), 2), np.int32)
        write_meeting_path(*parents, self.grid.padded_width, answer.meet, out)
        return out


#: search, policy, start, goals, oracle costs from start ((height, width), inf = unreachable)
OracleCase = tuple[Search, str, tuple[int, int], list[tuple[int, int]], npt.NDArray[np.float64]]


@pytest.fixture(scope="module", params=CASES, ids=[map_case_id(c) for c in CASES])
def oracle_case(request: pytest.FixtureRequest) -> OracleCase:
    grid, policy, start, goals, distances = oracle_map(
        request.param, seed=CASES.index(request.param), goals=GOALS_PER_MAP
    )
    return Search(grid), policy, start, goals, distances


def test_costs_equal_the_oracle_and_paths_rewalk_at_that_cost(oracle_case: OracleCase) -> None:
    search, policy, start, goals, distances = oracle_case
    for goal, heuristic in itertools.product(goals, admissible(policy)):
        optimal = distances[goal[1], goal[0]]
        answer = search.run(start, goal, policy, heuristic=heuristic)
        case = (goal, heuristic)
        if np.isinf(optimal):
            assert answer.status == STATUS_NO_PATH, case
            assert answer.meet == answer.best == search.grid.flat_index(*start)
            continue
        assert answer.status == STATUS_FOUND, case
        assert close(search.cost(answer), optimal), (*case, search.cost(answer), optimal)
        cells = search.cells(answer)
        assert cells[0].tolist() == list(start)
        assert cells[-1].tolist() == list(goal)
        assert close(walk_cost(search.grid, cells, policy), optimal), case


def test_weight_two_stays_within_twice_the_optimal_cost(oracle_case: OracleCase) -> None:
    search, policy, start, goals, distances = oracle_case
    for goal in goals:
        optimal = distances[goal[1], goal[0]]
        answer = search.run(start, goal, policy, weight=2.0)
        if np.isinf(optimal):
            assert answer.status == STATUS_NO_PATH
            continue
        assert answer.status == STATUS_FOUND
        walked = walk_cost(search.grid, search.cells(answer), policy)
        # The parents may have improved since ``g[meet]`` was set: never dearer.
        assert walked <= search.cost(answer) or close(walked, search.cost(answer))
        assert optimal - 1e-9 <= walked <= 2.0 * optimal + 1e-9


@pytest.mark.parametrize("budget", [1, 2, 7, 60])
def test_a_budget_of_k_expansions_ends_partial_at_the_nearest_forward_cell(budget: int) -> None:
    grid = random_grid(np.random.default_rng(11), 30, 30, 0.2, (1, 5))
    cells = walkable_cells(grid)
    search = Search(grid)
    start, goal = cells[0], cells[-1]
    answer = search.run(start, goal, "one_obstacle", heuristic="zero", budget=budget)
    assert answer.status == STATUS_PARTIAL
    assert answer.expanded == budget
    forward = search.forward
    assert forward.stamp[answer.best] == forward.gen
    # The forward direction's expanded cells: stamped, and off its heap.
    closed = np.flatnonzero((forward.stamp == forward.gen) & (forward.heap[2] == CLOSED))
    assert answer.best in closed
    width, (gx, gy) = grid.padded_width, (goal[0] + 1, goal[1] + 1)
    policy = DIAGONALS["one_obstacle"]
    nearest = min(closeness(policy, abs(c % width - gx), abs(c // width - gy)) for c in closed)
    best = answer.best
    assert closeness(policy, abs(best % width - gx), abs(best // width - gy)) == nearest


def test_trace_records_every_expansion_of_both_directions_in_order() -> None:
    grid = random_grid(np.random.default_rng(5), 20, 20, 0.1, None)
    cells = walkable_cells(grid)
    search = Search(grid)
    trace = np.full(grid.padded.size * 4, -1, np.int32)
    answer = search.run(cells[0], cells[-1], "always", trace=trace)
    assert answer.status == STATUS_FOUND
    recorded = trace[: answer.expanded]
    assert (trace[answer.expanded :] == -1).all()
    # Equal open lists (one root each): the forward search goes first, then the
    # backward one, whose list is then the smaller.
    assert recorded[:2].tolist() == [grid.flat_index(*cells[0]), grid.flat_index(*cells[-1])]
    stamped = (search.forward.stamp[recorded] == search.forward.gen) | (
        search.backward.stamp[recorded] == search.backward.gen
    )
    assert stamped.all()


def test_an_enclosed_goal_is_proven_unreachable_within_its_pocket() -> None:
    # The backward search runs out of cells after the pocket's three: no flood of
    # the open side.
    grid, start, goal = art(
        """
        S.........
        ..........
        ......@@@@
        ......@.G.
        """
    )
    search = Search(grid)
    answer = search.run(start, goal, "no_corner_cutting")
    assert answer.status == STATUS_NO_PATH
    assert answer.meet == answer.best == grid.flat_index(*start)
    assert answer.expanded <= 2 * 3


def test_a_passed_deadline_stops_at_the_next_look_at_the_clock() -> None:
    grid = random_grid(np.random.default_rng(2), 40, 40, 0.0, None)
    search = Search(grid)
    search.clock[0] = 1  # long past, in time.monotonic_ns
    answer = search.run((0, 0), (39, 39), "never", heuristic="zero")
    assert answer.status == STATUS_DEADLINE
    assert answer.expanded == CLOCK_EVERY
    assert search.forward.stamp[answer.best] == search.forward.gen


def test_reopening_under_weight_keeps_the_meeting_path_walkable() -> None:
    # Weighted octile over costly terrain reopens cells in both directions; the
    # meeting path must still be a legal chain from start to goal.
    grid = random_grid(np.random.default_rng(9), 40, 40, 0.3, (1, 9))
    cells = walkable_cells(grid)
    search = Search(grid)
    distances = oracle_distances(grid, cells[0], "one_obstacle")
    for goal in cells[:: len(cells) // 10][1:]:
        optimal = distances[goal[1], goal[0]]
        for weight in (1.0, 1.5, 4.0):
            answer = search.run(cells[0], goal, "one_obstacle", weight=weight)
            if np.isinf(optimal):
                assert answer.status == STATUS_NO_PATH
                continue
            walked = walk_cost(grid, search.cells(answer), "one_obstacle")
            assert walked <= search.cost(answer) or close(walked, search.cost(answer))
            assert optimal - 1e-9 <= walked <= weight * optimal + 1e-9
