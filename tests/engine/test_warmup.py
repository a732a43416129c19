"""``warmup``: runs every kernel once (the service calls it before reporting ready)."""

import os
import subprocess
import sys

from service.config import REPO_ROOT
from service.engine import warmup

# Every numba kernel a module of the engine calls from Python, without compiled code
# after ``warmup`` in a fresh process. ``unpack_row`` is called from Python only by
# ``ClusterTable.bounds_to``, which tests use and no request does (the searches call
# it from compiled code, which warmup covers).
_UNWARMED = """
import importlib, pkgutil
from numba.core.registry import CPUDispatcher
import service.engine
from service.engine import warmup
warmup()
for module in pkgutil.iter_modules(service.engine.__path__):
    names = vars(importlib.import_module("service.engine." + module.name))
    for kernel in names.values():
        if isinstance(kernel, CPUDispatcher) and not kernel.signatures:
            print(kernel.py_func.__name__)
"""


def test_warmup_runs_every_kernel_without_error() -> None:
    warmup()
    warmup()  # idempotent: the second run only hits compiled code


def test_warmup_compiles_the_field_kernels() -> None:
    """The field kernels were left out of warmup: the first /field request or
    shared-goal batch after a start compiled them, holding the GIL for seconds."""
    out = subprocess.run([sys.executable, "-c", _UNWARMED], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT, timeout=300)  # fmt: skip
    assert sorted(set(out.stdout.split())) == ["unpack_row"]


def test_the_warm_up_reports_its_steps_only_when_asked() -> None:
    """A service's compiling child reports each step (GRIDPATH_COMPILE_PROGRESS); a
    warm-up in a process that did not ask says nothing."""
    script = "from service.engine.warmup import warm_searches; warm_searches()"
    env = os.environ | {"PYTHONPATH": str(REPO_ROOT)}
    shown = env | {"GRIDPATH_COMPILE_PROGRESS": "1"}
    asked = subprocess.run([sys.executable, "-c", script], env=shown, capture_output=True,
                           text=True, check=True, timeout=600)  # fmt: skip
    prefix = "gridpath-compile: search kernels, step "
    lines = [line for line in asked.stderr.splitlines() if line.startswith(prefix)]
    assert lines[0] == prefix + "1 of 4: single queries and batches (JPS)"
    assert lines[-1].startswith(prefix + "4 of 4: ")
    quiet = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True, timeout=600)  # fmt: skip
    assert "gridpath-compile" not in quiet.stderr
