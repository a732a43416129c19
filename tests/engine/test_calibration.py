"""``calibration``: ``auto`` on maps without a JPS+ table follows a measurement."""

import math
from typing import Any

import numpy as np
import pytest

from service.engine import GridMap, find_path
from service.engine import calibration as calibration_module
from service.engine.calibration import MIN_SAMPLES, measure_auto
from service.engine.edits import CellsEdit, apply_changes, build_jump_table, changes_of


def bare_jps_grid(side: int = 64, seed: int = 3) -> GridMap:
    """A uniform map with bit rows and no JPS+ table (as past the table's bound)."""
    rng = np.random.default_rng(seed)
    grid = GridMap.from_costs((rng.random((side, side)) > 0.2).astype(float))
    grid.prepare_jumps(max_table_bytes=0)
    assert not grid.jump_table_ready
    return grid


class FakeClock:
    """Seconds that pass only inside a search: ``jps`` and ``astar`` seconds each."""

    def __init__(self, jps: float, astar: float) -> None:
        self.now = 0.0
        self.cost = {"jps": jps, "astar": astar}

    def __call__(self) -> float:
        return self.now

    def search(self, *args: Any, algorithm: str, **kwargs: Any) -> object:
        self.now += self.cost[algorithm]
        return find_path(*args, algorithm=algorithm, **kwargs)


@pytest.mark.parametrize(("jps", "astar", "expected"), [(2.0, 1.0, "astar"), (1.0, 2.0, "jps"),
                                                        (1.02, 1.0, "jps")])  # fmt: skip
def test_auto_runs_what_was_measured_faster(jps: float, astar: float, expected: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    clock = FakeClock(jps, astar)
    monkeypatch.setattr(calibration_module, "find_path", clock.search)
    choice = measure_auto(bare_jps_grid(), clock=clock)
    assert choice.algorithm == expected
    assert choice.samples == calibration_module.SAMPLE_PAIRS
    assert math.isclose(choice.jps_over_astar, jps / astar)


def test_a_map_without_room_for_samples_keeps_jps() -> None:
    grid = GridMap.from_costs([[1, 0, 1], [0, 0, 0], [1, 0, 1]])
    grid.prepare_jumps(max_table_bytes=0)
    choice = measure_auto(grid)
    assert (choice.algorithm, choice.samples) == ("jps", 0)
    assert choice.samples < MIN_SAMPLES
    assert math.isnan(choice.jps_over_astar)


def test_auto_follows_the_measurement_only_while_there_is_no_jump_table() -> None:
    grid = bare_jps_grid()
    ys, xs = np.nonzero(grid.costs > 0)
    start, goal = (int(xs[0]), int(ys[0])), (int(xs[-1]), int(ys[-1]))
    assert find_path(grid, start, goal).algorithm_used == "jps"
    grid.prefer_astar_for_auto(True)  # replans what was remembered for the grid
    slower = find_path(grid, start, goal)
    assert slower.algorithm_used == "astar"
    assert find_path(grid, start, goal, algorithm="jps").cost == slower.cost
    after = apply_changes(grid, changes_of(grid, [CellsEdit(np.array([[1, 1]]), 1.0)],
                                           max_cells=1 << 20))  # fmt: skip
    assert after.auto_prefers_astar  # carried to the next revision
    grid.attach_jump_table(build_jump_table(grid))
    assert find_path(grid, start, goal).algorithm_used == "jps"  # with the table JPS wins


def test_a_units_grid_takes_the_maps_measurement() -> None:
    grid = bare_jps_grid()
    early = grid.for_agent_size(3)  # built before the measurement came
    grid.prefer_astar_for_auto(True)
    assert grid.for_agent_size(2).auto_prefers_astar
    assert early.auto_prefers_astar
    assert not bare_jps_grid(seed=4).for_agent_size(2).auto_prefers_astar
