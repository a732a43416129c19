"""The search engine: exact A* on numpy grids, hot loops in numba.

Public API::

    from service.engine import GridMap, find_path

    grid = GridMap.from_rows(["....", ".@@.", "...."])
    result = find_path(grid, (0, 0), (3, 2))
    result.status, result.cost, result.cells, result.waypoints, result.smoothed()

No web framework or schema library is imported here.
"""

from service.engine.clusters import ClusterTable, ClusterTables, build_clusters
from service.engine.errors import (
    BuildStoppedError,
    EngineError,
    InvalidBudgetError,
    InvalidClusterSizeError,
    InvalidEditError,
    InvalidLandmarkCountError,
    InvalidMapError,
    InvalidQueryError,
    InvalidWeightError,
    MapTooBigError,
    NotWalkableError,
    OutOfBoundsError,
    PathTooLongError,
    TableBudgetError,
    UnitGridTooBigError,
    UnknownAlgorithmError,
    UnknownDiagonalError,
    UnknownHeuristicError,
    UnsupportedAlgorithmError,
)
from service.engine.goals import CircleRegion, RectRegion, Region
from service.engine.grid import MAX_AGENT_SIZE, GridMap
from service.engine.landmarks import LandmarkTable, LandmarkTables, build_landmarks
from service.engine.options import (
    ADMISSIBLE,
    ALGORITHMS,
    DEFAULT_ALGORITHM,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    DIAGONALS,
    HEURISTICS,
    Algorithm,
    AlgorithmUsed,
    Diagonal,
    Heuristic,
    PartialReason,
    Status,
    Unreachable,
    WeightSchedule,
)
from service.engine.parts import Islands
from service.engine.policy import NO_POLICY, BatchPolicy
from service.engine.queries import DEFAULT_OPTIONS, PathQuery, SearchOptions
from service.engine.result import (
    REASON_NAMES,
    REFUSED_ROW,
    STATUS_NAMES,
    BatchPlan,
    PathBatch,
    PathResult,
    SearchTrace,
    SmoothedPath,
)
from service.engine.scratch import (
    Scratch,
    deadline_scope,
    path_cell_scope,
    scope_spent,
    set_path_cell_limit,
    set_scratch_keep_bytes,
    written_path_cells,
)
from service.engine.search import (
    find_path,
    find_paths,
    find_paths_between,
    shared_goal_rows,
)
from service.engine.terrain import MAX_CLASSES, UNIFORM, Profile, Terrain, movingai_terrain
from service.engine.warmup import kernels_warm, warmup

__all__ = [
    "ADMISSIBLE",
    "ALGORITHMS",
    "DEFAULT_ALGORITHM",
    "DEFAULT_DIAGONAL",
    "DEFAULT_HEURISTIC",
    "DEFAULT_OPTIONS",
    "DIAGONALS",
    "HEURISTICS",
    "MAX_AGENT_SIZE",
    "MAX_CLASSES",
    "NO_POLICY",
    "REASON_NAMES",
    "REFUSED_ROW",
    "STATUS_NAMES",
    "UNIFORM",
    "Algorithm",
    "AlgorithmUsed",
    "BatchPlan",
    "BatchPolicy",
    "BuildStoppedError",
    "CircleRegion",
    "ClusterTable",
    "ClusterTables",
    "Diagonal",
    "EngineError",
    "GridMap",
    "Heuristic",
    "InvalidBudgetError",
    "InvalidClusterSizeError",
    "InvalidEditError",
    "InvalidLandmarkCountError",
    "InvalidMapError",
    "InvalidQueryError",
    "InvalidWeightError",
    "Islands",
    "LandmarkTable",
    "LandmarkTables",
    "MapTooBigError",
    "NotWalkableError",
    "OutOfBoundsError",
    "PartialReason",
    "PathBatch",
    "PathQuery",
    "PathResult",
    "PathTooLongError",
    "Profile",
    "RectRegion",
    "Region",
    "Scratch",
    "SearchOptions",
    "SearchTrace",
    "SmoothedPath",
    "Status",
    "TableBudgetError",
    "Terrain",
    "UnitGridTooBigError",
    "UnknownAlgorithmError",
    "UnknownDiagonalError",
    "UnknownHeuristicError",
    "Unreachable",
    "UnsupportedAlgorithmError",
    "WeightSchedule",
    "build_clusters",
    "build_landmarks",
    "deadline_scope",
    "find_path",
    "find_paths",
    "find_paths_between",
    "kernels_warm",
    "movingai_terrain",
    "path_cell_scope",
    "scope_spent",
    "set_path_cell_limit",
    "set_scratch_keep_bytes",
    "shared_goal_rows",
    "warmup",
    "written_path_cells",
]
