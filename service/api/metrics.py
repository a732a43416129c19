"""Prometheus metrics through ``prometheus_client``, summed across worker processes.

Exposed at ``GET /metrics``: requests and latency per route template, path answers by
status and their expansions, map cache hits/misses/evictions, maps loaded and stored,
and the store's write health.

Under ``GRIDPATH_WORKERS`` the supervisor points ``PROMETHEUS_MULTIPROC_DIR`` at a
fresh folder before the workers start (``multiprocess_dir``): each worker writes its
values there, and a scrape through any worker reads the totals of all, the counters
of workers that died included (a counter never goes back). Values the store and the
cache count themselves are copied into the metrics by :meth:`Metrics.sync`, on every
scrape and every second in each worker (``Runtime``), as increments.
"""

import bisect
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import numpy as np
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)

from service.store import CacheStats, WriteHealth

LATENCY_BUCKETS: Final = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                          0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)  # fmt: skip
EXPANSION_BUCKETS: Final = (0, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)
#: The environment variable ``prometheus_client`` reads its multiprocess folder from.
MULTIPROC_DIR: Final = "PROMETHEUS_MULTIPROC_DIR"
#: The content type of ``/metrics``: the text format every Prometheus reads.
CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"

# ``*_created`` series double every counter's lines and say nothing a scrape needs.
disable_created_metrics()  # type: ignore[no-untyped-call]


def multiprocess_dir() -> Path | None:
    """The folder the workers' metrics meet in, when they run under a supervisor."""
    folder = os.environ.get(MULTIPROC_DIR)
    return Path(folder) if folder else None


def forget_dead_workers(folder: Path) -> None:
    """Drop the live gauges of worker processes that are gone (a worker killed with
    SIGKILL never says so); their counters stay, as Prometheus expects."""
    pids = {int(name.stem.rsplit("_", 1)[-1]) for name in folder.glob("gauge_live*_*.db")
            if name.stem.rsplit("_", 1)[-1].isdigit()}  # fmt: skip
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid, str(folder))  # type: ignore[no-untyped-call]
        except PermissionError:  # alive, another user's
            pass


class Metrics:
    """The service's metrics, in a registry of their own (several apps may share a
    process, in tests); safe to update from any thread."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._folder = multiprocess_dir()
        own = self.registry
        self._requests = Counter("gridpath_requests_total",
                                 "HTTP requests by route template and status.",
                                 ["route", "method", "status"], registry=own)  # fmt: skip
        self._latency = Histogram("gridpath_request_seconds", "Request latency by route template.",
                                  ["route"], buckets=LATENCY_BUCKETS, registry=own)  # fmt: skip
        self._queries = Counter("gridpath_path_queries_total", "Path answers by status.",
                                ["status"], registry=own)  # fmt: skip
        self._expansions = Histogram("gridpath_expansions", "Nodes expanded per path query.",
                                     buckets=EXPANSION_BUCKETS, registry=own)  # fmt: skip
        self._cache = {
            "hits": Counter("gridpath_cache_hits_total", "Map cache hits.", registry=own),
            "misses": Counter(
                "gridpath_cache_misses_total", "Map cache misses (loads from disk).", registry=own
            ),
            "evictions": Counter(
                "gridpath_cache_evictions_total", "Maps evicted from the cache.", registry=own
            ),
        }
        self._answers = {
            outcome: Counter(f"gridpath_answer_cache_{outcome}_total", text, registry=own)
            for outcome, text in (
                ("hits", "/path queries answered from the answer cache."),
                ("misses", "/path queries the answer cache could have kept but did not hold."),
                ("coalesced", "/path queries answered by an identical query's search in flight."),
            )
        }
        self._maps_loaded = Gauge("gridpath_maps_loaded", "Maps held in memory.",
                                  registry=own, multiprocess_mode="livesum")  # fmt: skip
        self._cache_bytes = Gauge("gridpath_cache_bytes", "Bytes held by cached maps.",
                                  registry=own, multiprocess_mode="livesum")  # fmt: skip
        self._maps_stored = Gauge("gridpath_maps_stored", "Maps in the store.",
                                  registry=own, multiprocess_mode="livemostrecent")  # fmt: skip
        self._writes_failing = Gauge(
            "gridpath_store_writes_failing",
            "1 while the store refuses writes (a full or read-only disk, a Redis out of "
            "memory), else 0.", registry=own, multiprocess_mode="livemax")  # fmt: skip
        self._refusals = Counter("gridpath_store_write_refusals_total",
                                 "Writes the store refused, by cause.", ["cause"],
                                 registry=own)  # fmt: skip
        self._lock = threading.Lock()
        self._synced: dict[str, int] = {}  # counts copied so far, by name
        self._children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        self._statuses: dict[str, Counter] = {}

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one request and its latency."""
        key = (route, method, status)
        children = self._children.get(key)
        if children is None:  # (``labels`` takes a lock and a lookup: once per key)
            children = (self._requests.labels(route, method, str(status)),
                        self._latency.labels(route))  # fmt: skip
            self._children[key] = children
        children[0].inc()
        _observe_all(children[1], (seconds,), LATENCY_BUCKETS)

    def searches(self, statuses: Mapping[str, int], expanded: Sequence[int]) -> None:
        """Record path answers: how many of each status, and each one's expansions."""
        for status, count in statuses.items():
            counter = self._statuses.get(status)
            if counter is None:
                counter = self._statuses[status] = self._queries.labels(status)
            counter.inc(count)
        _observe_all(self._expansions, expanded, EXPANSION_BUCKETS)

    def answers(self, outcome: str) -> None:
        """Count one /path query by what the answer cache did: ``hits``, ``misses``
        or ``coalesced``."""
        self._answers[outcome].inc()

    def sync(self, cache: CacheStats, maps_stored: int | None,
             writes: WriteHealth | None) -> None:  # fmt: skip
        """Copy what the cache and the store count into the metrics: the counters by
        their increase since the last sync, the gauges as they are."""
        with self._lock:
            for name, counter in self._cache.items():
                self._advance(name, counter, getattr(cache, name))
            self._maps_loaded.set(cache.maps)
            self._cache_bytes.set(cache.bytes)
            if maps_stored is not None:
                self._maps_stored.set(maps_stored)
            if writes is not None:
                self._writes_failing.set(int(writes.problem() is not None))
                for cause, count in writes.refused.items():
                    self._advance(f"refused:{cause}", self._refusals.labels(cause), count)

    def _advance(self, name: str, counter: Counter, total: int) -> None:
        before = self._synced.get(name, 0)
        if total > before:
            counter.inc(total - before)
        elif total < before:  # a new cache or store (a restart in-process): from zero
            counter.inc(total)
        self._synced[name] = total

    def render(self) -> bytes:
        """The text exposition: this process's metrics, or under a supervisor every
        worker's, summed."""
        if self._folder is None:
            return generate_latest(self.registry)
        forget_dead_workers(self._folder)
        gathered = CollectorRegistry()
        multiprocess.MultiProcessCollector(gathered, path=str(self._folder))  # type: ignore[no-untyped-call]
        return generate_latest(gathered)


def _observe_all(histogram: Histogram, values: Sequence[float], bounds: Sequence[float]) -> None:
    """``histogram.observe`` each of ``values`` (a batch's), as one increment per
    bucket: a thousand-query batch would otherwise write a thousand times (each a
    locked write to a shared file under workers), and ``observe`` scans the bounds
    one by one. Uses the histogram's bucket and sum values (``prometheus_client`` has
    no bulk observe); ``test_metrics`` holds the result equal to observing one by one."""
    if len(values) == 0:
        return
    if len(values) < 8:
        buckets = histogram._buckets
        for value in values:
            buckets[bisect.bisect_left(bounds, value)].inc(1)
        histogram._sum.inc(float(sum(values)))
        return
    array = np.asarray(values, np.float64)
    counts = np.bincount(np.searchsorted(np.asarray(bounds, np.float64), array, side="left"),
                         minlength=len(bounds) + 1)  # fmt: skip
    buckets = histogram._buckets  # (see above)
    for bucket, count in zip(buckets, counts.tolist(), strict=True):
        if count:
            bucket.inc(count)
    histogram._sum.inc(float(array.sum()))
