"""Edits of a live map (``edit``): the three shapes the service takes.

A cost of 0 blocks a cell; any positive finite cost makes it walkable at that cost.
The edits of one request apply together as one new revision, or none does; later
edits of a cell win.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from gridpath_client.arrays import CostsLike, PointsLike, as_rows, to_point, to_points
from gridpath_client.queries import PointLike


@dataclass(frozen=True)
class RectEdit:
    """Set every cell of the ``width`` x ``height`` rectangle at ``(x, y)`` to ``cost``."""

    x: int
    y: int
    width: int
    height: int
    cost: float

    def to_json(self) -> dict[str, Any]:
        return {"rect": [self.x, self.y, self.width, self.height], "cost": self.cost}


@dataclass(frozen=True)
class CellsEdit:
    """Set each of ``cells`` (``(x, y)`` each, or an ``(n, 2)`` array) to ``cost``."""

    cells: PointsLike
    cost: float

    def to_json(self) -> dict[str, Any]:
        return {"cells": to_points(self.cells), "cost": self.cost}


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


#: An edit: one of the classes above, or its JSON as a mapping (passed as is).
Edit: TypeAlias = RectEdit | CellsEdit | PatchEdit | Mapping[str, Any]


def edits_body(
    edits: Sequence[Edit],
    *,
    if_revision: int | None,
    keep_connected: PointsLike | None,
) -> dict[str, Any]:
    """An edit request's JSON: the edits, and the two guards when given."""
    items = [dict(e) if isinstance(e, Mapping) else e.to_json() for e in edits]
    body: dict[str, Any] = {"edits": items}
    if if_revision is not None:
        body["if_revision"] = if_revision
    if keep_connected is not None:
        body["keep_connected"] = to_points(keep_connected)
    return body
