"""Dependencies shared by the routes, as ``Annotated`` aliases."""

import secrets
from typing import Annotated

from fastapi import Depends, Path, Request

from service.api.errors import ApiError, ErrorCode
from service.api.runtime import Runtime
from service.config import Settings
from service.store import MapRecord, MapStore
from service.store.store import valid_map_id


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


def get_settings(runtime: RuntimeDep) -> Settings:
    return runtime.settings


def get_store(runtime: RuntimeDep) -> MapStore:
    return runtime.store


SettingsDep = Annotated[Settings, Depends(get_settings)]
StoreDep = Annotated[MapStore, Depends(get_store)]


def get_map(
    store: StoreDep,
    map_id: Annotated[str, Path(description="Map id from the upload answer.")],
) -> MapRecord:
    """The stored map's record; ``MapNotFound`` for unknown or malformed ids."""
    record = store.record(map_id) if valid_map_id(map_id) else None
    if record is None:
        raise ApiError(ErrorCode.MAP_NOT_FOUND, f"no map with id {map_id[:64]!r}")
    return record


MapDep = Annotated[MapRecord, Depends(get_map)]


def _check_key(request: Request, settings: Settings) -> None:
    if settings.api_key is None:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    expected = settings.api_key.get_secret_value()
    if scheme.lower() != "bearer" or not secrets.compare_digest(token.strip(), expected):
        raise ApiError(
            ErrorCode.UNAUTHORIZED,
            "missing or wrong API key: send 'Authorization: Bearer <key>' (GRIDPATH_API_KEY)",
        )


def require_writer(request: Request, settings: SettingsDep) -> None:
    """Uploads and deletes need the key whenever one is configured."""
    _check_key(request, settings)


def require_reader(request: Request, settings: SettingsDep) -> None:
    """Reads need the key only with ``GRIDPATH_API_KEY_READS=true``."""
    if settings.api_key_reads:
        _check_key(request, settings)
