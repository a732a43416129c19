"""``BatchPolicy``: how a batch is answered, the same for every batch of a service:
which queries share one field search, and how many goals a query may name.
Built once from the settings and carried whole to the engine."""

from typing import NamedTuple

from service.engine.queries import UNLIMITED


class BatchPolicy(NamedTuple):
    """Attributes:
    shared_goal_queries: when optimal queries (weight 1, an admissible heuristic, a
        budget of at least the map's walkable cells) from at least this many distinct
        starts share a goal and a policy, they are answered from one search outward
        from the goal (``algorithm_used`` ``field``); 0 never does; queries sharing a
        goal set (``goals``, ``goal_region``) likewise.
    shared_goal_jps_queries: that number for a goal every query of which JPS would
        answer (None: ``shared_goal_queries``; ignored when that is 0): one JPS search
        a query costs less than the shared search until the group is a few hundred
        strong (``loadtests/bench_fields.py``).
    max_goals: most goals one query may name (``goals``, ``goal_region``).
    """

    shared_goal_queries: int = 0
    shared_goal_jps_queries: int | None = None
    max_goals: int = UNLIMITED


#: Every query searched on its own, any number of goals.
NO_POLICY = BatchPolicy()
