"""The errors every store backend raises, and the editor, cache and routes catch.

Write refusals (a full disk, a Redis out of memory) are ``writes.StoreWriteError``,
beside the ``WriteHealth`` that remembers them.
"""


class StoreError(RuntimeError):
    """A stored map could not be read back: its grid is corrupt or missing."""


class LogGapError(StoreError):
    """A map's edit log does not follow its snapshot: a record is missing between them
    (read while a compaction moved the snapshot, when the store is shared)."""


class MovedError(Exception):
    """A compaction moved a map's snapshot while it was read: read it again."""


class UnknownMapError(KeyError):
    """No map has this id: never stored, or deleted (perhaps while it was being read)."""

    def __str__(self) -> str:
        return f"no map with id {self.args[0]!r}"


class StoreUnavailableError(RuntimeError):
    """The store cannot be reached (a Redis server down or restarting): nothing was
    done, and the request may be retried."""


class RevisionTakenError(Exception):
    """Another process sharing the store wrote this revision of the map first: the
    edit was computed on a stale copy and nothing was written."""

    def __init__(self, map_id: str, revision: int) -> None:
        super().__init__(f"map {map_id}: revision {revision} was written by another "
                         "service first; this one reads the map again: retry the edit")  # fmt: skip
        self.map_id = map_id
        self.revision = revision
