"""``LinkSet``: a map's links by id, checked, and their edges for the kernels."""

import math

import numpy as np
import pytest

from service.engine.errors import InvalidEditError
from service.engine.layers import Layers
from service.engine.links import NO_SLOT, Link, check_link_cost, check_link_id, links_of

LAYERS = Layers(2, 4, 5)
WALLS = {(2, 1)}  # (x, row) of the stacked grid


def _walkable(x: int, row: int) -> bool:
    return (x, row) not in WALLS


def _links(*links: Link, max_links: int = 8):  # type: ignore[no-untyped-def]
    return links_of(LAYERS, links, walkable=_walkable, max_links=max_links)


def _padded(x: int, y: int, layer: int) -> int:
    x, row = LAYERS.to_grid("cell", (x, y, layer))
    return (row + 1) * (LAYERS.width + 2) + x + 1


def test_a_two_way_link_is_an_edge_each_way_a_one_way_link_one() -> None:
    links = _links(Link("stairs", (0, 0, 0), (4, 3, 1), 2.5),
                   Link("drop", (1, 1, 1), (1, 1, 0), 1.0, two_way=False))  # fmt: skip
    edges = links.edges()
    assert edges.edge_count == 3
    assert links.ids == ("drop", "stairs")
    out = {}
    for cell in range(edges.slot.size):
        s = edges.slot[cell]
        if s != NO_SLOT:
            for e in range(edges.first[s], edges.first[s + 1]):
                out[cell] = (int(edges.target[e]), float(edges.cost[e]), links.ids[edges.link[e]])
    assert out == {
        _padded(0, 0, 0): (_padded(4, 3, 1), 2.5, "stairs"),
        _padded(4, 3, 1): (_padded(0, 0, 0), 2.5, "stairs"),
        _padded(1, 1, 1): (_padded(1, 1, 0), 1.0, "drop"),
    }


def test_edges_leave_out_closed_links_and_classes_a_profile_refuses() -> None:
    links = _links(Link("door", (0, 0, 0), (1, 0, 0), 1.0, class_name="door_red"),
                   Link("tp", (0, 3, 0), (3, 3, 1), 5.0))  # fmt: skip
    assert links.edges().edge_count == 4
    assert links.set_enabled("tp", False).edges().edge_count == 2
    assert links.edges(factor=lambda name: float(name != "door_red")).edge_count == 2
    assert links.remove("door").set_enabled("tp", False).edges().slot.size == 0


def test_putting_a_link_of_a_known_id_replaces_it() -> None:
    links = _links(Link("tp", (0, 0, 0), (1, 0, 0), 1.0))
    moved = links.put(Link("tp", (0, 0, 0), (3, 0, 1), 4.0), walkable=_walkable, max_links=1)
    assert len(moved.links) == 1
    assert moved.links["tp"].target == (3, 0, 1)


def test_a_link_to_a_wall_or_off_the_map_is_refused_naming_its_end() -> None:
    with pytest.raises(InvalidEditError, match=r"link 'w' to \[2, 1, 0\] is on a blocked"):
        _links(Link("w", (0, 0, 0), (2, 1, 0), 1.0))
    with pytest.raises(InvalidEditError, match=r"link 'off' from .*layer in \[0, 1\]"):
        _links(Link("off", (0, 0, 2), (0, 0, 0), 1.0))


def test_links_past_the_limit_or_a_repeated_id_are_refused() -> None:
    with pytest.raises(InvalidEditError, match=r"at most 1 links \(GRIDPATH_MAX_LINKS\)"):
        _links(Link("a", (0, 0, 0), (1, 0, 0), 1.0), Link("b", (0, 0, 0), (1, 0, 0), 1.0),
               max_links=1)  # fmt: skip
    with pytest.raises(InvalidEditError, match="given twice"):
        _links(Link("a", (0, 0, 0), (1, 0, 0), 1.0), Link("a", (0, 0, 0), (1, 0, 0), 2.0))


@pytest.mark.parametrize("value", ["", "a b", "x" * 65, 7, None])
def test_a_link_id_is_a_short_name(value: object) -> None:
    with pytest.raises(InvalidEditError, match="link id must be 1 to 64"):
        check_link_id(value)


@pytest.mark.parametrize("value", [0, -1.0, math.inf, math.nan, 1e39, 1e-46, True, "1"])
def test_a_link_cost_is_a_positive_finite_float32(value: object) -> None:
    with pytest.raises(InvalidEditError, match="link 'tp': cost must be"):
        check_link_cost(value, "tp")


def test_a_link_cost_is_rounded_to_float32() -> None:
    assert check_link_cost(0.1, "tp") == float(np.float32(0.1))
