"""FieldCache: bounded by bytes, least recently used out, one computation per key."""

import pytest

from service.store.fields import FieldCache


def test_the_least_recently_used_field_goes_first_when_the_bound_needs_room() -> None:
    cache = FieldCache(10)
    cache.get("a", lambda: b"aaaa")
    cache.get("b", lambda: b"bbbb")
    assert cache.get("a", lambda: b"new") == (b"aaaa", True)  # a is now the most recent
    cache.get("c", lambda: b"cccc")  # 12 bytes: b goes
    assert cache.nbytes == 8
    assert cache.get("b", lambda: b"BBBB") == (b"BBBB", False)
    assert (cache.hits, cache.misses) == (1, 4)


def test_an_answer_larger_than_the_bound_is_served_but_not_kept() -> None:
    cache = FieldCache(3)
    assert cache.get("big", lambda: b"xxxx") == (b"xxxx", False)
    assert cache.nbytes == 0
    assert cache.get("big", lambda: b"yyyy") == (b"yyyy", False)


def test_a_failed_computation_is_not_cached_and_reaches_the_caller() -> None:
    cache = FieldCache(100)

    def fail() -> bytes:
        raise ValueError("no field")

    with pytest.raises(ValueError, match="no field"):
        cache.get("k", fail)
    assert cache.get("k", lambda: b"ok") == (b"ok", False)


def test_a_field_offered_while_it_is_computed_is_counted_once() -> None:
    """A deadline's field offered during another's computation of the same key was
    counted twice: the cache's byte count only grew, and it emptied itself for good."""
    cache = FieldCache(100)

    def compute() -> bytes:
        cache.offer("goal", b"x" * 40)  # a request with a deadline, done first
        return b"x" * 40

    for _ in range(5):
        cache.get("goal", compute)
    assert cache.nbytes == 40
    assert cache.peek("goal") == b"x" * 40
    cache.get("other", lambda: b"y" * 40)
    assert cache.nbytes == 80
