"""What both clients are configured with, checked once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from gridpath_client.arrays import numpy_wanted
from gridpath_client.retries import RetryPolicy
from gridpath_client.version import __version__

DEFAULT_URL = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class ClientConfig:
    """A client's settings: the HTTP client's arguments, the retry policy, the result
    form (numpy or lists)."""

    base_url: str
    headers: dict[str, str]
    timeout: httpx.Timeout
    retry: RetryPolicy
    as_numpy: bool

    @classmethod
    def make(
        cls,
        base_url: str,
        *,
        api_key: str | None,
        timeout: float | httpx.Timeout | None,
        retries: int,
        backoff: float,
        max_backoff: float,
        retry_deadline: float,
        as_numpy: bool | None,
        headers: Mapping[str, str] | None,
    ) -> ClientConfig:
        sent = {"User-Agent": f"gridpath-client/{__version__} httpx/{httpx.__version__}"}
        sent.update(headers or {})
        if api_key is not None:
            # The service checks 'Authorization: Bearer <key>' (GRIDPATH_API_KEY).
            sent["Authorization"] = f"Bearer {api_key}"
        return cls(
            base_url=base_url.rstrip("/"),
            headers=sent,
            timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout),
            retry=RetryPolicy(retries, backoff, max_backoff, retry_deadline),
            as_numpy=numpy_wanted(as_numpy),
        )
