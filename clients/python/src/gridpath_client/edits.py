"""Edits of a live map (``edit``): cells' costs and classes, and links.

A cost of 0 blocks a cell; any positive finite cost makes it walkable at that cost.
On a map with terrain classes a rectangle or cells edit may paint a class as well as
or instead of a cost (``class_name``; the cost is then the base cost, which each
profile multiplies). ``LinkEdit``, ``LinkSwitch`` and ``Unlink`` put, open or close,
and remove links (doors, teleports, stairs). The edits of one request apply together
as one new revision, or none does; later edits of a cell win.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, TypeAlias

from gridpath_client.arrays import CostsLike, PointsLike, as_rows, to_point, to_points
from gridpath_client.queries import PointLike, ProfileLike, profile_json


@dataclass(frozen=True)
class RectEdit:
    """Set every cell of the ``width`` x ``height`` rectangle at ``(x, y)`` to ``cost``,
    to the terrain class ``class_name`` (by name; a new name adds a class), or both.

    Raises:
        ValueError: neither ``cost`` nor ``class_name`` is given.
    """

    x: int
    y: int
    width: int
    height: int
    cost: float | None = None
    _: KW_ONLY
    class_name: str | None = None

    def __post_init__(self) -> None:
        _check_paint("RectEdit", self.cost, self.class_name)

    def to_json(self) -> dict[str, Any]:
        rect = {"rect": [self.x, self.y, self.width, self.height]}
        return rect | _paint_json(self.cost, self.class_name)


@dataclass(frozen=True)
class CellsEdit:
    """Set each of ``cells`` (``(x, y)`` each, or an ``(n, 2)`` array) to ``cost``, to
    the terrain class ``class_name``, or both.

    Raises:
        ValueError: neither ``cost`` nor ``class_name`` is given.
    """

    cells: PointsLike
    cost: float | None = None
    _: KW_ONLY
    class_name: str | None = None

    def __post_init__(self) -> None:
        _check_paint("CellsEdit", self.cost, self.class_name)

    def to_json(self) -> dict[str, Any]:
        return {"cells": to_points(self.cells)} | _paint_json(self.cost, self.class_name)


def _check_paint(kind: str, cost: float | None, class_name: str | None) -> None:
    if cost is None and class_name is None:
        raise ValueError(f"a {kind} needs a cost, a class_name or both")


def _paint_json(cost: float | None, class_name: str | None) -> dict[str, Any]:
    """What an edit sets: ``cost`` and ``class`` (the service's name for it) when given."""
    paint: dict[str, Any] = {}
    if cost is not None:
        paint["cost"] = cost
    if class_name is not None:
        paint["class"] = class_name
    return paint


@dataclass(frozen=True)
class PatchEdit:
    """Paste ``costs`` (rows of numbers, or a 2-D array, indexed ``[y][x]``) with its
    top-left cell at ``origin``: a rectangle of individual costs."""

    origin: PointLike
    costs: CostsLike

    def to_json(self) -> dict[str, Any]:
        rows = [list(row) for row in as_rows(self.costs)]
        x, y = to_point(self.origin)
        width = len(rows[0]) if rows else 0
        return {"rect": [x, y, width, len(rows)], "costs": rows}


@dataclass(frozen=True)
class LinkEdit:
    """Put a link (``id``; a link of a known id is replaced): from ``from_`` to ``to``,
    costing exactly ``cost`` to take, both ways unless ``two_way`` is false; of the
    terrain class ``class_name`` (profiles admit it by class); closed when
    ``enabled`` is false."""

    id: str
    from_: PointLike
    to: PointLike
    cost: float
    _: KW_ONLY
    two_way: bool = True
    class_name: str | None = None
    enabled: bool = True

    def to_json(self) -> dict[str, Any]:
        link: dict[str, Any] = {"id": self.id, "from": list(to_point(self.from_)),
                                "to": list(to_point(self.to)), "cost": self.cost,
                                "two_way": self.two_way, "enabled": self.enabled}  # fmt: skip
        if self.class_name is not None:
            link["class"] = self.class_name
        return {"link": link}


@dataclass(frozen=True)
class LinkSwitch:
    """Open (``enabled``) or close the link ``id``; it stays on the map."""

    id: str
    enabled: bool

    def to_json(self) -> dict[str, Any]:
        return {"link": {"id": self.id, "enabled": self.enabled}}


@dataclass(frozen=True)
class Unlink:
    """Remove the link ``id``."""

    id: str

    def to_json(self) -> dict[str, Any]:
        return {"unlink": self.id}


#: An edit: one of the classes above, or its JSON as a mapping (passed as is).
Edit: TypeAlias = (
    RectEdit | CellsEdit | PatchEdit | LinkEdit | LinkSwitch | Unlink | Mapping[str, Any]
)


def edits_body(
    edits: Sequence[Edit],
    *,
    if_revision: int | None,
    keep_connected: PointsLike | None,
    profile: ProfileLike | None = None,
) -> dict[str, Any]:
    """An edit request's JSON: the edits, and the guards when given (``profile``: the
    one ``keep_connected`` holds for)."""
    items = [dict(e) if isinstance(e, Mapping) else e.to_json() for e in edits]
    body: dict[str, Any] = {"edits": items}
    if if_revision is not None:
        body["if_revision"] = if_revision
    if keep_connected is not None:
        body["keep_connected"] = to_points(keep_connected)
    if profile is not None:
        body["profile"] = profile_json(profile)
    return body
