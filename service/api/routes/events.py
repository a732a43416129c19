"""``GET /v1/maps/{map_id}/events``: a map's changes as Server-Sent Events."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, require_reader
from service.api.errors import ApiError, ErrorCode, error_responses
from service.api.events import EventStream, map_events
from service.api.runtime import Runtime

router = APIRouter(prefix="/v1/maps", tags=["maps"])

_STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
        "description": "The stream: 'retry', then one event per revision.",
    }
}


@router.get(
    "/{map_id}/events",
    summary="Stream a map's changes (Server-Sent Events)",
    description="One event per revision after `since` (or the `Last-Event-ID` header; "
    "default: from now): `event: revision`, `id` the revision, `data` {revision, rects "
    "(the changed cells' bounding rectangles per floor), links, profiles}. "
    "`reset` when the log no longer holds the changes asked for (check held paths "
    "again); `deleted`, then the end, when the map is deleted; a heartbeat comment "
    "every GRIDPATH_EVENTS_HEARTBEAT_SECONDS of quiet. Through every worker and "
    "replica. A reader that takes no event for GRIDPATH_EVENTS_SEND_SECONDS is dropped.",
    response_class=Response,
    dependencies=[Depends(require_reader)],
    responses={
        **_STREAM,
        **error_responses(
            ErrorCode.INVALID_QUERY,
            ErrorCode.MAP_NOT_FOUND,
            ErrorCode.UNAUTHORIZED,
            ErrorCode.NOT_READY,
            ErrorCode.MAP_CORRUPT,
        ),
    },
)
async def map_events_stream(
    record: MapDep,
    runtime: RuntimeDep,
    since: Annotated[int | None, Query(ge=0, description="Events after this revision.")] = None,
    last_event_id: Annotated[
        str | None, Header(description="Events after this revision (a reconnecting reader's).")
    ] = None,
) -> EventStream:
    await runtime.until_ready()
    after = since if since is not None else _last_event(last_event_id)
    _admit(runtime)
    runtime.event_streams += 1

    def closed() -> None:
        runtime.event_streams -= 1

    events = map_events(runtime, record.id, after)
    return EventStream(events, runtime.settings.events_send_seconds, closed)


def _last_event(header: str | None) -> int | None:
    if header is None or not header.strip():
        return None
    try:
        value = int(header.strip())
    except ValueError:
        raise ApiError(ErrorCode.INVALID_QUERY, f"Last-Event-ID must be a revision, got "
                       f"{header[:40]!r}") from None  # fmt: skip
    if value < 0:
        raise ApiError(ErrorCode.INVALID_QUERY, f"Last-Event-ID {value} must be >= 0")
    return value


def _admit(runtime: Runtime) -> None:
    limit = runtime.settings.max_event_streams
    if runtime.event_streams >= limit:
        raise ApiError(ErrorCode.NOT_READY, f"{runtime.event_streams} event streams are open "
                       "here, the most allowed (GRIDPATH_MAX_EVENT_STREAMS); retry")  # fmt: skip
