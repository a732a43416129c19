"""Every API call as data: what to send, and how to read the answer.

Both clients (:class:`~gridpath_client.Client` and
:class:`~gridpath_client.AsyncClient`) build a :class:`Call` here and only do the I/O
and the retries themselves, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

import httpx

from gridpath_client.arrays import ClassesLike, PointsLike, to_points
from gridpath_client.edits import Edit, edits_body
from gridpath_client.errors import GridpathError, UnexpectedResponse, error_for
from gridpath_client.queries import (
    Diagonal,
    GoalRegion,
    PathFormat,
    PointLike,
    ProfileLike,
    Query,
    batch_body,
    options_body,
    profile_json,
    query_body,
    resume_body,
)
from gridpath_client.results import (
    EditResult,
    FlowField,
    Links,
    MapInfo,
    PathChecks,
    PathRepair,
    PathResult,
    ProfileInfo,
    Profiles,
)
from gridpath_client.uploads import MapSource, upload_of

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and the reader of its successful answer.

    Attributes:
        method, url: What to request (``url`` relative to the client's base URL).
        read: Turns a 2xx answer into the call's result.
        safe: The call changes nothing on the server, so it may be retried after a
            connection broke mid-request (see :mod:`gridpath_client.retries`).
        retry_unavailable: Whether a 503 is retried (not for ``ready``: a 503 is its
            answer).
    """

    method: str
    url: str
    read: Callable[[httpx.Response], T]
    safe: bool
    json: Any = None
    content: bytes | None = None
    params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    retry_unavailable: bool = True

    @property
    def what(self) -> str:
        """``"POST /v1/maps/…/path"``: how log lines and errors name the call."""
        return f"{self.method} {self.url}"

    def result(self, response: httpx.Response) -> T:
        """The call's result, or the error the answer carries, raised.

        Raises:
            GridpathError: the error class of the answer's code, or
                ``UnexpectedResponse`` for an answer that is not the API's.
        """
        if not response.is_success:  # a redirect, say, is not the API's answer either
            raise error_of(response)
        try:
            return self.read(response)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise UnexpectedResponse(
                f"{self.what}: cannot read the {response.status_code} answer "
                f"({type(exc).__name__}: {exc})",
                status=response.status_code,
            ) from exc


def error_of(response: httpx.Response) -> GridpathError:
    """The exception for an error answer: its ``{"code", "message"}`` body, or, for a
    body that is not one (a proxy's page), ``UnexpectedResponse`` with its start."""
    try:
        body = response.json()
        code, message = body["code"], body["message"]
        if not isinstance(code, str) or not isinstance(message, str):
            raise TypeError("code and message must be strings")
    except (ValueError, KeyError, TypeError):
        text = response.text[:200]
        return UnexpectedResponse(
            f"HTTP {response.status_code}: {text!r}", status=response.status_code
        )
    return error_for(code, message, response.status_code)


def map_url(map_id: str, tail: str = "") -> str:
    """A map's URL; the id is quoted, so no id can reach another route.

    Raises:
        ValueError: an empty id (the URL would be another route's).
    """
    if not map_id:
        raise ValueError("map_id must not be empty")
    return f"/v1/maps/{quote(map_id, safe='')}{tail}"


def profile_url(map_id: str, name: str) -> str:
    """A named profile's URL; the name is quoted as the id is.

    Raises:
        ValueError: an empty id or name (the URL would be another route's).
    """
    if not name:
        raise ValueError("a profile's name must not be empty")
    return map_url(map_id, f"/profiles/{quote(name, safe='')}")


# -- maps -------------------------------------------------------------------------------


def upload_map(
    source: MapSource | None,
    *,
    name: str | None,
    cluster_size: int | None,
    classes: ClassesLike | None = None,
    class_names: Sequence[str] | None = None,
    default_profile: Mapping[str, Any] | None = None,
    links: Sequence[Any] | None = None,
    if_exists: Literal["create", "reuse"] | None = None,
) -> Call[MapInfo]:
    upload = upload_of(source, name=name, cluster_size=cluster_size, classes=classes,
                       class_names=class_names, default_profile=default_profile,
                       links=links)  # fmt: skip
    params = dict(upload.params or {})
    if if_exists is not None:
        params["if_exists"] = if_exists
    return Call(
        "POST",
        "/v1/maps",
        lambda r: MapInfo.from_json(r.json()),
        # A retried upload after a broken connection could store the map twice, unless
        # it reuses the map of its name.
        safe=if_exists == "reuse",
        json=upload.json,
        content=upload.content,
        params=params,
        headers={"Content-Type": upload.content_type},
    )


def get_map(map_id: str) -> Call[MapInfo]:
    return Call("GET", map_url(map_id), lambda r: MapInfo.from_json(r.json()), safe=True)


def list_maps(name: str | None = None) -> Call[list[MapInfo]]:
    return Call("GET", "/v1/maps", lambda r: [MapInfo.from_json(m) for m in r.json()["maps"]],
                safe=True, params={} if name is None else {"name": name})  # fmt: skip


def delete_map(map_id: str) -> Call[None]:
    # Not safe: a delete that went through and is retried would answer MapNotFound.
    return Call("DELETE", map_url(map_id), lambda _: None, safe=False)


def ready() -> Call[bool]:
    return Call("GET", "/readyz", lambda _: True, safe=True, retry_unavailable=False)


# -- paths ------------------------------------------------------------------------------


def path(
    map_id: str,
    start: PointLike,
    goal: PointLike | None,
    *,
    goals: PointsLike | None,
    goal_region: GoalRegion | None,
    trace: bool,
    options: Mapping[str, Any],
    as_numpy: bool,
    min_revision: int | None = None,
    resumable: bool = False,
) -> Call[PathResult]:
    body = query_body(start, goal, goals=goals, goal_region=goal_region, trace=trace,
                      options=options, min_revision=min_revision,
                      resumable=resumable)  # fmt: skip
    return Call(
        "POST",
        map_url(map_id, "/path"),
        lambda r: PathResult.from_json(r.json(), as_numpy=as_numpy),
        safe=True,
        json=body,
    )


def resume(map_id: str, token: str, *, max_expansions: int | None, format: PathFormat | None,
           deadline_ms: float | None, trace: bool, as_numpy: bool) -> Call[PathResult]:  # fmt: skip
    """Go on with a resumable search. Not retried: a token goes on once."""
    body = resume_body(token, max_expansions=max_expansions, format=format,
                       deadline_ms=deadline_ms, trace=trace)  # fmt: skip
    return Call(
        "POST",
        map_url(map_id, "/path"),
        lambda r: PathResult.from_json(r.json(), as_numpy=as_numpy),
        safe=False,
        json=body,
    )


def paths(
    map_id: str,
    queries: Sequence[Query | tuple[PointLike, PointLike]],
    *,
    defaults: Mapping[str, Any],
    as_numpy: bool,
    min_revision: int | None = None,
) -> Call[list[PathResult | GridpathError]]:
    def read(response: httpx.Response) -> list[PathResult | GridpathError]:
        return [_batch_item(item, as_numpy) for item in response.json()["results"]]

    body = batch_body(queries, defaults, min_revision)
    return Call("POST", map_url(map_id, "/paths"), read, safe=True, json=body)


def _batch_item(item: dict[str, Any], as_numpy: bool) -> PathResult | GridpathError:
    """A batch slot: an answer, or the error of a bad query (returned, not raised)."""
    if "status" in item:
        return PathResult.from_json(item, as_numpy=as_numpy)
    return error_for(item["code"], item["message"])


def repair_path(map_id: str, held: PointsLike, position: int, *, max_detour: float | None,
                options: Mapping[str, Any], as_numpy: bool) -> Call[PathRepair]:  # fmt: skip
    body: dict[str, Any] = {"path": to_points(held), "position": position,
                            **options_body(options)}  # fmt: skip
    if max_detour is not None:
        body["max_detour"] = max_detour
    return Call(
        "POST",
        map_url(map_id, "/paths/repair"),
        lambda r: PathRepair.from_json(r.json(), as_numpy=as_numpy),
        safe=True,
        json=body,
    )


def check_paths(
    map_id: str,
    held: Sequence[PointsLike],
    *,
    diagonal: Diagonal | None,
    agent_size: int | None,
    profile: ProfileLike | None = None,
    min_revision: int | None = None,
    snap: bool = False,
) -> Call[PathChecks]:
    body: dict[str, Any] = {"paths": [to_points(p) for p in held]}
    if min_revision is not None:
        body["min_revision"] = min_revision
    if snap:
        body["snap"] = True
    if diagonal is not None:
        body["diagonal"] = diagonal
    if agent_size is not None:
        body["agent_size"] = agent_size
    if profile is not None:
        body["profile"] = profile_json(profile)
    url = map_url(map_id, "/paths/check")
    return Call("POST", url, lambda r: PathChecks.from_json(r.json()), safe=True, json=body)


# -- fields and edits -------------------------------------------------------------------


def flow_field(
    map_id: str,
    goals: PointsLike,
    *,
    diagonal: Diagonal | None,
    max_cost: float | None,
    agent_size: int | None,
    as_numpy: bool,
    deadline_ms: float | None = None,
    profile: ProfileLike | None = None,
) -> Call[FlowField]:
    """With numpy the compact ``.npz`` form is asked for; without, JSON (which the
    service only gives for maps up to ``GRIDPATH_MAX_JSON_FIELD_CELLS`` cells)."""
    body: dict[str, Any] = {"goals": to_points(goals), "format": "npz" if as_numpy else "json"}
    optional = {
        "diagonal": diagonal,
        "max_cost": max_cost,
        "agent_size": agent_size,
        "deadline_ms": deadline_ms,
        "profile": None if profile is None else profile_json(profile),
    }
    body.update({name: value for name, value in optional.items() if value is not None})

    def read(response: httpx.Response) -> FlowField:
        header = response.headers.get("x-field-cache")
        hit = None if header is None else header == "hit"
        if response.headers.get("content-type", "").startswith("application/json"):
            return FlowField.from_json(response.json(), as_numpy=as_numpy, cache_hit=hit)
        used = response.headers.get("x-profile-used")
        return FlowField.from_npz(response.content, cache_hit=hit, profile_used=used)

    return Call("POST", map_url(map_id, "/field"), read, safe=True, json=body)


def edit(
    map_id: str,
    edits: Sequence[Edit],
    *,
    if_revision: int | None,
    keep_connected: PointsLike | None,
    profile: ProfileLike | None = None,
) -> Call[EditResult]:
    body = edits_body(edits, if_revision=if_revision, keep_connected=keep_connected,
                      profile=profile)  # fmt: skip
    return Call(
        "POST",
        map_url(map_id, "/edits"),
        lambda r: EditResult.from_json(r.json()),
        safe=False,  # applied twice if retried after it went through
        json=body,
    )


# -- profiles ---------------------------------------------------------------------------


def put_profile(map_id: str, name: str, profile: Mapping[str, Any]) -> Call[ProfileInfo]:
    body = profile_json(profile)
    return Call(
        "PUT",
        profile_url(map_id, name),
        lambda r: ProfileInfo.from_json(r.json()),
        safe=True,  # idempotent: put again, the profile is the same (at a later revision)
        json=body,
    )


def get_profile(map_id: str, name: str) -> Call[ProfileInfo]:
    url = profile_url(map_id, name)
    return Call("GET", url, lambda r: ProfileInfo.from_json(r.json()), safe=True)


def list_profiles(map_id: str) -> Call[Profiles]:
    url = map_url(map_id, "/profiles")
    return Call("GET", url, lambda r: Profiles.from_json(r.json()), safe=True)


def list_links(map_id: str) -> Call[Links]:
    url = map_url(map_id, "/links")
    return Call("GET", url, lambda r: Links.from_json(r.json()), safe=True)


def delete_profile(map_id: str, name: str) -> Call[int]:
    # Not safe: a delete that went through and is retried would answer ProfileNotFound.
    url = profile_url(map_id, name)
    return Call("DELETE", url, lambda r: int(r.json()["revision"]), safe=False)
