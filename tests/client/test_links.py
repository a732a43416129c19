"""Links through the client, against the real service: link edits, ``links_used``,
``links``."""

import pytest
from gridpath_client import (
    Client,
    FieldLinkStep,
    LinkEdit,
    LinkInfo,
    LinkNotFound,
    LinkSwitch,
    LinkUsed,
    Unlink,
)

#: Two rooms joined by nothing but a door (x=2 is a wall).
ROOMS = [[1, 1, 0, 1, 1], [1, 1, 0, 1, 1], [1, 1, 0, 1, 1]]


def test_links_are_put_taken_listed_closed_and_removed(client: Client) -> None:
    info = client.upload_map(ROOMS, name="two rooms")
    assert client.path(info.id, (0, 1), (4, 1)).links_used is None  # no links yet
    assert client.path(info.id, (0, 1), (4, 1)).status == "no_path"
    door = LinkEdit("door", (1, 1), (3, 1), 1.5)
    client.edit(info.id, [door])
    found = client.path(info.id, (0, 1), (4, 1), format="cells")
    assert found.cost == pytest.approx(3.5)
    assert found.links_used == [LinkUsed("door", 1)]
    assert client.links(info.id).links == [
        LinkInfo("door", (1, 1), (3, 1), 1.5, two_way=True, class_name=None, enabled=True)
    ]
    client.edit(info.id, [LinkSwitch("door", False)])
    assert client.path(info.id, (0, 1), (4, 1)).status == "no_path"
    result = client.edit(info.id, [Unlink("door")])
    assert client.links(info.id).revision == result.revision
    assert client.links(info.id).links == []
    with pytest.raises(LinkNotFound):
        client.edit(info.id, [Unlink("door")])


#: Two floors; floor 0 has a pillar in its middle.
FLOORS = [[[1, 1, 1], [1, 0, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]]


def test_a_map_of_floors_is_uploaded_with_its_stairs_and_answers_with_layers(
    client: Client,
) -> None:
    stairs = LinkEdit("stairs", (2, 2, 0), (2, 2, 1), 2.0)
    info = client.upload_map(FLOORS, name="two floors", links=[stairs])
    assert (info.width, info.height, info.layers) == (3, 3, 2)
    found = client.path(info.id, (0, 0), (1, 1, 1), format="cells")
    assert tuple(int(v) for v in found.path[0]) == (0, 0, 0)
    assert found.reached == (1, 1, 1)
    assert found.links_used == [LinkUsed("stairs", 4)]
    assert client.links(info.id).links[0].to == (2, 2, 1)


def test_a_3d_array_uploads_as_floors_and_paths_come_back_as_n_by_3(client: Client) -> None:
    np = pytest.importorskip("numpy")
    floors = np.array(FLOORS, np.float32)
    info = client.upload_map(floors)
    assert info.layers == 2
    found = client.path(info.id, (0, 0, 1), (2, 2, 1))
    assert isinstance(found.path, np.ndarray)
    assert found.path.shape == (2, 3)
    assert found.path.tolist() == [[0, 0, 1], [2, 2, 1]]
    linked = client.upload_map(floors, links=[{"id": "s", "from": [0, 0, 0], "to": [0, 0, 1],
                                               "cost": 1.0}])  # fmt: skip
    assert client.path(linked.id, (0, 0), (2, 2, 1)).status == "found"


def test_links_go_with_a_json_map_only() -> None:
    from gridpath_client.uploads import upload_of

    with pytest.raises(TypeError, match="links= go with a map sent as JSON"):
        upload_of("type octile\n", name=None, cluster_size=None, links=[])


def test_a_field_on_floors_steps_onto_the_stairs(client: Client) -> None:
    stairs = LinkEdit("stairs", (2, 2, 0), (2, 2, 1), 2.0)
    info = client.upload_map(FLOORS, links=[stairs])
    field = client.field(info.id, [(0, 0, 1)])
    assert field.links == (FieldLinkStep((2, 2, 0), "stairs", (2, 2, 1)),)
    assert field.next_cell(2, 2, layer=0) == (2, 2, 1)
    assert field.next_cell(1, 0, layer=1) == (0, 0, 1)
    assert field.next_cell(0, 0, layer=1) is None  # the goal


def test_field_rows_of_layers_are_read_without_numpy() -> None:
    from gridpath_client import FlowField

    data = {"revision": 0, "goals": [[0, 0, 1]], "cost": [[[1.0, None]], [[0.0, 1.0]]],
            "next": [[[8, -1]], [[-1, 1]]],
            "links": [{"at": [0, 0, 0], "id": "up", "to": [0, 0, 1]}]}  # fmt: skip
    field = FlowField.from_json(data, as_numpy=False, cache_hit=None)
    assert field.cost == [[[1.0, float("inf")]], [[0.0, 1.0]]]
    assert field.next_cell(0, 0, layer=0) == (0, 0, 1)
    assert field.next_cell(1, 0, layer=1) == (0, 0, 1)
