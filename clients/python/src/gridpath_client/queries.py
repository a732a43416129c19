"""Path queries: their options, goal regions, and the JSON bodies they become.

Only what the caller set is sent: an option left out (or ``None``) is not in the body,
so the server's defaults (and any defaults of a batch) apply to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, fields
from typing import Any, Final, Literal, TypeAlias, TypedDict

from gridpath_client.arrays import PointsLike, to_point, to_points

Heuristic: TypeAlias = Literal[
    "octile", "manhattan", "chebyshev", "euclidean", "zero", "cluster", "landmarks"
]
Diagonal: TypeAlias = Literal["never", "no_corner_cutting", "one_obstacle", "always"]
Algorithm: TypeAlias = Literal["astar", "jps", "auto", "bidirectional", "beam", "ida"]
PathFormat: TypeAlias = Literal["waypoints", "cells", "smoothed", "directions"]
WeightSchedule: TypeAlias = Literal["static", "dynamic"]
Unreachable: TypeAlias = Literal["no_path", "nearest"]
#: A cell given to the client: ``(x, y)`` (a list, or a numpy row, works too).
PointLike: TypeAlias = Sequence[int]
#: A movement profile given to the client: a named profile's name, or a profile inline
#: (``{"multipliers": {"swamp": 3.0}, "exclude": ["water"]}``, both keys optional).
ProfileLike: TypeAlias = str | Mapping[str, Any]


class PathOptions(TypedDict, total=False):
    """Search options of ``path`` and ``paths`` (keyword arguments; all optional).

    Attributes:
        heuristic: Server default ``octile``; ``cluster``/``landmarks`` use the map's
            tables, ``zero`` is Dijkstra.
        diagonal: Server default ``no_corner_cutting``; ``never`` is 4-connected.
        weight: f = g + weight * h, at least 1; the cost is then at most weight x optimal.
        max_expansions: Node budget (1 to the server cap); past it the answer is
            ``partial``.
        format: ``waypoints`` (default), ``cells``, ``smoothed`` or ``directions``
            (``path`` the start alone, ``moves`` the run-length moves: see
            :func:`cells_from_moves`).
        algorithm: ``auto`` (default: JPS where it applies), ``astar`` or ``jps``; the
            variants ``bidirectional`` (exact), ``beam`` (not exact: ``beam_width``
            open cells) and ``ida`` (exact, little memory, many expansions).
        weight_schedule: ``static`` (default) or ``dynamic``: the weight falls from
            ``weight`` at the start to 1 near the goal.
        beam_width: With ``algorithm="beam"``: most open cells (server default 1024).
        snap: A start or goal the unit cannot stand on moves to the nearest cell it
            can; ``result.snapped`` says where.
        unreachable: ``no_path`` (default) or ``nearest``: a path to the reachable cell
            nearest an unreachable goal.
        agent_size: k for a k x k unit anchored at its top-left cell (default 1).
        deadline_ms: Answer within this many milliseconds of the service reading the
            request: what is unfinished then answers ``partial`` with
            ``partial_reason`` ``deadline`` (the path so far, or none). For ``paths``,
            the whole batch's.
        profile: The movement profile searched with: the name of one of the map's
            named profiles (``ProfileNotFound`` if it holds none of that name), or a
            profile inline (``{"multipliers": {"swamp": 3.0}, "exclude": ["water"]}``);
            default: the map's default profile. ``profile_used`` says which.
    """

    heuristic: Heuristic
    diagonal: Diagonal
    weight: float
    max_expansions: int
    format: PathFormat
    algorithm: Algorithm
    weight_schedule: WeightSchedule
    beam_width: int
    snap: bool
    unreachable: Unreachable
    agent_size: int
    deadline_ms: float
    profile: str | Mapping[str, Any]


OPTION_NAMES: Final = PathOptions.__optional_keys__ | PathOptions.__required_keys__


def options_body(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options the caller set, as JSON fields; unknown names are a ``TypeError``,
    as for any keyword argument (a typo must not be dropped silently)."""
    unknown = sorted(set(options) - OPTION_NAMES)
    if unknown:
        raise TypeError(f"unexpected path option(s): {', '.join(unknown)}")
    body = {name: value for name, value in options.items() if value is not None}
    if "profile" in body:
        body["profile"] = profile_json(body["profile"])
    return body


def profile_json(profile: ProfileLike) -> str | dict[str, Any]:
    """A profile for a request body: a name as is, an inline profile as a ``dict`` (its
    mappings and sequences as dicts and lists, so that any ``Mapping`` encodes)."""
    if isinstance(profile, str):
        return profile
    return {key: _plain(value) for key, value in profile.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True)
class RectRegion:
    """Every cell of the ``width`` x ``height`` rectangle whose top-left is ``(x, y)``
    (clipped to the map; it must overlap it)."""

    x: int
    y: int
    width: int
    height: int

    def to_json(self) -> dict[str, Any]:
        return {"rect": [self.x, self.y, self.width, self.height]}


@dataclass(frozen=True)
class CircleRegion:
    """Every cell whose centre lies within ``radius`` cells (Euclidean) of ``center``'s."""

    center: PointLike
    radius: float

    def to_json(self) -> dict[str, Any]:
        return {"center": to_point(self.center), "radius": self.radius}


GoalRegion: TypeAlias = RectRegion | CircleRegion


def query_body(
    start: PointLike,
    goal: PointLike | None,
    *,
    goals: PointsLike | None,
    goal_region: GoalRegion | None,
    trace: bool,
    options: Mapping[str, Any],
    min_revision: int | None = None,
    resumable: bool = False,
) -> dict[str, Any]:
    """A path query's JSON: the start, the goal form given, the options set."""
    body: dict[str, Any] = {"start": to_point(start)}
    if goal is not None:
        body["goal"] = to_point(goal)
    if goals is not None:
        body["goals"] = to_points(goals)
    if goal_region is not None:
        body["goal_region"] = goal_region.to_json()
    body.update(options_body(options))
    if trace:  # only when asked: servers without traces refuse the field
        body["trace"] = True
    if min_revision is not None:
        body["min_revision"] = min_revision
    if resumable:
        body["resumable"] = True
    return body


def resume_body(token: str, *, max_expansions: int | None, format: PathFormat | None,
                deadline_ms: float | None, trace: bool) -> dict[str, Any]:  # fmt: skip
    """The JSON that goes on with a resumable search."""
    body: dict[str, Any] = {"resume": token}
    for name, value in (("max_expansions", max_expansions), ("format", format),
                        ("deadline_ms", deadline_ms)):  # fmt: skip
        if value is not None:
            body[name] = value
    if trace:
        body["trace"] = True
    return body


@dataclass(frozen=True)
class Query:
    """One query of a batch (``paths``): the same arguments as ``path``, but for
    ``trace`` (the service traces single queries only).

    Give exactly one of ``goal``, ``goals`` (reach the cheapest) and ``goal_region``;
    options left ``None`` take the batch's defaults, then the server's.
    """

    start: PointLike
    goal: PointLike | None = None
    _: KW_ONLY
    goals: PointsLike | None = None
    goal_region: GoalRegion | None = None
    heuristic: Heuristic | None = None
    diagonal: Diagonal | None = None
    weight: float | None = None
    max_expansions: int | None = None
    format: PathFormat | None = None
    algorithm: Algorithm | None = None
    unreachable: Unreachable | None = None
    agent_size: int | None = None
    profile: str | Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        options = {f.name: getattr(self, f.name) for f in fields(self) if f.name in OPTION_NAMES}
        return query_body(
            self.start,
            self.goal,
            goals=self.goals,
            goal_region=self.goal_region,
            trace=False,  # the service traces single queries only
            options=options,
        )


def batch_body(
    queries: Sequence[Query | tuple[PointLike, PointLike]],
    defaults: Mapping[str, Any],
    min_revision: int | None = None,
) -> dict[str, Any]:
    """A batch's JSON; a ``(start, goal)`` pair is a query with no options of its own."""
    items = [q.to_json() if isinstance(q, Query) else Query(q[0], q[1]).to_json() for q in queries]
    body: dict[str, Any] = {"queries": items}
    given = options_body(defaults)
    if given:
        body["defaults"] = given
    if min_revision is not None:
        body["min_revision"] = min_revision
    return body
