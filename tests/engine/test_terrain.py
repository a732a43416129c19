"""Terrain classes and profiles: a profile's costs, its views, and exact searches on
them against scipy's Dijkstra on the profile's own cost grid."""

import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from service.config import get_settings
from service.engine import (
    STATUS_NAMES,
    GridMap,
    PathQuery,
    SearchOptions,
    find_path,
    find_paths,
    find_paths_between,
)
from service.engine.errors import (
    InvalidMapError,
    InvalidQueryError,
    NotWalkableError,
    UnitGridTooBigError,
)
from service.engine.fields import distance_field
from service.engine.footprint import memory_estimate
from service.engine.held_paths import check_paths
from service.engine.movingai import parse_map
from service.engine.terrain import MAX_CLASSES, UNIFORM, Profile, Terrain, movingai_terrain
from service.engine.views import ViewKey
from tests.engine.test_agent_size import eroded
from tests.engine.test_fields import oracle_field
from tests.support import POLICIES, assert_optimal, close, oracle_distances

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ("ground", "swamp", "water", "road")
#: Ways of walking the random maps below: each class multiplied or excluded.
PROFILES: tuple[dict[str, object], ...] = (
    {},
    {"multipliers": {"swamp": 3.0, "road": 0.5}},
    {"multipliers": {"water": 1.0}, "exclude": ["ground", "swamp", "road"]},  # a boat
    {"multipliers": {"swamp": 2.5}, "exclude": ["water"]},
)


def random_terrain(seed: int, width: int = 23, height: int = 19) -> Terrain:
    rng = np.random.default_rng(seed)
    base = rng.choice(np.array([0.0, 1.0, 1.0, 2.0, 3.5], np.float32), size=(height, width))
    classes = rng.integers(len(NAMES), size=(height, width))
    return Terrain.of(base=base, classes=classes, names=NAMES)


def brute_costs(terrain: Terrain, spec: dict[str, object]) -> npt.NDArray[np.float32]:
    """Each cell's cost under ``spec``, one by one from the definition."""
    multipliers = spec.get("multipliers") or {}
    exclude = spec.get("exclude") or []
    assert isinstance(multipliers, dict)
    assert isinstance(exclude, list)
    out = np.zeros(terrain.base.shape, np.float32)
    for (y, x), base in np.ndenumerate(terrain.base):
        name = terrain.names[terrain.classes[y, x]]
        if base > 0 and name not in exclude:
            out[y, x] = np.float32(float(base) * float(multipliers.get(name, 1.0)))
    return out


def movingai_texts() -> list[str]:
    texts = [path.read_text() for path in sorted(EXAMPLES.glob("*.map"))]
    data = get_settings().bench_data
    for name in ("dao/arena.map", "dao/den520d.map", "sc1/AcrosstheCape.map"):
        if (data / name).exists():
            texts.append((data / name).read_text())
    return texts


def test_a_movingai_maps_default_profile_has_the_maps_own_costs() -> None:
    for text in movingai_texts():
        rows = parse_map(text)
        terrain = movingai_terrain(rows)
        grid = GridMap.from_terrain(terrain)
        plain = GridMap.from_movingai(text)
        assert grid.costs.dtype == plain.costs.dtype
        assert np.array_equal(grid.costs, plain.costs)
        assert terrain.default.spec(terrain.names) == {"multipliers": {},
                                                       "exclude": ["water", "trees"]}  # fmt: skip


def test_movingai_letters_become_named_classes() -> None:
    terrain = movingai_terrain([".GSWT", "@O..T"])
    assert terrain.names == ("ground", "swamp", "water", "trees")
    assert terrain.classes.tolist() == [[0, 0, 1, 2, 3], [0, 0, 0, 0, 3]]
    assert terrain.base.tolist() == [[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]]
    boat = terrain.profile({"exclude": ["ground", "swamp", "trees"]})
    assert terrain.costs(boat).tolist() == [[0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]


@pytest.mark.parametrize("spec", PROFILES)
def test_a_profiles_costs_are_base_times_multiplier_and_walls_where_excluded(
    spec: dict[str, object],
) -> None:
    terrain = random_terrain(7)
    costs = terrain.costs(Profile.of(spec, NAMES))
    assert costs.dtype == np.float32
    assert np.array_equal(costs, brute_costs(terrain, spec))


def test_equal_profiles_are_equal_values() -> None:
    a = Profile.of({"multipliers": {"swamp": 3, "road": 1.0}, "exclude": []}, NAMES)
    b = Profile.of({"multipliers": {"swamp": 3.0}}, NAMES)
    assert a == b
    assert hash(a) == hash(b)
    assert Profile.of({}, NAMES) == UNIFORM
    excluded = Profile.of({"multipliers": {"water": 4.0}, "exclude": ["water"]}, NAMES)
    assert excluded == Profile.of({"exclude": ["water"]}, NAMES)  # excluded wins


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"multipliers": {"lava": 2.0}}, "'lava'"),
        ({"exclude": ["lava"]}, "'lava'"),
        ({"multipliers": {"swamp": 0.0}}, "above 0"),
        ({"multipliers": {"swamp": -1.0}}, "above 0"),
        ({"multipliers": {"swamp": math.inf}}, "finite"),
        ({"multipliers": {"swamp": math.nan}}, "finite"),
        ({"multipliers": {"swamp": True}}, "number"),
        ({"multipliers": {"swamp": "2"}}, "number"),
        ({"multipliers": [["swamp", 2.0]]}, "object"),
        ({"exclude": "water"}, "list"),
        ({"costs": {}}, "'costs'"),
    ],
)
def test_an_invalid_profile_names_what_is_wrong(spec: dict[str, object], words: str) -> None:
    with pytest.raises(InvalidQueryError, match=words):
        Profile.of(spec, NAMES)


def test_a_multiplier_past_float32_is_refused_naming_the_class() -> None:
    terrain = Terrain.of(base=[[1e30, 1.0]], classes=[[1, 0]], names=NAMES)
    profile = Profile.of({"multipliers": {"swamp": 1e20}}, NAMES)
    with pytest.raises(InvalidQueryError, match=r"'swamp'.*float32"):
        terrain.costs(profile)


@pytest.mark.parametrize(
    ("classes", "names", "words"),
    [
        ([[0, 4]], NAMES, "from 0 to 3"),
        ([[0, -1]], NAMES, "from 0 to 3"),
        ([[0.5, 1]], NAMES, "integers"),
        ([[0, 1, 2]], NAMES, "shape"),
        ([[0, 0]], ("a", "a"), "distinct"),
        ([[0, 0]], ("a", ""), "class_names\\[1\\]"),
        ([[0, 0]], tuple(f"c{i}" for i in range(MAX_CLASSES + 1)), "1 to 64"),
    ],
)
def test_invalid_terrain_is_refused(classes: list[list[float]], names: tuple[str, ...],
                                    words: str) -> None:  # fmt: skip
    with pytest.raises(InvalidMapError, match=words):
        Terrain.of(base=[[1.0, 1.0]], classes=classes, names=names)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("spec", PROFILES)
def test_a_profiles_paths_cost_what_dijkstra_finds_on_its_costs(
    policy: str, spec: dict[str, object]
) -> None:
    terrain = random_terrain(POLICIES.index(policy) * 10 + PROFILES.index(spec))
    grid = GridMap.from_terrain(terrain)
    profile = terrain.profile(spec)
    oracle = GridMap.from_costs(brute_costs(terrain, spec))
    ys, xs = np.nonzero(oracle.costs > 0)
    rng = np.random.default_rng(len(spec))
    picks = rng.integers(xs.size, size=10)
    start = (int(xs[picks[0]]), int(ys[picks[0]]))
    distances = oracle_distances(oracle, start, policy)
    for i in picks[1:]:
        goal = (int(xs[i]), int(ys[i]))
        result = find_path(grid, start, goal, diagonal=policy, profile=profile)
        # Re-walked on the profile's costs: no excluded cell, the same cost.
        assert_optimal(result, distances[goal[1], goal[0]], oracle, policy)


@pytest.mark.parametrize("size", [2, 3])
def test_a_profile_combines_with_an_agent_size(size: int) -> None:
    terrain = Terrain.of(base=np.ones((20, 24), np.float32),
                         classes=np.random.default_rng(size).integers(4, size=(20, 24)) // 3 * 2,
                         names=NAMES)  # fmt: skip
    spec: dict[str, object] = {"multipliers": {"ground": 2.0}}  # ground 2, water 1
    grid = GridMap.from_terrain(terrain)
    small = eroded(GridMap.from_costs(brute_costs(terrain, spec)), size)
    ys, xs = np.nonzero(small.costs > 0)
    start = (int(xs[0]), int(ys[0]))
    distances = oracle_distances(small, start, "no_corner_cutting")
    for i in range(0, xs.size, max(1, xs.size // 12)):
        goal = (int(xs[i]), int(ys[i]))
        result = find_path(grid, start, goal, agent_size=size, profile=terrain.profile(spec))
        best = distances[goal[1], goal[0]]
        assert (result.status == "found") == bool(np.isfinite(best))
        if np.isfinite(best):
            assert close(result.cost or 0.0, best)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("spec", PROFILES)
def test_a_profiles_field_equals_the_oracle_on_its_costs(
    policy: str, spec: dict[str, object]
) -> None:
    terrain = random_terrain(40 + PROFILES.index(spec))
    own = GridMap.from_costs(brute_costs(terrain, spec))
    ys, xs = np.nonzero(own.costs > 0)
    goals = [(int(xs[i]), int(ys[i])) for i in (0, xs.size // 2)]
    field = distance_field(GridMap.from_terrain(terrain), goals, diagonal=policy,
                           max_goals=4, profile=terrain.profile(spec))  # fmt: skip
    np.testing.assert_allclose(field.distance, oracle_field(own, goals, policy), rtol=1e-12)


def test_a_goal_the_profile_excludes_is_not_walkable() -> None:
    terrain = movingai_terrain(["..WW", "..WW"])
    grid = GridMap.from_terrain(terrain)
    boat = terrain.profile({"exclude": ["ground"]})
    assert distance_field(grid, [(3, 1)], max_goals=1, profile=boat).distance[0, 3] == 1.0
    with pytest.raises(NotWalkableError, match=r"goals\[0\] .* class 'ground', which the prof"):
        distance_field(grid, [(0, 0)], max_goals=1, profile=boat)
    with pytest.raises(NotWalkableError, match=r"goals\[1\] .* class 'ground', which the prof"):
        find_path(grid, (3, 0), goals=[(3, 1), (1, 1)], profile=boat)
    with pytest.raises(NotWalkableError, match=r"start \(x=0, y=0\) is on class 'ground', "
                       "which the profile excludes"):  # fmt: skip
        find_path(grid, (0, 0), (3, 1), profile=boat)
    with pytest.raises(NotWalkableError, match=r"goal .* class 'water', which the map's default"):
        find_path(grid, (0, 0), (3, 1))


def test_a_uniform_profile_runs_jps_on_its_view() -> None:
    rows = ["WWWWWWWWWW", "W....WWWWW", "WWWW.WW..W", "WWWWWWWWWW"]
    grid = GridMap.from_terrain(movingai_terrain(rows))
    assert grid.terrain is not None
    boat = grid.terrain.profile({"exclude": ["ground"]})
    result = find_path(grid, (0, 0), (9, 3), profile=boat)
    assert (result.status, result.algorithm_used) == ("found", "jps")
    water = GridMap.from_costs(grid.terrain.costs(boat))
    assert close(result.cost or 0.0, oracle_distances(water, (0, 0), "no_corner_cutting")[3, 9])
    # The map's own unit (the default profile: no water) cannot start there.
    with pytest.raises(NotWalkableError):
        find_path(grid, (0, 0), (9, 3))


def test_a_view_per_profile_is_built_once_and_the_default_is_the_map() -> None:
    terrain = random_terrain(3)
    grid = GridMap.from_terrain(terrain)
    assert grid.view(ViewKey(1, terrain.default)) is grid
    swamp = terrain.profile({"multipliers": {"swamp": 3.0}})
    view = grid.view(ViewKey(1, swamp))
    assert view is grid.view(ViewKey(1, terrain.profile({"multipliers": {"swamp": 3}})))
    assert np.array_equal(view.costs, terrain.costs(swamp))
    assert ViewKey(1, swamp) in grid.views()


def test_a_map_without_classes_takes_only_the_uniform_profile() -> None:
    grid = GridMap.from_rows(["....", "...."])
    assert find_path(grid, (0, 0), (3, 1), profile=UNIFORM).status == "found"
    with pytest.raises(InvalidQueryError, match="no terrain classes"):
        find_path(grid, (0, 0), (3, 1), profile=Profile(((0, 2.0),)))


def test_held_paths_are_checked_on_the_profiles_costs() -> None:
    terrain = movingai_terrain(["..WW", "..WW"])
    grid = GridMap.from_terrain(terrain)
    paths = [[(0, 0), (1, 0)], [(2, 0), (3, 0), (3, 1)], [(1, 0), (2, 0)]]
    boat = check_paths(grid, paths, profile=terrain.profile({"exclude": ["ground"]}))
    assert boat.walkable.tolist() == [False, True, False]
    assert boat.cost[1] == 2.0
    slow = check_paths(
        grid, paths, profile=terrain.profile({"multipliers": {"ground": 2.5}, "exclude": ["water"]})
    )
    assert slow.walkable.tolist() == [True, False, False]
    assert slow.cost[0] == 2.5


def test_a_batch_checks_every_start_on_the_profiles_view() -> None:
    """Later queries sharing a goal were checked on the map's own costs: a boat's
    start on water was NotWalkable, and a start the profile excludes crashed the
    batch."""
    terrain = movingai_terrain(["WWW.WWW", "WWWWWWW"])
    grid = GridMap.from_terrain(terrain)
    options = SearchOptions(profile=terrain.profile({"exclude": ["ground"]}))
    starts = [(0, 0), (1, 0), (3, 0), (2, 1)]
    answers = find_paths(grid, [PathQuery(s, (6, 0), options) for s in starts])
    assert [getattr(a, "status", None) for a in answers] == ["found", "found", None, "found"]
    assert isinstance(answers[2], NotWalkableError)
    assert "class 'ground', which the profile excludes" in str(answers[2])
    batch = find_paths_between(grid, np.array([[0, 0, 6, 0], [2, 1, 6, 0]]), options=options)
    assert batch.status.tolist() == [STATUS_NAMES.index("found")] * 2


def test_a_bigger_units_view_under_a_profile_keeps_within_the_bound() -> None:
    terrain = random_terrain(9, 40, 40)
    grid = GridMap.from_terrain(terrain)
    grid.limit_views(int(1.5 * grid.view_bytes()))
    swamp = terrain.profile({"multipliers": {"swamp": 2.0}})
    with pytest.raises(UnitGridTooBigError, match="agent_size 2 under the profile"):
        grid.view(ViewKey(2, swamp))
    grid.view(ViewKey(1, swamp))  # one view fits
    assert sum(view.nbytes for view in grid.views().values()) <= 1.5 * grid.view_bytes()


def test_profiles_equal_in_value_are_equal_in_hash() -> None:
    half = Profile(((1, np.float32(0.5)),))  # type: ignore[arg-type]
    assert half == Profile([(1, 0.5)])  # type: ignore[arg-type]
    assert hash(half) == hash(Profile(((1, 0.5),)))
    tenth = Profile(((1, np.float32(0.1)),))  # type: ignore[arg-type]
    assert tenth != Profile(((1, 0.1),))  # not the same number
    with pytest.raises(InvalidQueryError, match="integer of excluded classes"):
        Profile(excluded=2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"multipliers": {"swamp": 10**400}}, "finite"),
        ({"multipliers": []}, "object"),
        ({"multipliers": 0}, "object"),
        ({"exclude": 0}, "list"),
    ],
)
def test_a_profile_of_odd_json_is_invalid(spec: dict[str, object], words: str) -> None:
    with pytest.raises(InvalidQueryError, match=words):
        Profile.of(spec, NAMES)


@pytest.mark.parametrize("base", [math.nan, -1.0, math.inf, 1e39])
def test_a_bad_base_cost_is_refused_naming_the_cell(base: float) -> None:
    with pytest.raises(InvalidMapError, match=r"base cost at \(x=1, y=0\)"):
        Terrain.of(base=[[1.0, base]], classes=[[0, 0]], names=NAMES)


def test_a_terrain_maps_bytes_are_what_its_estimate_says() -> None:
    rows = ["..W..T.." * 5] * 30
    grid = GridMap.from_terrain(movingai_terrain(rows))
    grid.prepare_jumps(max_table_bytes=1 << 30)
    assert grid.uniform
    estimate = memory_estimate(40, 30, uniform=True, jump_table_bytes=1 << 30, terrain=True)
    assert grid.nbytes == estimate


@pytest.mark.parametrize("multiplier", [0.5, 3.0, 0.1, 1 / 3, 1e30, 1e-30])
def test_a_profiles_costs_are_the_float64_product_rounded(multiplier: float) -> None:
    """Costs under float32 multipliers are taken in float32: the same values."""
    rng = np.random.default_rng(4)
    base = rng.uniform(0.001, 1e6, (20, 30)).astype(np.float32)
    terrain = Terrain.of(base=base, classes=rng.integers(2, size=(20, 30)), names=NAMES[:2])
    try:
        costs = terrain.costs(terrain.profile({"multipliers": {"swamp": multiplier}}))
    except InvalidQueryError:
        assert multiplier in (1e30, 1e-30)  # out of float32's range on some cell
        return
    factors = np.where(terrain.classes == 1, multiplier, 1.0)
    expected = (base.astype(np.float64) * factors).astype(np.float32)
    np.testing.assert_array_equal(costs, expected)
