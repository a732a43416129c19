"""The real server for tests: ``python -m service`` on a free loopback port, with its
output in a log file beside the data dir."""

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from service.config import REPO_ROOT
from tests.support import wait_until

STARTUP_SECONDS = 120.0
#: A server on an empty kernel cache compiles every kernel before it is ready, which
#: takes up to minutes on a small machine shared with other work (docs/benchmarks.md,
#: "Cold start"). The test of that start checks what is answered meanwhile, not the
#: compiler's speed, so its bound leaves room for a slow, busy machine.
COLD_START_SECONDS = 600.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(data_dir: Path, *, port: int | None = None, env: dict[str, str] | None = None,
                 log: Path | None = None) -> tuple[subprocess.Popen[bytes], int, Path]:  # fmt: skip
    """``python -m service`` on loopback (``log``: where its output goes, by default
    ``server-<port>.log`` beside the data dir); its process, port and log file."""
    port = port or free_port()
    log = log or data_dir.parent / f"server-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "service", "--host", "127.0.0.1", "--port", str(port),
             "--data-dir", str(data_dir)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=os.environ | {"GRIDPATH_LOG_LEVEL": "warning"} | (env or {}),
            cwd=REPO_ROOT,
        )  # fmt: skip
    return process, port, log


def wait_until_ready(client: httpx.Client, process: subprocess.Popen[bytes], log: Path,
                     seconds: float = STARTUP_SECONDS) -> None:  # fmt: skip
    """Poll ``/readyz`` until it answers 200; fail at once if the server exits."""

    def ready() -> bool:
        assert process.poll() is None, log.read_text()
        try:
            return client.get("/readyz").status_code == 200
        except httpx.TransportError:
            return False

    wait_until(ready, seconds=seconds, interval=0.1, message="server did not become ready")


def server_log(client: httpx.Client, data_dir: Path) -> str:
    """What the server behind ``client`` (started on ``data_dir``) has logged."""
    return (data_dir.parent / f"server-{client.base_url.port}.log").read_text()


@contextmanager
def running_server(data_dir: Path, env: dict[str, str] | None = None, *, wait_ready: bool = True
                   ) -> Iterator[httpx.Client]:  # fmt: skip
    """A client of the server started on ``data_dir``, once ``/readyz`` says ready (with
    ``wait_ready=False``, at once: the server may not even listen yet)."""
    process, port, log = start_server(data_dir, env=env)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            if wait_ready:
                wait_until_ready(client, process, log)
            yield client
    finally:
        process.terminate()
        process.wait(timeout=30)


def children(pid: int) -> set[int]:
    """The process ids of ``pid``'s live worker processes (from /proc: children
    started by multiprocessing's spawn, not its resource tracker)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
            command = (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if fields[1] == str(pid) and fields[0] != "Z" and b"spawn_main" in command:
            found.add(int(status.parent.name))
    return found
