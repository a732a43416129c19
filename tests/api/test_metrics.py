"""``api.metrics``: the service's metrics through ``prometheus_client``."""

from collections import Counter

import numpy as np
import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from service.api.metrics import EXPANSION_BUCKETS, Metrics
from service.store import CacheStats
from service.store.writes import WriteHealth
from tests.support import metric


@pytest.mark.parametrize("chunk", [1, 3, 7, 8, 1000])
def test_expansions_count_as_the_library_observing_them_one_by_one(chunk: int) -> None:
    """Expansions are written to the histogram's buckets directly, in bulk: they must
    land where the library's own ``observe`` puts them, bucket edges included."""
    values = [0, 1, 10, 11, 99, 100, 5_000, 10**9, 3, *np.random.default_rng(1).integers(
        0, 10**7, 200).tolist()]  # fmt: skip
    registry = CollectorRegistry()
    reference = Histogram("gridpath_expansions", "Nodes expanded per path query.",
                          buckets=EXPANSION_BUCKETS, registry=registry)  # fmt: skip
    for value in values:
        reference.observe(value)
    metrics = Metrics()
    for first in range(0, len(values), chunk):
        metrics.searches({}, values[first : first + chunk])
    expected, text = generate_latest(registry).decode(), metrics.render().decode()
    assert len(buckets(text)) == len(EXPANSION_BUCKETS) + 1
    assert buckets(text) == buckets(expected)
    assert metric(text, "gridpath_expansions_count") == len(values)
    assert metric(text, "gridpath_expansions_sum") == sum(values)


def buckets(text: str) -> dict[str, float]:
    """The expansions histogram's cumulative counts, by upper bound."""
    return {sample.labels["le"]: sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples
            if sample.name == "gridpath_expansions_bucket"}  # fmt: skip


def test_searches_count_statuses_and_expansions() -> None:
    metrics = Metrics()
    metrics.searches(Counter(["found", "found", "no_path"]), [4, 12, 0])
    metrics.searches(Counter(["partial"]), [100])
    text = metrics.render().decode()
    assert metric(text, "gridpath_path_queries_total", status="found") == 2
    assert metric(text, "gridpath_path_queries_total", status="no_path") == 1
    assert metric(text, "gridpath_path_queries_total", status="partial") == 1
    assert metric(text, "gridpath_expansions_bucket", le="10.0") == 2  # 0 and 4
    assert metric(text, "gridpath_expansions_bucket", le="100.0") == 4
    assert metric(text, "gridpath_expansions_count") == 4
    assert metric(text, "gridpath_expansions_sum") == 116


def test_synced_counts_add_up_as_counters_and_gauges() -> None:
    metrics = Metrics()
    writes = WriteHealth()
    metrics.sync(CacheStats(hits=3, misses=1, evictions=0, maps=1, bytes=100), 2, writes)
    metrics.sync(CacheStats(hits=5, misses=1, evictions=1, maps=0, bytes=0), 1, writes)
    text = metrics.render().decode()
    assert metric(text, "gridpath_cache_hits_total") == 5
    assert metric(text, "gridpath_cache_misses_total") == 1
    assert metric(text, "gridpath_cache_evictions_total") == 1
    assert metric(text, "gridpath_maps_loaded") == 0
    assert metric(text, "gridpath_maps_stored") == 1
    assert metric(text, "gridpath_store_writes_failing") == 0
    # A new cache (the service restarted in this process) counts on from its zero.
    metrics.sync(CacheStats(hits=2, misses=0, evictions=0, maps=0, bytes=0), 1, writes)
    assert metric(metrics.render().decode(), "gridpath_cache_hits_total") == 7
