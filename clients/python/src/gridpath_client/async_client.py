"""The asyncio client: :class:`~gridpath_client.Client`'s calls, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
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


class AsyncClient:
    """Like :class:`~gridpath_client.Client` (same arguments, methods and results), for
    asyncio: every call is awaited, and retries wait with ``asyncio.sleep``. Use it
    with ``async with`` or call :meth:`aclose`; ``transport`` is an
    ``httpx.AsyncBaseTransport``."""

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
        transport: httpx.AsyncBaseTransport | None = None,
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
        self._http = httpx.AsyncClient(
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

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncClient({self.config.base_url!r})"

    # -- maps ---------------------------------------------------------------------------

    async def upload_map(
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
        """See :meth:`Client.upload_map`."""
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
        return await self._run(call)

    async def get_map(self, map_id: str) -> MapInfo:
        """See :meth:`Client.get_map`."""
        return await self._run(calls.get_map(map_id))

    async def list_maps(self, *, name: str | None = None) -> list[MapInfo]:
        """See :meth:`Client.list_maps`."""
        return await self._run(calls.list_maps(name))

    async def delete_map(self, map_id: str) -> None:
        """See :meth:`Client.delete_map`."""
        await self._run(calls.delete_map(map_id))

    async def ready(self) -> bool:
        """See :meth:`Client.ready`."""
        try:
            return await self._run(calls.ready())
        except NotReady:
            return False
        except UnexpectedResponse as exc:  # a proxy's own 503 page: no replica is ready
            if exc.status == NotReady.STATUS:
                return False
            raise

    # -- paths --------------------------------------------------------------------------

    async def path(
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
        """See :meth:`Client.path`."""
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
        return await self._run(call)

    async def resume(self, map_id: str, token: str, *, max_expansions: int | None = None,
               format: PathFormat | None = None, deadline_ms: float | None = None,
               trace: bool = False) -> PathResult:  # fmt: skip
        """See :meth:`Client.resume`."""
        call = calls.resume(map_id, token, max_expansions=max_expansions, format=format,
                            deadline_ms=deadline_ms, trace=trace,
                            as_numpy=self.as_numpy)  # fmt: skip
        return await self._run(call)

    async def paths(
        self,
        map_id: str,
        queries: Sequence[Query | tuple[PointLike, PointLike]],
        *,
        min_revision: int | None = None,
        **defaults: Unpack[PathOptions],
    ) -> list[PathResult | GridpathError]:
        """See :meth:`Client.paths`."""
        call = calls.paths(map_id, queries, defaults=defaults, as_numpy=self.as_numpy,
                           min_revision=min_revision)  # fmt: skip
        return await self._run(call)

    async def check_paths(
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
        """See :meth:`Client.check_paths`."""
        call = calls.check_paths(map_id, paths, diagonal=diagonal, agent_size=agent_size,
                                 profile=profile, min_revision=min_revision,
                                 snap=snap)  # fmt: skip
        return await self._run(call)

    async def repair_path(self, map_id: str, path: PointsLike, position: int, *,
                    max_detour: float | None = None,
                    **options: Unpack[PathOptions]) -> PathRepair:  # fmt: skip
        """See :meth:`Client.repair_path`."""
        call = calls.repair_path(map_id, path, position, max_detour=max_detour,
                                 options=options, as_numpy=self.as_numpy)  # fmt: skip
        return await self._run(call)

    # -- fields and edits ---------------------------------------------------------------

    async def field(
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
        """See :meth:`Client.field`."""
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
        return await self._run(call)

    async def edit(
        self,
        map_id: str,
        edits: Sequence[Edit],
        *,
        if_revision: int | None = None,
        keep_connected: PointsLike | None = None,
        profile: ProfileLike | None = None,
    ) -> EditResult:
        """See :meth:`Client.edit`."""
        call = calls.edit(map_id, edits, if_revision=if_revision, keep_connected=keep_connected,
                          profile=profile)  # fmt: skip
        return await self._run(call)

    # -- profiles -----------------------------------------------------------------------

    async def put_profile(self, map_id: str, name: str, profile: Mapping[str, Any]) -> ProfileInfo:
        """See :meth:`Client.put_profile`."""
        return await self._run(calls.put_profile(map_id, name, profile))

    async def profile(self, map_id: str, name: str) -> ProfileInfo:
        """See :meth:`Client.profile`."""
        return await self._run(calls.get_profile(map_id, name))

    async def links(self, map_id: str) -> Links:
        """See :meth:`Client.links`."""
        return await self._run(calls.list_links(map_id))

    async def profiles(self, map_id: str) -> Profiles:
        """See :meth:`Client.profiles`."""
        return await self._run(calls.list_profiles(map_id))

    async def delete_profile(self, map_id: str, name: str) -> int:
        """See :meth:`Client.delete_profile`."""
        return await self._run(calls.delete_profile(map_id, name))

    async def events(self, map_id: str, *, since: int | None = None
                     ) -> AsyncIterator[MapEvent]:  # fmt: skip
        """See :meth:`Client.events`."""
        params = {} if since is None else {"since": since}
        url, unbounded = calls.map_url(map_id, "/events"), httpx.Timeout(None, connect=10.0)
        async with self._http.stream("GET", url, params=params, timeout=unbounded) as response:
            if response.status_code != 200:
                await response.aread()
                raise calls.error_of(response)
            parser = EventParser()
            async for line in response.aiter_lines():
                for event in parser.feed([line]):
                    yield event
                    if event.kind == "deleted":
                        return

    # -- I/O ----------------------------------------------------------------------------

    async def _run(self, call: Call[T]) -> T:
        return call.result(await self._send(call))

    async def _send(self, call: Call[Any]) -> httpx.Response:
        """The call's answer, after the retries the policy allows."""
        attempts = Attempts(self.config.retry, call.safe)
        while True:
            try:
                response = await self._http.request(
                    call.method,
                    call.url,
                    json=call.json,
                    content=call.content,
                    params=call.params,
                    headers=call.headers,
                )
            except httpx.TransportError as exc:
                await asyncio.sleep(attempts.after_transport_error(exc, call.what))
                continue
            retried = call.retry_unavailable
            delay = attempts.after_response(response, call.what) if retried else None
            if delay is None:
                return response
            await asyncio.sleep(delay)
