"""The blocking client."""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, TypeVar, Unpack

import httpx

from gridpath_client import calls
from gridpath_client.arrays import ClassesLike, PointsLike
from gridpath_client.calls import Call
from gridpath_client.config import DEFAULT_URL, ClientConfig
from gridpath_client.edits import Edit
from gridpath_client.errors import GridpathError, NotReady, UnexpectedResponse
from gridpath_client.events import EventParser, MapEvent
from gridpath_client.queries import (
    Diagonal,
    GoalRegion,
    PathFormat,
    PathOptions,
    PointLike,
    ProfileLike,
    Query,
)
from gridpath_client.results import (
    EditResult,
    FlowField,
    Links,
    MapInfo,
    PathChecks,
    PathRepair,
    PathResult,
    ProfileInfo,
    Profiles,
)
from gridpath_client.retries import Attempts
from gridpath_client.uploads import MapSource

T = TypeVar("T")


class Client:
    """A connection pool to one gridpath service; use it as a context manager (or call
    :meth:`close`) and share it: it is thread-safe and keeps connections alive.

    Args:
        base_url: The service, e.g. ``"http://127.0.0.1:8000"``.
        api_key: Sent as ``Authorization: Bearer <key>`` on every request (the service
            needs it for uploads, edits and deletes when ``GRIDPATH_API_KEY`` is set,
            and for reads too with ``GRIDPATH_API_KEY_READS``).
        timeout: Seconds (or an ``httpx.Timeout``) for connecting, sending, and
            waiting for each read; ``None``: no timeout. Per attempt.
        retries: Retries after the first attempt, on connection failures and 503 (see
            :mod:`gridpath_client.retries` for which calls retry which failures).
        backoff: Nominal wait before the first retry, in seconds; doubles per retry,
            with jitter (between half and all of it).
        max_backoff: Longest single wait, ``Retry-After`` included, in seconds.
        retry_deadline: Seconds after the first attempt past which no retry starts.
        as_numpy: Results as numpy arrays (paths ``(n, 2)`` int32, fields
            ``(height, width)``) or as lists of tuples/rows. ``None`` (default): numpy
            if it is installed. ``True`` without numpy is an ``ImportError``.
        headers: Extra headers for every request.
        transport: An ``httpx`` transport (tests, proxies, Unix sockets).
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float | httpx.Timeout | None = 10.0,
        retries: int = 3,
        backoff: float = 0.1,
        max_backoff: float = 5.0,
        retry_deadline: float = 30.0,
        as_numpy: bool | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = ClientConfig.make(
            base_url,
            api_key=api_key,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_backoff=max_backoff,
            retry_deadline=retry_deadline,
            as_numpy=as_numpy,
            headers=headers,
        )
        self._http = httpx.Client(
            base_url=self.config.base_url,
            headers=self.config.headers,
            timeout=self.config.timeout,
            transport=transport,
        )

    @property
    def as_numpy(self) -> bool:
        """Whether results hold numpy arrays (decided when the client was made)."""
        return self.config.as_numpy

    # -- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        """Close the pooled connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.config.base_url!r})"

    # -- maps ---------------------------------------------------------------------------

    def upload_map(
        self,
        source: MapSource | None,
        *,
        name: str | None = None,
        cluster_size: int | None = None,
        classes: ClassesLike | None = None,
        class_names: Sequence[str] | None = None,
        default_profile: Mapping[str, Any] | None = None,
        links: Sequence[Any] | None = None,
        if_exists: Literal["create", "reuse"] | None = None,
    ) -> MapInfo:
        """Store a map; it is queryable at once (its tables build in the background).

        Args:
            source: A ``pathlib.Path`` to a ``.map`` or ``.npy`` file, the text of a
                Moving AI ``.map`` (``str``), ``.map`` or ``.npy`` bytes, a 2-D numpy
                array of costs, a list of rows in Moving AI characters (``"..@."``), or
                a list of rows of costs. Costs: 0 = blocked, else the cost of entering.
                A map of several layers (floors): a 3-D array (layers, height, width),
                or a list of layers of rows; its cells are ``(x, y, layer)``.
                With ``classes``: the base costs (rows of numbers or a 2-D numpy array),
                or ``None`` for 1 on every cell.
            name: The map's name (a path's default: the file's stem).
            cluster_size: Sector side of the cluster tables (4..1024).
            classes: Each cell's terrain class id (0..63), rows or a 2-D integer array
                of the map's shape; the map is then sent as JSON, with its costs as
                base costs that each profile multiplies.
            class_names: The classes' names by id (needed with ``classes``).
            default_profile: The profile of queries that name none
                (``{"multipliers": {...}, "exclude": [...]}``); default: every class
                by 1, none excluded.
            links: Doors, stairs, teleports (``LinkEdit``), the map's from the start;
                the map is then sent as JSON (a source of costs or rows).
            if_exists: ``reuse``: when a map of this name exists, answer it (at its
                current revision) instead of storing another; needs a name. Such an
                upload is retried like a read. Default: store a new map.

        Raises:
            ValueError: ``classes`` or ``class_names`` without the other.
            TypeError: with ``classes``, a source that is not costs.

        Returns:
            The map's metadata (the new one's, or the reused one's); ``.id`` is what
            every other call takes.
        """
        call = calls.upload_map(
            source,
            name=name,
            cluster_size=cluster_size,
            classes=classes,
            class_names=class_names,
            default_profile=default_profile,
            links=links,
            if_exists=if_exists,
        )
        return self._run(call)

    def get_map(self, map_id: str) -> MapInfo:
        """A map's metadata at its current revision (``MapNotFound`` if none)."""
        return self._run(calls.get_map(map_id))

    def list_maps(self, *, name: str | None = None) -> list[MapInfo]:
        """Every stored map's metadata, oldest first; with ``name``, of that name only."""
        return self._run(calls.list_maps(name))

    def delete_map(self, map_id: str) -> None:
        """Delete a map; queries already running on it finish."""
        self._run(calls.delete_map(map_id))

    def ready(self) -> bool:
        """Whether the service is ready (store open, kernels compiled). Connection
        failures are retried, then raised; a 503 is ``False``."""
        try:
            return self._run(calls.ready())
        except NotReady:
            return False
        except UnexpectedResponse as exc:  # a proxy's own 503 page: no replica is ready
            if exc.status == NotReady.STATUS:
                return False
            raise

    # -- paths --------------------------------------------------------------------------

    def path(
        self,
        map_id: str,
        start: PointLike,
        goal: PointLike | None = None,
        *,
        goals: PointsLike | None = None,
        goal_region: GoalRegion | None = None,
        trace: bool = False,
        min_revision: int | None = None,
        resumable: bool = False,
        **options: Unpack[PathOptions],
    ) -> PathResult:
        """One path from ``start`` to ``goal``, to the cheapest of ``goals``, or to the
        first cell of ``goal_region`` (give exactly one).

        Args:
            map_id: The map's id.
            start, goal: Cells as ``(x, y)`` = (column, row).
            goals: Cells, the cheapest of which is reached (``reached`` says which).
            goal_region: A :class:`RectRegion` or :class:`CircleRegion`.
            trace: Ask for the search's trace (``result.trace``; ``None`` if the service
                sends none).
            min_revision: Answer on this revision of the map or a later one (read
                your writes: the revision an edit answered, whichever replica
                answers); ``NotReady`` if the service cannot reach it in time.
            resumable: When ``max_expansions`` runs out, the ``partial`` answer carries
                a ``resume`` token that :meth:`resume` goes on with (A* or beam).
            **options: :class:`PathOptions` (``heuristic``, ``diagonal``, ``weight``,
                ``max_expansions``, ``format``, ``algorithm``, ``unreachable``,
                ``agent_size``, ``deadline_ms``, ``profile``, ``weight_schedule``,
                ``beam_width``): only those given are sent.

        Raises:
            InvalidQuery, InvalidValue, NotWalkable, MapNotFound, ProfileNotFound, ...:
                the service's refusal, as the class of its code.
        """
        call = calls.path(
            map_id,
            start,
            goal,
            goals=goals,
            goal_region=goal_region,
            trace=trace,
            options=options,
            as_numpy=self.as_numpy,
            min_revision=min_revision,
            resumable=resumable,
        )
        return self._run(call)

    def resume(self, map_id: str, token: str, *, max_expansions: int | None = None,
               format: PathFormat | None = None, deadline_ms: float | None = None,
               trace: bool = False) -> PathResult:  # fmt: skip
        """Go on with a resumable search (``path(..., resumable=True)``) from its last
        partial answer's ``resume`` token, for at most ``max_expansions`` more.

        The answer is the next slice's: ``partial`` with a new ``resume`` token while
        unfinished. Each token goes on once, and is not retried.

        Raises:
            ResumeExpired: the service holds the search no more (the message says
                why: expired, evicted, used, the map changed, another worker's).
        """
        call = calls.resume(map_id, token, max_expansions=max_expansions, format=format,
                            deadline_ms=deadline_ms, trace=trace,
                            as_numpy=self.as_numpy)  # fmt: skip
        return self._run(call)

    def paths(
        self,
        map_id: str,
        queries: Sequence[Query | tuple[PointLike, PointLike]],
        *,
        min_revision: int | None = None,
        **defaults: Unpack[PathOptions],
    ) -> list[PathResult | GridpathError]:
        """Many paths on one map in one request (one per game tick).

        Args:
            queries: :class:`Query` objects, or ``(start, goal)`` pairs.
            min_revision: As for :meth:`path`, for the whole batch.
            **defaults: Options for every query that does not set them.

        Returns:
            One item per query, in order: its :class:`PathResult`, or, for a query the
            service refused, the exception of its code (returned, not raised: the
            other queries are answered all the same).

        Raises:
            GridpathError: when the batch as a whole is refused (``MapNotFound``,
                ``TooBig`` over ``GRIDPATH_MAX_BATCH``...).
        """
        call = calls.paths(map_id, queries, defaults=defaults, as_numpy=self.as_numpy,
                           min_revision=min_revision)  # fmt: skip
        return self._run(call)

    def check_paths(
        self,
        map_id: str,
        paths: Sequence[PointsLike],
        *,
        diagonal: Diagonal | None = None,
        agent_size: int | None = None,
        profile: ProfileLike | None = None,
        min_revision: int | None = None,
        snap: bool = False,
    ) -> PathChecks:
        """Which held paths (as returned: waypoints or cells) an edit broke, their cost
        now, and the first cell each can no longer enter; for ``profile`` (a named
        profile's name or a profile inline; default: the map's default profile); on
        ``min_revision`` or a later revision (``NotReady`` past the service's wait).
        With ``snap=True``, a path whose first point the unit cannot stand on (an edit
        walled it in) says in ``snapped`` the nearest cell it can stand on: where a
        search with ``snap=True`` would start."""
        call = calls.check_paths(map_id, paths, diagonal=diagonal, agent_size=agent_size,
                                 profile=profile, min_revision=min_revision,
                                 snap=snap)  # fmt: skip
        return self._run(call)

    def repair_path(self, map_id: str, path: PointsLike, position: int, *,
                    max_detour: float | None = None,
                    **options: Unpack[PathOptions]) -> PathRepair:  # fmt: skip
        """Mend a held path (as returned: waypoints or cells) for the unit standing on
        ``path[position]``: ``unchanged`` when it can still be walked; else a detour
        back onto its intact tail (``spliced``, at most ``max_detour`` dearer than
        the stretch it replaces); else a new search to its end (``replanned``).
        ``options`` as for :meth:`path`."""
        call = calls.repair_path(map_id, path, position, max_detour=max_detour,
                                 options=options, as_numpy=self.as_numpy)  # fmt: skip
        return self._run(call)

    # -- fields and edits ---------------------------------------------------------------

    def field(
        self,
        map_id: str,
        goals: PointsLike,
        *,
        diagonal: Diagonal | None = None,
        max_cost: float | None = None,
        agent_size: int | None = None,
        deadline_ms: float | None = None,
        profile: ProfileLike | None = None,
    ) -> FlowField:
        """The distance and flow field towards ``goals``: for every cell the cost to
        the nearest goal and the first step there (one search for any number of units).

        With numpy it comes as ``.npz`` (``cost`` float32, float64 when a finite cost is
        past float32's range, and ``next`` int8 arrays, ``(height, width)``); without,
        as JSON rows (the service allows that only for
        maps up to ``GRIDPATH_MAX_JSON_FIELD_CELLS`` cells: ``TooBig`` past it).
        ``deadline_ms``: stop the search then; the field says so (``partial_reason``).
        ``profile``: the movement profile (a named profile's name or a profile inline;
        default: the map's default), which ``profile_used`` names.
        """
        call = calls.flow_field(
            map_id,
            goals,
            diagonal=diagonal,
            max_cost=max_cost,
            agent_size=agent_size,
            as_numpy=self.as_numpy,
            deadline_ms=deadline_ms,
            profile=profile,
        )
        return self._run(call)

    def edit(
        self,
        map_id: str,
        edits: Sequence[Edit],
        *,
        if_revision: int | None = None,
        keep_connected: PointsLike | None = None,
        profile: ProfileLike | None = None,
    ) -> EditResult:
        """Apply ``edits`` (:class:`RectEdit`, :class:`CellsEdit`, :class:`PatchEdit`)
        together as one new revision, or none of them.

        Args:
            if_revision: Apply only at this revision (else ``RevisionConflict``).
            keep_connected: Refuse (``WouldDisconnect``) unless these cells stay
                walkable and in one island.
            profile: The profile ``keep_connected`` holds for (a named profile's name
                or a profile inline; default: the map's default profile).
        """
        call = calls.edit(map_id, edits, if_revision=if_revision, keep_connected=keep_connected,
                          profile=profile)  # fmt: skip
        return self._run(call)

    # -- profiles -----------------------------------------------------------------------

    def put_profile(self, map_id: str, name: str, profile: Mapping[str, Any]) -> ProfileInfo:
        """Add the named movement profile ``name``, or replace the one of that name, as
        one new revision of the map (a map with terrain classes only).

        Args:
            name: 1 to 64 letters, digits, ``_``, ``.`` or ``-`` (not ``default`` or
                ``inline``).
            profile: ``{"multipliers": {"swamp": 3.0}, "exclude": ["water"]}`` (both
                optional), by class name.

        Returns:
            The profile as the service holds it; ``.revision`` is the new revision.
        """
        return self._run(calls.put_profile(map_id, name, profile))

    def profile(self, map_id: str, name: str) -> ProfileInfo:
        """A named profile of the map (``ProfileNotFound`` if it holds none)."""
        return self._run(calls.get_profile(map_id, name))

    def links(self, map_id: str) -> Links:
        """The map's links (doors, teleports, stairs), closed ones too; put, open, close
        and remove them with ``edit`` (``LinkEdit``, ``LinkSwitch``, ``Unlink``)."""
        return self._run(calls.list_links(map_id))

    def profiles(self, map_id: str) -> Profiles:
        """The map's terrain classes, default profile and named profiles."""
        return self._run(calls.list_profiles(map_id))

    def delete_profile(self, map_id: str, name: str) -> int:
        """Delete a named profile as one new revision of the map, and return that
        revision; queries naming it then answer ``ProfileNotFound``."""
        return self._run(calls.delete_profile(map_id, name))

    def events(self, map_id: str, *, since: int | None = None) -> Generator[MapEvent]:
        """The map's changes as they happen: one :class:`MapEvent` per revision after
        ``since`` (default: from now), through whichever worker or replica answers.
        Iterate in a thread of its own; it ends when the map is deleted, and raises
        when the connection drops (reconnect with ``since`` the last revision seen:
        nothing the log still holds is missed, else a ``reset`` event says so).

        Raises:
            MapNotFound, NotReady (too many streams open), TransportError.
        """
        params = {} if since is None else {"since": since}
        with self._http.stream("GET", calls.map_url(map_id, "/events"), params=params,
                               timeout=httpx.Timeout(None, connect=10.0)) as response:  # fmt: skip
            if response.status_code != 200:
                response.read()
                raise calls.error_of(response)
            parser = EventParser()
            for line in response.iter_lines():
                for event in parser.feed([line]):
                    yield event
                    if event.kind == "deleted":
                        return

    # -- I/O ----------------------------------------------------------------------------

    def _run(self, call: Call[T]) -> T:
        return call.result(self._send(call))

    def _send(self, call: Call[Any]) -> httpx.Response:
        """The call's answer, after the retries the policy allows."""
        attempts = Attempts(self.config.retry, call.safe)
        while True:
            try:
                response = self._http.request(
                    call.method,
                    call.url,
                    json=call.json,
                    content=call.content,
                    params=call.params,
                    headers=call.headers,
                )
            except httpx.TransportError as exc:
                time.sleep(attempts.after_transport_error(exc, call.what))
                continue
            retried = call.retry_unavailable
            delay = attempts.after_response(response, call.what) if retried else None
            if delay is None:
                return response
            time.sleep(delay)
