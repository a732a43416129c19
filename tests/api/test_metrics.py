"""``api.metrics``: counters and histograms in Prometheus text."""

from collections import Counter

from service.api.metrics import EXPANSION_BUCKETS, Histogram, Metrics
from service.store import CacheStats


def test_observing_all_at_once_counts_as_one_by_one() -> None:
    values = [0, 1, 10, 11, 99, 100, 5_000, 10**9, 3]
    one_by_one, at_once = Histogram(EXPANSION_BUCKETS), Histogram(EXPANSION_BUCKETS)
    for value in values:
        one_by_one.observe(value)
    at_once.observe_all(values)
    assert at_once.lines("h", "") == one_by_one.lines("h", "")
    assert (at_once.count, at_once.total) == (len(values), sum(values))


def test_searches_count_statuses_and_expansions() -> None:
    metrics = Metrics()
    metrics.searches(Counter(["found", "found", "no_path"]), [4, 12, 0])
    metrics.searches(Counter(["partial"]), [100])
    text = metrics.render(CacheStats(0, 0, 0, 0, 0), 0)
    assert 'gridpath_path_queries_total{status="found"} 2' in text
    assert 'gridpath_path_queries_total{status="no_path"} 1' in text
    assert 'gridpath_path_queries_total{status="partial"} 1' in text
    assert 'gridpath_expansions_bucket{le="10"} 2' in text  # 0 and 4
    assert 'gridpath_expansions_bucket{le="100"} 4' in text
    assert "gridpath_expansions_count{} 4" in text
    assert "gridpath_expansions_sum{} 116.000000" in text
