"""Edits of maps with terrain classes: base costs, classes and named profiles."""

import numpy as np
import pytest

from service.engine import GridMap, find_path
from service.engine.edits import (
    CellsEdit,
    CostEdit,
    Edit,
    RectEdit,
    apply_changes,
    changes_of,
    logged_changes,
)
from service.engine.errors import InvalidEditError, InvalidQueryError
from service.engine.kernels.jps import jump_distances
from service.engine.profile_tables import prepare_profile
from service.engine.terrain import MAX_CLASSES, Terrain
from service.engine.terrain_edits import ProfileEdit
from service.engine.views import ViewKey
from tests.engine.test_agent_size import eroded
from tests.engine.test_terrain import NAMES, PROFILES, brute_costs, random_terrain
from tests.support import POLICIES, assert_optimal, close, oracle_distances

#: Class names an edit may paint: the map's, and one it adds.
PAINTS = (*NAMES, "door_red")


def random_terrain_edits(rng: np.random.Generator, grid: GridMap) -> list[CostEdit]:
    """A few rects and cell lists: base costs, classes, or both."""
    edits: list[CostEdit] = []
    for _ in range(int(rng.integers(1, 4))):
        name = str(rng.choice(PAINTS)) if rng.random() < 0.7 else None
        cost = (
            float(rng.choice([0.0, 1.0, 2.0, 4.5])) if name is None or rng.random() < 0.3 else None
        )
        if rng.random() < 0.5:
            w, h = (int(v) for v in rng.integers(1, 6, 2))
            x, y = int(rng.integers(grid.width - w + 1)), int(rng.integers(grid.height - h + 1))
            edits.append(RectEdit(x, y, w, h, cost=cost, class_name=name))
        else:
            cells = np.stack(
                [rng.integers(grid.width, size=4), rng.integers(grid.height, size=4)], 1
            )
            edits.append(CellsEdit(cells.tolist(), cost=cost, class_name=name))
    return edits


def brute_edited(
    terrain: Terrain, edits: list[CostEdit]
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Base costs, classes and names after ``edits``, cell by cell from the definition."""
    base, classes, names = terrain.base.copy(), terrain.classes.copy(), list(terrain.names)
    for edit in edits:
        if isinstance(edit, RectEdit):
            cells = [(x, y) for y in range(edit.y, edit.y + edit.h)
                     for x in range(edit.x, edit.x + edit.w)]  # fmt: skip
        else:
            assert isinstance(edit, CellsEdit)
            cells = [(int(x), int(y)) for x, y in np.asarray(edit.cells)]
        for x, y in cells:
            if edit.cost is not None:
                base[y, x] = edit.cost
            if edit.class_name is not None:
                if edit.class_name not in names:
                    names.append(edit.class_name)
                classes[y, x] = names.index(edit.class_name)
    return base, classes, names


@pytest.mark.parametrize("seed", range(6))
def test_terrain_edits_give_the_map_a_fresh_upload_would_have(seed: int) -> None:
    """After random class and cost edits, the default costs, the islands, every
    profile's carried view and the replayed log record all equal a fresh build."""
    rng = np.random.default_rng(seed)
    terrain = random_terrain(seed)
    grid = GridMap.from_terrain(terrain)
    profiles = [terrain.profile(spec) for spec in PROFILES]
    named: list[Edit] = [ProfileEdit(f"p{i}", p) for i, p in enumerate(profiles)
                         if p != terrain.default]  # fmt: skip
    grid = apply_changes(grid, changes_of(grid, named, max_cells=8))
    for profile in profiles:
        grid.view(ViewKey(1, profile))
    for _ in range(5):
        edits = random_terrain_edits(rng, grid)
        assert grid.terrain is not None
        base, classes, names = brute_edited(grid.terrain, edits)
        changes = changes_of(grid, edits, max_cells=1000)
        new = apply_changes(grid, changes)
        after = new.terrain
        assert after is not None
        assert list(after.names) == names
        assert np.array_equal(after.base, base)
        assert np.array_equal(after.classes, classes)
        fresh = GridMap.from_terrain(Terrain.of(base=base, classes=classes, names=names,
                                                default=after.default))  # fmt: skip
        assert np.array_equal(new.costs, fresh.costs)
        assert np.array_equal(new.island_tables.labels > 0, fresh.island_tables.labels > 0)
        assert new.island_count("always") == fresh.island_count("always")
        views = new.views()
        for profile in profiles:
            view = new if profile == after.default else views[ViewKey(1, profile)]
            assert np.array_equal(view.costs, after.costs(profile))
        assert changes.terrain is not None
        replay = logged_changes(grid, changes.terrain.cells, changes.terrain.base,
                                changes.terrain.classes, changes.terrain.names, ())  # fmt: skip
        replayed = apply_changes(grid, replay)
        assert np.array_equal(replayed.costs, new.costs)
        assert replayed.terrain is not None
        assert replayed.terrain.names == after.names
        grid = new


@pytest.mark.parametrize("policy", POLICIES)
def test_paths_after_terrain_edits_cost_what_dijkstra_finds(policy: str) -> None:
    rng = np.random.default_rng(POLICIES.index(policy))
    terrain = random_terrain(40 + POLICIES.index(policy))
    grid = GridMap.from_terrain(terrain)
    for spec in PROFILES:
        grid.view(ViewKey(1, terrain.profile(spec)))
    for _ in range(3):
        grid = apply_changes(
            grid, changes_of(grid, random_terrain_edits(rng, grid), max_cells=1000)
        )
    after = grid.terrain
    assert after is not None
    for spec in PROFILES:
        oracle = GridMap.from_costs(brute_costs(after, spec))
        ys, xs = np.nonzero(oracle.costs > 0)
        picks = rng.integers(xs.size, size=6)
        start = (int(xs[picks[0]]), int(ys[picks[0]]))
        distances = oracle_distances(oracle, start, policy)
        for i in picks[1:]:
            goal = (int(xs[i]), int(ys[i]))
            result = find_path(grid, start, goal, diagonal=policy, profile=after.profile(spec))
            assert_optimal(result, distances[goal[1], goal[0]], oracle, policy)


def test_a_bigger_units_view_under_a_profile_is_rebuilt_after_an_edit() -> None:
    terrain = random_terrain(7)
    grid = GridMap.from_terrain(terrain)
    profile = terrain.profile({"exclude": ["water"]})
    grid.view(ViewKey(2, profile))
    new = apply_changes(grid, changes_of(grid, [RectEdit(0, 0, 6, 6, class_name="water")],
                                         max_cells=100))  # fmt: skip
    assert ViewKey(2, profile) not in new.views()
    view = new.view(ViewKey(2, profile))
    assert not view.costs[:6, :6].any()


def test_a_cost_edit_sets_the_base_cost_and_the_class_still_decides() -> None:
    terrain = Terrain.of(base=[[1.0, 1.0, 1.0]], classes=[[0, 2, 0]], names=NAMES,
                         default=Terrain.of(base=[[1.0]], classes=[[0]], names=NAMES)
                         .profile({"exclude": ["water"]}))  # fmt: skip
    grid = GridMap.from_terrain(terrain)
    new = apply_changes(grid, changes_of(grid, [CellsEdit([[1, 0], [2, 0]], cost=3.0)],
                                         max_cells=8))  # fmt: skip
    assert new.costs.tolist() == [[1.0, 0.0, 3.0]]
    assert new.terrain is not None
    assert new.terrain.base.tolist() == [[1.0, 3.0, 3.0]]


def test_class_and_profile_edits_of_a_map_without_classes_are_refused() -> None:
    grid = GridMap.from_costs(np.ones((3, 3)))
    with pytest.raises(InvalidEditError, match=r"edits\[0\].class: this map has no terrain"):
        changes_of(grid, [CellsEdit([[0, 0]], class_name="water")], max_cells=8)
    with pytest.raises(InvalidEditError, match="no terrain classes"):
        changes_of(grid, [ProfileEdit("boat", None)], max_cells=8)


def test_a_class_past_the_last_id_is_refused() -> None:
    names = tuple(f"c{i}" for i in range(MAX_CLASSES))
    grid = GridMap.from_terrain(Terrain.of(base=[[1.0]], classes=[[0]], names=names))
    with pytest.raises(InvalidEditError, match=r"edits\[0\].class 'road' would add a class"):
        changes_of(grid, [CellsEdit([[0, 0]], class_name="road")], max_cells=8)


def test_named_profiles_are_put_replaced_and_deleted_as_edits() -> None:
    terrain = random_terrain(3)
    grid = GridMap.from_terrain(terrain)
    boat = terrain.profile({"exclude": ["ground", "swamp", "road"]})
    tank = terrain.profile({"multipliers": {"swamp": 3.0}})
    puts: list[Edit] = [ProfileEdit("boat", boat), ProfileEdit("tank", tank)]
    grid = apply_changes(grid, changes_of(grid, puts, max_cells=8))
    assert grid.terrain is not None
    assert grid.terrain.profiles == (("boat", boat), ("tank", tank))
    unchanged = changes_of(grid, [ProfileEdit("boat", boat)], max_cells=8)
    assert unchanged.terrain is not None
    assert unchanged.terrain.profiles == ()
    grid = apply_changes(grid, changes_of(grid, [ProfileEdit("boat", None)], max_cells=8))
    assert grid.terrain is not None
    assert grid.terrain.named("boat") is None
    assert grid.revision == 2


@pytest.mark.parametrize(("edit", "words"), [
    (ProfileEdit("default", None), "not 'default' or 'inline'"),
    (ProfileEdit("a/b", None), "letters, digits"),
])  # fmt: skip
def test_a_bad_profile_name_is_refused(edit: ProfileEdit, words: str) -> None:
    grid = GridMap.from_terrain(random_terrain(3))
    with pytest.raises(InvalidEditError, match=words):
        changes_of(grid, [edit], max_cells=8)


def test_named_profiles_past_the_bound_are_refused() -> None:
    terrain = random_terrain(3)
    grid = GridMap.from_terrain(terrain)
    edits: list[Edit] = [ProfileEdit(f"p{m}", terrain.profile({"multipliers": {"swamp": m}}))
                         for m in (2.0, 3.0, 4.0)]  # fmt: skip
    with pytest.raises(InvalidEditError, match="holds 2 named profiles, the most"):
        changes_of(grid, edits, max_cells=8, max_profiles=2)


@pytest.mark.parametrize("size", [2, 3])
def test_bigger_units_under_a_profile_after_terrain_edits_cost_what_dijkstra_finds(
    size: int,
) -> None:
    """A bigger unit's view under a profile is built again from the profile's carried
    view: the same as the eroded oracle of the edited terrain."""
    rng = np.random.default_rng(70 + size)
    terrain = random_terrain(80 + size, width=26, height=22)
    grid = GridMap.from_terrain(terrain)
    spec = PROFILES[3]
    grid.view(ViewKey(size, terrain.profile(spec)))
    for _ in range(3):
        grid = apply_changes(
            grid, changes_of(grid, random_terrain_edits(rng, grid), max_cells=1000)
        )
    after = grid.terrain
    assert after is not None
    oracle = eroded(GridMap.from_costs(brute_costs(after, spec)), size)
    ys, xs = np.nonzero(oracle.costs > 0)
    start = (int(xs[0]), int(ys[0]))
    distances = oracle_distances(oracle, start, "no_corner_cutting")
    for i in range(0, xs.size, max(1, xs.size // 10)):
        goal = (int(xs[i]), int(ys[i]))
        result = find_path(grid, start, goal, agent_size=size, profile=after.profile(spec))
        best = distances[goal[1], goal[0]]
        assert (result.status == "found") == bool(np.isfinite(best))
        if np.isfinite(best):
            assert close(result.cost or 0.0, best)


def test_a_named_profiles_tables_after_edits_equal_a_fresh_build() -> None:
    rng = np.random.default_rng(90)
    terrain = random_terrain(91)
    uniform = terrain.edited(base=np.where(terrain.base > 0, np.float32(1), np.float32(0)))
    grid = GridMap.from_terrain(uniform)
    boat = uniform.profile({"exclude": ["ground", "swamp", "road"]})
    grid = apply_changes(grid, changes_of(grid, [ProfileEdit("boat", boat)], max_cells=8))
    for _ in range(4):
        edits = [e for e in random_terrain_edits(rng, grid)
                 if not isinstance(e, ProfileEdit) and e.cost in (None, 0.0, 1.0)]  # fmt: skip
        grid = apply_changes(grid, changes_of(grid, edits, max_cells=1000))
        prepare_profile(grid, boat, jump_table_bytes=1 << 30, landmarks=4,
                        max_landmark_bytes=1 << 30)  # fmt: skip
        view = grid.view(ViewKey(1, boat))
        assert grid.terrain is not None
        fresh = GridMap.from_costs(grid.terrain.costs(boat))
        np.testing.assert_array_equal(view.costs, fresh.costs)
        np.testing.assert_array_equal(view.island_tables.labels > 0, fresh.island_tables.labels > 0)
        if view.uniform:
            assert view.jump_table is not None
            table = jump_distances(fresh.padded, fresh.width + 2)
            np.testing.assert_array_equal(view.jump_table, table)


def test_an_inline_profiles_view_is_dropped_by_an_edit_and_evicted_for_room() -> None:
    """Inline profiles' views are a query's own: an edit does not carry them (one
    whose multiplier takes an edited cell out of range must be refused, not carried
    holding inf), and a view that needs room takes theirs, least recently used first,
    never a unit size's or a named profile's."""
    terrain = random_terrain(12)
    grid = GridMap.from_terrain(terrain)
    named = terrain.profile({"multipliers": {"swamp": 2.0}})
    grid = apply_changes(grid, changes_of(grid, [ProfileEdit("slow", named)], max_cells=8))
    grid.limit_views(3 * grid.view_bytes() + 100)
    grid.view(ViewKey(1, named))
    grid.view(ViewKey(2))
    inline = [terrain.profile({"multipliers": {"swamp": 3.0 + k}}) for k in range(3)]
    grid.view(ViewKey(1, inline[0]))
    grid.view(ViewKey(1, inline[1]))  # room for it: the oldest inline one goes
    held = set(grid.views())
    assert held == {ViewKey(1, named), ViewKey(2), ViewKey(1, inline[1])}
    assert find_path(grid, (0, 0), (1, 1), profile=inline[2]).grid is not None
    assert ViewKey(1, inline[1]) not in grid.views()
    huge = terrain.profile({"multipliers": {"swamp": 1e30}})
    assert grid.terrain is not None
    swamp = next(
        (x, y)
        for (y, x), c in np.ndenumerate(grid.terrain.classes)
        if c == 1 and grid.terrain.base[y, x] > 0
    )
    edited = apply_changes(grid, changes_of(grid, [CellsEdit([list(swamp)], cost=1e10)],
                                            max_cells=8))  # fmt: skip
    assert set(edited.views()) == {ViewKey(1, named), ViewKey(2)}
    with pytest.raises(InvalidQueryError, match="outside float32's range"):
        edited.view(ViewKey(1, huge))
