"""Dependencies shared by the routes, as ``Annotated`` aliases.

All are ``async def`` and read the request directly, on purpose: FastAPI runs a
plain ``def`` dependency on its thread pool (a thread hop per dependency per
request), and every level of nesting costs a dependency solve on the hot path.
"""

from typing import Annotated, Final

from fastapi import Depends, Path, Request

from service.api.auth import Scope
from service.api.errors import ApiError, ErrorCode
from service.api.runtime import Runtime
from service.store import MapRecord, Store
from service.store.records import valid_map_id


def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_runtime(request: Request) -> Runtime:
    return runtime_of(request)


async def get_store(request: Request) -> Store:
    return runtime_of(request).store


#: Where ``middleware.RequestBody`` leaves the body it read, in the request's scope.
BODY_KEY: Final = "gridpath.body"


async def body_of(request: Request) -> bytes:
    """The request's body as the middleware read it: the same bytes, not a copy
    (``Request.body()`` joins its stream again: a second 128 MiB for an upload)."""
    body = request.scope.get(BODY_KEY)
    return body if isinstance(body, bytes) else await request.body()


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
StoreDep = Annotated[Store, Depends(get_store)]


async def lookup_map(runtime: Runtime, map_id: str) -> MapRecord:
    """The stored map's record; ``MapNotFound`` for unknown or malformed ids. The
    record at hand when there is one; else the store is asked on a search thread
    (a shared store is a network round trip: never on the event loop)."""
    record = None
    if valid_map_id(map_id):
        record = runtime.store.known_record(map_id)
        if record is None:
            record = await runtime.run(runtime.store.record, map_id)
    if record is None:
        raise ApiError(ErrorCode.MAP_NOT_FOUND, f"no map with id {map_id[:64]!r}")
    return record


async def get_map(
    request: Request,
    map_id: Annotated[str, Path(description="Map id from the upload answer.")],
) -> MapRecord:
    return await lookup_map(runtime_of(request), map_id)


MapDep = Annotated[MapRecord, Depends(get_map)]


async def readable_map(request: Request, map_id: str) -> tuple[Runtime, MapRecord]:
    """Access check and map lookup for the hot path routes, without dependency solving."""
    runtime = runtime_of(request)
    runtime.keys.check(request.headers.get("authorization", ""), Scope.READ)
    return runtime, await lookup_map(runtime, map_id)


async def require_writer(request: Request) -> None:
    """Uploads, edits and deletes need a write key whenever keys are configured."""
    runtime_of(request).keys.check(request.headers.get("authorization", ""), Scope.WRITE)


async def require_reader(request: Request) -> None:
    """Reads need a key of either scope when keys are configured, unless
    ``GRIDPATH_API_KEY_READS=false`` opened them."""
    runtime_of(request).keys.check(request.headers.get("authorization", ""), Scope.READ)


async def require_scraper(request: Request) -> None:
    """``/metrics`` needs ``GRIDPATH_METRICS_KEY`` when that is set."""
    runtime_of(request).keys.check_metrics(request.headers.get("authorization", ""))
