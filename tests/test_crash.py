"""Crash consistency of the real server: SIGKILL under load, restart, check the store.

The store promises (docs/operations.md, Storage) that a map answered 201 survives a crash whole,
that a delete answered 204 stays done, that a crash leaves nothing half-made behind
(unfinished ``.incoming-*``/``.deleting-*`` folders and ``.*.tmp`` files are removed
at open), and that a table file is never trusted unless it passes its checks. This
test holds the real process to that: ``python -m service`` on a loopback port, a few
client threads uploading maps (Moving AI text, JSON costs, ``.npy``; uniform ones,
whose tables build in the background, and weighted ones; 20x20 to 300x300), deleting
acknowledged maps and asking for paths, then ``SIGKILL`` at a seeded random moment.

Every outcome is booked: an upload answered 201 (its id and the exact costs sent),
a delete answered 204, and the requests whose answer never came (in flight at the
kill: they may or may not have happened). After a restart on the same data dir:

1. every acknowledged, undeleted map is listed, its ``grid.npy`` holds exactly the
   costs sent, its metadata matches them and is healthy, and it answers paths;
2. every acknowledged delete stays deleted (404 ``MapNotFound``, no folder);
3. every listed map is acknowledged or an in-flight upload (its grid is one of the
   grids in flight then), and answers paths; every map folder on disk is listed;
4. no ``.incoming-*``, ``.deleting-*`` or ``.*.tmp`` is left in ``maps/``;
5. every map's cluster and landmark tables settle (``ready``, or ``failed`` with a
   reason) within a bound, and a ready table's file passes its checks. Between a
   kill and the restart one table file is also damaged on purpose (truncated, or a
   byte flipped inside it), as a torn write would leave it: it must be rebuilt, not
   trusted.

Several kill/restart cycles run on one data dir, so state accumulates. A SIGKILL
loses the process, not the page cache: this checks atomicity and ordering as seen
after a process crash, not whether the fsyncs would survive a power cut.
"""

import contextlib
import io
import itertools
import random
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx
import numpy as np
import numpy.typing as npt
import orjson

from service.store.grids import grid_from
from service.store.tables import TableFileError, decode_landmarks, decode_tables
from tests.server import start_server, wait_until_ready
from tests.support import wait_until

Costs = npt.NDArray[np.float32]

#: One seed per kill/restart cycle (the cycles share the data dir).
SEEDS: Final = (1101, 2203, 3307, 4409, 5501)
#: Client threads driving the workload.
WORKERS: Final = 3
#: Readiness of the first start (it may compile the numba kernels) and of restarts.
FIRST_START_SECONDS: Final = 120.0
RESTART_SECONDS: Final = 60.0
#: Wall time of the kill/restart cycles, counted from the first readiness; the cycles
#: that do not fit are skipped (the final restart and its checks always run).
BUDGET_SECONDS: Final = 65.0
#: What one more cycle needs at most, roughly (workload, kill, restart, checks).
CYCLE_RESERVE_SECONDS: Final = 12.0
#: When the kill comes, after the workload starts.
KILL_AFTER_SECONDS: Final = (0.2, 2.5)
#: How long every map's tables may take to settle after a restart.
TABLE_SETTLE_SECONDS: Final = 40.0
REQUEST_TIMEOUT: Final = httpx.Timeout(20.0, connect=5.0)
#: Past this many live maps the workload deletes more than it uploads.
MAX_LIVE_MAPS: Final = 16
MAX_EXPANSIONS: Final = 200_000
#: Maps uploaded (and their tables settled) before the first workload.
FIRST_MAPS: Final = 3
HEURISTICS: Final = ("octile", "cluster", "landmarks")
#: Outcomes of a path query that are answers (200), not errors.
ANSWERS: Final = frozenset({"found", "no_path", "partial"})
TABLE_FILES: Final = {"clusters": "clusters.npz", "landmarks": "landmarks.npz"}


# -- maps ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upload:
    """One upload's body, and the costs the server must store for it (float32)."""

    costs: Costs
    content: bytes
    content_type: str
    name: str


def random_upload(rng: random.Random, name: str) -> Upload:
    """A seeded map: small (20-60) or medium (100-300), in one of five encodings."""
    side = (20, 60) if rng.random() < 0.6 else (100, 300)
    height, width = rng.randint(*side), rng.randint(*side)
    gen = np.random.default_rng(rng.getrandbits(64))
    blocked = gen.random((height, width)) < rng.uniform(0.05, 0.3)
    blocked[0, 0] = blocked[-1, -1] = False  # at least two walkable cells
    walkable = (~blocked).astype(np.float32)
    kind = rng.choice(("text", "json", "json-weighted", "npy", "npy-weighted"))
    if kind == "text":
        rows = ["".join("." if open_ else "@" for open_ in row) for row in (~blocked).tolist()]
        header = f"type octile\nheight {height}\nwidth {width}\nmap\n"
        return Upload(walkable, (header + "\n".join(rows) + "\n").encode(), "text/plain", name)
    if kind.startswith("json"):
        costs = walkable
        if kind == "json-weighted":
            costs = walkable * gen.integers(1, 10, size=walkable.shape).astype(np.float32)
        body = {"name": name, "costs": costs.astype(np.int64).tolist()}
        return Upload(costs, orjson.dumps(body), "application/json", name)
    costs = walkable
    if kind == "npy-weighted":
        costs = walkable * gen.uniform(0.5, 3.0, size=walkable.shape).astype(np.float32)
    buffer = io.BytesIO()
    np.save(buffer, costs, allow_pickle=False)
    return Upload(costs, buffer.getvalue(), "application/x-npy", name)


def walkable_pair(costs: Costs, rng: random.Random) -> tuple[list[int], list[int]]:
    """Two walkable cells as ``[x, y]``."""
    ys, xs = np.nonzero(costs > 0)
    first, second = rng.randrange(len(ys)), rng.randrange(len(ys))
    return [int(xs[first]), int(ys[first])], [int(xs[second]), int(ys[second])]


def path_query(costs: Costs, rng: random.Random) -> dict[str, Any]:
    start, goal = walkable_pair(costs, rng)
    return {"start": start, "goal": goal, "heuristic": rng.choice(HEURISTICS),
            "max_expansions": MAX_EXPANSIONS}  # fmt: skip


def stored_costs(data_dir: Path, map_id: str) -> Costs:
    """The costs the store holds for a listed map, read from its folder."""
    path = data_dir / "maps" / map_id / "grid.npy"
    try:  # (a map with terrain classes holds its base costs and classes there)
        costs: Costs = grid_from(path.read_bytes(), islands=None, revision=0).costs
    except (OSError, ValueError, EOFError, KeyError) as exc:
        raise AssertionError(f"listed map {map_id} has no readable grid: {exc!r}") from exc
    return costs


def same_costs(stored: Costs, sent: Costs) -> bool:
    return stored.dtype == np.float32 and np.array_equal(stored, sent)


# -- the server ------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    process: "subprocess.Popen[bytes]"
    base_url: str
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]


@contextlib.contextmanager
def serve(data_dir: Path, log: Path, ready_seconds: float) -> Iterator[Server]:
    """``python -m service`` on a free loopback port, ready; killed (and reaped) after."""
    process, port, _ = start_server(data_dir, log=log)
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        with httpx.Client(base_url=server.base_url, timeout=2.0) as client:
            wait_until_ready(client, process, log, ready_seconds)
        yield server
    finally:
        process.kill()
        process.wait(timeout=30)


# -- the ledger of outcomes ------------------------------------------------------------


@dataclass
class Ledger:
    """What the clients were told, and what they never heard back about."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Maps acknowledged (201) and not deleted, with the costs sent.
    live: dict[str, Costs] = field(default_factory=dict)
    #: Maps whose delete was acknowledged (204), or found gone after an unknown delete.
    deleted: set[str] = field(default_factory=set)
    #: Uploads without an answer yet (after the kill: unknown), by ticket.
    uploads_in_flight: dict[int, Costs] = field(default_factory=dict)
    #: Deletes without an answer yet (after the kill: unknown), with the map's costs.
    deletes_in_flight: dict[str, Costs] = field(default_factory=dict)
    #: Answers the workload did not expect (a bug unless the server was dying).
    surprises: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    #: A map the workload leaves alone this cycle (its tables get damaged after the kill).
    kept: str | None = None
    _tickets: Iterator[int] = field(default_factory=itertools.count)

    def upload_sent(self, costs: Costs) -> int:
        with self.lock:
            ticket = next(self._tickets)
            self.uploads_in_flight[ticket] = costs
            return ticket

    def upload_answered(self, ticket: int, map_id: str | None) -> None:
        with self.lock:
            costs = self.uploads_in_flight.pop(ticket)
            if map_id is not None:
                self.live[map_id] = costs
                self.counts["uploads acknowledged"] += 1

    def take_for_delete(self, rng: random.Random) -> str | None:
        """Move a random live map to the in-flight deletes (one delete per map)."""
        with self.lock:
            deletable = sorted(self.live.keys() - {self.kept})
            if not deletable:
                return None
            map_id = rng.choice(deletable)
            self.deletes_in_flight[map_id] = self.live.pop(map_id)
            return map_id

    def delete_answered(self, map_id: str, *, done: bool) -> None:
        with self.lock:
            costs = self.deletes_in_flight.pop(map_id)
            if done:
                self.deleted.add(map_id)
                self.counts["deletes acknowledged"] += 1
            else:
                self.live[map_id] = costs

    def pick_live(self, rng: random.Random) -> tuple[str, Costs] | None:
        with self.lock:
            if not self.live:
                return None
            map_id = rng.choice(sorted(self.live))
            return map_id, self.live[map_id]

    def count(self, what: str) -> None:
        with self.lock:
            self.counts[what] += 1

    def is_live(self, map_id: str) -> bool:
        with self.lock:
            return map_id in self.live

    def surprise(self, what: str, response: httpx.Response) -> None:
        with self.lock:
            self.surprises.append(f"{what}: {response.status_code} {response.text[:300]}")


# -- the workload ----------------------------------------------------------------------


def upload_one(client: httpx.Client, ledger: Ledger, rng: random.Random, name: str) -> None:
    upload = random_upload(rng, name)
    params = {} if upload.content_type == "application/json" else {"name": name}
    ticket = ledger.upload_sent(upload.costs)
    response = client.post("/v1/maps", content=upload.content, params=params,
                           headers={"content-type": upload.content_type})  # fmt: skip
    if response.status_code != 201:
        ledger.upload_answered(ticket, None)
        ledger.surprise(f"upload {name}", response)
        return
    meta = response.json()
    height, width = upload.costs.shape
    if (meta["width"], meta["height"]) != (width, height):
        ledger.surprise(f"upload {name} answered {meta['width']}x{meta['height']}", response)
    ledger.upload_answered(ticket, meta["id"])


def delete_one(client: httpx.Client, ledger: Ledger, rng: random.Random) -> None:
    map_id = ledger.take_for_delete(rng)
    if map_id is None:
        return
    response = client.delete(f"/v1/maps/{map_id}")
    ledger.delete_answered(map_id, done=response.status_code == 204)
    if response.status_code != 204:
        ledger.surprise(f"delete {map_id}", response)


def query_one(client: httpx.Client, ledger: Ledger, rng: random.Random, *, batch: bool) -> None:
    picked = ledger.pick_live(rng)
    if picked is None:
        return
    map_id, costs = picked
    if batch:
        queries = [path_query(costs, rng) for _ in range(rng.randint(2, 12))]
        response = client.post(f"/v1/maps/{map_id}/paths", json={"queries": queries})
    else:
        response = client.post(f"/v1/maps/{map_id}/path", json=path_query(costs, rng))
    ledger.count("path requests")
    if response.status_code == 404 and not ledger.is_live(map_id):
        return  # deleted by another client meanwhile
    results = response.json().get("results", [response.json()])
    if response.status_code != 200 or any(r.get("status") not in ANSWERS for r in results):
        ledger.surprise(f"paths on {map_id}", response)


def drive(base_url: str, ledger: Ledger, rng: random.Random, stop: threading.Event,
          worker: int) -> None:  # fmt: skip
    """One client: uploads, deletes and queries until the server is gone."""
    with httpx.Client(base_url=base_url, timeout=REQUEST_TIMEOUT) as client:
        for step in range(10_000):
            if stop.is_set():
                return
            crowded = len(ledger.live) > MAX_LIVE_MAPS
            weights = (1, 4, 3, 1) if crowded else (4, 1, 3, 1)
            action = rng.choices(("upload", "delete", "path", "paths"), weights)[0]
            try:
                if action == "upload":
                    upload_one(client, ledger, rng, f"crash-w{worker}-{step}")
                elif action == "delete":
                    delete_one(client, ledger, rng)
                else:
                    query_one(client, ledger, rng, batch=action == "paths")
            except httpx.TransportError:
                return  # the server was killed: what was in flight stays unknown


def run_until_killed(server: Server, ledger: Ledger, rng: random.Random, kill_after: float
                     ) -> None:  # fmt: skip
    """Drive the server from ``WORKERS`` threads; SIGKILL it ``kill_after`` s later."""
    stop = threading.Event()
    with ThreadPoolExecutor(WORKERS, thread_name_prefix="crash-client") as pool:
        runs = [pool.submit(drive, server.base_url, ledger, random.Random(rng.getrandbits(64)),
                            stop, worker) for worker in range(WORKERS)]  # fmt: skip
        try:
            stop.wait(kill_after)
            alive = server.process.poll() is None
            server.process.kill()
        finally:
            stop.set()
        server.process.wait(timeout=30)
        for run in runs:
            run.result(timeout=60)
    assert alive, f"the server died before the kill:\n{server.log_text()}"


# -- damage between a kill and the restart -----------------------------------------------


def damage_a_table(data_dir: Path, ledger: Ledger, rng: random.Random, cycle: int
                   ) -> tuple[str, str] | None:  # fmt: skip
    """Truncate a stored table file (even cycles) or flip a byte in its middle (odd
    ones), as a torn or rotten write would; the map and kind damaged, if any. The
    kept map's tables if it has any (it had them before the workload), else any."""
    candidates = [
        (map_id, kind)
        for map_id in ([ledger.kept] if ledger.kept in ledger.live else sorted(ledger.live))
        for kind, name in TABLE_FILES.items()
        if (data_dir / "maps" / map_id / name).is_file()
    ]
    if not candidates:
        return None
    map_id, kind = rng.choice(candidates)
    path = data_dir / "maps" / map_id / TABLE_FILES[kind]
    data = bytearray(path.read_bytes())
    if cycle % 2 == 0:
        del data[len(data) // 2 :]
    else:
        data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return map_id, kind


def leftovers(data_dir: Path) -> list[str]:
    """What a crash may leave in ``maps/``: unfinished folders, temporary files."""
    maps = data_dir / "maps"
    found = [p.name for p in maps.iterdir() if p.name.startswith((".incoming-", ".deleting-"))]
    found += [f"{p.parent.name}/{p.name}" for p in maps.glob("*/.*.tmp")]
    return sorted(found)


# -- the checks after a restart ----------------------------------------------------------


def check_restart(client: httpx.Client, server: Server, data_dir: Path, ledger: Ledger,
                  rng: random.Random, damaged: tuple[str, str] | None) -> None:  # fmt: skip
    """Every invariant of the module docstring, after a restart on ``data_dir``."""
    context = f"\nserver log:\n{server.log_text()}"
    unfinished = [name for name in leftovers(data_dir) if not name.endswith(".tmp")]
    assert unfinished == [], f"left after the restart: {unfinished}{context}"
    listed = list_maps(client)
    on_disk = {p.name for p in (data_dir / "maps").iterdir() if not p.name.startswith(".")}
    assert on_disk == set(listed), f"folders {on_disk} but listed {set(listed)}{context}"
    check_deleted(client, data_dir, ledger, listed, context)
    settle_unknown_deletes(ledger, listed)
    adopt_unknown_uploads(data_dir, ledger, listed, context)
    assert set(listed) == set(ledger.live), context
    for map_id, costs in sorted(ledger.live.items()):
        check_map(client, data_dir, map_id, costs, listed[map_id], rng, context)
    states = settle_tables(client, ledger, context)
    check_table_files(data_dir, states, context)
    assert leftovers(data_dir) == [], f"left after the restart: {leftovers(data_dir)}{context}"
    if damaged is not None and damaged[0] in ledger.live:
        check_rebuilt(client, server, ledger, damaged, rng, context)


def list_maps(client: httpx.Client) -> dict[str, dict[str, Any]]:
    response = client.get("/v1/maps")
    assert response.status_code == 200, response.text
    return {meta["id"]: meta for meta in response.json()["maps"]}


def check_deleted(client: httpx.Client, data_dir: Path, ledger: Ledger,
                  listed: dict[str, dict[str, Any]], context: str) -> None:  # fmt: skip
    """Invariant 2: an acknowledged delete stays done."""
    back = sorted(ledger.deleted & set(listed))
    assert back == [], f"deleted maps listed again: {back}{context}"
    for map_id in sorted(ledger.deleted):
        response = client.get(f"/v1/maps/{map_id}")
        assert response.status_code == 404, f"{map_id}: {response.text}{context}"
        assert response.json()["code"] == "MapNotFound", response.text
        assert not (data_dir / "maps" / map_id).exists(), f"{map_id} folder remains{context}"


def settle_unknown_deletes(ledger: Ledger, listed: dict[str, dict[str, Any]]) -> None:
    """A delete in flight at the kill happened or not: the listing says which."""
    for map_id, costs in ledger.deletes_in_flight.items():
        if map_id in listed:
            ledger.live[map_id] = costs
        else:
            ledger.deleted.add(map_id)
    ledger.counts["deletes unknown"] += len(ledger.deletes_in_flight)
    ledger.deletes_in_flight.clear()


def adopt_unknown_uploads(data_dir: Path, ledger: Ledger, listed: dict[str, dict[str, Any]],
                          context: str) -> None:  # fmt: skip
    """Invariant 3: a listed map nobody was told of is an upload in flight at the kill,
    whole (its grid is one of those grids); it is live from now on."""
    ledger.counts["uploads unknown"] += len(ledger.uploads_in_flight)
    for map_id in sorted(set(listed) - set(ledger.live)):
        stored = stored_costs(data_dir, map_id)
        match = next((ticket for ticket, sent in ledger.uploads_in_flight.items()
                      if same_costs(stored, sent)), None)  # fmt: skip
        assert match is not None, (
            f"map {map_id} is listed ({stored.shape}) but was never acknowledged, and no "
            f"upload in flight at the kill sent this grid: half-made?{context}"
        )
        ledger.live[map_id] = ledger.uploads_in_flight.pop(match)
        ledger.counts["unknown uploads found stored"] += 1
    ledger.uploads_in_flight.clear()


def check_map(client: httpx.Client, data_dir: Path, map_id: str, costs: Costs,
              meta: dict[str, Any], rng: random.Random, context: str) -> None:  # fmt: skip
    """Invariant 1: the stored grid is the one sent, described and served as such."""
    stored = stored_costs(data_dir, map_id)
    assert same_costs(stored, costs), f"{map_id}: stored grid differs from the upload{context}"
    height, width = costs.shape
    walkable = costs[costs > 0]
    assert (meta["width"], meta["height"]) == (width, height), meta
    assert meta["walkable_cells"] == walkable.size, meta
    assert (meta["min_cost"], meta["max_cost"]) == (walkable.min(), walkable.max()), meta
    assert meta["health"] == {"status": "ok", "reason": None}, f"{meta}{context}"
    described = client.get(f"/v1/maps/{map_id}")
    assert described.status_code == 200, described.text
    queries = [path_query(costs, rng) | {"heuristic": "octile"} for _ in range(3)]
    single = client.post(f"/v1/maps/{map_id}/path", json=queries[0])
    assert single.status_code == 200, f"{map_id}: {single.text}{context}"
    assert single.json()["status"] in ANSWERS, single.text
    batch = client.post(f"/v1/maps/{map_id}/paths", json={"queries": queries})
    assert batch.status_code == 200, f"{map_id}: {batch.text}{context}"
    results = batch.json()["results"]
    assert [r.get("status") in ANSWERS for r in results] == [True] * 3, batch.text
    if results[0]["status"] == "found":
        assert results[0]["path"][0] == queries[0]["start"], batch.text
        assert results[0]["path"][-1] == queries[0]["goal"], batch.text


def table_states(client: httpx.Client) -> dict[tuple[str, str], dict[str, Any]]:
    return {(meta["id"], kind): meta["tables"][kind]
            for meta in list_maps(client).values() for kind in TABLE_FILES}  # fmt: skip


def settle_tables(client: httpx.Client, ledger: Ledger, context: str
                  ) -> dict[tuple[str, str], dict[str, Any]]:  # fmt: skip
    """Invariant 5: no table stays ``building``; a failure says why. The final states."""
    latest: list[dict[tuple[str, str], dict[str, Any]]] = [{}]

    def building() -> list[tuple[str, str]]:
        return sorted(key for key, state in latest[0].items() if state["status"] == "building")

    def settled() -> bool:
        latest[0] = table_states(client)
        return not building()

    wait_until(settled, seconds=TABLE_SETTLE_SECONDS, interval=0.1,
               message=lambda: f"tables still building after {TABLE_SETTLE_SECONDS} s: "
               f"{building()}{context}")  # fmt: skip
    states = latest[0]
    for (map_id, kind), state in sorted(states.items()):
        assert state["status"] in ("ready", "failed"), f"{map_id} {kind}: {state}{context}"
        if state["status"] == "failed":
            assert state["reason"], f"{map_id} {kind} failed without a reason{context}"
            ledger.counts["tables failed"] += 1
    return states


def check_table_files(data_dir: Path, states: dict[tuple[str, str], dict[str, Any]],
                      context: str) -> None:  # fmt: skip
    """Invariant 5, on disk: a ready table's file is there and passes its checks."""
    decoders: dict[str, Callable[[bytes], object]] = {
        "clusters": decode_tables,
        "landmarks": decode_landmarks,
    }
    for (map_id, kind), state in sorted(states.items()):
        if state["status"] != "ready":
            continue
        path = data_dir / "maps" / map_id / TABLE_FILES[kind]
        assert path.is_file(), f"{map_id}: {kind} ready but no {path.name}{context}"
        try:
            decoders[kind](path.read_bytes())
        except TableFileError as exc:
            raise AssertionError(f"{map_id}: {kind} ready on a bad file: {exc}{context}") from exc


def check_rebuilt(client: httpx.Client, server: Server, ledger: Ledger,
                  damaged: tuple[str, str], rng: random.Random, context: str
                  ) -> None:  # fmt: skip
    """The damaged table was found out (logged), rebuilt (the file check above passed)
    and is used."""
    map_id, kind = damaged
    noticed = [line for line in server.log.read_text(errors="replace").splitlines()
               if map_id in line and kind in line]  # fmt: skip
    assert noticed, f"the damaged {kind} of {map_id} went unnoticed{context}"
    state = client.get(f"/v1/maps/{map_id}").json()["tables"][kind]
    assert state["status"] == "ready", f"{map_id} {kind}: {state}{context}"
    heuristic = "cluster" if kind == "clusters" else "landmarks"
    query = path_query(ledger.live[map_id], rng) | {"heuristic": heuristic}
    answer = client.post(f"/v1/maps/{map_id}/path", json=query)
    assert answer.status_code == 200, f"{answer.text}{context}"
    assert answer.json()["heuristic_used"] == heuristic, answer.text
    ledger.counts["damaged tables rebuilt"] += 1


# -- the test --------------------------------------------------------------------------


def test_sigkill_under_load_keeps_every_acknowledged_outcome(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    ledger = Ledger()
    damaged: tuple[str, str] | None = None
    budget_end = float("inf")
    kills: list[str] = []
    for cycle in range(len(SEEDS) + 1):
        plan = random.Random(SEEDS[cycle] if cycle < len(SEEDS) else 0)
        kill_after = plan.uniform(*KILL_AFTER_SECONDS)
        rng = random.Random(plan.getrandbits(64))
        log = tmp_path / f"server-{cycle}.log"
        ready_seconds = FIRST_START_SECONDS if cycle == 0 else RESTART_SECONDS
        with serve(data_dir, log, ready_seconds) as server:
            budget_end = min(budget_end, time.monotonic() + BUDGET_SECONDS)
            with httpx.Client(base_url=server.base_url, timeout=REQUEST_TIMEOUT) as client:
                if cycle == 0:  # a few maps whose tables are built before the first kill
                    for first in range(FIRST_MAPS):
                        upload_one(client, ledger, rng, f"crash-first-{first}")
                check_restart(client, server, data_dir, ledger, rng, damaged)
            ledger.kept = rng.choice(sorted(ledger.live)) if ledger.live else None
            assert ledger.surprises == [], f"{ledger.surprises}\n{server.log_text()}"
            last = cycle == len(SEEDS) or time.monotonic() + CYCLE_RESERVE_SECONDS > budget_end
            if last:
                break
            run_until_killed(server, ledger, rng, kill_after)
        assert ledger.surprises == [], f"{ledger.surprises}\n{log.read_text()}"
        left = leftovers(data_dir)
        ledger.counts["leftovers after a kill"] += len(left)
        kills.append(f"seed {SEEDS[cycle]}: killed at {kill_after:.2f} s, left {left}")
        damaged = damage_a_table(data_dir, ledger, rng, cycle)
        ledger.counts["tables damaged"] += damaged is not None
    print(f"{len(kills)} kills:", *kills, dict(ledger.counts), sep="\n")
    assert len(kills) >= 3, f"only {len(kills)} kill/restart cycles fit the budget"
    assert ledger.counts["uploads acknowledged"] > 0
