"""HTTP connections: a deadline for each request's headers.

uvicorn closes a connection idle after a response (``timeout_keep_alive``) but
gives none to a connection that sends nothing, or half a request line, or headers
a byte a minute: each holds a file descriptor for good, and a few thousand of them
(1,100 under the common limit of 1,024) refused every other client and made table
builds fail for want of files. The shipped HAProxy configuration bounds this in
front of the service (``timeout http-request``); this bounds it in the service too,
for ``make run`` and any deployment without such a proxy.
"""

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.api.events import end_event_streams
from service.config import get_settings


class HeaderDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing a connection whose request headers are
    not complete ``GRIDPATH_HEADER_TIMEOUT_SECONDS`` after it opened, or after the
    first byte of a request on a kept-alive connection (bodies have their own
    deadline: ``middleware.RequestBody``). A class uvicorn's worker processes import
    by name: the deadline is read from the settings (the environment)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = get_settings().header_timeout_seconds
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        # The server is closing: open event streams end, or they would hold it open.
        end_event_streams()
        super().shutdown()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_deadline is None:  # the next request on a kept-alive connection
            self._arm_header_deadline()

    def on_headers_complete(self) -> None:
        self._disarm_header_deadline()
        super().on_headers_complete()

    def _arm_header_deadline(self) -> None:
        self._header_deadline = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_late(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()
