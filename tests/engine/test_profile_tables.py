"""A named profile's tables (``profile_tables``) and the memo of queries on views."""

import numpy as np

from service.engine import GridMap, find_path, movingai_terrain
from service.engine.edits import CellsEdit, apply_changes, changes_of
from service.engine.kernels.jps import jump_distances
from service.engine.profile_tables import prepare_profile
from service.engine.terrain_edits import ProfileEdit
from service.engine.views import ViewKey
from tests.engine.test_terrain import brute_costs, random_terrain
from tests.support import assert_optimal, oracle_distances

ROWS = ["....TT....", ".WWWTT.WW.", ".W..TT..W.", ".W......W.", ".WWWWWWWW."]
WOODS: dict[str, object] = {"exclude": ["water"]}  # a uniform view of its own: trees are passable


def test_a_uniform_profile_gets_the_jump_table_of_its_own_costs() -> None:
    terrain = movingai_terrain(ROWS)
    grid = GridMap.from_terrain(terrain)
    profile = terrain.profile(WOODS)
    made = prepare_profile(grid, profile, jump_table_bytes=1 << 30, landmarks=4,
                           max_landmark_bytes=1 << 30)  # fmt: skip
    assert made.jump_table
    view = grid.view(ViewKey(1, profile))
    fresh = GridMap.from_costs(brute_costs(terrain, WOODS))
    assert view.jump_table is not None
    np.testing.assert_array_equal(view.jump_table, jump_distances(fresh.padded, fresh.width + 2))
    result = find_path(grid, (0, 0), (9, 0), profile=profile)
    assert result.cost == find_path(fresh, (0, 0), (9, 0)).cost
    assert result.algorithm_used == "jps"


def test_a_weighted_profile_gets_landmarks_that_stay_optimal() -> None:
    terrain = random_terrain(21, width=40, height=30)
    spec: dict[str, object] = {"multipliers": {"swamp": 3.0, "road": 0.5}}
    grid = GridMap.from_terrain(terrain)
    profile = terrain.profile(spec)
    made = prepare_profile(grid, profile, jump_table_bytes=1 << 30, landmarks=4,
                           max_landmark_bytes=1 << 30)  # fmt: skip
    assert made.landmarks == 4
    assert not made.jump_table
    oracle = GridMap.from_costs(brute_costs(terrain, spec))
    ys, xs = np.nonzero(oracle.costs > 0)
    start = (int(xs[0]), int(ys[0]))
    distances = oracle_distances(oracle, start, "no_corner_cutting")
    for i in np.random.default_rng(2).integers(xs.size, size=8).tolist():
        goal = (int(xs[i]), int(ys[i]))
        result = find_path(grid, start, goal, profile=profile, heuristic="landmarks")
        assert result.heuristic_used == "landmarks"
        assert_optimal(result, distances[goal[1], goal[0]], oracle, "no_corner_cutting")


def test_a_profiles_tables_past_the_views_bound_are_not_built() -> None:
    terrain = movingai_terrain(ROWS)
    grid = GridMap.from_terrain(terrain)
    profile = terrain.profile(WOODS)
    view = grid.view(ViewKey(1, profile))
    grid.limit_views(view.nbytes + 10)  # room for the view, not for its table
    made = prepare_profile(grid, profile, jump_table_bytes=1 << 30, landmarks=4,
                           max_landmark_bytes=1 << 30)  # fmt: skip
    assert not made.jump_table
    assert find_path(grid, (0, 0), (9, 0), profile=profile).cost == find_path(
        GridMap.from_costs(brute_costs(terrain, WOODS)), (0, 0), (9, 0)).cost  # fmt: skip


def test_a_repeated_query_on_a_view_answers_as_the_first_and_sees_new_tables() -> None:
    """The memo of a profile's query (``ViewedPlan``) is dropped with the view's plans
    when a table is attached to it."""
    terrain = movingai_terrain(ROWS)
    grid = GridMap.from_terrain(terrain)
    profile = terrain.profile(WOODS)
    first = find_path(grid, (0, 0), (9, 0), profile=profile)
    again = find_path(grid, (0, 0), (9, 0), profile=profile)
    assert (again.cost, again.expanded, again.algorithm_used) == (
        first.cost, first.expanded, first.algorithm_used)  # fmt: skip
    np.testing.assert_array_equal(again.cells, first.cells)
    prepare_profile(grid, profile, jump_table_bytes=1 << 30, landmarks=4,
                    max_landmark_bytes=1 << 30)  # fmt: skip
    tabled = find_path(grid, (0, 0), (9, 0), profile=profile)
    assert tabled.cost == first.cost
    assert tabled.grid is grid.view(ViewKey(1, profile))
    assert tabled.grid is not None
    assert tabled.grid.jump_table is not None


def test_an_edit_keeps_a_views_jump_table_unless_it_flips_a_cell_there() -> None:
    terrain = movingai_terrain(ROWS)
    grid = GridMap.from_terrain(terrain)
    profile = terrain.profile(WOODS)
    grid = apply_changes(grid, changes_of(grid, [ProfileEdit("woods", profile)], max_cells=8))
    prepare_profile(grid, profile, jump_table_bytes=1 << 30, landmarks=4,
                    max_landmark_bytes=1 << 30)  # fmt: skip
    same = apply_changes(grid, changes_of(grid, [CellsEdit([[4, 0]], class_name="ground")],
                                          max_cells=8))  # fmt: skip
    assert same.views()[ViewKey(1, profile)].jump_table is not None
    flipped = apply_changes(same, changes_of(same, [CellsEdit([[0, 0]], class_name="water")],
                                             max_cells=8))  # fmt: skip
    assert flipped.views()[ViewKey(1, profile)].jump_table is None
