"""How late a deadline's answer arrives: ``deadline_ms`` on long searches over HTTP.

Usage::

    python -m loadtests.bench_deadlines
    python -m loadtests.bench_deadlines --requests 40 --markdown

Starts the service (``python -m service``, one search thread, inline answers off so
that every query goes to it) on a free loopback port, uploads a corridor maze of
``--side`` cells a side (one path that walks every open row: a search to its far end
expands about ``side**2 / 2`` cells, far more than any deadline here lets it), and asks,
one request at a time, for that far end: ``POST /path`` (A*, waypoints) and
``POST /paths`` (``--batch`` of those queries; the path cell limit raised to hold
them) with each ``deadline_ms`` of
``--deadlines``, after one request without a deadline (the plan made, the search
thread's buffers touched). Each row gives the wall time from sending the request to
reading its answer, as the client sees it (p50, p99, max over ``--requests``
requests), how late that is past the deadline, and the answers' statuses; the
untimed search is the first row. Timing is reported, not asserted.
"""

import argparse
import io
import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from loadtests.report import Table, cpu_model, nproc, report
from loadtests.server import http, serve


def corridor_maze(side: int) -> np.ndarray:
    """A ``side`` x ``side`` float32 maze of one corridor (``side`` odd): even rows open,
    odd rows walled but for one gap at alternating ends."""
    costs = np.ones((side, side), np.float32)
    for y in range(1, side, 2):
        costs[y, :] = 0
        costs[y, side - 1 if (y // 2) % 2 == 0 else 0] = 1
    return costs


def timed(url: str, body: dict[str, Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    status, data = http("POST", url, json.dumps(body).encode(), "application/json")
    took = time.perf_counter() - began
    if status != 200:
        raise RuntimeError(f"POST {url} answered {status}: {data[:300]!r}")
    return took, json.loads(data)


def statuses(answers: Sequence[dict[str, Any]]) -> str:
    counts = Counter(
        a.get("status", a.get("code", "?"))
        + (f" ({a['partial_reason']})" if a.get("partial_reason") else "")
        for a in answers
    )
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))


def row(label: str, deadline: float | None, times: list[float],
        answers: list[dict[str, Any]]) -> tuple[str, ...]:  # fmt: skip
    ms = sorted(t * 1000 for t in times)
    p50, p99, most = statistics.median(ms), ms[min(len(ms) - 1, round(0.99 * len(ms)))], ms[-1]
    late = "-" if deadline is None else f"{p50 - deadline:.1f} / {p99 - deadline:.1f}"
    return (label, "-" if deadline is None else f"{deadline:g}", f"{p50:.1f}", f"{p99:.1f}",
            f"{most:.1f}", late, statuses(answers))  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--side", type=int, default=1401, help="maze side (odd)")
    parser.add_argument("--deadlines", default="1,2,5,10,20", help="ms, comma-separated")
    parser.add_argument("--requests", type=int, default=20, help="per row")
    parser.add_argument("--batch", type=int, default=16, help="queries of a batch")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    deadlines = [float(d) for d in args.deadlines.split(",")]
    buffer = io.BytesIO()
    np.save(buffer, corridor_maze(args.side))
    far = [args.side - 1 if ((args.side + 1) // 2) % 2 else 0, args.side - 1]
    env = {"GRIDPATH_SEARCH_THREADS": "1", "GRIDPATH_INLINE_EXPANSIONS": "0",
           "GRIDPATH_ANSWER_CACHE_BYTES": "0",
           "GRIDPATH_MAX_PATH_CELLS": str(args.batch * args.side**2)}  # fmt: skip
    with tempfile.TemporaryDirectory() as workdir, serve(Path(workdir), env=env) as server:
        status, data = http("POST", f"{server.base}/v1/maps", buffer.getvalue(),
                            "application/x-npy")  # fmt: skip
        if status != 201:
            raise RuntimeError(f"upload answered {status}: {data[:300]!r}")
        map_id = json.loads(data)["id"]
        one = f"{server.base}/v1/maps/{map_id}/path"
        many = f"{server.base}/v1/maps/{map_id}/paths"
        query = {"start": [0, 0], "goal": far, "algorithm": "astar"}
        timed(one, query)  # the plan made, the thread's buffers touched
        rows = []
        for label, url, body, pick in (
            ("/path", one, query, lambda answer: [answer]),
            ("/paths", many, {"queries": [query] * args.batch},
             lambda answer: answer["results"]),
        ):  # fmt: skip
            for deadline in [None, *deadlines]:
                times: list[float] = []
                answers: list[dict[str, Any]] = []
                count = 3 if deadline is None else args.requests  # untimed: slow
                for _ in range(count):
                    sent = body if deadline is None else body | {"deadline_ms": deadline}
                    took, answer = timed(url, sent)
                    times.append(took)
                    answers += pick(answer)
                rows.append(row(label, deadline, times, answers))
    table = Table(
        title=f"answer time of deadline_ms over HTTP: {args.side}x{args.side} corridor maze, "
        f"A* to its far end, {args.requests} requests a row",
        columns=(
            "route",
            "deadline ms",
            "p50 ms",
            "p99 ms",
            "max ms",
            "late p50 / p99 ms",
            "answers",
        ),
        rows=rows,
        note=f"{datetime.now(UTC):%Y-%m-%d}, {cpu_model()}, {nproc()} CPUs; one search "
        f"thread; /paths: {args.batch} such queries a request; late: p50 or p99 less the "
        "deadline",
    )
    report([table], None, args.markdown)


if __name__ == "__main__":
    main()
