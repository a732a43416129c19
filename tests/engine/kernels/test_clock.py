"""The kernels' clock: the deadline of a clock array against ``time.monotonic_ns``."""

import time

import numpy as np
from numba import njit

from service.engine.kernels.clock import CLOCK_EVERY, next_look, past_deadline


@njit(cache=True)
def _past(clock: np.ndarray) -> bool:  # pragma: no cover (compiled)
    return bool(past_deadline(clock))


@njit(cache=True)
def _next(expanded: int, budget: int, clock: np.ndarray) -> int:  # pragma: no cover
    return int(next_look(expanded, budget, clock))


def clock(deadline: int) -> np.ndarray:
    return np.array([deadline, 0, 0], np.int64)


def test_no_deadline_is_never_past_and_never_looked_at() -> None:
    assert not _past(clock(0))
    assert _next(0, 1000, clock(0)) == 1000


def test_the_kernels_read_the_clock_time_monotonic_ns_reads() -> None:
    before = time.monotonic_ns()
    late = clock(before)
    assert _past(late)
    read = int(late[1]) * 1_000_000_000 + int(late[2])
    assert before <= read <= time.monotonic_ns()
    assert not _past(clock(time.monotonic_ns() + 60 * 1_000_000_000))


def test_a_timed_search_looks_every_clock_every_expansions_within_its_budget() -> None:
    timed = clock(time.monotonic_ns() + 1)
    assert _next(0, 1 << 40, timed) == CLOCK_EVERY
    assert _next(CLOCK_EVERY, 1 << 40, timed) == 2 * CLOCK_EVERY
    assert _next(0, 10, timed) == 10
