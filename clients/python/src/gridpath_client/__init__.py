"""The official Python client of gridpath, the HTTP grid pathfinding service.

::

    from gridpath_client import Client

    with Client("http://127.0.0.1:8000") as gridpath:
        world = gridpath.upload_map(["....", ".@@.", "...."], name="tiny")
        route = gridpath.path(world.id, (0, 0), (3, 2), diagonal="never")
        print(route.status, route.cost, route.path)

Depends only on httpx (numpy, when installed, gives array results); imports neither
numba nor FastAPI. Coordinates are ``(x, y)`` = (column, row) everywhere.
"""

from gridpath_client.arrays import Point, Points
from gridpath_client.async_client import AsyncClient
from gridpath_client.client import Client
from gridpath_client.edits import (
    CellsEdit,
    Edit,
    LinkEdit,
    LinkSwitch,
    PatchEdit,
    RectEdit,
    Unlink,
)
from gridpath_client.errors import (
    ERROR_CLASSES,
    ConnectionFailed,
    Forbidden,
    GridpathError,
    InsufficientStorage,
    Internal,
    InvalidQuery,
    InvalidValue,
    LinkNotFound,
    MapCorrupt,
    MapNotFound,
    MethodNotAllowed,
    NotFound,
    NotReady,
    NotWalkable,
    ProfileNotFound,
    RequestTimeout,
    RevisionConflict,
    TimedOut,
    TooBig,
    TransportError,
    Unauthorized,
    UnexpectedResponse,
    UnsupportedMediaType,
    WouldDisconnect,
)
from gridpath_client.queries import (
    Algorithm,
    CircleRegion,
    Diagonal,
    GoalRegion,
    Heuristic,
    PathFormat,
    PathOptions,
    Query,
    RectRegion,
    Unreachable,
)
from gridpath_client.results import (
    DIRECTIONS,
    LINK_STEP,
    EditResult,
    FieldLinkStep,
    FlowField,
    LinkInfo,
    Links,
    LinkUsed,
    MapHealth,
    MapInfo,
    MapTables,
    PathCheck,
    PathChecks,
    PathResult,
    ProfileInfo,
    Profiles,
    TableStatus,
    Trace,
)
from gridpath_client.retries import RetryPolicy
from gridpath_client.version import __version__

__all__ = [
    "DIRECTIONS",
    "ERROR_CLASSES",
    "LINK_STEP",
    "Algorithm",
    "AsyncClient",
    "CellsEdit",
    "CircleRegion",
    "Client",
    "ConnectionFailed",
    "Diagonal",
    "Edit",
    "EditResult",
    "FieldLinkStep",
    "FlowField",
    "Forbidden",
    "GoalRegion",
    "GridpathError",
    "Heuristic",
    "InsufficientStorage",
    "Internal",
    "InvalidQuery",
    "InvalidValue",
    "LinkEdit",
    "LinkInfo",
    "LinkNotFound",
    "LinkSwitch",
    "LinkUsed",
    "Links",
    "MapCorrupt",
    "MapHealth",
    "MapInfo",
    "MapNotFound",
    "MapTables",
    "MethodNotAllowed",
    "NotFound",
    "NotReady",
    "NotWalkable",
    "PatchEdit",
    "PathCheck",
    "PathChecks",
    "PathFormat",
    "PathOptions",
    "PathResult",
    "Point",
    "Points",
    "ProfileInfo",
    "ProfileNotFound",
    "Profiles",
    "Query",
    "RectEdit",
    "RectRegion",
    "RequestTimeout",
    "RetryPolicy",
    "RevisionConflict",
    "TableStatus",
    "TimedOut",
    "TooBig",
    "Trace",
    "TransportError",
    "Unauthorized",
    "UnexpectedResponse",
    "Unlink",
    "Unreachable",
    "UnsupportedMediaType",
    "WouldDisconnect",
    "__version__",
]
