"""``store.priority``: background threads lower their own CPU priority, no other's."""

import os
import sys
import threading

import pytest

from service.store.priority import LOW_NICE, BackgroundPriority, lower_this_thread

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="per-thread priority is Linux's")


def in_thread(priority: BackgroundPriority) -> tuple[int, int]:
    """(nice, scheduling policy) of a new thread after it lowered itself."""
    seen: list[tuple[int, int]] = []

    def run() -> None:
        lower_this_thread(priority)
        tid = threading.get_native_id()
        seen.append((os.getpriority(os.PRIO_PROCESS, tid), os.sched_getscheduler(tid)))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return seen[0]


def test_low_is_nice_19_and_leaves_the_caller_alone() -> None:
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert in_thread("low") == (max(before, LOW_NICE), os.SCHED_OTHER)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


def test_idle_is_sched_idle() -> None:
    assert in_thread("idle")[1] == os.SCHED_IDLE


def test_normal_changes_nothing() -> None:
    nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert in_thread("normal") == (nice, os.sched_getscheduler(0))
