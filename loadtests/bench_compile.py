"""The cold start: compiling every kernel from an empty numba cache, and a fresh
service's first ready answer.

    python -m loadtests.bench_compile [--against DIR] [--repeat 3] [--markdown]

Two measures, each in a fresh process with an empty ``NUMBA_CACHE_DIR``:

- ``compile``: ``python -m service.engine``, which compiles every kernel into the
  cache (in parallel processes where there are cores for them) and loads them;
- ``ready``: ``python -m service`` on a free loopback port with an empty data dir,
  until ``/readyz`` answers 200 (what ``make run`` waits for on a fresh clone).

``--against DIR``: another checkout of the service (a ``git worktree`` of an
earlier commit) measured the same way, the two alternated round by round, so that
a busy machine weighs on both alike. A checkout without ``service/engine/__main__.py``
compiles by ``python -c 'from service.engine import warmup; warmup()'``.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from loadtests.report import Table, cpu_model, nproc, positive, report
from loadtests.server import HOST, free_port, http
from service.config import REPO_ROOT

#: A cold service answers /readyz within this, on any machine the tests run on.
READY_TIMEOUT_S: Final = 600.0


def compile_argv(checkout: Path) -> list[str]:
    """The command that compiles every kernel of ``checkout`` into the cache."""
    if (checkout / "service" / "engine" / "__main__.py").exists():
        return [sys.executable, "-m", "service.engine"]
    return [sys.executable, "-c", "from service.engine import warmup; warmup()"]


def cold_env(cache_dir: str) -> dict[str, str]:
    """The environment of a cold run: an empty kernel cache, quiet logs."""
    return {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "GRIDPATH_LOG_LEVEL": "warning"}


def compile_seconds(checkout: Path) -> float:
    """Seconds ``compile_argv`` takes from an empty cache."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        began = time.perf_counter()
        subprocess.run(compile_argv(checkout), cwd=checkout, env=cold_env(cache), check=True)
        return time.perf_counter() - began


def ready_seconds(checkout: Path) -> float:
    """Seconds from starting ``python -m service`` (empty cache and data dir) to the
    first 200 from ``/readyz``."""
    with tempfile.TemporaryDirectory(prefix="gridpath-cold-") as work:
        port = free_port()
        argv = [sys.executable, "-m", "service", "--host", HOST, "--port", str(port),
                "--data-dir", str(Path(work) / "data")]  # fmt: skip
        cache = str(Path(work) / "numba")
        began = time.perf_counter()
        quiet = subprocess.DEVNULL
        process = subprocess.Popen(argv, cwd=checkout, env=cold_env(cache), stdout=quiet,
                                   stderr=quiet)  # fmt: skip
        try:
            return _await_ready(process, f"http://{HOST}:{port}/readyz", began)
        finally:
            process.terminate()
            process.wait(timeout=60)


def _await_ready(process: subprocess.Popen[bytes], url: str, began: float) -> float:
    while time.perf_counter() - began < READY_TIMEOUT_S:
        if process.poll() is not None:
            raise RuntimeError(f"the service exited with {process.returncode} before ready")
        try:
            status, _ = http("GET", url)
        except OSError:
            status = 0
        if status == 200:
            return time.perf_counter() - began
        time.sleep(0.1)
    raise RuntimeError(f"the service was not ready after {READY_TIMEOUT_S:.0f} s")


def measure(checkouts: Sequence[tuple[str, Path]], repeat: int
            ) -> dict[tuple[str, str], list[float]]:  # fmt: skip
    """Seconds per (checkout name, measure), the checkouts alternated each round."""
    seconds: dict[tuple[str, str], list[float]] = {}
    for round_ in range(repeat):
        for name, checkout in checkouts:
            for measure_name, run in (("compile", compile_seconds), ("ready", ready_seconds)):
                took = run(checkout)
                seconds.setdefault((name, measure_name), []).append(took)
                print(f"round {round_ + 1}: {name} {measure_name} {took:.1f} s", flush=True)
    return seconds


def table(seconds: dict[tuple[str, str], list[float]], names: Sequence[str]) -> Table:
    """One row per measure: each checkout's median and runs, and the ratio."""
    rows = []
    for measure_name in ("compile", "ready"):
        medians = [statistics.median(seconds[name, measure_name]) for name in names]
        runs = [" / ".join(f"{s:.1f}" for s in seconds[name, measure_name]) for name in names]
        ratio = [f"{medians[0] / medians[1]:.2f}x"] if len(names) == 2 else []
        rows.append((measure_name, *(f"{m:.1f}" for m in medians), *runs, *ratio))
    columns = ("measure", *(f"{n} median s" for n in names), *(f"{n} runs s" for n in names),
               *(["this/against"] if len(names) == 2 else []))  # fmt: skip
    title = f"cold start from an empty numba cache ({cpu_model()}, {nproc()} CPUs)"
    return Table(title, columns, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout, alternated with this")
    parser.add_argument("--repeat", type=positive, default=3, help="rounds (default 3)")
    parser.add_argument("--markdown", action="store_true", help="also print markdown")
    args = parser.parse_args(argv)
    checkouts = [("this", REPO_ROOT)]
    if args.against is not None:
        checkouts.append(("against", args.against.resolve()))
    seconds = measure(checkouts, args.repeat)
    report([table(seconds, [name for name, _ in checkouts])], None, args.markdown)


if __name__ == "__main__":
    main()
