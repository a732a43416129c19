"""gridpath: an HTTP pathfinding service for game servers."""

__version__ = "0.1.0"
