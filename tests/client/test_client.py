"""Every method of the blocking client against the real service."""

import io
import itertools
import math
from typing import Any

import httpx
import numpy as np
import pytest
from gridpath_client import (
    CellsEdit,
    CircleRegion,
    Client,
    FlowField,
    GridpathError,
    MapInfo,
    MapNotFound,
    MapTables,
    NotFound,
    NotReady,
    NotWalkable,
    PatchEdit,
    PathResult,
    Query,
    RectEdit,
    RectRegion,
    Trace,
)

from tests.client.conftest import ROOMS, rooms_rows, untabled
from tests.support import serpentine

#: The README's quick tour: this query's cost on rooms.map, and where it goes.
START, GOAL = (2, 2), (28, 11)
COST = 30.899494936611667
#: Three columns; the middle one a wall: (0, 0) cannot reach (2, 0).
SPLIT = ["..@..", "..@..", "..@.."]


def steps(path: Any) -> list[tuple[int, int]]:
    """The moves between consecutive points of a path."""
    points = [tuple(p) for p in np.asarray(path).tolist()]
    return [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(points)]


def server_traces(url: str) -> bool:
    """Whether this service build takes ``trace`` on a path query (it is being added)."""
    schema = httpx.get(f"{url}/openapi.json").json()
    return "trace" in schema["components"]["schemas"]["PathRequest"]["properties"]


# -- maps ---------------------------------------------------------------------------------


def test_upload_from_a_path_reads_the_file_and_names_the_map_after_it(
    client: Client, rooms: MapInfo
) -> None:
    assert rooms.name == "rooms"
    assert (rooms.width, rooms.height, rooms.walkable_cells) == (32, 16, 377)
    assert (rooms.islands, rooms.islands_8, rooms.revision) == (1, 1, 0)
    assert (rooms.min_cost, rooms.max_cost) == (1.0, 1.0)
    assert rooms.health.status == "ok"
    assert rooms.health.reason is None
    assert isinstance(rooms.tables, MapTables)
    assert rooms.tables.islands.status == "ready"
    assert rooms.tables.clusters.status in {"building", "ready"}
    assert rooms.format_version >= 1
    assert rooms.created_at.endswith(("Z", "+00:00"))


@pytest.mark.parametrize(
    "source",
    [
        ROOMS.read_text(),  # Moving AI text
        ROOMS.read_bytes(),  # the same, as bytes
        rooms_rows(),  # JSON rows
        [[0.0 if ch == "@" else 1.0 for ch in row] for row in rooms_rows()],  # JSON costs
        np.array([[0 if ch == "@" else 1 for ch in row] for row in rooms_rows()], np.uint8),
    ],
    ids=["map-text", "map-bytes", "json-rows", "json-costs", "npy-array"],
)
def test_every_upload_form_stores_the_same_map(client: Client, source: Any) -> None:
    info = client.upload_map(source, name="copy")
    try:
        assert (info.name, info.width, info.height, info.walkable_cells) == ("copy", 32, 16, 377)
        assert client.path(info.id, START, GOAL).cost == pytest.approx(COST)
    finally:
        client.delete_map(info.id)


def test_npy_bytes_are_sent_as_npy(client: Client) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.array([[1.0, 2.0], [0.0, 1.0]], np.float32))
    info = client.upload_map(buffer.getvalue())
    assert (info.width, info.height, info.walkable_cells, info.max_cost) == (2, 2, 3, 2.0)
    assert info.name is None
    client.delete_map(info.id)


@pytest.mark.parametrize("source", [ROOMS.read_text(), rooms_rows()], ids=["query", "json"])
def test_cluster_size_is_sent_with_either_kind_of_upload(client: Client, source: Any) -> None:
    with pytest.raises(GridpathError) as caught:
        client.upload_map(source, cluster_size=3)
    assert caught.value.code == "InvalidValue"
    assert "cluster_size 3" in caught.value.message


def test_costs_of_bools_or_strings_are_refused_before_sending(client: Client) -> None:
    # float(True) is 1.0: the client sent costs the service refuses as JSON.
    import numpy as np

    bad_cells: list[tuple[Any, str]] = [(True, "bool"), ("1", "str"), (np.True_, "bool")]
    for bad, kind in bad_cells:
        with pytest.raises(TypeError, match=rf"^costs\[1\]\[0\] must be a number, got {kind}"):
            client.upload_map([[1, 2], [bad, 1]])
    numbers: list[list[Any]] = [[np.float32(1.5), np.int64(2)], [1, 0]]
    info = client.upload_map(numbers)  # numpy's numbers are fine
    assert (info.walkable_cells, info.max_cost) == (3, 2.0)
    client.delete_map(info.id)


def test_get_list_and_delete(client: Client) -> None:
    info = client.upload_map(SPLIT, name="split")
    assert untabled(client.get_map(info.id)) == untabled(info)  # tables build meanwhile
    assert info.id in [m.id for m in client.list_maps()]
    client.delete_map(info.id)
    assert info.id not in [m.id for m in client.list_maps()]
    with pytest.raises(MapNotFound) as caught:
        client.get_map(info.id)
    assert info.id in caught.value.message
    with pytest.raises(MapNotFound):
        client.delete_map(info.id)


def test_map_ids_are_quoted_into_the_url(client: Client) -> None:
    """An id cannot reach another route: ``/`` is sent as ``%2F`` (the service decodes
    it before routing, so this is no route rather than no map: never ``/healthz``)."""
    with pytest.raises(NotFound) as caught:
        client.get_map("../healthz")
    assert "/v1/maps/../healthz" in caught.value.message
    with pytest.raises(MapNotFound) as missing:
        client.get_map("no such map?")
    assert "no such map?" in missing.value.message


def test_ready(client: Client) -> None:
    assert client.ready() is True


# -- paths ---------------------------------------------------------------------------------


def test_path_as_numpy(client: Client, rooms: MapInfo) -> None:
    result = client.path(rooms.id, START, GOAL)
    assert isinstance(result, PathResult)
    assert result.found
    assert result.cost == pytest.approx(COST)
    assert result.length == pytest.approx(COST)
    assert isinstance(result.path, np.ndarray)
    assert result.path.dtype == np.int32
    assert result.path.shape[1] == 2
    assert tuple(result.path[0]) == START
    assert tuple(result.path[-1]) == GOAL
    assert (result.format, result.algorithm_used, result.heuristic_used) == (
        "waypoints",
        "jps",
        "octile",
    )
    assert result.expanded > 0
    assert result.elapsed_us >= 0
    assert (result.revision, result.reached, result.partial_reason) == (0, GOAL, None)
    assert result.trace is None


def test_path_as_lists(server_url: str, rooms: MapInfo) -> None:
    with Client(server_url, as_numpy=False) as plain:
        assert plain.as_numpy is False
        result = plain.path(rooms.id, START, GOAL, format="cells")
    assert isinstance(result.path, list)
    assert result.path[0] == START
    assert result.path[-1] == GOAL
    assert all(isinstance(p, tuple) and len(p) == 2 for p in result.path)
    assert len(result.path) > 12


def test_options_are_sent_as_given(client: Client, rooms: MapInfo) -> None:
    result = client.path(
        rooms.id,
        START,
        GOAL,
        diagonal="never",
        heuristic="manhattan",
        algorithm="astar",
        format="cells",
        weight=1.5,
        max_expansions=100_000,
    )
    assert result.found
    assert (result.algorithm_used, result.heuristic_used) == ("astar", "manhattan")
    assert set(steps(result.path)) <= {(1, 0), (-1, 0), (0, 1), (0, -1)}


def test_an_unknown_option_is_a_type_error(client: Client, rooms: MapInfo) -> None:
    with pytest.raises(TypeError, match="heuristics"):
        client.path(rooms.id, START, GOAL, heuristics="zero")  # type: ignore[call-arg]


def test_goal_sets_and_regions(client: Client, rooms: MapInfo) -> None:
    many = client.path(rooms.id, START, goals=[(28, 11), (5, 2)])
    assert many.reached == (5, 2)
    rect = client.path(rooms.id, START, goal_region=RectRegion(20, 8, 4, 4))
    assert rect.reached is not None
    assert 20 <= rect.reached[0] < 24
    assert 8 <= rect.reached[1] < 12
    disc = client.path(rooms.id, START, goal_region=CircleRegion((28, 11), 1.5))
    assert disc.reached is not None
    assert math.dist(disc.reached, (28, 11)) <= 1.5


def test_partial_and_no_path(client: Client, rooms: MapInfo) -> None:
    budget = client.path(rooms.id, START, GOAL, max_expansions=3, algorithm="astar")
    assert (budget.status, budget.partial_reason, budget.reached) == ("partial", "budget", None)
    nearest = client.path(rooms.id, START, (1, 1), unreachable="nearest")
    assert (nearest.status, nearest.partial_reason) == ("partial", "unreachable")
    split = client.upload_map(SPLIT)
    none = client.path(split.id, (0, 0), (4, 0))
    assert (none.status, none.cost, none.found) == ("no_path", None, False)
    assert isinstance(none.path, np.ndarray)
    assert none.path.shape == (0, 2)


def test_deadlines_reach_the_service_and_their_answers_say_so(client: Client) -> None:
    grid, far, _ = serpentine(1001)  # a search to its far end takes tens of milliseconds
    buffer = io.BytesIO()
    np.save(buffer, grid.costs)
    maze = client.upload_map(buffer.getvalue())
    cut = client.path(maze.id, (0, 0), far, algorithm="astar", deadline_ms=2)
    assert (cut.status, cut.partial_reason) == ("partial", "deadline")
    batch = client.paths(maze.id, [((0, 0), far), ((0, 0), far)], deadline_ms=2)
    assert all(isinstance(r, PathResult) for r in batch)
    assert [(r.status, r.partial_reason) for r in batch if isinstance(r, PathResult)] == [
        ("partial", "deadline")
    ] * 2
    field = client.field(maze.id, [far], deadline_ms=2)
    assert field.partial_reason == "deadline"
    assert client.field(maze.id, [far]).partial_reason is None
    client.delete_map(maze.id)


def test_trace(client: Client, server_url: str, rooms: MapInfo) -> None:
    if not server_traces(server_url):  # until the service has traces: refused, named
        with pytest.raises(GridpathError) as caught:
            client.path(rooms.id, START, GOAL, trace=True)
        assert caught.value.code == "InvalidQuery"
        assert "trace" in caught.value.message
        return
    result = client.path(rooms.id, START, GOAL, trace=True, algorithm="astar")
    assert isinstance(result.trace, Trace)
    expanded = result.trace.expanded
    assert isinstance(expanded, np.ndarray)
    assert expanded.shape == (result.expanded, 2)
    assert tuple(expanded[0]) == START
    assert result.trace.reopened == 0
    assert result.trace.cut is False


def test_batch(client: Client, rooms: MapInfo) -> None:
    results = client.paths(
        rooms.id,
        [
            (START, GOAL),
            Query((0, 0), (31, 15), max_expansions=5),
            Query((1, 1), (2, 2)),
            Query(START, GOAL, algorithm="jps"),
        ],
        algorithm="astar",
    )
    first, budget, bad, own = results
    assert isinstance(first, PathResult)
    assert first.cost == pytest.approx(COST)
    assert first.algorithm_used == "astar"  # the batch's default
    assert isinstance(budget, PathResult)
    assert budget.partial_reason == "budget"
    assert isinstance(bad, NotWalkable)  # returned in its slot, not raised
    assert bad.code == "NotWalkable"
    assert bad.status == 400
    assert "x=1, y=1" in bad.message
    assert isinstance(own, PathResult)
    assert own.algorithm_used == "jps"  # its own option


def test_check_paths_after_an_edit(client: Client) -> None:
    info = client.upload_map(["....", "....", "...."])
    route = client.path(info.id, (0, 1), (3, 1), format="cells")
    assert client.check_paths(info.id, [route.path]).results[0].walkable
    edited = client.edit(info.id, [CellsEdit([(1, 1)], 0)])
    checks = client.check_paths(info.id, [route.path, [(0, 0), (3, 0)]], diagonal="never")
    assert checks.revision == edited.revision == 1
    broken, fine = checks.results
    assert (broken.walkable, broken.cost, broken.blocked_at) == (False, None, (1, 1))
    assert (fine.walkable, fine.cost, fine.blocked_at) == (True, 3.0, None)


def test_check_paths_with_snap_says_where_a_walled_in_unit_can_stand(client: Client) -> None:
    info = client.upload_map(["......."] * 4)
    held = client.path(info.id, (3, 1), (6, 3)).path
    client.edit(info.id, [CellsEdit([(x, y) for x in (2, 3, 4) for y in (1, 2)], 0)])
    (walled,) = client.check_paths(info.id, [held], snap=True).results
    assert (walled.walkable, walled.blocked_at, walled.snapped) == (False, (3, 1), (3, 0))
    assert client.check_paths(info.id, [held]).results[0].snapped is None


# -- fields and edits ----------------------------------------------------------------------


def test_field_as_numpy(client: Client, rooms: MapInfo) -> None:
    field = client.field(rooms.id, [GOAL])
    assert isinstance(field, FlowField)
    assert field.revision == 0
    assert isinstance(field.cost, np.ndarray)
    assert isinstance(field.next, np.ndarray)
    assert isinstance(field.goals, np.ndarray)
    assert field.cost.shape == field.next.shape == (16, 32)
    assert (field.cost.dtype.name, field.next.dtype.name) == ("float32", "int8")
    assert field.goals.tolist() == [list(GOAL)]
    assert field.cost[GOAL[1], GOAL[0]] == 0
    assert math.isinf(field.cost[1, 1])
    assert field.cost[START[1], START[0]] == pytest.approx(COST, rel=1e-6)
    assert walk(field, START) == GOAL
    assert client.field(rooms.id, [GOAL]).cache_hit is True


def test_field_costs_past_float32_are_float64_in_either_form(client: Client) -> None:
    """Sums past float32's range read inf: in the .npz, and from JSON with numpy."""
    info = client.upload_map([[3e38] * 5])
    step = float(np.float32(3e38))
    expected = [[x * step for x in range(5)]]
    field = client.field(info.id, [(0, 0)])
    assert isinstance(field.cost, np.ndarray)
    assert (field.cost.dtype.name, field.cost.tolist()) == ("float64", expected)
    rows: list[list[float | None]] = [[*expected[0][:4], None]]
    json_form = {"revision": 0, "goals": [[0, 0]], "cost": rows, "next": [[-1, 1, 1, 1, -1]]}
    parsed = FlowField.from_json(json_form, as_numpy=True, cache_hit=None)
    assert isinstance(parsed.cost, np.ndarray)
    assert parsed.cost.dtype.name == "float64"
    assert parsed.cost.tolist() == [[*expected[0][:4], math.inf]]
    small = FlowField.from_json(json_form | {"cost": [[0, 1.5, None]]}, as_numpy=True,
                                cache_hit=None)  # fmt: skip
    assert isinstance(small.cost, np.ndarray)
    assert small.cost.dtype.name == "float32"


def test_field_as_lists_comes_as_json(server_url: str, rooms: MapInfo) -> None:
    with Client(server_url, as_numpy=False) as plain:
        field = plain.field(rooms.id, [GOAL], diagonal="never", max_cost=20.0)
    assert isinstance(field.cost, list)
    assert len(field.cost) == 16
    assert len(field.cost[0]) == 32
    assert field.goals == [GOAL]
    assert field.cost[GOAL[1]][GOAL[0]] == 0
    assert field.cost[1][1] == math.inf  # a wall: null in JSON
    assert field.cost[START[1]][START[0]] == math.inf  # beyond max_cost
    assert field.next[START[1]][START[0]] == -1
    assert walk(field, (25, 11)) == GOAL


def walk(field: FlowField, cell: tuple[int, ...]) -> tuple[int, ...]:
    """Follow the field's first steps from ``cell`` until they stop."""
    for _ in range(len(field.cost) * 64):
        step = field.next_cell(*cell)
        if step is None:
            return cell
        cell = step
    raise AssertionError("the field's steps go round in circles")


def test_edit_every_shape(client: Client) -> None:
    info = client.upload_map(["....", "....", "...."])
    wall = client.edit(info.id, [RectEdit(1, 0, 1, 2, 0)])
    assert (wall.revision, wall.changed_cells) == (1, 2)
    assert isinstance(wall.tables, MapTables)
    assert wall.applied_us >= 0
    patch = client.edit(
        info.id,
        [PatchEdit((2, 1), np.array([[5.0, 5.0]])), CellsEdit(np.array([[0, 2]]), 3)],
        if_revision=1,
        keep_connected=[(0, 0), (3, 2)],
    )
    assert (patch.revision, patch.changed_cells) == (2, 3)
    assert client.get_map(info.id).max_cost == 5.0
    raw = client.edit(info.id, [{"rect": [3, 0, 1, 1], "cost": 2}])  # JSON as is
    assert raw.revision == 3


def test_min_revision_reads_your_writes(server_url: str) -> None:
    with Client(server_url, retries=0) as client:
        info = client.upload_map(["....", "...."])
        edited = client.edit(info.id, [CellsEdit([(1, 0)], 0)])
        after = client.path(info.id, (0, 0), (3, 0), min_revision=edited.revision)
        assert after.revision == edited.revision
        (batched,) = client.paths(info.id, [((0, 0), (3, 0))], min_revision=edited.revision)
        assert isinstance(batched, PathResult)
        assert batched.revision == edited.revision
        with pytest.raises(NotReady, match="min_revision 99 was not reached"):
            client.path(info.id, (0, 0), (3, 0), min_revision=99)


def test_upload_map_reuses_the_map_of_its_name(client: Client) -> None:
    first = client.upload_map(["....", "...."], name="reused by the client", if_exists="reuse")
    again = client.upload_map(["....", "...."], name="reused by the client", if_exists="reuse")
    assert again.id == first.id
    assert [m.id for m in client.list_maps(name="reused by the client")] == [first.id]
