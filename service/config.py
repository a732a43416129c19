"""Every limit and default of the service, in one place (env prefix ``GRIDPATH_``).

Read with :func:`get_settings`; the command line (``python -m service``) overrides
host, port and data dir. docs/operations.md lists every setting with its default.
"""

import os
from functools import lru_cache
from pathlib import Path
from typing import Final

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.engine.grid import MAX_AGENT_SIZE
from service.store.priority import BackgroundPriority

REPO_ROOT: Final = Path(__file__).resolve().parents[1]
MIB: Final = 1024 * 1024


#: URL schemes of a Redis (or Valkey) store.
STORE_SCHEMES: Final = ("redis://", "rediss://", "unix://")


#: The scopes of an API key: ``read`` opens the queries, fields, pictures, listing and
#: grid; ``write`` opens everything.
KEY_SCOPES: Final = ("read", "write")


def parse_api_keys(text: str) -> tuple[tuple[str, str], ...]:
    """``GRIDPATH_API_KEYS``, ``"read:abc,write:xyz"``, as (scope, key) pairs; blanks
    around entries are dropped, a key holds neither ``,`` nor surrounding blanks.

    Raises:
        ValueError: an entry without a known scope or with an empty key; the message
            numbers the entry and never quotes a key.
    """
    pairs = []
    for number, entry in enumerate(text.split(","), start=1):
        if not entry.strip():
            continue
        scope, colon, key = (part.strip() for part in entry.partition(":"))
        if not colon or scope.lower() not in KEY_SCOPES:
            raise ValueError(f"entry {number} of GRIDPATH_API_KEYS must be 'read:<key>' or "
                             "'write:<key>'")  # fmt: skip
        if not key:
            raise ValueError(f"entry {number} of GRIDPATH_API_KEYS has an empty key")
        pairs.append((scope.lower(), key))
    return tuple(pairs)


class Settings(BaseSettings):
    """Settings read from ``GRIDPATH_*`` environment variables."""

    # An invalid setting's value is left out of the error: it may be a key.
    model_config = SettingsConfigDict(env_prefix="GRIDPATH_", extra="ignore",
                                      hide_input_in_errors=True)  # fmt: skip

    host: str = Field(default="127.0.0.1", description="Address to listen on.")
    port: int = Field(default=8000, ge=0, le=65535, description="TCP port to listen on.")
    data_dir: Path = Field(default=Path("data"), description="Where maps are persisted.")
    workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Worker processes serving the port (python -m service), each with its "
        "own cache and search threads; they share the store (the data dir, or Redis) and "
        "follow each other's edits.",
    )
    store: str = Field(
        default="file",
        description="Where maps are stored: 'file' (the data dir, one server's) or a Redis "
        "or Valkey URL ('redis://host:port/db', 'rediss://...', 'unix:///path'), shared "
        "by every process and replica.",
    )
    store_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="How long a Redis store command may wait for the server, reconnecting "
        "included, before the request answers 503 NotReady.",
    )
    log_level: str = Field(default="info", description="Python logging level name.")

    max_map_cells: int = Field(
        default=4096 * 4096, ge=1, description="Largest map accepted (width x height)."
    )
    max_body_bytes: int = Field(
        default=128 * MIB,
        ge=1,
        description="Largest map upload body (Moving AI text or .npy), in bytes.",
    )
    max_upload_bytes_in_flight: int = Field(
        default=256 * MIB,
        ge=1,
        description="Bytes of upload bodies (as declared; the route's limit for a chunked "
        "one) a service receives and stores at once; an upload past it is answered 503 "
        "NotReady before its body is read (nothing done; clients retry), unless it is the "
        "only one. Each holds its body and the grid built from it: a 128 MiB .npy takes "
        "some 1.5 GB while stored.",
    )
    max_json_body_bytes: int = Field(
        default=8 * MIB,
        ge=1,
        description=(
            "Largest JSON map upload body, in bytes: JSON is parsed holding the "
            "interpreter lock (about 15 ms a MiB), so larger maps come as .map or .npy."
        ),
    )
    max_batch_body_bytes: int = Field(
        default=1 * MIB,
        ge=1,
        description=(
            "Largest body of a batch of path queries (/paths), an edit request (/edits), "
            "a path check (/paths/check) or repair (/paths/repair), in bytes."
        ),
    )
    max_query_body_bytes: int = Field(
        default=64 * 1024,
        ge=1,
        description="Largest body of a single path query, and of any other request, in bytes.",
    )
    body_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description=(
            "Time a client has to send a whole request body; past it the request is "
            "answered 408 RequestTimeout and the connection closed."
        ),
    )
    header_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="Time a connection has to send a request's headers, from when it "
        "opens or a request's first byte; past it the connection is closed (without it, "
        "connections that send nothing held a file descriptor each for good).",
    )
    build_lease_seconds: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="On a shared Redis store, how long one service's claim on building a "
        "map's tables lasts: the others wait for its tables meanwhile, and a service that "
        "dies mid-build gives up its claim when it expires.",
    )
    min_revision_wait_seconds: float = Field(
        default=2.0,
        ge=0,
        le=60,
        description="How long a path query with 'min_revision' waits for the store to hold "
        "that revision of the map before it is answered 503 NotReady.",
    )
    ready_wait_seconds: float = Field(
        default=30.0,
        ge=0,
        description=(
            "How long a request that needs the kernels (paths, uploads) waits, off the "
            "event loop, for them to compile at startup before it is answered 503 NotReady."
        ),
    )
    compile_timeout_seconds: float = Field(
        default=600.0,
        gt=0,
        description=(
            "How long the child process that compiles the kernels of a cold cache at "
            "startup may take; past it the service compiles them itself."
        ),
    )
    table_retry_seconds: float = Field(
        default=60.0,
        ge=0,
        description=(
            "How long after a table build failed for a reason that may pass (a full disk, "
            "a map that could not be loaded) it may be tried again; builds over a memory "
            "bound are not tried again before a restart."
        ),
    )
    verify_on_start: bool = Field(
        default=True,
        description=(
            "Check every stored grid's checksum in the background after a start, so a "
            "corrupt map shows in its metadata before a query meets it."
        ),
    )
    max_batch: int = Field(default=1000, ge=1, description="Most queries in one batch.")
    max_edit_cells: int = Field(
        default=1 << 20,
        ge=1,
        description="Most cells one edit request may name (rects and cell lists together).",
    )
    max_profiles: int = Field(
        default=32,
        ge=0,
        description="Most named profiles a map may hold (PUT /v1/maps/{map_id}/profiles/{name}).",
    )
    max_links: int = Field(
        default=65_536,
        ge=0,
        description="Most links a map may hold (doors, teleports, stairs: /edits 'link' items).",
    )
    max_layers: int = Field(
        default=16,
        ge=1,
        description="Most layers (floors) a map may have; all of them together, with a row "
        "between each two, count against GRIDPATH_MAX_MAP_CELLS.",
    )
    min_free_bytes: int = Field(
        default=64 * MIB,
        ge=0,
        description="Free space on the data dir's filesystem under which /readyz says "
        "'degraded' (the disk is nearly full) before writes fail; after a refused write, "
        "writes count as working again only once this much is free (file store; 0: no "
        "check).",
    )
    edit_retry_seconds: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="How long an edit request that keeps losing the race for its revision "
        "to other services sharing the store (Redis, several workers) is made again on the "
        "map's newer revision before it answers 503 NotReady (nothing applied). An edit "
        "without if_revision is never refused because another edit won a race.",
    )
    max_check_points: int = Field(
        default=100_000,
        ge=1,
        description="Most points one /paths/check request may send (all paths together).",
    )
    background_priority: BackgroundPriority = Field(
        default="low",
        description=(
            "CPU priority of table builds, repairs and compactions against the threads "
            "answering queries: 'low' (nice 19: they yield, yet progress under full load), "
            "'idle' (SCHED_IDLE: only on otherwise idle cores) or 'normal'. Linux only."
        ),
    )
    compact_log_bytes: int = Field(
        default=8 * MIB,
        ge=0,
        description=(
            "Size past which a map's edit log is compacted, in the background, into a "
            "new snapshot of its grid."
        ),
    )
    max_expansions: int = Field(
        default=2_000_000,
        ge=1,
        description="Server cap on nodes expanded per query; a request may only lower it.",
    )
    max_name_length: int = Field(default=200, ge=1, description="Longest map name accepted.")
    cache_bytes: int = Field(
        default=1024 * MIB, ge=0, description="Memory for maps held in the cache (LRU by bytes)."
    )
    search_threads: int = Field(
        default_factory=lambda: os.cpu_count() or 1,
        ge=1,
        description="Threads running searches (the kernels release the GIL).",
    )
    scratch_bytes: int = Field(
        default=384 * MIB,
        ge=0,
        description="Search memory (node arrays: 68 bytes a padded cell of the map) each "
        "thread that searches keeps from one request to the next: the search threads and "
        "the event loop (short queries). A map needing more gets it for the call only, "
        "freed after it: its searches pay for fresh memory (page faults) each call. "
        "384 MiB keeps it for maps up to about 2,400 x 2,400.",
    )
    heap_trim_seconds: float = Field(
        default=1.0,
        ge=0,
        le=3600,
        description="How often, while the service works, the free memory of its heap is "
        "handed back to the system (glibc's malloc_trim; Linux). 0: never: the holes "
        "freed grids, unit grids and fields leave in the heap then stay with the process "
        "and grow with the traffic.",
    )
    max_waiting_work: int = Field(
        default=256,
        ge=1,
        description="Requests that may wait for or run on the search threads at once "
        "(searches, batches, fields, pictures, uploads, edits); one more answers 503 "
        "NotReady at once, nothing done (clients retry after Retry-After), instead of "
        "joining a queue that every later request waits behind.",
    )
    batch_slice_ms: int = Field(
        default=20,
        ge=1,
        description="CPU time a batch takes on a search thread before it lets the "
        "requests waiting for the threads run: a longer batch is answered in slices, each queued "
        "behind the work waiting when the one before ends, and one whose client has hung "
        "up stops at the next slice. Every slice answers whole queries (and whole groups "
        "sharing a goal), from the map revision the batch began on.",
    )
    gc_threshold: int = Field(
        default=10_000,
        ge=0,
        description=(
            "New container objects between two runs of Python's cycle collector on its "
            "youngest generation (the interpreter's default is 700; 0 keeps it). A batch "
            "answer makes a few dozen objects a query: at 700 the collector ran every few "
            "queries, and batches of short queries over HTTP served far fewer "
            "(docs/benchmarks.md, HTTP)."
        ),
    )
    inline_expansions: int = Field(
        default=1000,
        ge=0,
        description=(
            "Node budget a query may spend on the event loop before it is handed to the "
            "search threads; short paths skip the thread hop, long ones never block the loop."
        ),
    )
    inline_path_cells: int = Field(
        default=4096,
        ge=0,
        description="Most path cells an answer made on the event loop may hold (all of a "
        "batch's together); a longer one is answered, and serialised, on the search threads.",
    )
    max_path_cells: int = Field(
        default=1 << 20,
        ge=1,
        description="Most path cells one request's answers may hold together (a path in a "
        "maze can hold millions, 8 bytes each in memory and more as JSON); past it a "
        "single query is TooBig, and in a batch the query whose path would pass it and "
        "each after it answer TooBig in their slots.",
    )
    inline_batch_bytes: int = Field(
        default=16 * 1024,
        ge=0,
        description=(
            "Largest batch body (/paths) that may be answered on the event loop: a batch of "
            "queries from one cell to another on a cached map, with options it has answered "
            "before, its queries sharing one query's inline_expansions. Larger batches, and "
            "those that need more, go to the search threads. 0 disables."
        ),
    )

    max_goals: int = Field(
        default=1024,
        ge=1,
        description="Most goal cells a field request or a path query ('goals') may name.",
    )
    max_agent_size: int = Field(
        default=MAX_AGENT_SIZE,
        ge=1,
        le=MAX_AGENT_SIZE,
        description=(
            "Largest unit side (cells) a query or field may ask for ('agent_size'); each "
            "size in use keeps one eroded copy of the map per revision in memory."
        ),
    )
    max_unit_grid_bytes: int = Field(
        default=512 * MIB,
        ge=0,
        description=(
            "Memory bound of the unit grids (agent_size > 1) of one map revision, all "
            "sizes together: each size in use keeps an eroded copy of the map (about 16 "
            "bytes a cell); a query or field whose size would need more answers TooBig."
        ),
    )
    answer_cache_bytes: int = Field(
        default=64 * MIB,
        ge=0,
        description="Bytes of /path answers kept for identical queries (map, revision, "
        "options, points, format), least recently used evicted first; 0 turns the cache "
        "and the sharing of identical searches in flight off.",
    )
    field_cache_bytes: int = Field(
        default=256 * MIB,
        ge=0,
        description=(
            "Memory bound of the cache of recent fields (encoded answers, per map, "
            "revision, goals and options); the least recently used go first. 0: no cache."
        ),
    )
    max_json_field_cells: int = Field(
        default=65536,
        ge=0,
        description="Largest map (width x height) whose field may be asked for as JSON; "
        "larger maps answer fields as .npz only.",
    )
    max_image_pixels: int = Field(
        default=16 * 1024 * 1024,
        ge=1,
        description="Largest picture (GET /v1/maps/{id}/image.png, POST path.png and "
        "field.png), in pixels: width x height x scale squared; larger asks answer TooBig.",
    )
    max_image_scale: int = Field(
        default=32,
        ge=1,
        description="Largest 'scale' (pixels per cell side) of a map's picture.",
    )
    max_trace_expansions: int = Field(
        default=100_000,
        ge=1,
        le=10_000_000,
        description="Most expansions a traced search records ('trace' on POST "
        "/v1/maps/{id}/path and path.png; 4 bytes each in the search's buffer, and never "
        "more than the query's node budget); past it the trace is cut and says so.",
    )
    resume_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="How long a worker holds a resumable search's state after its last "
        "slice ('resumable' on POST /v1/maps/{id}/path); past it the token answers "
        "ResumeExpired.",
    )
    resume_bytes: int = Field(
        default=256 * MIB,
        ge=0,
        description="Most bytes of resumable searches a worker holds (36 bytes per cell of "
        "each search's map); past it the least recently used are dropped (their tokens "
        "answer ResumeExpired). A search that alone needs more is TooBig; 0 turns "
        "resumable searches off.",
    )
    events_heartbeat_seconds: float = Field(
        default=15.0,
        gt=0,
        le=300,
        description="Seconds of quiet after which a map's event stream (GET "
        "/v1/maps/{id}/events) sends a heartbeat comment, so proxies keep it open.",
    )
    events_poll_seconds: float = Field(
        default=0.1,
        gt=0,
        le=5,
        description="How often an event stream looks at its map's revision here (the "
        "worker's copy, which follows the store): the most an event lags the revision.",
    )
    events_send_seconds: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="Most seconds an event stream waits for a slow reader to take an "
        "event; past it the stream is closed (the reader reconnects with Last-Event-ID), "
        "so no reader is buffered for without limit.",
    )
    max_event_streams: int = Field(
        default=1024,
        ge=0,
        description="Event streams one worker serves at once; one more answers 503 NotReady.",
    )
    max_field_arrows: int = Field(
        default=16_384,
        ge=1,
        description="Most arrows a field's picture (POST /v1/maps/{id}/field.png) draws: "
        "its stride is raised until the arrows fit.",
    )
    shared_goal_queries: int = Field(
        default=8,
        ge=0,
        description=(
            "A batch answers its optimal queries (weight 1, an admissible heuristic, a "
            "budget of at least the map's walkable cells) that share a goal and policy "
            "from one search outward from the goal when they come from at least this many "
            "distinct starts; 0: never (GRIDPATH_SHARED_GOAL_JPS_QUERIES included)."
        ),
    )
    # One JPS search a query beats the shared search until some 300 distinct starts on
    # the DAO maps (docs/benchmarks.md, "Fields and shared-goal batches").
    shared_goal_jps_queries: int = Field(
        default=300,
        ge=0,
        description=(
            "GRIDPATH_SHARED_GOAL_QUERIES for a goal every query to which JPS answers "
            "(uniform-cost maps, no_corner_cutting): one JPS search each costs less than "
            "the shared search until the group is this large; 0: never."
        ),
    )

    # 36 MiB: room for the pair tables at the sector sizes that suit the Moving AI
    # maps, with the cell labels counted too (docs/engine.md).
    max_table_bytes: int = Field(
        default=36 * MIB,
        ge=0,
        description=(
            "Memory bound of a map's two cluster tables (4- and 8-connected), their cell "
            "labels (8 bytes a cell) included; a map whose tables would exceed it at the "
            "requested or default cluster size gets a larger one, and none when no size "
            "fits (status 'failed' with the reason)."
        ),
    )
    max_table_build_bytes: int = Field(
        default=512 * MIB,
        ge=0,
        description=(
            "Memory bound of one table build (cluster or landmark tables): every array a "
            "build allocates is counted before it is allocated, the tables included; a "
            "build that cannot fit fails with the reason (GRIDPATH_TABLE_WORKERS builds "
            "run at once)."
        ),
    )
    max_jump_table_bytes: int = Field(
        default=256 * MIB,
        ge=0,
        description=(
            "Largest JPS+ table (16 bytes a cell) built for a uniform-cost map; larger maps "
            "run Jump Point Search on 64-cell bit scans instead."
        ),
    )
    landmarks: int = Field(
        default=8, ge=1, le=64, description="Landmarks per map for the 'landmarks' heuristic."
    )
    profile_landmarks: int = Field(
        default=16,
        ge=1,
        le=64,
        description="Landmarks of a named weighted profile's view (fewer to fit "
        "GRIDPATH_MAX_LANDMARK_BYTES and the views' bound, GRIDPATH_MAX_UNIT_GRID_BYTES).",
    )
    max_landmark_bytes: int = Field(
        default=64 * MIB,
        ge=0,
        description=(
            "Memory bound of a map's landmark tables (4 bytes a cell per landmark, "
            "connectivity and direction); fewer landmarks are chosen to fit."
        ),
    )
    table_workers: int = Field(
        default=1,
        ge=1,
        description="Maps whose tables build at once (each build uses two threads).",
    )
    cluster_size: int | None = Field(
        default=None,
        ge=4,
        le=1024,
        description="Default sector side of the cluster tables; unset: 8. Doubled while the "
        "tables would not fit max_table_bytes.",
    )

    api_keys: SecretStr | None = Field(
        default=None,
        description="API keys with their scopes, 'read:<key>,write:<key>,...': when any key "
        "is set, every /v1 route needs 'Authorization: Bearer <key>' of its scope (read: "
        "queries, fields, pictures, listing, grid; write: everything).",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="One more key, of the 'write' scope (the single key of older setups).",
    )
    api_key_reads: bool = Field(
        default=True,
        description="Whether reads need a key when keys are set; false opens them to all.",
    )
    metrics_key: SecretStr | None = Field(
        default=None,
        description="When set, /metrics needs 'Authorization: Bearer <this key>'.",
    )

    @field_validator("store")
    @classmethod
    def _store_kind(cls, value: str) -> str:
        if value != "file" and not value.startswith(STORE_SCHEMES):
            raise ValueError(f"store {value!r} must be 'file' or a URL starting with "
                             f"{', '.join(STORE_SCHEMES)}")  # fmt: skip
        return value

    @field_validator("api_key", "api_keys", "metrics_key", "cluster_size", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """``GRIDPATH_API_KEY=`` (as compose passes an unset variable) means unset."""
        return None if value in ("", None) else value

    @field_validator("api_keys")
    @classmethod
    def _scoped_keys(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            parse_api_keys(value.get_secret_value())  # (raises on a malformed entry)
        return value

    bench_data: Path = Field(
        default=REPO_ROOT.parent / "shared" / "benchmarks" / "movingai",
        description="Folder of Moving AI .map and .map.scen files (tests and benchmarks).",
    )


#: What the process holds before it serves any map: the interpreter, numpy, numba with
#: the compiled kernels, and the small objects of requests.
BASE_MEMORY_BYTES: Final = 320 * MIB
#: Bytes of a thread's path buffers per path cell (``(x, y)`` int32, cells and turns).
PATH_BUFFER_BYTES_PER_CELL: Final = 16


def memory_bound_at_rest(settings: Settings) -> int:
    """The most memory (bytes) one worker process holds between requests under
    ``settings`` (docs/operations.md, "Memory: what bounds a process"): the base
    (``BASE_MEMORY_BYTES``), the map, field and answer caches, and per thread that
    searches (the search threads and the event loop) its kept scratch, path buffers
    and trace buffer (4 bytes an expansion). Requests at work add their own."""
    per_thread = (settings.scratch_bytes
                  + PATH_BUFFER_BYTES_PER_CELL * settings.max_path_cells
                  + 4 * settings.max_trace_expansions)  # fmt: skip
    return (BASE_MEMORY_BYTES + settings.cache_bytes + settings.field_cache_bytes
            + settings.answer_cache_bytes
            + (settings.search_threads + 1) * per_thread)  # fmt: skip


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
