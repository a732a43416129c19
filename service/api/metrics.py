"""Prometheus text metrics without a client library: counters and histograms.

Exposed at ``GET /metrics``: requests and latency per route template, path
expansions, map cache hits/misses/evictions, maps loaded and stored.
"""

import bisect
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Final

from service.store import CacheStats, WriteHealth

LATENCY_BUCKETS: Final = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                          0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)  # fmt: skip
EXPANSION_BUCKETS: Final = (0, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)


class Histogram:
    """Cumulative-bucket histogram (Prometheus semantics)."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.count += 1

    def observe_all(self, values: Sequence[float]) -> None:
        """``observe`` each of ``values`` (a batch's, in one call)."""
        counts, bounds, bucket = self.counts, self.bounds, bisect.bisect_left
        for value in values:
            counts[bucket(bounds, value)] += 1
        self.total += sum(values)
        self.count += len(values)

    def lines(self, name: str, labels: str) -> list[str]:
        sep = "," if labels else ""
        out: list[str] = []
        running = 0
        for bound, count in zip(self.bounds, self.counts, strict=False):
            running += count
            out.append(f'{name}_bucket{{{labels}{sep}le="{bound:g}"}} {running}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.count}')
        out.append(f"{name}_sum{{{labels}}} {self.total:.6f}")
        out.append(f"{name}_count{{{labels}}} {self.count}")
        return out


class Metrics:
    """Process-wide request and search metrics; safe to update from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: defaultdict[tuple[str, str, int], int] = defaultdict(int)
        self._latency: dict[str, Histogram] = {}
        self._expansions = Histogram(EXPANSION_BUCKETS)
        self._queries: defaultdict[str, int] = defaultdict(int)

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            self._requests[(route, method, status)] += 1
            histogram = self._latency.get(route)
            if histogram is None:
                histogram = self._latency[route] = Histogram(LATENCY_BUCKETS)
            histogram.observe(seconds)

    def searches(self, statuses: Mapping[str, int], expanded: Sequence[int]) -> None:
        """Record path answers: how many of each status, and each one's expansions."""
        with self._lock:
            for status, count in statuses.items():
                self._queries[status] += count
            self._expansions.observe_all(expanded)

    def render(self, cache: CacheStats, maps_stored: int,
               writes: WriteHealth | None = None) -> str:  # fmt: skip
        with self._lock:
            lines = [
                "# HELP gridpath_requests_total HTTP requests by route template and status.",
                "# TYPE gridpath_requests_total counter",
            ]
            for (route, method, status), count in sorted(self._requests.items()):
                lines.append(
                    f'gridpath_requests_total{{route="{route}",method="{method}",'
                    f'status="{status}"}} {count}'
                )
            lines += [
                "# HELP gridpath_request_seconds Request latency by route template.",
                "# TYPE gridpath_request_seconds histogram",
            ]
            for route, histogram in sorted(self._latency.items()):
                lines += histogram.lines("gridpath_request_seconds", f'route="{route}"')
            lines += [
                "# HELP gridpath_path_queries_total Path answers by status.",
                "# TYPE gridpath_path_queries_total counter",
            ]
            for outcome, count in sorted(self._queries.items()):
                lines.append(f'gridpath_path_queries_total{{status="{outcome}"}} {count}')
            lines += [
                "# HELP gridpath_expansions Nodes expanded per path query.",
                "# TYPE gridpath_expansions histogram",
                *self._expansions.lines("gridpath_expansions", ""),
            ]
        lines += [
            "# HELP gridpath_cache_hits_total Map cache hits.",
            "# TYPE gridpath_cache_hits_total counter",
            f"gridpath_cache_hits_total {cache.hits}",
            "# HELP gridpath_cache_misses_total Map cache misses (loads from disk).",
            "# TYPE gridpath_cache_misses_total counter",
            f"gridpath_cache_misses_total {cache.misses}",
            "# HELP gridpath_cache_evictions_total Maps evicted from the cache.",
            "# TYPE gridpath_cache_evictions_total counter",
            f"gridpath_cache_evictions_total {cache.evictions}",
            "# HELP gridpath_maps_loaded Maps held in memory.",
            "# TYPE gridpath_maps_loaded gauge",
            f"gridpath_maps_loaded {cache.maps}",
            "# HELP gridpath_cache_bytes Bytes held by cached maps.",
            "# TYPE gridpath_cache_bytes gauge",
            f"gridpath_cache_bytes {cache.bytes}",
            "# HELP gridpath_maps_stored Maps in the store.",
            "# TYPE gridpath_maps_stored gauge",
            f"gridpath_maps_stored {maps_stored}",
        ]
        if writes is not None:
            lines += _write_lines(writes)
        return "\n".join(lines) + "\n"


def _write_lines(writes: WriteHealth) -> list[str]:
    """Whether the store refuses writes now, and how many it refused, per cause."""
    lines = [
        "# HELP gridpath_store_writes_failing 1 while the store refuses writes (a full or "
        "read-only disk, a Redis out of memory), else 0.",
        "# TYPE gridpath_store_writes_failing gauge",
        f"gridpath_store_writes_failing {int(writes.problem() is not None)}",
        "# HELP gridpath_store_write_refusals_total Writes the store refused, by cause.",
        "# TYPE gridpath_store_write_refusals_total counter",
    ]
    for cause, count in sorted(writes.refused.items()):
        lines.append(f'gridpath_store_write_refusals_total{{cause="{cause}"}} {count}')
    return lines
