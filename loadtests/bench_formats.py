"""What each answer format costs a batch: building its answers and writing their JSON.

    python -m loadtests.bench_formats [--queries 100] [--repeat 20]

In one process on den520d (``GRIDPATH_BENCH_DATA``): ``--queries`` scenario rows from
the middle of its ``.map.scen`` file as one ``/paths`` batch of bare starts and
goals, answered as the route answers it (``pathing.run_cells``, the search
included) and written with orjson as the route writes it; per format, the median of
``--repeat`` rounds of each, milliseconds, and the body's bytes. Run it from two
checkouts (``PYTHONPATH=DIR``) to compare them.
"""

import argparse
import statistics
import time

import orjson

from loadtests.report import Table, cpu_model, nproc, positive, report
from service.api.pathing import cell_batch, run_cells
from service.api.schemas import PathOptions
from service.config import get_settings
from service.engine import GridMap, warmup
from service.engine.movingai import parse_scenarios

FORMATS = ("waypoints", "cells", "directions", "smoothed")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=positive, default=100)
    parser.add_argument("--repeat", type=positive, default=20)
    args = parser.parse_args(argv)
    settings = get_settings()
    data = settings.bench_data / "dao"
    warmup()
    grid = GridMap.from_movingai((data / "den520d.map").read_text(encoding="ascii"))
    rows = parse_scenarios((data / "den520d.map.scen").read_text(encoding="ascii"))
    middle = rows[len(rows) // 2 : len(rows) // 2 + args.queries]
    items = [{"start": list(s.start), "goal": list(s.goal)} for s in middle]
    table = []
    for path_format in FORMATS:
        batch = cell_batch(items, PathOptions(format=path_format), settings)  # type: ignore[arg-type]
        assert batch is not None
        run_cells(grid, batch)  # the plan made, the buffers grown
        built, written = [], []
        body = b""
        for _ in range(args.repeat):
            began = time.perf_counter()
            answers = run_cells(grid, batch)
            middle_ns = time.perf_counter()
            body = orjson.dumps({"results": answers}, option=orjson.OPT_SERIALIZE_NUMPY)
            written.append(time.perf_counter() - middle_ns)
            built.append(middle_ns - began)
        build, write = statistics.median(built) * 1000, statistics.median(written) * 1000
        table.append((path_format, f"{build:.2f}", f"{write:.2f}", f"{build + write:.2f}",
                      f"{len(body):,}"))  # fmt: skip
    title = (f"a batch of {len(items)} den520d paths in each format ({cpu_model()}, "
             f"{nproc()} CPUs)")  # fmt: skip
    report([Table(title, ("format", "answers ms", "JSON ms", "total ms", "bytes"), table)],
           None, True)  # fmt: skip


if __name__ == "__main__":
    main()
