"""Names of the search options and their kernel codes.

Admissibility of each heuristic (all are scaled by the map's minimum cost):

============  ======================  =========================================
heuristic     4-connected (never)     8-connected (every other policy)
============  ======================  =========================================
octile        admissible, consistent  admissible, consistent (exact on open maps)
manhattan     admissible, consistent  NOT admissible: overestimates diagonals by
                                      up to 2/sqrt(2); a speed/quality trade,
                                      costs may exceed optimal by up to ~41%
chebyshev     admissible, consistent  admissible, consistent (weaker than octile)
euclidean     admissible, consistent  admissible, consistent (weaker than octile)
zero          Dijkstra: optimal, expands the most
cluster       admissible, NOT         admissible, NOT consistent (reopens nodes);
              consistent: max of      max of octile and the 8-connected table
              manhattan and the       under no_corner_cutting; plain octile under
              4-connected table       one_obstacle and always (cut corners make
                                      paths the table does not know)
============  ======================  =========================================

landmarks     admissible, consistent: max of the plain bound (manhattan when
              4-connected, octile otherwise) and the landmark (ALT) bounds of
              the policy's table; plain octile under one_obstacle and always

``cluster`` and ``landmarks`` need the map's tables (``build_clusters``,
``build_landmarks``); until they are attached they search with octile, and results
say so in ``heuristic_used``.

On a 4-connected search octile is weaker than manhattan, which is exact on open maps.
"""

from typing import Final, Literal

from service.engine.kernels import codes

Heuristic = Literal["octile", "manhattan", "chebyshev", "euclidean", "zero", "cluster", "landmarks"]
Diagonal = Literal["never", "no_corner_cutting", "one_obstacle", "always"]
Status = Literal["found", "partial", "no_path"]
#: ``bidirectional``, ``beam`` and ``ida``: the classic variants (``toolbox``), run
#: only when asked.
Algorithm = Literal["astar", "jps", "auto", "bidirectional", "beam", "ida"]
#: ``field``: answered from one search outward from a goal the batch's queries share.
AlgorithmUsed = Literal["astar", "jps", "field", "bidirectional", "beam", "ida"]
#: ``static``: ``f = g + weight * h``; ``dynamic``: the weight falls from ``weight`` to 1
#: with a node's depth (``toolbox``).
WeightSchedule = Literal["static", "dynamic"]
#: What a query does when no goal can be reached (see ``goals``).
Unreachable = Literal["no_path", "nearest"]
#: Why an answer is ``partial``: the node budget ran out; (``unreachable``
#: ``nearest``) no goal can be reached and the path ends at the nearest cell that can;
#: or the call's deadline came (``deadline_scope``); or (``beam``) the beam dropped
#: the cells that led on and emptied.
PartialReason = Literal["budget", "unreachable", "deadline", "beam"]

HEURISTICS: Final[dict[str, int]] = {
    "octile": codes.HEURISTIC_OCTILE,
    "manhattan": codes.HEURISTIC_MANHATTAN,
    "chebyshev": codes.HEURISTIC_CHEBYSHEV,
    "euclidean": codes.HEURISTIC_EUCLIDEAN,
    "zero": codes.HEURISTIC_ZERO,
    "cluster": codes.HEURISTIC_CLUSTER,
    "landmarks": codes.HEURISTIC_LANDMARKS,
}

DIAGONALS: Final[dict[str, int]] = {
    "never": codes.DIAGONAL_NEVER,
    "no_corner_cutting": codes.DIAGONAL_NO_CORNER_CUTTING,
    "one_obstacle": codes.DIAGONAL_ONE_OBSTACLE,
    "always": codes.DIAGONAL_ALWAYS,
}

#: ``auto``: JPS where it applies (uniform costs, no_corner_cutting, a consistent
#: heuristic), A* elsewhere.
ALGORITHMS: Final[dict[str, int]] = {
    "astar": codes.ALGORITHM_ASTAR,
    "jps": codes.ALGORITHM_JPS,
    "auto": -1,
    "bidirectional": codes.ALGORITHM_BIDIRECTIONAL,
    "beam": codes.ALGORITHM_BEAM,
    "ida": codes.ALGORITHM_IDA,
}
#: The variants ``toolbox`` runs (not the batch kernels).
VARIANTS: Final = frozenset({"bidirectional", "beam", "ida"})
WEIGHT_SCHEDULES: Final[dict[str, int]] = {"static": 0, "dynamic": 1}
UNREACHABLE: Final[dict[str, int]] = {"no_path": 0, "nearest": 1}
DEFAULT_ALGORITHM: Final[Algorithm] = "auto"
DEFAULT_HEURISTIC: Final[Heuristic] = "octile"
DEFAULT_DIAGONAL: Final[Diagonal] = "no_corner_cutting"

#: Heuristics that never overestimate under a policy; with them and weight 1 the
#: returned cost is optimal, with weight w it is at most w times optimal.
ADMISSIBLE: Final[dict[str, frozenset[str]]] = {
    "never": frozenset(HEURISTICS),
    "no_corner_cutting": frozenset(HEURISTICS) - {"manhattan"},
    "one_obstacle": frozenset(HEURISTICS) - {"manhattan"},
    "always": frozenset(HEURISTICS) - {"manhattan"},
}

#: Heuristics that are also consistent (h(n) <= c(n, n') + h(n')) under a policy:
#: the search may then skip the heap for successors with an unchanged f.
CONSISTENT: Final[dict[str, frozenset[str]]] = {
    policy: names - {"cluster"} for policy, names in ADMISSIBLE.items()
}

#: Cluster (and landmark) table used by each policy's ``cluster`` (``landmarks``)
#: heuristic (octile without one).
CLUSTER_TABLES: Final[dict[int, int]] = {
    codes.DIAGONAL_NEVER: codes.TABLE_FOUR,
    codes.DIAGONAL_NO_CORNER_CUTTING: codes.TABLE_EIGHT,
}


def option_code(choices: dict[str, int], name: object, what: str, error: type[Exception]) -> int:
    """The kernel code of option ``name`` among ``choices``; ``error`` naming the
    choices when it is not one of them (``what``: the option's name in the message)."""
    code = choices.get(name) if isinstance(name, str) else None
    if code is None:
        raise error(f"unknown {what} {name!r}; expected one of: {', '.join(choices)}")
    return code
