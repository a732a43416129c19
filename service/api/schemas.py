"""Request and response schemas (pydantic v2), grouped by resource.

Coordinates are ``[x, y]`` = [column, row] everywhere, as in Moving AI files.
Schemas check shape and types only (``InvalidQuery``); ranges that depend on the
map or on server limits are checked after, in a fixed order (``InvalidValue``,
``NotWalkable``, ``TooBig``).
"""

import re
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from service.api.errors import ErrorBody
from service.engine import (
    DEFAULT_ALGORITHM,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    Algorithm,
    AlgorithmUsed,
    Diagonal,
    Heuristic,
    PartialReason,
    Status,
    Unreachable,
    WeightSchedule,
)

# Every number is strict: JSON true, "2" or 5.0 are not numbers or integers here.
Coordinate = Annotated[int, Field(strict=True)]
StrictCount = Annotated[int, Field(strict=True)]
StrictNumber = Annotated[float, Field(strict=True, allow_inf_nan=False)]
#: The longest ``deadline_ms``: a budget of a game tick, not of a batch job.
MAX_DEADLINE_MS = 60_000
DeadlineMs = Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, le=MAX_DEADLINE_MS)]
DEADLINE_DESCRIPTION = (
    "Answer within this many milliseconds of the request being read (more than 0, at most "
    f"{MAX_DEADLINE_MS}): searches stop at the deadline and what is unfinished answers "
    "'partial' with partial_reason 'deadline' (the path so far; an empty path for a query "
    "not started). See docs/api.md, Deadlines."
)
StrictFlag = Annotated[bool, Field(strict=True)]  # JSON true or false; not 1 or "true"


def _decimal_integer(value: object) -> object:
    """A query-string integer as digits only: "8.0", "1_000" or " 8" are refused, as
    5.0 or "8" are in a JSON body (pydantic's lax integers take them)."""
    if isinstance(value, str) and not _DIGITS.fullmatch(value):
        raise PydanticCustomError("int_parsing", "Input should be a valid integer")
    return value


def _true_or_false(value: object) -> object:
    """A query-string flag as ``true`` or ``false`` only (pydantic's lax booleans also
    take 1, "yes", "on", "t"...)."""
    if isinstance(value, str) and value not in ("true", "false"):
        raise PydanticCustomError("bool_parsing", "Input should be true or false")
    return value


_DIGITS: Final = re.compile(r"-?[0-9]+")
# Query-string values arrive as text: strict integers and flags, spelt one way.
# (The JSON schema is given: with a validator before it, pydantic writes a bound as
# "ge", which is not JSON Schema.)
QueryInteger = Annotated[int, BeforeValidator(_decimal_integer),
                         WithJsonSchema({"type": "integer"})]  # fmt: skip
PositiveQueryInteger = Annotated[int, BeforeValidator(_decimal_integer), Field(ge=1),
                                 WithJsonSchema({"type": "integer", "minimum": 1})]  # fmt: skip
QueryFlag = Annotated[bool, BeforeValidator(_true_or_false)]
# Documented as an array of two or three integers rather than with ``prefixItems``:
# the same points, and tools that mishandle ``prefixItems`` nested in ``items``
# (schemathesis#3842) read it too. Validation is still strict.
Point = Annotated[
    tuple[Coordinate, ...],
    Field(min_length=2, max_length=3),
    WithJsonSchema({
        "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3,
        "description": "A cell as [x, y] = [column, row], zero-based, on layer 0; or [x, y, "
        "layer] (answers on a map of several layers always give the layer).",
        "examples": [[3, 7]],
    }),
]  # fmt: skip
PathFormat = Literal["waypoints", "cells", "smoothed", "directions"]
Rect = Annotated[
    tuple[Coordinate, Coordinate, StrictCount, StrictCount],
    WithJsonSchema({
        "type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 4,
        "description": "[x, y, w, h]: w columns from x, h rows from y.", "examples": [[2, 3, 4, 1]],
    }),
]  # fmt: skip


# -- maps ------------------------------------------------------------------------------


class MapCreate(BaseModel):
    """JSON upload: exactly one of ``costs`` or ``rows``."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        default=None,
        description="Free text, up to GRIDPATH_MAX_NAME_LENGTH characters; no control, "
        "format (bidirectional overrides, zero-width) or line-separator characters.",
    )
    costs: list[list[StrictNumber]] | None = Field(
        default=None,
        description="Rows of cell costs: 0 = blocked, positive finite = cost of entering.",
        examples=[[[1, 1, 0], [1, 2, 1]]],
    )
    rows: list[str] | None = Field(
        default=None,
        description="Rows in Moving AI characters: '.', 'G', 'S' walkable (cost 1), others "
        "blocked.",
        examples=[["..@", "..."]],
    )
    cluster_size: StrictCount | None = Field(
        default=None,
        description="Sector side of the cluster tables (4..1024); default: 8 "
        "(GRIDPATH_CLUSTER_SIZE), doubled while the tables would not fit "
        "GRIDPATH_MAX_TABLE_BYTES.",
    )
    if_exists: Literal["create", "reuse"] | None = Field(
        default=None,
        description="Default 'create'. 'reuse': when a map of this name exists, answer it "
        "(200) instead of storing another; takes precedence over the query's.",
    )


class TableStatus(BaseModel):
    status: Literal["building", "ready", "repairing", "failed"] = Field(
        description="'ready': in use at the map's current revision. 'repairing': an edit "
        "lowered costs, so the tables might overestimate; queries fall back (see "
        "heuristic_used) until the background repair is done. 'building', 'failed': see "
        "reason."
    )
    revision: int | None = Field(
        default=None,
        description="The map revision the table was built or last repaired for; it stays in "
        "use across edits that only raise costs or block cells (its bounds stay admissible).",
    )
    bytes: int | None = Field(description="Size of the table in memory and on disk.")
    reason: str | None = Field(
        description="Why the table is not available (status 'failed'): e.g. the memory it "
        "would need and the setting that bounds it. A build over a memory bound is not "
        "retried until the service restarts; other failures are retried when the map next "
        "loads, at most every GRIDPATH_TABLE_RETRY_SECONDS. Queries fall back to octile "
        "meanwhile (see heuristic_used)."
    )


class ClusterTableStatus(TableStatus):
    """The cluster tables (4- and 8-connected): null figures until ``ready``."""

    cluster_size: int | None = Field(description="Sector side used, in cells.")
    count: int | None = Field(description="Clusters of the 8-connected table.")
    build_seconds: float | None = Field(description="Wall time of the build.")


class LandmarkTableStatus(TableStatus):
    """The landmark (ALT) tables (4- and 8-connected): null figures until ``ready``."""

    count: int | None = Field(description="Landmarks per table.")
    build_seconds: float | None = Field(description="Wall time of the build.")


class MapTables(BaseModel):
    islands: TableStatus
    clusters: ClusterTableStatus
    landmarks: LandmarkTableStatus


class MapHealth(BaseModel):
    """Whether a stored map can be served, and if not, why."""

    status: Literal["ok", "corrupt", "too_big"] = Field(
        description="'corrupt': its stored grid fails its checksum (queries answer "
        "MapCorrupt; delete it and upload it again). 'too_big': its grid and tables no "
        "longer fit GRIDPATH_CACHE_BYTES (queries answer TooBig until the setting is raised)."
    )
    reason: str | None = Field(description="What is wrong; null when 'ok'.")


class MapPublic(BaseModel):
    """A stored map's metadata."""

    id: str = Field(description="Server-generated id (16 hex digits).")
    name: str | None
    width: int
    height: int = Field(description="Rows of the map (of each layer, on a layered map).")
    layers: int = Field(
        default=1,
        description="Floors of the map (engine's layers): cells are [x, y, layer] on a map "
        "of more than one.",
    )
    walkable_cells: int
    islands: int = Field(
        description="Connected components under the default policy (no_corner_cutting; the "
        "same as never and one_obstacle)."
    )
    islands_8: int = Field(description="Connected components under 'always' (8-adjacency).")
    min_cost: float
    max_cost: float
    revision: int = Field(
        description="0 at upload, +1 per accepted edit request; also the ETag of this answer."
    )
    format_version: int = Field(description="Storage format version of the map's files.")
    created_at: str = Field(description="ISO 8601 UTC.")
    health: MapHealth
    tables: MapTables = Field(description="Precomputed tables and their status.")


class MapList(BaseModel):
    maps: list[MapPublic]


# -- paths -----------------------------------------------------------------------------


class ProfileSpec(BaseModel):
    """How one kind of unit walks the map's terrain classes: a multiplier per class
    (unlisted: 1) and the classes it may not enter."""

    model_config = ConfigDict(extra="forbid")

    multipliers: dict[str, StrictNumber] | None = Field(
        default=None,
        description="Class name to multiplier, finite and above 0: a cell of the class costs "
        "its base cost times this. Unlisted classes multiply by 1.",
    )
    exclude: list[str] | None = Field(
        default=None, description="Class names the unit may not enter (walls to it)."
    )


class ProfileView(BaseModel):
    status: Literal["built", "on_demand"] = Field(
        description="'built': this service holds the profile's view of the map (its costs, "
        "islands and JPS bit rows); 'on_demand': the next query naming it builds it."
    )
    bytes: int = Field(description="What the view takes in memory (0 until built).")
    uniform: bool | None = Field(
        description="Whether every cell the profile may enter costs the same (JPS applies); "
        "null until built."
    )
    jump_table: bool = Field(
        description="Whether the view has its JPS+ table (a uniform view, built in the "
        "background after a PUT, a load or an edit that flipped a cell there)."
    )
    landmarks: int = Field(
        description="Landmarks of the view's landmark tables (a weighted view; 0: none yet, "
        "or past GRIDPATH_MAX_LANDMARK_BYTES)."
    )


class ProfilePublic(BaseModel):
    """A named profile of a map."""

    name: str
    profile: ProfileSpec = Field(description="Its multipliers and exclusions, by class name.")
    revision: int = Field(description="The map's revision this answer reads.")
    view: ProfileView


class ProfileList(BaseModel):
    """A map's terrain classes, default profile and named profiles."""

    revision: int = Field(description="The map's revision this answer reads.")
    class_names: list[str] = Field(description="By class id; empty for a map without classes.")
    default: ProfileSpec | None = Field(
        description="The profile of queries that name none; null for a map without classes."
    )
    profiles: list[ProfilePublic] = Field(description="By name.")


PROFILE_DESCRIPTION = (
    "Default: the map's default profile. The name of one of the map's named profiles "
    "(ProfileNotFound if it holds none of that name), or a profile inline; on a map with "
    "terrain classes only (a map without classes takes only the empty profile). See "
    "profile_used."
)


class PathOptions(BaseModel):
    """Search options shared by single and batch queries; all optional."""

    model_config = ConfigDict(extra="forbid")

    heuristic: Heuristic | None = Field(
        default=None,
        description=f"Default {DEFAULT_HEURISTIC!r}. 'manhattan' is admissible only with "
        "diagonal 'never'; with diagonals it trades optimality for speed. 'cluster' and "
        "'landmarks' use the map's cluster or landmark tables (octile until they are built; "
        "see heuristic_used).",
    )
    diagonal: Diagonal | None = Field(
        default=None,
        description=f"Default {DEFAULT_DIAGONAL!r}: a diagonal needs both orthogonal "
        "neighbours walkable. 'one_obstacle': at least one. 'always': none. 'never': 4-connected.",
    )
    weight: StrictNumber | None = Field(
        default=None,
        description="Default 1. f = g + weight * h; at least 1 (InvalidValue otherwise). The "
        "cost is then at most weight x optimal for admissible heuristics.",
    )
    max_expansions: StrictCount | None = Field(
        default=None,
        description="Node budget; default and maximum: the server cap (GRIDPATH_MAX_EXPANSIONS). "
        "When it runs out the answer is 'partial': the path to the node nearest the goal.",
    )
    format: PathFormat | None = Field(
        default=None,
        description="Default 'waypoints' (start, every turn, end). 'cells': every cell. "
        "'smoothed': any-angle corners by line of sight. 'directions': 'path' holds the "
        "start alone and 'moves' the run-length moves.",
    )
    algorithm: Algorithm | None = Field(
        default=None,
        description=f"Default {DEFAULT_ALGORITHM!r}. 'jps': Jump Point Search (uniform-cost "
        "maps, diagonal 'no_corner_cutting', a consistent heuristic, one goal; "
        "same costs, expansions count jump points; InvalidValue elsewhere). 'auto': 'jps' "
        "where it applies, 'astar' elsewhere. See algorithm_used. Variants, only when asked "
        "(one goal, a plain heuristic, a map without links): 'bidirectional' (exact), "
        "'beam' (beam_width open cells; not exact), 'ida' (iterative deepening; exact, "
        "little memory, many expansions).",
    )
    weight_schedule: WeightSchedule | None = Field(
        default=None,
        description="Default 'static'. 'dynamic' (algorithm astar, auto or beam): the weight "
        "falls from 'weight' at the start to 1 at the fewest moves from start to goal, so "
        "the search is greedier near the start; the cost is at most weight x optimal.",
    )
    beam_width: StrictCount | None = Field(
        default=None,
        description="With algorithm 'beam' only: the most open cells, 1 to 1048576 (default "
        "1024); a cell past it drops the worst open cell, or itself.",
    )
    unreachable: Unreachable | None = Field(
        default=None,
        description="Default 'no_path'. 'nearest': when no goal can be reached, answer "
        "'partial' (partial_reason 'unreachable') with the path to the reachable cell nearest "
        "the goals (Euclidean, cell centres; ties: the cheapest to reach); goals may then be "
        "blocked cells.",
    )
    agent_size: StrictCount | None = Field(
        default=None,
        description="Default 1. A unit of k x k cells whose top-left cell is its position, "
        "1 to GRIDPATH_MAX_AGENT_SIZE: every cell it covers, including beside a diagonal "
        "step under the policy, must be walkable; a step costs its length times the cost of "
        "the cell the top-left enters.",
    )
    deadline_ms: DeadlineMs | None = Field(
        default=None,
        description=DEADLINE_DESCRIPTION + " In a batch, given once: beside 'queries' or in "
        "'defaults' (InvalidQuery in an item).",
    )
    profile: str | ProfileSpec | None = Field(default=None, description=PROFILE_DESCRIPTION)
    snap: StrictFlag | None = Field(
        default=None,
        description="Default false. true: a start or goal the unit cannot stand on (blocked, "
        "or under its profile and agent_size) moves to the nearest cell it can (Euclidean "
        "between cell centres, on its floor; ties: smaller row, then column); 'snapped' says "
        "where.",
    )


class GoalRegion(BaseModel):
    """``{"rect": [x, y, w, h]}`` or ``{"center": [x, y], "radius": r}``."""

    # The schema says what ``_one_form`` checks (null counts as absent), so clients and
    # contract tests see the same rule as the validator.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"oneOf": [
            {"required": ["rect"], "properties": {
                "rect": {"type": "array"}, "center": {"type": "null"},
                "radius": {"type": "null"}}},
            {"required": ["center", "radius"], "properties": {
                "center": {"type": "array"}, "radius": {"type": "number"},
                "rect": {"type": "null"}, "layer": {"type": "null"}}},
        ]},
    )  # fmt: skip

    rect: Rect | None = Field(
        default=None, description="Every cell of [x, y, w, h], clipped to the map."
    )
    layer: StrictCount | None = Field(
        default=None, description="With rect: its layer (default 0), on a map of several."
    )
    center: Point | None = Field(
        default=None,
        description="With radius: the disc's centre cell (its layer's cells only, on a map "
        "of several).",
    )
    radius: StrictNumber | None = Field(
        default=None,
        description="Cells whose centre lies within this Euclidean distance (cells) of the "
        "centre's; at least 0.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> "GoalRegion":
        if (self.rect is None) == (self.center is None) or (self.center is None) != (
            self.radius is None
        ):
            raise ValueError("goal_region needs either 'rect' alone, or 'center' and 'radius'")
        if self.layer is not None and self.rect is None:
            raise ValueError("goal_region's 'layer' goes with 'rect' (a centre names its own)")
        return self


class PathRequest(PathOptions):
    """One path query: to ``goal``, to the cheapest of ``goals``, or to the first cell of
    ``goal_region`` (exactly one of the three; InvalidQuery otherwise)."""

    # ``_one_goal`` in the schema: exactly one of the three is present and not null.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"oneOf": [
            {"required": [name], "properties": {name: {"type": kind}}}
            for name, kind in (("goal", "array"), ("goals", "array"), ("goal_region", "object"))
        ]},
    )  # fmt: skip

    start: Point
    goal: Point | None = None
    goals: list[Point] | None = Field(
        default=None,
        description="Reach the cheapest of these cells (1 to GRIDPATH_MAX_GOALS); 'reached' "
        "says which.",
    )
    goal_region: GoalRegion | None = Field(
        default=None, description="Stop at the cheapest cell of this region ('reached')."
    )
    trace: StrictFlag | None = Field(
        default=None,
        description="Record the cells the search expands, in order, as the answer's 'trace' "
        "(at most GRIDPATH_MAX_TRACE_EXPANSIONS). Single queries only (/path, path.png, "
        "where it defaults to true); a batch item asking for one is InvalidQuery.",
    )
    min_revision: StrictCount | None = Field(
        default=None,
        ge=0,
        description="Read-your-writes across services: answer on revision min_revision of "
        "the map or a later one, catching up from the store first; 503 NotReady if the "
        "store has no such revision within GRIDPATH_MIN_REVISION_WAIT_SECONDS.",
    )
    resumable: StrictFlag | None = Field(
        default=None,
        description="Single queries only (/path), algorithm astar, auto or beam: when "
        "max_expansions runs out, the partial answer carries a 'resume' token; POST "
        '{"resume": token, "max_expansions": n} goes on with the same search. See '
        "docs/api.md, Resumable searches.",
    )

    @model_validator(mode="after")
    def _one_goal(self) -> "PathRequest":
        given = (self.goal, self.goals, self.goal_region)
        if sum(value is not None for value in given) != 1:
            raise ValueError("give exactly one of goal, goals and goal_region")
        return self


class SearchTrace(BaseModel):
    """What a traced search expanded."""

    expanded: list[Point] = Field(
        description="The cells expanded, in order (a reopened cell again each time; with "
        "JPS, the jump points); at most GRIDPATH_MAX_TRACE_EXPANSIONS."
    )
    reopened: int = Field(description="Expansions of cells already expanded once.")
    cut: bool = Field(description="Whether the search expanded more cells than 'expanded' holds.")


class LinkUsed(BaseModel):
    """A link a path takes."""

    id: str = Field(description="The link's id.")
    at: int = Field(
        description="Index in 'path' of the cell where the link is entered; the next point "
        "of 'path' is where it leaves."
    )


class PathResponse(BaseModel):
    """One answer. ``partial`` and ``no_path`` are answers, not errors."""

    status: Status
    cost: float | None = Field(description="Grid cost of the path; null for no_path.")
    length: float = Field(description="Geometric length of the returned polyline, in cells.")
    path: list[Point] = Field(description="Points in the requested format; empty for no_path.")
    format: PathFormat
    expanded: int = Field(description="Nodes expanded by the search.")
    algorithm_used: AlgorithmUsed | None = Field(
        description="The search that ran ('auto' resolved); null for a query the deadline "
        "left unplanned (it never reached the engine)."
    )
    heuristic_used: Heuristic | None = Field(
        description="The heuristic searched with: the one asked for, or 'octile' for a "
        "'cluster' query whose tables are still building (or under one_obstacle/always); "
        "null as algorithm_used."
    )
    elapsed_us: int = Field(description="Time spent searching, in microseconds.")
    revision: int = Field(description="The map revision the search ran on.")
    reached: Point | None = Field(
        description="The goal, goals cell or goal_region cell a 'found' path ends at; null "
        "otherwise."
    )
    partial_reason: PartialReason | None = Field(
        description="For 'partial': 'budget' (max_expansions ran out: the path ends at the "
        "expanded cell nearest the goal), 'unreachable' (unreachable 'nearest': no goal can "
        "be reached) or 'deadline' (deadline_ms came: the path so far, empty for a query not "
        "started); null otherwise."
    )
    profile_used: str = Field(
        default="default",
        description="The profile searched with: its name (a named profile), 'inline' or "
        "'default' (the map's default profile).",
    )
    optimal: bool = Field(
        default=False,
        description="True only when the answer is guaranteed least-cost: 'found', weight 1, "
        "a heuristic admissible under the diagonal policy (heuristic_used; see docs/engine.md, "
        "Which heuristics are admissible) and an exact algorithm (not 'beam').",
    )
    trace: SearchTrace | None = Field(
        default=None, description="Present when the query asked for a trace."
    )
    links_used: list[LinkUsed] | None = Field(
        default=None,
        description="On a map with links, present: the links the path takes, in order.",
    )
    snapped: dict[str, Point] | None = Field(
        default=None,
        description="With snap, present when it moved one: {'start': [x, y]} and/or {'goal': "
        "[x, y]}, where the search started or ended instead.",
    )
    moves: list[list[int]] | None = Field(
        default=None,
        description="Format 'directions' only: the path from 'path''s start cell as "
        "[direction, count] runs (codes as a field's 'next': 0 east, 1 west, 2 south, 3 "
        "north, 4 south-east, 5 north-east, 6 south-west, 7 north-west); a link taken is an "
        "entry of its own, [8, x, y] or [8, x, y, layer]: where it leads.",
    )
    resume: str | None = Field(
        default=None,
        description="Present on a 'partial' (budget or deadline) answer of a resumable "
        "search: the token that goes on with it (ResumeRequest).",
    )
    cached: bool = Field(
        default=False,
        description="Present, true, when the answer was not searched for this request: "
        "kept from an identical query at the same revision, or shared with one searching "
        "at the same time (GRIDPATH_ANSWER_CACHE_BYTES).",
    )


class BatchRequest(BaseModel):
    """Many queries on one map: one map lookup, one thread hop, one serialisation."""

    model_config = ConfigDict(extra="forbid")

    # Items are validated one by one (one bad item cannot fail the batch), but the
    # schema documents them as PathRequest.
    queries: list[dict[str, Any]] = Field(
        description="Each item is a PathRequest; a bad item gets an error in its slot. At "
        "most GRIDPATH_MAX_BATCH items (TooBig).",
        json_schema_extra={"items": {"$ref": "#/components/schemas/PathRequest"}},
    )
    defaults: PathOptions | None = Field(
        default=None, description="Options applied to every query that does not set them."
    )
    min_revision: StrictCount | None = Field(
        default=None,
        ge=0,
        description="Read-your-writes across services: answer on revision min_revision of "
        "the map or a later one, catching up from the store first; 503 NotReady if the "
        "store has no such revision within GRIDPATH_MIN_REVISION_WAIT_SECONDS.",
    )
    deadline_ms: DeadlineMs | None = Field(
        default=None,
        description=DEADLINE_DESCRIPTION + " The whole batch's: every query finished by then "
        "is answered, the rest are marked. Overrides defaults.deadline_ms.",
    )

    @property
    def deadline(self) -> float | None:
        """The batch's ``deadline_ms``: its own, or else its defaults'."""
        if self.deadline_ms is not None or self.defaults is None:
            return self.deadline_ms
        return self.defaults.deadline_ms


class BatchResponse(BaseModel):
    results: list[PathResponse | ErrorBody] = Field(description="In the order of the queries.")


# -- fields ----------------------------------------------------------------------------


class FieldRequest(BaseModel):
    """A distance and flow field towards a set of goals."""

    model_config = ConfigDict(extra="forbid")

    goals: list[Point] = Field(
        description="Goal cells (1 to GRIDPATH_MAX_GOALS, walkable); each cell's cost is "
        "to the nearest of them."
    )
    diagonal: Diagonal | None = Field(
        default=None, description=f"Move policy; default {DEFAULT_DIAGONAL!r}."
    )
    max_cost: StrictNumber | None = Field(
        default=None,
        description="Stop the search at this cost: cells costlier to reach get inf (npz) or "
        "null (json) and next -1.",
    )
    agent_size: StrictCount | None = Field(
        default=None,
        description="Default 1: the field of k x k units (see PathOptions.agent_size); goals "
        "need room for the unit.",
    )
    profile: str | ProfileSpec | None = Field(default=None, description=PROFILE_DESCRIPTION)
    snap: StrictFlag | None = Field(
        default=None,
        description="Default false. true: a goal the unit cannot stand on moves to the "
        "nearest cell it can (as a path query's snap); 'goals' lists them as searched.",
    )
    format: Literal["npz", "json"] = Field(
        default="npz",
        description="'npz': arrays 'cost' float32 (height, width) (float64 when a finite "
        "cost is past float32's range), 'next' int8 (height, width), 'revision' and 'goals' "
        "(k, 2) int32. 'json': the same as nested lists (null for inf), for maps up to "
        "GRIDPATH_MAX_JSON_FIELD_CELLS cells.",
    )
    deadline_ms: DeadlineMs | None = Field(
        default=None,
        description="Answer within this many milliseconds of the request being read: the "
        "search stops at the deadline, and the field holds the cells it settled by then "
        "(exact) and none beyond (as max_cost leaves them); the X-Partial-Reason header (and "
        "partial_reason in JSON) says 'deadline'. Such a field is not cached.",
    )


class FieldLinkStep(BaseModel):
    """A cell of a field whose first step is a link."""

    at: Point = Field(description="The cell.")
    id: str = Field(description="The link it takes.")
    to: Point = Field(description="Where the link leads.")


class FieldResponse(BaseModel):
    """The JSON form of a field (``format: json``)."""

    revision: int = Field(description="The map revision the field was computed on.")
    profile_used: str = Field(
        default="default", description="As a path answer's (in npz: the X-Profile-Used header)."
    )
    goals: list[Point]
    cost: list[list[float | None]] | list[list[list[float | None]]] = Field(
        description="Rows of costs to the nearest goal; null where unreachable or beyond "
        "max_cost. On a map of several layers, [layer][row][column]."
    )
    next: list[list[int]] | list[list[list[int]]] = Field(
        description="Rows of first-step direction codes: 0 east (+1, 0), 1 west (-1, 0), "
        "2 south (0, +1), 3 north (0, -1), 4 south-east, 5 north-east, 6 south-west, "
        "7 north-west, 8 a link ('links' says which); -1 at goals and unreachable cells. "
        "On a map of several layers, [layer][row][column]."
    )
    links: list[FieldLinkStep] | None = Field(
        default=None,
        description="On a map with links: each cell whose first step is a link (code 8), "
        "the link and where it leads.",
    )
    partial_reason: Literal["deadline"] | None = Field(
        default=None,
        description="'deadline' when deadline_ms stopped the search (cells it had not "
        "settled are null); null for a whole field.",
    )


# -- health ----------------------------------------------------------------------------


class Health(BaseModel):
    status: Literal["ok", "degraded"] = Field(
        description="'degraded': queries are answered, but the store refuses writes "
        "(`reason` says why: a full or read-only disk, a Redis out of memory); uploads, "
        "edits and deletes answer 507 InsufficientStorage until it takes them again."
    )
    reason: str | None = Field(default=None, description="Why the service is degraded.")
