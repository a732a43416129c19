"""Link edits: links put, opened, closed and removed as edits of a map."""

import numpy as np
import pytest

from service.engine import GridMap, find_path
from service.engine.edits import CellsEdit, Edit, apply_changes, changes_of, logged_changes
from service.engine.errors import InvalidEditError, LinkNotFoundError
from service.engine.layers import Layers
from service.engine.link_edits import LinkEdit, LinkSwitch, Unlink, op_json, op_of_json
from service.engine.links import Link
from service.engine.terrain import movingai_terrain
from service.engine.views import ViewKey
from tests.support import layered_links

LAYERS = Layers(1, 1, 8)
TP = Link("tp", (0, 0, 0), (7, 0, 0), 1.0, two_way=False)


def _corridor() -> GridMap:
    return GridMap.from_costs(np.ones((1, 8), np.float32))


def _edited(grid: GridMap, *edits: Edit) -> GridMap:
    return apply_changes(grid, changes_of(grid, list(edits), max_cells=100))


def test_a_link_put_is_taken_closed_is_not_and_removed_is_gone() -> None:
    grid = _edited(_corridor(), LinkEdit(TP))
    assert find_path(grid, (0, 0), (7, 0)).cost == pytest.approx(1.0)
    closed = _edited(grid, LinkSwitch("tp", False))
    assert find_path(closed, (0, 0), (7, 0)).cost == pytest.approx(7.0)
    assert _edited(closed, LinkSwitch("tp", True)).links is not None
    gone = _edited(grid, Unlink("tp"))
    assert gone.links is None
    assert gone.revision == 2  # each request is one revision


def test_link_edits_are_checked_against_the_map_their_request_leaves() -> None:
    """A link to a cell the same request walls is refused, naming the edit."""
    with pytest.raises(InvalidEditError, match=r"edits\[1\]: link 'tp' to \[7, 0, 0\]"):
        changes_of(_corridor(), [CellsEdit([[7, 0]], 0.0), LinkEdit(TP)], max_cells=10)
    opened = GridMap.from_costs(np.array([[1, 1, 1, 1, 1, 1, 1, 0]], np.float32))
    assert _edited(opened, CellsEdit([[7, 0]], 1.0), LinkEdit(TP)).links is not None


def test_an_unknown_link_is_link_not_found_naming_the_edit() -> None:
    with pytest.raises(LinkNotFoundError, match=r"edits\[0\]: this map has no link 'nope'"):
        changes_of(_corridor(), [LinkSwitch("nope", False)], max_cells=10)
    with pytest.raises(LinkNotFoundError, match="'tp'"):
        changes_of(_edited(_corridor(), LinkEdit(TP)), [Unlink("tp"), Unlink("tp")], max_cells=1)


def test_a_link_class_must_be_one_of_the_map_s_classes() -> None:
    classed = Link("tp", (0, 0, 0), (2, 0, 0), 1.0, class_name="door_red")
    with pytest.raises(InvalidEditError, match="needs a map with terrain classes"):
        changes_of(_corridor(), [LinkEdit(classed)], max_cells=10)
    terrain = GridMap.from_terrain(movingai_terrain(["...."]))
    with pytest.raises(InvalidEditError, match="'door_red' is none of the map's classes"):
        changes_of(terrain, [LinkEdit(classed)], max_cells=10)


def test_a_link_of_a_class_the_default_profile_excludes_is_not_taken() -> None:
    grid = GridMap.from_terrain(movingai_terrain(["..@.."]))
    wet = Link("ferry", (1, 0, 0), (3, 0, 0), 1.0, class_name="water")
    dry = Link("bridge", (1, 0, 0), (3, 0, 0), 1.0, class_name="ground")
    assert find_path(_edited(grid, LinkEdit(wet)), (0, 0), (4, 0)).status == "no_path"
    assert find_path(_edited(grid, LinkEdit(dry)), (0, 0), (4, 0)).status == "found"


def test_links_past_the_bound_are_refused() -> None:
    two: list[Edit] = [LinkEdit(TP), LinkEdit(Link("b", (1, 0, 0), (2, 0, 0), 1.0))]
    with pytest.raises(InvalidEditError, match=r"at most 1 links \(GRIDPATH_MAX_LINKS\)"):
        changes_of(_corridor(), two, max_cells=10, max_links=1)


def test_logged_link_edits_replay_to_the_same_links() -> None:
    grid = _edited(_corridor(), LinkEdit(TP))
    edits: list[Edit] = [LinkEdit(Link("b", (1, 0, 0), (5, 0, 0), 2.0)), LinkSwitch("tp", False)]
    changes = changes_of(grid, edits, max_cells=10)
    logged = [op_of_json(op_json(op, LAYERS), f"logged {i}", LAYERS)
              for i, op in enumerate(changes.ops)]  # fmt: skip
    again = logged_changes(grid, np.zeros(0, np.int64), np.zeros(0, np.float32), None, None,
                           (), logged)  # fmt: skip
    assert again.links == changes.links


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            {"link": {"id": "a", "from": [0, 0], "to": [9, 0], "cost": 1.0}},
            r"x must be in \[0, 7\]",
        ),
        ({"link": {"id": "a", "from": [0, 0], "to": [1, 0], "cost": 0}}, "cost must be positive"),
        ({"link": {"id": "a b", "from": [0, 0], "to": [1, 0], "cost": 1}}, "1 to 64 letters"),
        ({"link": {"id": "a", "enabled": "no"}}, "enabled must be true or false"),
        ({"link": {"id": "a", "to": [1, 0], "cost": 1}}, "from must be"),
        ({"unlink": 7}, "unlink must be 1 to 64"),
    ],
)
def test_a_bad_link_item_names_its_field(item: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidEditError, match=message):
        op_of_json(item, "edits[0]", LAYERS)


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings group the cells alike (the numbers may differ)."""
    pairs = np.unique(np.stack([a, b]), axis=1)
    return bool(pairs.shape[1] == np.unique(a).size == np.unique(b).size)


@pytest.mark.parametrize("seed", range(6))
def test_link_edits_repair_the_link_tables_to_what_a_build_makes(seed: int) -> None:
    """A link edit keeps what it leaves as it was (joined islands, distances to far
    links) and the grid's tables and views: every revision answers as a map built
    afresh with the same cells and links."""
    layers, grid, links = layered_links(seed)
    grid = grid.with_links(links)
    rng = np.random.default_rng(700 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    cells = [(int(x), int(y)) for x, y in zip(xs, ys, strict=True)]
    for step in range(12):
        current = grid.links.links.ids if grid.links is not None else ()
        kind = rng.integers(4)
        if kind == 0 and current:
            link_id = current[int(rng.integers(len(current)))]
            edit: Edit = LinkSwitch(link_id, bool(rng.random() < 0.5))
        elif kind == 1 and current:
            edit = Unlink(current[int(rng.integers(len(current)))])
        elif kind == 2:
            a, b = (layers.to_cell(*cells[int(i)]) for i in rng.choice(len(cells), 2))
            edit = LinkEdit(Link(f"n{step}", a, b, float(rng.choice([0.5, 4.0, 30.0]))))
        else:
            x, y = cells[int(rng.integers(len(cells)))]
            edit = CellsEdit([[x, y]], float(rng.choice([0.0, 2.0])))
        grid.view(ViewKey(2))  # a view for the edit to carry
        grid = _edited(grid, edit)
        assert grid.revision == step + 1
        fresh = GridMap.from_costs(grid.costs)
        if grid.links is not None:
            fresh = fresh.with_links(grid.links.links)
            assert fresh.links is not None
            np.testing.assert_array_equal(grid.links.bounds.to_far, fresh.links.bounds.to_far)
            np.testing.assert_array_equal(grid.links.bounds.slack, fresh.links.bounds.slack)
        for row in (0, 1):
            assert _same_partition(grid.reach_islands.labels[row], fresh.reach_islands.labels[row])
        for _ in range(4):
            s, g = (cells[int(i)] for i in rng.choice(len(cells), 2))
            for size in (1, 2):
                if not (grid.view(ViewKey(size)).walkable(*s)
                        and grid.view(ViewKey(size)).walkable(*g)):  # fmt: skip
                    continue
                ours = find_path(grid, s, g, agent_size=size)
                theirs = find_path(fresh, s, g, agent_size=size)
                assert (ours.status, ours.cost) == (theirs.status, theirs.cost)


def test_links_join_the_islands_of_an_edited_map_whose_labels_have_gaps() -> None:
    """An edit that merged two islands left a label past the island count, which the
    links' join read past its table: the edit failed (a server error)."""
    grid = _edited(_corridor(), LinkEdit(TP))
    for cost in (0.0, 1.0, 0.0):  # split, merge, split again: a new label for one side
        grid = _edited(grid, CellsEdit([[1, 0]], cost))
    assert int(grid.island_tables.labels[0].max()) > grid.island_tables.count4
    grid = _edited(grid, LinkEdit(Link("back", (6, 0, 0), (0, 0, 0), 2.0, two_way=False)))
    assert grid.island_count() == 1
    assert find_path(grid, (6, 0), (0, 0)).cost == pytest.approx(2.0)
