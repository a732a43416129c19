"""``HeapTrimmer``: the heap's free memory is handed back after work, not without it."""

import sys
import threading
import time

import pytest

from service.api.heap import HeapTrimmer

PERIOD = 0.01


class Trims:
    """A stand-in for ``malloc_trim``: counts its calls."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.called = threading.Event()

    def __call__(self, pad: int) -> int:
        self.calls.append(pad)
        self.called.set()
        return 1


def test_work_is_followed_by_one_trim_within_a_period_or_two() -> None:
    trims = Trims()
    trimmer = HeapTrimmer(PERIOD, trim=trims)
    try:
        time.sleep(5 * PERIOD)
        assert trims.calls == []  # no work, no trim
        trimmer.note_work()
        assert trims.called.wait(5.0)
        time.sleep(5 * PERIOD)
        assert trims.calls == [0]  # once per stretch of work
    finally:
        trimmer.close()


def test_no_period_no_thread() -> None:
    trims = Trims()
    trimmer = HeapTrimmer(0, trim=trims)
    trimmer.note_work()
    time.sleep(5 * PERIOD)
    assert not trimmer.running
    trimmer.close()
    assert trims.calls == []
    assert not any(t.name == "gridpath-heap-trim" for t in threading.enumerate())


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc_trim: Linux")
def test_glibcs_malloc_trim_is_found_and_called() -> None:
    trimmer = HeapTrimmer(PERIOD)
    try:
        assert trimmer.running
        trimmer.note_work()
        time.sleep(5 * PERIOD)
    finally:
        trimmer.close()
