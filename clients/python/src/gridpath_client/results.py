"""Typed answers: one dataclass per answer of the API, with the answer's fields.

Each has a ``from_json`` that reads the service's JSON; fields a newer server adds are
ignored, and fields an older one lacks (``revision``, ``reached``, ``partial_reason``,
``trace``, ``profile_used``) come out as ``None``. Points follow the client's ``as_numpy`` rule (see
:mod:`gridpath_client.arrays`).
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from gridpath_client.arrays import (
    CodeGrid,
    CostGrid,
    Point,
    Points,
    from_code_rows,
    from_cost_rows,
    from_point,
    from_points,
    numpy_or_fail,
)

Json: TypeAlias = dict[str, Any]
Status: TypeAlias = Literal["found", "partial", "no_path"]


# -- paths ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trace:
    """What a search did (asked for with ``trace=True``).

    Attributes:
        expanded: The cells the search expanded, in order (``Points``).
        reopened: How many times a closed cell was opened again (inconsistent
            heuristics).
        cut: Whether ``expanded`` was cut short (the service bounds its length).
    """

    expanded: Points
    reopened: int
    cut: bool

    @classmethod
    def from_json(cls, data: Json | None, *, as_numpy: bool) -> Trace | None:
        if data is None:
            return None
        return cls(
            expanded=from_points(data.get("expanded") or [], as_numpy=as_numpy),
            reopened=int(data.get("reopened") or 0),
            cut=bool(data.get("cut", False)),
        )


@dataclass(frozen=True)
class PathResult:
    """One path answer. ``partial`` and ``no_path`` are answers, not errors.

    Attributes:
        status: ``found``, ``partial`` (budget out, or ``unreachable="nearest"``) or
            ``no_path``.
        cost: Grid cost of the path (a step costs its length times the cost of the cell
            entered); ``None`` for ``no_path``.
        length: Geometric length of the returned polyline, in cells.
        path: The points in the requested ``format``, start first; empty for
            ``no_path``. A list of ``(x, y)`` tuples, or an ``(n, 2)`` int32 array when
            the client uses numpy.
        format: ``waypoints`` (start, every turn, end), ``cells``, ``smoothed`` or
            ``directions`` (``path`` the start alone; ``moves`` the rest).
        expanded: Nodes the search expanded (jump points for JPS; for
            ``algorithm_used == "field"`` the shared search's settled cells).
        algorithm_used: ``astar``, ``jps``, or ``field`` (a batch's shared-goal search).
        heuristic_used: The heuristic searched with (``octile`` while a map's tables
            build, whatever was asked).
        elapsed_us: Search time in microseconds (in a batch, the batch's mean).
        revision: The map revision the search ran on (``None`` from servers before
            edits existed).
        reached: The goal cell a ``found`` path ends at (useful with ``goals`` and
            ``goal_region``); ``None`` otherwise.
        partial_reason: For ``partial``: ``budget``, ``unreachable`` or ``deadline``
            (``deadline_ms`` came); else ``None``.
        trace: The search's trace when asked for with ``trace=True`` and the server
            sends one; else ``None``.
        profile_used: The movement profile searched with: its name (a named profile),
            ``inline`` or ``default`` (the map's default profile); ``None`` from servers
            before profiles existed.
        links_used: On a map with links, the links the path takes, in order (each with
            the index in ``path`` of the point where it is entered; the next point is
            where it leaves); ``None`` on a map without links.
        moves: With ``format="directions"``: ``[direction, count]`` runs from the
            start (0 east, 1 west, 2 south, 3 north, 4 south-east, 5 north-east, 6
            south-west, 7 north-west), a link taken ``[8, x, y]`` (``[8, x, y,
            layer]``): where it leads; :func:`cells_from_moves` decodes them. Else
            ``None``.
        resume: On a ``partial`` answer of a resumable search: the token
            :meth:`Client.resume` goes on with; else ``None``.
        snapped: With ``snap=True``, where the start and/or goal moved
            (``{"start": (x, y)}``); else ``None``.
        optimal: ``True`` only when the answer is guaranteed least-cost (``found``,
            weight 1, an admissible heuristic for the policy, an exact algorithm);
            ``None`` from servers before the field existed.
    """

    status: Status
    cost: float | None
    length: float
    path: Points
    format: str
    expanded: int
    algorithm_used: str | None
    heuristic_used: str | None
    elapsed_us: int
    revision: int | None = None
    reached: Point | None = None
    partial_reason: str | None = None
    trace: Trace | None = None
    profile_used: str | None = None
    links_used: list[LinkUsed] | None = None
    moves: list[tuple[int, ...]] | None = None
    resume: str | None = None
    optimal: bool | None = None
    snapped: dict[str, Point] | None = None

    @property
    def found(self) -> bool:
        """Whether the path reaches a goal."""
        return self.status == "found"

    def cells(self) -> list[tuple[int, ...]]:
        """Every cell of the path, start first, expanded here from the answer's format
        (no second request): ``cells`` as they are, ``waypoints`` segment by segment
        (each runs along a row, column or diagonal; a link's jump is one step), and
        ``directions`` by :func:`cells_from_moves`. ``(x, y)`` tuples (``(x, y,
        layer)`` on a layered map); empty for ``no_path``.

        Raises:
            ValueError: a ``smoothed`` answer, whose segments leave the grid's lines.
        """
        points = [tuple(int(v) for v in point) for point in self.path]
        if self.format == "directions" and self.moves is not None and points:
            return cells_from_moves(points[0], self.moves)
        if self.format == "smoothed":
            raise ValueError("a smoothed path's segments cut across cells: ask for "
                             "format='cells' or 'waypoints' to expand it")  # fmt: skip
        if self.format == "cells" or len(points) < 2:
            return points
        jumps = {use.at for use in self.links_used or ()}
        cells = [points[0]]
        for i, (a, b) in enumerate(itertools.pairwise(points)):
            if i in jumps:  # a link: where it leads is the next cell
                cells.append(b)
                continue
            steps = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
            dx, dy = (b[0] - a[0]) // max(steps, 1), (b[1] - a[1]) // max(steps, 1)
            cells += [(a[0] + dx * k, a[1] + dy * k, *a[2:]) for k in range(1, steps + 1)]
        return cells

    @classmethod
    def from_json(cls, data: Json, *, as_numpy: bool) -> PathResult:
        revision = data.get("revision")
        return cls(
            status=data["status"],
            cost=None if data["cost"] is None else float(data["cost"]),
            length=float(data["length"]),
            path=from_points(data["path"], as_numpy=as_numpy),
            format=data["format"],
            expanded=int(data["expanded"]),
            algorithm_used=data["algorithm_used"],
            heuristic_used=data["heuristic_used"],
            elapsed_us=int(data["elapsed_us"]),
            revision=None if revision is None else int(revision),
            reached=from_point(data.get("reached")),
            partial_reason=data.get("partial_reason"),
            trace=Trace.from_json(data.get("trace"), as_numpy=as_numpy),
            profile_used=data.get("profile_used"),
            links_used=LinkUsed.list_from_json(data.get("links_used")),
            moves=None if data.get("moves") is None else [tuple(m) for m in data["moves"]],
            resume=data.get("resume"),
            optimal=data.get("optimal"),
            snapped=None if data.get("snapped") is None else {
                k: tuple(map(int, v)) for k, v in data["snapped"].items()},
        )  # fmt: skip


#: ``(dx, dy)`` of each move code of ``directions`` answers (and of fields' ``next``).
MOVE_STEPS: Final = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))
#: The move code of a link taken.
LINK_MOVE: Final = 8


def cells_from_moves(start: Sequence[int], moves: Sequence[Sequence[int]]
                     ) -> list[tuple[int, ...]]:  # fmt: skip
    """The cells a ``directions`` answer walks: ``start`` (its ``path[0]``), then one
    cell per step of ``moves``; a link's entry jumps to where it leads. ``(x, y)`` or
    ``(x, y, layer)`` tuples, as ``start`` is."""
    cell = tuple(int(v) for v in start)
    cells = [cell]
    for move in moves:
        if move[0] == LINK_MOVE:
            cell = tuple(int(v) for v in move[1:])
            cells.append(cell)
            continue
        dx, dy = MOVE_STEPS[move[0]]
        for _ in range(move[1]):
            cell = (cell[0] + dx, cell[1] + dy, *cell[2:])
            cells.append(cell)
    return cells


@dataclass(frozen=True)
class LinkUsed:
    """A link a path takes: its ``id``, and ``at``, the index in the path of the point
    where it is entered (the next point is where it leaves)."""

    id: str
    at: int

    @classmethod
    def list_from_json(cls, data: Any) -> list[LinkUsed] | None:
        if data is None:
            return None
        return [cls(str(use["id"]), int(use["at"])) for use in data]


@dataclass(frozen=True)
class LinkInfo:
    """A link of a map (``links``): a door, a teleport, stairs, a drop.

    Attributes:
        id: Its id.
        from_: Where it is taken, ``(x, y)`` (``(x, y, layer)`` on a layered map).
        to: Where it leads.
        cost: What taking it costs.
        two_way: Whether it is taken both ways.
        class_name: Its terrain class, or ``None``.
        enabled: ``False`` when closed.
    """

    id: str
    from_: Point
    to: Point
    cost: float
    two_way: bool
    class_name: str | None
    enabled: bool

    @classmethod
    def from_json(cls, data: Json) -> LinkInfo:
        source, target = data["from"], data["to"]
        return cls(id=str(data["id"]), from_=tuple(map(int, source)),
                   to=tuple(map(int, target)), cost=float(data["cost"]),
                   two_way=bool(data["two_way"]), class_name=data.get("class"),
                   enabled=bool(data["enabled"]))  # fmt: skip


@dataclass(frozen=True)
class Links:
    """A map's links (``links``): ``revision``, the map's revision the answer reads,
    and ``links``, every link by id, closed ones too."""

    revision: int
    links: list[LinkInfo]

    @classmethod
    def from_json(cls, data: Json) -> Links:
        return cls(revision=int(data["revision"]),
                   links=[LinkInfo.from_json(link) for link in data["links"]])  # fmt: skip


@dataclass(frozen=True)
class PathCheck:
    """Whether a held path can still be walked (``check_paths``).

    Attributes:
        walkable: Whether every step can still be taken.
        cost: The path's cost now; ``None`` when not walkable.
        blocked_at: The first cell it can no longer enter; ``None`` when walkable.
        snapped: With ``snap=True``, when the unit cannot stand on the path's first
            point: the nearest cell it can; else ``None``.
    """

    walkable: bool
    cost: float | None
    blocked_at: Point | None
    snapped: Point | None = None

    @classmethod
    def from_json(cls, data: Json) -> PathCheck:
        cost = data.get("cost")
        return cls(
            walkable=bool(data["walkable"]),
            cost=None if cost is None else float(cost),
            blocked_at=from_point(data.get("blocked_at")),
            snapped=from_point(data.get("snapped")),
        )


@dataclass(frozen=True)
class PathChecks:
    """The answer of ``check_paths``: the revision checked and one check per path, and
    the profile they were checked for (as :attr:`PathResult.profile_used`)."""

    revision: int
    results: list[PathCheck]
    profile_used: str | None = None

    @classmethod
    def from_json(cls, data: Json) -> PathChecks:
        return cls(
            int(data["revision"]),
            [PathCheck.from_json(r) for r in data["results"]],
            profile_used=data.get("profile_used"),
        )


@dataclass(frozen=True)
class Splice:
    """Where a repair's detour leaves the held path (the unit's position) and joins it
    again, what it costs, and ``extra``: that cost less the stretch it replaced."""

    leaves: Point
    joins: Point
    cost: float
    extra: float


@dataclass(frozen=True)
class PathRepair:
    """The answer of ``repair_path``: ``repair`` (``unchanged``, ``spliced`` or
    ``replanned``), the path from the unit's position on (``result``), and the
    ``splice`` when spliced."""

    repair: str
    result: PathResult
    splice: Splice | None = None

    @classmethod
    def from_json(cls, data: Json, *, as_numpy: bool) -> PathRepair:
        splice = data.get("splice")
        return cls(
            repair=str(data["repair"]),
            result=PathResult.from_json(data, as_numpy=as_numpy),
            splice=None if splice is None else Splice(
                tuple(map(int, splice["leaves"])), tuple(map(int, splice["joins"])),
                float(splice["cost"]), float(splice["extra"])),
        )  # fmt: skip


# -- maps -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableStatus:
    """A derived table's state at the map's current revision.

    Attributes:
        status: ``building``, ``ready``, ``repairing`` or ``failed``.
        revision: The map revision the table was built or last repaired for.
        bytes: Its size in memory and on disk; ``None`` until ready.
        reason: Why it is not available (``failed``); else ``None``.
        cluster_size: Cluster tables only: the sector side used, in cells.
        count: Clusters (cluster tables) or landmarks per table (landmark tables).
        build_seconds: Wall time of the last build.
    """

    status: str
    revision: int | None = None
    bytes: int | None = None
    reason: str | None = None
    cluster_size: int | None = None
    count: int | None = None
    build_seconds: float | None = None

    @classmethod
    def from_json(cls, data: Json) -> TableStatus:
        return cls(
            status=data["status"],
            revision=data.get("revision"),
            bytes=data.get("bytes"),
            reason=data.get("reason"),
            cluster_size=data.get("cluster_size"),
            count=data.get("count"),
            build_seconds=data.get("build_seconds"),
        )


@dataclass(frozen=True)
class MapTables:
    """The map's precomputed tables: islands, cluster tables, landmark tables."""

    islands: TableStatus
    clusters: TableStatus
    landmarks: TableStatus

    @classmethod
    def from_json(cls, data: Json | None) -> MapTables | None:
        # The edits answer may carry {} when the map went away meanwhile.
        if not data:
            return None
        return cls(
            islands=TableStatus.from_json(data["islands"]),
            clusters=TableStatus.from_json(data["clusters"]),
            landmarks=TableStatus.from_json(data["landmarks"]),
        )


@dataclass(frozen=True)
class MapHealth:
    """Whether a stored map can be served: ``ok``, ``corrupt`` or ``too_big``."""

    status: str
    reason: str | None = None


@dataclass(frozen=True)
class MapInfo:
    """A stored map's metadata (figures of its current revision).

    Attributes:
        id: The server-generated id (16 hex digits) that every map call takes.
        name: The name given at upload, if any.
        width, height: Size in cells (of each layer).
        layers: Floors of the map; cells are ``(x, y, layer)`` on a map of several.
        walkable_cells: Cells with a positive cost.
        islands: Connected components under ``no_corner_cutting`` (also ``never`` and
            ``one_obstacle``); ``islands_8``: under ``always``.
        min_cost, max_cost: The cheapest and dearest walkable cells.
        revision: 0 at upload, +1 per accepted edit request.
        format_version: The storage format of the map's files.
        created_at: ISO 8601 UTC.
        health: Whether the map can be served.
        tables: The derived tables' states (``None`` if the server sent none).
    """

    id: str
    name: str | None
    width: int
    height: int
    walkable_cells: int
    islands: int
    islands_8: int
    min_cost: float
    max_cost: float
    revision: int
    format_version: int
    created_at: str
    health: MapHealth
    tables: MapTables | None
    layers: int = 1

    @classmethod
    def from_json(cls, data: Json) -> MapInfo:
        health = data.get("health") or {"status": "ok"}
        return cls(
            id=data["id"],
            name=data.get("name"),
            width=int(data["width"]),
            height=int(data["height"]),
            walkable_cells=int(data["walkable_cells"]),
            islands=int(data["islands"]),
            islands_8=int(data["islands_8"]),
            min_cost=float(data["min_cost"]),
            max_cost=float(data["max_cost"]),
            revision=int(data.get("revision", 0)),
            format_version=int(data["format_version"]),
            created_at=data["created_at"],
            health=MapHealth(health["status"], health.get("reason")),
            tables=MapTables.from_json(data.get("tables")),
            layers=int(data.get("layers", 1)),
        )


@dataclass(frozen=True)
class EditResult:
    """The answer of ``edit``: the map's new revision and what changed.

    Attributes:
        revision: The map's revision after the edit.
        changed_cells: Cells whose cost changed.
        applied_us: Time to validate, apply, log (fsync) and publish, in microseconds.
        tables: The derived tables' states at that revision (``None`` if not sent).
    """

    revision: int
    changed_cells: int
    applied_us: int
    tables: MapTables | None

    @classmethod
    def from_json(cls, data: Json) -> EditResult:
        return cls(
            revision=int(data["revision"]),
            changed_cells=int(data["changed_cells"]),
            applied_us=int(data["applied_us"]),
            tables=MapTables.from_json(data.get("tables")),
        )


# -- profiles ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileInfo:
    """A named movement profile of a map (``put_profile``, ``profile``, ``profiles``).

    Attributes:
        name: Its name, as queries give it in ``profile``.
        profile: Its multipliers and exclusions by class name, as the service holds
            them: ``{"multipliers": {"swamp": 3.0}, "exclude": ["water"]}``.
        revision: The map's revision the answer reads (for ``put_profile``: the
            revision that added or replaced it).
        view_status: ``built`` (the answering service holds the profile's view of the
            map: its costs, islands and JPS rows) or ``on_demand`` (the next query
            naming it builds it).
        view_bytes: What the view takes in memory (0 until built).
        uniform: Whether every cell the profile may enter costs the same (JPS
            applies); ``None`` until the view is built.
    """

    name: str
    profile: dict[str, Any]
    revision: int
    view_status: str
    view_bytes: int
    uniform: bool | None

    @classmethod
    def from_json(cls, data: Json) -> ProfileInfo:
        view = data["view"]
        uniform = view.get("uniform")
        return cls(
            name=data["name"],
            profile=dict(data["profile"]),
            revision=int(data["revision"]),
            view_status=view["status"],
            view_bytes=int(view.get("bytes") or 0),
            uniform=None if uniform is None else bool(uniform),
        )


@dataclass(frozen=True)
class Profiles:
    """A map's terrain classes, default profile and named profiles (``profiles``).

    Attributes:
        revision: The map's revision the answer reads.
        class_names: The terrain classes' names by class id; empty for a map without
            classes.
        default: The profile of queries that name none (as :attr:`ProfileInfo.profile`);
            ``None`` for a map without classes.
        profiles: The named profiles, by name.
    """

    revision: int
    class_names: list[str]
    default: dict[str, Any] | None
    profiles: list[ProfileInfo]

    @classmethod
    def from_json(cls, data: Json) -> Profiles:
        default = data.get("default")
        return cls(
            revision=int(data["revision"]),
            class_names=[str(name) for name in data["class_names"]],
            default=None if default is None else dict(default),
            profiles=[ProfileInfo.from_json(p) for p in data["profiles"]],
        )


# -- fields -----------------------------------------------------------------------------

#: ``next`` codes as (dx, dy) steps; y grows downwards. -1: a goal, or no way to one.
DIRECTIONS: Final[dict[int, tuple[int, int]]] = {
    0: (1, 0),  # east
    1: (-1, 0),  # west
    2: (0, 1),  # south
    3: (0, -1),  # north
    4: (1, 1),  # south-east
    5: (1, -1),  # north-east
    6: (-1, 1),  # south-west
    7: (-1, -1),  # north-west
}


#: ``FlowField.next`` of a cell whose first step is a link.
LINK_STEP: Final = 8


@dataclass(frozen=True)
class FieldLinkStep:
    """A cell of a field whose first step is a link: ``at``, the link's ``id``, and
    where it leads (``to``)."""

    at: Point
    id: str
    to: Point

    @classmethod
    def all_of(cls, data: Sequence[Json] | None) -> tuple[FieldLinkStep, ...]:
        return tuple(cls(tuple(map(int, d["at"])), str(d["id"]), tuple(map(int, d["to"])))
                     for d in data or ())  # fmt: skip


@dataclass(frozen=True)
class FlowField:
    """A distance and flow field towards a set of goals (``field``).

    Attributes:
        revision: The map revision it was computed on.
        goals: The goal cells, as sent (``Points``).
        cost: ``[y][x]``: exact cost from the cell to the nearest goal; ``inf`` where
            no goal is reachable (or only above ``max_cost``). A ``(height, width)``
            float32 array with numpy (the ``.npz`` form; float64 when a finite cost is
            past float32's range), else rows of floats (the JSON form's float64 values).
        next: ``[y][x]``: the direction code of the first step towards the nearest goal
            (see :data:`DIRECTIONS`), -1 at goals and unreachable cells. A
            ``(height, width)`` int8 array with numpy, else rows of ints.
        cache_hit: Whether the service had the field cached (``X-Field-Cache``).
        partial_reason: ``deadline`` when ``deadline_ms`` stopped the search (the cells
            it had not settled are unreached); ``None`` for a whole field.
        profile_used: The profile the field is for, as :attr:`PathResult.profile_used`
            (the JSON form's field, or the ``.npz`` form's ``X-Profile-Used`` header).
        links: On a map with links, each cell whose first step is a link (code
            :data:`LINK_STEP`): the cell, the link's id and where it leads.

    On a map of several layers, ``cost`` and ``next`` are ``[layer][y][x]`` and the
    cells ``(x, y, layer)``.
    """

    revision: int
    goals: Points
    cost: CostGrid
    next: CodeGrid
    cache_hit: bool | None = None
    partial_reason: str | None = None
    profile_used: str | None = None
    links: tuple[FieldLinkStep, ...] = ()

    def next_cell(self, x: int, y: int, layer: int | None = None) -> Point | None:
        """The cell one step from ``(x, y)`` (on ``layer``, on a layered map) towards
        the nearest goal: a neighbour, or where a link leads; ``None`` at a goal or
        where no goal can be reached."""
        here: Point = (x, y) if layer is None else (x, y, layer)
        code = int((self.next if layer is None else self.next[layer])[y][x])  # type: ignore[index]
        if code < 0:
            return None
        if code == LINK_STEP:
            return next(link.to for link in self.links if link.at == here)
        dx, dy = DIRECTIONS[code]
        return (x + dx, y + dy) if layer is None else (x + dx, y + dy, layer)

    @classmethod
    def from_json(cls, data: Json, *, as_numpy: bool, cache_hit: bool | None) -> FlowField:
        return cls(
            revision=int(data["revision"]),
            goals=from_points(data["goals"], as_numpy=as_numpy),
            cost=from_cost_rows(data["cost"], as_numpy=as_numpy),
            next=from_code_rows(data["next"], as_numpy=as_numpy),
            cache_hit=cache_hit,
            partial_reason=data.get("partial_reason"),
            profile_used=data.get("profile_used"),
            links=FieldLinkStep.all_of(data.get("links")),
        )

    @classmethod
    def from_npz(
        cls, content: bytes, *, cache_hit: bool | None, profile_used: str | None = None
    ) -> FlowField:
        """The ``.npz`` form: ``cost`` float32 (float64 when a finite cost is past
        float32's range) and ``next`` int8, both (height, width), ``revision`` and
        ``goals`` (k, 2) int32. Read without pickles. ``profile_used`` comes in a
        header (``X-Profile-Used``), not in the arrays."""
        np = numpy_or_fail()
        with np.load(io.BytesIO(content), allow_pickle=False) as arrays:
            return cls(
                revision=int(arrays["revision"]),
                goals=arrays["goals"].astype(np.int32, copy=False).reshape(-1, arrays["cost"].ndim),
                cost=arrays["cost"],
                next=arrays["next"],
                cache_hit=cache_hit,
                partial_reason=(
                    str(arrays["partial_reason"]) if "partial_reason" in arrays else None
                ),
                profile_used=profile_used,
                links=FieldLinkStep.all_of(
                    json.loads(str(arrays["links"])) if "links" in arrays else None
                ),
            )
