"""The schemas of the A* toolbox's requests: a resumable search's next slice
(``/path``'s ``ResumeRequest``) and ``/paths/repair``, a held path mended by a detour."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.api.schemas import (
    DEADLINE_DESCRIPTION,
    DeadlineMs,
    PathFormat,
    PathOptions,
    PathResponse,
    Point,
    StrictCount,
    StrictFlag,
    StrictNumber,
)


class ResumeRequest(BaseModel):
    """Go on with a resumable search (``POST /v1/maps/{map_id}/path``): its options are
    the ones it started with."""

    model_config = ConfigDict(extra="forbid")

    resume: str = Field(
        min_length=1,
        max_length=128,
        description="The token of the last partial answer of a search started with "
        "'resumable': true. Each token is used once; 410 ResumeExpired when the worker "
        "holds the search no more (expired, evicted, the map changed, another worker's).",
    )
    max_expansions: StrictCount | None = Field(
        default=None,
        description="More expansions for this slice; default and maximum: the server cap "
        "(GRIDPATH_MAX_EXPANSIONS).",
    )
    format: PathFormat | None = Field(default=None, description="As for a query.")
    deadline_ms: DeadlineMs | None = Field(default=None, description=DEADLINE_DESCRIPTION)
    trace: StrictFlag | None = Field(
        default=None, description="Record this slice's expansions, as for a query."
    )


class PathRepairRequest(PathOptions):
    """A held path, where the unit is on it, and the options of its searches."""

    model_config = ConfigDict(extra="forbid")

    path: list[Point] = Field(
        min_length=1,
        description="The held path as a search returned it (waypoints or cells): "
        "consecutive points on one row, column or diagonal; at most "
        "GRIDPATH_MAX_CHECK_POINTS points.",
    )
    position: StrictCount = Field(
        ge=0, description="The index in 'path' of the point the unit stands on."
    )
    max_detour: StrictNumber | None = Field(
        default=None,
        ge=0,
        description="Splice only a detour that costs at most this much more than the stretch "
        "it replaces (priced at today's costs, a blocked cell at the map's least cost); "
        "else re-plan to the path's end. Default: any detour.",
    )
    min_revision: StrictCount | None = Field(
        default=None, ge=0, description="As for a query: answer on this revision or a later."
    )


class Splice(BaseModel):
    """Where the detour leaves the held path and joins it again."""

    leaves: Point = Field(description="The unit's position, where the detour starts.")
    joins: Point = Field(description="The cell of the held path the detour joins.")
    cost: float = Field(description="What the detour costs.")
    extra: float = Field(description="Its cost less the replaced stretch's (see max_detour).")


class PathRepairResponse(PathResponse):
    """A ``/path`` answer from the unit's position on, and how it was made."""

    repair: Literal["unchanged", "spliced", "replanned"] = Field(
        description="'unchanged': the held path can still be walked (answered from the "
        "position on, at today's cost); 'spliced': a detour from the position back onto the "
        "path's intact tail; 'replanned': a full search to the path's end."
    )
    splice: Splice | None = Field(default=None, description="For 'spliced': the detour.")
