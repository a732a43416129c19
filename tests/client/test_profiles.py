"""Terrain classes and movement profiles through the client, against the real service:
uploads with classes, named profiles, the ``profile`` of every query, class edits."""

from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from gridpath_client import (
    CellsEdit,
    Client,
    FlowField,
    GridpathError,
    MapInfo,
    NotWalkable,
    PathChecks,
    PathResult,
    ProfileInfo,
    ProfileNotFound,
    Profiles,
    Query,
    RectEdit,
    WouldDisconnect,
    calls,
)

from tests.client.conftest import ROOMS

#: A river (water) with a swamp bank on either side and one ford (ground) across it.
NAMES = ["ground", "swamp", "water"]
CLASSES = [
    [0, 0, 1, 2, 2, 1, 0, 0],
    [0, 0, 1, 2, 2, 1, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 1, 2, 2, 1, 0, 0],
]
#: Base costs: 1, but 2 on the ford's row.
COSTS = [[1.0] * 8, [1.0] * 8, [2.0] * 8, [1.0] * 8]
TANK = {"multipliers": {"swamp": 3.0}, "exclude": ["water"]}
BOAT = {"exclude": ["ground", "swamp"]}
#: Across the river, and along it on the water.
WEST, EAST = (0, 0), (7, 0)
UPSTREAM, DOWNSTREAM = (3, 0), (4, 1)


def river(client: Client, **extra: Any) -> MapInfo:
    """The river map with its classes, base costs, default profile (no water) and the
    named profile ``tank``."""
    info = client.upload_map(COSTS, classes=CLASSES, class_names=NAMES,
                             default_profile={"exclude": ["water"]}, **extra)  # fmt: skip
    client.put_profile(info.id, "tank", TANK)
    return info


# -- uploads ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "max_cost"),
    [(COSTS, 2.0), (np.array(COSTS, np.float32), 2.0), (None, 1.0)],
    ids=["json-costs", "npy-array-as-rows", "no-costs"],
)
def test_an_upload_with_classes_carries_its_names_costs_and_default_profile(
    client: Client, source: Any, max_cost: float
) -> None:
    classes = np.array(CLASSES, np.uint8)  # an array of ids is sent as rows too
    info = client.upload_map(source, name="river", classes=classes, class_names=NAMES,
                             default_profile={"exclude": ["water"]})  # fmt: skip
    try:
        assert (info.name, info.width, info.height, info.max_cost) == ("river", 8, 4, max_cost)
        listed = client.profiles(info.id)
        assert isinstance(listed, Profiles)
        assert (listed.revision, listed.class_names, listed.profiles) == (0, NAMES, [])
        assert listed.default == {"multipliers": {}, "exclude": ["water"]}
        default = client.path(info.id, WEST, EAST)
        assert (default.status, default.profile_used) == ("found", "default")
        with pytest.raises(NotWalkable):  # water: the default profile's wall
            client.path(info.id, UPSTREAM, DOWNSTREAM)
    finally:
        client.delete_map(info.id)


def test_a_movingai_map_lists_its_terrain_letters_as_classes(
    client: Client, rooms: MapInfo
) -> None:
    listed = client.profiles(rooms.id)
    assert listed.class_names == ["ground", "swamp", "water", "trees"]
    assert listed.default == {"multipliers": {}, "exclude": ["water", "trees"]}
    assert listed.profiles == []


def test_a_map_of_costs_has_no_classes_and_takes_only_the_empty_profile(
    client: Client,
) -> None:
    info = client.upload_map([[1, 1], [1, 1]])
    listed = client.profiles(info.id)
    assert (listed.class_names, listed.default, listed.profiles) == ([], None, [])
    assert client.path(info.id, (0, 0), (1, 1), profile={}).profile_used == "inline"
    with pytest.raises(GridpathError, match="no terrain classes"):
        client.put_profile(info.id, "boat", BOAT)
    client.delete_map(info.id)


def test_terrain_upload_arguments_are_checked_before_sending(
    client: Client, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="both classes= and class_names="):
        client.upload_map(COSTS, classes=CLASSES)
    with pytest.raises(ValueError, match="both classes= and class_names="):
        client.upload_map(COSTS, class_names=NAMES, default_profile={})
    npy = tmp_path / "costs.npy"  # a file is sent as it is: it cannot carry classes
    np.save(npy, np.array(COSTS, np.float32))
    for not_costs in (ROOMS, npy, ROOMS.read_text(), ["...", ".@."]):
        with pytest.raises(TypeError, match="base costs"):
            client.upload_map(not_costs, classes=CLASSES, class_names=NAMES)
    with pytest.raises(TypeError, match=r"^classes\[0\]\[1\] must be an integer, got float"):
        client.upload_map(None, classes=[[0, 1.5]], class_names=NAMES)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="only with classes="):
        client.upload_map(None)


def test_a_class_id_without_a_name_is_refused_by_the_service(client: Client) -> None:
    with pytest.raises(GridpathError) as caught:
        client.upload_map(None, classes=[[0, 5]], class_names=["ground"])
    assert caught.value.code == "InvalidValue"


# -- named profiles -----------------------------------------------------------------------


def test_named_profiles_are_put_read_listed_and_deleted_as_revisions(client: Client) -> None:
    info = river(client)
    tank = client.profile(info.id, "tank")
    assert isinstance(tank, ProfileInfo)
    assert (tank.name, tank.profile, tank.revision) == ("tank", TANK, 1)
    boat = client.put_profile(info.id, "boat", BOAT)
    assert (boat.name, boat.revision) == ("boat", 2)
    assert boat.profile == {"multipliers": {}, "exclude": ["ground", "swamp"]}
    # (Its view is built in the background after the PUT, or by the first query.)
    assert boat.view_status in ("on_demand", "built")
    listed = client.profiles(info.id)
    assert [p.name for p in listed.profiles] == ["boat", "tank"]
    assert listed.revision == 2
    assert (listed.profiles[0].name, listed.profiles[0].profile) == ("boat", boat.profile)
    client.path(info.id, UPSTREAM, DOWNSTREAM, profile="boat")  # its view, if not yet built
    built = client.profile(info.id, "boat")
    assert (built.view_status, built.uniform) == ("built", True)
    assert built.view_bytes > 0
    assert client.delete_profile(info.id, "boat") == 3
    assert client.get_map(info.id).revision == 3
    assert [p.name for p in client.profiles(info.id).profiles] == ["tank"]


def test_putting_a_profile_again_replaces_it(client: Client) -> None:
    info = river(client)
    assert client.path(info.id, WEST, EAST, profile="tank").cost != 7.0
    amphibious = client.put_profile(info.id, "tank", {})
    assert (amphibious.profile, amphibious.revision) == ({"multipliers": {}, "exclude": []}, 2)
    assert client.path(info.id, WEST, EAST, profile="tank").cost == 7.0  # straight over


def test_an_unknown_profile_is_profile_not_found(client: Client) -> None:
    info = river(client)
    with pytest.raises(ProfileNotFound) as caught:
        client.path(info.id, WEST, EAST, profile="ghost")
    assert (caught.value.code, caught.value.status) == ("ProfileNotFound", 404)
    assert "'ghost'" in caught.value.message
    assert "tank" in caught.value.message  # the profiles it holds
    with pytest.raises(ProfileNotFound):
        client.profile(info.id, "ghost")
    with pytest.raises(ProfileNotFound):
        client.delete_profile(info.id, "ghost")


def test_profile_names_are_quoted_into_the_url() -> None:
    put = calls.put_profile("m", "a/b c", {})
    assert (put.method, put.url, put.json) == ("PUT", "/v1/maps/m/profiles/a%2Fb%20c", {})
    assert put.safe is True  # idempotent: retried after a broken connection
    assert calls.delete_profile("m", "boat").safe is False
    assert calls.get_profile("m", "boat").safe is calls.list_profiles("m").safe is True
    with pytest.raises(ValueError, match="must not be empty"):
        calls.get_profile("m", "")


# -- queries ------------------------------------------------------------------------------


def test_a_path_names_its_profile_or_gives_one_inline(client: Client) -> None:
    info = river(client)
    default = client.path(info.id, WEST, EAST)
    tank = client.path(info.id, WEST, EAST, profile="tank")
    inline = client.path(info.id, WEST, EAST, profile=MappingProxyType(TANK))  # any Mapping
    wader = client.path(info.id, WEST, EAST, profile={})  # every class by 1, water too
    assert [r.profile_used for r in (default, tank, inline, wader)] == [
        "default",
        "tank",
        "inline",
        "inline",
    ]
    assert wader.cost == 7.0  # straight over the river
    assert tank.cost is not None
    assert tank.cost > 7.0  # round by the ford
    assert inline.cost == tank.cost
    assert np.array_equal(default.path, tank.path)  # the ford's way avoids the swamp
    boat = client.path(info.id, UPSTREAM, DOWNSTREAM, profile=BOAT)
    assert (boat.status, boat.profile_used) == ("found", "inline")
    with pytest.raises(NotWalkable):  # ground is the boat's wall
        client.path(info.id, WEST, EAST, profile=BOAT)


def test_a_batch_takes_a_profile_in_its_defaults_and_per_query(client: Client) -> None:
    info = river(client)
    results = client.paths(
        info.id,
        [
            (WEST, EAST),
            Query(UPSTREAM, DOWNSTREAM, profile=BOAT),
            Query(WEST, EAST, profile="ghost"),
        ],
        profile="tank",
    )
    first, boat, ghost = results
    assert isinstance(first, PathResult)
    assert isinstance(boat, PathResult)
    assert (first.profile_used, boat.profile_used) == ("tank", "inline")
    assert first.cost == client.path(info.id, WEST, EAST, profile="tank").cost
    assert isinstance(ghost, ProfileNotFound)  # in its slot, not raised


def test_check_paths_and_fields_take_a_profile(client: Client, server_url: str) -> None:
    info = river(client)
    held = [[WEST, EAST], [(0, 2), (7, 2)]]  # across the water; along the ford
    checks = client.check_paths(info.id, held, profile="tank")
    assert checks.profile_used == "tank"
    assert [c.walkable for c in checks.results] == [False, True]
    assert client.check_paths(info.id, held).profile_used == "default"
    field = client.field(info.id, [EAST], profile="tank")  # .npz: the header says it
    assert field.profile_used == "tank"
    assert isinstance(field.cost, np.ndarray)
    assert np.isinf(field.cost[0, 3])  # water: the tank's wall
    assert client.field(info.id, [UPSTREAM], profile=BOAT).profile_used == "inline"
    assert client.field(info.id, [EAST]).profile_used == "default"
    with Client(server_url, as_numpy=False) as plain:
        json_field = plain.field(info.id, [EAST], profile="tank")  # JSON: the field says it
    assert json_field.profile_used == "tank"
    assert json_field.cost[0][3] == float("inf")


# -- edits --------------------------------------------------------------------------------


def test_a_class_edit_repaints_the_map_for_every_profile(client: Client) -> None:
    info = river(client)
    assert client.path(info.id, WEST, EAST, profile="tank").found
    edited = client.edit(info.id, [RectEdit(3, 2, 2, 1, class_name="water"),
                                   CellsEdit([(0, 3)], 2.0, class_name="road")])  # fmt: skip
    assert edited.revision == 2
    assert client.path(info.id, WEST, EAST, profile="tank").status == "no_path"  # ford gone
    assert client.path(info.id, (3, 0), (3, 3), profile=BOAT).found  # the boat's way down
    assert client.profiles(info.id).class_names == [*NAMES, "road"]
    road = client.path(info.id, (0, 2), (0, 3), profile={"multipliers": {"road": 0.5}})
    assert road.cost == 1.0  # base cost 2 times 0.5
    cost_only = client.edit(info.id, [RectEdit(0, 0, 1, 1, 4.0)])  # the class stays
    assert cost_only.changed_cells == 1


def test_keep_connected_holds_for_the_profile_named(client: Client) -> None:
    info = river(client)
    swamp_ford = [RectEdit(2, 2, 4, 1, class_name="swamp")]
    with pytest.raises(WouldDisconnect):
        client.edit(info.id, swamp_ford, keep_connected=[WEST, EAST],
                    profile={"exclude": ["water", "swamp"]})  # fmt: skip
    done = client.edit(info.id, swamp_ford, keep_connected=[WEST, EAST], profile="tank")
    assert done.revision == 2


def test_an_edit_needs_a_cost_or_a_class() -> None:
    with pytest.raises(ValueError, match="a RectEdit needs a cost, a class_name or both"):
        RectEdit(0, 0, 1, 1)
    with pytest.raises(ValueError, match="a CellsEdit needs a cost, a class_name or both"):
        CellsEdit([(0, 0)])
    assert RectEdit(1, 2, 3, 4, class_name="water").to_json() == {
        "rect": [1, 2, 3, 4],
        "class": "water",
    }
    assert CellsEdit([(0, 3)], 2.0, class_name="road").to_json() == {
        "cells": [[0, 3]],
        "cost": 2.0,
        "class": "road",
    }
    assert RectEdit(0, 0, 1, 1, 0).to_json() == {"rect": [0, 0, 1, 1], "cost": 0}


def test_answers_of_servers_without_profiles_read_none() -> None:
    answer = {"status": "found", "cost": 1.0, "length": 1.0, "path": [[0, 0], [1, 0]],
              "format": "waypoints", "expanded": 1, "algorithm_used": "astar",
              "heuristic_used": "octile", "elapsed_us": 3}  # fmt: skip
    assert PathResult.from_json(answer, as_numpy=False).profile_used is None
    checks = PathChecks.from_json({"revision": 0, "results": []})
    assert checks.profile_used is None
    field = {"revision": 0, "goals": [[0, 0]], "cost": [[0.0]], "next": [[-1]]}
    assert FlowField.from_json(field, as_numpy=False, cache_hit=None).profile_used is None
