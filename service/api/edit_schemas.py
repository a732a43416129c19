"""The schemas of ``/v1/maps/{map_id}/edits`` and ``/paths/check``: edits of cells,
classes and links, and held paths checked."""

from pydantic import BaseModel, ConfigDict, Field

from service.api.schemas import (
    PROFILE_DESCRIPTION,
    MapTables,
    Point,
    ProfileSpec,
    Rect,
    StrictCount,
    StrictFlag,
    StrictNumber,
)
from service.engine import DEFAULT_DIAGONAL, Diagonal


class LinkSpec(BaseModel):
    """A link: a directed connection from one cell to another (a door, a teleport, a
    drop), or, with ``id`` and ``enabled`` alone, a link opened or closed."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(description="1 to 64 letters, digits, '_', '.' or '-'.")
    from_: Point | None = Field(
        default=None, alias="from", description="Where it is taken, [x, y] or [x, y, layer]."
    )
    to: Point | None = Field(default=None, description="Where it leads, [x, y] or [x, y, layer].")
    cost: StrictNumber | None = Field(
        default=None,
        description="What taking it costs (positive); the cell it lands on adds nothing.",
    )
    two_way: bool | None = Field(default=None, description="Taken both ways (default true).")
    class_name: str | None = Field(
        default=None, alias="class", description="A terrain class of the map, for profiles."
    )
    enabled: bool | None = Field(default=None, description="False: closed (default true).")


class EditItem(BaseModel):
    """One edit: ``rect`` + ``cost``, ``cells`` + ``cost``, or ``rect`` + ``costs``; on a
    map with terrain classes, ``class`` as well or instead; or a ``link`` put, opened
    or closed, or an ``unlink``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    rect: Rect | None = Field(default=None, description="Cells [x, y, w, h] to set.")
    layer: StrictCount | None = Field(
        default=None, description="The layer of 'rect' (default 0), on a map of several layers."
    )
    cells: list[Point] | None = Field(
        default=None, description="Cells to set, as [x, y] or [x, y, layer]."
    )
    cost: StrictNumber | None = Field(
        default=None,
        description="New cost of every cell named: 0 = blocked, else positive (on a map with "
        "terrain classes, the base cost, which each profile multiplies).",
    )
    costs: list[list[StrictNumber]] | None = Field(
        default=None, description="With rect: h rows of w new costs."
    )
    class_name: str | None = Field(
        default=None,
        alias="class",
        description="A map with terrain classes only: the class every cell named gets, by "
        "name; a new name adds a class (while the map has fewer than 64).",
    )
    link: LinkSpec | None = Field(
        default=None,
        description="Put a link (adds, or replaces the link of its id), or with id and "
        "enabled only, open or close one.",
    )
    unlink: str | None = Field(default=None, description="Remove the link of this id.")


class EditRequest(BaseModel):
    """Edits applied together, atomically, as one new revision."""

    model_config = ConfigDict(extra="forbid")

    edits: list[EditItem] = Field(
        description="Applied in order (a later edit of a cell wins); at most "
        "GRIDPATH_MAX_EDIT_CELLS cells in all."
    )
    if_revision: StrictCount | None = Field(
        default=None,
        ge=0,
        description="Apply only if the map is at this revision (else 409 RevisionConflict).",
    )
    keep_connected: list[Point] | None = Field(
        default=None,
        description="Refuse the request (409 WouldDisconnect) unless afterwards these "
        "cells are all walkable and in one island (no_corner_cutting).",
    )
    profile: str | ProfileSpec | None = Field(
        default=None,
        description="The profile keep_connected holds for (" + PROFILE_DESCRIPTION + ")",
    )


class EditResponse(BaseModel):
    revision: int = Field(description="The map's revision after the edit.")
    changed_cells: int = Field(description="Cells whose cost changed.")
    applied_us: int = Field(description="Time to validate, apply, log (fsync) and publish.")
    tables: MapTables = Field(description="Status of the derived tables at that revision.")


class PathCheckRequest(BaseModel):
    """Paths a game server holds, to learn which an edit broke."""

    model_config = ConfigDict(extra="forbid")

    paths: list[list[Point]] = Field(
        description="Each path as returned (waypoints or cells): consecutive points on one "
        "row, column or diagonal."
    )
    diagonal: Diagonal | None = Field(
        default=None, description=f"Move policy; default {DEFAULT_DIAGONAL!r}."
    )
    agent_size: StrictCount | None = Field(
        default=None,
        description="Default 1: check the paths of k x k units (see PathOptions.agent_size); "
        "a point where the unit has no room is blocked.",
    )
    profile: str | ProfileSpec | None = Field(default=None, description=PROFILE_DESCRIPTION)
    min_revision: StrictCount | None = Field(
        default=None,
        ge=0,
        description="Check on revision min_revision of the map or a later one (an edit's "
        "answer, whichever service checks), catching up from the store first; 503 NotReady "
        "if the store has no such revision within GRIDPATH_MIN_REVISION_WAIT_SECONDS.",
    )
    snap: StrictFlag | None = Field(
        default=None,
        description="Default false. true: a path whose first point (the unit's position) is "
        "a cell the unit cannot stand on (blocked, or under its profile and agent_size) says "
        "in 'snapped' the nearest cell it can (Euclidean between cell centres, on its floor; "
        "ties: smaller row, then column): where a search with snap would start. The path "
        "itself is checked as it is.",
    )


class PathCheck(BaseModel):
    walkable: bool = Field(description="Whether every step can still be taken.")
    cost: float | None = Field(description="The path's cost now; null when not walkable.")
    blocked_at: Point | None = Field(
        description="The first cell the path can no longer enter (blocked, or a diagonal "
        "the policy now forbids); null when walkable."
    )
    snapped: Point | None = Field(
        default=None,
        description="With snap, present when the path's first point is a cell the unit "
        "cannot stand on: the nearest cell it can, [x, y] or [x, y, layer]; absent when no "
        "cell of that floor can be stood on.",
    )


class PathCheckResponse(BaseModel):
    revision: int = Field(description="The map revision the paths were checked on.")
    profile_used: str = Field(default="default", description="As a path answer's.")
    results: list[PathCheck] = Field(description="In the order of the paths.")
