"""HAProxy with ``deploy/haproxy.cfg`` in front of three replicas, on loopback: for the
cluster tests and ``loadtests.bench_cluster``."""

import os
import subprocess
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from service.config import REPO_ROOT
from tests.server import free_port

CONFIG: Final = REPO_ROOT / "deploy" / "haproxy.cfg"
#: The ``status`` column of HAProxy's stats CSV.
_STATUS: Final = 17
#: No proxies: HAProxy is on loopback whatever ``http_proxy`` says.
_OPENER: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class HAProxy:
    """One HAProxy process; ``replicas``: the ``host:port`` of its three server lines
    (``replica1``..``replica3``; one address may stand for several lines)."""

    def __init__(self, replicas: Sequence[str], log: Path) -> None:
        assert len(replicas) == 3, replicas
        listen, stats = free_port(), free_port()
        self.url = f"http://127.0.0.1:{listen}"
        self.stats = f"http://127.0.0.1:{stats}/stats;csv"
        self.log = log
        env = os.environ | {"GRIDPATH_LISTEN": f"127.0.0.1:{listen}",
                            "GRIDPATH_STATS": f"127.0.0.1:{stats}"}  # fmt: skip
        env |= {f"GRIDPATH_REPLICA_{i}": address for i, address in enumerate(replicas, start=1)}
        with log.open("wb") as sink:
            self.process = subprocess.Popen(["haproxy", "-db", "-f", str(CONFIG)], env=env,
                                            stdout=sink, stderr=subprocess.STDOUT)  # fmt: skip

    def states(self) -> dict[str, str]:
        """Each server line's status as HAProxy's checks see it (``UP``, ``DOWN``...)."""
        with _OPENER.open(self.stats, timeout=10) as response:
            lines = response.read().decode().splitlines()
        return {fields[1]: fields[_STATUS] for fields in (line.split(",") for line in lines)
                if fields[0] == "replicas" and fields[1].startswith("replica")}  # fmt: skip

    def wait_all_up(self, seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while True:
            try:
                states = self.states()
                if len(states) == 3 and all(s.startswith("UP") for s in states.values()):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"HAProxy's replicas never came up: {self.log.read_text()}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
