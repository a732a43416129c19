"""The iterative-deepening A* kernel ``ida``, called directly, against the oracle.

IDA* re-expands each iteration's whole depth-first tree, and on a grid the trees
grow exponentially with the room between start and goal (more so for an
unreachable goal, whose start's region is searched to exhaustion, and for real
costs, whose thresholds rise in tiny steps): the maps here are small, and an
expansion cap turns a blow-up into a failure rather than a hang.
"""

import itertools
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pytest

from service.engine import DIAGONALS, HEURISTICS, GridMap
from service.engine.kernels.bundles import Task, Terrain
from service.engine.kernels.clock import CLOCK_EVERY, CLOCK_SLOTS
from service.engine.kernels.codes import (
    STATUS_DEADLINE,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.ida import ida, write_cells
from service.engine.kernels.moves import closeness
from tests.support import (
    POLICIES,
    MapCase,
    art,
    close,
    map_case_id,
    oracle_map,
    random_grid,
    walk_cost,
    walkable_cells,
)

DENSITIES = [0.0, 0.2, 0.4]
COST_RANGES: list[tuple[float, float] | None] = [None, (1, 5), (0.5, 3.0)]
#: Every density and cost range up to 5x5; larger maps only open, where every goal
#: is reachable: with obstacles, an unreachable goal's exhaustive search of a large
#: start region (or a long detour under real costs) can pass ``CAP``.
CASES: list[MapCase] = [
    *itertools.product([(6, 1), (1, 6), (5, 5)], DENSITIES, COST_RANGES, POLICIES),
    *itertools.product([(6, 6)], [0.0], COST_RANGES, POLICIES),
    *itertools.product([(8, 8)], [0.0], [None, (1, 5)], POLICIES),
]
GOALS_PER_MAP = 4
#: Far above what any case here needs (a few million at most): a blow-up fails fast.
CAP = 30_000_000
NO_TRACE = np.zeros(0, np.int32)


def admissible(policy: str) -> list[str]:
    """The plain heuristics that never overestimate under ``policy``."""
    names = ["octile", "chebyshev", "euclidean", "zero"]
    return [*names, "manhattan"] if policy == "never" else names


class Answer(NamedTuple):
    status: int
    length: int
    best_length: int
    expanded: int
    iterations: int


class Search:
    """A map's terrain and the kernel's stack and best path, reused query after query."""

    def __init__(self, grid: GridMap) -> None:
        cells = grid.padded.size
        self.grid = grid
        self.terrain = Terrain(grid.padded, grid.padded_width, grid.min_cost)
        self.stack = (np.zeros(cells, np.int32), np.zeros(cells, np.int8),
                      np.zeros(cells, np.float64), np.zeros(cells, np.uint8))  # fmt: skip
        self.best_path = np.zeros(cells, np.int32)
        self.clock = np.zeros(CLOCK_SLOTS, np.int64)

    def run(self, start: tuple[int, int], goal: tuple[int, int], policy: str, *,
            heuristic: str = "octile", weight: float = 1.0, budget: int = CAP,
            trace: npt.NDArray[np.int32] = NO_TRACE) -> Answer:  # fmt: skip
        task = Task(self.grid.flat_index(*start), self.grid.flat_index(*goal), DIAGONALS[policy],
                    HEURISTICS[heuristic], weight, budget, True, False, self.clock)  # fmt: skip
        answer = Answer(*(int(v) for v in ida(self.terrain, task, self.stack, self.best_path,
                                              trace)))  # fmt: skip
        assert not self.stack[3].any(), "on_path left set"
        return answer

    def cost(self, answer: Answer) -> float:
        return float(self.stack[2][answer.length - 1])

    def unpadded(self, cells: npt.NDArray[np.int32], n: int) -> npt.NDArray[np.int32]:
        """(n, 2) int32: ``cells[0:n]`` as unpadded ``(x, y)``."""
        out = np.empty((n, 2), np.int32)
        write_cells(cells, n, self.grid.padded_width, out)
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
        case = (goal, heuristic, answer.expanded)
        if np.isinf(optimal):
            assert answer.status == STATUS_NO_PATH, case
            continue
        assert answer.status == STATUS_FOUND, case
        assert close(search.cost(answer), optimal), (*case, search.cost(answer), optimal)
        cells = search.unpadded(search.stack[0], answer.length)
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
        walked = walk_cost(search.grid, search.unpadded(search.stack[0], answer.length), policy)
        assert close(walked, search.cost(answer))
        assert optimal - 1e-9 <= walked <= 2.0 * optimal + 1e-9


@pytest.mark.parametrize("budget", [1, 2, 9, 40, 700])
def test_a_budget_of_k_expansions_ends_partial_on_a_walkable_best_path(budget: int) -> None:
    grid = random_grid(np.random.default_rng(4), 8, 8, 0.2, (1, 5))
    cells = walkable_cells(grid)
    search = Search(grid)
    start, goal = cells[0], cells[-1]
    trace = np.zeros(budget, np.int32)
    answer = search.run(start, goal, "one_obstacle", heuristic="zero", budget=budget,
                        trace=trace)  # fmt: skip
    assert answer.status == STATUS_PARTIAL
    assert answer.expanded == budget
    best = search.unpadded(search.best_path, answer.best_length)
    assert best[0].tolist() == list(start)
    walk_cost(grid, best, "one_obstacle")  # fails on an illegal step
    assert len({tuple(c) for c in best.tolist()}) == len(best)  # a simple path
    # It ends at an expanded cell nearest the goal.
    policy = DIAGONALS["one_obstacle"]
    expanded = search.unpadded(trace, budget)
    nearest = min(closeness(policy, abs(x - goal[0]), abs(y - goal[1])) for x, y in expanded)
    x, y = best[-1]
    assert closeness(policy, abs(x - goal[0]), abs(y - goal[1])) == nearest


def test_every_iteration_starts_by_expanding_the_start_again() -> None:
    grid = random_grid(np.random.default_rng(6), 5, 5, 0.0, (1, 5))
    search = Search(grid)
    trace = np.full(1 << 20, -1, np.int32)
    answer = search.run((0, 0), (4, 4), "no_corner_cutting", trace=trace)
    assert answer.status == STATUS_FOUND
    assert answer.iterations > 1
    assert answer.expanded <= trace.size
    recorded = trace[: answer.expanded]
    assert (trace[answer.expanded :] == -1).all()
    assert np.count_nonzero(recorded == grid.flat_index(0, 0)) == answer.iterations
    assert recorded[0] == grid.flat_index(0, 0)


def test_an_enclosed_goal_is_no_path_once_the_start_s_region_is_exhausted() -> None:
    grid, start, goal = art(
        """
        S..@...
        ...@.G.
        @@@@...
        """
    )
    answer = Search(grid).run(start, goal, "always")
    assert answer.status == STATUS_NO_PATH
    assert answer.length == 0
    assert answer.best_length == 1


def test_a_passed_deadline_stops_at_the_next_look_at_the_clock() -> None:
    grid = random_grid(np.random.default_rng(8), 8, 8, 0.0, (0.5, 3.0))
    search = Search(grid)
    search.clock[0] = 1  # long past, in time.monotonic_ns
    answer = search.run((0, 0), (7, 7), "always", heuristic="zero")
    assert answer.status == STATUS_DEADLINE
    assert answer.expanded == CLOCK_EVERY
    assert search.best_path[0] == grid.flat_index(0, 0)
