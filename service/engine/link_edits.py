"""Link edits: links put, opened, closed and removed as edits of a map.

As cost edits, they make a revision, go in the edit log and reach every replica:
``LinkEdit`` puts a link (added, or replacing the link of its id), ``LinkSwitch``
opens or closes one, ``Unlink`` removes one. A request's link edits apply in
order, after its cost edits, and are checked against the map as those leave it (a
link's ends must be walkable then). ``link_changes`` gives the links after them,
which ``edits.apply_changes`` puts on the new revision; ``op_json`` and
``op_of_json`` are the edit log's form of each.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from service.engine.errors import InvalidEditError, LinkNotFoundError
from service.engine.grid import GridMap
from service.engine.layers import Layers
from service.engine.links import Link, LinkSet, check_link_cost, check_link_id, empty_links
from service.engine.terrain import Terrain


@dataclass(frozen=True, slots=True)
class LinkEdit:
    """Put ``link``: added, or replacing the map's link of its id."""

    link: Link


@dataclass(frozen=True, slots=True)
class LinkSwitch:
    """Open (``enabled``) or close the link ``link_id``, which stays on the map."""

    link_id: str
    enabled: bool


@dataclass(frozen=True, slots=True)
class Unlink:
    """Remove the link ``link_id``."""

    link_id: str


LinkOp = LinkEdit | LinkSwitch | Unlink


def links_after(grid: GridMap, changed: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]],
                terrain: Terrain | None, ops: Sequence[tuple[str, LinkOp]], *,
                max_links: int) -> LinkSet:  # fmt: skip
    """``link_changes`` on ``grid`` after an edit request's cost edits (``changed``:
    padded cells and their new costs), its terrain then ``terrain``."""
    padded = grid.padded.copy()
    padded[changed[0]] = changed[1]
    names = None if terrain is None else terrain.names
    return link_changes(grid.links.links if grid.links is not None else None,
                        grid.layers, ops, padded, names,
                        max_links=max_links)  # fmt: skip


def link_changes(links: LinkSet | None, layers: Layers, ops: Sequence[tuple[str, LinkOp]],
                 padded: npt.NDArray[np.float32], classes: Sequence[str] | None, *,
                 max_links: int) -> LinkSet:  # fmt: skip
    """The links after ``ops`` (each with the name of the edit it came from, for
    messages), from ``links`` (None: a map without links, of ``layers``), on a map
    whose costs after the request's cost edits are ``padded`` and whose terrain
    classes are ``classes`` (None: a map without classes).

    Raises:
        InvalidEditError: a link's end off the map or on a wall, a class the map
            lacks, more than ``max_links`` links (messages name the edit).
        LinkNotFoundError: an op names a link the map does not have.
    """
    result = links if links is not None else empty_links(layers)
    width = layers.width + 2

    def walkable(x: int, row: int) -> bool:
        return bool(padded[(row + 1) * width + x + 1] > 0)

    for where, op in ops:
        try:
            if isinstance(op, LinkEdit):
                _check_class(op.link.class_name, classes)
                result = result.put(op.link, walkable=walkable, max_links=max_links)
            elif isinstance(op, LinkSwitch):
                result = result.set_enabled(op.link_id, op.enabled)
            else:
                result = result.remove(op.link_id)
        except KeyError as error:
            raise LinkNotFoundError(f"{where}: this map has no link {error.args[0]!r}") from None
        except InvalidEditError as error:
            raise InvalidEditError(f"{where}: {error}") from None
    return result


def _check_class(name: str | None, classes: Sequence[str] | None) -> None:
    if name is not None and classes is None:
        raise InvalidEditError("a link's class needs a map with terrain classes")
    if name is not None and classes is not None and name not in classes:
        raise InvalidEditError(f"class {name!r} is none of the map's classes {list(classes)}")


def link_of(spec: dict[str, Any], where: str, layers: Layers) -> Link:
    """A ``Link`` from its JSON form (``{"id", "from", "to", "cost", "two_way",
    "class", "enabled"}``), checked (InvalidEditError naming ``where``)."""
    link_id = check_link_id(spec.get("id"), f"{where}.id")
    ends = []
    for name in ("from", "to"):
        cell = spec.get(name)
        if not isinstance(cell, (list, tuple)):
            raise InvalidEditError(f"{where}.{name} must be [x, y] or [x, y, layer]")
        try:
            x, row = layers.to_grid(f"{where}.{name}", tuple(cell))
        except ValueError as error:
            raise InvalidEditError(str(error)) from None
        ends.append(layers.to_cell(x, row))
    cost = check_link_cost(spec.get("cost"), link_id)
    two_way, enabled = spec.get("two_way", True), spec.get("enabled", True)
    class_name = spec.get("class")
    if not isinstance(two_way, bool) or not isinstance(enabled, bool):
        raise InvalidEditError(f"{where}: two_way and enabled must be true or false")
    if class_name is not None and (not isinstance(class_name, str) or not class_name):
        raise InvalidEditError(f"{where}.class must be a class name, got {class_name!r}")
    return Link(link_id, ends[0], ends[1], cost, two_way, class_name, enabled)


def link_json(link: Link, layers: Layers) -> dict[str, Any]:
    """A link's JSON form (ends as ``[x, y]`` on a map of one layer)."""
    ends = [list(end[:2]) if layers.count == 1 else list(end) for end in (link.source, link.target)]
    return {"id": link.id, "from": ends[0], "to": ends[1], "cost": link.cost,
            "two_way": link.two_way, "class": link.class_name, "enabled": link.enabled}  # fmt: skip


def link_list(links: LinkSet) -> list[dict[str, Any]]:
    """Every link of ``links`` in its JSON form, by id."""
    return [link_json(links.links[i], links.layers) for i in links.ids]


def op_json(op: LinkOp, layers: Layers) -> dict[str, Any]:
    """An op as the edit log records it (the API's edit item form)."""
    if isinstance(op, LinkEdit):
        return {"link": link_json(op.link, layers)}
    if isinstance(op, LinkSwitch):
        return {"link": {"id": op.link_id, "enabled": op.enabled}}
    return {"unlink": op.link_id}


def op_of_json(item: dict[str, Any], where: str, layers: Layers) -> LinkOp:
    """An op from its JSON form (``op_json``'s, the API's edit item's)."""
    if "unlink" in item:
        return Unlink(check_link_id(item["unlink"], f"{where}.unlink"))
    spec = item["link"]
    if set(spec) <= {"id", "enabled"} and "enabled" in spec:
        if not isinstance(spec["enabled"], bool):
            raise InvalidEditError(f"{where}.link.enabled must be true or false")
        return LinkSwitch(check_link_id(spec.get("id"), f"{where}.link.id"), spec["enabled"])
    return LinkEdit(link_of(spec, f"{where}.link", layers))
