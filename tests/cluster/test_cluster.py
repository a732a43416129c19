"""Three replicas on one Redis behind HAProxy, all real processes on loopback
(``make cluster-test``; ``.ci/run`` installs haproxy).

Uploads and edits go through HAProxy or any replica; every replica answers for every
map. A replica killed with SIGKILL under load loses nothing acknowledged and serves
no wrong answer; once HAProxy's check marks it down every request succeeds; started
again it serves again. Redis restarted, the replicas recover on their own.
"""

import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.haproxy import HAProxy
from tests.redis_server import RedisServer, require_binary
from tests.server import free_port, start_server, wait_until_ready
from tests.support import wait_until

pytestmark = pytest.mark.cluster

# A door in a wall: closed (cost 0) the path goes round, open (cost 1) it goes through.
ROWS = ["....@....", "....@....", "........."]
DOOR = [4, 0]
QUERY = {"start": [0, 0], "goal": [8, 0]}
ROUND = 4 + 4 * 2**0.5
THROUGH = 8.0
#: Load after the kill: bounded in time and count.
LOAD_SECONDS = 4.0
LOAD_REQUESTS = 4000


@dataclass
class Replica:
    port: int
    data_dir: Path
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    def start(self) -> None:
        self.process, _, self.log = start_server(self.data_dir, port=self.port, env=self.env)
        with httpx.Client(base_url=self.url) as client:
            assert self.log is not None
            wait_until_ready(client, self.process, self.log)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@dataclass
class Cluster:
    redis: RedisServer
    replicas: list[Replica]
    haproxy: HAProxy
    acknowledged: dict[str, int] = field(default_factory=dict)  # map id: revision

    @property
    def url(self) -> str:
        return self.haproxy.url

    def down(self, name: str) -> bool:
        """Whether HAProxy's check has marked server ``name`` down."""
        return self.haproxy.states()[name].startswith("DOWN")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (Debian: apt-get install haproxy; .ci/run "
                    "installs it)")  # fmt: skip
    redis = RedisServer(require_binary(), tmp_path / "redis")
    redis.start()
    env = {"GRIDPATH_STORE": redis.url, "GRIDPATH_STORE_TIMEOUT_SECONDS": "2"}
    replicas = [Replica(free_port(), tmp_path / f"replica{i}" / "data", env) for i in (1, 2, 3)]
    for replica in replicas:
        replica.data_dir.parent.mkdir(parents=True)
        replica.start()
    haproxy = HAProxy([f"127.0.0.1:{r.port}" for r in replicas], tmp_path / "haproxy.log")
    haproxy.wait_all_up()
    yield Cluster(redis, replicas, haproxy)
    haproxy.stop()
    for replica in replicas:
        replica.stop()
    redis.stop()


def upload(client: httpx.Client, cluster: Cluster) -> str:
    answer = client.post("/v1/maps", json={"rows": ROWS})
    assert answer.status_code == 201, answer.text
    map_id: str = answer.json()["id"]
    cluster.acknowledged[map_id] = 0
    return map_id


def set_door(client: httpx.Client, cluster: Cluster, map_id: str, cost: int) -> int:
    answer = client.post(f"/v1/maps/{map_id}/edits",
                         json={"edits": [{"cells": [DOOR], "cost": cost}]})  # fmt: skip
    assert answer.status_code == 200, answer.text
    revision: int = answer.json()["revision"]
    cluster.acknowledged[map_id] = revision
    return revision


def expected_cost(revision: int) -> float:
    """Revisions alternate: odd ones opened the door, even ones closed it."""
    return THROUGH if revision % 2 else ROUND


def check_answer(answer: dict[str, object]) -> None:
    revision = answer["revision"]
    assert isinstance(revision, int)
    assert answer["cost"] == pytest.approx(expected_cost(revision)), answer


def test_replicas_share_maps_and_edits_through_haproxy(cluster: Cluster) -> None:
    with httpx.Client(base_url=cluster.url, timeout=10) as through:
        map_id = upload(through, cluster)
        for replica in cluster.replicas:  # every replica answers for every map
            with httpx.Client(base_url=replica.url) as direct:
                answer = direct.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
                assert (answer["revision"], answer["cost"]) == (0, pytest.approx(ROUND))
        first, second, _ = cluster.replicas
        with httpx.Client(base_url=first.url) as one, httpx.Client(base_url=second.url) as two:
            revision = set_door(one, cluster, map_id, 1)
            answer = two.post(f"/v1/maps/{map_id}/path",
                              json=QUERY | {"min_revision": revision}).json()  # fmt: skip
            assert (answer["revision"], answer["cost"]) == (revision, THROUGH)


def test_a_replica_killed_under_load_loses_nothing_and_comes_back(cluster: Cluster) -> None:
    through = httpx.Client(base_url=cluster.url, timeout=10)
    maps = [upload(through, cluster) for _ in range(6)]
    for map_id in maps:  # revision 1 everywhere: the door open
        set_door(through, cluster, map_id, 1)
    failures: list[str] = []
    answers: list[dict[str, object]] = []
    stop = threading.Event()

    def load() -> None:
        with httpx.Client(base_url=cluster.url, timeout=10) as client:
            sent = 0
            while not stop.is_set() and sent < LOAD_REQUESTS:
                map_id = maps[sent % len(maps)]
                sent += 1
                try:
                    answer = client.post(f"/v1/maps/{map_id}/path", json=QUERY)
                except httpx.TransportError as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")
                    continue
                if answer.status_code != 200:
                    failures.append(f"{answer.status_code} {answer.text}")
                else:
                    answers.append(answer.json())

    victim = cluster.replicas[1]
    loaders = [threading.Thread(target=load) for _ in range(2)]
    for thread in loaders:
        thread.start()
    time.sleep(0.5)
    victim.kill()
    wait_until(lambda: cluster.down("replica2"), seconds=10, interval=0.02,
               message="HAProxy never marked the replica down")  # fmt: skip
    failures_before_down = len(failures)
    answers_before_down = len(answers)
    for map_id in maps:  # edits go on while it is down: revision 2, the door closed
        set_door(through, cluster, map_id, 0)
    time.sleep(min(LOAD_SECONDS, 1.0))
    stop.set()
    for thread in loaders:
        thread.join(timeout=60)
    # After the check marked it down, every request succeeded; every answer was right.
    assert failures[failures_before_down:] == []
    assert len(answers) > answers_before_down
    for answer in answers:
        check_answer(answer)
    # Nothing acknowledged was lost, whichever replica took it.
    for replica in (cluster.replicas[0], cluster.replicas[2]):
        with httpx.Client(base_url=replica.url) as direct:
            listed = {m["id"]: m["revision"] for m in direct.get("/v1/maps").json()["maps"]}
            assert listed == cluster.acknowledged
    # Started again, it serves again, current.
    victim.start()
    with httpx.Client(base_url=victim.url) as direct:
        for map_id in maps:
            answer = direct.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
            assert answer["revision"] == cluster.acknowledged[map_id]
            check_answer(answer)
    through.close()


def test_the_replicas_recover_when_redis_restarts(cluster: Cluster) -> None:
    with httpx.Client(base_url=cluster.url, timeout=10) as through:
        map_id = upload(through, cluster)
        revision = set_door(through, cluster, map_id, 1)
        cluster.redis.kill()
        away = through.get(f"/v1/maps/{map_id}")
        assert away.status_code == 503
        assert away.json()["code"] == "NotReady"
        cluster.redis.start()  # the append-only file brings back every write

        def answered() -> httpx.Response | None:
            answer = through.post(f"/v1/maps/{map_id}/path", json=QUERY)
            return answer if answer.status_code == 200 else None

        answer = wait_until(answered, seconds=20, interval=0.05,
                            message=lambda: through.post(f"/v1/maps/{map_id}/path",
                                                         json=QUERY).text)  # fmt: skip
        assert answer.json()["revision"] == revision
        check_answer(answer.json())
        for replica in cluster.replicas:  # each on its own, none restarted
            with httpx.Client(base_url=replica.url) as direct:
                later = set_door(direct, cluster, map_id, 0 if revision % 2 else 1)
                revision = later
                answer = direct.post(f"/v1/maps/{map_id}/path",
                                     json=QUERY | {"min_revision": later}).json()  # fmt: skip
                check_answer(answer)
